package reflect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// The interventions of the original's memos.json: a monopoly breaker for
// one cycle and a contrarian boost for three, with a key ooda does not know.
const originalInterventions = `[
  {"domain": "service_health", "delta": -10.0, "type": "monopoly_breaker", "reason": "Selected 2 consecutive cycles",
   "created_at_cycle": 16, "expires_after_cycles": 1, "applied_count": 0},
  {"domain": "backlog", "delta": 1.0, "type": "contrarian", "reason": "service_health dominated", "dominant_domain": "service_health",
   "created_at_cycle": 10, "expires_after_cycles": 3, "applied_count": 0}
]`

func TestStep6C_InterventionsCountDownOnlyWhenScoringAppliedThem(t *testing.T) {
	var ivs []state.Intervention
	if err := json.Unmarshal([]byte(originalInterventions), &ivs); err != nil {
		t.Fatal(err)
	}
	// A cycle that did not score (implicit guidance, nothing scoreable)
	// applied neither: both stay exactly as they were.
	kept := CountDownInterventions(ivs, false)
	if len(kept) != 2 || kept[0].ExpiresAfterCycles != 1 || kept[0].AppliedCount != 0 || kept[1].ExpiresAfterCycles != 3 || kept[1].AppliedCount != 0 {
		t.Fatalf("an unscored cycle counted interventions down: %+v", kept)
	}
	// Several unscored cycles in a row change nothing either.
	for i := 0; i < 5; i++ {
		kept = CountDownInterventions(kept, false)
	}
	if len(kept) != 2 {
		t.Fatalf("interventions expired without being applied: %+v", kept)
	}
	// The cycle that scored applied both: the one-cycle breaker is gone,
	// the contrarian has two cycles left, and its unknown key survives.
	applied := CountDownInterventions(kept, true)
	if len(applied) != 1 || applied[0].Type != "contrarian" || applied[0].ExpiresAfterCycles != 2 || applied[0].AppliedCount != 1 {
		t.Fatalf("after one scored cycle: %+v", applied)
	}
	b, _ := json.Marshal(applied[0])
	if !strings.Contains(string(b), `"dominant_domain":"service_health"`) {
		t.Errorf("dominant_domain lost: %s", b)
	}
	// The input is never changed in place.
	if ivs[1].ExpiresAfterCycles != 3 || kept[1].AppliedCount != 0 {
		t.Errorf("input modified: %+v %+v", ivs, kept)
	}
	// An intervention already at 0 (hand-edited) is removed by the next
	// scored cycle, not by an unscored one.
	zero := []state.Intervention{{Domain: "backlog", Delta: 1, Type: "starvation", ExpiresAfterCycles: 0}}
	if got := CountDownInterventions(zero, false); len(got) != 1 {
		t.Errorf("unscored cycle removed an intervention: %+v", got)
	}
	if got := CountDownInterventions(zero, true); len(got) != 0 {
		t.Errorf("expired intervention kept: %+v", got)
	}
}
