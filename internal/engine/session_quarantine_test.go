package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/skills"
)

// runQuarantined runs one cycle as a session does, with its quarantine.
func runQuarantined(t *testing.T, dir string, now time.Time, dry bool, q map[string]bool) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), DryRun: dry,
		Registry: skills.Registry(), Out: &out, Quarantined: q})
	if err != nil {
		t.Fatalf("RunCycle: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// ranDomains is what the skills of threeDomains recorded running.
func ranDomains(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ran.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func option(t *testing.T, d *decide.Decision, domain string) decide.Option {
	t.Helper()
	if d == nil {
		t.Fatal("no decision")
	}
	for _, o := range d.Options {
		if o.Domain == domain {
			return o
		}
	}
	t.Fatalf("%s not in the score table: %+v", domain, d.Options)
	return decide.Option{}
}

func TestSeed002_QuarantinedDomainExcludedFromDecide(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	// Without the quarantine the heaviest domain wins.
	res, out := runQuarantined(t, dir, t0, true, nil)
	if res.Decision.Winner == nil || res.Decision.Winner.Domain != "service_health" {
		t.Fatalf("service_health should win unquarantined; got %+v\n%s", res.Decision.Winner, out)
	}

	q := map[string]bool{"service_health": true}
	res, out = runQuarantined(t, dir, t0, false, q)
	if res.Status != StatusCompleted || res.Decision.Winner == nil || res.Decision.Winner.Domain == "service_health" {
		t.Fatalf("a quarantined domain must not win; got %s %+v\n%s", res.Status, res.Decision.Winner, out)
	}
	sh := option(t, res.Decision, "service_health")
	if sh.Excluded != decide.ExcludedQuarantined {
		t.Errorf("service_health excluded = %q, want quarantined", sh.Excluded)
	}
	if top := res.Decision.Options[0]; top.Domain != "service_health" {
		t.Errorf("service_health still scores highest and is shown first; table starts with %s", top.Domain)
	}
	if !strings.Contains(out, "(quarantined)") {
		t.Errorf("the score table does not mark the quarantined domain:\n%s", out)
	}
	if got := ranDomains(t, dir); got != res.Decision.Winner.Domain || res.Domain != got {
		t.Errorf("ran %q, Result.Domain %q, winner %s", got, res.Domain, res.Decision.Winner.Domain)
	}

	// Many cycles later it still never wins, though it is the stalest.
	for i := 1; i <= 4; i++ {
		res, out = runQuarantined(t, dir, t0.Add(time.Duration(i)*2*time.Hour), false, q)
		if res.Domain == "service_health" || strings.Contains(ranDomains(t, dir), "service_health") {
			t.Fatalf("cycle %d ran the quarantined domain\n%s", res.Cycle, out)
		}
	}
}

func TestSeed002_QuarantinedDomainCriticalAlertIsNoShortcut(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/test_coverage.json": `{"status": "degraded", "alerts": [{"severity": "critical", "message": "suite broken"}]}`})
	res, out := runQuarantined(t, dir, t0, true, nil)
	if res.Decision.Guidance != decide.GuidanceCriticalAlert || res.Decision.Winner.Domain != "test_coverage" {
		t.Fatalf("the critical alert should select test_coverage unquarantined; got %+v\n%s", res.Decision, out)
	}
	res, out = runQuarantined(t, dir, t0, false, map[string]bool{"test_coverage": true})
	if res.Decision.Guidance != "" || res.Domain == "test_coverage" {
		t.Fatalf("a quarantined domain's critical alert chose it: guidance %q, ran %q\n%s", res.Decision.Guidance, res.Domain, out)
	}

	// Nor does its critical alert bypass the minimum cycle interval.
	cfg := strings.Replace(threeDomains, `"first_cycle_observe_only": false`, `"first_cycle_observe_only": false, "min_cycle_interval_minutes": 60`, 1)
	write(t, filepath.Join(dir, "config.json"), cfg)
	res, out = runQuarantined(t, dir, t0.Add(10*time.Minute), false, map[string]bool{"test_coverage": true})
	if res.Status != StatusSkipped || res.Reason != ReasonTooSoon {
		t.Fatalf("a quarantined domain's critical alert bypassed the interval: %s %s\n%s", res.Status, res.Reason, out)
	}
	res, out = runQuarantined(t, dir, t0.Add(10*time.Minute), false, nil)
	if res.Reason == ReasonTooSoon {
		t.Fatalf("an unquarantined critical alert should bypass the interval\n%s", out)
	}
}

// oneHeavyOneIdle is a project where a single heavy domain is the only
// work: the weightless one scores below the minimum (0.15 goal + 0.14
// confidence, with no balance term).
const oneHeavyOneIdle = `{
  "domains": {
    "heavy": {"weight": 2.0, "primary_skill": "/heavy"},
    "idle": {"weight": 0, "primary_skill": "/idle"}
  },
  "skills": {"/heavy": {"command": ["/bin/sh", "skill.sh"]}, "/idle": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "scoring": {"balance_enabled": false},
  "safety": {"skill_allowlist": ["/heavy", "/idle"], "first_cycle_observe_only": false}
}`

func TestSeed002_OnlyQuarantinedWorkLeftIsAnIdleCycle(t *testing.T) {
	dir := project(t, oneHeavyOneIdle, map[string]string{"skill.sh": skillScript})
	q := map[string]bool{"heavy": true}

	// A dry run reports it.
	res, out := runQuarantined(t, dir, t0, true, q)
	if res.Status != StatusDryRun || res.Reason != decide.ReasonQuarantined {
		t.Fatalf("dry run: %s %q, want dry_run quarantined\n%s", res.Status, res.Reason, out)
	}
	if !strings.Contains(out, "Would skip: quarantined (heavy would have won") {
		t.Errorf("dry run does not say why it would skip:\n%s", out)
	}

	res, out = runQuarantined(t, dir, t0, false, q)
	if res.Status != StatusSkipped || res.Reason != decide.ReasonQuarantined {
		t.Fatalf("got %s %q, want skipped quarantined\n%s", res.Status, res.Reason, out)
	}
	if res.Decision.QuarantineBlocked != "heavy" || res.Domain != "" || ranDomains(t, dir) != "" {
		t.Errorf("blocked %q, Result.Domain %q, ran %q", res.Decision.QuarantineBlocked, res.Domain, ranDomains(t, dir))
	}
	if !strings.Contains(out, "[Decide] Skipping cycle: quarantined (heavy would have won") {
		t.Errorf("the skip does not name the quarantined domain:\n%s", out)
	}
	// Recorded like the other skips.
	st := loadState(t, dir)
	if st.CycleCount != 1 || len(st.DecisionLog) != 1 {
		t.Fatalf("cycle_count %d, %d log entries: the idle cycle must be recorded", st.CycleCount, len(st.DecisionLog))
	}
	if e := st.DecisionLog[0]; e.Action != "skip" || e.Reason != decide.ReasonQuarantined {
		t.Errorf("entry action %q reason %q, want skip quarantined", e.Action, e.Reason)
	}

	// Unquarantined, the same project runs its work.
	res, out = runQuarantined(t, dir, t0.Add(time.Hour), false, nil)
	if res.Domain != "heavy" {
		t.Fatalf("without the quarantine heavy should run; got %s %q\n%s", res.Status, res.Reason, out)
	}
}

func TestSeed002_QuarantineReasonOnlyWhenTheQuarantineIsWhy(t *testing.T) {
	// The quarantined domain scores below the minimum too: nothing would
	// run without the quarantine either, so the reason stays the scores'.
	cfg := strings.Replace(oneHeavyOneIdle, `"weight": 2.0`, `"weight": 0`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	res, out := runQuarantined(t, dir, t0, false, map[string]bool{"heavy": true})
	if res.Status != StatusSkipped || res.Reason != decide.ReasonBelowMinimum {
		t.Fatalf("got %s %q, want skipped %s\n%s", res.Status, res.Reason, decide.ReasonBelowMinimum, out)
	}
	// A quarantined domain that would have lost to one below the
	// minimum is no reason either (a goal id in the map is not a domain).
	res, out = runQuarantined(t, dir, t0.Add(time.Hour), false, map[string]bool{"idle": false, "no-such-goal": true})
	if res.Reason != decide.ReasonBelowMinimum {
		t.Fatalf("got %q, want %s\n%s", res.Reason, decide.ReasonBelowMinimum, out)
	}
}

const goalProject = `{
  "domains": {
    "api": {"weight": 1.0, "primary_skill": "/api"},
    "docs": {"weight": 1.0, "primary_skill": "/docs"}
  },
  "skills": {"/api": {"command": ["/bin/sh", "skill.sh"]}, "/docs": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/api", "/docs"], "first_cycle_observe_only": false}
}`

func TestSeed002_QuarantinedGoalLeavesGoalContributionAndGoalsMet(t *testing.T) {
	goals := `{"goals": [
	  {"id": "g-met", "title": "met", "status": "active", "progress": 1.0, "domain": "docs"},
	  {"id": "g-api", "title": "api latency", "status": "active", "progress": 0.2, "domain": "api"}
	]}`
	dir := project(t, goalProject, map[string]string{"skill.sh": skillScript, "agent/state/evolve/goals.json": goals})

	res, out := runQuarantined(t, dir, t0, true, nil)
	api := option(t, res.Decision, "api")
	if want := 0.5 * (1 - 0.2) * 0.3; diff(api.Goal, want) > 1e-9 {
		t.Fatalf("api goal term %v, want %v from g-api\n%s", api.Goal, want, out)
	}
	if res.Decision.SkipReason != "" {
		t.Fatalf("g-api is unmet: the cycle must not idle; got %q", res.Decision.SkipReason)
	}

	q := map[string]bool{"g-api": true}
	res, out = runQuarantined(t, dir, t0, true, q)
	api = option(t, res.Decision, "api")
	if want := 0.5 * 0.3; diff(api.Goal, want) > 1e-9 {
		t.Errorf("api goal term %v with g-api quarantined, want the no-goal default %v", api.Goal, want)
	}
	if res.Decision.SkipReason != decide.ReasonGoalsMetIdle {
		t.Fatalf("with g-api quarantined every counted goal is met: want %s, got %q\n%s", decide.ReasonGoalsMetIdle, res.Decision.SkipReason, out)
	}
	res, _ = runQuarantined(t, dir, t0, false, q)
	if res.Reason != decide.ReasonGoalsMetIdle || res.Domain != "" {
		t.Errorf("got %q, ran %q; want goals_met_idle and nothing run", res.Reason, res.Domain)
	}
	for _, g := range res.Goals {
		if g.Quarantined != (g.ID == "g-api") {
			t.Errorf("goal %s Quarantined = %v", g.ID, g.Quarantined)
		}
	}
}

func TestSeed002_QuarantinedDomainAlertDoesNotKeepGoalsMetBusy(t *testing.T) {
	goals := `{"goals": [{"id": "g-met", "title": "met", "status": "active", "progress": 1.0, "domain": "docs"}]}`
	dir := project(t, goalProject, map[string]string{"skill.sh": skillScript, "agent/state/evolve/goals.json": goals,
		"agent/state/api.json": `{"alerts": [{"severity": "warning", "message": "latency up"}]}`})
	res, out := runQuarantined(t, dir, t0, true, nil)
	if res.Decision.SkipReason == decide.ReasonGoalsMetIdle {
		t.Fatalf("an unquarantined alert is work: the cycle must not idle\n%s", out)
	}
	res, out = runQuarantined(t, dir, t0, true, map[string]bool{"api": true})
	if res.Decision.SkipReason != decide.ReasonGoalsMetIdle {
		t.Fatalf("the only alert is a quarantined domain's: want %s, got %q winner %+v\n%s", decide.ReasonGoalsMetIdle, res.Decision.SkipReason, res.Decision.Winner, out)
	}
}

func diff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestSeed002_ResultCarriesGoalProgressBeforeAndAfter(t *testing.T) {
	goals := `{"goals": [
	  {"id": "g-up", "title": "coverage", "status": "active", "progress": 0.2, "metric_command": "echo 0.7", "domain": "api"},
	  {"id": "g-broken", "title": "latency", "status": "active", "progress": 0.4, "metric_command": "echo nope; exit 3"},
	  {"id": "g-done", "title": "docs", "status": "active", "progress": 0.5, "target": 10, "metric_command": "echo 12"},
	  {"id": "g-plain", "title": "plain", "status": "active", "progress": 0.3},
	  {"id": "g-q", "title": "flaky", "status": "active", "progress": 0.6},
	  {"id": "g-old", "title": "old", "status": "completed", "progress": 1.0},
	  {"id": "g-proposed", "title": "later", "status": "proposed"}
	]}`
	dir := project(t, goalProject, map[string]string{"skill.sh": skillScript, "agent/state/evolve/goals.json": goals})

	// A dry run measures nothing: before and after agree.
	res, _ := runQuarantined(t, dir, t0, true, map[string]bool{"g-q": true})
	for _, g := range res.Goals {
		if g.Measured || g.Progress != g.ProgressBefore || g.Status != g.StatusBefore {
			t.Errorf("dry run changed %+v", g)
		}
	}

	res, out := runQuarantined(t, dir, t0, false, map[string]bool{"g-q": true})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s %q\n%s", res.Status, res.Reason, out)
	}
	if !res.At.Equal(t0) {
		t.Errorf("At = %v, want %v", res.At, t0)
	}
	got := map[string]GoalResult{}
	var order []string
	for _, g := range res.Goals {
		got[g.ID] = g
		order = append(order, g.ID)
	}
	if strings.Join(order, ",") != "g-up,g-broken,g-done,g-plain,g-q,g-old" {
		t.Fatalf("goals %v: want the active and completed ones in file order", order)
	}
	want := map[string]GoalResult{
		"g-up":     {ID: "g-up", StatusBefore: "active", Status: "active", ProgressBefore: 0.2, Progress: 0.7, Measured: true},
		"g-broken": {ID: "g-broken", StatusBefore: "active", Status: "active", ProgressBefore: 0.4, Progress: 0.4, Measured: true, MetricFailed: true},
		"g-done":   {ID: "g-done", StatusBefore: "active", Status: "completed", ProgressBefore: 0.5, Progress: 1, Measured: true},
		"g-plain":  {ID: "g-plain", StatusBefore: "active", Status: "active", ProgressBefore: 0.3, Progress: 0.3},
		"g-q":      {ID: "g-q", StatusBefore: "active", Status: "active", ProgressBefore: 0.6, Progress: 0.6, Quarantined: true},
		"g-old":    {ID: "g-old", StatusBefore: "completed", Status: "completed", ProgressBefore: 1, Progress: 1},
	}
	for id, w := range want {
		g := got[id]
		if id == "g-broken" {
			if !strings.Contains(g.MetricError, "exit status 3") {
				t.Errorf("g-broken MetricError = %q, want the exit status", g.MetricError)
			}
			g.MetricError = ""
		}
		if g != w {
			t.Errorf("%s:\n got %+v\nwant %+v", id, g, w)
		}
	}
	// The after values are what goals.json now holds.
	var gs struct {
		Goals []struct {
			ID       string  `json:"id"`
			Status   string  `json:"status"`
			Progress float64 `json:"progress"`
		} `json:"goals"`
	}
	readJSON(t, filepath.Join(dir, "agent/state/evolve/goals.json"), &gs)
	for _, g := range gs.Goals {
		if r, ok := got[g.ID]; ok && (r.Progress != g.Progress || r.Status != g.Status) {
			t.Errorf("%s: Result says %s %v, goals.json %s %v", g.ID, r.Status, r.Progress, g.Status, g.Progress)
		}
	}
}

func TestSeed002_ResultGoalsAbsentBeforeTheStateIsLoaded(t *testing.T) {
	dir := project(t, goalProject, map[string]string{"skill.sh": skillScript, "agent/safety/HALT": "stop",
		"agent/state/evolve/goals.json": `{"goals": [{"id": "g", "status": "active", "progress": 0.5}]}`})
	res, out := runQuarantined(t, dir, t0, false, nil)
	if res.Status != StatusHalted {
		t.Fatalf("want halted, got %s\n%s", res.Status, out)
	}
	if res.Goals != nil {
		t.Errorf("a cycle that never loaded goals.json reports goals: %+v", res.Goals)
	}
}
