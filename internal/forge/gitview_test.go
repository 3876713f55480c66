package forge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/proc"
)

// gitCalls records the git subcommands a provider starts.
func gitCalls(g *Git) *[]string {
	var calls []string
	inner := g.runner
	g.runner = proc.RunnerFunc(func(ctx context.Context, s proc.Spec) proc.Result {
		// Argv is git -c log.showSignature=false -C <dir> <subcommand> …
		calls = append(calls, s.Argv[5])
		return inner.Run(ctx, s)
	})
	return &calls
}

// trunkClone is a clone whose remote's default branch is trunk, with a
// local main beside it and a branch merged into trunk only: the branch is
// merged if and only if the provider takes trunk as the default branch.
func trunkClone(t *testing.T) repo {
	t.Helper()
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
	work.git("branch", "-q", "main")
	work.git("checkout", "-q", "-b", "auto/x")
	work.commit(at(1), "x", "x.txt", "x\n")
	work.git("checkout", "-q", "trunk")
	work.gitAt(at(2), "merge", "-q", "--no-ff", "-m", "merge x", "auto/x")
	work.git("update-ref", "refs/remotes/origin/trunk", "trunk")
	if got := work.git("symbolic-ref", "refs/remotes/origin/HEAD"); got != "refs/remotes/origin/trunk" {
		t.Fatalf("origin/HEAD = %q: the clone does not set it up as the test needs", got)
	}
	return work
}

func stateOf(t *testing.T, g *Git, branch string) string {
	t.Helper()
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range [][]PR{st.Open, st.Merged, st.Closed} {
		for _, p := range list {
			if p.HeadRef == branch {
				return p.State
			}
		}
	}
	return "missing"
}

// A quiet cycle reads the refs with at most one git process, the remote's
// HEAD included: no symbolic-ref beside for-each-ref. (In these plain
// repositories the ref files are read without any: listRefsLocal.)
func TestGitViewIsOneProcess(t *testing.T) {
	t.Parallel()
	clone := trunkClone(t)
	local := newRepo(t, "main")
	local.commit(at(0), "initial", "README", "x\n")
	for name, dir := range map[string]string{"clone": clone.dir, "no remote": local.dir} {
		g := newGit(t, dir, "auto/")
		calls := gitCalls(g)
		if _, err := g.view(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(*calls) > 1 || len(*calls) == 1 && (*calls)[0] != "for-each-ref" {
			t.Errorf("%s: reading the refs started %v, want at most one for-each-ref", name, *calls)
		}
	}
	if got := stateOf(t, newGit(t, clone.dir, "auto/"), "auto/x"); got != StateMerged {
		t.Errorf("auto/x is %s: the default branch was not taken from origin/HEAD (trunk)", got)
	}
}

// What the listing cannot show is still asked of git, so the default
// branch is what `git symbolic-ref` says: a remote HEAD whose target was
// pruned, and one that points through another symbolic ref.
func TestGitDefaultBranchFromRemoteHeadThatNoListingShows(t *testing.T) {
	t.Parallel()
	t.Run("dangling", func(t *testing.T) {
		t.Parallel()
		r := trunkClone(t)
		r.git("update-ref", "-d", "refs/remotes/origin/trunk")
		g := newGit(t, r.dir, "auto/")
		calls := gitCalls(g)
		// Taking main (which exists) instead would leave auto/x open.
		if got := stateOf(t, g, "auto/x"); got != StateMerged {
			t.Errorf("auto/x is %s: origin/HEAD -> origin/trunk (pruned) must still name trunk", got)
		}
		if !slices.Contains(*calls, "symbolic-ref") {
			t.Errorf("calls %v: the dangling origin/HEAD was decided without git", *calls)
		}
	})
	t.Run("chain", func(t *testing.T) {
		t.Parallel()
		r := trunkClone(t)
		r.git("symbolic-ref", "refs/remotes/origin/alias", "refs/remotes/origin/trunk")
		r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/alias")
		if got := r.git("symbolic-ref", "refs/remotes/origin/HEAD"); got != "refs/remotes/origin/trunk" {
			t.Fatalf("git resolves origin/HEAD to %q; the test expects it to follow the chain", got)
		}
		g := newGit(t, r.dir, "auto/")
		calls := gitCalls(g)
		if got := stateOf(t, g, "auto/x"); got != StateMerged {
			t.Errorf("auto/x is %s: origin/HEAD -> origin/alias -> origin/trunk must name trunk", got)
		}
		if slices.Contains(*calls, "symbolic-ref") {
			t.Errorf("calls %v: a chain inside the listing needs no second process", *calls)
		}
	})
	t.Run("not symbolic", func(t *testing.T) {
		t.Parallel()
		r := trunkClone(t)
		r.git("update-ref", "--no-deref", "refs/remotes/origin/HEAD", "trunk")
		if got := stateOf(t, newGit(t, r.dir, "auto/"), "auto/x"); got != StateOpen {
			t.Errorf("auto/x is %s: an origin/HEAD that is no symbolic ref names no branch (main is the default)", got)
		}
	})
}

// The listing is trusted to show that the remote has no HEAD only in a
// plain .git directory; elsewhere git is asked.
func TestGitRemoteHeadCertainlyAbsent(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	g := newGit(t, r.dir)
	const head = "refs/remotes/origin/HEAD"
	if !g.certainlyAbsent(head) {
		t.Fatal("a plain repository without remotes: origin/HEAD not known to be absent")
	}
	for name, change := range map[string]func(dir string){
		"a dangling origin/HEAD": func(dir string) {
			r := repo{t: t, dir: dir}
			r.git("symbolic-ref", head, "refs/remotes/origin/gone")
		},
		"a linked worktree": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git", "commondir"), []byte("../other\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"a reftable repository": func(dir string) {
			if err := os.Mkdir(filepath.Join(dir, ".git", "reftable"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"a HEAD git would not accept": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("garbage\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"a .git file": func(dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		dir := t.TempDir()
		c := repo{t: t, dir: dir}
		c.git("init", "-q", "-b", "main")
		change(dir)
		if newGit(t, dir).certainlyAbsent(head) {
			t.Errorf("%s: origin/HEAD taken as certainly absent", name)
		}
	}
	if !strings.HasPrefix(r.git("symbolic-ref", "HEAD"), "refs/heads/") {
		t.Fatal("HEAD is not symbolic: the plain case above proves nothing")
	}
}

// After the skill, the refs are read again only if a file of the ref
// storage changed; every kind of change is seen.
func TestGitOpenPRsReadsRefsOnlyWhenTheyChanged(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/a")
	first := r.commit(at(1), "a", "a.txt", "1\n")
	second := r.commit(at(2), "a2", "a.txt", "2\n")
	r.git("checkout", "-q", "main")
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(fileCursor{filepath.Join(t.TempDir(), "c.json")})
	ctx := context.Background()
	if _, err := g.Status(ctx); err != nil {
		t.Fatal(err)
	}
	calls := gitCalls(g)
	readings := 0
	openPRs := func(step string) []PR {
		t.Helper()
		*calls = nil
		readings = g.readings
		open, err := g.OpenPRs(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return open
	}
	if open := openPRs("unchanged"); len(open) != 1 || len(*calls) != 0 || g.readings != readings {
		t.Fatalf("nothing changed: open %+v, git started %v, want none, refs read %d times", open, *calls, g.readings-readings)
	}
	for _, step := range []struct {
		name   string
		change func()
		check  func([]PR) bool
	}{
		{"a branch moved", func() { r.git("update-ref", "refs/heads/auto/a", first) },
			func(open []PR) bool { return len(open) == 1 && open[0].Title == "a" }},
		{"moved back", func() { r.git("update-ref", "refs/heads/auto/a", second) },
			func(open []PR) bool { return len(open) == 1 && open[0].Title == "a2" }},
		{"refs packed", func() { r.git("pack-refs", "--all") },
			func(open []PR) bool { return len(open) == 1 }},
		{"a packed branch moved", func() { r.git("update-ref", "refs/heads/auto/a", first) },
			func(open []PR) bool { return len(open) == 1 && open[0].Title == "a" }},
		{"a branch closed", func() { r.git("update-ref", ClosedRefPrefix+"auto/a", first) },
			func(open []PR) bool { return len(open) == 0 }},
		{"a remote branch", func() { r.git("update-ref", "refs/remotes/origin/auto/b", second) },
			func(open []PR) bool { return len(open) == 1 && open[0].HeadRef == "auto/b" }},
	} {
		step.change()
		open := openPRs(step.name)
		if g.readings != readings+1 {
			t.Errorf("%s: the refs were read %d times, want once again", step.name, g.readings-readings)
		}
		if !step.check(open) {
			t.Errorf("%s: open = %+v", step.name, open)
		}
		if open := openPRs(step.name + ", then nothing"); len(*calls) != 0 || g.readings != readings || !step.check(open) {
			t.Errorf("%s, then nothing: open %+v, git started %v, refs read %d times", step.name, open, *calls, g.readings-readings)
		}
	}
}
