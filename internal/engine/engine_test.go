package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

var t0 = time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)

const compat = "../../../shared/compat/ooda-loop"

// project writes a project with the given config and files.
func project(t *testing.T, cfg string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.json"), cfg)
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
	return dir
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir string, now time.Time, dry bool) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), DryRun: dry, Registry: skills.Registry(), Out: &out})
	if err != nil {
		t.Fatalf("RunCycle: %v\n%s", err, out.String())
	}
	return res, out.String()
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

func loadState(t *testing.T, dir string) state.State {
	var st state.State
	readJSON(t, filepath.Join(dir, "agent/state/evolve/state.json"), &st)
	return st
}

// A three-domain project whose skills record that they ran.
const threeDomains = `{
  "domains": {
    "service_health": {"weight": 2.0, "primary_skill": "/scan-health", "fallback": true},
    "test_coverage": {"weight": 0.5, "primary_skill": "/check-tests"},
    "backlog": {"weight": 0.3, "primary_skill": "/plan-backlog", "ooda_phase": "strategize"}
  },
  "skills": {
    "/scan-health": {"command": ["/bin/sh", "skill.sh"]},
    "/check-tests": {"command": ["/bin/sh", "skill.sh"]},
    "/plan-backlog": {"command": ["/bin/sh", "skill.sh"]}
  },
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/scan-health", "/check-tests", "/plan-backlog"], "first_cycle_observe_only": false}
}`

const skillScript = `#!/bin/sh
echo "$OODA_DOMAIN" >> ran.txt
printf '{"last_run": "%s", "status": "ok", "run": %s}\n' "$OODA_NOW" "$OODA_CYCLE" > "$OODA_STATE_FILE"
`

func TestStep1A_SeasonModeWeightOverridesAndDisabledDomains(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"season_modes": {"enabled": true, "current_mode": "launch",
	  "modes": {"launch": {"weight_overrides": {"backlog": 3.0}, "disabled_domains": ["service_health"], "signal_bonuses": {}}}},
	  "progressive_complexity"`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	res, out := run(t, dir, t0, true)
	if res.Decision == nil || res.Decision.Winner == nil || res.Decision.Winner.Domain != "backlog" {
		t.Fatalf("season override should make backlog win; got %+v\n%s", res.Decision, out)
	}
	for _, o := range res.Decision.Options {
		if o.Domain == "service_health" {
			t.Errorf("a season-disabled domain must not be scored")
		}
		if o.Domain == "backlog" && o.Weight != 3.0 {
			t.Errorf("effective weight = %v, want 3.0", o.Weight)
		}
	}
	if !strings.Contains(out, "Season mode: launch (1 weight overrides, 1 disabled domains)") {
		t.Errorf("season mode not reported:\n%s", out)
	}
	// The override lives in memory only: config.json is untouched.
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if string(b) != cfg {
		t.Errorf("config.json was modified")
	}
}

func TestStep1A_StatusFiltering(t *testing.T) {
	cfg := `{"domains": {
	  "a": {"weight": 1, "primary_skill": "/a", "status": "disabled"},
	  "b": {"weight": 1, "primary_skill": "/b", "status": "available"},
	  "c": {"weight": 1, "primary_skill": "/c", "enabled": false},
	  "d": {"weight": 1, "primary_skill": "/d"}
	}, "progressive_complexity": {"current_level": 2}}`
	dir := project(t, cfg, nil)
	res, _ := run(t, dir, t0, true)
	if len(res.Decision.Options) != 1 || res.Decision.Options[0].Domain != "d" {
		t.Fatalf("only d (legacy: no status = active) is scoreable; got %+v", res.Decision.Options)
	}
}

func TestStep1A_HoursSinceLastRun(t *testing.T) {
	cfg := `{"domains": {
	  "legacy": {"weight": 1, "primary_skill": "/a", "state_file": "agent/state/legacy.json"},
	  "both": {"weight": 1, "primary_skill": "/b", "state_file": "agent/state/both.json"},
	  "engine": {"weight": 1, "primary_skill": "/c", "state_file": "agent/state/engine.json"},
	  "never": {"weight": 1, "primary_skill": "/d"}
	}, "progressive_complexity": {"current_level": 2}}`
	dir := project(t, cfg, map[string]string{
		"agent/state/legacy.json":       `{"last_check": "2026-04-14T07:00:00Z"}`,
		"agent/state/both.json":         `{"last_run": "2026-04-13T09:00:00Z", "last_check": "2026-04-14T08:00:00Z"}`,
		"agent/state/engine.json":       `{"last_run": "2026-04-10T09:00:00Z"}`,
		"agent/state/evolve/state.json": `{"cycle_count": 3, "domain_last_run": {"engine": "2026-04-14T03:00:00Z"}, "decision_log": []}`,
	})
	res, _ := run(t, dir, t0, true)
	want := map[string]float64{"legacy": 2, "both": 1, "engine": 6, "never": 168}
	for _, o := range res.Decision.Options {
		if o.Hours == nil || *o.Hours != want[o.Domain] {
			t.Errorf("%s: hours = %v, want %v", o.Domain, o.Hours, want[o.Domain])
		}
	}
}

func TestStep1A_LensPreInit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compat, "fixtures/lens-pre-init/config.json"))
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	dir := project(t, string(b), nil)
	// A dry run writes nothing, lens files included.
	run(t, dir, t0, true)
	if _, err := os.Stat(filepath.Join(dir, "agent/state/service_health/lens.json")); err == nil {
		t.Fatal("dry run created a lens file")
	}
	run(t, dir, t0, false)
	for _, d := range []string{"service_health", "test_coverage", "backlog"} {
		var l state.Lens
		readJSON(t, filepath.Join(dir, "agent/state", d, "lens.json"), &l)
		if l.Domain != d || l.SchemaVersion != "1.0.0" || l.LastUpdated != "2026-04-14T09:00:00Z" || l.FocusItems != nil && len(l.FocusItems) != 0 {
			t.Errorf("%s: lens = %+v", d, l)
		}
	}
}

func TestStep1A_CostLedgerCreatedAndResetDaily(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/cost_ledger.json": `{"schema_version": "1.0.0", "date": "2026-04-13", "entries": [{"cycle_id": 1, "timestamp": "2026-04-13T23:00:00Z", "skill": "/x", "chain": [], "estimated_usd": 4.5}], "total_estimated_usd": 4.5}`})
	res, _ := run(t, dir, t0, false)
	var l state.CostLedger
	readJSON(t, filepath.Join(dir, "agent/state/evolve/cost_ledger.json"), &l)
	if l.Date != "2026-04-14" || len(l.Entries) != 1 || l.Entries[0].CycleID != res.Cycle || l.TotalEstimatedUSD != 0.02 {
		t.Errorf("ledger after a new UTC day = %+v", l)
	}
	dir2 := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	run(t, dir2, t0, false)
	readJSON(t, filepath.Join(dir2, "agent/state/evolve/cost_ledger.json"), &l)
	if l.SchemaVersion != "1.0.0" || l.Date != "2026-04-14" || len(l.Entries) != 1 {
		t.Errorf("missing ledger must be created: %+v", l)
	}
}

func TestStep1A_ActiveContextPassedToSkill(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compat, "fixtures/active-context-read/config.json"))
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	ctxBlob, _ := os.ReadFile(filepath.Join(compat, "fixtures/active-context-read/contexts/persona-demo.json"))
	cfg := strings.Replace(string(b), `"scoring"`, `"skills": {"/scan-health": {"command": ["/bin/sh", "-c", "cat \"$OODA_ACTIVE_CONTEXT\" > seen.json"]}}, "scoring"`, 1)
	cfg = strings.Replace(cfg, `"min_cycle_interval_minutes": 30`, `"min_cycle_interval_minutes": 30, "first_cycle_observe_only": false`, 1)
	dir := project(t, cfg, map[string]string{"contexts/persona-demo.json": string(ctxBlob)})
	res, out := run(t, dir, t0, false)
	if res.Result != "success" {
		t.Fatalf("cycle result %q\n%s", res.Result, out)
	}
	seen, _ := os.ReadFile(filepath.Join(dir, "seen.json"))
	if !bytes.Equal(seen, ctxBlob) {
		t.Errorf("skill saw %q, want the active context blob", seen)
	}
}

func TestStep1A_ActiveContextMissingIsNotFatal(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"active_context": {"path": "nope.json"}, "progressive_complexity"`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted || !strings.Contains(out, "active_context not loadable") {
		t.Errorf("status %s\n%s", res.Status, out)
	}
}

func TestStep1C_ExternalSignalsRead(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/external/pagerduty.json": `{"open_incidents": 2}`,
		"agent/state/external/broken.json":    `{`})
	res, out := run(t, dir, t0, true)
	if res.Status != StatusDryRun || !strings.Contains(out, "broken.json: not valid JSON") {
		t.Errorf("an unreadable signal is reported and skipped:\n%s", out)
	}
}

func TestStep6_RecordOfAnExecutedCycle(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted || res.Result != "success" || res.Cycle != 1 {
		t.Fatalf("res = %+v\n%s", res, out)
	}
	ran, _ := os.ReadFile(filepath.Join(dir, "ran.txt"))
	if string(ran) != "service_health\n" {
		t.Errorf("ran.txt = %q", ran)
	}
	st := loadState(t, dir)
	if st.CycleCount != 1 || st.CycleInProgress || *st.LastCycle != "2026-04-14T09:00:00Z" || len(st.DecisionLog) != 1 {
		t.Fatalf("state = %+v", st)
	}
	e := st.DecisionLog[0]
	if e.SelectedDomain != "service_health" || e.Result != "success" || e.ResultType != "action_extracted" || !*e.HadOutput || e.ChainExecuted == nil {
		t.Errorf("decision entry = %+v", e)
	}
	if st.DomainLastRun["service_health"] != "2026-04-14T09:00:00Z" {
		t.Errorf("domain_last_run = %v", st.DomainLastRun)
	}
	var m state.Metrics
	readJSON(t, filepath.Join(dir, "agent/state/evolve/metrics.json"), &m)
	if m.Counters.TotalCycles != 1 || m.Counters.DomainExecutions["service_health"] != 1 || m.Counters.TotalSkillExecutions != 1 {
		t.Errorf("metrics = %+v", m.Counters)
	}
	var os2 state.Outcomes
	readJSON(t, filepath.Join(dir, "agent/state/evolve/outcomes.json"), &os2)
	if len(os2.Entries) != 1 || os2.Entries[0].ResultType != "action_extracted" || os2.Entries[0].QualityMult != 0.2 {
		t.Errorf("outcomes = %+v", os2)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	if n := strings.Count(string(log), "\n"); n != 1 {
		t.Errorf("cycle log has %d lines", n)
	}
	cl, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/CHANGELOG.md"))
	if !strings.HasPrefix(string(cl), "# CHANGELOG\n\n## Cycle #1 -- 2026-04-14 09:00 UTC -- service_health\n") {
		t.Errorf("CHANGELOG = %s", cl)
	}
	runLog, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-scan-health.log"))
	if err != nil {
		t.Errorf("run log not kept: %v", err)
	}
	_ = runLog
	if _, err := os.Stat(filepath.Join(dir, "agent/state/evolve/.lock")); err == nil {
		t.Errorf("lock not released")
	}
	// The cycle log is appended, never rewritten.
	res2, _ := run(t, dir, t0.Add(time.Hour), false)
	log2, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	if !bytes.HasPrefix(log2, log) || strings.Count(string(log2), "\n") != 2 || res2.Cycle != 2 {
		t.Errorf("cycle log must be append-only:\n%s", log2)
	}
}

func TestStep6C_MemoConsumption(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/memos.json": `{"schema_version": "1.1.0", "score_adjustments": {"backlog": 100, "ghost": 5},
		  "interventions": [{"domain": "test_coverage", "delta": 1.0, "type": "starvation", "created_at_cycle": 0, "expires_after_cycles": 2, "applied_count": 0},
		                    {"domain": "backlog", "delta": -1.0, "type": "monopoly_breaker", "created_at_cycle": 0, "expires_after_cycles": 1, "applied_count": 0}],
		  "history": [], "last_memo": null, "custom_key": {"kept": true}}`})
	res, out := run(t, dir, t0, false)
	w := res.Decision.Winner
	if w == nil || w.Domain != "backlog" || w.Memo != 99 {
		t.Fatalf("memo adjustments + interventions must sum into the memo term: %+v\n%s", w, out)
	}
	if !strings.Contains(out, "Memo adjustment for unknown domain 'ghost' -- ignored and cleared.") {
		t.Errorf("unknown-domain memo not reported:\n%s", out)
	}
	var m state.Memos
	readJSON(t, filepath.Join(dir, "agent/state/evolve/memos.json"), &m)
	if len(m.ScoreAdjustments) != 0 {
		t.Errorf("one-shot adjustments must be cleared: %v", m.ScoreAdjustments)
	}
	if len(m.Interventions) != 1 || m.Interventions[0].Domain != "test_coverage" || m.Interventions[0].ExpiresAfterCycles != 1 || m.Interventions[0].AppliedCount != 1 {
		t.Errorf("interventions after one application = %+v", m.Interventions)
	}
	if _, ok := m.Extra["custom_key"]; !ok {
		t.Errorf("unknown keys of memos.json must survive")
	}
	// A dry run does not consume memos.
	before, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/memos.json"))
	run(t, dir, t0.Add(time.Hour), true)
	after, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/memos.json"))
	if !bytes.Equal(before, after) {
		t.Errorf("dry run consumed memos")
	}
}

func TestStep6C5b_DailyCostCapHalts(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"cost": {"daily_limit_usd": 0.05, "warning_threshold_pct": 50}, "progressive_complexity"`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript + `printf '{"cost_usd": 0.03}' > "$OODA_REPORT"` + "\n"})
	res, out := run(t, dir, t0, false)
	if res.HaltCreated || !strings.Contains(out, "[WARN] Cost: $0.03 of the $0.05 daily cap") {
		t.Fatalf("first cycle warns only:\n%s", out)
	}
	res, out = run(t, dir, t0.Add(time.Hour), false)
	if !res.HaltCreated || res.ExitCode() != 3 {
		t.Fatalf("second cycle reaches the cap and halts: %+v\n%s", res, out)
	}
	halt, _ := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if !strings.Contains(string(halt), "Daily cost cap reached: $0.06") {
		t.Errorf("HALT = %s", halt)
	}
	res, _ = run(t, dir, t0.Add(2*time.Hour), false)
	if res.Status != StatusHalted || res.Reason != ReasonHalt {
		t.Errorf("next cycle must stop at 0-A: %+v", res)
	}
}

func TestStep4B_SilentFailuresHalt(t *testing.T) {
	cfg := `{"domains": {"only": {"weight": 1, "primary_skill": "/fail", "fallback": true}},
	  "skills": {"/fail": {"command": ["/bin/sh", "skill.sh"]}},
	  "progressive_complexity": {"current_level": 2}, "safety": {"skill_allowlist": [], "first_cycle_observe_only": false}}`
	dir := project(t, cfg, map[string]string{"skill.sh": "echo boom >&2; exit 1\n"})
	for i := 0; i < 3; i++ {
		res, out := run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
		if res.Result != "error" {
			t.Fatalf("cycle %d: result %q\n%s", i+1, res.Result, out)
		}
		if (i == 2) != res.HaltCreated {
			t.Fatalf("cycle %d: halt_created = %v", i+1, res.HaltCreated)
		}
	}
	var gaps state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Frequency != 3 || gaps.Gaps[0].Name != "execution_error_fail" || gaps.Gaps[0].Detail != "exit status 1" {
		t.Errorf("gaps = %+v", gaps)
	}
	if g := gaps.Gaps[0]; g.RelatedDomain == nil || *g.RelatedDomain != "only" || g.OODAPhase != "execute" {
		t.Errorf("the failed skill's gap names no domain, or the wrong phase: %+v", g)
	}
	st := loadState(t, dir)
	if st.ConsecutiveSilentFailures != 3 || st.CycleCount != 3 {
		t.Errorf("state = %+v", st)
	}
}

func TestStep0E_FirstCycleObserveOnly(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"first_cycle_observe_only": false`, `"first_cycle_observe_only": true`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	res, _ := run(t, dir, t0, false)
	if res.Result != "observe_only" || res.Reason != ReasonFirstCycle || res.ResultType != "observe" {
		t.Fatalf("res = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Errorf("the skill ran on an observe-only first cycle")
	}
	st := loadState(t, dir)
	e := st.DecisionLog[0]
	if st.CycleCount != 1 || e.Action != "observe_only" || e.Reason != "first_cycle" || e.SelectedDomain != "service_health" || e.ScoreVerified == nil || !*e.ScoreVerified {
		t.Errorf("entry = %+v", e)
	}
	res, _ = run(t, dir, t0.Add(time.Hour), false)
	if res.Result != "success" {
		t.Errorf("second cycle should act: %+v", res)
	}
}

func TestCorruptStateFileSetAsideAndReset(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/goals.json": `{"goals": [ {"id": "g1"`})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted || len(res.StateCorrupted) != 1 || res.StateCorrupted[0] != "goals.json" {
		t.Fatalf("res = %+v\n%s", res, out)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "agent/state/evolve/goals.json.corrupt-*"))
	if len(matches) != 1 {
		t.Fatalf("corrupt copies: %v", matches)
	}
	kept, _ := os.ReadFile(matches[0])
	if string(kept) != `{"goals": [ {"id": "g1"` {
		t.Errorf("the corrupt bytes must be kept exactly: %q", kept)
	}
	var g state.Goals
	readJSON(t, filepath.Join(dir, "agent/state/evolve/goals.json"), &g)
	var gaps state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Name != "state_corrupt_goals" {
		t.Errorf("gaps = %+v", gaps.Gaps)
	}
	// Reset on disk: the next cycle finds nothing to set aside.
	res, _ = run(t, dir, t0.Add(time.Hour), false)
	matches, _ = filepath.Glob(filepath.Join(dir, "agent/state/evolve/goals.json.corrupt-*"))
	if len(res.StateCorrupted) != 0 || len(matches) != 1 {
		t.Errorf("second cycle: corrupt %v, copies %v", res.StateCorrupted, matches)
	}
}

func TestStep0C_RecoveryPersistsEvenWhenTheCycleSkips(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/state.json": `{"cycle_count": 7, "last_cycle": "2026-04-14T08:50:00Z", "cycle_in_progress": true,
		  "decision_log": [{"cycle": 7, "timestamp": "2026-04-14T08:50:00Z", "selected_domain": "backlog", "selected_skill": "/plan-backlog", "result": "success"}]}`})
	res, out := run(t, dir, t0, false)
	if res.Reason != ReasonTooSoon || !strings.Contains(out, "Cycle #8 did not complete") || !strings.Contains(out, "Last completed: #7 — domain backlog") {
		t.Fatalf("res = %+v\n%s", res, out)
	}
	st := loadState(t, dir)
	if st.CycleInProgress || st.CycleCount != 7 {
		t.Errorf("recovery must be persisted: %+v", st)
	}
	var m state.Memos
	readJSON(t, filepath.Join(dir, "agent/state/evolve/memos.json"), &m)
	if len(m.History) != 1 || m.History[0].Type != "crash_recovery" || m.History[0].Cycle != 8 || *m.History[0].LastCompleted != 7 {
		t.Errorf("memo = %+v", m.History)
	}
	_, out = run(t, dir, t0.Add(time.Minute), false)
	if strings.Contains(out, "did not complete") {
		t.Errorf("the crash was reported twice:\n%s", out)
	}
}

func TestStep4A_NotAllowlistedIsRecordedAndDoesNotMonopolise(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"skill_allowlist": ["/scan-health", "/check-tests", "/plan-backlog"]`, `"skill_allowlist": ["/check-tests", "/plan-backlog"]`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	res, _ := run(t, dir, t0, false)
	if res.Reason != ReasonNotAllowlisted || res.Result != "blocked" || res.ExitCode() != 0 {
		t.Fatalf("res = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("a skill outside the allowlist ran")
	}
	res, _ = run(t, dir, t0.Add(time.Hour), false)
	if res.Decision.Winner == nil || res.Decision.Winner.Domain == "service_health" || res.Result != "success" {
		t.Errorf("the blocked domain won again: %+v", res.Decision.Winner)
	}
	var gaps state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Name != "skill_not_in_allowlist_scan-health" {
		t.Errorf("gaps = %+v", gaps.Gaps)
	}
}

func TestStep4_NoExecutorIsAnExecutionErrorAndCostsNothing(t *testing.T) {
	cfg := `{"domains": {"a": {"weight": 1, "primary_skill": "/nothing-runs-me"}}, "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false}}`
	dir := project(t, cfg, nil)
	res, out := run(t, dir, t0, false)
	if res.Result != "error" || res.SkillError != "no executor for /nothing-runs-me" {
		t.Fatalf("res = %+v\n%s", res, out)
	}
	var l state.CostLedger
	readJSON(t, filepath.Join(dir, "agent/state/evolve/cost_ledger.json"), &l)
	if l.TotalEstimatedUSD != 0 {
		t.Errorf("a skill that never started cost %v", l.TotalEstimatedUSD)
	}
}

func TestStep1A_StaleActiveContextSchedulesRefresh(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"progressive_complexity"`, `"active_context": {"path": "ctx.json", "refresh_skill": "/refresh-context", "refresh_interval_hours": 24}, "progressive_complexity"`, 1)
	cfg = strings.Replace(cfg, `"/plan-backlog": {"command": ["/bin/sh", "skill.sh"]}`, `"/plan-backlog": {"command": ["/bin/sh", "skill.sh"]}, "/refresh-context": {"command": ["/bin/sh", "-c", "echo refreshed >> refreshed.txt"]}`, 1)
	cfg = strings.Replace(cfg, `"skill_allowlist": ["/scan-health", "/check-tests", "/plan-backlog"]`, `"skill_allowlist": ["/scan-health", "/check-tests", "/plan-backlog", "/refresh-context"]`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript, "ctx.json": `{"persona": "x"}`})
	old := t0.Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "ctx.json"), old, old); err != nil {
		t.Fatal(err)
	}
	_, out := run(t, dir, t0, false)
	if !strings.Contains(out, "refresh via /refresh-context scheduled") {
		t.Fatalf("no refresh scheduled:\n%s", out)
	}
	var m state.Memos
	readJSON(t, filepath.Join(dir, "agent/state/evolve/memos.json"), &m)
	if len(m.History) != 1 || m.History[0].Type != "active_context_refresh" {
		t.Errorf("memo = %+v", m.History)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "refreshed.txt")); string(b) != "refreshed\n" {
		t.Errorf("the refresh skill must run, through the chain gates: %q\n%s", b, out)
	}
	// A fresh context schedules nothing.
	now := t0.Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "ctx.json"), now, now)
	_, out = run(t, dir, now, false)
	if strings.Contains(out, "refresh via") {
		t.Errorf("a fresh context was refreshed:\n%s", out)
	}
}
