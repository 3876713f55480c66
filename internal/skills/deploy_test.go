package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
)

type deployRun struct {
	resp   act.Response
	state  deployState
	raw    string
	report act.Report
	rawRep string
	log    string
}

func (dr deployRun) alert(id string) string {
	for _, a := range dr.state.Alerts {
		if a.ID == id {
			return a.Severity
		}
	}
	return ""
}

// deployTestProject is a project whose forge is the fake and whose
// config.json adds extra members.
func deployTestProject(t *testing.T, f *backlogFakeGitHub, extra string) (string, *config.Config) {
	t.Helper()
	return backlogTestProject(t, f, `, "deploy_workflow": "deploy.yml",
  "deploy_workflow_inputs": {"environment": "production", "__environment_doc__": "where to deploy"},
  "deploy_health_wait_seconds": 0`+extra)
}

func runDeploy(t *testing.T, dir string, cfg *config.Config, cycle int) deployRun {
	t.Helper()
	statePath := filepath.Join(dir, "agent/state/deploy.json")
	reportPath := filepath.Join(dir, fmt.Sprintf("agent/state/evolve/runs/%d-deploy.report.json", cycle))
	var out bytes.Buffer
	r := act.Request{Skill: "/deploy", Domain: "deploy", Cycle: cycle, ProjectDir: dir, Config: cfg, Output: &out,
		Now:      time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(cycle) * time.Hour),
		HaltFile: filepath.Join(dir, "agent/HALT"),
		Env:      map[string]string{"OODA_STATE_FILE": statePath, "OODA_REPORT": reportPath}}
	var dr deployRun
	dr.resp = Deploy{PollInterval: time.Millisecond, MaxPollInterval: 5 * time.Millisecond}.Execute(context.Background(), r)
	dr.log = out.String()
	if b, err := os.ReadFile(statePath); err == nil {
		dr.raw = string(b)
		if err := json.Unmarshal(b, &dr.state); err != nil {
			t.Fatalf("state file: %v\n%s", err, b)
		}
	}
	if b, err := os.ReadFile(reportPath); err == nil {
		dr.rawRep = string(b)
		rep, err := act.ParseReport(b)
		if err != nil {
			t.Fatalf("the engine refuses the report: %v\n%s", err, b)
		}
		dr.report = *rep
	}
	for name, text := range map[string]string{"state": dr.raw, "report": dr.rawRep, "log": dr.log, "error": dr.resp.Error} {
		if strings.Contains(text, backlogTestToken) {
			t.Errorf("the token is in the %s:\n%s", name, text)
		}
	}
	return dr
}

// startsRun makes every dispatch start a run that goes through states.
func startsRun(f *backlogFakeGitHub, states ...string) {
	var id atomic.Int64
	id.Store(100)
	f.onDispatch = func() *backlogFakeRun {
		n := id.Add(1)
		return &backlogFakeRun{id: n, number: int(n - 90), created: time.Now(), states: states, hiddenList: 1}
	}
}

func healthyServer(t *testing.T, code int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDeploySucceedsAndChecksHealth(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	// A run of an earlier dispatch, just created, failed: it is not the
	// one this dispatch starts.
	f.runs = []*backlogFakeRun{{id: 50, number: 1, created: time.Now(), states: []string{"completed:failure"}}}
	startsRun(f, "queued", "in_progress", "in_progress", "completed:success")
	dir, cfg := deployTestProject(t, f, `, "health_endpoints": ["`+healthyServer(t, 200)+`/health"]`)
	r := runDeploy(t, dir, cfg, 1)
	if !r.resp.OK || r.state.Status != "deployed" || r.state.HealthCheck != "passed" || r.state.RunID != 101 ||
		r.state.RunURL != "https://github.example/octo/widget/actions/runs/101" || len(r.state.Alerts) != 0 {
		t.Fatalf("%+v\n%s\n%s", r.resp, r.raw, r.log)
	}
	if len(f.dispatches) != 1 || f.dispatches[0]["ref"] != "main" || fmt.Sprint(f.dispatches[0]["inputs"]) != "map[environment:production]" {
		t.Errorf("dispatches %v", f.dispatches)
	}
	if r.report.HadOutput == nil || !*r.report.HadOutput || !strings.HasPrefix(r.report.Summary, "deployed deploy.yml on main in ") ||
		!strings.Contains(r.report.Summary, "(run #11); health check passed (1 endpoint): https://github.example/") {
		t.Errorf("report %s", r.rawRep)
	}
	for _, want := range []string{"run #11 queued", "run #11 in_progress", "run #11 completed (success)", "health "} {
		if !strings.Contains(r.log, want) {
			t.Errorf("log lacks %q:\n%s", want, r.log)
		}
	}
	if r.state.Metrics["deploy_ok"] != 1 || r.state.ConsecutiveFailures != 0 {
		t.Errorf("metrics %v", r.state.Metrics)
	}
}

func TestDeployFailedRunIsCriticalAndRepeatedFailuresStop(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	startsRun(f, "queued", "in_progress", "completed:failure")
	dir, cfg := deployTestProject(t, f, `, "health_endpoints": ["`+healthyServer(t, 200)+`"]`)
	r := runDeploy(t, dir, cfg, 1)
	if !r.resp.OK || r.state.Status != "failed" || r.state.Conclusion != "failure" || r.alert("deploy_failed") != "critical" ||
		r.state.HealthCheck != "not_run" || r.state.ConsecutiveFailures != 1 {
		t.Fatalf("%+v\n%s", r.resp, r.raw)
	}
	if !strings.HasPrefix(r.report.Summary, "deploy of deploy.yml on main failed (run #11): the run ended failure") || len(r.report.Alerts) != 1 {
		t.Errorf("report %s", r.rawRep)
	}
	r = runDeploy(t, dir, cfg, 2)
	if r.state.ConsecutiveFailures != 2 || len(f.dispatches) != 2 {
		t.Fatalf("second failure: %s", r.raw)
	}
	// A third dispatch after two failures in a row waits for a person.
	r = runDeploy(t, dir, cfg, 3)
	if r.resp.OK || !r.resp.NotStarted || !strings.Contains(r.resp.Error, "the last 2 deploys failed") || len(f.dispatches) != 2 {
		t.Fatalf("dispatched after two failures: %+v (dispatches %d)", r.resp, len(f.dispatches))
	}
}

func TestDeployFailedHealthCheckIsCritical(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	startsRun(f, "in_progress", "completed:success")
	dir, cfg := deployTestProject(t, f, `, "health_endpoints": [{"url": "`+healthyServer(t, 503)+`/health", "name": "api"}]`)
	r := runDeploy(t, dir, cfg, 1)
	if !r.resp.OK || r.state.Status != "deployed" || r.state.HealthCheck != "failed" || r.alert("deploy_health_failed") != "critical" ||
		r.state.Metrics["deploy_ok"] != 0 || r.state.ConsecutiveFailures != 1 {
		t.Fatalf("%+v\n%s", r.resp, r.raw)
	}
	if !strings.Contains(r.report.Summary, "post-deploy health check failed: api (HTTP 503, expected 2xx)") {
		t.Errorf("summary %q", r.report.Summary)
	}
}

func TestDeployRunThatNeverFinishesTimesOut(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	startsRun(f, "queued", "in_progress")
	dir, cfg := deployTestProject(t, f, `, "deploy_monitor_timeout_seconds": 0.2`)
	r := runDeploy(t, dir, cfg, 1)
	if !r.resp.OK || r.state.Status != "timed_out" || r.state.RunStatus != "in_progress" || r.alert("deploy_timed_out") != "warning" ||
		r.state.HealthCheck != "not_run" {
		t.Fatalf("%+v\n%s\n%s", r.resp, r.raw, r.log)
	}
	if !strings.Contains(r.report.Summary, "(run #11): last seen in_progress") {
		t.Errorf("summary %q", r.report.Summary)
	}

	// A dispatch that starts no run at all.
	f.onDispatch = nil
	r = runDeploy(t, dir, cfg, 2)
	if r.state.Status != "timed_out" || r.state.RunID != 0 || !strings.Contains(r.report.Summary, "no run of it appeared within") {
		t.Fatalf("%s", r.raw)
	}
}

func TestDeployRefusals(t *testing.T) {
	// No deploy_workflow: nothing is dispatched, and the key is named.
	f := newBacklogFakeGitHub(t)
	dir, cfg := backlogTestProject(t, f, "")
	r := runDeploy(t, dir, cfg, 1)
	if r.resp.OK || !r.resp.NotStarted || !strings.Contains(r.resp.Error, "deploy_workflow is not set in config.json") || len(f.requests) != 0 {
		t.Errorf("%+v, requests %v", r.resp, f.requests)
	}
	// A workflow that is a path of the API.
	dir, cfg = backlogTestProject(t, f, `, "deploy_workflow": "../pulls/1/merge"`)
	r = runDeploy(t, dir, cfg, 1)
	if r.resp.OK || !strings.Contains(r.resp.Error, "config.json /deploy_workflow: ") || len(f.requests) != 0 {
		t.Errorf("%+v, requests %v", r.resp, f.requests)
	}
	// Another forge.
	dir, cfg = deployTestProject(t, nil, "")
	r = runDeploy(t, dir, cfg, 1)
	if r.resp.OK || !strings.Contains(r.resp.Error, "deploy needs the github forge, and the forge here is none") {
		t.Errorf("%+v", r.resp)
	}
	// HALT before the dispatch.
	dir, cfg = deployTestProject(t, f, "")
	if err := os.MkdirAll(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent/HALT"), []byte("stop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runDeploy(t, dir, cfg, 1)
	if !r.resp.Halted || len(f.dispatches) != 0 {
		t.Errorf("%+v, dispatches %v", r.resp, f.dispatches)
	}
}

// A dispatch the API refuses (a workflow without workflow_dispatch, an
// unknown input) fails the run and says why, without any run followed.
func TestDeployDispatchRefused(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	dir, cfg := backlogTestProject(t, f, `, "deploy_workflow": "other.yml"`)
	r := runDeploy(t, dir, cfg, 1)
	if r.resp.OK || r.state.Status != "error" || !strings.Contains(r.resp.Error, "listing the runs of other.yml") {
		t.Errorf("%+v\n%s", r.resp, r.raw)
	}
}
