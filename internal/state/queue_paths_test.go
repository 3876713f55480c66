package state

import (
	"strings"
	"testing"
)

// An item the original marked in progress inside pending[] is read as in
// progress: a warning about a value in it, or in an item after it, still
// names the place the file has it (it named /in_progress/1 for the
// file's /pending/1, and /pending/1 for the file's /pending/2).
func TestActionQueue_WarningsNameTheFilesPlaces(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [{"id": "P", "rice_score": 1}, "junk",
	  {"id": "A", "status": "in_progress", "rice_score": "bad"}, {"id": "Q", "rice_score": "worse"}],
	  "in_progress": [{"id": "B", "rice_score": "x"}], "completed": []}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(snap.Warnings, "\n")
	for _, want := range []string{`/pending/2/rice_score: "bad"`, `/pending/3/rice_score: "worse"`, `/in_progress/0/rice_score: "x"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if q := snap.ActionQueue; len(q.Pending) != 2 || len(q.InProgress) != 2 {
		t.Errorf("pending %d, in progress %d", len(q.Pending), len(q.InProgress))
	}
}
