package state

import (
	"fmt"
	"strings"
	"testing"
)

// cycle_count is never lowered below a cycle the files record: missing,
// null, 0 or a smaller number numbered the next cycle 1 (an observe-only
// "first" cycle) or reused a recorded cycle's id.
func TestCycleCount_NeverBelowARecordedCycle(t *testing.T) {
	const log = `"decision_log": [{"cycle": 19, "timestamp": "2026-04-14T02:00:00Z"}, {"cycle": 20, "timestamp": "2026-04-14T03:00:00Z"}]`
	for _, tc := range []struct {
		name, state string
		want        int
		warn        string
	}{
		{"missing", `{` + log + `}`, 20, "is missing or 0, but cycle 20 is recorded"},
		{"null", `{"cycle_count": null, ` + log + `}`, 20, "is missing or 0"},
		{"zero", `{"cycle_count": 0, ` + log + `}`, 20, "is missing or 0"},
		{"below", `{"cycle_count": 3, ` + log + `}`, 20, "3 is below cycle 20"},
		{"consistent", `{"cycle_count": 20, ` + log + `}`, 20, ""},
		// Killed in Step 6 after recording some of cycle 21: crash
		// recovery numbers the next cycle 21 again.
		{"crashed", `{"cycle_count": 20, "cycle_in_progress": true, ` + log + `}`, 20, ""},
		{"crashed first cycle", `{"cycle_count": 0, "cycle_in_progress": true, "decision_log": []}`, 0, ""},
		// The crashed cycle's own records are elsewhere: state.json is
		// written last, so its decision log holds completed cycles only.
		{"crashed, count lost", `{"cycle_in_progress": true, ` + log + `}`, 20, "is missing or 0, but cycle 20 is recorded"},
		{"crashed, count low", `{"cycle_count": 5, "cycle_in_progress": true, ` + log + `}`, 20, "5 is below cycle 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t.TempDir())
			writeFile(t, s.EvolvePath(StateFile), tc.state)
			// A crashed cycle wrote its cost entry before it was killed;
			// otherwise the ledger holds the last completed cycle's.
			next := 20
			if strings.Contains(tc.state, "cycle_in_progress") {
				next = tc.want + 1
			}
			writeFile(t, s.EvolvePath(CostLedgerFile), fmt.Sprintf(`{"date": "2026-04-14", "entries": [{"cycle_id": %d, "estimated_usd": 0.01}], "total_estimated_usd": 0.01}`, next))
			snap, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if snap.State.CycleCount != tc.want {
				t.Errorf("cycle_count = %d, want %d", snap.State.CycleCount, tc.want)
			}
			all := strings.Join(snap.Warnings, "\n")
			if tc.warn == "" && strings.Contains(all, "/cycle_count") || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings:\n%s\nwant %q", all, tc.warn)
			}
		})
	}
}

// A new project (no state.json, no history) starts at 0 without a word.
func TestCycleCount_NewProjectStartsAtZero(t *testing.T) {
	s := New(t.TempDir())
	snap, err := s.Load()
	if err != nil || snap.State.CycleCount != 0 || len(snap.Warnings) != 0 {
		t.Fatalf("count %d, warnings %v, err %v", snap.State.CycleCount, snap.Warnings, err)
	}
}
