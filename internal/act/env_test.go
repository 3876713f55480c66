package act

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/notify"
)

// credentials are the variables set for the environment tests: the forge
// tokens ooda reads itself and one a notification provider references.
var credentials = map[string]string{
	"GITHUB_TOKEN":                "ghp_actEnvGithubToken000001",
	"GH_TOKEN":                    "gho_actEnvGhToken0000000002",
	"GH_ENTERPRISE_TOKEN":         "ghe_actEnvEnterpriseToken03",
	"OODA_ACT_TEST_SLACK_WEBHOOK": "https://hooks.example.invalid/services/T0/B0/actEnvSlack04",
}

func setCredentials(t *testing.T) {
	t.Helper()
	for k, v := range credentials {
		t.Setenv(k, v)
	}
	notify.RegisterSecrets(json.RawMessage(`{"slack": {"enabled": true, "webhook_url": "$OODA_ACT_TEST_SLACK_WEBHOOK"}}`))
}

// runEnvDump resolves skill in cfg, runs it (it writes its environment to a
// file) and returns that environment as a map, with the run's output.
func runEnvDump(t *testing.T, cfg *config.Config, skill string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	dump := filepath.Join(dir, "env.txt")
	ex, err := NewRegistry().Resolve(cfg, skill)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	resp := ex.Execute(context.Background(), Request{Skill: skill, ProjectDir: dir, Timeout: time.Minute, Output: &out,
		Env: map[string]string{"OODA_ENV_DUMP": dump}})
	if !resp.OK {
		t.Fatalf("%s: %+v, output %q", skill, resp, out.String())
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env, out.String()
}

func checkPresent(t *testing.T, what string, env map[string]string, want ...string) {
	t.Helper()
	for k, v := range credentials {
		shouldSee := false
		for _, w := range want {
			shouldSee = shouldSee || w == k
		}
		if got, ok := env[k]; ok != shouldSee || (ok && got != v) {
			t.Errorf("%s: %s present=%v (value %q), want present=%v", what, k, ok, got, shouldSee)
		}
	}
	if env["PATH"] == "" {
		t.Errorf("%s: PATH is missing: the environment minus the credentials was expected", what)
	}
}

const dumpScript = `env > "$OODA_ENV_DUMP"`

func TestSkillEnvironmentWithholdsCredentials(t *testing.T) {
	setCredentials(t)
	cfg := config.Default()
	cfg.Skills = map[string]config.SkillSpec{
		"/plain": {Command: []string{"/bin/sh", "-c", dumpScript}},
		"/pass": {Command: []string{"/bin/sh", "-c", dumpScript},
			EnvPolicy: config.EnvPolicy{EnvPassthrough: []string{"GH_TOKEN", "OODA_ACT_TEST_SLACK_WEBHOOK"}}},
		"/all": {Command: []string{"/bin/sh", "-c", dumpScript}, EnvPolicy: config.EnvPolicy{InheritEnv: true}},
	}
	env, _ := runEnvDump(t, cfg, "/plain")
	checkPresent(t, "default", env)
	env, _ = runEnvDump(t, cfg, "/pass")
	checkPresent(t, "env_passthrough", env, "GH_TOKEN", "OODA_ACT_TEST_SLACK_WEBHOOK")
	env, _ = runEnvDump(t, cfg, "/all")
	checkPresent(t, "inherit_env", env, "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "OODA_ACT_TEST_SLACK_WEBHOOK")
}

func TestAgentEnvironmentWithholdsCredentials(t *testing.T) {
	setCredentials(t)
	cfg := config.Default()
	cfg.Agent.Command = []string{"/bin/sh", "-c", dumpScript, "{skill}"}
	env, _ := runEnvDump(t, cfg, "/anything")
	checkPresent(t, "agent default", env)
	cfg.Agent.EnvPassthrough = []string{"GITHUB_TOKEN"}
	env, _ = runEnvDump(t, cfg, "/anything")
	checkPresent(t, "agent env_passthrough", env, "GITHUB_TOKEN")
	cfg.Agent.EnvPolicy = config.EnvPolicy{InheritEnv: true}
	env, _ = runEnvDump(t, cfg, "/anything")
	checkPresent(t, "agent inherit_env", env, "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "OODA_ACT_TEST_SLACK_WEBHOOK")
}

// A config env value referencing a credential would smuggle it past the
// policy; it expands against the filtered environment instead.
func TestEnvValueCannotSmuggleCredential(t *testing.T) {
	setCredentials(t)
	t.Setenv("OODA_ACT_TEST_PLAIN", "plain-value")
	cfg := config.Default()
	env := map[string]string{"SMUGGLED": "x${GITHUB_TOKEN}", "HOOK": "$OODA_ACT_TEST_SLACK_WEBHOOK", "PLAIN": "$OODA_ACT_TEST_PLAIN"}
	cfg.Skills = map[string]config.SkillSpec{
		"/smuggle": {Command: []string{"/bin/sh", "-c", dumpScript}, Env: env},
		"/allowed": {Command: []string{"/bin/sh", "-c", dumpScript}, Env: env,
			EnvPolicy: config.EnvPolicy{EnvPassthrough: []string{"GITHUB_TOKEN"}}},
	}
	got, out := runEnvDump(t, cfg, "/smuggle")
	if got["SMUGGLED"] != "x" || got["HOOK"] != "" || got["PLAIN"] != "plain-value" {
		t.Errorf("expanded SMUGGLED=%q HOOK=%q PLAIN=%q; want the credentials empty, the plain variable expanded", got["SMUGGLED"], got["HOOK"], got["PLAIN"])
	}
	for _, want := range []string{
		"ooda: warning: skills./smuggle.env.SMUGGLED: $GITHUB_TOKEN is a credential not in env_passthrough; it expands to empty",
		"ooda: warning: skills./smuggle.env.HOOK: $OODA_ACT_TEST_SLACK_WEBHOOK is a credential",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("run output %q lacks %q", out, want)
		}
	}
	got, _ = runEnvDump(t, cfg, "/allowed")
	if got["SMUGGLED"] != "x"+credentials["GITHUB_TOKEN"] || got["HOOK"] != "" {
		t.Errorf("with env_passthrough: SMUGGLED=%q HOOK=%q", got["SMUGGLED"], got["HOOK"])
	}
}
