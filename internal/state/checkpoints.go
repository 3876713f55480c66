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
	// InProgressIDs are the ids of the actions in progress at the
	// checkpoint (action_queue_in_progress_ids, which only ooda writes):
	// a rollback keeps such an action when it is pending by then, as it
	// existed before the checkpoint.
	InProgressIDs []string `json:"-"`
	Extra         Extra    `json:"-"`
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

// SnapshotOf is the snapshot a checkpoint takes of confidence.json (its
// bytes, or nil) and of the queue q, read from queueFile (the bytes of
// action_queue.json, or nil). The pending actions kept are what the
// file's pending[] holds, as q has them now: q's pending actions, then
// those q has in progress because the file keeps them inside pending[]
// marked "in_progress" (as the original's implementation skill leaves
// them) — the list the original's own checkpoint takes. The ids of the
// other actions in progress are kept beside it.
func SnapshotOf(confidence []byte, q ActionQueue, queueFile []byte) Snapshotted {
	filed := filedPendingIDs(queueFile)
	inPending := map[string]bool{}
	for _, a := range q.Pending {
		inPending[a.ID] = true
	}
	var marked []Action
	ids := []string{}
	for _, a := range q.InProgress {
		if _, ok := filed[a.ID]; ok && a.ID != "" && !inPending[a.ID] && a.Status == actionStatusInProgress {
			inPending[a.ID] = true
			marked = append(marked, a)
			continue
		}
		if a.ID != "" {
			ids = append(ids, a.ID)
		}
	}
	// Each marked action goes where the file has it: before the first
	// pending action the file has after it.
	sort.SliceStable(marked, func(i, j int) bool { return filed[marked[i].ID] < filed[marked[j].ID] })
	pending := make([]Action, 0, len(q.Pending)+len(marked))
	for _, a := range q.Pending {
		if at, ok := filed[a.ID]; ok {
			for len(marked) > 0 && filed[marked[0].ID] < at {
				pending, marked = append(pending, marked[0]), marked[1:]
			}
		}
		pending = append(pending, a)
	}
	s := NewSnapshot(confidence, append(pending, marked...))
	if len(ids) > 0 {
		s.InProgressIDs = ids
	}
	return s
}

// filedPendingIDs maps the id of each action in the pending[] of an
// action_queue.json (its bytes), read as the queue reads it, to its place
// there (the first, for an id there twice).
func filedPendingIDs(file []byte) map[string]int {
	ids := map[string]int{}
	t := bytes.TrimSpace(file)
	if len(t) == 0 || t[0] != '{' {
		return ids
	}
	keys, vals, err := objectMembers(t)
	if err != nil {
		return ids
	}
	for i, k := range keys {
		if k != "pending" {
			continue
		}
		items, _, _ := readList[Action](vals[i])
		for j, a := range items {
			if _, dup := ids[a.ID]; !dup {
				ids[a.ID] = j
			}
		}
	}
	return ids
}

// snapshotKeys are the keys Snapshotted reads; any other key is kept in
// Extra.
var snapshotKeys = map[string]bool{"confidence": true, "action_queue": true, "action_queue_pending": true}

// inProgressIDsKey is where ooda's snapshots keep InProgressIDs.
const inProgressIDsKey = "action_queue_in_progress_ids"

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
		case k == inProgressIDsKey && readIDs(vals[i], &s.InProgressIDs):
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
	if s.InProgressIDs != nil {
		b, err := marshalNoEscape(s.InProgressIDs)
		if err != nil {
			return nil, err
		}
		write(inProgressIDsKey, b)
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

// readIDs reads raw as a list of ids into ids; false (ids untouched) when
// it is not an array of strings.
func readIDs(raw json.RawMessage, ids *[]string) bool {
	var l []string
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &l) != nil {
		return false
	}
	*ids = l
	return true
}

// Queue is the pending actions to restore, and whether the snapshot kept
// a list of them at all.
func (s Snapshotted) Queue() ([]Action, bool) {
	return append([]Action{}, s.ActionQueue...), s.HasQueue
}

// RestoreQueue is the queue a rollback to c leaves, given cur, the queue
// there is now; ok is false when the snapshot kept no list of pending
// actions (the queue is then left as it is). After it every action is in
// one list, and none that existed at the checkpoint is lost:
//
//   - pending is the snapshot's list, in its order, each action as it was
//     kept; those actions leave in_progress and completed, since the
//     rollback undoes what moved them there;
//   - an action pending now that the snapshot does not hold stays pending
//     (after them) when it existed at the checkpoint: it was in progress
//     then (InProgressIDs) or was extracted before the checkpoint's
//     timestamp. Any other one was added since and is dropped with the
//     rest of what the rollback undoes, as the original drops it (the
//     original's checkpoints keep no InProgressIDs, so there an action
//     without extracted_at requeued since cannot be told from one added);
//   - in_progress and completed otherwise stay as they are.
func (c Checkpoint) RestoreQueue(cur ActionQueue) (q ActionQueue, ok bool) {
	kept, ok := c.StateSnapshot.Queue()
	if !ok {
		return cur, false
	}
	restored := map[string]bool{}
	pending := make([]Action, 0, len(kept)+len(cur.Pending))
	for _, a := range kept {
		if a.ID != "" {
			if restored[a.ID] {
				continue
			}
			restored[a.ID] = true
		}
		pending = append(pending, a)
	}
	wasInProgress := map[string]bool{}
	for _, id := range c.StateSnapshot.InProgressIDs {
		wasInProgress[id] = true
	}
	then, thenOK := ParseTime(c.Timestamp)
	existed := func(a Action) bool {
		if a.ID != "" && wasInProgress[a.ID] {
			return true
		}
		at, ok := ParseTime(a.ExtractedAt)
		return ok && thenOK && at.Before(then)
	}
	for _, a := range cur.Pending {
		if (a.ID == "" || !restored[a.ID]) && existed(a) {
			pending = append(pending, a)
		}
	}
	without := func(l []Action) []Action {
		out := make([]Action, 0, len(l))
		for _, a := range l {
			if a.ID == "" || !restored[a.ID] {
				out = append(out, a)
			}
		}
		return out
	}
	q = cur
	q.Pending, q.InProgress, q.Completed = pending, without(cur.InProgress), without(cur.Completed)
	return q, true
}

// RestoreConfidence is the confidence a rollback puts back, given cur, the
// confidence.json there is now. ok is false when the snapshot kept none.
// A nested snapshot against a nested file (a copy of the whole file), or
// any snapshot when there is no file now, is restored as it is, and exact
// says so: its bytes are the file to write. A flat {domain: score}
// snapshot — the original's, which may hold only some of the scores — or
// a snapshot in the other shape has its scores set in cur, which keeps
// its shape, its key order and every other key: restoring never flattens
// the file nor drops a key from it.
func (s Snapshotted) RestoreConfidence(cur Confidence, now time.Time) (conf Confidence, exact, ok bool) {
	t := bytes.TrimSpace(s.Confidence)
	if len(t) == 0 || t[0] != '{' {
		return cur, false, false
	}
	var kept Confidence
	if json.Unmarshal(t, &kept) != nil {
		return cur, false, false
	}
	if cur.top == nil || (kept.Nested() && cur.Nested()) {
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
