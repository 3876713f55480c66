package orient

import (
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

func bp(b bool) *bool { return &b }

func entry(cycle int, domain, result string, out bool) state.DecisionEntry {
	return state.DecisionEntry{Cycle: cycle, SelectedDomain: domain, Result: result, HadOutput: bp(out), Action: "execute"}
}

func TestStep2A_ConsecutiveDomainAndInfrastructureIssue(t *testing.T) {
	log := []state.DecisionEntry{
		entry(1, "b", "success", true), entry(2, "a", "error", false), entry(3, "a", "success", true),
		{Cycle: 4, Action: "skip", Reason: "all_scores_below_minimum"}, entry(5, "a", "error", false),
	}
	p := AnalyzePatterns(log)
	if p.ConsecutiveDomain != "a" || p.ConsecutiveCount != 3 {
		t.Errorf("consecutive = %s×%d, want a×3 (skips neither extend nor break)", p.ConsecutiveDomain, p.ConsecutiveCount)
	}
	if p.Failures["a"] != 2 || len(p.InfraIssues) != 1 || p.InfraIssues[0] != "a" {
		t.Errorf("failures %v, infra %v", p.Failures, p.InfraIssues)
	}
}

func TestStep2A_FutileLoopPenalty(t *testing.T) {
	log := []state.DecisionEntry{entry(1, "backlog", "success", true), entry(2, "backlog", "success", false), entry(3, "backlog", "success", false)}
	if p := AnalyzePatterns(log); p.FutileCount != 2 || p.Penalised() {
		t.Errorf("two futile cycles are not yet a loop: %+v", p)
	}
	log = append(log, entry(4, "backlog", "success", false))
	p := AnalyzePatterns(log)
	if p.FutileDomain != "backlog" || p.FutileCount != 3 || !p.Penalised() {
		t.Errorf("three futile cycles: %+v", p)
	}
	// Recovery: a non-empty observation resets the count.
	log = append(log, entry(5, "backlog", "success", true))
	if p := AnalyzePatterns(log); p.FutileCount != 0 || p.Penalised() {
		t.Errorf("recovered: %+v", p)
	}
	// Another domain in between breaks the run; a PR is output.
	pr := 3
	log = []state.DecisionEntry{entry(1, "a", "success", false), entry(2, "b", "success", false), entry(3, "a", "success", false)}
	log[2].PRNumber = &pr
	if p := AnalyzePatterns(log); p.FutileCount != 0 {
		t.Errorf("a PR is output: %+v", p)
	}
}

func TestStep2A2_SaturationCircuitBreaker(t *testing.T) {
	cfg := config.Default()
	var log []state.DecisionEntry
	count, evaluated := 0, 0
	var warnAt, boostAt, haltAt int
	for c := 1; c <= 16; c++ {
		s := SaturationCheck(cfg, count, evaluated, log)
		count, evaluated = s.Count, s.Evaluated
		if s.Warn {
			warnAt = count
		}
		if s.Boost {
			boostAt = count
		}
		if s.Halt && haltAt == 0 {
			haltAt = count
		}
		log = append(log, entry(c, "scan", "success", false))
	}
	if warnAt != 5 || boostAt != 10 || haltAt != 15 {
		t.Errorf("warn %d boost %d halt %d, want 5, 10, 15", warnAt, boostAt, haltAt)
	}
	// The same previous cycle is never counted twice.
	s := SaturationCheck(cfg, 3, 7, []state.DecisionEntry{entry(7, "x", "success", false)})
	if s.Count != 3 {
		t.Errorf("re-evaluated cycle 7: count %d", s.Count)
	}
	// Output resets; a skip or a blocked skill produced nothing, so it
	// increments, as in the original.
	if s := SaturationCheck(cfg, 4, 0, []state.DecisionEntry{entry(8, "x", "success", true)}); s.Count != 0 {
		t.Errorf("output resets: %d", s.Count)
	}
	for _, action := range []string{"skip", "blocked"} {
		if s := SaturationCheck(cfg, 4, 0, []state.DecisionEntry{{Cycle: 8, Action: action}}); s.Count != 5 || s.Evaluated != 8 {
			t.Errorf("a %s entry must count as a cycle without output: count %d, evaluated %d", action, s.Count, s.Evaluated)
		}
	}
	// A loop that only skips halts at the same cycle as one that only
	// observes.
	log = nil
	count, evaluated, haltAt = 0, 0, 0
	for c := 1; c <= 16; c++ {
		s := SaturationCheck(cfg, count, evaluated, log)
		count, evaluated = s.Count, s.Evaluated
		if s.Halt && haltAt == 0 {
			haltAt = count
		}
		log = append(log, state.DecisionEntry{Cycle: c, Action: "skip", Reason: "all_scores_below_minimum"})
	}
	if haltAt != 15 {
		t.Errorf("a loop of skips halts at %d, want 15", haltAt)
	}
	cfg.Saturation.AutoHalt = false
	if s := SaturationCheck(cfg, 20, 0, []state.DecisionEntry{entry(9, "x", "success", false)}); s.Halt {
		t.Error("auto_halt false never halts")
	}
}
