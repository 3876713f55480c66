package state

import (
	"time"
)

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
