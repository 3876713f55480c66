package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
)

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

	// read is the item as the file held it (nil for a new item). A copy
	// of the item keeps it, so an item moved from one list to another is
	// still written as it was read; an item built anew is written anew.
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the item as read (see readEntry).
func (a *Action) UnmarshalJSON(b []byte) error {
	type alias Action
	*a = Action{}
	if err := unmarshalKeep(b, (*alias)(a), &a.Extra); err != nil {
		return err
	}
	a.read = rememberEntry(b, alias(*a), a.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; an item read from the file is
// written as it was read, but for the keys that changed (see readEntry):
// 75.0 stays 75.0, "pr_number": null and "related_files": [] stay.
func (a Action) MarshalJSON() ([]byte, error) {
	type alias Action
	return a.read.encode(alias(a), a.Extra)
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

	// decodeWarnings say which older shape decoding read, as
	// "<JSON pointer>: <reason>".
	decodeWarnings []string `json:"-"`
	// at holds, when an item marked in progress was moved out of
	// pending, where each item of Pending and InProgress was in the file
	// (see filePointers).
	at map[string][]string
}

// filePointers gives walkLoose the place in the file of each item of
// Pending and InProgress, once items marked in progress inside pending
// have been moved.
func (q ActionQueue) filePointers(field string) []string {
	return q.at[field]
}

// UnmarshalJSON keeps unknown keys and reads the older shapes of the
// file: a plain array of actions, and {"actions": [...]} (without any of
// pending, in_progress, completed), each item placed by its status (see
// placeAction). An item in pending whose status is "in_progress" — the
// original project's implementation skill marks the action it works on in
// place — is moved to InProgress, where the stale-item hygiene (6-C6)
// finds it. Any of these is written back in the current shape, the next
// time the queue is saved.
func (q *ActionQueue) UnmarshalJSON(b []byte) error {
	type alias ActionQueue
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		items, unread, ok := readList[Action](t)
		if !ok {
			return fmt.Errorf("not an array of actions")
		}
		*q = ActionQueue{}
		for _, a := range items {
			q.placeAction(a)
		}
		q.keepLegacy(t, unread)
		q.decodeWarnings = []string{fmt.Sprintf("(root): a plain array of %d actions (an older shape of the file); read as pending, in_progress and completed by status, and written back in the current shape%s", len(items), unreadNote(unread))}
		return nil
	}
	if err := unmarshalKeep(b, (*alias)(q), &q.Extra); err != nil {
		return err
	}
	if raw, ok := q.Extra["actions"]; ok && q.Pending == nil && q.InProgress == nil && q.Completed == nil {
		// An "actions" key that is not an array stays an unknown key, kept
		// as it is.
		if items, unread, ok := readList[Action](raw); ok {
			delete(q.Extra, "actions")
			if len(q.Extra) == 0 {
				q.Extra = nil
			}
			for _, a := range items {
				q.placeAction(a)
			}
			q.keepLegacy(raw, unread)
			q.decodeWarnings = append(q.decodeWarnings, fmt.Sprintf("/actions: %d actions in an older shape of the file; read as pending, in_progress and completed by status, and written back in the current shape%s", len(items), unreadNote(unread)))
		}
	}
	if slices.ContainsFunc(q.Pending, func(a Action) bool { return a.Status == actionStatusInProgress }) {
		pendingAt, inProgressAt := q.fileIndexes("pending", len(q.Pending)), q.fileIndexes("in_progress", len(q.InProgress))
		var pending []Action
		var moved []Action
		var movedAt []string
		q.at = map[string][]string{}
		for i, a := range q.Pending {
			if a.Status == actionStatusInProgress {
				moved = append(moved, a)
				movedAt = append(movedAt, "/pending/"+strconv.Itoa(pendingAt[i]))
				continue
			}
			pending = append(pending, a)
			q.at["pending"] = append(q.at["pending"], "/pending/"+strconv.Itoa(pendingAt[i]))
		}
		for _, j := range inProgressAt {
			q.at["in_progress"] = append(q.at["in_progress"], "/in_progress/"+strconv.Itoa(j))
		}
		q.Pending = pending
		q.InProgress = append(q.InProgress, moved...)
		q.at["in_progress"] = append(q.at["in_progress"], movedAt...)
	}
	return nil
}

// fileIndexes is where in the file's list each of the n items read from
// it was: its own numbering, unless the list held elements that are not
// actions (kept in Extra, see decodeFields).
func (q *ActionQueue) fileIndexes(list string, n int) []int {
	out := make([]int, 0, n)
	if raw, ok := q.Extra[list]; ok {
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for i, e := range elems {
				if _, _, ok := readLoose(e, reflect.TypeFor[Action](), "", nil); ok {
					out = append(out, i)
				}
			}
		}
	}
	if len(out) != n {
		out = out[:0]
		for i := range n {
			out = append(out, i)
		}
	}
	return out
}

// actionStatusInProgress is the status of an action being worked on.
const actionStatusInProgress = "in_progress"

// keepLegacy keeps the elements of a list of an older shape of the file
// that are not actions (unread of them): the list is kept as pending's
// value as the file had it, so that writing the queue puts them in
// pending, each after the item that preceded it (see keepUnreadable).
func (q *ActionQueue) keepLegacy(raw json.RawMessage, unread int) {
	if unread == 0 {
		return
	}
	if q.Extra == nil {
		q.Extra = Extra{}
	}
	q.Extra["pending"] = append(json.RawMessage(nil), raw...)
}

// unreadNote is what a legacy-shape warning adds about the elements that
// are not actions: they are kept, and the warnings about each name them
// where they go.
func unreadNote(unread int) string {
	if unread == 0 {
		return ""
	}
	return fmt.Sprintf("; %d element(s) that are not actions are kept, in pending (named below as /pending/<index in the older array>)", unread)
}

// placeAction files an action of an older, flat shape of the file by its
// status: in progress, finished (completed, merged, rejected, superseded,
// decayed), or pending (pending, proposed, blocked, none: the cycle's
// queue rules take them from there).
func (q *ActionQueue) placeAction(a Action) {
	switch a.Status {
	case actionStatusInProgress:
		q.InProgress = append(q.InProgress, a)
	case "completed", "merged", "rejected", "superseded", "decayed":
		q.Completed = append(q.Completed, a)
	default:
		q.Pending = append(q.Pending, a)
	}
}

// DecodeWarnings lists what decoding read differently from the file, each
// as "<JSON pointer>: <reason>" (an older shape of the file), for the
// caller to report with the file's name.
func (q ActionQueue) DecodeWarnings() []string { return q.decodeWarnings }

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
