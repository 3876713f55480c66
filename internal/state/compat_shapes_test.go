package state_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// compatStore is a project whose evolve directory holds the given files.
func compatStore(t *testing.T, files map[string]string) *state.Store {
	t.Helper()
	s := state.New(t.TempDir())
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(s.EvolvePath(name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// rawEntries returns a ledger file's entries, each compacted, so that two
// files can be compared entry by entry whatever their indentation.
func rawEntries(t *testing.T, b []byte) []string {
	t.Helper()
	var doc struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("ledger is not JSON: %v\n%s", err, b)
	}
	out := make([]string, len(doc.Entries))
	for i, e := range doc.Entries {
		var c bytes.Buffer
		if err := json.Compact(&c, e); err != nil {
			t.Fatal(err)
		}
		out[i] = c.String()
	}
	return out
}

// A ledger the original project wrote with string and null cycle ids.
const mixedLedger = `{
  "schema_version": "1.0.0",
  "date": "2026-04-19",
  "entries": [
    { "cycle_id": 37, "timestamp": "2026-04-19T00:00:00Z", "skill": "/scan-health", "chain": [], "estimated_usd": 0.02 },
    { "cycle_id": "38", "timestamp": "2026-04-19T06:00:00Z", "skill": "/check-tests", "chain": [], "estimated_usd": 0.05, "note": "x" },
    { "cycle_id": null, "timestamp": "2026-04-19T07:00:00Z", "skill": "/manual", "chain": [], "estimated_usd": 0.5, "reason": "run by hand" },
    { "cycle_id": "#39", "timestamp": "2026-04-19T12:00:00Z", "skill": "/plan-backlog", "chain": [], "estimated_usd": 0.01 },
    { "cycle_id": "soon", "timestamp": "2026-04-19T13:00:00Z", "skill": "/x", "chain": [], "estimated_usd": 0.01 },
    { "timestamp": "2026-04-19T14:00:00Z", "skill": "/y", "chain": [], "estimated_usd": 0.01 }
  ],
  "total_estimated_usd": 0.6
}
`

// A cycle_id that is a string or null must not fail the ledger closed
// (HALT) nor be read as cycle 0: "38" and "#39" are those cycles, the
// others are set aside, and each is reported with its JSON path and value.
func TestCompatLedger_StringAndNullCycleIDsAreReadNotHalted(t *testing.T) {
	s := compatStore(t, map[string]string{state.CostLedgerFile: mixedLedger,
		state.StateFile: `{"cycle_count": 39, "decision_log": []}`})
	snap, err := s.Load()
	if err != nil {
		t.Fatalf("Load: %v (a ledger with string or null cycle ids must not fail closed)", err)
	}
	l := snap.CostLedger
	if l == nil {
		t.Fatal("ledger not read")
	}
	var ids []int
	for _, e := range l.Entries {
		ids = append(ids, e.CycleID)
	}
	if want := []int{37, 38, 39}; !equalInts(ids, want) {
		t.Errorf("cycle ids counted = %v, want %v", ids, want)
	}
	if got := l.AsideEntries(); got != 3 {
		t.Errorf("entries set aside = %d, want 3 (null, \"soon\", missing)", got)
	}
	warns := strings.Join(l.DecodeWarnings(), "\n")
	for _, want := range []string{
		`/entries/1/cycle_id: "38" is not an integer; read as cycle 38`,
		`/entries/2/cycle_id: null is not a cycle number`,
		`/entries/3/cycle_id: "#39" is not an integer; read as cycle 39`,
		`/entries/4/cycle_id: "soon" is not a cycle number`,
		`/entries/5/cycle_id: cycle_id is missing`,
	} {
		if !strings.Contains(warns, want) {
			t.Errorf("warnings lack %q:\n%s", want, warns)
		}
	}
	// What the cap sees: the file's total, which includes the entries set
	// aside.
	if got := record.Spent(*l); got < 0.6 {
		t.Errorf("spent = %v, want at least the file's 0.6", got)
	}
}

// The integrity gate (6-C8) must not take a null cycle_id for cycle 0 and
// backfill every cycle from 0: before, a null decoded as 0 silently.
func TestCompatLedger_NullCycleIDNeverBackfillsFromZero(t *testing.T) {
	ledger := `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [
	  {"cycle_id": null, "timestamp": "2026-04-19T00:00:00Z", "skill": "/scan-health", "chain": [], "estimated_usd": 0.02},
	  {"cycle_id": 38, "timestamp": "2026-04-19T06:00:00Z", "skill": "/check-tests", "chain": [], "estimated_usd": 0.05},
	  {"cycle_id": "39", "timestamp": "2026-04-19T12:00:00Z", "skill": "/plan-backlog", "chain": [], "estimated_usd": 0.01}],
	  "total_estimated_usd": 0.08}`
	s := compatStore(t, map[string]string{state.CostLedgerFile: ledger})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 4, 19, 18, 0, 0, 0, time.UTC)
	_, backfilled := record.IntegrityGate(*snap.CostLedger, 40, 100, now)
	if len(backfilled) != 1 || backfilled[0] != 40 {
		t.Errorf("backfilled %v, want [40] only (the ledger records 38 and 39)", backfilled)
	}
}

// Rewritten, the ledger keeps every entry it did not count byte for byte
// (indentation aside) and in its place, and the string ids as written:
// a project that switches back reads the same ledger it wrote.
func TestCompatLedger_EntriesKeptAsWrittenOnRewrite(t *testing.T) {
	s := compatStore(t, map[string]string{state.CostLedgerFile: mixedLedger})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	l := record.AddCost(*snap.CostLedger, record.Facts{Cycle: 40, Skill: "/scan-health", Executed: true, CostUSD: 0.02,
		Now: time.Date(2026, 4, 19, 18, 0, 0, 0, time.UTC)})
	if err := s.SaveCostLedger(l); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(s.EvolvePath(state.CostLedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	before := rawEntries(t, []byte(mixedLedger))
	after := rawEntries(t, got)
	if len(after) != len(before)+1 {
		t.Fatalf("%d entries written, want %d:\n%s", len(after), len(before)+1, got)
	}
	// Entry 0 (an integer id) is re-encoded, keys in the usual order; the
	// others must be exactly as read.
	for i := 1; i < len(before); i++ {
		if after[i] != before[i] {
			t.Errorf("entry %d changed:\n got %s\nwant %s", i, after[i], before[i])
		}
	}
	if !strings.Contains(after[len(after)-1], `"cycle_id":40`) {
		t.Errorf("the new entry is not last: %s", after[len(after)-1])
	}

	// And it reads back the same way.
	snap2, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(snap2.CostLedger.Entries); n != 4 || snap2.CostLedger.AsideEntries() != 3 {
		t.Errorf("reread: %d entries counted, %d set aside; want 4 and 3", n, snap2.CostLedger.AsideEntries())
	}
}

// A total edited below its entries must not hide the spend of the entries
// set aside from the daily cap.
func TestCompatLedger_AsideEntriesStillCountTowardTheCap(t *testing.T) {
	ledger := `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [
	  {"cycle_id": null, "timestamp": "2026-04-19T00:00:00Z", "skill": "/big", "chain": [], "estimated_usd": 7.5},
	  {"cycle_id": 38, "timestamp": "2026-04-19T06:00:00Z", "skill": "/check-tests", "chain": [], "estimated_usd": 0.05}],
	  "total_estimated_usd": 0}`
	s := compatStore(t, map[string]string{state.CostLedgerFile: ledger})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := record.Spent(*snap.CostLedger); got < 7.55-1e-9 {
		t.Errorf("spent = %v, want 7.55 (the entry set aside included)", got)
	}
	if !strings.Contains(strings.Join(snap.CostLedger.DecodeWarnings(), "\n"), "/total_estimated_usd: 0 is less than the sum of its entries") {
		t.Errorf("no warning for the total: %q", snap.CostLedger.DecodeWarnings())
	}
}

// A hostile cycle_id is shown bounded and in ASCII, and ten thousand of
// them make a handful of warnings.
func TestCompatLedger_WarningsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"date": "2026-04-19", "entries": [`)
	b.WriteString(`{"cycle_id": "\u001b[2J\u202e` + strings.Repeat("A", 5000) + `", "estimated_usd": 0}`)
	for i := 0; i < 10000; i++ {
		b.WriteString(`,{"cycle_id": "x", "estimated_usd": 0}`)
	}
	b.WriteString(`], "total_estimated_usd": 0}`)
	var l state.CostLedger
	if err := json.Unmarshal([]byte(b.String()), &l); err != nil {
		t.Fatal(err)
	}
	w := l.DecodeWarnings()
	if len(w) > 6 {
		t.Errorf("%d warnings, want at most 6", len(w))
	}
	if !strings.Contains(w[len(w)-1], "10001") && !strings.Contains(w[len(w)-1], "more") {
		t.Errorf("last warning does not count the rest: %q", w[len(w)-1])
	}
	for _, s := range w {
		if len(s) > 300 || strings.ContainsAny(s, "\x1b\u202e") {
			t.Errorf("warning unbounded or not ASCII-safe: %q", s)
		}
	}
	if l.AsideEntries() != 10001 {
		t.Errorf("set aside %d, want 10001", l.AsideEntries())
	}
}

// A new UTC day starts the ledger over: the entries set aside go too.
func TestCompatLedger_NewDayDropsAsideEntries(t *testing.T) {
	var l state.CostLedger
	if err := json.Unmarshal([]byte(mixedLedger), &l); err != nil {
		t.Fatal(err)
	}
	if !l.ResetIfNewDay(time.Date(2026, 4, 20, 1, 0, 0, 0, time.UTC)) {
		t.Fatal("not reset")
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if got := rawEntries(t, b); len(got) != 0 {
		t.Errorf("entries after the reset: %v", got)
	}
}

// With state.json lost, the cycle count is recovered from the ledger: a
// cycle id written "#45" is cycle 45, and a null is no cycle at all.
func TestCompatLedger_CycleCountRecoveredFromStringIDs(t *testing.T) {
	ledger := `{"date": "2026-04-19", "entries": [
	  {"cycle_id": "#45", "timestamp": "2026-04-19T00:00:00Z", "skill": "/a", "chain": [], "estimated_usd": 0.02},
	  {"cycle_id": null, "timestamp": "2026-04-19T01:00:00Z", "skill": "/b", "chain": [], "estimated_usd": 0.02}],
	  "total_estimated_usd": 0.04}`
	s := compatStore(t, map[string]string{state.CostLedgerFile: ledger, state.StateFile: `{"cycle_count": `})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.State.CycleCount != 45 {
		t.Errorf("cycle_count = %d, want 45", snap.State.CycleCount)
	}
}

// The original's implementation skill marks the action it works on
// "in_progress" inside pending[]: it is read as in progress.
func TestCompatQueue_InProgressMarkedInPending(t *testing.T) {
	q := `{"pending": [
	  {"id": "A-1", "title": "one", "status": "pending", "rice_score": 10},
	  {"id": "A-2", "title": "two", "status": "in_progress", "rice_score": 20, "status_history": [{"status": "in_progress"}]}],
	  "in_progress": [], "completed": []}`
	s := compatStore(t, map[string]string{state.ActionQueueFile: q})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	aq := snap.ActionQueue
	if len(aq.Pending) != 1 || aq.Pending[0].ID != "A-1" {
		t.Errorf("pending = %+v, want A-1 only", aq.Pending)
	}
	if len(aq.InProgress) != 1 || aq.InProgress[0].ID != "A-2" {
		t.Fatalf("in_progress = %+v, want A-2", aq.InProgress)
	}
	if _, ok := aq.InProgress[0].Extra["status_history"]; !ok {
		t.Error("the item lost its unknown keys")
	}
}

// The older shapes of action_queue.json are read, not reset as corrupt,
// and written back in the current shape with every item and key.
func TestCompatQueue_LegacyShapesAreRead(t *testing.T) {
	tests := []struct {
		name, file string
		extraKey   string // a top-level unknown key that must survive
	}{
		{"plain array", `[
		  {"id": "A-1", "title": "one", "status": "pending", "rice_score": 10, "difficulty": "low"},
		  {"id": "A-2", "title": "two", "status": "in_progress"},
		  {"id": "A-3", "title": "three", "status": "merged", "pr_number": 7},
		  {"id": "A-4", "title": "four"}]`, ""},
		{"actions key", `{"schema_version": "0.9.0", "updated_at": "2026-01-01T00:00:00Z", "actions": [
		  {"id": "A-1", "title": "one", "status": "pending", "rice_score": 10, "difficulty": "low"},
		  {"id": "A-2", "title": "two", "status": "in_progress"},
		  {"id": "A-3", "title": "three", "status": "merged", "pr_number": 7},
		  {"id": "A-4", "title": "four"}]}`, "updated_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := compatStore(t, map[string]string{state.ActionQueueFile: tc.file})
			snap, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Corrupt) != 0 {
				t.Fatalf("reported corrupt: %+v", snap.Corrupt)
			}
			aq := snap.ActionQueue
			if got := ids(aq.Pending); got != "A-1,A-4" {
				t.Errorf("pending = %s, want A-1,A-4", got)
			}
			if got := ids(aq.InProgress); got != "A-2" {
				t.Errorf("in_progress = %s, want A-2", got)
			}
			if got := ids(aq.Completed); got != "A-3" {
				t.Errorf("completed = %s, want A-3", got)
			}
			if len(aq.DecodeWarnings()) != 1 || !strings.Contains(aq.DecodeWarnings()[0], "older shape") {
				t.Errorf("warnings = %q, want one naming the older shape", aq.DecodeWarnings())
			}

			if err := s.SaveActionQueue(aq); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(s.EvolvePath(state.ActionQueueFile))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("written queue is not an object: %v\n%s", err, b)
			}
			for _, k := range []string{"pending", "in_progress", "completed"} {
				if _, ok := doc[k]; !ok {
					t.Errorf("written queue lacks %q:\n%s", k, b)
				}
			}
			if _, ok := doc["actions"]; ok {
				t.Errorf("the older list is written back beside the new ones:\n%s", b)
			}
			if tc.extraKey != "" {
				if _, ok := doc[tc.extraKey]; !ok {
					t.Errorf("unknown key %q lost:\n%s", tc.extraKey, b)
				}
			}
			if !bytes.Contains(b, []byte(`"difficulty": "low"`)) {
				t.Errorf("an item's unknown key was lost:\n%s", b)
			}
			// The rewritten file reads back the same, with no warning.
			snap2, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if ids(snap2.ActionQueue.Pending) != "A-1,A-4" || len(snap2.ActionQueue.DecodeWarnings()) != 0 {
				t.Errorf("reread: pending %s, warnings %q", ids(snap2.ActionQueue.Pending), snap2.ActionQueue.DecodeWarnings())
			}
		})
	}
}

// An "actions" key beside the current lists is nobody's queue: it stays an
// unknown key, written back as it was.
func TestCompatQueue_ActionsKeyBesideCurrentListsIsKept(t *testing.T) {
	var q state.ActionQueue
	raw := `{"pending": [{"id": "A-1", "title": "one"}], "actions": [{"id": "X-1", "title": "other tool"}]}`
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		t.Fatal(err)
	}
	if ids(q.Pending) != "A-1" || len(q.Extra["actions"]) == 0 {
		t.Errorf("pending %s, extra %v", ids(q.Pending), q.Extra)
	}
	var notList state.ActionQueue
	if err := json.Unmarshal([]byte(`{"actions": "see pending"}`), &notList); err != nil {
		t.Fatal(err)
	}
	if string(notList.Extra["actions"]) != `"see pending"` || len(notList.Pending) != 0 {
		t.Errorf("a non-list actions key was read as a queue: %+v", notList)
	}
}

func ids(list []state.Action) string {
	var out []string
	for _, a := range list {
		out = append(out, a.ID)
	}
	return strings.Join(out, ",")
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The set-aside and coerced cycle ids reach the cycle's warnings, each
// naming the file and the JSON path.
func TestCompatLedger_WarningsReachTheSnapshot(t *testing.T) {
	s := compatStore(t, map[string]string{state.CostLedgerFile: mixedLedger,
		state.StateFile: `{"cycle_count": 39, "decision_log": []}`})
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := `cost_ledger.json: /entries/1/cycle_id: "38" is not an integer; read as cycle 38`
	for _, w := range snap.Warnings {
		if strings.Contains(w, want) {
			return
		}
	}
	t.Errorf("snapshot warnings %q lack %q", snap.Warnings, want)
}
