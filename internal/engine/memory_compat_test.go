package engine

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// 6-C4 after a switch: the week's contrarian checks are the ones the
// original recorded as a decision-log entry's contrarian_check object (in
// either of its descriptions of it, or with a member of the wrong type)
// plus the ones this program recorded in state.json's contrarian_checks.
// An entry of this program carries both and counts once; a null
// contrarian_check, or one outside the week, counts nothing.
func TestStep6C4_EpisodeCountsTheOriginalsContrarianChecks(t *testing.T) {
	st := `{
  "schema_version": "1.2.0",
  "cycle_count": 25,
  "last_cycle": "2026-04-13T08:00:00Z",
  "contrarian_checks": ["2026-03-30T09:00:00Z", "2026-04-09T09:00:00Z", "2026-04-11T09:00:00Z"],
  "decision_log": [
    {"cycle": 21, "timestamp": "2026-04-07T10:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "contrarian_check": {"argument": "If backlog were chosen instead of service_health ...", "affected_domain": "backlog", "score_adjustment": 1.0}},
    {"cycle": 22, "timestamp": "2026-04-08T10:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "contrarian_check": null},
    {"cycle": 23, "timestamp": "2026-04-09T09:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "had_output": true, "chain_executed": ["/scan-health"], "chain_count": 1,
     "contrarian_check": {"argument": "backlog challenges service_health", "affected_domain": "backlog", "score_adjustment": 1, "dominant_domain": "service_health", "dominant_frequency": 5, "counter_domain": "backlog", "validity": "plausible", "adjustment_applied": {"backlog": 1}}},
    {"cycle": 24, "timestamp": "2026-04-10T10:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "contrarian_check": {"dominant_domain": "service_health", "dominant_frequency": 6, "counter_domain": "test_coverage", "argument": "...", "validity": "plausible", "adjustment_applied": {"test_coverage": 1.0}}},
    {"cycle": 25, "timestamp": "2026-04-12T10:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "contrarian_check": {"argument": ["not", "a", "string"], "affected_domain": "backlog", "score_adjustment": "1.0"}},
    {"cycle": 26, "timestamp": "2026-04-13T08:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success",
     "contrarian_check": {"argument": "next week's", "affected_domain": "backlog", "score_adjustment": 1.0}}
  ]
}`
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript, "agent/state/evolve/state.json": st})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s (%s)\n%s", res.Status, res.Reason, out)
	}
	var eps state.Episodes
	readJSON(t, dir+"/agent/state/evolve/episodes.json", &eps)
	if len(eps.Episodes) != 1 || eps.Episodes[0].Week() != "EP-2026-W15" {
		t.Fatalf("episodes = %+v\n%s", eps.Episodes, out)
	}
	// Cycles 21, 23 (once), 24 and 25, and the check of April 11th that
	// found no dominant domain and so left no entry object.
	if n := eps.Episodes[0].ContrarianChecks; n != 5 {
		t.Errorf("EP-2026-W15 contrarian_checks = %d, want 5", n)
	}
}
