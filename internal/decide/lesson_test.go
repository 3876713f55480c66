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
