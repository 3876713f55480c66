package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// 5-B on the original's gaps: a gap in the state design's shape has no
// name, only an id, and used to get a proposal file named ".md" (an empty
// name, hidden, shared by every such gap); two gaps whose names differ
// only in characters a file name cannot hold shared one proposal, so the
// second was never proposed; and 6-C8's loop-break gap, an alert about
// the loop's own accounting, got a skill proposal.
func TestStep5B_ProposalsOfTheOriginalsGapsAreNamedAndNeverShared(t *testing.T) {
	files := map[string]string{"agent/state/evolve/skill_gaps.json": `{"schema_version": "1.0.0", "gaps": [
  {"id": "gap-001", "description": "No skill to analyze funnel drop-off", "detected_at": "2026-01-15T14:30:00Z",
   "detected_in_cycle": 5, "ooda_phase": "observe", "frequency": 3, "last_seen_cycle": 12,
   "related_domain": null, "proposed_skill": null, "resolved": false, "resolved_at": null, "resolution": null},
  {"description": "No skill to profile memory", "frequency": 4, "resolved": false},
  {"name": "lint/go", "type": "execution_failure", "detail": "vet failed", "frequency": 3, "resolved": false},
  {"name": "lint_go", "type": "execution_failure", "detail": "gofmt failed", "frequency": 3, "resolved": false},
  {"id": "gap-cost-ledger-autopatch-9", "description": "cost_ledger missing 4 entries in range 5..8", "frequency": 4,
   "resolved": false, "type": "learning_loop_break"}
]}`}
	dir := hardProject(t, "", "", skillScript, files)
	_, out := mustComplete(t, dir, t0)
	ents, err := os.ReadDir(filepath.Join(dir, "agent/state/evolve/proposed-skills"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 4 || !slices.Contains(names, "gap-001.md") || !slices.Contains(names, "lint_go.md") {
		t.Fatalf("proposals = %v, want 4: gap-001.md, lint_go.md, one for lint/go, one for the unnamed gap\n%s", names, out)
	}
	// The decision log names what 5-B wrote, as the original's does.
	var st struct {
		Log []struct {
			Proposed []string `json:"proposed_skills_generated"`
		} `json:"decision_log"`
	}
	evolveJSON(t, dir, "state.json", &st)
	if got := st.Log[len(st.Log)-1].Proposed; len(got) != 4 || !slices.Contains(got, "gap-001") {
		t.Errorf("proposed_skills_generated = %v, want the 4 proposals", got)
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".") || strings.Contains(n, "autopatch") {
			t.Errorf("proposal %q: hidden, or for the loop-break gap", n)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/proposed-skills", n))
		if n == "gap-001.md" && !strings.Contains(string(b), "No skill to analyze funnel drop-off") {
			t.Errorf("gap-001.md does not say what the gap is:\n%s", b)
		}
	}
}
