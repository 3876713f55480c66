package decide

import "math"

// Adaptive scoring (config scoring.adaptive, docs/scoring.md). The seed's
// score aims each cycle by time: a heavy domain that is stale but has
// nothing to do wins again and again, an off-mission domain is only
// dampened below an alignment of 0.2, and an unmet goal adds at most 0.15
// to the domains it needs. These terms learn from what each domain's own
// recorded cycles produced, and pull toward the work goals still need.
// With the block absent or disabled none of this runs and every score is
// the seed's.

// Priors of the learned terms, for a domain with no recorded cycle: the
// value of an extracted action (6-C9's 0.2) and an even chance of output.
const (
	priorValue = 0.2
	priorYield = 0.5
	// Bounds of the yield factor on staleness: a domain that never
	// produced keeps a fifth of its staleness (it may have work again
	// one day), one that always did at most doubles it.
	minYieldFactor = 0.2
	maxYieldFactor = 2.0
)

// Learned is what a domain's recent recorded cycles say of it.
type Learned struct {
	// Cycles is how many recorded cycles were read (at most the window).
	Cycles int
	// Value is the mean quality_multiplier, with one cycle of priorValue
	// as the prior: a domain is not judged on a single cycle.
	Value float64
	// Yield is the share of cycles with output, with one cycle with and
	// one without as the prior (Laplace's rule).
	Yield float64
}

// Learn reads the last window entries of h (oldest first).
func Learn(h []Past, window int) Learned {
	if window > 0 && len(h) > window {
		h = h[len(h)-window:]
	}
	sum, outs := priorValue, 1.0
	for _, p := range h {
		// A quality_multiplier is a product of two fractions; a hand-edited
		// outcomes.json may say 1e308 or -5, which summed would reach an
		// infinite score (and a decision log no JSON can hold).
		sum += math.Min(math.Max(p.Quality, 0), 1)
		if p.HadOutput {
			outs++
		}
	}
	n := float64(len(h))
	return Learned{Cycles: len(h), Value: sum / (n + 1), Yield: outs / (n + 2)}
}

// YieldFactor is the multiplier yield_staleness applies to staleness.
func (l Learned) YieldFactor() float64 {
	return math.Min(math.Max(l.Yield/priorYield, minYieldFactor), maxYieldFactor)
}

// adaptiveOn reports whether Decide applies adaptive scoring.
func (in Input) adaptiveOn() bool { return in.Config.Scoring.Adaptive.On() }

// adaptiveStaleness scales a domain's staleness (3-A) by its learned
// yield and its mission alignment; an active alert, which is work by
// definition, exempts it from both, as it does from the seed's dampeners.
func adaptiveStaleness(in Input, c *Domain, stal float64) float64 {
	a := in.Config.Scoring.Adaptive
	if c.HasUrgent() {
		return stal
	}
	if a.YieldStaleness {
		stal *= Learn(in.History[c.Name], a.HistoryWindow()).YieldFactor()
	}
	if a.MissionFocus && in.Config.MissionSet() {
		stal *= math.Min(math.Max(c.MissionAlignment, 0), 1)
	}
	return stal
}

// adaptiveValue is the learned-value term of a domain.
func adaptiveValue(in Input, domain string) float64 {
	a := in.Config.Scoring.Adaptive
	if a.ValueWeight == 0 {
		return 0
	}
	return a.ValueWeight * Learn(in.History[domain], a.HistoryWindow()).Value
}

// goalPull is the goal term goal_pull_weight puts in place of 3-C's: the
// weight times (1 − progress) of the least advanced unmet active goal
// that concerns the domain (GoalRelates), 0 when none does. Unlike 3-C,
// whose 0.5 for a domain no goal names is the most a domain can get, a
// domain no unmet goal needs gets nothing.
func goalPull(in Input, gk goalKeywords, domain string) float64 {
	w := in.Config.Scoring.Adaptive.GoalPullWeight
	pull := 0.0
	for i, g := range in.Goals {
		if g.Status != "active" || g.Quarantined || g.Progress >= 1 {
			continue
		}
		if !goalConcerns(gk, i, g, domain) {
			continue
		}
		pull = math.Max(pull, 1-math.Max(g.Progress, 0))
	}
	return w * pull
}
