package artifact

import (
	"fmt"
	"math"
	"strings"
)

// Cycle modes (outcome cycle_mode) and the HALT that ends the escalation.
const (
	ModeFeature = "feature"
	ModeLeap    = "leap"
	ModeRewrite = "rewrite"
	ModeHalt    = "halt"
)

// ResultLeapRegressed is the result_type of a leap that was reverted.
const ResultLeapRegressed = "leap_regressed"

// LeapPolicy is config leap (2-G/3-K) as plain values: the engine copies
// config.Leap's fields of the same names into it, so that this package
// does not depend on the config package (which may then use Parse to
// check rubrics as it loads them).
type LeapPolicy struct {
	RewriteOnStall          bool
	MaxLines                int
	MinDimensionDelta       float64
	MaxAttemptsPerDimension int
	MaxPerDay               int
	GapWeight               float64
	CostLimitUSD            float64
	LockUntilBar            bool
}

// Entry is what plateau detection reads of one outcomes.json entry; the
// engine maps its outcome records to it, oldest first.
type Entry struct {
	CycleID          int
	Domain           string
	ResultType       string
	CycleMode        string
	ArtifactScore    *float64
	WeakestDimension string
	DimensionScores  map[string]*float64
	// LeapTarget is the dimension a leap or rewrite cycle targeted.
	LeapTarget   string
	LeapAttempts []LeapAttempt
}

// LeapAttempt is one outcome leap_attempts[] entry.
type LeapAttempt struct {
	Dimension     string   `json:"dimension"`
	AttemptNumber int      `json:"attempt_number"`
	DeltaScore    *float64 `json:"delta_score"`
}

// Memo is the negative-example memo a rewrite carries (memos.json), so the
// rewrite does not repeat the approach that stalled.
type Memo struct {
	Type            string `json:"type"`
	Dimension       string `json:"dimension"`
	StalledApproach string `json:"stalled_approach"`
	Instruction     string `json:"instruction"`
}

// Decision is the 2-G verdict for one rubric domain: the mode the next
// cycle should run in, before the 3-K gate (Gate) may defer a leap.
type Decision struct {
	// Plateau is true when the scored history is a plateau.
	Plateau bool `json:"plateau"`
	// Mode is feature, leap, rewrite or halt.
	Mode string `json:"mode"`
	// LeapTarget is the dimension to leap or rewrite (or the one that
	// stalled, for halt).
	LeapTarget       string   `json:"leap_target,omitempty"`
	WeakestDimension string   `json:"weakest_dimension,omitempty"`
	ArtifactScore    *float64 `json:"artifact_score"`
	// Locked is true when the leap continues a successful leap whose
	// dimension is still below bar (the dimension lock).
	Locked bool `json:"locked,omitempty"`
	// FailedLeaps counts the failed leaps on the leap target.
	FailedLeaps int    `json:"failed_leaps,omitempty"`
	Reason      string `json:"reason"`
	// Memo is set for a rewrite.
	Memo *Memo `json:"memo,omitempty"`
	// Halt is the HALT reason for mode halt.
	Halt string `json:"halt,omitempty"`
	// Gaps are skill gaps to record (leap_stuck_<dim>, asset_ceiling_<dim>);
	// ResolvedGaps are gap names that no longer apply.
	Gaps         []Gap    `json:"gaps,omitempty"`
	ResolvedGaps []string `json:"resolved_gaps,omitempty"`
}

// Active reports whether the next cycle should leap or rewrite (the
// original's orient.plateau.active).
func (d Decision) Active() bool { return d.Mode == ModeLeap || d.Mode == ModeRewrite }

// Plan is 2-G plateau detection for one domain's rubric over the outcome
// history (oldest first; entries of other domains are ignored).
//
// A plateau is: the latest artifact score below bar_coast, and below
// bar_leap, or the last plateau_window scores rose less than plateau_eps
// above the first of them, or the same weakest dimension for
// plateau_window scored cycles. On a plateau the leap target is the
// weighted-gap winner of the latest scored cycle (see Aggregate), leaving
// out every dimension at its asset ceiling. Then the thrashing guard: when
// the failed leaps on the target reach leap.max_attempts_per_dimension,
// the mode is one rewrite (when leap.rewrite_on_stall) and after that a
// HALT. Without a plateau, the dimension lock keeps leaping the dimension
// of the domain's last cycle when that cycle was a leap that was kept and
// left its dimension more than plateau_eps below bar.
//
// Choices where the original is silent or loose:
//   - A failed leap is an attempt with delta_score below
//     leap.min_dimension_delta, or with no delta_score at all (a leap that
//     could not be measured did not clear the delta either), or one whose
//     outcome is leap_regressed although its target rose (the artifact as
//     a whole fell and the leap was reverted).
//   - The rewrite is tried once per dimension over the whole history
//     given, not only over the last few outcomes: deferred leaps produce
//     feature cycles, which would otherwise push an earlier rewrite out of
//     view and allow a second one.
//   - The lock follows the dimension the last leap targeted (its
//     leap_target, else its leap_attempts entry), since locking means
//     staying on that dimension; "last" is the domain's last cycle.
//   - A dimension at its asset ceiling (score ≥ ceiling_without_assets and
//     no asset_sources) gets an asset_ceiling_<dim> human_required gap and
//     is never leapt or locked; once asset_sources are given the gap is
//     listed as resolved and the dimension can be leapt again.
func Plan(entries []Entry, domain string, r *Rubric, leap LeapPolicy) Decision {
	d := Decision{Mode: ModeFeature, Reason: "no plateau"}
	if !r.Active() {
		d.Reason = "no rubric dimensions"
		return d
	}
	var dom, scored []Entry
	for _, e := range entries {
		if e.Domain != domain {
			continue
		}
		dom = append(dom, e)
		if _, ok := score(e.ArtifactScore); ok {
			scored = append(scored, e)
		}
	}
	if len(scored) == 0 {
		d.Reason = "no artifact-scored cycle yet"
		return d
	}
	latest := scored[len(scored)-1]
	a := *latest.ArtifactScore
	d.ArtifactScore = &a
	d.WeakestDimension = latest.WeakestDimension

	capped := map[string]bool{}
	for _, dim := range r.Dimensions {
		name := "asset_ceiling_" + dim.Name
		if dim.CeilingWithoutAssets != nil && len(dim.AssetSources) > 0 {
			d.ResolvedGaps = append(d.ResolvedGaps, name)
		}
		c := dim.AssetCeiling()
		v, ok := score(latest.DimensionScores[dim.Name])
		if c == nil || !ok || v < *c {
			continue
		}
		capped[dim.Name] = true
		note := dim.CeilingNote
		if note == "" {
			note = "further gain needs authored assets; list them in asset_sources"
		}
		d.Gaps = append(d.Gaps, Gap{Name: name, Type: GapHumanRequired,
			Detail: fmt.Sprintf("%s (%s) reached %.3g, its ceiling_without_assets %.3g: %s", dim.Path, dim.Name, v, *c, note)})
	}

	if plateau, why := detect(scored, r); plateau {
		d.Plateau = true
		target := leapTarget(r, latest.DimensionScores, capped)
		if target == "" {
			d.Reason = why + "; no dimension can be leapt (every one below bar_coast is at its asset ceiling or unscored)"
			return d
		}
		d.LeapTarget = target
		fails, cycles := failedLeaps(dom, target, leap.MinDimensionDelta)
		d.FailedLeaps = fails
		if fails < leap.MaxAttemptsPerDimension {
			d.Mode, d.Reason = ModeLeap, why
			return d
		}
		if leap.RewriteOnStall && !rewroteBefore(dom, target) {
			d.Mode = ModeRewrite
			d.Reason = fmt.Sprintf("%d leaps on %s stalled; rewrite it from scratch", fails, target)
			d.Memo = &Memo{Type: "stall_detected", Dimension: target,
				StalledApproach: fmt.Sprintf("leaps on %s in %s did not clear leap.min_dimension_delta %g", target, strings.Join(cycles, ", "), leap.MinDimensionDelta),
				Instruction: fmt.Sprintf("Rebuild %s from scratch. The last %d leaps patched one approach and it stalled: do not reuse it. "+
					"Base the rewrite on one cited technique (the dimension's techniques, or the references for domain %s) and implement it completely.", target, fails, domain)}
			return d
		}
		d.Mode = ModeHalt
		d.Reason = fmt.Sprintf("%d leaps on %s stalled and a rewrite did not help", fails, target)
		if !leap.RewriteOnStall {
			d.Reason = fmt.Sprintf("%d leaps on %s stalled (leap.rewrite_on_stall is off)", fails, target)
		}
		d.Halt = fmt.Sprintf("artifact dimension %s of domain %s cannot be moved by the loop: %s. A human must give it a richer capture (%s capture_method or harness), supply authored assets (asset_sources), or reweight the rubric.",
			target, domain, d.Reason, dimPath(r, target))
		d.Gaps = append(d.Gaps, Gap{Name: "leap_stuck_" + target, Type: GapQuality,
			Detail: fmt.Sprintf("%s (%s): leaps did not clear leap.min_dimension_delta %g; the dimension is probably not measurable by its capture_method", dimPath(r, target), target, leap.MinDimensionDelta)})
		return d
	}

	if !leap.LockUntilBar || len(dom) == 0 {
		return d
	}
	last := dom[len(dom)-1]
	if last.CycleMode != ModeLeap || last.ResultType == ResultLeapRegressed {
		return d
	}
	lt := last.LeapTarget
	if lt == "" && len(last.LeapAttempts) > 0 {
		lt = last.LeapAttempts[len(last.LeapAttempts)-1].Dimension
	}
	if _, ok := r.Dimension(lt); !ok || capped[lt] {
		return d
	}
	v, ok := score(last.DimensionScores[lt])
	if !ok || v >= r.Bar-r.PlateauEps {
		return d
	}
	d.Mode, d.Locked, d.LeapTarget = ModeLeap, true, lt
	d.Reason = fmt.Sprintf("leap on %s raised it to %.3g, still below bar %.3g: keep leaping it", lt, v, r.Bar)
	return d
}

// detect applies the plateau definition to the scored history.
func detect(scored []Entry, r *Rubric) (bool, string) {
	latest := *scored[len(scored)-1].ArtifactScore
	if latest >= r.BarCoast {
		return false, ""
	}
	if latest < r.BarLeap {
		return true, fmt.Sprintf("artifact %.3g is below bar_leap %.3g", latest, r.BarLeap)
	}
	n := r.PlateauWindow
	if len(scored) < n {
		return false, ""
	}
	win := scored[len(scored)-n:]
	first := *win[0].ArtifactScore
	peak := first
	for _, e := range win {
		peak = math.Max(peak, *e.ArtifactScore)
	}
	if peak-first < r.PlateauEps {
		return true, fmt.Sprintf("artifact rose %.3g over the last %d scored cycles, less than plateau_eps %.3g, and is below bar_coast %.3g", round3(peak-first), n, r.PlateauEps, r.BarCoast)
	}
	w := win[0].WeakestDimension
	for _, e := range win {
		if w == "" || e.WeakestDimension != w {
			return false, ""
		}
	}
	return true, fmt.Sprintf("%s has been the weakest dimension for %d scored cycles and the artifact is below bar_coast %.3g", w, n, r.BarCoast)
}

// leapTarget is Aggregate's leap target, leaving out the excluded
// dimensions.
func leapTarget(r *Rubric, scores map[string]*float64, exclude map[string]bool) string {
	kept := map[string]*float64{}
	for k, v := range scores {
		if !exclude[k] {
			kept[k] = v
		}
	}
	return Aggregate(r, kept).LeapTarget
}

// failedLeaps counts the leap attempts on dim that did not clear minDelta,
// and names their cycles.
func failedLeaps(dom []Entry, dim string, minDelta float64) (int, []string) {
	n := 0
	var cycles []string
	for _, e := range dom {
		if e.CycleMode != ModeLeap {
			continue
		}
		for _, a := range e.LeapAttempts {
			if a.Dimension != dim {
				continue
			}
			switch {
			case a.DeltaScore == nil || math.IsNaN(*a.DeltaScore):
				n++
				cycles = append(cycles, fmt.Sprintf("cycle #%d (no delta)", e.CycleID))
			case *a.DeltaScore < minDelta:
				n++
				cycles = append(cycles, fmt.Sprintf("cycle #%d (Δ %.3g)", e.CycleID, *a.DeltaScore))
			case e.ResultType == ResultLeapRegressed:
				// Its target rose, but the artifact fell and it was
				// reverted: a failure too, or such leaps would repeat
				// forever without reaching the rewrite or the HALT.
				n++
				cycles = append(cycles, fmt.Sprintf("cycle #%d (Δ %.3g, artifact fell)", e.CycleID, *a.DeltaScore))
			}
		}
	}
	return n, cycles
}

func rewroteBefore(dom []Entry, dim string) bool {
	for _, e := range dom {
		if e.CycleMode != ModeRewrite {
			continue
		}
		if e.LeapTarget == dim {
			return true
		}
		for _, a := range e.LeapAttempts {
			if a.Dimension == dim {
				return true
			}
		}
	}
	return false
}

func dimPath(r *Rubric, name string) string {
	if d, ok := r.Dimension(name); ok {
		return d.Path
	}
	return r.Path
}
