package state

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// loadClean loads the project and fails on any corrupt file or error.
func loadClean(t *testing.T, s *Store) *Snapshot {
	t.Helper()
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) > 0 {
		t.Fatalf("reported corrupt (a mistyped value must not reset the file): %+v", snap.Corrupt)
	}
	return snap
}

// warningsAbout returns the warnings that name file and contain every part.
func warningsAbout(warns []string, file string, parts ...string) []string {
	var out []string
	for _, w := range warns {
		if !strings.Contains(w, file+": ") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			out = append(out, w)
		}
	}
	return out
}

// wantOneWarning checks that exactly one warning names file, the JSON
// pointer and the value.
func wantOneWarning(t *testing.T, warns []string, file, ptr, value string) {
	t.Helper()
	if got := warningsAbout(warns, file, ptr+": ", value); len(got) != 1 {
		t.Errorf("want one warning naming %s, %s and %s; got %d in:\n%s", file, ptr, value, len(got), strings.Join(warns, "\n"))
	}
}

// Each attack writes one file whose values include some of the wrong type.
// The file must not be reset; the values readable are used; the others
// are left out; each is named in one warning with its file, JSON pointer
// and value; and the next save writes each back as it was written.
func TestTolerant_MistypedValuesNeverResetAFile(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		doc   string
		check func(t *testing.T, snap *Snapshot)
		// warned are pointer -> value shown in the warning.
		warned map[string]string
		// kept are the members the saved file must hold as written.
		kept []string
		save func(s *Store, snap *Snapshot) error
	}{
		{
			name: "state decision log",
			file: StateFile,
			doc: `{"schema_version": "1.2.0", "cycle_count": 30, "last_cycle": "2026-04-10T09:00:00Z", "cycle_in_progress": false,
 "consecutive_observe_only_cycles": 0, "consecutive_silent_failures": 1,
 "decision_log": [
  {"cycle": 28, "timestamp": "2026-04-08T09:00:00Z", "selected_domain": "api", "pr_number": "#29", "chain_executed": [], "chain_count": 1},
  {"cycle": "29", "timestamp": "2026-04-09T09:00:00Z", "selected_domain": "docs", "score": "3.5", "had_output": "true", "chain_executed": [], "chain_count": 1},
  {"cycle": 30, "timestamp": "2026-04-10T09:00:00Z", "selected_domain": "api", "pr_number": "soon", "risk_tier": 2, "chain_executed": [], "chain_count": 1}
 ]}`,
			check: func(t *testing.T, snap *Snapshot) {
				st := snap.State
				if !snap.StateFound || st.CycleCount != 30 || len(st.DecisionLog) != 3 || st.ConsecutiveSilentFailures != 1 {
					t.Fatalf("state = %+v", st)
				}
				d := st.DecisionLog
				if d[0].PRNumber == nil || *d[0].PRNumber != 29 || d[0].SelectedDomain != "api" {
					t.Errorf("entry 0 = %+v, want pr_number 29", d[0])
				}
				if d[1].Cycle != 29 || d[1].Score == nil || *d[1].Score != 3.5 || d[1].HadOutput == nil || !*d[1].HadOutput {
					t.Errorf("entry 1 = %+v, want cycle 29, score 3.5, had_output true", d[1])
				}
				if d[2].PRNumber != nil || d[2].RiskTier == nil || *d[2].RiskTier != 2 {
					t.Errorf("entry 2 = %+v, want no pr_number and risk_tier 2", d[2])
				}
			},
			warned: map[string]string{
				"/decision_log/0/pr_number":  `"#29"`,
				"/decision_log/1/cycle":      `"29"`,
				"/decision_log/1/score":      `"3.5"`,
				"/decision_log/1/had_output": `"true"`,
				"/decision_log/2/pr_number":  `"soon"`,
			},
			kept: []string{`"pr_number": "#29"`, `"cycle": "29"`, `"score": "3.5"`, `"had_output": "true"`, `"pr_number": "soon"`},
			save: func(s *Store, snap *Snapshot) error { return s.SaveState(snap.State) },
		},
		{
			name: "memos",
			file: MemosFile,
			doc: `{"schema_version": "1.1.0", "score_adjustments": {"api": "0.5", "docs": -1},
 "interventions": [
  {"domain": "api", "delta": "-10", "type": "monopoly_breaker", "created_at_cycle": 12, "expires_after_cycles": 3, "applied_count": 0},
  {"domain": "docs", "delta": "a lot", "created_at_cycle": 12, "expires_after_cycles": "3", "applied_count": 1}
 ],
 "history": [{"cycle": 12, "domain": "api", "message": "m"}], "last_memo": null}`,
			check: func(t *testing.T, snap *Snapshot) {
				m := snap.Memos
				if len(m.Interventions) != 2 || len(m.History) != 1 {
					t.Fatalf("memos = %+v", m)
				}
				if iv := m.Interventions[0]; iv.Delta != -10 || iv.Domain != "api" || iv.ExpiresAfterCycles != 3 {
					t.Errorf("intervention 0 = %+v, want delta -10", iv)
				}
				if iv := m.Interventions[1]; iv.Delta != 0 || iv.ExpiresAfterCycles != 3 || iv.AppliedCount != 1 {
					t.Errorf("intervention 1 = %+v, want delta left out (0), expires 3", iv)
				}
				if m.ScoreAdjustments["api"] != 0.5 || m.ScoreAdjustments["docs"] != -1 {
					t.Errorf("adjustments = %v", m.ScoreAdjustments)
				}
			},
			warned: map[string]string{
				"/interventions/0/delta":                `"-10"`,
				"/interventions/1/delta":                `"a lot"`,
				"/interventions/1/expires_after_cycles": `"3"`,
				"/score_adjustments/api":                `"0.5"`,
			},
			kept: []string{`"delta": "-10"`, `"delta": "a lot"`, `"expires_after_cycles": "3"`, `"api": "0.5"`},
			save: func(s *Store, snap *Snapshot) error { return s.SaveMemos(snap.Memos) },
		},
		{
			name: "goals",
			file: GoalsFile,
			doc: `{"schema_version": "1.0.0", "goals": [
  {"id": "g1", "title": "coverage", "target": "80", "progress": "half", "current_value": 61.5},
  {"id": "g2", "progress": 0.5, "related_domains": ["api", 7]}
 ]}`,
			check: func(t *testing.T, snap *Snapshot) {
				g := snap.Goals.Goals
				if len(g) != 2 {
					t.Fatalf("goals = %+v", g)
				}
				if g[0].Target == nil || *g[0].Target != 80 || g[0].Progress != nil || g[0].CurrentValue == nil || *g[0].CurrentValue != 61.5 {
					t.Errorf("goal 0 = %+v, want target 80, no progress", g[0])
				}
				if g[1].ProgressValue() != 0.5 || len(g[1].RelatedDomains) != 2 || g[1].RelatedDomains[1] != "7" {
					t.Errorf("goal 1 = %+v", g[1])
				}
			},
			warned: map[string]string{
				"/goals/0/target":            `"80"`,
				"/goals/0/progress":          `"half"`,
				"/goals/1/related_domains/1": `7`,
			},
			kept: []string{`"target": "80"`, `"progress": "half"`, "\"related_domains\": [\n"},
			save: func(s *Store, snap *Snapshot) error { return s.SaveGoals(snap.Goals) },
		},
		{
			name: "principles",
			file: PrinciplesFile,
			doc: `{"schema_version": "1.0.0", "principles": [
  {"text": "small PRs merge", "confidence": "0.8", "source_episodes": ["2026-W14"], "created_at": "2026-04-01", "last_confirmed": "2026-04-06"},
  {"id": "P002", "principle": "tests first", "confidence": "high", "source": "manual"}
 ]}`,
			check: func(t *testing.T, snap *Snapshot) {
				p := snap.Principles.Principles
				if len(p) != 2 || p[0].Confidence != 0.8 || p[0].Text != "small PRs merge" || p[1].Confidence != 0 || p[1].Text != "tests first" {
					t.Fatalf("principles = %+v", p)
				}
			},
			warned: map[string]string{
				"/principles/0/confidence": `"0.8"`,
				"/principles/1/confidence": `"high"`,
			},
			kept: []string{`"confidence": "0.8"`, `"confidence": "high"`},
			save: func(s *Store, snap *Snapshot) error { return s.SavePrinciples(snap.Principles) },
		},
		{
			name: "confidence nested",
			file: ConfidenceFile,
			doc:  `{"schema_version": "1.0.0", "domains": {"api": {"score": "0.8", "last_updated": "2026-04-01T00:00:00Z"}, "docs": {"score": 0.6}, "ops": {"score": "n/a"}, "web": "0.7"}}`,
			check: func(t *testing.T, snap *Snapshot) {
				c := snap.Confidence
				if !c.Nested() || c.Scores["api"] != 0.8 || c.Scores["docs"] != 0.6 || c.Scores["web"] != 0.7 {
					t.Fatalf("confidence = %+v", c.Scores)
				}
				if _, ok := c.Get("ops"); ok {
					t.Errorf("ops has a score: %v", c.Scores)
				}
			},
			warned: map[string]string{
				"/domains/api/score": `"0.8"`,
				"/domains/ops/score": `"n/a"`,
				"/domains/web":       `"0.7"`,
			},
			kept: []string{`"score": "0.8"`, `"score": "n/a"`, `"web": "0.7"`},
			save: func(s *Store, snap *Snapshot) error { return s.SaveConfidence(snap.Confidence) },
		},
		{
			name: "confidence flat",
			file: ConfidenceFile,
			doc:  `{"schema_version": "1.0.0", "api": "0.8", "docs": 0.6}`,
			check: func(t *testing.T, snap *Snapshot) {
				if c := snap.Confidence; c.Nested() || c.Scores["api"] != 0.8 || c.Scores["docs"] != 0.6 || len(c.Scores) != 2 {
					t.Fatalf("confidence = %+v", c.Scores)
				}
			},
			warned: map[string]string{"/api": `"0.8"`},
			kept:   []string{`"api": "0.8"`, `"schema_version": "1.0.0"`},
			save:   func(s *Store, snap *Snapshot) error { return s.SaveConfidence(snap.Confidence) },
		},
		{
			name: "outcomes",
			file: OutcomesFile,
			doc: `{"schema_version": "1.0.0", "entries": [
  {"cycle_id": "12", "domain": "api", "result_type": "pr_created", "quality_multiplier": 1.0, "pr_number": "#29", "had_output": "yes"},
  {"cycle_id": 13, "domain": "docs", "result_type": "no_output", "quality_multiplier": "0.5", "pr_number": null}
 ]}`,
			check: func(t *testing.T, snap *Snapshot) {
				e := snap.Outcomes.Entries
				if len(e) != 2 || e[0].CycleID != 12 || e[0].PRNumber == nil || *e[0].PRNumber != 29 || e[0].HadOutput != nil || e[0].QualityMult != 1 {
					t.Fatalf("outcomes = %+v", e)
				}
				if e[1].CycleID != 13 || e[1].QualityMult != 0.5 || e[1].PRNumber != nil {
					t.Errorf("outcome 1 = %+v", e[1])
				}
			},
			warned: map[string]string{
				"/entries/0/cycle_id":           `"12"`,
				"/entries/0/pr_number":          `"#29"`,
				"/entries/0/had_output":         `"yes"`,
				"/entries/1/quality_multiplier": `"0.5"`,
			},
			kept: []string{`"cycle_id": "12"`, `"pr_number": "#29"`, `"had_output": "yes"`, `"quality_multiplier": "0.5"`, `"pr_number": null`},
			save: func(s *Store, snap *Snapshot) error { return s.SaveOutcomes(snap.Outcomes) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t.TempDir())
			writeFile(t, s.EvolvePath(tc.file), tc.doc)
			snap := loadClean(t, s)
			tc.check(t, snap)
			for ptr, val := range tc.warned {
				wantOneWarning(t, snap.Warnings, tc.file, ptr, val)
			}
			if err := tc.save(s, snap); err != nil {
				t.Fatal(err)
			}
			saved := readString(t, s.EvolvePath(tc.file))
			for _, k := range tc.kept {
				if !strings.Contains(saved, k) {
					t.Errorf("saved %s lost %s:\n%s", tc.file, k, saved)
				}
			}
			// Read again: the same values, the same warnings, and a
			// second save writes the same bytes.
			again := loadClean(t, s)
			tc.check(t, again)
			if got, want := warningsAbout(again.Warnings, tc.file), warningsAbout(snap.Warnings, tc.file); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("warnings changed across a save:\n%s\nthen\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
			if err := tc.save(s, again); err != nil {
				t.Fatal(err)
			}
			if second := readString(t, s.EvolvePath(tc.file)); second != saved {
				t.Errorf("second save differs:\n%s\n%s", saved, second)
			}
		})
	}
}

// A value the program sets replaces the one kept as written; the others
// stay as they were.
func TestTolerant_ANewValueReplacesTheKeptOne(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 4, "decision_log": [
 {"cycle": 3, "timestamp": "t", "pr_number": "soon", "score": "2.5", "chain_executed": "scan", "chain_count": 1}]}`)
	snap := loadClean(t, s)
	e := &snap.State.DecisionLog[0]
	if e.PRNumber != nil || *e.Score != 2.5 || e.ChainExecuted != nil {
		t.Fatalf("entry = %+v", e)
	}
	e.PRNumber = ptr(31)
	e.ChainExecuted = []string{"/scan"}
	if err := s.SaveState(snap.State); err != nil {
		t.Fatal(err)
	}
	saved := readString(t, s.EvolvePath(StateFile))
	for _, want := range []string{`"pr_number": 31`, `"score": "2.5"`, `"/scan"`} {
		if !strings.Contains(saved, want) {
			t.Errorf("saved state lacks %s:\n%s", want, saved)
		}
	}
	for _, gone := range []string{`"soon"`, `"chain_executed": "scan"`} {
		if strings.Contains(saved, gone) {
			t.Errorf("saved state still holds %s:\n%s", gone, saved)
		}
	}
	again := loadClean(t, s)
	if got := again.State.DecisionLog[0]; got.PRNumber == nil || *got.PRNumber != 31 || len(got.ChainExecuted) != 1 {
		t.Fatalf("entry read back = %+v", got)
	}
}

// An entry that is not an object is left out of the computation; the
// others are used, and the list is written back as it was while the
// program has not changed it.
func TestTolerant_AnEntryThatIsNotAnObject(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(GoalsFile), `{"goals": ["fix the build", {"id": "g2", "progress": "0.25"}]}`)
	snap := loadClean(t, s)
	if g := snap.Goals.Goals; len(g) != 1 || g[0].ID != "g2" || g[0].ProgressValue() != 0.25 {
		t.Fatalf("goals = %+v", g)
	}
	wantOneWarning(t, snap.Warnings, GoalsFile, "/goals/0", `"fix the build"`)
	// The entry read is numbered as the file numbers it.
	wantOneWarning(t, snap.Warnings, GoalsFile, "/goals/1/progress", `"0.25"`)
	if err := s.SaveGoals(snap.Goals); err != nil {
		t.Fatal(err)
	}
	if saved := readString(t, s.EvolvePath(GoalsFile)); !strings.Contains(saved, `"fix the build"`) || !strings.Contains(saved, `"progress": "0.25"`) {
		t.Fatalf("saved goals lost a value:\n%s", saved)
	}
}

// A file with many mistyped values says so in a few lines, and a long
// value is shortened.
func TestTolerant_WarningsAreBoundedAndShort(t *testing.T) {
	s := New(t.TempDir())
	var entries []string
	for i := 0; i < 9; i++ {
		entries = append(entries, fmt.Sprintf(`{"cycle": %d, "timestamp": "t", "pr_number": "pr-%d", "chain_executed": [], "chain_count": 1}`, i+1, i))
	}
	long := strings.Repeat("x", 500)
	entries = append(entries, `{"cycle": 10, "timestamp": "t", "score": "`+long+`", "chain_executed": [], "chain_count": 1}`)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 10, "decision_log": [`+strings.Join(entries, ",")+`]}`)
	snap := loadClean(t, s)
	if len(snap.State.DecisionLog) != 10 || snap.State.CycleCount != 10 {
		t.Fatalf("state = %+v", snap.State)
	}
	got := warningsAbout(snap.Warnings, StateFile)
	if len(got) != 6 || !strings.Contains(got[5], "5 more values not taken as written") {
		t.Fatalf("warnings = %d:\n%s", len(got), strings.Join(got, "\n"))
	}
	// The long value, alone in its file, is cut.
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 10, "decision_log": [`+entries[9]+`]}`)
	snap = loadClean(t, s)
	w := warningsAbout(snap.Warnings, StateFile, "/decision_log/0/score")
	if len(w) != 1 || strings.Contains(w[0], long) || !strings.Contains(w[0], "…") {
		t.Fatalf("warnings = %q", w)
	}
}

// A cycle_count that is not a number is not a first cycle: the count is
// recovered from the highest cycle recorded, and written back as a number.
func TestTolerant_UnreadableCycleCountIsRecovered(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": "lots", "decision_log": [{"cycle": 40, "timestamp": "t", "chain_executed": [], "chain_count": 1}]}`)
	snap := loadClean(t, s)
	if snap.State.CycleCount != 40 || len(snap.State.DecisionLog) != 1 {
		t.Fatalf("state = %+v", snap.State)
	}
	if w := warningsAbout(snap.Warnings, StateFile, "/cycle_count", "using 40"); len(w) != 1 {
		t.Fatalf("warnings = %q", snap.Warnings)
	}
	if err := s.SaveState(snap.State); err != nil {
		t.Fatal(err)
	}
	if saved := readString(t, s.EvolvePath(StateFile)); !strings.Contains(saved, `"cycle_count": 40`) || strings.Contains(saved, "lots") {
		t.Fatalf("saved = %s", saved)
	}
}

// A state.json that is not JSON loses its count; CHANGELOG.md's newest
// "## Cycle #N" heading still records it (a heading inside a code fence
// is an example, not a cycle).
func TestTolerant_CycleCountRecoveredFromChangelog(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 57, "decision_log": [`)
	writeFile(t, s.EvolvePath(ChangelogFile), "# CHANGELOG\n\n```\n## Cycle #9999 — example\n```\n\n## Cycle #57 — 2026-04-10 09:00 UTC\n\n- **Result**: success\n\n---\n\n## Cycle #56 — 2026-04-09 09:00 UTC\n")
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != StateFile {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
	if snap.State.CycleCount != 57 {
		t.Fatalf("cycle_count = %d, want 57 from CHANGELOG.md", snap.State.CycleCount)
	}
	if err := s.Reset(StateFile); err != nil {
		t.Fatal(err)
	}
	if saved := readString(t, s.EvolvePath(StateFile)); !strings.Contains(saved, `"cycle_count": 57`) {
		t.Fatalf("reset state.json = %s", saved)
	}
}

// Only the head of CHANGELOG.md is read: a heading beyond it is not seen.
func TestTolerant_ChangelogReadIsBounded(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `not json`)
	body := "# CHANGELOG\n\n" + strings.Repeat("filler line\n", (65<<10)/12) + "## Cycle #70 — late\n"
	if err := os.WriteFile(s.EvolvePath(ChangelogFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.State.CycleCount != 0 {
		t.Fatalf("cycle_count = %d: the changelog was read past its head", snap.State.CycleCount)
	}
}

// A cost too large for a float64 no longer makes the ledger corrupt (which
// halts the loop); it counts as the largest cost, so no spend is hidden
// from the daily cap.
func TestTolerant_HugeCostCountsAtTheCap(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(CostLedgerFile), `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [{"cycle_id": 3, "timestamp": "t", "skill": "/a", "chain": [], "estimated_usd": 1e309}], "total_estimated_usd": "0.5"}`)
	snap := loadClean(t, s)
	l := snap.CostLedger
	if l == nil || len(l.Entries) != 1 || l.Entries[0].EstimatedUSD != MaxCostUSD || l.TotalEstimatedUSD < MaxCostUSD {
		t.Fatalf("ledger = %+v", l)
	}
	wantOneWarning(t, snap.Warnings, CostLedgerFile, "/entries/0/estimated_usd", "1e309")
	wantOneWarning(t, snap.Warnings, CostLedgerFile, "/total_estimated_usd", `"0.5"`)
}

// Files with values of the wrong type meet the fuzzers' contract: what
// decodes re-encodes, and writing and reading are a fixed point.
func TestTolerant_RoundTripIsAFixedPoint(t *testing.T) {
	docs := []string{
		`{"cycle_count": "12", "last_cycle": 5, "decision_log": ["x", {"cycle": "#3", "pr_number": "#29", "chain_executed": "a", "score": "1e999", "Had_Output": "TRUE"}, {"cycle": 4, "pr_number": 7, "PR_NUMBER": "no"}], "domain_first_outputs": {"a": [{"cycle": "1", "had_output": "yes"}]}}`,
		`{"score_adjustments": {"a": "0.5", "b": "x"}, "interventions": [{"domain": 3, "delta": "-10"}, 7], "history": {"cycle": 1}}`,
		`{"goals": [{"id": 12, "target": "80", "progress": "half", "related_domains": "api"}, null, "g"]}`,
		`{"entries": [{"cycle_id": "12", "pr_number": "#29", "quality_multiplier": "x", "had_output": "true"}]}`,
		`{"pending": [{"id": "a", "rice_score": "12.5", "pr_number": "#4", "related_files": ["x", 1]}], "completed": "none"}`,
		`{"principles": [{"text": "t", "confidence": "0.8", "occurrences": "2", "source_episodes": "2026-W14"}]}`,
		`{"episodes": [{"id": "EP-2026-W14", "cycle_range": ["1", 2], "total_cycles": "2", "domains_selected": {"a": "3"}}]}`,
		`{"date": "2026-04-19", "entries": [{"cycle_id": "#3", "estimated_usd": "0.25", "chain": "a"}], "total_estimated_usd": "0.25"}`,
		`{"counters": {"total_cycles": "10", "domain_executions": {"a": "3", "b": "x"}}, "cost": {"total_estimated_usd": "1.5"}}`,
		`{"checkpoints": [{"cycle": "3", "state_snapshot": {"confidence": {"a": 1}, "action_queue": [{"id": "x", "rice_score": "2"}]}}]}`,
	}
	for i, doc := range docs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			b := []byte(doc)
			// Every one of them is an object: every file type reads it.
			oks := []bool{}
			ok := func(_, _ any, ok bool) { oks = append(oks, ok) }
			ok(roundTrip[State](t, b))
			ok(roundTrip[Memos](t, b))
			ok(roundTrip[Goals](t, b))
			ok(roundTrip[Outcomes](t, b))
			ok(roundTrip[ActionQueue](t, b))
			ok(roundTrip[Principles](t, b))
			ok(roundTrip[Episodes](t, b))
			ok(roundTrip[CostLedger](t, b))
			ok(roundTrip[Metrics](t, b))
			ok(roundTrip[Checkpoints](t, b))
			ok(roundTrip[Confidence](t, b))
			for j, o := range oks {
				if !o {
					t.Errorf("file type %d refused the document", j)
				}
			}
		})
	}
}
