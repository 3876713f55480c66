package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/perfstat"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// baseFacts starts the cycle's record from the decision.
func (c *cycle) baseFacts(obs *observe.Observation, ori orient.Orientation, dec decide.Decision, summary string) record.Facts {
	c.obs, c.ori = obs, ori
	f := record.Facts{
		Cycle: c.res.Cycle, Now: c.now, OrientSummary: summary, Guidance: dec.Guidance, Gated: dec.Gated,
		ScoreVerified: dec.ScoreVerified, CycleMode: dec.CycleMode, Season: obs.SeasonMode,
		Saturation: c.snap.State.ConsecutiveObserveOnlyCycles,
	}
	if w := dec.Winner; w != nil {
		// 2-F recalls lessons for every candidate; the ones that informed
		// this cycle are the winner's.
		for _, r := range c.recall.Lessons {
			if r.Domain == w.Domain {
				f.LessonsRecalled = append(f.LessonsRecalled, r.Lesson)
			}
		}
	}
	if w := dec.Winner; w != nil {
		score, raw, conf := w.Score, w.RawScore, w.Confidence
		f.Domain, f.Skill = w.Domain, w.Skill
		if dec.Guidance == "" {
			f.Score, f.RawScore = &score, &raw
		}
		f.Confidence = &conf
		f.Staleness, f.Alert, f.Balance = w.Staleness, w.Alert, w.Balance
		f.SelectedByAlert = w.SelectedByAlert
		if dc, ok := c.cfg.Domains.Get(w.Domain); ok {
			f.OnMission = c.cfg.MissionSet() && dc.Alignment() >= 0.5
		} else if w.Virtual {
			f.OnMission = c.cfg.MissionSet() && c.cfg.Implementation.Alignment() >= 0.5
		}
		// An entry the original wrote records confidence_at_decision
		// rather than confidence: the trend reads either.
		for i := len(c.snap.State.DecisionLog) - 1; i >= 0; i-- {
			e := c.snap.State.DecisionLog[i]
			if p := e.DecidedConfidence(); e.SelectedDomain == w.Domain && p != nil {
				v := *p
				f.PrevConfidence = &v
				break
			}
		}
	}
	// The score table, in rank order up to the cap, for the original's
	// readers (scores).
	if len(dec.Options) > 0 {
		f.Scores = make(map[string]float64, min(len(dec.Options), record.ScoresKept))
		for _, o := range dec.Options[:min(len(dec.Options), record.ScoresKept)] {
			if o.Excluded == decide.ExcludedLevel {
				continue // never scored: a 0 would read as a score
			}
			f.Scores[o.Domain] = o.Score
		}
	}
	return f
}

// finish runs what this engine has of Step 5 (skill gaps from this cycle)
// and Step 6: the decision log, memo consumption, CHANGELOG, metrics, cost,
// outcome and cycle log, with state.json written last so that a crash
// anywhere before it is detected by the next cycle's 0-C.
func (c *cycle) finish(f record.Facts, dec decide.Decision) (Result, error) {
	cfg, snap, st := c.cfg, c.snap, &c.snap.State
	// A cycle whose lock another process took (judged stale by its clock)
	// records nothing: that process runs this cycle's number again, and
	// two records of it, written side by side, would be one too many.
	if held, cur := c.lock.Held(); !held {
		c.res.Status = StatusError
		return *c.res, &LockLostError{Cycle: f.Cycle, Holder: cur}
	}
	if c.res.Status == "" {
		c.res.Status = StatusCompleted
	}
	// This cycle becomes last_cycle: the next may run an interval later.
	if c.res.NextActAt.IsZero() {
		c.res.NextActAt = c.nextCycleAt()
	}
	// 6-C: this cycle's memos are consumed first; 5-C then writes the next
	// cycle's.
	// Every cycle that reached Step 6 clears the one-shot adjustments,
	// whether or not it scored, so a run of implicit-guidance cycles cannot
	// pile them up. Interventions are counted down only when the scoring
	// applied them, by reflectStep (CountDownInterventions).
	perfstat.Mark("reflecting")
	memos := orient.ConsumeMemos(snap.Memos)
	for _, m := range c.memo {
		memos.History = appendMemo(memos.History, m)
	}
	// 2-B: domains that got the initial confidence keep it from now on,
	// and PR outcomes move it.
	// A rollback restored the checkpoint taken before this cycle's action;
	// what Orient learned before it (PR outcomes) still stands.
	conf := snap.Confidence
	for _, d := range c.ori.NewConfidence {
		if _, ok := conf.Get(d); !ok {
			conf.Set(d, c.ori.Confidence[d], c.now)
		}
	}
	for _, ch := range c.outc.Changes {
		conf.Set(ch.Domain, ch.After, c.now)
	}
	memos.History = appendMemos(memos.History, c.outc.Memos)

	// The decision log and the CHANGELOG are shared history: no path of
	// this machine's in them.
	f.Error = c.recorded(f.Error)
	// 5-G: the artifact of a cycle that changed it is graded before the
	// result is weighed (6-C9: quality = process × artifact).
	c.gradeArtifact(c.ctx, &f)
	resultType := record.ResultType(f)
	quality := record.QualityOf(resultType, f)
	if f.DimensionScores != nil || f.LeapTarget != "" || f.QualityArtifact != nil {
		// 6-C9 on a graded cycle: what the artifact did to the quality.
		art := scoreText(f.ArtifactScore)
		if f.ArtifactScore == nil && f.QualityArtifact != nil {
			art += " (last score " + scoreText(f.QualityArtifact) + ")"
		}
		c.printf("[Reflect] Outcome: %s · artifact %s → quality %.3f.", resultType, art, quality)
	}
	// 7-B, opt-in: a second opinion beside the record, never in it.
	c.goalVerdict(c.ctx, &f, resultType, quality)
	entry := record.DecisionEntry(f, resultType, quality)
	log := append(append([]state.DecisionEntry(nil), st.DecisionLog...), entry)

	// Step 5 and the memory half of Step 6.
	c.reflectStep(c.ctx, &f, dec, resultType, log, &conf, &memos)
	if kept, n := reflect.TrimGaps(snap.SkillGaps.Gaps); n > 0 {
		c.printf("[WARN] %s: gaps held %d entries, more than the %d kept; the %d oldest (resolved first) were dropped.", state.SkillGapsFile, len(snap.SkillGaps.Gaps), reflect.GapsKept, n)
		snap.SkillGaps.Gaps, c.gapsTrimmed = kept, true
	}
	for _, g := range c.gaps {
		snap.SkillGaps.Record(state.GapEvent{Name: g.name, Type: g.typ, Detail: g.detail, Domain: g.domain, Cycle: f.Cycle}, c.now)
	}
	c.writeProposals(c.ctx)

	f.Elapsed = time.Since(c.start)
	f.ChainStoppedAt, f.StopReason = c.chainStop(f)
	entry = record.DecisionEntry(f, resultType, quality)
	entry.PROutcomes = prOutcomesJSON(c.outc.Changes)
	// The same record in the original's shape, so that after a switch
	// back the original does not count these PRs a second time.
	entry.PRsProcessed = prsProcessedJSON(c.outc.Changes)
	if entry.PRsProcessed == nil {
		// The original writes an empty list, and its readers expect one.
		entry.PRsProcessed = json.RawMessage("[]")
	}
	c.res.Result, c.res.ResultType, c.res.Quality, c.res.PRNumber = f.Result, resultType, &quality, f.PRNumber
	if f.Executed {
		c.res.Domain = f.Domain
	}
	c.res.WinnerChain = f.Chain

	// 6-C5b: cost entry and the daily cap; 6-C8: the integrity gate. The
	// cap reads what the ledger shows spent (record.Spent), never only its
	// total, which a hand edit can have made negative.
	ledger := record.AddCost(c.obs.Ledger, f)
	ledger = c.ledgerIntegrity(ledger, f.Cycle)
	spent := record.Spent(ledger)
	f.CostToday = spent
	limit := cfg.Cost.DailyLimitUSD
	capHit := limit > 0 && spent >= limit
	if !capHit && limit > 0 && cfg.Cost.WarningThresholdPct > 0 && spent >= limit*cfg.Cost.WarningThresholdPct/100 {
		c.printf("[WARN] Cost: $%.2f of the $%.2f daily cap spent today (%.0f%%).", spent, limit, 100*spent/limit)
	}

	metrics := record.UpdateMetrics(snap.Metrics, f, resultType)
	metrics.Counters.ActionsAdded += c.actionsAdded
	// Resolved: actions whose PR was merged or rejected (2-B2), and blocked
	// ones closed by hygiene (6-C6).
	metrics.Counters.ActionsResolved += c.actionsResolved + len(c.outc.QueueMoves)
	metrics, fixes := c.reconcileMetrics(metrics, f.Cycle)
	for _, m := range fixes {
		c.printf("[WARN] metrics.json: %s.", m)
	}
	annotations := c.recordOutcomes(c.outc, &metrics)
	prior := snap.Outcomes
	if c.outc.Outcomes != nil {
		prior.Entries = c.outc.Outcomes
	}
	outcomes := record.AppendOutcome(prior, record.Outcome(f, resultType, quality), cfg.Memory.OutcomesBufferSize)
	line := record.CycleLogLine(f, resultType, quality)
	// The files of the record — the lens of 5-E, then the files below —
	// are made durable together (one batch: each file atomic, the fsyncs
	// shared, each directory synced once) and before state.json, which
	// alone says the cycle ended: a crash anywhere in the batch is a
	// crash before state.json, as it always was.
	perfstat.Mark("record built")
	batch := c.store.Batch()
	bs := batch.Store()
	c.rememberWeek(bs, &f, log, outcomes.Entries, conf, &memos)
	// memo_written and last_memo, once every memo of the cycle is written
	// (Reflect's adjustments and interventions, and the history memos of
	// every step: a requeued action, a contrarian check, a lens review).
	written := c.memoWritten || len(c.memo) > 0
	if m, ok := lastMemoOf(memos.History, f.Cycle); ok {
		written = true
		// The state design's last_memo is the newest memo's text.
		if b, err := json.Marshal(m.Message); err == nil {
			memos.LastMemo = b
		}
	}
	entry.MemoWritten = &written
	f.Contrarian = contrarianOf(memos, f.Cycle, log)

	// No float that overflowed (a score from an extreme weight, a total
	// near the float limit) may make a file unencodable: each becomes 0,
	// with a warning naming the file and the field.
	c.finite(state.SkillGapsFile, &snap.SkillGaps)
	c.finite(state.MemosFile, &memos)
	c.finite(state.ConfidenceFile, &conf)
	c.finite(state.CostLedgerFile, &ledger)
	c.finite(state.MetricsFile, &metrics)
	c.finite(state.OutcomesFile, &outcomes)
	c.finite(state.ActionQueueFile, &c.snap.ActionQueue)
	c.finite(state.GoalsFile, &c.snap.Goals)
	c.finite(state.CascadesFile, &c.snap.Cascades)
	c.finite(state.ReflectionsFile, &c.snap.Reflections)
	c.finite(state.EpisodesFile, &c.snap.Episodes)
	c.finite(state.PrinciplesFile, &c.snap.Principles)
	c.finite(state.CycleLogFile, &annotations)
	c.finite(state.CycleLogFile, &line)

	writes := []struct {
		name string
		fn   func() error
	}{
		{state.SkillGapsFile, func() error {
			if len(c.gaps) == 0 && !c.gapsTrimmed && bs.Exists(state.SkillGapsFile) {
				return nil
			}
			return bs.SaveSkillGaps(snap.SkillGaps)
		}},
		{state.MemosFile, func() error { return bs.SaveMemos(memos) }},
		{state.ConfidenceFile, func() error { return bs.SaveConfidence(conf) }},
		{state.CostLedgerFile, func() error { return bs.SaveCostLedger(ledger) }},
		{state.MetricsFile, func() error { return bs.SaveMetrics(metrics) }},
		{state.OutcomesFile, func() error { return bs.SaveOutcomes(outcomes) }},
		{state.ChangelogFile, func() error { return bs.PrependChangelog(record.Changelog(f, resultType)) }},
		{state.ActionQueueFile, func() error {
			if !c.queueChanged && !c.restoredQueue {
				return nil
			}
			return bs.SaveActionQueue(c.snap.ActionQueue)
		}},
		{state.GoalsFile, func() error {
			if !c.goalsChanged {
				return nil
			}
			return bs.SaveGoals(c.snap.Goals)
		}},
		{state.CascadesFile, func() error {
			if !c.cascadesChanged {
				return nil
			}
			return bs.SaveCascades(c.snap.Cascades)
		}},
		{state.ReflectionsFile, func() error {
			if !c.reflectionsChanged {
				return nil
			}
			return bs.SaveReflections(c.snap.Reflections)
		}},
		{"memory", func() error { return c.saveMemory(bs) }},
	}
	// A write that fails does not stop the others: the skill has run, and
	// every file that can still record it must. The cycle is then an error
	// (recordFailed), so the breaker counts it and the loop cannot repeat
	// an unrecorded cycle forever.
	var failed []error
	for _, w := range writes {
		if err := w.fn(); err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", w.name, err))
		}
	}
	perfstat.Mark("record encoded")
	// The run log is on disk before anything of the record is, and
	// before git looks at the project.
	c.awaitRunLog(c.runLog)
	// 6-D's git processes that only read run while the batch is synced.
	// A cycle interrupted while its skill ran is recorded, so it is
	// committed too: a few local git processes, not stopped by the
	// signal (commitState pushes nothing then).
	commitCtx := context.WithoutCancel(c.ctx)
	pending := c.prepareCommit(commitCtx)
	// So does the pruning of old run files: it removes only the files of
	// cycles RunsKept and more ago, which nothing below writes or reads,
	// and is waited for before the state commit, which may record it (and
	// whatever way finish ends).
	pruned := c.pruneRunsAsync(f.Cycle)
	defer pruned.wait()
	if err := batch.Commit(); err != nil {
		var be *state.BatchError
		if !errors.As(err, &be) {
			failed = append(failed, err)
		} else {
			for _, fe := range be.Files {
				if dir := filepath.Dir(fe.Path); dir != c.store.EvolveDir {
					// A lens not written is a warning, as in 5-E.
					c.printf("[WARN] lens of %s not written: %v", filepath.Base(dir), fe.Err)
					continue
				}
				failed = append(failed, fmt.Errorf("%s: %w", filepath.Base(fe.Path), fe.Err))
			}
		}
	}
	perfstat.Mark("record synced")
	if len(failed) > 0 {
		resultType, quality = c.recordFailed(&f, &entry, failed)
		line = record.CycleLogLine(f, resultType, quality)
		c.finite(state.CycleLogFile, &line)
	}
	// Annotations of earlier cycles go to their own log, so that
	// cycle_log.jsonl stays one line per cycle for readers that count
	// lines (SPEC-NOTES 6-C9); then this cycle's line.
	logErr := func() error {
		for _, a := range annotations {
			if err := c.store.AppendCycleLogAnnotation(a); err != nil {
				return fmt.Errorf("%s: %w", state.CycleLogAnnotationsFile, err)
			}
		}
		if err := c.store.AppendCycleLog(line); err != nil {
			return fmt.Errorf("%s: %w", state.CycleLogFile, err)
		}
		return nil
	}()
	if logErr != nil {
		failed = append(failed, logErr)
		if len(failed) == 1 {
			resultType, quality = c.recordFailed(&f, &entry, failed)
		}
	}
	if capHit {
		reason := fmt.Sprintf("Daily cost cap reached: $%.2f spent today (UTC %s), cap $%.2f. Delete this file to resume (or raise cost.daily_limit_usd).", spent, ledger.Date, limit)
		// One HALT file says every reason: the artifact's are added to it.
		c.art.halts = append([]string{reason}, c.art.halts...)
	}
	if err := c.writeHalts(); err != nil {
		failed = append(failed, fmt.Errorf("HALT: %w", err))
	}
	perfstat.Mark("cycle log appended")
	// 6-A: state.json last.
	st.CycleCount = f.Cycle
	ts := state.FormatTime(c.now)
	st.LastCycle = &ts
	st.CycleInProgress = false
	st.CycleStartedAt = ""
	// The gaps are known only now (a write that failed is one).
	f.GapsDetected = c.gapIDs()
	f.PRsCreated = c.createdPRs
	f.ProposalsWritten = c.proposalsWritten
	record.OriginalFields(&entry, f)
	st.DecisionLog = record.AppendDecision(st.DecisionLog, entry, cfg.Memory.WorkingMemorySize)
	c.finite(state.StateFile, st)
	if err := c.store.SaveState(*st); err != nil {
		// Nothing can say the cycle ended: the next cycle's 0-C finds
		// cycle_in_progress still set and reports it as a crash.
		c.res.Status = StatusError
		pruned.wait()
		pending.wait()
		return *c.res, fmt.Errorf("step 6: %s: %w", state.StateFile, err)
	}
	perfstat.Mark("state.json written")
	if len(failed) == 0 && len(st.DecisionLog) > 0 {
		c.res.Recorded = &Recorded{Entry: &st.DecisionLog[len(st.DecisionLog)-1], Confidence: &conf, Memos: &memos, CostLedger: &ledger}
	}
	c.printf("[Record] Cycle #%d recorded: %s (%s, quality %.3f).", f.Cycle, orDash(f.Domain), resultType, quality)
	if err := pruned.wait(); err != nil {
		c.printf("[WARN] old run files not pruned: %v", err)
	}
	c.commitState(commitCtx, f, resultType, pending)
	perfstat.Mark("state committed")
	c.notifyCycle(c.ctx, f, resultType)
	if len(c.gaps) > 0 {
		names := make([]string, 0, len(c.gaps))
		for _, g := range c.gaps {
			names = append(names, g.name)
		}
		c.printf("[Reflect] Gaps: %d. %s", len(c.gaps), strings.Join(names, ", "))
	}
	if len(failed) > 0 {
		c.res.Status = StatusError
		return *c.res, fmt.Errorf("step 6: %w", errors.Join(failed...))
	}
	return *c.res, nil
}

// finite makes every float of v finite before it is written (see
// record.Finite), warning once per value replaced.
func (c *cycle) finite(file string, v any) {
	for _, w := range record.Finite(v, file) {
		c.printf("[WARN] %s, not a number a state file can hold; written as 0.", w)
	}
}

// recordFailed turns a cycle whose record could not be written whole into
// an error: the entry and the cycle log say so with the reason, a skill gap
// is kept, and the silent-failure breaker counts it like a failed skill (a
// success earlier in the cycle does not reset the count). It returns the
// new result type and quality.
func (c *cycle) recordFailed(f *record.Facts, entry *state.DecisionEntry, failed []error) (string, float64) {
	reason := "step 6: " + errors.Join(failed...).Error()
	reason = strings.ReplaceAll(reason, "\n", "; ")
	c.printf("[WARN] %s. The cycle is recorded as an error.", reason)
	reason = c.recorded(reason)
	f.Result, f.Error = "error", reason
	resultType, quality := record.TypeError, record.Quality(record.TypeError, nil)
	entry.Result, entry.ResultType, entry.Error = "error", resultType, reason
	entry.QualityMult = &quality
	c.res.Result, c.res.ResultType, c.res.Quality = "error", resultType, &quality
	c.addGap("record_write_failed", "state_write_error", reason)
	c.snap.SkillGaps.Record(state.GapEvent{Name: "record_write_failed", Type: "state_write_error", Detail: reason, Cycle: f.Cycle}, c.now)
	c.finite(state.SkillGapsFile, &c.snap.SkillGaps)
	if err := c.store.SaveSkillGaps(c.snap.SkillGaps); err != nil {
		c.printf("[WARN] %s not written either: %v", state.SkillGapsFile, err)
	}
	if !c.failureCounted {
		st := &c.snap.State
		st.ConsecutiveSilentFailures = max(st.ConsecutiveSilentFailures, c.failuresAtStart)
		c.countFailure(fmt.Sprintf("cycles failed; the last one could not write its record (%s)", reason))
	}
	return resultType, quality
}

// reconcileMetrics is record.ReconcileMetrics with one exception: a
// total_cycles above this cycle's number is lowered only when this cycle
// recovers from a crash (the killed run may have counted itself, and its
// number is reused). Otherwise the higher count is the one to trust:
// state.json was set aside or reset and its cycle_count recovered low,
// and lowering would throw away cycles that did happen. That case is kept
// as it is, with a warning.
func (c *cycle) reconcileMetrics(m state.Metrics, cycle int) (state.Metrics, []string) {
	if total := m.Counters.TotalCycles; total > cycle && !c.crashRecovered {
		m, fixes := record.ReconcileMetrics(m, total)
		note := fmt.Sprintf("counters.total_cycles is %d after cycle #%d; kept, since state.json's cycle_count (and so the cycle number) may have been reset or recovered low", total, cycle)
		return m, append([]string{note}, fixes...)
	}
	fixed, notes := record.ReconcileMetrics(m, cycle)
	if m.New() {
		// No metrics.json yet (a project that switched without one):
		// its counters start at the history's count, which is no defect.
		return fixed, nil
	}
	return fixed, notes
}

// lastMemoOf is the newest history memo cycle wrote.
func lastMemoOf(h []state.Memo, cycle int) (state.Memo, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Cycle == cycle {
			return h[i], true
		}
	}
	return state.Memo{}, false
}

// chainStop is where and why this cycle's chain stopped (4-B), for the
// decision log's chain_stopped_at and stop_reason; "", "" when it ran
// through, or never started (a skip, a blocked skill, an observe-only
// cycle). A HALT or a signal stops the skill running; a failed primary
// skill stops the chain before it starts; otherwise the first chain step
// that did not run (a gate refused it, the HALT file appeared before it,
// the depth cap) is where it stopped.
func (c *cycle) chainStop(f record.Facts) (at, reason string) {
	if f.Action != "execute" {
		return "", ""
	}
	running := f.Skill
	if n := len(f.Chain); n > 0 {
		running = f.Chain[n-1]
	}
	switch {
	case c.res.Reason == ReasonHaltDuringExecute:
		return running, record.StopHalt
	case c.res.Reason == ReasonInterrupted:
		return running, ReasonInterrupted
	case f.Result == "error" && c.chainStopped.reason == "":
		return f.Skill, record.StopError
	}
	return c.chainStopped.at, c.chainStopped.reason
}

// gapIDs are the ids of the gaps this cycle detected, as skill_gaps.json
// names them (a gap of the original's shape by its id), in the order
// detected.
func (c *cycle) gapIDs() []string {
	out := make([]string, 0, len(c.gaps))
	for _, g := range c.gaps {
		id := g.name
		for _, sg := range c.snap.SkillGaps.Gaps {
			if sg.Key() == g.name && sg.ID != "" {
				id = sg.ID
				break
			}
		}
		out = append(out, id)
	}
	return out
}

// contrarianOf is the contrarian check cycle made (6-C4): the contrarian
// intervention created at that cycle, nil when none was. log is the
// decision log the check read, for how many of the recent decisions the
// dominant domain won.
func contrarianOf(m state.Memos, cycle int, log []state.DecisionEntry) *state.ContrarianRecord {
	for i := len(m.Interventions) - 1; i >= 0; i-- {
		iv := m.Interventions[i]
		if iv.Type != "contrarian" || iv.CreatedAtCycle != cycle {
			continue
		}
		// The check applies its adjustment whenever it makes one: the
		// original's "plausible".
		r := &state.ContrarianRecord{Argument: iv.Reason, AffectedDomain: iv.Domain, ScoreAdjustment: iv.Delta,
			CounterDomain: iv.Domain, Validity: "plausible"}
		if raw, ok := iv.Extra["dominant_domain"]; ok {
			var d string
			if json.Unmarshal(raw, &d) == nil {
				r.DominantDomain = d
			}
		}
		if r.DominantDomain != "" {
			// How often the dominant domain won in the check's window.
			for e, inWindow := range reflect.ContrarianDecisions(log, cycle) {
				if inWindow && e.SelectedDomain == r.DominantDomain {
					r.DominantFrequency++
				}
			}
		}
		return r
	}
	return nil
}

// pruneRunsAsync prunes the run files of cycles long past
// (Store.PruneRuns) on a goroutine of its own.
func (c *cycle) pruneRunsAsync(cycle int) *background {
	return inBackground(func() error {
		_, err := c.store.PruneRuns(cycle)
		return err
	})
}
