package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// origCheckpoint is a checkpoint as the original writes it: a flat
// confidence and the pending actions under action_queue_pending.
const origCheckpoint = `{"cycle": 3, "branch": "main", "commit_sha": "0123456789abcdef0123456789abcdef01234567", "timestamp": "2026-03-01T09:00:00Z", "state_snapshot": {"confidence": {"fixer": 0.9}, "action_queue_pending": [{"id": "old", "title": "pending then", "rice_score": 12.0, "status": "pending"}]}}`

func compactBytes(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return buf.String()
}

// The checkpoints a cycle takes carry the pending actions under the key
// the original's rollback reads (action_queue_pending) as well as
// action_queue, and the original's own checkpoints are kept as written.
func TestCompatCheckpoint_CycleWritesActionQueuePending(t *testing.T) {
	dir := mergeProject(t, passedPR, nil)
	write(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), `{"schema_version": "1.0.0", "checkpoints": [`+origCheckpoint+`]}`)
	write(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), `{"pending": [{"id": "a1", "title": "keep me", "status": "pending"}], "in_progress": [], "completed": []}`)
	fg := &fakeForge{facts: goodFacts()}
	if res, out := runForge(t, dir, t0, fg); !res.AutoMerged {
		t.Fatalf("not merged\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/checkpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cps struct {
		Checkpoints []json.RawMessage `json:"checkpoints"`
	}
	if err := json.Unmarshal(b, &cps); err != nil || len(cps.Checkpoints) != 3 {
		t.Fatalf("checkpoints.json (%v):\n%s", err, b)
	}
	if got, want := compactBytes(t, cps.Checkpoints[0]), compactBytes(t, []byte(origCheckpoint)); got != want {
		t.Errorf("the original's checkpoint rewritten:\n%s\nwas\n%s", got, want)
	}
	for _, raw := range cps.Checkpoints[1:] {
		var cp struct {
			StateSnapshot struct {
				Queue   []map[string]any `json:"action_queue"`
				Pending []map[string]any `json:"action_queue_pending"`
			} `json:"state_snapshot"`
		}
		_ = json.Unmarshal(raw, &cp)
		s := cp.StateSnapshot
		if len(s.Pending) != 1 || s.Pending[0]["id"] != "a1" || len(s.Queue) != 1 || s.Queue[0]["id"] != "a1" {
			t.Errorf("ooda's checkpoint must carry the queue under both keys: %s", raw)
		}
	}
}

// Restoring the original's checkpoint in a cycle (the automatic rollback's
// restore) sets its flat scores in the nested confidence.json, keeping it
// nested, and restores its action_queue_pending; one without a queue
// leaves the queue alone.
func TestCompatCheckpoint_RestoreOriginalShape(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "agent/state/evolve/confidence.json"), `{"domains": {"fixer": {"score": 0.4, "merges": 2}, "docs": {"score": 0.6}}}`)
	write(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), `{"pending": [{"id": "now", "status": "pending"}], "in_progress": [], "completed": []}`)
	write(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), `{"checkpoints": [`+origCheckpoint+`, {"cycle": 4, "state_snapshot": {"confidence": {"fixer": 0.7}}}]}`)
	snap, err := state.New(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	c := &cycle{snap: snap, now: t0}
	cp, _ := snap.Checkpoints.Find(3)
	c.restoreCheckpoint(cp)
	if !c.snap.Confidence.Nested() {
		t.Fatal("confidence.json flattened by the restore")
	}
	b, _ := json.Marshal(c.snap.Confidence)
	var conf struct {
		Domains map[string]map[string]any `json:"domains"`
	}
	_ = json.Unmarshal(b, &conf)
	if conf.Domains["fixer"]["score"] != 0.9 || conf.Domains["fixer"]["merges"] != 2.0 || conf.Domains["docs"]["score"] != 0.6 {
		t.Errorf("restored confidence = %s", b)
	}
	if p := c.snap.ActionQueue.Pending; len(p) != 1 || p[0].ID != "old" || !c.restoredQueue {
		t.Errorf("pending = %+v (restored %v)", p, c.restoredQueue)
	}

	c = &cycle{snap: snap, now: t0}
	snap.ActionQueue.Pending = []state.Action{{ID: "now"}}
	cp, _ = snap.Checkpoints.Find(4)
	c.restoreCheckpoint(cp)
	if p := c.snap.ActionQueue.Pending; len(p) != 1 || p[0].ID != "now" || c.restoredQueue {
		t.Errorf("a checkpoint without a queue emptied or replaced it: %+v (restored %v)", p, c.restoredQueue)
	}
	if v, _ := c.snap.Confidence.Get("fixer"); v != 0.7 {
		t.Errorf("fixer = %v, want 0.7", v)
	}
}
