package state

import (
	"encoding/json"
	"time"
)

// TimeFormat is the timestamp format of every state file: RFC 3339, UTC, with a Z.
const TimeFormat = time.RFC3339

// FormatTime renders t the way every state file stores instants.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime accepts the timestamp shapes found in the wild (RFC 3339 with or
// without fractional seconds or offset, and a bare date).
func ParseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// DecisionEntry is one state.json decision_log entry (6-A). Optional numbers
// are pointers because skip entries carry no score and older entries lack
// the newer fields.
type DecisionEntry struct {
	Cycle           int             `json:"cycle"`
	Timestamp       string          `json:"timestamp"`
	Action          string          `json:"action,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	SelectedDomain  string          `json:"selected_domain,omitempty"`
	SelectedSkill   string          `json:"selected_skill,omitempty"`
	Score           *float64        `json:"score,omitempty"`
	RawScore        *float64        `json:"raw_score,omitempty"`
	Confidence      *float64        `json:"confidence,omitempty"`
	OrientSummary   string          `json:"orient_summary,omitempty"`
	Result          string          `json:"result,omitempty"`
	ScoreVerified   *bool           `json:"score_verified,omitempty"`
	MemoWritten     *bool           `json:"memo_written,omitempty"`
	PRNumber        *int            `json:"pr_number,omitempty"`
	RiskTier        *int            `json:"risk_tier,omitempty"`
	HadOutput       *bool           `json:"had_output,omitempty"`
	SelectedByAlert bool            `json:"selected_by_alert,omitempty"`
	Guidance        string          `json:"guidance,omitempty"`
	Gated           bool            `json:"gated,omitempty"`
	ResultType      string          `json:"result_type,omitempty"`
	QualityMult     *float64        `json:"quality_multiplier,omitempty"`
	CycleMode       string          `json:"cycle_mode,omitempty"`
	ChainExecuted   []string        `json:"chain_executed"`
	ChainCount      int             `json:"chain_count"`
	ElapsedSeconds  *float64        `json:"elapsed_seconds,omitempty"`
	CostUSD         *float64        `json:"cost_usd,omitempty"`
	PROutcomes      json.RawMessage `json:"pr_outcomes,omitempty"`
	Error           string          `json:"error,omitempty"`
	Extra           Extra           `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (e *DecisionEntry) UnmarshalJSON(b []byte) error {
	type alias DecisionEntry
	return unmarshalKeep(b, (*alias)(e), &e.Extra)
}

// MarshalJSON writes unknown keys back.
func (e DecisionEntry) MarshalJSON() ([]byte, error) {
	type alias DecisionEntry
	if e.ChainExecuted == nil {
		e.ChainExecuted = []string{}
	}
	return marshalKeep(alias(e), e.Extra)
}

// IsSkip reports whether the entry records a cycle that selected nothing to run.
func (e DecisionEntry) IsSkip() bool { return e.Action == "skip" }

// State is agent/state/evolve/state.json.
type State struct {
	SchemaVersion                string            `json:"schema_version,omitempty"`
	CycleCount                   int               `json:"cycle_count"`
	LastCycle                    *string           `json:"last_cycle"`
	CycleInProgress              bool              `json:"cycle_in_progress"`
	CycleStartedAt               string            `json:"cycle_started_at,omitempty"`
	ConsecutiveObserveOnlyCycles int               `json:"consecutive_observe_only_cycles"`
	ConsecutiveSilentFailures    int               `json:"consecutive_silent_failures"`
	DomainLastRun                map[string]string `json:"domain_last_run,omitempty"`
	// CountedPRs are the PR numbers whose merge or rejection already moved
	// a confidence (2-B): the decision log alone forgets after 20 cycles.
	CountedPRs []int `json:"counted_prs,omitempty"`
	// SaturationEvaluated is the cycle whose entry 2-A2 last counted.
	SaturationEvaluated int `json:"saturation_evaluated_cycle,omitempty"`
	// AlertStreaks counts, per domain, the consecutive cycles that observed
	// a warning or critical alert (5-D proposes a goal at 3).
	AlertStreaks map[string]int `json:"alert_streaks,omitempty"`
	// RecentAlerts holds, oldest first, the domains with a warning or
	// critical alert in each of the last 5 cycles (5-E co-occurrence).
	RecentAlerts [][]string `json:"recent_alerts,omitempty"`
	// ContrarianChecks are the instants of the contrarian checks performed
	// (6-C4), so a weekly episode can count its own.
	ContrarianChecks []string `json:"contrarian_checks,omitempty"`
	// FirstOutputs keeps, per domain, had_output of its first 3 executed
	// cycles: the baseline of the contrarian lens review (5-E), which the
	// 20-entry decision log forgets.
	FirstOutputs map[string][]CycleOutput `json:"domain_first_outputs,omitempty"`
	DecisionLog  []DecisionEntry          `json:"decision_log"`
	Extra        Extra                    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (s *State) UnmarshalJSON(b []byte) error {
	type alias State
	return unmarshalKeep(b, (*alias)(s), &s.Extra)
}

// MarshalJSON writes unknown keys back.
func (s State) MarshalJSON() ([]byte, error) {
	type alias State
	if s.DecisionLog == nil {
		s.DecisionLog = []DecisionEntry{}
	}
	return marshalKeep(alias(s), s.Extra)
}

// Goal is one goals.json goal.
type Goal struct {
	ID             string   `json:"id"`
	Title          string   `json:"title,omitempty"`
	Status         string   `json:"status,omitempty"`
	Progress       *float64 `json:"progress,omitempty"`
	Target         *float64 `json:"target,omitempty"`
	CurrentValue   *float64 `json:"current_value,omitempty"`
	MetricCommand  string   `json:"metric_command,omitempty"`
	RelatedDomains []string `json:"related_domains,omitempty"`
	Domain         string   `json:"domain,omitempty"`
	LastActivity   string   `json:"last_activity,omitempty"`
	Extra          Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (g *Goal) UnmarshalJSON(b []byte) error {
	type alias Goal
	return unmarshalKeep(b, (*alias)(g), &g.Extra)
}

// MarshalJSON writes unknown keys back.
func (g Goal) MarshalJSON() ([]byte, error) {
	type alias Goal
	return marshalKeep(alias(g), g.Extra)
}

// ProgressValue is the goal's progress, 0 when unknown.
func (g Goal) ProgressValue() float64 {
	if g.Progress == nil {
		return 0
	}
	return *g.Progress
}

// Goals is agent/state/evolve/goals.json.
type Goals struct {
	SchemaVersion string `json:"schema_version,omitempty"`
	Goals         []Goal `json:"goals"`
	Extra         Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (g *Goals) UnmarshalJSON(b []byte) error {
	type alias Goals
	return unmarshalKeep(b, (*alias)(g), &g.Extra)
}

// MarshalJSON writes unknown keys back.
func (g Goals) MarshalJSON() ([]byte, error) {
	type alias Goals
	if g.Goals == nil {
		g.Goals = []Goal{}
	}
	return marshalKeep(alias(g), g.Extra)
}

// Intervention is a multi-cycle score delta (2-D).
type Intervention struct {
	Domain             string  `json:"domain"`
	Delta              float64 `json:"delta"`
	Type               string  `json:"type,omitempty"`
	Reason             string  `json:"reason,omitempty"`
	CreatedAtCycle     int     `json:"created_at_cycle"`
	ExpiresAfterCycles int     `json:"expires_after_cycles"`
	AppliedCount       int     `json:"applied_count"`
	Extra              Extra   `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (iv *Intervention) UnmarshalJSON(b []byte) error {
	type alias Intervention
	return unmarshalKeep(b, (*alias)(iv), &iv.Extra)
}

// MarshalJSON writes unknown keys back.
func (iv Intervention) MarshalJSON() ([]byte, error) {
	type alias Intervention
	return marshalKeep(alias(iv), iv.Extra)
}

// Memo is one memos.json history entry.
type Memo struct {
	Timestamp     string `json:"timestamp,omitempty"`
	Cycle         int    `json:"cycle,omitempty"`
	Domain        string `json:"domain,omitempty"`
	Type          string `json:"type,omitempty"`
	Message       string `json:"message,omitempty"`
	LastCompleted *int   `json:"last_completed,omitempty"`
	Extra         Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (m *Memo) UnmarshalJSON(b []byte) error {
	type alias Memo
	return unmarshalKeep(b, (*alias)(m), &m.Extra)
}

// MarshalJSON writes unknown keys back.
func (m Memo) MarshalJSON() ([]byte, error) {
	type alias Memo
	return marshalKeep(alias(m), m.Extra)
}

// Memos is agent/state/evolve/memos.json. Files of schema 1.0.0 lack
// interventions, and pre-1.1.0 files keep a "memos" array instead of
// history; both read as the current shape.
type Memos struct {
	SchemaVersion    string             `json:"schema_version,omitempty"`
	ScoreAdjustments map[string]float64 `json:"score_adjustments"`
	Interventions    []Intervention     `json:"interventions"`
	History          []Memo             `json:"history"`
	LastMemo         json.RawMessage    `json:"last_memo"`
	Extra            Extra              `json:"-"`
}

// UnmarshalJSON keeps unknown keys and adopts the legacy "memos" array as history.
func (m *Memos) UnmarshalJSON(b []byte) error {
	type alias Memos
	if err := unmarshalKeep(b, (*alias)(m), &m.Extra); err != nil {
		return err
	}
	if legacy, ok := m.Extra["memos"]; ok && m.History == nil {
		var hist []Memo
		if json.Unmarshal(legacy, &hist) == nil {
			m.History = hist
			delete(m.Extra, "memos")
		}
	}
	return nil
}

// MarshalJSON writes the canonical 1.1.0 shape and unknown keys back.
func (m Memos) MarshalJSON() ([]byte, error) {
	type alias Memos
	m.SchemaVersion = "1.1.0"
	if m.ScoreAdjustments == nil {
		m.ScoreAdjustments = map[string]float64{}
	}
	if m.Interventions == nil {
		m.Interventions = []Intervention{}
	}
	if m.History == nil {
		m.History = []Memo{}
	}
	if len(m.LastMemo) == 0 {
		m.LastMemo = json.RawMessage("null")
	}
	return marshalKeep(alias(m), m.Extra)
}

// Action is one action_queue.json item.
type Action struct {
	ID            string   `json:"id"`
	Title         string   `json:"title,omitempty"`
	SourceDomain  string   `json:"source_domain,omitempty"`
	RiceScore     *float64 `json:"rice_score,omitempty"`
	EffectiveRice *float64 `json:"effective_rice,omitempty"`
	RelatedFiles  []string `json:"related_files,omitempty"`
	Status        string   `json:"status,omitempty"`
	ExtractedAt   string   `json:"extracted_at,omitempty"`
	PRNumber      *int     `json:"pr_number,omitempty"`
	DecayApplied  *float64 `json:"decay_applied,omitempty"`
	RiskTier      *int     `json:"risk_tier,omitempty"`
	Extra         Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (a *Action) UnmarshalJSON(b []byte) error {
	type alias Action
	return unmarshalKeep(b, (*alias)(a), &a.Extra)
}

// MarshalJSON writes unknown keys back.
func (a Action) MarshalJSON() ([]byte, error) {
	type alias Action
	return marshalKeep(alias(a), a.Extra)
}

// Rice is the item's effective RICE, falling back to its raw RICE score.
func (a Action) Rice() float64 {
	if a.EffectiveRice != nil {
		return *a.EffectiveRice
	}
	if a.RiceScore != nil {
		return *a.RiceScore
	}
	return 0
}

// ActionQueue is agent/state/evolve/action_queue.json.
type ActionQueue struct {
	SchemaVersion string   `json:"schema_version,omitempty"`
	Pending       []Action `json:"pending"`
	InProgress    []Action `json:"in_progress"`
	Completed     []Action `json:"completed"`
	Extra         Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (q *ActionQueue) UnmarshalJSON(b []byte) error {
	type alias ActionQueue
	return unmarshalKeep(b, (*alias)(q), &q.Extra)
}

// MarshalJSON writes unknown keys back.
func (q ActionQueue) MarshalJSON() ([]byte, error) {
	type alias ActionQueue
	for _, p := range []*[]Action{&q.Pending, &q.InProgress, &q.Completed} {
		if *p == nil {
			*p = []Action{}
		}
	}
	return marshalKeep(alias(q), q.Extra)
}

// Gap is one skill_gaps.json entry (5-A).
type Gap struct {
	Name      string `json:"name"`
	Type      string `json:"type,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Frequency int    `json:"frequency"`
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Resolved  bool   `json:"resolved"`
	Extra     Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (g *Gap) UnmarshalJSON(b []byte) error {
	type alias Gap
	return unmarshalKeep(b, (*alias)(g), &g.Extra)
}

// MarshalJSON writes unknown keys back.
func (g Gap) MarshalJSON() ([]byte, error) {
	type alias Gap
	return marshalKeep(alias(g), g.Extra)
}

// SkillGaps is agent/state/evolve/skill_gaps.json.
type SkillGaps struct {
	SchemaVersion string `json:"schema_version,omitempty"`
	Gaps          []Gap  `json:"gaps"`
	Extra         Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (s *SkillGaps) UnmarshalJSON(b []byte) error {
	type alias SkillGaps
	return unmarshalKeep(b, (*alias)(s), &s.Extra)
}

// MarshalJSON writes unknown keys back.
func (s SkillGaps) MarshalJSON() ([]byte, error) {
	type alias SkillGaps
	if s.Gaps == nil {
		s.Gaps = []Gap{}
	}
	return marshalKeep(alias(s), s.Extra)
}

// Record adds one occurrence of the named gap: an existing gap gets
// frequency+1 and last_seen, a new one starts at 1. Cap 50: resolved gaps
// are evicted oldest first, then unresolved oldest first.
func (s *SkillGaps) Record(name, typ, detail string, now time.Time) {
	ts := FormatTime(now)
	for i := range s.Gaps {
		if s.Gaps[i].Name == name {
			s.Gaps[i].Frequency++
			s.Gaps[i].LastSeen = ts
			if detail != "" {
				s.Gaps[i].Detail = detail
			}
			s.Gaps[i].Resolved = false
			return
		}
	}
	s.Gaps = append(s.Gaps, Gap{Name: name, Type: typ, Detail: detail, Frequency: 1, FirstSeen: ts, LastSeen: ts})
	for len(s.Gaps) > 50 {
		victim := -1
		for i, g := range s.Gaps {
			if g.Resolved {
				victim = i
				break
			}
		}
		if victim < 0 {
			victim = 0
		}
		s.Gaps = append(s.Gaps[:victim], s.Gaps[victim+1:]...)
	}
}

// Counters are the permanent metrics.json counters (6-C5).
type Counters struct {
	TotalCycles          int            `json:"total_cycles"`
	TotalSkillExecutions int            `json:"total_skill_executions"`
	TotalPRsCreated      int            `json:"total_prs_created"`
	TotalPRsMerged       int            `json:"total_prs_merged"`
	TotalPRsRejected     int            `json:"total_prs_rejected"`
	DomainExecutions     map[string]int `json:"domain_executions"`
	TotalFutileCycles    int            `json:"total_futile_cycles"`
	ActionsAdded         int            `json:"actions_added"`
	ActionsResolved      int            `json:"actions_resolved"`
	CurrentDomain        string         `json:"current_domain,omitempty"`
	CurrentStreak        int            `json:"current_streak"`
	LongestStreak        int            `json:"longest_streak"`
	Extra                Extra          `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *Counters) UnmarshalJSON(b []byte) error {
	type alias Counters
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c Counters) MarshalJSON() ([]byte, error) {
	type alias Counters
	if c.DomainExecutions == nil {
		c.DomainExecutions = map[string]int{}
	}
	return marshalKeep(alias(c), c.Extra)
}

// MetricsCost is metrics.json's cost block.
type MetricsCost struct {
	TotalEstimatedUSD float64 `json:"total_estimated_usd"`
	Extra             Extra   `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *MetricsCost) UnmarshalJSON(b []byte) error {
	type alias MetricsCost
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c MetricsCost) MarshalJSON() ([]byte, error) {
	type alias MetricsCost
	return marshalKeep(alias(c), c.Extra)
}

// Metrics is agent/state/evolve/metrics.json.
type Metrics struct {
	SchemaVersion string      `json:"schema_version,omitempty"`
	Counters      Counters    `json:"counters"`
	Cost          MetricsCost `json:"cost"`
	FirstCycleAt  string      `json:"first_cycle_at,omitempty"`
	LastUpdated   string      `json:"last_updated,omitempty"`
	Extra         Extra       `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	type alias Metrics
	return unmarshalKeep(b, (*alias)(m), &m.Extra)
}

// MarshalJSON writes unknown keys back.
func (m Metrics) MarshalJSON() ([]byte, error) {
	type alias Metrics
	return marshalKeep(alias(m), m.Extra)
}

// CostEntry is one cost_ledger.json entry (6-C5b).
type CostEntry struct {
	CycleID      int      `json:"cycle_id"`
	Timestamp    string   `json:"timestamp"`
	Skill        string   `json:"skill"`
	Chain        []string `json:"chain"`
	EstimatedUSD float64  `json:"estimated_usd"`
	Synthetic    bool     `json:"synthetic,omitempty"`
	Extra        Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *CostEntry) UnmarshalJSON(b []byte) error {
	type alias CostEntry
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c CostEntry) MarshalJSON() ([]byte, error) {
	type alias CostEntry
	if c.Chain == nil {
		c.Chain = []string{}
	}
	return marshalKeep(alias(c), c.Extra)
}

// CostLedger is agent/state/evolve/cost_ledger.json: today's spend (UTC day).
type CostLedger struct {
	SchemaVersion     string      `json:"schema_version"`
	Date              string      `json:"date"`
	Entries           []CostEntry `json:"entries"`
	TotalEstimatedUSD float64     `json:"total_estimated_usd"`
	Extra             Extra       `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *CostLedger) UnmarshalJSON(b []byte) error {
	type alias CostLedger
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c CostLedger) MarshalJSON() ([]byte, error) {
	type alias CostLedger
	if c.Entries == nil {
		c.Entries = []CostEntry{}
	}
	return marshalKeep(alias(c), c.Extra)
}

// NewCostLedger is the initial ledger of 1-A for the UTC day of now.
func NewCostLedger(now time.Time) CostLedger {
	return CostLedger{SchemaVersion: "1.0.0", Date: now.UTC().Format("2006-01-02"), Entries: []CostEntry{}}
}

// ResetIfNewDay applies the 1-A daily reset: a ledger from an earlier UTC
// day starts over at zero. It reports whether it reset. A ledger dated
// after today is clock skew (or a hostile edit), not a new day: it is kept
// as it is, entries and total, so the day's spend still counts against
// the daily cap (see DateInFuture, for the caller's warning).
func (c *CostLedger) ResetIfNewDay(now time.Time) bool {
	today := now.UTC().Format("2006-01-02")
	if c.Date == today || c.DateInFuture(now) {
		return false
	}
	c.Date = today
	c.Entries = []CostEntry{}
	c.TotalEstimatedUSD = 0
	return true
}

// DateInFuture reports whether the ledger's date is a UTC day after now's:
// the clock went back, or the file was edited. ResetIfNewDay keeps such a
// ledger; the caller warns.
func (c *CostLedger) DateInFuture(now time.Time) bool {
	d, err := time.Parse("2006-01-02", c.Date)
	if err != nil {
		return false
	}
	today, _ := time.Parse("2006-01-02", now.UTC().Format("2006-01-02"))
	return d.After(today)
}

// Outcome is one outcomes.json entry (6-C9).
type Outcome struct {
	CycleID    int    `json:"cycle_id"`
	Timestamp  string `json:"timestamp,omitempty"`
	Domain     string `json:"domain,omitempty"`
	Skill      string `json:"skill,omitempty"`
	Result     string `json:"result,omitempty"`
	ResultType string `json:"result_type"`
	// Score is the winner's score, kept so that weekly episodes can rank
	// decisions beyond the 20-entry decision log.
	Score         *float64 `json:"score,omitempty"`
	ProcessFactor *float64 `json:"process_factor,omitempty"`
	QualityMult   float64  `json:"quality_multiplier"`
	PRNumber      *int     `json:"pr_number"`
	HadOutput     *bool    `json:"had_output,omitempty"`
	OnMission     *bool    `json:"on_mission,omitempty"`
	ArtifactScore *float64 `json:"artifact_score,omitempty"`
	CycleMode     string   `json:"cycle_mode,omitempty"`
	Extra         Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	type alias Outcome
	return unmarshalKeep(b, (*alias)(o), &o.Extra)
}

// MarshalJSON writes unknown keys back.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type alias Outcome
	return marshalKeep(alias(o), o.Extra)
}

// Outcomes is agent/state/evolve/outcomes.json.
type Outcomes struct {
	SchemaVersion string    `json:"schema_version,omitempty"`
	Entries       []Outcome `json:"entries"`
	Extra         Extra     `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (o *Outcomes) UnmarshalJSON(b []byte) error {
	type alias Outcomes
	return unmarshalKeep(b, (*alias)(o), &o.Extra)
}

// MarshalJSON writes unknown keys back.
func (o Outcomes) MarshalJSON() ([]byte, error) {
	type alias Outcomes
	if o.Entries == nil {
		o.Entries = []Outcome{}
	}
	return marshalKeep(alias(o), o.Extra)
}

// CycleLogLine is one line of the append-only cycle_log.jsonl (6-C9).
type CycleLogLine struct {
	CycleID       int      `json:"cycle_id"`
	Timestamp     string   `json:"timestamp"`
	Domain        string   `json:"domain"`
	Skill         string   `json:"skill"`
	Score         *float64 `json:"score"`
	Confidence    *float64 `json:"confidence"`
	Result        string   `json:"result"`
	ResultType    string   `json:"result_type"`
	QualityMult   float64  `json:"quality_multiplier"`
	PRNumber      *int     `json:"pr_number"`
	HadOutput     bool     `json:"had_output"`
	CostUSD       float64  `json:"cost_usd"`
	Saturation    int      `json:"saturation"`
	OnMission     bool     `json:"on_mission"`
	ArtifactScore *float64 `json:"artifact_score"`
}

// Checkpoint is one checkpoints.json entry (4-C2): the recovery point taken
// before an action, restored by an automatic or manual rollback.
type Checkpoint struct {
	Cycle              int             `json:"cycle"`
	Branch             string          `json:"branch"`
	CommitSHA          string          `json:"commit_sha"`
	Timestamp          string          `json:"timestamp"`
	StateSnapshot      Snapshotted     `json:"state_snapshot"`
	LeapBaselineScores json.RawMessage `json:"leap_baseline_scores"`
	RubricHash         *string         `json:"rubric_hash"`
	Reason             string          `json:"reason,omitempty"`
	Extra              Extra           `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	type alias Checkpoint
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c Checkpoint) MarshalJSON() ([]byte, error) {
	type alias Checkpoint
	if len(c.LeapBaselineScores) == 0 {
		c.LeapBaselineScores = json.RawMessage("null")
	}
	return marshalKeep(alias(c), c.Extra)
}

// Snapshotted is the state a checkpoint keeps: confidence.json as it was
// (raw, in its own shape) and the pending actions.
type Snapshotted struct {
	Confidence  json.RawMessage `json:"confidence"`
	ActionQueue []Action        `json:"action_queue"`
}

// Checkpoints is agent/state/evolve/checkpoints.json.
type Checkpoints struct {
	SchemaVersion string       `json:"schema_version"`
	Checkpoints   []Checkpoint `json:"checkpoints"`
	Extra         Extra        `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *Checkpoints) UnmarshalJSON(b []byte) error {
	type alias Checkpoints
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c Checkpoints) MarshalJSON() ([]byte, error) {
	type alias Checkpoints
	if c.Checkpoints == nil {
		c.Checkpoints = []Checkpoint{}
	}
	if c.SchemaVersion == "" {
		c.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(c), c.Extra)
}

// CheckpointsKept is how many checkpoints are retained (4-C2).
const CheckpointsKept = 5

// Add appends a checkpoint, keeping the last CheckpointsKept.
func (c *Checkpoints) Add(cp Checkpoint) {
	c.Checkpoints = append(c.Checkpoints, cp)
	if n := len(c.Checkpoints); n > CheckpointsKept {
		c.Checkpoints = append([]Checkpoint(nil), c.Checkpoints[n-CheckpointsKept:]...)
	}
}

// Find returns the newest checkpoint of cycle.
func (c Checkpoints) Find(cycle int) (Checkpoint, bool) {
	for i := len(c.Checkpoints) - 1; i >= 0; i-- {
		if c.Checkpoints[i].Cycle == cycle {
			return c.Checkpoints[i], true
		}
	}
	return Checkpoint{}, false
}

// CycleOutput is whether one executed cycle produced output.
type CycleOutput struct {
	Cycle     int  `json:"cycle"`
	HadOutput bool `json:"had_output"`
}
