package forge

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// A forge.repo that is not owner/name used to come back as a nil *GitHub
// inside a non-nil Forge, and every cycle panicked calling through it.
// Selection must fail with an error naming the field, and a nil Forge.
func TestSelectRefusesARepoThatIsNotOwnerName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, provider := range []string{"", "auto", "github"} {
		for _, repo := range []string{"not-owner-name", "a/b/c", "../x", "owner/", "/name", "o w/n"} {
			cfg := config.Default()
			cfg.Forge.Provider, cfg.Forge.Repo = provider, repo
			f, err := Select(ctx, cfg, dir)
			if f != nil {
				t.Errorf("provider %q, repo %q: Select returned a forge (%T) with error %v", provider, repo, f, err)
				continue
			}
			if want := `forge.repo: ` + strconv.Quote(repo) + ` is not "owner/name"`; err == nil || err.Error() != want {
				t.Errorf("provider %q, repo %q: error %v, want %s", provider, repo, err, want)
			}
		}
	}
}

// The plain-git provider had the same nil-in-an-interface return.
func TestSelectRefusesBadGitOptionsWithANilForge(t *testing.T) {
	r := newRepo(t, "main")
	cfg := config.Default()
	cfg.Forge.Provider, cfg.Forge.DefaultBranch = "git", "--output=x"
	f, err := Select(context.Background(), cfg, r.dir)
	if f != nil || err == nil || !strings.HasPrefix(err.Error(), `forge.default_branch: "--output=x" is not a branch name`) {
		t.Errorf("Select = %T %v, %v", f, f, err)
	}
	cfg = config.Default()
	cfg.Forge.Provider = "git"
	cfg.Domains = config.Domains{{Name: "d", BranchPrefix: "--output=x/"}}
	f, err = Select(context.Background(), cfg, r.dir)
	if f != nil || err == nil || !strings.Contains(err.Error(), `invalid branch prefix "--output=x/"`) {
		t.Errorf("Select = %T %v, %v", f, f, err)
	}
}

// A commit message is anyone's text: a "(branch …)" or Ooda-Branch naming
// something git would not accept as a branch is no pull request, so it
// never reaches a log line or git.
func TestGitSquashCommitsNameOnlyBranches(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.commit(at(1), "Dots (branch auto/s/a..b)", "a", "1\n")
	r.commit(at(2), "Escape\n\nOoda-Branch: auto/s/x\x1b[2J\x1b[31mforged", "b", "1\n")
	r.commit(at(3), "Reflog (branch auto/s/main@{1})", "c", "1\n")
	r.commit(at(4), "Real one (branch auto/s/ok)", "d", "1\n")
	st, err := newGit(t, r.dir, "auto/s/").Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := heads(st.Merged); len(got) != 1 || got[0] != "auto/s/ok" {
		t.Errorf("merged = %q, want only auto/s/ok", got)
	}
}

// Reverted takes its PR from the caller, and the caller's PR may come from
// state: a merge commit that is an option must never reach git's argv,
// where `git log --output=FILE` would write FILE.
func TestGitRevertedNeverHandsAForeignCommitToGit(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGit(t, r.dir, "auto/s/")
	pr := PR{Number: BranchNumber("auto/s/x"), HeadRef: "auto/s/x", State: StateMerged, Merged: at(1), MergeSHA: "--output=" + target}
	rev, err := g.Reverted(context.Background(), pr)
	if rev || !errors.Is(err, ErrNotFound) {
		t.Errorf("Reverted = %v, %v; want the PR looked up by number (not found)", rev, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep me\n" {
		t.Fatalf("%s is now %q (%v)", target, b, err)
	}
}

func TestGitMergeSquashRefusesAHeadThatIsNotASHA(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/s/f")
	r.commit(at(1), "feature", "f", "1\n")
	r.git("checkout", "-q", "main")
	err := newGit(t, r.dir, "auto/s/").MergeSquash(context.Background(), BranchNumber("auto/s/f"), "--output=x")
	if err == nil || errors.Is(err, ErrHeadMoved) || !strings.Contains(err.Error(), `head "--output=x" is not a commit SHA`) {
		t.Errorf("MergeSquash = %v", err)
	}
	if r.git("rev-parse", "HEAD") != r.git("rev-parse", "main") || r.git("log", "-1", "--format=%s") != "initial" {
		t.Error("something was merged")
	}
}

// git's output is read into memory only up to the limit: a history that
// prints more makes Status fail naming the limit.
func TestGitOutputIsCapped(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.commit(at(1), "Big (branch auto/s/big)\n\n"+strings.Repeat("a long body line\n", 1024), "a", "1\n")
	g, err := NewGit(GitOptions{Dir: r.dir, BranchPrefixes: []string{"auto/s/"}, MaxOutput: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Status(context.Background()); !errors.Is(err, gitrepo.ErrOutputLimit) || !strings.Contains(err.Error(), "4 KiB") {
		t.Errorf("Status = %v, want the output limit", err)
	}
	if _, err := newGit(t, r.dir, "auto/s/").Status(context.Background()); err != nil {
		t.Errorf("under the default limit: %v", err)
	}
}

// endless answers a JSON array that never ends, until the client hangs up.
func endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	chunk := []byte(strings.Repeat(`{"number": 1, "title": "again"},`, 512))
	if _, err := w.Write([]byte("[")); err != nil {
		return
	}
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// A server that streams without end costs at most the limit in memory and
// is an error naming the request and the limit.
func TestGitHubEndlessAnswerIsAnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max  int64
		want string
	}{{64 << 10, "64 KiB"}, {0, "16 MiB"}} {
		f := newFakeGitHub(t, "", testToken)
		f.on("GET /repos/octo/widget/pulls?per_page=100&state=open", endless)
		g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: f.srv.URL, Token: testToken, MaxResponseBytes: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Status(context.Background())
		want := "github: GET /repos/octo/widget/pulls?per_page=100&state=open: the answer is larger than " + tc.want + " (safety.max_read_mib)"
		if err == nil || err.Error() != want {
			t.Errorf("Status = %v, want %s", err, want)
		}
	}
}

func TestGitHubAnswerSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	f := newFakeGitHub(t, "", testToken)
	answer := func(body string, length int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if length > 0 {
				w.Header().Set("Content-Length", strconv.Itoa(length))
			}
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(body))
		}
	}
	exact := "[" + strings.Repeat(" ", limit-2) + "]"
	f.on("GET /repos/octo/widget/pulls/1/reviews?per_page=100", answer(exact, 0))
	f.on("GET /repos/octo/widget/pulls/2/reviews?per_page=100", answer(exact+" ", 0))
	// A declared length over the limit is refused before reading.
	f.on("GET /repos/octo/widget/pulls/3/reviews?per_page=100", answer("[]", 1<<40))
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: f.srv.URL, Token: testToken, MaxResponseBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Reviews(ctx, 1); err != nil {
		t.Errorf("an answer of exactly the limit: %v", err)
	}
	for _, n := range []int{2, 3} {
		if _, err := g.Reviews(ctx, n); err == nil || !strings.Contains(err.Error(), "/pulls/"+strconv.Itoa(n)+"/reviews?per_page=100: the answer is larger than 1 KiB") {
			t.Errorf("PR %d: %v", n, err)
		}
	}
}

// GitHub serves only branch names and commit ids git accepts. A server
// that sends anything else (an escape sequence and a newline that would
// forge a log line, an option) gets no name in the listing and no facts.
func TestGitHubHostileHeadRefAndSHA(t *testing.T) {
	t.Parallel()
	hostile := "auto/x/a\x1b[2J\n[Record] forged"
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls?per_page=100&state=open", 200, []obj{pull(1, "t", hostile, nil), pull(2, "t", "-x", nil)}, "")
	f.json("GET /repos/octo/widget/pulls?direction=desc&per_page=30&sort=updated&state=closed", 200, []obj{
		pull(3, "m", "auto/x/m", obj{"state": "closed", "merged_at": ts(5), "closed_at": ts(5), "merge_commit_sha": "--output=/tmp/x"}),
	}, "")
	f.json("GET /repos/octo/widget/issues?per_page=100&state=open", 200, []obj{}, "")
	f.json("GET /repos/octo/widget/pulls/1", 200, pull(1, "t", hostile, nil), "")
	f.json("GET /repos/octo/widget/pulls/4", 200, pull(4, "t", "auto/x/ok", obj{"head": obj{"ref": "auto/x/ok", "sha": "--output=/tmp/x"}}), "")
	g := f.client(t)
	ctx := context.Background()
	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Open) != 2 || st.Open[0].HeadRef != "" || st.Open[1].HeadRef != "" {
		t.Errorf("open = %+v, want both without a head ref", st.Open)
	}
	if len(st.Merged) != 1 || st.Merged[0].HeadRef != "auto/x/m" || st.Merged[0].MergeSHA != "" {
		t.Errorf("merged = %+v, want no merge commit", st.Merged)
	}
	if _, err := g.Facts(ctx, 1); err == nil || !strings.Contains(err.Error(), `github: PR #1: head.ref: "auto/x/a\x1b[2J\n[Record] forged" is not a branch name`) {
		t.Errorf("Facts(1) = %v", err)
	}
	if _, err := g.Facts(ctx, 4); err == nil || !strings.Contains(err.Error(), `github: PR #4: head.sha: "--output=/tmp/x" is not a commit SHA`) {
		t.Errorf("Facts(4) = %v", err)
	}
	if err := g.MergeSquash(ctx, 4, "--output=/tmp/x"); err == nil || !strings.Contains(err.Error(), "is not a commit SHA") {
		t.Errorf("MergeSquash = %v", err)
	}
}
