package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

func decodeMetrics(t *testing.T, doc string) state.Metrics {
	t.Helper()
	var m state.Metrics
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// With the state design's daily log, a cycle's cost goes to its day's
// entry (a new day gets one), never also to the total; after 90 days the
// oldest are folded into the total. Every cost is counted once.
func TestCompatMetrics_DailyLogBooksEachCostOnce(t *testing.T) {
	var days []string
	for i := 0; i < state.DailyLogKept; i++ {
		d := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i)
		days = append(days, fmt.Sprintf(`{"date": %q, "estimated_usd": 0.5, "cycles": 2}`, d.Format("2006-01-02")))
	}
	m := decodeMetrics(t, `{"counters": {"total_cycles": 180}, "cost": {"total_estimated_usd": 3.0, "daily_log": [`+strings.Join(days, ",")+`]}}`)
	before := m.Cost.TotalUSD()
	lastDay := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, state.DailyLogKept-1)

	m = UpdateMetrics(m, Facts{Now: lastDay, CostUSD: 0.25}, TypeObserve)
	if m.Cost.TotalEstimatedUSD != 3.0 || len(*m.Cost.DailyLog) != state.DailyLogKept {
		t.Fatalf("same day: total %v, %d days", m.Cost.TotalEstimatedUSD, len(*m.Cost.DailyLog))
	}
	var last state.DailyCost
	_ = json.Unmarshal((*m.Cost.DailyLog)[state.DailyLogKept-1], &last)
	if last.EstimatedUSD != 0.75 || last.Cycles != 3 {
		t.Errorf("the day's entry = %+v, want 0.75 over 3 cycles", last)
	}
	if (*m.Cost.DailyLog)[0] == nil || !strings.Contains(string((*m.Cost.DailyLog)[0]), `"estimated_usd": 0.5`) {
		t.Errorf("an untouched day was rewritten: %s", (*m.Cost.DailyLog)[0])
	}

	m = UpdateMetrics(m, Facts{Now: lastDay.AddDate(0, 0, 1), CostUSD: 0.25}, TypeObserve)
	log := *m.Cost.DailyLog
	var first, next state.DailyCost
	_ = json.Unmarshal(log[0], &first)
	_ = json.Unmarshal(log[len(log)-1], &next)
	if len(log) != state.DailyLogKept || first.Date != "2026-01-02" || next.Cycles != 1 || next.EstimatedUSD != 0.25 {
		t.Errorf("new day: %d days from %s, last %+v", len(log), first.Date, next)
	}
	if m.Cost.TotalEstimatedUSD != 3.5 {
		t.Errorf("total = %v, want 3.0 + the 0.5 of the evicted day", m.Cost.TotalEstimatedUSD)
	}
	if got, want := m.Cost.TotalUSD(), before+0.5; got != want {
		t.Errorf("whole spend = %v, want %v (each cost once)", got, want)
	}
}

// Without a daily log (ooda's layout) the total is the running total, as
// before, and no log is started.
func TestCompatMetrics_OwnLayoutKeepsRunningTotal(t *testing.T) {
	m := decodeMetrics(t, `{"counters": {"total_cycles": 1}, "cost": {"total_estimated_usd": 0.02}}`)
	m = UpdateMetrics(m, Facts{Now: t0, CostUSD: 0.02}, TypeObserve)
	if m.Cost.TotalEstimatedUSD != 0.04 || m.Cost.DailyLog != nil {
		t.Errorf("cost = %+v", m.Cost)
	}
}

// total_chain_executions counts the cycles that ran a chain, in a file
// that has the counter and in a new file; a file without it does not get
// one that would start at 0 under its history. The state design's streaks
// block follows the counters, longest_streak_domain included.
func TestCompatMetrics_ChainsAndStreaks(t *testing.T) {
	chain := Facts{Now: t0, Domain: "api", Executed: true, Chain: []string{"/b", "/c"}}
	m := UpdateMetrics(decodeMetrics(t, `{"counters": {"total_chain_executions": 4, "total_skill_executions": 10}}`), chain, TypeAction)
	if c := m.Counters; c.TotalChainExecutions == nil || *c.TotalChainExecutions != 5 || c.TotalSkillExecutions != 13 {
		t.Errorf("chains %v, skills %d", c.TotalChainExecutions, c.TotalSkillExecutions)
	}
	if m := UpdateMetrics(state.Metrics{}, chain, TypeAction); m.Counters.TotalChainExecutions == nil || *m.Counters.TotalChainExecutions != 1 {
		t.Errorf("a new file: chains %v", m.Counters.TotalChainExecutions)
	}
	if m := UpdateMetrics(decodeMetrics(t, `{"counters": {"total_cycles": 5}}`), chain, TypeAction); m.Counters.TotalChainExecutions != nil {
		t.Errorf("counter started at 0 under history: %v", *m.Counters.TotalChainExecutions)
	}

	orig := decodeMetrics(t, `{"counters": {}, "streaks": {"current_domain": "api", "current_streak": 2, "longest_streak": 2, "longest_streak_domain": "docs"}}`)
	m = UpdateMetrics(orig, chain, TypeAction)
	b, _ := json.Marshal(m)
	var out struct {
		Streaks map[string]any `json:"streaks"`
	}
	_ = json.Unmarshal(b, &out)
	if s := out.Streaks; s["current_domain"] != "api" || s["current_streak"] != 3.0 || s["longest_streak"] != 3.0 || s["longest_streak_domain"] != "api" {
		t.Errorf("streaks = %v", s)
	}
	if *orig.Streaks.LongestStreakDomain != "docs" {
		t.Error("UpdateMetrics changed its input's streaks block")
	}
}
