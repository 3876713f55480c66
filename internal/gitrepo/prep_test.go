package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
)

// recorder runs git as proc.Exec does and keeps each command's arguments
// after "git -C dir".
type recorder struct{ ran [][]string }

func (rec *recorder) runner() proc.Runner {
	return proc.RunnerFunc(func(ctx context.Context, s proc.Spec) proc.Result {
		rec.ran = append(rec.ran, s.Argv[3:])
		return proc.Exec{}.Run(ctx, s)
	})
}

func (rec *recorder) has(sub string) bool {
	return slices.ContainsFunc(rec.ran, func(a []string) bool { return slices.Contains(a, sub) })
}

// indexTree is the tree `git add` of paths on top of HEAD makes, in an
// index of its own: what a state commit of paths must hold.
func indexTree(t *testing.T, dir string, paths []string) string {
	t.Helper()
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	for _, args := range [][]string{{"read-tree", "HEAD"}, append([]string{"add", "-A", "--"}, paths...)} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command("git", "-C", dir, "write-tree")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// prepared is Prepare on dir for paths with rec's runner.
func prepared(t *testing.T, dir string, rec *recorder, paths []string) *Prep {
	t.Helper()
	p := Prepare(context.Background(), dir, rec.runner(), "", 0, paths)
	if !p.OK || p.Err != nil {
		t.Fatalf("Prepare: ok %v, %v", p.OK, p.Err)
	}
	return p
}

// A prepared commit of files of every kind — changed, new in a new
// directory, executable, deleted, left as it was, and the last file of a
// directory deleted — holds exactly the tree `git add` of those paths
// makes, without git's index: no read-tree, no update-index of files, no
// write-tree, no diff-tree. The repository stays sound (git fsck), the
// user's index lists the committed blobs, and status is clean.
func TestPreparedCommitIsTheTreeGitAddMakes(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	for name, body := range map[string]string{"s/state.json": "{}\n", "s/same.json": "same\n", "s/old.json": "old\n", "gone/only.json": "x\n", "s/z/deep.json": "d\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	git("add", ".")
	git("commit", "-q", "-m", "state")
	paths := []string{"s/state.json", "s/same.json", "s/old.json", "gone/only.json", "s/new/n.json", "run.sh", "s/z/deep.json", "never.json"}
	rec := &recorder{}
	p := prepared(t, dir, rec, paths)
	os.WriteFile(filepath.Join(dir, "s/state.json"), []byte("{\"n\": 1}\n"), 0o644)
	os.Remove(filepath.Join(dir, "s/old.json"))
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.MkdirAll(filepath.Join(dir, "s/new"), 0o755)
	os.WriteFile(filepath.Join(dir, "s/new/n.json"), []byte("new\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "s/z/deep.json"), []byte("deeper\n"), 0o644)
	want := indexTree(t, dir, paths[:7])
	c, err := p.Commit(ctx, "evolve: cycle #1 -- x (y)", paths)
	if err != nil || c == nil || c.IndexErr != nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if got := git("rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("tree %s, want %s:\n%s", got, want, git("ls-tree", "-r", "HEAD"))
	}
	if wantFiles := []string{"gone/only.json", "run.sh", "s/new/n.json", "s/old.json", "s/state.json", "s/z/deep.json"}; !slices.Equal(c.Files, wantFiles) {
		t.Errorf("files %q, want %q", c.Files, wantFiles)
	}
	for _, sub := range []string{"read-tree", "write-tree", "diff-tree", "--add"} {
		if rec.has(sub) {
			t.Errorf("%s ran: %q", sub, rec.ran)
		}
	}
	if ls := git("ls-tree", "HEAD", "run.sh"); !strings.HasPrefix(ls, "100755 ") {
		t.Errorf("run.sh: %q", ls)
	}
	git("fsck", "--strict", "--no-dangling")
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("git status = %q", st)
	}
	if log := git("log", "-g", "-1", "--format=%gs", "main"); log != "commit: evolve: cycle #1 -- x (y)" {
		t.Errorf("reflog says %q", log)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "tmp_obj_*")); len(left) != 0 {
		t.Errorf("temporary objects left: %v", left)
	}
	// Nothing changed since: no commit.
	if c, err := prepared(t, dir, rec, paths).Commit(ctx, "evolve: cycle #2 -- x (y)", paths); c != nil || err != nil {
		t.Errorf("second commit %+v, %v", c, err)
	}
}

// A path whose bytes git would change on the way in — a clean filter, a
// text attribute, core.autocrlf — is stored as `git add` stores it: the
// commit is built with the private index, which runs them.
func TestPreparedCommitRunsFiltersAsGitAddDoes(t *testing.T) {
	for name, set := range map[string]func(dir string, git func(...string) string){
		"clean filter": func(dir string, git func(...string) string) {
			git("config", "filter.up.clean", "tr a-z A-Z")
			os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.json filter=up\n"), 0o644)
		},
		"text attribute": func(dir string, git func(...string) string) {
			os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.json text eol=lf\n"), 0o644)
		},
		"core.autocrlf": func(dir string, git func(...string) string) {
			git("config", "core.autocrlf", "true")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, git := setup(t)
			set(dir, git)
			rec := &recorder{}
			p := prepared(t, dir, rec, []string{"state.json"})
			os.WriteFile(filepath.Join(dir, "state.json"), []byte("{\"a\": 1}\r\n"), 0o644)
			want := indexTree(t, dir, []string{"state.json"})
			c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"state.json"})
			if err != nil || c == nil {
				t.Fatalf("commit %+v, %v", c, err)
			}
			if got := git("rev-parse", "HEAD^{tree}"); got != want {
				t.Errorf("tree %s, want %s; blob %q", got, want, git("cat-file", "-p", "HEAD:state.json"))
			}
			if !rec.has("write-tree") {
				t.Errorf("not built with the private index: %q", rec.ran)
			}
		})
	}
}

// core.filemode false: the executable bit of the file system is not
// trusted, and a file keeps the mode HEAD gives it, as `git add` keeps it.
func TestPreparedCommitKeepsTheModeWithoutFileMode(t *testing.T) {
	dir, git := setup(t)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	git("add", "run.sh")
	git("commit", "-q", "-m", "script")
	git("config", "core.filemode", "false")
	p := prepared(t, dir, &recorder{}, []string{"run.sh", "new.sh"})
	os.Chmod(filepath.Join(dir, "run.sh"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.sh"), []byte("#!/bin/sh\n"), 0o755)
	want := indexTree(t, dir, []string{"run.sh", "new.sh"})
	if c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"run.sh", "new.sh"}); err != nil || c == nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if got := git("rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("tree %s, want %s:\n%s", got, want, git("ls-tree", "HEAD"))
	}
}

// A repository of SHA-256 objects gets SHA-256 objects.
func TestPreparedCommitInASHA256Repository(t *testing.T) {
	_, _ = setup(t)
	dir := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q", "--object-format=sha256", "-b", "main").CombinedOutput(); err != nil {
		t.Skipf("no SHA-256 repositories here: %s", out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-q", "-m", "init")
	rec := &recorder{}
	p := prepared(t, dir, rec, []string{"s/state.json"})
	os.MkdirAll(filepath.Join(dir, "s"), 0o755)
	os.WriteFile(filepath.Join(dir, "s/state.json"), []byte("{}\n"), 0o644)
	want := indexTree(t, dir, []string{"s/state.json"})
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"s/state.json"})
	if err != nil || c == nil || len(c.SHA) != 64 {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if got := git("rev-parse", "HEAD^{tree}"); got != want || rec.has("write-tree") {
		t.Errorf("tree %s, want %s; ran %q", got, want, rec.ran)
	}
	git("fsck", "--strict", "--no-dangling")
}

// The branch moved between Prepare and the commit (the user committed
// while the cycle wrote its files): the state commit goes on top of the
// user's, which stays.
func TestPreparedCommitAfterTheBranchMoved(t *testing.T) {
	dir, git := setup(t)
	p := prepared(t, dir, &recorder{}, []string{"state.json"})
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	git("add", "mine.txt")
	git("commit", "-q", "-m", "the user's commit")
	theirs := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if parent := git("rev-parse", "HEAD^"); parent != theirs || git("rev-parse", "HEAD") != c.SHA {
		t.Errorf("HEAD^ = %s, want the user's commit %s", parent, theirs)
	}
	if files := git("ls-tree", "--name-only", "HEAD"); files != "a.txt\nmine.txt\nstate.json" {
		t.Errorf("HEAD's tree: %q", files)
	}
}

// A commit stopped before the branch moves (here the HALT file, as a
// SIGKILL would) leaves a sound repository: the branch and the index as
// they were, the objects written only ones nothing refers to.
func TestPreparedCommitStoppedLeavesTheRepositorySound(t *testing.T) {
	dir, git := setup(t)
	head, index := git("rev-parse", "HEAD"), git("ls-files", "-s")
	halt := filepath.Join(t.TempDir(), "HALT")
	p := Prepare(context.Background(), dir, nil, halt, 0, []string{"state.json"})
	if !p.OK {
		t.Fatal(p.Err)
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	os.WriteFile(halt, nil, 0o644)
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if c != nil || err == nil || !strings.Contains(err.Error(), ErrHalted.Error()) {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if git("rev-parse", "HEAD") != head || git("ls-files", "-s") != index {
		t.Error("the branch or the index moved")
	}
	git("fsck", "--strict")
}

// HEAD's trees are read from the loose objects the previous commit wrote,
// without a process; once `git gc` has packed them, cat-file reads them.
// The commit is the same either way.
func TestPreparedCommitReadsLooseTreesItself(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	paths := []string{"s/e/state.json", "s/e/log.json", "s/lens.json"}
	for i, packed := range []bool{false, false, true} {
		if packed {
			git("gc", "-q")
		}
		rec := &recorder{}
		p := prepared(t, dir, rec, paths)
		os.MkdirAll(filepath.Join(dir, "s/e"), 0o755)
		for _, q := range paths {
			os.WriteFile(filepath.Join(dir, q), []byte(strings.Repeat("x", i+1)+q+"\n"), 0o644)
		}
		want := indexTree(t, dir, paths)
		c, err := p.Commit(ctx, "evolve: cycle #1 -- x (y)", paths)
		if err != nil || c == nil {
			t.Fatalf("commit %d: %+v, %v", i, c, err)
		}
		if got := git("rev-parse", "HEAD^{tree}"); got != want {
			t.Errorf("commit %d: tree %s, want %s", i, got, want)
		}
		// The first commit's HEAD is the setup's, made by git commit:
		// loose too.
		if rec.has("cat-file") != packed {
			t.Errorf("commit %d (packed %v): ran %q", i, packed, rec.ran)
		}
	}
	git("fsck", "--strict", "--no-dangling")
}

// A private index left by a commit killed in the middle is removed by the
// next one; a recent one (another commit at work) is left alone.
func TestPrepareRemovesALeftoverPrivateIndex(t *testing.T) {
	dir, _ := setup(t)
	old := filepath.Join(dir, ".git", "ooda-index-1")
	recent := filepath.Join(dir, ".git", "ooda-index-2")
	os.WriteFile(old, []byte("DIRC"), 0o644)
	os.WriteFile(recent, []byte("DIRC"), 0o644)
	long := time.Now().Add(-2 * staleIndexAge)
	os.Chtimes(old, long, long)
	prepared(t, dir, &recorder{}, []string{"state.json"})
	if _, err := os.Stat(old); err == nil {
		t.Error("the leftover private index is still there")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent private index was removed: %v", err)
	}
}

// A state path whose directory became a symlink out of the project (a
// skill can do that between the write and the commit) is never read by
// ooda itself: readPlain refuses it, and the commit is left to git, which
// refuses a path beyond a symbolic link.
func TestReadPlainRefusesASymlinkedDirectory(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "state.json"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "agent", "state")); err != nil {
		t.Fatal(err)
	}
	if _, data, err := readPlain(dir, "agent/state/state.json"); !errors.Is(err, errNotPlain) || data != nil {
		t.Fatalf("read through a symlinked directory: %q, %v", data, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "f.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, data, err := readPlain(dir, "a/f.json"); err != nil || string(data) != "{}" {
		t.Fatalf("plain file: %q, %v", data, err)
	}
	if _, _, err := readPlain(dir, "a/missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
