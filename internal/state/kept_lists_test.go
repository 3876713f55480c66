package state

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// keptShape shows a list as the test reads it: an object as key=value
// (its identifying key), anything else as it is written.
func keptShape(t *testing.T, b []byte, key, id string) []string {
	t.Helper()
	var out []string
	for _, e := range keptElems(t, b, key) {
		var m map[string]json.RawMessage
		if !strings.HasPrefix(e, "{") || json.Unmarshal([]byte(e), &m) != nil {
			out = append(out, e)
			continue
		}
		out = append(out, id+"="+string(m[id]))
	}
	return out
}

// A decision log holding elements that are not entries (a note someone
// wrote in, a number) keeps them when the log is appended to and trimmed:
// each stays after the entry that preceded it, or goes to the front when
// that entry is trimmed away. They are never multiplied: after many
// rewrites the log holds its N entries and the same two elements.
func TestKeptLists_DecisionLogAppendAndTrim(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 3, "decision_log": [
	  {"cycle": 1, "timestamp": "2026-04-01T00:00:00Z", "chain_executed": [], "chain_count": 0},
	  "operator: cycle 2 was run by hand",
	  {"cycle": 2, "timestamp": "2026-04-02T00:00:00Z", "chain_executed": [], "chain_count": 0},
	  {"note":   42}, 7,
	  {"cycle": 3, "timestamp": "2026-04-03T00:00:00Z", "chain_executed": [], "chain_count": 0}]}`)
	snap := loadClean(t, s)
	if n := len(snap.State.DecisionLog); n != 4 {
		// {"note": 42} is an object: an entry of its own, with no cycle.
		t.Fatalf("decision_log read as %d entries, want 4: %+v", n, snap.State.DecisionLog)
	}
	wantOneWarning(t, snap.Warnings, StateFile, "/decision_log/1", `"operator: cycle 2 was run by hand"`)
	wantOneWarning(t, snap.Warnings, StateFile, "/decision_log/4", `7`)

	const keep = 3
	cycle := func(n int) {
		t.Helper()
		snap := loadClean(t, s)
		st := snap.State
		st.CycleCount = n
		st.DecisionLog = append(st.DecisionLog, DecisionEntry{Cycle: n, Timestamp: fmt.Sprintf("2026-04-%02dT00:00:00Z", n)})
		if len(st.DecisionLog) > keep {
			st.DecisionLog = st.DecisionLog[len(st.DecisionLog)-keep:]
		}
		if err := s.SaveState(st); err != nil {
			t.Fatal(err)
		}
	}
	note := `"operator: cycle 2 was run by hand"`

	// Entries 1 and 2 are trimmed away: the note that followed entry 1
	// goes to the front; 7 still follows the {"note": 42} entry it
	// followed.
	cycle(4)
	saved := []byte(readString(t, s.EvolvePath(StateFile)))
	keptLists(t, "after cycle 4", keptShape(t, saved, "decision_log", "cycle"),
		[]string{note, "cycle=", "7", "cycle=3", "cycle=4"})

	for n := 5; n <= 12; n++ {
		cycle(n)
	}
	saved = []byte(readString(t, s.EvolvePath(StateFile)))
	keptLists(t, "after cycle 12", keptShape(t, saved, "decision_log", "cycle"),
		[]string{note, "7", "cycle=10", "cycle=11", "cycle=12"})
	again := loadClean(t, s)
	if len(again.State.DecisionLog) != keep {
		t.Fatalf("decision_log read as %d entries, want %d", len(again.State.DecisionLog), keep)
	}
	// Still one warning per value, where the file now has it.
	wantOneWarning(t, again.Warnings, StateFile, "/decision_log/0", note)
	wantOneWarning(t, again.Warnings, StateFile, "/decision_log/1", "7")
}

// An element of action_queue.json's pending that is not an action stays
// in pending when the item before it moves to in_progress and another is
// appended; completed keeps its own.
func TestKeptLists_ActionQueuePending(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [
	  {"id": "q-1", "status": "pending", "rice_score": 50.0},
	  "TODO: split q-1 in two",
	  {"id": "q-2", "status": "pending", "rice_score": 40.0}],
	  "in_progress": [], "completed": [12, {"id": "q-0", "status": "merged"}]}`)
	snap := loadClean(t, s)
	q := snap.ActionQueue
	if len(q.Pending) != 2 || len(q.Completed) != 1 {
		t.Fatalf("queue = %+v", q)
	}
	wantOneWarning(t, snap.Warnings, ActionQueueFile, "/pending/1", `"TODO: split q-1 in two"`)
	wantOneWarning(t, snap.Warnings, ActionQueueFile, "/completed/0", `12`)

	first := q.Pending[0]
	first.Status = "in_progress"
	q.InProgress = []Action{first}
	q.Pending = append(q.Pending[1:], Action{ID: "q-3", Status: "pending"})
	q.Completed = append(q.Completed, Action{ID: "q-4", Status: "merged"})
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	saved := []byte(readString(t, s.EvolvePath(ActionQueueFile)))
	keptLists(t, "pending", keptShape(t, saved, "pending", "id"), []string{`"TODO: split q-1 in two"`, `id="q-2"`, `id="q-3"`})
	keptLists(t, "in_progress", keptShape(t, saved, "in_progress", "id"), []string{`id="q-1"`})
	keptLists(t, "completed", keptShape(t, saved, "completed", "id"), []string{"12", `id="q-0"`, `id="q-4"`})

	// Emptied, pending still holds what was not an action.
	q = loadClean(t, s).ActionQueue
	q.Pending = nil
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	saved = []byte(readString(t, s.EvolvePath(ActionQueueFile)))
	keptLists(t, "pending emptied", keptShape(t, saved, "pending", "id"), []string{`"TODO: split q-1 in two"`})
}

// memos.json: an intervention that expires is removed, the element that
// followed it and is not an intervention stays; history appended to keeps
// its non-memo elements where they were.
func TestKeptLists_MemosInterventionsAndHistory(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(MemosFile), `{"schema_version": "1.1.0", "score_adjustments": {},
	  "interventions": [
	    {"domain": "a", "delta": -10.0, "created_at_cycle": 5, "expires_after_cycles": 1, "applied_count": 0},
	    ["not", "an", "intervention"],
	    {"domain": "b", "delta": 1.0, "created_at_cycle": 5, "expires_after_cycles": 3, "applied_count": 0}],
	  "history": ["free text", {"cycle": 5, "message": "m5"}, null, true],
	  "last_memo": null}`)
	snap := loadClean(t, s)
	m := snap.Memos
	if len(m.Interventions) != 2 {
		t.Fatalf("interventions = %+v", m.Interventions)
	}
	wantOneWarning(t, snap.Warnings, MemosFile, "/interventions/1", "an array is not an object")
	m.Interventions = m.Interventions[1:]
	m.Interventions[0].AppliedCount = 1
	m.History = append(m.History, Memo{Cycle: 6, Message: "m6"})
	if err := s.SaveMemos(m); err != nil {
		t.Fatal(err)
	}
	saved := []byte(readString(t, s.EvolvePath(MemosFile)))
	keptLists(t, "interventions", keptShape(t, saved, "interventions", "domain"), []string{`["not","an","intervention"]`, `domain="b"`})
	// null reads as an empty memo (and is written back as null); true is
	// no memo and stays after it.
	keptLists(t, "history", keptShape(t, saved, "history", "cycle"), []string{`"free text"`, "cycle=5", "null", "true", "cycle=6"})
}

// A list inside an entry keeps its unreadable elements too: an action's
// related_files holding an object keeps it when a file is added, and
// when the list is emptied (a key omitted when empty).
func TestKeptLists_ListInsideAnEntry(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ActionQueueFile), `{"pending": [
	  {"id": "q-1", "related_files": ["a.go", {"path": "b.go", "lines": "1-9"}], "status": "pending"}],
	  "in_progress": [], "completed": []}`)
	q := loadClean(t, s).ActionQueue
	if f := q.Pending[0].RelatedFiles; len(f) != 1 || f[0] != "a.go" {
		t.Fatalf("related_files = %q", f)
	}
	q.Pending[0].RelatedFiles = append(q.Pending[0].RelatedFiles, "c.go")
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	saved := readString(t, s.EvolvePath(ActionQueueFile))
	got := keptElems(t, []byte(saved), "pending")
	want := `{"id":"q-1","related_files":["a.go",{"path":"b.go","lines":"1-9"},"c.go"],"status":"pending"}`
	keptLists(t, "pending", got, []string{want})

	q = loadClean(t, s).ActionQueue
	q.Pending[0].RelatedFiles = nil
	if err := s.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	got = keptElems(t, []byte(readString(t, s.EvolvePath(ActionQueueFile))), "pending")
	keptLists(t, "pending, related_files emptied", got, []string{`{"id":"q-1","related_files":[{"path":"b.go","lines":"1-9"}],"status":"pending"}`})
}

// The original's older whole-file shapes with an element that is not an
// entry are read, not reset, and the element is kept in the list the
// shape becomes.
func TestKeptLists_LegacyShapes(t *testing.T) {
	t.Run("plain array queue", func(t *testing.T) {
		s := New(t.TempDir())
		writeFile(t, s.EvolvePath(ActionQueueFile), `[{"id": "q-1", "status": "pending"}, "later: q-9", {"id": "q-0", "status": "merged"}, {"id": "q-2", "status": "pending"}]`)
		snap := loadClean(t, s)
		q := snap.ActionQueue
		if len(q.Pending) != 2 || len(q.Completed) != 1 {
			t.Fatalf("queue = %+v", q)
		}
		if err := s.SaveActionQueue(q); err != nil {
			t.Fatal(err)
		}
		saved := []byte(readString(t, s.EvolvePath(ActionQueueFile)))
		keptLists(t, "pending", keptShape(t, saved, "pending", "id"), []string{`id="q-1"`, `"later: q-9"`, `id="q-2"`})
		keptLists(t, "completed", keptShape(t, saved, "completed", "id"), []string{`id="q-0"`})
	})
	t.Run("actions key", func(t *testing.T) {
		s := New(t.TempDir())
		writeFile(t, s.EvolvePath(ActionQueueFile), `{"actions": [3, {"id": "q-1", "status": "pending"}]}`)
		q := loadClean(t, s).ActionQueue
		if len(q.Pending) != 1 {
			t.Fatalf("queue = %+v", q)
		}
		if err := s.SaveActionQueue(q); err != nil {
			t.Fatal(err)
		}
		saved := []byte(readString(t, s.EvolvePath(ActionQueueFile)))
		keptLists(t, "pending", keptShape(t, saved, "pending", "id"), []string{"3", `id="q-1"`})
		if strings.Contains(string(saved), `"actions"`) {
			t.Errorf("the older key is written back besides pending:\n%s", saved)
		}
	})
	t.Run("memos array", func(t *testing.T) {
		s := New(t.TempDir())
		writeFile(t, s.EvolvePath(MemosFile), `{"memos": [{"message": "m1"}, "loose note"]}`)
		m := loadClean(t, s).Memos
		if len(m.History) != 1 || m.History[0].Message != "m1" {
			t.Fatalf("history = %+v", m.History)
		}
		m.History = append(m.History, Memo{Message: "m2"})
		if err := s.SaveMemos(m); err != nil {
			t.Fatal(err)
		}
		saved := []byte(readString(t, s.EvolvePath(MemosFile)))
		keptLists(t, "history", keptShape(t, saved, "history", "message"), []string{`message="m1"`, `"loose note"`, `message="m2"`})
	})
}

// The same holds for every typed list, without the types knowing: skill
// gaps, checkpoints (trimmed to the last five) and the cost ledger's
// entries (whose entries without a cycle number are set aside by the
// ledger itself).
func TestKeptLists_OtherFiles(t *testing.T) {
	t.Run("skill gaps", func(t *testing.T) {
		s := New(t.TempDir())
		writeFile(t, s.EvolvePath(SkillGapsFile), `{"gaps": ["see docs/gaps.md", {"id": "gap-1", "frequency": 2}]}`)
		g := loadClean(t, s).SkillGaps
		if len(g.Gaps) != 1 {
			t.Fatalf("gaps = %+v", g.Gaps)
		}
		g.Gaps = append(g.Gaps, Gap{ID: "gap-2", Frequency: 1})
		if err := s.SaveSkillGaps(g); err != nil {
			t.Fatal(err)
		}
		saved := []byte(readString(t, s.EvolvePath(SkillGapsFile)))
		keptLists(t, "gaps", keptShape(t, saved, "gaps", "id"), []string{`"see docs/gaps.md"`, `id="gap-1"`, `id="gap-2"`})
	})
	t.Run("checkpoints trimmed", func(t *testing.T) {
		s := New(t.TempDir())
		var cps []string
		for c := 1; c <= CheckpointsKept; c++ {
			cps = append(cps, fmt.Sprintf(`{"cycle": %d, "branch": "main", "commit_sha": "abc"}`, c))
			if c == 2 {
				cps = append(cps, `"cycle 2 restored by hand"`)
			}
		}
		writeFile(t, s.EvolvePath(CheckpointsFile), `{"checkpoints": [`+strings.Join(cps, ",")+`]}`)
		for c := CheckpointsKept + 1; c <= CheckpointsKept+4; c++ {
			cp := loadClean(t, s).Checkpoints
			cp.Add(Checkpoint{Cycle: c, Branch: "main"})
			if err := s.SaveCheckpoints(cp); err != nil {
				t.Fatal(err)
			}
		}
		saved := []byte(readString(t, s.EvolvePath(CheckpointsFile)))
		keptLists(t, "checkpoints", keptShape(t, saved, "checkpoints", "cycle"),
			[]string{`"cycle 2 restored by hand"`, "cycle=5", "cycle=6", "cycle=7", "cycle=8", "cycle=9"})
	})
	t.Run("cost ledger", func(t *testing.T) {
		s := New(t.TempDir())
		writeFile(t, s.EvolvePath(CostLedgerFile), `{"date": "2026-04-14", "total_estimated_usd": 0.3, "entries": [
		  {"cycle_id": 4, "estimated_usd": 0.1}, "manual top-up", {"cycle_id": null, "estimated_usd": 0.1}, {"cycle_id": 5, "estimated_usd": 0.1}]}`)
		l := loadClean(t, s).CostLedger
		if len(l.Entries) != 2 || l.AsideEntries() != 1 {
			t.Fatalf("ledger = %+v, %d aside", l.Entries, l.AsideEntries())
		}
		l.Entries = append(l.Entries, CostEntry{CycleID: 6, EstimatedUSD: 0.1})
		l.TotalEstimatedUSD = 0.4
		if err := s.SaveCostLedger(*l); err != nil {
			t.Fatal(err)
		}
		saved := []byte(readString(t, s.EvolvePath(CostLedgerFile)))
		keptLists(t, "entries", keptShape(t, saved, "entries", "cycle_id"),
			[]string{"cycle_id=4", `"manual top-up"`, "cycle_id=null", "cycle_id=5", "cycle_id=6"})
	})
}
