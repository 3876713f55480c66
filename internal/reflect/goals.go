package reflect

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/state"
)

// ParseMetric reads a metric command's output as a number: the last
// non-empty line, as a number, or true/false as 1/0 (the original
// project's metric commands are often `jq` predicates).
func ParseMetric(out string) (float64, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	switch strings.ToLower(last) {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	case "":
		return 0, fmt.Errorf("no output")
	}
	last = strings.TrimSuffix(last, "%")
	v, err := strconv.ParseFloat(last, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a number: %q", clip(last, 80))
	}
	return v, nil
}

func clip(s string, n int) string {
	// At most n characters and "…", cut at a character boundary: a metric
	// command's output may be any bytes.
	s, _ = ClipText(s, n+1)
	return s
}

// Measurement is one goal's metric command result.
type Measurement struct {
	Value float64
	Err   error
}

// ApplyProgress is 2-C: progress = clamp(value / target, 0, 1) (target 1
// when unset), completed at 1.0. A failed measurement keeps the previous
// progress and is reported.
func ApplyProgress(gs state.Goals, measured map[string]Measurement) (state.Goals, []string) {
	gs.Goals = append([]state.Goal(nil), gs.Goals...)
	var notes []string
	for i := range gs.Goals {
		g := &gs.Goals[i]
		m, ok := measured[g.ID]
		if !ok || g.Status != "active" {
			continue
		}
		if m.Err != nil {
			notes = append(notes, fmt.Sprintf("[WARN] Goal %s: metric_command failed (%v); keeping progress %.2f.", g.ID, m.Err, g.ProgressValue()))
			continue
		}
		target := 1.0
		if g.Target != nil && *g.Target != 0 {
			target = *g.Target
		}
		v := m.Value
		p := math.Min(math.Max(v/target, 0), 1)
		p = math.Round(p*10000) / 10000
		g.SetMeasured(v, p)
		if p >= 1.0 {
			g.Status = "completed"
			notes = append(notes, fmt.Sprintf("[Orient] Goal %s completed (%g of %g).", g.ID, v, target))
		}
	}
	return gs, notes
}

// GoalRelates reports whether a goal concerns a domain, by the same rule as
// 3-C (decide.GoalRelates).
func GoalRelates(g state.Goal, domain string) bool {
	return decide.GoalRelates(domain, g.Domain, g.RelatedDomains, g.Title, g.ID)
}

// TouchGoals is the first half of 5-D: the goals related to the executed
// domain record the activity (the caller then re-measures them).
func TouchGoals(gs state.Goals, domain string, now time.Time) (state.Goals, []string) {
	gs.Goals = append([]state.Goal(nil), gs.Goals...)
	var ids []string
	for i := range gs.Goals {
		if gs.Goals[i].Status == "active" && GoalRelates(gs.Goals[i], domain) {
			gs.Goals[i].LastActivity = state.FormatTime(now)
			ids = append(ids, gs.Goals[i].ID)
		}
	}
	return gs, ids
}

// AlertStreakForGoal is the length of an alert streak at which 5-D
// proposes a goal for a recurring, unaddressed area.
const AlertStreakForGoal = 3

// ProposeGoals is the second half of 5-D: a domain whose alerts recur
// AlertStreakForGoal cycles in a row with no related goal gets a goal with
// status "proposed", which a human activates.
func ProposeGoals(gs state.Goals, streaks map[string]int, now time.Time) (state.Goals, []state.Goal) {
	var added []state.Goal
	for _, d := range slices.Sorted(maps.Keys(streaks)) {
		if streaks[d] < AlertStreakForGoal {
			continue
		}
		related := false
		for _, g := range gs.Goals {
			if GoalRelates(g, d) && g.Status != "abandoned" {
				related = true
				break
			}
		}
		if related {
			continue
		}
		zero, one := 0.0, 1.0
		g := state.Goal{ID: "G-" + d + "-alerts", Title: fmt.Sprintf("Resolve the recurring alerts of %s", d), Status: "proposed",
			Progress: &zero, Target: &one, RelatedDomains: []string{d}, LastActivity: state.FormatTime(now)}
		gs.Goals = append(append([]state.Goal(nil), gs.Goals...), g)
		added = append(added, g)
	}
	return gs, added
}

// UpdateAlertStreaks counts, per domain, the consecutive cycles with a
// warning or critical alert; a cycle without one resets the domain.
func UpdateAlertStreaks(prev map[string]int, alerting map[string]bool, domains []string) map[string]int {
	out := map[string]int{}
	for _, d := range domains {
		if alerting[d] {
			out[d] = prev[d] + 1
		}
	}
	return out
}
