package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/examples"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// demoOptions are the flags of `ooda demo`.
type demoOptions struct {
	dir     string
	cycles  int
	every   time.Duration
	keep    bool
	example string
	// cyclesSet is whether --cycles was given: each example has its own
	// default, the length of its story.
	cyclesSet bool
}

// The examples `ooda demo` can run, and how many cycles each tells its
// story in.
const (
	exampleService    = "service"
	exampleQuickstart = "quickstart"
)

var demoDefaultCycles = map[string]int{exampleService: serviceDemoCycles, exampleQuickstart: 6}

func newDemoCmd(g *globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--cycles N] [--example service|quickstart]",
		Short: "Run the whole loop on a throw-away example project (no network, no LLM)",
		Long: `Copy an example project built into ooda into a temporary directory, or
--dir, and run real cycles on it with a simulated clock that advances
--every between cycles. Each cycle's Cycle Card is printed (what it
observed, decided, did, re-aimed and cost), then the Loop Scorecard.

The default example, "service", is a tiny Go shop service in a real git
repository, watched by the built-in health, tests, lint and backlog skills.
The demo serves its health check itself, plays a teammate who pushes a bug
and plays you merging the fix that the built-in dev-cycle skill opens as a
pull request, written by a scripted local coding agent. It needs git and
the Go toolchain, and no network and no language model.

"quickstart" is three small shell-script skills (needs only sh).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cyclesSet = cmd.Flags().Changed("cycles")
			return runDemo(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "create the example project here (must not exist or be empty)")
	f.IntVar(&o.cycles, "cycles", serviceDemoCycles, "number of cycles to run (quickstart: 6)")
	f.DurationVar(&o.every, "every", 4*time.Hour, "simulated time between cycles")
	f.BoolVar(&o.keep, "keep", false, "keep the temporary project directory")
	f.StringVar(&o.example, "example", exampleService, "the example project: service or quickstart")
	return cmd
}

// demoRun is what both examples share: the project, its clock and store,
// and where the output goes.
type demoRun struct {
	g     *globals
	o     demoOptions
	dir   string
	clk   *clock.Fixed
	st    *state.Store
	cfg   *config.Config
	out   io.Writer
	style present.Style
	rows  []map[string]any
	// forge is where the cycles read pull requests from, as `ooda cycle`
	// passes it; nil for the quickstart project, which has none.
	forge forge.Forge
}

func runDemo(ctx context.Context, g *globals, o demoOptions) error {
	def, known := demoDefaultCycles[o.example]
	if !known {
		return usageError(fmt.Errorf("--example %q: the examples are %s and %s", o.example, exampleService, exampleQuickstart))
	}
	if !o.cyclesSet {
		o.cycles = def
	}
	if o.cycles < 1 {
		return usageError(fmt.Errorf("--cycles must be at least 1"))
	}
	if o.example == exampleService {
		// Checked before anything is created, so that a missing tool
		// leaves nothing behind.
		if err := serviceDemoTools(); err != nil {
			return err
		}
	}
	dir := o.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ooda-demo-")
		if err != nil {
			return err
		}
		dir = tmp
		if !o.keep {
			defer os.RemoveAll(tmp)
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usageError(fmt.Errorf("--dir %s is not empty", dir))
	}
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if g.now != "" || os.Getenv("OODA_NOW") != "" {
		c, err := g.clock()
		if err != nil {
			return err
		}
		start = c.Now()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	out := g.human()
	d := &demoRun{g: g, o: o, dir: dir, clk: clock.NewFixed(start), out: out, style: g.style(out)}
	var err error
	if o.example == exampleService {
		err = d.runService(ctx)
	} else {
		err = d.runQuickstart(ctx)
	}
	if err != nil {
		return err
	}
	if d.cfg != nil {
		fmt.Fprint(out, present.RenderScorecard(present.BuildScorecard(d.cfg, d.st, 0), d.style))
		if o.example == exampleService {
			fmt.Fprint(out, `
The Scorecard grades all the cycles together (docs/status.md explains each
line). A few hours of one example are a short run in which most cycles only
watch, so the grade stays low; a project's grade is its weeks of cycles.
`)
		}
	}
	if o.keep || o.dir != "" {
		fmt.Fprintf(out, "\nThe project is kept at %s: try `ooda cycle --dry-run --project %s`.\n", dir, dir)
	}
	if g.json {
		return g.printJSON(map[string]any{"dir": dir, "example": o.example, "cycles": d.rows})
	}
	return nil
}

// load reads the copied project's configuration, as every command does:
// the views then read the project through a store bounded by it.
func (d *demoRun) load() {
	d.st = state.New(d.dir)
	cfg, err := config.LoadProject(filepath.Join(d.dir, "config.json"), d.dir)
	if err == nil {
		registerSecrets(cfg)
		d.st.MaxRead = cfg.Safety.MaxReadBytes()
		d.cfg = cfg
	}
}

// runQuickstart runs the quickstart project: its cycles back to back.
func (d *demoRun) runQuickstart(ctx context.Context) error {
	if err := copyExample(examples.Quickstart, exampleQuickstart, d.dir); err != nil {
		return err
	}
	d.load()
	fmt.Fprintf(d.out, "ooda demo: %d cycles on the quickstart project in %s\n\n", d.o.cycles, d.dir)
	for i := 0; i < d.o.cycles; i++ {
		if _, err := d.cycle(ctx, nil); err != nil {
			return err
		}
		d.clk.Advance(d.o.every)
	}
	return nil
}

// demoNarrator tells a person what a demo cycle did, in plain words: a
// header before its card and lines after it. log is the cycle's own log.
type demoNarrator interface {
	header(res engine.Result, log string) string
	after(res engine.Result, log string) string
}

// cycle runs one real cycle and prints its Cycle Card (or, for a cycle
// that did not run, its row), with n's words around it when n is set. A
// failed skill is part of what the demo shows:
// its [Act] lines say why, and the next cycle goes on. Any other non-zero
// exit ends the demo with that code, after the cycle's whole log.
func (d *demoRun) cycle(ctx context.Context, n demoNarrator) (engine.Result, error) {
	var log strings.Builder
	res, err := engine.RunCycle(ctx, engine.Options{Project: d.dir, Clock: d.clk, Registry: skills.Registry(), Out: &log, Forge: d.forge})
	if err != nil {
		fmt.Fprint(d.g.stderr, log.String())
		return res, err
	}
	winner, score := "—", ""
	if dec := res.Decision; dec != nil && dec.Winner != nil {
		winner = dec.Winner.Domain
		score = fmt.Sprintf(" (score %.2f)", dec.Winner.Score)
	}
	what := res.ResultType
	switch {
	case what == "":
		what = res.Status + " (" + res.Reason + ")"
	case res.Reason != "":
		what += " (" + res.Reason + ")"
	}
	if n != nil {
		fmt.Fprint(d.out, n.header(res, log.String()))
	}
	if card := demoCard(d.cfg, d.st, res); card != nil {
		fmt.Fprint(d.out, present.RenderCard(card, d.style, false))
	} else {
		fmt.Fprintf(d.out, "cycle #%-2d %s  %-15s%s → %s\n", res.Cycle, d.clk.Now().Format("2006-01-02 15:04"), safetext.Text(winner), score, safetext.Text(what))
	}
	if n != nil {
		fmt.Fprint(d.out, n.after(res, log.String()))
	}
	fmt.Fprintln(d.out)
	d.rows = append(d.rows, map[string]any{"cycle": res.Cycle, "winner": winner, "result_type": res.ResultType, "status": res.Status, "summary": res.Summary})
	switch code := res.ExitCode(); code {
	case ExitOK:
	case ExitSkillFailed:
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.HasPrefix(l, "[Act]") || strings.HasPrefix(l, "  | ") {
				fmt.Fprintf(d.out, "          %s\n", l)
			}
		}
	default:
		fmt.Fprint(d.out, log.String())
		return res, withCode(code, nil)
	}
	return res, nil
}

// copyExample writes the embedded example project name of fsys into dir.
func copyExample(fsys fs.FS, name, dir string) error {
	sub, err := fs.Sub(fsys, name)
	if err != nil {
		return err
	}
	return fs.WalkDir(sub, ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if de.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		return state.WriteFileAtomic(dst, b, mode)
	})
}

// demoCard is the Cycle Card of a demo cycle that ran, nil for one that
// did not (or whose record cannot be read back).
func demoCard(cfg *config.Config, st *state.Store, res engine.Result) *present.Card {
	if cfg == nil || res.Status != engine.StatusCompleted || !cfg.Output.CycleCard {
		return nil
	}
	v := present.BuildCard(cfg, st)
	if v.Card == nil || v.Card.Cycle != res.Cycle {
		return nil
	}
	return v.Card
}
