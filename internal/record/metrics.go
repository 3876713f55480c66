package record

import (
	"fmt"

	"github.com/ooda-loop/ooda/internal/state"
)

// UpdateMetrics applies 6-C5 to the counters.
func UpdateMetrics(m state.Metrics, f Facts, resultType string) state.Metrics {
	c := &m.Counters
	if c.DomainExecutions == nil {
		c.DomainExecutions = map[string]int{}
	}
	c.TotalCycles++
	if f.Executed {
		c.TotalSkillExecutions += 1 + len(f.Chain)
		c.DomainExecutions[f.Domain]++
		if c.CurrentDomain == f.Domain {
			c.CurrentStreak++
		} else {
			c.CurrentDomain, c.CurrentStreak = f.Domain, 1
		}
		if c.CurrentStreak > c.LongestStreak {
			c.LongestStreak = c.CurrentStreak
		}
	}
	if f.PRNumber != nil {
		c.TotalPRsCreated++
	}
	if resultType == TypeFutile || resultType == TypeError {
		c.TotalFutileCycles++
	}
	m.Cost.TotalEstimatedUSD = addCost(m.Cost.TotalEstimatedUSD, f.CostUSD)
	ts := state.FormatTime(f.Now)
	if m.FirstCycleAt == "" {
		m.FirstCycleAt = ts
	}
	m.LastUpdated = ts
	return m
}

// ReconcileMetrics keeps the cycle counters consistent with the cycle
// number: after this cycle's update total_cycles must equal cycle, since
// every cycle that reaches Step 6 adds one to both. They drift when a cycle
// is killed after metrics.json was written but before state.json (the next
// cycle recovers and reuses the number, counting it a second time), or when
// metrics.json was reset. total_futile_cycles can never exceed the cycles.
// It returns the metrics and one message per counter it changed.
func ReconcileMetrics(m state.Metrics, cycle int) (state.Metrics, []string) {
	var notes []string
	c := &m.Counters
	if cycle > 0 && c.TotalCycles != cycle {
		notes = append(notes, fmt.Sprintf("counters.total_cycles was %d after cycle #%d; reconciled to %d", c.TotalCycles, cycle, cycle))
		c.TotalCycles = cycle
	}
	if c.TotalFutileCycles > c.TotalCycles {
		notes = append(notes, fmt.Sprintf("counters.total_futile_cycles was %d, more than the %d cycles; reconciled to %d", c.TotalFutileCycles, c.TotalCycles, c.TotalCycles))
		c.TotalFutileCycles = c.TotalCycles
	}
	return m, notes
}
