package notify

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

func TestRegisterSecretsMarksReferencedVariables(t *testing.T) {
	vals := map[string]string{
		"OODA_RS_TG_TOKEN": "987654:registerSecretsTgToken",
		"OODA_RS_TG_CHAT":  "-100987654321",
		"OODA_RS_SLACK":    "https://hooks.example.invalid/services/T9/B9/rsSlackPathSecret",
		"OODA_RS_HOOK_URL": "https://hook.example.invalid/rs-hook-url-secret",
		"OODA_RS_AUTH":     "Bearer rs-bearer-token-value",
	}
	for k, v := range vals {
		t.Setenv(k, v)
	}
	// Slack is disabled: its variable is a credential all the same. The
	// literal webhook password is a secret too, though not a variable.
	RegisterSecrets(json.RawMessage(`{
	  "telegram": {"enabled": true, "bot_token": "${OODA_RS_TG_TOKEN}", "chat_id": "$OODA_RS_TG_CHAT"},
	  "slack": {"enabled": false, "webhook_url": "$OODA_RS_SLACK"},
	  "webhook": {"enabled": true, "url": "$OODA_RS_HOOK_URL", "headers": {"Authorization": "$OODA_RS_AUTH"}}
	}`))
	RegisterSecrets(json.RawMessage(`{"webhook": {"url": "https://ooda:rs-literal-password@hook.example.invalid/x"}}`))
	for k := range vals {
		if !secret.IsCredential(k) {
			t.Errorf("%s is not a credential", k)
		}
	}
	environ := []string{"PATH=/bin", "OODA_RS_TG_TOKEN=x", "OODA_RS_SLACK=y", "OODA_RS_AUTH=z"}
	if got := secret.ChildEnv(environ, nil, false); !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("child environment %v", got)
	}
	text := strings.Join([]string{vals["OODA_RS_TG_TOKEN"], vals["OODA_RS_TG_CHAT"], vals["OODA_RS_SLACK"],
		vals["OODA_RS_HOOK_URL"], vals["OODA_RS_AUTH"],
		// Parts a skill or a server may quote on their own.
		"rs-bearer-token-value", "/services/T9/B9/rsSlackPathSecret", "rs-literal-password"}, " | ")
	got := secret.Redact(text)
	if want := "*** | *** | *** | *** | *** | *** | *** | ***"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	// A configuration that does not parse registers nothing and does not
	// panic.
	RegisterSecrets(json.RawMessage(`{"telegram": [`))
	RegisterSecrets(nil)
}

func TestMessagesAreRedacted(t *testing.T) {
	const tok = "ghp_notifyMessageToken12345"
	secret.Register(tok)
	rec := newRecorder(t)
	n := mustNew(t, `{"webhook": {"enabled": true, "url": "`+rec.srv.URL+`/hook"},
	  "slack": {"enabled": true, "webhook_url": "$SLACK"}}`, env(map[string]string{"SLACK": rec.srv.URL + "/slack"}))
	m := Message{Title: "action: push " + tok, Text: "summary " + tok, Level: LevelWarning,
		Fields: map[string]string{"branch": "fix/" + tok}}
	if errs := n.Send(context.Background(), m); len(errs) > 0 {
		t.Fatal(errs)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), tok) || !strings.Contains(string(r.Body), "summary ***") {
			t.Errorf("%s received %s", r.Path, r.Body)
		}
	}
	if m.Title != "action: push "+tok {
		t.Error("Send changed the caller's message")
	}
}
