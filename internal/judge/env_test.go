package judge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/secret"
)

var judgeCredentials = map[string]string{
	"GITHUB_TOKEN":                   "ghp_judgeEnvGithubToken0001",
	"GH_TOKEN":                       "gho_judgeEnvGhToken00000002",
	"GH_ENTERPRISE_TOKEN":            "ghe_judgeEnvEnterprise00003",
	"OODA_JUDGE_TEST_TELEGRAM_TOKEN": "123456:judgeEnvTelegramToken04",
}

// envJudge runs a judge that writes its environment to env.txt and answers
// with the default, and returns that environment.
func envJudge(t *testing.T, policy config.EnvPolicy) map[string]string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nenv > env.txt\nprintf '{\"answer\": \"ok\"}'\n"
	if err := os.WriteFile(filepath.Join(dir, "judge.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j, err := New(config.Judge{Command: []string{"./judge.sh"}, EnvPolicy: policy}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := j.Ask(context.Background(), Request{Kind: KindOrientSummary, Default: "d"}); r.Source != SourceJudge {
		t.Fatalf("judge not used: %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	return env
}

func setJudgeCredentials(t *testing.T) {
	t.Helper()
	for k, v := range judgeCredentials {
		t.Setenv(k, v)
	}
	// The forge registers the token it uses; the notifications register
	// the variables they reference.
	secret.Register(judgeCredentials["GITHUB_TOKEN"])
	notify.RegisterSecrets(json.RawMessage(`{"telegram": {"enabled": true, "bot_token": "${OODA_JUDGE_TEST_TELEGRAM_TOKEN}", "chat_id": "$OODA_JUDGE_TEST_CHAT"}}`))
}

func TestJudgeEnvironmentWithholdsCredentials(t *testing.T) {
	setJudgeCredentials(t)
	cases := []struct {
		name   string
		policy config.EnvPolicy
		want   []string
	}{
		{"default", config.EnvPolicy{}, nil},
		{"env_passthrough", config.EnvPolicy{EnvPassthrough: []string{"GH_ENTERPRISE_TOKEN", "OODA_JUDGE_TEST_TELEGRAM_TOKEN"}},
			[]string{"GH_ENTERPRISE_TOKEN", "OODA_JUDGE_TEST_TELEGRAM_TOKEN"}},
		{"inherit_env", config.EnvPolicy{InheritEnv: true},
			[]string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "OODA_JUDGE_TEST_TELEGRAM_TOKEN"}},
	}
	for _, c := range cases {
		env := envJudge(t, c.policy)
		for k, v := range judgeCredentials {
			want := strings.Contains(","+strings.Join(c.want, ",")+",", ","+k+",")
			if got, ok := env[k]; ok != want || (ok && got != v) {
				t.Errorf("%s: %s present=%v (%q), want present=%v", c.name, k, ok, got, want)
			}
		}
		if env["PATH"] == "" {
			t.Errorf("%s: PATH missing", c.name)
		}
	}
}

// A judge given the token (inherit_env) that echoes it into its answer or
// its error output does not get it into state or the terminal.
func TestJudgeEchoedTokenIsMasked(t *testing.T) {
	setJudgeCredentials(t)
	tok := judgeCredentials["GITHUB_TOKEN"]
	dir := t.TempDir()
	script := "#!/bin/sh\n" + `if [ "$1" = fail ]; then echo "auth failed for $GITHUB_TOKEN"; exit 1; fi
printf '{"answer": "summary mentions %s"}' "$GITHUB_TOKEN"
`
	os.WriteFile(filepath.Join(dir, "judge.sh"), []byte(script), 0o755)
	inherit := config.EnvPolicy{InheritEnv: true}
	j, _ := New(config.Judge{Command: []string{"./judge.sh"}, EnvPolicy: inherit}, dir, nil)
	r := j.Ask(context.Background(), Request{Kind: KindOrientSummary, Default: "d"})
	if r.Source != SourceJudge || string(r.Answer) != `"summary mentions ***"` {
		t.Errorf("answer %s from %s, want the token masked", r.Answer, r.Source)
	}
	j, _ = New(config.Judge{Command: []string{"./judge.sh", "fail"}, EnvPolicy: inherit}, dir, nil)
	r = j.Ask(context.Background(), Request{Kind: KindOrientSummary, Default: "d"})
	if r.Source != SourceDefault || strings.Contains(r.Error, tok) || !strings.Contains(r.Error, "auth failed for ***") {
		t.Errorf("Error %q, want the token masked", r.Error)
	}
}
