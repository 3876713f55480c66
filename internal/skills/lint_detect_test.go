package skills

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lint reads package.json as every project file is read: a symlink out
// of the project is not followed, and a named pipe does not hang the run.
func TestLintESLintConfigReadStaysInTheProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"eslintConfig": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !lintESLintConfigured(dir) {
		t.Fatal("a package.json with eslintConfig is not seen")
	}
	os.Remove(filepath.Join(dir, "package.json"))
	if err := os.WriteFile(filepath.Join(outside, "package.json"), []byte(`{"eslintConfig": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if lintESLintConfigured(dir) {
		t.Error("package.json read through a symlink out of the project")
	}
	os.Remove(filepath.Join(dir, "package.json"))
	if err := syscall.Mkfifo(filepath.Join(dir, "package.json"), 0o644); err != nil {
		t.Skip(err)
	}
	if lintESLintConfigured(dir) {
		t.Error("a named pipe read as package.json")
	}
}
