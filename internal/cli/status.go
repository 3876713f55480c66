package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/dashboard"
	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
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
	html      string
}

func newStatusCmd(g *globals) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status [--orient | --scorecard [--window N] | --share [--plain] | --metrics | --html FILE]",
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
                          (docs/dashboard.md)
  --html FILE             the page of ooda dashboard, with its plots, as one
                          self-contained HTML file (no script, nothing
                          fetched), written atomically; - is stdout`,
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
			case cmd.Flags().Changed("html"):
				return runStatusHTML(g, o.html)
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
	f.StringVar(&o.html, "html", "", "write the dashboard's page as one self-contained HTML file (- for stdout)")
	return cmd
}

// check rejects flags that do not go together: one view at a time, and
// --window and --plain only with the view they shape.
func (o statusOptions) check(cmd *cobra.Command) error {
	views := 0
	html := cmd.Flags().Changed("html")
	for _, on := range []bool{o.orient, o.scorecard, o.share, o.metrics, html} {
		if on {
			views++
		}
	}
	switch {
	case views > 1 && html:
		return usageError(errors.New("status: --html writes a view of its own; leave out --orient, --scorecard, --share and --metrics"))
	case html && o.html == "":
		return usageError(errors.New("status: --html needs a FILE to write (- for stdout)"))
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

// runStatusHTML writes the page `ooda dashboard` serves as one
// self-contained file (`ooda status --html FILE`): a report to attach to
// an issue or keep as a CI artifact. It reads as every status view does;
// the one file it writes is replaced atomically, so a reader never sees
// half a page, and it is never a state file or the configuration.
func runStatusHTML(g *globals, file string) error {
	if g.json {
		return usageError(errors.New("status: --html writes a page; leave out --json"))
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}
	if _, err := g.loadConfig(); err != nil {
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
	if file != "-" {
		if err := htmlTargetAllowed(file, root, cfgPath); err != nil {
			return usageError(err)
		}
	}
	var b bytes.Buffer
	corrupt, err := dashboard.WriteHTML(&b, root, cfgPath, clk.Now())
	if err != nil {
		return err
	}
	for _, p := range corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", p)
	}
	if file == "-" {
		_, err := g.stdout.Write(b.Bytes())
		return err
	}
	return state.WriteFileAtomic(file, b.Bytes(), 0o644)
}

// htmlTargetAllowed refuses a --html FILE that would replace what the
// loop reads: anything under the project's agent/state/ (the parent's
// symlinks resolved, so a link into it is caught too), the configuration
// (by name or as the same file under another name), or a directory.
func htmlTargetAllowed(file, root, cfgPath string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("status: --html %s: %v", file, err)
	}
	resolve := func(p string) string {
		dir, base := filepath.Split(p)
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, base)
		}
		return filepath.Clean(p)
	}
	target := resolve(abs)
	stateDir := filepath.Join(root, "agent", "state")
	if r, err := filepath.EvalSymlinks(stateDir); err == nil {
		stateDir = r
	}
	if rel, err := filepath.Rel(stateDir, target); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("status: --html %s: the file is inside agent/state/, which holds the loop's state; write the page elsewhere", file)
	}
	cfgAbs, _ := filepath.Abs(cfgPath)
	if target == resolve(cfgAbs) {
		return fmt.Errorf("status: --html %s: that is the configuration (%s); write the page elsewhere", file, filepath.Base(cfgPath))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return fmt.Errorf("status: --html %s: is a directory; name the file to write", file)
	}
	if ci, err := os.Stat(cfgPath); err == nil && os.SameFile(fi, ci) {
		return fmt.Errorf("status: --html %s: that is the configuration (%s) under another name; write the page elsewhere", file, filepath.Base(cfgPath))
	}
	return nil
}
