package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// queueIDs is the ids of each list of action_queue.json, in order.
func queueIDs(q doc) map[string][]string {
	lists := map[string][]string{}
	for _, name := range []string{"pending", "in_progress", "completed"} {
		lists[name] = []string{}
		for _, item := range q.list(name) {
			lists[name] = append(lists[name], str(field(item, "id")))
		}
	}
	return lists
}

// eachInOneList fails unless every id of want is in exactly one list of
// action_queue.json and no other id is in any.
func eachInOneList(t *testing.T, q doc, want ...string) {
	t.Helper()
	lists := queueIDs(q)
	where := map[string][]string{}
	for name, ids := range lists {
		for _, id := range ids {
			where[id] = append(where[id], name)
		}
	}
	for _, id := range want {
		if len(where[id]) != 1 {
			t.Errorf("action %s is in %v after the rollback, want exactly one list\n%s", id, where[id], compact(q.raw))
		}
		delete(where, id)
	}
	for id, in := range where {
		t.Errorf("action %s (in %v) is not one the rollback should leave\n%s", id, in, compact(q.raw))
	}
}

// rollbackProject is a fixture in a git repository, any checkpoint in it
// naming the repository's HEAD.
func rollbackProject(t *testing.T, name string) string {
	t.Helper()
	dir := fixture(t, name)
	head := gitInit(t, dir)
	p := filepath.Join(dir, evolve, "checkpoints.json")
	if b, err := os.ReadFile(p); err == nil {
		writeFile(t, p, bytes.ReplaceAll(b, []byte("COMMIT"), []byte(head)))
	}
	return dir
}

// An action the original's implementation skill marked in progress inside
// pending[] is in the checkpoint a cycle takes, as the file has it, under
// both keys; the cycle's hygiene requeues it (and the stalled one of
// in_progress[]); `ooda config rollback` of that cycle then puts the
// file's pending[] back as it was, and no action is lost or in two lists.
func TestCompat_RollbackKeepsAnActionMarkedInProgressInsidePending(t *testing.T) {
	dir := rollbackProject(t, "rollback-in-pending")
	before := load(t, dir, evolve+"/action_queue.json")
	marked := before.list("pending")[0]
	res, out := completed(t, dir, t0, nil)
	continues(t, dir, res, 11)

	var cps struct {
		Checkpoints []struct {
			Cycle         int                        `json:"cycle"`
			StateSnapshot map[string]json.RawMessage `json:"state_snapshot"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal(load(t, dir, evolve+"/checkpoints.json").raw, &cps); err != nil || len(cps.Checkpoints) != 1 || cps.Checkpoints[0].Cycle != 12 {
		t.Fatalf("no checkpoint of cycle 12 (%v)\n%s", err, out)
	}
	for _, key := range []string{"action_queue_pending", "action_queue"} {
		var kept []json.RawMessage
		_ = json.Unmarshal(cps.Checkpoints[0].StateSnapshot[key], &kept)
		sameEntries(t, "state_snapshot."+key, before.list("pending"), kept)
		if len(kept) != 2 {
			t.Errorf("state_snapshot.%s = %s, want what pending[] held", key, cps.Checkpoints[0].StateSnapshot[key])
		}
	}
	if got := queueIDs(load(t, dir, evolve+"/action_queue.json"))["pending"]; !slices.Contains(got, "2026-04-10-001") || !slices.Contains(got, "2026-04-11-003") {
		t.Fatalf("the cycle did not requeue the stalled actions (pending %v); the rollback below would not test them\n%s", got, out)
	}

	rollback(t, dir, "12")
	q := load(t, dir, evolve+"/action_queue.json")
	eachInOneList(t, q, "2026-04-10-001", "2026-04-12-002", "2026-04-11-003", "2026-04-01-004")
	pending := q.list("pending")
	if len(pending) != 3 || compact(pending[0]) != compact(marked) || str(field(pending[1], "id")) != "2026-04-12-002" || str(field(pending[2], "id")) != "2026-04-11-003" {
		t.Errorf("pending = %s, want the checkpoint's list (the marked action as the file had it), then the action in progress at the checkpoint", q.at("pending"))
	}
	sameEntries(t, "completed", before.list("completed"), q.list("completed"))
}

// The original's checkpoint holds two actions as pending: one in progress
// since, one merged since. Rolling back to it puts both back in pending
// and only there, keeps the action extracted before the checkpoint that
// was requeued since, leaves what it does not hold where it is, and drops
// the action extracted after it, as the original does.
func TestCompat_RollbackToTheOriginalsCheckpointLeavesEachActionInOneList(t *testing.T) {
	dir := rollbackProject(t, "rollback-original")
	before := load(t, dir, evolve+"/action_queue.json")
	rollback(t, dir, "6")
	q := load(t, dir, evolve+"/action_queue.json")
	eachInOneList(t, q, "a-back", "a-merged", "a-requeued", "a-old")
	want := map[string][]string{"pending": {"a-back", "a-merged", "a-requeued"}, "in_progress": {}, "completed": {"a-old"}}
	for name, ids := range queueIDs(q) {
		if !slices.Equal(ids, want[name]) {
			t.Errorf("%s = %v, want %v", name, ids, want[name])
		}
	}
	sameEntries(t, "pending (the requeued action)", before.list("pending")[1:], q.list("pending")[2:])
	sameEntries(t, "completed", before.list("completed")[1:], q.list("completed"))
}

// Rolling back to the original's checkpoint, whose flat confidence holds
// only some scores, sets them in the flat confidence.json: its
// schema_version, its other scores and its key order stay.
func TestCompat_RollbackSetsFlatScoresInAFlatConfidenceFile(t *testing.T) {
	dir := rollbackProject(t, "rollback-original")
	rollback(t, dir, "6")
	got := compact(load(t, dir, evolve+"/confidence.json").raw)
	if want := `{"schema_version":"1.0.0","service_health":0.9,"test_coverage":0.5,"backlog":0.7}`; got != want {
		t.Errorf("confidence.json after the rollback:\n%s\nwant\n%s", got, want)
	}
}
