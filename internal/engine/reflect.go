package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// reflectStep is Step 5 and the memory half of Step 6, run once the
// cycle's entry exists (log includes it): micro-adjustments, action
// extraction, cascades, skill gaps and proposals, memos, goals, the lens,
// the self-critique and reflection recall, queue hygiene, the memory
// cascade and the cost-ledger integrity gate. It changes the snapshot;
// finish writes it.
func (c *cycle) reflectStep(ctx context.Context, f *record.Facts, dec decide.Decision, resultType string, log []state.DecisionEntry, conf *state.Confidence, memos *state.Memos) {
	cfg, st := c.cfg, &c.snap.State
	run := c.primary
	executed := f.Executed && run.started

	// Alert history for 5-D and 5-E, from what Observe saw.
	alerting := map[string]bool{}
	var names, now []string
	for _, d := range c.obs.Domains {
		names = append(names, d.Config.Name)
		for _, a := range d.State.Alerts {
			if a.Urgent() {
				alerting[d.Config.Name] = true
			}
		}
	}
	if executed && run.alerting {
		alerting[f.Domain] = true
	}
	for _, n := range names {
		if alerting[n] {
			now = append(now, n)
		}
	}
	st.AlertStreaks = reflect.UpdateAlertStreaks(st.AlertStreaks, alerting, names)
	st.RecentAlerts = append(append([][]string(nil), st.RecentAlerts...), now)
	if len(st.RecentAlerts) > 5 {
		st.RecentAlerts = st.RecentAlerts[len(st.RecentAlerts)-5:]
	}

	// The actions the primary skill reported earlier and now says no longer
	// apply, before extraction: a freed pending slot is not taken by the
	// cap, and a title both resolved and reported again stays resolved.
	if executed && run.report != nil && len(run.report.Resolved) > 0 {
		q, r := reflect.ResolveActions(c.snap.ActionQueue, run.report.Resolved, reflect.ResolveInput{Cycle: f.Cycle, Domain: f.Domain, Skill: run.skill, Now: c.now})
		for _, w := range r.Warnings {
			c.printf("[WARN] %s: %s", run.skill, w)
		}
		if n := len(r.Resolved); n > 0 {
			c.snap.ActionQueue, c.queueChanged = q, true
			c.actionsResolved += n
			ids := make([]string, 0, min(n, 5))
			for _, it := range r.Resolved[:min(n, 5)] {
				ids = append(ids, it.ID)
			}
			more := ""
			if n > 5 {
				more = fmt.Sprintf(", +%d more", n-5)
			}
			c.printf("[Reflect] Actions: %d resolved (%s%s).", n, strings.Join(ids, ", "), more)
		}
	}

	// 5-C2: action extraction from the primary skill's report.
	if executed && run.report != nil && len(run.report.Actions) > 0 {
		q, r := reflect.ExtractActions(c.snap.ActionQueue, run.report.Actions, reflect.ExtractInput{Cycle: f.Cycle, Domain: f.Domain, Skill: run.skill,
			ImplementationSkill: cfg.Implementation.PrimarySkill, RiceExtensions: cfg.Scoring.RiceExtensions, RiskRules: cfg.Safety.RiskRules, Now: c.now})
		for _, w := range r.Warnings {
			c.printf("[WARN] %s", w)
		}
		if len(r.Added) > 0 || len(r.Superseded) > 0 {
			c.snap.ActionQueue, c.queueChanged = q, true
			c.actionsAdded = len(r.Added)
			c.printf("[Reflect] Actions: %d extracted, %d duplicate(s).", len(r.Added), len(r.Duplicates))
		}
	}

	// 2-B1: micro-adjustments for the executed domain.
	if executed && run.ok && !c.restoredConfidence {
		before := c.ori.Confidence[f.Domain]
		if v, ok := conf.Get(f.Domain); ok {
			before = v
		}
		after, label := reflect.MicroAdjust(reflect.MicroInput{Config: cfg, Domain: f.Domain, Before: before,
			Findings: c.actionsAdded > 0 || run.newAlerts, Alerting: run.alerting, Unchanged: !run.changed})
		if label != "" {
			conf.Set(f.Domain, after, c.now)
			f.MicroAdj = label
			c.printf("[Orient] %s micro-adjustment %s -> confidence %.2f", f.Domain, label, after)
		}
	}

	// 2-B3 detection: the executed source domain's reported events.
	if executed && run.changed && len(c.deps) > 0 {
		cs, added := orient.DetectCascades(c.snap.Cascades, c.deps, f.Domain, run.events(), c.now)
		for _, a := range added {
			c.printf("[Orient] Cascade detected: %s from %s → affects %v", a.EventType, a.SourceDomain, a.AffectedDomains)
		}
		if len(added) > 0 {
			c.snap.Cascades, c.cascadesChanged = cs, true
		}
	}

	// 5-A: gaps from the four sources (errors and blocked chains were
	// recorded as they happened).
	for _, g := range reflect.DetectGaps(reflect.GapInput{Now: c.now, Config: cfg, CycleCount: f.Cycle, Log: log, Queue: c.snap.ActionQueue}) {
		c.addDomainGap(g.Domain, g.Name, g.Type, g.Detail)
	}

	// 6-C: an intervention counts down only on a cycle whose scoring
	// applied it, so it is counted again from the list this cycle read
	// (Orient's input) with what Decide did.
	memos.Interventions = reflect.CountDownInterventions(c.snap.Memos.Interventions, dec.Scored)

	// 5-C: memos for the next cycle, after this cycle's were consumed.
	var prs []reflect.PROutcome
	for _, ch := range c.outc.Changes {
		prs = append(prs, reflect.PROutcome{PR: ch.PR, Domain: ch.Domain, Outcome: ch.Outcome})
	}
	var levelOut []string
	for _, o := range dec.Options {
		if o.Excluded == decide.ExcludedLevel {
			levelOut = append(levelOut, o.Domain)
		}
	}
	m, mr := reflect.WriteMemos(*memos, reflect.MemoInput{Now: c.now, Config: cfg, Cycle: f.Cycle, CycleCount: f.Cycle, Log: log, PROutcomes: prs, LevelExcluded: levelOut})
	c.memoWritten = c.memoWritten || len(mr.Adjustments) > 0 || len(mr.Interventions) > 0
	for _, n := range mr.Notes {
		c.printf("%s", n)
	}
	*memos = m

	// 5-D: goals related to the executed domain are touched and
	// re-measured so the cycle's effect is visible the same cycle; a
	// recurring unaddressed alert proposes a goal.
	if executed {
		gs, ids := reflect.TouchGoals(c.snap.Goals, f.Domain, c.now)
		if len(ids) > 0 {
			c.snap.Goals, c.goalsChanged = gs, true
			if m := activeGoalIDs(gs, ids); len(m) > 0 {
				c.measureGoals(ctx, m)
			}
		}
	}
	if gs, added := reflect.ProposeGoals(c.snap.Goals, st.AlertStreaks, c.now); len(added) > 0 {
		c.snap.Goals, c.goalsChanged = gs, true
		for _, g := range added {
			c.printf("[Reflect] Proposed goal %s: %s (status proposed; activate it in goals.json).", g.ID, g.Title)
		}
	}

	// 5-F and 2-F: the self-critique of a cycle that made a decision, and
	// the recalled lessons marked applied.
	if dec.Winner != nil && (f.Action == "execute" || f.Action == "observe_only") {
		openPR := false
		for _, pr := range c.fview.status.Open {
			if orient.DomainOfBranch(cfg, pr.HeadRef) == f.Domain {
				openPR = true
			}
		}
		futile := c.patterns.FutileCount
		if c.patterns.FutileDomain != f.Domain {
			futile = 0
		}
		if resultType == record.TypeFutile {
			futile++
		}
		score := 0.0
		if f.Score != nil {
			score = *f.Score
		}
		r := reflect.Critique(reflect.CritiqueInput{Now: c.now, Cycle: f.Cycle, Domain: f.Domain, Skill: f.Skill, Score: score, Guidance: f.Guidance,
			Result: f.Result, ResultType: resultType, FutileRun: futile, OpenPR: openPR})
		r = c.judgedCritique(ctx, r)
		rs := c.snap.Reflections
		rs.Reflections = append([]state.Reflection(nil), rs.Reflections...)
		for _, i := range c.recall.Indexes {
			if i < len(rs.Reflections) {
				rs.Reflections[i].Status = "applied"
			}
		}
		c.snap.Reflections = reflect.AppendReflection(rs, r, cfg.Memory.ReflectionsBufferSize)
		c.reflectionsChanged = true
		c.printf("[Reflect] Self-critique: %s. Lesson: %s", r.Verdict, r.Lesson)
	}

	// 6-C2 and 6-C6: queue persistence and hygiene.
	if len(c.snap.ActionQueue.Pending)+len(c.snap.ActionQueue.InProgress) > 0 {
		open := map[int]bool{}
		for _, pr := range c.fview.status.Open {
			open[pr.Number] = true
		}
		// Without this cycle's PR list (no forge, or it failed) an item with
		// a PR cannot be judged stalled: requeueing it would start the same
		// work again beside an open PR.
		stalled := c.inProgressAtStart
		if !c.fview.ok {
			stalled = map[string]bool{}
			for _, a := range c.snap.ActionQueue.InProgress {
				if c.inProgressAtStart[a.ID] && a.PRNumber == nil {
					stalled[a.ID] = true
				}
			}
		}
		q, dr := reflect.DecayQueue(c.snap.ActionQueue, reflect.DecayInput{Now: c.now, DecayDays: cfg.Memory.ActionQueueDecayDays,
			DecayAmount: cfg.Memory.ActionQueueDecayAmount, InProgressAtStart: stalled, OpenPRs: open})
		for _, rq := range dr.Requeued {
			memos.History = appendMemo(memos.History, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: f.Cycle, Type: "action_requeued", Message: rq.Memo})
		}
		changed := len(dr.Decayed)+len(dr.Superseded)+len(dr.Requeued)+len(dr.CompletedBlocked) > 0
		inProgress := len(q.InProgress)
		q = reflect.PersistQueue(q)
		if n := inProgress - len(q.InProgress); n > 0 {
			c.printf("[WARN] action_queue.json: in_progress held %d items; the %d beyond the first %d were superseded.", inProgress, n, reflect.InProgressCap)
			changed = true
		}
		if changed || c.queueChanged {
			c.snap.ActionQueue, c.queueChanged = q, true
		}
		c.actionsResolved += len(dr.CompletedBlocked)
	}
}

// ledgerIntegrity is 6-C8 on the ledger after this cycle's entry.
func (c *cycle) ledgerIntegrity(l state.CostLedger, cycle int) state.CostLedger {
	out, filled := record.IntegrityGate(l, cycle, c.cfg.Cost.MaxBackfillCycles, c.now)
	if len(filled) > 0 {
		c.printf("[WARN] Cost ledger had no entries for %d cycle(s) (%v): backfilled at $%.2f each.", len(filled), filled, record.SyntheticCostUSD)
		// Backfilling is capped: what a second pass would still find
		// missing is what the cap left out, which the gap says.
		_, more := record.IntegrityGate(out, cycle, c.cfg.Cost.MaxBackfillCycles, c.now)
		c.snap.SkillGaps.RecordLoopBreak(cycle, filled, len(more) > 0, c.now)
		c.addGap(fmt.Sprintf("cost_ledger_autopatch_%d", cycle), state.GapLoopBreak, fmt.Sprintf("cycles %v had no cost entry; synthetic entries were added", filled))
	}
	return out
}

// writeProposals is 5-B: a gap that reached frequency 3 gets a proposal
// file, written once. A loop-break gap (6-C8) flags the loop's own
// accounting, not a missing skill, and gets none. The gaps are taken in
// proposal-name order, each once; the first "proposed-skills/ is full"
// ends the step with one warning (every later write would meet the same
// cap), and a cancelled cycle stops it.
func (c *cycle) writeProposals(ctx context.Context) {
	var due []state.Gap
	for _, g := range c.snap.SkillGaps.Gaps {
		if g.Frequency >= reflect.ProposalThreshold && !g.Resolved && !g.IsLoopBreak() {
			due = append(due, g)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].ProposalName() < due[j].ProposalName() })
	var written func(string) bool
	if len(due) > 0 {
		written = c.store.ProposalsWritten()
	}
	for i, g := range due {
		if ctx.Err() != nil {
			c.printf("[WARN] Skill proposals: stopped (%v); %d gap(s) not looked at.", context.Cause(ctx), len(due)-i)
			return
		}
		name := g.ProposalName()
		if written(name) {
			// WriteProposal would write nothing: the text is not made.
			continue
		}
		wrote, err := c.store.WriteProposal(name, reflect.Proposal(g, c.now))
		switch {
		case errors.Is(err, state.ErrProposalsFull):
			c.printf("[WARN] proposal for %s: %v; %d more gap(s) at frequency %d or more were not looked at.", name, err, len(due)-i-1, reflect.ProposalThreshold)
			return
		case err != nil:
			c.printf("[WARN] proposal for %s: %v", name, err)
		case wrote:
			c.printf("[Reflect] Skill proposal: %s (freq: %d)", name, g.Frequency)
			c.proposalsWritten = append(c.proposalsWritten, name)
		}
	}
}
