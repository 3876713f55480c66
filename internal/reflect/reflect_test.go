package reflect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

var t0 = time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)

func cfgDomains(names ...string) *config.Config {
	c := config.Default()
	for i, n := range names {
		c.Domains = append(c.Domains, config.Domain{Name: n, Index: i, Weight: 1})
	}
	return c
}

func logOf(domains ...string) []state.DecisionEntry {
	var l []state.DecisionEntry
	for i, d := range domains {
		l = append(l, state.DecisionEntry{Cycle: i + 1, SelectedDomain: d, Action: "execute", Result: "success"})
	}
	return l
}

func TestStep5A_StarvationAndStaleActionGaps(t *testing.T) {
	c := cfgDomains("a", "b", "c")
	log := logOf("a", "b", "a", "b", "a", "b", "a", "b", "a", "b")
	q := state.ActionQueue{Pending: []state.Action{
		{ID: "old", Title: "Old one", ExtractedAt: state.FormatTime(t0.Add(-29 * 24 * time.Hour))},
		{ID: "new", Title: "New one", ExtractedAt: state.FormatTime(t0.Add(-27 * 24 * time.Hour))},
	}}
	gaps := DetectGaps(GapInput{Now: t0, Config: c, CycleCount: 10, Log: log, Queue: q})
	var names []string
	for _, g := range gaps {
		names = append(names, g.Name)
	}
	if strings.Join(names, ",") != "domain_starvation_c,stale_action_old" {
		t.Errorf("gaps = %v", names)
	}
	if gaps := DetectGaps(GapInput{Now: t0, Config: c, CycleCount: 9, Log: log[:9]}); len(gaps) != 0 {
		t.Errorf("starvation needs 10 cycles of history: %v", gaps)
	}
}

func TestStep5B_ProposalText(t *testing.T) {
	p := Proposal(state.Gap{Name: "execution_error_scan", Type: "execution_failure", Detail: "exit status 1", Frequency: 3, FirstSeen: "2026-04-01T00:00:00Z", LastSeen: "2026-04-03T00:00:00Z"}, t0)
	for _, want := range []string{"# Proposed skill: execution_error_scan", "## Background", "## The gap", "exit status 1", "## Suggested OODA phase", "`support`", "## Expected inputs and outputs"} {
		if !strings.Contains(p, want) {
			t.Errorf("proposal lacks %q:\n%s", want, p)
		}
	}
}

func TestStep5C_ConsecutiveSelectionMemos(t *testing.T) {
	c := cfgDomains("a", "b", "c")
	m, r := WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: c, Cycle: 2, CycleCount: 2, Log: logOf("a", "a")})
	if m.ScoreAdjustments["b"] != 0.5 || m.ScoreAdjustments["c"] != 0.5 || m.ScoreAdjustments["a"] != 0 {
		t.Errorf("2 in a row: %v", m.ScoreAdjustments)
	}
	if len(r.Interventions) != 1 || r.Interventions[0].Type != "monopoly_breaker" || r.Interventions[0].Delta != -10 || r.Interventions[0].ExpiresAfterCycles != 1 {
		t.Errorf("monopoly breaker: %+v", r.Interventions)
	}
	m, _ = WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: c, Cycle: 3, CycleCount: 3, Log: logOf("a", "a", "a")})
	if m.ScoreAdjustments["b"] != 1.0 {
		t.Errorf("3 in a row: %v", m.ScoreAdjustments)
	}
	// An active monopoly breaker is not duplicated.
	m2, r2 := WriteMemos(m, MemoInput{Now: t0, Config: c, Cycle: 4, CycleCount: 4, Log: logOf("a", "a", "a", "a")})
	n := 0
	for _, iv := range m2.Interventions {
		if iv.Type == "monopoly_breaker" {
			n++
		}
	}
	if n != 1 || len(r2.Interventions) != 0 {
		t.Errorf("duplicate monopoly breaker: %+v", m2.Interventions)
	}
}

func TestStep5C_SingleDomainGuard(t *testing.T) {
	_, r := WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: cfgDomains("only"), Cycle: 3, CycleCount: 3, Log: logOf("only", "only", "only")})
	if len(r.Interventions) != 0 {
		t.Errorf("one domain has nothing to rotate to: %+v", r.Interventions)
	}
}

func TestStep5C_PROutcomeMemosAndHistoryCap(t *testing.T) {
	c := cfgDomains("a", "b")
	m := state.Memos{}
	for i := 0; i < 12; i++ {
		m, _ = WriteMemos(m, MemoInput{Now: t0, Config: c, Cycle: i, PROutcomes: []PROutcome{{PR: i, Domain: "a", Outcome: "rejected"}}})
		m.ScoreAdjustments = nil
	}
	if len(m.History) != MemoHistoryMax || m.History[9].Type != "pr_rejected" {
		t.Errorf("history = %d entries", len(m.History))
	}
	m, _ = WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: c, PROutcomes: []PROutcome{{PR: 1, Domain: "a", Outcome: "merged"}, {PR: 2, Domain: "b", Outcome: "rejected"}}})
	if m.ScoreAdjustments["a"] != -0.3 || m.ScoreAdjustments["b"] != 0.5 {
		t.Errorf("PR memos: %v", m.ScoreAdjustments)
	}
}

func TestCompatFixture_MemoIntervention(t *testing.T) {
	dir := "../../../shared/compat/ooda-loop/fixtures/memo-intervention/agent/state/evolve"
	sb, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	mb, _ := os.ReadFile(filepath.Join(dir, "memos.json"))
	var st state.State
	var m state.Memos
	if json.Unmarshal(sb, &st) != nil || json.Unmarshal(mb, &m) != nil {
		t.Fatal("fixture does not decode")
	}
	c := cfgDomains("service_health", "test_coverage", "backlog", "ux_evolution")
	got, r := WriteMemos(m, MemoInput{Now: t0, Config: c, Cycle: st.CycleCount, CycleCount: st.CycleCount, Log: st.DecisionLog})
	// ux_evolution last ran in cycle 5: starved over cycles 7..16.
	// service_health won cycles 15 and 16: monopoly breaker.
	var kinds []string
	for _, iv := range r.Interventions {
		kinds = append(kinds, iv.Type+":"+iv.Domain)
	}
	if strings.Join(kinds, ",") != "starvation:ux_evolution,monopoly_breaker:service_health" {
		t.Errorf("interventions = %v", kinds)
	}
	if got.Interventions[0].Delta != 1.0 || got.Interventions[0].ExpiresAfterCycles != 3 || got.Interventions[0].CreatedAtCycle != 16 {
		t.Errorf("starvation = %+v", got.Interventions[0])
	}
	if len(m.Interventions) != 0 {
		t.Error("WriteMemos must not modify its input")
	}
}

func TestStep5F_SelfCritique(t *testing.T) {
	cases := []struct {
		in      CritiqueInput
		verdict string
		lesson  string
	}{
		{CritiqueInput{Domain: "backlog", Skill: "/plan-backlog", ResultType: "futile", FutileRun: 2}, VerdictMiss, "When backlog yields nothing twice running, skip it for 3 cycles."},
		{CritiqueInput{Domain: "api", Skill: "/scan", Result: "error", ResultType: "error"}, VerdictMiss, "When /scan fails, read its run log before selecting api again."},
		{CritiqueInput{Domain: "api", ResultType: "pr_created"}, VerdictHit, ""},
		{CritiqueInput{Domain: "api", ResultType: "action_extracted"}, VerdictHit, ""},
		{CritiqueInput{Domain: "api", ResultType: "futile", OpenPR: true}, VerdictTooEarly, ""},
		{CritiqueInput{Domain: "api", ResultType: "pr_rejected"}, VerdictMiss, ""},
		{CritiqueInput{Domain: "api", ResultType: "observe"}, VerdictUnclear, ""},
	}
	for _, c := range cases {
		c.in.Now, c.in.Cycle = t0, 9
		r := Critique(c.in)
		if r.Verdict != c.verdict || (c.lesson != "" && r.Lesson != c.lesson) || r.Status != "open" || r.Critique == "" {
			t.Errorf("%+v → %+v", c.in, r)
		}
		if n := len(strings.Fields(r.Lesson)); n == 0 || n > 20 {
			t.Errorf("lesson of %d words: %q", n, r.Lesson)
		}
	}
	var rs state.Reflections
	for i := 0; i < 25; i++ {
		rs = AppendReflection(rs, state.Reflection{Cycle: i}, 20)
	}
	if len(rs.Reflections) != 20 || rs.Reflections[0].Cycle != 5 {
		t.Errorf("buffer: %d, first %d", len(rs.Reflections), rs.Reflections[0].Cycle)
	}
}

// A domain the 3-A0 shortcut chose was never scored: its critique says
// how it was chosen, not "score 0.00".
func TestStep5F_SelfCritiqueOfAGuidedChoice(t *testing.T) {
	r := Critique(CritiqueInput{Now: t0, Cycle: 9, Domain: "api", ResultType: "action_extracted", Guidance: "stable_pattern"})
	if !strings.Contains(r.Critique, "Chose api (implicit guidance: stable pattern)") || strings.Contains(r.Critique, "score") {
		t.Errorf("critique = %q", r.Critique)
	}
	r = Critique(CritiqueInput{Now: t0, Cycle: 9, Domain: "api", ResultType: "action_extracted", Score: 12.5})
	if !strings.Contains(r.Critique, "Chose api (score 12.50)") {
		t.Errorf("critique = %q", r.Critique)
	}
}

// At a level that scores one domain, the others cannot run: no monopoly
// breaker on the one that can (it would only penalise the only choice),
// no consecutive-selection bonus and no starvation boost for the others.
func TestStep5C_LevelExcludedDomainsGetNoMemos(t *testing.T) {
	c := cfgDomains("a", "b", "c")
	var log []state.DecisionEntry
	for i := 1; i <= 10; i++ {
		log = append(log, state.DecisionEntry{Cycle: i, SelectedDomain: "a"})
	}
	m, r := WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: c, Cycle: 10, CycleCount: 10, Log: log, LevelExcluded: []string{"b", "c"}})
	if len(r.Interventions) != 0 || len(r.Adjustments) != 0 || len(m.Interventions) != 0 {
		t.Errorf("memos for a level that keeps one domain: %+v / %+v", r, m.Interventions)
	}
	// Without the level's cut the same log does give them.
	_, r = WriteMemos(state.Memos{}, MemoInput{Now: t0, Config: c, Cycle: 10, CycleCount: 10, Log: log})
	if len(r.Interventions) == 0 || len(r.Adjustments) == 0 {
		t.Errorf("no memos without the cut: %+v", r)
	}
}
