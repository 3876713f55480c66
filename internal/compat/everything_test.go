package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// everyList is one list of entries in one state file of the every-file
// fixture: where it is, how an entry is recognised across a rewrite, and
// which entries the cycles this test runs have no reason to change.
type everyList struct {
	file string
	// paths lead to the list (or to an object whose members are the
	// entries); several paths are one list whose entries move between
	// them (the action queue's pending, in_progress and completed).
	paths [][]string
	// id names an entry by the compact values of these keys; an object
	// of entries names each by its key.
	id     []string
	object bool
	// kept are the ids of entries no cycle here changes: each must be
	// written back byte for byte (whitespace aside).
	kept []string
}

// entries are the list's entries by id, in file order.
func (l everyList) entries(d doc) ([]string, map[string]json.RawMessage) {
	var order []string
	byID := map[string]json.RawMessage{}
	seen := map[string]int{}
	add := func(id string, e json.RawMessage) {
		// Entries a cycle adds may share an id (two memos of one cycle):
		// the later ones are told apart by their rank.
		if seen[id]++; seen[id] > 1 {
			id += " #" + strconv.Itoa(seen[id])
		}
		order = append(order, id)
		byID[id] = e
	}
	for _, p := range l.paths {
		if l.object {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(d.at(p...), &m)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				add(k, m[k])
			}
			continue
		}
		for _, e := range d.list(p...) {
			var parts []string
			for _, k := range l.id {
				if v := field(e, k); v != nil {
					parts = append(parts, compact(v))
				}
			}
			add(strings.Join(parts, " "), e)
		}
	}
	return order, byID
}

func (l everyList) String() string {
	var ps []string
	for _, p := range l.paths {
		ps = append(ps, strings.Join(p, "."))
	}
	return l.file + " " + strings.Join(ps, "+")
}

// everyFile is one file of the fixture and the top-level keys of its own
// that ooda does not know.
type everyFile struct {
	rel     string
	unknown []string
}

// A project that ran the original holds every evolve file the original
// writes, in the original's shapes: entries with nulls, 1.0 and 0.80,
// unknown keys, keys in an order of their own, and top-level keys ooda
// does not know. After three real cycles, every entry ooda did not change
// is in its file as it was (byte for byte, whitespace aside); an entry ooda
// changed (a goal's progress, an intervention's count, a recalled
// reflection, a cascade's bonus) still has every key it had, and every
// null it had; and every top-level key is still there, the unknown ones
// as they were.
func TestCompat_EveryFileKeepsEveryEntry(t *testing.T) {
	dir := fixture(t, "every-file")
	files := []everyFile{
		{evolve + "/state.json", []string{"operator_note"}},
		{evolve + "/confidence.json", []string{"calibrated_by"}},
		{evolve + "/goals.json", []string{"owner"}},
		{evolve + "/memos.json", []string{"memo_owner"}},
		{evolve + "/action_queue.json", []string{"queue_owner"}},
		{evolve + "/skill_gaps.json", []string{"reviewed_at"}},
		{evolve + "/metrics.json", []string{"dashboard", "first_cycle_at"}},
		{evolve + "/cost_ledger.json", []string{"currency"}},
		{evolve + "/outcomes.json", []string{"scorecard_version"}},
		{evolve + "/checkpoints.json", []string{"retention"}},
		{evolve + "/reflections.json", []string{"buffer_size"}},
		{evolve + "/episodes.json", []string{"retention_weeks"}},
		{evolve + "/principles.json", nil},
		{evolve + "/cascades.json", []string{"detector"}},
	}
	lists := []everyList{
		{file: evolve + "/state.json", paths: [][]string{{"decision_log"}}, id: []string{"cycle"}, kept: []string{"10", "11", "12"}},
		{file: evolve + "/confidence.json", paths: [][]string{{"domains"}}, object: true, kept: []string{"ux_evolution"}},
		{file: evolve + "/goals.json", paths: [][]string{{"goals"}}, id: []string{"id"}, kept: []string{`"G1"`, `"G3"`}},
		{file: evolve + "/memos.json", paths: [][]string{{"interventions"}}, id: []string{"domain", "type"}},
		{file: evolve + "/memos.json", paths: [][]string{{"history"}}, id: []string{"cycle", "timestamp", "type"},
			kept: []string{`11 "2026-04-14T04:00:00Z"`, `12 "2026-04-14T06:00:00Z"`}},
		{file: evolve + "/action_queue.json", paths: [][]string{{"pending"}, {"in_progress"}, {"completed"}}, id: []string{"id"},
			kept: []string{`"2026-04-01-004"`, `"2026-04-02-005"`}},
		{file: evolve + "/skill_gaps.json", paths: [][]string{{"gaps"}}, id: []string{"id", "name"},
			kept: []string{`"gap-001"`, `"execution_error_/plan-backlog"`}},
		{file: evolve + "/metrics.json", paths: [][]string{{"cost", "daily_log"}}, id: []string{"date"}, kept: []string{`"2026-04-13"`}},
		{file: evolve + "/cost_ledger.json", paths: [][]string{{"entries"}}, id: []string{"cycle_id"}, kept: []string{"11", "12"}},
		{file: evolve + "/outcomes.json", paths: [][]string{{"entries"}}, id: []string{"cycle_id"}, kept: []string{"10", "11", "12"}},
		{file: evolve + "/checkpoints.json", paths: [][]string{{"checkpoints"}}, id: []string{"cycle"}, kept: []string{"11"}},
		{file: evolve + "/reflections.json", paths: [][]string{{"reflections"}}, id: []string{"cycle"}, kept: []string{"10"}},
		{file: evolve + "/episodes.json", paths: [][]string{{"episodes"}}, id: []string{"id", "week_year"},
			kept: []string{`"2026-W13"`, `"EP-2026-W14"`}},
		{file: evolve + "/principles.json", paths: [][]string{{"principles"}}, id: []string{"id", "text"}},
		{file: evolve + "/cascades.json", paths: [][]string{{"cascades"}}, id: []string{"id"}, kept: []string{`"C-2026-04-12-001"`}},
	}
	for _, d := range []string{"service_health", "test_coverage", "backlog"} {
		lens, changelog := "agent/state/"+d+"/lens.json", "agent/state/"+d+"/lens_changelog.json"
		files = append(files, everyFile{lens, []string{"reviewed_by"}}, everyFile{changelog, []string{"cap"}})
		lists = append(lists,
			everyList{file: lens, paths: [][]string{{"focus_items"}, {"learned_thresholds"}, {"discovered_signals"}}, id: []string{"item"}},
			everyList{file: lens, paths: [][]string{{"evidence"}}, id: []string{"cycle", "timestamp"}, kept: []string{`12 "2026-04-14T06:00:00Z"`}},
			everyList{file: changelog, paths: [][]string{{"entries"}}, id: []string{"cycle", "item"},
				kept: []string{`3 "error rate"`, `9 "p95 latency"`}},
		)
	}

	before := map[string]doc{}
	for _, f := range files {
		before[f.rel] = load(t, dir, f.rel)
	}
	for i := 0; i < 3; i++ {
		res, _ := completed(t, dir, t0.Add(time.Duration(i)*time.Hour), nil)
		if i == 0 {
			continues(t, dir, res, 12)
		}
	}
	after := map[string]doc{}
	rewritten := map[string]bool{}
	for _, f := range files {
		after[f.rel] = load(t, dir, f.rel)
		rewritten[f.rel] = compact(before[f.rel].raw) != compact(after[f.rel].raw)
	}

	// The files a cycle rewrites were rewritten: the checks below are
	// about files ooda wrote, not files it left alone.
	for _, rel := range []string{"state.json", "confidence.json", "goals.json", "memos.json", "action_queue.json", "metrics.json",
		"cost_ledger.json", "outcomes.json", "reflections.json", "episodes.json", "cascades.json"} {
		if !rewritten[evolve+"/"+rel] {
			t.Errorf("%s was not rewritten by three cycles; the test does not exercise it", rel)
		}
	}
	for _, name := range []string{"lens.json", "lens_changelog.json"} {
		written := 0
		for _, d := range []string{"service_health", "test_coverage", "backlog"} {
			if rewritten["agent/state/"+d+"/"+name] {
				written++
			}
		}
		if written == 0 {
			t.Errorf("no %s was rewritten; the test does not exercise one", name)
		}
	}

	for _, f := range files {
		b, a := before[f.rel], after[f.rel]
		var bk, ak map[string]json.RawMessage
		_ = json.Unmarshal(b.raw, &bk)
		_ = json.Unmarshal(a.raw, &ak)
		for k := range bk {
			if _, ok := ak[k]; !ok {
				t.Errorf("%s: top-level key %q lost", f.rel, k)
			}
		}
		for _, k := range f.unknown {
			if bk[k] == nil {
				t.Fatalf("fixture: %s has no %q", f.rel, k)
			}
			if compact(ak[k]) != compact(bk[k]) {
				t.Errorf("%s: unknown key %q was %s, now %s", f.rel, k, compact(bk[k]), compact(ak[k]))
			}
		}
	}

	changed := 0
	for _, l := range lists {
		order, was := l.entries(before[l.file])
		_, now := l.entries(after[l.file])
		if len(order) == 0 {
			t.Fatalf("fixture: %s has no entries", l)
		}
		for _, id := range l.kept {
			e, ok := was[id]
			if !ok {
				t.Fatalf("fixture: %s has no entry %s", l, id)
			}
			if got, ok := now[id]; !ok || compact(got) != compact(e) {
				t.Errorf("%s[%s] not kept as written:\n was %s\n now %s", l, id, compact(e), compact(got))
			}
		}
		for _, id := range order {
			e := was[id]
			got, ok := now[id]
			switch {
			case !ok:
				// Gone: an intervention that expired, a reflection or an
				// entry trimmed by its cap. Only entries named in kept
				// must stay, and they are checked above.
			case valueEq(got, e):
				// Not changed: then not rewritten either.
				if compact(got) != compact(e) {
					t.Errorf("%s[%s] has the same values but was rewritten:\n was %s\n now %s", l, id, compact(e), compact(got))
				}
			default:
				changed++
				lost, nulls, _, _ := diffKeys(e, got)
				if len(lost) > 0 || len(nulls) > 0 {
					t.Errorf("%s[%s] changed and lost keys %v, empty keys %v:\n was %s\n now %s", l, id, lost, nulls, compact(e), compact(got))
				}
			}
		}
	}
	if changed == 0 {
		t.Errorf("no entry was changed by three cycles; the test does not exercise a changed entry")
	}
	if t.Failed() {
		for _, f := range files {
			if b, err := os.ReadFile(filepath.Join(dir, f.rel)); err == nil {
				t.Logf("%s after the cycles:\n%s", f.rel, b)
			}
		}
	}
}
