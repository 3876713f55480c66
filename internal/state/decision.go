package state

import (
	"encoding/json"
	"reflect"
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

	// The fields below are the original OODA loop's record of the same
	// decision (its state design's decision_log), which its readers (the
	// status dashboard's Trend column, its weekly episode) use. They are
	// written on every new entry, null or empty where the cycle had
	// nothing to say, as the original writes them.

	// Scores is the cycle's score table, {domain: score}; empty when no
	// scoring pass ran.
	Scores map[string]float64 `json:"scores"`
	// ConfidenceAtDecision is the selected domain's confidence when it was
	// selected; null when nothing was.
	ConfidenceAtDecision *float64 `json:"confidence_at_decision"`
	// ChainStoppedAt is the skill the chain stopped at and StopReason why
	// (confidence_below_threshold, open_pr_limit, halt_detected, error, or
	// this program's own reason); both null when the chain ran through.
	ChainStoppedAt *string `json:"chain_stopped_at"`
	StopReason     *string `json:"stop_reason"`
	// PRsCreated are the PRs the cycle opened.
	PRsCreated []CreatedPR `json:"prs_created"`
	// SkillGapsDetected are the ids of the gaps the cycle detected.
	SkillGapsDetected []string `json:"skill_gaps_detected"`
	// ProposedSkillsGenerated are the skill proposals (5-B) the cycle
	// wrote, by file name without .md.
	ProposedSkillsGenerated []string `json:"proposed_skills_generated"`
	// ContrarianCheck is the contrarian check the cycle made, null when
	// it made none.
	ContrarianCheck *ContrarianRecord `json:"contrarian_check"`

	// read is the entry as the file held it (nil for a new entry): an
	// entry this program did not write or change is written back as it
	// was, with no key added (see readEntry).
	read *readEntry
}

// CreatedPR is one prs_created item of a decision-log entry. Title and
// branch are null when the cycle did not learn them.
type CreatedPR struct {
	Number int     `json:"number"`
	Title  *string `json:"title"`
	Branch *string `json:"branch"`
}

// ContrarianRecord is a decision-log entry's contrarian_check, in both
// of the original's descriptions of it: the field table's {argument,
// affected_domain, score_adjustment} and the storage example's
// {dominant_domain, dominant_frequency, counter_domain, argument,
// validity, adjustment_applied: {domain: delta}}.
type ContrarianRecord struct {
	Argument        string  `json:"argument"`
	AffectedDomain  string  `json:"affected_domain"`
	ScoreAdjustment float64 `json:"score_adjustment"`
	// DominantDomain is the domain the check leans against, and
	// DominantFrequency how many of the recent decisions it won.
	DominantDomain    string `json:"dominant_domain,omitempty"`
	DominantFrequency int    `json:"dominant_frequency,omitempty"`
	// CounterDomain is AffectedDomain under the storage example's name.
	CounterDomain string `json:"counter_domain,omitempty"`
	// Validity is "plausible" when the adjustment was applied.
	Validity          string             `json:"validity,omitempty"`
	AdjustmentApplied map[string]float64 `json:"adjustment_applied,omitempty"`
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (e *DecisionEntry) UnmarshalJSON(b []byte) error { return e.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (e *DecisionEntry) unmarshalChecked(b []byte) error { return e.decode(b, true) }

func (e *DecisionEntry) decode(b []byte, checked bool) error {
	*e = DecisionEntry{}
	fast := checked && !entryFastOff && !checkedDecodeOff && len(b) > 0 && b[0] == '{' && decodeDecisionFast(b, e)
	if !fast {
		// See decisionfast.go; what it does not read is read here.
		*e = DecisionEntry{}
		if err := unmarshalKeepIn(b, (*decisionAlias)(e), &e.Extra, checked); err != nil {
			return err
		}
	}
	if entryFastOff || entryCopyOff {
		e.read = rememberOwnIn(b, e, checked)
		return nil
	}
	// rememberOwnIn with the copy made by copyDecision (entryfast.go).
	c := decisionAlias(e.canonical())
	e.read = &readEntry{raw: entryBytes(b, checked), typ: decisionEntryType, base: copyDecision(&c), baseExtra: copyExtra(e.Extra)}
	return nil
}

// decisionAlias is DecisionEntry without its methods: the value its
// MarshalJSON encodes, and the type of the copy its record keeps.
type decisionAlias DecisionEntry

var decisionEntryType = reflect.TypeFor[DecisionEntry]()

// readAs is the entry as MarshalJSON encodes it (see rereader).
func (e *DecisionEntry) readAs() (any, Extra) {
	return decisionAlias(e.canonical()), e.Extra
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (e DecisionEntry) MarshalJSON() ([]byte, error) {
	c := e.canonical()
	if b, ok := e.read.unchangedDecision((*decisionAlias)(&c), e.Extra); ok {
		return b, nil
	}
	return e.read.encode(decisionAlias(c), e.Extra)
}

// canonical is the entry as it is encoded: chain_executed is a list, even
// an empty one (4-B: it must be present).
func (e DecisionEntry) canonical() DecisionEntry {
	if e.ChainExecuted == nil {
		e.ChainExecuted = []string{}
	}
	return e
}

// DecidedConfidence is the selected domain's confidence at decision: this
// program's confidence, else the original's confidence_at_decision; nil
// when the entry records neither.
func (e DecisionEntry) DecidedConfidence() *float64 {
	if e.Confidence != nil {
		return e.Confidence
	}
	return e.ConfidenceAtDecision
}

// DecidedScore is the selected domain's score: this program's score, else
// the selected domain's row of the original's scores table; nil when the
// entry records neither.
func (e DecisionEntry) DecidedScore() *float64 {
	if e.Score != nil {
		return e.Score
	}
	if v, ok := e.Scores[e.SelectedDomain]; ok && e.SelectedDomain != "" {
		return &v
	}
	return nil
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

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (s *State) unmarshalChecked(b []byte) error {
	type alias State
	return unmarshalKeepChecked(b, (*alias)(s), &s.Extra)
}

// MarshalJSON writes unknown keys back.
func (s State) MarshalJSON() ([]byte, error) { return marshalKeep(s.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (s State) keepParts() (any, Extra) {
	type alias State
	if s.DecisionLog == nil {
		s.DecisionLog = []DecisionEntry{}
	}
	return alias(s), s.Extra
}
