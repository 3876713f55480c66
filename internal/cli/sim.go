package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/sim"
)

// simOptions are the flags of `ooda sim`.
type simOptions struct {
	scenario  string
	cycles    int
	noMission bool
	strategy  string
	keep      bool
	verbose   bool
}

func newSimCmd(g *globals) *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "sim [--scenario NAME|FILE] [--cycles N] [--no-mission] [--strategy spec|adaptive]",
		Short: "Measure the loop's decisions on simulated projects (the simulation benchmark)",
		Long: `Run scripted projects through the real engine and report how well its
decisions drove each one toward its mission: loop value (mean quality of
the cycles that ran), futile-cycle rate, mission-hit rate and goal
progress (docs/sim.md).

Every decision is the engine's own: each simulated cycle is a real cycle
(Observe through Record, with its state files in a temporary project and
a simulated clock). Only the skills and the human who merges pull
requests are simulated, from the scenario's script of when each domain
has work.

Without --scenario every built-in scenario runs (` + strings.Join(sim.Builtins(), ", ") + `);
--scenario names one of them or a scenario file (format: docs/sim.md).
--strategy spec scores as an unmodified OODA-loop configuration does;
adaptive (the default, what ooda init writes) adds the learned terms of
docs/scoring.md. The built-in scenarios' results at 12 and 20 cycles are
printed beside the original OODA-loop engine's published ones.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSim(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "a built-in scenario's name or a scenario file (default: every built-in scenario)")
	f.IntVar(&o.cycles, "cycles", 12, fmt.Sprintf("cycles to simulate (1 to %d)", sim.MaxCycles))
	f.BoolVar(&o.noMission, "no-mission", false, "run the projects without their mission")
	f.StringVar(&o.strategy, "strategy", sim.StrategyAdaptive, "decision strategy: spec (the original scoring) or adaptive (what ooda init writes)")
	f.BoolVar(&o.keep, "keep", false, "keep each simulated project and print where it is")
	f.BoolVar(&o.verbose, "verbose", false, "print every simulated cycle's own log (to stderr under --json)")
	return cmd
}

func runSim(cmd *cobra.Command, g *globals, o simOptions) error {
	if o.cycles < 1 || o.cycles > sim.MaxCycles {
		return usageError(fmt.Errorf("--cycles %d: must be between 1 and %d", o.cycles, sim.MaxCycles))
	}
	if o.strategy != sim.StrategySpec && o.strategy != sim.StrategyAdaptive {
		return usageError(fmt.Errorf("--strategy %q: must be %s or %s", o.strategy, sim.StrategySpec, sim.StrategyAdaptive))
	}
	var scs []*sim.Scenario
	if o.scenario == "" {
		for _, n := range sim.Builtins() {
			sc, err := sim.Builtin(n)
			if err != nil {
				return err
			}
			scs = append(scs, sc)
		}
	} else {
		sc, err := sim.Load(o.scenario)
		if err != nil {
			return usageError(err)
		}
		scs = append(scs, sc)
	}
	out := g.human()
	opts := sim.Options{Cycles: o.cycles, NoMission: o.noMission, Strategy: o.strategy, Keep: o.keep}
	if o.verbose {
		opts.Log = out
	}
	var results []sim.Result
	for _, sc := range scs {
		r, err := sim.Run(cmd.Context(), sc, opts)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", safetext.Text(sc.Name), err)
		}
		results = append(results, r)
	}
	if g.json {
		return g.printJSON(map[string]any{"strategy": o.strategy, "cycles": o.cycles, "results": results})
	}
	printSim(out, o, results)
	return nil
}

// printSim writes the results as a table, each built-in scenario with the
// original engine's published figures below it when there are some for
// its cycle count (and the project ran with its mission).
func printSim(w io.Writer, o simOptions, rs []sim.Result) {
	mission := ""
	if o.noMission {
		mission = ", without missions"
	}
	fmt.Fprintf(w, "ooda sim: strategy %s, %d cycles%s\n\n", o.strategy, o.cycles, mission)
	fmt.Fprintf(w, "%-22s %10s %9s %14s %7s %5s\n", "scenario", "loop value", "futile %", "mission-hit %", "goal %", "idle")
	opt := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.1f", *p)
	}
	for _, r := range rs {
		fmt.Fprintf(w, "%-22s %10.3f %9s %14s %7s %5d\n", safetext.Text(r.Scenario), r.LoopValue, opt(r.FutileRatePct), opt(r.MissionHitRatePct), opt(r.GoalProgressPct), r.SkippedIdle)
		if r.Halted > 0 {
			fmt.Fprintf(w, "  halted for its last %d cycle(s): a breaker created the HALT file (--keep, then ooda status --project DIR, says which)\n", r.Halted)
		}
		if f, ok := sim.Published[r.Scenario][r.Cycles]; ok && !o.noMission {
			verdict := "not beaten"
			if r.Beats(f) {
				verdict = "beaten on every metric"
			}
			fmt.Fprintf(w, "  %-20s %10.3f %9.1f %14.1f %7.1f        (%s)\n", "original engine", f.LoopValue, f.FutileRatePct, f.MissionHitRatePct, f.GoalProgressPct, verdict)
		}
	}
	fmt.Fprintln(w, "\nwinners, cycle by cycle:")
	for _, r := range rs {
		fmt.Fprintf(w, "  %s: %s\n", safetext.Text(r.Scenario), safetext.Text(strings.Join(r.Winners, " ")))
		if r.Project != "" {
			fmt.Fprintf(w, "    project kept at %s\n", r.Project)
		}
	}
}
