package artifact

import "math"

// Summary is the aggregate of one critique: what the outcome records
// (artifact_score, weakest_dimension, dimension_scores) and what 2-G and
// 3-K need (the leap target).
type Summary struct {
	// ArtifactScore is the weighted mean over the scored dimensions; nil
	// when no dimension with a positive weight was scored.
	ArtifactScore *float64 `json:"artifact_score"`
	// DimensionScores has every rubric dimension, null when unscored.
	DimensionScores map[string]*float64 `json:"dimension_scores"`
	// WeakestDimension is the scored dimension with the lowest score
	// (ties: the first in rubric order); empty when none was scored.
	WeakestDimension string `json:"weakest_dimension,omitempty"`
	// LeapTarget is the scored dimension with the largest
	// weight × max(0, bar_coast − score) (ties: the lower score, then
	// rubric order); empty when every scored dimension is at bar_coast.
	LeapTarget string `json:"leap_target,omitempty"`
	// Missing are the rubric dimensions without a score, in rubric order:
	// reported, never counted as 0 or 1.
	Missing []string `json:"missing,omitempty"`
}

// Aggregate forms the artifact score from dimension scores (5-G). A score
// that is missing, null, not finite or outside [0, 1] counts as missing; a
// name the rubric does not have is ignored.
func Aggregate(r *Rubric, scores map[string]*float64) Summary {
	s := Summary{DimensionScores: map[string]*float64{}}
	if r == nil {
		return s
	}
	var sum, weights float64
	weakest, bestGap := -1.0, -1.0
	var bestScore float64
	for _, d := range r.Dimensions {
		v, ok := score(scores[d.Name])
		if !ok {
			s.DimensionScores[d.Name] = nil
			s.Missing = append(s.Missing, d.Name)
			continue
		}
		s.DimensionScores[d.Name] = &v
		sum += d.Weight * v
		weights += d.Weight
		if weakest < 0 || v < weakest {
			weakest, s.WeakestDimension = v, d.Name
		}
		// Rounded so that gaps equal in decimal arithmetic tie here too.
		gap := math.Round(d.Weight*math.Max(0, r.BarCoast-v)*1e9) / 1e9
		if gap > 0 && (gap > bestGap || gap == bestGap && v < bestScore) {
			bestGap, bestScore, s.LeapTarget = gap, v, d.Name
		}
	}
	if weights > 0 {
		a := round3(sum / weights)
		s.ArtifactScore = &a
	}
	return s
}

// score accepts a dimension score only when it is a number in [0, 1].
func score(p *float64) (float64, bool) {
	if p == nil || math.IsNaN(*p) || *p < 0 || *p > 1 {
		return 0, false
	}
	return *p, true
}
