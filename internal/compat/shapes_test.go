package compat

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
)

// The state design's CHANGELOG layout: a preamble, `## Cycle #N — …`
// entries closed by `---`. The next cycle continues at #4, its entry goes
// directly above #3, and the preamble and old entries stay as written.
func TestCompat_ChangelogStateDesignLayout(t *testing.T) {
	dir := fixture(t, "changelog-design")
	before := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	st := load(t, dir, evolve+"/state.json")
	res, _ := completed(t, dir, t0, nil)
	continues(t, dir, res, 3)

	after := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	head, rest, _ := strings.Cut(before, "## Cycle #3")
	if !strings.HasPrefix(after, head) {
		t.Errorf("the original's preamble was changed:\n%s", after)
	}
	i4, i3 := strings.Index(after, "## Cycle #4"), strings.Index(after, "## Cycle #3")
	if i4 < len(head) || i3 < i4 {
		t.Fatalf("the new entry must sit directly above #3, below the preamble:\n%s", after)
	}
	if after[i3:] != "## Cycle #3"+rest {
		t.Errorf("old entries were rewritten:\n%s", after[i3:])
	}
	entry := after[i4:i3]
	if !strings.HasSuffix(entry, "\n---\n\n") || !strings.Contains(entry, "**Result**: success") {
		t.Errorf("new entry must use the file's --- separator and the original's result word:\n%s", entry)
	}
	if strings.Count(after, "## Cycle #") != 3 {
		t.Errorf("one entry per cycle:\n%s", after)
	}

	// state.json: the original's decision-log entries and unknown keys kept.
	now := load(t, dir, evolve+"/state.json")
	keptEntries(t, "state.json decision_log", st.list("decision_log"), now.list("decision_log"))
	if compact(now.at("operator_flags")) != compact(st.at("operator_flags")) {
		t.Errorf("unknown key operator_flags = %s", now.at("operator_flags"))
	}
	if n := len(now.list("decision_log")); n != 3 {
		t.Errorf("decision_log has %d entries, want 3 (2 kept + 1 new)", n)
	}
}

// The original's 6-C3 layout: `# CHANGELOG`, `## Cycle #N -- …` entries
// separated by blank lines, and an operator's section below them.
func TestCompat_ChangelogSixC3LayoutWithOperatorSection(t *testing.T) {
	dir := fixture(t, "changelog-6c3")
	before := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	res, _ := completed(t, dir, t0, nil)
	continues(t, dir, res, 2)
	after := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	if !strings.HasPrefix(after, "# CHANGELOG\n\n## Cycle #3 -- ") {
		t.Fatalf("new entry must open the list, under the header:\n%s", after)
	}
	_, rest, _ := strings.Cut(before, "## Cycle #2")
	if !strings.HasSuffix(after, "## Cycle #2"+rest) {
		t.Errorf("old entries and the operator section must be kept byte for byte:\n%s", after)
	}
	if !strings.Contains(after, "## Operator notes\n\nRuns paused over the weekend; do not remove this section.\n") {
		t.Errorf("operator section lost:\n%s", after)
	}
}

// cost_ledger.json with the original's loosely typed cycle ids: "6",
// "#7" and null. Nothing halts, the cycle after #7 is #8, no synthetic
// entry is backfilled for cycles the ledger already covers, every old
// entry is kept as written and the total is the sum of the entries
// (counted once).
func TestCompat_CostLedgerStringAndNullCycleIDs(t *testing.T) {
	dir := fixture(t, "cost-ledger-ids")
	before := load(t, dir, evolve+"/cost_ledger.json")
	res, out := completed(t, dir, t0, nil)
	continues(t, dir, res, 7)
	if res.HaltCreated || strings.Contains(out, "corrupt") && strings.Contains(out, "cost_ledger") && strings.Contains(out, "HALT") {
		t.Fatalf("the ledger must not fail closed:\n%s", out)
	}
	after := load(t, dir, evolve+"/cost_ledger.json")
	entries := after.list("entries")
	sameEntries(t, "cost_ledger.json entries", before.list("entries"), entries)
	if len(entries) != 5 {
		t.Fatalf("entries = %d, want the 4 original ones + cycle 8's:\n  %s", len(entries), joinCompact(entries))
	}
	last := entries[4]
	if compact(field(last, "cycle_id")) != "8" {
		t.Errorf("new entry cycle_id = %s, want 8", field(last, "cycle_id"))
	}
	for _, e := range entries {
		if compact(field(e, "synthetic")) == "true" {
			t.Errorf("a synthetic entry was backfilled although cycles 5-7 are all in the ledger: %s", compact(e))
		}
	}
	var sum float64
	for _, e := range entries {
		var f float64
		_ = json.Unmarshal(field(e, "estimated_usd"), &f)
		sum += f
	}
	total, _ := after.num("total_estimated_usd")
	if math.Abs(total-sum) > 1e-9 {
		t.Errorf("total_estimated_usd = %v, want the sum of the entries %v (nothing counted twice, nothing dropped)", total, sum)
	}
	if after.at("date") == nil || str(after.at("date")) != "2026-04-14" {
		t.Errorf("date = %s", after.at("date"))
	}
}

// An action the original's implementation skill marked in place
// ("status": "in_progress" inside pending[]) with no pull request has
// stalled: it is requeued, not decayed or lost; the other items and every
// unknown key stay as they were.
func TestCompat_ActionQueueInProgressInsidePending(t *testing.T) {
	dir := fixture(t, "queue-in-pending")
	before := load(t, dir, evolve+"/action_queue.json")
	res, _ := completed(t, dir, t0, nil)
	continues(t, dir, res, 11)
	after := load(t, dir, evolve+"/action_queue.json")
	if compact(after.at("queue_owner")) != `"implementation"` || compact(after.at("schema_version")) != `"1.0.0"` {
		t.Errorf("top-level keys lost: %s", after.raw)
	}
	pend := byID(after.list("pending"), "id")
	old := byID(before.list("pending"), "id")
	stalled, ok := pend["2026-04-10-001"]
	if !ok {
		t.Fatalf("the stalled in-progress item must be back in pending:\n%s", after.raw)
	}
	if str(field(stalled, "status")) != "pending" {
		t.Errorf("requeued item status = %s", field(stalled, "status"))
	}
	keysKept(t, "pending[2026-04-10-001]", old["2026-04-10-001"], stalled, "status", "status_history", "effective_rice")
	if n := len(after.list("in_progress")); n != 0 {
		t.Errorf("in_progress = %d items, want 0 after the requeue", n)
	}
	other, ok := pend["2026-04-12-002"]
	if !ok {
		t.Fatalf("pending item lost:\n%s", after.raw)
	}
	keysKept(t, "pending[2026-04-12-002]", old["2026-04-12-002"], other, "effective_rice")
	keptEntries(t, "action_queue.json completed", before.list("completed"), after.list("completed"))
	if len(pend) != 2 || len(after.list("completed")) != 1 {
		t.Errorf("items appeared or vanished:\n%s", after.raw)
	}
	memos := load(t, dir, evolve+"/memos.json")
	found := false
	for _, m := range memos.list("history") {
		if str(field(m, "type")) == "action_requeued" && strings.Contains(string(m), "2026-04-10-001") {
			found = true
		}
	}
	if !found {
		t.Errorf("no action_requeued memo for the stalled item:\n%s", memos.raw)
	}
	// The cycle wrote a memo: its decision-log entry says so and
	// last_memo is that memo, as the original's readers expect; and
	// prs_processed is an empty list, as the original writes it.
	if lm := memos.at("last_memo"); !strings.Contains(str(lm), "2026-04-10-001") {
		t.Errorf("last_memo = %s, want the action_requeued memo's text", compact(lm))
	}
	log := load(t, dir, evolve+"/state.json").list("decision_log")
	e := log[len(log)-1]
	if compact(field(e, "memo_written")) != "true" || compact(field(e, "prs_processed")) != "[]" {
		t.Errorf("memo_written %s, prs_processed %s; want true and []", field(e, "memo_written"), field(e, "prs_processed"))
	}
}

// The legacy queue shapes — a plain array, and {"actions": [...]} — are
// read item by item, not reset: an item marked in_progress with no pull
// request has stalled and is requeued (which makes this cycle write the
// queue), open items stay pending, finished ones go to completed, and
// every item keeps its keys, unknown ones included.
func TestCompat_ActionQueueLegacyShapes(t *testing.T) {
	for _, tc := range []struct {
		fixture                   string
		count                     int
		list                      func(doc) []json.RawMessage
		open, stalled, finishedID string
	}{
		{"queue-array", 4, func(d doc) []json.RawMessage { return d.list() }, "2026-04-12-001", "2026-04-11-003", "2026-04-02-002"},
		{"queue-actions", 6, func(d doc) []json.RawMessage { return d.list("actions") }, "a-1", "a-3", "a-2"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := fixture(t, tc.fixture)
			before := load(t, dir, evolve+"/action_queue.json")
			res, out := completed(t, dir, t0, nil)
			continues(t, dir, res, tc.count)
			after := load(t, dir, evolve+"/action_queue.json")
			old := byID(tc.list(before), "id")
			pend := byID(after.list("pending"), "id")
			done := byID(after.list("completed"), "id")
			for _, id := range []string{tc.open, tc.stalled} {
				p, ok := pend[id]
				if !ok {
					t.Fatalf("item %s not in pending:\n%s\n%s", id, after.raw, out)
				}
				keysKept(t, "pending["+id+"]", old[id], p, "effective_rice", "status", "status_history")
				if str(field(p, "status")) != "pending" {
					t.Errorf("pending[%s].status = %s", id, field(p, "status"))
				}
			}
			c, ok := done[tc.finishedID]
			if !ok {
				t.Fatalf("finished item %s not in completed:\n%s", tc.finishedID, after.raw)
			}
			keysKept(t, "completed["+tc.finishedID+"]", old[tc.finishedID], c)
			if len(pend)+len(done)+len(after.list("in_progress")) != len(old) {
				t.Errorf("items appeared or vanished:\n%s", after.raw)
			}
		})
	}
}

// principles.json in both of the original's shapes, and episodes that
// carry week_year and no id. A principle confirmed last week does not
// decay; W15's episode exists, so no duplicate is written and no id is
// added; every entry stays as written.
func TestCompat_PrinciplesBothShapesAndWeekYearEpisodes(t *testing.T) {
	dir := fixture(t, "principles-weeks")
	pBefore := load(t, dir, evolve+"/principles.json")
	eBefore := load(t, dir, evolve+"/episodes.json")
	res, out := completed(t, dir, t0, nil)
	continues(t, dir, res, 9)
	pAfter := load(t, dir, evolve+"/principles.json")
	eAfter := load(t, dir, evolve+"/episodes.json")
	if n := len(eAfter.list("episodes")); n != 2 {
		t.Fatalf("episodes = %d, want 2 (W15 was already summarised):\n%s\n%s", n, eAfter.raw, out)
	}
	sameEntries(t, "episodes.json episodes", eBefore.list("episodes"), eAfter.list("episodes"))
	for i, e := range eAfter.list("episodes") {
		if field(e, "id") != nil {
			t.Errorf("episodes[%d] gained an id: %s", i, compact(e))
		}
	}
	if n := len(pAfter.list("principles")); n != 2 {
		t.Fatalf("principles = %d, want 2:\n%s", n, pAfter.raw)
	}
	sameEntries(t, "principles.json principles", pBefore.list("principles"), pAfter.list("principles"))
	// A second cycle the same week changes nothing either.
	completed(t, dir, t0.Add(time.Hour), nil)
	sameEntries(t, "principles.json principles (2nd cycle)", pBefore.list("principles"), load(t, dir, evolve+"/principles.json").list("principles"))
	if n := len(load(t, dir, evolve+"/episodes.json").list("episodes")); n != 2 {
		t.Errorf("episodes after a second cycle = %d, want 2", n)
	}
}

// prs_processed the original wrote (PR 12 merged, PR "#11" rejected) is
// never counted again, although the forge still lists both: confidence
// stays where the original left it and the entries stay as written.
func TestCompat_PRsProcessedNotCountedTwice(t *testing.T) {
	dir := fixture(t, "prs-processed")
	st := load(t, dir, evolve+"/state.json")
	fg := &fakeForge{status: forge.Status{
		Merged: []forge.PR{{Number: 12, HeadRef: "auto/check-tests/cover-x", State: forge.StateMerged, Merged: t0.Add(-4 * time.Hour)}},
		Closed: []forge.PR{{Number: 11, HeadRef: "auto/scan-health/fix-y", State: forge.StateClosed, Closed: t0.Add(-6 * time.Hour)}},
	}}
	res, out := completed(t, dir, t0, fg)
	continues(t, dir, res, 9)
	if strings.Contains(out, "PR #12") || strings.Contains(out, "PR #11") {
		t.Errorf("a PR the original counted moved a confidence again:\n%s", out)
	}
	conf := load(t, dir, evolve+"/confidence.json")
	for d, want := range map[string]float64{"service_health": 0.7, "test_coverage": 0.8, "backlog": 0.7} {
		if got, ok := conf.num(d); !ok || got != want {
			t.Errorf("confidence %s = %v, want %v (unchanged)", d, got, want)
		}
	}
	keptEntries(t, "state.json decision_log", st.list("decision_log"), load(t, dir, evolve+"/state.json").list("decision_log"))
	// And again on the next cycle.
	_, out = completed(t, dir, t0.Add(time.Hour), fg)
	if strings.Contains(out, "PR #12") || strings.Contains(out, "PR #11") {
		t.Errorf("counted on the second cycle:\n%s", out)
	}
	if got, _ := load(t, dir, evolve+"/confidence.json").num("test_coverage"); got != 0.8 {
		t.Errorf("test_coverage = %v after two cycles, want 0.8", got)
	}
}

// The original's interventions count down only when the scorer applied
// them: a cycle decided by a critical alert leaves them as written; the
// next, scored cycle applies both, drops the one-cycle breaker and counts
// the contrarian boost down, keeping its dominant_domain and unknown keys.
func TestCompat_InterventionsCountDownOnlyWhenApplied(t *testing.T) {
	dir := fixture(t, "interventions")
	before := load(t, dir, evolve+"/memos.json")
	res, out := completed(t, dir, t0, nil)
	continues(t, dir, res, 5)
	if res.Decision == nil || res.Decision.Scored || res.Decision.Winner == nil || res.Decision.Winner.Domain != "backlog" {
		t.Fatalf("a critical alert in backlog decides the cycle without scoring: %+v\n%s", res.Decision, out)
	}
	mid := load(t, dir, evolve+"/memos.json")
	keptEntries(t, "memos.json interventions", before.list("interventions"), mid.list("interventions"))
	keptEntries(t, "memos.json history", before.list("history"), mid.list("history"))
	if len(mid.list("interventions")) != 2 {
		t.Fatalf("interventions after an unscored cycle:\n%s", mid.raw)
	}

	// The alert clears; the next cycle scores.
	writeFile(t, dir+"/agent/state/backlog.json", []byte(`{"status": "healthy", "alerts": []}`))
	res, out = completed(t, dir, t0.Add(time.Hour), nil)
	continues(t, dir, res, 6)
	if !res.Decision.Scored {
		t.Fatalf("second cycle must score:\n%s", out)
	}
	for _, o := range res.Decision.Options {
		if o.Domain == "service_health" && o.Memo != -10 || o.Domain == "test_coverage" && o.Memo != 1 {
			t.Errorf("%s memo term = %v", o.Domain, o.Memo)
		}
	}
	after := load(t, dir, evolve+"/memos.json")
	ivs := after.list("interventions")
	if len(ivs) != 1 {
		t.Fatalf("the applied one-cycle breaker must be gone:\n%s", after.raw)
	}
	old := before.list("interventions")[1]
	keysKept(t, "interventions[contrarian]", old, ivs[0], "expires_after_cycles", "applied_count")
	if compact(field(ivs[0], "expires_after_cycles")) != "2" || compact(field(ivs[0], "applied_count")) != "1" {
		t.Errorf("contrarian after one application = %s", compact(ivs[0]))
	}
	keptEntries(t, "memos.json history", before.list("history"), after.list("history"))
}

// scoring.rice_extensions in the original's object form ({"weight": w})
// mixed with the number form: rice = 100 × (1 + 1×0.5 + 0.5×2) = 250;
// an unconfigured label counts for nothing; config.json is not rewritten.
func TestCompat_RiceExtensionsObjectForm(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/rice-extensions/config.json", dir+"/config.json")
	copyFile(t, "testdata/rice-extensions/report.sh", dir+"/report.sh")
	cfg := readFile(t, dir, "config.json")
	res, out := completed(t, dir, t0, nil)
	if res.Cycle != 1 {
		t.Fatalf("cycle %d", res.Cycle)
	}
	q := load(t, dir, evolve+"/action_queue.json")
	pend := q.list("pending")
	if len(pend) != 1 {
		t.Fatalf("pending = %s\n%s", q.raw, out)
	}
	if got := compact(field(pend[0], "rice_score")); got != "250" {
		t.Errorf("rice_score = %s, want 250", got)
	}
	if string(readFile(t, dir, "config.json")) != string(cfg) {
		t.Errorf("config.json was rewritten")
	}
}
