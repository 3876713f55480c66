package act

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
)

type fakeBuiltin struct{ name string }

func (f fakeBuiltin) Describe() string { return "builtin " + f.name }
func (f fakeBuiltin) Execute(context.Context, Request) Response {
	return Response{OK: true, Executor: f.Describe()}
}

func TestExecutorResolutionOrder(t *testing.T) {
	r := NewRegistry()
	r.Register("/health", fakeBuiltin{"health"})
	cfg := config.Default()
	cfg.Skills = map[string]config.SkillSpec{
		"/scan":   {Command: []string{"./scan.sh", "--fast"}},
		"health":  {Builtin: "health"},
		"/broken": {Builtin: "nope"},
	}
	cfg.Agent.Command = []string{"claude", "-p", "{skill}", "--name={skill_name}"}
	cases := []struct{ skill, want string }{
		{"/scan", `command ["./scan.sh","--fast"]`},
		{"scan", `command ["./scan.sh","--fast"]`},
		{"/health", "builtin health"},
		{"/check-tests", `agent ["claude","-p","/check-tests","--name=check-tests"]`},
	}
	for _, c := range cases {
		e, err := r.Resolve(cfg, c.skill)
		if err != nil || e.Describe() != c.want {
			t.Errorf("Resolve(%s) = %v, %v; want %s", c.skill, e, err, c.want)
		}
	}
	if _, err := r.Resolve(cfg, "/broken"); err == nil || !strings.Contains(err.Error(), `unknown builtin "nope"`) {
		t.Errorf("unknown builtin: %v", err)
	}
	cfg.Agent.Command = nil
	if _, err := r.Resolve(cfg, "/check-tests"); err == nil || err.Error() != "no executor for /check-tests" {
		t.Errorf("no executor: %v", err)
	}
}

func TestCommandExecutorRunsArgvWithEnvAndTimeout(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.sh"), []byte("echo \"$OODA_SKILL $EXTRA $PWD\"; [ \"$1\" = slow ] && sleep 30; exit 0\n"), 0o644)
	var out bytes.Buffer
	c := &Command{Argv: []string{"/bin/sh", "s.sh"}, Env: map[string]string{"EXTRA": "x"}, Runner: proc.Exec{}}
	resp := c.Execute(context.Background(), Request{Skill: "/s", ProjectDir: dir, Env: map[string]string{"OODA_SKILL": "/s"}, Timeout: time.Minute, Output: &out})
	if !resp.OK || strings.TrimSpace(out.String()) != "/s x "+dir {
		t.Fatalf("resp %+v, output %q", resp, out.String())
	}
	slow := &Command{Argv: []string{"/bin/sh", "s.sh", "slow"}, Timeout: 200 * time.Millisecond, Runner: proc.Exec{}}
	resp = slow.Execute(context.Background(), Request{Skill: "/s", ProjectDir: dir, Timeout: time.Minute})
	if resp.OK || !resp.TimedOut || !strings.HasPrefix(resp.Error, "TIMEOUT: /s exceeded 200ms") {
		t.Errorf("timeout: %+v", resp)
	}
	missing := &Command{Argv: []string{"./nope"}, Runner: proc.Exec{}}
	if resp = missing.Execute(context.Background(), Request{ProjectDir: dir}); resp.OK || !strings.HasPrefix(resp.Error, "cannot start ./nope") {
		t.Errorf("start error: %+v", resp)
	}
}

func TestReport(t *testing.T) {
	r, err := ParseReport([]byte(`{"summary": "s", "actions": [{"title": "t", "reach": 1, "impact": 2, "confidence": 0.5, "effort": 1}], "pr_number": 7, "cost_usd": 0.1, "vars": {"x": 1}}`))
	if err != nil || r.Summary != "s" || len(r.Actions) != 1 || !r.CreatedPR() || *r.CostUSD != 0.1 {
		t.Fatalf("report = %+v, %v", r, err)
	}
	if !r.HadOutputDefault(false) {
		t.Error("actions or a PR mean output")
	}
	none, _ := ParseReport([]byte(`{"summary": "nothing"}`))
	if none.HadOutputDefault(false) || !none.HadOutputDefault(true) {
		t.Error("without actions, a PR or alerts, output is whether the domain state changed")
	}
	f := false
	explicit := &Report{HadOutput: &f, Actions: []ReportAction{{Title: "x"}}}
	if explicit.HadOutputDefault(true) {
		t.Error("an explicit had_output wins")
	}
	if r, err := ParseReport([]byte("  ")); r != nil || err != nil {
		t.Error("an empty report is no report")
	}
	if _, err := ParseReport([]byte(`{"cost_usd": -1}`)); err == nil {
		t.Error("a negative cost is rejected")
	}
	if _, err := ParseReport([]byte(`{`)); err == nil {
		t.Error("invalid JSON is an error")
	}
	var nilReport *Report
	if nilReport.CreatedPR() || nilReport.HadOutputDefault(false) || !nilReport.HadOutputDefault(true) {
		t.Error("no report: output is whether the state changed")
	}
}

// Numbers near the float limit are finite in JSON but overflow once the
// engine sums or multiplies them (1e303 dollars twice is +Inf, which no
// state file can hold): each is refused, naming its JSON path.
func TestParseReportRejectsOutOfRangeNumbers(t *testing.T) {
	cases := []struct{ report, want string }{
		{`{"cost_usd": 1e303}`, "cost_usd 1e+303 is out of range (0 to 1e+06)"},
		{`{"cost_usd": 1000000.5}`, "cost_usd 1.0000005e+06 is out of range"},
		{`{"cost_usd": -0.5}`, "cost_usd must not be negative"},
		{`{"pr_number": 0}`, "pr_number 0 is not a pull-request number"},
		{`{"pr_number": -3, "pr_created": true}`, "pr_number -3 is not a pull-request number"},
		{`{"actions": [{"title": "ok", "reach": 1}, {"title": "big", "reach": 1e308}]}`, "actions[1].reach 1e+308 is out of range (0 to 1e+06)"},
		{`{"actions": [{"title": "x", "impact": -1}]}`, "actions[0].impact -1 is out of range"},
		{`{"actions": [{"title": "x", "confidence": 2e6}]}`, "actions[0].confidence 2e+06 is out of range"},
		{`{"actions": [{"title": "x", "effort": 1e300}]}`, "actions[0].effort 1e+300 is out of range"},
		{`{"actions": [{"title": "x", "extensions": {"ux": 1, "sec": -1e9}}]}`, "actions[0].extensions.sec -1e+09 is out of range (-1e+06 to 1e+06)"},
	}
	for _, c := range cases {
		r, err := ParseReport([]byte(c.report))
		if err == nil || r != nil || !strings.HasPrefix(err.Error(), "skill report: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseReport(%s) = %v, %v; want an error containing %q", c.report, r, err, c.want)
		}
	}
	ok := `{"cost_usd": 1000000, "pr_number": 1, "actions": [{"title": "x", "reach": 1e6, "impact": 0, "confidence": 0.5, "effort": 1e6, "extensions": {"a": -1e6, "b": 1e6}}]}`
	if r, err := ParseReport([]byte(ok)); err != nil || r == nil {
		t.Errorf("values at the bounds are accepted: %v", err)
	}
}

type wiredOnlyExec struct{}

func (wiredOnlyExec) Execute(context.Context, Request) Response { return Response{OK: true} }
func (wiredOnlyExec) Describe() string                          { return "builtin wired" }
func (wiredOnlyExec) WiredOnly() bool                           { return true }

// A built-in that runs only where a skills entry names it is not picked
// for a skill of its name: that skill goes to agent.command (an OODA-loop
// project's own /dev-cycle keeps running as it did), or has no executor.
func TestSkillResolutionOfAWiredOnlyBuiltin(t *testing.T) {
	r := NewRegistry()
	r.Register("dev-cycle", wiredOnlyExec{})
	cfg := config.Default()
	if _, err := r.Resolve(cfg, "/dev-cycle"); err == nil {
		t.Error("a wired-only built-in ran by its name")
	}
	cfg.Agent.Command = []string{"claude", "-p", "{skill}"}
	if e, err := r.Resolve(cfg, "/dev-cycle"); err != nil || !strings.HasPrefix(e.Describe(), "agent ") {
		t.Errorf("with agent.command: %v %v", e, err)
	}
	cfg.Skills = map[string]config.SkillSpec{"/implement": {Builtin: "dev-cycle"}}
	if e, err := r.Resolve(cfg, "/implement"); err != nil || e.Describe() != "builtin wired" {
		t.Errorf("by skills entry: %v %v", e, err)
	}
}
