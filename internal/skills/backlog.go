package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	register("backlog", Backlog{}, builtinContract("strategize",
		"Turns the forge's open issues into RICE-scored actions (docs/builtin-backlog.md).", true))
}

// Bounds of the backlog skill: an issue tracker is written by anyone who
// can open an issue, so how much of it one run reads, keeps and proposes
// is fixed here.
const (
	// backlogMaxIssues is the most open issues one run scores (the
	// newest first); the rest wait until some of these are closed.
	backlogMaxIssues = 200
	// backlogMaxActions is the most new actions one run proposes, the
	// highest RICE first; the others are proposed by later runs.
	backlogMaxActions = 20
	// backlogTitleMax bounds an issue title, in runes.
	backlogTitleMax = 120
	// backlogMaxLabels and backlogLabelMax bound the labels kept per issue
	// and the length of each.
	backlogMaxLabels = 20
	backlogLabelMax  = 50
	// backlogMaxPrevious bounds the issue numbers read back from the
	// previous state file, which anyone with write access may have edited.
	backlogMaxPrevious = 10 * backlogMaxIssues
	// backlogSummaryNumbers is how many issue numbers a summary names.
	backlogSummaryNumbers = 5
)

// The RICE values of an issue no label says anything about.
const (
	backlogReach      = 1
	backlogImpact     = 1
	backlogConfidence = 0.5
	backlogEffort     = 2
)

// Backlog is the built-in "backlog" skill: it reads the open issues from
// the forge, scores each with RICE from its labels, and proposes the
// issues not yet in the action queue as actions; it also reports the
// issues closed since its last run (docs/builtin-backlog.md).
type Backlog struct{}

// Describe names the executor.
func (Backlog) Describe() string { return "builtin backlog" }

// backlogLabelRule is what one label says about an issue. A zero value
// says nothing about that dimension.
type backlogLabelRule struct {
	impact, confidence, effort float64
	// priority marks a priority label: its impact wins over the impact of
	// the issue's kind (a bug labelled "p3" is a low-impact bug).
	priority bool
	// skip marks an issue nobody should work on as it stands.
	skip bool
}

// backlogLabelRules maps normalised labels (backlogNormLabel) to their
// meaning; docs/builtin-backlog.md has the same table.
var backlogLabelRules = func() map[string]backlogLabelRule {
	m := map[string]backlogLabelRule{}
	add := func(r backlogLabelRule, labels ...string) {
		for _, l := range labels {
			m[l] = r
		}
	}
	add(backlogLabelRule{impact: 3, confidence: 1, priority: true},
		"p0", "priority p0", "priority critical", "priority urgent", "critical", "urgent", "severity critical", "sev0")
	add(backlogLabelRule{impact: 2, confidence: 0.9, priority: true},
		"p1", "priority p1", "priority high", "high priority", "severity high", "sev1")
	add(backlogLabelRule{impact: 1, priority: true},
		"p2", "priority p2", "priority medium", "medium priority", "severity medium", "sev2")
	add(backlogLabelRule{impact: 0.5, priority: true},
		"p3", "priority p3", "priority low", "low priority", "severity low", "sev3")
	add(backlogLabelRule{impact: 2, confidence: 0.8}, "bug", "type bug", "kind bug", "defect")
	add(backlogLabelRule{impact: 2, confidence: 0.9}, "regression", "type regression", "kind regression")
	add(backlogLabelRule{impact: 3, confidence: 0.9}, "security", "type security", "kind security", "vulnerability")
	add(backlogLabelRule{impact: 1, confidence: 0.6, effort: 3},
		"enhancement", "type enhancement", "feature", "type feature", "kind feature", "feature request")
	add(backlogLabelRule{impact: 0.5, confidence: 0.9, effort: 1},
		"documentation", "docs", "type docs", "type documentation", "kind documentation")
	add(backlogLabelRule{confidence: 0.9, effort: 1}, "good first issue", "easy", "size xs", "size s")
	add(backlogLabelRule{effort: 2}, "size m")
	add(backlogLabelRule{effort: 5}, "size l")
	add(backlogLabelRule{effort: 8}, "size xl")
	add(backlogLabelRule{skip: true}, "wontfix", "won t fix", "invalid", "duplicate", "question", "blocked", "on hold")
	return m
}()

// backlogNormLabel is a label as the rules know it: lower case, every run
// of characters other than letters and digits one space, so "Priority:
// High", "priority/high" and "priority-high" are the same label.
func backlogNormLabel(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// backlogIssue is one open issue as the state file records it.
type backlogIssue struct {
	Number     int                `json:"number"`
	Title      string             `json:"title"`
	URL        string             `json:"url,omitempty"`
	Labels     []string           `json:"labels,omitempty"`
	Reach      float64            `json:"reach"`
	Impact     float64            `json:"impact"`
	Confidence float64            `json:"confidence"`
	Effort     float64            `json:"effort"`
	Extensions map[string]float64 `json:"extensions,omitempty"`
	RiceScore  float64            `json:"rice_score"`
	// Skipped says why the issue is not proposed: "label wontfix", or
	// "queued" when the action queue already holds it.
	Skipped string `json:"skipped,omitempty"`
}

// backlogState is the domain state file.
type backlogState struct {
	LastRun  string `json:"last_run"`
	Status   string `json:"status"`
	NoRemote bool   `json:"no_remote"`
	Forge    string `json:"forge"`
	// OpenIssues is what the forge listed; IssuesRead how many of them
	// were scored (Truncated when fewer).
	OpenIssues      int     `json:"open_issues"`
	IssuesRead      int     `json:"issues_read"`
	Truncated       bool    `json:"truncated"`
	ActionableItems int     `json:"actionable_items"`
	TopRiceScore    float64 `json:"top_rice_score"`
	Proposed        []int   `json:"proposed"`
	AlreadyQueued   []int   `json:"already_queued"`
	Closed          []int   `json:"closed_since_last_run"`
	Opened          []int   `json:"opened_since_last_run"`
	// OpenNumbers are the numbers of the issues read, the set the next
	// run compares with to find the closed ones.
	OpenNumbers []int              `json:"open_issue_numbers"`
	Issues      []backlogIssue     `json:"issues"`
	Alerts      []state.Alert      `json:"alerts"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

// backlogPrev is what the previous run recorded.
type backlogPrev struct {
	found     bool
	truncated bool
	open      []int
}

// Execute lists the open issues, scores them and writes the state file
// and the report.
func (b Backlog) Execute(ctx context.Context, r act.Request) act.Response {
	start := time.Now()
	resp := act.Response{OK: true, Executor: b.Describe()}
	done := func() act.Response { resp.Elapsed = time.Since(start); return resp }
	fail := func(msg string) act.Response {
		resp.OK, resp.Error = false, msg
		backlogLogf(r.Output, "backlog: %s\n", msg)
		return done()
	}
	e := newBuiltinEnv(r)
	cfg, now, store, statePath, reportPath := e.cfg, e.now, e.store, e.statePath, e.reportPath
	ctx, cancel := withRequestTimeout(ctx, r)
	defer cancel()

	f, err := forge.Select(ctx, cfg, r.ProjectDir)
	if err != nil {
		return fail("cannot reach the issues: " + safetext.Error(err))
	}
	issuer, hasIssues := f.(*forge.GitHub)
	if f == nil || !hasIssues {
		return b.noRemote(store, statePath, reportPath, f, now, r.Output, fail, done)
	}

	prev := backlogReadPrevious(store, statePath, r.Output)
	st, err := f.Status(ctx)
	if err != nil {
		// The previous state file is left as it was, so the next run
		// still finds the issues closed in between.
		return fail(fmt.Sprintf("listing the open issues of %s: %s", f.Name(), safetext.Error(err)))
	}
	queued := backlogQueuedIssues(store, r.Output)
	out, rep := backlogPlan(st.Issues, prev, queued, cfg.Scoring.RiceExtensions, issuer.IssueURL)
	out.LastRun = state.FormatTime(now)
	out.Forge = f.Name()
	for _, is := range out.Issues {
		backlogLogf(r.Output, "#%d %s: RICE %s (reach %s, impact %s, confidence %s, effort %s)%s\n", is.Number, is.Title,
			backlogNum(is.RiceScore), backlogNum(is.Reach), backlogNum(is.Impact), backlogNum(is.Confidence), backlogNum(is.Effort), backlogSkipNote(is))
	}
	if statePath != "" {
		if err := backlogWriteJSON(store, statePath, out); err != nil {
			return fail("state file not written: " + safetext.Error(err))
		}
	} else {
		backlogLogf(r.Output, "backlog: warning: no state file (OODA_STATE_FILE is empty): closed issues cannot be found\n")
	}
	if reportPath != "" {
		if err := backlogWriteJSON(store, reportPath, rep); err != nil {
			return fail("report not written: " + safetext.Error(err))
		}
	}
	backlogLogf(r.Output, "backlog: %s\n", rep.Summary)
	return done()
}

// noRemote records that there is no issue tracker to plan from, as the
// original's plan-backlog does: no output, so the futility check stops
// choosing the domain.
func (Backlog) noRemote(store *state.Store, statePath, reportPath string, f forge.Forge, now time.Time, log io.Writer,
	fail func(string) act.Response, done func() act.Response) act.Response {
	name := "none"
	if f != nil {
		name = f.Name()
	}
	backlogLogf(log, "backlog: the forge is %s, which has no issues: set forge.provider to \"github\" (and forge.repo) in config.json to plan from GitHub issues\n", name)
	st := backlogState{
		LastRun: state.FormatTime(now), Status: "no_remote", NoRemote: true, Forge: name,
		Proposed: []int{}, AlreadyQueued: []int{}, Closed: []int{}, Opened: []int{}, OpenNumbers: []int{},
		Issues: []backlogIssue{}, Alerts: []state.Alert{},
	}
	if statePath != "" {
		if err := backlogWriteJSON(store, statePath, st); err != nil {
			return fail("state file not written: " + safetext.Error(err))
		}
	}
	f0, zero := false, 0.0
	rep := act.Report{HadOutput: &f0, Summary: "no forge: nothing to plan", CostUSD: &zero,
		Vars: map[string]json.RawMessage{"no_remote": json.RawMessage("true")}}
	if reportPath != "" {
		if err := backlogWriteJSON(store, reportPath, rep); err != nil {
			return fail("report not written: " + safetext.Error(err))
		}
	}
	return done()
}

// backlogPlan scores the issues and chooses the actions. issueURL gives an
// issue's web address.
func backlogPlan(issues []forge.Issue, prev backlogPrev, queued map[int]bool, ext config.RiceExtensions, issueURL func(int) string) (backlogState, act.Report) {
	st := backlogState{
		Status: "ok", OpenIssues: len(issues), Proposed: []int{}, AlreadyQueued: []int{}, Closed: []int{}, Opened: []int{},
		OpenNumbers: []int{}, Issues: []backlogIssue{}, Alerts: []state.Alert{},
	}
	// Newest first, as GitHub lists them, whatever order they came in; a
	// number twice (a hostile or broken server) counts once.
	issues = slices.Clone(issues)
	slices.SortStableFunc(issues, func(a, b forge.Issue) int { return b.Number - a.Number })
	issues = slices.CompactFunc(issues, func(a, b forge.Issue) bool { return a.Number == b.Number })
	if len(issues) > backlogMaxIssues {
		issues, st.Truncated = issues[:backlogMaxIssues], true
	}
	var candidates []backlogIssue
	for _, is := range issues {
		if is.Number <= 0 {
			continue
		}
		item := backlogScore(is, ext)
		item.URL = issueURL(is.Number)
		st.OpenNumbers = append(st.OpenNumbers, is.Number)
		switch {
		case item.Skipped != "":
		case queued[is.Number]:
			st.ActionableItems++
			st.TopRiceScore = math.Max(st.TopRiceScore, item.RiceScore)
			item.Skipped = "queued"
			st.AlreadyQueued = append(st.AlreadyQueued, is.Number)
		default:
			st.ActionableItems++
			st.TopRiceScore = math.Max(st.TopRiceScore, item.RiceScore)
			candidates = append(candidates, item)
		}
		st.Issues = append(st.Issues, item)
	}
	st.IssuesRead = len(st.Issues)
	slices.SortStableFunc(st.Issues, backlogByRice)
	slices.SortStableFunc(candidates, backlogByRice)
	if len(candidates) > backlogMaxActions {
		candidates = candidates[:backlogMaxActions]
	}
	var actions []act.ReportAction
	for _, c := range candidates {
		st.Proposed = append(st.Proposed, c.Number)
		actions = append(actions, act.ReportAction{
			Title: backlogActionTitle(c.Number, c.Title), Reach: c.Reach, Impact: c.Impact,
			Confidence: c.Confidence, Effort: c.Effort, Extensions: c.Extensions,
		})
	}

	// Closed and opened issues are only told apart from the unread ones
	// when both lists are whole.
	if prev.found && !prev.truncated && !st.Truncated {
		now := map[int]bool{}
		for _, n := range st.OpenNumbers {
			now[n] = true
		}
		was := map[int]bool{}
		for _, n := range prev.open {
			was[n] = true
			if !now[n] {
				st.Closed = append(st.Closed, n)
			}
		}
		for _, n := range st.OpenNumbers {
			if !was[n] {
				st.Opened = append(st.Opened, n)
			}
		}
		slices.Sort(st.Closed)
		st.Closed = slices.Compact(st.Closed)
		if len(st.Closed) > backlogMaxIssues {
			st.Closed = st.Closed[len(st.Closed)-backlogMaxIssues:]
		}
		slices.Sort(st.Opened)
	}
	changed := !prev.found && len(st.OpenNumbers) > 0 || len(st.Closed) > 0 || len(st.Opened) > 0
	st.Metrics = map[string]float64{
		"open_issues":           float64(st.OpenIssues),
		"actionable_items":      float64(st.ActionableItems),
		"top_rice_score":        st.TopRiceScore,
		"proposed":              float64(len(st.Proposed)),
		"closed_since_last_run": float64(len(st.Closed)),
	}

	had := len(actions) > 0 || changed
	zero := 0.0
	closed, _ := json.Marshal(st.Closed)
	rep := act.Report{HadOutput: &had, Summary: backlogSummary(st, candidates), Actions: actions, CostUSD: &zero,
		Vars: map[string]json.RawMessage{
			"closed_since_last_run": closed,
			"proposed":              json.RawMessage(strconv.Itoa(len(st.Proposed))),
		}}
	return st, rep
}

// backlogByRice orders issues by RICE, highest first, then newest first.
func backlogByRice(a, b backlogIssue) int {
	if a.RiceScore != b.RiceScore {
		if a.RiceScore > b.RiceScore {
			return -1
		}
		return 1
	}
	return b.Number - a.Number
}

// backlogScore applies the label table and scoring.rice_extensions to
// one issue (docs/builtin-backlog.md#rice-from-labels).
func backlogScore(is forge.Issue, ext config.RiceExtensions) backlogIssue {
	item := backlogIssue{Number: is.Number, Title: backlogClean(is.Title, backlogTitleMax), Reach: backlogReach}
	if item.Title == "" {
		item.Title = "(no title)"
	}
	var prioImpact, kindImpact, conf float64
	effort := math.Inf(1)
	extKeys := map[string]string{}
	for k := range ext {
		extKeys[backlogNormLabel(k)] = k
	}
	for _, raw := range is.Labels {
		if len(item.Labels) >= backlogMaxLabels {
			break
		}
		label := backlogClean(raw, backlogLabelMax)
		if label == "" {
			continue
		}
		item.Labels = append(item.Labels, label)
		norm := backlogNormLabel(raw)
		if k, ok := extKeys[norm]; ok {
			if item.Extensions == nil {
				item.Extensions = map[string]float64{}
			}
			item.Extensions[k] = 1
		}
		rule, ok := backlogLabelRules[norm]
		if !ok {
			continue
		}
		if rule.skip && item.Skipped == "" {
			item.Skipped = "label " + label
		}
		if rule.priority {
			prioImpact = math.Max(prioImpact, rule.impact)
		} else {
			kindImpact = math.Max(kindImpact, rule.impact)
		}
		conf = math.Max(conf, rule.confidence)
		if rule.effort > 0 {
			effort = math.Min(effort, rule.effort)
		}
	}
	switch {
	case prioImpact > 0:
		item.Impact = prioImpact
	case kindImpact > 0:
		item.Impact = kindImpact
	default:
		item.Impact = backlogImpact
	}
	item.Confidence = conf
	if conf == 0 {
		item.Confidence = backlogConfidence
	}
	item.Effort = effort
	if math.IsInf(effort, 1) {
		item.Effort = backlogEffort
	}
	item.RiceScore = backlogRice(item, ext)
	return item
}

// backlogRice is the score the action queue will give the action (5-C2):
// reach × impact × confidence / max(effort, 0.5) × 100 × (1 + Σ
// extension × weight), rounded to two decimals.
func backlogRice(item backlogIssue, ext config.RiceExtensions) float64 {
	mult := 1.0
	for k, v := range item.Extensions {
		mult += v * ext[k]
	}
	v := item.Reach * item.Impact * item.Confidence / math.Max(item.Effort, 0.5) * 100 * mult
	return math.Round(v*100) / 100
}

// backlogTitleRE finds the issue an action of this skill is about. The
// title starts with it, so a number quoted later in a title (another
// skill's "flaky since #12", an issue titled "Issue #5: …") is never
// taken for it.
var backlogTitleRE = lazyRegexp(`^Issue #([0-9]{1,9}): `)

// backlogActionTitle is the title of the action for an issue: its number
// first, which is how later runs know the queue already holds it.
func backlogActionTitle(number int, title string) string {
	return "Issue #" + strconv.Itoa(number) + ": " + title
}

// backlogQueuedIssues finds the issues the action queue already holds,
// pending, in progress or completed, by the number their action's title
// starts with.
func backlogQueuedIssues(store *state.Store, log io.Writer) map[int]bool {
	out := map[int]bool{}
	snap, err := store.LoadFiles(state.ActionQueueFile)
	if err != nil {
		backlogLogf(log, "backlog: warning: the action queue was not read (%s); every open issue is proposed, and the queue drops duplicate titles\n", safetext.Error(err))
		return out
	}
	for _, c := range snap.Corrupt {
		backlogLogf(log, "backlog: warning: the action queue was not read (%s); every open issue is proposed, and the queue drops duplicate titles\n", safetext.Error(c.Err))
	}
	q := snap.ActionQueue
	for _, list := range [][]state.Action{q.Pending, q.InProgress, q.Completed} {
		for _, a := range list {
			if m := backlogTitleRE.FindStringSubmatch(a.Title); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil {
					out[n] = true
				}
			}
		}
	}
	return out
}

// backlogReadPrevious reads the issue numbers the previous run saw. A file
// that cannot be read is a first run: nothing is reported closed.
func backlogReadPrevious(store *state.Store, path string, log io.Writer) backlogPrev {
	if path == "" {
		return backlogPrev{}
	}
	ds, err := store.ReadDomainState(path)
	if err != nil {
		backlogLogf(log, "backlog: warning: the previous state was not read (%s); no issue is reported closed this run\n", safetext.Error(err))
		return backlogPrev{}
	}
	if !ds.Found {
		return backlogPrev{}
	}
	var p backlogPrev
	if v, ok := ds.Raw["no_remote"]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("true")) {
		// The last run had no issues to compare with.
		return backlogPrev{}
	}
	raw, ok := ds.Raw["open_issue_numbers"]
	if !ok {
		return backlogPrev{}
	}
	var nums []int
	if err := json.Unmarshal(raw, &nums); err != nil {
		backlogLogf(log, "backlog: warning: %s /open_issue_numbers is not an array of issue numbers; no issue is reported closed this run\n", safetext.Text(path))
		return backlogPrev{}
	}
	if len(nums) > backlogMaxPrevious {
		nums = nums[:backlogMaxPrevious]
		p.truncated = true
	}
	if v, ok := ds.Raw["truncated"]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("true")) {
		p.truncated = true
	}
	p.found, p.open = true, nums
	return p
}

// backlogSummary says in a line what the run found.
func backlogSummary(st backlogState, proposed []backlogIssue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", backlogCount(st.OpenIssues, "open issue"))
	if st.Truncated {
		fmt.Fprintf(&b, " (the newest %d scored)", st.IssuesRead)
	}
	switch {
	case len(proposed) > 0:
		top := proposed[0]
		fmt.Fprintf(&b, "; %s proposed, top #%d %s (RICE %s)", backlogCount(len(proposed), "new action"), top.Number,
			strconv.Quote(backlogClip(top.Title, 60)), backlogNum(top.RiceScore))
	case len(st.AlreadyQueued) > 0:
		fmt.Fprintf(&b, "; nothing new to plan (%d already queued)", len(st.AlreadyQueued))
	default:
		b.WriteString("; nothing to plan")
	}
	if len(st.Closed) > 0 {
		fmt.Fprintf(&b, "; closed since the last run: %s", backlogNumbers(st.Closed))
	}
	if len(st.Opened) > 0 {
		fmt.Fprintf(&b, "; opened: %s", backlogNumbers(st.Opened))
	}
	return b.String()
}

func backlogNumbers(ns []int) string {
	parts := make([]string, 0, backlogSummaryNumbers+1)
	for i, n := range ns {
		if i == backlogSummaryNumbers {
			parts = append(parts, fmt.Sprintf("and %d more", len(ns)-i))
			break
		}
		parts = append(parts, "#"+strconv.Itoa(n))
	}
	return strings.Join(parts, ", ")
}

func backlogCount(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func backlogSkipNote(is backlogIssue) string {
	switch is.Skipped {
	case "":
		return ""
	case "queued":
		return ", already queued"
	}
	return ", not proposed: " + is.Skipped
}

// backlogClean makes text from the forge fit for a title: valid UTF-8,
// without escape sequences or characters that could control a terminal
// or fake a line (each a space), white space collapsed, secrets masked,
// and cut to max runes.
func backlogClean(s string, max int) string {
	if len(s) > 16*max {
		// A megabyte title costs no more than its start.
		s = s[:16*max]
	}
	s = strings.ToValidUTF8(s, "")
	s = ansiRE.ReplaceAllString(s, " ")
	s = strings.Map(func(c rune) rune {
		if safetext.Unsafe(c) || unicode.IsSpace(c) {
			return ' '
		}
		return c
	}, s)
	return backlogClip(strings.Join(strings.Fields(secret.Redact(s)), " "), max)
}

// backlogClip cuts s to max runes, "…" marking the cut.
func backlogClip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

func backlogNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// backlogWriteJSON writes v as indented JSON to p, a path the engine gave
// ($OODA_STATE_FILE, $OODA_REPORT): atomically, only inside the project
// (the store refuses a path, or a symlink on it, that leads out), known
// secrets masked.
func backlogWriteJSON(store *state.Store, p string, v any) error {
	real, err := store.Resolve(p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", p, err)
	}
	return state.WriteFileAtomic(real, secret.RedactBytes(buf.Bytes()), 0o644)
}

// backlogLogf writes a line to the run log, secrets masked.
func backlogLogf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprint(w, secret.Redact(fmt.Sprintf(format, a...)))
	}
}
