package orient

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// TestStep2B4_BackAnnotationCopiesOnlyWhatItChanges: a cycle with nothing to
// annotate returns the outcomes it was given, uncopied (a full buffer is
// 200 of them, every cycle); the first annotation copies them, so the
// input stays as it was.
func TestStep2B4_BackAnnotationCopiesOnlyWhatItChanges(t *testing.T) {
	c := outcomeCfg()
	outs := make([]state.Outcome, 200)
	for i := range outs {
		outs[i] = state.Outcome{CycleID: i + 1, ResultType: "futile"}
	}
	outs[150] = state.Outcome{CycleID: 151, ResultType: "pr_created", QualityMult: 0.5, PRNumber: ip(7)}
	quiet := FromOutcomes(OutcomeInput{Now: now, Config: c, Outcomes: outs})
	if len(quiet.Outcomes) != 200 || &quiet.Outcomes[0] != &outs[0] || len(quiet.Annotations) != 0 {
		t.Fatalf("nothing to annotate: %d outcomes, copied %v, %d annotations", len(quiet.Outcomes), &quiet.Outcomes[0] != &outs[0], len(quiet.Annotations))
	}
	merged := FromOutcomes(OutcomeInput{Now: now, Config: c, Outcomes: outs, Merged: []PR{{Number: 7, Merged: now}}})
	if &merged.Outcomes[0] == &outs[0] || merged.Outcomes[150].ResultType != "pr_merged" || outs[150].ResultType != "pr_created" || outs[150].Extra != nil {
		t.Fatalf("an annotation: result %q, input %q (extra %v); the result must be a copy", merged.Outcomes[150].ResultType, outs[150].ResultType, outs[150].Extra)
	}
}
