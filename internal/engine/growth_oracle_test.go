package engine

import (
	"encoding/json"
	"math/rand"
	stdreflect "reflect"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// The oracle tests of the engine's shortcuts for an old project's
// cycle, each against the code it replaced.

// contrarianOfOracle is contrarianOf as it was, with the decisions copied
// into a list of their own, kept word for word as its oracle.
func contrarianOfOracle(m state.Memos, cycle int, log []state.DecisionEntry) *state.ContrarianRecord {
	for i := len(m.Interventions) - 1; i >= 0; i-- {
		iv := m.Interventions[i]
		if iv.Type != "contrarian" || iv.CreatedAtCycle != cycle {
			continue
		}
		// The check applies its adjustment whenever it makes one: the
		// original's "plausible".
		r := &state.ContrarianRecord{Argument: iv.Reason, AffectedDomain: iv.Domain, ScoreAdjustment: iv.Delta,
			CounterDomain: iv.Domain, Validity: "plausible"}
		if raw, ok := iv.Extra["dominant_domain"]; ok {
			var d string
			if json.Unmarshal(raw, &d) == nil {
				r.DominantDomain = d
			}
		}
		if r.DominantDomain != "" {
			var decisions []state.DecisionEntry
			for _, e := range log {
				if !e.IsSkip() && e.SelectedDomain != "" && e.Cycle <= cycle {
					decisions = append(decisions, e)
				}
			}
			for _, e := range decisions[max(0, len(decisions)-reflect.ContrarianWindow):] {
				if e.SelectedDomain == r.DominantDomain {
					r.DominantFrequency++
				}
			}
		}
		return r
	}
	return nil
}

// The record of a contrarian check counts the dominant domain's wins in
// the same window as the version that copied the decisions, on random
// logs (skips, entries without a domain, entries of later cycles, logs
// shorter and longer than the window) and interventions.
func TestContrarianOfMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	names := []string{"a", "b", "c"}
	counted := 0
	for i := 0; i < 20000; i++ {
		cycle := 1 + rng.Intn(40)
		var m state.Memos
		for k := rng.Intn(3); k > 0; k-- {
			iv := state.Intervention{Type: []string{"contrarian", "starvation"}[rng.Intn(2)], CreatedAtCycle: cycle - rng.Intn(2),
				Domain: names[rng.Intn(3)], Reason: "r", Delta: 1}
			if rng.Intn(5) > 0 {
				b, _ := json.Marshal(names[rng.Intn(3)])
				if rng.Intn(20) == 0 {
					b = []byte(`7`)
				}
				iv.Extra = state.Extra{"dominant_domain": b}
			}
			m.Interventions = append(m.Interventions, iv)
		}
		var log []state.DecisionEntry
		for c, n := 1, rng.Intn(30); c <= n; c++ {
			e := state.DecisionEntry{Cycle: c, Action: "execute", SelectedDomain: names[rng.Intn(3)]}
			switch rng.Intn(10) {
			case 0:
				e.Action = "skip"
			case 1:
				e.SelectedDomain = ""
			case 2:
				e.Cycle += 50
			}
			log = append(log, e)
		}
		got, want := contrarianOf(m, cycle, log), contrarianOfOracle(m, cycle, log)
		if !stdreflect.DeepEqual(got, want) {
			t.Fatalf("cycle %d, %d entries: %+v; the oracle %+v", cycle, len(log), got, want)
		}
		if got != nil && got.DominantFrequency > 0 {
			counted++
		}
	}
	if counted < 1000 {
		t.Fatalf("only %d records counted wins", counted)
	}
}

// Decide's input from an old project's record — each domain's recorded
// cycles for adaptive scoring, the decision log — holds what appending
// entry by entry made, in the same order: outcomes of several domains
// and of none, annotated by Orient or not, logs empty and full.
func TestDecideInputHistoryMatchesAppending(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 500; i++ {
		cfg := config.Default()
		cfg.Scoring.Adaptive = config.InitAdaptive()
		if i%7 == 0 {
			cfg.Scoring.Adaptive.Enabled = false
		}
		snap := &state.Snapshot{}
		var outcomes []state.Outcome
		for k, n := 0, rng.Intn(230); k < n; k++ {
			o := state.Outcome{CycleID: k + 1, Domain: []string{"a", "b", "", "c"}[rng.Intn(4)], QualityMult: float64(rng.Intn(3)) / 2}
			if rng.Intn(2) == 0 {
				h := rng.Intn(2) == 0
				o.HadOutput = &h
			}
			outcomes = append(outcomes, o)
		}
		snap.Outcomes.Entries = outcomes
		for k, n := 0, rng.Intn(25); k < n; k++ {
			snap.State.DecisionLog = append(snap.State.DecisionLog, state.DecisionEntry{Cycle: k + 1, SelectedDomain: "a", Action: "execute"})
		}
		c := &cycle{cfg: cfg, snap: snap, now: t0}
		if i%3 == 0 {
			c.outc = orient.OutcomeResult{Outcomes: append([]state.Outcome(nil), outcomes[:len(outcomes)/2]...)}
		}
		in := c.decideInput(&observe.Observation{}, orient.Orientation{})

		var history map[string][]decide.Past
		if cfg.Scoring.Adaptive.On() {
			entries := snap.Outcomes.Entries
			if c.outc.Outcomes != nil {
				entries = c.outc.Outcomes
			}
			history = map[string][]decide.Past{}
			for _, o := range entries {
				if o.Domain != "" {
					history[o.Domain] = append(history[o.Domain], decide.Past{Quality: o.QualityMult, HadOutput: o.HadOutput != nil && *o.HadOutput})
				}
			}
		}
		var log []decide.LogEntry
		for _, e := range snap.State.DecisionLog {
			log = append(log, decide.LogEntry{Cycle: e.Cycle, Domain: e.SelectedDomain, Action: e.Action, HadOutput: e.HadOutput, SelectedByAlert: e.SelectedByAlert, Guidance: e.Guidance})
		}
		if !stdreflect.DeepEqual(in.History, history) || !stdreflect.DeepEqual(in.Log, log) {
			t.Fatalf("case %d: history %v log %v; appending gives %v and %v", i, in.History, in.Log, history, log)
		}
	}
}
