package artifact

import (
	"fmt"
	"math"
)

// Budget is what the 3-K gate needs to know about today.
type Budget struct {
	// DryRun cycles never leap.
	DryRun bool
	// SpentTodayUSD is today's estimated spend (cost ledger).
	SpentTodayUSD float64
	// DailyLimitUSD is cost.daily_limit_usd; 0 or less means no cap.
	DailyLimitUSD float64
	// LeapsToday counts today's leap and rewrite cycles.
	LeapsToday int
}

// Gate is the 3-K leap gate: the mode the cycle runs in, and why a leap or
// rewrite that 2-G asked for was deferred. A deferral is not a HALT: the
// cycle runs as a feature cycle and the plateau is detected again next
// time. The leap is deferred when its cost (leap.cost_limit_usd) on top of
// today's spend would pass the daily cap, or when leap.max_per_day leaps
// already ran today.
func Gate(d Decision, leap LeapPolicy, b Budget) (mode, deferred string) {
	if !d.Active() {
		return d.Mode, ""
	}
	switch {
	case b.DryRun:
		return ModeFeature, "a dry run never leaps"
	case b.DailyLimitUSD > 0 && b.SpentTodayUSD+leap.CostLimitUSD > b.DailyLimitUSD:
		return ModeFeature, fmt.Sprintf("a %s ($%.2f, leap.cost_limit_usd) on top of today's $%.2f would pass cost.daily_limit_usd $%.2f; deferred",
			d.Mode, leap.CostLimitUSD, b.SpentTodayUSD, b.DailyLimitUSD)
	case b.LeapsToday >= leap.MaxPerDay:
		return ModeFeature, fmt.Sprintf("%d leaps today reach leap.max_per_day %d; deferred", b.LeapsToday, leap.MaxPerDay)
	}
	return d.Mode, ""
}

// GapBonus is the gap-to-bar bonus 3-K adds to the build domain's memo
// adjustment on a leap cycle, so that the ordinary scorer picks it:
// leap.gap_weight × (bar − artifact) / bar. It is never negative (an
// artifact between bar and bar_coast can still plateau, and must not be
// pushed down) and is 0 for a bar of 0.
func GapBonus(leap LeapPolicy, bar, artifact float64) float64 {
	if !(bar > 0) || math.IsNaN(artifact) {
		return 0
	}
	return leap.GapWeight * math.Max(0, bar-artifact) / bar
}

// LeapVerdict is the 4-C2 verdict on a leap or rewrite.
type LeapVerdict struct {
	// Kept is false when the leap must be reverted (result leap_regressed).
	Kept bool
	// Delta is the target's score after minus before; nil when either is
	// missing.
	Delta *float64
	// Attempt is the leap_attempts[] entry to record.
	Attempt LeapAttempt
	Reason  string
	// Remainder is set when a kept leap left its dimension below bar: the
	// title of the action to queue so the rest is not lost.
	Remainder string
}

// VerifyLeap compares the critique after a leap (post) with the baseline
// taken before it (checkpoint leap_baseline_scores). The leap is kept only
// when the target rose by at least leap.min_dimension_delta and the
// artifact as a whole did not fall; a target without a score on either
// side cannot show the rise, so the leap is reverted. attempt is the
// attempt number to record (the failed leaps on the target so far + 1).
func VerifyLeap(r *Rubric, baseline, post map[string]*float64, target string, leap LeapPolicy, attempt int) LeapVerdict {
	v := LeapVerdict{Attempt: LeapAttempt{Dimension: target, AttemptNumber: attempt}}
	before, okB := score(baseline[target])
	after, okA := score(post[target])
	if !okB || !okA {
		when := "before"
		if okB {
			when = "after"
		}
		v.Reason = fmt.Sprintf("%s has no score %s the leap, so no improvement can be shown; reverted", target, when)
		return v
	}
	delta := round3(after - before)
	v.Delta, v.Attempt.DeltaScore = &delta, &delta
	if delta < leap.MinDimensionDelta {
		v.Reason = fmt.Sprintf("%s moved %.3g → %.3g (Δ %+.3g), less than leap.min_dimension_delta %g; reverted", target, before, after, delta, leap.MinDimensionDelta)
		return v
	}
	aB, aA := Aggregate(r, baseline).ArtifactScore, Aggregate(r, post).ArtifactScore
	if aB != nil && aA != nil && *aA < *aB {
		v.Reason = fmt.Sprintf("%s rose %.3g → %.3g but the artifact fell %.3g → %.3g; reverted", target, before, after, *aB, *aA)
		return v
	}
	v.Kept = true
	v.Reason = fmt.Sprintf("%s rose %.3g → %.3g (Δ %+.3g)", target, before, after, delta)
	if r != nil && after < r.Bar {
		v.Remainder = fmt.Sprintf("quality remainder: %s at %.3g is still below bar %.3g", target, after, r.Bar)
	}
	return v
}

// Brief is what the build skill is given on a leap or rewrite cycle.
type Brief struct {
	Mode         string   `json:"mode"`
	Dimension    string   `json:"dimension"`
	MaxLines     int      `json:"max_lines"`
	Techniques   []string `json:"techniques,omitempty"`
	AssetSources []string `json:"asset_sources,omitempty"`
}

// LeapBrief is the brief for the build skill on a leap or rewrite cycle
// targeting dim: the larger size budget leap.max_lines, and the
// dimension's techniques and asset_sources to choose from.
func LeapBrief(r *Rubric, mode, dim string, leap LeapPolicy) Brief {
	b := Brief{Mode: mode, Dimension: dim, MaxLines: leap.MaxLines}
	if d, ok := r.Dimension(dim); ok {
		b.Techniques, b.AssetSources = d.Techniques, d.AssetSources
	}
	return b
}
