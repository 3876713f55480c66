package forge

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// recordingTransport is the network boundary: it answers every request
// itself and remembers the Authorization header each URL was sent with.
type recordingTransport struct {
	mu     sync.Mutex
	auth   map[string]string
	answer func(*http.Request) *http.Response
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.auth[req.URL.Scheme+"://"+req.URL.Host+req.URL.Path] = req.Header.Get("Authorization")
	rt.mu.Unlock()
	return rt.answer(req), nil
}

func answer(req *http.Request, code int, location, body string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	if location != "" {
		h.Set("Location", location)
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}
}

// forge.api_url "http://127.attacker.example/api/v3" names a host whose
// DNS answer the attacker chooses; it only starts like a loopback address.
// The enterprise token must not be sent to it in clear, by TokenForHost,
// by NewGitHub, or through Select with the variable set.
func TestTokenNotSentInClearToLoopbackLookalikes(t *testing.T) {
	const tok = "ghe_loopbackLookalike0123456789"
	lookup := func(k string) string {
		if k == "GH_ENTERPRISE_TOKEN" {
			return tok
		}
		return ""
	}
	run := func(string, ...string) ([]byte, error) { return []byte(tok), nil }
	for _, u := range []string{
		"http://127.attacker.example/api/v3",
		"http://127.0.0.1.attacker.example/api/v3",
		"http://localhost.attacker.example/api/v3",
		"http://127.1/api/v3",
		"http://0x7f.0.0.1/api/v3",
		"http://0.0.0.0/api/v3",
		"http://[::ffff:10.0.0.1]/api/v3",
		"ftp://127.0.0.1/api/v3",
	} {
		if got, err := TokenForHost(u, lookup, run); err == nil || got != "" {
			t.Errorf("TokenForHost(%q) = %q, %v; want refused", u, got, err)
		}
		if _, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: u, Token: tok}); err == nil {
			t.Errorf("NewGitHub(%q) accepted a token over plain http", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://127.9.9.9/api/v3", "http://[::1]:9/api/v3", "http://localhost:1", "http://LOCALHOST/api/v3", "https://127.attacker.example/api/v3"} {
		if got, err := TokenForHost(u, lookup, run); err != nil || got != tok {
			t.Errorf("TokenForHost(%q) = %q, %v; want the token", u, got, err)
		}
	}

	t.Setenv("GH_ENTERPRISE_TOKEN", tok)
	cfg := config.Default()
	cfg.Forge = config.Forge{Provider: "github", Repo: "octo/widget", APIURL: "http://127.attacker.example/api/v3"}
	f, err := Select(context.Background(), cfg, t.TempDir())
	if f != nil || err == nil || !strings.Contains(err.Error(), "only sent over https") {
		t.Errorf("Select = %v, %v; want the api_url refused", f, err)
	}
	if err != nil && strings.Contains(err.Error(), tok) {
		t.Errorf("the error shows the token: %v", err)
	}
}

// An https API that redirects to plain http (or to another host) must not
// get the token sent along in clear.
func TestRedirectDropsTokenOffHTTPSOrHost(t *testing.T) {
	t.Parallel()
	const tok = "ghe_redirectToken0123456789"
	for _, target := range []string{"http://ghe.example.invalid", "https://other.example.invalid"} {
		rt := &recordingTransport{auth: map[string]string{}}
		rt.answer = func(req *http.Request) *http.Response {
			if req.URL.Host == "ghe.example.invalid" && req.URL.Scheme == "https" {
				return answer(req, http.StatusMovedPermanently, target+req.URL.RequestURI(), "")
			}
			return answer(req, http.StatusOK, "", "[]")
		}
		g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: "https://ghe.example.invalid/api/v3", Token: tok,
			HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Reviews(context.Background(), 7); err != nil {
			t.Fatalf("redirect to %s: %v", target, err)
		}
		const path = "/api/v3/repos/octo/widget/pulls/7/reviews"
		if got := rt.auth["https://ghe.example.invalid"+path]; got != "Bearer "+tok {
			t.Errorf("the API itself got Authorization %q", got)
		}
		got, ok := rt.auth[target+path]
		if !ok {
			t.Fatalf("redirect to %s not followed: %v", target, rt.auth)
		}
		if got != "" {
			t.Errorf("redirect to %s carried Authorization %q", target, got)
		}
	}
}
