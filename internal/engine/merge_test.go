package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/state"
)

// mergeProject: level 3, one domain whose skill reports PR #41 with the
// given report; auto-merge on unless cfgEdit turns it off.
func mergeProject(t *testing.T, report string, cfgEdit func(string) string) string {
	t.Helper()
	cfg := `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
	  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
	  "implementation": {"enabled": true},
	  "progressive_complexity": {"current_level": 3},
	  "test_command": "true",
	  "git": {"commit_state": false},
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "enable_auto_merge": true,
	    "protected_paths": ["agent/safety/*", "skills/evolve/*"], "auto_merge_max_files": 5, "auto_merge_max_lines": 100}}`
	if cfgEdit != nil {
		cfg = cfgEdit(cfg)
	}
	return project(t, cfg, map[string]string{"fix.sh": "printf '" + report + "' > \"$OODA_REPORT\"\n"})
}

const passedPR = `{"pr_number": 41, "pr_created": true, "test_status": "passed"}`

func goodFacts() map[int]forge.Facts {
	return map[int]forge.Facts{41: {Number: 41, State: "open", HeadRef: "auto/fix/a", Files: []string{"src/a.go", "src/a_test.go"}, ChangedFiles: 2, Additions: 30, Deletions: 10}}
}

func TestStep4C_AutoMergeRefusals(t *testing.T) {
	cases := []struct {
		name   string
		report string
		edit   func(string) string
		facts  func(map[int]forge.Facts)
		noFg   bool
		want   string
	}{
		{name: "opt-in off", report: passedPR, edit: func(s string) string {
			return strings.Replace(s, `"enable_auto_merge": true`, `"enable_auto_merge": false`, 1)
		}, want: "auto-merge is off"},
		{name: "level below 3", report: passedPR, edit: func(s string) string { return strings.Replace(s, `"current_level": 3`, `"current_level": 2`, 1) }, want: "level 2 < 3"},
		{name: "no forge", report: passedPR, noFg: true, want: "no forge to re-read"},
		{name: "draft", report: passedPR, facts: func(f map[int]forge.Facts) { x := f[41]; x.Draft = true; f[41] = x }, want: "the PR is a draft"},
		{name: "protected path", report: passedPR, facts: func(f map[int]forge.Facts) {
			x := f[41]
			x.Files = append(x.Files, "skills/evolve/deep/SKILL.md")
			f[41] = x
		}, want: "skills/evolve/deep/SKILL.md matches protected path skills/evolve/*"},
		{name: "protected_blocked", report: `{"pr_number": 41, "pr_created": true, "test_status": "passed", "protected_blocked": true}`, want: "protected_blocked"},
		{name: "too many files", report: passedPR, facts: func(f map[int]forge.Facts) {
			x := f[41]
			x.Files = []string{"a", "b", "c", "d", "e", "f"}
			x.ChangedFiles = 6
			f[41] = x
		}, want: "6 files > auto_merge_max_files 5"},
		{name: "too many lines", report: passedPR, facts: func(f map[int]forge.Facts) { x := f[41]; x.Additions = 90; x.Deletions = 11; f[41] = x }, want: "101 lines > auto_merge_max_lines 100"},
		{name: "tests skipped", report: `{"pr_number": 41, "pr_created": true, "test_status": "skipped"}`, want: "tests not green this cycle (test_status skipped)"},
		{name: "tests not reported", report: `{"pr_number": 41, "pr_created": true}`, want: "test_status not reported"},
		{name: "facts unreadable", report: passedPR, facts: func(f map[int]forge.Facts) { delete(f, 41) }, want: "could not re-read the PR's facts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := mergeProject(t, tc.report, tc.edit)
			facts := goodFacts()
			if tc.facts != nil {
				tc.facts(facts)
			}
			fg := &fakeForge{facts: facts}
			var f forge.Forge = fg
			if tc.noFg {
				f = nil
			}
			res, out := runForge(t, dir, t0, f)
			if !strings.Contains(out, "PR #41 requires human review (Risk Tier 3: ") || !strings.Contains(out, tc.want) {
				t.Fatalf("want refusal %q:\n%s", tc.want, out)
			}
			if len(fg.merged) != 0 || res.AutoMerged {
				t.Fatal("merged despite the refusal")
			}
			if e := loadState(t, dir).DecisionLog[0]; e.RiskTier == nil || *e.RiskTier != 3 || *e.PRNumber != 41 {
				t.Errorf("entry = %+v", e)
			}
		})
	}
}

func TestStep4C_TierOneMergesSquashAfterRecheckingHalt(t *testing.T) {
	dir := mergeProject(t, passedPR, nil)
	fg := &fakeForge{facts: goodFacts()}
	res, out := runForge(t, dir, t0, fg)
	if !res.AutoMerged || len(fg.merged) != 1 || !strings.Contains(out, "Auto-merged PR #41 (low-risk, opt-in). Health: ok.") {
		t.Fatalf("merged %v\n%s", fg.merged, out)
	}
	if e := loadState(t, dir).DecisionLog[0]; *e.RiskTier != 1 {
		t.Errorf("risk tier = %d", *e.RiskTier)
	}
	var cps state.Checkpoints
	readJSON(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), &cps)
	if len(cps.Checkpoints) != 2 || cps.Checkpoints[1].Reason != "before auto-merge of PR #41" {
		t.Errorf("auto-merge forces a pre-action checkpoint and one right before the merge: %+v", cps.Checkpoints)
	}
	// The HALT file re-checked right before merging.
	dir = mergeProject(t, passedPR, nil)
	os.WriteFile(filepath.Join(dir, "fix.sh"), []byte("printf '"+passedPR+"' > \"$OODA_REPORT\"\nmkdir -p agent/safety && echo stop > agent/safety/HALT\n"), 0o644)
	fg = &fakeForge{facts: goodFacts()}
	res, out = runForge(t, dir, t0, fg)
	if len(fg.merged) != 0 || res.ExitCode() != 3 {
		t.Errorf("merged with a HALT file present: %v\n%s", fg.merged, out)
	}
}

func TestStep4C_SquashDisabledLeavesThePRForAHuman(t *testing.T) {
	dir := mergeProject(t, passedPR, nil)
	fg := &fakeForge{facts: goodFacts(), mergeErr: forge.ErrSquashDisabled}
	res, out := runForge(t, dir, t0, fg)
	if res.AutoMerged || !strings.Contains(out, "Auto-merge skipped: enable squash-merge on the repo. PR #41 is left for a human.") {
		t.Errorf("%s", out)
	}
	if strings.Count(strings.Join(fg.calls, ","), "merge") != 1 {
		t.Errorf("one squash attempt and no fallback: %v", fg.calls)
	}
}

func TestProtectedPathMatching(t *testing.T) {
	pats := []string{"agent/safety/*", "config.json", "*.pem", "docs/**"}
	for file, want := range map[string]bool{
		"agent/safety/HALT":        true,
		"agent/safety/deep/x.json": true,
		"./config.json":            true,
		"key.pem":                  true,
		"docs/a/b.md":              true,
		"agent/state/x.json":       false,
		"src/config.json.go":       false,
	} {
		if _, got := Protected(file, pats); got != want {
			t.Errorf("Protected(%q) = %v, want %v", file, got, want)
		}
	}
}

// The original project's auto-merge-gating fixture: level 3, auto-merge and
// rollback opted in, one "implementation" domain run by /dev-cycle. A PR
// inside the limits is merged; one past them is left for a human.
func TestCompatFixture_AutoMergeGating(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compat, "fixtures/auto-merge-gating/config.json"))
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["skills"] = map[string]any{"/dev-cycle": map[string]any{"command": []string{"/bin/sh", "dev.sh"}}}
	safety := cfg["safety"].(map[string]any)
	safety["first_cycle_observe_only"] = false
	cfg["test_command"] = "true"
	out, _ := json.Marshal(cfg)
	for _, tc := range []struct {
		name   string
		facts  forge.Facts
		merged bool
		why    string
	}{
		{"within limits", forge.Facts{Number: 41, Files: []string{"src/retry.ts"}, ChangedFiles: 1, Additions: 20, Deletions: 5}, true, ""},
		{"too large", forge.Facts{Number: 41, Files: []string{"src/retry.ts"}, ChangedFiles: 1, Additions: 80, Deletions: 25}, false, "105 lines > auto_merge_max_lines 100"},
		{"protected", forge.Facts{Number: 41, Files: []string{"agent/contracts/dev-cycle.yaml"}, ChangedFiles: 1, Additions: 2}, false, "matches protected path agent/contracts/*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := project(t, string(out), map[string]string{"dev.sh": "printf '" + passedPR + "' > \"$OODA_REPORT\"\n"})
			fg := &fakeForge{facts: map[int]forge.Facts{41: tc.facts}}
			res, log := runForge(t, dir, t0, fg)
			if res.AutoMerged != tc.merged || (tc.why != "" && !strings.Contains(log, tc.why)) {
				t.Fatalf("merged %v\n%s", res.AutoMerged, log)
			}
			// enable_rollback: a checkpoint precedes the action either way.
			var cps state.Checkpoints
			readJSON(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), &cps)
			if len(cps.Checkpoints) == 0 || cps.Checkpoints[0].Reason != "before action" {
				t.Errorf("checkpoints = %+v", cps.Checkpoints)
			}
		})
	}
}

func TestStep4C_HeadMovedAfterTheGateIsLeftForAHuman(t *testing.T) {
	dir := mergeProject(t, passedPR, nil)
	facts := goodFacts()
	f := facts[41]
	f.HeadSHA = "checked"
	facts[41] = f
	fg := &movingForge{fakeForge{facts: facts}}
	res, out := runForge(t, dir, t0, fg)
	if res.AutoMerged || !strings.Contains(out, "changed after its facts were checked") {
		t.Errorf("%s", out)
	}
}

// movingForge's PR gets a new head between the facts and the merge.
type movingForge struct{ fakeForge }

func (m *movingForge) MergeSquash(ctx context.Context, n int, head string) error {
	if head != "moved" {
		return forge.ErrHeadMoved
	}
	return nil
}

// statusSeq answers Status from a list, one answer per call.
type statusSeq struct {
	fakeForge
	seq []forge.Status
}

func (s *statusSeq) Status(context.Context) (forge.Status, error) {
	st := s.seq[0]
	if len(s.seq) > 1 {
		s.seq = s.seq[1:]
	}
	return st, nil
}

func TestStep4C_UnreportedPRDetectedByBranchPrefix(t *testing.T) {
	dir := mergeProject(t, `{"test_status": "passed"}`, func(s string) string {
		return strings.Replace(s, `"enable_auto_merge": true`, `"enable_auto_merge": false`, 1)
	})
	before := forge.Status{Open: []forge.PR{{Number: 5, HeadRef: "auto/fix/old"}}}
	after := forge.Status{Open: []forge.PR{{Number: 5, HeadRef: "auto/fix/old"}, {Number: 6, HeadRef: "auto/fix/new"}, {Number: 7, HeadRef: "someone/else"}}}
	fg := &statusSeq{seq: []forge.Status{before, after}}
	res, out := runForge(t, dir, t0, fg)
	if res.PRNumber == nil || *res.PRNumber != 6 || !strings.Contains(out, "PR #6 created on branch auto/fix/new") {
		t.Errorf("pr %v\n%s", res.PRNumber, out)
	}
	if e := loadState(t, dir).DecisionLog[0]; e.ResultType != "pr_created" || *e.RiskTier != 3 {
		t.Errorf("entry = %+v", e)
	}
}

// checkpoints.json is a file anyone may edit: a commit_sha that is not a
// commit id is quoted (control characters escaped) in the HALT reason and
// the log, never shown raw.
func TestCheckpointCommitQuotesWhatIsNotASHA(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	for commit, want := range map[string][2]string{
		"":                       {"", ""},
		sha:                      {sha, sha[:12]},
		"--output=/x":            {`"--output=/x" (not a commit SHA)`, `"--output=/x" (not a commit SHA)`},
		"x\n[Record] forged\x1b": {`"x\n[Record] forged\x1b" (not a commit SHA)`, `"x\n[Record] forged\x1b" (not a commit SHA)`},
	} {
		cp := state.Checkpoint{CommitSHA: commit}
		if got := checkpointCommit(cp, false); got != want[0] {
			t.Errorf("checkpointCommit(%q) = %q, want %q", commit, got, want[0])
		}
		if got := checkpointCommit(cp, true); got != want[1] {
			t.Errorf("checkpointCommit(%q, short) = %q, want %q", commit, got, want[1])
		}
	}
}
