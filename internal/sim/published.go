package sim

// Figures are a scenario's four headline metrics.
type Figures struct {
	LoopValue, FutileRatePct, MissionHitRatePct, GoalProgressPct float64
}

// Published are the original OODA-loop engine's own results on the
// built-in scenarios (its RESULTS.md, reproduced by running its
// simulator), by scenario and cycle count: the figures `ooda sim` prints
// its own beside.
var Published = map[string]map[int]Figures{
	"A_webapp":     {12: {0.100, 50.0, 50.0, 83.3}, 20: {0.108, 46.2, 53.8, 100}},
	"B_library":    {12: {0.150, 25.0, 75.0, 100}, 20: {0.170, 15.0, 85.0, 100}},
	"C_greenfield": {12: {0.367, 41.7, 50.0, 71.4}, 20: {0.447, 35.3, 58.8, 100}},
}

// Beats reports whether r is better than f on every metric: a higher loop
// value and mission-hit rate, a lower futile rate, and a higher goal
// progress (or 100 % where f already reached it).
func (r Result) Beats(f Figures) bool {
	get := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	fut, ok1 := get(r.FutileRatePct)
	hit, ok2 := get(r.MissionHitRatePct)
	goal, ok3 := get(r.GoalProgressPct)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	goalOK := goal > f.GoalProgressPct || (f.GoalProgressPct >= 100 && goal >= 100)
	return r.LoopValue > f.LoopValue && fut < f.FutileRatePct && hit > f.MissionHitRatePct && goalOK
}
