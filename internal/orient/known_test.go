package orient

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// TestInterventionsAloneNeedKnownDomains gives Orient interventions and no
// score adjustment: the configured names, collected only when a memo needs
// them, must still be there for the interventions, which apply to a
// configured domain (observed this cycle or not) and to no other.
func TestInterventionsAloneNeedKnownDomains(t *testing.T) {
	m := state.Memos{Interventions: []state.Intervention{{Domain: "a", Delta: -2}, {Domain: "b", Delta: 3}, {Domain: "ghost", Delta: 5}}}
	o := Orient(Input{Now: now, Config: cfgWith("a", "b"), Memos: m, Domains: []string{"a"}})
	if o.Memo["a"] != -2 || o.Memo["b"] != 3 || len(o.Memo) != 2 {
		t.Errorf("memo = %v, want a -2 and b 3 only", o.Memo)
	}
	if len(o.MemoWarnings) != 0 {
		t.Errorf("warnings = %v", o.MemoWarnings)
	}
}
