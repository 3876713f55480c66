package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skill create writes only inside the project: a skills directory that is
// a symlink out of it is refused, before the check (Main) and in the
// writer itself (writeSkillFiles, which a symlink made after the check
// meets), and nothing appears outside.
func TestSkillCreateNeverWritesOutsideTheProject(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "config.json"), []byte(`{"domains": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "skills")); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if code := Main([]string{"skill", "create", "todos", "--project", root}, strings.NewReader(""), &out, &errb); code == 0 {
		t.Errorf("skill create through a symlinked skills/ succeeded:\n%s", out.String())
	}
	if _, err := writeSkillFiles(root, "todos"); err == nil {
		t.Error("writeSkillFiles followed a symlink out of the project")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the project: %v", entries)
	}
}
