package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/skills"
)

// runWith is run with the engine's own processes (git) started by r.
func runWith(t *testing.T, dir string, now time.Time, r proc.Runner) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: &out, Runner: r})
	if err != nil {
		t.Fatalf("RunCycle: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// gitRunner starts git as proc.Exec does, calling before(argv) first for
// each git command; it records every command's argv after "git -C dir".
type gitRunner struct {
	before func(args []string)
	ran    [][]string
}

func (g *gitRunner) Run(ctx context.Context, s proc.Spec) proc.Result {
	args := s.Argv
	if len(args) >= 3 && args[0] == "git" && args[1] == "-C" {
		args = args[3:]
	}
	g.ran = append(g.ran, args)
	if g.before != nil {
		g.before(args)
	}
	return proc.Exec{}.Run(ctx, s)
}

// count is how many git commands ran whose argv holds sub.
func (g *gitRunner) count(sub string) int {
	n := 0
	for _, a := range g.ran {
		if slices.Contains(a, sub) {
			n++
		}
	}
	return n
}

// stagedWork leaves the user's work in progress in every shape, state
// files included, and returns `git status --porcelain` and `git ls-files
// -s` afterwards.
func stagedWork(t *testing.T, dir string) (status, index string) {
	t.Helper()
	write(t, filepath.Join(dir, "wip.txt"), "mine")
	git(t, dir, "add", "wip.txt")
	write(t, filepath.Join(dir, "skill.sh"), stateOnlySkill+"# staged edit\n")
	git(t, dir, "add", "skill.sh")
	write(t, filepath.Join(dir, "skill.sh"), stateOnlySkill+"# staged edit\n# and an unstaged one\n")
	write(t, filepath.Join(dir, "scratch.txt"), "also mine")
	return git(t, dir, "status", "--porcelain"), git(t, dir, "ls-files", "-s")
}

// indexWithout is `git ls-files -s` output without the entries of paths.
func indexWithout(index string, paths []string) []string {
	var out []string
	for _, l := range strings.Split(index, "\n") {
		_, p, _ := strings.Cut(l, "\t")
		if !slices.Contains(paths, p) {
			out = append(out, l)
		}
	}
	return out
}

// A state commit is one check-ignore for all paths and plumbing on a
// private index: the user's staged changes stay staged with the same
// content and are not committed, the working tree and the index entries
// of every other file are as they were, and no porcelain `git add` or
// `git commit` runs (nor, so, any commit hook).
func TestPlumb_UsersIndexAndWorkingTreeUntouched(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	run(t, dir, t0, false) // the state files exist and are tracked
	status, index := stagedWork(t, dir)
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	write(t, hook, "#!/bin/sh\nexit 1\n")
	os.Chmod(hook, 0o755)
	g := &gitRunner{}
	res, out := runWith(t, dir, t0.Add(time.Hour), g)
	if !res.Committed {
		t.Fatalf("not committed\n%s", out)
	}
	files := strings.Split(git(t, dir, "show", "--name-only", "--format=", "HEAD"), "\n")
	for _, f := range files {
		if f == "wip.txt" || f == "skill.sh" || f == "scratch.txt" {
			t.Errorf("the user's %s was committed", f)
		}
	}
	if st := git(t, dir, "status", "--porcelain"); st != status {
		t.Errorf("git status after the cycle:\n%s\nbefore:\n%s", st, status)
	}
	after := git(t, dir, "ls-files", "-s")
	if got, want := indexWithout(after, files), indexWithout(index, files); !slices.Equal(got, want) {
		t.Errorf("index entries of files not committed changed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range files {
		if blob := git(t, dir, "rev-parse", "HEAD:"+f); !strings.Contains(after, blob+" 0\t"+f+"\n") && !strings.HasSuffix(after, blob+" 0\t"+f) {
			t.Errorf("the index entry of %s is not the committed blob %s", f, blob)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "skill.sh")); string(b) != stateOnlySkill+"# staged edit\n# and an unstaged one\n" {
		t.Errorf("skill.sh is now %q", b)
	}
	if n := g.count("check-ignore"); n != 1 {
		t.Errorf("%d check-ignore processes, want 1 for all paths", n)
	}
	if n := g.count("add") + g.count("commit"); n != 0 {
		t.Errorf("porcelain add/commit ran %d times", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "ooda-index-*")); len(left) != 0 {
		t.Errorf("the private index was left behind: %v", left)
	}
}

// The first cycle in a repository without commits makes its first
// commit, of the state files only; what the user staged stays staged.
func TestPlumb_UnbornBranch(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	os.RemoveAll(filepath.Join(dir, ".git"))
	git(t, dir, "init", "--quiet", "-b", "trunk")
	git(t, dir, "add", "config.json")
	res, out := run(t, dir, t0, false)
	if !res.Committed || !strings.Contains(out, "on branch trunk: evolve: cycle #1") {
		t.Fatalf("committed %v\n%s", res.Committed, out)
	}
	if parents := git(t, dir, "log", "-1", "--format=%P", "trunk"); parents != "" {
		t.Errorf("the first commit has parents %q", parents)
	}
	files := git(t, dir, "show", "--name-only", "--format=", "trunk")
	if strings.Contains(files, "config.json") || !strings.Contains(files, "agent/state/evolve/state.json") {
		t.Errorf("first commit holds:\n%s", files)
	}
	if st := git(t, dir, "diff", "--cached", "--name-only"); st != "config.json" {
		t.Errorf("staged after the cycle: %q, want the user's config.json", st)
	}
}

// The user commits between the cycle reading HEAD and moving the branch:
// the branch is moved only from where the commit was built, so the
// user's commit is kept and the state commit goes on top of it.
func TestPlumb_ConcurrentCommitIsNotLost(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	var theirs string
	g := &gitRunner{}
	g.before = func(args []string) {
		if slices.Contains(args, "update-ref") && theirs == "" {
			write(t, filepath.Join(dir, "feature.txt"), "the user's work\n")
			git(t, dir, "add", "feature.txt")
			git(t, dir, "commit", "--quiet", "-m", "the user's commit")
			theirs = git(t, dir, "rev-parse", "HEAD")
		}
	}
	res, out := runWith(t, dir, t0, g)
	if !res.Committed || theirs == "" {
		t.Fatalf("committed %v, user's commit %q\n%s", res.Committed, theirs, out)
	}
	if parent := git(t, dir, "rev-parse", "HEAD^"); parent != theirs {
		t.Errorf("HEAD^ = %s, want the user's commit %s\n%s", parent, theirs, git(t, dir, "log", "--oneline"))
	}
	if msg := git(t, dir, "log", "-1", "--format=%s"); !strings.HasPrefix(msg, commitPrefix) {
		t.Errorf("HEAD is %q", msg)
	}
	if got := git(t, dir, "show", "HEAD:feature.txt"); got != "the user's work" {
		t.Errorf("feature.txt in HEAD: %q", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q", st)
	}
}

// A state path that .gitignore names is left out of the commit; the
// others are committed.
func TestPlumb_IgnoredStatePathNotCommitted(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	write(t, filepath.Join(dir, ".gitignore"), "agent/state/evolve/.lock\nagent/safety/HALT\nagent/state/evolve/runs/\nagent/state/evolve/metrics.json\n")
	git(t, dir, "commit", "--quiet", "-am", "ignore metrics")
	res, out := run(t, dir, t0, false)
	if !res.Committed || !slices.Contains(res.Written, filepath.Join("agent", "state", "evolve", "metrics.json")) {
		t.Fatalf("committed %v written %v\n%s", res.Committed, res.Written, out)
	}
	files := git(t, dir, "show", "--name-only", "--format=", "HEAD")
	if strings.Contains(files, "metrics.json") || !strings.Contains(files, "agent/state/evolve/state.json") {
		t.Errorf("committed:\n%s", files)
	}
}

// A HALT file that appears while the commit is being made stops it before
// the branch moves: no commit, the index and the private index as before.
func TestPlumb_HaltMidCommit(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	head := git(t, dir, "rev-parse", "HEAD")
	index := git(t, dir, "ls-files", "-s")
	g := &gitRunner{}
	g.before = func(args []string) {
		if slices.Contains(args, "commit-tree") {
			write(t, filepath.Join(dir, "agent", "safety", "HALT"), "stop\n")
		}
	}
	res, out := runWith(t, dir, t0, g)
	if res.Committed || !strings.Contains(out, "[WARN] State not committed: ") || !strings.Contains(out, "stopped: the HALT file exists") {
		t.Errorf("committed %v\n%s", res.Committed, out)
	}
	if g.count("update-ref") != 0 {
		t.Error("update-ref started while HALT exists")
	}
	if git(t, dir, "rev-parse", "HEAD") != head || git(t, dir, "ls-files", "-s") != index {
		t.Error("HEAD or the index changed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "ooda-index-*")); len(left) != 0 {
		t.Errorf("the private index was left behind: %v", left)
	}
}

// A clean filter that never returns (.gitattributes and .git/config are
// the repository's, so a skill can set one up) would hold the state
// commit, and the cycle's lock, for the 2-minute git timeout. The HALT
// file stops it as it stops a skill: the commit fails with a warning, the
// cycle stays recorded, the branch does not move.
func TestStep6D_HaltStopsAHangingCleanFilter(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": skillScript})
	head := git(t, dir, "rev-parse", "HEAD")
	started := filepath.Join(t.TempDir(), "filter-started")
	git(t, dir, "config", "filter.hang.clean", "sh -c ': > \""+started+"\"; exec sleep 100000'")
	write(t, filepath.Join(dir, ".gitattributes"), "agent/state/evolve/state.json filter=hang\n")
	type result struct {
		res Result
		out string
	}
	done := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		res, _ := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(t0), Registry: skills.Registry(), Out: &out})
		done <- result{res, out.String()}
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the cycle ended before the filter ran: %+v\n%s", r.res, r.out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	write(t, filepath.Join(dir, "agent/safety/HALT"), "stop\n")
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("HALT did not stop the clean filter")
	}
	if r.res.Committed || !strings.Contains(r.out, "[WARN] State not committed: git ") || !strings.Contains(r.out, "stopped: the HALT file exists") ||
		!strings.Contains(r.out, "[Record] Cycle #1 recorded") {
		t.Errorf("%+v\n%s", r.res, r.out)
	}
	if st := loadState(t, dir); st.CycleCount != 1 || st.CycleInProgress {
		t.Errorf("state = %+v", st)
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Error("the branch moved")
	}
}

// Another git holding the user's index (its index.lock) cannot make the
// state commit fail: the commit is made, and the cycle warns that the
// index still lists the old content, naming the command that fixes it.
func TestPlumb_LockedIndexIsAWarning(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	lock := filepath.Join(dir, ".git", "index.lock")
	g := &gitRunner{}
	g.before = func(args []string) {
		if slices.Contains(args, "--index-info") {
			write(t, lock, "")
		}
	}
	res, out := runWith(t, dir, t0, g)
	if !res.Committed || !strings.Contains(out, "[WARN] The index was not updated to commit ") || !strings.Contains(out, "index.lock") {
		t.Fatalf("committed %v\n%s", res.Committed, out)
	}
	os.Remove(lock)
	m := regexp.MustCompile("`(git reset -q -- [^`]*)`").FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no command named:\n%s", out)
	}
	git(t, dir, strings.Fields(m[1])[1:]...)
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after %s: %q", m[1], st)
	}
}
