package state

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The benchmarks below are what a cycle of an old project does to the
// files that have reached their caps (benchProject's cycle-2,000 state,
// and cycle 10's beside it): the allocations are the figure to watch, as
// much as the time. A cycle is a process of its own, whose heap is never
// collected: every byte allocated is a page the kernel must fault in and
// zero, which on some virtual machines costs more than the work that
// allocated it.

// BenchmarkSkillGapsCycle reads skill_gaps.json, records one occurrence
// of each of its gaps (a starved domain's gap recurs every cycle) and
// encodes the file, as Step 6 does.
func BenchmarkSkillGapsCycle(b *testing.B) {
	for _, cycles := range []int{10, 2000} {
		b.Run(fmt.Sprintf("cycle%d", cycles), func(b *testing.B) {
			raw := benchFiles(cycles)["evolve/"+SkillGapsFile]
			now := time.Date(2026, 5, 23, 7, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				var g SkillGaps
				if _, _, err := decodeFileScan(raw, &g, true, false); err != nil {
					b.Fatal(err)
				}
				for i := 1; i < 8; i++ {
					g.Record(GapEvent{Name: fmt.Sprintf("domain_starvation_d%d", i), Type: "coverage_gap", Detail: "Domain not executed in 10 cycles", Domain: fmt.Sprintf("d%d", i), Cycle: cycles + 1}, now)
				}
				if _, err := encodeJSON(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChangelogCycle is a cycle's two passes over CHANGELOG.md: the
// entry prepended (Step 6) and the entries read back for the card.
func BenchmarkChangelogCycle(b *testing.B) {
	for _, cycles := range []int{10, 2000} {
		b.Run(fmt.Sprintf("cycle%d", cycles), func(b *testing.B) {
			root := benchProject(b, cycles)
			p := filepath.Join(root, "agent", "state", "evolve", ChangelogFile)
			old, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			s := New(root)
			entry := fmt.Sprintf("## Cycle #%d -- 2026-05-23 07:00 UTC -- d0\n- **Skill**: /true\n- **Result**: success (futile)\n", cycles+1)
			b.ReportAllocs()
			for b.Loop() {
				if err := os.WriteFile(p, old, 0o644); err != nil {
					b.Fatal(err)
				}
				batch := s.Batch()
				if err := batch.Store().PrependChangelog(entry); err != nil {
					b.Fatal(err)
				}
				// The batch is not committed: what is measured is the
				// reading and the text, not the write.
				if _, err := s.ChangelogEntries(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// forgetEncodedSizes makes every encoding plan forget the size of its
// last output, as in a new process, where each file is encoded once.
func forgetEncodedSizes() {
	encPlans.Range(func(_, v any) bool {
		if p, ok := v.(*encPlan); ok && p != nil {
			p.lastLen.Store(0)
			p.lastIndented.Store(0)
		}
		return true
	})
}

// BenchmarkLoadEncodeCold is BenchmarkLoad and BenchmarkEncode's work as
// a new process does it: the state read, then each file a cycle writes
// encoded once, without the size of an earlier encoding of its type to
// start from.
func BenchmarkLoadEncodeCold(b *testing.B) {
	for _, p := range benchRoots(b) {
		b.Run(p.name, func(b *testing.B) {
			s := New(p.root)
			b.ReportAllocs()
			for b.Loop() {
				forgetEncodedSizes()
				snap, err := s.Load()
				if err != nil {
					b.Fatal(err)
				}
				cyc := snap.State.CycleCount + 1
				snap.State.CycleCount = cyc
				snap.State.DecisionLog = append(snap.State.DecisionLog[1:], DecisionEntry{Cycle: cyc, Timestamp: benchTime(cyc), Action: "execute"})
				snap.Outcomes.Entries = append(snap.Outcomes.Entries[1:], Outcome{CycleID: cyc, Timestamp: benchTime(cyc), ResultType: "futile"})
				snap.Reflections.Reflections = append(snap.Reflections.Reflections, Reflection{Cycle: cyc, Timestamp: benchTime(cyc)})
				for _, v := range []any{snap.State, snap.Outcomes, snap.Reflections, snap.Episodes, snap.Memos, snap.SkillGaps, snap.Metrics,
					snap.Confidence, snap.Principles, snap.Goals, snap.ActionQueue, snap.Checkpoints, snap.Cascades, *snap.CostLedger} {
					if _, err := encodeJSON(v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkEncodeState is state.json's encoding, which a cycle makes
// twice (cycle_in_progress set at its start, the record at its end).
func BenchmarkEncodeState(b *testing.B) {
	for _, p := range benchRoots(b) {
		b.Run(p.name, func(b *testing.B) {
			snap, err := New(p.root).Load()
			if err != nil {
				b.Fatal(err)
			}
			snap.State.CycleInProgress = true
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeJSON(snap.State); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
