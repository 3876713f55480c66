package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStore_LoadMissingFilesAreDefaults(t *testing.T) {
	s := New(t.TempDir())
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.StateFound || snap.CostLedger != nil || len(snap.Corrupt) != 0 {
		t.Fatalf("empty project: found=%v ledger=%v corrupt=%v", snap.StateFound, snap.CostLedger, snap.Corrupt)
	}
	if !reflect.DeepEqual(snap.State, State{}) || !reflect.DeepEqual(snap.Memos, Memos{}) || !reflect.DeepEqual(snap.Goals, Goals{}) ||
		!reflect.DeepEqual(snap.ActionQueue, ActionQueue{}) || !reflect.DeepEqual(snap.SkillGaps, SkillGaps{}) ||
		!reflect.DeepEqual(snap.Metrics, Metrics{}) || !reflect.DeepEqual(snap.Outcomes, Outcomes{}) {
		t.Fatalf("defaults are not empty: %+v", snap)
	}
	if len(snap.Confidence.Scores) != 0 || !snap.Confidence.Nested() {
		t.Fatalf("confidence default = %+v", snap.Confidence)
	}
	if len(s.Written()) != 0 {
		t.Fatalf("Load wrote %v", s.Written())
	}
	if _, err := os.Stat(s.EvolveDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Load created the evolve directory")
	}
}

func TestStore_CorruptFileQuarantined(t *testing.T) {
	s := New(t.TempDir())
	corrupt := "{\"schema_version\": \"1.1.0\", \"history\": [\x00 truncated"
	writeFile(t, s.EvolvePath(MemosFile), corrupt)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 16, "decision_log": []}`)
	writeFile(t, s.EvolvePath(ConfidenceFile), `{"backlog": 0.6}`)

	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 {
		t.Fatalf("corrupt = %+v, want memos.json only", snap.Corrupt)
	}
	c := snap.Corrupt[0]
	if c.File != MemosFile || c.Path != s.EvolvePath(MemosFile) || c.Err == nil {
		t.Fatalf("corruption = %+v", c)
	}
	if !snap.StateFound || snap.State.CycleCount != 16 {
		t.Fatalf("state did not load: %+v", snap.State)
	}
	if v, _ := snap.Confidence.Get("backlog"); v != 0.6 {
		t.Fatalf("confidence did not load: %+v", snap.Confidence)
	}
	if !reflect.DeepEqual(snap.Memos, Memos{}) {
		t.Fatalf("memos not reset to the default: %+v", snap.Memos)
	}

	now := time.Date(2026, 4, 14, 5, 14, 9, 0, time.FixedZone("CEST", 2*3600))
	dst, err := s.Quarantine(c, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.EvolvePath("memos.json.corrupt-20260414T031409Z"); dst != want {
		t.Fatalf("quarantine copy at %s, want %s", dst, want)
	}
	if got := readString(t, dst); got != corrupt {
		t.Fatalf("quarantine copy holds %q", got)
	}
	if got := readString(t, s.EvolvePath(MemosFile)); got != corrupt {
		t.Fatalf("original changed to %q", got)
	}
}

// A file whose top level is not an object is as corrupt as one that does
// not parse, and the cycle must continue from the empty default. Values of
// the wrong type inside an object do not make it corrupt (tolerant_test.go).
func TestStore_CorruptFileLoadsAsEmptyDefault(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `[{"cycle_count": 152, "consecutive_silent_failures": 2}]`)
	writeFile(t, s.EvolvePath(GoalsFile), `"goals"`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range snap.Corrupt {
		names = append(names, c.File)
	}
	if !reflect.DeepEqual(names, []string{StateFile, GoalsFile}) {
		t.Fatalf("corrupt = %v", names)
	}
	if snap.StateFound {
		t.Error("a corrupt state.json counts as found")
	}
	if !reflect.DeepEqual(snap.State, State{}) {
		t.Errorf("corrupt state.json loaded as %+v, want the empty default", snap.State)
	}
	if !reflect.DeepEqual(snap.Goals, Goals{}) {
		t.Errorf("corrupt goals.json loaded as %+v, want the empty default", snap.Goals)
	}
}

func TestStore_EmptyFileIsCorrupt(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(SkillGapsFile), " \n")
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != SkillGapsFile {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
}

// The engine's clock is injectable, so several quarantines can share one
// timestamp; none of them may overwrite an earlier copy.
func TestStore_QuarantineNeverOverwritesEarlierCopies(t *testing.T) {
	now := time.Date(2026, 4, 14, 3, 14, 0, 0, time.UTC)
	cases := []struct {
		name       string
		file       string
		quarantine func(s *Store) (string, error)
	}{
		{"memos.json", MemosFile, func(s *Store) (string, error) {
			return s.Quarantine(Corruption{File: MemosFile, Path: s.EvolvePath(MemosFile)}, now)
		}},
		{"cost_ledger.json", CostLedgerFile, func(s *Store) (string, error) { return s.QuarantineLedger(now) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t.TempDir())
			var copies []string
			for i := 0; i < 3; i++ {
				writeFile(t, s.EvolvePath(tc.file), fmt.Sprintf("{corrupt %d", i))
				dst, err := tc.quarantine(s)
				if err != nil {
					t.Fatal(err)
				}
				copies = append(copies, dst)
			}
			for i, dst := range copies {
				if got, want := readString(t, dst), fmt.Sprintf("{corrupt %d", i); got != want {
					t.Errorf("copy %d (%s) holds %q, want %q", i, filepath.Base(dst), got, want)
				}
			}
		})
	}
}

func TestStore_CorruptCostLedgerFailsClosed(t *testing.T) {
	s := New(t.TempDir())
	corrupt := `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [{"cycle_id": 37,`
	writeFile(t, s.EvolvePath(CostLedgerFile), corrupt)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 42, "decision_log": []}`)

	snap, err := s.Load()
	var lerr *CorruptLedgerError
	if !errors.As(err, &lerr) {
		t.Fatalf("err = %v, want *CorruptLedgerError", err)
	}
	if lerr.Path != s.EvolvePath(CostLedgerFile) || lerr.Err == nil || !strings.Contains(lerr.Error(), "corrupt") {
		t.Fatalf("ledger error = %+v", lerr)
	}
	if snap == nil || snap.CostLedger != nil {
		t.Fatalf("a corrupt ledger must never be read as a ledger: %+v", snap)
	}

	now := time.Date(2026, 4, 19, 6, 0, 0, 0, time.UTC)
	dst, err := s.QuarantineLedger(now)
	if err != nil {
		t.Fatal(err)
	}
	if dst != s.EvolvePath("cost_ledger.json.corrupt") {
		t.Fatalf("copy at %s", dst)
	}
	if got := readString(t, dst); got != corrupt {
		t.Fatalf("copy holds %q", got)
	}
	// Moved, not copied: after a resume the next cycle starts a new
	// ledger instead of halting again on the same bytes.
	if _, err := os.Lstat(s.EvolvePath(CostLedgerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the corrupt ledger is still in place: %v", err)
	}

	// A later corruption must not destroy the first copy.
	second := `{"date": 2026`
	writeFile(t, s.EvolvePath(CostLedgerFile), second)
	dst2, err := s.QuarantineLedger(now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if dst2 == dst {
		t.Fatal("second quarantine reused the first copy's name")
	}
	if got := readString(t, dst); got != corrupt {
		t.Fatalf("first copy overwritten with %q", got)
	}
	if got := readString(t, dst2); got != second {
		t.Fatalf("second copy holds %q", got)
	}
}

func TestStore_SaveWritesIndentedJSONAndRecordsWrites(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	if err := s.SaveState(State{CycleCount: 1, DecisionLog: []DecisionEntry{{Cycle: 1, Timestamp: FormatTime(testNow)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSkillGaps(SkillGaps{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCostLedger(CostLedger{Date: "2026-04-19"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendCycleLog(map[string]any{"cycle_id": 1}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join("agent", "state", "evolve", CostLedgerFile),
		filepath.Join("agent", "state", "evolve", CycleLogFile),
		filepath.Join("agent", "state", "evolve", SkillGapsFile),
		filepath.Join("agent", "state", "evolve", StateFile),
	}
	if got := s.Written(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Written = %v, want %v", got, want)
	}
	b := readString(t, s.EvolvePath(StateFile))
	if !strings.HasPrefix(b, "{\n  \"") || !strings.HasSuffix(b, "}\n") {
		t.Fatalf("state.json is not indented JSON ending in a newline: %q", b)
	}
	gaps := generic(t, []byte(readString(t, s.EvolvePath(SkillGapsFile))))
	if !reflect.DeepEqual(gaps, map[string]any{"schema_version": "1.0.0", "gaps": []any{}}) {
		t.Fatalf("skill_gaps.json = %v", gaps)
	}
	if ledger := generic(t, []byte(readString(t, s.EvolvePath(CostLedgerFile)))).(map[string]any); ledger["schema_version"] != "1.0.0" {
		t.Fatalf("cost_ledger.json = %v", ledger)
	}
	if got := readString(t, s.EvolvePath(CycleLogFile)); got != `{"cycle_id":1}`+"\n" {
		t.Fatalf("cycle log = %q", got)
	}
	snap, err := s.Load()
	if err != nil || len(snap.Corrupt) != 0 || snap.State.CycleCount != 1 {
		t.Fatalf("written files do not load back: %v %+v", err, snap)
	}
}

// The confidence file's shape is decided by the file, whatever the default
// for a project that has none (seed 2-B: never silently convert).
func TestStore_FlatConfidenceStaysFlatThroughLoadAndSave(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ConfidenceFile), flatConfidence)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Confidence.Nested() {
		t.Error("Load reads a flat confidence.json as nested")
	}
	snap.Confidence.Set("ux_evolution", 0.5, testNow)
	if err := s.SaveConfidence(snap.Confidence); err != nil {
		t.Fatal(err)
	}
	got := generic(t, []byte(readString(t, s.EvolvePath(ConfidenceFile))))
	want := map[string]any{"schema_version": "1.0.0", "service_health": 0.54, "test_coverage": 0.74, "backlog": 0.7, "ux_evolution": 0.5}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flat confidence.json rewritten as %v, want %v", got, want)
	}
}

func TestStore_NestedConfidenceStaysNestedThroughLoadAndSave(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ConfidenceFile), nestedConfidence)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveConfidence(snap.Confidence); err != nil {
		t.Fatal(err)
	}
	got := generic(t, []byte(readString(t, s.EvolvePath(ConfidenceFile))))
	if lost := missingFrom(generic(t, []byte(nestedConfidence)), got, "confidence"); len(lost) > 0 {
		t.Fatalf("rewrite lost %v: %v", lost, got)
	}
}

func TestStore_CorruptConfidenceResetsToDefault(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ConfidenceFile), `{"backlog": 0.6,`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != ConfidenceFile {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
	if len(snap.Confidence.Scores) != 0 {
		t.Fatalf("confidence = %+v", snap.Confidence)
	}
}

func TestHaltFile_WriteContainsReasonAndUTCTimestamp(t *testing.T) {
	s := New(t.TempDir())
	now := time.Date(2026, 4, 19, 8, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	if err := s.WriteHalt("agent/safety/HALT", "  cost ledger corrupt — today's spend unknown\n", now); err != nil {
		t.Fatal(err)
	}
	got := readString(t, filepath.Join(s.Root, "agent", "safety", "HALT"))
	if want := "cost ledger corrupt — today's spend unknown\ncreated_at: 2026-04-19T06:00:00Z\n"; got != want {
		t.Fatalf("HALT = %q, want %q", got, want)
	}
}

func TestHaltFile_Exists(t *testing.T) {
	s := New(t.TempDir())
	if ok, content := s.HaltExists("agent/safety/HALT"); ok || content != "" {
		t.Fatalf("missing HALT: %v %q", ok, content)
	}
	if err := s.WriteHalt("agent/safety/HALT", "3 consecutive skill executions failed.", testNow); err != nil {
		t.Fatal(err)
	}
	ok, content := s.HaltExists("agent/safety/HALT")
	if !ok || !strings.HasPrefix(content, "3 consecutive skill executions failed.") || !strings.Contains(content, "created_at: ") {
		t.Fatalf("HALT: %v %q", ok, content)
	}
	// An absolute HALT path inside the project works as well.
	abs := filepath.Join(s.Root, "STOP")
	writeFile(t, abs, "manual stop\n")
	if ok, content := s.HaltExists(abs); !ok || content != "manual stop" {
		t.Fatalf("absolute HALT: %v %q", ok, content)
	}
	// One outside the project is not read, and a switch that cannot be
	// checked is never taken as off.
	outside := filepath.Join(t.TempDir(), "STOP")
	writeFile(t, outside, "outside reason\n")
	if ok, content := s.HaltExists(outside); !ok || strings.Contains(content, "outside reason") || !strings.Contains(content, "outside the project") {
		t.Fatalf("HALT outside the project: %v %q", ok, content)
	}
	// Present but unreadable still halts.
	if err := os.MkdirAll(filepath.Join(s.Root, "HALTDIR"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.HaltExists("HALTDIR"); !ok {
		t.Fatal("an unreadable HALT path does not halt")
	}
}

func TestHaltFile_Remove(t *testing.T) {
	s := New(t.TempDir())
	removed, err := s.RemoveHalt("agent/safety/HALT")
	if removed || err != nil {
		t.Fatalf("RemoveHalt on missing = %v, %v; want false, nil", removed, err)
	}
	if err := s.WriteHalt("agent/safety/HALT", "stop", testNow); err != nil {
		t.Fatal(err)
	}
	removed, err = s.RemoveHalt("agent/safety/HALT")
	if !removed || err != nil {
		t.Fatalf("RemoveHalt = %v, %v", removed, err)
	}
	if ok, _ := s.HaltExists("agent/safety/HALT"); ok {
		t.Fatal("HALT still present")
	}
}

func cycleEntry(n int) string {
	return fmt.Sprintf("## Cycle #%d -- 2026-04-14 03:14 UTC -- backlog\n- **Skill**: /plan-backlog\n- **Result**: success\n", n)
}

func TestChangelog_NewestFirstWithHeader(t *testing.T) {
	s := New(t.TempDir())
	for n := 1; n <= 3; n++ {
		if err := s.PrependChangelog(cycleEntry(n)); err != nil {
			t.Fatal(err)
		}
	}
	b := readString(t, s.EvolvePath(ChangelogFile))
	if !strings.HasPrefix(b, "# CHANGELOG\n\n## Cycle #3 ") {
		t.Fatalf("CHANGELOG.md starts %q", b[:min(len(b), 40)])
	}
	entries, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries", len(entries))
	}
	for i, e := range entries {
		if want := cycleEntry(3 - i); e != want {
			t.Fatalf("entry %d = %q, want %q", i, e, want)
		}
	}
	if s.Written()[0] != filepath.Join("agent", "state", "evolve", ChangelogFile) {
		t.Fatalf("Written = %v", s.Written())
	}
}

func TestChangelog_KeepsAtMost50Entries(t *testing.T) {
	s := New(t.TempDir())
	for n := 1; n <= 55; n++ {
		if err := s.PrependChangelog(cycleEntry(n)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != ChangelogMax || ChangelogMax != 50 {
		t.Fatalf("%d entries, want 50", len(entries))
	}
	if !strings.HasPrefix(entries[0], "## Cycle #55 ") || !strings.HasPrefix(entries[49], "## Cycle #6 ") {
		t.Fatalf("kept %q .. %q", entries[0][:14], entries[49][:14])
	}
	if b := readString(t, s.EvolvePath(ChangelogFile)); strings.Count(b, "# CHANGELOG") != 1 || !strings.HasPrefix(b, "# CHANGELOG\n") {
		t.Fatal("header lost or repeated")
	}
}

func TestChangelog_CycleCardFixture(t *testing.T) {
	root := projectFromFixture(t, "cycle-card")
	s := New(root)
	before, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 {
		t.Fatalf("fixture has %d entries, want 2", len(before))
	}
	if err := s.PrependChangelog(cycleEntry(153)); err != nil {
		t.Fatal(err)
	}
	after, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 3 || after[0] != cycleEntry(153) || after[1] != before[0] || after[2] != before[1] {
		t.Fatalf("entries after prepend: %q", after)
	}
	if !strings.HasPrefix(after[1], "## Cycle #152 -- 2026-04-14 03:14 UTC -- test_coverage\n") || !strings.Contains(after[2], "- **PR**: #28 (Risk Tier 1)") {
		t.Fatalf("fixture entries changed: %q", after[1:])
	}
	if b := readString(t, s.EvolvePath(ChangelogFile)); !strings.HasPrefix(b, "# CHANGELOG\n\n## Cycle #153 ") {
		t.Fatalf("CHANGELOG.md starts %q", b[:40])
	}
}

// Every fixture written by the original project must load cleanly.
func TestCompatFixturesLoad(t *testing.T) {
	dirs, err := os.ReadDir(fixturesDir)
	if err != nil {
		t.Skipf("compat fixtures not available: %v", err)
	}
	loaded := map[string]*Snapshot{}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(fixturesDir, d.Name(), "agent", "state", "evolve")); err != nil {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			root := projectFromFixture(t, d.Name())
			snap, err := New(root).Load()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range snap.Corrupt {
				t.Errorf("%s reported corrupt: %v", c.File, c.Err)
			}
			loaded[d.Name()] = snap
		})
	}
	if len(loaded) == 0 {
		t.Fatal("no fixture has agent/state/evolve")
	}
	check := func(name string, f func(t *testing.T, s *Snapshot)) {
		t.Run("values/"+name, func(t *testing.T) {
			s, ok := loaded[name]
			if !ok {
				t.Skipf("fixture %s not loaded", name)
			}
			f(t, s)
		})
	}
	check("cycle-card", func(t *testing.T, s *Snapshot) {
		if !s.StateFound || s.State.CycleCount != 152 || s.State.SchemaVersion != "1.2.0" {
			t.Fatalf("state = %+v", s.State)
		}
		if s.State.LastCycle == nil || *s.State.LastCycle != "2026-04-14T03:14:00Z" {
			t.Fatalf("last_cycle = %v", s.State.LastCycle)
		}
		log := s.State.DecisionLog
		if len(log) != 2 || log[0].PRNumber == nil || *log[0].PRNumber != 28 || log[1].PRNumber == nil || *log[1].PRNumber != 29 {
			t.Fatalf("decision_log = %+v", log)
		}
		if log[1].SelectedDomain != "test_coverage" || log[1].Score == nil || *log[1].Score != 11.3 || log[1].RiskTier == nil || *log[1].RiskTier != 1 {
			t.Fatalf("entry 152 = %+v", log[1])
		}
		var outcomes []map[string]any
		if err := json.Unmarshal(log[1].PROutcomes, &outcomes); err != nil || len(outcomes) != 1 || outcomes[0]["outcome"] != "rejected" {
			t.Fatalf("pr_outcomes = %s", log[1].PROutcomes)
		}
		want := map[string]float64{"service_health": 0.54, "test_coverage": 0.74, "backlog": 0.7}
		if !reflect.DeepEqual(s.Confidence.Scores, want) {
			t.Fatalf("confidence = %v", s.Confidence.Scores)
		}
		if s.CostLedger == nil || s.CostLedger.Date != "2026-04-14" || s.CostLedger.TotalEstimatedUSD != 0.38 || len(s.CostLedger.Entries) != 2 {
			t.Fatalf("ledger = %+v", s.CostLedger)
		}
	})
	check("memo-intervention", func(t *testing.T, s *Snapshot) {
		if s.Memos.SchemaVersion != "1.1.0" || len(s.Memos.Interventions) != 0 || len(s.Memos.History) != 0 {
			t.Fatalf("memos = %+v", s.Memos)
		}
		if s.State.CycleCount != 16 || len(s.State.DecisionLog) != 16 || s.State.DecisionLog[15].SelectedDomain != "service_health" {
			t.Fatalf("state = %+v", s.State)
		}
	})
	check("scorecard", func(t *testing.T, s *Snapshot) {
		if len(s.Outcomes.Entries) != 6 {
			t.Fatalf("%d outcomes", len(s.Outcomes.Entries))
		}
		o := s.Outcomes.Entries
		if o[2].ResultType != "pr_created" || o[2].PRNumber == nil || *o[2].PRNumber != 41 || o[0].PRNumber != nil || o[4].QualityMult != 1.0 {
			t.Fatalf("outcomes = %+v", o)
		}
		if o[1].OnMission == nil || *o[1].OnMission || o[0].OnMission != nil {
			t.Fatalf("on_mission not tri-state: %+v %+v", o[0], o[1])
		}
		if len(s.ActionQueue.Pending) != 2 || s.ActionQueue.Pending[1].ID != "a2" {
			t.Fatalf("queue = %+v", s.ActionQueue)
		}
		if len(s.Goals.Goals) != 2 || s.Goals.Goals[1].ProgressValue() != 1.0 || !strings.HasPrefix(s.Goals.Goals[0].MetricCommand, "jq ") {
			t.Fatalf("goals = %+v", s.Goals)
		}
		if c := s.Metrics.Counters; c.TotalCycles != 6 || c.TotalFutileCycles != 1 || c.ActionsAdded != 4 || s.Metrics.Cost.TotalEstimatedUSD != 0.30 {
			t.Fatalf("metrics = %+v", s.Metrics)
		}
		if len(s.SkillGaps.Gaps) != 4 || !s.SkillGaps.Gaps[2].Resolved || s.SkillGaps.Gaps[3].Resolved {
			t.Fatalf("gaps = %+v", s.SkillGaps)
		}
		if s.StateFound {
			t.Fatal("scorecard has no state.json")
		}
	})
	check("cost-ledger-autopatch", func(t *testing.T, s *Snapshot) {
		l := s.CostLedger
		if l == nil || l.Date != "2026-04-19" || len(l.Entries) != 3 || l.TotalEstimatedUSD != 0.08 {
			t.Fatalf("ledger = %+v", l)
		}
		if l.Entries[1].CycleID != 38 || l.Entries[1].Skill != "/check-tests" || l.Entries[1].EstimatedUSD != 0.05 || l.Entries[1].Chain == nil {
			t.Fatalf("entry = %+v", l.Entries[1])
		}
		if s.State.CycleCount != 42 {
			t.Fatalf("state = %+v", s.State)
		}
	})
}

// Rewriting a fixture file through its model keeps every key and value the
// original project wrote.
func TestCompatFixturesRewriteLosesNothing(t *testing.T) {
	models := map[string]func([]byte) (any, error){
		StateFile: decoder[State](), ConfidenceFile: decoder[Confidence](), GoalsFile: decoder[Goals](),
		ActionQueueFile: decoder[ActionQueue](), SkillGapsFile: decoder[SkillGaps](), MetricsFile: decoder[Metrics](),
		CostLedgerFile: decoder[CostLedger](), OutcomesFile: decoder[Outcomes](), MemosFile: decoder[Memos](),
	}
	files, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "evolve", "*.json"))
	lens, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "*", "lens.json"))
	if len(files) == 0 {
		t.Skip("compat fixtures not available")
	}
	n := 0
	for _, f := range append(files, lens...) {
		dec, ok := models[filepath.Base(f)]
		if filepath.Base(f) == "lens.json" {
			dec, ok = decoder[Lens](), true
		}
		if !ok {
			continue
		}
		n++
		rel, _ := filepath.Rel(fixturesDir, f)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := dec(b)
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			orig := generic(t, b).(map[string]any)
			if filepath.Base(f) == MemosFile {
				delete(orig, "schema_version") // promoted to 1.1.0 on write
			}
			if lost := missingFrom(orig, generic(t, out), filepath.Base(f)); len(lost) > 0 {
				t.Fatalf("lost: %v\nwritten: %s", lost, out)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d fixture files checked", n)
	}
}

func TestCompatFixtureLens(t *testing.T) {
	s := New(projectFromFixture(t, "cycle-card"))
	l, found, err := s.ReadLens("service_health")
	if err != nil || !found {
		t.Fatalf("ReadLens = %v, %v", found, err)
	}
	if l.Domain != "service_health" || len(l.FocusItems) != 1 || len(l.LearnedThresholds) != 1 || len(l.Evidence) != 1 {
		t.Fatalf("lens = %+v", l)
	}
	a := l.Active()
	if len(a.FocusItems) != 1 || a.FocusItems[0].Item != "/api/expand latency" || a.FocusItems[0].Confidence != 0.6 {
		t.Fatalf("focus item at 0.6 not active: %+v", a.FocusItems)
	}
	if len(a.LearnedThresholds) != 1 || a.LearnedThresholds[0].Value == nil || *a.LearnedThresholds[0].Value != 0.25 {
		t.Fatalf("threshold at 0.7 not active: %+v", a.LearnedThresholds)
	}
	if a.Domain != "service_health" || a.LastUpdated != "2026-04-14T03:14:00Z" {
		t.Fatalf("active lens header = %+v", a)
	}
	if _, found, err := s.ReadLens("backlog"); found || err != nil {
		t.Fatalf("missing lens: %v, %v", found, err)
	}
}

func TestStore_PruneRunsKeepsTheLastFifty(t *testing.T) {
	s := New(t.TempDir())
	for _, c := range []int{1, 49, 50, 51, 100} {
		if err := s.SaveRunLog(c, "/x", []byte("log")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PruneRuns(100)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	for c, want := range map[int]bool{1: false, 50: false, 51: true, 100: true} {
		if _, err := os.Stat(s.RunLogPath(c, "/x")); (err == nil) != want {
			t.Errorf("cycle %d kept %v, want %v", c, err == nil, want)
		}
	}
}

// An evolve file that is a symlink to a file inside the project (.git/config,
// a .env: not JSON, so corrupt) is moved aside as the link it is: copying
// it would write the bytes it reaches — a credential — into a new file
// under agent/state/ that nothing ignores. The target is left as it was.
func TestStore_QuarantineMovesASymlinkNeverCopiesItsTarget(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	secretBytes := "[remote \"origin\"]\n\turl = https://ghp_Credential@example.invalid/x.git\n"
	writeFile(t, filepath.Join(root, ".git", "config"), secretBytes)
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "..", ".git", "config"), s.EvolvePath(MemosFile)); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != MemosFile {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
	dst, err := s.Quarantine(snap.Corrupt[0], time.Date(2026, 4, 14, 3, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dst); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is not the link moved aside: %v", dst, err)
	}
	if _, err := os.Lstat(s.EvolvePath(MemosFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still in place: %v", err)
	}
	err = filepath.WalkDir(filepath.Join(root, "agent"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "ghp_Credential") {
				t.Errorf("%s holds the credential", p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != secretBytes {
		t.Errorf("the target changed: %q", b)
	}
}
