package decide

import (
	"strings"
	"testing"
)

func TestStep2F_RecalledLessonBreaksTiesWithinHalfAPoint(t *testing.T) {
	in := newInput(2, dom("a", 1, 24), dom("b", 1, 23))
	d := Decide(in)
	if d.Winner.Domain != "a" {
		t.Fatalf("without lessons a wins on staleness: %s", d.Winner.Domain)
	}
	gap := d.Options[0].Score - d.Options[1].Score
	if gap <= 0 || gap > LessonMargin {
		t.Fatalf("test needs a gap within the margin, got %v", gap)
	}
	in.Lean = map[string]int{"b": 1}
	d = Decide(in)
	if d.Winner.Domain != "b" || !strings.Contains(strings.Join(d.Options[1].Reasons, ";"), "recalled lessons favour b") {
		t.Errorf("winner %s, reasons %v", d.Winner.Domain, d.Options[1].Reasons)
	}
	in.Lean = map[string]int{"a": -1}
	if d := Decide(in); d.Winner.Domain != "b" {
		t.Errorf("a miss on a pushes it down within the margin: %s", d.Winner.Domain)
	}
	// Beyond the margin lessons change nothing.
	in = newInput(2, dom("a", 1, 48), dom("b", 1, 12))
	in.Lean = map[string]int{"b": 3}
	if d := Decide(in); d.Winner.Domain != "a" {
		t.Errorf("lessons only break near-ties: %s", d.Winner.Domain)
	}
}

func TestStep2F_LessonNeverPromotesAnOptionThatCouldNotWin(t *testing.T) {
	// b is within the margin but below the minimum score: the lesson must
	// not move it ahead of a, or 3-E would skip a cycle a can run.
	in := newInput(2, dom("a", 0.05, 16), dom("b", 0.05, 5))
	in.Config.Scoring.BalanceEnabled = false
	in.Config.Scoring.GoalWeight = 0
	in.Config.Scoring.ConfidenceWeight = 0
	d0 := Decide(in)
	if len(d0.Options) < 2 || d0.Options[0].Score < 0.5 || d0.Options[1].Score >= 0.5 || d0.Options[0].Score-d0.Options[1].Score > LessonMargin {
		t.Fatalf("scenario needs a ≥ 0.5 > b within the margin: %+v", d0.Options)
	}
	in.Lean = map[string]int{"b": 5}
	if d := Decide(in); d.Winner == nil || d.Winner.Domain != "a" {
		t.Errorf("winner %v, skip %q", d.Winner, d.SkipReason)
	}
}

func TestStep3E2_GoalsCompletedByTheirMetricCountAsMet(t *testing.T) {
	in := newInput(2, dom("a", 1, 24))
	in.Goals = []Goal{{ID: "g", Status: "completed", Progress: 1, RelatedDomains: []string{"a"}}}
	if d := Decide(in); d.SkipReason != ReasonGoalsMetIdle {
		t.Errorf("all goals completed: skip %q, winner %v", d.SkipReason, d.Winner)
	}
	in.Goals = append(in.Goals, Goal{ID: "h", Status: "active", Progress: 0.5})
	if d := Decide(in); d.SkipReason == ReasonGoalsMetIdle {
		t.Error("an unmet active goal keeps the loop working")
	}
}
