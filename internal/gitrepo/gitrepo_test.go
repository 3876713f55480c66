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

// A skill or a merged pull request can write .git/hooks and .git/config:
// a pre-commit hook and a core.fsmonitor command that dump their
// environment must not find ooda's credentials in it when Step 6-D
// commits the state files. A push, which may need them for a credential
// helper, still passes them on (docs/forge.md).
func TestHooksAndFsmonitorDoNotSeeCredentials(t *testing.T) {
	const tok = "ghp_gitrepoHookLeak0123456789"
	dir, git := setup(t)
	t.Setenv("GITHUB_TOKEN", tok)
	t.Setenv("GH_TOKEN", tok)
	dumps := t.TempDir()
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nenv > '"+dumps+"/pre-commit'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git("config", "core.fsmonitor", "sh -c 'env > "+dumps+"/fsmonitor'")
	ctx := context.Background()
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not opened")
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	if committed, err := r.CommitPaths(ctx, "evolve: cycle #1", []string{"state.json"}); err != nil || !committed {
		t.Fatalf("committed %v, %v", committed, err)
	}
	for _, name := range []string{"pre-commit", "fsmonitor"} {
		b, err := os.ReadFile(filepath.Join(dumps, name))
		if err != nil {
			t.Fatalf("the %s command did not run: %v", name, err)
		}
		if !strings.Contains(string(b), "GIT_AUTHOR_NAME=") {
			t.Errorf("%s: not an environment dump: %q", name, b)
		}
		if strings.Contains(string(b), tok) {
			t.Errorf("%s saw the token:\n%s", name, b)
		}
	}

	remote := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	git("remote", "add", "origin", remote)
	os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-push"), []byte("#!/bin/sh\nenv > '"+dumps+"/pre-push'\n"), 0o755)
	if err := r.Push(ctx); err != nil {
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

// A pre-commit hook that never returns held the commit, and the cycle's
// lock, until the 2-minute git timeout, whatever the HALT file said. With
// Repo.HaltFile set the HALT file stops the hook's git, and no further git
// command starts while it exists.
func TestHaltFileStopsAHangingHook(t *testing.T) {
	dir, _ := setup(t)
	started := filepath.Join(dir, "hook-started")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n: > \""+started+"\"\nexec sleep 100000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
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
			t.Fatalf("the commit ended before its hook ran: %v", err)
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
}
