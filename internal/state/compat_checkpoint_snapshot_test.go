package state

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The original's checkpoint: a flat confidence and action_queue_pending.
// Its queue is read, and the checkpoint is written back as it was (key
// order, 12.0, unknown keys) when a new checkpoint is added.
func TestCompatCheckpoint_OriginalSnapshotReadAndKept(t *testing.T) {
	s := New(t.TempDir())
	const orig = `{"cycle": 42, "branch": "main", "commit_sha": "abc123", "timestamp": "2026-04-14T05:00:00Z", "state_snapshot": {"confidence": {"api": 0.8, "docs": 0.7}, "action_queue_pending": [{"id": "a1", "title": "t", "rice_score": 12.0, "origin": "kept"}], "note": 1}, "operator": "x"}`
	writeFile(t, s.EvolvePath(CheckpointsFile), `{"schema_version": "1.0.0", "checkpoints": [`+orig+`]}`)
	snap := loadClean(t, s)
	cp, ok := snap.Checkpoints.Find(42)
	if !ok {
		t.Fatal("checkpoint of cycle 42 not read")
	}
	q, has := cp.StateSnapshot.Queue()
	if !has || len(q) != 1 || q[0].ID != "a1" {
		t.Fatalf("action_queue_pending read as %+v (kept a list: %v)", q, has)
	}
	snap.Checkpoints.Add(Checkpoint{Cycle: 43, StateSnapshot: NewSnapshot([]byte(`{"api": 0.8}`), q)})
	if err := s.SaveCheckpoints(snap.Checkpoints); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Checkpoints []json.RawMessage `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(readString(t, s.EvolvePath(CheckpointsFile))), &out); err != nil || len(out.Checkpoints) != 2 {
		t.Fatalf("checkpoints.json: %v %d", err, len(out.Checkpoints))
	}
	if got, want := compactMetrics(t, out.Checkpoints[0]), compactMetrics(t, []byte(orig)); got != want {
		t.Errorf("the original's checkpoint rewritten:\n%s\nwas\n%s", got, want)
	}
	// ooda's new checkpoint carries the queue under both keys, once each.
	var mine struct {
		StateSnapshot map[string]json.RawMessage `json:"state_snapshot"`
	}
	_ = json.Unmarshal(out.Checkpoints[1], &mine)
	a, p := mine.StateSnapshot["action_queue"], mine.StateSnapshot["action_queue_pending"]
	if a == nil || p == nil || compactMetrics(t, a) != compactMetrics(t, p) || !strings.Contains(compactMetrics(t, p), `"id":"a1"`) {
		t.Errorf("ooda's snapshot = %s", out.Checkpoints[1])
	}
}

// A snapshot without a queue key restores no queue; an empty list is a
// queue (empty).
func TestCompatCheckpoint_SnapshotWithoutQueueRestoresNone(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"confidence": {"a": 1}}`:                        false,
		`{"confidence": {"a": 1}, "action_queue": null}`:  false,
		`{"confidence": {"a": 1}, "action_queue": []}`:    true,
		`{"action_queue_pending": [{"id": "x"}, "junk"]}`: true,
	} {
		var s Snapshotted
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if _, has := s.Queue(); has != want {
			t.Errorf("%s: kept a queue = %v, want %v", doc, has, want)
		}
	}
}

// A flat {domain: score} snapshot restored against a nested
// confidence.json sets the scores in it and keeps it nested, with every
// other field; a snapshot in the file's own shape is restored as it is.
func TestCompatCheckpoint_FlatConfidenceMergedIntoNested(t *testing.T) {
	var cur Confidence
	if err := json.Unmarshal([]byte(`{"schema_version": "1.0.0", "domains": {"api": {"score": 0.5, "merges": 3, "last_updated": "2026-04-01T00:00:00Z"}, "docs": {"score": 0.7, "last_updated": "2026-04-02T00:00:00Z"}}, "owner": "ops"}`), &cur); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)
	var s Snapshotted
	_ = json.Unmarshal([]byte(`{"confidence": {"api": 0.8, "docs": 0.7}}`), &s)
	conf, exact, ok := s.RestoreConfidence(cur, now)
	if !ok || exact {
		t.Fatalf("ok %v exact %v", ok, exact)
	}
	b, _ := json.Marshal(conf)
	var out struct {
		Domains map[string]map[string]any `json:"domains"`
		Owner   string                    `json:"owner"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Domains == nil {
		t.Fatalf("confidence flattened: %s", b)
	}
	api, docs := out.Domains["api"], out.Domains["docs"]
	if api["score"] != 0.8 || api["merges"] != 3.0 || api["last_updated"] != FormatTime(now) || out.Owner != "ops" {
		t.Errorf("api = %v, owner %q: %s", api, out.Owner, b)
	}
	if docs["score"] != 0.7 || docs["last_updated"] != "2026-04-02T00:00:00Z" {
		t.Errorf("docs, unchanged by the snapshot, was rewritten: %v", docs)
	}
	if v, _ := cur.Get("api"); v != 0.5 {
		t.Errorf("the current confidence was changed in place: %v", v)
	}

	_ = json.Unmarshal([]byte(`{"confidence": {"domains": {"api": {"score": 0.9}}}}`), &s)
	if conf, exact, ok := s.RestoreConfidence(cur, now); !ok || !exact || !conf.Nested() {
		t.Errorf("a nested snapshot against a nested file: exact %v ok %v", exact, ok)
	}
	_ = json.Unmarshal([]byte(`{"confidence": null}`), &s)
	if _, _, ok := s.RestoreConfidence(cur, now); ok {
		t.Error("a snapshot without confidence restored one")
	}
}
