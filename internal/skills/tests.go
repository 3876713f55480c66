package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	register("tests", Tests{}, builtinContract("detect",
		"Runs test_command and compares with the last run: new failures, fixed tests, coverage (docs/builtin-tests.md).", true))
}

// Bounds on what the tests skill keeps: the output is read up to the last
// proc.LogTailSize bytes (as the run log is), and the state file and the
// report name a bounded number of tests, each a bounded name.
const (
	// testsMaxNames is how many failing (and new, and fixed) test names
	// the state file keeps.
	testsMaxNames = 100
	// testsMaxActions is how many new failures become actions.
	testsMaxActions = 10
	// testsMaxNameRunes bounds one test name.
	testsMaxNameRunes = 200
	// testsDefaultTimeout applies when test_timeout_seconds is unset.
	testsDefaultTimeout = 300 * time.Second
	// coverageEpsilon is the smallest coverage change that counts as
	// moved: coverage is kept to one decimal place.
	coverageEpsilon = 0.05
)

// Tests is the built-in "tests" skill: it runs config test_command,
// reads what the test runner printed, compares it with the previous run
// (the domain state file) and writes the domain state file and the
// report (docs/builtin-tests.md).
type Tests struct{}

// Describe names the executor.
func (Tests) Describe() string { return "builtin tests" }

// testsOutcome is one run of the suite as the state file records it.
type testsOutcome struct {
	status    string // passed, failed, skipped
	runErr    string // why the suite gave no result: timeout, cannot run
	timedOut  bool
	exitCode  int
	run       testRun
	failing   []string
	files     map[string][]string // failing test → related files
	newFails  []string
	fixed     []string
	coverage  *float64
	prevCov   *float64
	covDelta  float64
	duration  time.Duration
	firstRun  bool
	prevState string
	// reported are the failing tests whose actions were reported and not
	// yet resolved; resolved those this run resolves (see track).
	reported []string
	resolved []string
}

// Execute runs the test suite and records what it found. A suite that
// runs, passing or failing, is a successful run of the skill: failing
// tests are its finding. A suite that cannot run or times out is not: the
// run fails, but the state file and the report still say so, with a
// critical alert.
func (Tests) Execute(ctx context.Context, r act.Request) act.Response {
	const executor = "builtin tests"
	start := time.Now()
	logw := r.Output
	if logw == nil {
		logw = io.Discard
	}
	cfg := r.Config
	if cfg == nil || strings.TrimSpace(cfg.TestCommand) == "" {
		msg := `test_command is not set in config.json: set it to the command that runs your tests, e.g. "test_command": "go test -cover ./..." (docs/builtin-tests.md)`
		fmt.Fprintf(logw, "ooda: %s\n", msg)
		return act.Response{Executor: executor, NotStarted: true, Error: msg, Elapsed: time.Since(start)}
	}
	timeout := testsDefaultTimeout
	if s := cfg.TestTimeoutSeconds; s > 0 && !math.IsInf(s, 0) && s < 1e6 {
		timeout = time.Duration(s * float64(time.Second))
	}
	runner := r.Runner
	if runner == nil {
		runner = proc.Exec{}
	}
	spec := skillSpec(cfg, r.Skill)
	// test_command is the user's own shell command from config.json, run
	// as the post-merge check runs it; nothing from the state or the
	// report is ever put into it.
	cmd := &act.Command{
		Argv: []string{"/bin/sh", "-c", cfg.TestCommand}, Timeout: timeout,
		Env: spec.Env, Policy: spec.EnvPolicy, Runner: runner, Source: "test_command",
	}
	fmt.Fprintf(logw, "ooda: tests: running test_command %s (time limit %s, test_timeout_seconds)\n", strconv.Quote(cfg.TestCommand), timeout)
	tail := proc.NewTailBuffer(proc.LogTailSize)
	res := cmd.Execute(ctx, act.Request{
		Skill: r.Skill, Domain: r.Domain, Cycle: r.Cycle, ProjectDir: r.ProjectDir, Now: r.Now,
		Timeout: timeout, HaltFile: r.HaltFile, Output: teeWriter{tail, r.Output}, OnStart: r.OnStart,
	})
	resp := act.Response{Executor: executor, Warnings: res.Warnings, Survivors: res.Survivors,
		Halted: res.Halted, Canceled: res.Canceled}
	if res.Halted || res.Canceled {
		// An operator's stop: the suite's result is unknown, and nothing
		// is recorded as if it were.
		resp.Error, resp.Elapsed = res.Error, time.Since(start)
		return resp
	}

	lines := cleanOutput(tail.Bytes())
	o := testsOutcome{run: parseTestOutput(lines), exitCode: res.ExitCode, duration: res.Elapsed, timedOut: res.TimedOut}
	switch {
	case res.NotStarted:
		o.runErr = fmt.Sprintf("test_command %s could not start: %s", strconv.Quote(cfg.TestCommand), res.Error)
	case res.TimedOut:
		o.runErr = fmt.Sprintf("the test suite timed out after %s (test_timeout_seconds); test_command %s was stopped", timeout, strconv.Quote(cfg.TestCommand))
	case (res.ExitCode == 126 || res.ExitCode == 127) && len(o.run.Runners) == 0:
		// The shell's "not executable" and "not found".
		o.runErr = fmt.Sprintf("test_command %s could not run (exit status %d): %s", strconv.Quote(cfg.TestCommand), res.ExitCode, lastLine(lines))
	}

	st := state.ForConfig(r.ProjectDir, cfg)
	stateFile := r.Env["OODA_STATE_FILE"]
	var prev map[string]json.RawMessage
	if stateFile != "" {
		ds, err := st.ReadDomainState(stateFile)
		switch {
		case err != nil:
			fmt.Fprintf(logw, "ooda: tests: previous state not read, comparing with nothing: %s\n", safetext.Error(err))
		case ds.Found:
			prev = ds.Raw
		}
	}
	o.compare(prev, r.ProjectDir)
	o.track(prev)
	stateDoc := o.stateFile(r.Now, cfg.TestCommand)
	report := o.report()

	if stateFile != "" {
		if err := writeJSON(st, "tests", stateFile, stateDoc); err != nil {
			fmt.Fprintf(logw, "ooda: tests: state file not written: %s\n", safetext.Error(err))
			resp.Error = "state file not written: " + err.Error()
			resp.Elapsed = time.Since(start)
			return resp
		}
	}
	if p := r.Env["OODA_REPORT"]; p != "" {
		if err := writeJSON(st, "tests", p, report); err != nil {
			fmt.Fprintf(logw, "ooda: tests: report not written: %s\n", safetext.Error(err))
		}
	}
	fmt.Fprintf(logw, "ooda: tests: %s\n", report.Summary)
	resp.Elapsed = time.Since(start)
	if o.runErr != "" {
		resp.Error, resp.TimedOut, resp.NotStarted = o.runErr, res.TimedOut, res.NotStarted
		resp.ExitCode = res.ExitCode
		return resp
	}
	resp.OK = true
	return resp
}

// skillSpec is the config.skills entry of the skill, if it has one: its
// env and env policy apply to the test command as to any command skill.
func skillSpec(cfg *config.Config, skill string) config.SkillSpec {
	for _, n := range cfg.SkillNames() {
		if config.SkillKey(n) == config.SkillKey(skill) {
			return cfg.Skills[n]
		}
	}
	return config.SkillSpec{}
}

// teeWriter writes to a tail buffer and, when set, to the run log; the
// log's errors never stop the tail, which the results are read from.
type teeWriter struct {
	tail *proc.TailBuffer
	log  io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.tail.Write(p)
	if t.log != nil {
		t.log.Write(p) //nolint:errcheck // the run log is best effort
	}
	return len(p), nil
}

// compare fills in the outcome from the parsed run and the previous state
// file's failing, test_status and coverage_pct.
func (o *testsOutcome) compare(prev map[string]json.RawMessage, root string) {
	var prevFailing []string
	if prev == nil {
		o.firstRun = true
	} else {
		_ = json.Unmarshal(prev["failing"], &prevFailing)
		// The file is the project's to edit: only as many names as this
		// skill writes are taken from it.
		if len(prevFailing) > testsMaxNames {
			prevFailing = prevFailing[:testsMaxNames]
		}
		for i, n := range prevFailing {
			prevFailing[i] = cleanName(n)
		}
		_ = json.Unmarshal(prev["test_status"], &o.prevState)
		// A run that measured no coverage (a timeout, a command without
		// -cover) kept the last measured one as previous_coverage_pct.
		for _, k := range []string{"coverage_pct", "previous_coverage_pct"} {
			var c float64
			if prev[k] != nil && json.Unmarshal(prev[k], &c) == nil {
				o.prevCov = &c
				break
			}
		}
	}
	mod := goModule(root)
	o.files = map[string][]string{}
	for _, f := range o.run.Failures {
		name := cleanName(f.Name)
		if name == "" || slices.Contains(o.failing, name) {
			continue
		}
		o.failing = append(o.failing, name)
		if p := relatedFile(root, mod, f); p != "" {
			o.files[name] = []string{p}
		}
	}
	failed := max(o.run.Failed, len(o.failing))
	ranNone := o.run.counted && o.run.Passed+failed == 0 && o.run.packagesOK == 0
	if o.runErr == "" && o.exitCode != 0 && failed == 0 && !ranNone {
		// The command failed and no runner said which test: the suite
		// itself is the failure (a build error, a crash, a coverage
		// threshold, an unknown runner).
		name := fmt.Sprintf("test_command (exit status %d)", o.exitCode)
		o.failing = append(o.failing, name)
		failed = 1
	}
	o.run.Failed = failed
	if o.runErr != "" {
		// The suite did not finish: what it did not reach is not fixed.
		for _, n := range prevFailing {
			if !slices.Contains(o.failing, n) {
				o.failing = append(o.failing, n)
			}
		}
		o.run.Failed = max(o.run.Failed, len(o.failing))
	} else {
		for _, n := range prevFailing {
			if !slices.Contains(o.failing, n) {
				o.fixed = append(o.fixed, n)
			}
		}
	}
	for _, n := range o.failing {
		if !slices.Contains(prevFailing, n) {
			o.newFails = append(o.newFails, n)
		}
	}
	switch {
	case o.runErr != "" || o.run.Failed > 0:
		o.status = "failed"
	case ranNone:
		// The runner ran and found nothing to run (all skipped, no test
		// files, pytest's exit status 5).
		o.status = "skipped"
	default:
		o.status = "passed"
	}
	if o.runErr == "" && o.run.Coverage != nil {
		c := round1(*o.run.Coverage)
		o.coverage = &c
		if o.prevCov != nil {
			o.covDelta = round1(c - *o.prevCov)
		}
	}
}

// track follows the actions reported for failing tests until the tests
// pass: the previous state file's "reported" names (its "failing" when it
// has none, as an older file), plus this run's new failures that became
// actions. A name no longer failing is resolved — unless this run may
// hide a failing test (testsHidden): a package that does not build does
// not fail its tests, it skips them.
func (o *testsOutcome) track(prev map[string]json.RawMessage) {
	var before []string
	if prev != nil {
		key := "reported"
		if _, ok := prev[key]; !ok {
			key = "failing"
		}
		if json.Unmarshal(prev[key], &before) != nil {
			before = nil
		}
	}
	// The file is the project's to edit: only as many names as this
	// skill writes are taken from it.
	if len(before) > testsMaxNames {
		before = before[:testsMaxNames]
	}
	hidden := o.testsHidden()
	for _, n := range before {
		n = cleanName(n)
		switch {
		case n == "" || slices.Contains(o.reported, n) || slices.Contains(o.resolved, n):
			// Nothing to follow, or already followed.
		case hidden || slices.Contains(o.failing, n):
			o.reported = append(o.reported, n)
		default:
			o.resolved = append(o.resolved, n)
		}
	}
	for i, n := range o.newFails {
		if i == testsMaxActions {
			break
		}
		if !slices.Contains(o.reported, n) {
			o.reported = append(o.reported, n)
		}
	}
	if n := len(o.reported); n > testsMaxNames {
		o.reported = o.reported[n-testsMaxNames:]
	}
}

// testsHidden says whether a test that still fails may be missing from
// this run's failures: the suite did not finish, it counted failures it
// did not name, or a failure is not a test's — a Go package that did not
// build or failed outside a test, a pytest file that could not be
// collected, the whole command — after which the tests behind it did not
// run.
func (o *testsOutcome) testsHidden() bool {
	if o.runErr != "" || o.run.Failed > len(o.failing) {
		return true
	}
	goTest := slices.Contains(o.run.Runners, "go test") || slices.Contains(o.run.Runners, "go test -json")
	pytest := slices.Contains(o.run.Runners, "pytest")
	for _, f := range o.run.Failures {
		if strings.HasSuffix(f.Name, "[build failed]") || strings.HasSuffix(f.Name, "[setup failed]") ||
			(goTest && f.Pkg == "") || (pytest && !strings.Contains(f.Name, "::")) {
			return true
		}
	}
	return slices.ContainsFunc(o.failing, func(n string) bool { return strings.HasPrefix(n, "test_command (exit status ") })
}

// coverageDrop is how many points coverage fell since the previous run
// that measured it (0 when it rose or was not measured).
func (o *testsOutcome) coverageDrop() float64 {
	if o.coverage == nil || o.prevCov == nil || o.covDelta >= 0 {
		return 0
	}
	return -o.covDelta
}

// alerts are the outcome's alerts: critical when the suite gave no
// result, a warning for new failures, info for failures that persist or
// coverage that fell.
func (o *testsOutcome) alerts() []state.Alert {
	var out []state.Alert
	if o.runErr != "" {
		id := "tests_cannot_run"
		if o.timedOut {
			id = "tests_timeout"
		}
		out = append(out, state.Alert{Severity: "critical", ID: id, Message: o.runErr})
	}
	if len(o.newFails) > 0 {
		out = append(out, state.Alert{Severity: "warning", ID: "tests_new_failures",
			Message: fmt.Sprintf("%d new failing test(s): %s", len(o.newFails), nameList(o.newFails, 5))})
	}
	if old := len(o.failing) - len(o.newFails); old > 0 && o.runErr == "" {
		out = append(out, state.Alert{Severity: "info", ID: "tests_still_failing",
			Message: fmt.Sprintf("%d test(s) still failing", old)})
	}
	if d := o.coverageDrop(); d > 0 {
		out = append(out, state.Alert{Severity: "info", ID: "tests_coverage_drop",
			Message: fmt.Sprintf("coverage fell %.1f points to %.1f%%", d, *o.coverage)})
	}
	return out
}

// stateFile is the domain state file's content. Its keys are what a
// chain condition can test (docs/builtin-tests.md).
func (o *testsOutcome) stateFile(now time.Time, command string) map[string]any {
	failing := capNames(o.failing)
	doc := map[string]any{
		"last_run":         state.FormatTime(now),
		"status":           "ok",
		"test_status":      o.status,
		"command":          command,
		"runner":           strings.Join(o.run.Runners, ", "),
		"exit_code":        o.exitCode,
		"timed_out":        o.timedOut,
		"passed":           o.run.Passed,
		"failed":           o.run.Failed,
		"skipped":          o.run.Skipped,
		"total":            o.run.Passed + o.run.Failed + o.run.Skipped,
		"failing":          failing,
		"new_failures":     len(o.newFails),
		"new_failing":      capNames(o.newFails),
		"fixed":            capNames(o.fixed),
		"reported":         capNames(o.reported),
		"coverage_drop":    o.coverageDrop(),
		"duration_seconds": round1(o.duration.Seconds()),
		"alerts":           nonNil(o.alerts()),
	}
	switch {
	case o.runErr != "":
		doc["status"] = "error"
		doc["error"] = o.runErr
	case o.status == "failed":
		doc["status"] = "failing"
	}
	if len(o.failing) > len(failing) {
		doc["failing_truncated"] = true
	}
	if o.run.packagesOK > 0 {
		// go test without -v names no passing test, only packages.
		doc["packages_passed"] = o.run.packagesOK
	}
	// The lens learns at what value of a metric an alert follows: the
	// failures and the coverage, not the passing count, which grows with
	// every test written.
	metrics := map[string]float64{
		"tests_failed": float64(o.run.Failed),
		"new_failures": float64(len(o.newFails)),
	}
	if o.runErr != "" {
		// Nothing was measured: the lens must not learn from it.
		metrics = map[string]float64{}
	}
	if o.coverage != nil {
		doc["coverage_pct"] = *o.coverage
		metrics["coverage_pct"] = *o.coverage
	}
	if o.prevCov != nil {
		doc["previous_coverage_pct"] = *o.prevCov
	}
	doc["metrics"] = metrics
	return doc
}

// testsActionTitle is the title of the action for a failing test. It
// depends on the test's name only, so the run that sees the test pass
// again names the same action in the report's "resolved".
func testsActionTitle(name string) string { return "Fix the failing test " + name }

// report is the skill's report: had_output when something changed since
// the previous run, one action per new failure, the actions of the tests
// that pass again as resolved, the alerts, the summary.
func (o *testsOutcome) report() act.Report {
	moved := o.coverage != nil && o.prevCov != nil && math.Abs(o.covDelta) >= coverageEpsilon
	had := o.firstRun || len(o.newFails) > 0 || len(o.fixed) > 0 || len(o.resolved) > 0 || moved || o.status != o.prevState
	var actions []act.ReportAction
	for i, n := range o.newFails {
		if i == testsMaxActions {
			break
		}
		actions = append(actions, act.ReportAction{
			Title: testsActionTitle(n),
			// A newly failing test blocks every change that runs the
			// suite: wide reach, high impact, and the runner says where.
			Reach: 3, Impact: 2, Confidence: 0.9, Effort: 1,
			RelatedFiles: o.files[n],
		})
	}
	// A fixed test's action, if it is still pending, no longer applies.
	var resolved []act.ResolvedAction
	for _, n := range o.resolved {
		resolved = append(resolved, act.ResolvedAction{Title: testsActionTitle(n), Reason: "no longer failing: " + n})
	}
	var alerts []json.RawMessage
	for _, a := range o.alerts() {
		b, _ := json.Marshal(a)
		alerts = append(alerts, b)
	}
	zero := 0.0
	vars := map[string]any{
		"new_failures": len(o.newFails), "coverage_drop": o.coverageDrop(), "failed": o.run.Failed,
		"passed": o.run.Passed, "test_status": o.status,
	}
	if o.coverage != nil {
		vars["coverage_pct"] = *o.coverage
	}
	rv := map[string]json.RawMessage{}
	for k, v := range vars {
		b, _ := json.Marshal(v)
		rv[k] = b
	}
	return act.Report{HadOutput: &had, Summary: o.summary(), Actions: actions, Resolved: resolved, Alerts: alerts,
		TestStatus: o.status, CostUSD: &zero, Vars: rv}
}

// summary says in one line what the run found, e.g. "2 failing
// (TestParse, TestFlags), 1 new; coverage 78.5% (−1.2)".
func (o *testsOutcome) summary() string {
	var b strings.Builder
	switch {
	case o.runErr != "":
		b.WriteString(o.runErr)
		if len(o.newFails) > 0 {
			fmt.Fprintf(&b, "; failing before it stopped: %s", nameList(o.newFails, 3))
		}
	case o.status == "failed":
		n := len(o.newFails)
		if n == len(o.failing) && !o.firstRun {
			fmt.Fprintf(&b, "%d failing (%s), new since the last run", o.run.Failed, nameList(o.failing, 3))
		} else {
			fmt.Fprintf(&b, "%d failing (%s)", o.run.Failed, nameList(o.failing, 3))
			if n > 0 && !o.firstRun {
				fmt.Fprintf(&b, ", %d new", n)
			}
		}
	case o.status == "skipped":
		b.WriteString("no tests ran")
		if o.run.Skipped > 0 {
			fmt.Fprintf(&b, " (%d skipped)", o.run.Skipped)
		}
	case o.run.Passed > 0:
		fmt.Fprintf(&b, "all %d passing", o.run.Passed)
	case o.run.packagesOK > 0:
		fmt.Fprintf(&b, "%d package(s) pass", o.run.packagesOK)
	default:
		b.WriteString("tests pass")
	}
	if len(o.fixed) > 0 {
		fmt.Fprintf(&b, "; fixed: %s", nameList(o.fixed, 3))
	}
	if o.coverage != nil {
		fmt.Fprintf(&b, "; coverage %.1f%%", *o.coverage)
		if o.prevCov != nil {
			switch {
			case o.covDelta <= -coverageEpsilon:
				fmt.Fprintf(&b, " (−%.1f)", -o.covDelta)
			case o.covDelta >= coverageEpsilon:
				fmt.Fprintf(&b, " (+%.1f)", o.covDelta)
			}
		}
	}
	return b.String()
}

var goModuleRE = lazyRegexp(`(?m)^module\s+"?([^\s"]+)"?\s*$`)

// goModule is the module path in the project's go.mod, "" when there is
// none: it maps a package that go test names to its directory.
func goModule(root string) string {
	b, err := config.ReadProjectFile(root, filepath.Join(root, "go.mod"), 1<<20)
	if err != nil {
		return ""
	}
	if m := goModuleRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// relatedFile is the project file a failure names, relative to the root
// with forward slashes, or "" when it names none inside the project: an
// absolute path elsewhere, a path with "..", a file that does not exist
// (or is not a regular file) are all dropped, since whatever a runner
// prints is the project's code speaking.
func relatedFile(root, module string, f testFailure) string {
	p := strings.TrimSpace(f.File)
	if p == "" || strings.ContainsRune(p, 0) {
		return ""
	}
	if f.Pkg != "" && !filepath.IsAbs(p) && !strings.Contains(p, "/") {
		// go test prints a file relative to its package's directory.
		switch {
		case module != "" && f.Pkg == module:
		case module != "" && strings.HasPrefix(f.Pkg, module+"/"):
			p = strings.TrimPrefix(f.Pkg, module+"/") + "/" + p
		default:
			return ""
		}
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return ""
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(strings.TrimPrefix(p, "./")))
	if p == "." || strings.HasPrefix(p, "../") || p == ".." || path.IsAbs(p) {
		return ""
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return ""
	}
	defer r.Close()
	fi, err := r.Stat(filepath.FromSlash(p))
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// cleanName is a test name as the state file and the report show it: on
// one line, without characters that could drive a terminal, bounded.
func cleanName(s string) string {
	s = strings.Map(func(c rune) rune {
		if c == utf8.RuneError || safetext.Unsafe(c) {
			return ' '
		}
		return c
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > testsMaxNameRunes {
		s = string([]rune(s)[:testsMaxNameRunes-1]) + "…"
	}
	return s
}

// nameList shows up to n names, then how many more.
func nameList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", +%d more", len(names)-n)
}

func capNames(names []string) []string {
	if names == nil {
		return []string{}
	}
	if len(names) > testsMaxNames {
		return names[:testsMaxNames]
	}
	return names
}

func nonNil(a []state.Alert) []state.Alert {
	if a == nil {
		return []state.Alert{}
	}
	return a
}

// lastLine is the last non-blank line of the output, for a message.
func lastLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return cleanName(t)
		}
	}
	return "no output"
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
