package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gitProject is a committed project in its own git repository, run with an
// identity and configuration of its own.
func gitProject(t *testing.T) (dir string, git func(args ...string) string) {
	t.Helper()
	dir = newProject(t, "printf '{}' > \"$OODA_REPORT\"\n")
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	git = func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	writeFile(t, filepath.Join(dir, "src", "code.txt"), "v1\n")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	return dir, git
}

// writeCheckpoint writes checkpoints.json with one checkpoint of cycle 1.
func writeCheckpoint(t *testing.T, dir, commit string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"schema_version": "1.0.0", "checkpoints": []any{map[string]any{
		"cycle": 1, "branch": "main", "commit_sha": commit, "timestamp": "2026-03-02T09:00:00Z",
		"state_snapshot": map[string]any{"confidence": nil, "action_queue": []any{}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "agent", "state", "evolve", "checkpoints.json"), string(b))
}

// tree maps every file under dir to its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A checkpoint's commit_sha of "--output=FILE" once reached git as an
// option: `ooda config rollback` truncated FILE, printed "Rolled back" and
// exited 0. Any value that is not a full commit id must be refused before
// anything is written, naming the file and the field.
func TestRollbackRefusesACommitThatIsNotASHA(t *testing.T) {
	dir, git := gitProject(t)
	head := git("rev-parse", "HEAD")
	outside := t.TempDir()
	for _, tc := range []struct {
		name, commit string
		hard         bool
	}{
		{"output option", "--output=" + filepath.Join(outside, "victim"), false},
		{"output option, hard", "--output=" + filepath.Join(outside, "victim"), true},
		{"short option", "-o" + filepath.Join(outside, "victim"), false},
		{"revision expression", "HEAD~1", false},
		{"abbreviated", head[:12], true},
		{"range", head + "..HEAD", false},
		{"newline", head + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := filepath.Join(outside, "victim")
			writeFile(t, victim, "precious bytes\n")
			writeCheckpoint(t, dir, tc.commit)
			before := tree(t, dir)

			args := []string{"config", "rollback", "1", "--confirm", "rollback 1"}
			if tc.hard {
				args = append(args, "--hard")
			}
			r := ooda(t, dir, args...)
			if b, err := os.ReadFile(victim); err != nil || string(b) != "precious bytes\n" {
				t.Errorf("the file outside the project is now %q (%v)", b, err)
			}
			if r.code == 0 || strings.Contains(r.stdout, "Rolled back") {
				t.Fatalf("the rollback ran:\n%s", r)
			}
			want := filepath.Join("agent", "state", "evolve", "checkpoints.json") + ": checkpoints[0].commit_sha: " + strconv.Quote(tc.commit) + " is not a commit SHA"
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, r)
			}
			if after := tree(t, dir); !mapsEqual(before, after) {
				t.Errorf("the project changed:\nbefore %v\nafter  %v", keys(before), keys(after))
			}
			if got := git("rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD moved to %s", got)
			}
		})
	}
}

// A well-formed id that names no commit of the repository is refused as
// well, and nothing is rolled back.
func TestRollbackRefusesACommitNotInTheRepository(t *testing.T) {
	dir, git := gitProject(t)
	head := git("rev-parse", "HEAD")
	missing := strings.Repeat("0", 40)
	writeCheckpoint(t, dir, missing)
	r := ooda(t, dir, "config", "rollback", "1", "--confirm", "rollback 1", "--hard")
	want := "checkpoints[0].commit_sha: commit " + missing + " is not in the repository"
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("want a refusal saying %q:\n%s", want, r)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent", "safety", "HALT")); err == nil {
		t.Error("a HALT file was written")
	}
	if got := git("rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
}

// A real checkpoint still rolls back: the validation refuses only what is
// not a commit id.
func TestRollbackToARealCheckpointStillWorks(t *testing.T) {
	dir, git := gitProject(t)
	checkpoint := git("rev-parse", "HEAD")
	writeFile(t, filepath.Join(dir, "src", "code.txt"), "v2\n")
	git("commit", "-q", "-am", "v2")
	writeCheckpoint(t, dir, checkpoint)
	r := ooda(t, dir, "config", "rollback", "1", "--confirm", "rollback 1")
	if r.code != 0 || !strings.Contains(r.stdout, "Rolled back to cycle 1.") {
		t.Fatalf("rollback failed:\n%s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "code.txt")); !bytes.Equal(b, []byte("v1\n")) {
		t.Errorf("src/code.txt = %q, want v1", b)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
