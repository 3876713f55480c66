package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The forge cursor is read like every state file, and more strictly: a
// symlink is not followed (even one inside the project), a file beyond
// the read limit is not read, a missing one is no cursor.
func TestForgeCursorFile(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	c := s.ForgeCursor()
	if c.Name() != "agent/state/evolve/forge_cursor.json" {
		t.Errorf("name = %q", c.Name())
	}
	if b, err := c.Load(); b != nil || err != nil {
		t.Fatalf("missing cursor: %q, %v", b, err)
	}
	if err := c.Save([]byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := c.Load(); string(b) != `{"version":1}` || err != nil {
		t.Fatalf("saved cursor read back as %q, %v", b, err)
	}
	// Committed with the state: a fresh clone starts from it.
	if w := s.Written(); len(w) != 1 || w[0] != "agent/state/evolve/forge_cursor.json" {
		t.Errorf("files the cycle commits: %v, want the cursor", w)
	}

	p := filepath.Join(root, "agent", "state", "evolve", ForgeCursorFile)
	target := filepath.Join(root, "config.json")
	if err := os.WriteFile(target, []byte(`{"secret": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if b, err := c.Load(); err == nil || !strings.Contains(err.Error(), "symlink") || b != nil {
		t.Errorf("symlinked cursor: %q, %v", b, err)
	}
	// Saving replaces the link, never writes through it.
	if err := c.Save([]byte("{}")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != `{"secret": 1}` {
		t.Errorf("written through the symlink: %q", b)
	}

	s.MaxRead = 8
	if err := os.WriteFile(p, []byte(strings.Repeat(" ", 9)), 0o644); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := c.Load(); !errors.As(err, &tl) {
		t.Errorf("oversized cursor: %v", err)
	}
}
