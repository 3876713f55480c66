package session

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/state"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func defaults() Params { return ParamsFrom(config.Session{}) }

func fp(v float64) *float64 { return &v }

// domainCycles records one cycle per result type for domain d and
// returns every ledger line written.
func domainCycles(rec *state.Session, p Params, d string, types ...string) []state.LedgerLine {
	var lines []state.LedgerLine
	for _, rt := range types {
		c := rec.Iteration + 1
		r := Record(rec, p, CycleOutcome{Cycle: c, Domain: d, ResultType: rt}, t0.Add(time.Duration(c)*time.Hour))
		rec.Iteration++ // Judge counts iterations; these tests do not judge
		lines = append(lines, r.Lines...)
	}
	return lines
}

func results(lines []state.LedgerLine, target string) []string {
	var out []string
	for _, l := range lines {
		if l.Target == target {
			out = append(out, l.Result)
		}
	}
	return out
}

// The example of the seed: improved, fail, improved, fail, improved,
// fail is quarantined at the third transition, with exactly one
// quarantined line, and stays quarantined whatever follows.
func TestSeed002_QuarantinedAtTheThirdImprovedFailTransitionOnce(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	lines := domainCycles(&rec, p, "api", "action_extracted", "error", "pr_created", "pr_rejected", "pr_merged")
	if rec.IsQuarantined("api") || rec.Targets["api"].Transitions != 2 {
		t.Fatalf("after two transitions: quarantined %v, transitions %d", rec.IsQuarantined("api"), rec.Targets["api"].Transitions)
	}
	r := Record(&rec, p, CycleOutcome{Cycle: 6, Domain: "api", ResultType: "leap_regressed"}, t0)
	lines = append(lines, r.Lines...)
	if !slices.Equal(r.Quarantined, []string{"api"}) || !rec.IsQuarantined("api") || !Quarantined(rec)["api"] {
		t.Fatalf("third transition did not quarantine: %+v, record %v", r, rec.Quarantined)
	}
	if last := r.Lines[len(r.Lines)-1]; last.Result != state.ResultQuarantined || last.Target != "api" || last.Value == nil || *last.Value != 3 {
		t.Fatalf("quarantined line: %+v", last)
	}
	lines = append(lines, domainCycles(&rec, p, "api", "action_extracted", "error", "pr_created", "error")...)
	want := []string{"improved", "fail", "improved", "fail", "improved", "fail", "quarantined", "improved", "fail", "improved", "fail"}
	if got := results(lines, "api"); !slices.Equal(got, want) {
		t.Fatalf("ledger of api:\n got %v\nwant %v", got, want)
	}
	if n := strings.Count(strings.Join(results(lines, "api"), ","), "quarantined"); n != 1 {
		t.Fatalf("%d quarantined lines, want 1", n)
	}
	if !slices.Equal(rec.Quarantined, []string{"api"}) {
		t.Fatalf("quarantined = %v", rec.Quarantined)
	}
}

// Only consecutive results of the same target count: improved,
// unchanged, fail is no transition, fail → improved is none, and another
// target's lines in between do not break a target's sequence.
func TestSeed002_OnlyConsecutiveResultsOfTheSameTargetCount(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	domainCycles(&rec, p, "api", "action_extracted", "observe", "error", "error", "pr_created")
	if n := rec.Targets["api"].Transitions; n != 0 {
		t.Fatalf("improved, unchanged, fail, fail, improved: %d transitions, want 0", n)
	}
	// api improved, then web fails, then api fails: one transition for
	// api, none for web.
	domainCycles(&rec, p, "web", "error")
	domainCycles(&rec, p, "api", "error")
	if a, w := rec.Targets["api"].Transitions, rec.Targets["web"].Transitions; a != 1 || w != 0 {
		t.Fatalf("transitions api %d web %d, want 1 and 0", a, w)
	}
}

func TestSeed002_DomainResultOfEachResultType(t *testing.T) {
	for rt, want := range map[string]string{
		"pr_merged_held": "improved", "pr_merged": "improved", "pr_created": "improved", "action_extracted": "improved",
		"error": "fail", "pr_rejected": "fail", "leap_regressed": "fail",
		"observe": "unchanged", "futile": "unchanged", "": "unchanged", "observe_only": "unchanged",
	} {
		if got := DomainResult(rt); got != want {
			t.Errorf("DomainResult(%q) = %q, want %q", rt, got, want)
		}
	}
}

// A goal oscillates on its progress: rose, fell, three times.
func TestSeed002_GoalProgressOscillationQuarantinesTheGoal(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	progress := []float64{0.5, 0.3, 0.6, 0.4, 0.7, 0.5}
	prev := 0.2
	var got []string
	var quarantinedAt int
	for i, v := range progress {
		r := Record(&rec, p, CycleOutcome{Cycle: i + 1, Goals: []GoalReading{{ID: "coverage", Progress: fp(v), Previous: fp(prev)}}}, t0)
		for _, l := range r.Lines {
			got = append(got, l.Result)
			if l.Kind != state.KindGoal || (l.Result != state.ResultQuarantined && (l.Value == nil || *l.Value != v)) {
				t.Fatalf("goal line: %+v", l)
			}
		}
		if len(r.Quarantined) > 0 {
			quarantinedAt = i + 1
		}
		prev = 0 // the session's own reading is used from now on
	}
	want := []string{"improved", "fail", "improved", "fail", "improved", "fail", "quarantined"}
	if !slices.Equal(got, want) || quarantinedAt != 6 {
		t.Fatalf("goal ledger %v (quarantined at %d), want %v at 6", got, quarantinedAt, want)
	}
	// A quarantined goal no longer counts toward "all goals met".
	goals := state.Goals{Goals: []state.Goal{{ID: "coverage", Status: "active", Progress: fp(0.5)}, {ID: "docs", Status: "active", Progress: fp(1)}}}
	if met, n := GoalsMet(rec, goals); !met || n != 1 {
		t.Fatalf("GoalsMet with coverage quarantined = %v, %d; want true, 1", met, n)
	}
}

// A failing metric command is unchanged, with a warning, and the goal's
// last reading is kept for the next comparison.
func TestSeed002_FailingMetricCommandIsUnchangedWithAWarning(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	Record(&rec, p, CycleOutcome{Cycle: 1, Goals: []GoalReading{{ID: "g", Progress: fp(0.4), Previous: fp(0.2)}}}, t0)
	r := Record(&rec, p, CycleOutcome{Cycle: 2, Goals: []GoalReading{{ID: "g", Progress: fp(0.1), MetricErr: "exit status 2"}}}, t0)
	if len(r.Lines) != 1 || r.Lines[0].Result != state.ResultUnchanged || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "goal g") {
		t.Fatalf("failed metric: lines %+v warnings %v", r.Lines, r.Warnings)
	}
	if *rec.Targets["g"].LastValue != 0.4 {
		t.Fatalf("last reading changed by a failed metric: %v", *rec.Targets["g"].LastValue)
	}
	r = Record(&rec, p, CycleOutcome{Cycle: 3, Goals: []GoalReading{{ID: "g", Progress: fp(0.3)}}}, t0)
	if r.Lines[0].Result != state.ResultFail {
		t.Fatalf("0.4 → 0.3 after a failed reading: %s, want fail", r.Lines[0].Result)
	}
}

// Seed 002's effect: skipping quarantined work is idle, one idle line,
// and the quarantined target of the decision is named.
func TestSeed002_IdleWhenOnlyQuarantinedWorkRemains(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	domainCycles(&rec, p, "api", "action_extracted", "error", "action_extracted", "error", "action_extracted", "error")
	d := &decide.Decision{Options: []decide.Option{{Domain: "api", Score: 40, Excluded: decide.ExcludedQuarantined}, {Domain: "docs", Score: 0.1}}, SkipReason: decide.ReasonBelowMinimum}
	target := IdleTarget(d)
	if target != "api" {
		t.Fatalf("IdleTarget = %q, want api", target)
	}
	before := rec.Targets["api"]
	r := Record(&rec, p, CycleOutcome{Cycle: 7, Idle: true, IdleTarget: target}, t0)
	if len(r.Lines) != 1 || r.Lines[0].Result != state.ResultIdle || r.Lines[0].Target != "api" || len(r.Quarantined) != 0 {
		t.Fatalf("idle cycle: %+v", r)
	}
	if rec.Targets["api"].Transitions != before.Transitions || rec.Targets["api"].LastResult != before.LastResult {
		t.Fatalf("an idle line changed the target: %+v → %+v", before, rec.Targets["api"])
	}
	if IdleTarget(&decide.Decision{Winner: &decide.Option{Domain: "docs"}, Options: d.Options}) != "" {
		t.Fatal("a decision with a winner is not idle")
	}
}

// --unquarantine lifts the quarantine and the count starts again; a new
// session starts with none.
func TestSeed002_UnquarantineAndANewSessionClearTheQuarantine(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := defaults()
	domainCycles(&rec, p, "api", "action_extracted", "error", "action_extracted", "error", "action_extracted", "error")
	if !rec.IsQuarantined("api") {
		t.Fatal("not quarantined")
	}
	if !Unquarantine(&rec, "api") || rec.IsQuarantined("api") || Unquarantine(&rec, "api") {
		t.Fatalf("Unquarantine: %v", rec.Quarantined)
	}
	lines := domainCycles(&rec, p, "api", "action_extracted", "error", "action_extracted", "error")
	if rec.IsQuarantined("api") || slices.Contains(results(lines, "api"), "quarantined") {
		t.Fatal("re-quarantined before three new transitions")
	}
	domainCycles(&rec, p, "api", "action_extracted", "error")
	if !rec.IsQuarantined("api") {
		t.Fatal("not quarantined again after three new transitions")
	}
	if fresh := New("s2", t0, 0, nil); len(fresh.Quarantined) != 0 || len(Quarantined(fresh)) != 0 {
		t.Fatalf("a new session starts quarantined: %v", fresh.Quarantined)
	}
}

func TestSeed002_ThresholdIsConfigurable(t *testing.T) {
	rec := New("s", t0, 0, nil)
	p := ParamsFrom(config.Session{OscillationThreshold: 1})
	domainCycles(&rec, p, "api", "action_extracted", "error")
	if !rec.IsQuarantined("api") {
		t.Fatal("threshold 1: not quarantined after one transition")
	}
}

func TestGoalReadingsTakeActiveGoalsAndThoseCompletedThisCycle(t *testing.T) {
	before := state.Goals{Goals: []state.Goal{
		{ID: "a", Status: "active", Progress: fp(0.5)},
		{ID: "b", Status: "active", Progress: fp(0.9)},
		{ID: "c", Status: "completed", Progress: fp(1)},
	}}
	after := state.Goals{Goals: []state.Goal{
		{ID: "a", Status: "active", Progress: fp(0.6)},
		{ID: "b", Status: "completed", Progress: fp(1)},
		{ID: "c", Status: "completed", Progress: fp(1)},
		{ID: "", Status: "active"},
		{ID: "a", Status: "active", Progress: fp(0.1)},
		{ID: "p", Status: "proposed"},
	}}
	got := GoalReadings(before, after, map[string]string{"a": "timed out"})
	if len(got) != 2 || got[0].ID != "a" || *got[0].Previous != 0.5 || got[0].MetricErr != "timed out" || got[1].ID != "b" || *got[1].Progress != 1 {
		t.Fatalf("GoalReadings = %+v", got)
	}
}
