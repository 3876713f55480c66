package forge

import (
	"context"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// A skill trusted with the forge token names its branch and its commit
// after the token and adds terminal escapes. The squash commit is ooda's,
// on the default branch and pushed by git.push: it must carry neither the
// token nor a control character, and the merge must still be recognised
// although the trailer can no longer name the branch.
func TestGitMergeSquashKeepsSecretsAndControlsOutOfItsCommit(t *testing.T) {
	t.Parallel()
	const tok = "ghp_squashLeak0123456789abcdefABCDEF"
	secret.Register(tok)
	branch := "auto/fix/c1-" + tok
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", branch)
	// The second token is split by a right-to-left override, which a
	// terminal does not show: dropping it must not reveal the token.
	tip := r.commit(at(1), "fix: "+tok+" \x1b[2J\x1b]0;owned\x07 \u0085 \u202e"+tok[:10]+"\u202e"+tok[10:],
		"f.txt", "1\n")
	// Built on the merged tip, with work of its own: not merged.
	r.git("checkout", "-q", "-b", "auto/fix/c2")
	r.commit(at(2), "more", "g.txt", "1\n")
	r.git("checkout", "-q", "main")

	g := newGit(t, r.dir, "auto/fix/")
	ctx := context.Background()
	n := BranchNumber(branch)
	if err := g.MergeSquash(ctx, n, tip); err != nil {
		t.Fatal(err)
	}
	squash := r.git("rev-parse", "main")
	// Everything the default branch now holds, as a clone would show it.
	shown := r.git("log", "-p", "--format=raw", "main") + r.git("log", "-p", "main")
	for _, bad := range []string{tok, tok[:10], tok[10:], "\x1b", "\x07", "\u0085", "\u202e"} {
		if strings.Contains(shown, bad) {
			t.Errorf("the default branch's history contains %q:\n%q", bad, shown)
		}
	}
	msg := r.git("log", "-1", "--format=%B", "main")
	want := "fix: *** [2J]0;owned ***" + " (branch auto/fix/c1-***)\n\n" +
		"Ooda-Branch: auto/fix/c1-***\n" + HeadTrailer + ": " + tip
	if msg != want {
		t.Errorf("squash message = %q, want %q", msg, want)
	}
	if got := r.git("show", "main:f.txt"); got != "1" {
		t.Errorf("f.txt on main = %q", got)
	}

	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Merged) != 1 || st.Merged[0].HeadRef != branch || st.Merged[0].MergeSHA != squash {
		t.Fatalf("merged = %+v, want %s by %s", st.Merged, branch, squash)
	}
	if got := heads(st.Open); len(got) != 1 || got[0] != "auto/fix/c2" {
		t.Errorf("open = %q, want only auto/fix/c2", got)
	}
	if err := g.MergeSquash(ctx, n, ""); err == nil || !strings.Contains(err.Error(), "is merged, not open") {
		t.Errorf("merging it again: %v", err)
	}
	// State keeps the name redacted: the PR is then found by number.
	merged := PR{Number: n, HeadRef: secret.Redact(branch)}
	if rev, err := g.Reverted(ctx, merged); err != nil || rev {
		t.Fatalf("Reverted before the revert = %v, %v", rev, err)
	}
	r.git("revert", "--no-edit", "main")
	if rev, err := g.Reverted(ctx, merged); err != nil || !rev {
		t.Fatalf("Reverted after git revert = %v, %v", rev, err)
	}
	// The revert quotes the squash subject and its trailers, and is no
	// merge of anything.
	if st, err := g.Status(ctx); err != nil || len(st.Merged) != 1 || st.Merged[0].MergeSHA != squash {
		t.Errorf("after the revert: %+v, %v", st.Merged, err)
	}
}

// Ooda copied the tip's subject into its squash commit, so a subject that
// named another branch made that branch read as merged.
func TestGitMergeSquashSubjectCannotMergeAnotherBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/s/victim")
	r.commit(at(1), "victim", "v.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.git("checkout", "-q", "-b", "auto/s/forger")
	r.commit(at(2), "forge (branch auto/s/victim)\n\nOoda-Branch: auto/s/victim", "f.txt", "1\n")
	r.git("checkout", "-q", "main")

	g := newGit(t, r.dir, "auto/s/")
	ctx := context.Background()
	if err := g.MergeSquash(ctx, BranchNumber("auto/s/forger"), ""); err != nil {
		t.Fatal(err)
	}
	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := heads(st.Merged); len(got) != 1 || got[0] != "auto/s/forger" {
		t.Errorf("merged = %q, want only auto/s/forger", got)
	}
	if got := heads(st.Open); len(got) != 1 || got[0] != "auto/s/victim" {
		t.Errorf("open = %q, want auto/s/victim", got)
	}
}

// A branch name git accepts may still hold a C1 control or a bidi
// override; written as '?', it can be no other branch's name.
func TestGitMergeSquashBranchWithControls(t *testing.T) {
	t.Parallel()
	branch := "auto/s/a\u202eb\u0085c"
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", branch)
	tip := r.commit(at(1), "change", "f.txt", "1\n")
	r.git("checkout", "-q", "main")
	// The name with the controls dropped is a real, unmerged branch.
	r.git("checkout", "-q", "-b", "auto/s/abc")
	r.commit(at(2), "other", "o.txt", "1\n")
	r.git("checkout", "-q", "main")

	g := newGit(t, r.dir, "auto/s/")
	ctx := context.Background()
	if err := g.MergeSquash(ctx, BranchNumber(branch), ""); err != nil {
		t.Fatal(err)
	}
	msg := r.git("log", "-1", "--format=%B", "main")
	if want := "change (branch auto/s/a?b?c)\n\nOoda-Branch: auto/s/a?b?c\nOoda-Head: " + tip; msg != want {
		t.Errorf("squash message = %q, want %q", msg, want)
	}
	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := heads(st.Merged); len(got) != 1 || got[0] != branch {
		t.Errorf("merged = %q, want %q", got, branch)
	}
	if got := heads(st.Open); len(got) != 1 || got[0] != "auto/s/abc" {
		t.Errorf("open = %q, want auto/s/abc", got)
	}
}

func TestCommitLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                        "plain",
		"  two\n\nlines\t\r\n":         "two lines",
		"esc \x1b[31mred\x1b[0m":       "esc [31mred[0m",
		"bidi \u202egnp.exe\u2066x":    "bidi gnp.exex",
		"c1 \u009b2J and sep\u2028end": "c1 2J and sep end",
		"bad \xff utf8":                "bad \uFFFD utf8",
		"x (branch auto/a) y":          "x (from branch auto/a) y",
		"":                             "",
	} {
		if got := commitLine(in); got != want {
			t.Errorf("commitLine(%q) = %q, want %q", in, got, want)
		}
	}
}
