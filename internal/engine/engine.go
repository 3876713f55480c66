// Package engine wires the steps of one OODA cycle together: the safety
// rails of Step 0, Observe, Orient, Decide, Act, and the record of Step 6.
//
// RunCycle is callable in-process, many times, with the clock, the skill
// executors and the output injected: the CLI is one caller, a session loop
// and the simulator are others. The engine owns the lock and every error
// path: whatever happens after the lock is taken, it is released.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/observe"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/perfstat"
	"github.com/ooda-loop/ooda/internal/prefault"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// Statuses of a cycle (CLI.md).
const (
	StatusCompleted = "completed"
	StatusDryRun    = "dry_run"
	StatusSkipped   = "skipped"
	StatusHalted    = "halted"
	StatusError     = "error"
)

// Reason codes beyond Decide's.
const (
	ReasonHalt              = "halt"
	ReasonLocked            = "locked"
	ReasonTooSoon           = "too_soon"
	ReasonFirstCycle        = "first_cycle"
	ReasonNotAllowlisted    = "skill_not_in_allowlist"
	ReasonCorruptLedger     = "corrupt_cost_ledger"
	ReasonHaltDuringExecute = "halt_during_execution"
	ReasonInterrupted       = "interrupted"
)

// heapPerDomain is about what a cycle process allocates for each
// configured domain: 8.2 MiB for 1,000 domains at cycle 28 of
// scripts/bench.sh's figure d (docs/benchmarks.md, ninth round).
const heapPerDomain = 8 << 10

// After its state is loaded, a cycle process allocates about
// heapAfterLoad plus heapPerStateByte for every byte of the evolve files
// it read (decoded, changed, encoded again): 0.7–0.8 MB at cycle 10 of
// scripts/bench.sh's figure e (29 KB of state), 1.3–1.9 MB at cycle
// 2,000 (171 KB; docs/benchmarks.md, eleventh round).
const (
	heapAfterLoad    = 768 << 10
	heapPerStateByte = 8
)

// Options configure one cycle.
type Options struct {
	// Project is the project root; ConfigPath defaults to Project/config.json.
	Project    string
	ConfigPath string
	// Config, when set, is used instead of loading ConfigPath.
	Config   *config.Config
	Clock    clock.Clock
	DryRun   bool
	Registry *act.Registry
	// Forge is the source of pull requests; nil means none (a later
	// release builds it from config.forge when unset).
	Forge forge.Forge
	// Runner starts the processes the engine itself needs (git); skills
	// run through their executors. Default: the real runner.
	Runner proc.Runner
	// AfterAct, when set, is called once the skill (or chain) of a cycle
	// that acts has ended, before Step 5: from then on only the cycle's
	// own recording writes the state, so a reader of what it does not
	// write (the card's lens changelogs) can start.
	AfterAct func()
	// Out receives the human-readable progress lines.
	Out    io.Writer
	Logger *slog.Logger
	// Quarantined are the targets a session has quarantined for
	// oscillation (SPEC-NOTES §8), domain names and goal ids alike
	// (including decide.ImplementationDomain); nil outside a session. A
	// quarantined domain cannot win Decide (`excluded: "quarantined"`), and
	// when it would have won and nothing else can, the cycle is skipped
	// with reason decide.ReasonQuarantined. A quarantined goal counts
	// neither toward a domain's goal contribution (3-C) nor toward "all
	// goals met" (3-E2). A critical alert in a quarantined domain does not
	// bypass the minimum cycle interval.
	Quarantined map[string]bool
}

// ProjectError is a project whose layout ooda cannot use safely, such as
// a state directory that leads out of the project. Like a configuration
// error, it is for the user to repair (exit 2).
type ProjectError struct {
	Path string
	Err  error
}

func (e *ProjectError) Error() string {
	return fmt.Sprintf("%s leads out of the project (a symlink that leaves it, or an absolute one): ooda keeps its state only inside the project; replace it with a directory", e.Path)
}

func (e *ProjectError) Unwrap() error { return e.Err }

// LockLostError says a cycle's lock was taken by another process before
// the cycle recorded anything, so it recorded nothing.
type LockLostError struct {
	Cycle int
	// Holder is the lock's holder now (zero when the lock is gone).
	Holder state.LockInfo
}

func (e *LockLostError) Error() string {
	who := "removed by another process"
	if e.Holder.PID > 0 {
		// The lock file is anyone's to write: its text is escaped and cut.
		who = fmt.Sprintf("taken by pid %d on %s (started at %s)", e.Holder.PID, safetext.Escape(orient.Truncate(e.Holder.Host, 100)), safetext.Escape(orient.Truncate(e.Holder.StartedAt, 40)))
	}
	return fmt.Sprintf("cycle #%d not recorded: its lock was %s, which judged it stale (older than safety.lock_timeout_minutes by that process's clock: check that cycles of this project do not run with --now or OODA_NOW far from each other's); that process recovers this cycle", e.Cycle, who)
}

// Result is what a cycle did.
type Result struct {
	Status         string
	Reason         string
	Cycle          int
	Decision       *decide.Decision
	Result         string
	ResultType     string
	Quality        *float64
	PRNumber       *int
	HaltCreated    bool
	Notes          []string
	Elapsed        time.Duration
	Written        []string
	WinnerChain    []string
	SkillError     string
	StateCorrupted []string
	// Committed and Pushed report Step 6-D.
	Committed bool
	Pushed    bool
	// AutoMerged and RolledBack report 4-C and 4-C2.
	AutoMerged bool
	RolledBack bool
	// Summary is the primary skill's report summary, on one line and
	// bounded (act.Report.SummaryLine); "" when it gave none.
	Summary string
	// FailedSkills are the skills of this cycle, primary or chained, that
	// failed: a non-zero exit, a timeout, or no start at all. A skill an
	// operator stopped (HALT, a signal) is not among them.
	FailedSkills []string
	// NextActAt is the earliest instant the next cycle can run (and, after
	// an observe-only first cycle, act), set when a cycle was recorded or
	// skipped as too soon; zero when no interval applies. A session's
	// scheduler never ticks before it.
	NextActAt time.Time
	// At is the instant the cycle ran as (Options.Clock, UTC), the one
	// its records carry.
	At time.Time
	// Domain is the domain whose skill this cycle ran (its primary skill;
	// chained skills are in WinnerChain), "" when none ran: a skip, an
	// observe-only first cycle, a skill blocked by the allowlist, a dry
	// run. Decision.Winner is what Decide selected, run or not.
	Domain string
	// Goals are goals.json's active and completed goals as this cycle saw
	// them, in file order, with their progress before and after its goal
	// measurements (2-C, and 5-D's re-measure); nil when the cycle ended
	// before it loaded the state (HALT, the lock, a configuration error).
	Goals []GoalResult
	// Recorded holds what Step 6 wrote to state.json, confidence.json,
	// memos.json and cost_ledger.json, as written, for the Cycle Card
	// (present.Recorded); nil unless state.json and every file of the
	// record were written.
	Recorded *Recorded
}

// Recorded is what a completed cycle wrote to the files its Cycle Card
// reads.
type Recorded struct {
	// Entry is the decision-log entry appended to state.json.
	Entry      *state.DecisionEntry
	Confidence *state.Confidence
	Memos      *state.Memos
	CostLedger *state.CostLedger
}

// GoalResult is one goal across a cycle: what a session's ledger and
// completion test need, without reading goals.json again.
type GoalResult struct {
	// ID is the goal's id in goals.json.
	ID string
	// StatusBefore is the goal's status as the cycle loaded it; Status is
	// the status it recorded ("completed" once a measurement reached the
	// target). A goal is one of the cycle's active goals when StatusBefore
	// is "active".
	StatusBefore string
	Status       string
	// ProgressBefore and Progress are its progress (0..1) as loaded and
	// after the cycle's measurements; equal when nothing was measured.
	ProgressBefore float64
	Progress       float64
	// Measured reports that its metric command ran this cycle (never in
	// a dry run, a skip before Orient, or for a goal without one).
	Measured bool
	// MetricFailed reports that its metric command ran and failed every
	// time (could not start, timed out, exited non-zero, printed no
	// number): Progress is the previous one, kept. MetricError says why
	// (the last failure), with paths relative to the project.
	MetricFailed bool
	MetricError  string
	// Quarantined reports that the session quarantined the goal
	// (Options.Quarantined): it counted toward neither goal contribution
	// nor "all goals met".
	Quarantined bool
}

// Exit codes of a cycle (CLI.md).
const (
	ExitOK          = 0
	ExitInternal    = 1
	ExitHalted      = 3
	ExitSkillFailed = 4
)

// ExitCode maps a result to the CLI exit code: 0 success or skip, 1 an
// internal error, 3 halted (it wins over the rest), 4 the cycle was
// recorded but a skill of it failed, so cron and CI notice before the
// breaker halts.
func (r Result) ExitCode() int {
	switch {
	case r.Status == StatusHalted || r.HaltCreated:
		return ExitHalted
	case r.Status == StatusError:
		return ExitInternal
	case len(r.FailedSkills) > 0:
		return ExitSkillFailed
	}
	return ExitOK
}

type cycle struct {
	opts   Options
	cfg    *config.Config
	store  *state.Store
	now    time.Time
	start  time.Time
	out    io.Writer
	log    *slog.Logger
	res    *Result
	snap   *state.Snapshot
	lock   *state.Lock
	gaps   []gap
	memo   []state.Memo
	phases map[string]string
	ctx    context.Context
	// stopBeat ends the lock heartbeat.
	stopBeat        func()
	obs             *observe.Observation
	ori             orient.Orientation
	forge           forge.Forge
	fview           forgeView
	outc            orient.OutcomeResult
	patterns        orient.Patterns
	recall          orient.Recall
	deps            map[string]orient.Dependency
	queueChanged    bool
	cascadesChanged bool
	goalsChanged    bool
	primary         skillRun
	// runLog is the primary run's log while it is being made durable
	// (saveRunLogAsync): Step 6 waits for it before it makes anything of
	// the record durable, and run before it returns, whatever the path.
	runLog *background
	// actionsAdded and actionsResolved feed the 6-C5 counters.
	actionsAdded       int
	memoWritten        bool
	actionsResolved    int
	reflectionsChanged bool
	episodesChanged    bool
	principlesChanged  bool
	lensChanges        []state.LensChange
	judge              *judge.Judge
	notifier           *notify.Notifier
	inProgressAtStart  map[string]bool
	// domainTempsRemoved is whether this cycle has cleaned the domains'
	// directories of temporary files (removeTempFiles).
	domainTempsRemoved bool

	restoredConfidence bool
	restoredQueue      bool
	// gapsTrimmed: skill_gaps.json held more than reflect.GapsKept gaps
	// and was cut, so it is written even when this cycle found none.
	gapsTrimmed bool
	// crashRecovered: this cycle reuses the number of one that was killed,
	// which may already have counted itself in metrics.json.
	crashRecovered bool
	// prRun is the skill run that opened this cycle's PR.
	prRun skillRun
	// prsCreated counts the PRs opened this cycle (4-C), which the chain
	// gate checks against max_prs_per_cycle.
	prsCreated int
	// failuresAtStart is consecutive_silent_failures as loaded, before a
	// successful skill reset it; failureCounted says this cycle already
	// counted a failure.
	failuresAtStart int
	failureCounted  bool
	// chainStopped is the first chain step that did not run and why, for
	// the decision log's chain_stopped_at and stop_reason.
	chainStopped struct{ at, reason string }
	// createdPRs are the PRs this cycle opened, as the forge lists them
	// (number, title, branch), for the decision log's prs_created.
	createdPRs []state.CreatedPR
	// ownCommits are the commits this cycle made on the branch (an
	// auto-merge's squash commit, a rollback's revert): 6-D may push them.
	ownCommits []string
	// proposalsWritten are the skill proposals 5-B wrote this cycle.
	proposalsWritten []string
	// roots are the project root as given and as resolved, for recorded.
	roots []string
	// goalsBefore are the active and completed goals as loaded, goalIndex
	// their indexes in goals.json, and measures what this cycle's metric commands gave, for Result.Goals.
	goalsBefore []GoalResult
	goalIndex   []int
	measures    map[string]*goalMeasure
	// art is the artifact axis of this cycle (artifact.go).
	art artifactState
}

// goalMeasure is what a goal's metric commands gave in one cycle.
type goalMeasure struct {
	ok, failed bool
	err        string
}

// gap is one gap this cycle detected (5-A); domain is the domain it
// concerns, "" when none.
type gap struct{ name, typ, detail, domain string }

// RunCycle runs one complete cycle. A configuration problem is returned as
// a *config.Error; every other outcome, including skips and halts, is a
// Result.
func RunCycle(ctx context.Context, opts Options) (res Result, err error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Registry == nil {
		opts.Registry = act.NewRegistry()
	}
	if opts.Runner == nil {
		opts.Runner = proc.Exec{}
	}
	c := &cycle{opts: opts, out: opts.Out, log: opts.Logger.With("component", "engine"), res: &res, start: time.Now()}
	c.now = opts.Clock.Now().UTC()
	res.At = c.now
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			res.Status = StatusError
		}
		// Repairs the store made on its own (a runs/ or cycle log that was
		// not a directory or a file, moved aside) are said, never silent.
		if c.store != nil {
			c.printNotices()
		}
		if c.stopBeat != nil {
			c.stopBeat()
		}
		if c.lock != nil {
			if rerr := c.lock.Release(); rerr != nil && err == nil {
				err = rerr
			}
		}
		res.Elapsed = time.Since(c.start)
		if c.goalsBefore != nil {
			res.Goals = c.goalResults()
		}
		if c.store != nil {
			res.Written = c.store.Written()
		}
	}()
	return c.run(ctx)
}

// printf prints one progress line. Its arguments are text from outside
// (skill names, summaries, branch names, HALT reasons), so each is printed
// with known secrets masked and control characters escaped: a newline in
// a branch name cannot forge a "[Record]" line.
func (c *cycle) printf(format string, a ...any) {
	fmt.Fprintf(c.out, format+"\n", safetext.Args(a...)...)
}

// printNotices prints the repairs the store made since the last call.
func (c *cycle) printNotices() {
	for _, n := range c.store.Notices() {
		c.printf("[WARN] %s", n)
	}
}

// haltPath is the HALT file watched while a process runs. A configured
// path that resolves outside the project (config validation refuses it;
// a symlink may have appeared since) is watched where it was configured:
// anything at it still stops the process, and nothing is written there.
func (c *cycle) haltPath() string {
	if p, err := c.store.Resolve(c.cfg.Safety.HaltFile); err == nil {
		return p
	}
	return c.store.Path(c.cfg.Safety.HaltFile)
}

func (c *cycle) note(s string) { c.res.Notes = append(c.res.Notes, s) }

func (c *cycle) run(ctx context.Context) (Result, error) {
	c.ctx = ctx
	defer func() { c.awaitRunLog(c.runLog) }()
	opts := c.opts
	root := opts.Project
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return *c.res, err
	}
	c.store = state.New(abs)
	c.store.Now = func() time.Time { return c.now }
	// 0-Pre: config validation.
	cfg := opts.Config
	cfgPath := opts.ConfigPath
	if cfgPath == "" {
		cfgPath = filepath.Join(abs, "config.json")
	}
	if cfg == nil {
		cfg, err = config.LoadProject(cfgPath, abs)
		if err != nil {
			c.res.Status = StatusError
			return *c.res, err
		}
	}
	c.cfg = cfg
	perfstat.Mark("config loaded")
	// Keys the configuration does not define (a misspelt "wieght") are
	// ignored; say so before anything else, every cycle, until fixed.
	for _, w := range cfg.ShownWarnings() {
		c.printf("[WARN] %s", w)
	}
	// A skill whose program is missing would fail only when its domain
	// wins, perhaps days later: say so every cycle, until fixed. Loading
	// does not check programs (one may be installed later); stat calls are
	// cheap.
	for _, w := range cfg.SkillExecutableWarnings(cfgPath, abs) {
		c.printf("[WARN] %s", w)
	}
	// Notification variables are credentials from the start: no skill
	// sees them, and their values are masked in everything written.
	notify.RegisterSecrets(cfg.Notifications)
	// Every read is capped (safety.max_read_mib): a report or state file
	// that is huge, or a device that never ends, is refused, not read.
	c.store.MaxRead = cfg.Safety.MaxReadBytes()

	// 0-A: HALT check.
	if halted, reason := c.store.HaltExists(cfg.Safety.HaltFile); halted {
		c.printf("[HALT] Agent stopped. Reason: %s", state.HaltLine(reason))
		c.printf("Remove to resume: rm %s  (or: ooda resume)", c.fromWorkingDir(c.store.Path(cfg.Safety.HaltFile)))
		c.res.Status, c.res.Reason = StatusHalted, ReasonHalt
		return *c.res, nil
	}

	// ooda keeps its state only inside the project: an agent/state or
	// agent/state/evolve that leads out (a symlink, perhaps from a merged
	// change) is the project's layout to repair, not an internal error.
	for _, dir := range []string{filepath.Join("agent", "state"), filepath.Join("agent", "state", "evolve")} {
		if _, err := c.store.Resolve(dir); err != nil && state.IsRefused(err) {
			c.res.Status = StatusError
			return *c.res, &ProjectError{Path: dir, Err: err}
		}
	}

	// 0-B: lock (a dry run takes none).
	crashed := false
	if !opts.DryRun {
		lock, stale, err := c.store.AcquireLock(c.now, c.lockTimeout())
		var locked *state.ErrLocked
		switch {
		case errors.As(err, &locked):
			if locked.Orphaned {
				// The cycle is gone (killed); what holds the lock is the
				// skill it started, which nothing else will stop.
				c.printf("[SKIP] The cycle that holds the lock (pid %d) is gone, but its skill still runs (process group %d, lock age %dm): the lock is released when it ends or after safety.lock_timeout_minutes; to stop it now: kill -- -%d",
					locked.Holder.PID, locked.Holder.SkillPGID, int(locked.Age.Minutes()), locked.Holder.SkillPGID)
			} else {
				c.printf("[SKIP] Another evolve cycle is running (lock age %dm, pid %d).", int(locked.Age.Minutes()), locked.Holder.PID)
			}
			c.res.Status, c.res.Reason = StatusSkipped, ReasonLocked
			return *c.res, nil
		case err != nil:
			c.res.Status = StatusError
			return *c.res, err
		}
		c.lock = lock
		c.stopBeat = c.heartbeat(lock, c.lockTimeout())
		if stale != nil {
			crashed = true
			c.printf("[WARN] Stale lock detected (pid %d, age %dm, %s). Removing and recovering.", stale.Holder.PID, int(stale.Age.Minutes()), stale.Why)
			c.note("stale lock removed (" + stale.Why + ")")
			if stale.OrphanPGID > 0 {
				c.printf("[WARN] The crashed cycle's skill (process group %d) is still running; stopping it.", stale.OrphanPGID)
				proc.StopGroup(stale.OrphanPGID, proc.DefaultKillGrace)
			}
		}
	}

	// Temporary files of an atomic write that a killed process left
	// behind; safe to remove while this cycle holds the lock. The domains'
	// directories only when a cycle was killed (the stale lock here, or
	// cycle_in_progress once state.json is read): no one else writes
	// there.
	perfstat.Mark("lock taken")
	// A cycle allocates about heapPerDomain for each domain and collects
	// no garbage before it exits; at hundreds of domains that is
	// megabytes of fresh pages, mapped now in one go (prefault.HeapAhead),
	// once the cycle knows it will run: not when halted or locked out.
	prefault.HeapAhead(min(len(cfg.Domains), prefault.HeapAheadMax/heapPerDomain) * heapPerDomain)
	if !opts.DryRun {
		c.removeTempFiles(crashed)
	}

	// Load every evolve file; corrupt ones are set aside.
	snap, lerr := c.store.Load()
	var corruptLedger *state.CorruptLedgerError
	if errors.As(lerr, &corruptLedger) {
		return c.failClosedLedger(corruptLedger)
	} else if lerr != nil {
		c.res.Status = StatusError
		return *c.res, lerr
	}
	c.snap = snap
	perfstat.Mark("state loaded")
	// The heap the rest of the cycle allocates from, mapped now in one go
	// rather than a fresh page at a time (prefault.HeapFor); its size
	// bounded by what a Load may read.
	prefault.HeapFor(int(min(snap.Bytes, 64<<20)*heapPerStateByte) + heapAfterLoad)
	// Values Load did not take as written (a negative count or cost, a
	// number out of range, a duplicated key), each with the value used.
	for _, w := range snap.Warnings {
		c.printf("[WARN] %s", w)
	}
	c.inProgressAtStart = map[string]bool{}
	for _, a := range snap.ActionQueue.InProgress {
		c.inProgressAtStart[a.ID] = true
	}
	for _, cf := range snap.Corrupt {
		c.res.StateCorrupted = append(c.res.StateCorrupted, cf.File)
		if opts.DryRun {
			c.printf("[WARN] %s is corrupt (%v); a real cycle would set it aside and reset it.", cf.File, cf.Err)
			c.note("corrupt state file: " + cf.File)
			continue
		}
		dst, qerr := c.store.Quarantine(cf, c.now)
		if qerr != nil {
			c.res.Status = StatusError
			return *c.res, fmt.Errorf("set aside corrupt %s: %w", cf.Path, qerr)
		}
		if err := c.store.Reset(cf.File); err != nil {
			c.res.Status = StatusError
			return *c.res, fmt.Errorf("reset corrupt %s: %w", cf.Path, err)
		}
		name, typ := "state_corrupt_"+strings.TrimSuffix(cf.File, ".json"), "state_corruption"
		if kind := refusal(cf.Err); kind != "" {
			// A refused file (a symlink out, a pipe, too large) is moved
			// aside unread, never copied.
			name, typ = "input_"+kind+"_"+inputKey(cf.File), gapInputRefused
			c.printf("[WARN] %s is refused (%v). Moved to %s; continuing from an empty %s.", cf.File, cf.Err, filepath.Base(dst), cf.File)
			c.addGap(name, typ, fmt.Sprintf("%s was refused (%v) and moved aside unread to %s", cf.File, cf.Err, filepath.Base(dst)))
		} else {
			c.printf("[WARN] %s is corrupt (%v). Copied to %s; continuing from an empty %s.", cf.File, cf.Err, filepath.Base(dst), cf.File)
			c.addGap(name, typ, fmt.Sprintf("%s was corrupt and reset; bytes kept in %s", cf.File, filepath.Base(dst)))
		}
	}
	st := &snap.State
	if st.CycleInProgress && !opts.DryRun && !c.domainTempsRemoved {
		c.removeTempFiles(true)
	}
	c.failuresAtStart = st.ConsecutiveSilentFailures
	c.goalsBefore, c.goalIndex = goalsBefore(snap.Goals, opts.Quarantined)

	// A cycle number is never negative, whatever cycle_count says: the next
	// cycle is at least #1.
	next := nextCycle(st.CycleCount)
	if st.CycleCount < 0 {
		c.printf("[WARN] state.json: cycle_count is %d, which no cycle can have; numbering this cycle #%d.", st.CycleCount, next)
	}
	if next > state.MaxCounter {
		// A count above the ceiling is not read back as written (Load
		// resumes from the highest cycle recorded at or below it): every
		// cycle from here would be numbered the same, and overwrite the
		// one before's run log. Nothing is written.
		c.res.Status = StatusError
		return *c.res, fmt.Errorf("%s: cycle_count is %d, and cycle #%d would be above %d, the highest cycle number ooda reads back: no cycle can be numbered after it; if the count was set by hand or by a tool, set it back to the number of cycles this project has run", c.store.EvolvePath(state.StateFile), st.CycleCount, next, state.MaxCounter)
	}

	// 0-C: crash recovery.
	if st.CycleInProgress {
		crashed := next
		c.printf("[WARN] Cycle #%d did not complete (crash/kill detected).", crashed)
		mem := state.Memo{Timestamp: state.FormatTime(c.now), Cycle: crashed, Type: "crash_recovery",
			Message: fmt.Sprintf("Cycle #%d did not complete (crash/kill detected).", crashed)}
		if n := len(st.DecisionLog); n > 0 {
			last := st.DecisionLog[n-1]
			c.printf("  Last completed: #%d — domain %s, skill %s, at %s", last.Cycle, orDash(last.SelectedDomain), orDash(last.SelectedSkill), last.Timestamp)
			lc := last.Cycle
			mem.LastCompleted = &lc
		}
		if opts.DryRun {
			c.printf("  A real cycle would reset cycle_in_progress and start fresh.")
		} else {
			c.printf("  Resetting cycle_in_progress. Starting fresh cycle.")
		}
		c.note(fmt.Sprintf("crash recovery: cycle #%d did not complete", crashed))
		c.crashRecovered = true
		st.CycleInProgress = false
		snap.Memos.History = appendMemo(snap.Memos.History, mem)
		// last_memo is the newest memo's text (the state design's shape).
		if b, err := json.Marshal(mem.Message); err == nil {
			snap.Memos.LastMemo = b
		}
		// Recovery is written at once (0-C): a cycle that then skips must
		// not leave the crash flag behind to be reported again.
		if !opts.DryRun {
			if err := c.store.SaveState(*st); err != nil {
				c.res.Status = StatusError
				return *c.res, err
			}
			if err := c.store.SaveMemos(snap.Memos); err != nil {
				c.res.Status = StatusError
				return *c.res, err
			}
		}
	}
	c.res.Cycle = next

	// 0-D: minimum cycle interval.
	if st.LastCycle != nil {
		if last, ok := state.ParseTime(*st.LastCycle); ok {
			interval := durationOf(cfg.Safety.MinCycleIntervalMin, time.Minute)
			var wait time.Duration
			if ahead := last.Sub(c.now); ahead <= 0 {
				wait = interval + ahead // both bounded: no overflow
			} else {
				// A last_cycle in the future is clock skew (or an edit):
				// trusted, it would skip every cycle until the clock caught
				// up. More than the interval ahead, it is ignored; within
				// it, the wait never exceeds the interval.
				if ahead > interval {
					c.printf("[WARN] state.json: last_cycle %s is %s in the future, more than min_cycle_interval_minutes ahead (clock skew?); running without waiting.", *st.LastCycle, ahead.Round(time.Second))
					c.note("clock skew: last_cycle in the future ignored")
				} else {
					c.printf("[WARN] state.json: last_cycle %s is %s in the future (clock skew?); waiting at most min_cycle_interval_minutes.", *st.LastCycle, ahead.Round(time.Second))
					wait = interval
				}
			}
			if wait > 0 {
				remaining := int(wait.Minutes() + 0.999)
				at := ceilSecond(c.now.Add(wait))
				switch {
				case opts.DryRun:
					c.note(fmt.Sprintf("too_soon ignored for dry run (%d min until next cycle)", remaining))
				case c.criticalAlert():
					c.printf("[URGENT] Critical alert detected, bypassing interval.")
				default:
					c.printf("[SKIP] Too soon. %d min until next cycle.", remaining)
					c.printf("[SKIP] The next cycle can run at %s: the last one ran at %s and safety.min_cycle_interval_minutes is %s (a critical alert bypasses it).",
						state.FormatTime(at), *st.LastCycle, minutes(cfg.Safety.MinCycleIntervalMin))
					c.res.Status, c.res.Reason = StatusSkipped, ReasonTooSoon
					c.res.NextActAt = at
					return c.abandon()
				}
			}
		}
	}
	// 0-E: first cycle observe-only.
	observeOnly := false
	if next == 1 && cfg.Safety.FirstCycleObserveOnly {
		if opts.DryRun {
			c.note("first_cycle ignored for dry run (a real first cycle is observe-only)")
		} else {
			c.printf("[INFO] First cycle -- observe-only mode.")
			observeOnly = true
		}
	}
	if !opts.DryRun {
		st.CycleInProgress = true
		st.CycleStartedAt = state.FormatTime(c.now)
		if err := c.store.SaveState(*st); err != nil {
			c.res.Status = StatusError
			return *c.res, err
		}
	}

	// Step 1: Observe.
	perfstat.Mark("cycle started")
	c.phases = map[string]string{}
	obs := observe.Observe(observe.Input{Now: c.now, Config: cfg, Store: c.store, Snap: snap, PhaseOf: c.phaseOf})
	for _, w := range obs.Warnings {
		c.printf("%s", w)
	}
	for _, d := range obs.Domains {
		if refusal(d.StateErr) != "" {
			// Observe has warned; the gap makes it count.
			c.addGap("input_"+refusal(d.StateErr)+"_"+inputKey(d.Config.StateFile), gapInputRefused, d.StateErr.Error())
		}
	}
	if obs.SeasonMode != "" {
		c.printf("[Observe] Season mode: %s (%d weight overrides, %d disabled domains)", obs.SeasonMode, len(obs.Season.WeightOverrides), len(obs.Season.DisabledDomains))
	}
	for _, sk := range obs.Skipped {
		c.log.Debug("domain skipped", "domain", sk.Name, "why", sk.Why)
	}
	if !opts.DryRun {
		for _, d := range obs.LensInit {
			if _, err := c.store.InitLens(d, c.now); err != nil {
				c.printf("[WARN] lens init for %s failed: %v", d, err)
			} else {
				c.printf("[Observe] Initialized lens for %s.", d)
			}
		}
	}
	if obs.RefreshDue {
		// 1-A: a stale active context schedules its refresh skill; the memo
		// is what the chain logic of Step 4-B consumes.
		skill := *cfg.ActiveContext.RefreshSkill
		c.printf("[Observe] Active context is older than %gh: refresh via %s scheduled.", cfg.ActiveContext.RefreshIntervalHours, skill)
		c.memo = append(c.memo, state.Memo{Timestamp: state.FormatTime(c.now), Cycle: c.res.Cycle, Type: "active_context_refresh",
			Message: fmt.Sprintf("Active context %s is older than %g hours; refresh with %s.", *cfg.ActiveContext.Path, cfg.ActiveContext.RefreshIntervalHours, skill)})
	}
	if obs.LedgerReset {
		c.note("cost ledger reset for a new UTC day")
	}
	c.forge = opts.Forge
	c.fview = c.observeForge(ctx)
	perfstat.Mark("observed")
	switch {
	case c.forge == nil:
		c.printf("[Observe] Scanned %d domains (no forge configured: no pull-request data).", len(obs.Domains))
	case !c.fview.ok:
		c.printf("[Observe] Scanned %d domains (forge unreachable: no pull-request data this cycle).", len(obs.Domains))
	default:
		c.printf("[Observe] Scanned %d domains. %d open PRs, %d merged, %d closed recently (%s).", len(obs.Domains), len(c.fview.status.Open), len(c.fview.status.Merged), len(c.fview.status.Closed), c.forge.Name())
	}

	if ctx.Err() != nil {
		return c.interrupted("Orient")
	}

	// Step 2: Orient.
	names := make([]string, 0, len(obs.Domains))
	for _, d := range obs.Domains {
		names = append(names, d.Config.Name)
	}
	ori := orient.Orient(orient.Input{Now: c.now, Config: cfg, Confidence: snap.Confidence, Memos: snap.Memos, Goals: snap.Goals, Log: st.DecisionLog, Domains: names})
	for _, w := range ori.MemoWarnings {
		c.printf("%s", w)
	}
	c.outc = c.orientOutcomes(obs, c.fview, ori.Confidence)
	ori.Confidence = c.outc.Confidence
	if len(c.outc.QueueMoves) > 0 {
		c.snap.ActionQueue, c.queueChanged = c.outc.Queue, true
	}
	if len(c.fview.reviews) > 0 {
		q, ms := orient.ReviewMemos(c.snap.ActionQueue, c.fview.reviews, c.now)
		if len(ms) > 0 {
			c.snap.ActionQueue, c.queueChanged = q, true
			for _, m := range ms {
				m.Cycle = c.res.Cycle
				c.memo = append(c.memo, m)
				c.printf("[Orient] Review feedback: %s", m.Message)
			}
		}
	}
	c.orientMore(ctx, obs, &ori)
	// 2-G and the 3-K gate: a plateau becomes a leap through the memo
	// adjustment, before the one scoring pass.
	c.planArtifact(names, &ori)

	if ctx.Err() != nil {
		return c.interrupted("Decide")
	}

	// Step 3: Decide.
	perfstat.Mark("oriented")
	din := c.decideInput(obs, ori)
	dec := decide.Decide(din)
	c.takeLeap(&dec)
	c.res.Decision = &dec
	perfstat.Mark("decided")
	sf := orient.SummaryFacts{Observed: len(obs.Domains), Alerts: alertNames(obs), Winner: winnerName(dec), Skip: dec.SkipReason, Guidance: dec.Guidance, Gated: dec.Gated, Prev: ori.PrevSummary}
	if n := len(st.DecisionLog); n > 0 {
		sf.PrevWinner = st.DecisionLog[n-1].SelectedDomain
	}
	summary := c.judgedSummary(ctx, orient.Summarize(sf), map[string]any{"domains_observed": sf.Observed, "alerts": sf.Alerts,
		"winner": sf.Winner, "skip_reason": sf.Skip, "guidance": sf.Guidance, "gated": sf.Gated, "previous_summary": sf.Prev})
	c.printf("[Orient] %s", summary)
	c.printTable(dec)

	if dec.Mismatch != "" {
		c.printf("[WARN] %s", dec.Mismatch)
		c.addGap("score_mismatch", "engine_bug", dec.Mismatch)
	}

	// 3-H: dry-run exit.
	if opts.DryRun {
		if dec.Winner != nil {
			c.printf("Would execute: %s", dec.Winner.Skill)
		}
		if dec.SkipReason == decide.ReasonQuarantined {
			c.printf("Would skip: quarantined (%s would have won, but is quarantined for this session).", dec.QuarantineBlocked)
		}
		c.printf("Observe-only streak: %d cycles", st.ConsecutiveObserveOnlyCycles)
		c.printf("[Dry-run] No changes applied. No state files modified.")
		c.res.Status, c.res.Result = StatusDryRun, "dry-run"
		c.res.Reason = dec.SkipReason
		return *c.res, nil
	}

	f := c.baseFacts(obs, ori, dec, summary)
	if dec.Winner == nil {
		if dec.SkipReason == decide.ReasonQuarantined {
			c.printf("[Decide] Skipping cycle: quarantined (%s would have won, but oscillated and is quarantined for this session; nothing else can run).", dec.QuarantineBlocked)
		} else {
			c.printf("[Decide] Skipping cycle: %s.", dec.SkipReason)
		}
		f.Action, f.Reason, f.Result = "skip", dec.SkipReason, "skip"
		if dec.Result != "" {
			f.Result = dec.Result
		}
		if dec.SkipReason == decide.ReasonBelowConfidence {
			f.Result = "observe_only"
		}
		c.res.Status, c.res.Reason = StatusSkipped, dec.SkipReason
		return c.finish(f, dec)
	}
	w := dec.Winner
	if dec.Guidance != "" {
		c.printf("[Decide] Selected: %s (implicit guidance: %s)", w.Domain, dec.Guidance)
	} else {
		c.printf("[Decide] Selected: %s (score: %.4f)", w.Domain, w.Score)
	}
	c.printf("[Decide] Skill: %s", w.Skill)
	c.printf("[Decide] Confidence: %.2f (threshold: %.2f)", w.Confidence, cfg.Safety.ConfidenceThreshold)
	if observeOnly {
		c.firstCycleDone()
		f.Action, f.Reason, f.Result = "observe_only", ReasonFirstCycle, "observe_only"
		c.res.Reason = ReasonFirstCycle
		return c.finish(f, dec)
	}

	// Step 4: Act. 4-A: allowlist, then HALT re-check.
	if !cfg.Safety.Allowed(w.Skill) {
		c.printf("[Act] SAFETY: %s not in allowlist. Skipping.", w.Skill)
		f.Action, f.Reason, f.Result = "blocked", ReasonNotAllowlisted, "blocked"
		c.addGap("skill_not_in_allowlist_"+config.SkillKey(w.Skill), "safety_violation",
			fmt.Sprintf("domain %s selected %s, which safety.skill_allowlist does not list", w.Domain, w.Skill))
		// Counted as an attempt, so the blocked domain cannot win every
		// cycle while a human fixes the allowlist.
		c.recordDomainRun(w.Domain)
		c.res.Status, c.res.Reason = StatusSkipped, ReasonNotAllowlisted
		return c.finish(f, dec)
	}
	if ctx.Err() != nil {
		return c.interrupted(w.Skill)
	}
	if halted, reason := c.store.HaltExists(cfg.Safety.HaltFile); halted {
		c.printf("[HALT] HALT file appeared before execution. Reason: %s", state.HaltLine(reason))
		c.res.Status, c.res.Reason = StatusHalted, ReasonHalt
		return c.abandon()
	}
	c.execute(ctx, &f, obs, w, dec.Gated || dec.Guidance == decide.GuidanceCriticalAlert)
	perfstat.Mark("acted")
	if opts.AfterAct != nil {
		opts.AfterAct()
	}
	return c.finish(f, dec)
}

// removeTempFiles removes the temporary files killed writers left under
// agent/state, the domains' directories included when domains is set
// (Store.RemoveTempFilesOutsideDomains says why they need not always be
// listed), and says what it removed.
func (c *cycle) removeTempFiles(domains bool) {
	remove := c.store.RemoveTempFilesOutsideDomains
	if domains {
		remove, c.domainTempsRemoved = c.store.RemoveTempFiles, true
	}
	removed, err := remove()
	if len(removed) > 0 {
		c.printf("[WARN] Removed %d temporary file(s) a killed process left behind: %s", len(removed), strings.Join(removed, ", "))
	}
	if err != nil {
		c.printf("[WARN] temporary files not all removed: %v", err)
	}
}

// nextCycleAt is the earliest instant the cycle after this one can run:
// last_cycle as it is written (to the second) plus
// safety.min_cycle_interval_minutes; zero when no interval applies.
func (c *cycle) nextCycleAt() time.Time {
	interval := durationOf(c.cfg.Safety.MinCycleIntervalMin, time.Minute)
	if interval <= 0 {
		return time.Time{}
	}
	last, _ := state.ParseTime(state.FormatTime(c.now))
	return ceilSecond(last.Add(interval))
}

// firstCycleDone prints the message that ends the observe-only first
// cycle: when the next cycle can act, and the settings that decide it,
// since "run it again" followed by a too-soon skip is a broken promise.
func (c *cycle) firstCycleDone() {
	c.printf("First cycle complete: it only observes (safety.first_cycle_observe_only).")
	at := c.nextCycleAt()
	if at.IsZero() {
		c.printf("The next `ooda cycle` acts, and can run now (safety.min_cycle_interval_minutes is 0).")
		return
	}
	c.res.NextActAt = at
	c.printf("The next cycle can act at %s (safety.min_cycle_interval_minutes is %s; a critical alert bypasses it): run `ooda cycle` then.",
		state.FormatTime(at), minutes(c.cfg.Safety.MinCycleIntervalMin))
}

// ceilSecond rounds t up to a whole second, the precision state files keep:
// a cycle at the instant shown is never too soon.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// minutes prints a number of minutes as configured, without a spurious
// fraction.
func minutes(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// gapInputRefused is the type of the gaps of inputs the state package
// refused to read.
const gapInputRefused = "input_refused"

// refusal names why the state package refused to read a file — too_large,
// not_regular, outside_project — or is "" for any other error.
func refusal(err error) string {
	var tl *state.TooLargeError
	var nr *state.NotRegularError
	var out *state.OutsideError
	var deep *state.DepthError
	switch {
	case errors.As(err, &deep):
		return "too_deep"
	case errors.As(err, &tl):
		return "too_large"
	case errors.As(err, &nr):
		return "not_regular"
	case errors.As(err, &out):
		return "outside_project"
	}
	return ""
}

// inputKey names an input file in a gap: its base name without the
// extension, in the characters gap names use.
func inputKey(file string) string {
	return gapKey(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
}

// gapKey spells s in the characters gap names use.
func gapKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
}

// refused handles a read the state package refused (too large, not a
// regular file, outside the project): a warning and an input_<why>_<key>
// gap, once per cycle and input, and the cycle goes on without the input.
// It reports whether err was such a refusal.
func (c *cycle) refused(key string, err error) bool {
	kind := refusal(err)
	if kind == "" {
		return false
	}
	name := "input_" + kind + "_" + key
	for _, g := range c.gaps {
		if g.name == name {
			return true
		}
	}
	c.printf("[WARN] %v; continuing without it.", err)
	c.addGap(name, gapInputRefused, err.Error())
	return true
}

// nextCycle is the number of the cycle after count: count + 1, from 0 for
// a negative count, and never wrapping past the largest int.
func nextCycle(count int) int {
	if count < 0 {
		count = 0
	}
	if count == math.MaxInt {
		return count
	}
	return count + 1
}

// maxDuration is the longest time.Duration (about 292 years).
const maxDuration = time.Duration(math.MaxInt64)

// durationOf converts a configured amount of unit (minutes, hours) to a
// Duration, clamped to [0, maxDuration]: a float conversion past the int64
// range is undefined and came out negative (1e308 minutes printed as a
// negative wait). NaN and negative amounts are 0.
func durationOf(v float64, unit time.Duration) time.Duration {
	d := v * float64(unit)
	switch {
	case math.IsNaN(d) || d <= 0:
		return 0
	case d >= float64(maxDuration):
		return maxDuration
	}
	return time.Duration(d)
}

// lockTimeout is safety.lock_timeout_minutes as a duration (floored at a
// second and capped at a week by config.Safety.LockTimeout): it bounds the
// lock's age and every skill's run.
func (c *cycle) lockTimeout() time.Duration { return c.cfg.Safety.LockTimeout() }

// interrupted ends a cycle that a signal (its context) stopped before any
// skill ran: nothing is recorded, as for too_soon, and the lock is released.
func (c *cycle) interrupted(before string) (Result, error) {
	c.printf("[SKIP] Interrupted before %s; nothing ran.", before)
	c.res.Status, c.res.Reason = StatusSkipped, ReasonInterrupted
	return c.abandon()
}

// abandon ends a cycle before Step 6: the state file must not claim a
// cycle is in progress, or the next run would report a crash.
func (c *cycle) abandon() (Result, error) {
	c.notifyHalt(c.ctx)
	if c.snap != nil && c.snap.State.CycleInProgress {
		c.snap.State.CycleInProgress = false
		if err := c.store.SaveState(c.snap.State); err != nil {
			return *c.res, err
		}
	}
	return *c.res, nil
}

func (c *cycle) failClosedLedger(e *state.CorruptLedgerError) (Result, error) {
	c.res.Status, c.res.Reason = StatusHalted, ReasonCorruptLedger
	msg := "cost ledger corrupt — today's spend unknown; refusing to run without cost accounting"
	if c.opts.DryRun {
		c.printf("[HALT] %s (%v). A real cycle would set it aside and create the HALT file.", msg, e.Err)
		return *c.res, nil
	}
	dst, err := c.store.QuarantineLedger(c.now)
	if err != nil {
		return *c.res, err
	}
	if err := c.store.WriteHalt(c.cfg.Safety.HaltFile, msg+"\nThe corrupt ledger was moved to "+dst+". Check today's spend there, then delete this file: the next cycle starts a new ledger.", c.now); err != nil {
		return *c.res, err
	}
	c.res.HaltCreated = true
	c.printf("[HALT] %s. Moved to %s; HALT file created.", msg, filepath.Base(dst))
	c.notifyHalt(c.ctx)
	return *c.res, nil
}

func (c *cycle) addGap(name, typ, detail string) {
	c.gaps = append(c.gaps, gap{name, typ, c.recorded(detail), ""})
}

// addDomainGap is addGap for a gap that concerns one domain.
func (c *cycle) addDomainGap(domain, name, typ, detail string) {
	c.gaps = append(c.gaps, gap{name, typ, c.recorded(detail), domain})
}

// recorded is a text (an error message) as the state files and the
// CHANGELOG keep it: with paths inside the project relative to its root
// (record.ProjectRelative), since they are committed and shared, and this
// machine's directories mean nothing on another. What is printed keeps
// the paths as they are.
func (c *cycle) recorded(s string) string {
	if s == "" || c.store == nil {
		return s
	}
	if c.roots == nil {
		c.roots = []string{c.store.Root}
		if real, err := filepath.EvalSymlinks(c.store.Root); err == nil && real != c.store.Root {
			c.roots = append(c.roots, real)
		}
	}
	return record.ProjectRelative(s, c.roots...)
}

func (c *cycle) phaseOf(skill string) string {
	if p, ok := c.phases[skill]; ok {
		return p
	}
	ct, err := contract.Load(c.store.Root, c.cfg, skill)
	p := ""
	if err == nil {
		p = ct.OODAPhase
	} else {
		c.printf("[WARN] contract of %s: %v", skill, err)
	}
	c.phases[skill] = p
	return p
}

func (c *cycle) decideInput(obs *observe.Observation, ori orient.Orientation) decide.Input {
	snap := c.snap
	in := decide.Input{
		Now: c.now, Config: c.cfg, Confidence: ori.Confidence, Memo: ori.Memo,
		DomainExecutions:     snap.Metrics.Counters.DomainExecutions,
		TotalSkillExecutions: snap.Metrics.Counters.TotalSkillExecutions,
		SignalBonuses:        obs.Season.SignalBonuses,
		Impl: decide.Impl{PendingCount: obs.Impl.PendingCount, ActionablePending: obs.Impl.ActionablePending,
			OldestPendingHours: obs.Impl.OldestPendingHours, HighestRice: obs.Impl.HighestRice, OpenDraftPRs: c.outc.OpenDraftImpl},
		StaleAfterChange: c.outc.StaleAfterChange,
		Lean:             c.recall.Lean,
		Quarantined:      c.opts.Quarantined,
	}
	// Room for every domain at once: appended one by one, a thousand
	// domains' entries were copied ten times over as the list grew.
	in.Domains = make([]decide.Domain, 0, len(obs.Domains))
	for _, d := range obs.Domains {
		dd := decide.Domain{Name: d.Config.Name, Index: d.Config.Index, Weight: d.Weight, Hours: d.Hours, NeverRun: d.NeverRun,
			Fallback: d.Config.Fallback, MissionAlignment: d.Config.Alignment(), Phase: d.Phase,
			MinIntervalHours: d.Config.MinIntervalHours, GoalContribution: d.Config.GoalContribution, PrimarySkill: d.Config.PrimarySkill}
		for _, a := range d.State.Alerts {
			dd.Alerts = append(dd.Alerts, decide.Alert{Severity: a.Severity, Message: a.Message})
		}
		in.Domains = append(in.Domains, dd)
	}
	for _, g := range snap.Goals.Goals {
		in.Goals = append(in.Goals, decide.Goal{ID: g.ID, Title: g.Title, Status: g.Status, Progress: g.ProgressValue(), RelatedDomains: g.RelatedDomains, Domain: g.Domain,
			Quarantined: c.opts.Quarantined[g.ID]})
	}
	if c.cfg.Scoring.Adaptive.On() {
		// Adaptive scoring learns from each domain's recorded cycles, as
		// Orient annotated them this cycle.
		entries := snap.Outcomes.Entries
		if c.outc.Outcomes != nil {
			entries = c.outc.Outcomes
		}
		in.History = map[string][]decide.Past{}
		// Each domain's list made at its length first: a full outcome
		// buffer is 200 cycles, most of them one domain's, and a list
		// grown an entry at a time leaves a copy at every doubling.
		n := map[string]int{}
		for i := range entries {
			if d := entries[i].Domain; d != "" {
				n[d]++
			}
		}
		for d, k := range n {
			in.History[d] = make([]decide.Past, 0, k)
		}
		for i := range entries {
			o := &entries[i]
			if o.Domain == "" {
				continue
			}
			in.History[o.Domain] = append(in.History[o.Domain], decide.Past{Quality: o.QualityMult, HadOutput: o.HadOutput != nil && *o.HadOutput})
		}
	}
	if len(snap.State.DecisionLog) > 0 {
		in.Log = make([]decide.LogEntry, 0, len(snap.State.DecisionLog))
	}
	for _, e := range snap.State.DecisionLog {
		in.Log = append(in.Log, decide.LogEntry{Cycle: e.Cycle, Domain: e.SelectedDomain, Action: e.Action, HadOutput: e.HadOutput, SelectedByAlert: e.SelectedByAlert, Guidance: e.Guidance})
	}
	return in
}

func alertNames(obs *observe.Observation) []string {
	var out []string
	for _, d := range obs.Domains {
		for _, a := range d.State.Alerts {
			if a.Urgent() {
				out = append(out, d.Config.Name+" ("+a.Severity+")")
				break
			}
		}
	}
	return out
}

func winnerName(d decide.Decision) string {
	if d.Winner == nil {
		return ""
	}
	return d.Winner.Domain
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func (c *cycle) printTable(d decide.Decision) {
	if d.Guidance != "" {
		c.printf("[Decide] Implicit guidance: %s → %s", d.Guidance, winnerName(d))
		return
	}
	if len(d.Options) == 0 {
		return
	}
	// A line per domain: the table is written at once, not with a write
	// per line (a thousand domains, a thousand writes).
	var b bytes.Buffer
	b.Grow(100 * (len(d.Options) + 2)) // a row is about 100 bytes
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", safetext.Args(a...)...) }
	line("[Decide] Domain scores:")
	line("| # | %-16s | %6s | %6s | %7s | %5s | %5s | %6s | %8s |", "Domain", "Hours", "Weight", "Urgent", "Goal", "Conf", "Memo", "SCORE")
	for i, o := range d.Options {
		if o.Excluded == decide.ExcludedLevel {
			// Not scored: one line that says so, and from which level.
			line("| %d | %-16s | excluded: level (scored from level %d: progressive_complexity.current_level) |", i+1, o.Domain, o.NeedsLevel)
			continue
		}
		hours := "P:" + strconv.Itoa(derefInt(o.Pending))
		if o.Hours != nil {
			hours = strconv.FormatFloat(*o.Hours, 'f', 1, 64) // fmt's %.1f
		}
		score := strconv.FormatFloat(o.Score, 'f', 2, 64) // fmt's %.2f
		if o.Excluded != "" {
			score += " (" + o.Excluded + ")"
		}
		if row, ok := appendScoreRow(b.AvailableBuffer(), i+1, o.Domain, hours, o.Weight, o.Alert, o.Goal, o.ConfidenceTerm, o.Memo, score); ok {
			b.Write(row)
			continue
		}
		line("| %d | %-16s | %6s | %6.2f | %+7.2f | %5.2f | %5.2f | %+6.2f | %8s |", i+1, o.Domain, hours, o.Weight, o.Alert, o.Goal, o.ConfidenceTerm, o.Memo, score)
	}
	_, _ = c.out.Write(b.Bytes())
}

// appendScoreRow appends a row of the score table and its newline
// exactly as printTable's format writes it through fmt and safetext, for
// the usual row — every number finite — and reports false for any other,
// which fmt writes. A thousand domains' rows through fmt and safetext.Args
// cost more than the rest of Decide.
func appendScoreRow(b []byte, n int, domain, hours string, weight, alert, goal, conf, memo float64, score string) ([]byte, bool) {
	for _, v := range [...]float64{weight, alert, goal, conf, memo} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return b, false
		}
	}
	b = append(b, "| "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, " | "...)
	b = padText(b, safetext.Text(domain), 16, true)
	b = append(b, " | "...)
	b = padText(b, safetext.Text(hours), 6, false)
	b = append(b, " | "...)
	b = padFloat(b, weight, 6, false)
	b = append(b, " | "...)
	b = padFloat(b, alert, 7, true)
	b = append(b, " | "...)
	b = padFloat(b, goal, 5, false)
	b = append(b, " | "...)
	b = padFloat(b, conf, 5, false)
	b = append(b, " | "...)
	b = padFloat(b, memo, 6, true)
	b = append(b, " | "...)
	b = padText(b, safetext.Text(score), 8, false)
	return append(b, " |\n"...), true
}

// padText appends s padded with spaces to width runes, as fmt's %-Ns
// (left) or %Ns does.
func padText(b []byte, s string, width int, left bool) []byte {
	pad := width - utf8.RuneCountInString(s)
	if left {
		b = append(b, s...)
	}
	for ; pad > 0; pad-- {
		b = append(b, ' ')
	}
	if !left {
		b = append(b, s...)
	}
	return b
}

// padFloat appends the finite v as fmt's %N.2f does, or %+N.2f with plus.
func padFloat(b []byte, v float64, width int, plus bool) []byte {
	var num [32]byte
	s := strconv.AppendFloat(num[:0], v, 'f', 2, 64)
	if plus && s[0] != '-' {
		s = append([]byte{'+'}, s...)
	}
	for pad := width - len(s); pad > 0; pad-- {
		b = append(b, ' ')
	}
	return append(b, s...)
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// envFor builds the OODA_* environment of a skill invocation.
func (c *cycle) envFor(obs *observe.Observation, domain, skill string, conf float64) map[string]string {
	env := map[string]string{
		"OODA_PROJECT_DIR":      c.store.Root,
		"OODA_CYCLE":            strconv.Itoa(c.res.Cycle),
		"OODA_DOMAIN":           domain,
		"OODA_SKILL":            skill,
		"OODA_NOW":              state.FormatTime(c.now),
		"OODA_REPORT":           c.store.ReportPath(c.res.Cycle, skill),
		"OODA_FOCUS_ITEM":       "",
		"OODA_MISSION":          c.cfg.Mission,
		"OODA_LEVEL":            strconv.Itoa(c.cfg.ProgressiveComplex.CurrentLevel),
		"OODA_CONFIDENCE":       strconv.FormatFloat(conf, 'f', 4, 64),
		"OODA_LEAP_MODE":        "false",
		"OODA_TARGET_DIMENSION": "",
		"OODA_ACTIVE_CONTEXT":   obs.ActiveContextPath,
		"OODA_STATE_FILE":       "",
		"OODA_LENS":             "",
	}
	c.leapEnv(env, domain)
	if dc, ok := c.cfg.Domains.Get(domain); ok {
		// A state file that leads out of the project (a symlink planted
		// since the config was validated) is never handed to the skill.
		if p, err := c.store.Resolve(dc.StateFile); err == nil {
			env["OODA_STATE_FILE"] = p
		} else {
			c.printf("[WARN] %s: state file %s is refused (%v); OODA_STATE_FILE is empty.", domain, dc.StateFile, err)
		}
		// The skill gets the active lens (items at confidence ≥ 0.6), not
		// the working file with its unconfirmed proposals.
		if lens, found, err := c.store.ReadLens(domain); err == nil && found {
			if p, err := c.store.WriteActiveLens(c.res.Cycle, domain, reflect.ActiveLens(lens)); err == nil {
				env["OODA_LENS"] = p
			} else {
				c.printf("[WARN] active lens of %s not written: %v", domain, err)
			}
		}
	}
	return env
}

// appendMemo adds a memo to the history, which keeps the last 10 (5-C).
func appendMemo(h []state.Memo, m state.Memo) []state.Memo {
	h = append(h, m)
	if len(h) > 10 {
		h = append([]state.Memo(nil), h[len(h)-10:]...)
	}
	return h
}

// appendMemos adds several memos to the history (cap 10).
func appendMemos(h []state.Memo, ms []state.Memo) []state.Memo {
	for _, m := range ms {
		h = appendMemo(h, m)
	}
	return h
}

// heartbeat renews the lock while the cycle runs, so a long cycle is never
// judged stale by another process while it is alive; only a dead or hung
// holder's lock ages past lock_timeout_minutes. The beat's instant is the
// cycle's "now" plus the real time elapsed, so it agrees with --now.
func (c *cycle) heartbeat(lock *state.Lock, timeout time.Duration) func() {
	every := timeout / 3
	if every > time.Minute {
		every = time.Minute
	}
	if every < time.Second {
		every = time.Second
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := lock.Renew(c.now.Add(time.Since(c.start))); err != nil {
					c.log.Warn("lock heartbeat", "err", err)
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// fromWorkingDir is the path p as a user types it where ooda was started:
// relative to the working directory (the project may be a parent of it),
// else absolute.
func (c *cycle) fromWorkingDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil {
			return rel
		}
	}
	return abs
}

// criticalAlert reports a critical alert that bypasses the minimum cycle
// interval (0-D). A quarantined domain's does not: this session will not
// act on it, so it must not make another domain run early.
func (c *cycle) criticalAlert() bool {
	if len(c.opts.Quarantined) == 0 {
		return observe.AnyCriticalAlert(c.cfg, c.store)
	}
	defer c.store.HoldRoot()()
	for _, dc := range c.cfg.Domains {
		if c.opts.Quarantined[dc.Name] {
			continue
		}
		ds, err := c.store.ReadDomainState(dc.StateFile)
		if err != nil {
			continue
		}
		for _, a := range ds.Alerts {
			if a.Severity == "critical" {
				return true
			}
		}
	}
	return false
}
