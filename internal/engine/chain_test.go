package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// chainProject: domain "health" runs /scan which writes consecutive_failures
// into its state file; its contract chains to targets by condition.
func chainProject(t *testing.T, level int, implEnabled bool, allow, contractYAML string, extra map[string]string) string {
	t.Helper()
	impl := "false"
	if implEnabled {
		impl = "true"
	}
	cfg := `{"domains": {
	    "health": {"weight": 2, "primary_skill": "/scan", "fallback": true},
	    "other": {"weight": 0.1, "primary_skill": "/other"}
	  },
	  "implementation": {"enabled": ` + impl + `, "primary_skill": "/dev-cycle"},
	  "skills": {
	    "/scan": {"command": ["/bin/sh", "scan.sh"]},
	    "/dev-cycle": {"command": ["/bin/sh", "mark.sh", "dev-cycle"]},
	    "/notify": {"command": ["/bin/sh", "mark.sh", "notify"]},
	    "/audit": {"command": ["/bin/sh", "mark.sh", "audit"]},
	    "/other": {"command": ["/bin/sh", "mark.sh", "other"]}
	  },
	  "progressive_complexity": {"current_level": ` + string(rune('0'+level)) + `},
	  "safety": {"skill_allowlist": ` + allow + `, "first_cycle_observe_only": false}}`
	files := map[string]string{
		"scan.sh": `printf '{"last_run": "%s", "consecutive_failures": 4, "status": "degraded"}' "$OODA_NOW" > "$OODA_STATE_FILE"
printf '{"vars": {"flaky": true}}' > "$OODA_REPORT"
`,
		"mark.sh": `echo "$1" >> chain.txt
if [ "$1" = dev-cycle ]; then printf '{"pr_number": 41, "pr_created": true}' > "$OODA_REPORT"; fi
`,
		"skills/scan/SKILL.md": "---\nname: scan\nooda_phase: observe\n" + contractYAML + "---\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return project(t, cfg, files)
}

func chainRan(t *testing.T, dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "chain.txt"))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
}

func gapNames(t *testing.T, dir string) string {
	var g state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &g)
	var names []string
	for _, x := range g.Gaps {
		names = append(names, x.Name)
	}
	return strings.Join(names, " ")
}

const allowAll = `["/scan", "/dev-cycle", "/notify", "/audit", "/other"]`

func TestStep4B_ChainTriggersFromContract(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, `chain_triggers:
  - target: notify
    condition: "consecutive_failures >= 3 AND status == 'degraded'"
  - target: audit
    condition: "flaky == true"
  - target: other
    condition: "consecutive_failures > 10"
`, nil)
	res, out := run(t, dir, t0, false)
	if got := chainRan(t, dir); got != "notify audit" {
		t.Fatalf("chain ran %q, want notify then audit\n%s", got, out)
	}
	if !strings.Contains(out, "Chain condition not met: consecutive_failures > 10 — skipping /other") {
		t.Errorf("unmet condition not reported:\n%s", out)
	}
	st := loadState(t, dir)
	e := st.DecisionLog[0]
	if e.ChainCount != 2 || strings.Join(e.ChainExecuted, ",") != "/notify,/audit" || strings.Join(res.WinnerChain, ",") != "/notify,/audit" {
		t.Errorf("chain recorded as %v (%d)", e.ChainExecuted, e.ChainCount)
	}
	var m state.Metrics
	readJSON(t, filepath.Join(dir, "agent/state/evolve/metrics.json"), &m)
	if m.Counters.TotalSkillExecutions != 3 {
		t.Errorf("total_skill_executions = %d, want 1 + 2 chained", m.Counters.TotalSkillExecutions)
	}
}

func TestStep4B_ChainConditionUndecidableIsFalse(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"no_such_field >= 1\"\n", nil)
	_, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "" || !strings.Contains(out, "Chain condition undecidable: no_such_field not found — treating as false") {
		t.Errorf("undecidable condition:\n%s", out)
	}
	if e := loadState(t, dir).DecisionLog[0]; e.ChainExecuted == nil || e.ChainCount != 0 {
		t.Errorf("chain_executed must be recorded even when empty: %+v", e)
	}
}

func TestStep4B_ChainCannotBypassTheAllowlist(t *testing.T) {
	dir := chainProject(t, 2, false, `["/scan", "/audit"]`, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n  - target: audit\n    condition: \"consecutive_failures >= 3\"\n", nil)
	_, out := run(t, dir, t0, false)
	if got := chainRan(t, dir); got != "audit" {
		t.Fatalf("chain ran %q\n%s", got, out)
	}
	if !strings.Contains(out, "SAFETY: chain /notify not in allowlist") || !strings.Contains(gapNames(t, dir), "chain_blocked_notify") {
		t.Errorf("allowlist refusal not reported/recorded:\n%s", out)
	}
}

func TestStep4B_ChainCannotBypassTheLevelGate(t *testing.T) {
	for _, tc := range []struct {
		level int
		impl  bool
	}{{2, true}, {3, false}} {
		dir := chainProject(t, tc.level, tc.impl, allowAll, "chain_triggers:\n  - target: dev-cycle\n    condition: \"consecutive_failures >= 3\"\n", nil)
		_, out := run(t, dir, t0, false)
		if chainRan(t, dir) != "" || !strings.Contains(out, "requires Level 3 + implementation.enabled") || !strings.Contains(gapNames(t, dir), "chain_blocked_dev-cycle") {
			t.Errorf("level %d impl %v: the PR-creating chain ran or was not reported:\n%s", tc.level, tc.impl, out)
		}
	}
	dir := chainProject(t, 3, true, allowAll, "chain_triggers:\n  - target: dev-cycle\n    condition: \"consecutive_failures >= 3\"\n", nil)
	res, _ := run(t, dir, t0, false)
	if chainRan(t, dir) != "dev-cycle" || res.PRNumber == nil || *res.PRNumber != 41 {
		t.Errorf("at level 3 with implementation the chain runs: %q, pr %v", chainRan(t, dir), res.PRNumber)
	}
}

func TestStep4B_ChainCannotBypassThePRLimit(t *testing.T) {
	// The primary skill itself opened a PR: max_prs_per_cycle (1) is used up.
	dir := chainProject(t, 3, true, allowAll, "chain_triggers:\n  - target: dev-cycle\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"scan.sh": `printf '{"last_run": "%s", "consecutive_failures": 4}' "$OODA_NOW" > "$OODA_STATE_FILE"
printf '{"pr_number": 7, "pr_created": true}' > "$OODA_REPORT"
`})
	res, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "" || !strings.Contains(out, "max_prs_per_cycle (1) reached. Skipping /dev-cycle") {
		t.Errorf("the PR limit was bypassed:\n%s", out)
	}
	if res.PRNumber == nil || *res.PRNumber != 7 {
		t.Errorf("the primary's PR is recorded: %v", res.PRNumber)
	}
}

func TestStep4B_ConfidenceGatedPrimarySkipsChain(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"agent/state/evolve/confidence.json": `{"health": 0.3, "other": 0.3}`})
	res, out := run(t, dir, t0, false)
	if !res.Decision.Gated || chainRan(t, dir) != "" {
		t.Fatalf("gated %v, chain %q\n%s", res.Decision.Gated, chainRan(t, dir), out)
	}
	if !strings.Contains(gapNames(t, dir), "chain_blocked_notify") {
		t.Errorf("a chain whose condition held but was gated is a chain_blocked gap: %s", gapNames(t, dir))
	}
}

func TestStep4B_ChainDepthCapAndNoRerun(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, `chain_triggers:
  - target: notify
    condition: "consecutive_failures >= 1"
  - target: audit
    condition: "consecutive_failures >= 1"
  - target: other
    condition: "consecutive_failures >= 1"
  - target: scan
    condition: "consecutive_failures >= 1"
`, nil)
	cfgPath := filepath.Join(dir, "config.json")
	b, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(strings.Replace(string(b), `"first_cycle_observe_only": false`, `"first_cycle_observe_only": false, "max_chain_depth": 2`, 1)), 0o644)
	_, out := run(t, dir, t0, false)
	if got := chainRan(t, dir); got != "notify audit" || !strings.Contains(out, "Chain depth cap (2) reached") {
		t.Errorf("chain %q\n%s", got, out)
	}
}

func TestStep4B_LegacyChainList(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "", nil)
	cfgPath := filepath.Join(dir, "config.json")
	b, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(strings.Replace(string(b), `"primary_skill": "/scan", "fallback": true`, `"primary_skill": "/scan", "fallback": true, "chain": ["/notify", "/dev-cycle"]`, 1)), 0o644)
	_, out := run(t, dir, t0, false)
	if got := chainRan(t, dir); got != "notify" || !strings.Contains(out, "Chain (legacy): /notify starting") || !strings.Contains(out, "requires Level 3") {
		t.Errorf("legacy chain %q\n%s", got, out)
	}
}

func TestStep4B_HaltBeforeChainStep(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"scan.sh": `printf '{"last_run": "%s", "consecutive_failures": 4}' "$OODA_NOW" > "$OODA_STATE_FILE"
mkdir -p agent/safety && echo stop > agent/safety/HALT
`})
	res, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "" || res.Status != StatusHalted || res.ExitCode() != 3 {
		t.Errorf("a HALT before a chain step stops the chain: %+v\n%s", res, out)
	}
	if st := loadState(t, dir); st.CycleCount != 1 || st.CycleInProgress {
		t.Errorf("the cycle is still recorded: %+v", st)
	}
}

func TestStep4B_RotationCursor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compat, "fixtures/rotation-cursor/config.json"))
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	cursor, _ := os.ReadFile(filepath.Join(compat, "fixtures/rotation-cursor/agent/state/ux_evolution/rotation_cursor.json"))
	cfg := strings.Replace(string(b), `"scoring"`, `"skills": {"/scan-ux": {"command": ["/bin/sh", "-c", "echo \"$OODA_FOCUS_ITEM\" >> focus.txt; printf '{\"last_run\": \"%s\", \"focus\": \"%s\"}' \"$OODA_NOW\" \"$OODA_FOCUS_ITEM\" > \"$OODA_STATE_FILE\""]}}, "scoring"`, 1)
	cfg = strings.Replace(cfg, `"min_cycle_interval_minutes": 30`, `"min_cycle_interval_minutes": 30, "first_cycle_observe_only": false`, 1)
	dir := project(t, cfg, map[string]string{"agent/state/ux_evolution/rotation_cursor.json": string(cursor)})
	for i := 0; i < 4; i++ {
		run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
	}
	focus, _ := os.ReadFile(filepath.Join(dir, "focus.txt"))
	if string(focus) != "thumbnail-editor\ndashboard\nstats\nthumbnail-editor\n" {
		t.Errorf("focus items = %q", focus)
	}
	var rc state.RotationCursor
	readJSON(t, filepath.Join(dir, "agent/state/ux_evolution/rotation_cursor.json"), &rc)
	if rc.Cursor != 1 || rc.FocusItem == nil || *rc.FocusItem != "thumbnail-editor" || rc.LastUpdated == nil || *rc.LastUpdated != "2026-04-14T12:00:00Z" {
		t.Errorf("cursor = %+v", rc)
	}
	cl, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/CHANGELOG.md"))
	if !strings.Contains(string(cl), "- **Focus**: thumbnail-editor") {
		t.Errorf("the focus item belongs in the CHANGELOG:\n%s", cl)
	}
	// A dry run reports the rotation but moves nothing.
	before, _ := os.ReadFile(filepath.Join(dir, "agent/state/ux_evolution/rotation_cursor.json"))
	run(t, dir, t0.Add(10*time.Hour), true)
	after, _ := os.ReadFile(filepath.Join(dir, "agent/state/ux_evolution/rotation_cursor.json"))
	if string(before) != string(after) {
		t.Error("a dry run moved the rotation cursor")
	}
}

func TestStep4B_MalformedConditionRejectsTheContract(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures => 3\"\n", nil)
	res, out := run(t, dir, t0, false)
	if res.Result != "success" || chainRan(t, dir) != "" || !strings.Contains(out, "contract of /scan rejected") || !strings.Contains(gapNames(t, dir), "contract_invalid_scan") {
		t.Errorf("res %+v chain %q gaps %s\n%s", res.Result, chainRan(t, dir), gapNames(t, dir), out)
	}
}

func TestStep4B_ChainTargetWithABrokenContractFailsClosed(t *testing.T) {
	dir := chainProject(t, 1, false, allowAll, "", map[string]string{
		"skills/notify/SKILL.md": "---\nsafety:\n  read_only: false\nchain_triggers:\n  - target: y\n    condition: \"x >>= 1\"\n---\n"})
	cfgPath := filepath.Join(dir, "config.json")
	b, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(strings.Replace(string(b), `"primary_skill": "/scan", "fallback": true`, `"primary_skill": "/scan", "fallback": true, "chain": ["/notify"]`, 1)), 0o644)
	_, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "" || !strings.Contains(out, "SAFETY: chain /notify has a contract that does not load") || !strings.Contains(gapNames(t, dir), "chain_blocked_notify") {
		t.Errorf("chain %q\n%s", chainRan(t, dir), out)
	}
}

func TestStep6C6_NoRequeueOfPRWorkWithoutTheForge(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/action_queue.json": `{"pending": [], "in_progress": [
		  {"id": "A-1", "title": "with a PR", "status": "in_progress", "pr_number": 42, "rice_score": 50, "extracted_at": "2026-04-13T09:00:00Z"},
		  {"id": "A-2", "title": "never started", "status": "in_progress", "rice_score": 40, "extracted_at": "2026-04-13T09:00:00Z"}], "completed": []}`})
	run(t, dir, t0, false)
	var q state.ActionQueue
	readJSON(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), &q)
	if len(q.InProgress) != 1 || q.InProgress[0].ID != "A-1" || len(q.Pending) != 1 || q.Pending[0].ID != "A-2" {
		t.Errorf("without a forge an item with a PR stays in progress: %+v", q)
	}
}
