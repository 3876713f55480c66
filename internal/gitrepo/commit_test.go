package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/proc"
)

// userWork stages and leaves unstaged changes of every kind and returns
// `git status --porcelain` and `git ls-files -s`.
func userWork(t *testing.T, dir string, git func(args ...string) string) (status, index string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("staged new file\n"), 0o644)
	git("add", "mine.txt")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("staged edit\n"), 0o644)
	git("add", "a.txt")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("staged edit, then more unstaged\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scratch.txt"), []byte("untracked\n"), 0o644)
	return git("status", "--porcelain"), git("ls-files", "-s")
}

// The commit is built in a private index: the user's staged work stays
// staged, byte for byte, and out of the commit; the working tree is not
// touched; only the committed path's index entry changes, to the commit's.
func TestCommitLeavesTheUsersIndexAndTreeAlone(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{\"n\": 0}\n"), 0o644)
	git("add", "state.json")
	git("commit", "-q", "-m", "state")
	status, index := userWork(t, dir, git)
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{\"n\": 1}\n"), 0o644)
	r, _ := Open(ctx, dir, nil)
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil || c.IndexErr != nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if files := git("show", "--name-only", "--format=", "HEAD"); files != "state.json" {
		t.Errorf("commit holds %q", files)
	}
	if got := git("status", "--porcelain"); got != status {
		t.Errorf("git status after the commit:\n%s\nbefore:\n%s", got, status)
	}
	// Every index entry but the committed one is as it was.
	var want []string
	for _, l := range strings.Split(index, "\n") {
		if !strings.HasSuffix(l, "\tstate.json") {
			want = append(want, l)
		}
	}
	want = append(want, "100644 "+git("rev-parse", "HEAD:state.json")+" 0\tstate.json")
	slices.Sort(want)
	got := strings.Split(git("ls-files", "-s"), "\n")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("index after the commit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "staged edit, then more unstaged\n" {
		t.Errorf("a.txt is now %q", b)
	}
	if log := git("log", "-g", "-1", "--format=%gs", "main"); log != "commit: evolve: cycle #1 -- x (y)" {
		t.Errorf("reflog says %q", log)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "ooda-index-*")); len(left) != 0 {
		t.Errorf("the private index was left behind: %v", left)
	}
}

// The first commit of a repository: the branch is created, and what the
// user staged stays staged.
func TestCommitOnAnUnbornBranch(t *testing.T) {
	dir := t.TempDir()
	_, git := setup(t)
	git = func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "trunk")
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	git("add", "mine.txt")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	ctx := context.Background()
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not opened")
	}
	h, err := r.Head(ctx)
	if err != nil || h.Ref != "refs/heads/trunk" || h.SHA != "" {
		t.Fatalf("head %+v, %v", h, err)
	}
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil || c.Branch != "trunk" || c.IndexErr != nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if files := git("show", "--name-only", "--format=", "trunk"); files != "state.json" {
		t.Errorf("commit holds %q", files)
	}
	if parents := git("log", "-1", "--format=%P", "trunk"); parents != "" {
		t.Errorf("the first commit has parents %q", parents)
	}
	if st := git("status", "--porcelain"); st != "A  mine.txt" {
		t.Errorf("git status = %q, want only the user's staged file", st)
	}
}

// A HEAD that moved after it was read (the user committed meanwhile) is
// not overwritten: the commit is built again on top of the user's.
func TestCommitAfterTheBranchMovedKeepsTheOtherCommit(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	r, _ := Open(ctx, dir, nil)
	stale, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	git("add", "mine.txt")
	git("commit", "-q", "-m", "the user's commit")
	theirs := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	c, err := r.CommitOn(ctx, stale, "evolve: cycle #1 -- x (y)", []string{"state.json"})
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

// Paths are data, never options or pathspecs: a leading dash, a space, a
// newline, pathspec magic and a glob each name one file.
func TestCommitPathsWithAwkwardNames(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	names := []string{"-dash.json", "with space.json", "new\nline.json", ":(glob)*.json", "*.json"}
	for _, n := range names {
		os.WriteFile(filepath.Join(dir, n), []byte(n+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "other.json"), []byte("not asked for\n"), 0o644)
	r, _ := Open(ctx, dir, nil)
	ig, err := r.IgnoredPaths(ctx, names)
	if err != nil || len(ig) != 0 {
		t.Fatalf("ignored %v, %v", ig, err)
	}
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", names)
	if err != nil || c == nil || c.IndexErr != nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	got := slices.Sorted(slices.Values(c.Files))
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	tree := strings.Split(strings.TrimSuffix(git("ls-tree", "-z", "--name-only", "HEAD"), "\x00"), "\x00")
	if want := slices.Sorted(slices.Values(append(names, "a.txt"))); !slices.Equal(slices.Sorted(slices.Values(tree)), want) {
		t.Errorf("tree %q, want %q", tree, want)
	}
	if st := git("status", "--porcelain"); st != "?? other.json" {
		t.Errorf("git status = %q", st)
	}
}

// What .gitignore excludes is reported ignored, with one git process for
// all paths, and a tracked file is never ignored (as for `git add`).
func TestIgnoredPathsInOneProcess(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n*.log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t.log"), []byte("x\n"), 0o644)
	git("add", "-f", "t.log")
	var runs []string
	r, _ := Open(ctx, dir, nil)
	r.Runner = proc.RunnerFunc(func(ctx context.Context, s proc.Spec) proc.Result {
		runs = append(runs, strings.Join(s.Argv[3:], " "))
		return proc.Exec{}.Run(ctx, s)
	})
	paths := []string{"ignored/x.json", "state.json", "a b.log", "t.log", "-x.log", ":(top)ignored/y"}
	ig, err := r.IgnoredPaths(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"ignored/x.json": true, "state.json": false, "a b.log": true, "t.log": false, "-x.log": true, ":(top)ignored/y": false} {
		if ig[p] != want {
			t.Errorf("ignored[%q] = %v, want %v", p, ig[p], want)
		}
	}
	if len(runs) != 1 {
		t.Errorf("%d git processes for %d paths: %q", len(runs), len(paths), runs)
	}
}

// A path that is a symlink is committed as the symlink, as `git add`
// does, never as the content of its target.
func TestCommitOfASymlinkIsTheLink(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.json")); err != nil {
		t.Skip(err)
	}
	r, _ := Open(ctx, dir, nil)
	if c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"link.json"}); err != nil || c == nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if ls := git("ls-tree", "HEAD", "link.json"); !strings.HasPrefix(ls, "120000 blob ") {
		t.Errorf("ls-tree: %q", ls)
	}
	if body := git("cat-file", "-p", "HEAD:link.json"); body != "/etc/hostname" {
		t.Errorf("blob %q", body)
	}
}

// A detached HEAD is committed on as `git commit` would (Step 6-D refuses
// before asking): HEAD moves, no branch does.
func TestCommitOnADetachedHeadMovesNoBranch(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	main := git("rev-parse", "main")
	git("checkout", "-q", "--detach")
	r, _ := Open(ctx, dir, nil)
	h, err := r.Head(ctx)
	if err != nil || !h.Detached() || h.SHA != main {
		t.Fatalf("head %+v, %v", h, err)
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil || c.Branch != "" {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if git("rev-parse", "main") != main || git("rev-parse", "HEAD") != c.SHA {
		t.Error("the branch moved, or HEAD did not")
	}
}
