package compat

import (
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
)

// Strict "nothing lost" checks: every entry ooda did not change is
// written back byte for byte (whitespace aside), with its key order,
// number spelling, nulls and empty lists, and no key added. The value
// form of these checks runs in shapes_test.go.

func TestCompatStrict_DecisionLogEntriesKeptAsWritten(t *testing.T) {
	for _, name := range []string{"changelog-design", "prs-processed"} {
		dir := fixture(t, name)
		before := load(t, dir, evolve+"/state.json").list("decision_log")
		completed(t, dir, t0, &fakeForge{})
		sameEntries(t, name+" decision_log", before, load(t, dir, evolve+"/state.json").list("decision_log"))
	}
}

func TestCompatStrict_ActionQueueItemsKeptAsWritten(t *testing.T) {
	dir := fixture(t, "queue-in-pending")
	before := load(t, dir, evolve+"/action_queue.json")
	completed(t, dir, t0, nil)
	after := load(t, dir, evolve+"/action_queue.json")
	sameEntries(t, "completed", before.list("completed"), after.list("completed"))
	old := byID(before.list("pending"), "id")
	for id, p := range byID(after.list("pending"), "id") {
		changed := []string{"effective_rice"}
		if id == "2026-04-10-001" {
			changed = append(changed, "status", "status_history")
		}
		_, dropped, _, added := diffKeys(old[id], p, changed...)
		if len(dropped) > 0 || len(added) > 0 {
			t.Errorf("pending[%s]: empty keys dropped %v, keys added %v", id, dropped, added)
		}
	}
}

func TestCompatStrict_MemosEntriesKeptAsWritten(t *testing.T) {
	dir := fixture(t, "interventions")
	before := load(t, dir, evolve+"/memos.json")
	completed(t, dir, t0, nil)
	after := load(t, dir, evolve+"/memos.json")
	sameEntries(t, "interventions", before.list("interventions"), after.list("interventions"))
	sameEntries(t, "history", before.list("history"), after.list("history"))
}

func TestCompatStrict_EntriesKeptByteForByte(t *testing.T) {
	dir := fixture(t, "cost-ledger-ids")
	before := load(t, dir, evolve+"/cost_ledger.json")
	completed(t, dir, t0, nil)
	sameEntries(t, "cost_ledger entries", before.list("entries"), load(t, dir, evolve+"/cost_ledger.json").list("entries"))

	dir = fixture(t, "principles-weeks")
	p, e := load(t, dir, evolve+"/principles.json"), load(t, dir, evolve+"/episodes.json")
	completed(t, dir, t0, nil)
	completed(t, dir, t0.Add(time.Hour), &fakeForge{status: forge.Status{}})
	sameEntries(t, "principles", p.list("principles"), load(t, dir, evolve+"/principles.json").list("principles"))
	sameEntries(t, "episodes", e.list("episodes"), load(t, dir, evolve+"/episodes.json").list("episodes"))
}
