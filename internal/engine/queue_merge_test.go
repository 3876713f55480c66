package engine

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// A skill's update of action_queue.json while it ran is merged into the
// cycle's copy item by item: what the skill changed is taken as it left
// it, what the cycle changed in memory (Orient moving a merged PR's
// action) is kept, and items the skill did not touch stay the cycle's.
func TestStep4_SkillQueueUpdateMergedIntoTheCyclesCopy(t *testing.T) {
	a := func(id, status string) state.Action { return state.Action{ID: id, Title: "t " + id, Status: status} }
	base := state.ActionQueue{Pending: []state.Action{a("a1", "pending"), a("a2", "pending"), a("a3", "pending")}}
	// The cycle, in memory: a3 completed (its PR merged).
	ours := state.ActionQueue{Pending: []state.Action{a("a1", "pending"), a("a2", "pending")}, Completed: []state.Action{a("a3", "merged")}}
	// The skill, on disk: a1 taken (in progress, proposed), a2 removed, a4 added.
	theirs := state.ActionQueue{Pending: []state.Action{a("a3", "pending"), a("a4", "pending")}, InProgress: []state.Action{a("a1", "proposed")}}
	got, n := mergeSkillQueue(ours, base, theirs)
	if n != 3 {
		t.Errorf("%d items taken, want 3 (a1, a2, a4)", n)
	}
	ids := func(l []state.Action) (s string) {
		for _, x := range l {
			s += x.ID + ":" + x.Status + " "
		}
		return s
	}
	if p, i, c := ids(got.Pending), ids(got.InProgress), ids(got.Completed); p != "a4:pending " || i != "a1:proposed " || c != "a3:merged " {
		t.Errorf("merged: pending %q, in progress %q, completed %q", p, i, c)
	}
	if _, n := mergeSkillQueue(ours, base, base); n != 0 {
		t.Errorf("an unchanged file took %d items", n)
	}
}
