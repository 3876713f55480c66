package state

import (
	"github.com/ooda-loop/ooda/internal/config"
	"os"
	"path/filepath"
	"testing"
)

// A built-in skill writes its domain state file through the store: inside
// the project, atomically, never through a symlink out of it.
func TestStore_WriteProjectFileStaysInTheProject(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	if err := s.WriteProjectFile("agent/state/tests.json", []byte(`{"status": "passed"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "agent", "state", "tests.json")); err != nil || string(b) != `{"status": "passed"}` {
		t.Fatalf("written: %q %v", b, err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "agent", "out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"agent/out/x.json", "../x.json", filepath.Join(outside, "y.json")} {
		if err := s.WriteProjectFile(p, []byte("{}")); err == nil {
			t.Errorf("%s: written outside the project", p)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files appeared outside the project: %v", entries)
	}
}

// ForConfig bounds the store's reads by the configuration's
// safety.max_read_mib, and by the default limit without one.
func TestStore_ForConfigReadsWithinTheLimit(t *testing.T) {
	cfg := config.Default()
	cfg.Safety.MaxReadMiB = 1
	if s := ForConfig(t.TempDir(), cfg); s.MaxRead != 1<<20 {
		t.Errorf("MaxRead = %d, want 1 MiB", s.MaxRead)
	}
	if s := ForConfig(t.TempDir(), nil); s.MaxRead != config.Default().Safety.MaxReadBytes() || s.MaxRead <= 0 {
		t.Errorf("nil configuration: MaxRead = %d", s.MaxRead)
	}
}
