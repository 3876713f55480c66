package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidate_RubricProblemsNamedByPointer: a rubric the cycle could
// not grade with (two dimensions of one name, a name that cannot become a
// gap's name) is refused by `ooda config validate`, each problem at its
// JSON pointer, instead of surfacing at the first grading.
func TestConfigValidate_RubricProblemsNamedByPointer(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"domains": {"web": {"weight": 1, "primary_skill": "/scan-health",
	  "quality_rubric": {"dimensions": [
	    {"name": "latency", "weight": 1, "capture_method": "command", "capture_command": "sh capture.sh"},
	    {"name": "latency", "weight": 1, "capture_method": "command", "capture_command": "sh capture.sh"}]}}},
	  "quality_rubric": {"axes": [{"name": "has space", "weight": 1}]}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "config", "validate")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		`/domains/web/quality_rubric/dimensions/1/name: "latency" is also the name of`,
		`/quality_rubric/axes/0/name: `,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("missing %q in:\n%s", want, stderr)
		}
	}
	// Fixed, it is valid.
	fixed := strings.Replace(strings.Replace(cfg, `{"name": "latency", "weight": 1, "capture_method": "command", "capture_command": "sh capture.sh"}]`, `{"name": "errors", "weight": 1, "capture_method": "command", "capture_command": "sh capture.sh"}]`, 1), "has space", "has_space", 1)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, dir, "config", "validate"); code != 0 {
		t.Fatalf("fixed rubric: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestConfigValidate_WarnsOfAPrimarySkillTheAllowlistRefuses: the
// configuration is valid, but every cycle its domain wins would be spent
// refusing the skill (recorded futile); validate says so, as doctor does,
// and says nothing once the skill is listed.
func TestConfigValidate_WarnsOfAPrimarySkillTheAllowlistRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"domains": {"docs": {"weight": 1, "primary_skill": "/write-docs"}, "web": {"weight": 1, "primary_skill": "/scan-health"}},
	  "safety": {"skill_allowlist": ["/scan-health"]}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "config", "validate")
	want := `/domains/docs/primary_skill: /write-docs is not in safety.skill_allowlist, so a cycle that selects docs refuses to run it: add "/write-docs" to the list`
	if code != 0 || !strings.Contains(stdout, "warning: ") || !strings.Contains(stdout, want) || strings.Contains(stdout, "/scan-health is not") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	listed := strings.Replace(cfg, `["/scan-health"]`, `["/scan-health", "write-docs"]`, 1)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(listed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, dir, "config", "validate"); code != 0 || strings.Contains(stdout, "warning") {
		t.Fatalf("listed: exit %d\n%s%s", code, stdout, stderr)
	}
}
