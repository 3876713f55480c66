package reflect

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// The original project's implementation skill marks the action it works on
// with status "in_progress" where it stands, inside pending[]. Hygiene
// (6-C6) must see it as in progress: requeued when it stalled, kept in
// progress while its PR is open, never decayed as a pending item.
func TestCompatQueue_InProgressInsidePendingIsHygienic(t *testing.T) {
	q0 := state.ActionQueue{
		Pending: []state.Action{
			{ID: "P1", Title: "fine", Status: "pending", RiceScore: aqFloat(10), EffectiveRice: aqFloat(10), ExtractedAt: aqAgo(1)},
			{ID: "M1", Title: "stalled, marked in place", Status: "in_progress", RiceScore: aqFloat(80), EffectiveRice: aqFloat(80), ExtractedAt: aqAgo(40)},
			{ID: "M2", Title: "PR open, marked in place", Status: "in_progress", PRNumber: aqInt(7), ExtractedAt: aqAgo(40), RiceScore: aqFloat(50)},
			{ID: "M3", Title: "marked this cycle", Status: "in_progress", ExtractedAt: aqAgo(40), RiceScore: aqFloat(50)},
		},
	}
	before := aqJSON(t, q0)
	q, res := DecayQueue(q0, DecayInput{
		Now: aqNow, DecayDays: 14, DecayAmount: 0.05,
		InProgressAtStart: map[string]bool{"M1": true, "M2": true},
		OpenPRs:           map[int]bool{7: true},
	})
	if aqJSON(t, q0) != before {
		t.Fatal("input queue was modified")
	}
	if len(res.Requeued) != 1 || res.Requeued[0].ID != "M1" {
		t.Fatalf("requeued = %+v, want M1 only", res.Requeued)
	}
	if got, want := aqIDs(q.Pending), []string{"P1", "M1"}; !slices.Equal(got, want) {
		t.Errorf("pending = %v, want %v", got, want)
	}
	if got, want := aqIDs(q.InProgress), []string{"M2", "M3"}; !slices.Equal(got, want) {
		t.Errorf("in_progress = %v, want %v", got, want)
	}
	if a, _, _ := aqFind(q, "M1"); a.Status != "pending" {
		t.Errorf("M1 status = %q, want pending", a.Status)
	}
	// Forty days old, but in progress: none of them decays.
	for _, d := range res.Decayed {
		if d.ID != "P1" {
			t.Errorf("in-progress item %s decayed", d.ID)
		}
	}
}

// From the file to hygiene: a queue as the original writes it, read by
// state and taken through 6-C6 the way a cycle does (items in progress at
// load are the ones that were in progress when the cycle started).
func TestCompatQueue_OriginalFileRequeuesItsStalledItem(t *testing.T) {
	raw := `{"pending": [
	  {"id": "2026-01-15-001", "title": "Add retry", "status": "in_progress", "rice_score": 75, "extracted_at": "2025-05-01T00:00:00Z", "pr_number": null,
	   "status_history": [{"status": "in_progress", "at": "2025-05-02T00:00:00Z"}]},
	  {"id": "2026-01-15-002", "title": "Docs", "status": "pending", "rice_score": 20, "extracted_at": "2025-05-31T00:00:00Z"}],
	  "in_progress": [], "completed": []}`
	var q state.ActionQueue
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		t.Fatal(err)
	}
	atStart := map[string]bool{}
	for _, a := range q.InProgress {
		atStart[a.ID] = true
	}
	out, res := DecayQueue(q, DecayInput{Now: aqNow, DecayDays: 14, DecayAmount: 0.05, InProgressAtStart: atStart, OpenPRs: map[int]bool{}})
	if len(res.Requeued) != 1 || res.Requeued[0].ID != "2026-01-15-001" {
		t.Fatalf("requeued = %+v, want the stalled item", res.Requeued)
	}
	out = PersistQueue(out)
	if len(out.InProgress) != 0 || len(out.Pending) != 2 {
		t.Fatalf("pending %v, in_progress %v", aqIDs(out.Pending), aqIDs(out.InProgress))
	}
	a, _, _ := aqFind(out, "2026-01-15-001")
	if a.Status != "pending" {
		t.Errorf("status = %q, want pending", a.Status)
	}
	if _, ok := a.Extra["status_history"]; !ok {
		t.Error("status_history lost")
	}
}
