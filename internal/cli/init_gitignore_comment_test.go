package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// init's .gitignore comment said "the cycle lock and the HALT switch are
// local" above the run logs' entry too: it names every kind of entry.
func TestInitGitignoreCommentNamesTheRunLogs(t *testing.T) {
	dir := t.TempDir()
	if code, stdout, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# ooda: the cycle lock, the skill run logs and the HALT switch are local, never committed\n" +
		"agent/state/evolve/.lock\nagent/state/evolve/runs/\nagent/safety/HALT\n"
	if string(b) != want {
		t.Errorf(".gitignore = %q, want %q", b, want)
	}
}
