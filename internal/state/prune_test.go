package state

import (
	"os"
	"path/filepath"
	"testing"
)

// PruneRuns lists the names only and looks at a file's type just before
// removing it: an old enough directory (empty, which a remove would take)
// stays, an old symlink goes itself (its target stays), and the
// directory's other names are left alone.
func TestStore_PruneRunsSkipsDirectoriesAndRemovesLinksThemselves(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	runs := filepath.Join(s.EvolveDir, "runs")
	if err := os.MkdirAll(filepath.Join(runs, "3-adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(root, "target.txt")
	writeFile(t, target, "kept")
	if err := os.Symlink(target, filepath.Join(runs, "4-link.log")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"5-x.log", "nodash", "x-5.log", "99-new.log"} {
		writeFile(t, filepath.Join(runs, name), "log")
	}
	n, err := s.PruneRuns(100)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want 2", n, err)
	}
	for name, want := range map[string]bool{"3-adir": true, "4-link.log": false, "5-x.log": false, "nodash": true, "x-5.log": true, "99-new.log": true} {
		if _, err := os.Lstat(filepath.Join(runs, name)); (err == nil) != want {
			t.Errorf("%s kept %v, want %v", name, err == nil, want)
		}
	}
	if readString(t, target) != "kept" {
		t.Error("the symlink's target was touched")
	}
	// runs/ that is a file: the error names it, as listing it did.
	s2 := New(t.TempDir())
	writeFile(t, filepath.Join(s2.EvolveDir, "runs"), "not a directory")
	if _, err := s2.PruneRuns(100); err == nil {
		t.Error("a runs/ that is a file pruned without an error")
	}
}
