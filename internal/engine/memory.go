package engine

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// rememberWeek is the memory cascade of 6-C4 (one episode per completed
// ISO week, principles, the contrarian check) and the adaptive lens of 5-E
// with its contrarian review. log includes this cycle's entry; outcomes
// include this cycle's outcome. The lens is written through w, the
// record's batch.
func (c *cycle) rememberWeek(w *state.Store, f *record.Facts, log []state.DecisionEntry, outcomes []state.Outcome, conf state.Confidence, memos *state.Memos) {
	cfg, snap := c.cfg, c.snap

	// 6-C4: the episode of the week that just ended, written once.
	st := &snap.State
	if iv := cfg.Memory.ContrarianCheckInterval; iv > 0 && f.Cycle > 0 && f.Cycle%iv == 0 {
		st.ContrarianChecks = append(append([]string(nil), st.ContrarianChecks...), state.FormatTime(c.now))
		if n := len(st.ContrarianChecks); n > 100 {
			st.ContrarianChecks = st.ContrarianChecks[n-100:]
		}
	}
	// The episode summarises the ISO week before this one: count what
	// happened in it — once a week: the other cycles of the week find it
	// written and gather nothing.
	if reflect.EpisodeDue(snap.Episodes, c.now) {
		scores := make(map[string]float64, max(len(c.ori.Confidence), len(conf.Scores)))
		for d, v := range c.ori.Confidence {
			scores[d] = v
		}
		for d, v := range conf.Scores {
			scores[d] = v
		}
		from, to := previousISOWeek(c.now)
		within := func(ts string) bool {
			t, ok := state.ParseTime(ts)
			return ok && !t.Before(from) && t.Before(to)
		}
		contrarian := weekContrarianChecks(st.ContrarianChecks, log, within)
		gaps := 0
		for _, g := range snap.SkillGaps.Gaps {
			if within(g.FirstSeenAt()) {
				gaps++
			}
		}
		eps, ep := reflect.WriteEpisode(reflect.EpisodeInput{Now: c.now, Config: cfg, Episodes: snap.Episodes,
			Log: reflect.CycleRecords(log, outcomes), Reflections: snap.Reflections.Reflections, Confidence: scores,
			GapsFound: gaps, ContrarianChecks: contrarian})
		if ep != nil {
			snap.Episodes, c.episodesChanged = eps, true
			c.printf("[Memory] Episode %s written: %s", ep.ID, ep.Summary)
		}
	}
	// Principles every cycle: extraction, confirmation and decay.
	ps, pr := reflect.ExtractPrinciples(snap.Episodes, snap.Principles, reflect.PrincipleInput{Now: c.now, Config: cfg})
	if n := len(pr.Created) + len(pr.Promoted) + len(pr.Confirmed) + len(pr.Candidates) + len(pr.Decayed) + len(pr.Removed) + len(pr.Dropped) + len(pr.Trimmed); n > 0 {
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
	restarted := false
	if err != nil {
		// Left in place, a changelog that cannot be read (corrupt, too
		// large, a symlink out) would stop this lens from learning in
		// every cycle after: it is set aside as a corrupt evolve file is,
		// and a new one started.
		p := c.store.LensChangelogPath(d)
		dst, qerr := c.store.Quarantine(state.Corruption{File: filepath.Base(p), Path: p, Err: err}, c.now)
		if qerr != nil {
			c.printf("[WARN] lens of %s not updated: %v (and it could not be set aside: %v)", d, err, qerr)
			return
		}
		c.printf("[WARN] lens changelog of %s set aside (%v) to %s; a new one is started.", d, err, filepath.Base(dst))
		c.addGap("state_corrupt_lens_changelog_"+d, "state_corruption", fmt.Sprintf("the lens changelog of %s could not be read and was set aside to %s", d, filepath.Base(dst)))
		cl, restarted = state.LensChangelog{Domain: d}, true
	}
	nl, ncl, lr := reflect.UpdateLens(lens, cl, reflect.LensInput{Cycle: f.Cycle, Now: c.now, Domain: d, State: ds, CoAlerts: snap.State.RecentAlerts})
	if err := w.SaveLens(d, nl); err != nil {
		c.printf("[WARN] lens of %s not written: %v", d, err)
		return
	}
	if len(lr.Changes) > 0 || restarted {
		if err := w.SaveLensChangelog(d, ncl); err != nil {
			c.printf("[WARN] lens changelog of %s not written: %v", d, err)
		}
		for _, ch := range lr.Changes {
			c.printf("[Reflect] Lens %s: %s %s (%s)", d, ch.ChangeType, ch.Item, ch.Reason)
		}
		c.lensChanges = append(c.lensChanges, lr.Changes...)
	}
	if review, msg := reflect.LensReview(reflect.ReviewInput{Cycle: f.Cycle, Interval: cfg.Memory.ContrarianCheckInterval, Domain: d, Outputs: c.domainOutputs(log, d, f)}); review {
		memos.History = appendMemo(memos.History, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: f.Cycle, Domain: d, Type: "lens_review", Message: msg})
		c.printf("[Reflect] %s", msg)
	}
}

// weekContrarianChecks counts the contrarian checks made in the week
// within accepts. This program keeps the instants of its checks in
// state.json (checks, up to 100); the original OODA loop records a check
// as a non-null contrarian_check in the cycle's decision-log entry, which
// this program's entries now carry too. A check is counted once by its
// instant: an entry's timestamp is the instant its cycle recorded the
// check, the same as the one in checks, so an entry of this program is not
// counted twice, and one whose instant checks no longer holds still counts.
func weekContrarianChecks(checks []string, log []state.DecisionEntry, within func(string) bool) int {
	seen := map[time.Time]bool{}
	n := 0
	count := func(ts string) {
		t, ok := state.ParseTime(ts)
		if !ok || !within(ts) || seen[t] {
			return
		}
		seen[t] = true
		n++
	}
	for _, ts := range checks {
		count(ts)
	}
	for _, e := range log {
		if recordsContrarianCheck(e) {
			count(e.Timestamp)
		}
	}
	return n
}

// recordsContrarianCheck says whether a decision-log entry records a
// contrarian check: a contrarian_check object (null, the original's "no
// check", is none). An object this program could not read field by field
// (a member of the wrong type) is kept aside as written and still counts.
func recordsContrarianCheck(e state.DecisionEntry) bool {
	if e.ContrarianCheck != nil {
		return true
	}
	raw := bytes.TrimSpace(e.Extra["contrarian_check"])
	return len(raw) > 0 && raw[0] == '{'
}

// saveMemory writes what rememberWeek changed, through s (the record's
// batch).
func (c *cycle) saveMemory(s *state.Store) error {
	if c.episodesChanged {
		if err := s.SaveEpisodes(c.snap.Episodes); err != nil {
			return fmt.Errorf("episodes: %w", err)
		}
	}
	if c.principlesChanged {
		if err := s.SavePrinciples(c.snap.Principles); err != nil {
			return fmt.Errorf("principles: %w", err)
		}
	}
	return nil
}

// previousISOWeek is [Monday 00:00, next Monday 00:00) UTC of the ISO week
// before the one containing now.
func previousISOWeek(now time.Time) (time.Time, time.Time) {
	d := now.UTC().Truncate(24 * time.Hour)
	monday := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, -7), monday
}

// domainOutputs is had_output of the domain's executed cycles, oldest
// first: its first 3 ever (kept in state.json), then the ones the decision
// log still holds after them. It also records this cycle among the first 3
// while there are fewer.
func (c *cycle) domainOutputs(log []state.DecisionEntry, d string, f *record.Facts) []bool {
	st := &c.snap.State
	if st.FirstOutputs == nil {
		st.FirstOutputs = map[string][]state.CycleOutput{}
	}
	first := st.FirstOutputs[d]
	if len(first) < 3 && f.Executed {
		first = append(append([]state.CycleOutput(nil), first...), state.CycleOutput{Cycle: f.Cycle, HadOutput: f.HadOutput})
		st.FirstOutputs[d] = first
	}
	var out []bool
	last := 0
	for _, o := range first {
		out = append(out, o.HadOutput)
		last = o.Cycle
	}
	for _, e := range log {
		if e.SelectedDomain != d || e.Cycle <= last || e.HadOutput == nil {
			continue
		}
		switch e.Action {
		case "skip", "observe_only", "blocked":
			continue
		}
		out = append(out, *e.HadOutput)
	}
	return out
}
