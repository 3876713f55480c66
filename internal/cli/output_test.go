package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// run runs the command line in project dir and returns its exit code,
// stdout and stderr.
func run(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"--project", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// A HALT file written by anyone (a script quoting a report, a skill) that
// carries an escape sequence, a carriage return and a token is shown by
// `ooda resume` escaped and masked.
func TestResumeShowsHaltContentEscapedAndMasked(t *testing.T) {
	const tok = "ghp_cliResumeToken0123456789"
	secret.Register(tok)
	dir := t.TempDir()
	if code, _, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	halt := filepath.Join(dir, "agent", "safety", "HALT")
	os.MkdirAll(filepath.Dir(halt), 0o755)
	content := "freeze\x1b[2J\r[Record] Cycle #9 recorded: api (success). token " + tok + " \u202eevil\ncreated_at: 2026-01-06T10:00:00Z\n"
	if err := os.WriteFile(halt, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "resume")
	if code != 0 {
		t.Fatalf("resume: %d %s", code, stderr)
	}
	want := "It said:\n  " + `freeze\x1b[2J\r[Record] Cycle #9 recorded: api (success). token *** \u202eevil` + "\n  created_at: 2026-01-06T10:00:00Z\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout %q lacks %q", stdout, want)
	}
	for _, bad := range []string{"\x1b", "\r", "\u202e", tok} {
		if strings.Contains(stdout+stderr, bad) {
			t.Errorf("output carries %q: %q", bad, stdout+stderr)
		}
	}
}

// An error message quoting outside text is printed on one line, masked.
func TestErrorTextIsEscaped(t *testing.T) {
	const tok = "ghp_cliErrorToken0123456789"
	secret.Register(tok)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad\n[Record] forged "+tok+".json")
	code, stdout, stderr := run(t, dir, "--config", cfg, "skill", "list")
	if code != ExitUsage || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `bad\n[Record] forged ***.json`) || strings.Contains(stderr, tok) {
		t.Errorf("stderr %q", stderr)
	}
}

// `ooda cycle` registers the variables the notifications reference before
// the skill runs: the skill's environment lacks them, unless its
// env_passthrough names them.
func TestCycleWithholdsNotificationSecretsFromSkills(t *testing.T) {
	t.Setenv("OODA_CLI_TEST_HOOK", "https://hook.example.invalid/cli-test-hook-secret")
	t.Setenv("GITHUB_TOKEN", "ghp_cliCycleGithubToken000001")
	dir := t.TempDir()
	config := `{
  "schema_version": "1.5.0",
  "project": {"name": "envtest", "locale": "en", "timezone": "UTC"},
  "domains": {
    "plain": {"weight": 2.0, "state_file": "agent/state/plain.json", "primary_skill": "/dump", "status": "active"}
  },
  "skills": {"/dump": {"command": ["/bin/sh", "-c", "env > env.txt"], "env_passthrough": %PASS%}},
  "notifications": {"webhook": {"enabled": false, "url": "$OODA_CLI_TEST_HOOK"}},
  "safety": {"halt_file": "agent/safety/HALT", "skill_allowlist": ["/dump"]},
  "git": {"commit_state": false}
}`
	for _, c := range []struct {
		pass string
		want bool
	}{{"[]", false}, {`["OODA_CLI_TEST_HOOK"]`, true}} {
		os.RemoveAll(filepath.Join(dir, "agent"))
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Replace(config, "%PASS%", c.pass, 1)), 0o644)
		// The first cycle only observes; the second runs the skill.
		run(t, dir, "--now", "2026-01-05T09:00:00Z", "cycle")
		code, stdout, stderr := run(t, dir, "--now", "2026-01-05T12:00:00Z", "cycle")
		b, err := os.ReadFile(filepath.Join(dir, "env.txt"))
		if err != nil {
			t.Fatalf("the skill did not run (exit %d): %s%s", code, stdout, stderr)
		}
		env := "\n" + string(b)
		if got := strings.Contains(env, "\nOODA_CLI_TEST_HOOK="); got != c.want {
			t.Errorf("env_passthrough %s: notification variable present=%v, want %v", c.pass, got, c.want)
		}
		if strings.Contains(env, "\nGITHUB_TOKEN=") {
			t.Errorf("env_passthrough %s: GITHUB_TOKEN reached the skill", c.pass)
		}
		os.Remove(filepath.Join(dir, "env.txt"))
	}
}

// A contract file (which a merged pull request may change) whose phase
// carries an escape sequence, a tab and a newline cannot colour the
// terminal, shift a column or add a row to `ooda skill list`.
func TestSkillListEscapesContractText(t *testing.T) {
	dir := t.TempDir()
	config := `{"schema_version": "1.5.0", "project": {"name": "x", "locale": "en", "timezone": "UTC"},
  "domains": {"plain": {"weight": 1.0, "state_file": "agent/state/plain.json", "primary_skill": "/dump", "status": "active"}},
  "skills": {"/dump": {"command": ["/bin/true"]}},
  "safety": {"halt_file": "agent/safety/HALT", "skill_allowlist": ["/dump"]}}`
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o644)
	os.MkdirAll(filepath.Join(dir, "skills", "dump"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "dump", "contract.yaml"), []byte(`ooda_phase: "observe\e[31m\tX\n/fake  —  command [\"rm\"]"`+"\n"), 0o644)
	code, stdout, stderr := run(t, dir, "skill", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if strings.ContainsAny(stdout, "\x1b\t") || !strings.Contains(stdout, `observe\x1b[31m\tX\n/fake`) {
		t.Errorf("stdout %q", stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "/fake") {
			t.Errorf("a contract added the row %q", line)
		}
	}
}
