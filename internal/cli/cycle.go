package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
)

// cycleOptions are the flags of `ooda cycle`.
type cycleOptions struct {
	dryRun bool
}

func newCycleCmd(g *globals) *cobra.Command {
	var o cycleOptions
	cmd := &cobra.Command{
		Use:   "cycle [--dry-run]",
		Short: "Run one complete OODA cycle",
		Long: `Run one complete OODA cycle: the safety checks of Step 0, Observe, Orient,
Decide (an auditable score table), Act (the winning domain's skill), and the
durable record of Step 6.

--dry-run computes Observe, Orient and Decide, reports what would run, and
writes nothing at all: no lock, no state, no lens files. It still stops with
exit 3 when the HALT file exists.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCycle(cmd.Context(), g, o) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "observe, orient and decide only; write nothing")
	return cmd
}

func runCycle(ctx context.Context, g *globals, o cycleOptions) error {
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
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts := engine.Options{Project: root, ConfigPath: cfgPath, Clock: clk, DryRun: o.dryRun, Registry: skills.Registry(), Out: g.human()}
	// The forge is chosen from config.forge; a config that does not load
	// is reported by the engine itself (exit 2), so it is not an error here.
	if cfg, cerr := config.LoadProject(cfgPath, root); cerr == nil {
		opts.Config = cfg
		registerSecrets(cfg)
		f, ferr := forge.Select(ctx, cfg, root)
		if ferr != nil {
			fmt.Fprintf(g.human(), "[WARN] Forge not available (%s); continuing without pull-request data.\n", safetext.Error(ferr))
		}
		opts.Forge = f
	}
	// With many domains, the card's lens changelogs are read while the
	// cycle records itself.
	var lens *present.LensPrefetch
	if cfg := opts.Config; cfg != nil && !o.dryRun && len(cfg.Domains) >= lensPrefetchMin {
		if st, serr := g.store(cfg); serr == nil {
			opts.AfterAct = func() { lens = present.PrefetchLensChangelogs(cfg, st) }
		}
	}
	res, err := engine.RunCycle(ctx, opts)
	if lens != nil {
		// Its reads end before the card (or the command) does.
		defer present.WaitLensPrefetch(lens)
	}
	if err != nil {
		if g.json && res.Status != "" {
			_ = g.printCycleJSON(cycleJSON(res, err))
		}
		if res.HaltCreated {
			// A record that failed tripped the breaker: the HALT file is
			// the outcome to act on, as for any other halt (exit 3).
			return withCode(ExitHalted, err)
		}
		return err
	}
	var card *present.Card
	if !o.dryRun && res.Status == engine.StatusCompleted && opts.Config != nil {
		w := g.human()
		rec := recordedOf(res)
		rec.Lens, rec.Written = lens, res.Written
		card = cycleCard(g, w, g.style(w), opts.Config, res.Cycle, rec)
	}
	if g.json {
		doc := cycleJSON(res, nil)
		doc.Card = card
		if err := g.printCycleJSON(doc); err != nil {
			return err
		}
	}
	if code := res.ExitCode(); code != 0 {
		return withCode(code, nil)
	}
	return nil
}

// cycleCard is Step 7: the Cycle Card of the cycle just recorded, built
// from the state as the cycle wrote it (the card `ooda status --share`
// shows later), printed on the human writer unless output.cycle_card is
// false; nil when the state does not hold the cycle (a record that could
// not be read back). rec holds the values the cycle wrote, which the card
// takes instead of reading their files again (present.Recorded).
func cycleCard(g *globals, w io.Writer, style present.Style, cfg *config.Config, cycle int, rec present.Recorded) *present.Card {
	st, err := g.store(cfg)
	if err != nil {
		return nil
	}
	v := present.BuildCardFrom(cfg, st, rec)
	for _, p := range v.Corrupt {
		fmt.Fprintf(g.stderr, "[WARN] corrupt state file: %s\n", safetext.Text(p))
	}
	if v.Card == nil || v.Card.Cycle != cycle {
		return nil
	}
	if cfg.Output.CycleCard {
		fmt.Fprint(w, "\n"+present.RenderCard(v.Card, style, false))
	}
	return v.Card
}

// cycleDoc is the --json document of `ooda cycle` (CLI.md).
type cycleDoc struct {
	Status      string     `json:"status"`
	Reason      *string    `json:"reason"`
	Cycle       *int       `json:"cycle"`
	Scores      []scoreDoc `json:"scores"`
	Winner      *winnerDoc `json:"winner"`
	Result      *string    `json:"result"`
	ResultType  *string    `json:"result_type"`
	Quality     *float64   `json:"quality_multiplier"`
	PRNumber    *int       `json:"pr_number"`
	HaltCreated bool       `json:"halt_created"`
	Notes       []string   `json:"notes"`
	Elapsed     float64    `json:"elapsed_seconds"`
	// Summary is what the skill's report said it found; absent when it
	// said nothing (an addition to CLI.md's shape).
	Summary *string     `json:"summary,omitempty"`
	Error   *string     `json:"error,omitempty"`
	Decide  *decideNote `json:"decide,omitempty"`
	// Card is the Cycle Card of a cycle that ran (Step 7), the fields a
	// person sees at its end; null for a dry run, a skip, a halt or an
	// error (an addition to CLI.md's shape).
	Card *present.Card `json:"card"`

	// options, when not nil, are the decision's options, the scores
	// Scores stands for (scoreDocOf of each; Scores is then nil): the
	// document's writer writes each score from its option, and the list
	// is made (withScores) only for encoding/json. A thousand domains'
	// scores are otherwise made, copied and dropped by every cycle.
	options []decide.Option
}

// withScores is d with its scores in Scores, as encoding/json writes them.
func (d cycleDoc) withScores() cycleDoc {
	if d.options == nil {
		return d
	}
	d.Scores = make([]scoreDoc, 0, len(d.options))
	for _, o := range d.options {
		d.Scores = append(d.Scores, scoreDocOf(o))
	}
	d.options = nil
	return d
}

// scoreCount is the number of scores d holds.
func (d *cycleDoc) scoreCount() int {
	if d.options != nil {
		return len(d.options)
	}
	return len(d.Scores)
}

type decideNote struct {
	ScoreVerified bool     `json:"score_verified"`
	CycleMode     string   `json:"cycle_mode"`
	Steps         []string `json:"steps"`
}

type scoreDoc struct {
	Domain         string   `json:"domain"`
	Weight         float64  `json:"weight"`
	Hours          *float64 `json:"hours"`
	Pending        *int     `json:"pending"`
	Staleness      float64  `json:"staleness"`
	Queue          *float64 `json:"queue,omitempty"`
	Alert          float64  `json:"alert"`
	Mission        float64  `json:"mission"`
	Goal           float64  `json:"goal"`
	Confidence     float64  `json:"confidence"`
	ConfidenceTerm float64  `json:"confidence_term"`
	Memo           float64  `json:"memo"`
	Balance        float64  `json:"balance"`
	// Value is adaptive scoring's learned-value term, absent when the
	// term is off (the seed's table is unchanged).
	Value    *float64 `json:"value,omitempty"`
	RawScore float64  `json:"raw_score"`
	Score    float64  `json:"score"`
	Excluded *string  `json:"excluded"`
	Reasons  []string `json:"reasons"`
}

type winnerDoc struct {
	Domain     string   `json:"domain"`
	Skill      string   `json:"skill"`
	Score      *float64 `json:"score"`
	Confidence float64  `json:"confidence"`
	Gated      bool     `json:"gated"`
	Guidance   *string  `json:"guidance"`
	Chain      []string `json:"chain"`
}

// r4 rounds to 4 places; adding 0 turns a negative zero into 0, which
// would otherwise print as -0.
func r4(v float64) float64 { return math.Round(v*1e4)/1e4 + 0 }

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func cycleJSON(res engine.Result, err error) cycleDoc {
	d := cycleDoc{Status: res.Status, Reason: strp(res.Reason), Scores: []scoreDoc{}, Notes: res.Notes,
		HaltCreated: res.HaltCreated, Elapsed: math.Round(res.Elapsed.Seconds()*1000) / 1000, PRNumber: res.PRNumber, Quality: res.Quality}
	if res.Summary != "" {
		sum := res.Summary
		d.Summary = &sum
	}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	if res.Cycle > 0 {
		c := res.Cycle
		d.Cycle = &c
	}
	d.Result, d.ResultType = strp(res.Result), strp(res.ResultType)
	if err != nil {
		msg := err.Error()
		d.Error = &msg
	}
	if dec := res.Decision; dec != nil {
		d.Decide = &decideNote{ScoreVerified: dec.ScoreVerified, CycleMode: dec.CycleMode, Steps: dec.Notes}
		d.Scores, d.options = nil, dec.Options
		if d.options == nil {
			d.Scores = []scoreDoc{}
		}
		if w := dec.Winner; w != nil {
			wd := &winnerDoc{Domain: w.Domain, Skill: w.Skill, Confidence: r4(w.Confidence), Gated: dec.Gated, Guidance: strp(dec.Guidance), Chain: res.WinnerChain}
			if dec.Guidance == "" {
				s := r4(w.Score)
				wd.Score = &s
			}
			if wd.Chain == nil {
				wd.Chain = []string{}
			}
			d.Winner = wd
		}
	}
	return d
}

func scoreDocOf(o decide.Option) scoreDoc {
	s := scoreDoc{Domain: o.Domain, Weight: r4(o.Weight), Pending: o.Pending, Staleness: r4(o.Staleness), Alert: r4(o.Alert),
		Mission: r4(o.Mission), Goal: r4(o.Goal), Confidence: r4(o.Confidence), ConfidenceTerm: r4(o.ConfidenceTerm),
		Memo: r4(o.Memo), Balance: r4(o.Balance), RawScore: r4(o.RawScore), Score: r4(o.Score), Excluded: strp(o.Excluded), Reasons: o.Reasons}
	if o.Hours != nil {
		h := r4(*o.Hours)
		s.Hours = &h
	}
	if o.Value != 0 {
		v := r4(o.Value)
		s.Value = &v
	}
	if o.Virtual {
		q := r4(o.Queue)
		s.Queue = &q
	}
	if s.Reasons == nil {
		s.Reasons = []string{}
	}
	return s
}

// scoreValues is scoreDocOf of one option (doc), its pointers to the
// values below instead of values of their own: set again for each
// option, the scores of a table are written one after another without
// an allocation each (TestCycleDocFromOptionsIsEncodingJSONs holds the
// two to the same bytes).
type scoreValues struct {
	doc                 scoreDoc
	hours, value, queue float64
	excluded            string
}

// set makes v.doc scoreDocOf(*o).
func (v *scoreValues) set(o *decide.Option) {
	v.doc = scoreDoc{Domain: o.Domain, Weight: r4(o.Weight), Pending: o.Pending, Staleness: r4(o.Staleness), Alert: r4(o.Alert),
		Mission: r4(o.Mission), Goal: r4(o.Goal), Confidence: r4(o.Confidence), ConfidenceTerm: r4(o.ConfidenceTerm),
		Memo: r4(o.Memo), Balance: r4(o.Balance), RawScore: r4(o.RawScore), Score: r4(o.Score), Reasons: o.Reasons}
	if o.Excluded != "" {
		v.excluded = o.Excluded
		v.doc.Excluded = &v.excluded
	}
	if o.Hours != nil {
		v.hours = r4(*o.Hours)
		v.doc.Hours = &v.hours
	}
	if o.Value != 0 {
		v.value = r4(o.Value)
		v.doc.Value = &v.value
	}
	if o.Virtual {
		v.queue = r4(o.Queue)
		v.doc.Queue = &v.queue
	}
	if v.doc.Reasons == nil {
		v.doc.Reasons = []string{}
	}
}

// lensPrefetchMin is the number of domains from which `ooda cycle` reads
// the card's lens changelogs while the cycle records itself: below it
// they are a few reads of small files, not worth a goroutine.
const lensPrefetchMin = 64

// recordedOf is what the cycle of res wrote, for its card.
func recordedOf(res engine.Result) present.Recorded {
	if r := res.Recorded; r != nil {
		return present.Recorded{Entry: r.Entry, Confidence: r.Confidence, Memos: r.Memos, CostLedger: r.CostLedger}
	}
	return present.Recorded{}
}
