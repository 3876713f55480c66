package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/state"
)

// prefixedDomains is threeDomains with branch prefixes, so PRs map to
// domains.
var prefixedDomains = strings.NewReplacer(
	`"primary_skill": "/scan-health", "fallback": true`, `"primary_skill": "/scan-health", "fallback": true, "branch_prefix": "auto/scan-health/"`,
	`"primary_skill": "/check-tests"`, `"primary_skill": "/check-tests", "branch_prefix": "auto/check-tests/"`,
).Replace(threeDomains)

// A state directory the original loop left: cycle 9 counted the merge of
// PR 12 (prs_processed) and moved test_coverage to 0.80. The forge still
// lists PR 12 among the recent merges.
func originalPRState(t *testing.T) (string, *fakeForge) {
	dir := project(t, prefixedDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/state.json": `{"schema_version": "1.0.0", "cycle_count": 9, "last_cycle": "2026-04-14T06:00:00Z", "cycle_in_progress": false,
		  "consecutive_observe_only_cycles": 0, "decision_log": [
		  {"cycle": 9, "timestamp": "2026-04-14T06:00:00Z", "selected_domain": "test_coverage", "selected_skill": "/check-tests",
		   "scores": {"test_coverage": 4.2}, "confidence_at_decision": 0.7, "chain_executed": ["/check-tests"], "chain_stopped_at": null,
		   "stop_reason": null, "result": "success", "prs_created": [],
		   "prs_processed": [{"number": 12, "action": "confidence_update", "domain": "test_coverage", "type": "merged"}],
		   "skill_gaps_detected": [], "proposed_skills_generated": [], "memo_written": false, "contrarian_check": null}]}`,
		"agent/state/evolve/confidence.json": `{"service_health": 0.7, "test_coverage": 0.8, "backlog": 0.7}`,
	})
	fg := &fakeForge{status: forge.Status{Merged: []forge.PR{
		{Number: 12, HeadRef: "auto/check-tests/cover-x", State: forge.StateMerged, Merged: t0.Add(-4 * time.Hour)},
	}}}
	return dir, fg
}

func TestStep2B_CompatMergeTheOriginalCountedIsNotCountedAgain(t *testing.T) {
	dir, fg := originalPRState(t)
	_, out := runForge(t, dir, t0, fg)
	if strings.Contains(out, "PR #12 merged") {
		t.Fatalf("PR 12 was counted by the original and counted again:\n%s", out)
	}
	var conf state.Confidence
	evolveJSON(t, dir, "confidence.json", &conf)
	if v, _ := conf.Get("test_coverage"); v != 0.8 {
		t.Errorf("test_coverage confidence = %v, want 0.80 (unchanged)", v)
	}
	st := loadState(t, dir)
	if len(st.DecisionLog) != 2 || compact(st.DecisionLog[0].PRsProcessed) != `[{"number":12,"action":"confidence_update","domain":"test_coverage","type":"merged"}]` {
		t.Errorf("the original's prs_processed must be kept: %s", st.DecisionLog[0].PRsProcessed)
	}
	// PR 12 joins counted_prs: the forge lists the 5 latest merges, which
	// can outlast the 20-entry decision log that holds the original's record.
	if len(st.CountedPRs) != 1 || st.CountedPRs[0] != 12 {
		t.Fatalf("counted_prs = %v, want [12]", st.CountedPRs)
	}
	st.DecisionLog = nil
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir+"/agent/state/evolve/state.json", string(raw))
	_, out = runForge(t, dir, t0.Add(time.Hour), fg)
	if strings.Contains(out, "PR #12 merged") {
		t.Errorf("PR 12 counted once the decision log forgot it:\n%s", out)
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func TestStep2B_CompatPrsProcessedShape(t *testing.T) {
	got := prsProcessedJSON([]orient.ConfidenceChange{{PR: 13, Domain: "test_coverage", Outcome: "merged", Delta: 0.1},
		{PR: 14, Domain: "service_health", Outcome: "rejected", Delta: -0.2}})
	var list []map[string]any
	if err := json.Unmarshal(got, &list); err != nil {
		t.Fatal(err)
	}
	// The original reads number (to skip) and type ∈ merged/rejected/closed.
	if len(list) != 2 || list[0]["number"] != 13.0 || list[0]["type"] != "merged" || list[0]["domain"] != "test_coverage" ||
		list[0]["action"] != "confidence_update" || list[1]["number"] != 14.0 || list[1]["type"] != "rejected" || len(list[0]) != 4 {
		t.Errorf("prs_processed = %s", got)
	}
	if prsProcessedJSON(nil) != nil {
		t.Errorf("a cycle without PR outcomes writes no prs_processed")
	}
}

// pr_outcomes carries the confidence before and after the human's
// decision beside the original's delta, for the Cycle Card's LEARN line.
func TestStep7_PROutcomesCarryBeforeAndAfter(t *testing.T) {
	got := prOutcomesJSON([]orient.ConfidenceChange{{PR: 28, Domain: "service_health", Outcome: "rejected", Delta: -0.2, Before: 0.74, After: 0.54}})
	var list []map[string]any
	if err := json.Unmarshal(got, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0]["pr"] != 28.0 || list[0]["confidence_delta"] != -0.2 || list[0]["before"] != 0.74 || list[0]["after"] != 0.54 {
		t.Errorf("pr_outcomes = %s", got)
	}
}

// What this engine counts, the original must be able to skip after a
// switch back: the entry carries prs_processed in the original's shape.
func TestStep2B_CompatEntryCarriesPrsProcessed(t *testing.T) {
	dir, fg := originalPRState(t)
	fg.status.Merged = append(fg.status.Merged, forge.PR{Number: 13, HeadRef: "auto/check-tests/cover-y", State: forge.StateMerged, Merged: t0.Add(-time.Hour)})
	_, out := runForge(t, dir, t0, fg)
	if !strings.Contains(out, "PR #13 merged -> test_coverage confidence +0.10 (0.80 → 0.90)") || strings.Contains(out, "PR #12 merged") {
		t.Fatalf("only PR 13 is new:\n%s", out)
	}
	st := loadState(t, dir)
	last := st.DecisionLog[len(st.DecisionLog)-1]
	if compact(last.PRsProcessed) != `[{"number":13,"action":"confidence_update","domain":"test_coverage","type":"merged"}]` {
		t.Errorf("new entry's prs_processed = %s", last.PRsProcessed)
	}
	// Run again: nothing moves a second time.
	_, out = runForge(t, dir, t0.Add(time.Hour), fg)
	if strings.Contains(out, "PR #13 merged") || strings.Contains(out, "PR #12 merged") {
		t.Errorf("counted twice:\n%s", out)
	}
}

func TestStep6C_CompatInterventionWaitsForAScoredCycle(t *testing.T) {
	// The original's memos.json: a monopoly breaker for one cycle and a
	// contrarian boost for three. The first cycle is decided by implicit
	// guidance (a critical alert in backlog), which does not score.
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/backlog.json": `{"status": "degraded", "alerts": [{"severity": "critical", "message": "queue broken"}]}`,
		"agent/state/evolve/memos.json": `{"schema_version": "1.1.0", "last_memo": null, "score_adjustments": {}, "history": [],
		  "interventions": [
		    {"domain": "service_health", "delta": -10.0, "type": "monopoly_breaker", "reason": "Selected 2 consecutive cycles", "created_at_cycle": 0, "expires_after_cycles": 1, "applied_count": 0},
		    {"domain": "test_coverage", "delta": 1.0, "type": "contrarian", "reason": "service_health dominated", "dominant_domain": "service_health", "created_at_cycle": 0, "expires_after_cycles": 3, "applied_count": 0}]}`,
	})
	res, out := mustComplete(t, dir, t0)
	if res.Decision == nil || res.Decision.Guidance != "critical_alert" || res.Decision.Scored {
		t.Fatalf("first cycle must be decided by implicit guidance: %+v\n%s", res.Decision, out)
	}
	var m state.Memos
	evolveJSON(t, dir, "memos.json", &m)
	byType := map[string]state.Intervention{}
	for _, iv := range m.Interventions {
		byType[iv.Type] = iv
	}
	if iv, ok := byType["monopoly_breaker"]; !ok || iv.ExpiresAfterCycles != 1 || iv.AppliedCount != 0 {
		t.Fatalf("the monopoly breaker expired without being applied: %+v", m.Interventions)
	}
	if iv, ok := byType["contrarian"]; !ok || iv.ExpiresAfterCycles != 3 || iv.AppliedCount != 0 {
		t.Fatalf("the contrarian intervention was counted down unapplied: %+v", m.Interventions)
	}
	// The next cycle scores (the alert is gone): both deltas reach the
	// score table, and only then are they counted down.
	res, out = mustComplete(t, dir, t0.Add(time.Hour))
	if !res.Decision.Scored {
		t.Fatalf("second cycle must score: %+v\n%s", res.Decision, out)
	}
	for _, o := range res.Decision.Options {
		if o.Domain == "service_health" && o.Memo != -10 || o.Domain == "test_coverage" && o.Memo != 1 {
			t.Errorf("%s memo term = %v", o.Domain, o.Memo)
		}
	}
	m = state.Memos{}
	evolveJSON(t, dir, "memos.json", &m)
	byType = map[string]state.Intervention{}
	for _, iv := range m.Interventions {
		byType[iv.Type] = iv
	}
	if iv, ok := byType["monopoly_breaker"]; ok && iv.Domain == "service_health" && iv.CreatedAtCycle == 0 {
		t.Errorf("the applied one-cycle breaker must be gone: %+v", m.Interventions)
	}
	iv, ok := byType["contrarian"]
	if !ok || iv.ExpiresAfterCycles != 2 || iv.AppliedCount != 1 {
		t.Errorf("contrarian after one scored cycle = %+v", m.Interventions)
	}
	if b, _ := json.Marshal(iv); !strings.Contains(string(b), `"dominant_domain":"service_health"`) {
		t.Errorf("dominant_domain lost: %s", b)
	}
}
