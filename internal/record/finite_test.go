package record

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// Every float a state file holds is made finite before it is encoded, or
// the encoder refuses the whole file ("json: unsupported value: +Inf").
func TestFiniteReplacesNonFiniteFloatsAndNamesThem(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	ledger := state.CostLedger{Date: "2026-04-14", TotalEstimatedUSD: inf,
		Entries: []state.CostEntry{{CycleID: 1, EstimatedUSD: 0.5}, {CycleID: 2, EstimatedUSD: math.Inf(-1)}}}
	got := Finite(&ledger, "cost_ledger.json")
	want := []string{"cost_ledger.json: entries[1].estimated_usd was -Inf", "cost_ledger.json: total_estimated_usd was +Inf"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Finite = %q, want %q", got, want)
	}
	if ledger.TotalEstimatedUSD != 0 || ledger.Entries[1].EstimatedUSD != 0 || ledger.Entries[0].EstimatedUSD != 0.5 {
		t.Errorf("ledger after Finite = %+v", ledger)
	}
	if _, err := json.Marshal(ledger); err != nil {
		t.Errorf("the ledger still does not encode: %v", err)
	}

	// Pointers, maps of floats and interface values are reached too.
	e := DecisionEntry(Facts{Cycle: 3, Score: &inf, Confidence: &nan}, TypeAction, 0.2)
	st := state.State{DecisionLog: []state.DecisionEntry{e}}
	got = Finite(&st, "state.json")
	if len(got) != 2 || !strings.Contains(got[0], "decision_log[0].score was +Inf") || !strings.Contains(got[1], "decision_log[0].confidence was NaN") {
		t.Errorf("Finite(state) = %q", got)
	}
	if _, err := json.Marshal(st); err != nil {
		t.Errorf("state still does not encode: %v", err)
	}
	conf := map[string]any{"a": 1.0, "b": nan, "c": []any{"x", inf}}
	got = Finite(&conf, "x.json")
	if len(got) != 2 || conf["b"] != 0.0 || conf["c"].([]any)[1] != 0.0 {
		t.Errorf("Finite(map) = %q, %v", got, conf)
	}
	scores := map[string]float64{"d": inf, "e": 0.7}
	if got := Finite(&scores, "confidence.json"); len(got) != 1 || got[0] != "confidence.json: d was +Inf" || scores["d"] != 0 || scores["e"] != 0.7 {
		t.Errorf("Finite(map of floats) = %q, %v", got, scores)
	}
	clean := state.Metrics{}
	if got := Finite(&clean, "metrics.json"); got != nil {
		t.Errorf("a finite value is left alone: %q", got)
	}
}

// A cost total never overflows: 1e308 dollars twice saturates at the
// largest float, which is written and still trips every cap.
func TestCostTotalsSaturateInsteadOfOverflowing(t *testing.T) {
	l := state.CostLedger{TotalEstimatedUSD: 1e308}
	l = AddCost(l, Facts{Cycle: 1, CostUSD: 1e308, Executed: true})
	if l.TotalEstimatedUSD != math.MaxFloat64 || l.Entries[0].EstimatedUSD != 1e308 {
		t.Errorf("ledger = %+v", l)
	}
	m := UpdateMetrics(state.Metrics{Cost: state.MetricsCost{TotalEstimatedUSD: 1.7e308}}, Facts{Cycle: 1, CostUSD: 1.7e308}, TypeFutile)
	if m.Cost.TotalEstimatedUSD != math.MaxFloat64 {
		t.Errorf("metrics cost = %v", m.Cost.TotalEstimatedUSD)
	}
	// Rounding a large finite value must not turn it into +Inf.
	if e := DecisionEntry(Facts{CostUSD: 1e303, Score: ptr(1e305)}, TypeAction, 0.2); *e.CostUSD != 1e303 || *e.Score != 1e305 {
		t.Errorf("rounded cost %v, score %v", *e.CostUSD, *e.Score)
	}
	if line := CycleLogLine(Facts{CostUSD: 1e303}, TypeAction, 0.2); line.CostUSD != 1e303 {
		t.Errorf("cycle log cost %v", line.CostUSD)
	}
}

func ptr(v float64) *float64 { return &v }

// The cap reads the larger of the total and the entries' sum: a total
// edited to a negative value does not hide today's spend.
func TestSpentIsNeverBelowTheEntries(t *testing.T) {
	l := state.CostLedger{TotalEstimatedUSD: -1000, Entries: []state.CostEntry{{EstimatedUSD: 3}, {EstimatedUSD: -50}, {EstimatedUSD: 4}, {EstimatedUSD: math.NaN()}}}
	if got := Spent(l); got != 7 {
		t.Errorf("Spent = %v, want 7 (negative and NaN entries count as 0)", got)
	}
	l.TotalEstimatedUSD = 9
	if got := Spent(l); got != 9 {
		t.Errorf("Spent = %v, want the total 9", got)
	}
	l.TotalEstimatedUSD = math.NaN()
	if got := Spent(l); got != 7 {
		t.Errorf("Spent with a NaN total = %v, want 7", got)
	}
}

// total_cycles follows the cycle number: a cycle killed between writing
// metrics.json and state.json is counted again by its recovery.
func TestReconcileMetricsAfterACrash(t *testing.T) {
	m := state.Metrics{Counters: state.Counters{TotalCycles: 182, TotalFutileCycles: 190}}
	got, notes := ReconcileMetrics(m, 162)
	if got.Counters.TotalCycles != 162 || got.Counters.TotalFutileCycles != 162 || len(notes) != 2 ||
		notes[0] != "counters.total_cycles was 182 after cycle #162; reconciled to 162" {
		t.Errorf("reconciled %+v, notes %q", got.Counters, notes)
	}
	if _, notes := ReconcileMetrics(state.Metrics{Counters: state.Counters{TotalCycles: 5, TotalFutileCycles: 2}}, 5); notes != nil {
		t.Errorf("consistent counters are left alone: %q", notes)
	}
}

// The integrity gate never writes more than MaxBackfill entries in one
// cycle, whatever cost.max_backfill_cycles says.
func TestIntegrityGateBackfillIsBounded(t *testing.T) {
	l := state.CostLedger{Entries: []state.CostEntry{{CycleID: 1, EstimatedUSD: 0.02}}}
	out, filled := IntegrityGate(l, 1_000_000_000, 1<<40, t0)
	if len(filled) != MaxBackfill || len(out.Entries) != MaxBackfill+1 {
		t.Errorf("backfilled %d entries, want %d", len(filled), MaxBackfill)
	}
}
