package sim

import "github.com/ooda-loop/ooda/internal/config"

// Config is the config.json of the simulated project: the scenario's
// domains, each run by its simulated skill, with the two settings the
// simulation needs (no observe-only first cycle, no minimum interval
// between cycles), state commits off, and the scoring of the strategy.
// Everything else is ooda's default, as in a project's own config.json.
func Config(sc *Scenario, strategy string, noMission bool) map[string]any {
	domains := map[string]any{}
	var allow []string
	for _, d := range sc.Domains {
		domains[d.Name] = map[string]any{
			"weight":            d.Weight,
			"mission_alignment": d.MissionAlignment,
			"ooda_phase":        d.Kind,
			"status":            "active",
			"state_file":        stateFileOf(d.Name),
			"primary_skill":     skillOf(d.Name),
			"branch_prefix":     branchOf(d.Name),
		}
		allow = append(allow, skillOf(d.Name))
	}
	cfg := map[string]any{
		"schema_version":         "1.5.0",
		"project":                map[string]any{"name": sc.Name, "locale": "en", "timezone": "UTC"},
		"domains":                domains,
		"progressive_complexity": map[string]any{"current_level": 2},
		"safety": map[string]any{
			"min_cycle_interval_minutes": 0,
			"first_cycle_observe_only":   false,
			"skill_allowlist":            allow,
		},
		"implementation":       map[string]any{"enabled": false},
		"goal_completion_idle": true,
		"git":                  map[string]any{"commit_state": false},
		"output":               map[string]any{"cycle_card": false},
	}
	if !noMission && sc.Mission != "" {
		cfg["mission"] = sc.Mission
	}
	if strategy == StrategyAdaptive {
		cfg["scoring"] = AdaptiveScoring()
	}
	return cfg
}

// AdaptiveScoring is the scoring block `ooda init` writes: the learned
// terms on (docs/scoring.md).
func AdaptiveScoring() map[string]any {
	return map[string]any{"adaptive": config.InitAdaptive()}
}
