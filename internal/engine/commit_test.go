package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/secret"
)

// git runs git in dir with a fixed identity and no user or system config.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitProject is a project committed to a repository with a bare remote.
func gitProject(t *testing.T, cfg string, files map[string]string) (dir, remote string) {
	t.Helper()
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.invalid")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	remote = t.TempDir()
	git(t, remote, "init", "--quiet", "--bare", "-b", "main")
	dir = project(t, cfg, files)
	t.Setenv("HOME", dir)
	write(t, filepath.Join(dir, ".gitignore"), "agent/state/evolve/.lock\nagent/safety/HALT\nagent/state/evolve/runs/\n")
	git(t, dir, "init", "--quiet", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "--quiet", "-m", "initial")
	git(t, dir, "remote", "add", "origin", remote)
	git(t, dir, "push", "--quiet", "-u", "origin", "main")
	return dir, remote
}

func TestStep6D_CommitsExactlyTheStateFilesWritten(t *testing.T) {
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": skillScript})
	// The user's own work in progress, staged and unstaged, must not be swept in.
	write(t, filepath.Join(dir, "wip.txt"), "mine")
	git(t, dir, "add", "wip.txt")
	write(t, filepath.Join(dir, "scratch.txt"), "also mine")
	res, out := run(t, dir, t0, false)
	if !res.Committed || !res.Pushed {
		t.Fatalf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	if msg := git(t, dir, "log", "-1", "--format=%s"); msg != "evolve: cycle #1 -- service_health (action_extracted)" {
		t.Errorf("commit message = %q", msg)
	}
	files := strings.Split(git(t, dir, "show", "--name-only", "--format=", "HEAD"), "\n")
	want := map[string]bool{}
	for _, f := range res.Written {
		want[f] = true
	}
	// The skill wrote its domain's state file: the cycle changed it too.
	want["agent/state/service_health.json"] = true
	for _, f := range files {
		if !want[f] {
			t.Errorf("committed %s, which this cycle did not write", f)
		}
		if strings.HasPrefix(f, "wip") || strings.HasPrefix(f, "scratch") || strings.Contains(f, "/runs/") || strings.HasSuffix(f, ".lock") {
			t.Errorf("committed %s", f)
		}
	}
	for _, must := range []string{"agent/state/service_health.json", "agent/state/evolve/state.json", "agent/state/evolve/cycle_log.jsonl", "agent/state/evolve/CHANGELOG.md", "agent/state/service_health/lens.json"} {
		if !strings.Contains("\n"+strings.Join(files, "\n")+"\n", "\n"+must+"\n") {
			t.Errorf("%s not committed; committed %v", must, files)
		}
	}
	if st := git(t, dir, "diff", "--cached", "--name-only"); st != "wip.txt" {
		t.Errorf("the user's staged work must stay staged and uncommitted, index: %q", st)
	}
	if local, pushed := git(t, dir, "rev-parse", "HEAD"), git(t, remote, "rev-parse", "main"); local != pushed {
		t.Errorf("not pushed: local %s remote %s", local, pushed)
	}
}

func TestStep6D_GitignoredStateWarnsLoudlyAndSkips(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": skillScript})
	write(t, filepath.Join(dir, ".gitignore"), "agent/state/\n")
	git(t, dir, "commit", "--quiet", "-am", "ignore state")
	head := git(t, dir, "rev-parse", "HEAD")
	res, out := run(t, dir, t0, false)
	if res.Committed || !strings.Contains(out, "is ignored by git: the loop's history is NOT being committed") {
		t.Errorf("committed %v\n%s", res.Committed, out)
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Error("a commit was made")
	}
}

func TestStep6D_PushFailureIsAWarning(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": skillScript})
	git(t, dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "missing.git"))
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted || !res.Committed || res.Pushed || !strings.Contains(out, "[WARN] Push to origin/main failed (git push exited 128: fatal: ") {
		t.Errorf("status %s committed %v pushed %v\n%s", res.Status, res.Committed, res.Pushed, out)
	}
}

func TestStep6D_Switchable(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"git": {"commit_state": false}, "progressive_complexity"`, 1)
	dir, _ := gitProject(t, cfg, map[string]string{"skill.sh": skillScript})
	head := git(t, dir, "rev-parse", "HEAD")
	res, _ := run(t, dir, t0, false)
	if res.Committed || git(t, dir, "rev-parse", "HEAD") != head {
		t.Error("git.commit_state false must not commit")
	}
	// A dry run never commits either.
	cfgOn := threeDomains
	dir2, _ := gitProject(t, cfgOn, map[string]string{"skill.sh": skillScript})
	head2 := git(t, dir2, "rev-parse", "HEAD")
	run(t, dir2, t0.Add(time.Hour), true)
	if git(t, dir2, "rev-parse", "HEAD") != head2 || git(t, dir2, "status", "--porcelain") != "" {
		t.Error("a dry run touched the repository")
	}
}

// An interrupt (SIGINT or SIGTERM: the cycle's context) that stops the
// skill still leaves a recorded cycle, and its record is committed like
// any other: a cycle that git status shows as changed files, with no word
// said, was left behind before. It is not pushed: the operator asked ooda
// to stop, and a push may wait on the network.
func TestStep6D_AnInterruptedCycleIsCommittedNotPushed(t *testing.T) {
	slow := "#!/bin/sh\ntouch started\nsleep 30\n"
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": slow})
	pushed := git(t, remote, "rev-parse", "main")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, out, err := runOpts(t, ctx, dir, t0, nil)
	if err != nil || res.Reason != ReasonInterrupted || !strings.Contains(out, "stopped: the cycle was interrupted") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if !res.Committed || res.Pushed || !strings.Contains(out, "[Record] Not pushed: the cycle was interrupted") {
		t.Errorf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	if msg := git(t, dir, "log", "-1", "--format=%s"); !strings.HasPrefix(msg, "evolve: cycle #1 -- ") {
		t.Errorf("last commit = %q\n%s", msg, out)
	}
	if st := git(t, dir, "status", "--porcelain", "--", "agent/state"); st != "" {
		t.Errorf("the loop's files are left changed:\n%s", st)
	}
	if git(t, remote, "rev-parse", "main") != pushed {
		t.Error("pushed after an interrupt")
	}
}

// Every file ooda writes has the known secrets masked; a domain state file
// is as its skill wrote it. One that holds a secret's value is left out of
// the state commit, with a warning, so that ooda never puts a credential
// in git's history (or, with git.push, on the remote); the rest of the
// cycle's files are committed.
func TestStep6D_AStateFileHoldingASecretIsNotCommitted(t *testing.T) {
	const value = "SuperSecretValue-6D-12345"
	secret.Register(value)
	// The script builds the value, so that the script committed with the
	// project does not hold it.
	leaky := "#!/bin/sh\nv=SuperSecretValue-6D\nprintf '{\"status\": \"error\", \"message\": \"auth failed with %s-12345\"}\\n' \"$v\" > \"$OODA_STATE_FILE\"\n"
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": leaky})
	res, out := run(t, dir, t0, false)
	if !res.Committed || !strings.Contains(out, "[WARN] agent/state/service_health.json not committed: it holds the value of a secret") {
		t.Fatalf("committed %v\n%s", res.Committed, out)
	}
	for _, repo := range []string{dir, remote} {
		cmd := exec.Command("git", "-C", repo, "grep", "-q", value, "main")
		if err := cmd.Run(); err == nil {
			t.Errorf("%s: the secret is in the committed tree", repo)
		}
	}
	if files := git(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, "agent/state/evolve/state.json") || strings.Contains(files, "service_health.json") {
		t.Errorf("committed:\n%s", files)
	}
}

// A signal that arrives while the state commit's push waits on the network
// stops the push: the commit itself is made whatever the signal (above),
// the push is the operator's to stop.
func TestStep6D_ASignalStopsAPushThatHangs(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": skillScript})
	// A remote reached through a "ssh" that never answers.
	git(t, dir, "remote", "set-url", "origin", "ssh://git.example.invalid/x.git")
	hang := filepath.Join(t.TempDir(), "hang.sh")
	write(t, hang, "#!/bin/sh\nexec sleep 60\n")
	if err := os.Chmod(hang, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSH_COMMAND", hang)
	head := git(t, dir, "rev-parse", "HEAD")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			out, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
			if s := strings.TrimSpace(string(out)); s != "" && s != head {
				time.Sleep(300 * time.Millisecond) // the push has started
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, out, err := runOpts(t, ctx, dir, t0, nil)
	if err != nil || !res.Committed || res.Pushed {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if !strings.Contains(out, "[Record] Not pushed: the cycle was interrupted") {
		t.Errorf("the stopped push is not told as such:\n%s", out)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the push was not stopped: the cycle took %s\n%s", took, out)
	}
}
