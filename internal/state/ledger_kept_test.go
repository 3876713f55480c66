package state

import (
	"encoding/json"
	"strings"
	"testing"
)

// A string among the ledger's entries, before an entry without a
// cycle_id, made the entry set aside be matched with the string: the
// entry (and its cost) was lost and the string written twice.
func TestCostLedger_UnreadableElementBeforeAnEntryWithoutCycleID(t *testing.T) {
	in := `{"schema_version": "1.0.0", "date": "2026-04-14", "entries": ["junk",
	  {"timestamp": "2026-04-14T01:00:00Z", "skill": "/scan", "estimated_usd": 0.5},
	  {"cycle_id": 3, "timestamp": "2026-04-14T02:00:00Z", "estimated_usd": 0.1}], "total_estimated_usd": 0.6}`
	var l CostLedger
	if err := json.Unmarshal([]byte(in), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].CycleID != 3 || l.AsideEntries() != 1 {
		t.Fatalf("entries %+v, aside %d", l.Entries, l.AsideEntries())
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if strings.Count(out, `"junk"`) != 1 || strings.Count(out, `"estimated_usd":0.5`) != 1 || strings.Count(out, `"cycle_id":3`) != 1 {
		t.Errorf("written back as %s", out)
	}
	for _, w := range l.DecodeWarnings() {
		if strings.Contains(w, "/entries/0/cycle_id") {
			t.Errorf("warning names the string's place for the entry's: %q", w)
		}
	}
}

// A warning about a value in a ledger entry names the entry as the file
// numbers it, also after an entry set aside (no cycle id) or an element
// that is not an entry: it named /entries/1 for the file's /entries/3.
func TestCostLedger_WarningsNumberEntriesAsTheFileDoes(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(CostLedgerFile), `{"date": "2026-04-14", "entries": [{"cycle_id": 1, "estimated_usd": 0.01},
	  {"cycle_id": null, "estimated_usd": 0.01}, "junk", {"cycle_id": 3, "estimated_usd": "0.05"}], "total_estimated_usd": 0.07}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(snap.Warnings, "\n")
	if !strings.Contains(all, `/entries/3/estimated_usd: "0.05"`) || !strings.Contains(all, "/entries/1/cycle_id: null") {
		t.Errorf("warnings:\n%s", all)
	}
}
