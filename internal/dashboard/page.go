package dashboard

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// funcs are the template's functions. Every string from a state file or
// the configuration goes through t (or tp, words), which masks known
// secrets and makes control characters visible; html/template then
// escapes it for its place in the page.
var funcs = template.FuncMap{
	"t":      safetext.Text,
	"tp":     func(p *string) string { return textOr(p, "") },
	"textOr": textOr,
	// words is a free text on one line, its runs of white space one space.
	"words": func(s string) string { return safetext.Text(strings.Join(strings.Fields(s), " ")) },
	"f2":    func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"num":   num,
	// ago is the time since a run, or until it for a run recorded later
	// than now (a cycle run with --now ahead of the clock).
	"ago": func(h float64) string {
		if h < 0 {
			return num(-h) + "h from now"
		}
		return num(h) + "h ago"
	},
	"signed": func(v float64) string { return fmt.Sprintf("%+g", v) },
	"net": func(n int) string {
		if n == 0 {
			return "0"
		}
		return fmt.Sprintf("%+d", n)
	},
	"status": statusClass,
	"result": resultText,
	"halts": func(c present.DashboardCounter) string {
		if c.Threshold <= 0 {
			return "never halts"
		}
		return fmt.Sprintf("halts at %d", c.Threshold)
	},
	"counter": func(c present.DashboardCounter) string {
		switch {
		case c.Threshold > 0 && c.Count >= c.Threshold:
			return "bad"
		case c.Count > 0:
			return "warn"
		}
		return ""
	},
	"costClass": costClass,
	"legendX":   legendX,
}

// costClass is the style class of today's cost: red at the cap, yellow
// past the warning share of it.
func costClass(c present.DashboardCost) string {
	switch {
	case c.LimitUSD > 0 && c.TodayUSD >= c.LimitUSD:
		return "bad"
	case c.LimitUSD > 0 && c.WarningPct > 0 && c.TodayUSD >= c.LimitUSD*c.WarningPct/100:
		return "warn"
	}
	return ""
}

func textOr(p *string, none string) string {
	if p == nil {
		return none
	}
	return safetext.Text(*p)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func opt(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	return num(*v) + unit
}

// statusClass is the style class of a domain's status, as the terminal
// colours it: green for healthy, yellow for a warning, red for critical.
func statusClass(s string) string {
	switch strings.ToLower(s) {
	case "healthy", "ok", "passing", "green":
		return "ok"
	case "degraded", "warning", "warn", "yellow", "stale":
		return "warn"
	case "critical", "failing", "error", "red", "down":
		return "bad"
	}
	return ""
}

// resultText is a domain's last recorded result: its cycle, result type
// and when.
func resultText(r *present.DashboardResult) string {
	if r == nil {
		return "—"
	}
	text := fmt.Sprintf("#%d", r.Cycle)
	switch {
	case r.ResultType != nil:
		text += " " + safetext.Text(*r.ResultType)
	case r.Result != nil:
		text += " " + safetext.Text(*r.Result)
	}
	if r.Timestamp != nil {
		text += " (" + safetext.Text(*r.Timestamp) + ")"
	}
	return text
}

// kpi is one line of the scorecard: its label, value and what it means.
type kpi struct {
	Label, Value, Note string
}

// trendRow is one KPI over the scorecard's rolling windows, oldest first.
type trendRow struct {
	Label  string
	Values []string
}

// pageData is what the project page is drawn from.
type pageData struct {
	Title     string
	Style     string
	Home      string
	Base      string
	Problem   string
	Corrupt   []string
	Doc       present.DashboardDoc
	Score     present.Scorecard
	ScoreHead string
	Grade     string
	Verdict   string
	KPIs      []kpi
	Learning  []kpi
	Results   []kpi
	Trend     []trendRow
	TrendHead string
	Now       string
	// Charts are the plots; PlotProblem says why the history could not
	// be read for them.
	Charts      []chart
	PlotProblem string
	// InlineCSS is the style sheet in the page itself, for a page saved
	// as a file (Style is then unused).
	InlineCSS template.CSS
	// Standalone is a page saved as a file: no script, no link to the
	// server's routes.
	Standalone bool
	// Script is the live-update script's path; VersionURL and Version
	// are what it polls and the reading the page was drawn from.
	Script     string
	VersionURL string
	Version    string
}

// relName is a file the views name, relative to the project root when it
// is inside it: the page does not tell who can reach it where the
// project lives. A name with a reason after the path keeps the reason.
func relName(root, name string) string {
	if rest, ok := strings.CutPrefix(name, root+string(filepath.Separator)); ok {
		return filepath.ToSlash(rest)
	}
	return name
}

// relMessage is msg with the paths inside the project made relative to
// it, as relName makes a file's name.
func (p Project) relMessage(msg string) string {
	return strings.ReplaceAll(msg, p.Dir+string(filepath.Separator), "")
}

// corruptNames are the files doc and sc could not read, each once, in the
// order the views name them.
func corruptNames(root string, lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, c := range l {
			c = safetext.Text(relName(root, c))
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

func (s *server) projectPage(w http.ResponseWriter, p Project, base string) {
	d, ok := s.pageFor(p, base)
	d.Style = styleSheetPath
	d.Script = liveScriptPath
	d.VersionURL = base + "/api/version"
	if !ok {
		s.render(w, http.StatusInternalServerError, s.page, d)
		return
	}
	s.render(w, http.StatusOK, s.page, d)
}

// pageFor reads the project for its page; ok is false when its
// configuration cannot be loaded (the page then says why).
func (s *server) pageFor(p Project, base string) (d pageData, ok bool) {
	now := s.now()
	d = pageData{Title: "ooda — " + safetext.Text(filepath.Base(p.Dir)), Base: base, Now: state.FormatTime(now)}
	if s.many {
		d.Title = "ooda — " + safetext.Text(p.Name)
		d.Home = "/"
	}
	// The version is taken before the files are read: a change made
	// while they are read shows at the next poll rather than never.
	d.Version = p.version()
	cfg, st, err := p.load()
	if err != nil {
		d.Problem = safetext.Text(p.relMessage(configProblem(err)))
		return d, false
	}
	d.Doc = present.Dashboard(cfg, st, now)
	d.Score = present.BuildScorecard(cfg, st, 0)
	scoreView(&d)
	pd := readPlotData(st)
	if pd.err != nil {
		d.PlotProblem = safetext.Text(p.relMessage(fmt.Sprintf("the plots show no cycle: %v", pd.err)))
	}
	// The plots read files the views above do not (episodes.json,
	// checkpoints.json): one that cannot be read is named with the rest.
	d.Corrupt = corruptNames(st.Root, d.Doc.Corrupt, d.Score.Corrupt, pd.corrupt)
	d.Charts = charts(cfg, d.Score, pd)
	return d, true
}

// scoreView fills the scorecard's lines, as `ooda status --scorecard`
// words them.
func scoreView(d *pageData) {
	sc := d.Score
	from := "no cycle recorded yet"
	if sc.Source != "none" {
		from = "from " + sc.Source
	}
	d.ScoreHead = fmt.Sprintf("all %d cycles, %s", sc.CyclesScored, from)
	if sc.CyclesScored == 0 {
		d.ScoreHead = from
	}
	d.Grade = "—"
	if sc.Grade != nil && sc.GradeScore != nil {
		d.Grade = fmt.Sprintf("%s (%s)", safetext.Text(*sc.Grade), num(*sc.GradeScore))
	}
	d.Verdict = map[string]string{
		"working": "working: the cycles deliver accepted value",
		"partial": "partial: output, but little of it accepted yet",
		"stalled": "stalled: little accepted value; look at the domains and goals",
	}[sc.Verdict]
	if sc.Grade == nil {
		d.Verdict = "no cycle to grade yet: `ooda cycle` runs one"
	}
	art := fmt.Sprintf("no graded artifact (bar %s)", num(sc.ArtifactBar))
	if sc.ArtifactQuality != nil {
		mark := "at or above"
		if *sc.ArtifactQuality < sc.ArtifactBar {
			mark = "below"
		}
		art = fmt.Sprintf("%s the bar %s, %d graded cycles", mark, num(sc.ArtifactBar), sc.ArtifactCycles)
	}
	cps := "—"
	if v := sc.CostPerSuccessfulCycle; v != nil {
		cps = "$" + num(*v)
	}
	d.KPIs = []kpi{
		{"Artifact quality", opt(sc.ArtifactQuality, ""), art},
		{"Loop value score", opt(sc.LoopValueScore, ""), "mean quality per cycle, 0 to 1"},
		{"Task completion", opt(sc.TaskCompletionRatePct, "%"), "cycles whose PR was merged"},
		{"Futile cycles", opt(sc.FutileCycleRatePct, "%"), "ran and changed nothing"},
		{"PR merge rate", opt(sc.PRMergeRatePct, "%"), "held after merge: " + opt(sc.PRMergeAndHoldRatePct, "%")},
		{"Queue resolution", opt(sc.ActionResolutionRatePct, "%"), "actions resolved / added, all time"},
		{"Cost per success", cps, "cost over merged cycles"},
	}
	d.Learning = []kpi{
		{"Goal progress", opt(sc.GoalProgressPct, "%"), fmt.Sprintf("%d active goals", sc.ActiveGoals)},
		{"Mission hit", opt(sc.MissionHitPct, "%"), "value cycles on mission"},
		{"Gap resolution", opt(sc.SkillGapResolutionPct, "%"), "skill gaps closed"},
		{"Lesson application", opt(sc.LessonApplicationPct, "%"), "reflections applied"},
		{"Pending actions", strconv.Itoa(sc.PendingActions), "in the action queue"},
	}
	for _, rt := range sortedKeys(sc.ResultBreakdown) {
		d.Results = append(d.Results, kpi{Label: safetext.Text(rt), Value: strconv.Itoa(sc.ResultBreakdown[rt])})
	}
	if ws := sc.Trend.Windows; len(ws) > 1 {
		d.TrendHead = fmt.Sprintf("%d windows of %d cycles, oldest first", len(ws), sc.Trend.WindowCycles)
		rows := []struct {
			label string
			get   func(present.ScorecardPoint) *float64
		}{
			{"Artifact quality", func(p present.ScorecardPoint) *float64 { return p.ArtifactQuality }},
			{"Loop value score", func(p present.ScorecardPoint) *float64 { return p.LoopValueScore }},
			{"Task completion %", func(p present.ScorecardPoint) *float64 { return p.TaskCompletionRatePct }},
			{"Futile cycles %", func(p present.ScorecardPoint) *float64 { return p.FutileCycleRatePct }},
			{"Mission hit %", func(p present.ScorecardPoint) *float64 { return p.MissionHitPct }},
		}
		for _, r := range rows {
			tr := trendRow{Label: r.label}
			any := false
			for _, w := range ws {
				v := r.get(w)
				any = any || v != nil
				tr.Values = append(tr.Values, opt(v, ""))
			}
			// A KPI no window has (no graded artifact) is left out.
			if any {
				d.Trend = append(d.Trend, tr)
			}
		}
	}
}

// sortedKeys are the result types, the most frequent first, then by name.
func sortedKeys(m map[string]int) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys
}

// listRow is one project of many.
type listRow struct {
	Name, Link string
	Problem    string
	Halt       bool
	HaltReason string
	Cycles     int
	LastCycle  string
	Grade      string
	LoopValue  string
	Cost       string
	CostClass  string
	Session    string
	Corrupt    []string
}

type listData struct {
	Title   string
	Style   string
	Script  string
	Version string
	Rows    []listRow
	Now     string
}

// listing reads every project for the list: a project whose
// configuration cannot be loaded is a row that says why.
func (s *server) listing() listData {
	now := s.now()
	d := listData{Title: "ooda — projects", Style: styleSheetPath, Script: liveScriptPath, Version: s.listVersion(), Now: state.FormatTime(now)}
	for _, p := range s.projects {
		row := listRow{Name: safetext.Text(p.Name), Link: projectBase(p.Name) + "/"}
		cfg, st, err := p.load()
		if err != nil {
			row.Problem = safetext.Text(p.relMessage(configProblem(err)))
			d.Rows = append(d.Rows, row)
			continue
		}
		doc := present.Dashboard(cfg, st, now)
		sc := present.BuildScorecard(cfg, st, 0)
		row.Halt = doc.Halt.Active
		row.HaltReason = textOr(doc.Halt.Reason, "")
		row.Cycles = doc.CycleCount
		row.LastCycle = textOr(doc.LastCycle, "never")
		row.Grade = "—"
		if sc.Grade != nil {
			row.Grade = safetext.Text(*sc.Grade)
		}
		row.LoopValue = opt(sc.LoopValueScore, "")
		row.Cost = fmt.Sprintf("$%.2f of $%.2f", doc.Cost.TodayUSD, doc.Cost.LimitUSD)
		row.CostClass = costClass(doc.Cost)
		row.Session = "—"
		if ss := doc.Session; ss != nil && ss.Status == state.SessionRunning {
			row.Session = fmt.Sprintf("%s, iteration %d", safetext.Text(ss.ID), ss.Iteration)
		}
		row.Corrupt = corruptNames(st.Root, doc.Corrupt, sc.Corrupt)
		d.Rows = append(d.Rows, row)
	}
	return d
}

// render executes t into a buffer first, so that a template error is a
// 500 rather than half a page.
func (s *server) render(w http.ResponseWriter, code int, t *template.Template, data any) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		http.Error(w, "500 "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

func (s *server) servePage(w http.ResponseWriter, t *template.Template, data any) {
	s.render(w, http.StatusOK, t, data)
}
