package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/engine"
)

// The original's decision-log entries carry no had_output. Its last
// entry opened PR #29 and fourteen cycles without output are on the
// counter: the first cycle after the switch sees a cycle with output and
// resets the counter (2-A2), where reading only had_output would count a
// fifteenth and halt.
func TestCompatOriginalEntries_SaturationResetByAPR(t *testing.T) {
	dir := fixture(t, "original-entries/pr-created")
	before := load(t, dir, evolve+"/state.json")
	_, out := completed(t, dir, t0, nil)
	if strings.Contains(out, "Saturation halt") {
		t.Fatalf("the cycle that created PR #29 was counted as one without output:\n%s", out)
	}
	after := load(t, dir, evolve+"/state.json")
	if n, _ := after.num("consecutive_observe_only_cycles"); n != 0 {
		t.Errorf("consecutive_observe_only_cycles = %v, want 0 (cycle 152 created a PR)", n)
	}
	sameEntries(t, "state.json decision_log", before.list("decision_log"), after.list("decision_log"))
}

// The same history whose last entry is observe-only halts at once: the
// fifteenth cycle without output, as the original's own next cycle would.
func TestCompatOriginalEntries_SaturationHaltsOnObserveOnly(t *testing.T) {
	dir := fixture(t, "original-entries/pr-created")
	p := filepath.Join(dir, evolve, "state.json")
	b := readFile(t, dir, evolve+"/state.json")
	b = []byte(strings.Replace(strings.Replace(string(b), `"result": "pr_created",
      "pr_number": 29,`, `"result": "observe_only",`, 1), `"risk_tier": 1,`, ``, 1))
	if !strings.Contains(string(b), `"cycle": 152`) || strings.Contains(string(b), "pr_number") {
		t.Fatalf("fixture edit failed:\n%s", b)
	}
	writeFile(t, p, b)
	res, out := cycle(t, dir, t0, nil)
	if res.ExitCode() != 3 || !strings.Contains(out, "Saturation halt: 15 cycles") {
		t.Fatalf("exit %d, want 3 and a saturation halt:\n%s", res.ExitCode(), out)
	}
	halt, err := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if err != nil || !strings.Contains(string(halt), "15 cycles without actionable output") {
		t.Errorf("HALT = %q (%v)", halt, err)
	}
	if res.Status == engine.StatusCompleted {
		t.Errorf("status %s after a saturation halt", res.Status)
	}
}

// The weekly episode counts the contrarian checks the original recorded
// as decision-log entries' contrarian_check objects (either of its
// descriptions), not a null one nor one of another week; and a new
// principle, in a principles.json of evolve's shape, is written in that
// shape, its weeks spelled as the file spells them.
func TestCompatOriginalEntries_EpisodeAndPrinciple(t *testing.T) {
	dir := fixture(t, "original-entries/memory")
	pBefore := load(t, dir, evolve+"/principles.json")
	eBefore := load(t, dir, evolve+"/episodes.json")
	_, out := completed(t, dir, t0, nil)

	eps := load(t, dir, evolve+"/episodes.json")
	sameEntries(t, "episodes.json episodes", eBefore.list("episodes"), eps.list("episodes"))
	var w15 json.RawMessage
	for _, e := range eps.list("episodes") {
		if str(field(e, "id")) == "EP-2026-W15" || str(field(e, "week_year")) == "2026-W15" {
			w15 = e
		}
	}
	if w15 == nil {
		t.Fatalf("no episode for 2026-W15:\n%s\n%s", eps.raw, out)
	}
	var n int
	if err := json.Unmarshal(field(w15, "contrarian_checks"), &n); err != nil || n != 2 {
		t.Errorf("2026-W15 contrarian_checks = %s, want 2 (cycles 36 and 38)", field(w15, "contrarian_checks"))
	}

	ps := load(t, dir, evolve+"/principles.json")
	sameEntries(t, "principles.json principles", pBefore.list("principles"), ps.list("principles"))
	added := ps.list("principles")[len(pBefore.list("principles")):]
	found := false
	for _, e := range added {
		for _, k := range []string{"id", "occurrences", "last_confirmed_at", "last_confirmed_episode"} {
			if field(e, k) != nil {
				t.Errorf("new principle has %s, which the file's entries do not: %s", k, compact(e))
			}
		}
		for _, k := range []string{"text", "confidence", "source_episodes", "created_at", "last_confirmed"} {
			if field(e, k) == nil {
				t.Errorf("new principle lacks %s: %s", k, compact(e))
			}
		}
		if strings.HasPrefix(str(field(e, "text")), "service_health selected 5+ times") {
			found = true
			if got := compact(field(e, "source_episodes")); got != `["2026-W13","2026-W14"]` {
				t.Errorf("source_episodes = %s, want the file's week_year spelling", got)
			}
		}
	}
	if !found {
		t.Errorf("the lesson of W13 and W14 became no principle:\n%s\n%s", ps.raw, out)
	}
}
