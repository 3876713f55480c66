package forge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain gives every git command, the tests' and the provider's, the
// same isolated identity and configuration: the provider inherits the
// process environment, so per-test t.Setenv would rule out t.Parallel.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "forge-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":     "Test Author",
		"GIT_AUTHOR_EMAIL":    "author@example.com",
		"GIT_COMMITTER_NAME":  "Test Committer",
		"GIT_COMMITTER_EMAIL": "committer@example.com",
		"LC_ALL":              "C",
	} {
		os.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// base is the fixed time the fake histories start at.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T, branch string) repo {
	t.Helper()
	r := repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", branch)
	return r
}

// gitAt runs git in the repository with both dates set to when (the real
// clock when zero) and returns its trimmed output.
func (r repo) gitAt(when time.Time, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = os.Environ()
	if !when.IsZero() {
		d := fmt.Sprintf("@%d +0000", when.Unix())
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r repo) git(args ...string) string {
	r.t.Helper()
	return r.gitAt(time.Time{}, args...)
}

func (r repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit writes files (name, content pairs), commits them at when and
// returns the commit id.
func (r repo) commit(when time.Time, msg string, files ...string) string {
	r.t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		r.write(files[i], files[i+1])
	}
	r.gitAt(when, "add", "-A")
	r.gitAt(when, "commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func newGit(t *testing.T, dir string, prefixes ...string) *Git {
	t.Helper()
	g, err := NewGit(GitOptions{Dir: dir, BranchPrefixes: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func heads(prs []PR) []string {
	var out []string
	for _, p := range prs {
		out = append(out, p.HeadRef)
	}
	return out
}

func TestGitStatusClassifiesBranches(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "hello\n")

	r.git("checkout", "-q", "-b", "auto/a/open")
	r.commit(at(1), "open: first", "open.txt", "1\n")
	r.commit(at(2), "open: second", "open.txt", "2\n")

	r.git("checkout", "-q", "main")
	r.git("checkout", "-q", "-b", "auto/a/ff")
	ffTip := r.commit(at(3), "ff: change", "ff.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--ff-only", "auto/a/ff")

	r.git("checkout", "-q", "-b", "auto/a/mc")
	r.commit(at(4), "mc: change", "mc.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.commit(at(5), "main moves on", "main.txt", "x\n")
	r.gitAt(at(6), "merge", "-q", "--no-ff", "-m", "Merge branch 'auto/a/mc'", "auto/a/mc")
	mergeCommit := r.git("rev-parse", "HEAD")

	r.git("checkout", "-q", "-b", "auto/a/rejected")
	rejTip := r.commit(at(7), "rejected: change", "rej.txt", "x\n")
	r.git("update-ref", ClosedRefPrefix+"auto/a/rejected", rejTip)

	r.git("checkout", "-q", "main")
	r.git("checkout", "-q", "-b", "auto/a/gone")
	goneTip := r.commit(at(8), "gone: change", "gone.txt", "x\n")
	r.git("update-ref", ClosedRefPrefix+"auto/a/gone", goneTip)
	r.git("checkout", "-q", "main")
	r.git("branch", "-q", "-D", "auto/a/gone")

	r.git("checkout", "-q", "-b", "other/not-a-pr")
	r.commit(at(9), "unrelated", "other.txt", "x\n")
	r.git("checkout", "-q", "main")

	g := newGit(t, r.dir, "auto/a/")
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := heads(st.Open), []string{"auto/a/open"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
	open := st.Open[0]
	if open.Number != BranchNumber("auto/a/open") || open.Title != "open: second" || !open.Created.Equal(at(1)) ||
		open.State != StateOpen || open.Draft {
		t.Errorf("open PR = %+v", open)
	}

	if got, want := heads(st.Merged), []string{"auto/a/mc", "auto/a/ff"}; !slices.Equal(got, want) {
		t.Fatalf("merged = %v, want %v (newest first)", got, want)
	}
	mc, ff := st.Merged[0], st.Merged[1]
	if mc.MergeSHA != mergeCommit || !mc.Merged.Equal(at(6)) || mc.State != StateMerged || mc.Title != "mc: change" {
		t.Errorf("merge-commit PR = %+v, want merge %s at %v", mc, mergeCommit, at(6))
	}
	if ff.MergeSHA != ffTip || !ff.Merged.Equal(at(3)) {
		t.Errorf("fast-forward PR = %+v, want merge %s at %v", ff, ffTip, at(3))
	}

	if got, want := heads(st.Closed), []string{"auto/a/gone", "auto/a/rejected"}; !slices.Equal(got, want) {
		t.Fatalf("closed = %v, want %v (newest first)", got, want)
	}
	if c := st.Closed[1]; c.State != StateClosed || !c.Closed.Equal(at(7)) || c.Title != "rejected: change" {
		t.Errorf("closed PR = %+v", c)
	}
	if st.Issues == nil || len(st.Issues) != 0 {
		t.Errorf("issues = %#v, want empty and non-nil", st.Issues)
	}

	if f, err := g.Facts(context.Background(), mc.Number); err != nil || !slices.Equal(f.Files, []string{"mc.txt"}) ||
		f.State != StateMerged {
		t.Errorf("facts of the merge-commit PR = %+v, %v", f, err)
	}
	if st, err := newGit(t, r.dir).Status(context.Background()); err != nil ||
		len(st.Open)+len(st.Merged)+len(st.Closed) != 0 {
		t.Errorf("without prefixes: %+v, %v", st, err)
	}

	// The numbers depend on the names alone.
	again, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again.Open[0].Number != open.Number || again.Merged[0].Number != mc.Number {
		t.Error("numbers changed between two readings")
	}
}

func TestBranchNumberIsStable(t *testing.T) {
	t.Parallel()
	// Fixed values: a change here renumbers every plain-git PR a project
	// has on record.
	for name, want := range map[string]int{
		"auto/scan-health/fix-1": 237738,
		"a":                      2221, // FNV-1a("a") = 0xe40c292c
	} {
		if got := BranchNumber(name); got != want {
			t.Errorf("BranchNumber(%q) = %d, want %d", name, got, want)
		}
	}
	if BranchNumber("auto/x") == BranchNumber("auto/y") {
		t.Error("distinct names got the same number")
	}
}

func TestGitMergedCapIsFiveNewestFirst(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	for i := 1; i <= 7; i++ {
		b := fmt.Sprintf("auto/m%d", i)
		r.git("checkout", "-q", "-b", b)
		r.commit(at(i*10), "change "+b, b+".txt", "x\n")
		r.git("checkout", "-q", "main")
		r.gitAt(at(i*10+1), "merge", "-q", "--no-ff", "-m", "merge "+b, b)
	}
	st, err := newGit(t, r.dir, "auto/").Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"auto/m7", "auto/m6", "auto/m5", "auto/m4", "auto/m3"}
	if got := heads(st.Merged); !slices.Equal(got, want) {
		t.Errorf("merged = %v, want %v", got, want)
	}
}

func TestGitRemoteTrackingBranchesAndDefaultDetection(t *testing.T) {
	t.Parallel()
	// A bare remote whose default branch is "trunk", seeded by one clone
	// and observed from another.
	r0 := repo{t: t, dir: t.TempDir()}
	bare := filepath.Join(r0.dir, "remote.git")
	r0.git("init", "-q", "--bare", "-b", "trunk", bare)
	seed := repo{t: t, dir: filepath.Join(r0.dir, "seed")}
	r0.git("clone", "-q", bare, seed.dir)
	seed.git("checkout", "-q", "-b", "trunk")
	seed.commit(at(0), "initial", "README", "x\n")
	seed.git("push", "-q", "origin", "trunk")

	work := repo{t: t, dir: filepath.Join(r0.dir, "work")}
	r0.git("clone", "-q", bare, work.dir)

	seed.git("checkout", "-q", "-b", "auto/r/remote-only")
	seed.commit(at(1), "remote: change", "remote.txt", "a\nb\n")
	seed.git("push", "-q", "origin", "auto/r/remote-only")
	work.git("fetch", "-q", "origin")

	work.git("checkout", "-q", "-b", "auto/r/local")
	work.commit(at(2), "local: change", "local.txt", "x\n")
	work.git("checkout", "-q", "trunk")

	g := newGit(t, work.dir, "auto/r/")
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := heads(st.Open), []string{"auto/r/local", "auto/r/remote-only"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
	f, err := g.Facts(context.Background(), BranchNumber("auto/r/remote-only"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Files, []string{"remote.txt"}) || f.Additions != 2 || f.State != StateOpen {
		t.Errorf("facts of the remote-only branch against trunk = %+v", f)
	}
}

func TestGitFactsNumstat(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "keep.txt", "one\ntwo\n", "old.txt", "a\n")
	r.git("checkout", "-q", "-b", "auto/f")
	r.write("new.txt", "1\n2\n3\n")
	r.write("keep.txt", "one\nTWO\n")
	r.write("blob.bin", "\x00\x01\x02binary")
	r.write("dir/with space.txt", "s\n")
	os.Remove(filepath.Join(r.dir, "old.txt"))
	r.commit(at(1), "change files")
	r.git("checkout", "-q", "main")
	r.commit(at(2), "main moves on", "main-only.txt", "not part of the branch\n")

	f, err := newGit(t, r.dir, "auto/").Facts(context.Background(), BranchNumber("auto/f"))
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"blob.bin", "dir/with space.txt", "keep.txt", "new.txt", "old.txt"}
	if !slices.Equal(f.Files, wantFiles) || f.ChangedFiles != 5 || f.Additions != 5 || f.Deletions != 2 ||
		f.HeadRef != "auto/f" || f.Number != BranchNumber("auto/f") || f.State != StateOpen || f.Draft {
		t.Errorf("facts = %+v, want files %v, 5 changed, +5 -2", f, wantFiles)
	}

	if _, err := newGit(t, r.dir, "auto/").Facts(context.Background(), 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown number: err = %v, want ErrNotFound", err)
	}
}

func TestGitMergeSquashAndRevert(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/s/feature")
	r.commit(at(1), "feature: part one", "f.txt", "1\n")
	r.commit(at(2), "#42 feature: part two", "f.txt", "1\n2\n")
	r.git("checkout", "-q", "main")
	before := r.git("rev-parse", "HEAD")

	g := newGit(t, r.dir, "auto/s/")
	n := BranchNumber("auto/s/feature")
	ctx := context.Background()
	if err := g.MergeSquash(ctx, n, ""); err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(r.git("rev-list", "--parents", "-n1", "HEAD")); len(parents) != 2 || parents[1] != before {
		t.Fatalf("squash commit parents = %v, want exactly [%s]", parents[1:], before)
	}
	msg := r.git("log", "-1", "--format=%B")
	if want := "#42 feature: part two (branch auto/s/feature)\n\nOoda-Branch: auto/s/feature"; msg != want {
		t.Errorf("squash message = %q, want %q", msg, want)
	}
	if got := r.git("show", "HEAD:f.txt"); got != "1\n2" {
		t.Errorf("f.txt on main = %q", got)
	}
	squash := r.git("rev-parse", "HEAD")

	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Open) != 0 || len(st.Merged) != 1 || st.Merged[0].MergeSHA != squash || st.Merged[0].Number != n {
		t.Fatalf("after the squash merge: %+v", st)
	}
	merged := st.Merged[0]
	if err := g.MergeSquash(ctx, n, ""); err == nil {
		t.Error("merging a merged PR again succeeded")
	}

	if rev, err := g.Reverted(ctx, merged); err != nil || rev {
		t.Fatalf("Reverted before any revert = %v, %v", rev, err)
	}
	r.commit(time.Time{}, "Revert \"something else (branch auto/s/feature-2)\"")
	if rev, err := g.Reverted(ctx, merged); err != nil || rev {
		t.Fatalf("Reverted after an unrelated revert = %v, %v", rev, err)
	}
	r.git("revert", "--no-edit", "HEAD~1")
	if rev, err := g.Reverted(ctx, merged); err != nil || !rev {
		t.Fatalf("Reverted after git revert = %v, %v", rev, err)
	}
	// Known only by number, as an old outcome record knows it.
	if rev, err := g.Reverted(ctx, PR{Number: n}); err != nil || !rev {
		t.Fatalf("Reverted by number = %v, %v", rev, err)
	}

	// Deleting the branch keeps the PR merged, found by its squash commit,
	// and the revert (which quotes the squash subject) is not a merge.
	r.git("branch", "-q", "-D", "auto/s/feature")
	st, err = g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Merged) != 1 || st.Merged[0].MergeSHA != squash || st.Merged[0].Title != "#42 feature: part two" {
		t.Fatalf("after deleting the branch: %+v", st.Merged)
	}
	if f, err := g.Facts(ctx, n); err != nil || !slices.Equal(f.Files, []string{"f.txt"}) || f.State != StateMerged {
		t.Errorf("facts of the deleted branch = %+v, %v", f, err)
	}
}

func TestGitRevertOfFastForwardMergeFoundByCommitID(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/ff")
	tip := r.commit(at(1), "tweak", "t.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--ff-only", "auto/ff")
	g := newGit(t, r.dir, "auto/")
	pr := PR{Number: BranchNumber("auto/ff"), HeadRef: "auto/ff", State: StateMerged, Merged: at(1), MergeSHA: tip}
	if rev, err := g.Reverted(context.Background(), pr); err != nil || rev {
		t.Fatalf("before = %v, %v", rev, err)
	}
	r.git("revert", "--no-edit", "HEAD")
	if rev, err := g.Reverted(context.Background(), pr); err != nil || !rev {
		t.Fatalf("after = %v, %v", rev, err)
	}
}

func TestGitMergeSquashRefusals(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/c/conflict")
	r.commit(at(1), "branch edit", "README", "branch\n")
	r.git("checkout", "-q", "main")
	r.commit(at(2), "main edit", "README", "main\n")
	head := r.git("rev-parse", "HEAD")
	g := newGit(t, r.dir, "auto/")
	n := BranchNumber("auto/c/conflict")
	ctx := context.Background()

	// A modified file the branch touches: git refuses to overwrite it, and
	// the tree is left as it was.
	r.write("README", "dirty\n")
	if err := g.MergeSquash(ctx, n, ""); err == nil || !strings.Contains(err.Error(), "would be overwritten") {
		t.Errorf("dirty tree: err = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.dir, "README")); string(b) != "dirty\n" {
		t.Errorf("the local change was lost: %q", b)
	}
	r.git("checkout", "--", "README")

	// Something staged: the squash commit would sweep it in, so no merge.
	r.write("other.txt", "staged\n")
	r.git("add", "other.txt")
	if err := g.MergeSquash(ctx, n, ""); err == nil || !strings.Contains(err.Error(), "staged changes") {
		t.Errorf("staged change: err = %v", err)
	}
	r.git("rm", "-q", "--cached", "other.txt")
	os.Remove(filepath.Join(r.dir, "other.txt"))

	r.git("checkout", "-q", "auto/c/conflict")
	if err := g.MergeSquash(ctx, n, ""); err == nil || !strings.Contains(err.Error(), "not on the default branch") {
		t.Errorf("wrong branch: err = %v", err)
	}
	r.git("checkout", "-q", "main")

	if err := g.MergeSquash(ctx, n, ""); err == nil {
		t.Error("conflicting merge succeeded")
	}
	if got := r.git("status", "--porcelain"); got != "" {
		t.Errorf("tree after a failed merge:\n%s", got)
	}
	if got := r.git("rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if err := g.MergeSquash(ctx, 999_999_999, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown PR: err = %v", err)
	}
}

func TestGitDefaultBranchFallbacks(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "master")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/x")
	r.commit(at(1), "x", "x.txt", "x\n")
	if st, err := newGit(t, r.dir, "auto/").Status(context.Background()); err != nil || len(st.Open) != 1 {
		t.Errorf("master fallback: %+v, %v", st, err)
	}
	g, err := NewGit(GitOptions{Dir: r.dir, DefaultBranch: "trunk", BranchPrefixes: []string{"auto/"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Status(context.Background()); err == nil || !strings.Contains(err.Error(), `"trunk" not found`) {
		t.Errorf("missing default branch: err = %v", err)
	}
}

func TestNewGitRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []GitOptions{
		{},
		{Dir: ".", BranchPrefixes: []string{""}},
		{Dir: ".", BranchPrefixes: []string{"refs/heads/auto/"}},
		{Dir: ".", BranchPrefixes: []string{"--upload-pack=x"}},
		{Dir: ".", DefaultBranch: "-main"},
		{Dir: ".", Remote: "a b"},
	} {
		if _, err := NewGit(o); err == nil {
			t.Errorf("NewGit(%+v) accepted", o)
		}
	}
}

func TestGitCancelled(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newGit(t, r.dir, "auto/").Status(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestMentionsBranch(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		`Revert "x (branch auto/a)"`:      true,
		`Revert "Merge branch 'auto/a'"`:  true,
		"Revert auto/a.":                  true,
		`Revert "x (branch auto/a-2)"`:    false,
		`Revert "x (branch auto/a/sub)"`:  false,
		`Revert "x (branch pre-auto/a)"`:  false,
		"Revert auto/a.b":                 false,
		`Revert "y"` + "\n\nsee auto/a\n": true,
	} {
		if got := mentionsBranch(msg, "auto/a"); got != want {
			t.Errorf("mentionsBranch(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestGitMergeSquashPinsTheCheckedHead(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/s/f")
	r.commit(at(1), "one", "f.txt", "1\n")
	checked := r.git("rev-parse", "HEAD")
	r.commit(at(2), "pushed after the check", "f.txt", "1\n2\n")
	r.git("checkout", "-q", "main")
	g := newGit(t, r.dir, "auto/s/")
	ctx := context.Background()
	n := BranchNumber("auto/s/f")
	facts, err := g.Facts(ctx, n)
	if err != nil || facts.HeadSHA == "" || facts.HeadSHA == checked {
		t.Fatalf("facts head = %q (%v)", facts.HeadSHA, err)
	}
	before := r.git("rev-parse", "HEAD")
	if err := g.MergeSquash(ctx, n, checked); !errors.Is(err, ErrHeadMoved) {
		t.Errorf("err = %v, want ErrHeadMoved", err)
	}
	if r.git("rev-parse", "HEAD") != before {
		t.Error("merged despite the moved head")
	}
	if err := g.MergeSquash(ctx, n, facts.HeadSHA); err != nil {
		t.Errorf("merge at the checked head: %v", err)
	}
}

// The squash commit runs the repository's hooks and core.fsmonitor, which a
// skill or a merged pull request may have written: they must not find
// ooda's credentials in their environment.
func TestGitMergeSquashHooksDoNotSeeCredentials(t *testing.T) {
	const tok = "ghp_forgeHookLeak0123456789"
	t.Setenv("GITHUB_TOKEN", tok)
	t.Setenv("GH_ENTERPRISE_TOKEN", tok)
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/s/feature")
	r.commit(at(1), "feature", "f.txt", "1\n")
	r.git("checkout", "-q", "main")
	dumps := t.TempDir()
	r.write(".git/hooks/pre-commit", "#!/bin/sh\nenv > '"+dumps+"/pre-commit'\n")
	if err := os.Chmod(filepath.Join(r.dir, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("config", "core.fsmonitor", "sh -c 'env > "+dumps+"/fsmonitor'")

	g := newGit(t, r.dir, "auto/s/")
	if err := g.MergeSquash(context.Background(), BranchNumber("auto/s/feature"), ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pre-commit", "fsmonitor"} {
		b, err := os.ReadFile(filepath.Join(dumps, name))
		if err != nil {
			t.Fatalf("the %s command did not run: %v", name, err)
		}
		if !strings.Contains(string(b), "GIT_AUTHOR_NAME=") || strings.Contains(string(b), tok) {
			t.Errorf("%s environment:\n%s", name, b)
		}
	}
}
