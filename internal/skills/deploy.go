package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	register("deploy", Deploy{}, builtinContract("execute",
		"Dispatches deploy_workflow on GitHub Actions, follows the run to its end, then checks health_endpoints (docs/builtin-deploy.md).", false))
}

// Defaults and bounds of the deploy skill.
const (
	// DefaultDeployMonitorTimeout is deploy_monitor_timeout_seconds when
	// unset or 0: how long the run a dispatch started is followed.
	DefaultDeployMonitorTimeout = 600 * time.Second
	// DefaultDeployHealthWait is deploy_health_wait_seconds when unset:
	// the pause between a finished deploy and its health check.
	DefaultDeployHealthWait = 30 * time.Second
	// deployMaxSetting caps both settings: a deploy is followed for a
	// day at most.
	deployMaxSetting = 24 * time.Hour
	// deployPoll and deployMaxPoll are the first and the longest wait
	// between two looks at the run; each wait is half again the last.
	deployPoll    = 3 * time.Second
	deployMaxPoll = 30 * time.Second
	// deploySkew is how far before the dispatch a run may claim to have
	// been created (GitHub's clock is not ours); runs that existed before
	// the dispatch are told apart by id.
	deploySkew = 2 * time.Minute
	// deployMaxFailures is how many failed deploys in a row stop the
	// skill from dispatching again until a person looks.
	deployMaxFailures = 2
	// deployHaltPoll is how often the HALT file is looked for while the
	// skill waits.
	deployHaltPoll = 500 * time.Millisecond
)

// Deploy results, the state file's status.
const (
	deployDeployed = "deployed"
	deployFailed   = "failed"
	deployTimedOut = "timed_out"
	deployError    = "error"
	deployHalted   = "halted"
)

// Deploy is the built-in "deploy" skill: it dispatches the GitHub Actions
// workflow deploy_workflow with deploy_workflow_inputs on the default
// branch, follows the run it started to its end within
// deploy_monitor_timeout_seconds, waits deploy_health_wait_seconds and
// checks health_endpoints (docs/builtin-deploy.md).
type Deploy struct {
	// PollInterval is the first wait between two looks at the run; zero
	// means 3 s. MaxPollInterval caps the growing wait; zero means 30 s.
	PollInterval, MaxPollInterval time.Duration
}

// Describe names the executor.
func (Deploy) Describe() string { return "builtin deploy" }

// deployEndpoint is one endpoint's post-deploy check.
type deployEndpoint struct {
	Name       string  `json:"name"`
	URL        string  `json:"url"`
	OK         bool    `json:"ok"`
	StatusCode int     `json:"status_code,omitempty"`
	LatencyMS  float64 `json:"latency_ms,omitempty"`
	Problem    string  `json:"problem,omitempty"`
}

// deployHealth is the post-deploy health check: passed, failed, skipped
// (no health_endpoints) or not_run (no successful deploy to check).
type deployHealth struct {
	Status    string           `json:"status"`
	Endpoints []deployEndpoint `json:"endpoints"`
	Error     string           `json:"error,omitempty"`
	Warnings  []string         `json:"-"`
}

// deployCheckHealth checks health_endpoints once, with the health
// built-in's own check (health.go): the same parsing, headers, timeouts,
// redirect and body rules. It is a variable so that the check is one
// place to change.
var deployCheckHealth = func(ctx context.Context, cfg *config.Config, skill string) deployHealth {
	h := deployHealth{Status: "passed", Endpoints: []deployEndpoint{}}
	if len(cfg.HealthEndpoints) == 0 {
		h.Status = "skipped"
		return h
	}
	eps, err := ParseHealthEndpoints(cfg.HealthEndpoints, cfg.HealthCheckTimeout)
	if err != nil {
		h.Status, h.Error = "failed", strings.ReplaceAll(err.Error(), "\n", "; ")
		return h
	}
	headers, warnings := healthExpandHeaders(eps, healthSkillPolicy(cfg, skill), skill)
	h.Warnings = warnings
	client := Health{}.client()
	for i, ep := range eps {
		res := healthCheck(ctx, client, ep, headers[i])
		h.Endpoints = append(h.Endpoints, deployEndpoint{Name: ep.Name, URL: ep.Display, OK: res.ok,
			StatusCode: res.statusCode, LatencyMS: res.latencyMS, Problem: res.problem})
		if !res.ok {
			h.Status = "failed"
		}
	}
	return h
}

// deployState is the domain state file.
type deployState struct {
	LastRun             string             `json:"last_run"`
	Status              string             `json:"status"`
	Workflow            string             `json:"workflow"`
	Ref                 string             `json:"ref,omitempty"`
	Inputs              []string           `json:"inputs"`
	RunID               int64              `json:"run_id,omitempty"`
	RunNumber           int                `json:"run_number,omitempty"`
	RunURL              string             `json:"run_url,omitempty"`
	RunStatus           string             `json:"run_status,omitempty"`
	Conclusion          string             `json:"conclusion,omitempty"`
	DurationSeconds     float64            `json:"duration_seconds"`
	HealthCheck         string             `json:"health_check"`
	Health              []deployEndpoint   `json:"health"`
	ConsecutiveFailures int                `json:"consecutive_failures"`
	Error               string             `json:"error,omitempty"`
	Alerts              []state.Alert      `json:"alerts"`
	Metrics             map[string]float64 `json:"metrics"`
}

// deploySettings are the deploy built-in's two durations.
type deploySettings struct {
	monitor, healthWait time.Duration
}

// deployReadSettings reads deploy_monitor_timeout_seconds and
// deploy_health_wait_seconds from the configuration the cycle loaded (the
// schema has already checked both are non-negative numbers); an unset key
// is its default.
func deployReadSettings(cfg *config.Config) (deploySettings, error) {
	s := deploySettings{monitor: DefaultDeployMonitorTimeout, healthWait: DefaultDeployHealthWait}
	p := "config.json"
	raw := struct{ Monitor, HealthWait *float64 }{cfg.DeployMonitorTimeoutSeconds, cfg.DeployHealthWaitSeconds}
	var err error
	dur := func(key string, v *float64, def time.Duration, zeroIsDefault bool) (time.Duration, error) {
		switch {
		case v == nil:
			return def, nil
		case math.IsNaN(*v) || *v < 0 || *v > deployMaxSetting.Seconds():
			return 0, fmt.Errorf("%s /%s: %v is not a number of seconds from 0 to %v", p, key, *v, deployMaxSetting.Seconds())
		case *v == 0 && zeroIsDefault:
			return def, nil
		}
		return time.Duration(*v * float64(time.Second)), nil
	}
	if s.monitor, err = dur("deploy_monitor_timeout_seconds", raw.Monitor, DefaultDeployMonitorTimeout, true); err != nil {
		return s, err
	}
	if s.healthWait, err = dur("deploy_health_wait_seconds", raw.HealthWait, DefaultDeployHealthWait, false); err != nil {
		return s, err
	}
	return s, nil
}

// deployWorkflow reads deploy_workflow; "" means unset.
func deployWorkflow(raw json.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err != nil {
		return "", fmt.Errorf("config.json /deploy_workflow: %s is not a string", config.JSONKind(t))
	}
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	name, err := forge.WorkflowName(s)
	if err != nil {
		return "", fmt.Errorf("config.json /deploy_workflow: %s", safetext.Text(err.Error()))
	}
	return name, nil
}

// deployInputs reads deploy_workflow_inputs; keys that start and end with
// "__" are comments, as elsewhere in config.json, and are not sent.
func deployInputs(raw json.RawMessage) (map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, fmt.Errorf("config.json /deploy_workflow_inputs: %s is not an object", config.JSONKind(t))
	}
	for k := range m {
		if len(k) > 4 && strings.HasPrefix(k, "__") && strings.HasSuffix(k, "__") {
			delete(m, k)
		}
	}
	return m, nil
}

// Execute dispatches the workflow, follows its run and checks health.
func (d Deploy) Execute(ctx context.Context, r act.Request) act.Response {
	start := time.Now()
	resp := act.Response{Executor: d.Describe()}
	done := func() act.Response { resp.Elapsed = time.Since(start); return resp }
	notStarted := func(msg string) act.Response {
		resp.NotStarted, resp.Error = true, msg
		backlogLogf(r.Output, "deploy: %s\n", msg)
		return done()
	}
	e := newBuiltinEnv(r)
	cfg, now, store, statePath, reportPath := e.cfg, e.now, e.store, e.statePath, e.reportPath
	ctx, cancel := withRequestTimeout(ctx, r)
	defer cancel()

	workflow, err := deployWorkflow(cfg.DeployWorkflow)
	if err != nil {
		return notStarted(err.Error())
	}
	if workflow == "" {
		return notStarted(`deploy_workflow is not set in config.json: name the GitHub Actions workflow file to dispatch, e.g. "deploy_workflow": "deploy.yml" (docs/builtin-deploy.md)`)
	}
	inputs, err := deployInputs(cfg.DeployWorkflowInputs)
	if err != nil {
		return notStarted(err.Error())
	}
	settings, err := deployReadSettings(cfg)
	if err != nil {
		return notStarted(safetext.Error(err))
	}
	f, err := forge.Select(ctx, cfg, r.ProjectDir)
	if err != nil {
		return notStarted("deploy needs the github forge: " + safetext.Error(err))
	}
	gh, ok := f.(forge.Actions)
	if !ok {
		name := "none"
		if f != nil {
			name = f.Name()
		}
		return notStarted(fmt.Sprintf(`deploy needs the github forge, and the forge here is %s: set forge.provider to "github" and forge.repo in config.json (docs/builtin-deploy.md)`, name))
	}

	prevFailures := deployPreviousFailures(store, statePath)
	if prevFailures >= deployMaxFailures {
		return notStarted(fmt.Sprintf("the last %d deploys failed; not dispatching %s again until a person looks: fix the cause, then set consecutive_failures to 0 in %s", prevFailures, workflow, safetext.Text(statePath)))
	}
	if deployHaltSeen(r.HaltFile) {
		resp.Halted, resp.Error = true, "stopped: HALT file appeared during execution"
		return done()
	}

	st := deployState{LastRun: state.FormatTime(now), Workflow: workflow, Inputs: slices.Sorted(maps.Keys(inputs)),
		HealthCheck: "not_run", Health: []deployEndpoint{}, Alerts: []state.Alert{}, ConsecutiveFailures: prevFailures}
	if st.Inputs == nil {
		st.Inputs = []string{}
	}
	finish := func() act.Response {
		rep := deployReport(&st)
		if statePath != "" {
			if err := backlogWriteJSON(store, statePath, st); err != nil {
				resp.OK, resp.Error = false, "state file not written: "+safetext.Error(err)
			}
		}
		if reportPath != "" {
			if err := backlogWriteJSON(store, reportPath, rep); err != nil && resp.Error == "" {
				resp.OK, resp.Error = false, "report not written: "+safetext.Error(err)
			}
		}
		backlogLogf(r.Output, "deploy: %s\n", rep.Summary)
		return done()
	}
	errorOut := func(msg string) act.Response {
		// Nothing was deployed: the run fails, and the state says why.
		st.Status, st.Error = deployError, msg
		resp.OK, resp.Error = false, msg
		backlogLogf(r.Output, "deploy: %s\n", msg)
		return finish()
	}

	st.Ref = cfg.Forge.DefaultBranch
	if st.Ref == "" {
		if st.Ref, err = gh.DefaultBranch(ctx); err != nil {
			return errorOut("reading the default branch: " + safetext.Error(err))
		}
	}
	// The runs that exist before the dispatch are not the one it starts.
	before := map[int64]bool{}
	existing, err := gh.WorkflowRuns(ctx, workflow, st.Ref, time.Time{})
	if err != nil {
		return errorOut(fmt.Sprintf("listing the runs of %s: %s", workflow, safetext.Error(err)))
	}
	for _, run := range existing {
		before[run.ID] = true
	}
	dispatched := time.Now()
	backlogLogf(r.Output, "deploy: dispatching %s on %s of %s with inputs %s\n", workflow, st.Ref, f.Name(), deployList(st.Inputs))
	if err := gh.DispatchWorkflow(ctx, workflow, st.Ref, inputs); err != nil {
		return errorOut(fmt.Sprintf("dispatching %s on %s: %s", workflow, st.Ref, safetext.Error(err)))
	}

	run, outcome := d.monitor(ctx, r, gh, workflow, st.Ref, before, dispatched, settings.monitor)
	st.DurationSeconds = math.Round(time.Since(dispatched).Seconds()*10) / 10
	if run.ID > 0 {
		st.RunID, st.RunNumber, st.RunURL, st.RunStatus, st.Conclusion = run.ID, run.RunNumber, run.HTMLURL, run.Status, run.Conclusion
	}
	switch outcome {
	case deployHalted:
		resp.Halted = true
		resp.Error = "stopped: HALT file appeared during execution"
		if st.RunURL != "" {
			resp.Error += "; the workflow run continues on GitHub: " + st.RunURL
		}
		st.Status = deployHalted
		return finish()
	case "canceled":
		resp.Canceled, resp.Error = true, "stopped: cycle canceled"
		st.Status = deployHalted
		return finish()
	}
	st.Status = outcome
	resp.OK = true
	if outcome == deployDeployed {
		backlogLogf(r.Output, "deploy: run finished; health check in %s (deploy_health_wait_seconds)\n", settings.healthWait)
		if !deploySleep(ctx, settings.healthWait, r.HaltFile) {
			if deployHaltSeen(r.HaltFile) {
				resp.OK, resp.Halted, resp.Error = false, true, "stopped: HALT file appeared during execution"
			} else {
				resp.OK, resp.Canceled, resp.Error = false, true, "stopped: cycle canceled"
			}
			return finish()
		}
		h := deployCheckHealth(ctx, cfg, r.Skill)
		resp.Warnings = append(resp.Warnings, h.Warnings...)
		st.HealthCheck, st.Health = h.Status, h.Endpoints
		if h.Error != "" {
			st.Error = h.Error
		}
		for _, e := range h.Endpoints {
			verdict := "up"
			if !e.OK {
				verdict = "FAILED: " + e.Problem
			}
			backlogLogf(r.Output, "deploy: health %s %s: %s\n", e.Name, e.URL, verdict)
		}
	}
	if st.Status == deployDeployed && st.HealthCheck != "failed" {
		st.ConsecutiveFailures = 0
	} else {
		st.ConsecutiveFailures++
	}
	return finish()
}

// monitor finds the run the dispatch started and follows it until it
// completes, the timeout passes, the HALT file appears or the cycle is
// canceled; the outcome is deployed, failed, timed_out, halted or
// canceled. A failed look at the run is logged and retried: the forge
// being briefly unreachable says nothing about the deploy.
func (d Deploy) monitor(ctx context.Context, r act.Request, gh forge.Actions, workflow, ref string, before map[int64]bool,
	dispatched time.Time, timeout time.Duration) (forge.WorkflowRun, string) {
	mctx, cancel := context.WithDeadline(ctx, dispatched.Add(timeout))
	defer cancel()
	wait, maxWait := d.PollInterval, d.MaxPollInterval
	if wait <= 0 {
		wait = deployPoll
	}
	if maxWait <= 0 {
		maxWait = deployMaxPoll
	}
	var run forge.WorkflowRun
	lastStatus := ""
	for {
		if !deploySleep(mctx, wait, r.HaltFile) {
			switch {
			case deployHaltSeen(r.HaltFile):
				return run, deployHalted
			case ctx.Err() != nil:
				return run, "canceled"
			}
			return run, deployTimedOut
		}
		wait = min(wait*3/2, maxWait)
		if run.ID == 0 {
			runs, err := gh.WorkflowRuns(mctx, workflow, ref, dispatched.Add(-deploySkew))
			if err != nil {
				if mctx.Err() == nil {
					backlogLogf(r.Output, "deploy: looking for the run: %s (retrying)\n", safetext.Error(err))
				}
				continue
			}
			// The oldest new run is the one this dispatch started: a
			// newer one belongs to a later dispatch.
			for _, c := range runs {
				if !before[c.ID] && (c.Event == "" || c.Event == "workflow_dispatch") && (run.ID == 0 || c.Created.Before(run.Created)) {
					run = c
				}
			}
			if run.ID == 0 {
				continue
			}
			backlogLogf(r.Output, "deploy: run #%d started: %s\n", run.RunNumber, deployOr(run.HTMLURL, "(no address given)"))
		} else {
			next, err := gh.WorkflowRun(mctx, run.ID)
			if err != nil {
				if mctx.Err() == nil {
					backlogLogf(r.Output, "deploy: reading run #%d: %s (retrying)\n", run.RunNumber, safetext.Error(err))
				}
				continue
			}
			if next.HTMLURL == "" {
				next.HTMLURL = run.HTMLURL
			}
			if next.RunNumber == 0 {
				next.RunNumber = run.RunNumber
			}
			run = next
		}
		if run.Status != lastStatus {
			conclusion := ""
			if run.Done() {
				conclusion = " (" + deployOr(run.Conclusion, "no conclusion") + ")"
			}
			backlogLogf(r.Output, "deploy: run #%d %s%s\n", run.RunNumber, deployOr(run.Status, "(status not given)"), conclusion)
			lastStatus = run.Status
		}
		if run.Done() {
			if run.Succeeded() {
				return run, deployDeployed
			}
			return run, deployFailed
		}
	}
}

// deployReport builds the report and puts the alerts and metrics into
// the state.
func deployReport(st *deployState) act.Report {
	where := st.Workflow
	if st.Ref != "" {
		where += " on " + st.Ref
	}
	run := ""
	if st.RunNumber > 0 {
		run = fmt.Sprintf(" (run #%d)", st.RunNumber)
	}
	var summary string
	alert := func(sev, id, msg string) {
		st.Alerts = append(st.Alerts, state.Alert{Severity: sev, ID: id, Message: msg})
	}
	switch st.Status {
	case deployDeployed:
		summary = fmt.Sprintf("deployed %s in %s%s", where, deployDuration(st.DurationSeconds), run)
		switch st.HealthCheck {
		case "passed":
			summary += "; health check passed (" + backlogCount(len(st.Health), "endpoint") + ")"
		case "skipped":
			summary += "; no health check (health_endpoints is empty)"
		case "failed":
			var down []string
			for _, e := range st.Health {
				if !e.OK {
					down = append(down, e.Name+" ("+e.Problem+")")
				}
			}
			msg := "post-deploy health check failed: " + strings.Join(down, ", ")
			if len(down) == 0 && st.Error != "" {
				msg = "post-deploy health check failed: " + st.Error
			}
			summary += "; " + msg
			alert("critical", "deploy_health_failed", msg)
		}
	case deployFailed:
		summary = fmt.Sprintf("deploy of %s failed%s: the run ended %s", where, run, deployOr(st.Conclusion, "without a conclusion"))
		alert("critical", "deploy_failed", summary)
	case deployTimedOut:
		if st.RunID > 0 {
			summary = fmt.Sprintf("deploy of %s not finished after %s%s: last seen %s", where, deployDuration(st.DurationSeconds), run, deployOr(st.RunStatus, "without a status"))
		} else {
			summary = fmt.Sprintf("deploy of %s dispatched, but no run of it appeared within %s", where, deployDuration(st.DurationSeconds))
		}
		alert("warning", "deploy_timed_out", summary+" (deploy_monitor_timeout_seconds)")
	case deployHalted:
		summary = fmt.Sprintf("deploy of %s stopped being followed%s", where, run)
	default:
		summary = "deploy of " + where + " not started: " + st.Error
	}
	if st.RunURL != "" && st.Status != deployError {
		summary += ": " + st.RunURL
	}
	ok := 0.0
	if st.Status == deployDeployed && st.HealthCheck != "failed" {
		ok = 1
	}
	failedEndpoints := 0
	for _, e := range st.Health {
		if !e.OK {
			failedEndpoints++
		}
	}
	st.Metrics = map[string]float64{"deploy_ok": ok, "deploy_seconds": st.DurationSeconds,
		"health_failed_endpoints": float64(failedEndpoints), "consecutive_failures": float64(st.ConsecutiveFailures)}

	had := st.Status != deployError
	zero := 0.0
	rep := act.Report{HadOutput: &had, Summary: summary, CostUSD: &zero, Vars: map[string]json.RawMessage{}}
	for _, a := range st.Alerts {
		b, _ := json.Marshal(a)
		rep.Alerts = append(rep.Alerts, b)
	}
	for k, v := range map[string]string{"deploy_status": st.Status, "health_check": st.HealthCheck, "run_url": st.RunURL} {
		b, _ := json.Marshal(v)
		rep.Vars[k] = b
	}
	return rep
}

// deployPreviousFailures reads consecutive_failures from the previous
// state file; an unreadable one counts none.
func deployPreviousFailures(store *state.Store, path string) int {
	if path == "" {
		return 0
	}
	ds, err := store.ReadDomainState(path)
	if err != nil || !ds.Found {
		return 0
	}
	var n int
	if v, ok := ds.Raw["consecutive_failures"]; ok && json.Unmarshal(v, &n) == nil && n > 0 {
		return n
	}
	return 0
}

// deploySleep waits d, watching for the HALT file; false means the wait
// was cut short by the HALT file or the context.
func deploySleep(ctx context.Context, d time.Duration, haltFile string) bool {
	end := time.Now().Add(d)
	for {
		if deployHaltSeen(haltFile) || ctx.Err() != nil {
			return false
		}
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		t := time.NewTimer(min(left, deployHaltPoll))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

func deployHaltSeen(haltFile string) bool {
	if haltFile == "" {
		return false
	}
	_, err := os.Stat(haltFile)
	return err == nil
}

func deployOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func deployList(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// deployDuration shows seconds as "45s", "3m20s".
func deployDuration(secs float64) string {
	return (time.Duration(math.Round(secs)) * time.Second).String()
}
