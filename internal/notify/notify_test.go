package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
)

const (
	testToken = "123456789:AAH-sEcReTtOkEn_xyz"
	testChat  = "-1001234567890"
)

// request is what a stand-in provider received.
type request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// recorder is a local server standing in for a provider. It answers with
// status (200 when zero) and records every request.
type recorder struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	reqs   []request
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, request{r.Method, r.URL.Path, r.Header.Clone(), b})
		rec.mu.Unlock()
		if s := rec.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			// Echo the path and credentials, as a misbehaving proxy might:
			// they hold secrets, which must still not reach an error.
			io.WriteString(w, "failed at "+r.URL.Path+" "+r.Header.Get("Authorization"))
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

// env is a lookup over a fixed map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustNew(t *testing.T, raw string, lookup func(string) string) *Notifier {
	t.Helper()
	n, errs := New(json.RawMessage(raw), lookup, nil)
	if len(errs) > 0 {
		t.Fatalf("New: %v", errs)
	}
	return n
}

var testMsg = Message{
	Title:  "HALT: daily cost limit reached",
	Text:   "Spent $10.02 of $10.00 today.",
	Level:  LevelHalt,
	Fields: map[string]string{"cycle": "42", "domain": "tests"},
}

func TestStep6C7_TelegramDelivers(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"telegram": {"enabled": true, "bot_token": "$OODA_TELEGRAM_BOT_TOKEN",
		"chat_id": "${OODA_TELEGRAM_CHAT_ID}", "api_url": "`+rec.srv.URL+`/"}}`,
		env(map[string]string{"OODA_TELEGRAM_BOT_TOKEN": testToken, "OODA_TELEGRAM_CHAT_ID": testChat}))
	if errs := n.Send(context.Background(), testMsg); errs != nil {
		t.Fatalf("Send: %v", errs)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/bot"+testToken+"/sendMessage" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var body map[string]string
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	want := "[HALT] HALT: daily cost limit reached\nSpent $10.02 of $10.00 today.\ncycle: 42\ndomain: tests"
	if len(body) != 2 || body["chat_id"] != testChat || body["text"] != want {
		t.Errorf("body %q, want chat_id %q and text %q", body, testChat, want)
	}
}

func TestStep6C7_SlackDelivers(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"slack": {"enabled": true, "webhook_url": "$OODA_SLACK_WEBHOOK_URL"}}`,
		env(map[string]string{"OODA_SLACK_WEBHOOK_URL": rec.srv.URL + "/services/T0/B0/sEcReT"}))
	if errs := n.Send(context.Background(), Message{Title: "cycle 7 done", Text: "PR #12 opened"}); errs != nil {
		t.Fatalf("Send: %v", errs)
	}
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].Path != "/services/T0/B0/sEcReT" {
		t.Fatalf("requests %+v", reqs)
	}
	var body map[string]string
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	// An empty level is sent as info.
	if want := "[info] cycle 7 done\nPR #12 opened"; len(body) != 1 || body["text"] != want {
		t.Errorf("body %q, want text %q", body, want)
	}
}

func TestStep6C7_WebhookDeliversWholeMessage(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"webhook": {"enabled": true, "url": "$HOOK_URL",
		"headers": {"Authorization": "$HOOK_AUTH", "X-Ooda-Key": "${HOOK_KEY}"}}}`,
		env(map[string]string{"HOOK_URL": rec.srv.URL + "/hook", "HOOK_AUTH": "Bearer s3cr3t", "HOOK_KEY": "k3y"}))
	if errs := n.Send(context.Background(), testMsg); errs != nil {
		t.Fatalf("Send: %v", errs)
	}
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].Path != "/hook" {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	if r.Header.Get("Authorization") != "Bearer s3cr3t" || r.Header.Get("X-Ooda-Key") != "k3y" {
		t.Errorf("headers %v", r.Header)
	}
	var got Message
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != testMsg.Title || got.Text != testMsg.Text || got.Level != LevelHalt ||
		len(got.Fields) != 2 || got.Fields["cycle"] != "42" || got.Fields["domain"] != "tests" {
		t.Errorf("body %s", r.Body)
	}
}

func TestStep6C7_WebhookLiteralURL(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"webhook": {"enabled": true, "url": "`+rec.srv.URL+`/literal"}}`, env(nil))
	if errs := n.Send(context.Background(), testMsg); errs != nil {
		t.Fatalf("Send: %v", errs)
	}
	if reqs := rec.requests(); len(reqs) != 1 || reqs[0].Path != "/literal" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestStep6C7_AllProvidersReceiveOneSend(t *testing.T) {
	tg, sl, wh := newRecorder(t), newRecorder(t), newRecorder(t)
	n := mustNew(t, `{
		"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "`+tg.srv.URL+`"},
		"slack": {"enabled": true, "webhook_url": "$S"},
		"webhook": {"enabled": true, "url": "$W"}}`,
		env(map[string]string{"T": testToken, "C": testChat, "S": sl.srv.URL, "W": wh.srv.URL}))
	if got := strings.Join(n.Providers(), ","); got != "telegram,slack,webhook" {
		t.Errorf("Providers() = %s", got)
	}
	if errs := n.Send(context.Background(), testMsg); errs != nil {
		t.Fatalf("Send: %v", errs)
	}
	for name, rec := range map[string]*recorder{"telegram": tg, "slack": sl, "webhook": wh} {
		if len(rec.requests()) != 1 {
			t.Errorf("%s got %d requests", name, len(rec.requests()))
		}
	}
}

// TestSecretsNeverLeak makes every provider fail in the ways that put a
// secret into an error (a refused connection whose client error quotes the
// URL, a response body echoing the path) and checks the returned errors and
// the log.
func TestStep6C7_SecretsNeverLeak(t *testing.T) {
	rec := newRecorder(t)
	rec.status.Store(http.StatusInternalServerError)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	// Each server once answers 500 with an echo and once refuses the
	// connection.
	for _, base := range []string{rec.srv.URL, deadURL} {
		api := base
		secrets := map[string]string{
			"T":    testToken,
			"C":    testChat,
			"S":    base + "/services/T0/B0/sLaCkSeCrEt",
			"W":    base + "/hook/wEbHoOkSeCrEt",
			"AUTH": "Bearer hEaDeRsEcReT",
		}
		var logBuf bytes.Buffer
		n := mustNew(t, `{
			"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "`+api+`"},
			"slack": {"enabled": true, "webhook_url": "$S"},
			"webhook": {"enabled": true, "url": "$W", "headers": {"Authorization": "$AUTH"}}}`,
			env(secrets))
		n.Logger = slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		var all []string
		for range MaxFailures {
			for _, err := range n.Send(context.Background(), testMsg) {
				all = append(all, err.Error())
				// Nothing may be recovered by unwrapping either.
				for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
					all = append(all, u.Error())
				}
			}
		}
		text := strings.Join(all, "\n")
		if !strings.Contains(text, "telegram: POST "+api+"/bot[REDACTED]/sendMessage") ||
			!strings.Contains(text, "slack: POST $S: ") ||
			!strings.Contains(text, "webhook: POST $W: ") {
			t.Errorf("errors do not say what failed:\n%s", text)
		}
		if !strings.Contains(logBuf.String(), "notification failed") {
			t.Errorf("log has no failure:\n%s", logBuf.String())
		}
		for _, where := range []struct{ name, text string }{{"errors", text}, {"log", logBuf.String()}} {
			for _, secret := range []string{testToken, "sEcReTtOkEn", testChat, "sLaCkSeCrEt", "wEbHoOkSeCrEt", "hEaDeRsEcReT"} {
				if strings.Contains(where.text, secret) {
					t.Errorf("%s contain secret %q:\n%s", where.name, secret, where.text)
				}
			}
		}
	}
}

func TestStep6C7_ThreeFailuresDisable(t *testing.T) {
	rec := newRecorder(t)
	rec.status.Store(http.StatusInternalServerError)
	n := mustNew(t, `{"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "`+rec.srv.URL+`"}}`,
		env(map[string]string{"T": testToken, "C": testChat}))
	for i := 1; i <= MaxFailures; i++ {
		errs := n.Send(context.Background(), testMsg)
		want := 1
		if i == MaxFailures {
			want = 2
		}
		if len(errs) != want || !strings.Contains(errs[0].Error(), "HTTP 500") {
			t.Fatalf("send %d: %v", i, errs)
		}
		if i == MaxFailures && errs[1].Error() != "telegram: disabled for the rest of this process after 3 consecutive failures" {
			t.Errorf("send %d: %v", i, errs[1])
		}
	}
	rec.status.Store(0)
	if errs := n.Send(context.Background(), testMsg); errs != nil {
		t.Errorf("send to a disabled provider: %v", errs)
	}
	if got := len(rec.requests()); got != MaxFailures {
		t.Errorf("%d requests, want %d: the disabled provider was contacted", got, MaxFailures)
	}
	if p := n.Providers(); len(p) != 0 {
		t.Errorf("Providers() = %v after disabling", p)
	}
}

func TestStep6C7_SuccessResetsFailures(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"slack": {"enabled": true, "webhook_url": "$S"}}`, env(map[string]string{"S": rec.srv.URL}))
	for i, status := range []int32{500, 500, 0, 500, 500, 0} {
		rec.status.Store(status)
		errs := n.Send(context.Background(), testMsg)
		if (status != 0) != (len(errs) == 1) {
			t.Fatalf("send %d (status %d): %v", i, status, errs)
		}
	}
	if got := len(rec.requests()); got != 6 {
		t.Errorf("%d requests, want 6: the provider was disabled", got)
	}
}

func TestStep6C7_MissingVariable(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"telegram": {"enabled": true, "bot_token": "$OODA_TELEGRAM_BOT_TOKEN",
		"chat_id": "$OODA_TELEGRAM_CHAT_ID", "api_url": "`+rec.srv.URL+`"},
		"webhook": {"enabled": true, "url": "`+rec.srv.URL+`", "headers": {"Authorization": "$HOOK_AUTH"}}}`,
		env(map[string]string{"OODA_TELEGRAM_CHAT_ID": testChat}))
	errs := n.Send(context.Background(), testMsg)
	if len(errs) != 2 ||
		errs[0].Error() != "telegram: $OODA_TELEGRAM_BOT_TOKEN is not set" ||
		errs[1].Error() != "webhook: $HOOK_AUTH is not set" {
		t.Errorf("errors %q", errs)
	}
	if len(rec.requests()) != 0 {
		t.Errorf("a request was made without its secret")
	}
}

func TestStep6C7_ResolvedAtSendTime(t *testing.T) {
	rec := newRecorder(t)
	var lookups atomic.Int32
	var token atomic.Value
	token.Store("")
	lookup := func(k string) string {
		lookups.Add(1)
		switch k {
		case "T":
			return token.Load().(string)
		case "C":
			return testChat
		}
		return ""
	}
	n := mustNew(t, `{"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "`+rec.srv.URL+`"}}`, lookup)
	if lookups.Load() != 0 {
		t.Errorf("New looked up %d variables", lookups.Load())
	}
	if errs := n.Send(context.Background(), testMsg); len(errs) != 1 {
		t.Fatalf("send without token: %v", errs)
	}
	token.Store("111:first")
	n.Send(context.Background(), testMsg)
	token.Store("222:rotated")
	n.Send(context.Background(), testMsg)
	reqs := rec.requests()
	if len(reqs) != 2 || reqs[0].Path != "/bot111:first/sendMessage" || reqs[1].Path != "/bot222:rotated/sendMessage" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestStep6C7_LiteralSecretsRejected(t *testing.T) {
	raw := `{
		"telegram": {"enabled": true, "bot_token": "` + testToken + `", "chat_id": "` + testChat + `"},
		"slack": {"enabled": true, "webhook_url": "https://hooks.slack.com/services/T0/B0/sLaCkSeCrEt"},
		"webhook": {"enabled": true, "url": "https://example.org/hook", "headers": {"Authorization": "Bearer hEaDeRsEcReT"}}}`
	n, errs := New(json.RawMessage(raw), env(nil), nil)
	var text []string
	for _, err := range errs {
		text = append(text, err.Error())
	}
	got := strings.Join(text, "\n")
	for _, key := range []string{"telegram: bot_token must be a $ENV_VAR reference", "telegram: chat_id must be", "slack: webhook_url must be", "webhook: headers.Authorization must be"} {
		if !strings.Contains(got, key) {
			t.Errorf("no error %q in:\n%s", key, got)
		}
	}
	for _, secret := range []string{"sEcReTtOkEn", testChat, "sLaCkSeCrEt", "hEaDeRsEcReT"} {
		if strings.Contains(got, secret) {
			t.Errorf("errors quote the secret %q:\n%s", secret, got)
		}
	}
	if p := n.Providers(); len(p) != 0 {
		t.Errorf("misconfigured providers kept: %v", p)
	}
}

// A disabled provider still has its secrets checked: the literal token is
// in config.json either way.
func TestStep6C7_LiteralSecretRejectedWhenDisabled(t *testing.T) {
	_, errs := New(json.RawMessage(`{"telegram": {"enabled": false, "bot_token": "`+testToken+`", "chat_id": "$C"}}`), env(nil), nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bot_token") {
		t.Errorf("errors %v", errs)
	}
}

func TestStep6C7_ConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct{ raw, want string }{
		"unknown provider": {`{"discord": {}}`, `notifications: unknown provider "discord"`},
		"missing token":    {`{"telegram": {"enabled": true, "chat_id": "$C"}}`, "telegram: bot_token is missing"},
		"bad api_url":      {`{"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "ftp://x"}}`, "telegram: api_url is not an absolute http(s) URL"},
		"missing url":      {`{"webhook": {"enabled": true}}`, "webhook: url is missing"},
		"bad header":       {`{"webhook": {"enabled": true, "url": "$W", "headers": {"Bad Header": "$X"}}}`, `webhook: headers: "Bad Header" is not a valid header name`},
		"wrong type":       {`{"slack": {"enabled": "yes"}}`, "notifications: json: cannot unmarshal"},
		"not an object":    {`[1]`, "notifications: json: cannot unmarshal"},
	} {
		t.Run(name, func(t *testing.T) {
			n, errs := New(json.RawMessage(tc.raw), env(nil), nil)
			if n == nil || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Errorf("New(%s) = %v, want one error starting %q", tc.raw, errs, tc.want)
			}
		})
	}
}

func TestStep6C7_EmptyAndDisabledConfigs(t *testing.T) {
	// The "notifications" block of the original project's config.example.json.
	example := `{"telegram": {"enabled": false, "bot_token": "$OODA_TELEGRAM_BOT_TOKEN", "chat_id": "$OODA_TELEGRAM_CHAT_ID"}}`
	for _, raw := range []string{"", "null", `{}`, example,
		`{"__doc__": "comment", "slack": {"enabled": false, "webhook_url": "$S"}}`} {
		n, errs := New(json.RawMessage(raw), nil, nil)
		if errs != nil || len(n.Providers()) != 0 {
			t.Errorf("New(%s) = %v, %v", raw, n.Providers(), errs)
		}
		if errs := n.Send(context.Background(), testMsg); errs != nil {
			t.Errorf("Send: %v", errs)
		}
	}
	var nilN *Notifier
	if errs := nilN.Send(context.Background(), testMsg); errs != nil || nilN.Providers() != nil {
		t.Errorf("nil Notifier: %v", errs)
	}
}

func TestStep6C7_SendIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(srv.Close)
	// Cleanups run last first: the handler returns before Close waits on it.
	t.Cleanup(func() { close(release) })
	n, errs := New(json.RawMessage(`{"slack": {"enabled": true, "webhook_url": "$S"}}`),
		env(map[string]string{"S": srv.URL + "/sLaCkSeCrEt"}), &http.Client{Timeout: 100 * time.Millisecond})
	if errs != nil {
		t.Fatal(errs)
	}
	start := time.Now()
	errs = n.Send(context.Background(), testMsg)
	if len(errs) != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("Send = %v after %v", errs, time.Since(start))
	}
	if strings.Contains(errs[0].Error(), "sLaCkSeCrEt") || !strings.HasPrefix(errs[0].Error(), "slack: POST $S: ") {
		t.Errorf("error %q", errs[0])
	}
}

// A redirect would turn the POST into a GET that looks delivered.
func TestStep6C7_RedirectIsAFailure(t *testing.T) {
	rec := newRecorder(t)
	srv := httptest.NewServer(http.RedirectHandler(rec.srv.URL, http.StatusFound))
	t.Cleanup(srv.Close)
	n := mustNew(t, `{"webhook": {"enabled": true, "url": "$W"}}`, env(map[string]string{"W": srv.URL}))
	if errs := n.Send(context.Background(), testMsg); len(errs) != 1 || !strings.Contains(errs[0].Error(), "HTTP 302") {
		t.Errorf("errors %v", errs)
	}
	if len(rec.requests()) != 0 {
		t.Errorf("redirect followed")
	}
}

func TestStep6C7_TelegramTextTruncated(t *testing.T) {
	rec := newRecorder(t)
	n := mustNew(t, `{"telegram": {"enabled": true, "bot_token": "$T", "chat_id": "$C", "api_url": "`+rec.srv.URL+`"}}`,
		env(map[string]string{"T": testToken, "C": testChat}))
	// U+1F600 takes two UTF-16 units, the unit Telegram's limit counts.
	if errs := n.Send(context.Background(), Message{Title: "long", Text: strings.Repeat("😀", 3000)}); errs != nil {
		t.Fatal(errs)
	}
	var body map[string]string
	if err := json.Unmarshal(rec.requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	units := len(utf16.Encode([]rune(body["text"])))
	if units > telegramMaxText || units < telegramMaxText-2 || !strings.HasSuffix(body["text"], "…") {
		t.Errorf("text is %d UTF-16 units, suffix %q", units, body["text"][len(body["text"])-8:])
	}
}
