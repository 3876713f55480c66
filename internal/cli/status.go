package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// statusOptions are the views of `ooda status` (CLI.md): the dashboard
// by default, or one of --orient, --scorecard and --share.
type statusOptions struct {
	orient    bool
	scorecard bool
	window    int
	share     bool
	plain     bool
}

func newStatusCmd(g *globals) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status [--orient | --scorecard [--window N] | --share [--plain]]",
		Short: "Show the loop's dashboard: HALT, domains, actions, saturation, cost",
		Long: `Show the dashboard of the project: whether it is halted and why, each
domain's status, last run, confidence and alerts, the pending actions and
the top one, the saturation counter, today's cost against the daily cap,
the level and the mission.

status only reads: it takes no lock and writes, moves or repairs nothing.
A missing state file shows its default; a corrupt one is named on stderr
("[WARN] corrupt state file: PATH") and shown as its default, so the
dashboard always renders. With --json it prints one JSON document
(docs/status.md).`,
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
	return cmd
}

// check rejects flags that do not go together: one view at a time, and
// --window and --plain only with the view they shape.
func (o statusOptions) check(cmd *cobra.Command) error {
	views := 0
	for _, on := range []bool{o.orient, o.scorecard, o.share} {
		if on {
			views++
		}
	}
	switch {
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

// statusDoc is the --json document of CLI.md; every key is always
// present, with null where there is nothing to show.
type statusDoc struct {
	CycleCount  int            `json:"cycle_count"`
	LastCycle   *string        `json:"last_cycle"`
	Halt        statusHalt     `json:"halt"`
	Level       int            `json:"level"`
	Mission     string         `json:"mission"`
	Domains     []statusDomain `json:"domains"`
	Actions     statusActions  `json:"actions"`
	Saturation  int            `json:"saturation"`
	Cost        statusCost     `json:"cost"`
	Quarantined []string       `json:"quarantined"`

	// corrupt names each state file that could not be read, for the
	// warnings; it is not part of the document.
	corrupt []string
}

type statusHalt struct {
	Active bool    `json:"active"`
	Reason *string `json:"reason"`
}

type statusDomain struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	LastRun    *string  `json:"last_run"`
	Hours      *float64 `json:"hours"`
	Confidence float64  `json:"confidence"`
	Alerts     int      `json:"alerts"`
}

type statusActions struct {
	Pending int           `json:"pending"`
	Top     *statusAction `json:"top"`
}

type statusAction struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Rice  float64 `json:"rice"`
}

type statusCost struct {
	TodayUSD float64 `json:"today_usd"`
	LimitUSD float64 `json:"limit_usd"`
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
	doc := collectStatus(cfg, st, clk.Now())
	for _, p := range doc.corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if g.json {
		return g.printJSON(doc)
	}
	return writeStatus(g.stdout, doc)
}

// collectStatus gathers the dashboard. It only reads: Store.Load lists a
// corrupt file in Snapshot.Corrupt and leaves it where it is (setting it
// aside is Quarantine's, which only a cycle calls), so the dashboard shows
// the default in its place and names it.
func collectStatus(cfg *config.Config, st *state.Store, now time.Time) statusDoc {
	doc := statusDoc{
		Level:       cfg.ProgressiveComplex.CurrentLevel,
		Mission:     cfg.Mission,
		Domains:     []statusDomain{},
		Quarantined: []string{},
		Cost:        statusCost{LimitUSD: cfg.Cost.DailyLimitUSD},
	}
	snap, lerr := st.Load()
	if snap == nil {
		snap = &state.Snapshot{Confidence: state.NewConfidence()}
	}
	for _, c := range snap.Corrupt {
		doc.corrupt = append(doc.corrupt, c.Path)
	}
	var cle *state.CorruptLedgerError
	switch {
	case errors.As(lerr, &cle):
		doc.corrupt = append(doc.corrupt, cle.Path)
	case lerr != nil:
		// The state directory itself cannot be read (a symlink out of
		// the project): every file is its default, and the reason shown.
		doc.corrupt = append(doc.corrupt, st.EvolveDir+" ("+lerr.Error()+")")
	}

	if active, content := st.HaltExists(cfg.Safety.HaltFile); active {
		r := state.HaltLine(content)
		doc.Halt = statusHalt{Active: true, Reason: &r}
	}

	s := snap.State
	doc.CycleCount = s.CycleCount
	if s.LastCycle != nil && *s.LastCycle != "" {
		doc.LastCycle = s.LastCycle
	}
	doc.Saturation = s.ConsecutiveObserveOnlyCycles

	for _, d := range cfg.Domains {
		// status is the domain's health as its skill last reported it
		// (the state file's status: healthy, degraded, critical, …), as
		// the original's dashboard shows it; "unknown" when the skill has
		// not said, and the configuration's own when it keeps the domain
		// from running (disabled, available).
		sd := statusDomain{Name: d.Name, Status: "unknown", Confidence: cfg.Confidence.Initial}
		if v, ok := snap.Confidence.Get(d.Name); ok {
			sd.Confidence = v
		}
		ds, err := st.ReadDomainState(d.StateFile)
		if err != nil {
			doc.corrupt = append(doc.corrupt, st.Path(d.StateFile))
		}
		switch {
		case !d.IsEnabled():
			sd.Status = "disabled"
		case !d.Scoreable():
			sd.Status = d.EffectiveStatus()
		case ds.Status != "":
			sd.Status = ds.Status
		}
		last := ds.LastRun
		if last == "" {
			// A skill that never wrote last_run: the engine's own record.
			last = s.DomainLastRun[d.Name]
		}
		if t, ok := state.ParseTime(last); ok {
			lr := state.FormatTime(t)
			h := math.Round(now.Sub(t).Hours()*10) / 10
			sd.LastRun, sd.Hours = &lr, &h
		}
		sd.Alerts = len(ds.Alerts)
		doc.Domains = append(doc.Domains, sd)
	}

	q := snap.ActionQueue
	doc.Actions.Pending = len(q.Pending)
	for _, a := range q.Pending {
		// The first of equals wins, the queue's own order.
		if doc.Actions.Top == nil || a.Rice() > doc.Actions.Top.Rice {
			doc.Actions.Top = &statusAction{ID: a.ID, Title: a.Title, Rice: a.Rice()}
		}
	}

	// A ledger of another UTC day is yesterday's spend: today's is 0, as
	// the cycle's own daily reset counts it (CostLedger.ResetIfNewDay).
	if l := snap.CostLedger; l != nil && l.Date == now.UTC().Format("2006-01-02") {
		doc.Cost.TodayUSD = l.TotalEstimatedUSD
	}
	return doc
}

// writeStatus prints the plain-text dashboard. Every value that comes
// from a state file or the configuration is masked and escaped: a
// skill's status or an action's title cannot forge a line or drive the
// terminal.
func writeStatus(w io.Writer, doc statusDoc) error {
	var b strings.Builder
	if doc.Halt.Active {
		fmt.Fprintf(&b, "HALT: active — %s\n", safetext.Text(*doc.Halt.Reason))
	} else {
		b.WriteString("HALT: not active\n")
	}
	last := "never"
	if doc.LastCycle != nil {
		last = safetext.Text(*doc.LastCycle)
	}
	fmt.Fprintf(&b, "Cycles: %d (last: %s)\n", doc.CycleCount, last)
	fmt.Fprintf(&b, "Level: %d\n", doc.Level)
	mission := "(none)"
	if strings.TrimSpace(doc.Mission) != "" {
		mission = safetext.Text(doc.Mission)
	}
	fmt.Fprintf(&b, "Mission: %s\n", mission)
	b.WriteString("Domains:\n")
	if len(doc.Domains) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, d := range doc.Domains {
		run := "never run"
		if d.LastRun != nil {
			run = fmt.Sprintf("last run %s (%.1fh ago)", *d.LastRun, *d.Hours)
		}
		fmt.Fprintf(&b, "  %s  %s  %s  confidence %.2f  alerts %d\n", safetext.Text(d.Name), safetext.Text(d.Status), run, d.Confidence, d.Alerts)
	}
	fmt.Fprintf(&b, "Actions: %d pending", doc.Actions.Pending)
	if t := doc.Actions.Top; t != nil {
		label := t.Title
		if label == "" {
			label = t.ID
		}
		fmt.Fprintf(&b, "; top: %s (RICE %g)", safetext.Text(label), t.Rice)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Saturation: %d consecutive observe-only cycles\n", doc.Saturation)
	fmt.Fprintf(&b, "Cost today: $%.2f of $%.2f\n", doc.Cost.TodayUSD, doc.Cost.LimitUSD)
	_, err := io.WriteString(w, b.String())
	return err
}
