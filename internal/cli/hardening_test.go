package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// initProject creates a project with `ooda init` and returns its root.
func initProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	return dir
}

func writeHalt(t *testing.T, dir, content string) {
	t.Helper()
	p := filepath.Join(dir, "agent", "safety", "HALT")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A HALT file cannot forge a line of ooda's output: a newline in it starts
// a new quoted line, indented, never one at the left margin.
func TestResumeCannotForgeALine(t *testing.T) {
	dir := initProject(t)
	writeHalt(t, dir, "stop\x1b[2J\r\n[Record] Cycle #9 recorded\n\u2028[HALT] x\ncreated_at: 2026-01-06T10:00:00Z\n")
	code, stdout, stderr := run(t, dir, "resume")
	if code != 0 {
		t.Fatalf("resume: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{`  stop\x1b[2J\r`, "  [Record] Cycle #9 recorded", `  \u2028[HALT] x`, "  created_at: 2026-01-06T10:00:00Z"}
	if len(lines) != 2+len(want) || !strings.HasPrefix(lines[0], "HALT file removed (") || lines[1] != "It said:" {
		t.Fatalf("stdout %q", stdout)
	}
	for i, w := range want {
		if lines[2+i] != w {
			t.Errorf("line %d = %q, want %q", 2+i, lines[2+i], w)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			t.Errorf("the HALT file forged the line %q", l)
		}
	}

	writeHalt(t, dir, "")
	if _, stdout, _ := run(t, dir, "resume"); !strings.HasSuffix(stdout, "\nIt said nothing.\n") {
		t.Errorf("empty HALT file: %q", stdout)
	}
}

// terminalRunes are the characters encoding/json leaves raw that a
// terminal acts on or that reorder the text shown.
var terminalRunes = []rune{0x7f, 0x80, 0x9b, 0x9f, 0x61c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069}

// checkJSONOutput asserts that out is one JSON document with none of
// terminalRunes raw in it, and that it decodes to text holding want.
func checkJSONOutput(t *testing.T, what, out, want string) {
	t.Helper()
	for _, r := range terminalRunes {
		if strings.ContainsRune(out, r) {
			t.Errorf("%s: U+%04X printed raw: %q", what, r, out)
		}
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
	back, _ := json.Marshal(v)
	var decoded strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			decoded.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				decoded.WriteString(k + "\n")
				walk(e)
			}
		}
	}
	walk(v)
	if !strings.Contains(decoded.String(), want) {
		t.Errorf("%s: the decoded document lacks %q: %s", what, want, back)
	}
}

// yamlEscape writes s for a double-quoted YAML string, which may not hold
// control characters raw but may name them.
func yamlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r >= 0x7f {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// --json output escapes C1 controls, DEL and bidirectional controls, which
// encoding/json leaves raw, and still decodes to the same text.
func TestJSONOutputEscapesTerminalControls(t *testing.T) {
	const hostile = "x\u009by\u202ez\u0080\u200e\u200f\u061c\u2066\u2069\u202a\u007fw"

	t.Run("config validate", func(t *testing.T) {
		dir := initProject(t)
		cfg := `{"schema_version": "1.5.0", "project": {"name": "x", "locale": "en", "timezone": "UTC"},
  "domains": {"` + hostile + `": {"weight": 1.0, "state_file": "agent/state/plain.json", "primary_skill": "/dump", "status": "active"}}}`
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644)
		code, stdout, _ := run(t, dir, "config", "validate", "--json")
		if code != ExitUsage {
			t.Fatalf("exit %d: %s", code, stdout)
		}
		checkJSONOutput(t, "config validate", stdout, "/domains/"+hostile)
	})

	t.Run("skill list", func(t *testing.T) {
		dir := t.TempDir()
		cfg := `{"schema_version": "1.5.0", "project": {"name": "x", "locale": "en", "timezone": "UTC"},
  "domains": {"plain": {"weight": 1.0, "state_file": "agent/state/plain.json", "primary_skill": "/dump", "status": "active"}},
  "skills": {"/dump": {"command": ["/bin/true"]}},
  "safety": {"halt_file": "agent/safety/HALT", "skill_allowlist": ["/dump"]}}`
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644)
		os.MkdirAll(filepath.Join(dir, "skills", "dump"), 0o755)
		os.WriteFile(filepath.Join(dir, "skills", "dump", "contract.yaml"), []byte("ooda_phase: \""+yamlEscape(hostile)+"\"\n"), 0o644)
		code, stdout, stderr := run(t, dir, "skill", "list", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, stdout, stderr)
		}
		checkJSONOutput(t, "skill list", stdout, hostile)
	})

	t.Run("resume", func(t *testing.T) {
		dir := initProject(t)
		writeHalt(t, dir, hostile+"\ncreated_at: 2026-01-06T10:00:00Z\n")
		code, stdout, stderr := run(t, dir, "resume", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, stdout, stderr)
		}
		checkJSONOutput(t, "resume", stdout, hostile)
	})

	// Masking happens before escaping: a secret holding a character the
	// escaping rewrites is still recognised.
	t.Run("secret", func(t *testing.T) {
		const tok = "ghp_cliJSON\u200eToken0123456789"
		secret.Register(tok)
		dir := initProject(t)
		writeHalt(t, dir, "\u009b"+tok+"\u202e\n")
		code, stdout, stderr := run(t, dir, "resume", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, `"previous_reason": "\u009b***\u202e`) {
			t.Errorf("stdout %q", stdout)
		}
		checkJSONOutput(t, "resume", stdout, "\u009b***\u202e")
	})
}

// A notification secret is a secret even when config.json does not
// validate: `ooda resume` (which works with a broken config) masks the
// webhook URL a HALT file quotes, as it does with a valid config.
func TestInvalidConfigStillMasksNotificationSecrets(t *testing.T) {
	const hook = "https://hooks.slack.example.invalid/services/T0/B0/cliRawConfigHook"
	t.Setenv("OODA_CLI_RAW_HOOKURL", hook)
	dir := initProject(t)
	cfg := `{"schema_version": "1.5.0", "project": {"name": "x", "locale": "en", "timezone": "UTC"},
  "domains": {"plain": {"weight": -1, "state_file": "agent/state/plain.json", "primary_skill": "/dump", "status": "active"}},
  "notifications": {"slack": {"enabled": true, "webhook_url": "$OODA_CLI_RAW_HOOKURL"}},
  "safety": {"halt_file": "agent/safety/HALT"},
  "safety": {"halt_file": [}`
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644)
	for _, args := range [][]string{{"resume"}, {"resume", "--json"}} {
		writeHalt(t, dir, "webhook "+hook+" failed\ncreated_at: 2026-01-06T10:00:00Z\n")
		code, stdout, stderr := run(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "using the default HALT file") {
			t.Errorf("%v: the config was expected to be invalid: %s", args, stderr)
		}
		if strings.Contains(stdout+stderr, hook) || strings.Contains(stdout+stderr, "cliRawConfigHook") {
			t.Errorf("%v: the webhook URL is printed: %s%s", args, stdout, stderr)
		}
		if !strings.Contains(stdout, "webhook *** failed") {
			t.Errorf("%v: stdout %q", args, stdout)
		}
	}
}

func TestNotificationValuesReadsBrokenDocuments(t *testing.T) {
	for doc, want := range map[string]int{
		`{"notifications": {"slack": {}}, "domains": -1`:                           1,
		"\ufeff" + `{"a": [1, {"b": 2}], "Notifications": {}, "notifications": 3}`: 2,
		`{"domains": {}, "x": ] "notifications": {}}`:                              0,
		`[{"notifications": {}}]`:                                                  0,
		``:                                                                         0,
	} {
		if got := notificationValues([]byte(doc)); len(got) != want {
			t.Errorf("notificationValues(%q) = %q, want %d values", doc, got, want)
		}
	}
}

// `ooda init` over an agent/ that is a symlink out of the project refuses,
// naming the symlink, and writes nothing through it.
func TestInitRefusesSymlinkedAgentOutsideTheProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "agent")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "init", "--yes")
	if code != ExitUsage {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, filepath.Join(dir, "agent")+" is a symlink to "+outside+", outside the project") || strings.Contains(stderr, "internal error") {
		t.Errorf("stderr %q", stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("init wrote outside the project: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		t.Error("init created config.json")
	}

	// A symlink that stays inside the project is a directory like another.
	os.Remove(filepath.Join(dir, "agent"))
	os.Mkdir(filepath.Join(dir, "real-agent"), 0o755)
	os.Symlink("real-agent", filepath.Join(dir, "agent"))
	if code, stdout, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Errorf("in-project symlink: exit %d: %s%s", code, stdout, stderr)
	}
}
