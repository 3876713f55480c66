package state

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// recordStarvation records, in s, a gap for each of n domains not run,
// as a cycle of an n-domain project that ran none of them does.
func recordStarvation(s *SkillGaps, n, cycle int) {
	now := time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		s.Record(GapEvent{Name: fmt.Sprintf("domain_starvation_d%d", i), Type: "coverage_gap",
			Detail: "Domain not executed in 10 cycles", Domain: fmt.Sprintf("d%d", i), Cycle: cycle}, now)
	}
}

// TestRecordEvictsAsBefore holds Record's eviction, which drops the
// oldest gap by taking the list from its second element, to the list
// rewritten in place it replaced: the same gaps in the same order, with
// or without resolved ones among them.
func TestRecordEvictsAsBefore(t *testing.T) {
	for _, resolvedEvery := range []int{0, 1, 3, 7} {
		var got, want SkillGaps
		for i := 0; i < GapsKept; i++ {
			g := newGap(fmt.Sprintf("gap-old-%d", i), fmt.Sprintf("old-%d", i), "coverage_gap", "x", "", 1, 1, "2026-03-01T00:00:00Z")
			g.Resolved = resolvedEvery > 0 && i%resolvedEvery == 0
			got.Gaps = append(got.Gaps, g)
			want.Gaps = append(want.Gaps, g)
		}
		recordStarvation(&got, 1000, 12)
		// The oracle: every event recorded, then evicted as the list
		// rewritten in place did.
		now := time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC)
		for i := 0; i < 1000; i++ {
			want.Gaps = append(want.Gaps, newGap(fmt.Sprintf("gap-domain_starvation_d%d", i), fmt.Sprintf("domain_starvation_d%d", i),
				"coverage_gap", "Domain not executed in 10 cycles", fmt.Sprintf("d%d", i), 12, 1, FormatTime(now)))
			for len(want.Gaps) > GapsKept {
				victim := 0
				for j, g := range want.Gaps {
					if g.Resolved {
						victim = j
						break
					}
				}
				want.Gaps = append(want.Gaps[:victim], want.Gaps[victim+1:]...)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("resolved every %d: Record keeps\n%v\nnot\n%v", resolvedEvery, got.Gaps, want.Gaps)
		}
	}
}

// BenchmarkRecordStarvation1000 is the gaps a cycle of a 1,000-domain
// project that ran none of them records.
func BenchmarkRecordStarvation1000(b *testing.B) {
	for b.Loop() {
		var s SkillGaps
		recordStarvation(&s, 1000, 12)
	}
}
