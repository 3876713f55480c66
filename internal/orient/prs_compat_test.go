package orient

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// originalLog is a state.json written by the original OODA loop: its 2-B
// recorded the merge of PR 12 in prs_processed (STATE_DESIGN's shape) and
// moved test_coverage to 0.80.
const originalLog = `{
  "schema_version": "1.0.0", "cycle_count": 9, "last_cycle": "2026-04-14T08:00:00Z", "cycle_in_progress": false,
  "decision_log": [
    {"cycle": 9, "timestamp": "2026-04-14T08:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health",
     "scores": {"service_health": 18.27}, "confidence_at_decision": 0.9, "chain_executed": ["/scan-health"], "chain_stopped_at": null,
     "stop_reason": null, "result": "success", "prs_created": [],
     "prs_processed": [{"number": 12, "action": "confidence_update", "domain": "test_coverage", "type": "merged"}],
     "skill_gaps_detected": [], "proposed_skills_generated": [], "memo_written": true, "contrarian_check": null}
  ]
}`

func decodeState(t *testing.T, doc string) state.State {
	t.Helper()
	var st state.State
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		t.Fatalf("state.json: %v", err)
	}
	return st
}

func TestStep2B_PRsTheOriginalCountedAreNotCountedAgain(t *testing.T) {
	st := decodeState(t, originalLog)
	in := OutcomeInput{Now: now, Config: outcomeCfg(), Confidence: map[string]float64{"test_coverage": 0.80},
		Merged: []PR{{Number: 12, HeadRef: "auto/check-tests/cover-x", Merged: now.Add(-3 * time.Hour)}},
		Log:    st.DecisionLog, Counted: st.CountedPRs}
	r := FromOutcomes(in)
	if len(r.Changes) != 0 || r.Confidence["test_coverage"] != 0.80 {
		t.Fatalf("PR 12 was counted by the original (prs_processed) and must not move confidence again: %+v %v", r.Changes, r.Confidence)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("the original's shape is no warning: %v", r.Warnings)
	}
	// Remembered beyond the decision log's 20 entries.
	if len(r.Counted) != 1 || r.Counted[0] != 12 {
		t.Errorf("counted = %v, want [12]", r.Counted)
	}
	in2 := in
	in2.Log, in2.Counted = nil, r.Counted
	if r2 := FromOutcomes(in2); len(r2.Changes) != 0 {
		t.Errorf("PR 12 counted once the log forgot it: %+v", r2.Changes)
	}
	// A PR the original did not count still counts, once.
	in.Merged = append(in.Merged, PR{Number: 13, HeadRef: "auto/check-tests/cover-y", Merged: now.Add(-time.Hour)})
	r = FromOutcomes(in)
	if len(r.Changes) != 1 || r.Changes[0].PR != 13 || r.Confidence["test_coverage"] != 0.9 {
		t.Errorf("new PR 13: %+v %v", r.Changes, r.Confidence)
	}
}

func TestStep2B_PrsProcessedReadItemByItem(t *testing.T) {
	// One entry holds every spelling a hand or another tool may have left;
	// each readable number is counted, each other value is one warning, and
	// none costs the entry or the other items.
	st := decodeState(t, `{"cycle_count": 4, "decision_log": [
	  {"cycle": 3, "timestamp": "2026-04-14T06:00:00Z", "prs_processed": "not a list"},
	  {"cycle": 4, "timestamp": "2026-04-14T07:00:00Z",
	   "prs_processed": [{"number": "#29", "type": "merged"}, {"number": "30"}, {"number": 31.0}, {"number": "abc"}, "stray", {"number": null}, {"type": "closed"}, {"number": 2.5}],
	   "pr_outcomes": [{"pr": "#33", "outcome": "rejected"}, {"pr": true}]}
	]}`)
	if st.CycleCount != 4 || len(st.DecisionLog) != 2 {
		t.Fatalf("a mistyped prs_processed must not cost state.json: %+v", st)
	}
	var merged []PR
	for _, n := range []int{29, 30, 31, 33, 34} {
		merged = append(merged, PR{Number: n, HeadRef: fmt.Sprintf("auto/scan-health/fix-%d", n), Merged: now.Add(-time.Hour)})
	}
	r := FromOutcomes(OutcomeInput{Now: now, Config: outcomeCfg(), Confidence: map[string]float64{"service_health": 0.5}, Merged: merged, Log: st.DecisionLog})
	if len(r.Changes) != 1 || r.Changes[0].PR != 34 {
		t.Errorf("only PR 34 is new: %+v", r.Changes)
	}
	want := []string{
		`agent/state/evolve/state.json: the decision_log entry of cycle 3, /prs_processed: "not a list" is not a list`,
		`agent/state/evolve/state.json: the decision_log entry of cycle 4, /pr_outcomes/1/pr: true is not a PR number; ignored.`,
		`agent/state/evolve/state.json: the decision_log entry of cycle 4, /prs_processed/3/number: "abc" is not a PR number; ignored.`,
		`agent/state/evolve/state.json: the decision_log entry of cycle 4, /prs_processed/4: "stray" is not an object; ignored.`,
	}
	joined := strings.Join(r.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("missing warning %q in:\n%s", w, joined)
		}
	}
	if !strings.Contains(joined, "the decision_log entry of cycle 4, /prs_processed/7/number: 2.5") {
		t.Errorf("a fractional number is no PR:\n%s", joined)
	}
	if len(r.Warnings) != 5 {
		t.Errorf("one warning per unreadable value, got %d:\n%s", len(r.Warnings), joined)
	}
	// The entry's value is kept as it was, for the original to read back.
	b, err := json.Marshal(st.DecisionLog[1])
	if err != nil || !strings.Contains(string(b), `"prs_processed":[{"number":"#29","type":"merged"},{"number":"30"},{"number":31.0}`) {
		t.Errorf("prs_processed rewritten: %s %v", b, err)
	}
}

func TestStep2B_PrsProcessedWarningsAreBounded(t *testing.T) {
	items := make([]string, 40)
	for i := range items {
		items[i] = `{"number": "x"}`
	}
	st := decodeState(t, `{"decision_log": [{"cycle": 1, "timestamp": "t", "prs_processed": [`+strings.Join(items, ",")+`]}]}`)
	r := FromOutcomes(OutcomeInput{Now: now, Config: outcomeCfg(), Log: st.DecisionLog})
	if len(r.Warnings) != maxLogWarnings+1 || !strings.Contains(r.Warnings[maxLogWarnings], "35 more PR numbers") {
		t.Errorf("warnings = %d: %v", len(r.Warnings), r.Warnings)
	}
}

func TestPRNumber(t *testing.T) {
	for raw, want := range map[string]int{`12`: 12, `"12"`: 12, `"#29"`: 29, `" #7 "`: 7, `29.0`: 29, `2.9e1`: 29, `72434`: 72434} {
		if n, ok := PRNumber(json.RawMessage(raw)); !ok || n != want {
			t.Errorf("PRNumber(%s) = %d, %v; want %d", raw, n, ok, want)
		}
	}
	for _, raw := range []string{`0`, `-3`, `2.5`, `"#"`, `"12a"`, `"0x10"`, `true`, `{}`, `[12]`, `null`, `"1e3"`, `1e300`} {
		if n, ok := PRNumber(json.RawMessage(raw)); ok {
			t.Errorf("PRNumber(%s) = %d, want no PR", raw, n)
		}
	}
}
