package cli

import (
	"context"
	"fmt"
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
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// demoOptions are the flags of `ooda demo`.
type demoOptions struct {
	dir    string
	cycles int
	every  time.Duration
	keep   bool
}

func newDemoCmd(g *globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--cycles N]",
		Short: "Run real cycles on a throw-away example project (no network needed)",
		Long: `Copy the embedded quickstart project (three domains whose skills are small
shell scripts) into a temporary directory, or --dir, and run real cycles on
it with a simulated clock that advances --every between cycles. Each cycle's
Cycle Card is printed (what it observed, decided, did, re-aimed and cost),
then the Loop Scorecard of all of them. Needs no network and no language
model.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "create the example project here (must not exist or be empty)")
	f.IntVar(&o.cycles, "cycles", 6, "number of cycles to run")
	f.DurationVar(&o.every, "every", 4*time.Hour, "simulated time between cycles")
	f.BoolVar(&o.keep, "keep", false, "keep the temporary project directory")
	return cmd
}

func runDemo(ctx context.Context, g *globals, o demoOptions) error {
	if o.cycles < 1 {
		return usageError(fmt.Errorf("--cycles must be at least 1"))
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
	if err := copyExample(dir); err != nil {
		return err
	}
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if g.now != "" || os.Getenv("OODA_NOW") != "" {
		c, err := g.clock()
		if err != nil {
			return err
		}
		start = c.Now()
	}
	clk := clock.NewFixed(start)
	// The views read the project as every command does: through a store
	// bounded by its configuration.
	st := state.New(dir)
	cfg, cerr := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if cerr == nil {
		registerSecrets(cfg)
		st.MaxRead = cfg.Safety.MaxReadBytes()
	}
	out := g.human()
	style := g.style(out)
	fmt.Fprintf(out, "ooda demo: %d cycles on the quickstart project in %s\n\n", o.cycles, dir)
	if ctx == nil {
		ctx = context.Background()
	}
	var rows []map[string]any
	for i := 0; i < o.cycles; i++ {
		var log strings.Builder
		res, err := engine.RunCycle(ctx, engine.Options{Project: dir, Clock: clk, Registry: skills.Registry(), Out: &log})
		if err != nil {
			fmt.Fprint(g.stderr, log.String())
			return err
		}
		winner, score := "—", ""
		if d := res.Decision; d != nil && d.Winner != nil {
			winner = d.Winner.Domain
			score = fmt.Sprintf(" (score %.2f)", d.Winner.Score)
		}
		what := res.ResultType
		switch {
		case what == "":
			what = res.Status + " (" + res.Reason + ")"
		case res.Reason != "":
			what += " (" + res.Reason + ")"
		}
		// A cycle that ran shows its Cycle Card, as `ooda cycle` ends
		// with it; one that did not run (the first, observe-only) its row.
		if card := demoCard(cfg, st, res); card != nil {
			fmt.Fprint(out, present.RenderCard(card, style, false)+"\n")
		} else {
			fmt.Fprintf(out, "cycle #%-2d %s  %-15s%s → %s\n\n", res.Cycle, clk.Now().Format("2006-01-02 15:04"), safetext.Text(winner), score, safetext.Text(what))
		}
		rows = append(rows, map[string]any{"cycle": res.Cycle, "winner": winner, "result_type": res.ResultType, "status": res.Status, "summary": res.Summary})
		switch code := res.ExitCode(); code {
		case ExitOK:
		case ExitSkillFailed:
			// A failed skill is part of what the demo shows: its [Act]
			// lines say why, and the next cycle goes on.
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.HasPrefix(l, "[Act]") || strings.HasPrefix(l, "  | ") {
					fmt.Fprintf(out, "          %s\n", l)
				}
			}
		default:
			fmt.Fprint(out, log.String())
			return withCode(code, nil)
		}
		clk.Advance(o.every)
	}
	if cfg != nil {
		fmt.Fprint(out, present.RenderScorecard(present.BuildScorecard(cfg, st, 0), style))
	}
	if o.keep || o.dir != "" {
		fmt.Fprintf(out, "\nThe project is kept at %s: try `ooda cycle --dry-run --project %s`.\n", dir, dir)
	}
	if g.json {
		return g.printJSON(map[string]any{"dir": dir, "cycles": rows})
	}
	return nil
}

// copyExample writes the embedded quickstart project into dir.
func copyExample(dir string) error {
	sub, err := fs.Sub(examples.Quickstart, "quickstart")
	if err != nil {
		return err
	}
	return fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if d.IsDir() {
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
