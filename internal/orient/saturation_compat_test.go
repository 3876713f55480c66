package orient

import (
	"encoding/json"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// originalEntry decodes a decision-log entry as the original OODA loop
// writes it (no had_output), through the same reader state.json uses.
func originalEntry(t *testing.T, raw string) state.DecisionEntry {
	t.Helper()
	var e state.DecisionEntry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if e.HadOutput != nil {
		t.Fatalf("fixture entry has had_output: %s", raw)
	}
	return e
}

// 2-A2 over the original's entries: what the entry says decides whether
// the previous cycle had output. Fourteen cycles without output are on
// the counter, so an entry misread as "no output" halts the loop.
func TestStep2A2_OriginalEntriesInferOutput(t *testing.T) {
	cfg := config.Default()
	cases := []struct {
		name   string
		raw    string
		output bool
	}{
		// The last entry of the original's cycle-card fixture.
		{"pr_number", `{"cycle": 152, "timestamp": "2026-04-14T03:14:00Z", "score": 11.3, "confidence": 0.74, "result": "pr_created", "pr_number": 29, "risk_tier": 1, "selected_domain": "test_coverage", "selected_skill": "/check-tests"}`, true},
		{"pr_number mistyped", `{"cycle": 152, "result": "observe_only", "pr_number": "#29"}`, true},
		{"prs_created", `{"cycle": 152, "result": "observe_only", "prs_created": [{"number": 7, "title": "t", "branch": "b"}]}`, true},
		{"prs_processed", `{"cycle": 152, "result": "observe_only", "prs_created": [], "prs_processed": [{"number": 12, "action": "confidence_update", "domain": "backlog", "type": "merged"}]}`, true},
		{"pr_outcomes delta", `{"cycle": 152, "result": "observe_only", "pr_outcomes": [{"pr": 28, "outcome": "rejected", "confidence_delta": -0.2}]}`, true},
		{"result_type action_extracted", `{"cycle": 152, "result": "observe_only", "result_type": "action_extracted"}`, true},
		{"result success", `{"cycle": 152, "selected_domain": "backlog", "result": "success", "prs_created": [], "prs_processed": []}`, true},
		{"result partial_success", `{"cycle": 152, "result": "partial_success"}`, true},

		{"result observe_only", `{"cycle": 152, "action": "observe_only", "reason": "first_cycle", "result": "observe_only"}`, false},
		{"goals met idle", `{"cycle": 152, "action": "skip", "reason": "goals_met_idle", "result": "observe_only"}`, false},
		{"skip without result", `{"cycle": 152, "action": "skip", "reason": "all_scores_below_minimum"}`, false},
		{"result failure", `{"cycle": 152, "result": "failure", "prs_created": [], "prs_processed": []}`, false},
		{"result error", `{"cycle": 152, "result": "error"}`, false},
		{"result_type futile", `{"cycle": 152, "result": "success", "result_type": "futile"}`, false},
		{"result_type observe", `{"cycle": 152, "result": "success", "result_type": "observe"}`, false},
		{"zero delta", `{"cycle": 152, "result": "observe_only", "pr_outcomes": [{"pr": 3, "confidence_delta": 0}], "prs_processed": []}`, false},
		{"no result", `{"cycle": 152, "selected_domain": "backlog"}`, false},
		{"odd prs_processed", `{"cycle": 152, "result": "observe_only", "prs_processed": [12, "x"], "pr_outcomes": "none"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := originalEntry(t, c.raw)
			if got := EntryHadOutput(e); got != c.output {
				t.Errorf("EntryHadOutput = %v, want %v", got, c.output)
			}
			s := SaturationCheck(cfg, 14, 0, []state.DecisionEntry{e})
			if s.Evaluated != 152 {
				t.Errorf("evaluated %d, want 152", s.Evaluated)
			}
			if c.output && (s.Count != 0 || s.Halt) {
				t.Errorf("the previous cycle had output: count %d, halt %v (want 0, no halt)", s.Count, s.Halt)
			}
			if !c.output && (s.Count != 15 || !s.Halt) {
				t.Errorf("the previous cycle had no output: count %d, halt %v (want 15, halt)", s.Count, s.Halt)
			}
		})
	}
}

// This program's own entries are read by their had_output alone, whatever
// else they carry: the inference is only for entries that lack it.
func TestStep2A2_OwnEntriesReadByHadOutput(t *testing.T) {
	cfg := config.Default()
	own := originalEntry(t, `{"cycle": 9, "result": "success", "result_type": "futile", "prs_created": [], "prs_processed": [{"number": 4, "action": "confidence_update", "domain": "a", "type": "merged"}]}`)
	own.HadOutput = bp(false)
	if s := SaturationCheck(cfg, 3, 0, []state.DecisionEntry{own}); s.Count != 4 {
		t.Errorf("had_output false: count %d, want 4", s.Count)
	}
	idle := originalEntry(t, `{"cycle": 9, "action": "skip", "result": "observe_only"}`)
	idle.HadOutput = bp(true)
	if s := SaturationCheck(cfg, 3, 0, []state.DecisionEntry{idle}); s.Count != 0 {
		t.Errorf("had_output true: count %d, want 0", s.Count)
	}
}
