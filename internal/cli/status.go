package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// statusOptions are the views of `ooda status` (CLI.md): the dashboard
// by default, or one of --orient, --scorecard, --share and --metrics.
type statusOptions struct {
	orient    bool
	scorecard bool
	window    int
	share     bool
	plain     bool
	metrics   bool
}

func newStatusCmd(g *globals) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status [--orient | --scorecard [--window N] | --share [--plain] | --metrics]",
		Short: "Show the loop's dashboard: HALT, domains, actions, saturation, cost",
		Long: `Show the dashboard of the project: whether it is halted and why (always
the first line), each domain's status, last run, confidence, alerts, last
result and its skill's report summary, the pending actions (the top three
by RICE), the pending memos and active interventions, the saturation and
failure breakers against the counts that halt, today's cost against the
daily cap, the level and the mission, and the running or last ooda run
session (iteration, quarantined targets, deferred findings, last judgment).

It fits the terminal's width (or COLUMNS): a table of domains, long values
cut with "…", and one block per domain below 60 columns; piped, nothing is
cut. Colour only on a terminal, never with --no-color or NO_COLOR.

status only reads: it takes no lock and writes, moves or repairs nothing.
A missing state file shows its default; a corrupt one is named on stderr
("[WARN] corrupt state file: PATH") and shown as its default, so the
dashboard always renders. An invalid config.json is a configuration error
(exit 2). With --json it prints one JSON document (docs/status.md).

The other views, one at a time:
  --orient                the Orient view: episodes, principles, each
                          domain's lens, interventions, skill gaps
                          (learning_loop_break counted apart), recent
                          reflections and lessons
  --scorecard [--window N]
                          the Loop Scorecard: loop value, task completion,
                          futile rate, PR merge and hold, queue resolution,
                          cost per success, goals, mission hit, gap and
                          lesson rates, the grade and the Goodhart cap, and
                          a trend per KPI; all cycles, or the last N
  --share [--plain]       the Cycle Card of the latest cycle (the one every
                          cycle prints at its end); --plain: no box, no emoji
  --metrics               the numbers in the Prometheus text format, once,
                          for node_exporter's textfile collector
                          (docs/dashboard.md)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(cmd); err != nil {
				return err
			}
			switch {
			case o.orient:
				return runStatusOrient(g)
			case o.scorecard:
				return runStatusScorecard(g, o.window)
			case o.share:
				return runStatusShare(g, o.plain)
			case o.metrics:
				return runStatusMetrics(g)
			}
			return runStatus(g)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.orient, "orient", false, "the Orient view: episodes, principles, lens, interventions, gaps, reflections")
	f.BoolVar(&o.scorecard, "scorecard", false, "the Loop Scorecard: is the loop improving the project?")
	f.IntVar(&o.window, "window", 0, "with --scorecard: only the last N cycles (default: all)")
	f.BoolVar(&o.share, "share", false, "the Cycle Card of the latest cycle")
	f.BoolVar(&o.plain, "plain", false, "with --share: no box drawing, no emoji")
	f.BoolVar(&o.metrics, "metrics", false, "the numbers in the Prometheus text format, for node_exporter's textfile collector")
	return cmd
}

// check rejects flags that do not go together: one view at a time, and
// --window and --plain only with the view they shape.
func (o statusOptions) check(cmd *cobra.Command) error {
	views := 0
	for _, on := range []bool{o.orient, o.scorecard, o.share, o.metrics} {
		if on {
			views++
		}
	}
	switch {
	case views > 1 && o.metrics:
		return usageError(errors.New("status: --metrics is a view of its own; leave out --orient, --scorecard and --share"))
	case views > 1:
		return usageError(errors.New("status: --orient, --scorecard and --share are separate views; give one"))
	case cmd.Flags().Changed("window") && !o.scorecard:
		return usageError(errors.New("status: --window goes with --scorecard"))
	case o.window < 0:
		return usageError(fmt.Errorf("status: --window %d: give a number of cycles above 0 (or leave it out for all)", o.window))
	case cmd.Flags().Changed("window") && o.window == 0:
		return usageError(errors.New("status: --window 0: give a number of cycles above 0 (or leave it out for all)"))
	case o.plain && !o.share:
		return usageError(errors.New("status: --plain goes with --share"))
	}
	return nil
}

func runStatus(g *globals) error {
	clk, err := g.clock()
	if err != nil {
		return err
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	st, err := g.store(cfg)
	if err != nil {
		return err
	}
	doc := present.Dashboard(cfg, st, clk.Now())
	for _, p := range doc.Corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if g.json {
		return g.printJSON(doc)
	}
	return present.RenderDashboard(g.stdout, doc, g.style(g.stdout))
}

// runStatusMetrics prints the Prometheus text exposition of the project
// once (`ooda status --metrics`), for node_exporter's textfile collector.
// Like every status view it only reads; a corrupt file is named on stderr
// and, in the text, by ooda_state_file_corrupt.
func runStatusMetrics(g *globals) error {
	if g.json {
		return usageError(errors.New("status: --metrics prints the Prometheus text format; leave out --json"))
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	r := metrics.Read(metrics.Project{Dir: root, Config: cfg}, clk.Now())
	for _, p := range r.Warnings {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	return metrics.Write(g.stdout, r)
}
