package forge

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// stateCommit commits a state file as a cycle's Step 6-D does (plumbing,
// loose objects) and returns the commit.
func (r repo) stateCommit(cycle string) string {
	r.t.Helper()
	r.write(filepath.Join("agent", "state", "evolve", "state.json"), `{"cycle":`+cycle+"}\n")
	repo, ok := gitrepo.Open(context.Background(), r.dir, nil)
	if !ok {
		r.t.Fatal("not a repository")
	}
	c, err := repo.CommitFiles(context.Background(), "evolve: cycle #"+cycle+" -- none (no_op)", []string{filepath.Join("agent", "state", "evolve", "state.json")})
	if err != nil || c == nil {
		r.t.Fatalf("state commit: %v", err)
	}
	return c.SHA
}

// ownStateRepo is a repository with an unmerged PR branch and a cursor
// saved by a first cycle, as a loop that commits its state has after its
// first cycle.
func ownStateRepo(t *testing.T) (repo, fileCursor) {
	t.Helper()
	r := newRepo(t, "main")
	r.commit(at(1), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/one")
	r.commit(at(2), "one: first", "one.txt", "1\n")
	r.git("checkout", "-q", "main")
	cursor := fileCursor{filepath.Join(t.TempDir(), "forge_cursor.json")}
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(cursor)
	if _, err := g.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.SaveCursor(); err != nil {
		t.Fatal(err)
	}
	return r, cursor
}

// statusCalls is a new process's Status from the cursor, and the git
// subcommands it ran.
func statusCalls(t *testing.T, r repo, cursor fileCursor) (Status, []string) {
	t.Helper()
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(cursor)
	calls := gitCalls(g)
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SaveCursor(); err != nil {
		t.Fatal(err)
	}
	sameAsFullScan(t, "after the status", r, g)
	return st, *calls
}

func readsHistory(calls []string) bool {
	return slices.Contains(calls, "merge-base") || slices.Contains(calls, "log") || slices.Contains(calls, "rev-list")
}

// The commits a loop makes of its own state are all the default branch
// gains from one cycle to the next: the next cycle reads them from git's
// objects, without a git process, and sees the same as from `git log`.
func TestOwnStateCommitsReadWithoutGit(t *testing.T) {
	t.Parallel()
	r, cursor := ownStateRepo(t)
	for _, cycle := range []string{"2", "3"} {
		r.stateCommit(cycle)
		st, calls := statusCalls(t, r, cursor)
		if readsHistory(calls) {
			t.Errorf("cycle %s: the state commit was read with git: %v", cycle, calls)
		}
		if len(st.Open) != 1 || st.Open[0].HeadRef != "auto/one" {
			t.Errorf("cycle %s: open PRs %+v, want auto/one", cycle, st.Open)
		}
	}
}

// A squash merge the user makes on top of the loop's state commit is read,
// and the branch it merges is merged.
func TestSquashMergeAfterStateCommitIsSeen(t *testing.T) {
	t.Parallel()
	r, cursor := ownStateRepo(t)
	r.stateCommit("2")
	r.squashCommitAt(at(10), "auto/one", "one (branch auto/one)", "")
	st, calls := statusCalls(t, r, cursor)
	if !readsHistory(calls) {
		t.Errorf("the squash merge was not read with git: %v", calls)
	}
	if len(st.Merged) != 1 || st.Merged[0].HeadRef != "auto/one" || len(st.Open) != 0 {
		t.Errorf("merged %+v, open %+v: want auto/one merged", st.Merged, st.Open)
	}
}

// A replace ref makes git read another commit in place of the state
// commit — here a squash merge of the branch. The objects alone do not say
// so: the history is left to git, which sees the merge.
func TestReplacedStateCommitIsLeftToGit(t *testing.T) {
	t.Parallel()
	r, cursor := ownStateRepo(t)
	state := r.stateCommit("2")
	r.git("checkout", "-q", "-b", "other", state+"^")
	fake := r.commit(at(11), "one (branch auto/one)", "one.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.git("replace", state, fake)
	st, calls := statusCalls(t, r, cursor)
	if !readsHistory(calls) {
		t.Errorf("a replaced commit was read from its object: %v", calls)
	}
	if len(st.Merged) != 1 || st.Merged[0].HeadRef != "auto/one" {
		t.Errorf("merged %+v: want auto/one, as git reads the history", st.Merged)
	}
}

// A state commit packed by `git gc` is no loose object: git reads it.
func TestPackedStateCommitIsLeftToGit(t *testing.T) {
	t.Parallel()
	r, cursor := ownStateRepo(t)
	r.stateCommit("2")
	r.git("gc", "-q")
	if _, calls := statusCalls(t, r, cursor); !readsHistory(calls) {
		t.Errorf("a packed commit was not left to git: %v", calls)
	}
}
