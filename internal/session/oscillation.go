package session

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/state"
)

// CycleOutcome is what a cycle did, as the session's ledger sees it.
type CycleOutcome struct {
	// Cycle is the cycle's number (engine.Result.Cycle).
	Cycle int
	// Domain is the domain whose skill the cycle executed; "" when it
	// executed none.
	Domain string
	// ResultType is the cycle's 6-C9 result type (engine.Result.ResultType).
	ResultType string
	// Quality is the cycle's quality multiplier, the domain line's value.
	Quality *float64
	// Idle says the cycle selected nothing because only quarantined work
	// remained; IdleTarget is the quarantined target that would have won
	// (IdleTarget of the decision), "" when unknown.
	Idle       bool
	IdleTarget string
	// Goals are the readings of every active goal after the cycle
	// (GoalReadings).
	Goals []GoalReading
}

// GoalReading is one goal's progress after a cycle.
type GoalReading struct {
	ID string
	// Progress is the goal's progress after the cycle; nil when unknown.
	Progress *float64
	// Previous is its progress before the cycle, used when the session
	// has no earlier reading of the goal.
	Previous *float64
	// MetricErr says why the goal's metric command failed this cycle; a
	// failed measurement is "unchanged", with a warning.
	MetricErr string
}

// Recorded is what Record did.
type Recorded struct {
	// Lines are the cycle's ledger lines, in ledger order: the executed
	// domain (or the idle line), the goals, then a quarantined line for
	// each target quarantined by this cycle. Append them with
	// state.Store.AppendCycleHistory.
	Lines []state.LedgerLine
	// Quarantined are the targets this cycle quarantined.
	Quarantined []string
	// Warnings name a goal whose metric command failed.
	Warnings []string
}

// DomainResult is the ledger result of a domain's cycle: improved when
// it delivered (pr_merged_held, pr_merged, pr_created,
// action_extracted), fail when it went wrong (error, pr_rejected,
// leap_regressed), unchanged otherwise.
func DomainResult(resultType string) string {
	switch resultType {
	case "pr_merged_held", "pr_merged", "pr_created", "action_extracted":
		return state.ResultImproved
	case "error", "pr_rejected", "leap_regressed":
		return state.ResultFail
	}
	return state.ResultUnchanged
}

// progressEpsilon absorbs the rounding of progress (4 places, see
// reflect.ApplyProgress): a smaller move is no move.
const progressEpsilon = 1e-9

// Record writes a cycle into the session (seed 002): one ledger line per
// target — the executed domain, or an idle line when only quarantined
// work remained, then every active goal — and counts improved→fail
// transitions per target in ledger order. A target reaching
// p.OscillationThreshold transitions is quarantined for the rest of the
// session, with one "quarantined" line; a quarantined target's results
// are still written but no longer counted. rec.Iteration is not changed
// (Judge counts iterations).
func Record(rec *state.Session, p Params, out CycleOutcome, now time.Time) Recorded {
	p = p.withDefaults()
	if rec.Targets == nil {
		rec.Targets = map[string]state.SessionTarget{}
	}
	ts := state.FormatTime(now)
	var r Recorded
	line := func(target, kind, result string, value *float64, rt string) {
		r.Lines = append(r.Lines, state.LedgerLine{Session: rec.ID, Cycle: out.Cycle, Target: target, Kind: kind,
			Result: result, Value: finite(value), ResultType: rt, Timestamp: ts})
	}
	var touched []string
	observe := func(target, kind, result string, value *float64) {
		t := rec.Targets[target]
		t.Kind = kind
		if !rec.IsQuarantined(target) && t.LastResult == state.ResultImproved && result == state.ResultFail {
			t.Transitions++
		}
		t.LastResult = result
		t.LastCycle = out.Cycle
		if kind == state.KindGoal && finite(value) != nil {
			v := *value
			t.LastValue = &v
		}
		rec.Targets[target] = t
		if !slices.Contains(touched, target) {
			touched = append(touched, target)
		}
	}
	switch {
	case out.Domain != "":
		result := DomainResult(out.ResultType)
		line(out.Domain, state.KindDomain, result, out.Quality, out.ResultType)
		observe(out.Domain, state.KindDomain, result, out.Quality)
	case out.Idle:
		target := out.IdleTarget
		if target == "" && len(rec.Quarantined) > 0 {
			target = rec.Quarantined[0]
		}
		line(target, state.KindDomain, state.ResultIdle, nil, "")
	}
	for _, g := range out.Goals {
		if g.ID == "" {
			continue
		}
		prev := g.Previous
		if t, ok := rec.Targets[g.ID]; ok && t.LastValue != nil {
			prev = t.LastValue
		}
		result := state.ResultUnchanged
		cur := finite(g.Progress)
		switch {
		case g.MetricErr != "":
			r.Warnings = append(r.Warnings, fmt.Sprintf("goal %s: metric_command failed (%s); recorded as unchanged", g.ID, g.MetricErr))
			cur = nil
		case cur == nil || finite(prev) == nil:
		case *cur > *prev+progressEpsilon:
			result = state.ResultImproved
		case *cur < *prev-progressEpsilon:
			result = state.ResultFail
		}
		value := cur
		if value == nil {
			value = finite(prev)
		}
		line(g.ID, state.KindGoal, result, value, "")
		observe(g.ID, state.KindGoal, result, value)
	}
	for _, target := range touched {
		t := rec.Targets[target]
		if rec.IsQuarantined(target) || t.Transitions < p.OscillationThreshold {
			continue
		}
		rec.Quarantined = append(rec.Quarantined, target)
		r.Quarantined = append(r.Quarantined, target)
		n := float64(t.Transitions)
		line(target, t.Kind, state.ResultQuarantined, &n, "")
	}
	state.BoundSession(rec)
	rec.UpdatedAt = ts
	return r
}

// Quarantined is the set of quarantined targets, for engine.Options
// (decide excludes those domains; goals of it are marked quarantined).
// It is never nil.
func Quarantined(rec state.Session) map[string]bool {
	m := make(map[string]bool, len(rec.Quarantined))
	for _, t := range rec.Quarantined {
		m[t] = true
	}
	return m
}

// Unquarantine lifts a target's quarantine (`ooda run --unquarantine
// TARGET`) and forgets its transitions, so that it is quarantined again
// only after p.OscillationThreshold new ones. It reports whether the
// target was quarantined.
func Unquarantine(rec *state.Session, target string) bool {
	i := slices.Index(rec.Quarantined, target)
	if i < 0 {
		return false
	}
	rec.Quarantined = slices.Delete(slices.Clone(rec.Quarantined), i, i+1)
	if t, ok := rec.Targets[target]; ok {
		t.Transitions = 0
		t.LastResult = ""
		rec.Targets[target] = t
	}
	return true
}

// IdleTarget is, for a decision that selected nothing, the quarantined
// option ranked first — the work the cycle skipped because it is
// quarantined — or "" when the decision has a winner or quarantined
// nothing.
func IdleTarget(d *decide.Decision) string {
	if d == nil || d.Winner != nil {
		return ""
	}
	for _, o := range d.Options {
		if o.Excluded == decide.ExcludedQuarantined {
			return o.Domain
		}
	}
	return ""
}

// GoalReadings are the readings of a cycle's goals: every goal active
// after the cycle, and every goal the cycle completed (active before,
// completed after: its last move is an improvement). Previous is the
// goal's progress before the cycle; metricErrs holds, by goal id, why a
// metric command failed. Goals without an id cannot be followed and are
// left out; at most state.MaxSessionTargets are read.
func GoalReadings(before, after state.Goals, metricErrs map[string]string) []GoalReading {
	prev := map[string]state.Goal{}
	for _, g := range before.Goals {
		if _, dup := prev[g.ID]; !dup {
			prev[g.ID] = g
		}
	}
	seen := map[string]bool{}
	var out []GoalReading
	for _, g := range after.Goals {
		if g.ID == "" || seen[g.ID] || len(out) >= state.MaxSessionTargets {
			continue
		}
		b, had := prev[g.ID]
		if g.Status != "active" && (g.Status != "completed" || !had || b.Status != "active") {
			continue
		}
		seen[g.ID] = true
		r := GoalReading{ID: g.ID, Progress: finite(g.Progress), MetricErr: metricErrs[g.ID]}
		if had {
			r.Previous = finite(b.Progress)
		}
		out = append(out, r)
	}
	return out
}

// finite is v, or nil when v is nil, NaN or infinite.
func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}
