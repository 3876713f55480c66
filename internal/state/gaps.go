package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Gap is one skill_gaps.json entry. The original project writes two
// shapes and both are read: its 5-A shape {name, type, detail, frequency,
// first_seen, last_seen, resolved} and its state design's (and 6-C8's)
// {id, description, detected_at, detected_in_cycle, ooda_phase, frequency,
// last_seen_cycle, related_domain, proposed_skill, resolved, resolved_at,
// resolution, type}. A gap this program adds carries both, so that either
// program's readers (which count gaps by type and by resolved) find every
// field they use; a gap read from the file keeps the keys it had and gets
// no others (see readEntry).
type Gap struct {
	ID              string  `json:"id,omitempty"`
	Name            string  `json:"name,omitempty"`
	Type            string  `json:"type,omitempty"`
	Description     string  `json:"description,omitempty"`
	Detail          string  `json:"detail,omitempty"`
	DetectedAt      string  `json:"detected_at,omitempty"`
	DetectedInCycle *int    `json:"detected_in_cycle,omitempty"`
	OODAPhase       string  `json:"ooda_phase,omitempty"`
	Frequency       int     `json:"frequency"`
	FirstSeen       string  `json:"first_seen,omitempty"`
	LastSeen        string  `json:"last_seen,omitempty"`
	LastSeenCycle   *int    `json:"last_seen_cycle,omitempty"`
	RelatedDomain   *string `json:"related_domain"`
	ProposedSkill   *string `json:"proposed_skill"`
	Resolved        bool    `json:"resolved"`
	ResolvedAt      *string `json:"resolved_at"`
	Resolution      *string `json:"resolution"`
	Extra           Extra   `json:"-"`

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (g *Gap) UnmarshalJSON(b []byte) error { return g.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (g *Gap) unmarshalChecked(b []byte) error { return g.decode(b, true) }

func (g *Gap) decode(b []byte, checked bool) error {
	type alias Gap
	*g = Gap{}
	if err := unmarshalKeepIn(b, (*alias)(g), &g.Extra, checked); err != nil {
		return err
	}
	g.read = rememberEntryIn(b, alias(*g), checked)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (g Gap) MarshalJSON() ([]byte, error) {
	type alias Gap
	return g.read.encode(alias(g), g.Extra)
}

// Key is what names the gap: its name (5-A's shape), else its id (the
// state design's). Two gaps with the same key are the same gap.
func (g Gap) Key() string {
	if g.Name != "" {
		return g.Name
	}
	return g.ID
}

// Text is what the gap says happened: detail (5-A) or description.
func (g Gap) Text() string {
	if g.Detail != "" {
		return g.Detail
	}
	return g.Description
}

// FirstSeenAt is when the gap was first seen, in whichever shape the entry
// records it.
func (g Gap) FirstSeenAt() string {
	if g.FirstSeen != "" {
		return g.FirstSeen
	}
	return g.DetectedAt
}

// IsLoopBreak reports a gap that flags one of the loop's own invariants
// broken (6-C8's cost-ledger backfill), an operational alert rather than
// a missing skill: no skill is proposed for it.
func (g Gap) IsLoopBreak() bool { return g.Type == GapLoopBreak }

// GapLoopBreak is the type of the gap 6-C8 records when it backfills the
// cost ledger; the original's status reader counts gaps of this type apart.
const GapLoopBreak = "learning_loop_break"

// has says whether the entry as read held key; a new entry has every key.
// Fields an old entry lacks are not added to it: it is updated in the
// shape it has.
func (g Gap) has(key string) bool { return g.read == nil || g.read.had(key) }

// ProposalName is the file name (without .md) of the gap's skill proposal
// under proposed-skills/: its key when that is a plain file name, else the
// key made plain plus a hash of the key, so that two gaps never share a
// proposal (a/b and a_b would) and a gap without a name or an id still gets
// one, from what it describes.
func (g Gap) ProposalName() string {
	key := g.Key()
	if key == "" {
		sum := sha256.Sum256([]byte(g.Type + "\x00" + g.Text() + "\x00" + g.FirstSeenAt()))
		return "unnamed-gap-" + hex.EncodeToString(sum[:4])
	}
	plain := safeName(key)
	if len(plain) > 80 {
		plain = plain[:80]
	}
	if strings.HasPrefix(plain, ".") {
		// A hidden file is not listed as a proposal.
		plain = "_" + plain[1:]
	}
	if plain == key {
		return plain
	}
	sum := sha256.Sum256([]byte(key))
	return plain + "-" + hex.EncodeToString(sum[:4])
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

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (s *SkillGaps) unmarshalChecked(b []byte) error {
	type alias SkillGaps
	return unmarshalKeepChecked(b, (*alias)(s), &s.Extra)
}

// MarshalJSON writes unknown keys back.
func (s SkillGaps) MarshalJSON() ([]byte, error) { return marshalKeep(s.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (s SkillGaps) keepParts() (any, Extra) {
	type alias SkillGaps
	if s.Gaps == nil {
		s.Gaps = []Gap{}
	}
	return alias(s), s.Extra
}

// GapEvent is one occurrence of a gap, as a cycle detects it.
type GapEvent struct {
	Name   string
	Type   string
	Detail string
	// Domain is the domain the gap concerns, "" when none.
	Domain string
	// Cycle is the cycle that detected it.
	Cycle int
}

// GapsKept is how many gaps skill_gaps.json holds (6-C8's cap).
const GapsKept = 50

// gapPhase is the state design's ooda_phase for a gap of each type: the
// phase of the loop that met it.
func gapPhase(typ string) string {
	switch typ {
	case "coverage_gap":
		return "strategize"
	case "execution_failure", "action_aging", "chain_gap", "report_error", "process_containment":
		return "execute"
	case "input_refused":
		return "observe"
	case "contract_error", "safety_violation":
		return "support"
	}
	return "meta"
}

// Record adds one occurrence of a gap: the gap with the same key gets
// frequency+1, its last-seen fields and, when it was resolved, is opened
// again; a new one starts at 1 with every field of both shapes. Cap
// GapsKept: resolved gaps are evicted oldest first, then unresolved oldest
// first.
func (s *SkillGaps) Record(ev GapEvent, now time.Time) {
	ts := FormatTime(now)
	for i := range s.Gaps {
		g := &s.Gaps[i]
		// g.Key(), without copying the gap (a value receiver): this
		// runs once per gap per event, a thousand events a cycle in a
		// thousand-domain project.
		key := g.Name
		if key == "" {
			key = g.ID
		}
		if key != ev.Name {
			continue
		}
		g.Frequency++
		if g.has("last_seen") {
			g.LastSeen = ts
		}
		if g.has("last_seen_cycle") {
			g.LastSeenCycle = &ev.Cycle
		}
		if ev.Detail != "" {
			if g.has("detail") {
				g.Detail = ev.Detail
			}
			if g.has("description") {
				g.Description = ev.Detail
			}
		}
		if ev.Domain != "" && g.RelatedDomain == nil && g.has("related_domain") {
			d := ev.Domain
			g.RelatedDomain = &d
		}
		if g.Resolved {
			g.Resolved = false
			if g.ResolvedAt != nil {
				g.ResolvedAt = nil
			}
			if g.Resolution != nil {
				g.Resolution = nil
			}
		}
		return
	}
	s.add(newGap("gap-"+ev.Name, ev.Name, ev.Type, ev.Detail, ev.Domain, ev.Cycle, 1, ts))
}

// RecordLoopBreak is 6-C8's gap for a cost-ledger backfill at cycle: one
// entry per backfill, id gap-cost-ledger-autopatch-<cycle>, its frequency
// the number of cycles backfilled (oldest first in filled). The same cycle
// backfilling again (a cycle run a second time) updates its entry.
func (s *SkillGaps) RecordLoopBreak(cycle int, filled []int, truncated bool, now time.Time) {
	if len(filled) == 0 {
		return
	}
	entries := "entries"
	if len(filled) == 1 {
		entries = "entry"
	}
	text := fmt.Sprintf("cost_ledger missing %d %s in range %d..%d — backfilled with synthetic entries", len(filled), entries, filled[0], filled[len(filled)-1])
	if truncated {
		text += "; older cycles beyond max_backfill_cycles were not backfilled"
	}
	id := fmt.Sprintf("gap-cost-ledger-autopatch-%d", cycle)
	for i := range s.Gaps {
		if g := &s.Gaps[i]; g.ID == id {
			g.Frequency, g.Description = len(filled), text
			return
		}
	}
	g := newGap(id, fmt.Sprintf("cost_ledger_autopatch_%d", cycle), GapLoopBreak, text, "", cycle, len(filled), FormatTime(now))
	g.OODAPhase = "meta"
	s.add(g)
}

func newGap(id, name, typ, text, domain string, cycle, freq int, ts string) Gap {
	c1, c2 := cycle, cycle
	g := Gap{ID: id, Name: name, Type: typ, Description: text, Detail: text, DetectedAt: ts, DetectedInCycle: &c1,
		OODAPhase: gapPhase(typ), Frequency: freq, FirstSeen: ts, LastSeen: ts, LastSeenCycle: &c2}
	if domain != "" {
		g.RelatedDomain = &domain
	}
	return g
}

func (s *SkillGaps) add(g Gap) {
	s.Gaps = append(s.Gaps, g)
	for len(s.Gaps) > GapsKept {
		victim := -1
		for i := range s.Gaps {
			if s.Gaps[i].Resolved {
				victim = i
				break
			}
		}
		if victim < 0 {
			// The oldest goes by taking the list from its second gap,
			// not by moving every other one down: a cycle recording a
			// gap per domain of a thousand-domain project evicts a
			// thousand times, and append reallocates the list only once
			// its array's tail is used up.
			s.Gaps = s.Gaps[1:]
			continue
		}
		s.Gaps = append(s.Gaps[:victim], s.Gaps[victim+1:]...)
	}
}
