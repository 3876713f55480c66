package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	register("lint", Lint{}, builtinContract("observe", "Runs the stack's linters and formatters; new findings become actions (docs/builtin-lint.md).", true))
}

// Bounds of one lint run.
const (
	// lintDefaultTimeout limits each tool when test_timeout_seconds is
	// unset.
	lintDefaultTimeout = 5 * time.Minute
	// lintOutputMax is how much of one tool's output is read for
	// findings; the rest is counted and dropped.
	lintOutputMax = 4 << 20
	// lintLogMax is how much of one tool's output is copied into the run
	// log.
	lintLogMax = 64 << 10
	// lintKeepMax bounds the findings kept in the state file to compare
	// with the next run.
	lintKeepMax = 2000
	// lintActionsMax bounds the actions of one report (one per file).
	lintActionsMax = 50
	// lintReportedMax bounds the reported actions the state file
	// remembers until their findings are fixed; the oldest go first (the
	// queue keeps 20 pending items: older ones have long been dropped).
	lintReportedMax = 200
	// lintReportedIDsMax bounds the finding ids remembered per action;
	// an action with more is resolved only once its file is clean.
	lintReportedIDsMax = 100
)

// Lint is the built-in "lint" skill: it runs the linters and formatters of
// the project's stack that are installed (go vet and gofmt, ruff or flake8,
// eslint, cargo clippy, rubocop), records their findings in the domain's
// state file, and proposes an action per file with new findings
// (docs/builtin-lint.md).
type Lint struct{}

// Describe names the executor.
func (Lint) Describe() string { return "builtin lint" }

// lintToolState is one tool's line in the state file.
type lintToolState struct {
	Name     string   `json:"name"`
	Command  []string `json:"command"`
	Status   string   `json:"status"` // ran, failed, timed_out, missing
	Findings int      `json:"findings"`
	ExitCode int      `json:"exit_code"`
	// Reason says why a tool failed or was skipped.
	Reason string `json:"reason,omitempty"`
	// OutputBytes is set when the output passed the read limit: the
	// findings are those of its first lintOutputMax bytes.
	OutputBytes int64 `json:"output_truncated_bytes,omitempty"`
}

// lintState is the domain state file the skill writes.
type lintState struct {
	LastRun       string             `json:"last_run"`
	Status        string             `json:"status"`
	Findings      int                `json:"findings"`
	NewFindings   int                `json:"new_findings"`
	FixedFindings int                `json:"fixed_findings"`
	ByTool        map[string]int     `json:"by_tool"`
	Tools         []lintToolState    `json:"tools"`
	Skipped       []lintSkip         `json:"skipped"`
	Alerts        []state.Alert      `json:"alerts"`
	Metrics       map[string]float64 `json:"metrics"`
	Open          []lintFinding      `json:"open"`
	OpenTruncated bool               `json:"open_truncated,omitempty"`
	// Reported are the actions reported and not yet resolved, so a later
	// run can name them in the report's "resolved" once fixed.
	Reported []lintReported `json:"reported"`
}

// lintReported is an action the skill reported: its title exactly as
// reported, and the findings behind it.
type lintReported struct {
	Title string   `json:"title"`
	File  string   `json:"file"`
	IDs   []string `json:"ids"`
	// Partial is set when the action had more findings than
	// lintReportedIDsMax: it is resolved when its file has no finding left.
	Partial bool `json:"partial,omitempty"`
}

// lintReport is the report the skill writes ($OODA_REPORT).
type lintReport struct {
	HadOutput bool                 `json:"had_output"`
	Summary   string               `json:"summary"`
	Actions   []act.ReportAction   `json:"actions"`
	Resolved  []act.ResolvedAction `json:"resolved,omitempty"`
	Alerts    []state.Alert        `json:"alerts"`
	Vars      map[string]any       `json:"vars"`
	CostUSD   float64              `json:"cost_usd"`
}

// lintRun is what one tool produced.
type lintRun struct {
	tool     lintTool
	st       lintToolState
	findings []lintFinding
	ok       bool // its findings are this run's (it ran to the end)
	// hidden are the directories (relative to the root, "." for it)
	// whose findings the tool could not look for this time: go vet does
	// not analyse a package that does not type-check ("vet: " lines).
	hidden map[string]bool
}

// Execute runs the tools and writes the state file and the report.
func (l Lint) Execute(ctx context.Context, r act.Request) act.Response {
	start := time.Now()
	resp := act.Response{OK: true, Executor: l.Describe()}
	e := newBuiltinEnv(r)
	store, statePath, reportPath := e.store, e.statePath, e.reportPath
	prev, prevByTool, prevReported := lintReadPrevious(store, statePath, r.Output)

	tools, skips := lintDetect(r.ProjectDir)
	if len(tools) == 0 && len(skips) == 0 {
		lintLogf(r.Output, "lint: no stack found at the project root (looked for %s)\n", strings.Join(lintMarkers, ", "))
	}
	timeout := lintDefaultTimeout
	if r.Config != nil && r.Config.TestTimeoutSeconds > 0 {
		timeout = time.Duration(r.Config.TestTimeoutSeconds * float64(time.Second))
	}
	var policy config.EnvPolicy
	if r.Config != nil {
		policy = lintSkillPolicy(r.Config, r.Skill)
	}
	runner := r.Runner
	if runner == nil {
		runner = proc.Exec{}
	}
	var runs []lintRun
	for _, t := range tools {
		run, stop := lintRunTool(ctx, t, r, runner, timeout, policy)
		if stop != nil {
			stop.Elapsed = time.Since(start)
			stop.Executor = l.Describe()
			return *stop
		}
		if run.st.Status == "missing" {
			skips = append(skips, lintSkip{t.name, run.st.Reason})
			continue
		}
		runs = append(runs, run)
	}

	st, rep := lintEvaluate(runs, skips, prev, prevByTool, prevReported)
	st.LastRun = state.FormatTime(e.now)
	lintLogf(r.Output, "lint: %s\n", rep.Summary)
	if statePath != "" {
		if err := lintWriteJSON(store, statePath, st); err != nil {
			resp.OK, resp.Error = false, err.Error()
		}
	} else {
		lintLogf(r.Output, "lint: warning: no state file (OODA_STATE_FILE is empty): every finding counts as new\n")
	}
	if reportPath != "" && resp.OK {
		if err := lintWriteJSON(store, reportPath, rep); err != nil {
			resp.OK, resp.Error = false, err.Error()
		}
	}
	if !resp.OK {
		lintLogf(r.Output, "lint: %s\n", resp.Error)
	}
	resp.Elapsed = time.Since(start)
	return resp
}

// lintRunTool runs one tool as a contained, timed process. A non-nil
// response means the whole skill must stop now (HALT, the cycle
// canceled).
func lintRunTool(ctx context.Context, t lintTool, r act.Request, runner proc.Runner, timeout time.Duration, policy config.EnvPolicy) (lintRun, *act.Response) {
	run := lintRun{tool: t, st: lintToolState{Name: t.name, Command: t.argv}}
	lintLogf(r.Output, "lint: $ %s\n", safetext.Escape(strings.Join(t.argv, " ")))
	out := &lintHead{limit: lintOutputMax}
	cmd := &act.Command{
		Argv: t.argv, Timeout: timeout, Runner: runner, Policy: policy, Source: "lint",
		// Color codes only get in the way of parsing.
		Env: map[string]string{"NO_COLOR": "1", "CARGO_TERM_COLOR": "never"},
	}
	res := cmd.Execute(ctx, act.Request{
		Skill: r.Skill, Domain: r.Domain, Cycle: r.Cycle, ProjectDir: r.ProjectDir, Now: r.Now,
		Timeout: timeout, HaltFile: r.HaltFile, OnStart: r.OnStart, Output: out,
	})
	raw := out.bytes()
	lintCopyLog(r.Output, raw, out.total)
	if out.total > int64(len(raw)) {
		run.st.OutputBytes = out.total
		lintLogf(r.Output, "lint: %s printed %d bytes; findings are read from the first %d\n", t.name, out.total, len(raw))
		// The line cut at the limit is not a finding: its message (or
		// its file name) is only the start of one.
		if !t.document {
			raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
		}
	}
	switch {
	case res.Halted || res.Canceled:
		stop := act.Response{OK: false, Halted: res.Halted, Canceled: res.Canceled, Error: res.Error, ExitCode: res.ExitCode, Survivors: res.Survivors}
		lintLogf(r.Output, "lint: %s\n", res.Error)
		return run, &stop
	case res.NotStarted:
		run.st.Status, run.st.Reason = "missing", res.Error
		return run, nil
	case lintInstalledMissing(t, raw):
		run.st.Status, run.st.Reason = "missing", t.name+" is not installed"
		return run, nil
	case res.TimedOut:
		run.st.Status, run.st.Reason = "timed_out", fmt.Sprintf("%s did not finish within %s (test_timeout_seconds)", t.name, timeout)
		run.st.ExitCode = res.ExitCode
		return run, nil
	}
	run.st.ExitCode = res.ExitCode
	findings := t.parse(raw, r.ProjectDir)
	if t.keep != nil {
		findings = slices.DeleteFunc(findings, func(f lintFinding) bool { return !t.keep(f) })
	}
	if t.name == "go vet" {
		var typeErrs []byte
		for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("vet: ")) {
				typeErrs = append(typeErrs, l...)
			}
		}
		for _, f := range t.parse(typeErrs, r.ProjectDir) {
			if run.hidden == nil {
				run.hidden = map[string]bool{}
			}
			run.hidden[path.Dir(f.File)] = true
		}
	}
	switch {
	case res.ExitCode == 0 || (slices.Contains(t.findingExits, res.ExitCode) && len(findings) > 0):
		run.st.Status, run.ok, run.findings = "ran", true, findings
		run.st.Findings = len(findings)
	default:
		// An exit that means "error", or "found something" with nothing a
		// reader could find: the tool did not do its work, and what it
		// printed is not a finding of the project's.
		run.st.Status = "failed"
		run.st.Reason = fmt.Sprintf("%s exited with status %d", t.name, res.ExitCode)
		if first := lintFirstLine(raw); first != "" {
			run.st.Reason += ": " + first
		}
	}
	return run, nil
}

// lintEvaluate compares this run's findings with the previous run's and
// builds the state file and the report; reported are the actions earlier
// runs reported and have not yet resolved.
func lintEvaluate(runs []lintRun, skips []lintSkip, prev []lintFinding, prevByTool map[string]bool, reported []lintReported) (lintState, lintReport) {
	st := lintState{
		ByTool: map[string]int{}, Tools: []lintToolState{}, Skipped: skips, Alerts: []state.Alert{},
		Metrics: map[string]float64{}, Open: []lintFinding{},
	}
	if st.Skipped == nil {
		st.Skipped = []lintSkip{}
	}
	ran := map[string]bool{}
	var cur []lintFinding
	for _, run := range runs {
		st.Tools = append(st.Tools, run.st)
		if !run.ok {
			id := "lint_" + run.tool.key + "_" + run.st.Status
			st.Alerts = append(st.Alerts, state.Alert{Severity: "warning", ID: id, Message: run.st.Reason})
			continue
		}
		ran[run.tool.name] = true
		st.ByTool[run.tool.name] = len(run.findings)
		st.Metrics["findings_"+run.tool.key] = float64(len(run.findings))
		st.Findings += len(run.findings)
		cur = append(cur, run.findings...)
	}
	// Findings compare as multisets by id: the same message twice in a
	// file is two findings, and fixing one of them is a fix.
	prevCount := map[string]int{}
	for _, f := range prev {
		if ran[f.Tool] {
			prevCount[f.ID]++
		}
	}
	var fresh []lintFinding
	seen := map[string]int{}
	for _, f := range cur {
		seen[f.ID]++
		if seen[f.ID] > prevCount[f.ID] {
			fresh = append(fresh, f)
		}
	}
	for id, n := range prevCount {
		if n > seen[id] {
			st.FixedFindings += n - seen[id]
		}
	}
	st.NewFindings = len(fresh)
	// A tool that did not run this time (failed, timed out, uninstalled)
	// keeps its previous findings: they are neither fixed nor new, and
	// are compared again when it runs.
	open := cur
	for _, f := range prev {
		if !ran[f.Tool] && prevByTool[f.Tool] {
			open = append(open, f)
		}
	}
	// Earlier actions whose findings are all gone are resolved. open holds
	// the findings of the tools that did not run this time, so theirs
	// stay; it is read before it is cut to the state file's bound.
	openIDs, openFiles := map[string]bool{}, map[string]bool{}
	for _, f := range open {
		openIDs[f.ID], openFiles[f.File] = true, true
	}
	// A previous finding in a package the tool could not analyse this
	// time is not fixed as far as its action goes: it may still be there.
	hidden := map[string]map[string]bool{}
	for _, run := range runs {
		if run.ok && len(run.hidden) > 0 {
			hidden[run.tool.name] = run.hidden
		}
	}
	for _, f := range prev {
		if hidden[f.Tool][path.Dir(f.File)] {
			openIDs[f.ID], openFiles[f.File] = true, true
		}
	}
	var resolved []act.ResolvedAction
	var still []lintReported
	for _, r := range reported {
		if lintStillOpen(r, openIDs, openFiles) {
			still = append(still, r)
			continue
		}
		resolved = append(resolved, act.ResolvedAction{Title: r.Title, Reason: "the linters no longer report its findings in " + r.File})
	}
	if len(open) > lintKeepMax {
		open, st.OpenTruncated = open[:lintKeepMax], true
	}
	st.Open = append(st.Open, open...)
	st.Metrics["findings"] = float64(st.Findings)
	st.Metrics["new_findings"] = float64(st.NewFindings)
	st.Metrics["fixed_findings"] = float64(st.FixedFindings)
	switch {
	case len(st.Alerts) > 0:
		st.Status = "error"
	case len(runs) == 0:
		st.Status = "no_linters"
	case st.Findings > 0:
		st.Status = "findings"
	default:
		st.Status = "clean"
	}

	actions, added := lintActions(fresh, runs)
	st.Reported = append(still, added...)
	if n := len(st.Reported); n > lintReportedMax {
		st.Reported = st.Reported[n-lintReportedMax:]
	}
	if st.Reported == nil {
		st.Reported = []lintReported{}
	}
	rep := lintReport{Actions: actions, Resolved: resolved, Alerts: st.Alerts, CostUSD: 0}
	rep.HadOutput = st.NewFindings > 0 || st.FixedFindings > 0 || len(st.Alerts) > 0 || len(resolved) > 0
	rep.Summary = lintSummary(st, runs)
	rep.Vars = map[string]any{
		"findings": st.Findings, "new_findings": st.NewFindings, "fixed_findings": st.FixedFindings, "by_tool": st.ByTool,
	}
	return st, rep
}

// lintStillOpen reports whether any finding behind a reported action is
// still open.
func lintStillOpen(r lintReported, openIDs, openFiles map[string]bool) bool {
	if r.Partial && openFiles[r.File] {
		return true
	}
	for _, id := range r.IDs {
		if openIDs[id] {
			return true
		}
	}
	return false
}

// lintActions is one action per file with new findings, the files with
// the most (weighted by the tools' impact) first, and what the state file
// remembers of each. A title depends only on the group of new findings it
// was made for (their file, tools, count and the first message), so the
// title remembered is the title the queue holds.
func lintActions(fresh []lintFinding, runs []lintRun) ([]act.ReportAction, []lintReported) {
	type group struct {
		file    string
		byTool  map[string]int
		ids     []string
		first   string
		n       int
		impact  float64
		effort  float64
		onlyFmt bool
	}
	tools := map[string]lintTool{}
	var order []string
	for _, run := range runs {
		tools[run.tool.name] = run.tool
		order = append(order, run.tool.name)
	}
	groups := map[string]*group{}
	var files []string
	for _, f := range fresh {
		g := groups[f.File]
		if g == nil {
			g = &group{file: f.File, byTool: map[string]int{}, first: f.Message}
			groups[f.File] = g
			files = append(files, f.File)
		}
		g.byTool[f.Tool]++
		g.n++
		if !slices.Contains(g.ids, f.ID) {
			g.ids = append(g.ids, f.ID)
		}
		t := tools[f.Tool]
		g.impact = max(g.impact, t.impact)
		g.effort = max(g.effort, t.effort)
	}
	slices.SortStableFunc(files, func(a, b string) int {
		// The most findings of the gravest kind first.
		ga, gb := groups[a], groups[b]
		if d := float64(gb.n)*gb.impact - float64(ga.n)*ga.impact; d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	if len(files) > lintActionsMax {
		files = files[:lintActionsMax]
	}
	actions := []act.ReportAction{}
	var reported []lintReported
	for _, file := range files {
		g := groups[file]
		var parts []string
		for _, name := range order {
			if n := g.byTool[name]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s %s", n, name, lintPlural(n, "finding")))
			}
		}
		title := fmt.Sprintf("Fix %s in %s: %s", strings.Join(parts, " and "), file, g.first)
		a := act.ReportAction{
			Title: title, Reach: float64(min(g.n, 100)), Impact: g.impact, Confidence: 0.9,
			// A file with many findings takes longer, up to a limit.
			Effort: min(g.effort+float64(g.n-1)*0.1, 5),
		}
		if lintSafePath(file) {
			a.RelatedFiles = []string{file}
		}
		actions = append(actions, a)
		r := lintReported{Title: title, File: file, IDs: g.ids}
		if len(r.IDs) > lintReportedIDsMax {
			r.IDs, r.Partial = r.IDs[:lintReportedIDsMax], true
		}
		reported = append(reported, r)
	}
	return actions, reported
}

// lintSafePath is a file name an action may name for a later skill to
// open: relative, inside the project, with nothing escaped in it.
func lintSafePath(p string) bool {
	return p != "" && p != "." && !strings.HasPrefix(p, "/") && p != ".." && !strings.HasPrefix(p, "../") &&
		safetext.Escape(p) == p && !strings.Contains(p, `\`) && !strings.HasSuffix(p, "…")
}

// lintSummary is the report's one line: "go vet: 2, gofmt: 1 file (1 new)".
func lintSummary(st lintState, runs []lintRun) string {
	var parts, failed []string
	for _, run := range runs {
		if !run.ok {
			failed = append(failed, fmt.Sprintf("%s %s", run.tool.name, strings.ReplaceAll(run.st.Status, "_", " ")))
			continue
		}
		n := len(run.findings)
		if run.tool.unit != "" {
			parts = append(parts, fmt.Sprintf("%s: %d %s", run.tool.name, n, lintPlural(n, run.tool.unit)))
		} else {
			parts = append(parts, fmt.Sprintf("%s: %d", run.tool.name, n))
		}
	}
	s := strings.Join(parts, ", ")
	var delta []string
	if st.NewFindings > 0 {
		delta = append(delta, fmt.Sprintf("%d new", st.NewFindings))
	}
	if st.FixedFindings > 0 {
		delta = append(delta, fmt.Sprintf("%d fixed", st.FixedFindings))
	}
	if len(delta) > 0 {
		s += " (" + strings.Join(delta, ", ") + ")"
	}
	if len(failed) > 0 {
		s = lintJoin(s, strings.Join(failed, ", "))
	}
	if len(st.Skipped) > 0 {
		var names []string
		for _, sk := range st.Skipped {
			names = append(names, sk.Tool)
		}
		s = lintJoin(s, "not installed: "+strings.Join(names, ", "))
	}
	if s == "" {
		s = "no linter for this project (no go.mod, pyproject.toml, setup.py, setup.cfg, requirements.txt, package.json, Cargo.toml or Gemfile)"
	}
	return s
}

func lintJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func lintPlural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// lintReadPrevious reads the findings of the previous run from the state
// file, which tools they came from, and the actions reported and not yet
// resolved. A file that cannot be read is no previous run: every finding
// counts as new, and the log says why.
func lintReadPrevious(store *state.Store, path string, log io.Writer) ([]lintFinding, map[string]bool, []lintReported) {
	byTool := map[string]bool{}
	if path == "" {
		return nil, byTool, nil
	}
	ds, err := store.ReadDomainState(path)
	if err != nil {
		lintLogf(log, "lint: warning: previous state not read (%v): every finding counts as new\n", err)
		return nil, byTool, nil
	}
	if !ds.Found {
		return nil, byTool, nil
	}
	var open []lintFinding
	if raw, ok := ds.Raw["open"]; ok {
		if err := json.Unmarshal(raw, &open); err != nil {
			lintLogf(log, "lint: warning: %s: /open is not a list of findings (%v): every finding counts as new\n", path, err)
			open = nil
		}
	}
	for _, f := range open {
		byTool[f.Tool] = true
	}
	var reported []lintReported
	if raw, ok := ds.Raw["reported"]; ok {
		if err := json.Unmarshal(raw, &reported); err != nil {
			lintLogf(log, "lint: warning: %s: /reported is not a list of actions (%v): earlier actions are not resolved\n", path, err)
			reported = nil
		}
	}
	// The file is the project's to edit: only as much as this skill
	// writes is taken from it, and an entry without a title or a finding
	// names nothing to resolve.
	if len(reported) > lintReportedMax {
		reported = reported[len(reported)-lintReportedMax:]
	}
	reported = slices.DeleteFunc(reported, func(r lintReported) bool {
		return strings.TrimSpace(r.Title) == "" || (len(r.IDs) == 0 && !r.Partial)
	})
	for i := range reported {
		if len(reported[i].IDs) > lintReportedIDsMax {
			reported[i].IDs, reported[i].Partial = reported[i].IDs[:lintReportedIDsMax], true
		}
	}
	return open, byTool, reported
}

// lintSkillPolicy is the environment policy of the skills entry that runs
// this built-in, if any: the linters see what a command skill would.
func lintSkillPolicy(cfg *config.Config, skill string) config.EnvPolicy {
	key := config.SkillKey(skill)
	for _, n := range cfg.SkillNames() {
		if config.SkillKey(n) == key {
			return cfg.Skills[n].EnvPolicy
		}
	}
	return config.EnvPolicy{}
}

// lintWriteJSON writes v to a file of the project (see writeJSON).
func lintWriteJSON(store *state.Store, path string, v any) error {
	return writeJSON(store, "lint", path, v)
}

func lintLogf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprint(w, secret.Redact(fmt.Sprintf(format, a...)))
	}
}

// lintCopyLog copies the start of a tool's output into the run log,
// escape sequences removed.
func lintCopyLog(w io.Writer, out []byte, total int64) {
	if w == nil || len(out) == 0 {
		return
	}
	shown := out
	if len(shown) > lintLogMax {
		shown = shown[:lintLogMax]
	}
	text := safetext.Multiline(strings.ToValidUTF8(string(lintStripANSI(shown)), "\uFFFD"))
	lintLogf(w, "%s", text)
	if !strings.HasSuffix(text, "\n") {
		lintLogf(w, "\n")
	}
	if total > int64(len(shown)) {
		lintLogf(w, "lint: [%d more bytes not shown]\n", total-int64(len(shown)))
	}
}

// lintFirstLine is the first non-empty line of a tool's output, cleaned,
// to say why it failed.
func lintFirstLine(out []byte) string {
	for _, l := range lintLines(out) {
		if strings.TrimSpace(l) != "" {
			return lintCleanMessage(l)
		}
	}
	return ""
}

// lintHead keeps the first limit bytes written to it and counts the rest:
// the findings are at the start of a tool's output, and a tool that
// prints without end costs bounded memory.
type lintHead struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	total int64
}

func (h *lintHead) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	if room := h.limit - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *lintHead) bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.buf)
}
