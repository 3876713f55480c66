package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func setup(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
		"GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": dir} {
		t.Setenv(k, v)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-q", "-m", "init")
	return dir, git
}

func TestCommitPathsCommitsOnlyThosePaths(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	if _, ok := Open(ctx, t.TempDir(), nil); ok {
		t.Error("a plain directory is not a repository")
	}
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not opened")
	}
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("user work\n"), 0o644)
	git("add", "mine.txt")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	committed, err := r.CommitPaths(ctx, "evolve: cycle #1", []string{"state.json"})
	if err != nil || !committed {
		t.Fatalf("committed %v, %v", committed, err)
	}
	if files := git("show", "--name-only", "--format=", "HEAD"); files != "state.json" {
		t.Errorf("commit holds %q", files)
	}
	if staged := git("diff", "--cached", "--name-only"); staged != "mine.txt" {
		t.Errorf("the user's staged file must stay staged: %q", staged)
	}
	if committed, err := r.CommitPaths(ctx, "again", []string{"state.json"}); err != nil || committed {
		t.Errorf("nothing changed: committed %v, %v", committed, err)
	}
	if r.HasRemote(ctx) {
		t.Error("no remote yet")
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n"), 0o644)
	if !r.Ignored(ctx, "ignored/x.json") || r.Ignored(ctx, "state.json") {
		t.Error("Ignored")
	}
}

func TestBusyDetectsDetachedHeadAndMerges(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	r, _ := Open(ctx, dir, nil)
	if why, busy := r.Busy(ctx); busy {
		t.Fatalf("clean repo busy: %s", why)
	}
	git("checkout", "-q", "--detach")
	if why, busy := r.Busy(ctx); !busy || why != "HEAD is detached" {
		t.Errorf("detached: %q %v", why, busy)
	}
	git("checkout", "-q", "main")
	gitDir := git("rev-parse", "--absolute-git-dir")
	os.WriteFile(filepath.Join(gitDir, "MERGE_HEAD"), []byte(git("rev-parse", "HEAD")+"\n"), 0o644)
	if why, busy := r.Busy(ctx); !busy || why != "a merge is in progress" {
		t.Errorf("merge: %q %v", why, busy)
	}
	if _, err := r.Run(ctx, "no-such-command"); err == nil || !strings.Contains(err.Error(), "git no-such-command: exit") {
		t.Errorf("error = %v", err)
	}
}

// A skill or a merged pull request can write .git/hooks and .git/config.
// The state commit runs no commit hook (docs/security.md); the clean
// filter and the core.fsmonitor command that .git/config names, which dump
// their environment, must not find ooda's credentials in it. A push,
// which may need them for a credential helper, still passes them on
// (docs/forge.md).
func TestHooksAndFiltersDoNotSeeCredentials(t *testing.T) {
	const tok = "ghp_gitrepoHookLeak0123456789"
	dir, git := setup(t)
	t.Setenv("GITHUB_TOKEN", tok)
	t.Setenv("GH_TOKEN", tok)
	dumps := t.TempDir()
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit"} {
		if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", hook), []byte("#!/bin/sh\nenv > '"+dumps+"/"+hook+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git("config", "core.fsmonitor", "sh -c 'env > "+dumps+"/fsmonitor'")
	git("config", "filter.dump.clean", "sh -c 'env > "+dumps+"/filter; cat'")
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.json filter=dump\n"), 0o644)
	git("add", ".gitattributes")
	git("commit", "-q", "-m", "attributes")
	os.Remove(filepath.Join(dumps, "fsmonitor"))
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit"} {
		os.Remove(filepath.Join(dumps, hook))
	}
	ctx := context.Background()
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not opened")
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	if committed, err := r.CommitPaths(ctx, "evolve: cycle #1", []string{"state.json"}); err != nil || !committed {
		t.Fatalf("committed %v, %v", committed, err)
	}
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit"} {
		if _, err := os.Stat(filepath.Join(dumps, hook)); err == nil {
			t.Errorf("the %s hook ran for a state commit", hook)
		}
	}
	b, err := os.ReadFile(filepath.Join(dumps, "filter"))
	if err != nil {
		t.Fatalf("the clean filter did not run: %v", err)
	}
	if !strings.Contains(string(b), "GIT_AUTHOR_NAME=") {
		t.Errorf("filter: not an environment dump: %q", b)
	}
	if strings.Contains(string(b), tok) {
		t.Errorf("the clean filter saw the token:\n%s", b)
	}
	// `git status` runs the fsmonitor command through the same runner.
	if _, err := r.Run(ctx, "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dumps, "fsmonitor")); err != nil {
		t.Errorf("the fsmonitor command did not run: %v", err)
	} else if strings.Contains(string(b), tok) {
		t.Errorf("the fsmonitor command saw the token:\n%s", b)
	}

	remote := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	git("remote", "add", "origin", remote)
	git("push", "-q", "-u", "origin", "main")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{\"n\": 2}\n"), 0o644)
	if committed, err := r.CommitPaths(ctx, "evolve: cycle #2", []string{"state.json"}); err != nil || !committed {
		t.Fatalf("committed %v, %v", committed, err)
	}
	os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-push"), []byte("#!/bin/sh\nenv > '"+dumps+"/pre-push'\n"), 0o755)
	if _, err := r.PushUpstream(ctx, func(string, string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dumps, "pre-push")); err != nil || !strings.Contains(string(b), "GITHUB_TOKEN="+tok) {
		t.Errorf("a push keeps the credentials a credential helper needs: %v %q", err, b)
	}
}

func TestSubcommandSkipsGitOptions(t *testing.T) {
	for args, want := range map[string]string{
		"commit -m x":                     "commit",
		"-c merge.ff=true merge --squash": "merge",
		"-C /tmp --no-pager push":         "push",
		"--git-dir /x fetch":              "fetch",
		"":                                "",
	} {
		if got := subcommand(strings.Fields(args)); got != want {
			t.Errorf("subcommand(%q) = %q, want %q", args, got, want)
		}
	}
}

// A clean filter that never returns (.gitattributes and .git/config are
// the repository's) held the commit, and the cycle's lock, until the
// 2-minute git timeout, whatever the HALT file said. With Repo.HaltFile
// set the HALT file stops the filter's git, the branch does not move, and
// no further git command starts while it exists.
func TestHaltFileStopsAHangingFilter(t *testing.T) {
	dir, git := setup(t)
	started := filepath.Join(dir, "filter-started")
	git("config", "filter.hang.clean", "sh -c ': > \""+started+"\"; exec sleep 100000'")
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("state.json filter=hang\n"), 0o644)
	head := git("rev-parse", "HEAD")
	halt := filepath.Join(dir, "HALT")
	ctx := context.Background()
	r, ok := OpenHalting(ctx, dir, nil, halt)
	if !ok {
		t.Fatal("not opened")
	}
	// Longer than the test's own deadline: only the HALT file can end it.
	r.Timeout = time.Hour
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	done := make(chan error, 1)
	go func() {
		_, err := r.CommitPaths(ctx, "evolve: cycle #1", []string{"state.json"})
		done <- err
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the commit ended before its filter ran: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := os.WriteFile(halt, []byte("stop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrHalted) {
			t.Fatalf("err = %v, want ErrHalted", err)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("the HALT file did not stop git")
	}
	if _, err := r.Run(ctx, "status"); !errors.Is(err, ErrHalted) {
		t.Errorf("a git command started while HALT exists: %v", err)
	}
	if _, ok := OpenHalting(ctx, dir, nil, halt); ok {
		t.Error("opened while HALT exists")
	}
	if now := git("rev-parse", "HEAD"); now != head {
		t.Errorf("HEAD moved from %s to %s", head, now)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "ooda-index-*")); len(left) != 0 {
		t.Errorf("the private index was left behind: %v", left)
	}
}

// withRemote is setup with a bare remote "origin" that main tracks.
func withRemote(t *testing.T) (dir, remote string, git func(args ...string) string, bare func(args ...string) string) {
	t.Helper()
	dir, git = setup(t)
	remote = t.TempDir()
	bare = func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", remote}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	bare("init", "-q", "--bare", "-b", "main")
	git("remote", "add", "origin", remote)
	git("push", "-q", "-u", "origin", "main")
	return dir, remote, git, bare
}

// ours is the owned test of Step 6-D's commits.
func ours(_, subject string) bool { return strings.HasPrefix(subject, "evolve: cycle #") }

func TestCommitFilesSaysWhatItCommitted(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	// The project is a subdirectory of the repository: paths are given,
	// and reported, relative to it.
	sub := filepath.Join(dir, "svc")
	os.MkdirAll(filepath.Join(sub, "agent", "state"), 0o755)
	os.WriteFile(filepath.Join(sub, "agent", "state", "a.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "agent", "state", "b.json"), []byte("{}\n"), 0o644)
	git("add", "svc")
	git("commit", "-q", "-m", "svc")
	os.WriteFile(filepath.Join(sub, "agent", "state", "a.json"), []byte("{\"n\":1}\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "agent", "state", "new.json"), []byte("{}\n"), 0o644)
	r, ok := Open(ctx, sub, nil)
	if !ok {
		t.Fatal("not opened")
	}
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"agent/state/a.json", "agent/state/b.json", "agent/state/new.json"})
	if err != nil || c == nil {
		t.Fatalf("commit %v, %v", c, err)
	}
	if c.SHA != git("rev-parse", "HEAD") || c.Short() != c.SHA[:7] || c.Branch != "main" {
		t.Errorf("commit = %+v, HEAD %s", c, git("rev-parse", "HEAD"))
	}
	// b.json did not change: it is in no commit, and not reported.
	if got := strings.Join(c.Files, ","); got != "agent/state/a.json,agent/state/new.json" {
		t.Errorf("files = %q", got)
	}
	if !r.Tracked(ctx, "agent/state/new.json") || r.Tracked(ctx, "agent/state/none.json") {
		t.Error("Tracked")
	}
	// A path that is a pathspec pattern names only itself.
	os.WriteFile(filepath.Join(sub, "agent", "state", "*.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "agent", "state", "a.json"), []byte("{\"n\":2}\n"), 0o644)
	c, err = r.CommitFiles(ctx, "evolve: cycle #2 -- x (y)", []string{"agent/state/*.json"})
	if err != nil || c == nil || strings.Join(c.Files, ",") != "agent/state/*.json" {
		t.Errorf("commit of a file named *.json: %+v, %v", c, err)
	}
}

// Every way a plain `git push` (or the old fallback `git push origin
// HEAD`) writes somewhere other than the current branch's upstream is set
// up at once; PushUpstream must send the state commit to the upstream's
// branch and touch nothing else.
func TestPushUpstreamGoesOnlyToTheUpstream(t *testing.T) {
	dir, _, git, bare := withRemote(t)
	ctx := context.Background()
	evil := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", evil).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	git("remote", "add", "evil", evil)
	git("config", "remote.pushDefault", "evil") // a bare `git push` would go there
	git("config", "push.default", "matching")   // …and push every matching branch
	git("config", "push.followTags", "true")    // …with its annotated tags
	// A second branch ahead of its copy on the remote: matching would push it.
	git("branch", "other")
	git("push", "-q", "origin", "other")
	git("checkout", "-q", "other")
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("wip\n"), 0o644)
	git("add", "other.txt")
	git("commit", "-q", "-m", "user work on other")
	otherOnRemote := bare("rev-parse", "refs/heads/other")
	// The working branch is named differently from its upstream branch.
	git("checkout", "-q", "-b", "feature", "main")
	git("branch", "--set-upstream-to=origin/main")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	r, _ := Open(ctx, dir, nil)
	c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	git("tag", "-a", "-m", "t", "v9", "HEAD")
	p, err := r.PushUpstream(ctx, ours)
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if p.String() != "origin/main" || p.Branch != "feature" || p.Commits != 1 || p.SHA != c.SHA {
		t.Errorf("push = %+v", p)
	}
	if got := bare("rev-parse", "refs/heads/main"); got != c.SHA {
		t.Errorf("origin main = %s, want the state commit %s", got, c.SHA)
	}
	if refs := bare("for-each-ref", "--format=%(refname)"); refs != "refs/heads/main\nrefs/heads/other" {
		t.Errorf("the remote's refs are now %q: a branch or tag was pushed that is not the upstream", refs)
	}
	if bare("rev-parse", "refs/heads/other") != otherOnRemote {
		t.Error("branch other was pushed")
	}
	if out, _ := exec.Command("git", "-C", evil, "for-each-ref").CombinedOutput(); len(out) != 0 {
		t.Errorf("remote.pushDefault's remote received %s", out)
	}
}

func TestPushUpstreamRefusesWhatIsNotItsToPush(t *testing.T) {
	ctx := context.Background()
	commit := func(t *testing.T, r *Repo, dir, content string) {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "state.json"), []byte(content), 0o644)
		if c, err := r.CommitFiles(ctx, "evolve: cycle #1 -- x (y)", []string{"state.json"}); err != nil || c == nil {
			t.Fatal(c, err)
		}
	}
	noPush := func(t *testing.T, r *Repo, want string) {
		t.Helper()
		_, err := r.PushUpstream(ctx, ours)
		var np *NoPushError
		if !errors.As(err, &np) || !strings.Contains(np.Why, want) {
			t.Errorf("err = %v, want a NoPushError saying %q", err, want)
		}
	}
	t.Run("the user's own unpushed commit", func(t *testing.T) {
		dir, _, git, bare := withRemote(t)
		before := bare("rev-parse", "main")
		os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("x\n"), 0o644)
		git("add", "mine.txt")
		git("commit", "-q", "-m", "my unfinished work")
		r, _ := Open(ctx, dir, nil)
		commit(t, r, dir, "{}\n")
		noPush(t, r, "branch main has 1 commit(s) of your own that origin/main does not have")
		if bare("rev-parse", "main") != before {
			t.Error("the user's commit was pushed")
		}
		// Once the user pushed theirs, the state commits go again.
		git("push", "-q")
		commit(t, r, dir, "{\"n\":2}\n")
		if p, err := r.PushUpstream(ctx, ours); err != nil || p.Commits != 1 || bare("rev-parse", "main") != git("rev-parse", "HEAD") {
			t.Errorf("push after the user's: %+v, %v", p, err)
		}
	})
	t.Run("no upstream", func(t *testing.T) {
		dir, _, git, bare := withRemote(t)
		git("checkout", "-q", "-b", "topic")
		r, _ := Open(ctx, dir, nil)
		commit(t, r, dir, "{}\n")
		noPush(t, r, "branch topic has no upstream")
		if refs := bare("for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
			t.Errorf("remote refs: %q (the old fallback pushed origin HEAD)", refs)
		}
	})
	t.Run("a local upstream", func(t *testing.T) {
		dir, _, git, _ := withRemote(t)
		git("checkout", "-q", "-b", "topic", "--track", "main")
		r, _ := Open(ctx, dir, nil)
		commit(t, r, dir, "{}\n")
		noPush(t, r, "the upstream of branch topic is the local branch main")
	})
	t.Run("detached HEAD", func(t *testing.T) {
		dir, _, git, _ := withRemote(t)
		git("checkout", "-q", "--detach")
		r, _ := Open(ctx, dir, nil)
		noPush(t, r, "HEAD is detached")
	})
	t.Run("upstream never fetched", func(t *testing.T) {
		dir, _, git, _ := withRemote(t)
		git("update-ref", "-d", "refs/remotes/origin/main")
		r, _ := Open(ctx, dir, nil)
		commit(t, r, dir, "{}\n")
		noPush(t, r, "has not been fetched")
	})
}

func TestUpstreamWithoutARemoteSaysSo(t *testing.T) {
	dir, _ := setup(t)
	ctx := context.Background()
	r, _ := Open(ctx, dir, nil)
	_, err := r.Upstream(ctx)
	var np *NoPushError
	if !errors.As(err, &np) || np.Why != "branch main has no upstream (the repository has no remote)" {
		t.Errorf("err = %v", err)
	}
}
