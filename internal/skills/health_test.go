package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
)

// healthProject writes a project whose config.json holds the given
// health_endpoints (a JSON array) and extra top-level members, and loads
// the configuration as the cycle does.
func healthProject(t *testing.T, endpoints string, extra string) (string, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	body := `{"domains": {"service": {"weight": 1, "primary_skill": "/health"}}, "health_endpoints": ` + endpoints + extra + `}`
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return dir, cfg
}

// healthRun is one run of the skill as the engine makes it, with what it
// wrote.
type healthRun struct {
	resp   act.Response
	state  healthState
	raw    string // the state file's bytes
	report healthReport
	rawRep string
	log    string
}

func runHealth(t *testing.T, dir string, cfg *config.Config, cycle int) healthRun {
	t.Helper()
	return runHealthReq(t, act.Request{Skill: "/health", Domain: "service", Cycle: cycle, ProjectDir: dir, Config: cfg,
		Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(cycle) * time.Hour)})
}

func runHealthReq(t *testing.T, r act.Request) healthRun {
	t.Helper()
	statePath := filepath.Join(r.ProjectDir, "agent/state/service.json")
	reportPath := filepath.Join(r.ProjectDir, fmt.Sprintf("agent/state/evolve/runs/%d-health.report.json", r.Cycle))
	r.Env = map[string]string{"OODA_STATE_FILE": statePath, "OODA_REPORT": reportPath}
	var out bytes.Buffer
	r.Output = &out
	var hr healthRun
	hr.resp = Health{}.Execute(context.Background(), r)
	hr.log = out.String()
	if b, err := os.ReadFile(statePath); err == nil {
		hr.raw = string(b)
		if err := json.Unmarshal(b, &hr.state); err != nil {
			t.Fatalf("state file: %v\n%s", err, b)
		}
	}
	if b, err := os.ReadFile(reportPath); err == nil {
		hr.rawRep = string(b)
		if err := json.Unmarshal(b, &hr.report); err != nil {
			t.Fatalf("report: %v\n%s", err, b)
		}
		// The engine must accept what the skill writes.
		if _, err := act.ParseReport(b); err != nil {
			t.Fatalf("the engine refuses the report: %v\n%s", err, b)
		}
	}
	return hr
}

func (hr healthRun) hadOutput() bool { return hr.report.HadOutput != nil && *hr.report.HadOutput }

func (hr healthRun) alert(id string) string {
	for _, a := range hr.state.Alerts {
		if a.ID == id {
			return a.Severity
		}
	}
	return ""
}

func TestHealthHealthy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" && r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/health", {"url": "`+srv.URL+`/", "name": "home", "method": "head", "expected_status": [200, 204]}]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if !hr.resp.OK {
		t.Fatalf("run failed: %s\n%s", hr.resp.Error, hr.log)
	}
	if hr.state.Status != HealthHealthy || hr.state.EndpointsUp != 2 || hr.state.EndpointsTotal != 2 || hr.state.FailingEndpoints != 0 || len(hr.state.Alerts) != 0 {
		t.Fatalf("state:\n%s", hr.raw)
	}
	if hr.state.Endpoints[0].Name != "/health" || hr.state.Endpoints[1].Name != "home" || hr.state.Endpoints[1].Method != "HEAD" {
		t.Errorf("endpoint names/methods:\n%s", hr.raw)
	}
	if _, ok := hr.state.Metrics["latency_ms./health"]; !ok {
		t.Errorf("no latency metric:\n%s", hr.raw)
	}
	if _, ok := hr.state.Metrics["p95_ms.home"]; !ok {
		t.Errorf("no p95 metric:\n%s", hr.raw)
	}
	// A first run that finds everything up has nothing to act on.
	if hr.hadOutput() || !strings.HasPrefix(hr.report.Summary, "all 2 endpoints up; slowest ") {
		t.Errorf("report: %s", hr.rawRep)
	}
	if !strings.Contains(hr.log, "/health GET "+srv.URL+"/health -> 200 in ") {
		t.Errorf("run log:\n%s", hr.log)
	}
	// The next run finds the same: no output, same status.
	hr = runHealth(t, dir, cfg, 2)
	if hr.hadOutput() || hr.state.Status != HealthHealthy || len(hr.state.Endpoints[0].RecentLatencyMS) != 2 {
		t.Errorf("second run: %s\n%s", hr.rawRep, hr.raw)
	}
}

func TestHealthSlow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	// The server takes at least 30 ms; the threshold is 5 ms.
	dir, cfg := healthProject(t, `[{"url": "`+srv.URL+`/api", "slow_ms": 5}]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if hr.state.Status != HealthDegraded || hr.alert("health_slow_/api") != "warning" || hr.state.SlowEndpoints != 1 || hr.state.EndpointsUp != 1 {
		t.Fatalf("state:\n%s", hr.raw)
	}
	if !hr.hadOutput() || !strings.Contains(hr.report.Summary, "1 of 1 endpoints up; /api slow (") || !strings.Contains(hr.report.Summary, "Since the last check: /api slow at its first check") {
		t.Errorf("report: %s", hr.rawRep)
	}
	if len(hr.report.Alerts) != 1 || hr.report.Alerts[0].ID != "health_slow_/api" {
		t.Errorf("report alerts: %s", hr.rawRep)
	}
	// Still slow: the same alert, nothing new.
	hr = runHealth(t, dir, cfg, 2)
	if hr.hadOutput() || len(hr.report.Alerts) != 0 || hr.state.Status != HealthDegraded {
		t.Errorf("second run: %s", hr.rawRep)
	}
}

func TestHealthFailingBecomesCriticalThenRecovers(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/login", "`+srv.URL+`/ok"]`, "")
	// /ok fails too (same server), so both count; the names keep them apart.
	want := []struct {
		consec int
		sev    string
		status string
		output bool
	}{
		{1, "warning", HealthDegraded, true},  // a new failure
		{2, "warning", HealthDegraded, false}, // still failing: nothing new
		{3, "critical", HealthCritical, true}, // third in a row: critical
		{4, "critical", HealthCritical, false},
	}
	for i, w := range want {
		hr := runHealth(t, dir, cfg, i+1)
		if hr.state.ConsecutiveFailures != w.consec || hr.alert("health_down_/login") != w.sev || hr.state.Status != w.status || hr.hadOutput() != w.output {
			t.Fatalf("run %d: want consecutive %d, %s, %s, output %v; got:\n%s\n%s", i+1, w.consec, w.sev, w.status, w.output, hr.raw, hr.rawRep)
		}
		if hr.state.FailingEndpoints != 2 || strings.Join(hr.state.Failing, ",") != "/login,/ok" {
			t.Fatalf("run %d: failing:\n%s", i+1, hr.raw)
		}
		if !strings.Contains(hr.report.Summary, "0 of 2 endpoints up; /login down (HTTP 500, expected 2xx)") {
			t.Fatalf("run %d: summary %q", i+1, hr.report.Summary)
		}
		if hr.report.Vars["consecutive_failures"] != float64(w.consec) || hr.report.Vars["failing_endpoints"] != float64(2) {
			t.Fatalf("run %d: vars %v", i+1, hr.report.Vars)
		}
	}
	failing.Store(false)
	hr := runHealth(t, dir, cfg, 5)
	if hr.state.Status != HealthHealthy || hr.state.ConsecutiveFailures != 0 || len(hr.state.Alerts) != 0 || !hr.hadOutput() {
		t.Fatalf("recovery:\n%s\n%s", hr.raw, hr.rawRep)
	}
	if !strings.Contains(hr.report.Summary, "Since the last check: /login recovered, /ok recovered") {
		t.Errorf("summary %q", hr.report.Summary)
	}
}

func TestHealthFlapping(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/"]`, "")
	name := strings.TrimPrefix(srv.URL, "http://")
	for i := 1; i <= 6; i++ {
		hr := runHealth(t, dir, cfg, i)
		down := i%2 == 0
		if down != (hr.state.FailingEndpoints == 1) || hr.state.ConsecutiveFailures > 1 {
			t.Fatalf("run %d:\n%s", i, hr.raw)
		}
		// Every flip is a change: a new failure, then a recovery; never
		// critical, since no two failures are consecutive.
		if i > 1 && !hr.hadOutput() {
			t.Fatalf("run %d: a flip without output: %s", i, hr.rawRep)
		}
		if hr.alert("health_down_"+name) == "critical" {
			t.Fatalf("run %d: critical while flapping:\n%s", i, hr.raw)
		}
	}
}

func TestHealthNeverAnswering(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	dir, cfg := healthProject(t, `[{"url": "`+srv.URL+`/hang", "timeout_seconds": 0.2}]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if !hr.resp.OK {
		t.Fatalf("a timeout is a finding, not a failed run: %s", hr.resp.Error)
	}
	ep := hr.state.Endpoints[0]
	if ep.Up || ep.Error != "no answer within 200 ms" || hr.alert("health_down_/hang") != "warning" {
		t.Fatalf("state:\n%s", hr.raw)
	}
}

func TestHealthGlobalTimeoutApplies(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	dir, cfg := healthProject(t, `["`+srv.URL+`/hang"]`, `, "health_check_timeout_seconds": 0.3`)
	hr := runHealth(t, dir, cfg, 1)
	if ep := hr.state.Endpoints[0]; ep.Up || ep.Error != "no answer within 300 ms" {
		t.Fatalf("state:\n%s", hr.raw)
	}
}

func TestHealthConnectionRefusedIsCriticalAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir, cfg := healthProject(t, `["http://`+addr+`/health"]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if hr.state.Endpoints[0].Error != "connection refused" || hr.alert("health_down_/health") != "critical" || hr.state.Status != HealthCritical {
		t.Fatalf("state:\n%s", hr.raw)
	}
	if !hr.hadOutput() || !strings.Contains(hr.report.Summary, "/health down (connection refused)") {
		t.Errorf("report: %s", hr.rawRep)
	}
}

func TestHealthRedirectIsNotFollowed(t *testing.T) {
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the credential reached the other host")
		}
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/collect", http.StatusFound)
	}))
	defer srv.Close()
	t.Setenv("OODA_HEALTH_TEST_TOKEN", "redirect-secret-value")
	dir, cfg := healthProject(t, `[{"url": "`+srv.URL+`/r", "headers": {"Authorization": "Bearer $OODA_HEALTH_TEST_TOKEN"}},
		{"url": "`+srv.URL+`/moved", "expected_status": 302}]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if otherHits.Load() != 0 {
		t.Fatalf("the redirect was followed to %s", other.URL)
	}
	if ep := hr.state.Endpoints[0]; ep.Up || ep.StatusCode != 302 || ep.Error != "HTTP 302 redirect, not followed; expected 2xx" {
		t.Errorf("redirect judged as:\n%s", hr.raw)
	}
	if ep := hr.state.Endpoints[1]; !ep.Up {
		t.Errorf("an expected 302 is up:\n%s", hr.raw)
	}
}

func TestHealthHugeBodyIsNotRead(t *testing.T) {
	var written atomic.Int64
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		// Up to 1 GiB, stopping when the client goes away.
		for i := 0; i < 16384; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			written.Add(int64(len(chunk)))
		}
	}))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/big"]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if !hr.state.Endpoints[0].Up {
		t.Fatalf("state:\n%s", hr.raw)
	}
	srv.CloseClientConnections()
	srv.Close()
	// Socket buffers hold a few MiB; reading the body would take it all.
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the server wrote %d bytes: the body was read", n)
	}
}

func TestHealthUserinfoIsRedactedEverywhere(t *testing.T) {
	const user, pass = "monitor-user-name", "userinfo-pass-w0rd"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1)
	dir, cfg := healthProject(t, `["`+u+`/", {"url": "`+u+`/other", "expected_status": 418}]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if !hr.state.Endpoints[0].Up {
		t.Fatalf("basic auth from the URL not sent:\n%s", hr.raw)
	}
	for what, text := range map[string]string{"state": hr.raw, "report": hr.rawRep, "log": hr.log} {
		if strings.Contains(text, pass) || strings.Contains(text, user) {
			t.Errorf("the %s shows the URL's user information:\n%s", what, text)
		}
	}
	if !strings.Contains(hr.raw, `"url": "http://***@`) {
		t.Errorf("state file url:\n%s", hr.raw)
	}
}

func TestHealthHeaderCredentials(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv("OODA_HEALTH_API_KEY", "api-key-0123456789")
	t.Setenv("GITHUB_TOKEN", "ghp_health_test_token_value")
	endpoints := `[{"url": "` + srv.URL + `/a", "headers": {"Authorization": "Bearer $OODA_HEALTH_API_KEY"}},
		{"url": "` + srv.URL + `/b", "headers": {"Authorization": "token ${GITHUB_TOKEN}"}}]`

	// By default the forge token is withheld, as from a command skill.
	dir, cfg := healthProject(t, endpoints, "")
	hr := runHealth(t, dir, cfg, 1)
	if got["/a"] != "Bearer api-key-0123456789" || got["/b"] != "token" {
		t.Fatalf("headers received: %q", got)
	}
	if len(hr.resp.Warnings) != 1 || !strings.Contains(hr.resp.Warnings[0], "config.json /health_endpoints/1/headers/Authorization: $GITHUB_TOKEN is a credential not in env_passthrough of skills./health") {
		t.Errorf("warnings: %q", hr.resp.Warnings)
	}
	// Passed through when the skills entry says so.
	dir, cfg = healthProject(t, endpoints, `, "skills": {"/health": {"builtin": "health", "env_passthrough": ["GITHUB_TOKEN"]}}`)
	hr = runHealth(t, dir, cfg, 1)
	if got["/b"] != "token ghp_health_test_token_value" || len(hr.resp.Warnings) != 0 {
		t.Fatalf("headers received: %q, warnings %q", got, hr.resp.Warnings)
	}
	for what, text := range map[string]string{"state": hr.raw, "report": hr.rawRep, "log": hr.log} {
		if strings.Contains(text, "api-key-0123456789") || strings.Contains(text, "ghp_health_test_token_value") || strings.Contains(text, "Authorization") {
			t.Errorf("the %s shows a header:\n%s", what, text)
		}
	}
}

func TestHealthWithoutEndpoints(t *testing.T) {
	dir, cfg := healthProject(t, `[]`, "")
	hr := runHealth(t, dir, cfg, 1)
	if !hr.resp.OK || hr.hadOutput() || !strings.Contains(hr.report.Summary, "health_endpoints in config.json") {
		t.Fatalf("resp %+v, report %s", hr.resp, hr.rawRep)
	}
	if hr.raw != "" {
		t.Errorf("a state file without anything checked:\n%s", hr.raw)
	}
}

func TestHealthInvalidEndpointsFailTheRun(t *testing.T) {
	for _, tc := range []struct{ endpoints, want string }{
		{`["ftp://example.invalid/x"]`, `config.json /health_endpoints/0: "ftp://example.invalid/x" is not an http or https URL`},
		{`["file:///etc/passwd"]`, `config.json /health_endpoints/0: "file:///etc/passwd" is not an http or https URL`},
		{`[{"url": "http:///nohost"}]`, `config.json /health_endpoints/0/url: "http:///nohost" has no host`},
		{`[{"url": "gopher://u:hunter2hunter2@h/"}]`, `config.json /health_endpoints/0/url: "gopher://***@h/" is not an http or https URL`},
		{`[{"url": "http://h/", "method": "POST"}]`, `config.json /health_endpoints/0/method: "POST" is not GET or HEAD`},
		{`[{"url": "http://h/", "expected_status": 700}]`, `/health_endpoints/0/expected_status: 700 is not an HTTP status`},
		{`[{"url": "http://h/", "expected_status": []}]`, `/health_endpoints/0/expected_status: [] is not a status code or a non-empty list`},
		{`[{"url": "http://h/", "expected_stauts": 200}]`, `config.json /health_endpoints/0/expected_stauts: unknown key`},
		{`[{"url": "http://h/", "timeout_seconds": 0}]`, `/health_endpoints/0/timeout_seconds: 0 must be more than 0`},
		{`[{"url": "http://h/", "headers": {"Bad Name": "x"}}]`, `/health_endpoints/0/headers/Bad Name: "Bad Name" is not a header name`},
		{`[{"url": "http://h/", "headers": {"X": "a\r\nInjected: 1"}}]`, `/health_endpoints/0/headers/X: the value holds a line break`},
		{`[{"name": "x"}]`, `/health_endpoints/0: has no "url"`},
		{`[42]`, `config.json /health_endpoints/0: 42 is not a URL string or an object`},
		{`["http://ok/", "mailto:x@y"]`, `config.json /health_endpoints/1: "mailto:x@y" is not an http or https URL`},
	} {
		dir, cfg := healthProject(t, tc.endpoints, "")
		hr := runHealth(t, dir, cfg, 1)
		if hr.resp.OK || !strings.Contains(hr.resp.Error, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.endpoints, hr.resp.Error, tc.want)
		}
		if strings.Contains(hr.resp.Error, "hunter2") {
			t.Errorf("%s: the error shows the password: %s", tc.endpoints, hr.resp.Error)
		}
		if hr.raw != "" {
			t.Errorf("%s: a state file was written", tc.endpoints)
		}
	}
	many := make([]string, MaxHealthEndpoints+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"http://h/%d"`, i)
	}
	dir, cfg := healthProject(t, "["+strings.Join(many, ",")+"]", "")
	if hr := runHealth(t, dir, cfg, 1); hr.resp.OK || !strings.Contains(hr.resp.Error, "config.json /health_endpoints: 51 endpoints, more than the 50") {
		t.Errorf("51 endpoints: %q", hr.resp.Error)
	}
}

func TestHealthDuplicateNamesAreKeptApart(t *testing.T) {
	eps, err := ParseHealthEndpoints([]json.RawMessage{json.RawMessage(`"http://a/health"`), json.RawMessage(`"http://b/health"`), json.RawMessage(`"https://c:8443"`)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if eps[0].Name != "/health" || eps[1].Name != "/health#2" || eps[2].Name != "c:8443" || eps[0].Timeout != 10*time.Second {
		t.Errorf("endpoints: %+v", eps)
	}
}

func TestHealthHaltStopsTheRun(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/"]`, "")
	halt := filepath.Join(dir, "agent/safety/HALT")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(halt, []byte("stop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hr := runHealthReq(t, act.Request{Skill: "/health", Cycle: 1, ProjectDir: dir, Config: cfg, HaltFile: halt, Now: time.Now()})
	if hr.resp.OK || !hr.resp.Halted || hits.Load() != 0 || hr.raw != "" {
		t.Errorf("resp %+v, hits %d, state %q", hr.resp, hits.Load(), hr.raw)
	}
}

// The previous state file is the skill's own output, but it lives in the
// project: an edited one must not make counts absurd or the window grow.
func TestHealthHostilePreviousState(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	dir, cfg := healthProject(t, `["`+srv.URL+`/x"]`, "")
	recent := make([]string, 500)
	for i := range recent {
		recent[i] = "5"
	}
	prev := `{"endpoints": [{"name": "/x", "up": false, "consecutive_failures": 1e300, "recent_latency_ms": [` + strings.Join(recent, ",") + `, -4, "x", 1e309]}]}`
	if err := os.MkdirAll(filepath.Join(dir, "agent/state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent/state/service.json"), []byte(prev), 0o644); err != nil {
		t.Fatal(err)
	}
	hr := runHealth(t, dir, cfg, 1)
	ep := hr.state.Endpoints[0]
	if ep.ConsecutiveFailures != 1 || len(ep.RecentLatencyMS) > healthWindow {
		t.Errorf("from a hostile state: consecutive %d, window %d", ep.ConsecutiveFailures, len(ep.RecentLatencyMS))
	}
	// A state file that is not JSON is a fresh start, said in the log.
	if err := os.WriteFile(filepath.Join(dir, "agent/state/service.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	hr = runHealth(t, dir, cfg, 2)
	if hr.state.Endpoints[0].ConsecutiveFailures != 1 || !strings.Contains(hr.log, "previous state not read") {
		t.Errorf("log:\n%s\nstate:\n%s", hr.log, hr.raw)
	}
}

func TestHealthWindowIsBounded(t *testing.T) {
	ep := HealthEndpoint{Name: "/a", SlowMS: 1000, CriticalAfter: 3}
	prev := map[string]healthPrev{}
	for i := 0; i < healthWindow+5; i++ {
		st, _ := healthEvaluate([]healthResult{{ep: ep, ok: true, answered: true, statusCode: 200, latencyMS: float64(i)}}, prev, time.Now())
		e := st.Endpoints[0]
		prev = map[string]healthPrev{"/a": {Up: e.Up, Recent: e.RecentLatencyMS}}
	}
	if got := prev["/a"].Recent; len(got) != healthWindow || got[0] != 5 {
		t.Errorf("window %v", got)
	}
	if p := healthP95(prev["/a"].Recent); p != 23 {
		t.Errorf("p95 of 5..24 = %v, want 23", p)
	}
}

func TestHealthLatencyJumpIsOutput(t *testing.T) {
	ep := HealthEndpoint{Name: "/a", SlowMS: 5000, CriticalAfter: 3}
	prev := map[string]healthPrev{"/a": {Up: true, Recent: []float64{100, 110, 90, 105, 95}}}
	_, rep := healthEvaluate([]healthResult{{ep: ep, ok: true, answered: true, statusCode: 200, latencyMS: 400}}, prev, time.Now())
	if !*rep.HadOutput || !strings.Contains(rep.Summary, "/a latency jumped to 400 ms (p95 was 110 ms)") {
		t.Errorf("report %+v", rep)
	}
	_, rep = healthEvaluate([]healthResult{{ep: ep, ok: true, answered: true, statusCode: 200, latencyMS: 150}}, prev, time.Now())
	if *rep.HadOutput {
		t.Errorf("150 ms after ~100 ms is no jump: %+v", rep)
	}
}
