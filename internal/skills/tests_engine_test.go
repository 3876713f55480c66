package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/skills"
)

// A domain whose primary skill is "/tests" runs the built-in (no skills
// entry names it) on a real Go module with a failing test: the cycle
// reads its report, the state file holds the failure, and the contract's
// chain condition "new_failures >= 1" runs the fix skill — once, since
// the next cycle finds no new failure.
func TestTestsThroughTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	files := map[string]string{
		"config.json": `{
  "domains": {
    "test_coverage": {"weight": 1, "primary_skill": "/tests", "state_file": "agent/state/test_coverage.json", "fallback": true}
  },
  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
  "test_command": "go test -cover ./...",
  "test_timeout_seconds": 120,
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/tests", "/fix"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`,
		"skills/tests/SKILL.md": "---\nname: tests\nooda_phase: detect\nchain_triggers:\n  - target: fix\n    condition: \"new_failures >= 1\"\n---\nRuns the test suite.\n",
		"fix.sh":                "echo \"fix $OODA_CYCLE\" >> fixes.txt\n",
		"go.mod":                "module example.com/svc\n\ngo 1.22\n",
		"svc.go":                "package svc\n\n// Double doubles.\nfunc Double(n int) int { return n + n + 1 }\n",
		"svc_test.go":           "package svc\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif got := Double(2); got != 4 {\n\t\tt.Errorf(\"Double(2) = %d, want 4\", got)\n\t}\n}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	cycle := func(at time.Time) string {
		var out bytes.Buffer
		if _, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, Clock: clock.NewFixed(at), Registry: skills.Registry(), Out: &out}); err != nil {
			t.Fatalf("RunCycle: %v\n%s", err, out.String())
		}
		return out.String()
	}
	out := cycle(now)
	for _, want := range []string{
		"[Act] /tests starting... (builtin tests)",
		"[Act] /tests reports: 1 failing (TestDouble); coverage 100.0%",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("cycle output lacks %q:\n%s", want, out)
		}
	}
	var st struct {
		TestStatus  string   `json:"test_status"`
		NewFailures int      `json:"new_failures"`
		Failing     []string `json:"failing"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/test_coverage.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil || st.TestStatus != "failed" || st.NewFailures != 1 || len(st.Failing) != 1 || st.Failing[0] != "TestDouble" {
		t.Errorf("state file: %v\n%s", err, b)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-tests.report.json"))
	if err != nil || !bytes.Contains(rep, []byte(`"title": "Fix the failing test TestDouble"`)) || !bytes.Contains(rep, []byte(`"related_files": [`)) {
		t.Errorf("report: %v\n%s", err, rep)
	}
	if fixes, _ := os.ReadFile(filepath.Join(dir, "fixes.txt")); string(fixes) != "fix 1\n" {
		t.Errorf("the chain on new_failures >= 1 ran %q, want once in cycle 1\n%s", fixes, out)
	}

	out = cycle(now.Add(2 * time.Hour))
	if !strings.Contains(out, "Chain condition not met: new_failures >= 1") {
		t.Errorf("second cycle: the chain condition should not hold:\n%s", out)
	}
	if fixes, _ := os.ReadFile(filepath.Join(dir, "fixes.txt")); string(fixes) != "fix 1\n" {
		t.Errorf("fix ran again without a new failure: %q", fixes)
	}
}
