package config

import (
	"encoding/json"
	"sort"
	"strings"
)

// Default returns a Config holding every default of the original project's
// config.example.json (and the defaults the specification names in prose),
// with no domains and no mission.
func Default() *Config {
	return &Config{
		SchemaVersion: "1.5.0",
		Project:       Project{Name: "my-app", Locale: "en", Timezone: "UTC"},
		Implementation: Implementation{
			Enabled: false, Weight: 1.5, PrimarySkill: "/dev-cycle",
			ObserveLoopEscapeBonus: 5.0, BranchPrefix: "auto/dev-cycle/",
		},
		Scoring: Scoring{
			StalenessCurve: "logarithmic", BalanceEnabled: true, BalanceWeight: 5.0,
			GoalWeight: 0.3, ConfidenceWeight: 0.2, HoursIfNeverRun: 168,
			ImplementationFormula: ImplFormula{PendingMultiplier: 2.0, AgeMultiplier: 0.1, RiceMultiplier: 0.01, OpenPRPenalty: -3.0},
			RiceExtensions:        map[string]float64{},
			MissionWeight:         6.0, DryDomainDampen: 0.3, MonitorDryDampen: 0.6,
			OffMissionThreshold: 0.2, OffMissionDampen: 0.2,
			Adaptive: Adaptive{Window: DefaultAdaptiveWindow},
		},
		Confidence: ConfidenceCfg{Initial: 0.7, MergeBoost: 0.1, RejectPenalty: 0.2, Min: 0.1, Max: 1.0, ObservationMicroAdjustments: true},
		Safety: Safety{
			HaltFile: "agent/safety/HALT", ConfidenceThreshold: 0.6, MinCycleIntervalMin: 30,
			MaxPRsPerCycle: 1, FirstCycleObserveOnly: true, MaxFilesPerPR: 20, MaxLinesPerPR: 500,
			ProtectedPaths:     []string{"agent/safety/*", "skills/evolve/*", "agent/contracts/*"},
			SkillAllowlist:     []string{"/scan-health", "/check-tests", "/plan-backlog", "/run-deploy", "/dev-cycle", "/scan-market", "/scan-ux", "/scan-competitors"},
			LockTimeoutMinutes: 30, MaxChainDepth: 3, MaxSilentFailures: 3,
			GeneratedFilePatterns: []string{}, AutoMergeMaxFiles: 5, AutoMergeMaxLines: 100,
		},
		ProgressiveComplex: Progressive{CurrentLevel: 0, Levels: defaultLevels()},
		Signals: Signals{
			HealthAlertBonus: 5.0, AlertCooldownHours: 4, MaxConsecutiveAlertCycles: 3,
			StaleAfterChangeHours: 24, StaleAfterChangeBonus: 2.0, QueuePressureThreshold: 5,
			QueuePressureBonus: 3.0, QueueAgeHours: 48, QueueAgeBonus: 2.0,
		},
		Saturation: Saturation{WarnThreshold: 5, BoostThreshold: 10, HaltThreshold: 15, AutoHalt: true, ImplementationBoost: 5.0},
		Memory: Memory{
			WorkingMemorySize: 20, EpisodeRetentionWeeks: 52, ContrarianCheckInterval: 10,
			ActionQueueDecayDays: 14, ActionQueueDecayAmount: 0.05, PrincipleSimilarityThreshold: 0.5,
			PrincipleMinOccurrences: 2, ReflectionRecallCount: 3, ReflectionsBufferSize: 20, OutcomesBufferSize: 200,
		},
		SeasonModes: SeasonModes{CurrentMode: "default", Modes: map[string]SeasonMode{
			"default": {WeightOverrides: map[string]float64{}, DisabledDomains: []string{}, SignalBonuses: map[string]float64{}},
		}},
		ActiveContext:      ActiveContext{RefreshIntervalHours: 168},
		Output:             Output{CycleCard: true},
		TestCommand:        "npm test",
		TestTimeoutSeconds: 300,
		HealthEndpoints:    []json.RawMessage{},
		HealthCheckTimeout: 10,
		Cost:               Cost{DailyLimitUSD: 10.0, WarningThresholdPct: 80, MaxBackfillCycles: 100},
		Leap: Leap{
			RewriteOnStall: true, MaxLines: 1500, MinDimensionDelta: 0.05, MaxAttemptsPerDimension: 2,
			MaxPerDay: 2, GapWeight: 30.0, CostLimitUSD: 0.5, LockUntilBar: true,
		},
		GoalCompletionIdle: true,
		Forge:              Forge{Provider: "auto", APIURL: "https://api.github.com", Timeout: "30s"},
		Session:            Session{OscillationThreshold: 3, StagnationWindow: 3, RegressionWindow: 3, MaxIterations: 100},
	}
}

func defaultLevels() map[string]Level {
	return map[string]Level{
		"0": {Name: "Just watching", Domains: json.RawMessage(`1`)},
		"1": {Name: "Watching + testing", Domains: json.RawMessage(`2`)},
		"2": {Name: "Full observation", Domains: json.RawMessage(`"all"`)},
		"3": {Name: "Autonomous", Domains: json.RawMessage(`"all"`), Implementation: true},
	}
}

// applyDomainDefaults fills the per-domain keys the original project derives
// from the domain's name and skill.
func (c *Config) applyDomainDefaults() {
	// Domains running one skill share its branch prefix: most of a
	// thousand domains run the same few skills.
	var skill, prefix string
	for i := range c.Domains {
		d := &c.Domains[i]
		if d.StateFile == "" {
			d.StateFile = "agent/state/" + d.Name + ".json"
		}
		if d.BranchPrefix == "" && d.PrimarySkill != "" {
			if prefix == "" || d.PrimarySkill != skill {
				skill, prefix = d.PrimarySkill, "auto/"+SkillKey(d.PrimarySkill)+"/"
			}
			d.BranchPrefix = prefix
		}
		if d.Chain == nil {
			d.Chain = []string{}
		}
	}
	if c.Implementation.PrimarySkill == "" {
		c.Implementation.PrimarySkill = "/dev-cycle"
	}
	if c.Implementation.BranchPrefix == "" {
		c.Implementation.BranchPrefix = "auto/" + SkillKey(c.Implementation.PrimarySkill) + "/"
	}
}

// MissionSet reports whether a mission is declared (an empty string disables
// mission-aware scoring).
func (c *Config) MissionSet() bool { return strings.TrimSpace(c.Mission) != "" }

// CommitState reports git.commit_state (default true).
func (c *Config) CommitState() bool { return c.Git.CommitState == nil || *c.Git.CommitState }

// PushState reports git.push (default true): push the state commit when a
// remote exists.
func (c *Config) PushState() bool { return c.Git.Push == nil || *c.Git.Push }

// SkillNames returns the keys of config.skills, sorted, so that every
// lookup by normalised name ("/x" and "x" are one skill) resolves the same
// way on every run.
func (c *Config) SkillNames() []string {
	names := make([]string, 0, len(c.Skills))
	for n := range c.Skills {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
