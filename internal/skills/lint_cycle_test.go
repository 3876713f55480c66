package skills_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/cli"
)

// The lint skill through `ooda cycle`, as a user runs it: a Go module
// whose domain's primary skill is "/lint". The engine must read its state
// file and report as it reads a command skill's: the summary, the actions
// extracted into the queue, output or not, and a chain condition on
// new_findings.
func TestLintThroughOodaCycle(t *testing.T) {
	for _, tool := range []string{"go", "gofmt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", `{
  "mission": "Keep the code clean.",
  "domains": {"code_quality": {"weight": 1, "primary_skill": "/lint", "fallback": true, "mission_alignment": 1}},
  "skills": {"/lint": {"builtin": "lint", "contract": {"ooda_phase": "observe",
    "chain_triggers": [{"target": "noop", "condition": "new_findings >= 1"}]}}},
  "forge": {"provider": "none"},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/lint", "/noop"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`)
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("a.go", "package m\n\nimport \"fmt\"\n\n// F prints s.\nfunc F(s string) { fmt.Printf(\"%d\\n\", s) }\n")
	write("b.go", "package m\nfunc  G() {}\n")

	cycle := func(now string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := cli.Main([]string{"cycle", "--project", dir, "--now", now}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("ooda cycle exited %d\n%s\n%s", code, out.String(), errb.String())
		}
		return out.String()
	}

	out := cycle("2026-03-02T09:00:00Z")
	for _, want := range []string{
		"[Act] /lint starting... (builtin lint)",
		"[Act] /lint reports: go vet: 1, gofmt: 1 file (2 new)",
		"/noop",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 1: no %q in\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/action_queue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var queue struct {
		Pending []struct {
			Title        string   `json:"title"`
			RelatedFiles []string `json:"related_files"`
			Status       string   `json:"status"`
		} `json:"pending"`
	}
	if err := json.Unmarshal(b, &queue); err != nil {
		t.Fatal(err)
	}
	titles := ""
	for _, it := range queue.Pending {
		titles += it.Title + "\n"
	}
	if len(queue.Pending) != 2 || !strings.Contains(titles, "Fix 1 go vet finding in a.go: ") || !strings.Contains(titles, "Fix 1 gofmt finding in b.go") {
		t.Fatalf("action queue:\n%s", b)
	}
	log, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-lint.log"))
	if err != nil || !bytes.Contains(log, []byte("lint: $ go vet ./...")) {
		t.Fatalf("run log: %v\n%s", err, log)
	}

	// Nothing changed: nothing new, so the cycle produced nothing and the
	// chain does not run.
	out = cycle("2026-03-02T10:00:00Z")
	if !strings.Contains(out, "[Act] /lint reports: go vet: 1, gofmt: 1 file\n") || !strings.Contains(out, "futile") || strings.Contains(out, "/noop starting") {
		t.Fatalf("cycle 2:\n%s", out)
	}

	// Fixed.
	write("a.go", "package m\n")
	write("b.go", "package m\n\nfunc G() {}\n")
	out = cycle("2026-03-02T11:00:00Z")
	if !strings.Contains(out, "[Act] /lint reports: go vet: 0, gofmt: 0 files (2 fixed)") || strings.Contains(out, "futile") {
		t.Fatalf("cycle 3:\n%s", out)
	}
	var st map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "agent/state/code_quality.json"))
	if err := json.Unmarshal(b, &st); err != nil || st["status"] != "clean" || st["fixed_findings"] != 2.0 {
		t.Fatalf("state file: %v\n%s", err, b)
	}
}
