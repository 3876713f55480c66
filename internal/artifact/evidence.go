package artifact

import "math"

// GoalEvidence is recorded on a goal whose progress was capped (goal
// evidence).
type GoalEvidence struct {
	// RollingArtifactMean is the mean of the last plateau_window scores;
	// nil when nothing was scored.
	RollingArtifactMean *float64 `json:"rolling_artifact_mean"`
	// ConsecutiveAboveBar counts the latest scores at or above bar, in a
	// row.
	ConsecutiveAboveBar int `json:"consecutive_above_bar"`
}

// CapGoal is the 2-C evidence cap for a goal tied to a rubric domain (and,
// when dimension is not empty, to one of its dimensions): the progress it
// may report, and the evidence for it.
//
// The progress is capped by the mean of the last plateau_window scores
// (the artifact score, or the dimension's) divided by bar, and may reach
// 1.0 only when the last plateau_window scores were all at or above bar,
// else it stops at 0.99: one good cycle does not complete a goal. With no
// score at all there is no evidence, and the progress is 0. Scores that
// are missing or outside [0, 1] are not evidence, and neither is a dimension the rubric does not have.
// A bar of 0 leaves the mean uncapped.
func CapGoal(progress float64, entries []Entry, domain, dimension string, r *Rubric) (float64, GoalEvidence) {
	var ev GoalEvidence
	if math.IsNaN(progress) {
		progress = 0
	}
	progress = math.Max(0, math.Min(1, progress))
	if r == nil {
		return progress, ev
	}
	var series []float64
	for _, e := range entries {
		if e.Domain != domain {
			continue
		}
		p := e.ArtifactScore
		if dimension != "" {
			p = e.DimensionScores[dimension]
		}
		if v, ok := score(p); ok {
			series = append(series, v)
		}
	}
	if len(series) == 0 {
		return 0, ev
	}
	n := r.PlateauWindow
	win := series[max(0, len(series)-n):]
	sum := 0.0
	for _, v := range win {
		sum += v
	}
	roll := round3(sum / float64(len(win)))
	ev.RollingArtifactMean = &roll
	for i := len(series) - 1; i >= 0 && series[i] >= r.Bar; i-- {
		ev.ConsecutiveAboveBar++
	}
	if r.Bar > 0 {
		progress = math.Min(progress, roll/r.Bar)
	}
	if progress >= 1 && ev.ConsecutiveAboveBar < n {
		progress = 0.99
	}
	return progress, ev
}
