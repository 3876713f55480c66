// Package runner is the loop of `ooda run`: it schedules cycles, runs each
// one in-process through engine.RunCycle (which takes and releases the
// cycle lock, so a cron `ooda cycle` and a session never overlap), and
// applies the session rules of internal/session after each one —
// oscillation quarantine, findings, the termination judge — saving the
// session record through internal/state.
//
// It is the impure half of sessions: it reads the clock, sleeps, runs the
// completion command and the judge. Under a simulated clock (a
// *clock.Fixed, from --now) it never sleeps: it moves the clock to each
// tick, so a whole session is reproducible.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/session"
	"github.com/ooda-loop/ooda/internal/state"
)

// Options configure a session run.
type Options struct {
	// Project is the project root; ConfigPath its config.json.
	Project    string
	ConfigPath string
	// Config is the configuration as validated at the start. Each tick
	// reloads ConfigPath, so an edit takes effect at the next cycle; an
	// edit that does not validate fails that cycle only.
	Config *config.Config
	// Clock is the real clock, or a *clock.Fixed for simulated time:
	// then nothing sleeps and the clock is moved to each tick.
	Clock clock.Clock
	// Schedule says when cycles are due.
	Schedule Schedule
	// MaxCycles is the number of cycles this run may run (the session's
	// iteration limit is its current iteration plus MaxCycles); 0 for no
	// limit (--forever).
	MaxCycles int
	// UntilDone ends the run on any done_* or stopped_* verdict; without
	// it verdicts are recorded and shown, and only the limit, HALT or a
	// signal end the run.
	UntilDone bool
	// Session is the session to resume or create; "" for a new id.
	Session string
	// Unquarantine are targets whose quarantine is lifted at the start.
	Unquarantine []string
	Registry     *act.Registry
	Forge        forge.Forge
	// Runner runs the completion command and the judge (default: the
	// real one).
	Runner proc.Runner
	// Out receives the engine's progress lines and the session's own.
	Out io.Writer
	// OnTick, when set, is called before each cycle (for a progress
	// display).
	OnTick func(Tick)
	// AfterTick, when set, is called after each tick, the record saved.
	AfterTick func(Tick, *state.Session)
	// Card, when set, is called after each cycle that ran (Step 7: its
	// Cycle Card), before the session judges it, with the configuration
	// the cycle ran with.
	Card func(cfg *config.Config, res engine.Result)
	// AfterAct, when set, is passed to each cycle (engine.Options.AfterAct)
	// with the configuration the cycle runs with.
	AfterAct func(cfg *config.Config)
	// Jitter is the random delay added to a real-time tick, at most its
	// argument; default uniform. It is never applied to simulated time.
	Jitter func(max time.Duration) time.Duration
}

// Tick is one scheduled cycle of a session.
type Tick struct {
	// N counts the ticks of this run from 1.
	N int
	// Session is the session's id.
	Session string
	// Iteration is the iteration this cycle would be if it is recorded;
	// Max the session's limit (0: none).
	Iteration int
	Max       int
	// At is the instant the cycle runs as.
	At time.Time
}

// Summary is how a run ended.
type Summary struct {
	// Record is the session's record as last saved.
	Record state.Session
	// Resumed says the session existed before this run.
	Resumed bool
	// Cycles are the cycles this run ran: those recorded (each an
	// iteration) and those that failed. Skips that only wait (too soon,
	// locked) are not counted.
	Cycles int
	// Iterations are the iterations this run added.
	Iterations int
	// StopReason is the session's stop reason; Reason says why, in
	// words (the verdict's reason, or what stopped the run).
	StopReason string
	Reason     string
	// Started and Ended are the instants (of the run's clock) the run
	// started and ended.
	Started, Ended time.Time
}

// Halted reports whether the run ended on HALT (exit 3).
func (s Summary) Halted() bool { return s.StopReason == session.StoppedHalted }

// UsageError is a session id or a target that cannot be used: the
// caller's mistake, not the project's.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// haltPoll is how often a real-time wait looks for the HALT file, so a
// HALT created between two cycles ends the session at once rather than
// at the next tick.
const haltPoll = 2 * time.Second

// maxJitter bounds the jitter of a real-time tick: a tenth of the
// interval, at most this.
const maxJitter = 30 * time.Second

// run is one session run in progress.
type run struct {
	o    Options
	root string
	cfg  *config.Config
	p    session.Params
	rec  state.Session
	sim  *clock.Fixed
	sum  Summary
}

// Run runs a session until its limit, a verdict (with UntilDone), HALT or
// the end of ctx (a signal), and returns how it ended. An error is a
// session that could not start or whose record cannot be written; a cycle
// that fails is a warning, and the session goes on at the next tick.
func Run(ctx context.Context, o Options) (Summary, error) {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Runner == nil {
		o.Runner = proc.Exec{}
	}
	if o.Jitter == nil {
		o.Jitter = func(m time.Duration) time.Duration {
			if m <= 0 {
				return 0
			}
			return rand.N(m)
		}
	}
	if o.Schedule == nil {
		return Summary{}, errors.New("no schedule")
	}
	root, err := filepath.Abs(o.Project)
	if err != nil {
		return Summary{}, err
	}
	if o.ConfigPath == "" {
		o.ConfigPath = filepath.Join(root, "config.json")
	}
	cfg := o.Config
	if cfg == nil {
		if cfg, err = config.LoadProject(o.ConfigPath, root); err != nil {
			return Summary{}, err
		}
	}
	r := &run{o: o, root: root, cfg: cfg, p: session.ParamsFrom(cfg.Session)}
	r.sim, _ = o.Clock.(*clock.Fixed)
	if err := r.start(); err != nil {
		return r.sum, err
	}
	err = r.loop(ctx)
	r.sum.Record = r.rec
	r.sum.StopReason = r.rec.StopReason
	r.sum.Ended = o.Clock.Now().UTC()
	return r.sum, err
}

func (r *run) store() *state.Store {
	return state.ForConfig(r.root, r.cfg)
}

func (r *run) printf(format string, a ...any) {
	fmt.Fprintf(r.o.Out, format+"\n", safetext.Args(a...)...)
}

// start loads or creates the session record, lifts the quarantines asked
// for, and saves it.
func (r *run) start() error {
	now := r.o.Clock.Now().UTC()
	r.sum.Started = now
	st := r.store()
	id := r.o.Session
	if id != "" {
		if err := state.CheckSessionID(id); err != nil {
			return &UsageError{fmt.Errorf("--session: %w", err)}
		}
		rec, found, warns, err := st.LoadSession(id)
		for _, w := range warns {
			r.printf("[WARN] %s", w)
		}
		if err != nil {
			return err
		}
		if found {
			r.rec, r.sum.Resumed = rec, true
		}
	} else {
		var err error
		if id, err = st.NewSessionID(now); err != nil {
			return err
		}
	}
	for _, t := range r.o.Unquarantine {
		if t == "" || len(t) > 300 || strings.ContainsFunc(t, safetext.Unsafe) {
			return &UsageError{fmt.Errorf("--unquarantine %q: not a domain name or a goal id", t)}
		}
	}
	limit := r.o.MaxCycles
	if r.sum.Resumed {
		if limit > 0 {
			limit += r.rec.Iteration
		}
		prev := r.rec.Status
		session.Resume(&r.rec, now, limit)
		r.printf("[Run] Session %s resumed at iteration %d (it was %s); %s.", id, r.rec.Iteration, prev, r.limitText())
	} else {
		fs, _ := r.findings(st)
		r.rec = session.New(id, now, limit, fs)
		r.printf("[Run] Session %s started: %s, %s; %d finding(s) to start with.", id, r.limitText(), r.o.Schedule, len(fs))
	}
	if r.sim != nil {
		r.printf("[Run] Simulated time from %s: no waiting between cycles.", state.FormatTime(now))
	}
	// The engine's minimum interval wins over a shorter schedule: say so,
	// or "every 10s" reads as a promise the cycles do not keep.
	if m := r.cfg.Safety.MinCycleIntervalMin; m > 0 && m*float64(time.Minute) < math.MaxInt64 {
		if minGap := time.Duration(m * float64(time.Minute)); r.o.Schedule.Interval() < minGap {
			r.printf("[Run] safety.min_cycle_interval_minutes is %g: a cycle runs at most every %s, not %s.", m, minGap, r.o.Schedule)
		}
	}
	for _, t := range r.o.Unquarantine {
		if session.Unquarantine(&r.rec, t) {
			r.printf("[Run] %s is no longer quarantined in session %s: it can be selected again.", t, id)
		} else {
			r.printf("[Run] %s is not quarantined in session %s; nothing to lift.", t, id)
		}
	}
	if q := r.rec.Quarantined; len(q) > 0 {
		r.printf("[Run] Quarantined in this session: %s.", strings.Join(q, ", "))
	}
	if r.cfg.Session.Completion != "" && len(r.cfg.Judge.Command) == 0 {
		r.printf("[WARN] config.json: session.completion is set but judge.command is not: the condition cannot be judged, so it never completes the session (configure a judge, or use session.completion_command).")
	}
	if err := st.SaveSession(r.rec); err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	return nil
}

func (r *run) limitText() string {
	if r.rec.MaxIterations == 0 {
		return "no cycle limit"
	}
	if r.rec.Iteration > 0 {
		return fmt.Sprintf("up to %d more cycle(s) (to iteration %d)", r.rec.MaxIterations-r.rec.Iteration, r.rec.MaxIterations)
	}
	return fmt.Sprintf("up to %d cycle(s)", r.rec.MaxIterations)
}

// loop runs the ticks until the session ends.
func (r *run) loop(ctx context.Context) error {
	next := r.o.Schedule.First(r.o.Clock.Now().UTC())
	for n := 1; ; n++ {
		due, halted := r.wait(ctx, next)
		if ctx.Err() != nil {
			return r.finish(session.StoppedSignal, "a signal stopped the session between cycles")
		}
		if halted {
			r.printf("[HALT] The HALT file appeared while the session waited for its next cycle.")
			return r.finish(session.StoppedHalted, "the HALT file appeared between cycles (ooda resume removes it)")
		}
		ended, nextAct, err := r.tick(ctx, n, due)
		if r.o.AfterTick != nil {
			rec := r.rec
			r.o.AfterTick(Tick{N: n, Session: rec.ID, Iteration: rec.Iteration, Max: rec.MaxIterations, At: due}, &rec)
		}
		if err != nil || ended {
			return err
		}
		if r.o.MaxCycles > 0 && r.sum.Cycles >= r.o.MaxCycles {
			// The last cycles failed, so the judge did not see the limit.
			return r.finish(session.StoppedMaxIterations, fmt.Sprintf("%d cycle(s) run, the limit", r.sum.Cycles))
		}
		next = r.after(due, nextAct)
	}
}

// after is the next tick after the one due at due: the schedule's, never
// before the engine's next instant, and never in the past (a cycle that
// outlasted the interval is followed by the next one at once, or at the
// cron's next instant).
func (r *run) after(due, nextAct time.Time) time.Time {
	next := r.o.Schedule.Next(due)
	now := r.o.Clock.Now().UTC()
	if next.Before(now) {
		next = now
		if _, isCron := r.o.Schedule.(*Cron); isCron {
			next = r.o.Schedule.Next(now)
		}
	}
	if nextAct.After(next) {
		next = nextAct
	}
	if r.sim == nil {
		next = next.Add(r.o.Jitter(min(r.o.Schedule.Interval()/10, maxJitter)))
	}
	return next
}

// wait waits until at: a simulated clock is moved there; the real one is
// slept on, looking for the HALT file now and then. It returns the
// instant the tick runs as, and whether HALT appeared.
func (r *run) wait(ctx context.Context, at time.Time) (time.Time, bool) {
	if r.sim != nil {
		if at.After(r.sim.Now()) {
			r.sim.Set(at)
		}
		return r.sim.Now(), false
	}
	st := r.store()
	for {
		d := time.Until(at)
		if d <= 0 || ctx.Err() != nil {
			return r.o.Clock.Now().UTC(), false
		}
		if ok, _ := st.HaltExists(r.cfg.Safety.HaltFile); ok {
			return r.o.Clock.Now().UTC(), true
		}
		t := time.NewTimer(min(d, haltPoll))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// isWaitSkip reports a skip that only waits: the cycle ran nothing and
// recorded nothing, so it is not an iteration.
func isWaitSkip(res engine.Result) bool {
	return res.Status == engine.StatusSkipped &&
		(res.Reason == engine.ReasonLocked || res.Reason == engine.ReasonTooSoon || res.Reason == engine.ReasonInterrupted)
}

// tick runs one cycle and what follows it. It reports whether the session
// ended, and the engine's next instant.
func (r *run) tick(ctx context.Context, n int, at time.Time) (ended bool, nextAct time.Time, err error) {
	if cfg, cerr := config.LoadProject(r.o.ConfigPath, r.root); cerr != nil {
		r.printf("[WARN] Cycle not run: %s; the session goes on at the next tick.", safetext.Error(cerr))
		r.sum.Cycles++
		return false, time.Time{}, nil
	} else {
		r.cfg, r.p = cfg, session.ParamsFrom(cfg.Session)
	}
	if r.o.OnTick != nil {
		r.o.OnTick(Tick{N: n, Session: r.rec.ID, Iteration: r.rec.Iteration + 1, Max: r.rec.MaxIterations, At: at})
	}
	r.printf("[Run] Session %s, tick %d at %s: iteration %d%s.", r.rec.ID, n, state.FormatTime(at), r.rec.Iteration+1, r.ofMax())
	var afterAct func()
	if r.o.AfterAct != nil {
		cfg := r.cfg
		afterAct = func() { r.o.AfterAct(cfg) }
	}
	res, cerr := engine.RunCycle(ctx, engine.Options{Project: r.root, ConfigPath: r.o.ConfigPath, Config: r.cfg,
		Clock: r.o.Clock, Registry: r.o.Registry, Forge: r.o.Forge, Out: r.o.Out, Quarantined: session.Quarantined(r.rec), AfterAct: afterAct})
	if !res.At.IsZero() {
		at = res.At
	}
	switch {
	case ctx.Err() != nil:
		// The cycle the signal stopped is the engine's to record (an
		// interrupted skill); it is not the target's failure, so it is
		// neither a ledger line nor an iteration.
		return true, time.Time{}, r.finish(session.StoppedSignal, "a signal stopped the session")
	case res.Status == engine.StatusHalted:
		// HALT before the cycle's work, during its skill, or the HALT
		// file a corrupt cost ledger creates: nothing of the target's to
		// record.
		why := "the HALT file exists (ooda resume removes it)"
		if res.HaltCreated {
			why = "the cycle created the HALT file (" + res.Reason + ")"
		}
		return true, time.Time{}, r.finish(session.StoppedHalted, why)
	case cerr != nil || res.Status == engine.StatusError:
		r.sum.Cycles++
		why := "status error"
		if cerr != nil {
			why = safetext.Error(cerr)
		}
		r.printf("[WARN] The cycle failed (%s); the session goes on at the next tick.", why)
		if res.HaltCreated {
			return true, time.Time{}, r.finish(session.StoppedHalted, "a breaker created the HALT file")
		}
		return false, res.NextActAt, r.save()
	case isWaitSkip(res):
		r.printf("[Run] Not an iteration (%s): nothing ran; the session waits for its next tick.", res.Reason)
		return false, res.NextActAt, nil
	}
	r.sum.Cycles++
	r.sum.Iterations++
	if r.o.Card != nil && res.Status == engine.StatusCompleted {
		r.o.Card(r.cfg, res)
	}
	v := r.judgeCycle(ctx, res, at)
	switch {
	case res.HaltCreated:
		return true, time.Time{}, r.finish(session.StoppedHalted, "a breaker created the HALT file after this cycle (ooda resume removes it)")
	case v.Ends(r.o.UntilDone):
		return true, time.Time{}, r.finish(v.StopReason, v.Reason)
	}
	// The engine's NextActAt (last_cycle plus the minimum interval), so
	// that the next tick is not a too-soon skip.
	return false, res.NextActAt, r.save()
}

func (r *run) ofMax() string {
	if r.rec.MaxIterations == 0 {
		return ""
	}
	return " of " + strconv.Itoa(r.rec.MaxIterations)
}

// judgeCycle writes a recorded cycle into the session: its ledger lines
// (and any quarantine), the findings after it, the completion command and
// the judge, then the verdict.
func (r *run) judgeCycle(ctx context.Context, res engine.Result, at time.Time) session.Verdict {
	st := r.store()
	out := session.CycleOutcome{Cycle: res.Cycle, Domain: res.Domain, ResultType: res.ResultType, Quality: res.Quality,
		Idle: res.Reason == decide.ReasonQuarantined, Goals: GoalReadings(res.Goals)}
	if out.Idle && res.Decision != nil {
		out.IdleTarget = res.Decision.QuarantineBlocked
		if out.IdleTarget == "" {
			out.IdleTarget = session.IdleTarget(res.Decision)
		}
	}
	rd := session.Record(&r.rec, r.p, out, at)
	if err := st.AppendCycleHistory(rd.Lines); err != nil {
		r.printf("[WARN] %s: %s", state.CycleHistoryFile, safetext.Error(err))
	}
	for _, w := range rd.Warnings {
		r.printf("[WARN] %s", w)
	}
	for _, t := range rd.Quarantined {
		n := r.rec.Targets[t].Transitions
		r.printf("[Run] QUARANTINED %s: %d improved→fail transitions in session %s; it is not selected again in this session (to lift it: ooda run --session %s --unquarantine %s).", t, n, r.rec.ID, r.rec.ID, t)
	}
	fs, goals := r.findings(st)
	in := session.JudgeInput{Cycle: res.Cycle, Findings: fs, Goals: goals}
	in.GoalsImproved, in.GoalsRegressed = session.GoalMoves(rd.Lines)
	if argv := r.cfg.Session.CompletionCommand; len(argv) > 0 {
		in.Command = r.completionCommand(ctx, argv, at)
	}
	if cond := strings.TrimSpace(r.cfg.Session.Completion); cond != "" && len(r.cfg.Judge.Command) > 0 {
		j, jerr := judge.New(r.cfg.Judge, r.root, r.o.Runner)
		if jerr != nil {
			r.printf("[WARN] judge: %s", safetext.Error(jerr))
		}
		j.HaltFile = st.Path(r.cfg.Safety.HaltFile)
		// The judge is asked before Judge counts this iteration: its
		// facts name the iteration being judged.
		next := r.rec
		next.Iteration++
		resp := j.Ask(ctx, session.CompletionRequest(cond, next, fs, goals))
		ans := session.ParseCompletion(resp)
		if ans.Note != "" && resp.Error != "" {
			r.printf("[WARN] judge (completion): %s; the session continues.", resp.Error)
		}
		in.Judge = &ans
	}
	v := session.Judge(&r.rec, r.p, in, at)
	for _, id := range v.Deferred {
		r.printf("[Run] Deferred %s: %s (present for %d iterations without resolution; no longer counted as remaining work).", id, r.rec.Findings[id].Summary, r.p.StagnationWindow)
	}
	r.printf("%s", v.ResultLine())
	return v
}

// completionTail is how much of the completion command's output is kept:
// it is not shown, and must cost no memory.
const completionTail = 4 << 10

// completionCommand runs session.completion_command in the project root,
// with the skills' environment (no credentials of ooda's) and OODA_NOW,
// OODA_SESSION and OODA_ITERATION, bounded by test_timeout_seconds.
func (r *run) completionCommand(ctx context.Context, argv []string, at time.Time) *session.CommandOutcome {
	timeout := time.Duration(r.cfg.TestTimeoutSeconds * float64(time.Second))
	if timeout <= 0 || timeout > 24*time.Hour {
		timeout = 5 * time.Minute
	}
	env := secret.ChildEnv(os.Environ(), nil, false)
	env = append(env, "OODA_NOW="+state.FormatTime(at), "OODA_SESSION="+r.rec.ID, "OODA_ITERATION="+strconv.Itoa(r.rec.Iteration+1))
	res := r.o.Runner.Run(ctx, proc.Spec{Argv: argv, Dir: r.root, Env: env, Timeout: timeout,
		Output: proc.NewTailBuffer(completionTail), HaltFile: r.store().Path(r.cfg.Safety.HaltFile)})
	out := &session.CommandOutcome{ExitCode: res.ExitCode}
	switch {
	case res.StartErr != nil:
		out.Err = "cannot be started: " + res.StartErr.Error()
	case res.TimedOut:
		out.Err = "timed out after " + timeout.String()
	case res.Halted:
		out.Err = "stopped: HALT file appeared"
	case res.Canceled:
		out.Err = "stopped: interrupted"
	}
	if out.Err != "" {
		r.printf("[WARN] session.completion_command %s; the condition is not met.", out.Err)
	}
	return out
}

// findings reads what remains to be done — action_queue.json,
// skill_gaps.json and the state files of the scoreable domains — and
// goals.json. Only these files are read, never the history.
func (r *run) findings(st *state.Store) ([]session.Finding, state.Goals) {
	snap, _ := st.LoadFiles(state.ActionQueueFile, state.SkillGapsFile, state.GoalsFile)
	domains := map[string]state.DomainState{}
	for _, d := range r.cfg.Domains {
		if !d.Scoreable() || !d.IsEnabled() || d.StateFile == "" {
			continue
		}
		if ds, err := st.ReadDomainState(d.StateFile); err == nil && ds.Found {
			// Only the alerts are needed; the raw bytes are not kept.
			domains[d.Name] = state.DomainState{Alerts: ds.Alerts}
		}
	}
	var goals state.Goals
	if snap != nil {
		goals = snap.Goals
	}
	return session.CollectFindings(snap, domains), goals
}

// finish ends the session with a stop reason and saves it.
func (r *run) finish(reason, why string) error {
	now := r.o.Clock.Now().UTC()
	session.Finish(&r.rec, reason, now)
	r.sum.Reason = why
	return r.save()
}

// save writes the record, after every tick: a crash loses at most the
// cycle in flight.
func (r *run) save() error {
	if err := r.store().SaveSession(r.rec); err != nil {
		return fmt.Errorf("session %s: %w", r.rec.ID, err)
	}
	return nil
}

// GoalReadings are a cycle's goal readings for session.Record, from the
// engine's own view of the goals (no goals.json read): every goal that
// was active when the cycle started — still active, or completed by it —
// with its progress before and after, and why its metric failed.
func GoalReadings(gs []engine.GoalResult) []session.GoalReading {
	seen := map[string]bool{}
	var out []session.GoalReading
	for _, g := range gs {
		if g.ID == "" || g.StatusBefore != "active" || seen[g.ID] || len(out) >= state.MaxSessionTargets {
			continue
		}
		seen[g.ID] = true
		p, prev := g.Progress, g.ProgressBefore
		rd := session.GoalReading{ID: g.ID, Progress: &p, Previous: &prev}
		if g.MetricFailed {
			rd.MetricErr = g.MetricError
			if rd.MetricErr == "" {
				rd.MetricErr = "failed"
			}
		}
		out = append(out, rd)
	}
	return out
}
