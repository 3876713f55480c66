package orient

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

func TestStep2F_ReflectionRecall(t *testing.T) {
	rs := []state.Reflection{
		{Cycle: 1, Domain: "a", Verdict: "miss", Lesson: "l1"},
		{Cycle: 2, Domain: "zzz", Verdict: "hit", Lesson: "l2"},
		{Cycle: 3, Domain: "b", Verdict: "hit", Lesson: "l3"},
		{Cycle: 4, Domain: "a", Verdict: "hit", Lesson: ""},
		{Cycle: 5, Domain: "b", Verdict: "hit", Lesson: "l5"},
	}
	r := RecallReflections(rs, []string{"a", "b"}, 3)
	if len(r.Lessons) != 3 || r.Lessons[0].Cycle != 5 || r.Lessons[1].Cycle != 3 || r.Lessons[2].Cycle != 1 {
		t.Errorf("recalled %+v (matching candidates first, most recent first, no empty lessons)", r.Lessons)
	}
	if r.Lean["b"] != 2 || r.Lean["a"] != -1 || len(r.Indexes) != 3 {
		t.Errorf("lean %v indexes %v", r.Lean, r.Indexes)
	}
	r = RecallReflections(rs, []string{"a"}, 3)
	if len(r.Lessons) != 3 || r.Lessons[0].Cycle != 1 || r.Lessons[1].Cycle != 5 {
		t.Errorf("others fill the remaining places: %+v", r.Lessons)
	}
	if r := RecallReflections(rs, nil, 0); len(r.Lessons) != 0 {
		t.Error("recall count 0")
	}
}
