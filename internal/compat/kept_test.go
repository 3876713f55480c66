package compat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// keptAt lists the positions in list of the elements whose compact form
// is want.
func keptAt(list []json.RawMessage, want string) []int {
	var at []int
	for i, e := range list {
		if compact(e) == want {
			at = append(at, i)
		}
	}
	return at
}

// insertAfter puts extra into the file's text right after the first
// occurrence of marker (the end of an entry), so the fixture keeps the
// rest of its bytes.
func insertAfter(t *testing.T, dir, rel, marker, extra string) {
	t.Helper()
	b := string(readFile(t, dir, rel))
	i := strings.Index(b, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", rel, marker)
	}
	writeFile(t, dir+"/"+rel, []byte(b[:i+len(marker)]+extra+b[i+len(marker):]))
}

// Elements that are not entries — a note an operator typed into the
// decision log, a string in the action queue's pending, a number among the
// interventions, a string in the memo history — are left out of the
// computation and stay in their files, once each, through cycles that
// append to, change and trim those lists.
func TestCompat_ListElementsThatAreNotEntriesAreKept(t *testing.T) {
	dir := fixture(t, "interventions")
	writeFile(t, dir+"/"+evolve+"/state.json", []byte(`{"schema_version": "1.0.0", "cycle_count": 5, "last_cycle": "2026-04-14T05:00:00Z", "cycle_in_progress": false,
 "decision_log": [
  {"cycle": 4, "timestamp": "2026-04-14T04:00:00Z", "selected_domain": "test_coverage", "selected_skill": "/check-tests", "result": "success", "chain_executed": ["/check-tests"]},
  "operator: cycle 5 was run by hand, see the incident notes",
  {"cycle": 5, "timestamp": "2026-04-14T05:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success", "chain_executed": ["/scan-health"]}
 ]}
`))
	copyFile(t, "testdata/queue-in-pending/"+evolve+"/action_queue.json", dir+"/"+evolve+"/action_queue.json")
	insertAfter(t, dir, evolve+"/action_queue.json", `"reviewer": "ops"},`, "\n    \"ask ops before q-001 ships\",")
	// After the monopoly breaker, which expires: the number has to move.
	insertAfter(t, dir, evolve+"/memos.json", `"applied_count": 0},`, " 17,")
	insertAfter(t, dir, evolve+"/memos.json", `"history": [`, `"imported from the old tracker", `)

	note := `"operator: cycle 5 was run by hand, see the incident notes"`
	ask := `"ask ops before q-001 ships"`
	imported := `"imported from the old tracker"`
	st0 := load(t, dir, evolve+"/state.json")
	q0 := load(t, dir, evolve+"/action_queue.json")
	m0 := load(t, dir, evolve+"/memos.json")
	for _, c := range []struct {
		d    doc
		key  string
		want string
	}{{st0, "decision_log", note}, {q0, "pending", ask}, {m0, "interventions", "17"}, {m0, "history", imported}} {
		if len(keptAt(c.d.list(c.key), c.want)) != 1 {
			t.Fatalf("fixture: %s has no %s", c.key, c.want)
		}
	}

	for i := 0; i < 3; i++ {
		_, out := completed(t, dir, t0.Add(time.Duration(i)*time.Hour), nil)
		if i == 0 && !strings.Contains(out, "/decision_log/1") {
			t.Errorf("the note in the decision log is not named in a warning:\n%s", out)
		}
		st := load(t, dir, evolve+"/state.json")
		q := load(t, dir, evolve+"/action_queue.json")
		m := load(t, dir, evolve+"/memos.json")

		log := st.list("decision_log")
		at := keptAt(log, note)
		if len(at) != 1 || at[0] != 1 || len(log) != 4+i {
			t.Errorf("cycle %d: decision_log has the note at %v (want once, at 1, after cycle 4's entry), %d elements:\n  %s", i+1, at, len(log), joinCompact(log))
		}
		if at := keptAt(q.list("pending"), ask); len(at) != 1 {
			t.Errorf("cycle %d: pending has %s at %v, want once:\n  %s", i+1, ask, at, joinCompact(q.list("pending")))
		}
		ivs := m.list("interventions")
		if at := keptAt(ivs, "17"); len(at) != 1 {
			t.Errorf("cycle %d: interventions have 17 at %v, want once:\n  %s", i+1, at, joinCompact(ivs))
		}
		if at := keptAt(m.list("history"), imported); len(at) != 1 || at[0] != 0 {
			t.Errorf("cycle %d: history has %s at %v, want once, first:\n  %s", i+1, imported, at, joinCompact(m.list("history")))
		}
		if i == 2 {
			// The lists did change: the breaker expired (the number it
			// preceded is now first), the queue was rewritten.
			if len(ivs) != 2 || compact(ivs[0]) != "17" {
				t.Errorf("interventions after the breaker expired:\n  %s", joinCompact(ivs))
			}
			if compact(q.at("pending")) == compact(q0.at("pending")) {
				t.Errorf("pending was never rewritten; the test does not exercise a changed list")
			}
		}
	}
}
