package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// orientMore runs the rest of Step 2 after confidence and PR outcomes:
// 2-A patterns, 2-A2 saturation, 2-B3 cascades, 2-C goal progress and 2-F
// recall. What it decides for this cycle goes into ori; what must be kept
// goes into the snapshot, which Step 6 writes.
func (c *cycle) orientMore(ctx context.Context, obs *observe.Observation, ori *orient.Orientation) {
	cfg, st := c.cfg, &c.snap.State
	// 2-A: patterns; the futile-loop penalty is a one-shot adjustment, so
	// it applies to this cycle's score and is gone after it.
	c.patterns = orient.AnalyzePatterns(st.DecisionLog)
	for _, n := range c.patterns.Notes {
		c.printf("%s", n)
	}
	if c.patterns.Penalised() {
		ori.Memo[c.patterns.FutileDomain] += orient.FutilePenalty
	}

	// 2-A2: the saturation breaker judges the previous completed cycle.
	sat := orient.SaturationCheck(cfg, st.ConsecutiveObserveOnlyCycles, st.SaturationEvaluated, st.DecisionLog)
	st.ConsecutiveObserveOnlyCycles, st.SaturationEvaluated = sat.Count, sat.Evaluated
	switch {
	case sat.Warn:
		c.printf("[Orient] ⚠ Saturation warning: %d consecutive observe-only cycles.", sat.Count)
		c.memo = append(c.memo, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: c.res.Cycle, Type: "saturation_warning", Message: sat.Message})
	case sat.Boost:
		c.printf("[Orient] ⚠ Saturation boost applied: action queue +%g, implementation domain boosted.", cfg.Saturation.ImplementationBoost)
		q := &c.snap.ActionQueue
		for i := range q.Pending {
			v := q.Pending[i].Rice() + cfg.Saturation.ImplementationBoost
			q.Pending[i].EffectiveRice = &v
		}
		c.queueChanged = len(q.Pending) > 0
		obs.Impl.HighestRice += cfg.Saturation.ImplementationBoost
	case sat.Halt:
		c.printf("[Orient] 🛑 Saturation halt: %d cycles. HALT file created. Review required.", sat.Count)
		if c.opts.DryRun {
			c.note("saturation: a real cycle would create the HALT file")
		} else {
			if err := c.store.WriteHalt(cfg.Safety.HaltFile, sat.Message, c.now); err != nil {
				c.printf("[WARN] could not create the HALT file: %v", err)
			} else {
				c.res.HaltCreated = true
			}
			// The counted cycle is kept at once: after a resume it must
			// not be counted again.
			if err := c.store.SaveState(*st); err != nil {
				c.printf("[WARN] %v", err)
			}
		}
	}

	// 2-B3: pending cascades give their one-shot bonuses.
	deps, err := orient.Dependencies(cfg.DomainDependencies)
	if err != nil {
		c.printf("[WARN] %v", err)
	}
	c.deps = deps
	if len(deps) > 0 || len(c.snap.Cascades.Cascades) > 0 {
		cr := orient.ApplyCascades(c.snap.Cascades, c.lastRuns(obs), c.now)
		for _, n := range cr.Notes {
			c.printf("%s", n)
		}
		for d, b := range cr.Bonus {
			ori.Memo[d] += b
		}
		c.snap.Cascades = cr.Cascades
		c.cascadesChanged = cr.Changed
	}

	// 2-C: goal progress from metric commands.
	if ids := activeGoalIDs(c.snap.Goals, nil); len(ids) > 0 {
		if c.opts.DryRun {
			c.note("goal metrics not re-measured in a dry run (metric commands may write)")
		} else {
			c.measureGoals(ctx, ids)
		}
	} else if !c.opts.DryRun {
		// Progress written by hand or by a skill is capped likewise.
		gs := c.snap.Goals
		if len(c.capGoals(&gs)) > 0 || c.art.goalsCapped {
			c.snap.Goals, c.goalsChanged = gs, true
		}
	}

	// 2-F: recall lessons for the candidates.
	var cands []string
	for _, d := range obs.Domains {
		cands = append(cands, d.Config.Name)
	}
	c.recall = orient.RecallReflections(c.snap.Reflections.Reflections, cands, cfg.Memory.ReflectionRecallCount)
	if len(c.recall.Lessons) > 0 {
		var ls []string
		for _, r := range c.recall.Lessons {
			ls = append(ls, r.Lesson)
		}
		c.printf("[Orient] Recalling %d past lesson(s): %s", len(ls), strings.Join(ls, "; "))
	}
}

// lastRuns is when each observed domain last ran (absent: never).
func (c *cycle) lastRuns(obs *observe.Observation) map[string]time.Time {
	out := map[string]time.Time{}
	for _, d := range obs.Domains {
		if !d.NeverRun {
			out[d.Config.Name] = c.now.Add(-durationOf(d.Hours, time.Hour))
		}
	}
	return out
}

// activeGoalIDs lists active goals with a metric command (only those in
// only, when only is non-nil).
func activeGoalIDs(gs state.Goals, only []string) []string {
	keep := map[string]bool{}
	for _, id := range only {
		keep[id] = true
	}
	var ids []string
	for _, g := range gs.Goals {
		if g.Status == "active" && strings.TrimSpace(g.MetricCommand) != "" && (only == nil || keep[g.ID]) {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// measureGoals runs the metric commands of the goals ids (2-C, and 5-D's
// re-measure) and applies their progress. A command that fails or prints
// no number keeps the previous progress, with a warning.
// metricTail is how much of a metric command's output is kept: its last
// line is the metric.
const metricTail = 64 << 10

func (c *cycle) measureGoals(ctx context.Context, ids []string) {
	cfg := c.cfg
	measured := map[string]reflect.Measurement{}
	timeout := durationOf(cfg.TestTimeoutSeconds, time.Second)
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	if c.measures == nil {
		c.measures = map[string]*goalMeasure{}
	}
	for _, id := range ids {
		var cmd string
		for _, g := range c.snap.Goals.Goals {
			if g.ID == id {
				cmd = g.MetricCommand
			}
		}
		// Only the last line is the metric, so only a tail is kept: a
		// command that prints gigabytes costs no memory.
		out := proc.NewTailBuffer(metricTail)
		// metric_command is the user's own shell command from goals.json,
		// so it runs through the shell, in the project root.
		res := c.opts.Runner.Run(ctx, proc.Spec{Argv: []string{"/bin/sh", "-c", cmd}, Dir: c.store.Root, Env: envList(),
			Timeout: timeout, Output: out, HaltFile: c.haltPath()})
		switch {
		case res.StartErr != nil:
			measured[id] = reflect.Measurement{Err: res.StartErr}
		case res.TimedOut:
			measured[id] = reflect.Measurement{Err: fmt.Errorf("timed out after %s", timeout)}
		case !res.OK():
			measured[id] = reflect.Measurement{Err: fmt.Errorf("exit status %d", res.ExitCode)}
		default:
			v, err := reflect.ParseMetric(string(out.Bytes()))
			measured[id] = reflect.Measurement{Value: v, Err: err}
		}
	}
	for id, m := range measured {
		gm := c.measures[id]
		if gm == nil {
			gm = &goalMeasure{}
			c.measures[id] = gm
		}
		if m.Err != nil {
			gm.failed, gm.err = true, c.recorded(m.Err.Error())
		} else {
			gm.ok = true
		}
	}
	gs, notes := reflect.ApplyProgress(c.snap.Goals, measured)
	// 2-C's evidence gate before anything is said: a goal of a graded
	// domain is not completed by its own metric alone.
	capped := c.capGoals(&gs)
	for _, n := range notes {
		if !capped[goalOfNote(n)] {
			c.printf("%s", n)
		}
	}
	c.snap.Goals = gs
	c.goalsChanged = true
}

// goalsBefore is the active and completed goals of gs as a cycle loads
// them: the goals Result.Goals reports on, each with its index in gs.
func goalsBefore(gs state.Goals, quarantined map[string]bool) ([]GoalResult, []int) {
	out, idx := []GoalResult{}, []int{}
	for i, g := range gs.Goals {
		if g.Status != "active" && g.Status != "completed" {
			continue
		}
		p := g.ProgressValue()
		out = append(out, GoalResult{ID: g.ID, StatusBefore: g.Status, Status: g.Status, ProgressBefore: p, Progress: p, Quarantined: quarantined[g.ID]})
		idx = append(idx, i)
	}
	return out, idx
}

// goalResults completes goalsBefore with the goals as the cycle leaves
// them and what their metric commands gave. A cycle only updates goals in
// place or appends new ones, so a goal keeps its index.
func (c *cycle) goalResults() []GoalResult {
	out := append([]GoalResult(nil), c.goalsBefore...)
	gs := c.snap.Goals.Goals
	for i := range out {
		r := &out[i]
		if j := c.goalIndex[i]; j < len(gs) && gs[j].ID == r.ID {
			r.Status, r.Progress = gs[j].Status, gs[j].ProgressValue()
		}
		if m := c.measures[r.ID]; m != nil {
			r.Measured = true
			if m.failed && !m.ok {
				r.MetricFailed, r.MetricError = true, m.err
			}
		}
	}
	return out
}
