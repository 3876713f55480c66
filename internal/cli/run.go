package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/session"
	"github.com/ooda-loop/ooda/internal/session/runner"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// runOptions are the flags of `ooda run`.
type runOptions struct {
	every        time.Duration
	cron         string
	maxCycles    int
	forever      bool
	untilDone    bool
	session      string
	unquarantine []string
}

func newRunCmd(g *globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--every DURATION | --cron EXPR] [--max-cycles N | --forever] [--until-done] [--session NAME] [--unquarantine TARGET]...",
		Short: "Run cycles in a loop inside one session, until a limit, a verdict, HALT or a signal",
		Long: `Run cycles in a loop inside one session (docs/run.md). Each cycle is the
same in-process cycle as ` + "`ooda cycle`" + `, with its own lock, so a cron
` + "`ooda cycle`" + ` and a session never overlap: a cycle that finds the lock
held, or comes too soon, waits for the next tick.

After each cycle the session writes one line per target (the domain that
ran, each active goal) to agent/state/evolve/cycle-history.jsonl,
quarantines a target whose results flipped from improved to fail
session.oscillation_threshold times (it is not selected again in this
session), and asks the termination judge, which prints
"RESULT: done (<stop reason>: ...)" or "RESULT: continue (...)".

Schedule: --every DURATION (default: safety.min_cycle_interval_minutes, at
least 1m), or --cron EXPR (five fields, local time unless CRON_TZ=...). A
cycle never starts before the engine's minimum interval allows; real-time
ticks get a small random delay. With --now (or OODA_NOW) nothing sleeps:
the clock moves to each tick, so a whole session is reproducible.

It ends when --max-cycles cycles have run (default session.max_iterations,
100), when the judge says done or stopped with --until-done, when the HALT
file appears (exit 3), or on SIGINT/SIGTERM: the running skill is stopped,
the lock released, the session recorded with stop reason "signal" (exit 0).
A cycle that fails is a warning; the session goes on at the next tick.

--session NAME resumes that session (its quarantine, findings and
counters) or creates it; --max-cycles then counts the cycles of this run.
--unquarantine TARGET lifts a quarantine of the session (repeatable).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, g, o) },
	}
	f := cmd.Flags()
	f.DurationVar(&o.every, "every", 0, "time between cycles, a Go duration such as 30m or 2h (default: safety.min_cycle_interval_minutes)")
	f.StringVar(&o.cron, "cron", "", "run cycles at the instants of this five-field cron expression instead of --every")
	f.IntVar(&o.maxCycles, "max-cycles", 0, "stop after N cycles (default: session.max_iterations, 100)")
	f.BoolVar(&o.forever, "forever", false, "no cycle limit; still stops on HALT or a signal")
	f.BoolVar(&o.untilDone, "until-done", false, "stop on any done_* or stopped_* verdict of the termination judge")
	f.StringVar(&o.session, "session", "", "resume or create this session (default: a new id from the start time)")
	f.StringArrayVar(&o.unquarantine, "unquarantine", nil, "lift the quarantine of this domain or goal in the session (repeatable)")
	return cmd
}

// minDefaultEvery floors the default interval: a configuration with no
// minimum interval would otherwise run cycles back to back.
const minDefaultEvery = time.Minute

// schedule is --every or --cron, checked.
func (o runOptions) schedule(cmd *cobra.Command, cfg *config.Config) (runner.Schedule, error) {
	everySet := cmd.Flags().Changed("every")
	if everySet && o.cron != "" {
		return nil, usageError(errors.New("--every and --cron cannot be used together: give one schedule"))
	}
	if o.cron != "" {
		c, err := runner.ParseCron(o.cron)
		if err != nil {
			return nil, usageError(fmt.Errorf("--cron: %w", err))
		}
		return c, nil
	}
	if everySet {
		if o.every < time.Second {
			return nil, usageError(fmt.Errorf("--every %s: the interval must be at least 1s", o.every))
		}
		return runner.Every(o.every), nil
	}
	d := time.Duration(cfg.Safety.MinCycleIntervalMin * float64(time.Minute))
	return runner.Every(max(d, minDefaultEvery)), nil
}

func runRun(cmd *cobra.Command, g *globals, o runOptions) error {
	clk, err := g.clock()
	if err != nil {
		return err
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	cfgPath, err := g.configPath()
	if err != nil {
		return err
	}
	maxSet := cmd.Flags().Changed("max-cycles")
	switch {
	case o.forever && maxSet:
		return usageError(errors.New("--forever and --max-cycles cannot be used together"))
	case maxSet && o.maxCycles < 1:
		return usageError(fmt.Errorf("--max-cycles %d: give at least 1 (or --forever)", o.maxCycles))
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	registerSecrets(cfg)
	sched, err := o.schedule(cmd, cfg)
	if err != nil {
		return err
	}
	limit := o.maxCycles
	switch {
	case o.forever:
		limit = 0
	case !maxSet:
		limit = cfg.Session.MaxIterations
		if limit < 1 {
			limit = 100
		}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	out := g.human()
	var prog *progressLine
	if _, simulated := clk.(*clock.Fixed); !simulated {
		if s := g.style(out); s.Terminal {
			prog = newProgressLine(out, s)
			defer prog.close()
			out = prog
		}
	}
	f, ferr := forge.Select(ctx, cfg, root)
	if ferr != nil {
		fmt.Fprintf(out, "[WARN] Forge not available (%s); continuing without pull-request data.\n", safetext.Error(ferr))
	}
	opts := runner.Options{Project: root, ConfigPath: cfgPath, Config: cfg, Clock: clk, Schedule: sched,
		MaxCycles: limit, UntilDone: o.untilDone, Session: o.session, Unquarantine: o.unquarantine,
		Registry: skills.Registry(), Forge: f, Out: out}
	// Step 7 after every cycle that ran, as `ooda cycle` prints it, in
	// the style of the human output (not of the progress line over it).
	style := g.style(g.human())
	// With many domains, each card's lens changelogs are read while its
	// cycle records itself, as `ooda cycle` does.
	var lens *present.LensPrefetch
	waitLens := func() {
		if lens != nil {
			present.WaitLensPrefetch(lens)
			lens = nil
		}
	}
	defer waitLens()
	opts.AfterAct = func(cfg *config.Config) {
		waitLens()
		if len(cfg.Domains) >= lensPrefetchMin {
			if st, err := g.store(cfg); err == nil {
				lens = present.PrefetchLensChangelogs(cfg, st)
			}
		}
	}
	opts.Card = func(cfg *config.Config, res engine.Result) {
		rec := recordedOf(res)
		rec.Lens, rec.Written = lens, res.Written
		if cycleCard(g, out, style, cfg, res.Cycle, rec) != nil && cfg.Output.CycleCard {
			fmt.Fprintln(out)
		}
		waitLens()
	}
	if prog != nil {
		opts.OnTick = prog.setTick
		opts.AfterTick = func(runner.Tick, *state.Session) { prog.setStep("waiting for the next cycle") }
	}
	sum, err := runner.Run(ctx, opts)
	if prog != nil {
		prog.close()
	}
	var ue *runner.UsageError
	if errors.As(err, &ue) {
		return usageError(ue)
	}
	if sum.Record.ID != "" {
		printRunSummary(g.human(), sum, g.style(g.human()))
	}
	if err != nil {
		return err
	}
	if g.json {
		det := sum.Record.DetermineLog
		if det == nil {
			det = []state.DetermineEntry{}
		}
		q := sum.Record.Quarantined
		if q == nil {
			q = []string{}
		}
		if err := g.printJSON(runDoc{Session: sum.Record.ID, Cycles: sum.Cycles, StopReason: sum.StopReason, Determine: det, Quarantined: q}); err != nil {
			return err
		}
	}
	if sum.Halted() {
		return withCode(ExitHalted, nil)
	}
	return nil
}

// runDoc is the --json document of `ooda run` (CLI.md).
type runDoc struct {
	Session     string                 `json:"session"`
	Cycles      int                    `json:"cycles"`
	StopReason  string                 `json:"stop_reason"`
	Determine   []state.DetermineEntry `json:"determine"`
	Quarantined []string               `json:"quarantined"`
}

// printRunSummary is the end of a run: how the session ended and what it
// holds.
func printRunSummary(w io.Writer, sum runner.Summary, s present.Style) {
	rec := sum.Record
	verdict := "stopped"
	c := present.Red
	if session.IsSuccess(sum.StopReason) {
		verdict, c = "done", present.Green
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", safetext.Args(a...)...) }
	fmt.Fprintln(w)
	head := fmt.Sprintf("Session %s %s: %s", safetext.Text(rec.ID), verdict, safetext.Text(sum.StopReason))
	fmt.Fprintln(w, s.Paint(c, head))
	if sum.Reason != "" {
		p("  why:          %s", sum.Reason)
	}
	p("  cycles:       %d this run, %d iteration(s) in the session (limit %s)", sum.Cycles, rec.Iteration, limitWord(rec.MaxIterations))
	if sum.Ended.After(sum.Started) {
		p("  time:         %s to %s", state.FormatTime(sum.Started), state.FormatTime(sum.Ended))
	}
	q := "none"
	if len(rec.Quarantined) > 0 {
		q = strings.Join(rec.Quarantined, ", ")
	}
	p("  quarantined:  %s", q)
	open, deferred := 0, len(session.Deferred(rec))
	for _, f := range rec.Findings {
		if f.Status == state.FindingOpen {
			open++
		}
	}
	p("  findings:     %d open, %d deferred", open, deferred)
	if e, ok := session.LastJudgment(rec); ok {
		p("  last verdict: iteration %d, %s, net progress %+d", e.Iteration, e.Result, e.NetProgress)
	}
	p("  record:       agent/state/evolve/sessions/%s.json", rec.ID)
	if sum.StopReason == session.StoppedSignal || sum.StopReason == session.StoppedMaxIterations || sum.StopReason == session.StoppedHalted {
		p("  resume:       ooda run --session %s", rec.ID)
	}
}

func limitWord(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// progressLine keeps one status line at the bottom of a terminal — the
// session, the cycle, the step running and the time elapsed — redrawn
// every second and below every line the cycle prints.
type progressLine struct {
	mu      sync.Mutex
	w       io.Writer
	style   present.Style
	start   time.Time
	tick    runner.Tick
	step    string
	shown   bool
	closed  bool
	done    chan struct{}
	stopped sync.WaitGroup
}

func newProgressLine(w io.Writer, s present.Style) *progressLine {
	p := &progressLine{w: w, style: s, start: time.Now(), step: "starting", done: make(chan struct{})}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.mu.Lock()
				if !p.closed {
					p.draw()
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// stepPrefixes are the engine's line prefixes that name the step running.
var stepPrefixes = []string{"[Observe]", "[Orient]", "[Decide]", "[Act]", "[Reflect]", "[Record]", "[Memory]", "[Rollback]"}

// Write prints the cycle's lines above the status line.
func (p *progressLine) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.w.Write(b)
	}
	p.clear()
	for _, line := range strings.Split(string(b), "\n") {
		for _, pre := range stepPrefixes {
			if strings.HasPrefix(line, pre) {
				p.step = strings.Trim(pre, "[]")
			}
		}
	}
	n, err := p.w.Write(b)
	if len(b) > 0 && b[len(b)-1] == '\n' {
		p.draw()
	}
	return n, err
}

func (p *progressLine) setTick(t runner.Tick) {
	p.mu.Lock()
	p.tick, p.step = t, "Observe"
	p.mu.Unlock()
}

func (p *progressLine) setStep(s string) {
	p.mu.Lock()
	p.step = s
	p.mu.Unlock()
}

func (p *progressLine) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func (p *progressLine) draw() {
	p.clear()
	t := p.tick
	el := time.Since(p.start).Round(time.Second)
	line := fmt.Sprintf("⟳ ooda run · starting · %s elapsed", el)
	if t.N > 0 {
		cycle := fmt.Sprintf("cycle %d", t.Iteration)
		if t.Max > 0 {
			cycle += fmt.Sprintf("/%d", t.Max)
		}
		line = fmt.Sprintf("⟳ session %s · %s · %s · %s elapsed", safetext.Text(t.Session), cycle, p.step, el)
	}
	if p.style.Width > 1 && utf8.RuneCountInString(line) >= p.style.Width {
		r := []rune(line)
		line = string(r[:p.style.Width-2]) + "…"
	}
	io.WriteString(p.w, p.style.Paint(present.Dim, line))
	p.shown = true
}

// close removes the status line and stops redrawing it.
func (p *progressLine) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.clear()
	p.closed = true
	close(p.done)
	p.mu.Unlock()
	p.stopped.Wait()
}
