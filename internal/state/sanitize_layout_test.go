package state

import (
	"fmt"
	"path/filepath"
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

// A file of many values out of range told each one, every cycle: a cost
// ledger of a hundred thousand negative costs was a hundred thousand
// lines. Each file tells at most maxLooseWarnings, as its decoding does,
// then one line counting the rest, whatever order the files are read in.
func TestLoadTellsAFewOfAFilesBadValuesAndCountsTheRest(t *testing.T) {
	s := New(t.TempDir())
	var costs, scores []string
	for i := range 30 {
		costs = append(costs, fmt.Sprintf(`{"cycle_id": %d, "timestamp": "2026-04-14T08:00:00Z", "skill": "/s", "estimated_usd": -1}`, i+1))
		scores = append(scores, fmt.Sprintf(`{"cycle": %d, "score": 1e300}`, i+1))
	}
	writeFile(t, s.EvolvePath(CostLedgerFile), `{"date": "2026-04-14", "daily_total_usd": 0, "entries": [`+strings.Join(costs, ",")+`]}`)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 30, "decision_log": [`+strings.Join(scores, ",")+`]}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]string{}
	for _, w := range snap.Warnings {
		file, rest, _ := strings.Cut(w, ": ")
		per[filepath.Base(file)] = append(per[filepath.Base(file)], rest)
	}
	for _, name := range []string{CostLedgerFile, StateFile} {
		ws := per[name]
		if len(ws) != maxLooseWarnings+1 || ws[len(ws)-1] != "25 more values not taken as written" {
			t.Errorf("%s: %d warnings, the last %q", name, len(ws), ws[len(ws)-1:])
		}
	}
	// The values are still read as the warnings say.
	if sc := snap.State.DecisionLog[29].Score; sc == nil || *sc != MaxStateNumber {
		t.Errorf("the 30th score = %v", sc)
	}
}
