package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/state"
)

// Strategies of the decision logic a simulation runs with.
const (
	// StrategySpec is the seed's scoring, as an unmodified OODA-loop
	// configuration has it.
	StrategySpec = "spec"
	// StrategyAdaptive is the scoring `ooda init` writes: the seed's terms
	// plus the learned ones of docs/scoring.md.
	StrategyAdaptive = "adaptive"
)

// Idle, Skip and Halted are the winners recorded for a cycle that ran no
// skill: the goal-completion idle gate, any other skip, and a cycle the
// HALT file stopped (the engine's own breakers create it: saturation,
// silent failures, the cost cap).
const (
	Idle   = "(idle)"
	Skip   = "(skip)"
	Halted = "(halted)"
)

// Options configure one simulation run.
type Options struct {
	// Cycles is how many cycles to simulate (default 12).
	Cycles int
	// NoMission runs the project without a mission: the engine sees no
	// mission_alignment term; the simulated human still merges only
	// on-mission work, and the metrics still judge by alignment.
	NoMission bool
	// Strategy is StrategySpec or StrategyAdaptive (the default).
	Strategy string
	// Dir is where the temporary project is made ("" = the system's
	// temporary directory); the project is removed afterwards unless
	// Keep is set.
	Dir  string
	Keep bool
	// Log, when set, receives every cycle's own log lines.
	Log io.Writer
}

// Result is one scenario's metrics (docs/sim.md).
type Result struct {
	Scenario  string  `json:"scenario"`
	Strategy  string  `json:"strategy"`
	Cycles    int     `json:"cycles"`
	LoopValue float64 `json:"loop_value_score"`
	// FutileRatePct is null when no cycle ran.
	FutileRatePct *float64 `json:"futile_rate_pct"`
	// MissionHitRatePct is null when no on-mission domain ever had work.
	MissionHitRatePct *float64 `json:"mission_hit_rate_pct"`
	// GoalProgressPct is null for a scenario without a goal.
	GoalProgressPct *float64 `json:"goal_progress_pct"`
	SkippedIdle     int      `json:"skipped_idle"`
	// Halted counts the cycles a HALT file stopped (after one of the
	// engine's breakers created it).
	Halted  int      `json:"halted"`
	Winners []string `json:"winners"`
	// Project is the simulated project's directory, when it was kept.
	Project string `json:"project,omitempty"`
}

// start is the simulated clock's first instant: a fixed date, so that
// every run of a scenario is the same run.
var start = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)

// Run simulates sc through the real engine.
func Run(ctx context.Context, sc *Scenario, o Options) (res Result, err error) {
	if o.Cycles == 0 {
		o.Cycles = 12
	}
	if o.Cycles < 1 || o.Cycles > MaxCycles {
		return res, fmt.Errorf("cycles: %d: must be between 1 and %d", o.Cycles, MaxCycles)
	}
	switch o.Strategy {
	case "":
		o.Strategy = StrategyAdaptive
	case StrategySpec, StrategyAdaptive:
	default:
		return res, fmt.Errorf("strategy %q: must be %s or %s", o.Strategy, StrategySpec, StrategyAdaptive)
	}
	dir, err := os.MkdirTemp(o.Dir, "ooda-sim-")
	if err != nil {
		return res, err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	w := &world{sc: sc, dir: dir, steps: 0, lastRun: map[string]time.Time{}, forge: &simForge{}}
	for _, d := range sc.Domains {
		w.lastRun[d.Name] = start.Add(-hours(sc.InitialHours))
	}
	if err := w.setup(o); err != nil {
		return res, err
	}
	clk := clock.NewFixed(start)
	reg := act.NewRegistry()
	for _, d := range sc.Domains {
		reg.Register(skillOf(d.Name), &simSkill{w: w, domain: d})
	}
	res = Result{Scenario: sc.Name, Strategy: o.Strategy, Cycles: o.Cycles}
	if o.Keep {
		res.Project = dir
	}
	cycleOf := map[int]int{} // engine cycle → simulated cycle
	ran := map[int]bool{}    // simulated cycles that were not idle
	hitDenom, hits := 0, 0
	for c := 1; c <= o.Cycles; c++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		clk.Set(start.Add(time.Duration(c-1) * hours(sc.HoursPerCycle)))
		w.begin(c)
		if err := w.writeDomainStates(c, clk.Now()); err != nil {
			return res, err
		}
		var log strings.Builder
		out := io.Writer(&log)
		r, err := engine.RunCycle(ctx, engine.Options{Project: dir, Clock: clk, Registry: reg, Out: out, Forge: w.forge})
		if o.Log != nil {
			fmt.Fprintf(o.Log, "── %s cycle %d (%s) ──\n%s", sc.Name, c, clk.Now().Format(time.RFC3339), log.String())
		}
		if err != nil {
			return res, fmt.Errorf("cycle %d: %w\n%s", c, err, log.String())
		}
		switch {
		case r.Status == engine.StatusError:
			return res, fmt.Errorf("cycle %d: the engine failed (%s)\n%s", c, r.Reason, log.String())
		case r.Status == engine.StatusHalted:
			// Nobody reviews a simulated project: once a breaker halted
			// it, every later cycle is one that ran and did nothing.
			ran[c] = true
			res.Halted++
			res.Winners = append(res.Winners, Halted)
		case r.Status == engine.StatusSkipped && r.Reason == decide.ReasonGoalsMetIdle:
			res.SkippedIdle++
			res.Winners = append(res.Winners, Idle)
		case w.picked == "":
			ran[c] = true
			res.Winners = append(res.Winners, Skip)
		default:
			ran[c] = true
			res.Winners = append(res.Winners, w.picked)
		}
		if r.Cycle > 0 {
			cycleOf[r.Cycle] = c
		}
		// Mission hit: some on-mission domain had work, and the engine
		// picked an on-mission domain that produced output.
		if w.onMissionWork(c) {
			hitDenom++
			if w.picked != "" && w.domain(w.picked).OnMission() && w.output {
				hits++
			}
		}
		w.afterCycle(clk.Now())
	}
	// One Orient-only pass annotates the last pull request's outcome.
	outs, err := w.finalOrient(clk.Now().Add(hours(sc.HoursPerCycle)))
	if err != nil {
		return res, err
	}
	quality := map[int]float64{}
	futile := map[int]bool{}
	for _, oc := range outs {
		c, ok := cycleOf[oc.CycleID]
		if !ok {
			continue
		}
		quality[c] = oc.QualityMult
		futile[c] = oc.ResultType == "futile" || oc.ResultType == "error"
	}
	n, sum, fut := 0, 0.0, 0
	for c := 1; c <= o.Cycles; c++ {
		if !ran[c] {
			continue
		}
		n++
		q, ok := quality[c]
		sum += q
		// A cycle the engine recorded nothing for did nothing: futile.
		if !ok || futile[c] {
			fut++
		}
	}
	if n > 0 {
		res.LoopValue = round(sum/float64(n), 3)
		res.FutileRatePct = pct(fut, n)
	}
	if hitDenom > 0 {
		res.MissionHitRatePct = pct(hits, hitDenom)
	}
	if g := sc.Goal; g != nil {
		p := round(math.Min(float64(w.steps)/float64(g.TargetCycles), 1)*100, 1)
		res.GoalProgressPct = &p
	}
	return res, nil
}

func pct(a, b int) *float64 {
	v := round(float64(a)/float64(b)*100, 1)
	return &v
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func hours(h float64) time.Duration { return time.Duration(h * float64(time.Hour)) }

// skillOf is the simulated skill of a domain.
func skillOf(domain string) string { return "/sim-" + domain }

// stateFileOf is where a domain's simulated skill keeps its state.
func stateFileOf(domain string) string { return "agent/state/" + domain + ".json" }

// progressFile holds the goal's steps, which the goal's metric command
// prints: the engine measures the goal as it would any project metric.
const progressFile = ".sim/goal_steps"

// world is the simulated environment: the project, its domains' work, the
// forge and the human who merges.
type world struct {
	sc      *Scenario
	dir     string
	forge   *simForge
	steps   int
	lastRun map[string]time.Time

	mu     sync.Mutex
	cycle  int
	picked string // the domain whose skill ran this cycle
	output bool   // it produced output
	pr     *forge.PR
	nextPR int
}

func (w *world) domain(name string) Domain {
	for _, d := range w.sc.Domains {
		if d.Name == name {
			return d
		}
	}
	return Domain{}
}

func (w *world) workAt(domain string, c int) bool { return w.sc.Work[domain].At(c) }

func (w *world) onMissionWork(c int) bool {
	for _, d := range w.sc.Domains {
		if d.OnMission() && w.workAt(d.Name, c) {
			return true
		}
	}
	return false
}

func (w *world) begin(c int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cycle, w.picked, w.output, w.pr = c, "", false, nil
}

// setup writes the simulated project: config.json as the strategy has it,
// the goal, and the goal's progress file.
func (w *world) setup(o Options) error {
	cfg := Config(w.sc, o.Strategy, o.NoMission)
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := state.WriteFileAtomic(filepath.Join(w.dir, "config.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := w.writeProgress(); err != nil {
		return err
	}
	if g := w.sc.Goal; g != nil {
		zero, target := 0.0, float64(g.TargetCycles)
		gs := state.Goals{Goals: []state.Goal{{
			ID: g.ID, Title: g.ID, Status: "active", Progress: &zero, Target: &target, CurrentValue: &zero,
			MetricCommand: "cat " + progressFile, Domain: g.Domain,
		}}}
		if err := state.New(w.dir).SaveGoals(gs); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) writeProgress() error {
	p := filepath.Join(w.dir, progressFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return state.WriteFileAtomic(p, []byte(strconv.Itoa(w.steps)+"\n"), 0o644)
}

// domainState is a domain's state file as its skill would write it.
type domainState struct {
	LastRun string           `json:"last_run"`
	Alerts  []map[string]any `json:"alerts"`
}

func (w *world) stateOf(domain string, c int) domainState {
	ds := domainState{LastRun: state.FormatTime(w.lastRun[domain]), Alerts: []map[string]any{}}
	for _, a := range w.sc.Alerts[domain] {
		if a.Cycle == c {
			ds.Alerts = append(ds.Alerts, map[string]any{"severity": a.Severity, "message": fmt.Sprintf("simulated %s alert in cycle %d", a.Severity, c)})
		}
	}
	return ds
}

func (w *world) writeDomainState(domain string, c int) error {
	b, err := json.Marshal(w.stateOf(domain, c))
	if err != nil {
		return err
	}
	return state.WriteFileAtomic(filepath.Join(w.dir, stateFileOf(domain)), b, 0o644)
}

// writeDomainStates writes every domain's state file as cycle c finds it:
// the alerts of the cycle, the last run its skill recorded.
func (w *world) writeDomainStates(c int, _ time.Time) error {
	for _, d := range w.sc.Domains {
		if err := w.writeDomainState(d.Name, c); err != nil {
			return err
		}
	}
	return nil
}

// afterCycle is the human: the pull request the cycle opened is merged
// when its domain is on-mission and closed otherwise, before the next
// cycle's Orient reads the forge.
func (w *world) afterCycle(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pr == nil {
		return
	}
	pr := *w.pr
	d := w.domain(w.picked)
	at := now.Add(time.Minute)
	if d.OnMission() {
		pr.State, pr.Merged = forge.StateMerged, at
		if g := w.sc.Goal; g != nil && g.Domain == d.Name {
			w.steps++
			_ = w.writeProgress()
		}
	} else {
		pr.State, pr.Closed = forge.StateClosed, at
	}
	w.forge.settle(pr)
}

// finalOrient is the Orient-only pass after the last cycle: the real
// Orient reads the forge as the next cycle would and back-annotates the
// outcomes; nothing is written.
func (w *world) finalOrient(now time.Time) ([]state.Outcome, error) {
	cfg, err := config.LoadProject(filepath.Join(w.dir, "config.json"), w.dir)
	if err != nil {
		return nil, err
	}
	snap, err := state.New(w.dir).Load()
	if err != nil {
		return nil, err
	}
	st, _ := w.forge.Status(context.Background())
	r := orient.FromOutcomes(orient.OutcomeInput{
		Now: now, Config: cfg, Confidence: snap.Confidence.Scores,
		Open: engine.OrientPRs(st.Open), Merged: engine.OrientPRs(st.Merged), Closed: engine.OrientPRs(st.Closed),
		Log: snap.State.DecisionLog, Counted: snap.State.CountedPRs, Outcomes: snap.Outcomes.Entries,
		Reverted: map[int]bool{}, Queue: snap.ActionQueue,
	})
	return r.Outcomes, nil
}

// simSkill is a domain's skill in the simulated world.
type simSkill struct {
	w      *world
	domain Domain
}

// Describe names the simulated skill.
func (s *simSkill) Describe() string { return "simulated " + s.domain.Name }

// Execute does what the domain's work in this cycle allows (docs/sim.md):
// nothing, one action, or a pull request.
func (s *simSkill) Execute(_ context.Context, r act.Request) act.Response {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.cycle
	work := w.workAt(s.domain.Name, c)
	w.picked, w.output = s.domain.Name, work
	w.lastRun[s.domain.Name] = r.Now
	rep := map[string]any{"had_output": work}
	switch {
	case !work:
		rep["summary"] = "nothing to do"
	case s.domain.Kind == "execute":
		w.nextPR++
		n := w.nextPR
		pr := forge.PR{Number: n, Title: fmt.Sprintf("%s: change of cycle %d", s.domain.Name, c), HeadRef: branchOf(s.domain.Name) + strconv.Itoa(c), State: forge.StateOpen, Created: r.Now}
		w.pr = &pr
		w.forge.open(pr)
		rep["pr_number"], rep["pr_created"] = n, true
		rep["summary"] = "opened PR #" + strconv.Itoa(n)
	default:
		rep["actions"] = []map[string]any{{"title": fmt.Sprintf("%s finding of cycle %d", s.domain.Name, c), "reach": 1, "impact": 1, "confidence": 1, "effort": 1}}
		rep["summary"] = "one finding"
		if g := w.sc.Goal; g != nil && g.Domain == s.domain.Name && s.domain.OnMission() {
			w.steps++
			if err := w.writeProgress(); err != nil {
				return act.Response{Error: err.Error(), Executor: s.Describe()}
			}
		}
	}
	if err := w.writeDomainState(s.domain.Name, c); err != nil {
		return act.Response{Error: err.Error(), Executor: s.Describe()}
	}
	if p := r.Env["OODA_REPORT"]; p != "" {
		b, _ := json.Marshal(rep)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return act.Response{Error: err.Error(), Executor: s.Describe()}
		}
	}
	return act.Response{OK: true, Executor: s.Describe()}
}

// branchOf is a domain's pull-request branch prefix in the simulated
// project.
func branchOf(domain string) string { return "sim/" + domain + "/" }

// simForge is the simulated forge: the pull requests the simulated skills
// opened, as the human left them.
type simForge struct {
	mu  sync.Mutex
	prs []forge.PR
}

func (f *simForge) open(pr forge.PR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prs = append(f.prs, pr)
}

func (f *simForge) settle(pr forge.PR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.prs {
		if f.prs[i].Number == pr.Number {
			f.prs[i] = pr
		}
	}
}

// Name names the simulated forge.
func (f *simForge) Name() string { return "simulated" }

// Status lists the open pull requests and the five most recently merged
// and closed, newest first, as a real forge does.
func (f *simForge) Status(context.Context) (forge.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var st forge.Status
	for i := len(f.prs) - 1; i >= 0; i-- {
		pr := f.prs[i]
		switch pr.State {
		case forge.StateOpen:
			st.Open = append(st.Open, pr)
		case forge.StateMerged:
			if len(st.Merged) < 5 {
				st.Merged = append(st.Merged, pr)
			}
		case forge.StateClosed:
			if len(st.Closed) < 5 {
				st.Closed = append(st.Closed, pr)
			}
		}
	}
	return st, nil
}

// Facts describes a pull request; the simulated ones are never eligible
// for the auto-merge (their merge is the human's).
func (f *simForge) Facts(_ context.Context, n int) (forge.Facts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, pr := range f.prs {
		if pr.Number == n {
			return forge.Facts{Number: n, State: pr.State, HeadRef: pr.HeadRef}, nil
		}
	}
	return forge.Facts{}, forge.ErrNotFound
}

// MergeSquash is refused: in the simulation only the human merges.
func (f *simForge) MergeSquash(context.Context, int, string) error {
	return errors.New("the simulated forge merges only as its human does")
}

// Reverted reports no reverts: the simulated human never reverts a merge.
func (f *simForge) Reverted(context.Context, forge.PR) (bool, error) { return false, nil }
