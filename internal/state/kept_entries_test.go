package state

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// keptElems lists the elements of the array at key (a top-level key of the
// file's object) in compact form: "byte for byte, whitespace aside".
func keptElems(t *testing.T, b []byte, key string) []string {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(doc[key], &elems); err != nil {
		t.Fatalf("%s is not an array: %v\n%s", key, err, b)
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = keptCompact(t, e)
	}
	return out
}

func keptCompact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return buf.String()
}

func keptLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got  %s\n want %s", what, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// The items of action_queue.json the program did not change are written
// back as the file had them: key order, 75.0, 0.0, null and [] included,
// and no key added; an item whose status changed keeps all of that but
// its status, rewritten in place.
func TestKeptEntries_ActionQueueItems(t *testing.T) {
	a1 := `{"id":"q-1","title":"Rate limit","source_report":null,"rice_score":75.0,"related_files":[],"status":"pending","pr_number":null,"decay_applied":0.0,"reviewer":"ops"}`
	a2 := `{"status":"merged","id":"q-2","rice_score":60.0,"effective_rice":6e1,"pr_number":9,"merged_at":"2026-04-03T10:00:00Z"}`
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"schema_version":"1.0.0","pending":[`+a1+`],"in_progress":[],"completed":[`+a2+`]}`)
	snap := loadClean(t, s)
	q := snap.ActionQueue
	if len(q.Pending) != 1 || q.Pending[0].Rice() != 75 || len(q.Completed) != 1 || *q.Completed[0].PRNumber != 9 {
		t.Fatalf("queue = %+v", q)
	}
	// The item moves to in_progress as the implementation starts it.
	moved := q.Pending[0]
	moved.Status = "in_progress"
	q.InProgress = append(q.InProgress, moved)
	q.Pending = nil
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	saved := []byte(readString(t, s.EvolvePath(ActionQueueFile)))
	keptLists(t, "completed", keptElems(t, saved, "completed"), []string{a2})
	keptLists(t, "in_progress", keptElems(t, saved, "in_progress"), []string{strings.Replace(a1, `"status":"pending"`, `"status":"in_progress"`, 1)})

	// A new item is written in full, as any new entry.
	q2 := loadClean(t, s).ActionQueue
	q2.Pending = append(q2.Pending, Action{ID: "q-3", Title: "New", Status: "pending"})
	if err := s.SaveActionQueue(q2); err != nil {
		t.Fatal(err)
	}
	saved = []byte(readString(t, s.EvolvePath(ActionQueueFile)))
	keptLists(t, "pending after an append", keptElems(t, saved, "pending"), []string{`{"id":"q-3","title":"New","status":"pending"}`})
	keptLists(t, "completed after an append", keptElems(t, saved, "completed"), []string{a2})
}

// memos.json interventions and history entries are written back as read
// when unchanged (-10.0 stays -10.0, the history's key order stays), and
// an intervention applied once more changes only its applied_count.
func TestKeptEntries_MemosEntries(t *testing.T) {
	i1 := `{"domain":"service_health","delta":-10.0,"type":"monopoly_breaker","created_at_cycle":5,"expires_after_cycles":3,"applied_count":0}`
	i2 := `{"domain":"test_coverage","delta":1.0,"type":"contrarian","dominant_domain":"service_health","created_at_cycle":5,"expires_after_cycles":3}`
	h1 := `{"cycle":5,"memo":"selected twice","adjustments":{"test_coverage":1.0},"timestamp":"2026-04-14T05:00:00Z"}`
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(MemosFile), `{"schema_version":"1.1.0","score_adjustments":{},"interventions":[`+i1+`,`+i2+`],"history":[`+h1+`],"last_memo":null}`)
	m := loadClean(t, s).Memos
	if len(m.Interventions) != 2 || m.Interventions[0].Delta != -10 || m.Interventions[1].AppliedCount != 0 {
		t.Fatalf("interventions = %+v", m.Interventions)
	}
	if err := s.SaveMemos(m); err != nil {
		t.Fatal(err)
	}
	saved := []byte(readString(t, s.EvolvePath(MemosFile)))
	keptLists(t, "interventions", keptElems(t, saved, "interventions"), []string{i1, i2})
	keptLists(t, "history", keptElems(t, saved, "history"), []string{h1})

	m = loadClean(t, s).Memos
	m.Interventions[0].AppliedCount++
	m.Interventions[1].AppliedCount++
	m.History = append(m.History, Memo{Cycle: 6, Type: "note", Message: "new"})
	if err := s.SaveMemos(m); err != nil {
		t.Fatal(err)
	}
	saved = []byte(readString(t, s.EvolvePath(MemosFile)))
	keptLists(t, "interventions applied", keptElems(t, saved, "interventions"), []string{
		strings.Replace(i1, `"applied_count":0`, `"applied_count":1`, 1),
		// A key the entry lacked is added at its end.
		strings.TrimSuffix(i2, "}") + `,"applied_count":1}`,
	})
	keptLists(t, "history appended", keptElems(t, saved, "history"), []string{h1, `{"cycle":6,"type":"note","message":"new"}`})
}
