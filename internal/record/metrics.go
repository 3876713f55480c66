package record

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// UpdateMetrics applies 6-C5 to the counters, in whichever layout the file
// has (see state.Metrics): the streaks block and the daily cost log of the
// state design's layout are kept up to date beside the counters.
func UpdateMetrics(m state.Metrics, f Facts, resultType string) state.Metrics {
	c := &m.Counters
	if c.DomainExecutions == nil {
		c.DomainExecutions = map[string]int{}
	}
	if m.New() && c.TotalChainExecutions == nil {
		c.TotalChainExecutions = new(int)
	}
	c.TotalCycles++
	if f.Executed {
		c.TotalSkillExecutions += 1 + len(f.Chain)
		if len(f.Chain) > 0 && c.TotalChainExecutions != nil {
			// Kept within the counters' range, as the sanitizer keeps the
			// others: a hand-edited huge count must not wrap negative.
			n := min(max(*c.TotalChainExecutions, 0), state.MaxCounter-1) + 1
			c.TotalChainExecutions = &n
		}
		c.DomainExecutions[f.Domain]++
		if c.CurrentDomain == f.Domain {
			c.CurrentStreak++
		} else {
			c.CurrentDomain, c.CurrentStreak = f.Domain, 1
		}
		if c.CurrentStreak > c.LongestStreak {
			c.LongestStreak = c.CurrentStreak
			if m.Streaks != nil {
				s, d := *m.Streaks, f.Domain
				s.LongestStreakDomain = &d
				m.Streaks = &s
			}
		}
	}
	if f.PRNumber != nil {
		c.TotalPRsCreated++
	}
	if resultType == TypeFutile || resultType == TypeError {
		c.TotalFutileCycles++
	}
	if m.Cost.DailyLog != nil {
		m.Cost = addDailyCost(m.Cost, f.Now, f.CostUSD)
	} else {
		m.Cost.TotalEstimatedUSD = addCost(m.Cost.TotalEstimatedUSD, f.CostUSD)
	}
	ts := state.FormatTime(f.Now)
	if m.FirstCycleAt == "" {
		m.FirstCycleAt = ts
	}
	m.LastUpdated = ts
	return m
}

// addDailyCost books a cycle's cost on its UTC day in the state design's
// daily log (the day's entry, or a new one) and keeps the last
// state.DailyLogKept days, adding the cost of the days it drops to
// total_estimated_usd: every cost is in exactly one of the two. Only the
// day's entry is rewritten; the others stay as written.
func addDailyCost(cost state.MetricsCost, now time.Time, usd float64) state.MetricsCost {
	day := now.UTC().Format("2006-01-02")
	log := append([]json.RawMessage(nil), (*cost.DailyLog)...)
	at := -1
	var entry state.DailyCost
	for i := len(log) - 1; i >= 0; i-- {
		var d state.DailyCost
		if json.Unmarshal(log[i], &d) == nil && d.Date == day {
			at, entry = i, d
			break
		}
	}
	if at < 0 {
		entry = state.DailyCost{Date: day}
		log = append(log, nil)
		at = len(log) - 1
	}
	entry.EstimatedUSD = addCost(entry.EstimatedUSD, usd)
	entry.Cycles = min(max(entry.Cycles, 0), state.MaxCounter-1) + 1
	if b, err := json.Marshal(entry); err == nil {
		log[at] = b
	}
	if n := len(log) - state.DailyLogKept; n > 0 {
		for _, raw := range log[:n] {
			var d state.DailyCost
			if json.Unmarshal(raw, &d) == nil && !math.IsNaN(d.EstimatedUSD) {
				cost.TotalEstimatedUSD = addCost(cost.TotalEstimatedUSD, d.EstimatedUSD)
			}
		}
		log = append([]json.RawMessage(nil), log[n:]...)
	}
	cost.DailyLog = &log
	return cost
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
