package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// stateOnlySkill writes its domain's state file and nothing else, as a
// skill following docs/skills.md does.
const stateOnlySkill = `#!/bin/sh
printf '{"last_run": "%s", "status": "ok"}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
`

// userWork leaves the user's work in progress in every shape git knows: a
// tracked file modified and not staged, a new file staged, an untracked
// file. It returns `git status --porcelain` afterwards.
func userWork(t *testing.T, dir string) string {
	t.Helper()
	write(t, filepath.Join(dir, "skill.sh"), stateOnlySkill+"# edited by the user\n")
	write(t, filepath.Join(dir, "wip.txt"), "mine")
	git(t, dir, "add", "wip.txt")
	write(t, filepath.Join(dir, "scratch.txt"), "also mine")
	return git(t, dir, "status", "--porcelain")
}

// A cycle commits every state file it changed — the domain's own state
// file included — and prints the commit, its branch, its files and where
// it pushed; afterwards `git status` shows the user's work exactly as it
// was and nothing of the loop's.
func TestFirstGit_CommitsWhatTheLoopOwnsAndSaysSo(t *testing.T) {
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	mine := userWork(t, dir)
	for i, domain := range []string{"service_health", "test_coverage"} {
		res, out := run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
		if !res.Committed || !res.Pushed {
			t.Fatalf("cycle %d: committed %v pushed %v\n%s", i+1, res.Committed, res.Pushed, out)
		}
		head := git(t, dir, "rev-parse", "HEAD")
		msg := git(t, dir, "log", "-1", "--format=%s")
		if want := "[Record] Committed " + head[:7] + " on branch main: " + msg + "\n"; !strings.Contains(out, want) {
			t.Errorf("cycle %d: output lacks %q\n%s", i+1, want, out)
		}
		files := strings.Split(git(t, dir, "show", "--name-only", "--format=", "HEAD"), "\n")
		m := regexp.MustCompile(`\[Record\]   (\d+) files?: (.*)\n`).FindStringSubmatch(out)
		if m == nil || m[1] != strconv.Itoa(len(files)) {
			t.Errorf("cycle %d: the file line does not count the %d files committed\n%s", i+1, len(files), out)
		} else {
			for _, f := range files {
				base := filepath.Base(f)
				if !strings.Contains(m[2], base) {
					t.Errorf("cycle %d: %s committed but not named in %q", i+1, f, m[2])
				}
			}
		}
		if domainFile := "agent/state/" + domain + ".json"; !hasString(files, domainFile) {
			t.Errorf("cycle %d: %s, which the skill wrote, not committed: %v", i+1, domainFile, files)
		}
		if want := "[Record] Pushed 1 commit (up to " + head[:7] + ") to origin/main, the upstream of branch main.\n"; !strings.Contains(out, want) {
			t.Errorf("cycle %d: output lacks %q\n%s", i+1, want, out)
		}
		if got := git(t, remote, "rev-parse", "main"); got != head {
			t.Errorf("cycle %d: remote main %s, want %s", i+1, got, head)
		}
		if st := git(t, dir, "status", "--porcelain"); st != mine {
			t.Errorf("cycle %d: git status after the cycle:\n%s\nwant only the user's work:\n%s", i+1, st, mine)
		}
		for _, f := range files {
			if f == "wip.txt" || f == "scratch.txt" || f == "skill.sh" {
				t.Errorf("cycle %d: the user's %s was committed", i+1, f)
			}
		}
	}
}

// A domain state file that the cycle's skill did not change is not the
// cycle's to commit, even when it differs from HEAD: that is someone
// else's edit (here the user's, to a domain that did not run).
func TestFirstGit_LeavesAStateFileTheCycleDidNotChange(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill,
		"agent/state/backlog.json": `{"last_run": "2026-04-14T08:00:00Z"}` + "\n"})
	write(t, filepath.Join(dir, "agent/state/backlog.json"), `{"last_run": "2026-04-14T08:00:00Z", "note": "my edit"}`+"\n")
	res, out := run(t, dir, t0, false)
	if !res.Committed {
		t.Fatalf("not committed\n%s", out)
	}
	if files := git(t, dir, "show", "--name-only", "--format=", "HEAD"); strings.Contains(files, "backlog.json") {
		t.Errorf("the user's edit of backlog.json was committed:\n%s", files)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "M agent/state/backlog.json" {
		t.Errorf("git status = %q, want only the user's edit", st)
	}
}

// With git.push false (what `ooda init` writes) the commit stays local and
// the cycle says which setting keeps it there.
func TestFirstGit_PushOff(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"git": {"push": false}, "progressive_complexity"`, 1)
	dir, remote := gitProject(t, cfg, map[string]string{"skill.sh": stateOnlySkill})
	before := git(t, remote, "rev-parse", "main")
	res, out := run(t, dir, t0, false)
	if !res.Committed || res.Pushed || git(t, remote, "rev-parse", "main") != before {
		t.Errorf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	if !strings.Contains(out, "[Record] Not pushed: git.push is false in config.json (set it to true to push state commits to the branch's upstream).\n") {
		t.Errorf("the push switch is not named:\n%s", out)
	}
}

// A branch without an upstream is pushed nowhere (the engine used to push
// it to origin under its own name, creating a branch there).
func TestFirstGit_NoUpstreamNoPush(t *testing.T) {
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	git(t, dir, "checkout", "--quiet", "-b", "experiment")
	res, out := run(t, dir, t0, false)
	if !res.Committed || res.Pushed {
		t.Errorf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	if !strings.Contains(out, "[Record] Not pushed: branch experiment has no upstream") {
		t.Errorf("no line says why nothing was pushed:\n%s", out)
	}
	if refs := git(t, remote, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Errorf("the remote now has %q", refs)
	}
}

// The user's own unpushed commits are theirs to push: the state commit
// waits for them.
func TestFirstGit_DoesNotPushTheUsersCommits(t *testing.T) {
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	before := git(t, remote, "rev-parse", "main")
	write(t, filepath.Join(dir, "feature.go"), "package x\n")
	git(t, dir, "add", "feature.go")
	git(t, dir, "commit", "--quiet", "-m", "half-done feature")
	res, out := run(t, dir, t0, false)
	if !res.Committed || res.Pushed || git(t, remote, "rev-parse", "main") != before {
		t.Errorf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	if !strings.Contains(out, "[Record] Not pushed: branch main has 1 commit(s) of your own that origin/main does not have, and only the loop's own commits are pushed for you; `git push` sends them all") {
		t.Errorf("output:\n%s", out)
	}
}

// On a detached HEAD nothing is committed (a commit there belongs to no
// branch) and the cycle says so and what to do.
func TestFirstGit_DetachedHeadCommitsNothing(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	git(t, dir, "checkout", "--quiet", "--detach")
	head := git(t, dir, "rev-parse", "HEAD")
	res, out := run(t, dir, t0, false)
	if res.Committed || git(t, dir, "rev-parse", "HEAD") != head {
		t.Errorf("committed on a detached HEAD\n%s", out)
	}
	if !strings.Contains(out, "[WARN] State not committed: HEAD is detached in "+dir+", and a commit there would belong to no branch.") {
		t.Errorf("output:\n%s", out)
	}
}

// When the remote moved on, retrying cannot help: the cycle says what the
// user has to do, and keeps the commit.
func TestFirstGit_RejectedPushSaysWhatToDo(t *testing.T) {
	dir, remote := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "--quiet", remote, other)
	git(t, other, "commit", "--quiet", "--allow-empty", "-m", "someone else's work")
	git(t, other, "push", "--quiet")
	theirs := git(t, remote, "rev-parse", "main")
	res, out := run(t, dir, t0, false)
	if !res.Committed || res.Pushed || git(t, remote, "rev-parse", "main") != theirs {
		t.Errorf("committed %v pushed %v\n%s", res.Committed, res.Pushed, out)
	}
	want := regexp.MustCompile(`\[WARN\] Push to origin/main rejected \(git push exited 1: [^\n]*! \[rejected\][^\n]*\): origin/main has commits that branch main lacks\. The commit stays local; bring them in \(` + "`git pull --rebase`" + `\), then ` + "`git push`" + `\.\n`)
	if !want.MatchString(out) || strings.Contains(out, "hint:") {
		t.Errorf("output:\n%s", out)
	}
}

// Where git has no identity to commit with, the cycle says so in one line
// with the fix, not in git's dozen lines for a terminal, and the state
// stays on disk uncommitted.
func TestFirstGit_NoIdentitySaysHowToSetOne(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	head := git(t, dir, "rev-parse", "HEAD")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	git(t, dir, "config", "user.useConfigOnly", "true")
	res, out := run(t, dir, t0, false)
	if res.Committed || git(t, dir, "rev-parse", "HEAD") != head {
		t.Errorf("committed without an identity\n%s", out)
	}
	want := "[WARN] State not committed: " + gitrepo.IdentityHelp + " in config.json.\n"
	if !strings.Contains(out, want) || strings.Contains(out, "Please tell me who you are") {
		t.Errorf("want the line %q, not git's banner, in:\n%s", want, out)
	}
}
