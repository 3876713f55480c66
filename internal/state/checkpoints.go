package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"time"
)

// Checkpoint is one checkpoints.json entry (4-C2): the recovery point taken
// before an action, restored by an automatic or manual rollback. A
// checkpoint read from the file is written back as it was read.
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
	read               *readEntry
}

// UnmarshalJSON keeps unknown keys.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	type alias Checkpoint
	*c = Checkpoint{}
	if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
		return err
	}
	c.read = rememberEntry(b, alias(*c), c.Extra)
	return nil
}

// MarshalJSON writes unknown keys back.
func (c Checkpoint) MarshalJSON() ([]byte, error) {
	type alias Checkpoint
	if len(c.LeapBaselineScores) == 0 {
		c.LeapBaselineScores = json.RawMessage("null")
	}
	return c.read.encode(alias(c), c.Extra)
}

// Snapshotted is the state a checkpoint keeps: confidence.json as it was
// (raw, in its own shape) and the pending actions.
//
// The original writes the pending actions under action_queue_pending (its
// state design) or action_queue (its evolve skill), and its confidence as a
// copy of confidence.json or as a flat {domain: score}. Both keys are read;
// ooda writes both, with the same list, so either of the original's
// rollbacks finds the queue (twice the pending list, in at most
// CheckpointsKept checkpoints). A snapshot that kept no list restores no
// queue: it never empties one.
type Snapshotted struct {
	Confidence json.RawMessage `json:"confidence"`
	// ActionQueue is the pending actions kept; HasQueue says the snapshot
	// kept a list at all (an empty one included).
	ActionQueue []Action `json:"-"`
	HasQueue    bool     `json:"-"`
	Extra       Extra    `json:"-"`
	// raw and enc are the snapshot as read and its encoding then: an
	// unchanged snapshot is written back as it was.
	raw, enc []byte
}

// NewSnapshot is the snapshot of a confidence.json (its bytes, or nil when
// there is none) and the pending actions.
func NewSnapshot(confidence []byte, pending []Action) Snapshotted {
	if len(confidence) == 0 {
		confidence = []byte("null")
	}
	return Snapshotted{Confidence: json.RawMessage(confidence), ActionQueue: append([]Action{}, pending...), HasQueue: true}
}

// snapshotKeys are the keys Snapshotted reads; any other key is kept in
// Extra.
var snapshotKeys = map[string]bool{"confidence": true, "action_queue": true, "action_queue_pending": true}

// UnmarshalJSON reads either key of the pending actions (the state
// design's action_queue_pending first), each action on its own.
func (s *Snapshotted) UnmarshalJSON(b []byte) error {
	*s = Snapshotted{}
	if isNull(b) {
		return nil
	}
	keys, vals, err := objectMembers(bytes.TrimSpace(b))
	if err != nil {
		return err
	}
	lists := map[string]json.RawMessage{}
	for i, k := range keys {
		switch {
		case k == "confidence":
			s.Confidence = vals[i]
		case snapshotKeys[k]:
			lists[k] = vals[i]
		default:
			if s.Extra == nil {
				s.Extra = Extra{}
			}
			s.Extra[k] = vals[i]
		}
	}
	for _, k := range []string{"action_queue_pending", "action_queue"} {
		raw, ok := lists[k]
		if !ok || isNull(raw) {
			continue
		}
		v, _, ok := readLoose(raw, reflect.TypeFor[[]Action](), "", nil)
		if !ok {
			continue
		}
		s.ActionQueue, s.HasQueue = v.Interface().([]Action), true
		break
	}
	s.raw = append([]byte(nil), bytes.TrimSpace(b)...)
	s.enc, _ = s.encode()
	return nil
}

// MarshalJSON writes a snapshot as it was read when it has not changed;
// otherwise the confidence, the pending actions under both keys, and the
// unknown keys.
func (s Snapshotted) MarshalJSON() ([]byte, error) {
	enc, err := s.encode()
	if err != nil {
		return nil, err
	}
	if s.raw != nil && bytes.Equal(enc, s.enc) {
		return s.raw, nil
	}
	return enc, nil
}

func (s Snapshotted) encode() ([]byte, error) {
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	buf.WriteByte('{')
	conf := s.Confidence
	if len(bytes.TrimSpace(conf)) == 0 {
		conf = json.RawMessage("null")
	}
	write("confidence", conf)
	if s.HasQueue {
		q := s.ActionQueue
		if q == nil {
			q = []Action{}
		}
		b, err := marshalNoEscape(q)
		if err != nil {
			return nil, err
		}
		write("action_queue", b)
		write("action_queue_pending", b)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		write(k, s.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Queue is the pending actions to restore, and whether the snapshot kept
// a list of them at all.
func (s Snapshotted) Queue() ([]Action, bool) {
	return append([]Action{}, s.ActionQueue...), s.HasQueue
}

// RestoreConfidence is the confidence a rollback puts back, given cur, the
// confidence.json there is now. ok is false when the snapshot kept none.
// A snapshot in cur's shape (or with no file now) is restored as it is,
// and exact says so: its bytes are the file to write. A snapshot in the
// other shape (the original's flat {domain: score} against a nested file)
// has its scores set in cur, which keeps its shape and every other field:
// restoring must never flatten the file.
func (s Snapshotted) RestoreConfidence(cur Confidence, now time.Time) (conf Confidence, exact, ok bool) {
	t := bytes.TrimSpace(s.Confidence)
	if len(t) == 0 || t[0] != '{' {
		return cur, false, false
	}
	var kept Confidence
	if json.Unmarshal(t, &kept) != nil {
		return cur, false, false
	}
	if cur.top == nil || kept.Nested() == cur.Nested() {
		return kept, true, true
	}
	conf = cur
	conf.Scores = make(map[string]float64, len(cur.Scores)+len(kept.Scores))
	for d, v := range cur.Scores {
		conf.Scores[d] = v
	}
	for _, d := range sortedScoreKeys(kept.Scores) {
		v := kept.Scores[d]
		if old, had := cur.Scores[d]; !had || old != v {
			conf.Set(d, v, now)
		}
	}
	return conf, false, true
}

func sortedScoreKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
