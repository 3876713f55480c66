package artifact

import (
	"math"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func Test5G_AggregateWeightedMeanOverScored(t *testing.T) {
	r := mustParse(t, `{"bar_coast": 0.85, "dimensions": [
		{"name": "a", "weight": 2}, {"name": "b", "weight": 1}, {"name": "c", "weight": 1}, {"name": "d", "weight": 0}]}`)
	s := Aggregate(r, map[string]*float64{"a": f(0.5), "b": f(1), "c": nil, "d": f(0.1), "ghost": f(0)})
	if s.ArtifactScore == nil || *s.ArtifactScore != 0.667 {
		t.Errorf("artifact %v, want (2×0.5 + 1×1)/3 = 0.667", s.ArtifactScore)
	}
	if strings.Join(s.Missing, ",") != "c" || s.DimensionScores["c"] != nil || *s.DimensionScores["d"] != 0.1 {
		t.Errorf("missing %v scores %v", s.Missing, s.DimensionScores)
	}
	if _, ok := s.DimensionScores["ghost"]; ok {
		t.Error("a dimension the rubric does not have was recorded")
	}
	if s.WeakestDimension != "d" {
		t.Errorf("weakest %q, want d (lowest score, whatever its weight)", s.WeakestDimension)
	}
	if s.LeapTarget != "a" {
		t.Errorf("leap target %q, want a (2×0.35 beats b at bar_coast and d of weight 0)", s.LeapTarget)
	}
}

// Out-of-range and non-finite scores are not evidence: they count as
// missing, never as a clamped 0 or 1.
func Test5G_AggregateRejectsHostileScores(t *testing.T) {
	r := mustParse(t, `{"dimensions": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]}`)
	s := Aggregate(r, map[string]*float64{"a": f(math.NaN()), "b": f(1.5), "c": f(-0.1), "d": f(math.Inf(1))})
	if s.ArtifactScore != nil || len(s.Missing) != 4 || s.WeakestDimension != "" || s.LeapTarget != "" {
		t.Errorf("%+v", s)
	}
}

// The leap target is the largest weighted gap to bar_coast, not the
// lowest score; ties go to the lower score.
func Test5G_LeapTargetIsLargestWeightedGap(t *testing.T) {
	r := mustParse(t, `{"bar": 0.65, "bar_coast": 0.85, "dimensions": [
		{"name": "visual", "weight": 0.25}, {"name": "fun", "weight": 0.10}, {"name": "hud", "weight": 0.65}]}`)
	s := Aggregate(r, map[string]*float64{"visual": f(0.30), "fun": f(0.10), "hud": f(0.90)})
	if s.LeapTarget != "visual" || s.WeakestDimension != "fun" {
		t.Errorf("target %q weakest %q, want visual (0.25×0.55 > 0.10×0.75) and fun", s.LeapTarget, s.WeakestDimension)
	}
	// Equal weighted gaps (0.1×(0.85−0.35) = 0.2×(0.85−0.6) = 0.05): the
	// lower score wins, whichever comes first.
	tie := mustParse(t, `{"bar_coast": 0.85, "dimensions": [{"name": "b", "weight": 0.2}, {"name": "a", "weight": 0.1}]}`)
	if s := Aggregate(tie, map[string]*float64{"a": f(0.35), "b": f(0.6)}); s.LeapTarget != "a" {
		t.Errorf("tie: target %q, want a", s.LeapTarget)
	}
	if s := Aggregate(r, map[string]*float64{"visual": f(0.85), "fun": f(0.9), "hud": nil}); s.LeapTarget != "" {
		t.Errorf("everything at bar_coast: target %q", s.LeapTarget)
	}
}
