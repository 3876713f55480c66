package sim

import (
	"fmt"
	"math/rand/v2"
)

// genScenario builds a random scenario from r: the scenarios the decision
// logic was never tuned on. Three to six domains of every kind, weights
// and alignments spread over their range, every form of work rule, alerts
// on some work cycles, and a goal on an on-mission domain in most.
func genScenario(r *rand.Rand, i int) *Scenario {
	sc := &Scenario{Name: fmt.Sprintf("gen_%d", i), Mission: "generated", HoursPerCycle: 4, InitialHours: 24, Work: map[string]Work{}, Alerts: map[string][]Alert{}}
	nd := 3 + r.IntN(4)
	weights := []float64{0.3, 0.5, 1, 1, 1.5, 2}
	aligns := []float64{0, 0.1, 0.3, 0.5, 0.7, 0.8, 1}
	onMission := []string{}
	for j := 0; j < nd; j++ {
		d := Domain{Name: fmt.Sprintf("d%d", j), Weight: weights[r.IntN(len(weights))], MissionAlignment: aligns[r.IntN(len(aligns))]}
		switch x := r.Float64(); {
		case x < 0.2:
			d.Kind = "execute"
		case x < 0.45:
			d.Kind = "strategize"
		case x < 0.6:
			d.Kind = "detect"
		default:
			d.Kind = "observe"
		}
		var w Work
		switch x := r.Float64(); {
		case x < 0.25:
			w = Work{kind: "always", always: true}
		case x < 0.35:
			w = Work{kind: "always"}
		case x < 0.55:
			w = Work{kind: "every", every: 2 + r.IntN(3)}
		case x < 0.7:
			w = Work{kind: "from", from: 2 + r.IntN(5)}
		case x < 0.85:
			w = Work{kind: "until", until: 3 + r.IntN(6)}
		default:
			var cs []int
			for c := 1; c <= 20; c++ {
				if r.Float64() < 0.3 {
					cs = append(cs, c)
				}
			}
			w = Work{kind: "cycles", cycles: cs}
		}
		sc.Work[d.Name] = w
		if (w.kind == "cycles" || w.kind == "every") && r.Float64() < 0.5 {
			for c := 1; c <= 20; c++ {
				if w.At(c) && r.Float64() < 0.6 {
					sev := "warning"
					if r.Float64() < 0.3 {
						sev = "critical"
					}
					sc.Alerts[d.Name] = append(sc.Alerts[d.Name], Alert{Cycle: c, Severity: sev})
				}
			}
		}
		if d.OnMission() {
			onMission = append(onMission, d.Name)
		}
		sc.Domains = append(sc.Domains, d)
	}
	if len(onMission) == 0 {
		sc.Domains[0].MissionAlignment = 1
		onMission = append(onMission, sc.Domains[0].Name)
	}
	if r.Float64() < 0.85 {
		g := onMission[r.IntN(len(onMission))]
		sc.Goal = &Goal{ID: "goal", Domain: g, TargetCycles: 3 + r.IntN(6)}
	}
	return sc
}
