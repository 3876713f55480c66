package skills_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ooda-loop/ooda/internal/cli"
)

// The health skill through `ooda cycle`, as a user runs it: a domain whose
// primary skill is "/health", a service that goes down and comes back.
// The engine must read the skill's state file and report as it reads a
// command skill's: summary, output or not, the critical alert, the chain
// condition on consecutive_failures.
func TestHealthThroughOodaCycle(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := `{
  "mission": "Keep the API answering.",
  "domains": {"service_health": {"weight": 2, "primary_skill": "/health", "fallback": true, "mission_alignment": 1}},
  "skills": {"/health": {"builtin": "health", "contract": {"ooda_phase": "observe", "cost_limit_usd": 0,
    "chain_triggers": [{"target": "noop", "condition": "consecutive_failures >= 2"}]}}},
  "health_endpoints": [{"url": "` + srv.URL + `/api/health", "name": "api", "critical_after": 2}],
  "health_check_timeout_seconds": 5,
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/health", "/noop"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cycle := func(now string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := cli.Main([]string{"cycle", "--project", dir, "--now", now}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("ooda cycle exited %d\n%s\n%s", code, out.String(), errb.String())
		}
		return out.String()
	}
	statusOf := func() map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "agent/state/service_health.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	out := cycle("2026-03-02T09:00:00Z")
	for _, want := range []string{
		"[Act] /health starting... (builtin health)",
		"[Act] /health reports: the endpoint is up; slowest api ",
		"(futile,",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 1: no %q in\n%s", want, out)
		}
	}
	if st := statusOf(); st["status"] != "healthy" {
		t.Fatalf("cycle 1 state: %v", st)
	}
	log, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-health.log"))
	if err != nil || !strings.Contains(string(log), "api GET "+srv.URL+"/api/health -> 200 in ") {
		t.Errorf("run log: %v\n%s", err, log)
	}

	down.Store(true)
	out = cycle("2026-03-02T10:00:00Z")
	for _, want := range []string{
		"[Act] /health reports: 0 of 1 endpoints up; api down (HTTP 503, expected 2xx). Since the last check: api went down",
		"(action_extracted,",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 2: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "/noop starting") {
		t.Errorf("cycle 2: the chain ran after one failure:\n%s", out)
	}

	// The second failure in a row is critical (critical_after 2) and
	// meets the chain condition.
	out = cycle("2026-03-02T11:00:00Z")
	for _, want := range []string{
		"api critical after 2 failed checks",
		"/noop",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 3: no %q in\n%s", want, out)
		}
	}
	st := statusOf()
	if st["status"] != "critical" || st["consecutive_failures"] != float64(2) || st["failing_endpoints"] != float64(1) {
		t.Fatalf("cycle 3 state: %v", st)
	}

	down.Store(false)
	out = cycle("2026-03-02T12:00:00Z")
	if !strings.Contains(out, "api recovered") || !strings.Contains(out, "(action_extracted,") {
		t.Fatalf("cycle 4:\n%s", out)
	}
	if st := statusOf(); st["status"] != "healthy" || st["consecutive_failures"] != float64(0) {
		t.Fatalf("cycle 4 state: %v", st)
	}
}
