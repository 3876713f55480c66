package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The benchmarks below read and write the state of a project that has run
// `cycles` hourly cycles with 8 domains, shaped as ooda writes it: every
// capped list (outcomes at 200, contrarian checks at 100, the decision
// log at 20, CHANGELOG.md at 50 entries, reflections at 20, lens evidence
// at 20) as full as that many cycles make it. The files are generated,
// not committed: a cycle-2,000 project is about 200 KB of state.
//
// OODA_BENCH_PROJECT=DIR runs the load benchmarks on a real project's
// state instead (it is only read).

// benchProject writes the state of a project after `cycles` cycles under
// a new temporary directory and returns the directory.
func benchProject(tb testing.TB, cycles int) string {
	tb.Helper()
	root := tb.TempDir()
	evolve := filepath.Join(root, "agent", "state", "evolve")
	if err := os.MkdirAll(evolve, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, data := range benchFiles(cycles) {
		p := filepath.Join(root, "agent", "state", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// benchTime is the instant of cycle c of the benchmark project.
func benchTime(c int) string {
	return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c) * time.Hour).Format(time.RFC3339)
}

// benchFiles is the state of a project after `cycles` cycles, by path
// under agent/state/ ("evolve/state.json", "d0/lens.json").
func benchFiles(cycles int) map[string][]byte {
	const domains = 8
	last := func(n int) (from int) { return max(1, cycles-n+1) }
	scores := func() string {
		var s []string
		for d := range domains {
			s = append(s, fmt.Sprintf(`"d%d": %.4f`, d, 70.6-0.0052*float64(d)))
		}
		return "{" + strings.Join(s, ", ") + "}"
	}()
	var decisions, checks, outcomes, reflections, changelog, episodes, costs []string
	for c := last(20); c <= cycles; c++ {
		decisions = append(decisions, fmt.Sprintf(`{"cycle": %d, "timestamp": %q, "action": "execute", "selected_domain": "d0", "selected_skill": "/true",
      "score": 0, "raw_score": -16.6733, "confidence": 0.1, "orient_summary": "8 domain(s) observed, no active alerts. Focus: d0 (confidence-gated). Same focus as last cycle.",
      "result": "success", "score_verified": true, "memo_written": true, "had_output": false, "gated": true, "result_type": "futile", "quality_multiplier": 0,
      "cycle_mode": "feature", "chain_executed": [], "chain_count": 0, "elapsed_seconds": 0.533, "cost_usd": 0.02, "prs_processed": [], "scores": %s,
      "confidence_at_decision": 0.1, "chain_stopped_at": null, "stop_reason": null, "prs_created": [],
      "skill_gaps_detected": ["gap-domain_starvation_d1", "gap-domain_starvation_d2", "gap-domain_starvation_d3"], "proposed_skills_generated": [],
      "contrarian_check": null, "lessons_recalled": ["When d0 yields nothing twice running, skip it for 3 cycles."]}`, c, benchTime(c), scores))
		reflections = append(reflections, fmt.Sprintf(`{"cycle": %d, "timestamp": %q, "domain": "d0", "skill": "/true", "result": "futile", "verdict": "miss",
      "critique": "Chose d0 (score 0.00) and got futile: the decision did not pay off.", "lesson": "When d0 yields nothing twice running, skip it for 3 cycles.", "status": "open"}`, c, benchTime(c)))
	}
	for c := last(10 * 100); c <= cycles; c += 10 {
		checks = append(checks, fmt.Sprintf("%q", benchTime(c)))
	}
	for c := last(200); c <= cycles; c++ {
		outcomes = append(outcomes, fmt.Sprintf(`{"cycle_id": %d, "timestamp": %q, "domain": "d0", "skill": "/true", "result": "success", "result_type": "futile",
      "score": 0, "process_factor": 0, "quality_multiplier": 0, "pr_number": null, "had_output": false, "on_mission": true, "cycle_mode": "feature"}`, c, benchTime(c)))
	}
	for c := cycles; c >= last(ChangelogMax); c-- {
		changelog = append(changelog, fmt.Sprintf("## Cycle #%d -- %s -- d0\n- **Skill**: /true\n- **Chain**: none\n- **Result**: success (futile)\n"+
			"- **Score**: 0.0 (staleness: 1.3, alert: 0.0, balance: -4.2)\n- **Confidence**: 0.10 (trend: →, micro-adj: -0.01 (no new data))\n"+
			"- **Orient**: 8 domain(s) observed, no active alerts. Focus: d0 (confidence-gated). Same focus as last cycle.\n- **PR**: none\n"+
			"- **Elapsed**: 0s\n- **Saturation**: %d observe-only cycles\n- **Cost**: +$0.02 (total today: $0.12)\n- **Season**: default\n- **Focus**: none\n", c, benchTime(c), c-1))
	}
	for c := last(6); c <= cycles; c++ {
		costs = append(costs, fmt.Sprintf(`{"cycle_id": %d, "timestamp": %q, "skill": "/true", "chain": [], "estimated_usd": 0.02}`, c, benchTime(c)))
	}
	for w := 0; w < min(12, cycles/168); w++ {
		episodes = append(episodes, fmt.Sprintf(`{"id": "EP-2026-W%02d", "week_start": "2026-03-02", "week_end": "2026-03-08", "cycle_range": [%d, %d], "total_cycles": 168,
      "summary": "EP-2026-W%02d: 168 cycles, d0 selected most (168 of 168 selections, 1 domains); PRs 0 created, 0 merged, 0 rejected.",
      "domains_selected": {"d0": 168}, "prs_created": 0, "prs_merged": 0, "prs_rejected": 0,
      "key_decisions": ["cycle #1705: d0 (score 0)", "cycle #1706: d0 (score 0)", "cycle #1707: d0 (score 0)"],
      "lessons": ["When d0 yields nothing twice running, skip it for 3 cycles."], "confidence_snapshot": %s,
      "skill_gaps_found": 0, "contrarian_checks": 17, "patterns_detected": ["d0 monopoly", "futile streak"], "created_at": "2026-05-18T00:00:00Z"}`,
			10+w, 168*w+1, 168*w+168, 10+w, scores))
	}
	var lastRun, firstOutputs, gaps, interventions, conf []string
	for d := range domains {
		lastRun = append(lastRun, fmt.Sprintf(`"d%d": %q`, d, benchTime(cycles-d)))
		firstOutputs = append(firstOutputs, fmt.Sprintf(`"d%d": [{"cycle": %d, "had_output": false}]`, d, d+1))
		conf = append(conf, fmt.Sprintf(`"d%d": 0.59`, d))
		if d > 0 {
			gaps = append(gaps, fmt.Sprintf(`{"id": "gap-domain_starvation_d%d", "name": "domain_starvation_d%d", "type": "coverage_gap",
      "description": "Domain not executed in 10 cycles", "detail": "Domain not executed in 10 cycles", "detected_at": %q, "detected_in_cycle": 93,
      "ooda_phase": "strategize", "frequency": %d, "first_seen": %q, "last_seen": %q, "last_seen_cycle": %d, "related_domain": "d%d",
      "proposed_skill": null, "resolved": false, "resolved_at": null, "resolution": null}`, d, d, benchTime(93), cycles, benchTime(93), benchTime(cycles), cycles, d))
			interventions = append(interventions, fmt.Sprintf(`{"domain": "d%d", "delta": 1, "type": "starvation", "reason": "No executions in last 10 cycles",
      "created_at_cycle": %d, "expires_after_cycles": 3, "applied_count": 0}`, d, cycles))
		}
	}
	files := map[string][]byte{
		"evolve/" + StateFile: fmt.Appendf(nil, `{"cycle_count": %d, "last_cycle": %q, "cycle_in_progress": false, "consecutive_observe_only_cycles": %d,
  "consecutive_silent_failures": 0, "domain_last_run": {%s}, "saturation_evaluated_cycle": %d, "recent_alerts": [null, null, null, null, null],
  "contrarian_checks": [%s], "domain_first_outputs": {%s}, "decision_log": [%s]}`,
			cycles, benchTime(cycles), cycles-1, strings.Join(lastRun, ", "), cycles-1, strings.Join(checks, ", "), strings.Join(firstOutputs, ", "), strings.Join(decisions, ",\n")),
		"evolve/" + OutcomesFile:    []byte(`{"schema_version": "1.0.0", "entries": [` + strings.Join(outcomes, ",\n") + `]}`),
		"evolve/" + ReflectionsFile: []byte(`{"schema_version": "1.0.0", "reflections": [` + strings.Join(reflections, ",\n") + `]}`),
		"evolve/" + EpisodesFile:    []byte(`{"schema_version": "1.0.0", "episodes": [` + strings.Join(episodes, ",\n") + `]}`),
		"evolve/" + CostLedgerFile:  fmt.Appendf(nil, `{"schema_version": "1.0.0", "date": "2026-05-23", "entries": [%s], "total_estimated_usd": 0.12}`, strings.Join(costs, ",\n")),
		"evolve/" + SkillGapsFile:   []byte(`{"schema_version": "1.0.0", "gaps": [` + strings.Join(gaps, ",\n") + `]}`),
		"evolve/" + ConfidenceFile:  []byte(`{` + strings.Join(conf, ", ") + `}`),
		"evolve/" + MetricsFile:     fmt.Appendf(nil, `{"schema_version": "1.0.0", "counters": {"total_cycles": %d, "total_skill_executions": %d, "total_prs_created": 0, "total_prs_merged": 0, "total_prs_rejected": 0, "total_futile_cycles": %d, "actions_added": 0, "actions_resolved": 0, "current_streak": 0, "longest_streak": 0, "domain_executions": {"d0": %d}}}`, cycles, cycles, cycles, cycles),
		"evolve/" + MemosFile:       []byte(`{"schema_version": "1.1.0", "score_adjustments": {"d1": 1, "d2": 1}, "interventions": [` + strings.Join(interventions, ",\n") + `], "history": [], "last_memo": "d0 selected 21 cycles in a row: d7 +1.0"}`),
		"evolve/" + PrinciplesFile:  []byte(`{"schema_version": "1.0.0", "principles": [{"id": "P-1", "text": "When d0 yields nothing twice running, skip it for 3 cycles.", "confidence": 1, "source_episodes": ["EP-2026-W10", "EP-2026-W11"], "occurrences": 2, "created_at": "2026-03-16T00:00:00Z"}]}`),
		"evolve/" + ChangelogFile:   []byte("# CHANGELOG\n\n" + strings.Join(changelog, "\n")),
		"evolve/" + CycleLogFile:    []byte{},
		"evolve/" + CheckpointsFile: []byte(`{"checkpoints": []}`),
		"evolve/" + ActionQueueFile: []byte(`{"schema_version": "1.0.0", "pending": [], "in_progress": null, "completed": []}`),
		"evolve/" + GoalsFile:       []byte(`{"schema_version": "1.0.0", "goals": []}`),
		"evolve/" + CascadesFile:    []byte(`{"schema_version": "1.0.0", "cascades": []}`),
		"evolve/forge_cursor.json":  []byte(`{}`),
	}
	for d := range domains {
		var ev []string
		for c := last(20); c <= cycles; c++ {
			ev = append(ev, fmt.Sprintf(`{"timestamp": %q, "cycle": %d, "source": "ooda 5-E", "observation": "no domain state file; lens: 0 added, 0 changed, 0 deprecated",
      "alerts": [], "items_added": 0, "confidence_changes": 0}`, benchTime(c), c))
		}
		files[fmt.Sprintf("d%d/lens.json", d)] = fmt.Appendf(nil, `{"schema_version": "1.0.0", "domain": "d%d", "last_updated": %q, "focus_items": [],
  "learned_thresholds": [], "discovered_signals": [], "evidence": [%s], "deprecated_items": []}`, d, benchTime(cycles), strings.Join(ev, ",\n"))
	}
	return files
}

// benchRoots is the projects the load benchmarks read: cycle 10 and cycle
// 2,000, and OODA_BENCH_PROJECT when set.
func benchRoots(b *testing.B) []struct {
	name, root string
} {
	out := []struct{ name, root string }{
		{"cycle10", benchProject(b, 10)},
		{"cycle2000", benchProject(b, 2000)},
	}
	if p := os.Getenv("OODA_BENCH_PROJECT"); p != "" {
		out = append(out, struct{ name, root string }{"project", p})
	}
	return out
}

// BenchmarkLoad reads every evolve file the engine reads at cycle start.
func BenchmarkLoad(b *testing.B) {
	for _, p := range benchRoots(b) {
		b.Run(p.name, func(b *testing.B) {
			s := New(p.root)
			if snap, err := s.Load(); err != nil || len(snap.Corrupt) > 0 || len(snap.Warnings) > 0 {
				b.Fatalf("load: %v %v %v", err, snap.Corrupt, snap.Warnings)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Load(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes every file a cycle saves, as the Save methods do
// (the bytes written, without the write itself), from a loaded snapshot
// whose newest outcome, decision and reflection were added by the cycle.
func BenchmarkEncode(b *testing.B) {
	for _, p := range benchRoots(b) {
		b.Run(p.name, func(b *testing.B) {
			s := New(p.root)
			snap, err := s.Load()
			if err != nil {
				b.Fatal(err)
			}
			cyc := snap.State.CycleCount + 1
			snap.State.CycleCount = cyc
			snap.State.DecisionLog = append(snap.State.DecisionLog[1:], DecisionEntry{Cycle: cyc, Timestamp: benchTime(cyc), Action: "execute"})
			snap.Outcomes.Entries = append(snap.Outcomes.Entries[1:], Outcome{CycleID: cyc, Timestamp: benchTime(cyc), ResultType: "futile"})
			snap.Reflections.Reflections = append(snap.Reflections.Reflections, Reflection{Cycle: cyc, Timestamp: benchTime(cyc)})
			values := []any{snap.State, snap.Outcomes, snap.Reflections, snap.Episodes, snap.Memos, snap.SkillGaps, snap.Metrics,
				snap.Confidence, snap.Principles, snap.Goals, snap.ActionQueue, snap.Checkpoints, snap.Cascades}
			if snap.CostLedger != nil {
				values = append(values, *snap.CostLedger)
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range values {
					if _, err := encodeJSON(v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkPrependChangelog renders CHANGELOG.md with one more entry.
func BenchmarkPrependChangelog(b *testing.B) {
	for _, p := range benchRoots(b) {
		b.Run(p.name, func(b *testing.B) {
			old, err := os.ReadFile(filepath.Join(p.root, "agent", "state", "evolve", ChangelogFile))
			if err != nil {
				b.Fatal(err)
			}
			entry := "## Cycle #9999 -- 2026-05-23 07:00 UTC -- d0\n- **Skill**: /true\n"
			b.ReportAllocs()
			for b.Loop() {
				_ = prependChangelog(string(old), entry)
			}
		})
	}
}

// BenchmarkSave is what a cycle's end does with the state: load it, add
// the cycle's outcome, decision, reflection and CHANGELOG.md entry, and
// write every file back through one batch (fsyncs included; a file
// whose bytes did not change is not rewritten).
func BenchmarkSave(b *testing.B) {
	for _, cycles := range []int{10, 2000} {
		b.Run(fmt.Sprintf("cycle%d", cycles), func(b *testing.B) {
			s := New(benchProject(b, cycles))
			b.ReportAllocs()
			for b.Loop() {
				snap, err := s.Load()
				if err != nil {
					b.Fatal(err)
				}
				cyc := snap.State.CycleCount + 1
				snap.State.CycleCount = cyc
				snap.State.DecisionLog = append(snap.State.DecisionLog[1:], DecisionEntry{Cycle: cyc, Timestamp: benchTime(cyc), Action: "execute"})
				snap.Outcomes.Entries = append(snap.Outcomes.Entries[1:], Outcome{CycleID: cyc, Timestamp: benchTime(cyc), ResultType: "futile"})
				snap.Reflections.Reflections = append(snap.Reflections.Reflections[1:], Reflection{Cycle: cyc, Timestamp: benchTime(cyc)})
				batch := s.Batch()
				bs := batch.Store()
				for _, err := range []error{
					bs.SaveOutcomes(snap.Outcomes), bs.SaveReflections(snap.Reflections), bs.SaveEpisodes(snap.Episodes),
					bs.SaveMemos(snap.Memos), bs.SaveSkillGaps(snap.SkillGaps), bs.SaveMetrics(snap.Metrics),
					bs.SaveConfidence(snap.Confidence), bs.SaveCostLedger(*snap.CostLedger),
					bs.PrependChangelog(fmt.Sprintf("## Cycle #%d -- %s -- d0\n- **Skill**: /true\n", cyc, benchTime(cyc))),
					batch.Commit(), s.SaveState(snap.State),
				} {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
