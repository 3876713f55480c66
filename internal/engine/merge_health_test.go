package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// The post-merge health check (4-C) of health_endpoints follows no
// redirect (a 3xx fails the check where it stands: a redirect could lead
// it to any host), takes only http and https URLs, and never shows a
// URL's user info in what it says.
func TestStep4C_PostMergeHealthCheckIsContained(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer redirect.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()

	check := func(endpoints ...string) error {
		cfg := config.Default()
		cfg.HealthCheckTimeout = 5
		for _, e := range endpoints {
			b, _ := json.Marshal(e)
			cfg.HealthEndpoints = append(cfg.HealthEndpoints, b)
		}
		c := &cycle{cfg: cfg}
		return c.healthCheck(context.Background())
	}
	if err := check(ok.URL + "/health"); err != nil {
		t.Fatalf("a healthy endpoint: %v", err)
	}
	err := check(redirect.URL + "/health")
	if err == nil || !strings.Contains(err.Error(), "HTTP 302") || elsewhere.Load() != 0 {
		t.Errorf("redirect: err %v, requests to the other host %d", err, elsewhere.Load())
	}
	for _, bad := range []string{"file:///etc/passwd", "gopher://x/", "http:///nohost"} {
		if err := check(bad); err == nil || !strings.Contains(err.Error(), "not an http or https URL") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	closed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	u := strings.Replace(closed.URL, "http://", "http://admin:hunter2@", 1)
	closed.Close()
	for _, e := range []string{u + "/health", "ftp://admin:hunter2@host/x"} {
		if err := check(e); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the password shows: %v", e, err)
		}
	}
}
