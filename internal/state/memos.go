package state

import (
	"encoding/json"
)

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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (iv *Intervention) UnmarshalJSON(b []byte) error { return iv.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (iv *Intervention) unmarshalChecked(b []byte) error { return iv.decode(b, true) }

func (iv *Intervention) decode(b []byte, checked bool) error {
	if checked && iv.decodeFast(b) {
		return nil
	}
	*iv = Intervention{}
	if err := unmarshalKeepIn(b, (*interventionFields)(iv), &iv.Extra, checked); err != nil {
		return err
	}
	iv.read = rememberIntervention(b, (*interventionFields)(iv), checked)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry):
// a "delta": -10.0 stays -10.0 until the delta itself changes.
func (iv Intervention) MarshalJSON() ([]byte, error) {
	if b, ok := iv.encodeFast(); ok {
		return b, nil
	}
	return iv.read.encode(interventionFields(iv), iv.Extra)
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (m *Memo) UnmarshalJSON(b []byte) error { return m.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (m *Memo) unmarshalChecked(b []byte) error { return m.decode(b, true) }

func (m *Memo) decode(b []byte, checked bool) error {
	type alias Memo
	*m = Memo{}
	if err := unmarshalKeepIn(b, (*alias)(m), &m.Extra, checked); err != nil {
		return err
	}
	m.read = rememberEntryIn(b, alias(*m), checked)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, key order included, but for the keys that
// changed (see readEntry).
func (m Memo) MarshalJSON() ([]byte, error) {
	type alias Memo
	return m.read.encode(alias(m), m.Extra)
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
func (m *Memos) UnmarshalJSON(b []byte) error { return m.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (m *Memos) unmarshalChecked(b []byte) error { return m.decode(b, true) }

func (m *Memos) decode(b []byte, checked bool) error {
	type alias Memos
	if err := unmarshalKeepIn(b, (*alias)(m), &m.Extra, checked); err != nil {
		return err
	}
	if legacy, ok := m.Extra["memos"]; ok && m.History == nil {
		if hist, unread, ok := readList[Memo](legacy); ok || isNull(legacy) {
			m.History = hist
			delete(m.Extra, "memos")
			if unread > 0 {
				// Its elements that are not memos stay in history, each
				// after the memo that preceded it (see keepUnreadable).
				m.Extra["history"] = legacy
			}
		}
	}
	return nil
}

// MarshalJSON writes the canonical 1.1.0 shape and unknown keys back.
func (m Memos) MarshalJSON() ([]byte, error) {
	v, extra := m.withDefaults()
	return marshalKeep(v, extra)
}

// memosEncoded is Memos with its interventions already encoded (see
// encodedInterventions): the value keepParts hands to encodeSpliced,
// which writes each entry as it is when it already is its indentation
// there. Its fields are Memos's, in the same order and with the same
// keys, so that both write the same document.
type memosEncoded struct {
	SchemaVersion    string             `json:"schema_version,omitempty"`
	ScoreAdjustments map[string]float64 `json:"score_adjustments"`
	Interventions    indentedRawList    `json:"interventions"`
	History          []Memo             `json:"history"`
	LastMemo         json.RawMessage    `json:"last_memo"`
}

// keepParts is what MarshalJSON encodes (see keepParter), its
// interventions encoded already when the file keeps no unknown keys
// (marshalKeep reads the type of a list that unknown keys may hold
// unreadable elements of).
func (m Memos) keepParts() (any, Extra) {
	v, extra := m.withDefaults()
	if len(extra) == 0 {
		if ivs, ok := encodedInterventions(v.Interventions); ok {
			return memosEncoded{SchemaVersion: v.SchemaVersion, ScoreAdjustments: v.ScoreAdjustments,
				Interventions: ivs, History: v.History, LastMemo: v.LastMemo}, nil
		}
	}
	return memosAlias(v), extra
}

// memosAlias is Memos without its methods.
type memosAlias Memos

// withDefaults is m in the 1.1.0 shape, its empty lists and maps
// written as such, and its unknown keys.
func (m Memos) withDefaults() (memosAlias, Extra) {
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
	return memosAlias(m), m.Extra
}
