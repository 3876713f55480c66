package state

import (
	"strings"
	"testing"
)

// A counter out of range in the state design's layout is clamped like
// one under "counters", and the warning names the key the file has
// (a user looking for /counters/domain_executions would not find it).
func TestSanitize_MetricsStateDesignLayoutNamesItsOwnKeys(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(MetricsFile), `{"schema_version": "1.0.0",
	  "counters": {"total_cycles": 12, "total_skill_executions": 15, "total_chain_executions": 5000000000},
	  "domain_executions": {"api": -4},
	  "streaks": {"current_domain": "api", "current_streak": -2, "longest_streak": 6}}`)
	snap := loadClean(t, s)
	c := snap.Metrics.Counters
	if c.DomainExecutions["api"] != 0 || c.CurrentStreak != 0 || c.TotalChainExecutions == nil || *c.TotalChainExecutions != MaxCounter {
		t.Errorf("not clamped: api %d, streak %d, chains %v", c.DomainExecutions["api"], c.CurrentStreak, c.TotalChainExecutions)
	}
	all := strings.Join(snap.Warnings, "\n")
	for _, want := range []string{"/domain_executions/api: -4 is negative", "/streaks/current_streak: -2 is negative", "/counters/total_chain_executions: 5000000000 is out of range"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
}
