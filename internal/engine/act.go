package engine

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// execute is Step 4-B for the primary skill: resolve its executor, run it
// with the cycle's context, keep its log, read its report.
func (c *cycle) execute(ctx context.Context, f *record.Facts, obs *observe.Observation, w *decide.Option) {
	cfg := c.cfg
	f.Action, f.Executed = "execute", true
	skill := w.Skill
	var before state.DomainState
	var stateFile string
	if dc, ok := cfg.Domains.Get(w.Domain); ok {
		stateFile = dc.StateFile
		before, _ = c.store.ReadDomainState(stateFile)
	}
	ct, cerr := contract.Load(c.store.Root, cfg, skill)
	if cerr != nil {
		c.printf("[WARN] contract of %s: %v (using defaults)", skill, cerr)
	}
	c.recordDomainRun(w.Domain)
	exec, err := c.opts.Registry.Resolve(cfg, skill)
	if err != nil {
		c.printf("[Act] %s: %v", skill, err)
		c.skillFailed(f, skill, err.Error())
		return
	}
	if err := c.store.PrepareRunsDir(c.res.Cycle, skill); err != nil {
		c.skillFailed(f, skill, err.Error())
		return
	}
	// Only a skill that starts costs anything.
	f.CostUSD = ct.Cost()
	c.printf("[Act] %s starting... (%s)", skill, exec.Describe())
	tail := proc.NewTailBuffer(proc.LogTailSize)
	resp := exec.Execute(ctx, act.Request{
		Skill: skill, Domain: w.Domain, Cycle: c.res.Cycle, ProjectDir: c.store.Root, Now: c.now,
		Env: c.envFor(obs, w.Domain, skill, w.Confidence), Timeout: cfg.Safety.LockTimeout(),
		HaltFile: c.store.Path(cfg.Safety.HaltFile), Output: tail,
		OnStart: func(pgid int) {
			if err := c.lock.SetSkillGroup(pgid); err != nil {
				c.printf("[WARN] could not record the skill's process group in the lock: %v", err)
			}
		},
	})
	logData := tail.Bytes()
	if tail.Truncated() {
		logData = append([]byte("[output truncated to the last 1 MiB]\n"), logData...)
	}
	if err := c.store.SaveRunLog(c.res.Cycle, skill, logData); err != nil {
		c.printf("[WARN] could not keep the run log: %v", err)
	}
	if !resp.OK {
		if resp.Halted {
			// An operator's stop is not the skill's failure: no gap, and
			// the silent-failure breaker is not advanced.
			c.printf("[HALT] HALT file appeared during %s; stopped it. Partial execution logged.", skill)
			f.Reason, f.Result, f.Error = ReasonHaltDuringExecute, "error", resp.Error
			c.res.Status, c.res.Reason = StatusHalted, ReasonHaltDuringExecute
			c.res.SkillError = resp.Error
			return
		}
		if resp.Canceled {
			// Likewise an interrupted cycle (SIGINT/SIGTERM to ooda).
			c.printf("[Act] %s stopped: the cycle was interrupted. Partial execution logged.", skill)
			f.Reason, f.Result, f.Error = ReasonInterrupted, "error", resp.Error
			c.res.Reason = ReasonInterrupted
			c.res.SkillError = resp.Error
			return
		}
		if resp.TimedOut {
			c.printf("[Act] %s. Treating as error.", resp.Error)
		} else {
			c.printf("[Act] %s failed: %s", skill, resp.Error)
		}
		c.skillFailed(f, skill, resp.Error)
		return
	}
	c.printf("[Act] %s completed. (elapsed: %s)", skill, resp.Elapsed.Round(time.Millisecond))
	c.snap.State.ConsecutiveSilentFailures = 0
	f.Result = "success"

	raw, rerr := c.store.ReadReport(c.res.Cycle, skill)
	var rep *act.Report
	if rerr == nil {
		rep, rerr = act.ParseReport(raw)
	}
	if rerr != nil {
		c.printf("[WARN] %s: ignoring its report: %v", skill, rerr)
		c.addGap("report_invalid_"+config.SkillKey(skill), "report_error", rerr.Error())
	}
	var after state.DomainState
	if stateFile != "" {
		after, _ = c.store.ReadDomainState(stateFile)
	}
	changed := after.Found && (!before.Found || string(before.Bytes) != string(after.Bytes))
	newAlerts := !reflect.DeepEqual(urgentSet(before.Alerts), urgentSet(after.Alerts)) && len(urgentSet(after.Alerts)) > 0
	if rep != nil {
		if rep.CostUSD != nil {
			f.CostUSD = *rep.CostUSD
		}
		if rep.PRNumber != nil && rep.CreatedPR() {
			n := *rep.PRNumber
			f.PRNumber = &n
			tier := 3
			f.RiskTier = &tier
		}
		f.HadOutput = rep.HadOutputDefault(changed || newAlerts)
	} else {
		f.HadOutput = changed || newAlerts
	}
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
// cycle still completes Step 6 so the failure is recorded.
func (c *cycle) skillFailed(f *record.Facts, skill, msg string) {
	f.Result, f.Error = "error", msg
	c.res.SkillError = msg
	c.addGap("execution_error_"+config.SkillKey(skill), "execution_failure", msg)
	st := &c.snap.State
	st.ConsecutiveSilentFailures++
	if max := c.cfg.Safety.MaxSilentFailures; max > 0 && st.ConsecutiveSilentFailures >= max {
		reason := fmt.Sprintf("%d consecutive skill executions failed. Unattended operation paused for human review. Delete this file to resume.", st.ConsecutiveSilentFailures)
		if err := c.store.WriteHalt(c.cfg.Safety.HaltFile, reason, c.now); err != nil {
			c.printf("[WARN] could not create the HALT file: %v", err)
			return
		}
		c.res.HaltCreated = true
		c.printf("[HALT] %s", reason)
	}
}

// recordDomainRun keeps the engine's own record of when it ran a domain's
// skill, so a skill that never writes its state file cannot win forever.
func (c *cycle) recordDomainRun(domain string) {
	st := &c.snap.State
	if st.DomainLastRun == nil {
		st.DomainLastRun = map[string]string{}
	}
	st.DomainLastRun[domain] = state.FormatTime(c.now)
}
