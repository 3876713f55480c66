package engine

import (
	"fmt"

	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// rememberWeek is the memory cascade of 6-C4 (one episode per completed
// ISO week, principles, the contrarian check) and the adaptive lens of 5-E
// with its contrarian review. log includes this cycle's entry; outcomes
// include this cycle's outcome.
func (c *cycle) rememberWeek(f *record.Facts, log []state.DecisionEntry, outcomes []state.Outcome, conf state.Confidence, memos *state.Memos) {
	cfg, snap := c.cfg, c.snap

	// 6-C4: the episode of the week that just ended, written once.
	scores := map[string]float64{}
	for d, v := range c.ori.Confidence {
		scores[d] = v
	}
	for d, v := range conf.Scores {
		scores[d] = v
	}
	contrarian := 0
	for _, m := range memos.History {
		if m.Type == "contrarian" {
			contrarian++
		}
	}
	eps, ep := reflect.WriteEpisode(reflect.EpisodeInput{Now: c.now, Config: cfg, Episodes: snap.Episodes,
		Log: reflect.CycleRecords(log, outcomes), Reflections: snap.Reflections.Reflections, Confidence: scores,
		GapsFound: len(snap.SkillGaps.Gaps), ContrarianChecks: contrarian})
	if ep != nil {
		snap.Episodes, c.episodesChanged = eps, true
		c.printf("[Memory] Episode %s written: %s", ep.ID, ep.Summary)
	}
	// Principles every cycle: extraction, confirmation and decay.
	ps, pr := reflect.ExtractPrinciples(snap.Episodes, snap.Principles, reflect.PrincipleInput{Now: c.now, Config: cfg})
	if n := len(pr.Created) + len(pr.Promoted) + len(pr.Confirmed) + len(pr.Candidates) + len(pr.Decayed) + len(pr.Removed) + len(pr.Dropped); n > 0 {
		snap.Principles, c.principlesChanged = ps, true
		for _, id := range pr.Created {
			c.printf("[Memory] Principle %s extracted from lessons recurring across episodes.", id)
		}
	}
	// Contrarian check every contrarian_check_interval cycles.
	if iv, why := reflect.ContrarianCheck(reflect.ContrarianInput{Cycle: f.Cycle, Config: cfg, Log: log}); iv != nil {
		exists := false
		for _, x := range memos.Interventions {
			if x.Domain == iv.Domain && x.Type == iv.Type {
				exists = true
			}
		}
		if !exists {
			memos.Interventions = append(memos.Interventions, *iv)
			memos.History = appendMemo(memos.History, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: f.Cycle, Domain: iv.Domain, Type: "contrarian", Message: iv.Reason})
			c.printf("[Memory] Contrarian check: %s", iv.Reason)
		}
	} else if why != "" && f.Cycle > 0 && cfg.Memory.ContrarianCheckInterval > 0 && f.Cycle%cfg.Memory.ContrarianCheckInterval == 0 {
		c.printf("[Memory] Contrarian check: %s", why)
	}

	// 5-E: the executed domain's lens learns from this cycle.
	if !f.Executed || !c.primary.started {
		return
	}
	d := f.Domain
	dc, ok := cfg.Domains.Get(d)
	if !ok {
		return
	}
	ds, err := c.store.ReadDomainState(dc.StateFile)
	if err != nil {
		c.printf("[WARN] lens of %s not updated: %v", d, err)
		return
	}
	lens, found, err := c.store.ReadLens(d)
	if err != nil {
		c.printf("[WARN] lens of %s not updated: %v", d, err)
		return
	}
	if !found {
		lens = state.NewLens(d, c.now)
	}
	cl, err := c.store.ReadLensChangelog(d)
	if err != nil {
		c.printf("[WARN] lens of %s not updated: %v", d, err)
		return
	}
	nl, ncl, lr := reflect.UpdateLens(lens, cl, reflect.LensInput{Cycle: f.Cycle, Now: c.now, Domain: d, State: ds, CoAlerts: snap.State.RecentAlerts})
	if err := c.store.SaveLens(d, nl); err != nil {
		c.printf("[WARN] lens of %s not written: %v", d, err)
		return
	}
	if len(lr.Changes) > 0 {
		if err := c.store.SaveLensChangelog(d, ncl); err != nil {
			c.printf("[WARN] lens changelog of %s not written: %v", d, err)
		}
		for _, ch := range lr.Changes {
			c.printf("[Reflect] Lens %s: %s %s (%s)", d, ch.ChangeType, ch.Item, ch.Reason)
		}
		c.lensChanges = append(c.lensChanges, lr.Changes...)
	}
	if review, msg := reflect.LensReview(reflect.ReviewInput{Cycle: f.Cycle, Interval: cfg.Memory.ContrarianCheckInterval, Domain: d, Outputs: reflect.LensOutputs(log, d)}); review {
		memos.History = appendMemo(memos.History, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: f.Cycle, Domain: d, Type: "lens_review", Message: msg})
		c.printf("[Reflect] %s", msg)
	}
}

// saveMemory writes what rememberWeek changed.
func (c *cycle) saveMemory() error {
	if c.episodesChanged {
		if err := c.store.SaveEpisodes(c.snap.Episodes); err != nil {
			return fmt.Errorf("episodes: %w", err)
		}
	}
	if c.principlesChanged {
		if err := c.store.SavePrinciples(c.snap.Principles); err != nil {
			return fmt.Errorf("principles: %w", err)
		}
	}
	return nil
}
