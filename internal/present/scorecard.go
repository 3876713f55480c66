package present

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/artifact"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// Scorecard is the Loop Scorecard of `ooda status --scorecard` and its
// --json document: is the loop improving the project, or only running?
// The keys are SPEC-NOTES §7's; every key is always present, with null
// where the denominator is 0 (shown as "—"). Keys are only ever added,
// never renamed or removed.
type Scorecard struct {
	// Window is the number of most recent cycles scored, or "all".
	Window any `json:"window"`
	// CyclesScored is how many cycles the window holds.
	CyclesScored int `json:"cycles_scored"`
	// ArtifactQuality is the mean artifact_score of the cycles that had
	// their artifact graded (5-G); null when none did.
	ArtifactQuality *float64 `json:"artifact_quality"`
	// ArtifactBar is the quality bar the artifact is graded against.
	ArtifactBar float64 `json:"artifact_bar"`
	// ArtifactCycles is how many cycles of the window were graded.
	ArtifactCycles int `json:"artifact_cycles"`
	// LoopValueScore is the mean quality_multiplier (0 to 1): 1 when every
	// cycle merged a PR that held, 0 when every cycle was futile.
	LoopValueScore *float64 `json:"loop_value_score"`
	// TaskCompletionRatePct is the share of cycles whose PR was merged
	// (pr_merged, pr_merged_held).
	TaskCompletionRatePct *float64 `json:"task_completion_rate_pct"`
	// FutileCycleRatePct is the share of cycles that changed nothing
	// (futile, error).
	FutileCycleRatePct *float64 `json:"futile_cycle_rate_pct"`
	// PRMergeRatePct is the share of the window's PRs that were merged,
	// each PR counted once by its number.
	PRMergeRatePct *float64 `json:"pr_merge_rate_pct"`
	// PRMergeAndHoldRatePct is the share of the window's merged PRs that
	// held (were not reverted).
	PRMergeAndHoldRatePct *float64 `json:"pr_merge_and_hold_rate_pct"`
	// ActionResolutionRatePct is actions resolved over actions added, all
	// time (metrics counters).
	ActionResolutionRatePct *float64 `json:"action_resolution_rate_pct"`
	// CostPerSuccessfulCycle is the window's cost over its successful
	// (merged) cycles, in USD.
	CostPerSuccessfulCycle *float64 `json:"cost_per_successful_cycle"`
	// ActiveGoals is the number of goals with status "active".
	ActiveGoals int `json:"active_goals"`
	// GoalProgressPct is the active goals' mean progress.
	GoalProgressPct *float64 `json:"goal_progress_pct"`
	// MissionHitPct is the on-mission share of the cycles that produced
	// value (quality above 0).
	MissionHitPct *float64 `json:"mission_hit_pct"`
	// SkillGapResolutionPct is the share of skill gaps resolved.
	SkillGapResolutionPct *float64 `json:"skill_gap_resolution_pct"`
	// LessonApplicationPct is the share of reflections whose lesson was
	// applied.
	LessonApplicationPct *float64 `json:"lesson_application_pct"`
	// PendingActions is the action queue's pending count.
	PendingActions int `json:"pending_actions"`
	// ResultBreakdown counts the window's cycles by result_type.
	ResultBreakdown map[string]int `json:"result_breakdown"`
	// Totals are the all-time counters, and the cost the scorecard used.
	Totals ScorecardTotals `json:"totals"`
	// Grade is the letter, A to F (capped by Goodhart); null with no cycle.
	Grade *string `json:"grade"`
	// GradeScore is the composite the letter comes from (0 to 1).
	GradeScore *float64 `json:"grade_score"`
	// Goodhart says whether the artifact is below the bar and what that
	// did to the grade.
	Goodhart ScorecardGoodhart `json:"goodhart"`

	// Verdict is working, partial or stalled (from the loop value score),
	// or "none" with no cycle.
	Verdict string `json:"verdict"`
	// Source is the file the cycles were read from: cycle_log.jsonl,
	// outcomes.json, or "none".
	Source string `json:"source"`
	// SkippedLines counts the lines of the cycle logs read that are not a
	// cycle record or an annotation (garbage, a JSON value of another
	// type, a line too long).
	SkippedLines int `json:"skipped_lines"`
	// Trend is the cycle KPIs over the last windows.
	Trend ScorecardTrend `json:"trend"`

	// Corrupt names each file the scorecard reads that could not be read
	// (its default used), for the warnings on stderr; not in the document.
	Corrupt []string `json:"-"`
}

// ScorecardTotals are the metrics counters (all time) and the cost the
// cost per successful cycle divides.
type ScorecardTotals struct {
	PRsCreated      int     `json:"prs_created"`
	PRsMerged       int     `json:"prs_merged"`
	PRsRejected     int     `json:"prs_rejected"`
	ActionsAdded    int     `json:"actions_added"`
	ActionsResolved int     `json:"actions_resolved"`
	CostUSD         float64 `json:"cost_usd"`
}

// ScorecardGoodhart is the measurement check: a loop can keep every
// process number green while what it builds stays poor, so an artifact
// below the bar caps the grade, the further below the lower the cap.
type ScorecardGoodhart struct {
	// BelowBar is true when the artifact quality is below the bar.
	BelowBar bool `json:"below_bar"`
	// Cap is the best letter allowed (C, D or F); null when not below.
	Cap *string `json:"cap"`
	// Capped is true when the cap lowered the letter.
	Capped bool `json:"capped"`
	// LetterBefore is the letter the composite gives, before the cap.
	LetterBefore *string `json:"letter_before"`
	// Reason says it in a sentence; null when not below the bar.
	Reason *string `json:"reason"`
}

// ScorecardTrend is the cycle KPIs per window, oldest first; the last
// window ends with the newest cycle.
type ScorecardTrend struct {
	// WindowCycles is the number of cycles per window: --window N, or
	// with all cycles the power of two that puts them in at most 8
	// windows. The oldest window may hold fewer.
	WindowCycles int `json:"window_cycles"`
	// Windows are the windows, oldest first.
	Windows []ScorecardPoint `json:"windows"`
}

// ScorecardPoint is one window of the trend.
type ScorecardPoint struct {
	Cycles                int      `json:"cycles"`
	ArtifactQuality       *float64 `json:"artifact_quality"`
	LoopValueScore        *float64 `json:"loop_value_score"`
	TaskCompletionRatePct *float64 `json:"task_completion_rate_pct"`
	FutileCycleRatePct    *float64 `json:"futile_cycle_rate_pct"`
	MissionHitPct         *float64 `json:"mission_hit_pct"`
}

// scorecardWindows is how many windows the trend shows.
const scorecardWindows = 8

// scorecardDefaultBar is the bar when no quality_rubric sets one.
const scorecardDefaultBar = 0.65

// scorecardFiles are the evolve files the scorecard reads; a corrupt one
// is named.
var scorecardFiles = []string{state.GoalsFile, state.ActionQueueFile, state.SkillGapsFile, state.MetricsFile, state.OutcomesFile, state.ReflectionsFile}

// BuildScorecard scores the last window cycles (all of them when window
// is 0). The cycles come from cycle_log.jsonl, read from its end with
// the back-annotations applied, when it holds any; else from
// outcomes.json. Goals, the queue, the gaps, the reflections and the
// counters are read from their files. It only reads.
func BuildScorecard(cfg *config.Config, st *state.Store, window int) Scorecard {
	return BuildScorecardSeeing(cfg, st, window, nil)
}

// BuildScorecardSeeing is BuildScorecard that also hands see (when not
// nil) each cycle line it reads from cycle_log.jsonl, newest first and
// with the annotations applied, so that a reader of another figure of the
// history reads the log once. Lines read before the log turned out
// unreadable may have been seen; outcomes.json is never seen.
func BuildScorecardSeeing(cfg *config.Config, st *state.Store, window int, see func(state.CycleLogLine)) Scorecard {
	sc := Scorecard{Window: "all", ResultBreakdown: map[string]int{}, ArtifactBar: scorecardBar(cfg), Verdict: "none", Source: "none"}
	if window > 0 {
		sc.Window = window
	}
	snap, lerr := st.LoadFiles(append(scorecardFiles, state.CostLedgerFile)...)
	if snap == nil {
		snap = &state.Snapshot{}
	}
	for _, c := range snap.Corrupt {
		sc.Corrupt = append(sc.Corrupt, c.Path)
	}
	var cle *state.CorruptLedgerError
	switch {
	case errors.As(lerr, &cle):
		sc.Corrupt = append(sc.Corrupt, cle.Path)
	case lerr != nil:
		sc.Corrupt = append(sc.Corrupt, st.EvolveDir+" ("+lerr.Error()+")")
	}

	acc := newScAcc(window)
	// --window N reads the last 8N cycles: N for the KPIs, the rest for
	// the trend. A window too large to multiply is all of them.
	n := 0
	if window > 0 && window <= math.MaxInt32 {
		n = window * scorecardWindows
	}
	stats, herr := st.CycleHistoryTail(n, func(r state.CycleRecord) bool {
		l := r.Line
		if see != nil {
			see(l)
		}
		acc.add(scCycle{resultType: l.ResultType, quality: l.QualityMult, onMission: l.OnMission, artifact: l.ArtifactScore, cost: l.CostUSD, pr: l.PRNumber})
		return true
	})
	sc.SkippedLines = stats.Skipped
	fromLog := herr == nil && stats.Cycles > 0
	if herr != nil {
		sc.Corrupt = append(sc.Corrupt, st.EvolvePath(state.CycleLogFile)+" ("+herr.Error()+")")
	}
	var cost float64
	switch {
	case fromLog:
		sc.Source = state.CycleLogFile
		cost = acc.kpi.cost
	default:
		acc = newScAcc(window)
		outs := snap.Outcomes.Entries
		for i := len(outs) - 1; i >= 0 && acc.more(); i-- {
			o := outs[i]
			acc.add(scCycle{resultType: o.ResultType, quality: o.QualityMult, onMission: o.OnMission != nil && *o.OnMission, artifact: o.ArtifactScore, pr: o.PRNumber})
		}
		if len(outs) > 0 {
			sc.Source = state.OutcomesFile
		}
		// Outcomes carry no cost: the whole spend the metrics record,
		// else the ledger's, whatever its day.
		cost = snap.Metrics.Cost.TotalUSD()
		if cost == 0 && snap.CostLedger != nil {
			cost = snap.CostLedger.TotalEstimatedUSD
		}
	}

	c := snap.Metrics.Counters
	sc.Totals = ScorecardTotals{
		PRsCreated: c.TotalPRsCreated, PRsMerged: c.TotalPRsMerged, PRsRejected: c.TotalPRsRejected,
		ActionsAdded: c.ActionsAdded, ActionsResolved: c.ActionsResolved, CostUSD: scRound(cost, 4),
	}
	sc.PendingActions = len(snap.ActionQueue.Pending)
	var progress float64
	for _, g := range snap.Goals.Goals {
		if g.Status == "active" {
			sc.ActiveGoals++
			if g.Progress != nil {
				progress += *g.Progress
			}
		}
	}

	k := acc.kpi
	sc.CyclesScored = k.n
	for rt, v := range k.results {
		sc.ResultBreakdown[rt] = v
	}
	sc.Trend = acc.trend()
	if k.n > 0 {
		sc.ArtifactQuality = scRatio(k.artSum, float64(k.artN), 3)
		sc.ArtifactCycles = k.artN
		sc.LoopValueScore = scRatio(k.qsum, float64(k.n), 3)
		sc.TaskCompletionRatePct = scPct(k.success, k.n)
		sc.FutileCycleRatePct = scPct(k.futile, k.n)
		var opened, merged, held int
		for _, f := range k.prs {
			if f&scPROpened != 0 {
				opened++
			}
			if f&scPRMerged != 0 {
				merged++
			}
			if f&scPRHeld != 0 {
				held++
			}
		}
		sc.PRMergeRatePct = scPct(merged, opened)
		sc.PRMergeAndHoldRatePct = scPct(held, merged)
		sc.ActionResolutionRatePct = scPct(c.ActionsResolved, c.ActionsAdded)
		sc.CostPerSuccessfulCycle = scRatio(cost, float64(k.success), 4)
		if sc.ActiveGoals > 0 {
			v := scRound(100*progress/float64(sc.ActiveGoals), 1)
			sc.GoalProgressPct = &v
		}
		sc.MissionHitPct = scPct(k.onMission, k.producing)
		resolved := 0
		for _, g := range snap.SkillGaps.Gaps {
			if g.Resolved {
				resolved++
			}
		}
		sc.SkillGapResolutionPct = scPct(resolved, len(snap.SkillGaps.Gaps))
		applied := 0
		for _, r := range snap.Reflections.Reflections {
			if r.Status == "applied" {
				applied++
			}
		}
		sc.LessonApplicationPct = scPct(applied, len(snap.Reflections.Reflections))
	}
	sc.grade()
	return sc
}

// scorecardBar is the bar the artifact is graded against: bar_coast,
// else bar, of the top-level quality_rubric, else of the first domain's
// that has one (0.70, artifact.DefaultBar, for a rubric that sets no bar:
// the bar its cycles are graded against), else 0.65.
func scorecardBar(cfg *config.Config) float64 {
	pick := func(raw json.RawMessage) (float64, bool) {
		var r map[string]json.RawMessage
		if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &r) != nil {
			return 0, false
		}
		for _, k := range []string{"bar_coast", "bar"} {
			var v float64
			if b, ok := r[k]; ok && json.Unmarshal(b, &v) == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v, true
			}
		}
		if r["dimensions"] != nil || r["axes"] != nil {
			// A rubric without bars is graded against the default bar
			// (5-G): the scorecard compares with the same one.
			return artifact.DefaultBar, true
		}
		return 0, false
	}
	if cfg == nil {
		return scorecardDefaultBar
	}
	if v, ok := pick(cfg.QualityRubric); ok {
		return v
	}
	ds := slices.Clone(cfg.Domains)
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Index < ds[j].Index })
	for _, d := range ds {
		if v, ok := pick(d.QualityRubric); ok {
			return v
		}
	}
	return scorecardDefaultBar
}

// grade sets the grade, its composite, the Goodhart cap and the verdict
// from the rounded KPIs, so that anyone can recompute them from the
// document.
func (sc *Scorecard) grade() {
	lv := sc.LoopValueScore
	if lv == nil {
		sc.Verdict = "none"
		return
	}
	switch {
	case *lv >= 0.6:
		sc.Verdict = "working"
	case *lv >= 0.3:
		sc.Verdict = "partial"
	default:
		sc.Verdict = "stalled"
	}
	deref := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	g := deref(sc.GoalProgressPct) / 100
	f := deref(sc.FutileCycleRatePct) / 100
	v := math.Min(*lv/0.5, 1)
	bar := sc.ArtifactBar
	var composite float64
	if a := sc.ArtifactQuality; a != nil {
		if *a < bar && bar > 0 {
			g *= *a / bar
		}
		composite = 0.45**a + 0.25*g + 0.20*(1-f) + 0.10*v
	} else {
		composite = 0.5*g + 0.3*(1-f) + 0.2*v
	}
	composite = scRound(composite, 3)
	letter := scLetter(composite)
	sc.GradeScore = &composite
	before := letter
	sc.Goodhart.LetterBefore = &before
	if a := sc.ArtifactQuality; a != nil && *a < bar {
		limit := "F"
		switch {
		case *a >= 0.75*bar:
			limit = "C"
		case *a >= 0.5*bar:
			limit = "D"
		}
		sc.Goodhart.BelowBar = true
		sc.Goodhart.Cap = &limit
		if strings.Index("FDCBA", letter) > strings.Index("FDCBA", limit) {
			letter = limit
			sc.Goodhart.Capped = true
		}
		reason := fmt.Sprintf("artifact quality %s is below the bar %s: the grade can be no better than %s, whatever the process numbers say", scNum(*a), scNum(bar), limit)
		sc.Goodhart.Reason = &reason
	}
	sc.Grade = &letter
}

func scLetter(c float64) string {
	switch {
	case c >= 0.8:
		return "A"
	case c >= 0.65:
		return "B"
	case c >= 0.5:
		return "C"
	case c >= 0.35:
		return "D"
	}
	return "F"
}

// scCycle is what the scorecard takes of one cycle's record.
type scCycle struct {
	resultType string
	quality    float64
	onMission  bool
	artifact   *float64
	cost       float64
	pr         *int
}

// scSums are the additive sums of a set of cycles.
type scSums struct {
	n, success, futile   int
	producing, onMission int
	artN                 int
	qsum, artSum, cost   float64
}

func (s *scSums) add(c scCycle) {
	s.n++
	s.qsum += c.quality
	s.cost += c.cost
	switch c.resultType {
	case "pr_merged", "pr_merged_held":
		s.success++
	case "futile", "error":
		s.futile++
	}
	if c.quality > 0 {
		s.producing++
		if c.onMission {
			s.onMission++
		}
	}
	if c.artifact != nil && !math.IsNaN(*c.artifact) && !math.IsInf(*c.artifact, 0) {
		s.artN++
		s.artSum += *c.artifact
	}
}

func (s *scSums) merge(o scSums) {
	s.n += o.n
	s.success += o.success
	s.futile += o.futile
	s.producing += o.producing
	s.onMission += o.onMission
	s.artN += o.artN
	s.qsum += o.qsum
	s.artSum += o.artSum
	s.cost += o.cost
}

// The PR flags of scKPI.prs.
const (
	scPROpened = 1 << iota
	scPRMerged
	scPRHeld
)

// scKPI is the KPI window's sums, its result types and its PRs.
type scKPI struct {
	scSums
	results map[string]int
	prs     map[int]uint8
}

// scAcc takes the cycles newest first: the first window of them are the
// KPIs'; all of them (--window N: the first 8N) go to the trend.
type scAcc struct {
	window int // 0: all
	seen   int
	kpi    scKPI
	// size is the cycles per trend bucket; buckets[0] is the newest.
	size    int
	buckets []scSums
}

func newScAcc(window int) *scAcc {
	a := &scAcc{window: window, size: max(window, 1)}
	a.kpi.results = map[string]int{}
	a.kpi.prs = map[int]uint8{}
	return a
}

// more says whether another, older cycle is still wanted.
func (a *scAcc) more() bool {
	return a.window == 0 || a.seen < a.window*scorecardWindows
}

func (a *scAcc) add(c scCycle) {
	if !a.more() {
		return
	}
	i := a.seen
	a.seen++
	if a.window == 0 || i < a.window {
		a.kpi.add(c)
		rt := c.resultType
		if rt == "" {
			rt = "unknown"
		}
		a.kpi.results[rt]++
		if c.pr != nil && *c.pr > 0 {
			f := a.kpi.prs[*c.pr]
			switch c.resultType {
			case "pr_created", "pr_rejected":
				f |= scPROpened
			case "pr_merged":
				f |= scPROpened | scPRMerged
			case "pr_merged_held":
				f |= scPROpened | scPRMerged | scPRHeld
			}
			if f != 0 {
				a.kpi.prs[*c.pr] = f
			}
		}
	}
	b := i / a.size
	if a.window == 0 && b >= scorecardWindows {
		// All cycles: twice as many per bucket, pairs merged from the
		// newest, so the buckets stay at most 8 and aligned on the end.
		for j := 0; j < scorecardWindows/2; j++ {
			m := a.buckets[2*j]
			m.merge(a.buckets[2*j+1])
			a.buckets[j] = m
		}
		a.buckets = a.buckets[:scorecardWindows/2]
		a.size *= 2
		b = i / a.size
	}
	for len(a.buckets) <= b {
		a.buckets = append(a.buckets, scSums{})
	}
	a.buckets[b].add(c)
}

// trend is the buckets as windows, oldest first.
func (a *scAcc) trend() ScorecardTrend {
	t := ScorecardTrend{WindowCycles: a.size, Windows: []ScorecardPoint{}}
	for i := len(a.buckets) - 1; i >= 0; i-- {
		s := a.buckets[i]
		t.Windows = append(t.Windows, ScorecardPoint{
			Cycles:                s.n,
			ArtifactQuality:       scRatio(s.artSum, float64(s.artN), 3),
			LoopValueScore:        scRatio(s.qsum, float64(s.n), 3),
			TaskCompletionRatePct: scPct(s.success, s.n),
			FutileCycleRatePct:    scPct(s.futile, s.n),
			MissionHitPct:         scPct(s.onMission, s.producing),
		})
	}
	return t
}

// scRound rounds half away from zero to places decimals, without "-0".
func scRound(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p)/p + 0
}

// scPct is n/d as a percentage to one place; nil when d is 0.
func scPct(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := scRound(100*float64(n)/float64(d), 1)
	return &v
}

// scRatio is n/d to places decimals; nil when d is 0.
func scRatio(n, d float64, places int) *float64 {
	if d == 0 {
		return nil
	}
	v := scRound(n/d, places)
	return &v
}

// scNum prints a rounded number as briefly as it reads: 0.433, 100, 0.15.
func scNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// scorecardResultOrder is the order the result types are listed in: the
// most valuable first. Others follow in name order.
var scorecardResultOrder = []string{"pr_merged_held", "pr_merged", "pr_created", "action_extracted", "observe", "pr_rejected", "leap_regressed", "error", "futile"}

// scorecardSparkWidth is the width from which a terminal gets the trend
// as sparklines beside the KPIs, rather than as rows of numbers.
const scorecardSparkWidth = 60

// scRow is one KPI line: its label, its value, its trend (nil when the
// KPI has none) and what it means.
type scRow struct {
	label, value, note string
	trend              []*float64
	top                float64 // the trend's full scale
}

// RenderScorecard draws the scorecard. On a terminal wide enough each
// cycle KPI has a sparkline of its trend (oldest left); elsewhere the
// trend is printed as numbers. Every line fits the width when there is
// one; values from state files are masked and escaped.
func RenderScorecard(sc Scorecard, s Style) string {
	var b strings.Builder
	line := func(text string) { b.WriteString(Fit(text, s.Width) + "\n") }
	trend := sc.Trend.Windows
	spark := s.Terminal && len(trend) > 1 && (s.Width == 0 || s.Width >= scorecardSparkWidth)

	from := "no cycle recorded yet"
	if sc.Source != "none" {
		from = "from " + sc.Source
	}
	head := fmt.Sprintf("Loop Scorecard — all %d %s, %s", sc.CyclesScored, scPlural(sc.CyclesScored, "cycle", "cycles"), from)
	if sc.CyclesScored == 0 {
		head = "Loop Scorecard — " + from
	}
	if n, ok := sc.Window.(int); ok && sc.CyclesScored > 0 {
		head = fmt.Sprintf("Loop Scorecard — last %d %s, %s", n, scPlural(n, "cycle", "cycles"), from)
		if sc.CyclesScored < n {
			head = fmt.Sprintf("Loop Scorecard — last %d %s (%d recorded), %s", n, scPlural(n, "cycle", "cycles"), sc.CyclesScored, from)
		}
	}
	b.WriteString(s.Paint(Bold, Fit(head, s.Width)) + "\n")

	pts := func(get func(ScorecardPoint) *float64) []*float64 {
		out := make([]*float64, len(trend))
		for i, p := range trend {
			out[i] = get(p)
		}
		return out
	}
	artNote := fmt.Sprintf("no graded artifact (bar %s)", scNum(sc.ArtifactBar))
	if sc.ArtifactQuality != nil {
		mark := "at or above"
		if *sc.ArtifactQuality < sc.ArtifactBar {
			mark = "below"
		}
		artNote = fmt.Sprintf("%s the bar %s, %d graded %s", mark, scNum(sc.ArtifactBar), sc.ArtifactCycles, scPlural(sc.ArtifactCycles, "cycle", "cycles"))
	}
	costNote := "cost over merged cycles"
	if sc.Source == state.OutcomesFile || sc.Source == "none" {
		costNote = "all-time cost over merged cycles"
	}
	process := []scRow{
		{"Artifact quality", scOpt(sc.ArtifactQuality, ""), artNote, pts(func(p ScorecardPoint) *float64 { return p.ArtifactQuality }), 1},
		{"Loop value score", scOpt(sc.LoopValueScore, ""), "mean quality per cycle, 0 to 1", pts(func(p ScorecardPoint) *float64 { return p.LoopValueScore }), 1},
		{"Task completion", scOpt(sc.TaskCompletionRatePct, "%"), "cycles whose PR was merged", pts(func(p ScorecardPoint) *float64 { return p.TaskCompletionRatePct }), 100},
		{"Futile cycles", scOpt(sc.FutileCycleRatePct, "%"), "ran and changed nothing", pts(func(p ScorecardPoint) *float64 { return p.FutileCycleRatePct }), 100},
		{"PR merge rate", scOpt(sc.PRMergeRatePct, "%"), "held after merge: " + scOpt(sc.PRMergeAndHoldRatePct, "%"), nil, 0},
		{"Queue resolution", scOpt(sc.ActionResolutionRatePct, "%"), "actions resolved / added, all time", nil, 0},
		{"Cost per success", scUSD(sc.CostPerSuccessfulCycle), costNote, nil, 0},
	}
	learning := []scRow{
		{"Goal progress", scOpt(sc.GoalProgressPct, "%"), fmt.Sprintf("%d active %s", sc.ActiveGoals, scPlural(sc.ActiveGoals, "goal", "goals")), nil, 0},
		{"Mission hit", scOpt(sc.MissionHitPct, "%"), "value cycles on mission", pts(func(p ScorecardPoint) *float64 { return p.MissionHitPct }), 100},
		{"Gap resolution", scOpt(sc.SkillGapResolutionPct, "%"), "skill gaps closed", nil, 0},
		{"Lesson application", scOpt(sc.LessonApplicationPct, "%"), "reflections applied", nil, 0},
		{"Pending actions", strconv.Itoa(sc.PendingActions), "in the action queue", nil, 0},
	}
	row := func(r scRow) {
		text := "  " + Pad(r.label, 20) + Pad(r.value, 9)
		if spark {
			text += Pad(scSpark(r.trend, r.top), scorecardWindows+2)
		}
		line(text + r.note)
	}
	for _, r := range process {
		row(r)
	}
	line("Done-conditions and learning")
	for _, r := range learning {
		row(r)
	}
	if len(sc.ResultBreakdown) > 0 {
		line("Results: " + scBreakdown(sc.ResultBreakdown))
	}

	if !spark && len(trend) > 1 {
		line(fmt.Sprintf("Trend, %d windows of %d %s (oldest first):", len(trend), sc.Trend.WindowCycles, scPlural(sc.Trend.WindowCycles, "cycle", "cycles")))
		for _, r := range append(process[:4:4], learning[1]) {
			if !slices.ContainsFunc(r.trend, func(v *float64) bool { return v != nil }) {
				continue
			}
			var vals []string
			for _, v := range r.trend {
				vals = append(vals, Pad(scOpt(v, ""), 6))
			}
			line(strings.TrimRight("  "+Pad(r.label, 20)+strings.Join(vals, " "), " "))
		}
	}

	gradeText := "—"
	if sc.Grade != nil {
		gradeText = fmt.Sprintf("%s (%s)", *sc.Grade, scNum(*sc.GradeScore))
	}
	verdict := map[string]string{
		"working": "working: the cycles deliver accepted value",
		"partial": "partial: output, but little of it accepted yet",
		"stalled": "stalled: little accepted value; look at the domains and goals",
	}[sc.Verdict]
	rest := " — " + verdict
	if sc.Grade == nil {
		rest = " (no cycle to grade yet: `ooda cycle` runs one)"
	}
	room := 0
	if s.Width > 0 {
		room = max(s.Width-DisplayWidth("Grade: "+gradeText), 1)
	}
	b.WriteString("Grade: " + s.Paint(scGradeColor(sc.Grade), gradeText) + Fit(rest, room) + "\n")
	if g := sc.Goodhart; g.BelowBar && g.Reason != nil {
		warn := "WARNING: " + *g.Reason
		if g.Capped {
			warn += fmt.Sprintf(" (capped from %s)", *g.LetterBefore)
		}
		warn += ". Raise the artifact's quality; more features will not."
		b.WriteString(s.Paint(Red, Fit(warn, s.Width)) + "\n")
	}
	if sc.SkippedLines > 0 {
		line(fmt.Sprintf("Note: %d %s of the cycle logs read %s not a cycle record and %s skipped.", sc.SkippedLines, scPlural(sc.SkippedLines, "line", "lines"), scPlural(sc.SkippedLines, "is", "are"), scPlural(sc.SkippedLines, "was", "were")))
	}
	return b.String()
}

func scPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// scOpt prints a KPI: its number and unit, or "—".
func scOpt(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	return scNum(*v) + unit
}

// scUSD prints dollars with cents, and the fourth place when it is there
// ($0.15 → "$0.15", $0.0125 → "$0.0125").
func scUSD(v *float64) string {
	if v == nil {
		return "—"
	}
	if scRound(*v, 2) == *v {
		return fmt.Sprintf("$%.2f", *v)
	}
	return "$" + scNum(*v)
}

// scSpark draws the trend on the full scale top (not the series' own
// range, which would make a flat 0.51 to 0.52 look like a climb); a
// window without a value is a space.
func scSpark(vals []*float64, top float64) string {
	if top <= 0 || !slices.ContainsFunc(vals, func(v *float64) bool { return v != nil }) {
		return ""
	}
	const levels = "▁▂▃▄▅▆▇█"
	runes := []rune(levels)
	var b strings.Builder
	for _, v := range vals {
		if v == nil {
			b.WriteRune(' ')
			continue
		}
		i := int(math.Round(math.Max(0, math.Min(*v/top, 1)) * float64(len(runes)-1)))
		b.WriteRune(runes[i])
	}
	return b.String()
}

func scBreakdown(m map[string]int) string {
	var parts []string
	for _, rt := range scorecardResultOrder {
		if n, ok := m[rt]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", rt, n))
		}
	}
	var others []string
	for rt := range m {
		if !slices.Contains(scorecardResultOrder, rt) {
			others = append(others, rt)
		}
	}
	sort.Strings(others)
	for _, rt := range others {
		parts = append(parts, fmt.Sprintf("%s %d", safetext.Text(rt), m[rt]))
	}
	return strings.Join(parts, ", ")
}

func scGradeColor(g *string) Color {
	if g == nil {
		return Dim
	}
	switch *g {
	case "A", "B":
		return Green
	case "C":
		return Yellow
	}
	return Red
}
