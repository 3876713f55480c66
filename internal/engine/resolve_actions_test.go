package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/state"
)

// A skill reports two actions, then, a cycle later, that one of them no
// longer applies ("resolved"): the engine completes that pending item —
// and only the domain's own, not another domain's or a person's item with
// the same title — counts it in metrics.json, and the scorecard's
// resolution rate reads it.
func TestReflectReportResolvesItsEarlierAction(t *testing.T) {
	const vet = "Fix 1 go vet finding in a.go: undefined: fmt"
	dir := project(t, `{
  "domains": {"code_quality": {"weight": 1, "primary_skill": "/scan", "fallback": true}},
  "skills": {"/scan": {"command": ["/bin/sh", "scan.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/scan"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`, map[string]string{"scan.sh": `#!/bin/sh
printf '{"last_run": "%s", "status": "ok"}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
if [ "$OODA_CYCLE" = 1 ]; then
  cat > "$OODA_REPORT" <<'J'
{"summary": "2 findings", "actions": [
  {"title": "Fix 1 go vet finding in a.go: undefined: fmt", "reach": 1, "impact": 2, "confidence": 0.9, "effort": 1},
  {"title": "Fix 1 gofmt finding in b.go", "reach": 1, "impact": 0.5, "confidence": 0.9, "effort": 0.5}]}
J
else
  cat > "$OODA_REPORT" <<'J'
{"summary": "1 fixed", "resolved": [{"title": "fix 1 go vet finding in a.go - undefined: FMT", "reason": "go vet\u001b[2J no longer reports it"}, "Fix something else"]}
J
fi
`})
	queuePath := filepath.Join(dir, "agent/state/evolve/action_queue.json")
	_, out := run(t, dir, t0, false)
	if !strings.Contains(out, "[Reflect] Actions: 2 extracted") {
		t.Fatalf("cycle 1:\n%s", out)
	}
	var q state.ActionQueue
	readJSON(t, queuePath, &q)
	if len(q.Pending) != 2 || q.Pending[0].Title != vet || q.Pending[0].SourceDomain != "code_quality" {
		t.Fatalf("queue after cycle 1: %s", aqRaw(t, queuePath))
	}
	vetID := q.Pending[0].ID
	// Another domain's item and a person's item with the same title.
	q.Pending = append(q.Pending,
		state.Action{ID: "OTHER-1", Title: vet, SourceDomain: "security", Status: "pending"},
		state.Action{ID: "HUMAN-1", Title: vet, Status: "pending"})
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	write(t, queuePath, string(b))

	_, out = run(t, dir, t0.Add(time.Hour), false)
	if !strings.Contains(out, "[Reflect] Actions: 1 resolved ("+vetID+").") {
		t.Fatalf("cycle 2 does not say it resolved %s:\n%s", vetID, out)
	}
	var after struct {
		Pending   []state.Action `json:"pending"`
		Completed []struct {
			ID            string `json:"id"`
			Status        string `json:"status"`
			Resolution    string `json:"resolution"`
			StatusHistory []struct {
				Status, At, Reason string
			} `json:"status_history"`
		} `json:"completed"`
	}
	readJSON(t, queuePath, &after)
	// Pending is re-sorted by priority when saved: compared as a set.
	if ids := aqPendingIDs(after.Pending); !slices.Equal(slices.Sorted(slices.Values(ids)), []string{q.Pending[1].ID, "HUMAN-1", "OTHER-1"}) {
		t.Fatalf("pending after cycle 2 = %v\n%s", ids, aqRaw(t, queuePath))
	}
	if len(after.Completed) != 1 {
		t.Fatalf("completed after cycle 2:\n%s", aqRaw(t, queuePath))
	}
	c := after.Completed[0]
	if c.ID != vetID || c.Status != "completed" || c.Resolution != "no_longer_relevant" || len(c.StatusHistory) != 1 ||
		c.StatusHistory[0].At != "2026-04-14T10:00:00Z" ||
		c.StatusHistory[0].Reason != "resolved by /scan (code_quality) in cycle 2: go vet [2J no longer reports it" {
		t.Fatalf("completed item %+v", c)
	}

	var m state.Metrics
	readJSON(t, filepath.Join(dir, "agent/state/evolve/metrics.json"), &m)
	if m.Counters.ActionsAdded != 2 || m.Counters.ActionsResolved != 1 {
		t.Fatalf("metrics counters: added %d, resolved %d; want 2 and 1", m.Counters.ActionsAdded, m.Counters.ActionsResolved)
	}
	cfg, err := config.Load(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := present.BuildScorecard(cfg, state.New(dir), 0)
	if sc.ActionResolutionRatePct == nil || *sc.ActionResolutionRatePct != 50 {
		t.Fatalf("scorecard action_resolution_rate_pct = %v, want 50", sc.ActionResolutionRatePct)
	}
	// The report had output: the cycle is not futile.
	if st := loadState(t, dir); st.DecisionLog[1].ResultType == "futile" {
		t.Fatalf("cycle 2 recorded as futile: %+v", st.DecisionLog[1])
	}
}

func aqRaw(t *testing.T, p string) string {
	t.Helper()
	b, _ := os.ReadFile(p)
	return string(b)
}

func aqPendingIDs(items []state.Action) []string {
	var out []string
	for _, a := range items {
		out = append(out, a.ID)
	}
	return out
}
