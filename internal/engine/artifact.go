package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/artifact"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// The artifact axis in a cycle (docs/artifact.md): 2-G plateau detection
// and the 3-K gate before Decide, the leap's baseline critique before the
// skill, the 4-C2 verification after it, and the 5-G critique of every
// cycle that changed the artifact of a domain with a rubric.

// rubricHashesKey is the checkpoint key that keeps each domain's rubric
// hash as recorded on first use ({domain: sha256 hex}). checkpoints.json
// keeps only five checkpoints, so every new one carries the map forward;
// the typed rubric_hash holds the hash of the rubric graded last, for
// readers of the original shape.
const rubricHashesKey = "rubric_hashes"

// leapPlan is the leap or rewrite 3-K let through for one domain.
type leapPlan struct {
	domain   string
	rubric   *artifact.Rubric
	decision artifact.Decision
	mode     string
	target   string
	// baseline is the critique of the artifact before the skill ran
	// (checkpoint leap_baseline_scores); nil until taken.
	baseline map[string]*float64
	// attempt is the leap_attempts[] number this leap records.
	attempt int
}

// artifactState is what the cycle keeps of the artifact axis.
type artifactState struct {
	rubrics map[string]*artifact.Rubric
	// leap is the leap this cycle runs, nil for a feature cycle.
	leap *leapPlan
	// post is the critique already taken after the skill (a leap's
	// verification), which 5-G then records instead of capturing again.
	post *artifact.Critique
	// halts are HALT reasons found on the way, written at Step 6 so that
	// the cycle itself still records what it did.
	halts []string
	// dirtyBefore are the working-tree paths git showed changed before a
	// leap's skill ran (see changedPaths), which a revert must leave alone.
	dirtyBefore map[string]bool
	// entries caches artifactEntries.
	entries []artifact.Entry
	// goalsCapped: capGoals changed a goal.
	goalsCapped bool
	// mutated are the domains whose rubric changed since its first use,
	// found this cycle.
	mutated map[string]bool
}

// leapPolicy is config leap as the artifact package takes it.
func leapPolicy(l config.Leap) artifact.LeapPolicy {
	return artifact.LeapPolicy{RewriteOnStall: l.RewriteOnStall, MaxLines: l.MaxLines, MinDimensionDelta: l.MinDimensionDelta,
		MaxAttemptsPerDimension: l.MaxAttemptsPerDimension, MaxPerDay: l.MaxPerDay, GapWeight: l.GapWeight,
		CostLimitUSD: l.CostLimitUSD, LockUntilBar: l.LockUntilBar}
}

// rubricFor is the rubric that grades domain (its own, else the top-level
// one), nil when none applies. A rubric that does not parse grades
// nothing: it is said once per cycle, with a gap naming every problem.
func (c *cycle) rubricFor(domain string) *artifact.Rubric {
	if r, ok := c.art.rubrics[domain]; ok {
		return r
	}
	if c.art.rubrics == nil {
		c.art.rubrics = map[string]*artifact.Rubric{}
	}
	var own json.RawMessage
	if dc, ok := c.cfg.Domains.Get(domain); ok {
		own = dc.QualityRubric
	}
	raw, path := artifact.Select(domain, own, c.cfg.QualityRubric)
	var r *artifact.Rubric
	if raw != nil {
		var err error
		r, err = artifact.Parse(raw, path)
		if err != nil {
			msg := strings.ReplaceAll(err.Error(), "\n", "; ")
			c.printf("[WARN] config.json %s is not a usable rubric, so %s is not graded: %s", path, domain, msg)
			c.addDomainGap(domain, "rubric_invalid_"+gapKey(domain), "config_error", "config.json "+path+": "+msg)
			r = nil
		}
	}
	c.art.rubrics[domain] = r
	return r
}

// artifactEntries are the outcome records as plateau detection reads
// them, oldest first, with this cycle's back-annotations applied.
func (c *cycle) artifactEntries() []artifact.Entry {
	if c.art.entries != nil {
		return c.art.entries
	}
	entries := c.snap.Outcomes.Entries
	if c.outc.Outcomes != nil {
		entries = c.outc.Outcomes
	}
	out := make([]artifact.Entry, 0, len(entries))
	warned := 0
	for i, o := range entries {
		b, err := json.Marshal(o)
		if err != nil {
			continue
		}
		e, warns, err := artifact.EntryFromJSON(b, fmt.Sprintf("%s entries[%d]", state.OutcomesFile, i))
		if err != nil {
			continue
		}
		for _, w := range warns {
			if warned < 5 {
				c.printf("[WARN] %s", w)
			}
			warned++
		}
		out = append(out, e)
	}
	c.art.entries = out
	return out
}

// capGoals is 2-C's evidence gate: the progress of a goal whose domain has
// a rubric (and, with a "dimension" key, of that dimension) is capped by
// the artifact's rolling score over bar, and reaches 1 only once the score
// held at or above bar for plateau_window graded cycles; a goal that the
// gate keeps below 1 is not completed. The evidence is kept on the goal
// (evidence: {rolling_artifact_mean, consecutive_above_bar}). It returns
// the goals it capped.
func (c *cycle) capGoals(gs *state.Goals) map[string]bool {
	capped := map[string]bool{}
	was := map[string]string{}
	for _, g := range c.goalsBefore {
		was[g.ID] = g.StatusBefore
	}
	for i := range gs.Goals {
		g := &gs.Goals[i]
		justDone := g.Status == "completed" && was[g.ID] == "active"
		if (g.Status != "active" && !justDone) || g.Domain == "" {
			continue
		}
		r := c.rubricFor(g.Domain)
		if !r.Active() {
			continue
		}
		dim := extraText(g.Extra, "dimension")
		if dim != "" {
			if _, ok := r.Dimension(dim); !ok {
				c.printf("[WARN] goals.json: goal %s names dimension %q, which the rubric of %s does not have; its evidence is the whole artifact.", g.ID, dim, g.Domain)
				dim = ""
			}
		}
		before := g.ProgressValue()
		p, ev := artifact.CapGoal(before, c.artifactEntries(), g.Domain, dim, r)
		evb, _ := json.Marshal(ev)
		ex := make(state.Extra, len(g.Extra)+1)
		for k, v := range g.Extra {
			ex[k] = v
		}
		changedEv := !bytes.Equal(compactJSON(g.Extra["evidence"]), evb)
		ex["evidence"] = evb
		if p < before {
			v := p
			g.Progress = &v
			capped[g.ID] = true
			if justDone {
				g.Status = "active"
			}
			c.printf("[Orient] Goal %s: progress %.2f capped at %.2f by the artifact's evidence (rolling score %s, %d graded cycle(s) in a row at or above bar %.2f).",
				g.ID, before, p, scoreText(ev.RollingArtifactMean), ev.ConsecutiveAboveBar, r.Bar)
		}
		if changedEv || p < before {
			g.Extra = ex
			c.art.goalsCapped = true
		}
	}
	return capped
}

// compactJSON is raw without insignificant space, for comparing.
func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// extraText is the string under key of an unknown-key map, "" when absent
// or not a string.
func extraText(ex state.Extra, key string) string {
	var s string
	if raw, ok := ex[key]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// goalOfNote is the goal id a "[Orient] Goal ID completed" note names.
func goalOfNote(n string) string {
	rest, ok := strings.CutPrefix(n, "[Orient] Goal ")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, " completed")
	return id
}

// planArtifact is 2-G and the 3-K gate, before Decide: for every observed
// domain with a rubric, plateau detection over its outcomes; a plateau
// the gate lets through becomes this cycle's leap (one per cycle: the
// largest gap-to-bar bonus), pulled up through the memo adjustment so that
// the ordinary scorer picks its domain.
func (c *cycle) planArtifact(domains []string, ori *orient.Orientation) {
	lp := leapPolicy(c.cfg.Leap)
	var entries []artifact.Entry
	var best *leapPlan
	bestBonus := -1.0
	c.checkRecordedRubrics()
	top := artifact.Given(c.cfg.QualityRubric)
	var graded map[string]bool
	if !top {
		// Most projects grade nothing: no per-domain work for them (and
		// no lookup of each domain by name, which is a scan).
		for i := range c.cfg.Domains {
			if d := &c.cfg.Domains[i]; artifact.Given(d.QualityRubric) {
				if graded == nil {
					graded = map[string]bool{}
				}
				graded[d.Name] = true
			}
		}
		if graded == nil {
			return
		}
	}
	for _, name := range domains {
		if !top && !graded[name] {
			continue
		}
		r := c.rubricFor(name)
		if !r.Active() {
			continue
		}
		if !c.rubricIntact(name, r) {
			continue // a rubric changed since its first use plans nothing
		}
		if c.recordedRubricHash(name) == "" {
			// Nothing graded under this rubric yet (a new one, one a
			// human accepted, or the original's): no history to plan from.
			continue
		}
		if entries == nil {
			entries = c.artifactEntries()
		}
		d := artifact.Plan(sinceCycle(entries, c.rubricSince(name)), name, r, lp)
		for _, g := range d.Gaps {
			c.addDomainGap(name, g.Name, g.Type, g.Detail)
		}
		c.resolveGaps(d.ResolvedGaps)
		switch {
		case d.Mode == artifact.ModeHalt:
			c.printf("[Orient] Leap and rewrite on '%s' (%s) stalled: HALT at the end of this cycle. %s.", d.LeapTarget, name, d.Reason)
			c.art.halts = append(c.art.halts, d.Halt)
			continue
		case !d.Active():
			if d.Plateau {
				c.printf("[Orient] Plateau on %s (%s), but %s.", name, scoreText(d.ArtifactScore), d.Reason)
			}
			continue
		}
		if d.Memo != nil {
			m := state.Memo{Timestamp: state.FormatTime(c.now), Cycle: c.res.Cycle, Domain: name, Type: d.Memo.Type,
				Message: d.Memo.Instruction, Extra: state.Extra{}}
			for k, v := range map[string]string{"dimension": d.Memo.Dimension, "stalled_approach": d.Memo.StalledApproach, "instruction": d.Memo.Instruction} {
				if b, err := json.Marshal(v); err == nil {
					m.Extra[k] = b
				}
			}
			c.memo = append(c.memo, m)
		}
		spent := 0.0
		if c.obs != nil {
			spent = record.Spent(c.obs.Ledger)
		}
		mode, deferred := artifact.Gate(d, lp, artifact.Budget{DryRun: c.opts.DryRun, SpentTodayUSD: spent,
			DailyLimitUSD: c.cfg.Cost.DailyLimitUSD, LeapsToday: c.leapsToday()})
		if deferred != "" {
			c.printf("[Decide] Plateau on %s ('%s'), but %s.", name, d.LeapTarget, deferred)
			continue
		}
		switch {
		case d.Mode == artifact.ModeRewrite:
			c.printf("[Orient] STALL→REWRITE: leaps on '%s' (%s) stalled %d×. This cycle rewrites it from a cited technique, not another patch.", d.LeapTarget, name, d.FailedLeaps)
		case d.Locked:
			c.printf("[Orient] Leap kept '%s' (%s) below bar: target locked, leap again. %s.", d.LeapTarget, name, d.Reason)
		default:
			c.printf("[Orient] PLATEAU on %s (%s): %s. Leap target '%s'.", name, scoreText(d.ArtifactScore), d.Reason, d.LeapTarget)
		}
		a := 0.0
		if d.ArtifactScore != nil {
			a = *d.ArtifactScore
		}
		bonus := artifact.GapBonus(lp, r.Bar, a)
		if bonus > bestBonus {
			best, bestBonus = &leapPlan{domain: name, rubric: r, decision: d, mode: mode, target: d.LeapTarget, attempt: d.FailedLeaps + 1}, bonus
		}
	}
	if best == nil {
		return
	}
	if ori.Memo == nil {
		ori.Memo = map[string]float64{}
	}
	ori.Memo[best.domain] += bestBonus
	c.art.leap = best
}

// sinceCycle are the entries of cycle since and later.
func sinceCycle(entries []artifact.Entry, since int) []artifact.Entry {
	if since <= 0 {
		return entries
	}
	out := make([]artifact.Entry, 0, len(entries))
	for _, e := range entries {
		if e.CycleID >= since {
			out = append(out, e)
		}
	}
	return out
}

// leapsToday counts the leap and rewrite cycles of the current UTC day.
func (c *cycle) leapsToday() int {
	day := c.now.UTC().Format("2006-01-02")
	n := 0
	for _, o := range c.snap.Outcomes.Entries {
		if (o.CycleMode == artifact.ModeLeap || o.CycleMode == artifact.ModeRewrite) && strings.HasPrefix(o.Timestamp, day) {
			n++
		}
	}
	return n
}

// resolveGaps marks the named gaps resolved (an asset ceiling lifted by
// asset_sources).
func (c *cycle) resolveGaps(names []string) {
	for _, name := range names {
		for i := range c.snap.SkillGaps.Gaps {
			g := &c.snap.SkillGaps.Gaps[i]
			if g.Key() == name && !g.Resolved {
				g.Resolved = true
				ts := state.FormatTime(c.now)
				g.ResolvedAt = &ts
				c.gapsTrimmed = true // written even without a new gap
			}
		}
	}
}

// takeLeap settles the leap after Decide: it runs only when its domain
// won; the cycle's mode (and the 3-K step Decide noted) is then the
// leap's.
func (c *cycle) takeLeap(dec *decide.Decision) {
	l := c.art.leap
	if l == nil {
		return
	}
	winner := winnerName(*dec)
	if winner != l.domain {
		if winner != "" {
			c.printf("[Decide] The leap on %s ('%s') waits: %s won this cycle.", l.domain, l.target, winner)
		}
		c.art.leap = nil
		return
	}
	dec.CycleMode = l.mode
	for i, n := range dec.Notes {
		if strings.HasPrefix(n, "3-K: cycle mode ") {
			dec.Notes[i] = fmt.Sprintf("3-K: cycle mode %s on %s of %s (%s)", l.mode, l.target, l.domain, l.decision.Reason)
		}
	}
	c.printf("[Decide] LEAP MODE (%s): overhaul '%s' of %s (artifact %s, bar %.3g). RICE bypassed for this cycle.", l.mode, l.target, l.domain, scoreText(l.decision.ArtifactScore), l.rubric.Bar)
}

// scoreText prints a score, or "null".
func scoreText(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%.3f", *p)
}

// rubricIntact is checkRubric without recording: false (with the HALT
// queued, once) when domain's rubric no longer matches the hash recorded
// on its first use, so that a changed rubric never plans a leap.
func (c *cycle) rubricIntact(domain string, r *artifact.Rubric) bool {
	recorded := c.recordedRubricHash(domain)
	if recorded == "" {
		return true
	}
	in, err := artifact.CheckIntegrity(r.Path, r.Raw, recorded)
	if err == nil && in.Halt == "" {
		return true
	}
	c.checkRubric(c.ctx, domain, r) // says it and queues the HALT
	return false
}

// checkRubric is the 5-G integrity check before grading with r: the hash
// recorded on the rubric's first use must still match. It records the hash
// when none was, and returns false (with a HALT queued) when the rubric
// changed since.
func (c *cycle) checkRubric(ctx context.Context, domain string, r *artifact.Rubric) bool {
	if c.art.mutated[domain] {
		return false // said once this cycle
	}
	recorded := c.recordedRubricHash(domain)
	in, err := artifact.CheckIntegrity(r.Path, r.Raw, recorded)
	if err != nil {
		c.art.halts = append(c.art.halts, fmt.Sprintf("config.json %s cannot be hashed (%v): the loop may not grade against a standard whose identity is unknown", r.Path, err))
		return false
	}
	if in.Halt != "" {
		if c.art.mutated == nil {
			c.art.mutated = map[string]bool{}
		}
		c.art.mutated[domain] = true
		c.printf("[5-G] %s HALT at the end of this cycle.", in.Halt)
		c.addDomainGap(domain, "rubric_mutated_"+gapKey(domain), "safety_violation", in.Halt)
		c.art.halts = append(c.art.halts, in.Halt)
		return false
	}
	if in.Record {
		c.recordRubricHash(ctx, domain, in.Hash)
	}
	return true
}

// rubricSinceKey is the checkpoint key that keeps the cycle each
// domain's rubric was first used in ({domain: cycle}): plateau detection
// reads only the outcomes graded under the rubric in force.
const rubricSinceKey = "rubric_since"

// rubricRecord is the record of first uses: the rubric_hashes (and
// rubric_since) of the newest checkpoint that holds the map. Every new
// checkpoint carries the map forward, so the newest is the record; a
// human accepts a changed rubric by deleting its domain from that map.
// A value that is not a map is no record (the file is not trusted: an
// unreadable record re-records rather than halting on garbage).
func (c *cycle) rubricRecord() (map[string]string, map[string]int) {
	cps := c.snap.Checkpoints.Checkpoints
	for i := len(cps) - 1; i >= 0; i-- {
		raw, ok := cps[i].Extra[rubricHashesKey]
		if !ok {
			continue
		}
		var hashes map[string]string
		if json.Unmarshal(raw, &hashes) != nil {
			return nil, nil
		}
		var since map[string]int
		if b, ok := cps[i].Extra[rubricSinceKey]; ok && json.Unmarshal(b, &since) != nil {
			since = nil
		}
		return hashes, since
	}
	return nil, nil
}

// recordedRubricHash is the hash recorded for domain's rubric on its first
// use; "" when none was. Only ooda's own per-domain record counts: a
// rubric_hash the original wrote hashes bytes in a form that is not known,
// so comparing it would stop every switched project.
func (c *cycle) recordedRubricHash(domain string) string {
	h, _ := c.rubricRecord()
	return h[domain]
}

// rubricSince is the cycle domain's rubric was first used in (0 when not
// known: every outcome counts).
func (c *cycle) rubricSince(domain string) int {
	_, since := c.rubricRecord()
	return since[domain]
}

// recordRubricHash records domain's rubric hash, and this cycle as its
// first use, in the newest checkpoint (taking one when there is none),
// and writes checkpoints.json.
func (c *cycle) recordRubricHash(ctx context.Context, domain, hash string) {
	hashes, since := c.rubricRecord()
	if len(c.snap.Checkpoints.Checkpoints) == 0 {
		c.checkpoint(ctx, "rubric first used")
		if len(c.snap.Checkpoints.Checkpoints) == 0 {
			return
		}
	}
	cp := &c.snap.Checkpoints.Checkpoints[len(c.snap.Checkpoints.Checkpoints)-1]
	if hashes == nil {
		hashes = map[string]string{}
	}
	if since == nil {
		since = map[string]int{}
	}
	hashes[domain], since[domain] = hash, c.res.Cycle
	setRubricRecord(cp, hashes, since)
	h := hash
	cp.RubricHash = &h
	if err := c.store.SaveCheckpoints(c.snap.Checkpoints); err != nil {
		c.printf("[WARN] rubric hash not recorded: %v", err)
		return
	}
	c.printf("[5-G] Rubric of %s first used: sha256 %s recorded in %s.", domain, hash[:16], state.CheckpointsFile)
	// What the earlier rubric left open is settled by the new one: its
	// change, and the dimensions it could not move.
	names := []string{"rubric_mutated_" + gapKey(domain)}
	if r := c.rubricFor(domain); r != nil {
		for _, d := range r.Dimensions {
			names = append(names, "leap_stuck_"+d.Name)
		}
	}
	c.resolveGaps(names)
}

// setRubricRecord writes the record of first uses into a checkpoint.
func setRubricRecord(cp *state.Checkpoint, hashes map[string]string, since map[string]int) {
	if cp.Extra == nil {
		cp.Extra = state.Extra{}
	}
	if b, err := json.Marshal(hashes); err == nil {
		cp.Extra[rubricHashesKey] = b
	}
	if b, err := json.Marshal(since); err == nil && since != nil {
		cp.Extra[rubricSinceKey] = b
	}
}

// carryRubricHashes copies the record of first uses into a new
// checkpoint, so that the five kept never lose it.
func (c *cycle) carryRubricHashes(cp *state.Checkpoint) {
	hashes, since := c.rubricRecord()
	if hashes == nil {
		return
	}
	setRubricRecord(cp, hashes, since)
	if n := len(c.snap.Checkpoints.Checkpoints); n > 0 && c.snap.Checkpoints.Checkpoints[n-1].RubricHash != nil {
		h := *c.snap.Checkpoints.Checkpoints[n-1].RubricHash
		cp.RubricHash = &h
	}
}

// checkRecordedRubrics stops the loop when a rubric recorded on its first
// use was since removed, emptied or made unusable while its domain is
// still configured: grading that simply stops is the easiest way to
// escape it.
func (c *cycle) checkRecordedRubrics() {
	hashes, _ := c.rubricRecord()
	for _, domain := range slices.Sorted(maps.Keys(hashes)) {
		if _, ok := c.cfg.Domains.Get(domain); !ok || c.art.mutated[domain] {
			continue
		}
		if r := c.rubricFor(domain); r.Active() {
			continue
		}
		if c.art.mutated == nil {
			c.art.mutated = map[string]bool{}
		}
		c.art.mutated[domain] = true
		msg := fmt.Sprintf("the quality_rubric of domain %s was removed, emptied or made unusable since its first use (recorded in agent/state/evolve/checkpoints.json rubric_hashes): the loop may not stop being graded. Restore the rubric, or accept the change by deleting %s from rubric_hashes in the newest checkpoint.", domain, domain)
		c.printf("[5-G] %s HALT at the end of this cycle.", msg)
		c.addDomainGap(domain, "rubric_mutated_"+gapKey(domain), "safety_violation", msg)
		c.art.halts = append(c.art.halts, msg)
	}
}

// critique runs 5-G for domain's rubric: integrity, capture, the judge
// for what has no targets. ok is false when the rubric may not be used.
func (c *cycle) critique(ctx context.Context, domain string, r *artifact.Rubric, when string) (artifact.Critique, bool) {
	// Its captures run the project's own commands: the run log is on
	// disk before they start (saveRunLogAsync).
	c.awaitRunLog(c.runLog)
	if !c.checkRubric(ctx, domain, r) {
		return artifact.Critique{}, false
	}
	j := c.judgeFor()
	env := artifact.Env{Root: c.store.Root, MaxReadBytes: c.cfg.Safety.MaxReadBytes(), HaveJudge: j != nil && j.Enabled(),
		Protected: func(file string) bool { _, ok := Protected(file, c.cfg.Safety.ProtectedPaths); return ok }}
	cr := artifact.Run(ctx, r, env, &captureRunner{c: c})
	if cr.NeedsJudge() {
		var facts map[string]any
		_ = json.Unmarshal(artifact.JudgeRequest(cr, c.cfg.Mission), &facts)
		resp := j.Ask(ctx, judge.Request{Kind: judge.KindArtifactCritic, Facts: facts, Default: map[string]any{"dimension_scores": map[string]any{}},
			Prompt: "Score each dimension of the artifact from 0 to 1 against its rubric entry, using only the evidence given. Answer {\"dimension_scores\": {name: score or null}, \"critique\": one line}."})
		var answer []byte
		if resp.Source == judge.SourceJudge {
			answer = resp.Answer
		} else if resp.Error != "" {
			c.printf("[WARN] judge (artifact critic): %s.", resp.Error)
		}
		cr = artifact.ApplyJudge(cr, answer)
	}
	for _, g := range cr.Gaps {
		c.addDomainGap(domain, g.Name, g.Type, g.Detail)
	}
	s := cr.Summary()
	c.printf("[5-G] %s of %s: artifact %s, weakest '%s'%s.", when, domain, scoreText(s.ArtifactScore), orDash(s.WeakestDimension), missingText(s.Missing))
	return cr, true
}

func missingText(m []string) string {
	if len(m) == 0 {
		return ""
	}
	return " (not captured: " + strings.Join(m, ", ") + ")"
}

// captureRunner runs capture commands as the project's own commands run
// (test_command): from the project root, with the environment policy of
// every child (no credentials), test_timeout_seconds, and stdout kept up
// to safety.max_read_mib. One critique runs a command once: dimensions
// that share a capture command (a load test printing latency and error
// rate) read the same run.
type captureRunner struct {
	c    *cycle
	done map[string]captureResult
}

type captureResult struct {
	out []byte
	err error
}

// Run implements artifact.Capture.
func (cr *captureRunner) Run(ctx context.Context, req artifact.CaptureRequest) ([]byte, error) {
	argv := req.Command.Words()
	if req.Command.Shell != "" && len(req.Command.Argv) == 0 {
		// A capture_command string is the user's own shell command in
		// config.json, like test_command.
		argv = []string{"/bin/sh", "-c", req.Command.Shell}
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("no capture command")
	}
	key := req.Harness + "\x00" + strings.Join(argv, "\x00")
	if r, ok := cr.done[key]; ok {
		return r.out, r.err
	}
	out, err := cr.run(ctx, req, argv)
	if cr.done == nil {
		cr.done = map[string]captureResult{}
	}
	cr.done[key] = captureResult{out, err}
	return out, err
}

func (cr *captureRunner) run(ctx context.Context, req artifact.CaptureRequest, argv []string) ([]byte, error) {
	c := cr.c
	limit := c.cfg.Safety.MaxReadBytes()
	out := &gitrepo.CappedBuffer{Max: limit}
	timeout := durationOf(c.cfg.TestTimeoutSeconds, time.Second)
	res := c.opts.Runner.Run(ctx, proc.Spec{Argv: argv, Dir: c.store.Root, Env: envList(), Timeout: timeout,
		Output: out, Stderr: io.Discard, HaltFile: c.repoHalt()})
	switch {
	case res.StartErr != nil:
		return nil, fmt.Errorf("%s could not start: %w", req.Command.String(), res.StartErr)
	case res.TimedOut:
		return nil, fmt.Errorf("%s timed out after %s (test_timeout_seconds)", req.Command.String(), timeout)
	case res.Halted:
		return nil, fmt.Errorf("%s stopped by the HALT file", req.Command.String())
	case res.Canceled:
		return nil, fmt.Errorf("%s stopped: the cycle was interrupted", req.Command.String())
	case out.Exceeded():
		return nil, fmt.Errorf("%s printed more than safety.max_read_mib", req.Command.String())
	case res.ExitCode != 0:
		return nil, fmt.Errorf("%s exited %d", req.Command.String(), res.ExitCode)
	}
	return secret.RedactBytes(out.Bytes()), nil
}

// leapBaseline is the critique before a leap's skill runs (4-C2): the
// baseline kept in the checkpoint. A leap whose baseline cannot be taken
// (the rubric changed) runs as a feature cycle.
func (c *cycle) leapBaseline(ctx context.Context) {
	l := c.art.leap
	if l == nil {
		return
	}
	cr, ok := c.critique(ctx, l.domain, l.rubric, "Baseline before the "+l.mode)
	if !ok {
		c.art.leap = nil
		return
	}
	l.baseline = cr.Scores()
	c.art.dirtyBefore = c.changedPaths(ctx)
}

// leapEnv adds what the build skill gets on a leap or rewrite cycle.
func (c *cycle) leapEnv(env map[string]string, domain string) {
	env["OODA_CYCLE_MODE"] = artifact.ModeFeature
	l := c.art.leap
	if l == nil || l.domain != domain {
		return
	}
	brief := artifact.LeapBrief(l.rubric, l.mode, l.target, leapPolicy(c.cfg.Leap))
	b, _ := json.Marshal(brief)
	env["OODA_CYCLE_MODE"] = l.mode
	env["OODA_LEAP_MODE"] = "true"
	env["OODA_TARGET_DIMENSION"] = l.target
	env["OODA_LEAP_MAX_LINES"] = fmt.Sprint(brief.MaxLines)
	env["OODA_LEAP_BRIEF"] = string(b)
}

// verifyLeap is the 4-C2 gate after a leap's skill: the artifact is
// captured again and compared with the baseline; a leap that did not
// raise its target enough, or lowered the artifact, is reverted. It
// reports whether the leap was kept.
func (c *cycle) verifyLeap(ctx context.Context, f *record.Facts) bool {
	l := c.art.leap
	if l == nil || l.baseline == nil {
		return true
	}
	f.LeapTarget = l.target
	cr, ok := c.critique(ctx, l.domain, l.rubric, "After the "+l.mode)
	if !ok {
		// The rubric changed under the leap: nothing can show it helped.
		c.revertLeap(ctx, f, "the rubric changed during the leap")
		f.LeapAttempts = []record.LeapAttempt{{Dimension: l.target, AttemptNumber: l.attempt}}
		return false
	}
	c.art.post = &cr
	v := artifact.VerifyLeap(l.rubric, l.baseline, cr.Scores(), l.target, leapPolicy(c.cfg.Leap), l.attempt)
	f.LeapAttempts = []record.LeapAttempt{{Dimension: v.Attempt.Dimension, AttemptNumber: v.Attempt.AttemptNumber, DeltaScore: v.Attempt.DeltaScore}}
	if !v.Kept {
		c.printf("[Leap] %s.", v.Reason)
		c.revertLeap(ctx, f, v.Reason)
		return false
	}
	c.printf("[Leap] %s. Quantum jump confirmed.", v.Reason)
	below := v.Remainder != ""
	f.LeapBelowBar = &below
	if below {
		c.queueRemainder(l, v.Remainder)
	}
	return true
}

// failedLeap records a leap whose skill failed: an attempt that cleared
// nothing (no delta_score, which 2-G counts as failed), with whatever the
// skill changed reverted.
func (c *cycle) failedLeap(ctx context.Context, f *record.Facts) {
	l := c.art.leap
	if l == nil || l.baseline == nil || c.res.Status == StatusHalted {
		return
	}
	f.LeapTarget = l.target
	f.LeapAttempts = []record.LeapAttempt{{Dimension: l.target, AttemptNumber: l.attempt}}
	c.printf("[Leap] The %s skill failed: the attempt on '%s' counts as failed.", l.mode, l.target)
	c.revertLeap(ctx, f, "its skill failed")
}

// queueRemainder queues what a kept leap left below bar, so it is never
// orphaned (the original's leap_remainder_auto).
func (c *cycle) queueRemainder(l *leapPlan, title string) {
	q := &c.snap.ActionQueue
	for _, a := range q.Pending {
		if a.Title == title {
			return
		}
	}
	rice, eff, decay := 90.0, 90.0, 0.0
	a := state.Action{ID: fmt.Sprintf("A-%d-remainder", c.res.Cycle), Title: title, SourceDomain: l.domain, RiceScore: &rice,
		EffectiveRice: &eff, DecayApplied: &decay, Status: "pending", ExtractedAt: state.FormatTime(c.now),
		Extra: state.Extra{"origin": json.RawMessage(`"leap_remainder_auto"`)}}
	q.Pending = append(q.Pending, a)
	c.queueChanged = true
	c.actionsAdded++
	c.printf("[5-G] Remainder queued: %s.", title)
}

// revertLeap puts the working tree back as it was before the leap: the
// commits the skill made are reverted (git revert, never a reset), and
// the files it changed without committing are restored or, when new,
// removed. Paths that were already changed before the skill ran, and
// everything under agent/state, are left alone. A leap that cannot be
// reverted queues a HALT: its regression must not stay unseen.
func (c *cycle) revertLeap(ctx context.Context, f *record.Facts, why string) {
	f.LeapRegressed = true
	cp, ok := c.lastCheckpoint()
	repo, rok := c.openRepo(ctx)
	// The checkpoint is this cycle's, but its commit still goes to git's
	// argv: only a commit id does.
	if !ok || !rok || !gitrepo.ValidSHA(cp.CommitSHA) {
		c.art.halts = append(c.art.halts, fmt.Sprintf("A leap on '%s' regressed (%s) and could not be reverted: no checkpoint commit or no git repository. Restore the artifact by hand.", f.LeapTarget, why))
		return
	}
	head, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD")
	head = strings.TrimSpace(head)
	if err == nil && head != cp.CommitSHA {
		if _, err := repo.Run(ctx, "merge-base", "--is-ancestor", cp.CommitSHA, head); err != nil {
			c.art.halts = append(c.art.halts, fmt.Sprintf("A leap on '%s' regressed (%s) and HEAD %s no longer descends from the checkpoint %s: revert it by hand.", f.LeapTarget, why, shortSHA(head), shortSHA(cp.CommitSHA)))
			return
		}
		if _, err := repo.Run(ctx, "revert", "--no-edit", cp.CommitSHA+".."+head); err != nil {
			_, _ = repo.Run(ctx, "revert", "--abort")
			c.art.halts = append(c.art.halts, fmt.Sprintf("A leap on '%s' regressed (%s) and git revert %s..%s failed (%v): revert it by hand.", f.LeapTarget, why, shortSHA(cp.CommitSHA), shortSHA(head), err))
			return
		}
		c.noteOwnCommit(ctx, repo)
	}
	var restore, remove []string
	for p, untracked := range c.changedPaths(ctx) {
		if _, was := c.art.dirtyBefore[p]; was || strings.HasPrefix(p, "agent/state/") {
			continue
		}
		if untracked {
			remove = append(remove, p)
		} else {
			restore = append(restore, p)
		}
	}
	sort.Strings(restore)
	sort.Strings(remove)
	if len(restore) > 0 {
		// Paths are literal: a file the skill named ":(glob)*" must not
		// widen what is checked out.
		if _, err := repo.Run(ctx, append([]string{"--literal-pathspecs", "checkout", "HEAD", "--"}, restore...)...); err != nil {
			// Files deleted by the skill and absent from HEAD cannot be
			// checked out; the rest still must be.
			for _, p := range restore {
				_, _ = repo.Run(ctx, "--literal-pathspecs", "checkout", "HEAD", "--", p)
			}
		}
	}
	if len(remove) > 0 {
		// Through the project root: a path that leads out of it (a
		// symlinked directory) is refused, never followed.
		if root, err := os.OpenRoot(c.store.Root); err == nil {
			for _, p := range remove {
				if err := root.Remove(p); err != nil {
					c.printf("[WARN] leap revert: %s not removed: %v", p, err)
				}
			}
			root.Close()
		}
	}
	c.printf("[Leap] Reverted to %s (%d file(s) restored, %d removed).", shortSHA(cp.CommitSHA), len(restore), len(remove))
}

// changedPaths maps each changed path (git status, untracked files
// included) to whether it is untracked.
func (c *cycle) changedPaths(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	repo, ok := c.openRepo(ctx)
	if !ok {
		return out
	}
	s, err := repo.Run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return out
	}
	fields := strings.Split(s, "\x00")
	for i := 0; i < len(fields); i++ {
		e := fields[i]
		if len(e) < 4 {
			continue
		}
		code, p := e[:2], e[3:]
		out[p] = code == "??"
		if code[0] == 'R' || code[0] == 'C' {
			i++ // the rename's source follows
		}
	}
	return out
}

// gradeArtifact is 5-G at Step 6: the winner's critique (the leap's, when
// it verified one) recorded on the outcome, with quality and on_mission
// from it (6-C9). Only a cycle that changed the artifact is graded: the
// report's artifact_changed when it says, else any result but observe,
// futile, error, skip.
//
// A cycle that was to be graded and has no score (nothing could be
// captured, the rubric changed) and a reverted leap leave the artifact
// as it was: their quality and on_mission use the domain's last score
// under the rubric, never a made-up 1 — failing the grade must not pay
// better than a low grade.
func (c *cycle) gradeArtifact(ctx context.Context, f *record.Facts) {
	if !f.Executed || f.Domain == "" {
		return
	}
	r := c.rubricFor(f.Domain)
	if !r.Active() {
		return
	}
	cr := c.art.post
	due := cr != nil || f.LeapRegressed
	if cr == nil && !f.LeapRegressed && c.artifactChanged(*f) {
		due = true
		if got, ok := c.critique(ctx, f.Domain, r, "Critique"); ok {
			cr = &got
		}
	}
	if cr != nil && !f.LeapRegressed {
		s := cr.Summary()
		f.ArtifactScore, f.DimensionScores, f.WeakestDimension = s.ArtifactScore, s.DimensionScores, s.WeakestDimension
		if s.ArtifactScore != nil {
			f.OnMission = *s.ArtifactScore >= r.Bar
			return
		}
	}
	if !due {
		return
	}
	if known := c.lastArtifactScore(f.Domain); known != nil {
		f.QualityArtifact = known
		f.OnMission = *known >= r.Bar
	}
}

// lastArtifactScore is domain's newest artifact score under its rubric in
// force, nil when none.
func (c *cycle) lastArtifactScore(domain string) *float64 {
	entries := sinceCycle(c.artifactEntries(), c.rubricSince(domain))
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; e.Domain == domain && e.ArtifactScore != nil {
			v := *e.ArtifactScore
			return &v
		}
	}
	return nil
}

// artifactChanged says whether the cycle changed the artifact.
func (c *cycle) artifactChanged(f record.Facts) bool {
	if rep := c.primary.report; rep != nil && rep.ArtifactChanged != nil {
		return *rep.ArtifactChanged
	}
	switch record.ResultType(f) {
	case record.TypeObserve, record.TypeFutile, record.TypeError:
		return false
	}
	return f.Result == "success"
}

// writeHalts writes the one HALT file of this cycle's stops — the cost cap
// (6-C5b), and what the artifact axis found (a mutated rubric, a stalled
// dimension, a leap that could not be reverted) — once the cycle is
// recorded, every reason in it.
func (c *cycle) writeHalts() error {
	if len(c.art.halts) == 0 || c.opts.DryRun {
		return nil
	}
	reason := strings.Join(c.art.halts, " | ")
	if err := c.store.WriteHalt(c.cfg.Safety.HaltFile, reason, c.now); err != nil {
		c.printf("[WARN] could not create the HALT file: %v", err)
		return err
	}
	c.res.HaltCreated = true
	c.printf("[HALT] %s", reason)
	return nil
}

// defaultGradeOn is eval.grade_on's default: the results worth a second
// opinion.
var defaultGradeOn = []string{"pr_created", "pr_merged", "action_extracted"}

// recordableTypes are the result types a cycle is recorded with at its
// end, when 7-B asks (the PR outcomes come later, by back-annotation; a
// pr_merged in eval.grade_on matches an auto-merge's cycle as pr_created).
var recordableTypes = []string{record.TypeLeapRegressed, record.TypeError, record.TypeCreated, record.TypeObserve,
	record.TypeAction, record.TypeFutile, record.TypeMerged, record.TypeMergedHeld, record.TypeRejected}

// verdictReasonWords bounds the verdict's reason, as the original does.
const verdictReasonWords = 30

// goalVerdict is Step 7-B, opt-in (eval.enabled): the judge, which did not
// do the work, says whether the cycle achieved the goal it served. The
// verdict is recorded beside the outcome (verifier_verdict) and never
// moves a score; a verdict that contradicts the record — not achieved
// although the quality is 0.5 or more, or not what the artifact's bar
// says when the cycle was graded — is an eval_disagreement gap, so that a
// lasting divergence between maker and checker shows.
func (c *cycle) goalVerdict(ctx context.Context, f *record.Facts, resultType string, quality float64) {
	ev := c.cfg.Eval
	if !ev.Enabled || c.opts.DryRun || !f.Executed {
		return
	}
	gradeOn := ev.GradeOn
	if gradeOn == nil {
		gradeOn = defaultGradeOn
	}
	for _, t := range gradeOn {
		if !slices.Contains(recordableTypes, t) {
			c.printf("[WARN] config.json eval.grade_on: %q is not a result type a cycle is recorded with (%s); it never matches.", t, strings.Join(recordableTypes, ", "))
		}
	}
	if !slices.Contains(gradeOn, resultType) {
		return
	}
	j := c.judgeFor()
	if j == nil || !j.Enabled() {
		c.printf("[WARN] eval.enabled is set but no judge.command is configured: no independent verdict (docs/judge.md).")
		return
	}
	goal := c.cfg.Mission
	for _, g := range c.snap.Goals.Goals {
		if g.Status == "active" && reflect.GoalRelates(g, f.Domain) {
			goal = g.Title
			if goal == "" {
				goal = g.ID
			}
			break
		}
	}
	facts := map[string]any{"declared_goal": goal, "orient_summary": f.OrientSummary, "skill_output": f.Summary,
		"domain": f.Domain, "result_type": resultType, "quality_multiplier": quality}
	if f.PRNumber != nil {
		facts["pr_number"] = *f.PRNumber
	}
	if ev.Model != "" {
		facts["model"] = ev.Model
	}
	if f.ArtifactScore != nil {
		facts["artifact_score"] = *f.ArtifactScore
	}
	resp := j.Ask(ctx, judge.Request{Kind: judge.KindGoalVerdict, Facts: facts, Default: map[string]any{"achieved": nil},
		Prompt: "You are an independent reviewer: you did not do this work. Decide only whether it achieved the declared goal; default to false when the evidence is weak. Answer {\"achieved\": true|false, \"reason\": at most 30 words, \"confidence\": 0 to 1}."})
	if resp.Source != judge.SourceJudge {
		if resp.Error != "" {
			c.printf("[WARN] judge (goal verdict): %s; no verdict recorded.", resp.Error)
		}
		return
	}
	var a struct {
		Achieved   *bool    `json:"achieved"`
		Reason     string   `json:"reason"`
		Confidence *float64 `json:"confidence"`
	}
	if json.Unmarshal(resp.Answer, &a) != nil || a.Achieved == nil {
		c.printf("[WARN] judge (goal verdict): the answer has no boolean \"achieved\"; no verdict recorded.")
		return
	}
	// The judge's words are recorded and shown: no credential it echoes.
	a.Reason = secret.Redact(a.Reason)
	if w := strings.Fields(a.Reason); len(w) > verdictReasonWords {
		a.Reason = strings.Join(w[:verdictReasonWords], " ")
	} else {
		a.Reason = strings.Join(w, " ")
	}
	if a.Confidence != nil && !(*a.Confidence >= 0 && *a.Confidence <= 1) {
		a.Confidence = nil // not a confidence: left out
	}
	f.Verdict = &record.Verdict{Achieved: *a.Achieved, Reason: a.Reason, Confidence: a.Confidence}
	conf := "—"
	if a.Confidence != nil {
		conf = fmt.Sprintf("%.2f", *a.Confidence)
	}
	c.printf("[Eval] Independent verdict: achieved %t (%s) — %s", *a.Achieved, conf, orDash(a.Reason))
	var why string
	switch r := c.rubricFor(f.Domain); {
	case !*a.Achieved && quality >= 0.5:
		why = fmt.Sprintf("quality %.3f, but the independent reviewer says the goal was not met: %s", quality, a.Reason)
	case f.ArtifactScore != nil && r.Active() && *a.Achieved != (*f.ArtifactScore >= r.Bar):
		why = fmt.Sprintf("artifact %.3f against bar %.3g, but the independent reviewer says achieved=%t: %s", *f.ArtifactScore, r.Bar, *a.Achieved, a.Reason)
	}
	if why != "" {
		c.addDomainGap(f.Domain, "eval_disagreement_"+gapKey(f.Domain), "eval_gap", why)
	}
}
