package engine

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/state"
)

// forgeView is what Step 1-B saw.
type forgeView struct {
	status   forge.Status
	reverted map[int]bool
	reviews  map[int][]orient.ReviewNote
	ok       bool
}

// observeForge is Step 1-B: open, merged and closed PRs and open issues,
// and the merge-and-hold answers 2-B4 needs. A forge that fails is one
// warning and empty data; the cycle continues.
func (c *cycle) observeForge(ctx context.Context) forgeView {
	v := forgeView{reverted: map[int]bool{}}
	if c.forge == nil {
		return v
	}
	ctx, cancel := c.forgeCtx(ctx)
	defer cancel()
	keeper, keeps := c.forge.(forge.CursorKeeper)
	if keeps {
		// What the forge read of the history in earlier cycles: this
		// cycle reads only what changed since (docs/forge.md).
		keeper.UseCursorStore(c.store.ForgeCursor())
	}
	st, err := c.forge.Status(ctx)
	if keeps {
		c.forgeNotes(keeper)
	}
	if err != nil {
		c.printf("[WARN] Forge %s unreachable (%v); continuing without pull-request data.", c.forge.Name(), err)
		return v
	}
	v.status, v.ok = st, true
	if keeps && !c.opts.DryRun {
		if err := keeper.SaveCursor(); err != nil {
			c.printf("[WARN] Forge cursor not saved (%v); the next cycle reads more of the history.", err)
		}
	}
	// 2-B2 feedback: reviews of the open PRs that proposed actions.
	if rv, ok := c.forge.(forge.Reviewer); ok {
		open := map[int]bool{}
		for _, pr := range st.Open {
			open[pr.Number] = true
		}
		v.reviews = map[int][]orient.ReviewNote{}
		for _, list := range [][]state.Action{c.snap.ActionQueue.Pending, c.snap.ActionQueue.InProgress} {
			for _, a := range list {
				if a.Status != "proposed" || a.PRNumber == nil || !open[*a.PRNumber] {
					continue
				}
				rs, err := rv.Reviews(ctx, *a.PRNumber)
				if err != nil {
					c.printf("[WARN] Reviews of PR #%d not read (%v).", *a.PRNumber, err)
					continue
				}
				for _, r := range rs {
					v.reviews[*a.PRNumber] = append(v.reviews[*a.PRNumber], orient.ReviewNote{ID: r.ID, User: r.User, State: r.State, Body: r.Body})
				}
			}
		}
	}
	byNumber := map[int]forge.PR{}
	for _, pr := range st.Merged {
		byNumber[pr.Number] = pr
	}
	for _, n := range orient.HoldCandidates(c.snap.Outcomes.Entries, c.now) {
		pr, ok := byNumber[n]
		if !ok {
			pr = forge.PR{Number: n, State: forge.StateMerged}
			for _, o := range c.snap.Outcomes.Entries {
				if o.PRNumber != nil && *o.PRNumber == n {
					if t, ok := orient.MergedAt(o); ok {
						pr.Merged = t
					}
				}
			}
		}
		rev, err := c.forge.Reverted(ctx, pr)
		if err != nil {
			c.printf("[WARN] Could not tell whether PR #%d was reverted (%v); deciding its hold next cycle.", n, err)
			continue
		}
		v.reverted[n] = rev
	}
	return v
}

// forgeNotes prints what the forge had to say about its cursor.
func (c *cycle) forgeNotes(k forge.CursorKeeper) {
	for _, n := range k.TakeNotes() {
		if n.Warning {
			c.printf("[WARN] %s", n.Text)
		} else {
			c.printf("[Observe] %s", n.Text)
		}
	}
}

// OrientPRs converts the forge's pull requests to what Orient reads.
func OrientPRs(prs []forge.PR) []orient.PR {
	out := make([]orient.PR, 0, len(prs))
	for _, p := range prs {
		out = append(out, orient.PR{Number: p.Number, HeadRef: p.HeadRef, Draft: p.Draft, Merged: p.Merged, Closed: p.Closed})
	}
	return out
}

// orientOutcomes runs the outcome half of Orient and reports what moved.
func (c *cycle) orientOutcomes(obs *observe.Observation, fv forgeView, conf map[string]float64) orient.OutcomeResult {
	last := map[string]time.Time{}
	for _, d := range obs.Domains {
		if !d.NeverRun {
			last[d.Config.Name] = c.now.Add(-durationOf(d.Hours, time.Hour))
		}
	}
	r := orient.FromOutcomes(orient.OutcomeInput{
		Now: c.now, Config: c.cfg, Confidence: conf,
		Open: OrientPRs(fv.status.Open), Merged: OrientPRs(fv.status.Merged), Closed: OrientPRs(fv.status.Closed),
		Log: c.snap.State.DecisionLog, Counted: c.snap.State.CountedPRs, Outcomes: c.snap.Outcomes.Entries,
		Reverted: fv.reverted, Queue: c.snap.ActionQueue, LastRun: last,
	})
	for _, w := range r.Warnings {
		c.printf("[WARN] %s", w)
	}
	for _, ch := range r.Changes {
		sign := "+"
		if ch.Delta < 0 {
			sign = ""
		}
		c.printf("[Orient] PR #%d %s -> %s confidence %s%.2f (%.2f → %.2f)", ch.PR, ch.Outcome, ch.Domain, sign, ch.Delta, ch.Before, ch.After)
	}
	for _, a := range r.Annotations {
		c.printf("[Orient] Outcome back-annotated: cycle #%d PR #%d → %s (%.1f).", a.CycleID, a.PR, a.ResultType, a.QualityMult)
	}
	for _, m := range r.QueueMoves {
		c.printf("[Orient] Action queue: %s.", m)
	}
	stale := make([]string, 0, len(r.StaleAfterChange))
	for d := range r.StaleAfterChange {
		stale = append(stale, d)
	}
	sort.Strings(stale)
	for _, d := range stale {
		c.printf("[Orient] %s changed (PR merged) but has not run for %gh+: stale_after_change signal.", d, c.cfg.Signals.StaleAfterChangeHours)
	}
	return r
}

// recordOutcomes persists what orienting from outcomes changed; it runs in
// Step 6 with the other writes (a dry run never gets here).
func (c *cycle) recordOutcomes(r orient.OutcomeResult, metrics *state.Metrics) []any {
	for _, ch := range r.Changes {
		switch ch.Outcome {
		case "merged":
			metrics.Counters.TotalPRsMerged++
		case "rejected":
			metrics.Counters.TotalPRsRejected++
		}
	}
	c.snap.State.CountedPRs = r.Counted
	var lines []any
	for _, a := range r.Annotations {
		lines = append(lines, map[string]any{"cycle_id": a.CycleID, "annotate": map[string]any{"result_type": a.ResultType, "quality_multiplier": a.QualityMult, "pr_number": a.PR}, "timestamp": state.FormatTime(c.now)})
	}
	return lines
}

func prOutcomesJSON(changes []orient.ConfidenceChange) []byte {
	if len(changes) == 0 {
		return nil
	}
	type out struct {
		PR     int     `json:"pr"`
		Domain string  `json:"domain"`
		Out    string  `json:"outcome"`
		Delta  float64 `json:"confidence_delta"`
		// before and after are ooda's additions (the original's readers
		// pass over them): the Cycle Card shows the change as it was.
		Before float64 `json:"before"`
		After  float64 `json:"after"`
	}
	var list []out
	for _, ch := range changes {
		list = append(list, out{ch.PR, ch.Domain, ch.Outcome, ch.Delta, ch.Before, ch.After})
	}
	b, _ := json.Marshal(list)
	return b
}

// prsProcessedJSON is the cycle's PR outcomes in the original loop's
// decision-log shape ([{number, action, domain, type}]), written beside
// pr_outcomes so that the original, run on this state again, skips the
// PRs this engine already counted instead of counting them a second time.
func prsProcessedJSON(changes []orient.ConfidenceChange) []byte {
	if len(changes) == 0 {
		return nil
	}
	type processed struct {
		Number int    `json:"number"`
		Action string `json:"action"`
		Domain string `json:"domain"`
		Type   string `json:"type"`
	}
	list := make([]processed, 0, len(changes))
	for _, ch := range changes {
		list = append(list, processed{ch.PR, "confidence_update", ch.Domain, ch.Outcome})
	}
	b, _ := json.Marshal(list)
	return b
}

// forgeCtx bounds one step's forge calls by forge.timeout.
func (c *cycle) forgeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout, err := time.ParseDuration(c.cfg.Forge.Timeout)
	if err != nil || timeout <= 0 {
		timeout = 30 * time.Second
	}
	return context.WithTimeout(ctx, timeout)
}
