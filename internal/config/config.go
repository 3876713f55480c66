package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the typed view of config.json with every default applied.
// Fields mirror the original file's snake_case keys; the engine reads only
// this struct, never the raw JSON.
type Config struct {
	SchemaVersion        string               `json:"schema_version"`
	Project              Project              `json:"project"`
	Mission              string               `json:"mission"`
	Domains              Domains              `json:"domains"`
	DomainDependencies   json.RawMessage      `json:"domain_dependencies,omitempty"`
	Implementation       Implementation       `json:"implementation"`
	Scoring              Scoring              `json:"scoring"`
	Confidence           ConfidenceCfg        `json:"confidence"`
	Safety               Safety               `json:"safety"`
	ProgressiveComplex   Progressive          `json:"progressive_complexity"`
	Signals              Signals              `json:"signals"`
	Saturation           Saturation           `json:"saturation"`
	Memory               Memory               `json:"memory"`
	SeasonModes          SeasonModes          `json:"season_modes"`
	ActiveContext        ActiveContext        `json:"active_context"`
	Output               Output               `json:"output"`
	TestCommand          string               `json:"test_command"`
	TestTimeoutSeconds   float64              `json:"test_timeout_seconds"`
	HealthEndpoints      []json.RawMessage    `json:"health_endpoints"`
	HealthCheckTimeout   float64              `json:"health_check_timeout_seconds"`
	Notifications        json.RawMessage      `json:"notifications,omitempty"`
	Cost                 Cost                 `json:"cost"`
	QualityRubric        json.RawMessage      `json:"quality_rubric,omitempty"`
	Leap                 Leap                 `json:"leap"`
	GoalCompletionIdle   bool                 `json:"goal_completion_idle"`
	Skills               map[string]SkillSpec `json:"skills,omitempty"`
	Agent                Agent                `json:"agent"`
	Git                  Git                  `json:"git"`
	Forge                Forge                `json:"forge"`
	Session              Session              `json:"session"`
	Judge                Judge                `json:"judge"`
	Eval                 Eval                 `json:"eval"`
	DeployWorkflow       json.RawMessage      `json:"deploy_workflow,omitempty"`
	DeployWorkflowInputs json.RawMessage      `json:"deploy_workflow_inputs,omitempty"`
	// DeployMonitorTimeoutSeconds and DeployHealthWaitSeconds are read by
	// the deploy built-in; nil means its default (600 and 30).
	DeployMonitorTimeoutSeconds *float64 `json:"deploy_monitor_timeout_seconds,omitempty"`
	DeployHealthWaitSeconds     *float64 `json:"deploy_health_wait_seconds,omitempty"`

	// Warnings are what loading found questionable but not wrong: unknown
	// keys, each with its JSON path and the nearest known key. They are
	// not part of the file; every command that loads the configuration
	// shows them.
	Warnings []Warning `json:"-"`
}

// Project names the project; the name appears on cards and in commits.
type Project struct {
	Name     string `json:"name"`
	Locale   string `json:"locale"`
	Timezone string `json:"timezone"`
}

// Domain is one entry of config.domains. Name and Index are not JSON keys:
// they record the key and its position, which is the final tie-break.
type Domain struct {
	Name             string          `json:"-"`
	Index            int             `json:"-"`
	Weight           float64         `json:"weight"`
	StateFile        string          `json:"state_file"`
	PrimarySkill     string          `json:"primary_skill"`
	Chain            []string        `json:"chain"`
	BranchPrefix     string          `json:"branch_prefix"`
	Fallback         bool            `json:"fallback"`
	Enabled          *bool           `json:"enabled"`
	Status           string          `json:"status"`
	MissionAlignment *float64        `json:"mission_alignment"`
	Description      string          `json:"description,omitempty"`
	Rotation         []string        `json:"rotation,omitempty"`
	OODAPhase        string          `json:"ooda_phase,omitempty"`
	MinIntervalHours *float64        `json:"min_interval_hours,omitempty"`
	GoalContribution *float64        `json:"goal_contribution,omitempty"`
	QualityRubric    json.RawMessage `json:"quality_rubric,omitempty"`
}

// IsEnabled honours the legacy "enabled" flag (absent means enabled).
func (d Domain) IsEnabled() bool { return d.Enabled == nil || *d.Enabled }

// EffectiveStatus is the domain's status; a missing status is "active" for
// compatibility with configs written before the field existed.
func (d Domain) EffectiveStatus() string {
	if d.Status == "" {
		return "active"
	}
	return d.Status
}

// Scoreable reports whether the domain's status lets it be observed and
// scored: "active", or "degraded" (running with known problems, which is
// a reason to look, not to stop looking).
func (d Domain) Scoreable() bool {
	s := d.EffectiveStatus()
	return s == "active" || s == "degraded"
}

// Alignment is mission_alignment, 0 when absent.
func (d Domain) Alignment() float64 {
	if d.MissionAlignment == nil {
		return 0
	}
	return *d.MissionAlignment
}

// Domains keeps config.domains in file order.
type Domains []Domain

// Get returns the named domain.
func (ds Domains) Get(name string) (Domain, bool) {
	// By index: ranging by value copied every (large) Domain looked at.
	for i := range ds {
		if ds[i].Name == name {
			return ds[i], true
		}
	}
	return Domain{}, false
}

// UnmarshalJSON decodes the domains object keeping its key order.
func (ds *Domains) UnmarshalJSON(b []byte) error {
	if out, ok := unmarshalDomainsFast(b); ok {
		*ds = out
		return nil
	}
	out, err := unmarshalDomainsSlow(b)
	if err != nil {
		return err
	}
	*ds = out
	return nil
}

// MarshalJSON writes the domains in their original order.
func (ds Domains) MarshalJSON() ([]byte, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, d := range ds {
		if i > 0 {
			sb.WriteByte(',')
		}
		k, _ := json.Marshal(d.Name)
		v, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		sb.Write(k)
		sb.WriteByte(':')
		sb.Write(v)
	}
	sb.WriteByte('}')
	return []byte(sb.String()), nil
}

// Implementation configures the virtual implementation domain (3-A2).
type Implementation struct {
	Enabled                bool     `json:"enabled"`
	Weight                 float64  `json:"weight"`
	PrimarySkill           string   `json:"primary_skill"`
	ObserveLoopEscapeBonus float64  `json:"observe_loop_escape_bonus"`
	MissionAlignment       *float64 `json:"mission_alignment"`
	BranchPrefix           string   `json:"branch_prefix,omitempty"`
}

// Alignment is the implementation's mission alignment (1.0 when absent, per 3-A2).
func (i Implementation) Alignment() float64 {
	if i.MissionAlignment == nil {
		return 1.0
	}
	return *i.MissionAlignment
}

// ImplFormula holds the 3-A2 multipliers.
type ImplFormula struct {
	PendingMultiplier float64 `json:"pending_multiplier"`
	AgeMultiplier     float64 `json:"age_multiplier"`
	RiceMultiplier    float64 `json:"rice_multiplier"`
	OpenPRPenalty     float64 `json:"open_pr_penalty"`
}

// Scoring holds the 3-A weights and dampeners.
type Scoring struct {
	StalenessCurve        string         `json:"staleness_curve"`
	BalanceEnabled        bool           `json:"balance_enabled"`
	BalanceWeight         float64        `json:"balance_weight"`
	GoalWeight            float64        `json:"goal_weight"`
	ConfidenceWeight      float64        `json:"confidence_weight"`
	HoursIfNeverRun       float64        `json:"hours_if_never_run"`
	ImplementationFormula ImplFormula    `json:"implementation_formula"`
	RiceExtensions        RiceExtensions `json:"rice_extensions"`
	MissionWeight         float64        `json:"mission_weight"`
	DryDomainDampen       float64        `json:"dry_domain_dampen"`
	MonitorDryDampen      float64        `json:"monitor_dry_dampen"`
	OffMissionThreshold   float64        `json:"off_mission_threshold"`
	OffMissionDampen      float64        `json:"off_mission_dampen"`
	// Adaptive is adaptive scoring; its zero value (the block absent, as
	// in every OODA-loop configuration) leaves the seed's scoring as it is.
	Adaptive Adaptive `json:"adaptive"`
}

// Adaptive holds adaptive scoring (docs/scoring.md): terms Decide adds to
// the seed's 3-A score, learned from each domain's own recorded cycles
// and from the active goals. The seed's score wastes cycles on domains
// that are stale but empty, and its goal term barely moves the table
// (0.3 × at most 0.5); these terms aim each cycle where work was found
// before and where an unmet goal needs it.
type Adaptive struct {
	Enabled bool `json:"enabled"`
	// ValueWeight is the score per unit of a domain's learned value (the
	// mean quality_multiplier of its recent cycles).
	ValueWeight float64 `json:"value_weight"`
	// YieldStaleness scales staleness by the domain's learned yield.
	YieldStaleness bool `json:"yield_staleness"`
	// MissionFocus scales staleness by mission_alignment when a mission
	// is set.
	MissionFocus bool `json:"mission_focus"`
	// GoalPullWeight replaces 3-C's goal term with a pull toward the
	// domains unmet goals depend on.
	GoalPullWeight float64 `json:"goal_pull_weight"`
	// Window is how many recent recorded cycles of a domain are read
	// (default 10).
	Window int `json:"window"`
}

// InitAdaptive is the adaptive scoring `ooda init` writes into a new
// project's config.json (and `ooda sim` runs as its adaptive strategy):
// every term on, at the weights measured in docs/benchmarks.md.
func InitAdaptive() Adaptive {
	return Adaptive{Enabled: true, ValueWeight: 20, YieldStaleness: true, MissionFocus: true, GoalPullWeight: 15, Window: DefaultAdaptiveWindow}
}

// DefaultAdaptiveWindow is Adaptive.Window when unset.
const DefaultAdaptiveWindow = 10

// On reports whether adaptive scoring applies.
func (a Adaptive) On() bool { return a.Enabled }

// HistoryWindow is Window, or its default.
func (a Adaptive) HistoryWindow() int {
	if a.Window <= 0 {
		return DefaultAdaptiveWindow
	}
	return a.Window
}

// ConfidenceCfg holds the confidence bounds and deltas (2-B).
type ConfidenceCfg struct {
	Initial                     float64 `json:"initial"`
	MergeBoost                  float64 `json:"merge_boost"`
	RejectPenalty               float64 `json:"reject_penalty"`
	Min                         float64 `json:"min"`
	Max                         float64 `json:"max"`
	ObservationMicroAdjustments bool    `json:"observation_micro_adjustments"`
}

// Safety holds the rails of Step 0 and Step 4.
type Safety struct {
	HaltFile              string          `json:"halt_file"`
	ConfidenceThreshold   float64         `json:"confidence_threshold"`
	MinCycleIntervalMin   float64         `json:"min_cycle_interval_minutes"`
	MaxPRsPerCycle        int             `json:"max_prs_per_cycle"`
	FirstCycleObserveOnly bool            `json:"first_cycle_observe_only"`
	MaxFilesPerPR         int             `json:"max_files_per_pr"`
	MaxLinesPerPR         int             `json:"max_lines_per_pr"`
	ProtectedPaths        []string        `json:"protected_paths"`
	SkillAllowlist        []string        `json:"skill_allowlist"`
	LockTimeoutMinutes    float64         `json:"lock_timeout_minutes"`
	MaxChainDepth         int             `json:"max_chain_depth"`
	MaxSilentFailures     int             `json:"max_silent_failures"`
	GeneratedFilePatterns []string        `json:"generated_file_patterns"`
	EnableRollback        bool            `json:"enable_rollback"`
	EnableAutoMerge       bool            `json:"enable_auto_merge"`
	AutoMergeMaxFiles     int             `json:"auto_merge_max_files"`
	AutoMergeMaxLines     int             `json:"auto_merge_max_lines"`
	RiskRules             json.RawMessage `json:"risk_rules,omitempty"`
	// MaxReadMiB caps every file ooda reads (state files, reports,
	// contracts) and every forge response, in MiB (our extension; default
	// 16). A larger input is refused with a warning, never read whole.
	MaxReadMiB float64 `json:"max_read_mib,omitempty"`
}

// DefaultMaxReadMiB is safety.max_read_mib's default.
const DefaultMaxReadMiB = 16

// MaxMaxReadMiB is the largest safety.max_read_mib validation accepts.
const MaxMaxReadMiB = 1024

// MaxReadBytes is safety.max_read_mib in bytes: the default when unset (or
// not a positive number), at most MaxMaxReadMiB for a Config built in code.
func (s Safety) MaxReadBytes() int64 {
	switch {
	case !(s.MaxReadMiB > 0):
		return DefaultMaxReadMiB << 20
	case s.MaxReadMiB > MaxMaxReadMiB:
		return MaxMaxReadMiB << 20
	}
	return int64(s.MaxReadMiB * (1 << 20))
}

// MinLockTimeout is the shortest lock timeout ooda uses, whatever the
// configuration says: a lock that goes stale at once lets a second runner
// take it from a live cycle, and the lock timeout is also every skill's
// default time limit.
const MinLockTimeout = time.Second

// MaxLockTimeoutMinutes is the largest safety.lock_timeout_minutes
// validation accepts (one week).
const MaxLockTimeoutMinutes = 10080

// LockTimeout is lock_timeout_minutes as a duration, never less than
// MinLockTimeout (validation allows 0.01 minutes; a Config built in code
// may hold anything, 0 and NaN included) and at most MaxLockTimeoutMinutes.
func (s Safety) LockTimeout() time.Duration {
	m := s.LockTimeoutMinutes
	switch {
	case !(m*float64(time.Minute) >= float64(MinLockTimeout)):
		return MinLockTimeout
	case m > MaxLockTimeoutMinutes:
		return MaxLockTimeoutMinutes * time.Minute
	}
	return time.Duration(m * float64(time.Minute))
}

// Allowed reports whether skill may run: an empty allowlist allows all.
// Names are compared without their leading slash.
func (s Safety) Allowed(skill string) bool {
	if len(s.SkillAllowlist) == 0 {
		return true
	}
	want := SkillKey(skill)
	for _, a := range s.SkillAllowlist {
		if SkillKey(a) == want {
			return true
		}
	}
	return false
}

// SkillKey normalises a skill name: "/scan-health" and "scan-health" are one skill.
func SkillKey(name string) string { return strings.TrimPrefix(strings.TrimSpace(name), "/") }

// Level is one progressive-complexity level. Domains is a count or "all".
type Level struct {
	Name           string          `json:"name"`
	Domains        json.RawMessage `json:"domains,omitempty"`
	Implementation bool            `json:"implementation"`
	AutoMerge      bool            `json:"auto_merge"`
}

// DomainLimit returns the number of domains this level keeps; all is true
// for "all" or a missing limit.
func (l Level) DomainLimit() (n int, all bool) {
	if len(l.Domains) == 0 {
		return 0, true
	}
	var s string
	if json.Unmarshal(l.Domains, &s) == nil {
		if s == "all" || s == "" {
			return 0, true
		}
		if v, err := strconv.Atoi(s); err == nil {
			return v, false
		}
		return 0, true
	}
	var f float64
	if json.Unmarshal(l.Domains, &f) == nil {
		return int(f), false
	}
	return 0, true
}

// Progressive is progressive_complexity.
type Progressive struct {
	CurrentLevel    int              `json:"current_level"`
	Levels          map[string]Level `json:"levels"`
	LastLevelChange json.RawMessage  `json:"last_level_change,omitempty"`
}

// Level returns the configuration of level n (defaults when absent).
func (p Progressive) Level(n int) Level {
	if l, ok := p.Levels[strconv.Itoa(n)]; ok {
		return l
	}
	if l, ok := defaultLevels()[strconv.Itoa(n)]; ok {
		return l
	}
	return Level{Name: fmt.Sprintf("Level %d", n), Domains: json.RawMessage(`"all"`)}
}

// Signals holds the 3-B urgent-signal settings.
type Signals struct {
	HealthAlertBonus          float64 `json:"health_alert_bonus"`
	AlertCooldownHours        float64 `json:"alert_cooldown_hours"`
	MaxConsecutiveAlertCycles int     `json:"max_consecutive_alert_cycles"`
	StaleAfterChangeHours     float64 `json:"stale_after_change_hours"`
	StaleAfterChangeBonus     float64 `json:"stale_after_change_bonus"`
	QueuePressureThreshold    int     `json:"queue_pressure_threshold"`
	QueuePressureBonus        float64 `json:"queue_pressure_bonus"`
	QueueAgeHours             float64 `json:"queue_age_hours"`
	QueueAgeBonus             float64 `json:"queue_age_bonus"`
}

// WithBonuses returns a copy with a season mode's signal_bonuses merged on
// top (3-B); unknown keys are ignored.
func (s Signals) WithBonuses(b map[string]float64) Signals {
	for k, v := range b {
		switch k {
		case "health_alert_bonus":
			s.HealthAlertBonus = v
		case "stale_after_change_bonus":
			s.StaleAfterChangeBonus = v
		case "queue_pressure_bonus":
			s.QueuePressureBonus = v
		case "queue_age_bonus":
			s.QueueAgeBonus = v
		}
	}
	return s
}

// Saturation holds the 2-A2 thresholds.
type Saturation struct {
	WarnThreshold       int     `json:"warn_threshold"`
	BoostThreshold      int     `json:"boost_threshold"`
	HaltThreshold       int     `json:"halt_threshold"`
	AutoHalt            bool    `json:"auto_halt"`
	ImplementationBoost float64 `json:"implementation_boost"`
}

// Memory holds the buffer sizes and memory-cascade settings.
type Memory struct {
	WorkingMemorySize            int     `json:"working_memory_size"`
	EpisodeRetentionWeeks        int     `json:"episode_retention_weeks"`
	ContrarianCheckInterval      int     `json:"contrarian_check_interval"`
	ActionQueueDecayDays         float64 `json:"action_queue_decay_days"`
	ActionQueueDecayAmount       float64 `json:"action_queue_decay_amount"`
	PrincipleSimilarityThreshold float64 `json:"principle_similarity_threshold"`
	PrincipleMinOccurrences      int     `json:"principle_min_occurrences"`
	ReflectionRecallCount        int     `json:"reflection_recall_count"`
	ReflectionsBufferSize        int     `json:"reflections_buffer_size"`
	OutcomesBufferSize           int     `json:"outcomes_buffer_size"`
}

// SeasonMode is one entry of season_modes.modes.
type SeasonMode struct {
	WeightOverrides map[string]float64 `json:"weight_overrides"`
	DisabledDomains []string           `json:"disabled_domains"`
	SignalBonuses   map[string]float64 `json:"signal_bonuses"`
}

// SeasonModes is season_modes.
type SeasonModes struct {
	Enabled     bool                  `json:"enabled"`
	CurrentMode string                `json:"current_mode"`
	Modes       map[string]SeasonMode `json:"modes"`
}

// Active returns the active mode's name and settings; ok is false when
// season modes are off.
func (s SeasonModes) Active() (name string, mode SeasonMode, ok bool) {
	if !s.Enabled {
		return "", SeasonMode{}, false
	}
	name = s.CurrentMode
	if name == "" {
		name = "default"
	}
	return name, s.Modes[name], true
}

// ActiveContext is active_context (1-A).
type ActiveContext struct {
	Path                 *string `json:"path"`
	RefreshSkill         *string `json:"refresh_skill"`
	RefreshIntervalHours float64 `json:"refresh_interval_hours"`
}

// Output is output.
type Output struct {
	CycleCard bool `json:"cycle_card"`
}

// Cost is cost (6-C5b, 6-C8).
type Cost struct {
	DailyLimitUSD       float64 `json:"daily_limit_usd"`
	WarningThresholdPct float64 `json:"warning_threshold_pct"`
	MaxBackfillCycles   int     `json:"max_backfill_cycles"`
}

// Leap is leap (2-G/3-K).
type Leap struct {
	RewriteOnStall          bool            `json:"rewrite_on_stall"`
	MaxLines                int             `json:"max_lines"`
	MinDimensionDelta       float64         `json:"min_dimension_delta"`
	MaxAttemptsPerDimension int             `json:"max_attempts_per_dimension"`
	MaxPerDay               int             `json:"max_per_day"`
	GapWeight               float64         `json:"gap_weight"`
	CostLimitUSD            float64         `json:"cost_limit_usd"`
	LockUntilBar            bool            `json:"lock_until_bar"`
	MegaLeap                json.RawMessage `json:"mega_leap,omitempty"`
}

// SkillSpec is one entry of config.skills (our extension): how a skill runs.
type SkillSpec struct {
	Builtin        string            `json:"builtin,omitempty"`
	Command        []string          `json:"command,omitempty"`
	Timeout        string            `json:"timeout,omitempty"`
	TimeoutMinutes float64           `json:"timeout_minutes,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Contract       json.RawMessage   `json:"contract,omitempty"`
	EnvPolicy
}

// EnvPolicy says which of ooda's own credentials a child process (a skill,
// the agent, the judge) may see. By default none: the child gets the
// process environment minus the credentials ooda uses (docs/security.md).
type EnvPolicy struct {
	// EnvPassthrough names credential variables passed through anyway,
	// e.g. ["GITHUB_TOKEN"] for a skill that opens pull requests.
	EnvPassthrough []string `json:"env_passthrough,omitempty"`
	// InheritEnv passes the whole environment, credentials included.
	InheritEnv bool `json:"inherit_env,omitempty"`
}

// TimeoutDuration returns the skill's own timeout, or 0 when it has none.
func (s SkillSpec) TimeoutDuration() (time.Duration, error) {
	if s.Timeout != "" {
		return time.ParseDuration(s.Timeout)
	}
	if s.TimeoutMinutes > 0 {
		return time.Duration(s.TimeoutMinutes * float64(time.Minute)), nil
	}
	return 0, nil
}

// Agent is config.agent (our extension): the template for skills that have
// no executor of their own, e.g. ["claude", "-p", "{skill}"].
type Agent struct {
	Command []string          `json:"command,omitempty"`
	Timeout string            `json:"timeout,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	EnvPolicy
}

// Git is config.git (our extension).
type Git struct {
	CommitState *bool `json:"commit_state,omitempty"`
	Push        *bool `json:"push,omitempty"`
}

// Forge is config.forge (our extension): where pull requests come from.
type Forge struct {
	Provider      string `json:"provider"`
	Repo          string `json:"repo,omitempty"`
	APIURL        string `json:"api_url"`
	DefaultBranch string `json:"default_branch,omitempty"`
	Timeout       string `json:"timeout"`
}

// Session is config.session (our extension, SPEC-NOTES §8).
type Session struct {
	OscillationThreshold int      `json:"oscillation_threshold"`
	StagnationWindow     int      `json:"stagnation_window"`
	RegressionWindow     int      `json:"regression_window"`
	MaxIterations        int      `json:"max_iterations"`
	Completion           string   `json:"completion,omitempty"`
	CompletionCommand    []string `json:"completion_command,omitempty"`
}

// Eval is config.eval (7-B): the opt-in goal-conformance verdict on a
// finished cycle, asked of the judge command. It never moves a score.
type Eval struct {
	Enabled bool `json:"enabled"`
	// Model is handed to the judge as a fact: which model a wrapper
	// should use for the check, when it chooses between several.
	Model string `json:"model,omitempty"`
	// GradeOn are the result types checked; nil means the default
	// (pr_created, pr_merged, action_extracted).
	GradeOn []string `json:"grade_on,omitempty"`
}

// Judge is config.judge (our extension): an optional command for judgments
// that need language.
type Judge struct {
	Command []string `json:"command,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
	EnvPolicy
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
