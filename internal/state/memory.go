package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Memory files under agent/state/evolve/.
const (
	EpisodesFile    = "episodes.json"
	PrinciplesFile  = "principles.json"
	ReflectionsFile = "reflections.json"
	CascadesFile    = "cascades.json"
)

// Episode is one weekly summary (tier-2 memory, 6-C4).
type Episode struct {
	ID                 string             `json:"id"`
	WeekStart          string             `json:"week_start"`
	WeekEnd            string             `json:"week_end"`
	CycleRange         []int              `json:"cycle_range"`
	TotalCycles        int                `json:"total_cycles"`
	Summary            string             `json:"summary"`
	DomainsSelected    map[string]int     `json:"domains_selected"`
	PRsCreated         int                `json:"prs_created"`
	PRsMerged          int                `json:"prs_merged"`
	PRsRejected        int                `json:"prs_rejected"`
	KeyDecisions       []string           `json:"key_decisions"`
	Lessons            []string           `json:"lessons"`
	ConfidenceSnapshot map[string]float64 `json:"confidence_snapshot"`
	SkillGapsFound     int                `json:"skill_gaps_found"`
	ContrarianChecks   int                `json:"contrarian_checks"`
	PatternsDetected   []string           `json:"patterns_detected"`
	CreatedAt          string             `json:"created_at"`
	Extra              Extra              `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (e *Episode) UnmarshalJSON(b []byte) error {
	type alias Episode
	return unmarshalKeep(b, (*alias)(e), &e.Extra)
}

// MarshalJSON writes unknown keys back.
func (e Episode) MarshalJSON() ([]byte, error) {
	type alias Episode
	return marshalKeep(alias(e), e.Extra)
}

// Episodes is episodes.json.
type Episodes struct {
	SchemaVersion string    `json:"schema_version"`
	Episodes      []Episode `json:"episodes"`
	Extra         Extra     `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (e *Episodes) UnmarshalJSON(b []byte) error {
	type alias Episodes
	return unmarshalKeep(b, (*alias)(e), &e.Extra)
}

// MarshalJSON writes unknown keys back.
func (e Episodes) MarshalJSON() ([]byte, error) {
	type alias Episodes
	if e.Episodes == nil {
		e.Episodes = []Episode{}
	}
	if e.SchemaVersion == "" {
		e.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(e), e.Extra)
}

// Principle is one permanent learning (tier-3 memory, 6-C4).
type Principle struct {
	ID              string   `json:"id"`
	Text            string   `json:"text"`
	Kind            string   `json:"kind,omitempty"` // "" (a principle) or "candidate"
	Confidence      float64  `json:"confidence"`
	SourceEpisodes  []string `json:"source_episodes"`
	Occurrences     int      `json:"occurrences"`
	CreatedAt       string   `json:"created_at"`
	LastConfirmedAt string   `json:"last_confirmed_at,omitempty"`
	LastConfirmedEp string   `json:"last_confirmed_episode,omitempty"`
	Extra           Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (p *Principle) UnmarshalJSON(b []byte) error {
	type alias Principle
	return unmarshalKeep(b, (*alias)(p), &p.Extra)
}

// MarshalJSON writes unknown keys back.
func (p Principle) MarshalJSON() ([]byte, error) {
	type alias Principle
	if p.SourceEpisodes == nil {
		p.SourceEpisodes = []string{}
	}
	return marshalKeep(alias(p), p.Extra)
}

// Principles is principles.json.
type Principles struct {
	SchemaVersion string      `json:"schema_version"`
	Principles    []Principle `json:"principles"`
	Extra         Extra       `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (p *Principles) UnmarshalJSON(b []byte) error {
	type alias Principles
	return unmarshalKeep(b, (*alias)(p), &p.Extra)
}

// MarshalJSON writes unknown keys back.
func (p Principles) MarshalJSON() ([]byte, error) {
	type alias Principles
	if p.Principles == nil {
		p.Principles = []Principle{}
	}
	if p.SchemaVersion == "" {
		p.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(p), p.Extra)
}

// Reflection is one self-critique (5-F), recalled by 2-F.
type Reflection struct {
	Cycle     int    `json:"cycle"`
	Timestamp string `json:"timestamp"`
	Domain    string `json:"domain"`
	Skill     string `json:"skill"`
	Result    string `json:"result"`
	Verdict   string `json:"verdict"`
	Critique  string `json:"critique"`
	Lesson    string `json:"lesson"`
	Status    string `json:"status"`
	Extra     Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (r *Reflection) UnmarshalJSON(b []byte) error {
	type alias Reflection
	return unmarshalKeep(b, (*alias)(r), &r.Extra)
}

// MarshalJSON writes unknown keys back.
func (r Reflection) MarshalJSON() ([]byte, error) {
	type alias Reflection
	return marshalKeep(alias(r), r.Extra)
}

// Reflections is reflections.json.
type Reflections struct {
	SchemaVersion string       `json:"schema_version"`
	Reflections   []Reflection `json:"reflections"`
	Extra         Extra        `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (r *Reflections) UnmarshalJSON(b []byte) error {
	type alias Reflections
	return unmarshalKeep(b, (*alias)(r), &r.Extra)
}

// MarshalJSON writes unknown keys back.
func (r Reflections) MarshalJSON() ([]byte, error) {
	type alias Reflections
	if r.Reflections == nil {
		r.Reflections = []Reflection{}
	}
	if r.SchemaVersion == "" {
		r.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(r), r.Extra)
}

// Cascade is one cross-domain cascade event (2-B3).
type Cascade struct {
	ID              string   `json:"id"`
	EventType       string   `json:"event_type"`
	SourceDomain    string   `json:"source_domain"`
	AffectedDomains []string `json:"affected_domains"`
	Details         string   `json:"details,omitempty"`
	Status          string   `json:"status"`
	CreatedAt       string   `json:"created_at"`
	BonusAppliedTo  []string `json:"bonus_applied_to,omitempty"`
	ResolvedAt      string   `json:"resolved_at,omitempty"`
	Extra           Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *Cascade) UnmarshalJSON(b []byte) error {
	type alias Cascade
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c Cascade) MarshalJSON() ([]byte, error) {
	type alias Cascade
	return marshalKeep(alias(c), c.Extra)
}

// Cascades is cascades.json.
type Cascades struct {
	SchemaVersion string    `json:"schema_version"`
	Cascades      []Cascade `json:"cascades"`
	Extra         Extra     `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *Cascades) UnmarshalJSON(b []byte) error {
	type alias Cascades
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c Cascades) MarshalJSON() ([]byte, error) {
	type alias Cascades
	if c.Cascades == nil {
		c.Cascades = []Cascade{}
	}
	if c.SchemaVersion == "" {
		c.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(c), c.Extra)
}

// LensChange is one lens_changelog.json entry (5-E).
type LensChange struct {
	Cycle      int      `json:"cycle"`
	Timestamp  string   `json:"timestamp"`
	Domain     string   `json:"domain"`
	Item       string   `json:"item"`
	ChangeType string   `json:"change_type"` // added, promoted, confirmed, decayed, deprecated
	Before     *float64 `json:"before"`
	After      *float64 `json:"after"`
	Delta      float64  `json:"delta"`
	Reason     string   `json:"reason"`
	Extra      Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (l *LensChange) UnmarshalJSON(b []byte) error {
	type alias LensChange
	return unmarshalKeep(b, (*alias)(l), &l.Extra)
}

// MarshalJSON writes unknown keys back.
func (l LensChange) MarshalJSON() ([]byte, error) {
	type alias LensChange
	return marshalKeep(alias(l), l.Extra)
}

// LensChangelog is agent/state/<domain>/lens_changelog.json.
type LensChangelog struct {
	SchemaVersion string       `json:"schema_version"`
	Domain        string       `json:"domain"`
	Entries       []LensChange `json:"entries"`
	Extra         Extra        `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (l *LensChangelog) UnmarshalJSON(b []byte) error {
	type alias LensChangelog
	return unmarshalKeep(b, (*alias)(l), &l.Extra)
}

// MarshalJSON writes unknown keys back.
func (l LensChangelog) MarshalJSON() ([]byte, error) {
	type alias LensChangelog
	if l.Entries == nil {
		l.Entries = []LensChange{}
	}
	if l.SchemaVersion == "" {
		l.SchemaVersion = "1.0.0"
	}
	return marshalKeep(alias(l), l.Extra)
}

// LoadMemory reads episodes, principles, reflections and cascades with the
// same policy as Load: missing is empty, corrupt is listed for Quarantine.
func (s *Store) LoadMemory(snap *Snapshot) {
	read := func(name string, v any) {
		if _, err := s.readJSON(name, v, &snap.Warnings); err != nil {
			snap.Corrupt = append(snap.Corrupt, Corruption{File: name, Path: s.EvolvePath(name), Err: err})
		}
	}
	read(EpisodesFile, &snap.Episodes)
	read(PrinciplesFile, &snap.Principles)
	read(ReflectionsFile, &snap.Reflections)
	read(CascadesFile, &snap.Cascades)
}

// SaveEpisodes writes episodes.json.
func (s *Store) SaveEpisodes(v Episodes) error { return s.writeJSON(EpisodesFile, v) }

// SavePrinciples writes principles.json.
func (s *Store) SavePrinciples(v Principles) error { return s.writeJSON(PrinciplesFile, v) }

// SaveReflections writes reflections.json.
func (s *Store) SaveReflections(v Reflections) error { return s.writeJSON(ReflectionsFile, v) }

// SaveCascades writes cascades.json.
func (s *Store) SaveCascades(v Cascades) error { return s.writeJSON(CascadesFile, v) }

// LensChangelogPath is agent/state/<domain>/lens_changelog.json.
func (s *Store) LensChangelogPath(domain string) string {
	return filepath.Join(s.Root, "agent", "state", domain, "lens_changelog.json")
}

// ReadLensChangelog reads a domain's lens changelog (missing: empty).
func (s *Store) ReadLensChangelog(domain string) (LensChangelog, error) {
	if err := CheckName("domain", domain); err != nil {
		return LensChangelog{}, err
	}
	b, _, err := s.readJSONFile(s.LensChangelogPath(domain))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return LensChangelog{Domain: domain}, nil
		}
		return LensChangelog{}, err
	}
	var l LensChangelog
	if err := json.Unmarshal(b, &l); err != nil {
		return LensChangelog{}, fmt.Errorf("lens changelog %s: %w", s.LensChangelogPath(domain), err)
	}
	return l, nil
}

// SaveLens writes a domain's lens atomically.
func (s *Store) SaveLens(domain string, l Lens) error {
	if err := CheckName("domain", domain); err != nil {
		return err
	}
	return s.writeAt(s.LensPath(domain), l)
}

// SaveLensChangelog writes a domain's lens changelog atomically.
func (s *Store) SaveLensChangelog(domain string, l LensChangelog) error {
	if err := CheckName("domain", domain); err != nil {
		return err
	}
	return s.writeAt(s.LensChangelogPath(domain), l)
}

func (s *Store) writeAt(p string, v any) error {
	b, err := encodeJSON(v)
	if err != nil {
		return err
	}
	if err := s.writeFile(p, append(b, '\n')); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// WriteActiveLens writes the lens a skill receives ($OODA_LENS) next to
// the run's log: runs/<cycle>-<domain>.lens.json. It is a copy for the
// skill, not state: the working lens stays in agent/state/<domain>/.
func (s *Store) WriteActiveLens(cycle int, domain string, l Lens) (string, error) {
	if err := CheckName("domain", domain); err != nil {
		return "", err
	}
	p := filepath.Join(s.EvolveDir, "runs", fmt.Sprintf("%d-%s.lens.json", cycle, safeName(domain)))
	b, err := encodeJSON(l)
	if err != nil {
		return "", err
	}
	return p, s.writeFile(p, append(b, '\n'))
}
