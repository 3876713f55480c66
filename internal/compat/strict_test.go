package compat

import (
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
)

// Strict "nothing lost" checks: every entry ooda did not change is
// written back byte for byte (whitespace aside), with its key order,
// number spelling, nulls and empty lists, and no key added. The value
// form of these checks runs in shapes_test.go; the strict form is
// skipped where today's ooda falls short, naming the gap.

func TestCompatStrict_DecisionLogEntriesKeptAsWritten(t *testing.T) {
	knownGap(t, `state.json decision_log: the original's entries are re-encoded through ooda's type — keys reordered and "chain_count": 0 added to every old entry`)
	for _, name := range []string{"changelog-design", "prs-processed"} {
		dir := fixture(t, name)
		before := load(t, dir, evolve+"/state.json").list("decision_log")
		completed(t, dir, t0, &fakeForge{})
		sameEntries(t, name+" decision_log", before, load(t, dir, evolve+"/state.json").list("decision_log"))
	}
}

func TestCompatStrict_ActionQueueItemsKeptAsWritten(t *testing.T) {
	knownGap(t, `action_queue.json: every item is re-encoded when the queue is written — 75.0 becomes 75, "decay_applied": 0.0 becomes 0, "pr_number": null and "related_files": [] are dropped, keys reordered — including completed items ooda did not touch`)
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
	knownGap(t, `memos.json: interventions and history entries are re-encoded — "delta": -10.0 becomes -10, 1.0 becomes 1, and history entries' keys are reordered (timestamp first) — even on a cycle that applied none of them`)
	dir := fixture(t, "interventions")
	before := load(t, dir, evolve+"/memos.json")
	completed(t, dir, t0, nil)
	after := load(t, dir, evolve+"/memos.json")
	sameEntries(t, "interventions", before.list("interventions"), after.list("interventions"))
	sameEntries(t, "history", before.list("history"), after.list("history"))
}

// Checked strictly and passing today: kept here so a regression is seen.
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
