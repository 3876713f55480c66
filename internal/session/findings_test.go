package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// Seed 003 step 2 counts a finding across iterations: that needs an id
// that is the same each time the same thing is found, whatever the order
// of the files' lists.
func TestSeed003_FindingsHaveStableIDs(t *testing.T) {
	snap := &state.Snapshot{
		ActionQueue: state.ActionQueue{
			Pending:    []state.Action{{ID: "A-2", Title: "Fix login"}, {ID: "A-1", Title: "Add tests"}, {ID: "A-3", Title: "Blocked", Status: "blocked"}, {Title: "no id"}},
			InProgress: []state.Action{{ID: "A-9", Title: "Refactor"}},
			Completed:  []state.Action{{ID: "A-0", Title: "done"}},
		},
		SkillGaps: state.SkillGaps{Gaps: []state.Gap{{Name: "execution_error_scan"}, {ID: "gap-7", Description: "d"}, {Name: "fixed", Resolved: true}, {Name: strings.Repeat("x", 500)}}},
	}
	domains := map[string]state.DomainState{
		"api":  {Alerts: []state.Alert{{Severity: "critical", ID: "disk", Message: "disk full"}, {Severity: "warning", Message: "slow\nresponses"}, {Severity: "info", Message: "fyi"}}},
		"docs": {Alerts: []state.Alert{{Severity: "warning", ID: "stale page"}}},
	}
	got := CollectFindings(snap, domains)
	for _, want := range []string{"action:A-1", "action:A-2", "action:A-9", "gap:execution_error_scan", "gap:gap-7", "alert:api:disk"} {
		if !slices.Contains(ids(got), want) {
			t.Errorf("findings lack %s: %v", want, ids(got))
		}
	}
	for _, f := range got {
		switch {
		case strings.Contains(f.ID, "A-3"), strings.Contains(f.ID, "A-0"), f.ID == "gap:fixed", strings.Contains(f.Summary, "fyi"):
			t.Errorf("not remaining work, yet a finding: %+v", f)
		case len(f.ID) > 120 || strings.ContainsAny(f.ID, " \n"):
			t.Errorf("id not bounded and plain: %q", f.ID)
		case strings.Contains(f.Summary, "\n"):
			t.Errorf("summary on several lines: %q", f.Summary)
		}
	}
	if !slices.IsSorted(ids(got)) || len(got) != 10 {
		t.Fatalf("want 10 findings sorted by id, got %v", ids(got))
	}
	// The same state, its lists in another order: the same ids.
	slices.Reverse(snap.ActionQueue.Pending)
	slices.Reverse(snap.SkillGaps.Gaps)
	slices.Reverse(domains["api"].Alerts)
	if again := CollectFindings(snap, domains); !slices.Equal(ids(again), ids(got)) {
		t.Fatalf("ids changed with the order:\n%v\n%v", ids(got), ids(again))
	}
	// An alert without an id keeps its id while its message is the same.
	domains["api"] = state.DomainState{Alerts: []state.Alert{{Severity: "warning", Message: "slow\nresponses"}}}
	var alertID string
	for _, id := range ids(got) {
		if strings.HasPrefix(id, "alert:api:m-") {
			alertID = id
		}
	}
	if alertID == "" || !slices.Contains(ids(CollectFindings(nil, domains)), alertID) {
		t.Fatalf("alert id without an alert's id is not stable: %q", alertID)
	}
}

func TestSeed003_FindingsOfAHostileStateAreBounded(t *testing.T) {
	var alerts []state.Alert
	for i := range 3000 {
		alerts = append(alerts, state.Alert{Severity: "warning", ID: fmt.Sprintf("a%05d", i), Message: strings.Repeat("m", 10000)})
	}
	got := CollectFindings(nil, map[string]state.DomainState{"api": {Alerts: alerts}})
	if len(got) != state.MaxSessionFindings {
		t.Fatalf("%d findings, want the bound %d", len(got), state.MaxSessionFindings)
	}
	if got[0].ID != "alert:api:a00000" || len(got[0].Summary) > maxSummary {
		t.Fatalf("first finding %q, summary %d bytes", got[0].ID, len(got[0].Summary))
	}
}
