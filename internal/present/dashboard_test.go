package present

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

const dashConfig = `{
  "mission": "Keep the example service healthy, its tests green and its latency within the budget agreed with customers.",
  "domains": {
    "service_health": {"weight": 2.0, "primary_skill": "/x", "fallback": true},
    "customer_facing_latency_budget": {"weight": 1.0, "primary_skill": "/x"},
    "test_coverage": {"weight": 1.0, "primary_skill": "/x"},
    "docs": {"weight": 0.5, "primary_skill": "/x", "status": "disabled"}
  },
  "skills": {"/x": {"command": ["/bin/true"]}},
  "safety": {"skill_allowlist": ["/x"], "max_silent_failures": 4},
  "saturation": {"halt_threshold": 12},
  "progressive_complexity": {"current_level": 2},
  "cost": {"daily_limit_usd": 5, "warning_threshold_pct": 80}
}
`

var dashNow = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// dashFiles is a project after a dozen cycles: every file the dashboard
// shows, written as the engine writes it.
var dashFiles = map[string]string{
	"agent/state/evolve/state.json": `{"cycle_count": 13, "last_cycle": "2026-03-02T09:00:00Z",
	  "consecutive_observe_only_cycles": 2, "consecutive_silent_failures": 1,
	  "domain_last_run": {"test_coverage": "2026-02-20T08:00:00Z"},
	  "decision_log": [
	    {"cycle": 10, "timestamp": "2026-03-01T21:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/x", "result": "success", "result_type": "pr_created", "summary": "an older report", "chain_executed": []},
	    {"cycle": 11, "timestamp": "2026-03-02T03:00:00Z", "action": "execute", "selected_domain": "customer_facing_latency_budget", "selected_skill": "/x", "result": "error", "result_type": "error", "summary": "p95 latency probe failed: connection refused by the load balancer in front of the staging cluster", "chain_executed": []},
	    {"cycle": 12, "timestamp": "2026-03-02T09:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/x", "result": "success", "result_type": "futile", "summary": "all endpoints answer;\n p95 410ms", "chain_executed": []},
	    {"cycle": 13, "timestamp": "2026-03-02T10:00:00Z", "action": "skip", "reason": "too_soon", "chain_executed": []}
	  ]}`,
	"agent/state/evolve/outcomes.json": `{"entries": [
	    {"cycle_id": 4, "timestamp": "2026-02-20T08:00:00Z", "domain": "test_coverage", "result": "success", "result_type": "action_extracted", "quality_multiplier": 0.2, "pr_number": null},
	    {"cycle_id": 12, "timestamp": "2026-03-02T09:00:00Z", "domain": "service_health", "result": "success", "result_type": "futile", "quality_multiplier": 0, "pr_number": null}
	  ]}`,
	"agent/state/evolve/confidence.json": `{"service_health": 0.81, "customer_facing_latency_budget": 0.45}`,
	"agent/state/evolve/action_queue.json": `{"pending": [
	    {"id": "a1", "title": "Tidy the README", "rice_score": 12},
	    {"id": "a2", "title": "Fix the flaky retry test in the payment client", "rice_score": 20, "effective_rice": 42},
	    {"id": "a3", "title": "", "rice_score": 30},
	    {"id": "a4", "title": "Drop the unused feature flag", "rice_score": 5}
	  ], "in_progress": [], "completed": []}`,
	"agent/state/evolve/memos.json": `{"score_adjustments": {"test_coverage": 3, "service_health": -2.5},
	  "interventions": [{"domain": "service_health", "delta": -10, "type": "monopoly_breaker", "reason": "Selected 3 consecutive cycles", "created_at_cycle": 12, "expires_after_cycles": 1, "applied_count": 0}],
	  "history": [], "last_memo": null}`,
	"agent/state/evolve/cost_ledger.json":             `{"date": "2026-03-02", "entries": [{"timestamp": "2026-03-02T09:00:00Z", "cycle_id": 12, "estimated_usd": 4.25}], "total_estimated_usd": 4.25}`,
	"agent/state/service_health.json":                 `{"last_run": "2026-03-02T09:00:00Z", "status": "healthy", "alerts": []}`,
	"agent/state/customer_facing_latency_budget.json": `{"last_run": "2026-03-02T03:00:00Z", "status": "critical", "alerts": [{"severity": "critical", "message": "p95 over budget"}, {"severity": "warning", "message": "slow"}]}`,
}

// dashProject writes config.json and files into a new project and
// returns the dashboard of it at dashNow.
func dashProject(t *testing.T, files map[string]string) (DashboardDoc, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", dashConfig)
	for rel, body := range files {
		write(rel, body)
	}
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(dir)
	st.MaxRead = cfg.Safety.MaxReadBytes()
	return Dashboard(cfg, st, dashNow), dir
}

func render(t *testing.T, doc DashboardDoc, s Style) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderDashboard(&b, doc, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkWidth fails on a line wider than width.
func checkWidth(t *testing.T, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := DisplayWidth(l); w > width {
			t.Errorf("line %d is %d columns wide, over %d: %q", i+1, w, width, l)
		}
	}
}

func TestDashboardNormal(t *testing.T) {
	doc, _ := dashProject(t, dashFiles)
	if len(doc.Corrupt) != 0 {
		t.Fatalf("corrupt: %v", doc.Corrupt)
	}
	out := render(t, doc, Style{})
	golden(t, "dashboard_normal", out)
	// A pipe cuts nothing: the whole mission, summary and titles.
	for _, want := range []string{
		"Keep the example service healthy, its tests green and its latency within the budget agreed with customers.",
		"p95 latency probe failed: connection refused by the load balancer in front of the staging cluster",
		"Fix the flaky retry test in the payment client (RICE 42)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("piped dashboard lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "…") || strings.Contains(out, "\x1b") {
		t.Errorf("piped dashboard cut or painted:\n%s", out)
	}
}

// The values behind the text, as --json gives them.
func TestDashboardData(t *testing.T) {
	doc, _ := dashProject(t, dashFiles)
	byName := map[string]DashboardDomain{}
	for _, d := range doc.Domains {
		byName[d.Name] = d
	}
	sh := byName["service_health"]
	// The newest decision-log entry that ran the domain, not the older one
	// nor the skip after it; its summary on one line.
	if r := sh.LastResult; r == nil || r.Cycle != 12 || dashDeref(r.ResultType) != "futile" || dashDeref(r.Summary) != "all endpoints answer; p95 410ms" {
		t.Errorf("service_health last result: %+v", r)
	}
	// Older than the decision log: outcomes.json's record, no summary.
	if r := byName["test_coverage"].LastResult; r == nil || r.Cycle != 4 || dashDeref(r.ResultType) != "action_extracted" || r.Summary != nil {
		t.Errorf("test_coverage last result: %+v", r)
	}
	if d := byName["docs"]; d.LastResult != nil || d.Status != "disabled" {
		t.Errorf("docs: %+v", d)
	}
	if d := byName["customer_facing_latency_budget"]; d.Alerts != 2 || d.CriticalAlerts != 1 || d.Status != "critical" {
		t.Errorf("latency: %+v", d)
	}
	if b := doc.Breakers; b.SilentFailures != (DashboardCounter{1, 4}) || b.Saturation != (DashboardCounter{2, 12}) {
		t.Errorf("breakers: %+v", b)
	}
	var ids []string
	for _, a := range doc.Actions.TopItems {
		ids = append(ids, a.ID)
	}
	if doc.Actions.Pending != 4 || strings.Join(ids, ",") != "a2,a3,a1" || doc.Actions.Top == nil || doc.Actions.Top.ID != "a2" {
		t.Errorf("actions: %+v", doc.Actions)
	}
	if m := doc.Memos; len(m.Pending) != 2 || m.Pending[0] != (DashboardMemo{"service_health", -2.5}) || len(m.Interventions) != 1 || m.Interventions[0].CyclesLeft != 1 {
		t.Errorf("memos: %+v", m)
	}
	if doc.Cost.TodayUSD != 4.25 || doc.LevelName != "Full observation" {
		t.Errorf("cost %+v, level %q", doc.Cost, doc.LevelName)
	}
	// The document keeps every key of CLI.md's shape.
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cycle_count", "last_cycle", "halt", "level", "mission", "domains", "actions", "saturation", "cost", "quarantined"} {
		if _, ok := m[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
}

func TestDashboardHalted(t *testing.T) {
	files := map[string]string{}
	for k, v := range dashFiles {
		files[k] = v
	}
	files["agent/safety/HALT"] = "4 consecutive skill executions failed. The last: /x of domain customer_facing_latency_budget, exit status 1 (log agent/state/evolve/runs/11-x.log). Unattended operation paused for human review. Delete this file to resume.\ncreated_at: 2026-03-02T03:00:00Z\n"
	doc, _ := dashProject(t, files)
	out := render(t, doc, Style{Width: 80})
	golden(t, "dashboard_halted", out)
	checkWidth(t, out, 80)
	if !strings.HasPrefix(out, "HALT: ACTIVE — 4 consecutive") {
		t.Errorf("first line:\n%s", out)
	}
	// The reason is wrapped, not cut: every word of it is shown.
	joined := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(joined, "Delete this file to resume.; created_at: 2026-03-02T03:00:00Z") && !strings.Contains(joined, "Delete this file to resume. created_at: 2026-03-02T03:00:00Z") {
		t.Errorf("the HALT reason lost words:\n%s", out)
	}
}

// Every file the dashboard shows, corrupt: each is named, the dashboard
// renders their defaults, and nothing is moved or rewritten.
func TestDashboardCorruptFiles(t *testing.T) {
	files := map[string]string{
		"agent/state/evolve/state.json":        `{"cycle_count": 7`,
		"agent/state/evolve/confidence.json":   `[`,
		"agent/state/evolve/action_queue.json": `not json`,
		"agent/state/evolve/memos.json":        `{"interventions": 3`,
		"agent/state/evolve/outcomes.json":     `{`,
		"agent/state/evolve/cost_ledger.json":  `{"date": `,
		"agent/state/service_health.json":      `[1,`,
		// Not shown by the dashboard: not named by it.
		"agent/state/evolve/goals.json": `{`,
	}
	doc, dir := dashProject(t, files)
	var rel []string
	for _, p := range doc.Corrupt {
		r, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	want := "agent/state/evolve/state.json agent/state/evolve/confidence.json agent/state/evolve/memos.json agent/state/evolve/action_queue.json agent/state/evolve/outcomes.json agent/state/evolve/cost_ledger.json agent/state/service_health.json"
	if got := strings.Join(rel, " "); got != want {
		t.Errorf("corrupt files named:\n got %s\nwant %s", got, want)
	}
	golden(t, "dashboard_corrupt", render(t, doc, Style{}))
	for rel, body := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(b) != body {
			t.Errorf("%s changed: %q, %v", rel, b, err)
		}
	}
}

// A project that never ran a cycle: no state at all.
func TestDashboardEmptyProject(t *testing.T) {
	doc, dir := dashProject(t, nil)
	if len(doc.Corrupt) != 0 {
		t.Errorf("a missing file is not corrupt: %v", doc.Corrupt)
	}
	golden(t, "dashboard_empty", render(t, doc, Style{}))
	if _, err := os.Stat(filepath.Join(dir, "agent")); !os.IsNotExist(err) {
		t.Errorf("the dashboard created agent/: %v", err)
	}
}

func TestDashboardWidths(t *testing.T) {
	doc, _ := dashProject(t, dashFiles)
	for _, c := range []struct {
		name  string
		width int
	}{{"dashboard_80", 80}, {"dashboard_120", 120}, {"dashboard_50", 50}} {
		out := render(t, doc, Style{Terminal: true, Width: c.width})
		golden(t, c.name, out)
		checkWidth(t, out, c.width)
		if !strings.HasPrefix(out, "HALT: not active\n") {
			t.Errorf("%s: HALT is not the first line:\n%s", c.name, out)
		}
	}
	// At 120 the table keeps the last run's instant; at 80 only its age.
	if out := render(t, doc, Style{Width: 120}); !strings.Contains(out, "2026-03-02T09:00:00Z (3.0h ago)") {
		t.Errorf("120 columns lack the instant:\n%s", out)
	}
	if out := render(t, doc, Style{Width: 80}); strings.Contains(out, "2026-03-02T09:00:00Z (3.0h ago)") || !strings.Contains(out, "  DOMAIN ") {
		t.Errorf("80 columns: the table or its short form is wrong:\n%s", out)
	}
	// Below 60 columns there is no table.
	if out := render(t, doc, Style{Width: 50}); strings.Contains(out, "DOMAIN") {
		t.Errorf("50 columns still draw the table:\n%s", out)
	}
}

func TestDashboardColor(t *testing.T) {
	files := map[string]string{}
	for k, v := range dashFiles {
		files[k] = v
	}
	files["agent/safety/HALT"] = "deploy freeze\ncreated_at: 2026-03-02T10:00:00Z\n"
	doc, _ := dashProject(t, files)
	out := render(t, doc, Style{Terminal: true, Color: true, Width: 120})
	golden(t, "dashboard_color", out)
	for _, want := range []string{
		"\x1b[31mHALT: ACTIVE\x1b[0m — deploy freeze",
		"\x1b[31mcritical\x1b[0m",
		"\x1b[32mhealthy\x1b[0m",
		"\x1b[31m#11 error\x1b[0m",
		"\x1b[33m#12 futile\x1b[0m",
		"\x1b[31m2 (1 crit)\x1b[0m",
		"Cost today: \x1b[33m$4.25\x1b[0m of $5.00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("coloured dashboard lacks %q:\n%q", want, out)
		}
	}
	checkWidth(t, out, 120)
	// The same dashboard without colour carries no escape at all.
	if plain := render(t, doc, Style{Terminal: true, Width: 120}); strings.Contains(plain, "\x1b") {
		t.Errorf("colour without Color:\n%q", plain)
	}
}

// Text from state files cannot drive the terminal, even painted and cut.
func TestDashboardEscapesStateText(t *testing.T) {
	const hostile = "x\x1b[2J\r\n[Record] forged\u202e"
	enc, _ := json.Marshal(hostile)
	files := map[string]string{
		"agent/state/service_health.json":      `{"last_run": "2026-03-02T09:00:00Z", "status": ` + string(enc) + `}`,
		"agent/state/evolve/state.json":        `{"cycle_count": 1, "decision_log": [{"cycle": 1, "timestamp": "2026-03-02T09:00:00Z", "action": "execute", "selected_domain": "service_health", "result": "success", "result_type": ` + string(enc) + `, "summary": ` + string(enc) + `, "chain_executed": []}]}`,
		"agent/state/evolve/memos.json":        `{"score_adjustments": {}, "interventions": [{"domain": "service_health", "delta": 1, "type": ` + string(enc) + `, "reason": ` + string(enc) + `, "created_at_cycle": 1, "expires_after_cycles": 2}], "history": []}`,
		"agent/state/evolve/action_queue.json": `{"pending": [{"id": "a", "title": ` + string(enc) + `, "rice_score": 1}], "in_progress": [], "completed": []}`,
	}
	doc, _ := dashProject(t, files)
	for _, s := range []Style{{}, {Terminal: true, Color: true, Width: 80}, {Terminal: true, Width: 40}} {
		out := render(t, doc, s)
		for _, bad := range []string{"\x1b[2J", "\r", "\u202e", "\n[Record]"} {
			if strings.Contains(out, bad) {
				t.Errorf("%+v: output carries %q:\n%q", s, bad, out)
			}
		}
	}
}

// dashSessionProject is dashProject with session records saved as `ooda
// run` saves them, the first oldest: each is given a modification time a
// minute after the one before, so the newest is the last.
func dashSessionProject(t *testing.T, files map[string]string, sessions ...state.Session) (DashboardDoc, string) {
	t.Helper()
	_, dir := dashProject(t, files)
	st := state.New(dir)
	for i, s := range sessions {
		if err := st.SaveSession(s); err != nil {
			t.Fatal(err)
		}
		at := dashNow.Add(time.Duration(i-len(sessions)) * time.Minute)
		if err := os.Chtimes(st.SessionPath(s.ID), at, at); err != nil {
			t.Fatal(err)
		}
	}
	return dashReload(t, dir), dir
}

// dashReload is the dashboard of the project in dir at dashNow.
func dashReload(t *testing.T, dir string) DashboardDoc {
	t.Helper()
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(dir)
	st.MaxRead = cfg.Safety.MaxReadBytes()
	return Dashboard(cfg, st, dashNow)
}

// dashRunning is a session in its fifth iteration: the latency domain
// oscillated and is quarantined, two findings stagnated and are
// deferred, one is still open and one was resolved.
func dashRunning() state.Session {
	return state.Session{
		ID: "20260302T070000Z", StartedAt: "2026-03-02T07:00:00Z", UpdatedAt: "2026-03-02T11:00:00Z",
		Status: state.SessionRunning, Iteration: 5, MaxIterations: 100,
		Quarantined: []string{"customer_facing_latency_budget"},
		Findings: map[string]state.SessionFinding{
			"action:a4":                     {Kind: "action", Summary: "Drop the unused feature flag", Status: state.FindingDeferred, FirstSeen: 0, LastSeen: 5, Consecutive: 5, DeferredAt: 3},
			"gap:flaky_retry_test":          {Kind: "gap", Summary: "no skill fixes the flaky retry\n test", Status: state.FindingDeferred, FirstSeen: 1, LastSeen: 5, Consecutive: 5, DeferredAt: 4},
			"action:a2":                     {Kind: "action", Summary: "Fix the flaky retry test in the payment client", Status: state.FindingOpen, FirstSeen: 4, LastSeen: 5, Consecutive: 2},
			"alert:service_health:3f9a01c2": {Kind: "alert", Summary: "p95 over budget", Status: state.FindingResolved, FirstSeen: 0, LastSeen: 2, ResolvedAt: 3},
		},
		Targets: map[string]state.SessionTarget{
			"customer_facing_latency_budget": {Kind: state.KindDomain, LastResult: state.ResultQuarantined, Transitions: 3, LastCycle: 11},
		},
		DetermineLog: []state.DetermineEntry{
			{Iteration: 4, Cycle: 12, Result: "continue", NetProgress: 1, Resolved: 1, DeferredCount: 2, DeferredNow: 1, Remaining: 1, Reason: "work remains: 1 finding unresolved", Timestamp: "2026-03-02T10:00:00Z"},
			{Iteration: 5, Cycle: 13, Result: "continue", NetProgress: -1, New: 1, DeferredCount: 2, Remaining: 1, Reason: "work remains: 1 finding unresolved", Timestamp: "2026-03-02T11:00:00Z"},
		},
		NoProgressStreak: 1, LastNetProgress: -1,
	}
}

// dashStagnated is dashRunning ended by the judge: only deferred
// findings remained (condition D).
func dashStagnated() state.Session {
	s := dashRunning()
	s.Status, s.StopReason, s.EndedAt, s.Iteration = state.SessionStopped, "stopped_stagnation", "2026-03-02T11:30:00Z", 6
	s.Findings["action:a2"] = state.SessionFinding{Kind: "action", Summary: "Fix the flaky retry test in the payment client", Status: state.FindingDeferred, FirstSeen: 4, LastSeen: 6, Consecutive: 3, DeferredAt: 6}
	s.DetermineLog = append(s.DetermineLog, state.DetermineEntry{Iteration: 6, Cycle: 14, Result: "done", DeferredCount: 3, DeferredNow: 1, StagnationDetected: true, StopReason: "stopped_stagnation", Reason: "stagnation: no unresolved finding remains but 1 was deferred this iteration", Timestamp: "2026-03-02T11:30:00Z"})
	return s
}

func TestDashboardSessionRunning(t *testing.T) {
	doc, _ := dashSessionProject(t, dashFiles, dashStagnated(), dashRunning2())
	if len(doc.Corrupt) != 0 {
		t.Fatalf("corrupt: %v", doc.Corrupt)
	}
	s := doc.Session
	if s == nil || s.ID != "20260302T090000Z" || s.Status != "running" || s.Iteration != 5 || s.MaxIterations != 100 || s.StopReason != nil || s.Success {
		t.Fatalf("session: %+v", s)
	}
	// The running session's quarantine applies to `ooda cycle` too: it is
	// the document's quarantined list.
	if strings.Join(doc.Quarantined, ",") != "customer_facing_latency_budget" {
		t.Errorf("quarantined: %q", doc.Quarantined)
	}
	var ids []string
	for _, f := range s.Deferred {
		ids = append(ids, f.ID)
	}
	if strings.Join(ids, " ") != "action:a4 gap:flaky_retry_test" {
		t.Errorf("deferred: %q", ids)
	}
	if j := s.LastJudgment; j == nil || j.Iteration != 5 || j.Result != "continue" || j.NetProgress != -1 || j.New != 1 {
		t.Errorf("last judgment: %+v", j)
	}
	out := render(t, doc, Style{Width: 80})
	golden(t, "dashboard_session_running", out)
	checkWidth(t, out, 80)
	for _, want := range []string{
		"Session: 20260302T090000Z running\n",
		"  Iteration 5 of 100; started 2026-03-02T09:00:00Z, updated 2026-03-02T11:00:00Z\n",
		"  Quarantined: customer_facing_latency_budget\n",
		"    gap:flaky_retry_test: no skill fixes the flaky retry test\n",
		"  Last judgment: iteration 5, continue, net progress -1 (0 resolved, 1 new)\n    work remains: 1 finding unresolved\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, out)
		}
	}
	col := render(t, doc, Style{Terminal: true, Color: true, Width: 120})
	golden(t, "dashboard_session_color", col)
	checkWidth(t, col, 120)
	for _, want := range []string{
		"Session: 20260302T090000Z \x1b[32mrunning\x1b[0m\n",
		"  Quarantined: \x1b[33mcustomer_facing_latency_budget\x1b[0m\n",
		"  Deferred: \x1b[33m2 findings\x1b[0m",
		"\x1b[33mnet progress -1\x1b[0m",
	} {
		if !strings.Contains(col, want) {
			t.Errorf("coloured dashboard lacks %q:\n%q", want, col)
		}
	}
	narrow := render(t, doc, Style{Terminal: true, Width: 50})
	checkWidth(t, narrow, 50)
	if !strings.Contains(narrow, "Session: 20260302T090000Z running\n") {
		t.Errorf("50 columns lost the session line:\n%s", narrow)
	}
}

// dashRunning2 is dashRunning started later under another id: the
// session after the one that stagnated.
func dashRunning2() state.Session {
	s := dashRunning()
	s.ID, s.StartedAt = "20260302T090000Z", "2026-03-02T09:00:00Z"
	return s
}

// A session the judge stopped for stagnation is shown as stopped, its
// reason said to be no success, and its quarantine as ended: the
// document's quarantined list, which `ooda cycle` follows, is empty.
func TestDashboardSessionStagnation(t *testing.T) {
	doc, _ := dashSessionProject(t, dashFiles, dashRunning2(), dashStagnated())
	s := doc.Session
	if s == nil || s.ID != "20260302T070000Z" || s.Status != "stopped" || s.Success || s.StopReason == nil || *s.StopReason != "stopped_stagnation" {
		t.Fatalf("session: %+v", s)
	}
	if len(doc.Quarantined) != 0 || strings.Join(s.Quarantined, ",") != "customer_facing_latency_budget" {
		t.Errorf("quarantined: document %q, session %q", doc.Quarantined, s.Quarantined)
	}
	if len(s.Deferred) != 3 {
		t.Errorf("deferred: %+v", s.Deferred)
	}
	out := render(t, doc, Style{Width: 80})
	golden(t, "dashboard_session_stopped", out)
	checkWidth(t, out, 80)
	for _, want := range []string{
		"Session: 20260302T070000Z stopped\n  Stop reason: stopped_stagnation (not a success)\n",
		"  Iteration 6 of 100; started 2026-03-02T07:00:00Z, ended 2026-03-02T11:30:00Z\n",
		"  Quarantined until it ended: customer_facing_latency_budget\n",
		"  Last judgment: iteration 6, done, net progress 0 (0 resolved, 0 new)\n    stagnation:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, out)
		}
	}
	col := render(t, doc, Style{Terminal: true, Color: true, Width: 200})
	if !strings.Contains(col, "Session: 20260302T070000Z \x1b[33mstopped\x1b[0m\n") {
		t.Errorf("a stagnation stop is painted as a success:\n%q", col)
	}
}

// A record that claims "done" for a stop that is not a success (written
// by hand, or by an older or broken run) is still shown as stopped.
func TestDashboardSessionDoneClaimNotSuccess(t *testing.T) {
	_, dir := dashProject(t, dashFiles)
	rec := dashStagnated()
	rec.Status = state.SessionDone
	st := state.New(dir)
	if err := st.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	doc := dashReload(t, dir)
	if s := doc.Session; s == nil || s.Status != "stopped" || s.Success {
		t.Fatalf("session: %+v", s)
	}
	if out := render(t, doc, Style{}); !strings.Contains(out, "Session: 20260302T070000Z stopped\n  Stop reason: stopped_stagnation (not a success)\n") {
		t.Errorf("shown as:\n%s", out)
	}
	// A success is shown as one.
	rec.StopReason = "done_no_work"
	if err := st.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	doc = dashReload(t, dir)
	if s := doc.Session; s == nil || s.Status != "done" || !s.Success {
		t.Fatalf("session: %+v", s)
	}
	if out := render(t, doc, Style{}); !strings.Contains(out, "Session: 20260302T070000Z done\n  Stop reason: done_no_work\n") {
		t.Errorf("shown as:\n%s", out)
	}
}

// A project that never ran a session shows nothing of sessions: the
// dashboard is the one it always was, and --json has "session": null.
func TestDashboardNoSession(t *testing.T) {
	doc, _ := dashProject(t, dashFiles)
	if doc.Session != nil || len(doc.Quarantined) != 0 {
		t.Fatalf("session %+v, quarantined %q", doc.Session, doc.Quarantined)
	}
	out := render(t, doc, Style{})
	golden(t, "dashboard_normal", out)
	if strings.Contains(out, "Session") {
		t.Errorf("a session line without a session:\n%s", out)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"session":null`) || !strings.Contains(string(b), `"quarantined":[]`) {
		t.Errorf("--json: %s", b)
	}
}

// The newest session record, corrupt: it is named like every corrupt
// file, the dashboard renders without a session, and the file is left
// as it is.
func TestDashboardSessionCorrupt(t *testing.T) {
	_, dir := dashSessionProject(t, dashFiles, dashRunning2())
	st := state.New(dir)
	bad := st.SessionPath("20260302T100000Z")
	if err := os.WriteFile(bad, []byte(`{"id": "20260302T100000Z", "status": "runn`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := dashReload(t, dir)
	if strings.Join(doc.Corrupt, " ") != bad {
		t.Errorf("corrupt: %q, want %q", doc.Corrupt, bad)
	}
	if doc.Session != nil || len(doc.Quarantined) != 0 {
		t.Errorf("session %+v from a corrupt record", doc.Session)
	}
	if out := render(t, doc, Style{}); !strings.HasPrefix(out, "HALT: not active\n") || strings.Contains(out, "Session") {
		t.Errorf("dashboard:\n%s", out)
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"id": "20260302T100000Z", "status": "runn` {
		t.Errorf("the corrupt record changed: %q", b)
	}
	// The sessions directory itself refused (a symlink out of the
	// project): named with the reason.
	if err := os.RemoveAll(st.EvolvePath(state.SessionsDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), st.EvolvePath(state.SessionsDir)); err != nil {
		t.Fatal(err)
	}
	doc = dashReload(t, dir)
	if len(doc.Corrupt) != 1 || !strings.HasPrefix(doc.Corrupt[0], st.EvolvePath(state.SessionsDir)+" (") {
		t.Errorf("corrupt: %q", doc.Corrupt)
	}
}

// Text in a session record cannot drive the terminal or show a secret.
func TestDashboardSessionEscapesText(t *testing.T) {
	const hostile = "x\x1b[2J\r\n[Record] forged\u202e"
	rec := dashRunning()
	rec.Quarantined = []string{hostile}
	rec.Findings["action:\x1b]0;t\x07"] = state.SessionFinding{Kind: hostile, Summary: hostile, Status: state.FindingDeferred}
	rec.DetermineLog[1].Reason = hostile
	rec.DetermineLog[1].Result = hostile
	rec.StartedAt = hostile
	_, dir := dashProject(t, dashFiles)
	if err := state.New(dir).SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	doc := dashReload(t, dir)
	if doc.Session == nil {
		t.Fatal("no session")
	}
	for _, s := range []Style{{}, {Terminal: true, Color: true, Width: 80}, {Terminal: true, Width: 40}} {
		out := render(t, doc, s)
		for _, bad := range []string{"\x1b[2J", "\x1b]", "\x07", "\r", "\u202e", "\n[Record]"} {
			if strings.Contains(out, bad) {
				t.Errorf("%+v: output carries %q:\n%q", s, bad, out)
			}
		}
	}
}
