// Package notify sends the engine's notifications (SPEC-NOTES 6-C7) to
// Telegram, a Slack incoming webhook and a generic JSON webhook.
//
// The configuration is config.json's "notifications" object:
//
//	{
//	  "telegram": {"enabled": true, "bot_token": "$OODA_TELEGRAM_BOT_TOKEN",
//	               "chat_id": "$OODA_TELEGRAM_CHAT_ID",
//	               "api_url": "https://api.telegram.org"},
//	  "slack":    {"enabled": true, "webhook_url": "$OODA_SLACK_WEBHOOK_URL"},
//	  "webhook":  {"enabled": true, "url": "https://example.org/hook",
//	               "headers": {"Authorization": "$OODA_WEBHOOK_AUTH"}}
//	}
//
// config.json is committed with the project, so every secret (the bot
// token, the chat id, the Slack webhook URL, webhook header values) is
// written only as a "$NAME" (or "${NAME}") reference to an environment
// variable; a literal value there is rejected. The generic webhook's url may
// be a literal or a reference. References are resolved on every Send, not
// when the configuration is read, so a secret can be rotated without a
// restart and a missing one only affects its own provider. A resolved secret
// never appears in an error or a log line: messages name the provider and
// the variable instead, and any text that comes from outside (an HTTP client
// error quoting the Telegram URL, a response body) has every secret value
// replaced before it is shown.
//
// The referenced variables are also credentials of the whole process
// (RegisterSecrets): skills, the agent and the judge do not receive them
// unless their env_passthrough names them, and their values are masked
// ("***", package secret) in everything ooda writes, the messages sent
// here included.
//
// Telegram and Slack receive the message as plain text (the level as a tag,
// the title, the text, then the fields sorted by key), cut to Telegram's
// 4096-character limit there; the generic webhook receives the Message as
// JSON.
//
// Notifications are never fatal. A provider that fails three times in a row
// (an unset variable counts as a failure) is disabled for the rest of the process, so a revoked token costs three
// errors instead of one per cycle; the error of the third failure is
// followed by one saying so, and later sends skip the provider silently. A
// success resets the count.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/ooda-loop/ooda/internal/secret"
)

// Message levels. Any other non-empty level is passed on unchanged.
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelHalt    = "halt"
)

const (
	// DefaultTimeout bounds one request to one provider.
	DefaultTimeout = 10 * time.Second
	// DefaultTelegramAPI is the Telegram Bot API base URL.
	DefaultTelegramAPI = "https://api.telegram.org"
	// MaxFailures is the number of consecutive failures that disables a
	// provider for the rest of the process.
	MaxFailures = 3
)

// telegramMaxText is Telegram's limit on a message, in UTF-16 code units;
// a longer text is refused outright, which would count as a failure.
const telegramMaxText = 4096

// bodySnippet is how much of an error response body is quoted in an error:
// enough for Telegram's "description", not enough to flood a log.
const bodySnippet = 200

// redacted replaces a secret in any text shown to the user.
const redacted = "[REDACTED]"

// Message is one notification.
type Message struct {
	// Title is the first line, e.g. "HALT: daily cost limit reached".
	Title string `json:"title"`
	// Text is the body.
	Text string `json:"text"`
	// Level is LevelInfo, LevelWarning or LevelHalt; empty means LevelInfo.
	Level string `json:"level"`
	// Fields are extra key/value facts (cycle, domain, cost), shown sorted
	// by key.
	Fields map[string]string `json:"fields,omitempty"`
}

// Notifier sends messages to the enabled providers. It is safe for
// concurrent use.
type Notifier struct {
	// Logger, when set before the first Send, receives one line per
	// delivery and per failure. Secrets never reach it.
	Logger *slog.Logger

	lookup func(string) string
	client *http.Client

	mu        sync.Mutex
	providers []*provider
}

// provider is one configured destination.
type provider struct {
	name string
	// send delivers m with the secrets resolved through lookup. Its error
	// must already be free of secrets.
	send func(ctx context.Context, n *Notifier, m Message) error

	// Guarded by Notifier.mu.
	failures int
	disabled bool
}

// rawConfig is the "notifications" object.
type rawConfig struct {
	Telegram *struct {
		Enabled  bool   `json:"enabled"`
		BotToken string `json:"bot_token"`
		ChatID   string `json:"chat_id"`
		APIURL   string `json:"api_url"`
	} `json:"telegram"`
	Slack *struct {
		Enabled    bool   `json:"enabled"`
		WebhookURL string `json:"webhook_url"`
	} `json:"slack"`
	Webhook *struct {
		Enabled bool              `json:"enabled"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"webhook"`
}

// New reads the "notifications" configuration. lookup resolves environment
// variables at send time (nil means os.Getenv); client sends the requests
// (nil means a client with DefaultTimeout that does not follow redirects).
//
// The Notifier is never nil: a provider whose configuration is wrong is
// left out and reported in the returned errors, and the others still work.
// An absent or null configuration gives a Notifier that sends nothing.
func New(raw json.RawMessage, lookup func(string) string, client *http.Client) (*Notifier, []error) {
	if lookup == nil {
		lookup = os.Getenv
	}
	if client == nil {
		client = &http.Client{
			Timeout: DefaultTimeout,
			// A 30x turns the POST into a GET that "succeeds" without
			// delivering anything; better to see it as a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	n := &Notifier{lookup: lookup, client: client}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return n, nil
	}
	var errs []error
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return n, []error{fmt.Errorf("notifications: %v", err)}
	}
	for k := range keys {
		switch {
		case k == "telegram" || k == "slack" || k == "webhook":
		case strings.HasPrefix(k, "__"):
			// "__doc__" keys are comments in the original config format.
		default:
			errs = append(errs, fmt.Errorf("notifications: unknown provider %q (known: telegram, slack, webhook)", k))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	var cfg rawConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		// The message of a type error names the field, never its value.
		return n, append(errs, fmt.Errorf("notifications: %v", err))
	}
	if t := cfg.Telegram; t != nil {
		p, perrs := newTelegram(t.Enabled, t.BotToken, t.ChatID, t.APIURL)
		errs = append(errs, perrs...)
		if p != nil {
			n.providers = append(n.providers, p)
		}
	}
	if s := cfg.Slack; s != nil {
		p, perrs := newSlack(s.Enabled, s.WebhookURL)
		errs = append(errs, perrs...)
		if p != nil {
			n.providers = append(n.providers, p)
		}
	}
	if w := cfg.Webhook; w != nil {
		p, perrs := newWebhook(w.Enabled, w.URL, w.Headers)
		errs = append(errs, perrs...)
		if p != nil {
			n.providers = append(n.providers, p)
		}
	}
	return n, errs
}

// Providers names the enabled providers that have not been disabled by
// failures, in the order telegram, slack, webhook.
func (n *Notifier) Providers() []string {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, p := range n.providers {
		if !p.disabled {
			out = append(out, p.name)
		}
	}
	return out
}

// Send delivers m to every enabled provider, concurrently, each request
// bounded by the client's timeout (DefaultTimeout when it has none). It
// returns one error per failed provider, in provider order, plus one when a
// provider has just been disabled; nil when everything was delivered. A nil
// Notifier sends nothing.
func (n *Notifier) Send(ctx context.Context, m Message) []error {
	if n == nil {
		return nil
	}
	if m.Level == "" {
		m.Level = LevelInfo
	}
	// A title or text may quote a skill's summary or a branch name, which
	// may quote a token; a chat is no place for it.
	m = redactMessage(m)
	n.mu.Lock()
	var active []*provider
	for _, p := range n.providers {
		if !p.disabled {
			active = append(active, p)
		}
	}
	n.mu.Unlock()

	results := make([]error, len(active))
	var wg sync.WaitGroup
	for i, p := range active {
		wg.Go(func() {
			timeout := n.client.Timeout
			if timeout <= 0 {
				timeout = DefaultTimeout
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			results[i] = p.send(rctx, n, m)
		})
	}
	wg.Wait()

	var errs []error
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, p := range active {
		err := results[i]
		if err == nil {
			p.failures = 0
			n.log(slog.LevelDebug, "notification sent", p.name, nil)
			continue
		}
		errs = append(errs, err)
		n.log(slog.LevelWarn, "notification failed", p.name, err)
		if p.disabled {
			// A concurrent Send disabled it meanwhile and said so.
			continue
		}
		p.failures++
		if p.failures >= MaxFailures {
			p.disabled = true
			d := fmt.Errorf("%s: disabled for the rest of this process after %d consecutive failures", p.name, p.failures)
			errs = append(errs, d)
			n.log(slog.LevelWarn, "notification provider disabled", p.name, d)
		}
	}
	return errs
}

func (n *Notifier) log(level slog.Level, msg, provider string, err error) {
	if n.Logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("provider", provider)}
	if err != nil {
		// Provider errors are built free of secrets; see provider.send.
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	n.Logger.LogAttrs(context.Background(), level, msg, attrs...)
}

// refName returns the variable named by a reference, or "" when v is not
// one: a whole "$NAME" or "${NAME}" (space around it aside), NAME an ASCII
// letter or underscore followed by letters, digits and underscores. It is
// written out rather than a regular expression, which every process would
// compile at start for a configuration it may never read.
func refName(v string) string {
	name, ok := strings.CutPrefix(strings.TrimSpace(v), "$")
	if !ok {
		return ""
	}
	if braced, ok := strings.CutPrefix(name, "{"); ok {
		if name, ok = strings.CutSuffix(braced, "}"); !ok {
			return ""
		}
	}
	if !isVarName(name) {
		return ""
	}
	return name
}

// isVarName reports whether s is [A-Za-z_][A-Za-z0-9_]*.
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// secretRef checks a configuration value that must be a reference. The
// error names the key, never the value: a literal there is most likely the
// secret itself.
func secretRef(provider, key, v string, required bool) (string, error) {
	if strings.TrimSpace(v) == "" {
		if required {
			return "", fmt.Errorf("%s: %s is missing; set it to a $ENV_VAR reference", provider, key)
		}
		return "", nil
	}
	name := refName(v)
	if name == "" {
		return "", fmt.Errorf("%s: %s must be a $ENV_VAR reference, not a literal value (secrets do not belong in config.json)", provider, key)
	}
	return name, nil
}

// resolve looks up a variable at send time. The value is registered as a
// secret, so a rotated one is masked too from then on.
func (n *Notifier) resolve(provider, name string) (string, error) {
	v := n.lookup(name)
	if v == "" {
		return "", fmt.Errorf("%s: $%s is not set", provider, name)
	}
	secret.Register(secretParts(v)...)
	return v, nil
}

// RegisterSecrets marks every environment variable the "notifications"
// configuration references ("$NAME" or "${NAME}", in any provider, enabled
// or not) as a credential: it is left out of the environment of skills,
// the agent and the judge unless their env_passthrough names it, and its
// value is masked in everything ooda writes. A password in a literal
// webhook url is registered too. Nothing is sent, and a configuration that
// does not parse registers what can be read of it. Call it as soon as the
// configuration is loaded, before any skill runs.
func RegisterSecrets(raw json.RawMessage) {
	names, literals := secretRefs(raw)
	secret.RegisterEnv(names...)
	var vals []string
	for _, name := range names {
		vals = append(vals, secretParts(os.Getenv(name))...)
	}
	secret.Register(append(vals, literals...)...)
}

// secretRefs returns the variables the configuration references, sorted
// and without duplicates, and the passwords of literal URLs.
func secretRefs(raw json.RawMessage) (names, literals []string) {
	var cfg rawConfig
	// A type error in one field still fills the others.
	_ = json.Unmarshal(raw, &cfg)
	seen := map[string]bool{}
	add := func(v string) {
		if name := refName(v); name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if t := cfg.Telegram; t != nil {
		add(t.BotToken)
		add(t.ChatID)
	}
	if sl := cfg.Slack; sl != nil {
		add(sl.WebhookURL)
	}
	if w := cfg.Webhook; w != nil {
		add(w.URL)
		if u, err := url.Parse(strings.TrimSpace(w.URL)); err == nil && refName(w.URL) == "" {
			if pw, ok := u.User.Password(); ok {
				literals = append(literals, pw)
			}
		}
		for _, v := range w.Headers {
			add(v)
		}
	}
	sort.Strings(names)
	return names, literals
}

// secretParts returns a secret value and the parts of it that are secret
// on their own: the token of "Bearer <token>", the path and query of a
// webhook URL. secret.Register ignores the short ones.
func secretParts(v string) []string {
	parts := []string{v}
	for _, f := range strings.Fields(v) {
		if f != v {
			parts = append(parts, f)
		}
	}
	if checkURL(v) == nil {
		parts = append(parts, urlParts(v)...)
	}
	return parts
}

// redactMessage masks the known secrets in every text of m.
func redactMessage(m Message) Message {
	m.Title, m.Text, m.Level = secret.Redact(m.Title), secret.Redact(m.Text), secret.Redact(m.Level)
	if len(m.Fields) > 0 {
		f := make(map[string]string, len(m.Fields))
		for k, v := range m.Fields {
			f[secret.Redact(k)] = secret.Redact(v)
		}
		m.Fields = f
	}
	return m
}

func newTelegram(enabled bool, token, chatID, apiURL string) (*provider, []error) {
	const name = "telegram"
	var errs []error
	tokenVar, err := secretRef(name, "bot_token", token, enabled)
	if err != nil {
		errs = append(errs, err)
	}
	chatVar, err := secretRef(name, "chat_id", chatID, enabled)
	if err != nil {
		errs = append(errs, err)
	}
	base := strings.TrimRight(strings.TrimSpace(apiURL), "/")
	if base == "" {
		base = DefaultTelegramAPI
	} else if err := checkURL(base); err != nil {
		errs = append(errs, fmt.Errorf("%s: api_url %v", name, err))
	}
	if !enabled || len(errs) > 0 {
		return nil, errs
	}
	p := &provider{name: name}
	p.send = func(ctx context.Context, n *Notifier, m Message) error {
		tok, err := n.resolve(name, tokenVar)
		if err != nil {
			return err
		}
		chat, err := n.resolve(name, chatVar)
		if err != nil {
			return err
		}
		body, _ := json.Marshal(map[string]string{"chat_id": chat, "text": truncateUTF16(format(m), telegramMaxText)})
		// The token is part of the path; what is shown has it replaced.
		shown := base + "/bot" + redacted + "/sendMessage"
		return post(ctx, n.client, name, base+"/bot"+tok+"/sendMessage", shown, body, nil, []string{tok, chat})
	}
	return p, nil
}

func newSlack(enabled bool, webhookURL string) (*provider, []error) {
	const name = "slack"
	urlVar, err := secretRef(name, "webhook_url", webhookURL, enabled)
	if err != nil {
		return nil, []error{err}
	}
	if !enabled {
		return nil, nil
	}
	p := &provider{name: name}
	p.send = func(ctx context.Context, n *Notifier, m Message) error {
		u, err := n.resolve(name, urlVar)
		if err != nil {
			return err
		}
		if checkURL(u) != nil {
			return fmt.Errorf("%s: $%s is not an http(s) URL", name, urlVar)
		}
		body, _ := json.Marshal(map[string]string{"text": format(m)})
		// The whole URL is the credential: show the variable's name.
		return post(ctx, n.client, name, u, "$"+urlVar, body, nil, urlParts(u))
	}
	return p, nil
}

func newWebhook(enabled bool, rawURL string, headers map[string]string) (*provider, []error) {
	const name = "webhook"
	var errs []error
	urlVar := refName(rawURL)
	literal := ""
	switch {
	case urlVar != "":
	case strings.TrimSpace(rawURL) == "":
		if enabled {
			errs = append(errs, fmt.Errorf("%s: url is missing", name))
		}
	default:
		literal = strings.TrimSpace(rawURL)
		if err := checkURL(literal); err != nil {
			errs = append(errs, fmt.Errorf("%s: url %v", name, err))
		}
	}
	hdrVars := map[string]string{}
	hnames := make([]string, 0, len(headers))
	for h := range headers {
		hnames = append(hnames, h)
	}
	sort.Strings(hnames)
	for _, h := range hnames {
		if !validHeaderName(h) {
			errs = append(errs, fmt.Errorf("%s: headers: %q is not a valid header name", name, h))
			continue
		}
		v, err := secretRef(name, "headers."+h, headers[h], true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hdrVars[h] = v
	}
	if !enabled || len(errs) > 0 {
		return nil, errs
	}
	p := &provider{name: name}
	p.send = func(ctx context.Context, n *Notifier, m Message) error {
		var secrets []string
		target, shown := literal, ""
		if urlVar != "" {
			u, err := n.resolve(name, urlVar)
			if err != nil {
				return err
			}
			if checkURL(u) != nil {
				return fmt.Errorf("%s: $%s is not an http(s) URL", name, urlVar)
			}
			target, shown = u, "$"+urlVar
			secrets = append(secrets, urlParts(u)...)
		} else {
			// A literal URL may still carry a password.
			pu, _ := url.Parse(literal)
			shown = pu.Redacted()
			if pw, ok := pu.User.Password(); ok {
				secrets = append(secrets, pw)
			}
		}
		hdr := http.Header{}
		for _, h := range hnames {
			v, err := n.resolve(name, hdrVars[h])
			if err != nil {
				return err
			}
			hdr.Set(h, v)
			secrets = append(secrets, v)
			// "Bearer <token>": the token alone is just as secret.
			for _, f := range strings.Fields(v) {
				if len(f) >= secret.MinLen {
					secrets = append(secrets, f)
				}
			}
		}
		body, _ := json.Marshal(m)
		return post(ctx, n.client, name, target, shown, body, hdr, secrets)
	}
	return p, nil
}

// post sends body as JSON to target. shown is what an error calls the
// target; secrets are scrubbed from any text that comes from outside. The
// returned error never wraps the client's error, whose URL holds the
// secrets.
func post(ctx context.Context, client *http.Client, provider, target, shown string, body []byte, hdr http.Header, secrets []string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: POST %s: %s", provider, shown, scrub(innerError(err), secrets))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ooda")
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: POST %s: %s", provider, shown, scrub(innerError(err), secrets))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, bodySnippet))
	// Drain a little more so the connection can be reused, but never wait
	// on an endless body.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("%s: POST %s: HTTP %d", provider, shown, resp.StatusCode)
		if s := strings.TrimSpace(string(snippet)); s != "" {
			msg += ": " + strconv.Quote(scrub(s, secrets))
		}
		return errors.New(msg)
	}
	return nil
}

// innerError is the client's error without the *url.Error wrapper, which
// quotes the full URL.
func innerError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// scrub replaces every secret, raw or in the encodings a URL or a quoted
// string would give it, with a marker.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		q := strconv.Quote(sec)
		for _, form := range []string{sec, url.PathEscape(sec), url.QueryEscape(sec), q[1 : len(q)-1]} {
			s = strings.ReplaceAll(s, form, redacted)
		}
	}
	return s
}

// urlParts returns a secret URL and the parts of it a server or a client
// error might quote on their own: the request URI (a server echoing the
// path it was asked for), the path and query, and a password.
func urlParts(s string) []string {
	parts := []string{s}
	u, err := url.Parse(s)
	if err != nil {
		return parts
	}
	for _, p := range []string{u.RequestURI(), u.EscapedPath(), u.Path, u.RawQuery} {
		if p != "/" && p != "" {
			parts = append(parts, p)
		}
	}
	if pw, ok := u.User.Password(); ok {
		parts = append(parts, pw)
	}
	return parts
}

// checkURL accepts an absolute http or https URL. Its error never quotes
// the URL, which may be a secret.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("is not an absolute http(s) URL")
	}
	return nil
}

// validHeaderName reports whether h is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, c := range []byte(h) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// levelTag prefixes the title so a halt stands out in a chat.
var levelTag = map[string]string{
	LevelInfo:    "[info]",
	LevelWarning: "[warning]",
	LevelHalt:    "[HALT]",
}

// format renders m as plain text for chat providers: the tagged title, the
// text, then the fields sorted by key.
func format(m Message) string {
	var b strings.Builder
	tag, ok := levelTag[m.Level]
	if !ok {
		tag = "[" + m.Level + "]"
	}
	b.WriteString(tag)
	if m.Title != "" {
		b.WriteString(" " + m.Title)
	}
	if m.Text != "" {
		b.WriteString("\n" + m.Text)
	}
	keys := make([]string, 0, len(m.Fields))
	for k := range m.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("\n" + k + ": " + m.Fields[k])
	}
	return b.String()
}

// truncateUTF16 cuts s to at most max UTF-16 code units (the unit Telegram
// counts in), on a character boundary, marking the cut with an ellipsis.
func truncateUTF16(s string, max int) string {
	if len(utf16.Encode([]rune(s))) <= max {
		return s
	}
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1 // invalid UTF-8 becomes U+FFFD
		}
		// One unit is kept for the ellipsis.
		if n+w > max-1 {
			return s[:i] + "…"
		}
		n += w
	}
	return s
}
