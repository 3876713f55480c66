package reflect

import (
	"fmt"
	"math"

	"github.com/ooda-loop/ooda/internal/config"
)

// MicroInput are the facts of the executed domain's run for 2-B1.
type MicroInput struct {
	Config *config.Config
	Domain string
	// Before is the domain's confidence before the adjustment.
	Before float64
	// Findings: actions extracted or new alerts this cycle.
	Findings bool
	// Alerting: the domain state shows a warning or critical alert.
	Alerting bool
	// Unchanged: the domain's state is the same as before the run.
	Unchanged bool
}

// MicroAdjust is 2-B1, for the executed domain when
// confidence.observation_micro_adjustments is on and the level is below 3
// (at level 3 the PR outcomes are the signal, and adjusting here too would
// count the same evidence twice): findings +0.02, alerts +0.03, no new
// data −0.01, within [min, max]. It returns the new confidence and a label
// for the CHANGELOG ("" when nothing applies).
func MicroAdjust(in MicroInput) (float64, string) {
	cfg := in.Config
	if !cfg.Confidence.ObservationMicroAdjustments || cfg.ProgressiveComplex.CurrentLevel >= 3 {
		return in.Before, ""
	}
	var delta float64
	var why string
	switch {
	case in.Findings:
		delta, why = 0.02, "findings"
	case in.Alerting:
		delta, why = 0.03, "alert"
	case in.Unchanged:
		delta, why = -0.01, "no new data"
	default:
		return in.Before, ""
	}
	after := math.Min(math.Max(in.Before+delta, cfg.Confidence.Min), cfg.Confidence.Max)
	after = math.Round(after*10000) / 10000
	return after, fmt.Sprintf("%+.2f (%s)", delta, why)
}
