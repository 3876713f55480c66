package reflect

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// 5-C starvation over many domains: every domain not run in the last 10
// cycles gets one intervention, in the configuration's order; a domain
// run inside the window, or already holding a starvation intervention,
// gets none, and a run just outside the window does not count.
func TestStep5C_StarvationManyDomains(t *testing.T) {
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("d%03d", i))
	}
	c := cfgDomains(names...)
	log := logOf("d007", "d001", "d001", "d001", "d001", "d001", "d001", "d001", "d001", "d001", "d001", "d005")
	// Cycles 1..12: d007 ran in cycle 1, outside [3..12].
	m := state.Memos{Interventions: []state.Intervention{
		{Domain: "d009", Delta: 1, Type: "starvation", CreatedAtCycle: 11, ExpiresAfterCycles: 3},
		{Domain: "d010", Delta: -10, Type: "monopoly_breaker", CreatedAtCycle: 11, ExpiresAfterCycles: 1},
	}}
	_, r := WriteMemos(m, MemoInput{Now: t0, Config: c, Cycle: 12, CycleCount: 12, Log: log})
	var got []string
	for _, iv := range r.Interventions {
		if iv.Type == "starvation" {
			got = append(got, iv.Domain)
		}
	}
	var want []string
	for _, n := range names {
		if n != "d001" && n != "d005" && n != "d009" {
			want = append(want, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("starvation interventions for %d domains, want %d; first %v", len(got), len(want), got[:min(5, len(got))])
	}
}
