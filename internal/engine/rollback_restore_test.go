package engine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// restoreFrom loads the state of dir and restores its checkpoint of cycle
// as the automatic rollback does.
func restoreFrom(t *testing.T, dir string, cycleN int) *cycle {
	t.Helper()
	snap, err := state.New(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	cp, ok := snap.Checkpoints.Find(cycleN)
	if !ok {
		t.Fatalf("no checkpoint of cycle %d", cycleN)
	}
	c := &cycle{snap: snap, now: t0}
	c.restoreCheckpoint(cp)
	return c
}

// The automatic rollback restoring the original's flat snapshot, which
// holds only some scores, into a flat confidence.json sets them in it:
// schema_version, the other scores and the key order stay.
func TestRollbackRestore_FlatSnapshotKeepsTheFlatFilesKeys(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "agent/state/evolve/confidence.json"), `{"schema_version":"1.0.0","service_health":0.54,"test_coverage":0.74,"backlog":0.7}`)
	write(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), `{"checkpoints": [{"cycle": 6, "timestamp": "2026-04-14T05:00:00Z", "state_snapshot": {"confidence": {"service_health": 0.9, "test_coverage": 0.5}}}]}`)
	c := restoreFrom(t, dir, 6)
	if !c.restoredConfidence {
		t.Fatal("confidence not restored")
	}
	b, err := json.Marshal(c.snap.Confidence)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := compactBytes(t, b), `{"schema_version":"1.0.0","service_health":0.9,"test_coverage":0.5,"backlog":0.7}`; got != want {
		t.Errorf("confidence.json the rollback writes:\n%s\nwant\n%s", got, want)
	}
}

// The automatic rollback restoring a checkpoint whose pending actions
// have moved on since (one in progress, one merged) leaves each of them
// in pending only; an action that was in progress at the checkpoint and
// has been requeued since stays pending.
func TestRollbackRestore_EachActionInOneList(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), `{"checkpoints": [{"cycle": 6, "timestamp": "2026-04-14T05:00:00Z",
	  "state_snapshot": {"confidence": null, "action_queue": [{"id": "x"}, {"id": "y"}], "action_queue_pending": [{"id": "x"}, {"id": "y"}], "action_queue_in_progress_ids": ["r"]}}]}`)
	write(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), `{"pending": [{"id": "r", "status": "pending"}, {"id": "added", "status": "pending"}],
	  "in_progress": [{"id": "x", "status": "in_progress", "pr_number": 4}], "completed": [{"id": "y", "status": "merged"}]}`)
	c := restoreFrom(t, dir, 6)
	if !c.restoredQueue {
		t.Fatal("queue not restored")
	}
	ids := func(l []state.Action) []string {
		out := []string{}
		for _, a := range l {
			out = append(out, a.ID)
		}
		return out
	}
	q := c.snap.ActionQueue
	if p, i, d := ids(q.Pending), ids(q.InProgress), ids(q.Completed); !slices.Equal(p, []string{"x", "y", "r"}) || len(i) != 0 || len(d) != 0 {
		t.Errorf("after the rollback pending %v, in_progress %v, completed %v; want pending [x y r] and nothing else", p, i, d)
	}
}
