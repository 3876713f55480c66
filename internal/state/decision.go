package state

import (
	"encoding/json"
)

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
	// PRsProcessed is the same record in the shape the original OODA loop
	// writes and reads before counting a PR ([{number, action, domain,
	// type}]). Kept raw: a mistyped item must not cost the entry, and an
	// original's value is written back as it was.
	PRsProcessed json.RawMessage `json:"prs_processed,omitempty"`
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
