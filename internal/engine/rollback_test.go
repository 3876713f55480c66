package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/state"
)

// A real squash-merge in a real repository, a failing post-merge health
// check, and the automatic rollback of 4-C2: the merge is reverted (and the
// revert pushed), state is restored from the checkpoint, the HALT is
// created.
func TestStep4C2_AutoRollbackRevertsARealSquashMerge(t *testing.T) {
	cfg := `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
	  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
	  "implementation": {"enabled": true},
	  "progressive_complexity": {"current_level": 3},
	  "test_command": "test ! -e broken.txt",
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "enable_auto_merge": true}}`
	dir, remote := gitProject(t, cfg, map[string]string{
		"agent/state/evolve/confidence.json":   `{"fixer": 0.8}`,
		"agent/state/evolve/action_queue.json": `{"pending": [{"id": "a1", "title": "keep me", "status": "pending"}], "in_progress": [], "completed": []}`,
	})
	// The skill's branch: a small change that breaks the health check.
	git(t, dir, "checkout", "--quiet", "-b", "auto/fix/retry")
	write(t, filepath.Join(dir, "broken.txt"), "oops\n")
	git(t, dir, "add", "broken.txt")
	git(t, dir, "commit", "--quiet", "-m", "Add a retry wrapper")
	git(t, dir, "checkout", "--quiet", "main")
	base := git(t, dir, "rev-parse", "HEAD")

	fg, err := forge.NewGit(forge.GitOptions{Dir: dir, BranchPrefixes: []string{"auto/fix/"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := fg.Status(context.Background())
	if err != nil || len(st.Open) != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	pr := st.Open[0].Number
	write(t, filepath.Join(dir, "fix.sh"), `rm -f agent/state/evolve/action_queue.json.tmp
printf '{"pr_number": `+strconv.Itoa(pr)+`, "pr_created": true, "test_status": "passed"}' > "$OODA_REPORT"
`)
	git(t, dir, "add", "fix.sh")
	git(t, dir, "commit", "--quiet", "-m", "the skill")
	git(t, dir, "push", "--quiet", "origin", "main")
	base = git(t, dir, "rev-parse", "HEAD")

	res, out := runForge(t, dir, t0, fg)
	if !res.AutoMerged || !res.RolledBack || !res.HaltCreated || res.ExitCode() != 3 {
		t.Fatalf("merged %v rolled back %v halt %v\n%s", res.AutoMerged, res.RolledBack, res.HaltCreated, out)
	}
	if !strings.Contains(out, "[Rollback] Health check failed after auto-merge of PR #"+strconv.Itoa(pr)) {
		t.Errorf("output:\n%s", out)
	}
	// History: base, the squash commit (one parent), its revert, then the state commit.
	log := strings.Split(git(t, dir, "log", "--format=%s|%P", base+"..HEAD"), "\n")
	if len(log) != 3 || !strings.HasPrefix(log[2], "Add a retry wrapper (branch auto/fix/retry)|") || strings.Count(strings.Split(log[2], "|")[1], " ") != 0 ||
		!strings.HasPrefix(log[1], `Revert "Add a retry wrapper (branch auto/fix/retry)"`) || !strings.HasPrefix(log[0], "evolve: cycle #1 -- fixer") {
		t.Fatalf("history since the checkpoint:\n%s", strings.Join(log, "\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, "broken.txt")); err == nil {
		t.Error("the bad merge's file is still in the tree")
	}
	if git(t, remote, "rev-parse", "main") != git(t, dir, "rev-parse", "HEAD") {
		t.Error("the revert was not pushed")
	}
	halt, _ := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if !strings.Contains(string(halt), "Auto-rollback: PR #"+strconv.Itoa(pr)+" merged but health check failed. Reverted to "+base) {
		t.Errorf("HALT = %s", halt)
	}
	var conf state.Confidence
	readJSON(t, filepath.Join(dir, "agent/state/evolve/confidence.json"), &conf)
	if v, _ := conf.Get("fixer"); v != 0.8 || conf.Nested() {
		t.Errorf("confidence restored from the checkpoint: %v (nested %v)", conf.Scores, conf.Nested())
	}
	var q state.ActionQueue
	readJSON(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), &q)
	if len(q.Pending) != 1 || q.Pending[0].ID != "a1" {
		t.Errorf("pending actions restored: %+v", q.Pending)
	}
	// The next cycle stops at the HALT.
	res, _ = runForge(t, dir, t0.Add(time.Hour), fg)
	if res.Status != StatusHalted {
		t.Errorf("after a rollback the loop stays halted: %s", res.Status)
	}
}

func TestStep4C2_RollbackHaltsEvenWhenThePushFails(t *testing.T) {
	cfg := `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
	  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
	  "implementation": {"enabled": true}, "git": {"commit_state": false},
	  "progressive_complexity": {"current_level": 3},
	  "test_command": "test ! -e broken.txt",
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "enable_auto_merge": true}}`
	dir, _ := gitProject(t, cfg, nil)
	git(t, dir, "checkout", "--quiet", "-b", "auto/fix/x")
	write(t, filepath.Join(dir, "broken.txt"), "oops\n")
	git(t, dir, "add", "broken.txt")
	git(t, dir, "commit", "--quiet", "-m", "Break it")
	git(t, dir, "checkout", "--quiet", "main")
	fg, _ := forge.NewGit(forge.GitOptions{Dir: dir, BranchPrefixes: []string{"auto/fix/"}})
	st, _ := fg.Status(context.Background())
	pr := st.Open[0].Number
	write(t, filepath.Join(dir, "fix.sh"), `printf '{"pr_number": `+strconv.Itoa(pr)+`, "pr_created": true, "test_status": "passed"}' > "$OODA_REPORT"`+"\n")
	git(t, dir, "add", "fix.sh")
	git(t, dir, "commit", "--quiet", "-m", "the skill")
	git(t, dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	res, out := runForge(t, dir, t0, fg)
	if !res.RolledBack || !res.HaltCreated || !strings.Contains(out, "push FAILED") {
		t.Fatalf("%+v\n%s", res, out)
	}
	halt, _ := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	// The plain-git merge was local, so the remote never had it: the HALT
	// says the push failed without claiming the remote is broken.
	if !strings.Contains(string(halt), "PUSH FAILED (the merge itself was never pushed") {
		t.Errorf("HALT = %s", halt)
	}
}

// When the merge never reached the local branch (the forge merged on its
// side and the fast-forward did not happen), HEAD is not the merge: the
// rollback must not revert some other commit, and the HALT says so.
func TestStep4C2_RollbackNeverRevertsACommitThatIsNotTheMerge(t *testing.T) {
	cfg := `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
	  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
	  "implementation": {"enabled": true}, "git": {"commit_state": false},
	  "progressive_complexity": {"current_level": 3},
	  "test_command": "false",
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "enable_auto_merge": true}}`
	dir, _ := gitProject(t, cfg, map[string]string{"fix.sh": "printf '" + passedPR + "' > \"$OODA_REPORT\"\n"})
	head := git(t, dir, "rev-parse", "HEAD")
	fg := &fakeForge{facts: goodFacts()} // merges "remotely": nothing changes locally
	res, out := runForge(t, dir, t0, fg)
	if !res.RolledBack || !res.HaltCreated || !strings.Contains(out, "HEAD is not the merge of PR #41; not reverting anything automatically") {
		t.Fatalf("%+v\n%s", res, out)
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Error("a commit that is not the merge was reverted")
	}
	halt, _ := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if !strings.Contains(string(halt), "NOT REVERTED") {
		t.Errorf("HALT = %s", halt)
	}
}
