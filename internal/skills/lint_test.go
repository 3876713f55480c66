package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
)

// lintResult is one run of the skill as the engine would see it.
type lintResult struct {
	resp  act.Response
	st    lintState
	raw   []byte // the state file as written
	rep   *act.Report
	rawRp []byte
	log   string
}

// lintTestRun runs the lint skill on dir as a cycle would, then reads back
// the state file and the report through the engine's own parser.
func lintTestRun(t *testing.T, dir string, cfg *config.Config) lintResult {
	t.Helper()
	statePath := filepath.Join(dir, "agent", "state", "lint.json")
	reportPath := filepath.Join(dir, "agent", "state", "evolve", "runs", "1-lint.report.json")
	_ = os.Remove(reportPath)
	var log bytes.Buffer
	resp := Lint{}.Execute(context.Background(), act.Request{
		Skill: "/lint", Domain: "quality", Cycle: 1, ProjectDir: dir,
		Now:     time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC),
		Env:     map[string]string{"OODA_STATE_FILE": statePath, "OODA_REPORT": reportPath},
		Timeout: time.Minute, Output: &log, Config: cfg,
	})
	res := lintResult{resp: resp, log: log.String()}
	if b, err := os.ReadFile(statePath); err == nil {
		res.raw = b
		if err := json.Unmarshal(b, &res.st); err != nil {
			t.Fatalf("state file: %v\n%s", err, b)
		}
	}
	if b, err := os.ReadFile(reportPath); err == nil {
		res.rawRp = b
		rep, err := act.ParseReport(b)
		if err != nil {
			t.Fatalf("the engine refuses the report: %v\n%s", err, b)
		}
		res.rep = rep
	}
	return res
}

func lintWrite(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lintPathWith sets PATH to a directory of fake tools plus the directories
// of the real programs named, so that only those are found.
func lintPathWith(t *testing.T, real ...string) string {
	t.Helper()
	bin := t.TempDir()
	dirs := []string{bin}
	for _, name := range real {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not installed", name)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	t.Setenv("PATH", strings.Join(dirs, string(os.PathListSeparator)))
	return bin
}

// lintFakeTool writes an executable script; it is a real process.
func lintFakeTool(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

const lintGoMod = "module example.com/m\n\ngo 1.22\n"

const lintCleanGo = `package m

import "fmt"

// F prints n.
func F(n int) { fmt.Printf("%d\n", n) }
`

const lintVetGo = `package m

import "fmt"

// F prints s.
func F(s string) { fmt.Printf("%d\n", s) }
`

func TestLintGoModuleCleanThenFindingsThenFixed(t *testing.T) {
	lintPathWith(t, "go", "gofmt")
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	lintWrite(t, dir, "a.go", lintCleanGo)

	r := lintTestRun(t, dir, nil)
	if !r.resp.OK {
		t.Fatalf("clean module: %s\n%s", r.resp.Error, r.log)
	}
	if r.st.Status != "clean" || r.st.Findings != 0 || r.st.ByTool["go vet"] != 0 || r.st.ByTool["gofmt"] != 0 || len(r.st.Tools) != 2 {
		t.Fatalf("clean module: state %s\nlog:\n%s", r.raw, r.log)
	}
	if *r.rep.HadOutput || r.rep.Summary != "go vet: 0, gofmt: 0 files" || len(r.rep.Actions) != 0 {
		t.Fatalf("clean module: report %s", r.rawRp)
	}

	// A vet finding in a subpackage and an unformatted file.
	lintWrite(t, dir, "internal/x/x.go", strings.Replace(lintVetGo, "package m", "package x", 1))
	lintWrite(t, dir, "b.go", "package m\nfunc  G() {}\n")
	r = lintTestRun(t, dir, nil)
	if r.st.Status != "findings" || r.st.Findings != 2 || r.st.NewFindings != 2 || r.st.ByTool["go vet"] != 1 || r.st.ByTool["gofmt"] != 1 {
		t.Fatalf("with findings: state %s\nlog:\n%s", r.raw, r.log)
	}
	if !*r.rep.HadOutput || r.rep.Summary != "go vet: 1, gofmt: 1 file (2 new)" {
		t.Fatalf("with findings: report %s", r.rawRp)
	}
	if len(r.rep.Actions) != 2 {
		t.Fatalf("want an action per file, got %s", r.rawRp)
	}
	byFile := map[string]act.ReportAction{}
	for _, a := range r.rep.Actions {
		byFile[strings.Join(a.RelatedFiles, ",")] = a
	}
	vet, ok := byFile["internal/x/x.go"]
	if !ok || !strings.HasPrefix(vet.Title, "Fix 1 go vet finding in internal/x/x.go: ") || !strings.Contains(vet.Title, "wrong type string") || vet.Reach != 1 || vet.Impact != 2 {
		t.Fatalf("vet action: %+v", r.rep.Actions)
	}
	if f, ok := byFile["b.go"]; !ok || !strings.HasPrefix(f.Title, "Fix 1 gofmt finding in b.go") {
		t.Fatalf("gofmt action: %+v", r.rep.Actions)
	}
	if r.st.Metrics["findings"] != 2 || r.st.Metrics["findings_go_vet"] != 1 || r.st.Metrics["new_findings"] != 2 {
		t.Fatalf("metrics: %v", r.st.Metrics)
	}
	if !strings.Contains(r.log, "lint: $ go vet ./...") || !strings.Contains(r.log, "wrong type string") {
		t.Fatalf("the run log shows what ran and what it said:\n%s", r.log)
	}

	// Lines added above the finding move it; it is the same finding.
	lintWrite(t, dir, "internal/x/x.go", strings.Replace(strings.Replace(lintVetGo, "package m", "package x", 1), "import", "// Package x.\n\n// More.\nimport", 1))
	r = lintTestRun(t, dir, nil)
	if r.st.Findings != 2 || r.st.NewFindings != 0 || r.st.FixedFindings != 0 || *r.rep.HadOutput || len(r.rep.Actions) != 0 {
		t.Fatalf("moved finding counted as new or fixed: state %s\nreport %s", r.raw, r.rawRp)
	}
	if r.rep.Summary != "go vet: 1, gofmt: 1 file" {
		t.Fatalf("summary %q", r.rep.Summary)
	}

	// Both fixed.
	lintWrite(t, dir, "internal/x/x.go", "package x\n")
	lintWrite(t, dir, "b.go", "package m\n\nfunc G() {}\n")
	r = lintTestRun(t, dir, nil)
	if r.st.Status != "clean" || r.st.Findings != 0 || r.st.FixedFindings != 2 || r.st.NewFindings != 0 || len(r.st.Open) != 0 {
		t.Fatalf("fixed: state %s", r.raw)
	}
	if !*r.rep.HadOutput || r.rep.Summary != "go vet: 0, gofmt: 0 files (2 fixed)" {
		t.Fatalf("fixed: report %s", r.rawRp)
	}
}

func TestLintCapturedOutputs(t *testing.T) {
	type want struct {
		status   string // of the tool: ran, failed, missing
		findings int
		file     string // of the first finding
		message  string // part of the first finding's message
	}
	cases := []struct {
		name    string
		marker  string
		tool    string // the fake executable, relative to the fake bin dir or the project ("./...")
		capture string
		exit    int
		root    string // the directory the capture was made in
		want    want
	}{
		{"flake8", "requirements.txt", "flake8", "flake8.txt", 1, "", want{"ran", 7, "app.py", "F401 'os' imported but unused"}},
		{"flake8 usage error", "setup.cfg", "flake8", "flake8-usage.txt", 2, "", want{"failed", 0, "", ""}},
		{"ruff", "pyproject.toml", "ruff", "ruff-concise.txt", 1, "", want{"ran", 3, "app.py", "F401 [*] `os` imported but unused"}},
		{"ruff failure", "pyproject.toml", "ruff", "ruff-error.txt", 2, "", want{"failed", 0, "", ""}},
		{"ruff in .venv", "setup.py", "./.venv/bin/ruff", "ruff-concise.txt", 1, "", want{"ran", 3, "app.py", "F401 [*] `os` imported but unused"}},
		{"rubocop", "Gemfile", "rubocop", "rubocop-emacs.txt", 1, "/tmp/lintcap/rb", want{"ran", 9, "Gemfile", "W: Lint/EmptyFile: Empty file detected."}},
		{"rubocop error", ".rubocop.yml", "rubocop", "rubocop-error.txt", 2, "", want{"failed", 0, "", ""}},
		{"eslint", "package.json", "./node_modules/.bin/eslint", "eslint.json", 1, "/tmp/lintcap/js", want{"ran", 8, "app.js", "error: 'f' is defined but never used. (no-unused-vars)"}},
		{"eslint crash", "package.json", "./node_modules/.bin/eslint", "eslint-noconfig.txt", 2, "", want{"failed", 0, "", ""}},
		{"clippy", "Cargo.toml", "cargo", "clippy.txt", 101, "", want{"ran", 2, "src/main.rs", "warning: unused variable: `x`"}},
		{"clippy compile error", "Cargo.toml", "cargo", "clippy-compile-error.txt", 101, "", want{"ran", 1, "src/main.rs", "error[E0308]: mismatched types"}},
		{"clippy without a manifest", "Cargo.toml", "cargo", "clippy-no-cargo-toml.txt", 101, "", want{"failed", 0, "", ""}},
		{"cargo without clippy", "Cargo.toml", "cargo", "cargo-no-clippy.txt", 101, "", want{"missing", 0, "", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := lintPathWith(t)
			dir := t.TempDir()
			lintWrite(t, dir, c.marker, "{}\n")
			if c.marker == "package.json" {
				lintWrite(t, dir, "eslint.config.js", "module.exports = [];\n")
			}
			capture, err := os.ReadFile(filepath.Join("testdata", "lint", c.capture))
			if err != nil {
				t.Fatal(err)
			}
			if c.root != "" {
				capture = bytes.ReplaceAll(capture, []byte(c.root), []byte(dir))
			}
			lintWrite(t, dir, ".capture", string(capture))
			exe := filepath.Join(bin, c.tool)
			if strings.HasPrefix(c.tool, "./") {
				exe = filepath.Join(dir, c.tool)
			}
			lintFakeTool(t, exe, "/usr/bin/cat .capture\nexit "+strconv.Itoa(c.exit))

			r := lintTestRun(t, dir, nil)
			if !r.resp.OK {
				t.Fatalf("%s\n%s", r.resp.Error, r.log)
			}
			if c.want.status == "missing" {
				if len(r.st.Tools) != 0 || len(r.st.Skipped) != 1 || !strings.Contains(r.rep.Summary, "not installed: clippy") || len(r.st.Alerts) != 0 {
					t.Fatalf("state %s\nreport %s", r.raw, r.rawRp)
				}
				return
			}
			if len(r.st.Tools) != 1 || r.st.Tools[0].Status != c.want.status || r.st.Tools[0].ExitCode != c.exit {
				t.Fatalf("tools %+v\nlog:\n%s", r.st.Tools, r.log)
			}
			if c.want.status == "failed" {
				// Not findings: an alert naming the tool and why.
				if r.st.Findings != 0 || len(r.st.Alerts) != 1 || r.st.Alerts[0].Severity != "warning" || !strings.Contains(r.st.Alerts[0].Message, "exited with status") ||
					r.st.Status != "error" || len(r.rep.Alerts) != 1 || len(r.rep.Actions) != 0 || !*r.rep.HadOutput {
					t.Fatalf("state %s\nreport %s", r.raw, r.rawRp)
				}
				return
			}
			if r.st.Findings != c.want.findings || len(r.st.Open) != c.want.findings || len(r.st.Alerts) != 0 {
				t.Fatalf("findings: state %s\nlog:\n%s", r.raw, r.log)
			}
			f := r.st.Open[0]
			if f.File != c.want.file || !strings.Contains(f.Message, c.want.message) || f.Line == 0 || len(f.ID) != 16 {
				t.Fatalf("first finding %+v, want file %q message ~%q", f, c.want.file, c.want.message)
			}
			if len(r.rep.Actions) == 0 || len(r.rep.Actions[0].RelatedFiles) != 1 {
				t.Fatalf("actions: %s", r.rawRp)
			}
		})
	}
}

func TestLintRuffIsPreferredToFlake8(t *testing.T) {
	bin := lintPathWith(t)
	dir := t.TempDir()
	lintWrite(t, dir, "pyproject.toml", "")
	lintFakeTool(t, filepath.Join(bin, "ruff"), "exit 0")
	lintFakeTool(t, filepath.Join(bin, "flake8"), "echo a.py:1:1: E1 never run; exit 1")
	r := lintTestRun(t, dir, nil)
	if len(r.st.Tools) != 1 || r.st.Tools[0].Name != "ruff" || r.rep.Summary != "ruff: 0" {
		t.Fatalf("state %s", r.raw)
	}
}

func TestLintMissingToolsAreNamed(t *testing.T) {
	lintPathWith(t) // nothing installed
	dir := t.TempDir()
	for _, m := range []string{"go.mod", "requirements.txt", "package.json", "Cargo.toml", "Gemfile"} {
		lintWrite(t, dir, m, "")
	}
	r := lintTestRun(t, dir, nil)
	if !r.resp.OK || r.st.Status != "no_linters" || len(r.st.Skipped) != 6 || len(r.st.Alerts) != 0 {
		t.Fatalf("state %s", r.raw)
	}
	if r.rep.Summary != "not installed: go vet, gofmt, ruff, eslint, clippy, rubocop" || *r.rep.HadOutput {
		t.Fatalf("report %s", r.rawRp)
	}
}

func TestLintNoStack(t *testing.T) {
	dir := t.TempDir()
	r := lintTestRun(t, dir, nil)
	if !r.resp.OK || r.st.Status != "no_linters" || !strings.HasPrefix(r.rep.Summary, "no linter for this project") || *r.rep.HadOutput {
		t.Fatalf("state %s\nreport %s", r.raw, r.rawRp)
	}
}

func TestLintToolThatHangsIsStopped(t *testing.T) {
	bin := lintPathWith(t)
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	lintFakeTool(t, filepath.Join(bin, "gofmt"), "exec /usr/bin/sleep 600")
	cfg := config.Default()
	cfg.TestTimeoutSeconds = 0.5
	r := lintTestRun(t, dir, cfg)
	if !r.resp.OK {
		t.Fatalf("a hanging tool is an alert, not a failed run: %s", r.resp.Error)
	}
	if len(r.st.Tools) != 1 || r.st.Tools[0].Status != "timed_out" || len(r.st.Alerts) != 1 || r.st.Alerts[0].ID != "lint_gofmt_timed_out" ||
		!strings.Contains(r.st.Alerts[0].Message, "did not finish within 500ms") {
		t.Fatalf("state %s", r.raw)
	}
	if r.rep.Summary != "gofmt timed out; not installed: go vet" {
		t.Fatalf("summary %q", r.rep.Summary)
	}
}

func TestLintHugeOutputIsBounded(t *testing.T) {
	bin := lintPathWith(t)
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	lintWrite(t, dir, "pkg/file.go", "package pkg\n")
	// 50 MB of the same unformatted file, then a line that never ends.
	lintFakeTool(t, filepath.Join(bin, "gofmt"), "/usr/bin/yes pkg/file.go | /usr/bin/head -c 50000000")
	r := lintTestRun(t, dir, nil)
	if !r.resp.OK {
		t.Fatal(r.resp.Error)
	}
	ts := r.st.Tools[0]
	if ts.Status != "ran" || ts.OutputBytes != 50000000 || r.st.Findings != lintOutputMax/len("pkg/file.go\n") {
		t.Fatalf("tool %+v findings %d", ts, r.st.Findings)
	}
	if !r.st.OpenTruncated || len(r.st.Open) != lintKeepMax || len(r.raw) > 1<<20 {
		t.Fatalf("state file of %d bytes, %d open, truncated %v", len(r.raw), len(r.st.Open), r.st.OpenTruncated)
	}
	if len(r.log) > 2*lintLogMax || !strings.Contains(r.log, "printed 50000000 bytes") {
		t.Fatalf("run log of %d bytes:\n%.500s", len(r.log), r.log)
	}
	if len(r.rep.Actions) != 1 || r.rep.Actions[0].Reach != 100 || r.rep.Actions[0].Effort != 5 {
		t.Fatalf("actions %+v", r.rep.Actions)
	}

	// One line of 50 MB: no finding (it names no file), bounded memory.
	lintFakeTool(t, filepath.Join(bin, "gofmt"), "/usr/bin/head -c 50000000 /dev/zero | /usr/bin/tr '\\0' a")
	r = lintTestRun(t, dir, nil)
	if !r.resp.OK || r.st.Tools[0].Status != "ran" || r.st.Findings != 0 || r.st.Tools[0].OutputBytes != 50000000 {
		t.Fatalf("state %.2000s", r.raw)
	}
}

func TestLintHostileFileNames(t *testing.T) {
	lintPathWith(t, "go", "gofmt")
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	unformatted := "package m\nfunc  %s() {}\n"
	names := map[string]string{
		"evil\x1b[2J\x1b]0;pwned\x07.go": "E",
		"a b.go":                         "AB",
		"-n.go":                          "N",
		"new\nline.go":                   "NL",
		"ansi\u202e.go":                  "Bidi",
	}
	for name, fn := range names {
		lintWrite(t, dir, name, strings.Replace(unformatted, "%s", fn, 1))
	}
	r := lintTestRun(t, dir, nil)
	if !r.resp.OK {
		t.Fatalf("%s\n%s", r.resp.Error, r.log)
	}
	if r.st.ByTool["gofmt"] != len(names) {
		t.Fatalf("gofmt findings %d, want %d: %s\nlog:\n%s", r.st.ByTool["gofmt"], len(names), r.raw, r.log)
	}
	for _, b := range [][]byte{r.raw, r.rawRp, []byte(r.log)} {
		if bytes.ContainsAny(b, "\x1b\x07\u202e") || bytes.Contains(b, []byte(`\u001b`)) || bytes.Contains(b, []byte(`\u0007`)) {
			t.Fatalf("a terminal control reached the output:\n%q", b)
		}
	}
	related := map[string]bool{}
	titles := ""
	for _, a := range r.rep.Actions {
		titles += a.Title + "\n"
		for _, f := range a.RelatedFiles {
			related[f] = true
		}
	}
	if !related["a b.go"] || !related["-n.go"] || len(related) != 2 {
		t.Fatalf("related files %v: only plain names may be handed on", related)
	}
	for _, want := range []string{`evil\x1b[2J\x1b]0;pwned\x07.go`, `new\nline.go`, `ansi\u202e.go`} {
		if !strings.Contains(titles, want) {
			t.Fatalf("titles do not name %s escaped:\n%s", want, titles)
		}
	}
}

func TestLintStripsColors(t *testing.T) {
	bin := lintPathWith(t)
	dir := t.TempDir()
	lintWrite(t, dir, "requirements.txt", "")
	lintFakeTool(t, filepath.Join(bin, "flake8"), `printf '\033[1m./a.py\033[0m:\033[33m3\033[0m:1: \033[31mF401\033[0m x imported\n'; exit 1`)
	r := lintTestRun(t, dir, nil)
	if r.st.Findings != 1 || r.st.Open[0].File != "a.py" || r.st.Open[0].Line != 3 || r.st.Open[0].Message != "F401 x imported" {
		t.Fatalf("state %s", r.raw)
	}
}

func TestLintHaltStopsBeforeATool(t *testing.T) {
	bin := lintPathWith(t)
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	marker := filepath.Join(dir, "ran")
	lintFakeTool(t, filepath.Join(bin, "gofmt"), "/usr/bin/touch "+marker)
	halt := filepath.Join(dir, "HALT")
	lintWrite(t, dir, "HALT", "stop\n")
	var log bytes.Buffer
	statePath := filepath.Join(dir, "agent", "state", "lint.json")
	resp := Lint{}.Execute(context.Background(), act.Request{
		Skill: "/lint", ProjectDir: dir, HaltFile: halt, Output: &log,
		Env: map[string]string{"OODA_STATE_FILE": statePath},
	})
	if resp.OK || !resp.Halted {
		t.Fatalf("response %+v", resp)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the tool ran although HALT was there")
	}
	if _, err := os.Stat(statePath); err == nil {
		t.Fatal("a halted run wrote the state file")
	}
}

func TestLintStateFileOutsideProjectIsRefused(t *testing.T) {
	lintPathWith(t)
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "agent", "state")); err != nil {
		t.Fatal(err)
	}
	r := lintTestRun(t, dir, nil)
	if r.resp.OK || !strings.Contains(r.resp.Error, "not writing") {
		t.Fatalf("response %+v", r.resp)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the project: %v", ents)
	}
}

func TestLintEvaluateComparesAsMultiset(t *testing.T) {
	vet := lintTool{name: "go vet", key: "go_vet", impact: 2, effort: 1}
	fmtTool := lintTool{name: "gofmt", key: "gofmt", unit: "file", impact: 0.5, effort: 0.5}
	dup := lintNew("go vet", "", "a.go", 3, 1, "same message")
	dup2 := dup
	dup2.Line = 9
	old := lintNew("gofmt", "", "b.go", 0, 0, "not formatted (gofmt -w fixes it)")
	prev := []lintFinding{dup, dup2, old}

	// One of two identical findings fixed; gofmt failed this time.
	runs := []lintRun{
		{tool: vet, ok: true, findings: []lintFinding{dup}, st: lintToolState{Name: "go vet", Status: "ran"}},
		{tool: fmtTool, st: lintToolState{Name: "gofmt", Status: "failed", Reason: "gofmt exited with status 2"}},
	}
	st, rep := lintEvaluate(runs, nil, prev, map[string]bool{"go vet": true, "gofmt": true}, nil)
	if st.FixedFindings != 1 || st.NewFindings != 0 || st.Findings != 1 {
		t.Fatalf("state %+v", st)
	}
	// The failed tool's finding is kept, neither fixed nor counted.
	if len(st.Open) != 2 || st.Open[1].ID != old.ID || st.ByTool["gofmt"] != 0 {
		t.Fatalf("open %+v by_tool %v", st.Open, st.ByTool)
	}
	if st.Status != "error" || len(st.Alerts) != 1 || st.Alerts[0].ID != "lint_gofmt_failed" || !rep.HadOutput {
		t.Fatalf("state %+v report %+v", st, rep)
	}
	if rep.Summary != "go vet: 1 (1 fixed); gofmt failed" {
		t.Fatalf("summary %q", rep.Summary)
	}
}

func TestLintParseGoVetLines(t *testing.T) {
	out := "# example.com/m\n# [example.com/m]\nvet: ./c.go:2:9: expected ')', found '{'\n./a.go:6:14: fmt.Printf format %d has arg s of wrong type string\n"
	fs := lintParseLines("go vet")([]byte(out), "")
	if len(fs) != 2 || fs[0].File != "c.go" || fs[0].Line != 2 || fs[0].Col != 9 || fs[1].File != "a.go" || fs[1].Message != "fmt.Printf format %d has arg s of wrong type string" {
		t.Fatalf("%+v", fs)
	}
}

// lintQueue is action_queue.json as the resolution tests read it.
type lintQueue struct {
	Pending []struct {
		ID, Title, Status string
	} `json:"pending"`
	Completed []struct {
		ID, Title, Status, Resolution string
		StatusHistory                 []struct{ Status, At, Reason string } `json:"status_history"`
	} `json:"completed"`
}

func lintReadQueue(t *testing.T, dir string) (lintQueue, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/action_queue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var q lintQueue
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatalf("action_queue.json: %v\n%s", err, b)
	}
	return q, string(b)
}

// A real go vet finding becomes a pending action; once the code is fixed
// the next cycle's report names that action in "resolved" and the engine
// completes it, while the gofmt finding that is still there keeps its
// action pending. A third cycle, with nothing changed, resolves nothing.
func TestLintFixedFindingResolvesItsAction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	lintPathWith(t, "go", "gofmt")
	dir := t.TempDir()
	lintWrite(t, dir, "config.json", `{
  "domains": {"code_quality": {"weight": 1, "primary_skill": "/lint", "fallback": true}},
  "forge": {"provider": "none"},
  "saturation": {"auto_halt": false},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/lint"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`)
	lintWrite(t, dir, "go.mod", lintGoMod)
	lintWrite(t, dir, "a.go", "package m\n\n// F prints.\nfunc F() { fmt.Println(\"x\") }\n")
	lintWrite(t, dir, "b.go", "package m\nfunc  G() {}\n")
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	cycle := func(n int) string {
		t.Helper()
		var out bytes.Buffer
		if _, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, Clock: clock.NewFixed(now.Add(time.Duration(n) * time.Hour)), Registry: Registry(), Out: &out}); err != nil {
			t.Fatalf("cycle %d: %v\n%s", n, err, out.String())
		}
		return out.String()
	}

	out := cycle(1)
	q, raw := lintReadQueue(t, dir)
	if len(q.Pending) != 2 || len(q.Completed) != 0 {
		t.Fatalf("cycle 1 queue:\n%s\n%s", raw, out)
	}
	var vetID, vetTitle, fmtID string
	for _, p := range q.Pending {
		switch {
		case strings.HasPrefix(p.Title, "Fix 1 go vet finding in a.go: ") && strings.Contains(p.Title, "undefined: fmt"):
			vetID, vetTitle = p.ID, p.Title
		case strings.HasPrefix(p.Title, "Fix 1 gofmt finding in b.go"):
			fmtID = p.ID
		}
	}
	if vetID == "" || fmtID == "" {
		t.Fatalf("cycle 1 queue lacks the go vet or the gofmt action:\n%s", raw)
	}

	// The go vet finding is fixed; b.go is still not formatted.
	lintWrite(t, dir, "a.go", "package m\n\nimport \"fmt\"\n\n// F prints.\nfunc F() { fmt.Println(\"x\") }\n")
	out = cycle(2)
	if !strings.Contains(out, "[Reflect] Actions: 1 resolved ("+vetID+").") {
		t.Fatalf("cycle 2 does not resolve %s:\n%s", vetID, out)
	}
	q, raw = lintReadQueue(t, dir)
	if len(q.Pending) != 1 || q.Pending[0].ID != fmtID || len(q.Completed) != 1 {
		t.Fatalf("cycle 2 queue:\n%s", raw)
	}
	c := q.Completed[0]
	if c.ID != vetID || c.Title != vetTitle || c.Status != "completed" || c.Resolution != "no_longer_relevant" ||
		len(c.StatusHistory) != 1 || !strings.Contains(c.StatusHistory[0].Reason, "resolved by /lint (code_quality) in cycle 2: the linters no longer report its findings in a.go") {
		t.Fatalf("completed item %+v", c)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/2-lint.report.json"))
	if err != nil || !bytes.Contains(rep, []byte(`"resolved": [`)) {
		t.Fatalf("cycle 2 report: %v\n%s", err, rep)
	}
	var st lintState
	b, _ := os.ReadFile(filepath.Join(dir, "agent/state/code_quality.json"))
	if err := json.Unmarshal(b, &st); err != nil || len(st.Reported) != 1 || st.Reported[0].File != "b.go" {
		t.Fatalf("state file keeps the unresolved action only: %v\n%s", err, b)
	}

	// Nothing changed: nothing to resolve again.
	out = cycle(3)
	if strings.Contains(out, "resolved") || !strings.Contains(out, "futile") {
		t.Fatalf("cycle 3:\n%s", out)
	}
	rep, _ = os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/3-lint.report.json"))
	if bytes.Contains(rep, []byte(`"resolved"`)) {
		t.Fatalf("cycle 3 report resolves again:\n%s", rep)
	}
}

// go vet does not analyse a package that does not type-check: its other
// findings vanish from the output without being fixed, and their actions
// must not be resolved. They are once the package builds and the finding
// is really gone.
func TestLintPackageThatDoesNotBuildResolvesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	lintPathWith(t, "go", "gofmt")
	dir := t.TempDir()
	lintWrite(t, dir, "go.mod", lintGoMod)
	lintWrite(t, dir, "a.go", lintVetGo)
	lintWrite(t, dir, "sub/c.go", "package sub\n\nimport \"fmt\"\n\n// G prints s.\nfunc G(s string) { fmt.Printf(\"%d\\n\", s) }\n")
	r := lintTestRun(t, dir, nil)
	if len(r.rep.Actions) != 2 || len(r.rep.Resolved) != 0 || len(r.st.Reported) != 2 {
		t.Fatalf("run 1: actions %+v, reported %+v", r.rep.Actions, r.st.Reported)
	}

	// a.go's package no longer type-checks: its Printf finding is hidden;
	// sub's is fixed.
	lintWrite(t, dir, "b.go", "package m\n\n// H uses what is not imported.\nfunc H() { strings.ToUpper(\"x\") }\n")
	lintWrite(t, dir, "sub/c.go", "package sub\n")
	r = lintTestRun(t, dir, nil)
	if len(r.rep.Resolved) != 1 || !strings.Contains(r.rep.Resolved[0].Title, "in sub/c.go") {
		t.Fatalf("run 2 resolved %+v, want only sub/c.go's action\n%s", r.rep.Resolved, r.rawRp)
	}

	// It builds again and the Printf finding is fixed too.
	if err := os.Remove(filepath.Join(dir, "b.go")); err != nil {
		t.Fatal(err)
	}
	lintWrite(t, dir, "a.go", lintCleanGo)
	r = lintTestRun(t, dir, nil)
	var titles []string
	for _, x := range r.rep.Resolved {
		titles = append(titles, x.Title)
	}
	if len(titles) != 2 || !strings.Contains(strings.Join(titles, "\n"), "Fix 1 go vet finding in a.go: fmt.Printf format %d has arg s of wrong type string") {
		t.Fatalf("run 3 resolved %q, want a.go's and b.go's actions", titles)
	}
	if len(r.st.Reported) != 0 {
		t.Fatalf("run 3 still remembers %+v", r.st.Reported)
	}
}
