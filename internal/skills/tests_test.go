package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
)

var testsNow = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

// testsState is the part of the state file the tests read.
type testsState struct {
	LastRun      string   `json:"last_run"`
	Status       string   `json:"status"`
	TestStatus   string   `json:"test_status"`
	Runner       string   `json:"runner"`
	Passed       int      `json:"passed"`
	Failed       int      `json:"failed"`
	Skipped      int      `json:"skipped"`
	Failing      []string `json:"failing"`
	NewFailures  int      `json:"new_failures"`
	NewFailing   []string `json:"new_failing"`
	Fixed        []string `json:"fixed"`
	CoveragePct  *float64 `json:"coverage_pct"`
	CoverageDrop float64  `json:"coverage_drop"`
	PrevCoverage *float64 `json:"previous_coverage_pct"`
	TimedOut     bool     `json:"timed_out"`
	Error        string   `json:"error"`
	Alerts       []struct {
		Severity, ID, Message string
	} `json:"alerts"`
	Metrics map[string]float64 `json:"metrics"`
}

type testsRun struct {
	resp   act.Response
	state  testsState
	raw    []byte
	report *act.Report
	log    string
}

// runTestsSkill runs the built-in in dir as the engine does: the state
// file and the report under agent/state, the validated config.
func runTestsSkill(t *testing.T, dir, command string, timeoutSeconds float64) testsRun {
	t.Helper()
	cfg := config.Default()
	cfg.TestCommand = command
	if timeoutSeconds > 0 {
		cfg.TestTimeoutSeconds = timeoutSeconds
	}
	stateFile := filepath.Join(dir, "agent", "state", "test_coverage.json")
	report := filepath.Join(dir, "agent", "state", "evolve", "runs", "1-tests.report.json")
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(report)
	var log bytes.Buffer
	resp := Tests{}.Execute(context.Background(), act.Request{
		Skill: "/tests", Domain: "test_coverage", Cycle: 1, ProjectDir: dir, Now: testsNow,
		Env:      map[string]string{"OODA_STATE_FILE": stateFile, "OODA_REPORT": report},
		HaltFile: filepath.Join(dir, "agent", "safety", "HALT"),
		Output:   &log, Config: cfg,
	})
	out := testsRun{resp: resp, log: log.String()}
	if b, err := os.ReadFile(stateFile); err == nil {
		out.raw = b
		if err := json.Unmarshal(b, &out.state); err != nil {
			t.Fatalf("state file: %v\n%s", err, b)
		}
	}
	if b, err := os.ReadFile(report); err == nil {
		rep, err := act.ParseReport(b)
		if err != nil {
			t.Fatalf("report: %v\n%s", err, b)
		}
		out.report = rep
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const calcGo = `package calc

// Add adds.
func Add(a, b int) int { return a + b }

// Parse reads a flag.
func Parse(s string) bool {
	if s == "yes" {
		return true
	}
	return false
}
`

const calcPassing = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add(1, 2) != 3")
	}
}
`

const calcFailing = calcPassing + `
func TestParse(t *testing.T) {
	if !Parse("on") {
		t.Errorf("Parse(%q) = false, want true", "on")
	}
}

func TestFlags(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		if Parse("") {
			t.Error("empty is true")
		}
	})
	t.Run("no", func(t *testing.T) {
		if !Parse("no") {
			t.Error("Parse(no) = false, want true")
		}
	})
}
`

// A real module: a passing suite, then two tests fail, then the same
// failures again (read through -json this time), then they are fixed.
func TestTestsRealGoTestRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":                     "module example.com/calc\n\ngo 1.22\n",
		"internal/calc/calc.go":      calcGo,
		"internal/calc/calc_test.go": calcPassing,
	})

	// 1. All pass; the first run sets the baseline.
	r := runTestsSkill(t, dir, "go test -cover ./...", 0)
	if !r.resp.OK || r.state.TestStatus != "passed" || r.state.Status != "ok" || r.state.NewFailures != 0 {
		t.Fatalf("passing suite: %+v %+v\n%s", r.resp, r.state, r.log)
	}
	if r.state.CoveragePct == nil || *r.state.CoveragePct <= 0 {
		t.Errorf("coverage not read from go test -cover: %s", r.raw)
	}
	if r.report == nil || r.report.HadOutput == nil || !*r.report.HadOutput || r.report.TestStatus != "passed" {
		t.Fatalf("first run report: %+v", r.report)
	}
	if !strings.Contains(r.report.Summary, "1 package(s) pass; coverage ") {
		t.Errorf("summary %q", r.report.Summary)
	}
	baseCov := *r.state.CoveragePct

	// 2. Two tests fail (one through a subtest, which is the failure
	// named): new failures, actions naming the test file, a warning,
	// lower coverage.
	writeFiles(t, dir, map[string]string{"internal/calc/calc_test.go": calcFailing})
	r = runTestsSkill(t, dir, "go test -cover ./...", 0)
	if !r.resp.OK {
		t.Fatalf("failing tests are a finding, not a failed run: %+v\n%s", r.resp, r.log)
	}
	if r.state.TestStatus != "failed" || r.state.Status != "failing" {
		t.Errorf("status %q/%q", r.state.TestStatus, r.state.Status)
	}
	if want := []string{"TestParse", "TestFlags/no"}; !slices.Equal(r.state.Failing, want) || !slices.Equal(r.state.NewFailing, want) {
		t.Errorf("failing %v / new_failing %v, want %v", r.state.Failing, r.state.NewFailing, want)
	}
	if r.state.NewFailures != 2 || r.state.Failed != 2 {
		t.Errorf("new_failures %d, failed %d, failing %v", r.state.NewFailures, r.state.Failed, r.state.Failing)
	}
	if len(r.report.Actions) != 2 {
		t.Fatalf("actions %+v", r.report.Actions)
	}
	for _, a := range r.report.Actions {
		if !strings.HasPrefix(a.Title, "Fix the failing test ") || a.Reach <= 0 || a.Impact <= 0 || a.Confidence <= 0 || a.Effort <= 0 {
			t.Errorf("action %+v", a)
		}
		if a.Title == "Fix the failing test TestParse" && !slices.Equal(a.RelatedFiles, []string{"internal/calc/calc_test.go"}) {
			t.Errorf("TestParse's related files %v, want the test file relative to the root", a.RelatedFiles)
		}
	}
	if !hasAlert(r.state, "warning", "tests_new_failures") {
		t.Errorf("no warning for new failures: %+v", r.state.Alerts)
	}
	if !strings.HasPrefix(r.report.Summary, "2 failing (TestParse, TestFlags/no), new since the last run; coverage ") {
		t.Errorf("summary %q", r.report.Summary)
	}
	if r.state.CoveragePct == nil || r.state.PrevCoverage == nil || *r.state.PrevCoverage != baseCov {
		t.Errorf("coverage %v, previous %v (base %v)", r.state.CoveragePct, r.state.PrevCoverage, baseCov)
	}

	// 3. The same failures, read from -json: nothing new, no output.
	r = runTestsSkill(t, dir, "go test -json -cover ./...", 0)
	if r.state.Runner != "go test -json" || r.state.NewFailures != 0 || len(r.state.Failing) != 2 || r.state.Passed != 2 {
		t.Errorf("-json rerun: %s", r.raw)
	}
	if r.report.HadOutput == nil || *r.report.HadOutput || len(r.report.Actions) != 0 || hasAlert(r.state, "warning", "tests_new_failures") {
		t.Errorf("an unchanged failing suite reported output: %+v %+v", r.report, r.state.Alerts)
	}
	if !hasAlert(r.state, "info", "tests_still_failing") {
		t.Errorf("persisting failures not noted: %+v", r.state.Alerts)
	}

	// 4. Fixed.
	fixed := strings.Replace(calcGo, `if s == "yes" {`, `if s == "yes" || s == "on" || s == "no" {`, 1)
	writeFiles(t, dir, map[string]string{"internal/calc/calc.go": fixed})
	r = runTestsSkill(t, dir, "go test -json -cover ./...", 0)
	if r.state.TestStatus != "passed" || len(r.state.Failing) != 0 || len(r.state.Fixed) != 2 || r.state.Passed != 5 {
		t.Errorf("fixed suite: %s", r.raw)
	}
	if r.report.HadOutput == nil || !*r.report.HadOutput || !strings.Contains(r.report.Summary, "all 5 passing; fixed: TestParse") {
		t.Errorf("fixed report %+v", r.report)
	}
}

func hasAlert(s testsState, severity, id string) bool {
	for _, a := range s.Alerts {
		if a.Severity == severity && a.ID == id {
			return true
		}
	}
	return false
}

// Coverage that fell is coverage_drop, and the summary shows the move.
func TestTestsCoverageDrop(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, `echo "10 passed, 0 failed"; echo "coverage: 80.0%"`, 0)
	if r.state.CoveragePct == nil || *r.state.CoveragePct != 80 || r.state.CoverageDrop != 0 {
		t.Fatalf("%s", r.raw)
	}
	r = runTestsSkill(t, dir, `echo "10 passed, 0 failed"; echo "coverage: 78.8%"`, 0)
	if r.state.CoverageDrop != 1.2 || !strings.HasSuffix(r.report.Summary, "coverage 78.8% (−1.2)") || !*r.report.HadOutput {
		t.Errorf("drop %v, summary %q", r.state.CoverageDrop, r.report.Summary)
	}
	if !hasAlert(r.state, "info", "tests_coverage_drop") {
		t.Errorf("alerts %+v", r.state.Alerts)
	}
	r = runTestsSkill(t, dir, `echo "10 passed, 0 failed"; echo "coverage: 79.0%"`, 0)
	if r.state.CoverageDrop != 0 || !strings.HasSuffix(r.report.Summary, "(+0.2)") {
		t.Errorf("rise: drop %v, summary %q", r.state.CoverageDrop, r.report.Summary)
	}
	// A run without coverage keeps the last measured one for the next.
	r = runTestsSkill(t, dir, `echo "10 passed, 0 failed"`, 0)
	if r.state.CoveragePct != nil || r.state.PrevCoverage == nil || *r.state.PrevCoverage != 79 {
		t.Errorf("no coverage this run: %s", r.raw)
	}
	r = runTestsSkill(t, dir, `echo "10 passed, 0 failed"; echo "coverage: 70.0%"`, 0)
	if r.state.CoverageDrop != 9 {
		t.Errorf("drop across a run without coverage: %s", r.raw)
	}
}

// A suite that hangs is stopped at test_timeout_seconds: a real process,
// killed; the run fails with a critical alert, and the tests that failed
// before are not taken as fixed.
func TestTestsTimeoutKillsTheSuite(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, `echo "--- FAIL: TestOld (0.00s)"; echo "FAIL"; exit 1`, 0)
	if !slices.Equal(r.state.Failing, []string{"TestOld"}) {
		t.Fatalf("%s", r.raw)
	}
	pidFile := filepath.Join(dir, "pid")
	r = runTestsSkill(t, dir, `echo $$ > pid; echo "=== RUN   TestSlow"; exec sleep 120`, 0.5)
	if r.resp.OK || !r.resp.TimedOut || !strings.Contains(r.resp.Error, "timed out") || !strings.Contains(r.resp.Error, "test_timeout_seconds") {
		t.Fatalf("timeout response %+v\n%s", r.resp, r.log)
	}
	if !r.state.TimedOut || r.state.TestStatus != "failed" || r.state.Status != "error" || !hasAlert(r.state, "critical", "tests_timeout") {
		t.Errorf("timeout state %s", r.raw)
	}
	if !slices.Contains(r.state.Failing, "TestOld") || len(r.state.Fixed) != 0 || r.state.Failed != 1 {
		t.Errorf("an unfinished suite fixed nothing: %s", r.raw)
	}
	if r.report == nil || r.report.TestStatus != "failed" {
		t.Errorf("report %+v", r.report)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil || pid <= 0 {
		t.Fatalf("pid %q", b)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the suite (pid %d) still runs after the timeout", pid)
	}
}

// Output past the last MiB is not read (nor held): a failure printed at
// the start of 3 MiB of output is not seen; the summary at the end is.
func TestTestsHugeOutputIsBounded(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, `echo "--- FAIL: TestEarly (0.00s)"; head -c 3000000 /dev/zero | tr '\0' 'x'; echo; echo "4 passed, 1 failed"; exit 1`, 0)
	if r.state.Passed != 4 || r.state.Failed != 1 || slices.Contains(r.state.Failing, "TestEarly") {
		t.Errorf("huge output: %s", r.raw)
	}
	if len(r.raw) > 8<<10 {
		t.Errorf("state file of %d bytes", len(r.raw))
	}
}

// Coloured output (Jest with FORCE_COLOR) is read as the terminal shows
// it; the test file it names is a related file because it exists.
func TestTestsColouredOutput(t *testing.T) {
	dir := t.TempDir()
	fixture, err := filepath.Abs(filepath.Join("testdata", "tests", "jest-color.txt"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"src/calc.test.js": "// test\n", "fixture.txt": mustRead(t, fixture)})
	r := runTestsSkill(t, dir, "cat fixture.txt; exit 1", 0)
	if r.state.Runner != "jest" || r.state.Failed != 1 || r.state.Passed != 2 || r.state.Skipped != 1 {
		t.Fatalf("%s", r.raw)
	}
	want := "Calculator › subtracts large numbers"
	if !slices.Equal(r.state.Failing, []string{want}) || len(r.report.Actions) != 1 ||
		!slices.Equal(r.report.Actions[0].RelatedFiles, []string{"src/calc.test.js"}) {
		t.Errorf("failing %v, actions %+v", r.state.Failing, r.report.Actions)
	}
	if bytes.ContainsRune(r.raw, 0x1b) {
		t.Errorf("escape codes in the state file")
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTestsWithoutTestCommand(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, "  ", 0)
	if r.resp.OK || !r.resp.NotStarted || !strings.Contains(r.resp.Error, "test_command is not set in config.json") || !strings.Contains(r.resp.Error, `"test_command": "go test -cover ./..."`) {
		t.Errorf("%+v", r.resp)
	}
	if r.raw != nil || r.report != nil {
		t.Errorf("a skill that ran nothing wrote a state file or a report")
	}
	if !strings.Contains(r.log, "test_command is not set") {
		t.Errorf("run log %q", r.log)
	}
}

// A test_command naming a program that does not exist (the default "npm
// test" in a Go project) cannot run: a failed run, a critical alert.
func TestTestsCommandNotFound(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, "no-such-test-runner-4711 --all", 0)
	if r.resp.OK || !strings.Contains(r.resp.Error, `test_command "no-such-test-runner-4711 --all" could not run (exit status 127)`) {
		t.Fatalf("%+v\n%s", r.resp, r.log)
	}
	if r.state.Status != "error" || r.state.TestStatus != "failed" || !hasAlert(r.state, "critical", "tests_cannot_run") {
		t.Errorf("%s", r.raw)
	}
}

func TestTestsStatusSkippedWhenNothingRan(t *testing.T) {
	dir := t.TempDir()
	fixture, _ := filepath.Abs(filepath.Join("testdata", "tests", "pytest-none.txt"))
	// pytest exits 5 when it collects nothing: no tests, not a failure.
	r := runTestsSkill(t, dir, "cat '"+fixture+"'; exit 5", 0)
	if !r.resp.OK || r.state.TestStatus != "skipped" || len(r.state.Failing) != 0 || r.report.Summary != "no tests ran" {
		t.Errorf("%+v %s %+v", r.resp, r.raw, r.report)
	}
}

// A command that fails without a runner saying which test failed is one
// failure: the suite.
func TestTestsUnrecognizedFailure(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, "echo 'Makefile:3: recipe failed'; exit 2", 0)
	if !r.resp.OK || r.state.TestStatus != "failed" || !slices.Equal(r.state.Failing, []string{"test_command (exit status 2)"}) || r.state.NewFailures != 1 {
		t.Errorf("%s", r.raw)
	}
}

// The HALT file stops the suite: nothing is recorded as a result.
func TestTestsHaltRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent/safety/HALT": "stop\n"})
	r := runTestsSkill(t, dir, "echo '3 passed, 0 failed'", 0)
	if r.resp.OK || !r.resp.Halted || r.raw != nil || r.report != nil {
		t.Errorf("%+v state %s", r.resp, r.raw)
	}
}

// Whatever a runner prints is the project's code speaking: a failure
// naming a file outside the project, through "..", an absolute path or a
// symlink out, names no related file.
func TestTestsRelatedFilesStayInTheProject(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, dir, map[string]string{"tests/test_ok.py": "#\n"})
	writeFiles(t, outside, map[string]string{"secret.py": "#\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    testFailure
		want string
	}{
		{testFailure{File: "tests/test_ok.py"}, "tests/test_ok.py"},
		{testFailure{File: filepath.Join(dir, "tests", "test_ok.py")}, "tests/test_ok.py"},
		{testFailure{File: "../" + filepath.Base(outside) + "/secret.py"}, ""},
		{testFailure{File: filepath.Join(outside, "secret.py")}, ""},
		{testFailure{File: "link/secret.py"}, ""},
		{testFailure{File: "tests"}, ""},
		{testFailure{File: "tests/missing.py"}, ""},
		{testFailure{File: "x_test.go", Pkg: "other.org/x"}, ""},
	} {
		if got := relatedFile(dir, "example.com/m", tc.f); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.f, got, tc.want)
		}
	}
}

// A name full of control characters reaches neither the state file nor
// the summary as such.
func TestTestsNamesAreCleaned(t *testing.T) {
	dir := t.TempDir()
	r := runTestsSkill(t, dir, `printf -- '--- FAIL: Test\033]0;pwned\007X (0.00s)\nFAIL\n'; exit 1`, 0)
	if len(r.state.Failing) != 1 || strings.ContainsAny(r.state.Failing[0], "\x1b\x07") || strings.ContainsAny(r.report.Summary, "\x1b\x07") {
		t.Errorf("%q %q", r.state.Failing, r.report.Summary)
	}
}

// The state file is written only inside the project: a state directory
// that is a symlink out of it is refused, and nothing is written there.
func TestTestsStateFileStaysInTheProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "agent", "state")); err != nil {
		t.Fatal(err)
	}
	r := runTestsSkill(t, dir, "echo '3 passed, 0 failed'", 0)
	if r.resp.OK || !strings.Contains(r.resp.Error, "state file not written") {
		t.Errorf("%+v", r.resp)
	}
	if _, err := os.Stat(filepath.Join(outside, "test_coverage.json")); err == nil {
		t.Errorf("the state file was written outside the project")
	}
}

// Two Go tests fail, each becomes a pending action; one is fixed, and the
// next cycle's report names its action in "resolved", which the engine
// completes, while the other test's action stays pending. A build error
// hides the still-failing test without resolving it; it is an action of
// its own, resolved with the rest once the package builds and passes.
func TestTestsFixedTestResolvesItsAction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"config.json": `{
  "domains": {"test_coverage": {"weight": 1, "primary_skill": "/tests", "fallback": true}},
  "test_command": "go test ./...",
  "test_timeout_seconds": 120,
  "saturation": {"auto_halt": false},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/tests"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`,
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a + b }\n",
		"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 2) != 4 {
		t.Error("Add(2, 2) != 4")
	}
}

func TestSub(t *testing.T) {
	if Sub(2, 2) != 0 {
		t.Error("Sub(2, 2) != 0")
	}
}
`,
	})
	cycle := func(n int) string {
		t.Helper()
		var out bytes.Buffer
		if _, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, Clock: clock.NewFixed(testsNow.Add(time.Duration(n) * time.Hour)), Registry: Registry(), Out: &out}); err != nil {
			t.Fatalf("cycle %d: %v\n%s", n, err, out.String())
		}
		return out.String()
	}
	type queue struct {
		Pending []struct {
			ID, Title string
		} `json:"pending"`
		Completed []struct {
			ID, Title, Status, Resolution string
			StatusHistory                 []struct{ Reason string } `json:"status_history"`
		} `json:"completed"`
	}
	read := func() (queue, string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/action_queue.json"))
		if err != nil {
			t.Fatal(err)
		}
		var q queue
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		return q, string(b)
	}
	ids := func(q queue) map[string]string {
		m := map[string]string{}
		for _, p := range q.Pending {
			m[p.Title] = p.ID
		}
		return m
	}

	out := cycle(1)
	q, raw := read()
	pending := ids(q)
	addID, subID := pending["Fix the failing test TestAdd"], pending["Fix the failing test TestSub"]
	if len(q.Pending) != 2 || addID == "" || subID == "" {
		t.Fatalf("cycle 1 queue:\n%s\n%s", raw, out)
	}

	// TestAdd fixed, TestSub still failing.
	writeFiles(t, dir, map[string]string{"calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a + b }\n"})
	out = cycle(2)
	if !strings.Contains(out, "[Reflect] Actions: 1 resolved ("+addID+").") {
		t.Fatalf("cycle 2 does not resolve %s:\n%s", addID, out)
	}
	q, raw = read()
	if len(q.Pending) != 1 || q.Pending[0].ID != subID || len(q.Completed) != 1 {
		t.Fatalf("cycle 2 queue:\n%s", raw)
	}
	if c := q.Completed[0]; c.ID != addID || c.Status != "completed" || c.Resolution != "no_longer_relevant" ||
		len(c.StatusHistory) != 1 || !strings.HasSuffix(c.StatusHistory[0].Reason, "in cycle 2: no longer failing: TestAdd") {
		t.Fatalf("completed item %+v", c)
	}

	// A build error, then the package builds and every test passes.
	writeFiles(t, dir, map[string]string{"calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b + undefinedName }\n"})
	cycle(3)
	q, raw = read()
	var buildID string
	for title, id := range ids(q) {
		if strings.HasPrefix(title, "Fix the failing test ") && id != subID {
			buildID = id
		}
	}
	if buildID == "" {
		t.Fatalf("cycle 3: the build error is no action:\n%s", raw)
	}
	// TestSub did not run, so it is not fixed: its action stays.
	if ids(q)["Fix the failing test TestSub"] != subID || len(q.Completed) != 1 {
		t.Fatalf("cycle 3: a package that does not build resolved its tests' actions:\n%s", raw)
	}
	writeFiles(t, dir, map[string]string{"calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"})
	out = cycle(4)
	q, raw = read()
	if len(q.Pending) != 0 || len(q.Completed) != 3 || !strings.Contains(out, "[Reflect] Actions: 2 resolved") {
		t.Fatalf("cycle 4: every action should be resolved:\n%s\n%s", raw, out)
	}
}
