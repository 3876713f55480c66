package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/artifact"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// skillRun is what one skill invocation produced.
type skillRun struct {
	skill    string
	domain   string
	contract contract.Contract
	started  bool // an executor was found and started
	ok       bool
	halted   bool
	canceled bool
	timedOut bool
	errMsg   string
	report   *act.Report
	// outputs are the top-level fields of the skill's output files, read
	// after it ran: the first place chain conditions look.
	outputs   map[string]any
	hadOutput bool
	cost      float64
	// elapsed is how long the skill ran, from its executor's start to
	// its return (0 when it did not start): the cycle log keeps it as
	// skill_seconds, the history a duration histogram is built from.
	elapsed time.Duration
	pr      *int
	// changed: the domain state differs from before the run; newAlerts:
	// it shows warning or critical alerts it did not show before;
	// alerting: it shows any.
	changed   bool
	newAlerts bool
	alerting  bool
	// summary is the report's summary as shown and recorded
	// (act.Report.SummaryLine).
	summary string
	// logPath is the run log, relative to the project root, when one was
	// written; tail is the end of the output of a run that failed.
	logPath string
	tail    []string
	// notStarted: nothing ran (no executor, a command that cannot be
	// started); errMsg is all there is to say.
	notStarted bool
	// pendingLog is the run log of a run that succeeded while it is being
	// made durable (saveRunLogAsync); nil once written or for a failed run.
	pendingLog *background
}

// events are the events a skill reported for cascade detection (2-B3):
// its report's vars.events, else an "events" array in its output files.
func (r skillRun) events() []string {
	var out []string
	add := func(v any) {
		if list, ok := v.([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	if r.report != nil {
		if raw, ok := r.report.Vars["events"]; ok {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				add(v)
			}
		}
	}
	if len(out) == 0 {
		add(r.outputs["events"])
	}
	return out
}

// runSkill resolves and runs one skill for domain with the cycle's
// context, keeps its log and reads back its report and output files.
func (c *cycle) runSkill(ctx context.Context, obs *observe.Observation, domain, skill string, conf float64, focus string) skillRun {
	cfg := c.cfg
	// Not started until its executor says otherwise.
	r := skillRun{skill: skill, domain: domain, notStarted: true}
	var before state.DomainState
	stateFile := ""
	if dc, ok := cfg.Domains.Get(domain); ok {
		stateFile = dc.StateFile
		before, _ = c.store.ReadDomainState(stateFile)
	}
	ct, cerr := contract.Load(c.store.Root, cfg, skill)
	if cerr != nil {
		// A contract that does not load (bad YAML, a malformed chain
		// condition) is rejected whole: no chain runs on a guess.
		c.printf("[WARN] contract of %s rejected: %v (running it without a contract)", skill, cerr)
		c.addDomainGap(domain, "contract_invalid_"+config.SkillKey(skill), "contract_error", cerr.Error())
		ct = contract.Contract{Name: config.SkillKey(skill), Source: "default"}
	}
	r.contract = ct
	if domain != "" {
		c.recordDomainRun(domain)
	}
	exec, err := c.opts.Registry.Resolve(cfg, skill)
	if err != nil {
		r.errMsg = err.Error()
		why := r.errMsg
		var none *act.ErrNoExecutor
		if errors.As(err, &none) {
			why += " (config.json has no skills entry for it, no built-in skill has its name, and agent.command is not set)"
		}
		c.printf("[Act] %s: %s", skill, why)
		// The run log says why nothing ran, where a failed run's reader
		// looks; a name the store refuses gets none.
		if c.store.PrepareRunsDir(c.res.Cycle, skill) == nil {
			c.printNotices()
			c.saveRunLog(&r, []byte("ooda: "+why+"\n"))
		}
		return r
	}
	err = c.store.PrepareRunsDir(c.res.Cycle, skill)
	c.printNotices()
	if err != nil {
		r.errMsg = err.Error()
		return r
	}
	// Only a skill that starts costs anything (failedRunCost).
	r.started, r.cost = true, ct.Cost()
	c.printf("[Act] %s starting... (%s)", skill, exec.Describe())
	queueBefore := c.queueFile()
	tail := proc.NewTailBuffer(proc.LogTailSize)
	env := c.envFor(obs, domain, skill, conf)
	env["OODA_FOCUS_ITEM"] = focus
	resp := exec.Execute(ctx, act.Request{
		Skill: skill, Domain: domain, Cycle: c.res.Cycle, ProjectDir: c.store.Root, Now: c.now,
		Env: env, Timeout: c.lockTimeout(),
		HaltFile: c.haltPath(), Output: tail, Config: c.cfg, Runner: c.opts.Registry.Runner,
		OnStart: func(pgid int) {
			if err := c.lock.SetSkillGroup(pgid); err != nil {
				c.printf("[WARN] could not record the skill's process group in the lock: %v", err)
			}
		},
	})
	for _, w := range resp.Warnings {
		c.printf("[WARN] %s: %s", skill, w)
	}
	if len(resp.Survivors) > 0 {
		c.printf("[WARN] %s: processes it started still run after it was stopped and killed (pids %v); stop them by hand (docs/halt.md).", skill, resp.Survivors)
		c.addDomainGap(domain, "skill_survivors_"+config.SkillKey(skill), "process_containment", fmt.Sprintf("pids %v outlived the stop", resp.Survivors))
	}
	logData := tail.Bytes()
	if tail.Truncated() {
		logData = append([]byte("[output truncated to the last 1 MiB]\n"), logData...)
	}
	if resp.OK {
		r.pendingLog = c.saveRunLogAsync(&r, logData)
	} else {
		c.saveRunLog(&r, logData)
	}
	r.halted, r.canceled, r.timedOut = resp.Halted, resp.Canceled, resp.TimedOut
	r.notStarted = resp.NotStarted
	if !r.notStarted {
		r.elapsed = resp.Elapsed
	}
	if !resp.OK {
		r.errMsg = resp.Error
		r.tail = act.LastLines(logData, act.FailureTailLines, act.FailureTailBytes)
		r.cost = c.failedRunCost(r, ct)
		return r
	}
	r.ok = true
	c.printf("[Act] %s completed. (elapsed: %s)", skill, resp.Elapsed.Round(time.Millisecond))
	c.takeSkillQueue(skill, queueBefore)

	raw, rerr := c.store.ReadReport(c.res.Cycle, skill)
	if rerr == nil {
		r.report, rerr = act.ParseReport(raw)
	}
	if rerr != nil && !c.refused("report_"+gapKey(config.SkillKey(skill)), rerr) {
		rel := c.store.ReportPath(c.res.Cycle, skill)
		if r, err := filepath.Rel(c.store.Root, rel); err == nil {
			rel = r
		}
		c.printf("[WARN] %s: ignoring its report %s: %v", skill, rel, rerr)
		c.addDomainGap(domain, "report_invalid_"+config.SkillKey(skill), "report_error", rerr.Error())
	}
	var after state.DomainState
	if stateFile != "" {
		var aerr error
		after, aerr = c.store.ReadDomainState(stateFile)
		c.refused(inputKey(stateFile), aerr)
	}
	// Only what the skill found counts: a state file that differs in its
	// last_run (or another timestamp, act.VolatileKeys) alone is unchanged.
	var beforeBytes []byte
	if before.Found {
		beforeBytes = before.Bytes
	}
	changed := after.Found && act.StateChanged(beforeBytes, after.Bytes)
	newAlerts := !reflect.DeepEqual(urgentSet(before.Alerts), urgentSet(after.Alerts)) && len(urgentSet(after.Alerts)) > 0
	r.hadOutput = r.report.HadOutputDefault(changed || newAlerts)
	r.changed, r.newAlerts, r.alerting = changed, newAlerts, len(urgentSet(after.Alerts)) > 0
	if r.summary = r.report.SummaryLine(); r.summary != "" {
		c.printf("[Act] %s reports: %s", skill, r.summary)
	}
	if rep := r.report; rep != nil {
		if rep.CostUSD != nil {
			r.cost = *rep.CostUSD
		}
		if rep.PRNumber != nil && rep.CreatedPR() {
			n := *rep.PRNumber
			r.pr = &n
		}
	}
	// Chain conditions read the invoked skill's own output files: those its
	// contract lists, else its domain's state file.
	files := ct.Output.Files
	if len(files) == 0 && stateFile != "" {
		files = []string{stateFile}
	}
	r.outputs = map[string]any{}
	for _, f := range files {
		ds, err := c.store.ReadDomainState(f)
		if err != nil || !ds.Found {
			c.refused(inputKey(f), err)
			continue
		}
		for k, v := range ds.Raw {
			if _, seen := r.outputs[k]; seen {
				continue
			}
			var x any
			if json.Unmarshal(v, &x) == nil {
				r.outputs[k] = x
			}
		}
	}
	return r
}

// failedRunCost is what a run that failed is charged: nothing when it
// never started (a missing program, one without the execute bit: nothing
// ran, so nothing was spent); else the cost_usd of the report it wrote
// before failing, when it wrote a valid one; else the contract's estimate
// ($0.02 by default), as for a run that reported no cost.
func (c *cycle) failedRunCost(r skillRun, ct contract.Contract) float64 {
	if r.notStarted {
		return 0
	}
	if raw, err := c.store.ReadReport(c.res.Cycle, r.skill); err == nil {
		if rep, err := act.ParseReport(raw); err == nil && rep != nil && rep.CostUSD != nil {
			return *rep.CostUSD
		}
	}
	return ct.Cost()
}

// lookup resolves a chain-condition field: the skill's output files first,
// then its report's vars, then the report's own fields.
func (r skillRun) lookup(field string) (any, bool) {
	if v, ok := r.outputs[field]; ok {
		return v, true
	}
	if r.report == nil {
		return nil, false
	}
	if raw, ok := r.report.Vars[field]; ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return v, true
		}
	}
	b, _ := json.Marshal(r.report)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	v, ok := fields[field]
	return v, ok
}

// execute is Step 4-B: the rotation cursor, the primary skill, then its
// chain through the same gates as the primary.
func (c *cycle) execute(ctx context.Context, f *record.Facts, obs *observe.Observation, w *decide.Option, gated bool) {
	cfg := c.cfg
	f.Action, f.Executed = "execute", true
	// A leap's baseline critique is taken before anything changes, and
	// kept in the checkpoint its verification compares against.
	c.leapBaseline(ctx)
	if c.art.leap == nil && f.CycleMode != artifact.ModeFeature && f.CycleMode != "" {
		f.CycleMode = artifact.ModeFeature // no baseline, no leap
	}
	if cfg.Safety.EnableRollback || cfg.Safety.EnableAutoMerge || c.art.leap != nil {
		// 4-C2: auto-merge forces checkpointing, so a merge the engine
		// makes by itself always has a recovery point; so does a leap,
		// which its verification may revert.
		c.checkpoint(ctx, "before action")
	}
	focus, cursorNext, rotating := c.rotation(w.Domain)
	if rotating {
		f.Focus = focus
	}
	run := c.runSkill(ctx, obs, w.Domain, w.Skill, w.Confidence, focus)
	// The run log is made durable while the cycle goes on, up to Step 6
	// (see cycle.runLog).
	c.runLog = run.pendingLog
	c.primary = run
	if rotating && run.started {
		ts := state.FormatTime(c.now)
		rc, _ := c.store.ReadRotationCursor(w.Domain)
		rc.Cursor, rc.LastUpdated, rc.FocusItem = cursorNext, &ts, &focus
		if err := c.store.SaveRotationCursor(w.Domain, rc); err != nil {
			c.printf("[WARN] rotation cursor of %s: %v", w.Domain, err)
		}
	}
	f.CostUSD = run.cost
	if run.started && !run.notStarted {
		f.SkillElapsed = &run.elapsed
	}
	if !c.absorbFailure(f, run, true) {
		c.failedLeap(ctx, f)
		return
	}
	c.snap.State.ConsecutiveSilentFailures = 0
	f.Result = "success"
	f.HadOutput = run.hadOutput
	f.Summary = run.summary
	c.res.Summary = run.summary
	if run.pr != nil {
		f.PRNumber = run.pr
		tier := 3
		f.RiskTier = &tier
		c.prsCreated++
		c.prRun = run
	}
	c.runChain(ctx, f, obs, w, run, gated)
	c.detectNewPRs(ctx, f)
	if c.art.leap != nil || f.PRNumber != nil {
		// A leap's verification and a PR's merge run other programs in
		// the project: the log is on disk before they start.
		c.awaitRunLog(run.pendingLog)
	}
	if !c.verifyLeap(ctx, f) {
		// The artifact, not the unit test, decides a leap: reverted, its
		// PR is never merged.
		if f.PRNumber != nil {
			c.printf("[Leap] PR #%d belongs to the reverted leap: it is not merged; close it.", *f.PRNumber)
		}
		return
	}
	if f.PRNumber != nil && c.res.Status != StatusHalted {
		c.postProcessPR(ctx, f, *f.PRNumber, c.prRun)
	}
}

// absorbFailure records a failed run. For the primary skill the cycle's
// result becomes error; an operator's stop (HALT, a signal) is recorded
// but is not the skill's failure. It reports whether the run succeeded.
func (c *cycle) absorbFailure(f *record.Facts, run skillRun, primary bool) bool {
	if run.ok {
		return true
	}
	switch {
	case run.halted:
		c.printf("[HALT] HALT file appeared during %s; stopped it. Partial execution logged.", run.skill)
		f.Reason, f.Result, f.Error, f.LogPath = ReasonHaltDuringExecute, "error", run.errMsg, run.logPath
		c.res.Status, c.res.Reason = StatusHalted, ReasonHaltDuringExecute
		c.res.SkillError = run.errMsg
		return false
	case run.canceled:
		c.printf("[Act] %s stopped: the cycle was interrupted. Partial execution logged.", run.skill)
		f.Reason, f.Result, f.Error, f.LogPath = ReasonInterrupted, "error", run.errMsg, run.logPath
		c.res.Reason = ReasonInterrupted
		c.res.SkillError = run.errMsg
		return false
	case run.timedOut:
		c.printf("[Act] %s. Treating as error.", run.errMsg)
	case run.started:
		c.printf("[Act] %s failed: %s", run.skill, run.errMsg)
	}
	c.printFailureLog(run)
	if primary {
		f.Result, f.Error, f.LogPath = "error", run.errMsg, run.logPath
		c.res.SkillError = run.errMsg
	}
	c.res.FailedSkills = append(c.res.FailedSkills, run.skill)
	c.skillFailed(run.domain, run.skill, run.errMsg, run.logPath)
	return false
}

// shownPath is rel, a path relative to the project root, as the user can
// open it from the working directory: unchanged there, relative to it from
// a directory inside the project (ooda finds the project from one), else
// absolute.
func (c *cycle) shownPath(rel string) string {
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Join(c.store.Root, rel)
	}
	if wd == c.store.Root {
		return rel
	}
	abs := filepath.Join(c.store.Root, rel)
	if r, err := filepath.Rel(wd, abs); err == nil && strings.HasPrefix(wd, c.store.Root+string(filepath.Separator)) {
		return r
	}
	return abs
}

// saveRunLog keeps a run's output as its run log and remembers where.
func (c *cycle) saveRunLog(r *skillRun, data []byte) {
	if err := c.store.SaveRunLog(c.res.Cycle, r.skill, data); err != nil {
		c.printf("[WARN] could not keep the run log: %v", err)
		return
	}
	r.logPath = c.store.RunLogPath(c.res.Cycle, r.skill)
	if rel, err := filepath.Rel(c.store.Root, r.logPath); err == nil {
		r.logPath = rel
	}
}

// background is work done on a goroutine of its own while the cycle
// goes on: a run log made durable, old run files pruned.
type background struct {
	done chan struct{}
	err  error
	// warned says the error was told (awaitRunLog tells it once).
	warned sync.Once
}

// inBackground starts fn on a goroutine of its own.
func inBackground(fn func() error) *background {
	b := &background{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err = fn()
	}()
	return b
}

// wait returns once the work is done, with its error; it may be called
// again, and on nil, which has nothing to wait for.
func (b *background) wait() error {
	if b == nil {
		return nil
	}
	<-b.done
	return b.err
}

// saveRunLogAsync is saveRunLog for a run that succeeded, whose log path
// is shown nowhere: the write (a file and a directory fsync) overlaps what
// follows the skill — the check for new PRs, Reflect, the record built
// and encoded — instead of being waited for. It is as durable as before
// by the time the cycle records anything: awaitRunLog is called before
// another skill starts, before a leap is verified or a PR merged, before
// a judge or an artifact's captures run, and before Step 6 makes its
// batch durable or asks git anything (cycle.runLog), so state.json
// never says the cycle ended with the write pending, and a crash in
// between leaves what a crash during a synchronous write leaves.
func (c *cycle) saveRunLogAsync(r *skillRun, data []byte) *background {
	cycle, skill := c.res.Cycle, r.skill
	r.logPath = c.store.RunLogPath(cycle, skill)
	if rel, err := filepath.Rel(c.store.Root, r.logPath); err == nil {
		r.logPath = rel
	}
	return inBackground(func() error {
		if runLogWriteHook != nil {
			runLogWriteHook()
		}
		return c.store.SaveRunLog(cycle, skill, data)
	})
}

// runLogWriteHook, when set (by tests), runs before saveRunLogAsync
// writes: a slow disk, to show what waits for the log.
var runLogWriteHook func()

// awaitRunLog waits for a run log written by saveRunLogAsync and warns,
// once, when it could not be kept.
func (c *cycle) awaitRunLog(w *background) {
	if err := w.wait(); err != nil {
		w.warned.Do(func() { c.printf("[WARN] could not keep the run log: %v", err) })
	}
}

// printFailureLog shows why a skill failed without opening its log: the
// last lines of its output (each escaped, so a line cannot pass for one of
// the cycle's own, with its tabs shown as a terminal shows them) and the
// path of the whole log.
func (c *cycle) printFailureLog(run skillRun) {
	if run.logPath == "" {
		return
	}
	log := c.shownPath(run.logPath)
	switch {
	case run.notStarted:
		c.printf("[Act] %s did not start; its log: %s", run.skill, log)
		return
	case len(run.tail) == 0:
		c.printf("[Act] %s printed nothing; its log: %s", run.skill, log)
		return
	}
	c.printf("[Act] Last %d line(s) of %s's output (full log: %s):", len(run.tail), run.skill, log)
	for _, l := range run.tail {
		c.printf("  | %s", safetext.OutputLine(l))
	}
}

// rotation reads the winner's rotation cursor (4-B): the focus item of
// this cycle and the cursor to store after the skill ran.
func (c *cycle) rotation(domain string) (focus string, next int, ok bool) {
	dc, found := c.cfg.Domains.Get(domain)
	if !found || len(dc.Rotation) == 0 {
		return "", 0, false
	}
	rc, err := c.store.ReadRotationCursor(domain)
	if err != nil {
		c.printf("[WARN] %v; starting the rotation at 0", err)
	}
	n := len(dc.Rotation)
	cur := ((rc.Cursor % n) + n) % n
	next = (cur + 1) % n
	c.printf("[Act] Rotation: %s focus='%s' (cursor %d -> %d)", domain, dc.Rotation[cur], cur, next)
	return dc.Rotation[cur], next, true
}

// chainStep is one pending chain invocation and the run whose output its
// condition reads.
type chainStep struct {
	target    string
	condition string
	from      skillRun
	legacy    bool
}

// runChain is the chain half of 4-B: triggers from the invoked skill's
// contract (conditions evaluated on its own output), or the legacy
// config.domains[winner].chain list, each through the same gates as the
// primary skill: allowlist, the implementation level gate and
// max_prs_per_cycle, the HALT file before every step, and the depth cap.
// Triggers whose condition held but which a gate refused are recorded as
// chain_blocked gaps (5-A).
func (c *cycle) runChain(ctx context.Context, f *record.Facts, obs *observe.Observation, w *decide.Option, primary skillRun, gated bool) {
	cfg := c.cfg
	maxDepth := cfg.Safety.MaxChainDepth
	if maxDepth <= 0 {
		maxDepth = 3
	}
	var queue []chainStep
	if len(primary.contract.ChainTriggers) > 0 {
		queue = c.triggersOf(primary)
	} else if dc, ok := cfg.Domains.Get(w.Domain); ok {
		for _, s := range dc.Chain {
			queue = append(queue, chainStep{target: s, from: primary, legacy: true})
		}
	}
	// 1-A: a stale active context schedules its refresh skill, run like a
	// chain step through the same gates.
	if c.obs != nil && c.obs.RefreshDue && cfg.ActiveContext.RefreshSkill != nil && *cfg.ActiveContext.RefreshSkill != "" {
		queue = append([]chainStep{{target: *cfg.ActiveContext.RefreshSkill, from: primary, legacy: true}}, queue...)
	}
	ran := map[string]bool{config.SkillKey(primary.skill): true}
	threshold := cfg.Safety.ConfidenceThreshold
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		target := "/" + config.SkillKey(st.target)
		if !st.legacy {
			cond, err := contract.ParseCondition(st.condition)
			if err != nil {
				c.printf("[Act] Chain trigger to %s skipped: %v", target, err)
				continue
			}
			met, undecidable := cond.Eval(st.from.lookup)
			for _, v := range undecidable {
				c.printf("[Act] Chain condition undecidable: %s not found — treating as false", v)
			}
			if !met {
				c.printf("[Act] Chain condition not met: %s — skipping %s", st.condition, target)
				continue
			}
		}
		if gated || w.Confidence < threshold {
			c.chainBlocked(target, record.StopConfidence, fmt.Sprintf("confidence %.2f below threshold %.2f: primary skill only", w.Confidence, threshold))
			continue
		}
		if len(f.Chain) >= maxDepth {
			c.printf("[WARN] Chain depth cap (%d) reached; %s and any later chain steps are not run.", maxDepth, target)
			c.stopChain(target, "max_chain_depth")
			break
		}
		if halted, _ := c.store.HaltExists(cfg.Safety.HaltFile); halted {
			c.printf("[HALT] HALT file appeared before chain step %s; stopping the chain.", target)
			c.stopChain(target, record.StopHalt)
			c.res.Status, c.res.Reason = StatusHalted, ReasonHalt
			return
		}
		if ran[config.SkillKey(target)] {
			c.printf("[Act] Chain: %s already ran this cycle; not running it again.", target)
			continue
		}
		if !cfg.Safety.Allowed(target) {
			c.printf("[Act] SAFETY: chain %s not in allowlist. Skipping.", target)
			c.chainBlocked(target, "not_in_allowlist", "not in safety.skill_allowlist")
			continue
		}
		tct, terr := contract.Load(c.store.Root, cfg, target)
		if terr != nil {
			// Fail closed: without its contract there is no telling whether
			// the target opens PRs, so it must not slip past those gates.
			c.printf("[Act] SAFETY: chain %s has a contract that does not load (%v). Skipping.", target, terr)
			c.chainBlocked(target, "contract_error", "contract does not load: "+terr.Error())
			continue
		}
		if c.createsPRs(target, tct) {
			if cfg.ProgressiveComplex.CurrentLevel < 3 || !cfg.Implementation.Enabled {
				c.printf("[Act] SAFETY: chain %s requires Level 3 + implementation.enabled. Skipping.", target)
				c.chainBlocked(target, "implementation_gated", "requires level 3 and implementation.enabled")
				continue
			}
			if c.prsCreated >= cfg.Safety.MaxPRsPerCycle {
				c.printf("[Act] SAFETY: max_prs_per_cycle (%d) reached. Skipping %s.", cfg.Safety.MaxPRsPerCycle, target)
				c.chainBlocked(target, record.StopPRLimit, "max_prs_per_cycle reached")
				continue
			}
		}
		if st.legacy {
			c.printf("[Act] Chain (legacy): %s starting...", target)
		} else {
			c.printf("[Act] Chain trigger: %s → %s starting...", st.condition, target)
		}
		ran[config.SkillKey(target)] = true
		// Another skill may read the runs directory, or be the same
		// skill and write the same log.
		c.awaitRunLog(primary.pendingLog)
		run := c.runSkill(ctx, obs, c.domainOf(target, w.Domain), target, w.Confidence, "")
		c.awaitRunLog(run.pendingLog)
		f.Chain = append(f.Chain, target)
		f.CostUSD += run.cost
		if !c.absorbFailure(f, run, false) {
			if run.halted || run.canceled {
				return
			}
			continue
		}
		c.snap.State.ConsecutiveSilentFailures = 0
		f.HadOutput = f.HadOutput || run.hadOutput
		if run.pr != nil {
			c.prsCreated++
			if f.PRNumber == nil {
				f.PRNumber = run.pr
				tier := 3
				f.RiskTier = &tier
				c.prRun = run
			}
			if c.prsCreated > cfg.Safety.MaxPRsPerCycle {
				c.printf("[WARN] %s opened PR #%d beyond max_prs_per_cycle: it stays a draft for human review.", target, *run.pr)
				c.memo = append(c.memo, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: c.res.Cycle, Type: "safety_violation",
					Message: "max_prs_per_cycle exceeded"})
			}
		}
		c.printf("[Act] Chain: %s completed.", target)
		if !st.legacy {
			queue = append(queue, c.triggersOf(run)...)
		}
	}
	c.printf("[Act] Chain summary: %d skills executed: %v", len(f.Chain), chainOrNone(f.Chain))
}

func chainOrNone(ch []string) any {
	if len(ch) == 0 {
		return "none"
	}
	return ch
}

func (c *cycle) triggersOf(r skillRun) []chainStep {
	var out []chainStep
	for _, t := range r.contract.ChainTriggers {
		out = append(out, chainStep{target: t.Target, condition: t.Condition, from: r})
	}
	return out
}

// chainBlocked records a chain step a gate refused: its gap (5-A), and,
// for the decision log, the first step the chain stopped at and why
// (reason in the original's words where it has them).
func (c *cycle) chainBlocked(target, reason, why string) {
	c.stopChain(target, reason)
	c.addGap("chain_blocked_"+config.SkillKey(target), "chain_gap", "Chain to "+target+" blocked: "+why)
}

// stopChain remembers the first chain step that did not run, and why.
func (c *cycle) stopChain(target, reason string) {
	if c.chainStopped.reason == "" {
		c.chainStopped.at, c.chainStopped.reason = target, reason
	}
}

// createsPRs reports whether a skill opens pull requests: the
// implementation skill, or a contract that is not read-only or names a
// branch prefix.
func (c *cycle) createsPRs(skill string, ct contract.Contract) bool {
	if config.SkillKey(skill) == config.SkillKey(c.cfg.Implementation.PrimarySkill) {
		return true
	}
	if ct.Safety.ReadOnly != nil && !*ct.Safety.ReadOnly {
		return true
	}
	return ct.Safety.BranchPrefix != ""
}

// domainOf is the domain whose primary skill is skill, else fallback.
func (c *cycle) domainOf(skill, fallback string) string {
	for _, d := range c.cfg.Domains {
		if config.SkillKey(d.PrimarySkill) == config.SkillKey(skill) {
			return d.Name
		}
	}
	return fallback
}

func urgentSet(as []state.Alert) map[string]bool {
	m := map[string]bool{}
	for _, a := range as {
		if a.Urgent() {
			m[a.Severity+"|"+a.ID+"|"+a.Message] = true
		}
	}
	return m
}

// skillFailed records an execution error (4-B): a skill gap, the silent
// failure counter, and the HALT once it reaches max_silent_failures. The
// cycle still completes Step 6 so the failure is recorded. The HALT's
// reason names the skill, its error and its log, so whoever finds the HALT
// file knows where to look.
func (c *cycle) skillFailed(domain, skill, msg, logPath string) {
	c.addDomainGap(domain, "execution_error_"+config.SkillKey(skill), "execution_failure", msg)
	last := "The last: " + skill
	if domain != "" {
		last += " of domain " + domain
	}
	last += ", " + strings.Join(strings.Fields(msg), " ")
	if logPath != "" {
		last += " (log " + logPath + ")"
	}
	c.countFailureDetail("skill executions failed", last)
}

// countFailure is the silent-failure breaker: one more consecutive failure,
// and the HALT once max_silent_failures is reached. what completes "<n>
// consecutive ..." in the HALT's reason.
func (c *cycle) countFailure(what string) { c.countFailureDetail(what, "") }

// countFailureDetail is countFailure with detail, the last failure, added
// to the HALT's reason.
func (c *cycle) countFailureDetail(what, detail string) {
	c.failureCounted = true
	st := &c.snap.State
	st.ConsecutiveSilentFailures++
	if max := c.cfg.Safety.MaxSilentFailures; max > 0 && st.ConsecutiveSilentFailures >= max && !c.res.HaltCreated {
		reason := fmt.Sprintf("%d consecutive %s. ", st.ConsecutiveSilentFailures, what)
		if detail != "" {
			reason += detail + ". "
		}
		reason += "Unattended operation paused for human review. Delete this file to resume."
		if err := c.store.WriteHalt(c.cfg.Safety.HaltFile, reason, c.now); err != nil {
			c.printf("[WARN] could not create the HALT file: %v", err)
			return
		}
		c.res.HaltCreated = true
		c.printf("[HALT] %s", reason)
	}
}

// recordDomainRun keeps the engine's own record of when it ran (or tried
// to run) a domain's skill, so a skill that never writes its state file,
// or cannot run, cannot win forever.
func (c *cycle) recordDomainRun(domain string) {
	st := &c.snap.State
	if st.DomainLastRun == nil {
		st.DomainLastRun = map[string]string{}
	}
	st.DomainLastRun[domain] = state.FormatTime(c.now)
}

// detectNewPRs is the other half of 4-C's "was a PR created?": a skill
// that opened a PR without reporting it is caught by an open PR under a
// domain's branch prefix that Step 1-B did not see.
// fviewHas says whether PR number was open before the skill ran.
func (c *cycle) fviewHas(number int) bool {
	for _, pr := range c.fview.status.Open {
		if pr.Number == number {
			return true
		}
	}
	return false
}

// notePRCreated records a PR this cycle opened for the decision log, once
// (record.OriginalFields bounds what it copies).
func (c *cycle) notePRCreated(pr forge.PR) {
	for _, p := range c.createdPRs {
		if p.Number == pr.Number {
			return
		}
	}
	title, branch := pr.Title, pr.HeadRef
	c.createdPRs = append(c.createdPRs, state.CreatedPR{Number: pr.Number, Title: &title, Branch: &branch})
}

func (c *cycle) detectNewPRs(ctx context.Context, f *record.Facts) {
	if c.forge == nil || !c.fview.ok {
		return
	}
	fctx, cancel := c.forgeCtx(ctx)
	defer cancel()
	// Only a PR the skill opened matters here: a forge that can list the
	// open PRs alone is not asked again for what Observe read.
	var open []forge.PR
	var err error
	if l, ok := c.forge.(forge.OpenLister); ok {
		open, err = l.OpenPRs(fctx)
	} else {
		var st forge.Status
		st, err = c.forge.Status(fctx)
		open = st.Open
	}
	if k, ok := c.forge.(forge.CursorKeeper); ok {
		c.forgeNotes(k)
	}
	if err != nil {
		c.printf("[WARN] Could not re-list PRs after the skill ran (%v).", err)
		return
	}
	seen := map[int]bool{}
	for _, pr := range c.fview.status.Open {
		seen[pr.Number] = true
	}
	if f.PRNumber != nil {
		seen[*f.PRNumber] = true
	}
	for _, pr := range open {
		if f.PRNumber != nil && pr.Number == *f.PRNumber && !c.fviewHas(pr.Number) {
			// The PR the skill reported: the forge knows its title and
			// branch.
			c.notePRCreated(pr)
		}
		if seen[pr.Number] || orient.DomainOfBranch(c.cfg, pr.HeadRef) == "" {
			continue
		}
		c.printf("[Act] PR #%d created on branch %s", pr.Number, pr.HeadRef)
		c.notePRCreated(pr)
		c.prsCreated++
		if f.PRNumber == nil {
			n := pr.Number
			f.PRNumber = &n
			tier := 3
			f.RiskTier = &tier
			if c.prRun.skill == "" {
				c.prRun = skillRun{skill: f.Skill}
			}
			continue
		}
		if c.prsCreated > c.cfg.Safety.MaxPRsPerCycle {
			c.printf("[WARN] PR #%d is beyond max_prs_per_cycle (%d): Risk Tier 3, human review.", pr.Number, c.cfg.Safety.MaxPRsPerCycle)
			c.memo = append(c.memo, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: c.res.Cycle, Type: "safety_violation",
				Message: fmt.Sprintf("max_prs_per_cycle exceeded: PR #%d", pr.Number)})
		}
	}
}
