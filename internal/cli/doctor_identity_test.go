package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// TestDoctorSaysGitHasNoIdentity: in a repository where git has no
// identity to commit with (none in the environment or the configuration,
// auto-detection off), doctor fails the git check with the one-line fix,
// since every cycle's state commit would fail; with commits and pushes
// off it does not ask.
func TestDoctorSaysGitHasNoIdentity(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", dir)
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.useConfigOnly", "true"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Main(append([]string{"--project", dir}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run("init", "--yes"); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	code, out := run("doctor")
	want := "FAIL git             " + gitrepo.IdentityHelp + " in config.json"
	if code != ExitUsage || !strings.Contains(out, want) {
		t.Fatalf("doctor: exit %d, want %d and the line %q in\n%s", code, ExitUsage, want, out)
	}
	if code, out := run("config", "set", "git.commit_state", "false"); code != 0 {
		t.Fatalf("config set: exit %d\n%s", code, out)
	}
	if _, out := run("doctor"); strings.Contains(out, "no identity") {
		t.Errorf("with git.commit_state false doctor still asks for an identity:\n%s", out)
	}
}
