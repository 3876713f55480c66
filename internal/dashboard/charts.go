package dashboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// ChartCycles is how many of the last cycles the plots show: the history
// is read from the end of cycle_log.jsonl and stops there, so a page
// costs the same after a year of cycles as after a week.
const ChartCycles = 500

// The plot area inside every chart's view box (SVG user units; the style
// sheet scales the box to the page's width).
const (
	chartW      = 640.0
	chartH      = 240.0
	chartLeft   = 52.0
	chartRight  = 150.0 // room for the legend
	chartTop    = 14.0
	chartBottom = 30.0
)

// palette colours the series, by their order; a series past its end
// takes its colours again.
var palette = []string{"#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#1b7c83", "#6e7781"}

// resultColors are the result types' colours, good to bad.
var resultColors = map[string]string{
	"pr_merged_held":   "#116329",
	"pr_merged":        "#1a7f37",
	"pr_created":       "#4ac26b",
	"action_extracted": "#0969da",
	"observe":          "#8c959f",
	"pr_rejected":      "#bf8700",
	"leap_regressed":   "#fb8f44",
	"error":            "#cf222e",
	"futile":           "#82071e",
}

// chart is one plot as the template draws it: an <svg> of lines, texts
// and marks, or, when there is nothing to plot, Empty in its place. Every
// string is escaped by the template; numbers are formatted here.
type chart struct {
	ID    string
	Title string
	// Label is the aria-label: what the plot shows, in words.
	Label string
	// Note says where the numbers come from, under the plot.
	Note  string
	Empty string
	W, H  string
	Grid  []svgLine
	Texts []svgText
	Lines []svgPolyline
	Marks []mark
	Keys  []legendKey
}

type svgLine struct {
	X1, Y1, X2, Y2 string
	Class          string
	Stroke         string
}

type svgText struct {
	X, Y   string
	Anchor string
	Class  string
	Text   string
}

type svgPolyline struct {
	Points string
	Stroke string
	Class  string
}

// mark is one data point: a circle (R set) or a bar (W and H set). Every
// mark has the class "point" and says what it stands for in data-
// attributes, so that a reader of the page can count and check them.
type mark struct {
	X, Y, W, H, R string
	Fill          string
	// Stroke outlines a hollow mark in its series' colour.
	Stroke string
	Class  string
	Cycle  string
	Day    string
	Domain string
	Type   string
	Series string
	// Source is the file (and part of it) a history plot's point comes
	// from: cycle_log, episode, episode_start, episode_end, checkpoint,
	// now.
	Source string
	Skill  string
	Goal   string
	Value  string
	Tip    string
}

// legendKey is one entry of a chart's legend, drawn at its right.
type legendKey struct {
	Y, TextY string
	Fill     string
	Text     string
	Dash     bool
}

// chartRecord is what the plots take of one cycle of the log.
type chartRecord struct {
	cycle      int
	day        string
	domain     string
	score      *float64
	confidence *float64
	resultType string
	cost       float64
	artifact   *float64
	skill      string
	// skillSeconds is how long the cycle's skill ran; nil when no skill
	// ran or the line does not say.
	skillSeconds *float64
}

// plotData is what every plot is drawn from: the last ChartCycles cycles,
// oldest first, the score tables of the cycles state.json's decision log
// still holds, and the files that keep a history of their own: the
// weekly episodes, the checkpoints, today's confidence and goals.
type plotData struct {
	records []chartRecord
	scores  map[int]map[string]float64
	err     error
	skipped int
	// cycleCount is state.json's cycle_count.
	cycleCount  int
	episodes    []state.Episode
	checkpoints []state.Checkpoint
	// confidence is confidence.json's score per domain; goals,
	// goals.json's goals.
	confidence map[string]float64
	goals      []state.Goal
	// corrupt are the files read for the plots that could not be read.
	corrupt []string
}

// readPlotData reads the history once for all the plots: the last
// ChartCycles cycle lines of cycle_log.jsonl (annotations applied), read
// from the log's end, state.json's decision log for the other domains'
// scores, and episodes.json, checkpoints.json, confidence.json and
// goals.json. A file that cannot be read is named in corrupt and drawn
// as missing.
func readPlotData(st *state.Store) plotData {
	var d plotData
	stats, err := st.CycleHistoryTail(ChartCycles, func(rec state.CycleRecord) bool {
		l := rec.Line
		day := ""
		if len(l.Timestamp) >= 10 {
			day = l.Timestamp[:10]
		}
		d.records = append(d.records, chartRecord{
			cycle: l.CycleID, day: day, domain: l.Domain, score: finite(l.Score), confidence: finite(l.Confidence),
			resultType: l.ResultType, cost: l.CostUSD, artifact: finite(l.ArtifactScore),
			skill: l.Skill, skillSeconds: finite(l.SkillSeconds),
		})
		return true
	})
	d.err = err
	d.skipped = stats.Skipped
	slices.Reverse(d.records)
	slices.SortStableFunc(d.records, func(a, b chartRecord) int { return cmp.Compare(a.cycle, b.cycle) })
	d.scores = map[int]map[string]float64{}
	snap, _ := st.LoadFiles(state.StateFile, state.ConfidenceFile, state.GoalsFile, state.EpisodesFile, state.CheckpointsFile)
	if snap == nil {
		return d
	}
	for _, e := range snap.State.DecisionLog {
		if len(e.Scores) > 0 {
			d.scores[e.Cycle] = e.Scores
		}
	}
	d.cycleCount = snap.State.CycleCount
	d.episodes = snap.Episodes.Episodes
	d.checkpoints = snap.Checkpoints.Checkpoints
	d.confidence = snap.Confidence.Scores
	d.goals = snap.Goals.Goals
	for _, c := range snap.Corrupt {
		d.corrupt = append(d.corrupt, c.Path)
	}
	return d
}

func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

// f1 is a coordinate, to a tenth of a unit.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// val is a data value as data-value carries it.
func val(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// frame is a chart's plot area mapped onto its value ranges.
type frame struct {
	x0, x1, y0, y1 float64
}

func (f frame) x(v float64) float64 {
	w := chartW - chartLeft - chartRight
	if f.x1 == f.x0 {
		return chartLeft + w/2
	}
	return chartLeft + (v-f.x0)/(f.x1-f.x0)*w
}

func (f frame) y(v float64) float64 {
	h := chartH - chartTop - chartBottom
	if f.y1 == f.y0 {
		return chartTop + h/2
	}
	return chartTop + h - (v-f.y0)/(f.y1-f.y0)*h
}

// newChart is an empty chart with its axes: ticks on the y axis at
// yTicks, labelled by yLabel.
func newChart(id, title, label string, f frame, yTicks []float64, yLabel func(float64) string) chart {
	c := chart{ID: id, Title: title, Label: label, W: f1(chartW), H: f1(chartH)}
	for _, t := range yTicks {
		y := f.y(t)
		c.Grid = append(c.Grid, svgLine{X1: f1(chartLeft), Y1: f1(y), X2: f1(chartW - chartRight), Y2: f1(y), Class: "grid"})
		c.Texts = append(c.Texts, svgText{X: f1(chartLeft - 6), Y: f1(y + 4), Anchor: "end", Class: "tick", Text: yLabel(t)})
	}
	c.Grid = append(c.Grid,
		svgLine{X1: f1(chartLeft), Y1: f1(chartTop), X2: f1(chartLeft), Y2: f1(chartH - chartBottom), Class: "axis"},
		svgLine{X1: f1(chartLeft), Y1: f1(chartH - chartBottom), X2: f1(chartW - chartRight), Y2: f1(chartH - chartBottom), Class: "axis"})
	return c
}

// xLabels labels the x axis at its two ends (and the middle when there is
// room), with text as each end's label.
func (c *chart) xLabels(f frame, lo, hi string) {
	y := f1(chartH - chartBottom + 16)
	c.Texts = append(c.Texts, svgText{X: f1(chartLeft), Y: y, Anchor: "start", Class: "tick", Text: lo})
	if hi != lo {
		c.Texts = append(c.Texts, svgText{X: f1(chartW - chartRight), Y: y, Anchor: "end", Class: "tick", Text: hi})
	}
}

// legend adds a key per name, top to bottom at the chart's right.
func (c *chart) legend(names []string, colors []string, dash []bool) {
	for i, n := range names {
		y := chartTop + float64(i)*16
		if y > chartH-chartBottom {
			break
		}
		k := legendKey{Y: f1(y), TextY: f1(y + 6), Fill: colors[i], Text: n}
		if dash != nil {
			k.Dash = dash[i]
		}
		c.Keys = append(c.Keys, k)
	}
}

// niceTop is a round upper bound of a y axis holding v; v itself when
// the round one is past the largest float (a hostile 1.7e308), so that no
// coordinate is infinite.
func niceTop(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p {
			if math.IsInf(m*p, 0) {
				return v
			}
			return m * p
		}
	}
	return v
}

// legendX is the x of a legend's part, off units right of its start.
func legendX(off float64) string { return f1(chartW - chartRight + 12 + off) }

func ticks(top float64) []float64 { return []float64{0, top / 2, top} }

// noCycles is what a plot says in place of an empty frame.
const noCycles = "no cycles yet"

// cycleRange is the chart's x range over the records' cycles.
func cycleRange(rs []chartRecord) frame {
	return frame{x0: float64(rs[0].cycle), x1: float64(rs[len(rs)-1].cycle)}
}

// domainOrder is the domains in the order they are coloured: the
// configured ones first, in their order, then any the history names.
func domainOrder(cfg *config.Config, more ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, d := range cfg.Domains {
		add(d.Name)
	}
	for _, m := range more {
		for _, n := range m {
			add(n)
		}
	}
	return out
}

func colorOf(order []string, name string) string {
	i := slices.Index(order, name)
	if i < 0 {
		return palette[len(palette)-1]
	}
	return palette[i%len(palette)]
}

// charts draws every plot of the project page.
func charts(cfg *config.Config, sc present.Scorecard, d plotData) []chart {
	return []chart{
		scoreChart(cfg, d),
		confidenceChart(cfg, d),
		goalChart(d),
		skillChart(d),
		kpiChart(sc),
		resultChart(d),
		costChart(cfg, d),
		artifactChart(cfg, sc, d),
	}
}

// historyNote is the note of the plots drawn from the cycle log.
func historyNote(d plotData, what string) string {
	n := fmt.Sprintf("%s, from cycle_log.jsonl: ", what)
	switch {
	case len(d.records) == 0:
		return n + "no cycle recorded."
	case len(d.records) >= ChartCycles:
		n += fmt.Sprintf("the last %d cycles (%d to %d).", ChartCycles, d.records[0].cycle, d.records[len(d.records)-1].cycle)
	default:
		n += fmt.Sprintf("cycles %d to %d.", d.records[0].cycle, d.records[len(d.records)-1].cycle)
	}
	return n
}

// scoreChart is each domain's score per cycle. The log records the
// winner's score (a filled mark); state.json's decision log adds the
// other domains' scores for the cycles it still holds (hollow marks).
func scoreChart(cfg *config.Config, d plotData) chart {
	title := "Score per domain"
	if len(d.records) == 0 {
		return chart{ID: "score", Title: title, Empty: noCycles}
	}
	type pt struct {
		cycle  int
		v      float64
		winner bool
	}
	series := map[string][]pt{}
	var names []string
	top := 0.0
	for _, r := range d.records {
		if r.score != nil {
			series[r.domain] = append(series[r.domain], pt{r.cycle, *r.score, true})
			names = append(names, r.domain)
			top = max(top, *r.score)
		}
		for _, n := range sortedNames(d.scores[r.cycle]) {
			v := d.scores[r.cycle][n]
			if n == r.domain || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			series[n] = append(series[n], pt{r.cycle, v, false})
			names = append(names, n)
			top = max(top, v)
		}
	}
	order := domainOrder(cfg, names)
	f := cycleRange(d.records)
	f.y0, f.y1 = 0, niceTop(top)
	c := newChart("score", title, "Score of each domain per cycle; the domain the cycle selected is marked filled", f, ticks(f.y1), num)
	c.Note = historyNote(d, "The selected domain's score per cycle (filled)") + " Other domains' scores (hollow) from state.json's decision log, for the cycles it holds."
	c.xLabels(f, fmt.Sprintf("cycle %d", d.records[0].cycle), fmt.Sprintf("cycle %d", d.records[len(d.records)-1].cycle))
	var keys, colors []string
	for _, n := range order {
		ps := series[n]
		if len(ps) == 0 {
			continue
		}
		col := colorOf(order, n)
		name := safetext.Text(n)
		keys, colors = append(keys, name), append(colors, col)
		var line []string
		for _, p := range ps {
			x, y := f.x(float64(p.cycle)), f.y(p.v)
			line = append(line, f1(x)+","+f1(y))
			m := mark{X: f1(x), Y: f1(y), R: "3.5", Fill: col, Class: "point", Cycle: strconv.Itoa(p.cycle), Domain: name, Value: val(p.v),
				Tip: fmt.Sprintf("cycle %d, %s: %s", p.cycle, name, num(p.v))}
			if p.winner {
				m.Class, m.R, m.Tip = "point winner", "4.5", m.Tip+" (selected)"
			} else {
				m.Class, m.Fill = "point other", "none"
			}
			m.Stroke = col
			c.Marks = append(c.Marks, m)
		}
		if len(line) > 1 {
			c.Lines = append(c.Lines, svgPolyline{Points: strings.Join(line, " "), Stroke: col, Class: "series"})
		}
	}
	c.legend(keys, colors, nil)
	return c
}

func sortedNames(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// kpiChart is the scorecard's trend: loop value, futile rate, mission hit
// (and the artifact's quality when graded) per rolling window of the
// whole history, 0 to 1; the scorecard's goal progress is the active
// goals' mean today, a dashed line (goalChart draws each goal's history,
// which is by week, not by window of cycles).
func kpiChart(sc present.Scorecard) chart {
	title := "Scorecard KPIs over rolling windows"
	ws := sc.Trend.Windows
	if sc.CyclesScored == 0 || len(ws) == 0 {
		return chart{ID: "kpi", Title: title, Empty: noCycles}
	}
	f := frame{x0: 0, x1: float64(len(ws) - 1), y0: 0, y1: 1}
	c := newChart("kpi", title, fmt.Sprintf("Loop value, futile cycle rate, mission hit and goal progress, 0 to 1, over %d windows of %d cycles, oldest first", len(ws), sc.Trend.WindowCycles), f, ticks(1), num)
	c.Note = fmt.Sprintf("The Loop Scorecard's trend: %d windows of %d cycles over all %d cycles, oldest first (the oldest may hold fewer); rates as a share of 1. Goal progress is the active goals' mean today (goals.json); each goal's history is the goal progress plot.", len(ws), sc.Trend.WindowCycles, sc.CyclesScored)
	c.xLabels(f, "oldest window", "latest")
	kpis := []struct {
		id, name string
		scale    float64
		get      func(present.ScorecardPoint) *float64
	}{
		{"loop_value", "Loop value", 1, func(p present.ScorecardPoint) *float64 { return p.LoopValueScore }},
		{"futile_rate", "Futile rate", 100, func(p present.ScorecardPoint) *float64 { return p.FutileCycleRatePct }},
		{"mission_hit", "Mission hit", 100, func(p present.ScorecardPoint) *float64 { return p.MissionHitPct }},
		{"artifact_quality", "Artifact quality", 1, func(p present.ScorecardPoint) *float64 { return p.ArtifactQuality }},
	}
	var keys, colors []string
	var dash []bool
	for i, k := range kpis {
		col := palette[i]
		var line []string
		for wi, w := range ws {
			v := k.get(w)
			if v == nil {
				continue
			}
			r := *v / k.scale
			x, y := f.x(float64(wi)), f.y(r)
			line = append(line, f1(x)+","+f1(y))
			c.Marks = append(c.Marks, mark{X: f1(x), Y: f1(y), R: "3.5", Fill: col, Class: "point", Series: k.id, Cycle: strconv.Itoa(wi + 1),
				Value: val(r), Tip: fmt.Sprintf("%s, window %d of %d (%d cycles): %s", k.name, wi+1, len(ws), w.Cycles, num(r))})
		}
		if len(line) == 0 {
			continue
		}
		if len(line) > 1 {
			c.Lines = append(c.Lines, svgPolyline{Points: strings.Join(line, " "), Stroke: col, Class: "series"})
		}
		keys, colors, dash = append(keys, k.name), append(colors, col), append(dash, false)
	}
	if g := sc.GoalProgressPct; g != nil {
		col := palette[4]
		y := f1(f.y(*g / 100))
		c.Grid = append(c.Grid, svgLine{X1: f1(chartLeft), Y1: y, X2: f1(chartW - chartRight), Y2: y, Class: "ref", Stroke: col})
		keys, colors, dash = append(keys, "Goal progress (now)"), append(colors, col), append(dash, true)
	}
	c.legend(keys, colors, dash)
	return c
}

// resultOrder is the result types bottom to top of a day's bar.
var resultOrder = []string{"pr_merged_held", "pr_merged", "pr_created", "action_extracted", "observe", "pr_rejected", "leap_regressed", "error", "futile"}

// resultChart is the cycles of each day, stacked by result type.
func resultChart(d plotData) chart {
	title := "Result types per day"
	if len(d.records) == 0 {
		return chart{ID: "results", Title: title, Empty: noCycles}
	}
	var days []string
	counts := map[string]map[string]int{}
	seenType := map[string]bool{}
	top := 0
	for _, r := range d.records {
		day := dayOf(r)
		if counts[day] == nil {
			counts[day] = map[string]int{}
			days = append(days, day)
		}
		t := r.resultType
		if t == "" {
			t = "unknown"
		}
		counts[day][t]++
		seenType[t] = true
	}
	slices.Sort(days)
	types := slices.Clone(resultOrder)
	var extra []string
	for t := range seenType {
		if !slices.Contains(types, t) {
			extra = append(extra, t)
		}
	}
	slices.Sort(extra)
	types = append(types, extra...)
	for _, day := range days {
		n := 0
		for _, v := range counts[day] {
			n += v
		}
		top = max(top, n)
	}
	f := frame{y0: 0, y1: niceTop(float64(top))}
	c := newChart("results", title, "Cycles per day (UTC), stacked by result type", f, ticks(f.y1), num)
	c.Note = historyNote(d, "Cycles per UTC day by their result type (annotations applied)")
	c.xLabels(f, days[0], days[len(days)-1])
	slot := (chartW - chartLeft - chartRight) / float64(len(days))
	bw := max(min(slot*0.7, 48), 1)
	var keys, colors []string
	for _, t := range types {
		if seenType[t] {
			keys, colors = append(keys, safetext.Text(t)), append(colors, resultColor(t))
		}
	}
	for i, day := range days {
		x := chartLeft + slot*float64(i) + (slot-bw)/2
		base := 0
		for _, t := range types {
			n := counts[day][t]
			if n == 0 {
				continue
			}
			yTop, yBot := f.y(float64(base+n)), f.y(float64(base))
			name := safetext.Text(t)
			c.Marks = append(c.Marks, mark{X: f1(x), Y: f1(yTop), W: f1(bw), H: f1(yBot - yTop), Fill: resultColor(t), Class: "point bar",
				Day: day, Type: name, Value: strconv.Itoa(n), Tip: fmt.Sprintf("%s: %d %s", day, n, name)})
			base += n
		}
	}
	c.legend(keys, colors, nil)
	return c
}

func resultColor(t string) string {
	if c, ok := resultColors[t]; ok {
		return c
	}
	return palette[len(palette)-1]
}

// dayOf is the record's UTC day, or "undated" for a line without a
// timestamp.
func dayOf(r chartRecord) string {
	if r.day == "" {
		return "undated"
	}
	return safetext.Text(r.day)
}

// costChart is the estimated spend of each day against the daily cap.
func costChart(cfg *config.Config, d plotData) chart {
	title := "Cost per day"
	if len(d.records) == 0 {
		return chart{ID: "cost", Title: title, Empty: noCycles}
	}
	var days []string
	cost := map[string]float64{}
	cycles := map[string]int{}
	top := cfg.Cost.DailyLimitUSD
	for _, r := range d.records {
		day := dayOf(r)
		if _, ok := cycles[day]; !ok {
			days = append(days, day)
		}
		cycles[day]++
		if !math.IsNaN(r.cost) && !math.IsInf(r.cost, 0) && r.cost > 0 {
			cost[day] += r.cost
		}
	}
	slices.Sort(days)
	for _, day := range days {
		top = max(top, cost[day])
	}
	f := frame{y0: 0, y1: niceTop(top)}
	c := newChart("cost", title, fmt.Sprintf("Estimated spend per day (UTC) in US dollars against the daily cap of %s", usd(cfg.Cost.DailyLimitUSD)), f, ticks(f.y1), usd)
	c.Note = historyNote(d, "Estimated spend per UTC day, the sum of the cycles' cost_usd") + " The line is cost.daily_limit_usd."
	c.xLabels(f, days[0], days[len(days)-1])
	slot := (chartW - chartLeft - chartRight) / float64(len(days))
	bw := max(min(slot*0.7, 48), 1)
	for i, day := range days {
		x := chartLeft + slot*float64(i) + (slot-bw)/2
		yTop, yBot := f.y(cost[day]), f.y(0)
		class := "point bar"
		fill := palette[0]
		if cfg.Cost.DailyLimitUSD > 0 && cost[day] >= cfg.Cost.DailyLimitUSD {
			class, fill = "point bar over", "#cf222e"
		}
		c.Marks = append(c.Marks, mark{X: f1(x), Y: f1(yTop), W: f1(bw), H: f1(yBot - yTop), Fill: fill, Class: class, Day: day,
			Value: val(round2(cost[day])), Tip: fmt.Sprintf("%s: %s over %d cycles", day, usd(cost[day]), cycles[day])})
	}
	keys, colors, dash := []string{"Spend"}, []string{palette[0]}, []bool{false}
	if lim := cfg.Cost.DailyLimitUSD; lim > 0 {
		y := f1(f.y(lim))
		c.Grid = append(c.Grid, svgLine{X1: f1(chartLeft), Y1: y, X2: f1(chartW - chartRight), Y2: y, Class: "ref cap", Stroke: "#cf222e"})
		keys, colors, dash = append(keys, "Daily cap "+usd(lim)), append(colors, "#cf222e"), append(dash, true)
	}
	c.legend(keys, colors, dash)
	return c
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func usd(v float64) string { return "$" + strconv.FormatFloat(round2(v), 'f', 2, 64) }

// rubricBars are the bars of the quality rubric the scorecard grades
// against (the top-level one, else the first domain's that has one), by
// name; ok is false when no rubric is configured.
func rubricBars(cfg *config.Config, sc present.Scorecard) (names []string, bars []float64, ok bool) {
	raws := []json.RawMessage{cfg.QualityRubric}
	ds := slices.Clone(cfg.Domains)
	slices.SortStableFunc(ds, func(a, b config.Domain) int { return cmp.Compare(a.Index, b.Index) })
	for _, d := range ds {
		raws = append(raws, d.QualityRubric)
	}
	for _, raw := range raws {
		var r map[string]json.RawMessage
		if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &r) != nil || r == nil {
			continue
		}
		for _, k := range []string{"bar", "bar_leap", "bar_coast"} {
			var v float64
			if b, has := r[k]; has && json.Unmarshal(b, &v) == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				names, bars = append(names, k), append(bars, v)
			}
		}
		if len(bars) == 0 {
			names, bars = []string{"bar"}, []float64{sc.ArtifactBar}
		}
		return names, bars, true
	}
	return nil, nil, false
}

// artifactChart is the artifact score of each graded cycle against the
// rubric's bars; a project without a quality rubric has no plot.
func artifactChart(cfg *config.Config, sc present.Scorecard, d plotData) chart {
	title := "Artifact score against its bars"
	names, bars, ok := rubricBars(cfg, sc)
	if !ok {
		return chart{ID: "artifact", Title: title, Empty: "no quality_rubric is configured: the artifact is not graded"}
	}
	if len(d.records) == 0 {
		return chart{ID: "artifact", Title: title, Empty: noCycles}
	}
	var graded []chartRecord
	for _, r := range d.records {
		if r.artifact != nil {
			graded = append(graded, r)
		}
	}
	if len(graded) == 0 {
		return chart{ID: "artifact", Title: title, Empty: "no graded cycle yet"}
	}
	f := cycleRange(d.records)
	f.y0, f.y1 = 0, 1
	c := newChart("artifact", title, "Artifact score of each graded cycle, 0 to 1, against the quality rubric's bars", f, ticks(1), num)
	c.Note = historyNote(d, "The artifact_score of each graded cycle") + " The lines are the rubric's bars."
	c.xLabels(f, fmt.Sprintf("cycle %d", d.records[0].cycle), fmt.Sprintf("cycle %d", d.records[len(d.records)-1].cycle))
	var line []string
	for _, r := range graded {
		x, y := f.x(float64(r.cycle)), f.y(*r.artifact)
		line = append(line, f1(x)+","+f1(y))
		class := "point"
		if *r.artifact < sc.ArtifactBar {
			class = "point below"
		}
		c.Marks = append(c.Marks, mark{X: f1(x), Y: f1(y), R: "3.5", Fill: palette[0], Class: class, Cycle: strconv.Itoa(r.cycle),
			Domain: safetext.Text(r.domain), Value: val(*r.artifact), Tip: fmt.Sprintf("cycle %d, %s: %s", r.cycle, safetext.Text(r.domain), num(*r.artifact))})
	}
	if len(line) > 1 {
		c.Lines = append(c.Lines, svgPolyline{Points: strings.Join(line, " "), Stroke: palette[0], Class: "series"})
	}
	keys, colors, dash := []string{"Artifact score"}, []string{palette[0]}, []bool{false}
	for i, b := range bars {
		col := palette[(i+1)%len(palette)]
		y := f1(f.y(math.Min(math.Max(b, 0), 1)))
		c.Grid = append(c.Grid, svgLine{X1: f1(chartLeft), Y1: y, X2: f1(chartW - chartRight), Y2: y, Class: "ref", Stroke: col})
		keys, colors, dash = append(keys, fmt.Sprintf("%s %s", names[i], num(b))), append(colors, col), append(dash, true)
	}
	c.legend(keys, colors, dash)
	return c
}
