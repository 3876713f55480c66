package engine

import (
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// A project switching with 152 cycles of history and no metrics.json got
// "[WARN] metrics.json: counters.total_cycles was 1 after cycle #153":
// a new file's counters start at the history's count, without a warning.
func TestStep6C5_NewMetricsFileStartsAtTheHistorysCount(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json": `{"schema_version": "1.2.0", "cycle_count": 152, "last_cycle": "2026-04-14T03:14:00Z", "decision_log": []}`,
	})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 153 {
		t.Fatalf("cycle %d\n%s", res.Cycle, out)
	}
	if strings.Contains(out, "metrics.json") {
		t.Errorf("a warning about the new metrics.json:\n%s", out)
	}
	var m state.Metrics
	evolveJSON(t, dir, "metrics.json", &m)
	if m.Counters.TotalCycles != 153 {
		t.Errorf("total_cycles = %d, want 153", m.Counters.TotalCycles)
	}
}
