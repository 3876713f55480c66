package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// The config init writes keeps its domains in the order init chose (the
// final tie-break), wires each to the built-in of the same name, allows
// exactly those skills, and loads.
func TestInitWiresDomainsInOrder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	cfg, err := config.Load(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range cfg.Domains {
		names = append(names, d.Name+"→"+d.PrimarySkill+"="+cfg.Skills[d.PrimarySkill].Builtin)
		if !d.Fallback {
			t.Errorf("domain %s is not a fallback: a new project's low confidence would skip every cycle", d.Name)
		}
	}
	if got := strings.Join(names, " "); got != "test_coverage→/tests=tests code_quality→/lint=lint backlog→/backlog=backlog" {
		t.Errorf("domains %s", got)
	}
	if got := strings.Join(cfg.Safety.SkillAllowlist, " "); got != "/tests /lint /backlog" {
		t.Errorf("allowlist %s", got)
	}
	if cfg.TestCommand != "go test ./..." || cfg.GoalCompletionIdle {
		t.Errorf("test_command %q, goal_completion_idle %v", cfg.TestCommand, cfg.GoalCompletionIdle)
	}
}

// The mission typed at the prompt is one line, without the control
// characters an accidental paste brings, and read within a bound: a
// terminal streaming bytes without a newline cannot exhaust memory.
func TestAskMissionCleansAndBounds(t *testing.T) {
	var errb bytes.Buffer
	g := &globals{stdin: strings.NewReader("Keep \x1b[2Jthe\tAPI up\r\nsecond line\n"), stderr: &errb}
	if got := askMission(g); got != "Keep  [2Jthe API up" {
		t.Errorf("mission %q", got)
	}
	g = &globals{stdin: strings.NewReader(strings.Repeat("a", 10*maxMission)), stderr: &errb}
	if got := askMission(g); len(got) != maxMission {
		t.Errorf("read %d bytes, want at most %d", len(got), maxMission)
	}
}
