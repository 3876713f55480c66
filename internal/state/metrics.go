package state

import ()

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
