package decide

import (
	"fmt"
	"testing"
)

// benchInput is a level-3 project of n domains with every kind of state:
// warnings on some domains (fallback or not), cooldowns, memos, related and
// keyword goals, a full 20-entry decision log and execution counts. No
// critical alert and no stable run, so every call does the full scoring pass.
func benchInput(n int) Input {
	ds := make([]Domain, n)
	phases := []string{"observe", "detect", "strategize", "execute", "support"}
	for i := range ds {
		d := dom(fmt.Sprintf("domain_%04d", i), 0.5+float64(i%7)*0.25, float64(1+i*13%170))
		d.Phase = phases[i%len(phases)]
		d.Fallback = i%11 == 0
		d.MissionAlignment = float64(i%5) / 4
		if i%7 == 3 {
			d.Alerts = []Alert{{Severity: "warning", Message: "slow"}, {Severity: "info"}}
		}
		if i%13 == 5 {
			d.MinIntervalHours = f64(200)
		}
		ds[i] = d
	}
	in := newInput(3, ds...)
	in.Config.Mission = "Keep the service fast"
	in.Config.Implementation.Enabled = true
	in.Impl = Impl{PendingCount: 7, ActionablePending: 6, OldestPendingHours: 30, HighestRice: 210, OpenDraftPRs: 1}
	for i, d := range ds {
		in.Confidence[d.Name] = 0.4 + float64(i%6)*0.1
		if i%4 == 0 {
			in.Memo[d.Name] = float64(i%3) - 1
		}
		in.DomainExecutions[d.Name] = i % 9
		in.TotalSkillExecutions += i % 9
	}
	for g := 0; g < 10; g++ {
		goal := Goal{ID: fmt.Sprintf("goal-%d", g), Status: "active", Progress: float64(g) / 10}
		if g%2 == 0 {
			goal.RelatedDomains = []string{ds[(g*7)%n].Name, ImplementationDomain}
		} else {
			goal.Title = "Improve " + ds[(g*3)%n].Name // keyword fallback
		}
		in.Goals = append(in.Goals, goal)
	}
	for c := 0; c < 20; c++ {
		in.Log = append(in.Log, LogEntry{Cycle: c + 1, Domain: ds[(c*5)%n].Name, Action: "execute", HadOutput: boolp(c%3 != 0), SelectedByAlert: c%4 == 0})
	}
	return in
}

func benchmarkDecide(b *testing.B, n int) {
	in := benchInput(n)
	if d := Decide(in); d.Winner == nil || !d.Scored {
		b.Fatalf("benchmark input does not reach a scored decision: %s", d.SkipReason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Decide(in)
	}
}

func BenchmarkDecide8(b *testing.B)    { benchmarkDecide(b, 8) }
func BenchmarkDecide1000(b *testing.B) { benchmarkDecide(b, 1000) }

// benchInputEqual is benchInput with every weight 1, the shape of a
// project whose domains were added with the default weight: the domains
// need no sorting before scoring.
func benchInputEqual(n int) Input {
	in := benchInput(n)
	for i := range in.Domains {
		in.Domains[i].Weight = 1
		in.Config.Domains[i].Weight = 1
	}
	return in
}

func BenchmarkDecide1000EqualWeights(b *testing.B) {
	in := benchInputEqual(1000)
	b.ReportAllocs()
	for b.Loop() {
		Decide(in)
	}
}
