package record

import (
	"sort"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// SyntheticCostUSD is the estimate a backfilled ledger entry carries (6-C8).
const SyntheticCostUSD = 0.02

// MaxBackfill bounds the entries one cycle backfills whatever
// cost.max_backfill_cycles says: with a cycle_count far above the ledger's
// ids (a damaged state.json), a huge setting would make one cycle write
// that many entries.
const MaxBackfill = 1000

// IntegrityGate is 6-C8: every cycle id between the lowest one the ledger
// records and cycleCount must have an entry. Missing ids — cycles that
// spent without being accounted, e.g. run by hand or killed mid-way — are
// backfilled, most recent first and at most maxBackfill of them, as
// synthetic $0.02 entries (never more than MaxBackfill), so the daily cap
// cannot be silently defeated.
// It returns the ledger and the ids it backfilled (oldest first).
func IntegrityGate(l state.CostLedger, cycleCount, maxBackfill int, now time.Time) (state.CostLedger, []int) {
	if len(l.Entries) == 0 || cycleCount <= 0 {
		return l, nil
	}
	have := map[int]bool{}
	lowest := l.Entries[0].CycleID
	for _, e := range l.Entries {
		have[e.CycleID] = true
		if e.CycleID < lowest {
			lowest = e.CycleID
		}
	}
	if maxBackfill <= 0 {
		maxBackfill = 100
	}
	maxBackfill = min(maxBackfill, MaxBackfill)
	var missing []int
	for id := cycleCount; id >= lowest && len(missing) < maxBackfill; id-- {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return l, nil
	}
	sort.Ints(missing)
	l.Entries = append([]state.CostEntry(nil), l.Entries...)
	for _, id := range missing {
		l.Entries = append(l.Entries, state.CostEntry{CycleID: id, Timestamp: state.FormatTime(now), Skill: "unknown",
			Chain: []string{}, EstimatedUSD: SyntheticCostUSD, Synthetic: true})
		l.TotalEstimatedUSD = addCost(l.TotalEstimatedUSD, SyntheticCostUSD)
	}
	sort.SliceStable(l.Entries, func(i, j int) bool { return l.Entries[i].CycleID < l.Entries[j].CycleID })
	return l, missing
}
