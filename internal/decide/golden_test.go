package decide

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// mixedInput is a five-domain project at level 2 with a mission, an alert,
// memos, goals, a cooldown, a dry work domain and uneven execution counts:
// every 3-A term is non-trivial somewhere in its table.
func mixedInput() Input {
	health := dom("service_health", 2.0, 6)
	health.Fallback, health.Phase, health.MissionAlignment = true, "observe", 1.0
	health.Alerts = []Alert{{Severity: "warning", Message: "p95 latency 900ms"}, {Severity: "info"}}
	tests := dom("test_coverage", 1.0, 30)
	tests.Phase, tests.MissionAlignment = "execute", 0.6
	backlog := dom("backlog", 0.8, 72)
	backlog.Phase, backlog.MissionAlignment = "strategize", 0.1
	security := dom("security", 1.5, 2)
	security.Phase, security.MissionAlignment, security.MinIntervalHours = "observe", 0.8, f64(12)
	docs := dom("docs", 0.5, 168)
	docs.NeverRun, docs.Phase, docs.MissionAlignment = true, "support", 0.3

	in := newInput(2, health, tests, backlog, security, docs)
	in.Config.Mission = "Keep the API fast and reliable"
	in.Confidence = map[string]float64{"service_health": 0.8, "test_coverage": 0.65, "backlog": 0.7, "security": 0.9, "docs": 0.5}
	in.Memo = map[string]float64{"service_health": -0.3, "test_coverage": 0.5, "docs": 1.5}
	in.Goals = []Goal{
		{ID: "g1", Title: "p95 under 300ms", Status: "active", Progress: 0.9, RelatedDomains: []string{"service_health"}},
		{ID: "g2", Title: "Keep test coverage >= 80%", Status: "active", Progress: 0.55},
		{ID: "g3", Title: "Docs for every endpoint", Status: "achieved", Progress: 1, Domain: "docs"},
	}
	in.DomainExecutions = map[string]int{"service_health": 10, "test_coverage": 6, "backlog": 3, "security": 1}
	in.TotalSkillExecutions = 20
	in.Log = []LogEntry{
		{Cycle: 17, Domain: "service_health", Action: "execute", HadOutput: yes(), SelectedByAlert: true},
		{Cycle: 18, Domain: "backlog", Action: "execute", HadOutput: no()},
		{Cycle: 19, Domain: "security", Action: "execute", HadOutput: yes()},
		{Cycle: 20, Domain: "test_coverage", Action: "execute", HadOutput: yes()},
	}
	return in
}

// implementationInput is a level-3 project whose action queue is under
// pressure and has not been worked for three cycles.
func implementationInput() Input {
	health := dom("service_health", 1.0, 12)
	health.Fallback, health.Phase = true, "observe"
	tests := dom("test_coverage", 0.5, 20)
	tests.Phase = "execute"
	in := newInput(3, health, tests)
	in.Config.Implementation.Enabled = true
	in.Config.Mission = "Ship the v2 API"
	in.Domains[0].MissionAlignment, in.Domains[1].MissionAlignment = 0.5, 0.7
	in.Impl = Impl{PendingCount: 6, ActionablePending: 5, OldestPendingHours: 52, HighestRice: 340, OpenDraftPRs: 1}
	in.Confidence = map[string]float64{"service_health": 0.75, "test_coverage": 0.7, ImplementationDomain: 0.65}
	in.Memo = map[string]float64{ImplementationDomain: 0.5}
	in.Goals = []Goal{{ID: "g1", Title: "Ship v2 endpoints", Status: "active", Progress: 0.4, RelatedDomains: []string{ImplementationDomain, "test_coverage"}}}
	in.DomainExecutions = map[string]int{"service_health": 5, "test_coverage": 3, ImplementationDomain: 2}
	in.TotalSkillExecutions = 10
	in.Log = []LogEntry{
		{Cycle: 8, Domain: ImplementationDomain, Action: "execute", HadOutput: yes()},
		{Cycle: 9, Domain: "service_health", Action: "execute", HadOutput: no()},
		{Cycle: 10, Domain: "test_coverage", Action: "execute", HadOutput: yes()},
		{Cycle: 11, Domain: "service_health", Action: "execute", HadOutput: yes()},
	}
	return in
}

// gatedInput has no domain at the confidence threshold, so 3-F falls back
// to the fallback domain although it scores last.
func gatedInput() Input {
	health := dom("service_health", 0.5, 10)
	health.Fallback = true
	in := newInput(2, dom("backlog", 2, 48), dom("test_coverage", 1, 36), health)
	in.Confidence = map[string]float64{"backlog": 0.45, "test_coverage": 0.5, "service_health": 0.55}
	in.DomainExecutions = map[string]int{"backlog": 4, "test_coverage": 4, "service_health": 2}
	in.TotalSkillExecutions = 10
	return in
}

func TestGoldenScoreTables(t *testing.T) {
	scenarios := map[string]func(t *testing.T) Input{
		"season_default": func(t *testing.T) Input {
			return seasonInput(t, filepath.Join(seasonDir, "config.default.json"))
		},
		"season_preparation": func(t *testing.T) Input {
			return seasonInput(t, filepath.Join(seasonDir, "config.preparation.json"))
		},
		"mixed_five_domains":         func(*testing.T) Input { return mixedInput() },
		"level3_implementation":      func(*testing.T) Input { return implementationInput() },
		"confidence_gated_fallback":  func(*testing.T) Input { return gatedInput() },
		"critical_alert_guidance":    func(*testing.T) Input { return withAlert(mixedInput(), "backlog", "critical") },
		"goals_met_idle":             func(*testing.T) Input { return idleInput() },
		"all_below_confidence_no_fb": noFallbackInput,
	}
	for name, build := range scenarios {
		t.Run(name, func(t *testing.T) {
			got := render(Decide(build(t)))
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenScoreTables -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func noFallbackInput(*testing.T) Input {
	in := gatedInput()
	in.Domains[2].Fallback = false
	return in
}

// The golden renderer must be deterministic: the same decision twice gives
// the same bytes, so a golden diff always means a behaviour change.
func TestRenderIsStable(t *testing.T) {
	in := mixedInput()
	a, b := render(Decide(in)), render(Decide(in))
	if a != b {
		t.Fatalf("render differs between two runs:\n%s\n---\n%s", a, b)
	}
	if r4(-0.00001) != "0.0000" || r4(1.23456) != "1.2346" {
		t.Fatalf("r4: %q %q", r4(-0.00001), r4(1.23456))
	}
}
