package state

import (
	"encoding/json"
)

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
