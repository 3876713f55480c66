package present

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/session"
	"github.com/ooda-loop/ooda/internal/state"
)

// DashboardDoc is the dashboard of `ooda status` and its --json document
// (CLI.md). Every key is always present, with null where there is nothing
// to show; keys are only ever added to it, never renamed or removed.
type DashboardDoc struct {
	CycleCount int               `json:"cycle_count"`
	LastCycle  *string           `json:"last_cycle"`
	Halt       DashboardHalt     `json:"halt"`
	Level      int               `json:"level"`
	LevelName  string            `json:"level_name"`
	Mission    string            `json:"mission"`
	Domains    []DashboardDomain `json:"domains"`
	Actions    DashboardActions  `json:"actions"`
	Saturation int               `json:"saturation"`
	Breakers   DashboardBreakers `json:"breakers"`
	Cost       DashboardCost     `json:"cost"`
	Memos      DashboardMemos    `json:"memos"`
	// Quarantined are the targets the running session has quarantined
	// for oscillation, which `ooda cycle` leaves out too; empty when no
	// session runs: a finished session's quarantine ends with it (a new
	// session starts with none), so it is shown only in Session.
	Quarantined []string `json:"quarantined"`
	// Session is the running or, when none runs, the last session of
	// `ooda run`; null when there has been none.
	Session *DashboardSession `json:"session"`

	// Corrupt names each file the dashboard shows that could not be read
	// (shown as its default), for the warnings on stderr; it is not part
	// of the document, whose stdout a script parses.
	Corrupt []string `json:"-"`
}

// DashboardHalt is whether the HALT file exists and its content on one
// line (the reason, then when it was created).
type DashboardHalt struct {
	Active bool    `json:"active"`
	Reason *string `json:"reason"`
}

// DashboardDomain is one configured domain's row.
type DashboardDomain struct {
	Name string `json:"name"`
	// Status is what the domain's skill last wrote in its state file
	// (healthy, degraded, critical, …), "unknown" when it has not said,
	// or the configuration's own when the domain does not run.
	Status     string   `json:"status"`
	LastRun    *string  `json:"last_run"`
	Hours      *float64 `json:"hours"`
	Confidence float64  `json:"confidence"`
	Alerts     int      `json:"alerts"`
	// CriticalAlerts is how many of Alerts are critical.
	CriticalAlerts int `json:"critical_alerts"`
	// LastResult is the domain's most recent recorded cycle; null when no
	// retained record names it.
	LastResult *DashboardResult `json:"last_result"`
}

// DashboardResult is what the last cycle that ran a domain recorded.
type DashboardResult struct {
	Cycle      int     `json:"cycle"`
	Timestamp  *string `json:"timestamp"`
	Result     *string `json:"result"`
	ResultType *string `json:"result_type"`
	// Summary is the primary skill's report summary as the decision log
	// kept it; null when the skill gave none or the cycle is older than
	// the decision log.
	Summary *string `json:"summary"`
}

// DashboardActions is the action queue: how many are pending, the one
// with the highest RICE, and the first few in RICE order.
type DashboardActions struct {
	Pending  int               `json:"pending"`
	Top      *DashboardAction  `json:"top"`
	TopItems []DashboardAction `json:"top_items"`
}

// DashboardAction is one pending action.
type DashboardAction struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Rice  float64 `json:"rice"`
}

// DashboardBreakers are the counters that HALT the loop when they reach
// their threshold; a threshold of 0 means that breaker never halts.
type DashboardBreakers struct {
	// SilentFailures counts consecutive failed skill runs and records
	// (state.json consecutive_silent_failures, safety.max_silent_failures).
	SilentFailures DashboardCounter `json:"silent_failures"`
	// Saturation counts consecutive cycles without actionable output
	// (consecutive_observe_only_cycles, saturation.halt_threshold when
	// saturation.auto_halt is on).
	Saturation DashboardCounter `json:"saturation"`
}

// DashboardCounter is a breaker's count and the count that halts.
type DashboardCounter struct {
	Count     int `json:"count"`
	Threshold int `json:"threshold"`
}

// DashboardCost is today's spend (UTC) against the daily cap.
type DashboardCost struct {
	TodayUSD   float64 `json:"today_usd"`
	LimitUSD   float64 `json:"limit_usd"`
	WarningPct float64 `json:"warning_pct"`
}

// DashboardMemos are what will move the next cycles' scores: the one-shot
// score adjustments the next cycle consumes, and the active interventions.
type DashboardMemos struct {
	Pending       []DashboardMemo         `json:"pending"`
	Interventions []DashboardIntervention `json:"interventions"`
}

// DashboardMemo is one pending score adjustment.
type DashboardMemo struct {
	Domain string  `json:"domain"`
	Delta  float64 `json:"delta"`
}

// DashboardIntervention is one active multi-cycle score delta.
type DashboardIntervention struct {
	Domain     string  `json:"domain"`
	Delta      float64 `json:"delta"`
	Type       string  `json:"type"`
	Reason     string  `json:"reason"`
	CyclesLeft int     `json:"cycles_left"`
}

// dashboardTopItems is how many pending actions the dashboard lists.
const dashboardTopItems = 3

// dashboardFiles are the evolve files the dashboard shows, the only ones
// it reads (with the cost ledger and the domain state files): a corrupt
// one is named.
var dashboardFiles = []string{state.StateFile, state.ConfidenceFile, state.MemosFile, state.ActionQueueFile, state.OutcomesFile}

// Dashboard gathers the dashboard at now. It only reads: Store.LoadFiles
// lists a corrupt file in Snapshot.Corrupt and leaves it where it is (setting it
// aside is Quarantine's, which only a cycle calls), so the dashboard shows
// the default in its place and names it.
func Dashboard(cfg *config.Config, st *state.Store, now time.Time) DashboardDoc {
	doc := DashboardDoc{
		Level:       cfg.ProgressiveComplex.CurrentLevel,
		LevelName:   cfg.ProgressiveComplex.Level(cfg.ProgressiveComplex.CurrentLevel).Name,
		Mission:     cfg.Mission,
		Domains:     []DashboardDomain{},
		Quarantined: []string{},
		Actions:     DashboardActions{TopItems: []DashboardAction{}},
		Memos:       DashboardMemos{Pending: []DashboardMemo{}, Interventions: []DashboardIntervention{}},
		Cost:        DashboardCost{LimitUSD: cfg.Cost.DailyLimitUSD, WarningPct: cfg.Cost.WarningThresholdPct},
	}
	snap, lerr := st.LoadFiles(append(dashboardFiles, state.CostLedgerFile)...)
	if snap == nil {
		snap = &state.Snapshot{Confidence: state.NewConfidence()}
	}
	for _, c := range snap.Corrupt {
		doc.Corrupt = append(doc.Corrupt, c.Path)
	}
	var cle *state.CorruptLedgerError
	switch {
	case errors.As(lerr, &cle):
		doc.Corrupt = append(doc.Corrupt, cle.Path)
	case lerr != nil:
		// The state directory itself cannot be read (a symlink out of
		// the project): every file is its default, and the reason shown.
		doc.Corrupt = append(doc.Corrupt, st.EvolveDir+" ("+lerr.Error()+")")
	}

	if active, content := st.HaltExists(cfg.Safety.HaltFile); active {
		r := state.HaltLine(content)
		doc.Halt = DashboardHalt{Active: true, Reason: &r}
	}

	s := snap.State
	doc.CycleCount = s.CycleCount
	if s.LastCycle != nil && *s.LastCycle != "" {
		doc.LastCycle = s.LastCycle
	}
	doc.Saturation = s.ConsecutiveObserveOnlyCycles
	doc.Breakers.Saturation.Count = s.ConsecutiveObserveOnlyCycles
	if cfg.Saturation.AutoHalt {
		doc.Breakers.Saturation.Threshold = max(cfg.Saturation.HaltThreshold, 0)
	}
	doc.Breakers.SilentFailures = DashboardCounter{Count: s.ConsecutiveSilentFailures, Threshold: max(cfg.Safety.MaxSilentFailures, 0)}

	last := dashLastResults(s.DecisionLog, snap.Outcomes.Entries)
	release := st.HoldRoot()
	for _, d := range cfg.Domains {
		doc.Domains = append(doc.Domains, dashboardDomain(cfg, st, &doc, snap, d, last[d.Name], now))
	}
	release()

	q := snap.ActionQueue
	doc.Actions.Pending = len(q.Pending)
	ranked := slices.Clone(q.Pending)
	// Highest RICE first; the first of equals keeps the queue's own order.
	slices.SortStableFunc(ranked, func(a, b state.Action) int {
		switch ra, rb := a.Rice(), b.Rice(); {
		case ra > rb:
			return -1
		case ra < rb:
			return 1
		}
		return 0
	})
	for i, a := range ranked {
		if i == dashboardTopItems {
			break
		}
		doc.Actions.TopItems = append(doc.Actions.TopItems, DashboardAction{ID: a.ID, Title: a.Title, Rice: a.Rice()})
	}
	if len(doc.Actions.TopItems) > 0 {
		top := doc.Actions.TopItems[0]
		doc.Actions.Top = &top
	}

	for _, d := range slices.Sorted(maps.Keys(snap.Memos.ScoreAdjustments)) {
		doc.Memos.Pending = append(doc.Memos.Pending, DashboardMemo{Domain: d, Delta: snap.Memos.ScoreAdjustments[d]})
	}
	for _, iv := range snap.Memos.Interventions {
		doc.Memos.Interventions = append(doc.Memos.Interventions, DashboardIntervention{
			Domain: iv.Domain, Delta: iv.Delta, Type: iv.Type, Reason: iv.Reason, CyclesLeft: iv.ExpiresAfterCycles})
	}

	// A ledger of another UTC day is yesterday's spend: today's is 0, as
	// the cycle's own daily reset counts it (CostLedger.ResetIfNewDay).
	if l := snap.CostLedger; l != nil && l.Date == now.UTC().Format("2006-01-02") {
		doc.Cost.TodayUSD = l.TotalEstimatedUSD
	}

	// Only the newest session record is read, one bounded file, however
	// many sessions the project has had. Its repair warnings are not shown,
	// as the other files' are not: the record is shown repaired.
	rec, found, _, serr := st.LatestSession()
	switch {
	case serr != nil:
		doc.Corrupt = append(doc.Corrupt, sessionCorruptName(st, serr))
	case found:
		doc.Session = dashboardSession(rec, now)
		if rec.Status == state.SessionRunning {
			doc.Quarantined = append(doc.Quarantined, rec.Quarantined...)
		}
	}
	return doc
}

func dashboardDomain(cfg *config.Config, st *state.Store, doc *DashboardDoc, snap *state.Snapshot, d config.Domain, last *DashboardResult, now time.Time) DashboardDomain {
	// status is the domain's health as its skill last reported it, as the
	// original's dashboard shows it; "unknown" when the skill has not
	// said, and the configuration's own when it keeps the domain from
	// running (disabled, available).
	sd := DashboardDomain{Name: d.Name, Status: "unknown", Confidence: cfg.Confidence.Initial, LastResult: last}
	if v, ok := snap.Confidence.Get(d.Name); ok {
		sd.Confidence = v
	}
	ds, err := st.ReadDomainState(d.StateFile)
	if err != nil {
		doc.Corrupt = append(doc.Corrupt, st.Path(d.StateFile))
	}
	switch {
	case !d.IsEnabled():
		sd.Status = "disabled"
	case !d.Scoreable():
		sd.Status = d.EffectiveStatus()
	case ds.Status != "":
		sd.Status = ds.Status
	}
	lr := ds.LastRun
	if lr == "" {
		// A skill that never wrote last_run: the engine's own record.
		lr = snap.State.DomainLastRun[d.Name]
	}
	if t, ok := state.ParseTime(lr); ok {
		f := state.FormatTime(t)
		h := math.Round(now.Sub(t).Hours()*10) / 10
		sd.LastRun, sd.Hours = &f, &h
	}
	sd.Alerts = len(ds.Alerts)
	for _, a := range ds.Alerts {
		if a.Severity == "critical" {
			sd.CriticalAlerts++
		}
	}
	return sd
}

// dashLastResults is, per domain, its newest record: the decision log's last
// entry that ran it (with the report's summary, which only the decision
// log keeps), else outcomes.json's. Both are capped files; the cycle log,
// which grows with the history, is not read.
func dashLastResults(log []state.DecisionEntry, outcomes []state.Outcome) map[string]*DashboardResult {
	out := map[string]*DashboardResult{}
	for _, o := range outcomes {
		if o.Domain == "" {
			continue
		}
		if prev := out[o.Domain]; prev != nil && prev.Cycle > o.CycleID {
			continue
		}
		out[o.Domain] = &DashboardResult{Cycle: o.CycleID, Timestamp: dashStrp(o.Timestamp), Result: dashStrp(o.Result), ResultType: dashStrp(o.ResultType)}
	}
	for _, e := range log {
		if e.SelectedDomain == "" || e.IsSkip() {
			continue
		}
		if prev := out[e.SelectedDomain]; prev != nil && prev.Cycle > e.Cycle {
			continue
		}
		r := &DashboardResult{Cycle: e.Cycle, Timestamp: dashStrp(e.Timestamp), Result: dashStrp(e.Result), ResultType: dashStrp(e.ResultType)}
		var sum string
		if raw, ok := e.Extra["summary"]; ok && json.Unmarshal(raw, &sum) == nil {
			r.Summary = dashStrp(strings.Join(strings.Fields(sum), " "))
		}
		out[e.SelectedDomain] = r
	}
	return out
}

func dashStrp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// dashboardCompactWidth is the width below which the domain table gives
// way to one block of short lines per domain.
const dashboardCompactWidth = 60

// RenderDashboard writes the dashboard as text. Every value that comes
// from a state file or the configuration is masked and escaped: a skill's
// status or an action's title cannot forge a line or drive the terminal.
// With a Width every line fits in it, long values cut with "…"; without
// one (a pipe) nothing is cut.
func RenderDashboard(w io.Writer, doc DashboardDoc, s Style) error {
	r := dashRender{s: s}
	r.halt(doc.Halt)
	last := "never"
	if doc.LastCycle != nil {
		last = safetext.Text(*doc.LastCycle)
	}
	r.line(fmt.Sprintf("Cycles: %d (last: %s)", doc.CycleCount, last))
	level := fmt.Sprintf("Level: %d", doc.Level)
	if n := strings.TrimSpace(doc.LevelName); n != "" {
		level += " (" + safetext.Text(n) + ")"
	}
	r.line(level)
	mission := "(none)"
	if strings.TrimSpace(doc.Mission) != "" {
		mission = safetext.Text(strings.Join(strings.Fields(doc.Mission), " "))
	}
	r.line("Mission: " + mission)
	if doc.Session != nil {
		r.session(*doc.Session)
	}

	r.domains(doc.Domains)
	r.actions(doc.Actions)
	r.memos(doc.Memos)
	r.breakers(doc)
	r.cost(doc.Cost)
	if doc.CycleCount == 0 && doc.LastCycle == nil && len(doc.Corrupt) == 0 {
		r.line("No cycle has run yet: `ooda cycle` runs the first.")
	}
	_, err := io.WriteString(w, r.b.String())
	return err
}

type dashRender struct {
	s Style
	b strings.Builder
}

// line writes one line of plain (unpainted, already escaped) text, cut to
// the width.
func (r *dashRender) line(text string) { r.b.WriteString(Fit(text, r.s.Width) + "\n") }

// dashSeg is a piece of a line and its colour (none when paint is false).
type dashSeg struct {
	text  string
	color Color
	paint bool
}

func dashPlain(text string) dashSeg { return dashSeg{text: text} }

func dashColored(c Color, ok bool, text string) dashSeg {
	return dashSeg{text: text, color: c, paint: ok}
}

// segs writes one line of plain, already escaped pieces, each painted in
// its colour, the whole cut to the width: the cut applies to the text,
// the colours are added after it.
func (r *dashRender) segs(parts ...dashSeg) {
	var b strings.Builder
	room := r.s.Width
	for _, p := range parts {
		text := p.text
		if r.s.Width > 0 {
			if room <= 0 {
				break
			}
			if DisplayWidth(text) > room {
				text = Fit(text, room)
				room = 0
			} else {
				room -= DisplayWidth(text)
			}
		}
		if p.paint {
			text = r.s.Paint(p.color, text)
		}
		b.WriteString(text)
	}
	r.b.WriteString(b.String() + "\n")
}

// halt is always the first line. The reason is the one value that is
// wrapped, not cut: it says why the loop stopped and what to do.
func (r *dashRender) halt(h DashboardHalt) {
	if !h.Active {
		r.b.WriteString("HALT: not active\n")
		return
	}
	head := "HALT: ACTIVE"
	reason := ""
	if h.Reason != nil {
		reason = safetext.Text(*h.Reason)
	}
	if reason == "" {
		r.b.WriteString(r.s.Paint(Red, head) + "\n")
		return
	}
	lines := dashWrap(reason, r.s.Width-len(head)-3, r.s.Width-6)
	r.b.WriteString(r.s.Paint(Red, head) + " — " + lines[0] + "\n")
	for _, l := range lines[1:] {
		r.b.WriteString("      " + l + "\n")
	}
}

// wrap splits text at spaces into lines of at most first columns, then
// rest; a width of 0 or less (or too narrow to be worth it) keeps it whole.
func dashWrap(text string, first, rest int) []string {
	if first < 20 || rest < 20 {
		return []string{text}
	}
	var out []string
	cur, width := "", first
	for _, word := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = word
		case DisplayWidth(cur)+1+DisplayWidth(word) <= width:
			cur += " " + word
		default:
			out = append(out, cur)
			cur, width = word, rest
		}
		for DisplayWidth(cur) > width {
			// A word longer than a line: cut it where the line ends.
			head := Fit(cur, width+1)
			head = strings.TrimSuffix(head, "…")
			out = append(out, head)
			cur, width = cur[len(head):], rest
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// dashStatusColor is the colour of a domain status as skills write it.
func dashStatusColor(status string) (Color, bool) {
	switch strings.ToLower(status) {
	case "critical", "error", "failed", "failing", "fail", "down", "unhealthy", "broken":
		return Red, true
	case "degraded", "warning", "warn", "stale":
		return Yellow, true
	case "healthy", "ok", "passed", "passing", "pass", "green", "up", "idle":
		return Green, true
	case "unknown", "disabled", "available":
		return Dim, true
	}
	return "", false
}

// dashResultColor is the colour of a cycle's recorded outcome: red when it
// failed or was undone, yellow when it changed nothing, green when it
// delivered.
func dashResultColor(r *DashboardResult) (Color, bool) {
	if r == nil {
		return "", false
	}
	rt, res := dashDeref(r.ResultType), dashDeref(r.Result)
	switch {
	case res == "error" || rt == "error" || rt == "pr_rejected" || rt == "leap_regressed":
		return Red, true
	case rt == "futile":
		return Yellow, true
	case rt == "pr_merged_held" || rt == "pr_merged" || rt == "pr_created" || rt == "action_extracted":
		return Green, true
	}
	return "", false
}

func dashDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func dashPaintIf(s Style, c Color, ok bool, text string) string {
	if !ok {
		return text
	}
	return s.Paint(c, text)
}

// dashResultText is "#N TYPE": the result type says more than the result
// (success covers futile as well as a merged PR), the result when there
// is no type.
func dashResultText(r *DashboardResult) string {
	if r == nil {
		return "—"
	}
	what := dashDeref(r.ResultType)
	if what == "" {
		what = dashDeref(r.Result)
	}
	if what == "" {
		what = "—"
	}
	return fmt.Sprintf("#%d %s", r.Cycle, safetext.Text(what))
}

func dashConfText(c float64) string { return fmt.Sprintf("%.2f", c) }

func dashAlertsText(d DashboardDomain) string {
	if d.CriticalAlerts > 0 {
		return fmt.Sprintf("%d (%d crit)", d.Alerts, d.CriticalAlerts)
	}
	return fmt.Sprintf("%d", d.Alerts)
}

func dashAlertsColor(d DashboardDomain) (Color, bool) {
	switch {
	case d.CriticalAlerts > 0:
		return Red, true
	case d.Alerts > 0:
		return Yellow, true
	}
	return "", false
}

// dashAgo is the time since a run: hours, or days past three days. A run
// recorded later than now (a cycle run with --now ahead of the clock, or
// another machine's clock) is said to be that far "from now", not a
// negative time ago.
func dashAgo(h float64) string {
	suffix := "ago"
	if h < 0 && fmt.Sprintf("%.1f", -h) != "0.0" {
		h, suffix = -h, "from now"
	} else if h < 0 {
		h = 0
	}
	if h >= 72 {
		return fmt.Sprintf("%.1fd %s", h/24, suffix)
	}
	return fmt.Sprintf("%.1fh %s", h, suffix)
}

func dashLastRunText(d DashboardDomain, long bool) string {
	if d.LastRun == nil || d.Hours == nil {
		return "never run"
	}
	if long {
		return safetext.Text(*d.LastRun) + " (" + dashAgo(*d.Hours) + ")"
	}
	return dashAgo(*d.Hours)
}

func (r *dashRender) domains(ds []DashboardDomain) {
	if len(ds) == 0 {
		r.b.WriteString("Domains: (none)\n")
		return
	}
	r.b.WriteString("Domains:\n")
	if r.s.Width > 0 && r.s.Width < dashboardCompactWidth {
		r.compactDomains(ds)
		return
	}
	// The columns, widest form first: the last run with its instant; at a
	// width that cannot take it, only its age; then the flexible columns
	// (result, name, status) cut down to their minimums.
	const indent, gap = 2, 2
	type col struct {
		head  string
		cells []string
		right bool
		min   int // 0: never cut
	}
	build := func(long bool) []col {
		cols := []col{{head: "DOMAIN", min: 14}, {head: "STATUS", min: 7}, {head: "LAST RUN"}, {head: "CONF", right: true}, {head: "ALERTS"}, {head: "LAST RESULT", min: 10}}
		for _, d := range ds {
			cells := []string{safetext.Text(d.Name), safetext.Text(d.Status), dashLastRunText(d, long), dashConfText(d.Confidence), dashAlertsText(d), dashResultText(d.LastResult)}
			for i := range cols {
				cols[i].cells = append(cols[i].cells, cells[i])
			}
		}
		return cols
	}
	widths := func(cols []col) ([]int, int) {
		ws := make([]int, len(cols))
		total := indent + gap*(len(cols)-1)
		for i, c := range cols {
			ws[i] = DisplayWidth(c.head)
			for _, cell := range c.cells {
				ws[i] = max(ws[i], DisplayWidth(cell))
			}
			total += ws[i]
		}
		return ws, total
	}
	cols := build(true)
	ws, total := widths(cols)
	if r.s.Width > 0 && total > r.s.Width {
		cols = build(false)
		ws, total = widths(cols)
	}
	for _, i := range []int{0, 5, 1} {
		if r.s.Width <= 0 || total <= r.s.Width {
			break
		}
		cut := min(total-r.s.Width, ws[i]-max(cols[i].min, DisplayWidth(cols[i].head)))
		if cut > 0 {
			ws[i] -= cut
			total -= cut
		}
	}
	if r.s.Width > 0 && total > r.s.Width {
		r.compactDomains(ds)
		return
	}
	row := func(cells []string, paint func(i int, text string) string) {
		var b strings.Builder
		b.WriteString(strings.Repeat(" ", indent))
		for i, cell := range cells {
			text := Fit(cell, ws[i])
			if paint != nil {
				text = paint(i, text)
			}
			last := i == len(cells)-1
			switch {
			case cols[i].right:
				b.WriteString(strings.Repeat(" ", ws[i]-DisplayWidth(text)) + text)
			case last:
				b.WriteString(text)
			default:
				b.WriteString(Pad(text, ws[i]))
			}
			if !last {
				b.WriteString(strings.Repeat(" ", gap))
			}
		}
		r.b.WriteString(b.String() + "\n")
	}
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	row(heads, func(_ int, text string) string { return r.s.Paint(Dim, text) })
	for j, d := range ds {
		cells := make([]string, len(cols))
		for i := range cols {
			cells[i] = cols[i].cells[j]
		}
		row(cells, func(i int, text string) string {
			switch i {
			case 1:
				c, ok := dashStatusColor(d.Status)
				return dashPaintIf(r.s, c, ok, text)
			case 4:
				c, ok := dashAlertsColor(d)
				return dashPaintIf(r.s, c, ok, text)
			case 5:
				c, ok := dashResultColor(d.LastResult)
				return dashPaintIf(r.s, c, ok, text)
			}
			return text
		})
		r.summary(d, indent+ws[0]+gap)
	}
}

// summary is the line under a domain's row: what its skill's last report
// said, when the decision log kept it.
func (r *dashRender) summary(d DashboardDomain, at int) {
	if d.LastResult == nil || d.LastResult.Summary == nil {
		return
	}
	if r.s.Width > 0 && at+20 > r.s.Width {
		at = 4
	}
	r.line(strings.Repeat(" ", at) + "↳ " + safetext.Text(*d.LastResult.Summary))
}

// compactDomains is the narrow layout: a block of short lines per domain.
func (r *dashRender) compactDomains(ds []DashboardDomain) {
	for _, d := range ds {
		c, ok := dashStatusColor(d.Status)
		r.segs(dashPlain("  "+safetext.Text(d.Name)+": "), dashColored(c, ok, safetext.Text(d.Status)))
		run := "last run " + dashLastRunText(d, false)
		if d.LastRun == nil {
			run = "never run"
		}
		r.line("    " + run + ", conf " + dashConfText(d.Confidence) + ", alerts " + dashAlertsText(d))
		if d.LastResult != nil {
			r.line("    last result " + dashResultText(d.LastResult))
		}
		if d.LastResult != nil && d.LastResult.Summary != nil {
			r.line("    ↳ " + safetext.Text(*d.LastResult.Summary))
		}
	}
}

func dashActionLabel(a DashboardAction) string {
	label := a.Title
	if label == "" {
		label = a.ID
	}
	return fmt.Sprintf("%s (RICE %g)", safetext.Text(label), a.Rice)
}

func (r *dashRender) actions(a DashboardActions) {
	head := fmt.Sprintf("Actions: %d pending", a.Pending)
	if a.Top == nil {
		r.line(head)
		return
	}
	r.line(head + "; top: " + dashActionLabel(*a.Top))
	for _, it := range a.TopItems[min(1, len(a.TopItems)):] {
		r.line("  then: " + dashActionLabel(it))
	}
}

func dashSigned(v float64) string { return fmt.Sprintf("%+g", v) }

func (r *dashRender) memos(m DashboardMemos) {
	if len(m.Pending) == 0 {
		r.line("Memos: none pending")
	} else {
		parts := make([]string, len(m.Pending))
		for i, p := range m.Pending {
			parts[i] = safetext.Text(p.Domain) + " " + dashSigned(p.Delta)
		}
		r.line(fmt.Sprintf("Memos: %d pending for the next cycle: %s", len(m.Pending), strings.Join(parts, ", ")))
	}
	if len(m.Interventions) == 0 {
		r.line("Interventions: none active")
		return
	}
	r.line(fmt.Sprintf("Interventions: %d active", len(m.Interventions)))
	for _, iv := range m.Interventions {
		text := "  " + safetext.Text(iv.Domain) + " " + dashSigned(iv.Delta)
		if iv.Type != "" {
			text += " " + safetext.Text(iv.Type)
		}
		left := "cycles left"
		if iv.CyclesLeft == 1 {
			left = "cycle left"
		}
		text += fmt.Sprintf(" (%d %s)", iv.CyclesLeft, left)
		if reason := strings.TrimSpace(iv.Reason); reason != "" {
			text += ": " + safetext.Text(strings.Join(strings.Fields(reason), " "))
		}
		r.line(text)
	}
}

// counterColor: red at the threshold, yellow on the way.
func dashCounterColor(c DashboardCounter) (Color, bool) {
	switch {
	case c.Threshold > 0 && c.Count >= c.Threshold:
		return Red, true
	case c.Count > 0:
		return Yellow, true
	}
	return "", false
}

func dashHalts(c DashboardCounter) string {
	if c.Threshold <= 0 {
		return " (never halts)"
	}
	return fmt.Sprintf(" (halts at %d)", c.Threshold)
}

func (r *dashRender) breakers(doc DashboardDoc) {
	// Below the compact width the counts go without their words.
	short := r.s.Width > 0 && r.s.Width < dashboardCompactWidth
	sat := doc.Breakers.Saturation
	c, ok := dashCounterColor(sat)
	what := " observe-only cycles in a row"
	if doc.Saturation == 1 {
		what = " observe-only cycle"
	}
	if short {
		what = ""
	}
	r.segs(dashPlain("Saturation: "), dashColored(c, ok, fmt.Sprintf("%d", doc.Saturation)), dashPlain(what+dashHalts(sat)))
	f := doc.Breakers.SilentFailures
	c, ok = dashCounterColor(f)
	what = " failed runs in a row"
	if f.Count == 1 {
		what = " failed run"
	}
	if short {
		what = ""
	}
	r.segs(dashPlain("Failures: "), dashColored(c, ok, fmt.Sprintf("%d", f.Count)), dashPlain(what+dashHalts(f)))
}

func (r *dashRender) cost(c DashboardCost) {
	text := fmt.Sprintf("$%.2f", c.TodayUSD)
	col, ok := Color(""), false
	switch {
	case c.LimitUSD > 0 && c.TodayUSD >= c.LimitUSD:
		col, ok = Red, true
	case c.LimitUSD > 0 && c.WarningPct > 0 && c.TodayUSD >= c.LimitUSD*c.WarningPct/100:
		col, ok = Yellow, true
	}
	r.segs(dashPlain("Cost today: "), dashColored(col, ok, text), dashPlain(fmt.Sprintf(" of $%.2f", c.LimitUSD)))
}

// DashboardSession is the session of `ooda run` the dashboard shows: the
// running one, else the last one (SPEC-NOTES §8).
type DashboardSession struct {
	ID string `json:"id"`
	// Status is running, done or stopped. A session is "done" only when
	// it ended with a success (done_completed, done_no_work): a record
	// that says done with any other stop reason is shown as stopped.
	Status    string  `json:"status"`
	StartedAt *string `json:"started_at"`
	UpdatedAt *string `json:"updated_at"`
	EndedAt   *string `json:"ended_at"`
	// Iteration is the number of iterations judged; MaxIterations the
	// limit, 0 for none (--forever).
	Iteration     int `json:"iteration"`
	MaxIterations int `json:"max_iterations"`
	// Quarantined are the targets the session quarantined, in order; for
	// a session that ended, they no longer are.
	Quarantined []string `json:"quarantined"`
	// Deferred are the findings deferred for stagnation and still
	// unresolved, by id.
	Deferred     []DashboardFinding `json:"deferred"`
	LastJudgment *DashboardJudgment `json:"last_judgment"`
	// StopReason is null while the session runs.
	StopReason *string `json:"stop_reason"`
	// Success is true only for a session that ended with done_completed
	// or done_no_work.
	Success bool `json:"success"`
}

// DashboardFinding is one finding of a session.
type DashboardFinding struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	Summary *string `json:"summary"`
}

// DashboardJudgment is the termination judge's last verdict: the newest
// determine_log entry.
type DashboardJudgment struct {
	Iteration     int     `json:"iteration"`
	Cycle         int     `json:"cycle"`
	Result        string  `json:"result"`
	Reason        string  `json:"reason"`
	NetProgress   int     `json:"net_progress"`
	Resolved      int     `json:"resolved"`
	New           int     `json:"new"`
	DeferredCount int     `json:"deferred_count"`
	StopReason    *string `json:"stop_reason"`
	Timestamp     *string `json:"timestamp"`
}

func dashboardSession(rec state.Session, now time.Time) *DashboardSession {
	ds := &DashboardSession{
		ID:            rec.ID,
		Status:        rec.Status,
		StartedAt:     dashStrp(rec.StartedAt),
		UpdatedAt:     dashStrp(rec.UpdatedAt),
		EndedAt:       dashStrp(rec.EndedAt),
		Iteration:     rec.Iteration,
		MaxIterations: rec.MaxIterations,
		Quarantined:   append([]string{}, rec.Quarantined...),
		Deferred:      []DashboardFinding{},
		StopReason:    dashStrp(rec.StopReason),
	}
	if rec.Status != state.SessionRunning {
		ds.Success = rec.Status == state.SessionDone && session.IsSuccess(rec.StopReason)
		if !ds.Success {
			ds.Status = state.SessionStopped
		}
	}
	for _, id := range session.Deferred(rec) {
		f := rec.Findings[id]
		ds.Deferred = append(ds.Deferred, DashboardFinding{ID: id, Kind: f.Kind, Summary: dashStrp(strings.Join(strings.Fields(f.Summary), " "))})
	}
	if e, ok := session.LastJudgment(rec); ok {
		ds.LastJudgment = &DashboardJudgment{
			Iteration: e.Iteration, Cycle: e.Cycle, Result: e.Result, Reason: strings.Join(strings.Fields(e.Reason), " "),
			NetProgress: e.NetProgress, Resolved: e.Resolved, New: e.New, DeferredCount: e.DeferredCount,
			StopReason: dashStrp(e.StopReason), Timestamp: dashStrp(e.Timestamp),
		}
	}
	return ds
}

// sessionCorruptName names the session record that could not be read,
// for the "corrupt state file" warning: its path when the error is about
// a record, else the sessions directory and the reason.
func sessionCorruptName(st *state.Store, err error) string {
	var fe *state.SessionFileError
	if errors.As(err, &fe) {
		return fe.Path
	}
	return st.EvolvePath(state.SessionsDir) + " (" + err.Error() + ")"
}

// dashSessionDeferred is how many deferred findings the dashboard lists.
const dashSessionDeferred = 3

// session is the session block: the session's status and stop reason,
// its iterations, quarantined targets, deferred findings and the last
// judgment. Every text in it comes from the session record, escaped.
func (r *dashRender) session(s DashboardSession) {
	head := []dashSeg{dashPlain("Session: " + safetext.Text(s.ID) + " ")}
	switch {
	case s.Status == state.SessionRunning:
		head = append(head, dashColored(Green, true, "running"))
	case s.Success:
		head = append(head, dashColored(Green, true, "done"))
	default:
		head = append(head, dashColored(Yellow, true, "stopped"))
	}
	r.segs(head...)
	// The stop reason has a line of its own, so that no width cuts what
	// says a stop is not a success.
	if s.StopReason != nil {
		why := safetext.Text(*s.StopReason)
		if !s.Success {
			why += " (not a success)"
		}
		r.line("  Stop reason: " + why)
	}

	iter := fmt.Sprintf("  Iteration %d", s.Iteration)
	if s.MaxIterations > 0 {
		iter += fmt.Sprintf(" of %d", s.MaxIterations)
	} else {
		iter += " (no limit)"
	}
	var when []string
	if s.StartedAt != nil {
		when = append(when, "started "+safetext.Text(*s.StartedAt))
	}
	switch {
	case s.Status != state.SessionRunning && s.EndedAt != nil:
		when = append(when, "ended "+safetext.Text(*s.EndedAt))
	case s.UpdatedAt != nil:
		when = append(when, "updated "+safetext.Text(*s.UpdatedAt))
	}
	if len(when) > 0 {
		iter += "; " + strings.Join(when, ", ")
	}
	r.line(iter)

	if len(s.Quarantined) > 0 {
		names := make([]string, len(s.Quarantined))
		for i, q := range s.Quarantined {
			names[i] = safetext.Text(q)
		}
		label := "  Quarantined: "
		if s.Status != state.SessionRunning {
			label = "  Quarantined until it ended: "
		}
		r.segs(dashPlain(label), dashColored(Yellow, true, strings.Join(names, ", ")))
	}

	if n := len(s.Deferred); n > 0 {
		what := "findings"
		if n == 1 {
			what = "finding"
		}
		r.segs(dashPlain("  Deferred: "), dashColored(Yellow, true, fmt.Sprintf("%d %s", n, what)), dashPlain(" (stagnant, no longer counted as remaining work)"))
		for _, f := range s.Deferred[:min(n, dashSessionDeferred)] {
			text := "    " + safetext.Text(f.ID)
			if f.Summary != nil {
				text += ": " + safetext.Text(*f.Summary)
			}
			r.line(text)
		}
		if n > dashSessionDeferred {
			r.line(fmt.Sprintf("    and %d more", n-dashSessionDeferred))
		}
	}

	j := s.LastJudgment
	if j == nil {
		r.line("  Last judgment: none yet")
		return
	}
	c, ok := Color(""), false
	switch {
	case j.NetProgress > 0:
		c, ok = Green, true
	case j.NetProgress < 0:
		c, ok = Yellow, true
	}
	text := fmt.Sprintf("  Last judgment: iteration %d, %s, ", j.Iteration, safetext.Text(j.Result))
	tail := fmt.Sprintf(" (%d resolved, %d new)", j.Resolved, j.New)
	r.segs(dashPlain(text), dashColored(c, ok, "net progress "+dashNet(j.NetProgress)), dashPlain(tail))
	if reason := strings.TrimSpace(j.Reason); reason != "" {
		r.line("    " + safetext.Text(reason))
	}
}

// dashNet is a net progress with its sign, 0 without one.
func dashNet(n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%+d", n)
}
