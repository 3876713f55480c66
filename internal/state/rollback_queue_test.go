package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// queueLists reads action_queue.json as another reader would: the ids of
// each list, in order, and each item of pending by id.
func queueLists(t *testing.T, s *Store) (lists map[string][]string, pending map[string]json.RawMessage) {
	t.Helper()
	var q map[string][]json.RawMessage
	if err := json.Unmarshal([]byte(readString(t, s.EvolvePath(ActionQueueFile))), &q); err != nil {
		t.Fatal(err)
	}
	lists, pending = map[string][]string{}, map[string]json.RawMessage{}
	for _, name := range []string{"pending", "in_progress", "completed"} {
		lists[name] = []string{}
		for _, raw := range q[name] {
			var a struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(raw, &a)
			lists[name] = append(lists[name], a.ID)
			if name == "pending" {
				pending[a.ID] = raw
			}
		}
	}
	return lists, pending
}

// inOneList fails unless every id of want is in exactly one list and no
// other id is in any.
func inOneList(t *testing.T, lists map[string][]string, want ...string) {
	t.Helper()
	seen := map[string][]string{}
	for name, ids := range lists {
		for _, id := range ids {
			seen[id] = append(seen[id], name)
		}
	}
	for _, id := range want {
		if len(seen[id]) != 1 {
			t.Errorf("action %s is in %v after the rollback, want exactly one list (queue %v)", id, seen[id], lists)
		}
		delete(seen, id)
	}
	for id, in := range seen {
		t.Errorf("action %s (in %v) should not be in the queue after the rollback (queue %v)", id, in, lists)
	}
}

// markedItem is an action the original's implementation skill marked in
// place, inside pending[].
const markedItem = `{"id": "m", "title": "being worked on", "rice_score": 75.0, "status": "in_progress", "extracted_at": "2026-04-10T08:00:00Z", "pr_number": null, "owner": "dev-cycle"}`

// A checkpoint keeps what the file's pending[] holds — the action marked
// in progress in place included, as the file has it and where it has it —
// and the ids of the actions in progress in in_progress[]; it reads back
// the same.
func TestRollbackQueue_SnapshotHoldsWhatPendingHeld(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [`+markedItem+`, {"id": "p", "status": "pending", "extracted_at": "2026-04-12T08:00:00Z"}], "in_progress": [{"id": "ip", "status": "in_progress"}], "completed": []}`)
	snap := loadClean(t, s)
	raw, err := s.RawEvolveFile(ActionQueueFile)
	if err != nil {
		t.Fatal(err)
	}
	snap.Checkpoints.Add(Checkpoint{Cycle: 12, Timestamp: "2026-04-14T09:00:00Z", StateSnapshot: SnapshotOf(nil, snap.ActionQueue, raw)})
	if err := s.SaveCheckpoints(snap.Checkpoints); err != nil {
		t.Fatal(err)
	}
	var file struct {
		Checkpoints []struct {
			StateSnapshot map[string]json.RawMessage `json:"state_snapshot"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(readString(t, s.EvolvePath(CheckpointsFile))), &file); err != nil || len(file.Checkpoints) != 1 {
		t.Fatalf("checkpoints.json: %v", err)
	}
	written := file.Checkpoints[0].StateSnapshot
	for _, key := range []string{"action_queue_pending", "action_queue"} {
		var items []json.RawMessage
		_ = json.Unmarshal(written[key], &items)
		if len(items) != 2 || compactMetrics(t, items[0]) != compactMetrics(t, []byte(markedItem)) || !strings.Contains(string(items[1]), `"p"`) {
			t.Errorf("%s = %s, want the file's pending[] as it was: the marked action, then p", key, written[key])
		}
	}
	if got := compactMetrics(t, written["action_queue_in_progress_ids"]); got != `["ip"]` {
		t.Errorf("action_queue_in_progress_ids = %s, want [\"ip\"]", got)
	}
	cp, _ := loadClean(t, s).Checkpoints.Find(12)
	if !slices.Equal(cp.StateSnapshot.InProgressIDs, []string{"ip"}) {
		t.Errorf("InProgressIDs read back as %v", cp.StateSnapshot.InProgressIDs)
	}
}

// The cycle's hygiene requeued the action marked in place (m) and the one
// in in_progress[] (ip, which has no extracted_at), and added one (new);
// a rollback to the checkpoint taken before puts the file's pending[]
// back, keeps ip (in progress at the checkpoint), drops only what was
// added since, and leaves every action in one list.
func TestRollbackQueue_ActionsRequeuedSinceAreNotLost(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [`+markedItem+`, {"id": "p", "status": "pending"}], "in_progress": [{"id": "ip", "status": "in_progress"}], "completed": []}`)
	snap := loadClean(t, s)
	raw, _ := s.RawEvolveFile(ActionQueueFile)
	cp := Checkpoint{Cycle: 12, Timestamp: "2026-04-14T09:00:00Z", StateSnapshot: SnapshotOf(nil, snap.ActionQueue, raw)}
	snap.Checkpoints.Add(cp)
	if err := s.SaveCheckpoints(snap.Checkpoints); err != nil {
		t.Fatal(err)
	}
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [{"id": "p", "status": "pending"}, {"id": "m", "status": "pending", "extracted_at": "2026-04-10T08:00:00Z"}, {"id": "ip", "status": "pending"}, {"id": "new", "status": "pending", "extracted_at": "2026-04-14T09:00:00Z"}], "in_progress": [], "completed": []}`)

	snap = loadClean(t, s)
	cp, _ = snap.Checkpoints.Find(12)
	q, ok := cp.RestoreQueue(snap.ActionQueue)
	if !ok {
		t.Fatal("a snapshot with a queue restored none")
	}
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	lists, pending := queueLists(t, s)
	inOneList(t, lists, "m", "p", "ip")
	if !slices.Equal(lists["pending"], []string{"m", "p", "ip"}) {
		t.Errorf("pending = %v, want the checkpoint's m, p then ip", lists["pending"])
	}
	if got := compactMetrics(t, pending["m"]); got != compactMetrics(t, []byte(markedItem)) {
		t.Errorf("m restored as %s, want it as the checkpoint kept it", got)
	}
}

// The original's checkpoint holds x and y as pending; since then x went
// in progress and y was merged, w (extracted before the checkpoint) was
// requeued, z was extracted after it and n has no extracted_at. The
// rollback puts x and y back in pending and takes them out of the other
// lists, keeps w, and drops z and n, which the checkpoint cannot show
// existed then (the original drops them too).
func TestRollbackQueue_OriginalCheckpointTakesBackItsActions(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(CheckpointsFile), `{"schema_version": "1.0.0", "checkpoints": [{"cycle": 6, "branch": "main", "commit_sha": "abc", "timestamp": "2026-04-14T05:00:00Z",
	  "state_snapshot": {"confidence": {"api": 0.8}, "action_queue_pending": [{"id": "x", "status": "pending"}, {"id": "y", "status": "pending"}]}}]}`)
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [{"id": "z", "extracted_at": "2026-04-14T06:00:00Z"}, {"id": "w", "extracted_at": "2026-04-01T06:00:00Z"}, {"id": "n"}],
	  "in_progress": [{"id": "x", "status": "in_progress", "pr_number": 7}, {"id": "v", "status": "in_progress"}],
	  "completed": [{"id": "y", "status": "merged"}, {"id": "old", "status": "merged"}]}`)
	snap := loadClean(t, s)
	cp, _ := snap.Checkpoints.Find(6)
	q, ok := cp.RestoreQueue(snap.ActionQueue)
	if !ok {
		t.Fatal("a snapshot with a queue restored none")
	}
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	lists, _ := queueLists(t, s)
	inOneList(t, lists, "x", "y", "w", "v", "old")
	want := map[string][]string{"pending": {"x", "y", "w"}, "in_progress": {"v"}, "completed": {"old"}}
	for name, ids := range want {
		if !slices.Equal(lists[name], ids) {
			t.Errorf("%s = %v, want %v", name, lists[name], ids)
		}
	}
}

// A checkpoint whose snapshot kept no queue leaves the queue as it is, and
// a mistyped action_queue_in_progress_ids is kept as written, not read.
func TestRollbackQueue_NoQueueAndMistypedIDs(t *testing.T) {
	var s Snapshotted
	const doc = `{"confidence": {"a": 1}, "action_queue_in_progress_ids": "ip"}`
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	cur := ActionQueue{Pending: []Action{{ID: "now"}}, InProgress: []Action{{ID: "ip"}}}
	q, ok := Checkpoint{StateSnapshot: s}.RestoreQueue(cur)
	if ok || fmt.Sprint(q.Pending, q.InProgress) != fmt.Sprint(cur.Pending, cur.InProgress) {
		t.Errorf("a snapshot without a queue changed it: %+v (restored %v)", q, ok)
	}
	if s.InProgressIDs != nil {
		t.Errorf("a string read as ids: %v", s.InProgressIDs)
	}
	b, err := json.Marshal(s)
	if err != nil || compactMetrics(t, b) != compactMetrics(t, []byte(doc)) {
		t.Errorf("snapshot written as %s (%v), want it as read", b, err)
	}
}
