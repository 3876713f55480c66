package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (e *Episode) UnmarshalJSON(b []byte) error { return e.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (e *Episode) unmarshalChecked(b []byte) error { return e.decode(b, true) }

func (e *Episode) decode(b []byte, checked bool) error {
	*e = Episode{}
	if err := unmarshalKeepIn(b, (*episodeAlias)(e), &e.Extra, checked); err != nil {
		return err
	}
	if entryFastOff || entryCopyOff {
		e.read = rememberEntryIn(b, episodeAlias(*e), checked)
		return nil
	}
	// rememberEntryIn with the copy made by copyEpisode (entryfast.go).
	c := copyEpisode((*episodeAlias)(e))
	e.read = &readEntry{raw: entryBytes(b, checked), typ: episodeAliasType, base: c, baseExtra: c.Extra}
	return nil
}

// episodeAlias is Episode without its methods: the value its MarshalJSON
// encodes, and the type of the copy its record keeps.
type episodeAlias Episode

var episodeAliasType = reflect.TypeFor[episodeAlias]()

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (e Episode) MarshalJSON() ([]byte, error) {
	if b, ok := e.read.unchangedEpisode((*episodeAlias)(&e), e.Extra); ok {
		return b, nil
	}
	return e.read.encode(episodeAlias(e), e.Extra)
}

// Week is the canonical id ("EP-2026-W15") of the ISO week the episode
// summarises: its id, or, for an entry of the original project's older
// shape that has no id, its week_year ("2026-W15"). An id that names no
// week is returned as it is, and "" when the entry has neither.
func (e Episode) Week() string {
	if w, ok := CanonicalWeek(e.ID); ok {
		return w
	}
	if e.ID != "" {
		return e.ID
	}
	if w, ok := CanonicalWeek(extraString(e.Extra, "week_year")); ok {
		return w
	}
	return ""
}

// Start is the first day (YYYY-MM-DD) of the episode's week: week_start,
// else the Monday of the week Week names, else "".
func (e Episode) Start() string {
	if e.WeekStart != "" {
		return e.WeekStart
	}
	if m, ok := WeekMonday(e.Week()); ok {
		return m.Format("2006-01-02")
	}
	return ""
}

// weekPattern is an ISO week as episode ids ("EP-2026-W15") and the
// original project's week_year ("2026-W15") spell it.
var weekPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:EP-)?([0-9]{4})-[Ww]([0-9]{1,2})$`) })

// CanonicalWeek reads s as an ISO week, "EP-2026-W15" or "2026-W15", and
// returns it as an episode id, "EP-2026-W15"; ok is false when s names no
// week of its year.
func CanonicalWeek(s string) (string, bool) {
	// The spelling ooda writes, read without the pattern: principle
	// extraction asks for every episode's and every source's week each
	// cycle.
	if len(s) == 11 && s[:3] == "EP-" && s[7:9] == "-W" {
		if y, ok := digits(s[3:7]); ok {
			if w, ok := digits(s[9:11]); ok {
				if w < 1 || w > isoWeeksIn(y) {
					return "", false
				}
				return s, true
			}
		}
	}
	m := weekPattern().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	y, _ := strconv.Atoi(m[1])
	w, _ := strconv.Atoi(m[2])
	if w < 1 || w > isoWeeksIn(y) {
		return "", false
	}
	return fmt.Sprintf("EP-%04d-W%02d", y, w), true
}

// digits reads s, made of ASCII digits only, as a number.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// WeekMonday is the Monday (UTC) that starts the ISO week s names
// ("EP-2026-W15" or "2026-W15").
func WeekMonday(s string) (time.Time, bool) {
	c, ok := CanonicalWeek(s)
	if !ok {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(c[3:7])
	w, _ := strconv.Atoi(c[9:])
	// ISO week 1 is the week holding January 4th.
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)
	return jan4.AddDate(0, 0, -((int(jan4.Weekday())+6)%7)+7*(w-1)), true
}

// isoWeeksIn is 53 for a year whose December 28th is in week 53, else 52.
func isoWeeksIn(y int) int {
	_, w := time.Date(y, 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek()
	return w
}

// extraString is an unknown key's value when it is a JSON string.
func extraString(e Extra, key string) string {
	var s string
	if raw, ok := e[key]; !ok || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
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

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (e *Episodes) unmarshalChecked(b []byte) error {
	type alias Episodes
	return unmarshalKeepChecked(b, (*alias)(e), &e.Extra)
}

// MarshalJSON writes unknown keys back.
func (e Episodes) MarshalJSON() ([]byte, error) { return marshalKeep(e.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (e Episodes) keepParts() (any, Extra) {
	type alias Episodes
	if e.Episodes == nil {
		e.Episodes = []Episode{}
	}
	if e.SchemaVersion == "" {
		e.SchemaVersion = "1.0.0"
	}
	return alias(e), e.Extra
}

// Principle is one permanent learning (tier-3 memory, 6-C4). Besides its
// own shape it reads the original project's two: evolve's
// {text, confidence, source_episodes: ["2026-W15"], created_at,
// last_confirmed, kind: "manual"|"candidate"} and the state design's
// {id: "P001", principle, source, source_ids, confidence, last_validated,
// validation_count, ...}. Their keys stay where they are (in Extra when
// this type has no field for them); Text holds the state design's
// principle when the entry has no text; the methods below read the rest.
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (p *Principle) UnmarshalJSON(b []byte) error {
	type alias Principle
	*p = Principle{}
	if err := unmarshalKeep(b, (*alias)(p), &p.Extra); err != nil {
		return err
	}
	if p.Text == "" {
		p.Text = extraString(p.Extra, "principle")
	}
	p.read = rememberOwn(b, p)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (p Principle) MarshalJSON() ([]byte, error) {
	type alias Principle
	return p.read.encode(alias(p.canonical()), p.Extra)
}

// readAs is the principle as MarshalJSON encodes it (see rereader).
func (p *Principle) readAs() (any, Extra) {
	type alias Principle
	return alias(p.canonical()), p.Extra
}

func (p Principle) canonical() Principle {
	if p.SourceEpisodes == nil {
		p.SourceEpisodes = []string{}
	}
	return p
}

// WeekSources are the weeks the entry has evidence from, as canonical
// episode ids, oldest first as the entry lists them and without repeats:
// source_episodes (episode ids or the original's week_year), the state
// design's source_ids (only those naming a week: they may also name gaps
// or other records) and last_confirmed_episode.
func (p Principle) WeekSources() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if w, ok := CanonicalWeek(s); ok && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, s := range p.SourceEpisodes {
		add(s)
	}
	var ids []string
	if raw, ok := p.Extra["source_ids"]; ok && json.Unmarshal(raw, &ids) == nil {
		for _, s := range ids {
			add(s)
		}
	}
	add(p.LastConfirmedEp)
	return out
}

// ConfirmedAt is the latest confirmation the original project's shapes
// date: last_confirmed (evolve) and last_validated (the state design).
// ok is false when the entry has neither, or neither is a time.
func (p Principle) ConfirmedAt() (t time.Time, ok bool) {
	for _, k := range []string{"last_confirmed", "last_validated"} {
		if v, found := ParseTime(extraString(p.Extra, k)); found && (!ok || v.After(t)) {
			t, ok = v, true
		}
	}
	return t, ok
}

// Manual says whether an operator wrote the entry by hand (kind
// "manual", the original project's way to seed a principle).
func (p Principle) Manual() bool { return p.Kind == "manual" }

// RecordConfirmation notes that episode (a canonical id) confirmed the
// entry at now, in the fields of this type and in those of the original
// project's shape the entry carries: last_confirmed, last_validated and
// validation_count are updated when present. A source_episodes (or, for
// the state design's shape, source_ids) list written as week_year
// ("2026-W15") gets the new week in that spelling.
func (p *Principle) RecordConfirmation(episode string, now time.Time) {
	ts := FormatTime(now)
	extra := make(Extra, len(p.Extra))
	for k, v := range p.Extra {
		extra[k] = v
	}
	// An entry of the original's shape records a confirmation in its own
	// fields only: the week in its sources, the instant in last_confirmed
	// or last_validated. Its readers know no other keys, and this type's
	// readers find the same facts there (WeekSources, ConfirmedAt).
	original := p.read != nil && !p.read.had("occurrences") && !p.read.had("last_confirmed_at") && !p.read.had("last_confirmed_episode")
	if original && p.read.had("source_ids") && !p.read.had("source_episodes") {
		var ids []string
		if json.Unmarshal(extra["source_ids"], &ids) == nil {
			src := strings.TrimPrefix(episode, "EP-")
			for _, id := range ids {
				if strings.HasPrefix(strings.ToUpper(id), "EP-") {
					src = episode
				}
			}
			if b, err := json.Marshal(append(ids, src)); err == nil {
				extra["source_ids"] = b
			}
		}
	} else {
		src := episode
		if len(p.SourceEpisodes) > 0 && !strings.HasPrefix(strings.ToUpper(p.SourceEpisodes[len(p.SourceEpisodes)-1]), "EP-") {
			if _, ok := CanonicalWeek(p.SourceEpisodes[len(p.SourceEpisodes)-1]); ok {
				src = strings.TrimPrefix(episode, "EP-")
			}
		}
		p.SourceEpisodes = append(p.SourceEpisodes, src)
	}
	if !original {
		p.Occurrences++
		p.LastConfirmedEp = episode
		p.LastConfirmedAt = ts
	}
	for _, k := range []string{"last_confirmed", "last_validated"} {
		if _, ok := extra[k]; ok {
			b, _ := json.Marshal(ts)
			extra[k] = b
		}
	}
	if raw, ok := extra["validation_count"]; ok {
		var n int
		if json.Unmarshal(raw, &n) == nil && n >= 0 && n < 1<<30 {
			extra["validation_count"] = json.RawMessage(strconv.Itoa(n + 1))
		}
	}
	if len(extra) > 0 {
		p.Extra = extra
	}
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (r *Reflection) UnmarshalJSON(b []byte) error { return r.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (r *Reflection) unmarshalChecked(b []byte) error { return r.decode(b, true) }

func (r *Reflection) decode(b []byte, checked bool) error {
	*r = Reflection{}
	if err := unmarshalKeepIn(b, (*reflectionAlias)(r), &r.Extra, checked); err != nil {
		return err
	}
	if entryFastOff || entryCopyOff {
		r.read = rememberEntryIn(b, reflectionAlias(*r), checked)
		return nil
	}
	// rememberEntryIn with the copy made by copyReflection (entryfast.go).
	c := copyReflection((*reflectionAlias)(r))
	r.read = &readEntry{raw: entryBytes(b, checked), typ: reflectionAliasType, base: c, baseExtra: c.Extra}
	return nil
}

// reflectionAlias is Reflection without its methods: the value its
// MarshalJSON encodes, and the type of the copy its record keeps.
type reflectionAlias Reflection

var reflectionAliasType = reflect.TypeFor[reflectionAlias]()

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (r Reflection) MarshalJSON() ([]byte, error) {
	if b, ok := r.read.unchangedReflection((*reflectionAlias)(&r), r.Extra); ok {
		return b, nil
	}
	return r.read.encode(reflectionAlias(r), r.Extra)
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

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (r *Reflections) unmarshalChecked(b []byte) error {
	type alias Reflections
	return unmarshalKeepChecked(b, (*alias)(r), &r.Extra)
}

// MarshalJSON writes unknown keys back.
func (r Reflections) MarshalJSON() ([]byte, error) { return marshalKeep(r.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (r Reflections) keepParts() (any, Extra) {
	type alias Reflections
	if r.Reflections == nil {
		r.Reflections = []Reflection{}
	}
	if r.SchemaVersion == "" {
		r.SchemaVersion = "1.0.0"
	}
	return alias(r), r.Extra
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (c *Cascade) UnmarshalJSON(b []byte) error {
	type alias Cascade
	*c = Cascade{}
	if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
		return err
	}
	c.read = rememberEntry(b, alias(*c), c.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (c Cascade) MarshalJSON() ([]byte, error) {
	type alias Cascade
	return c.read.encode(alias(c), c.Extra)
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

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (l *LensChange) UnmarshalJSON(b []byte) error {
	type alias LensChange
	*l = LensChange{}
	if err := unmarshalKeep(b, (*alias)(l), &l.Extra); err != nil {
		return err
	}
	l.read = rememberEntry(b, alias(*l), l.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (l LensChange) MarshalJSON() ([]byte, error) {
	type alias LensChange
	return l.read.encode(alias(l), l.Extra)
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

// readEntry is an entry of a memory file as the file held it, so that
// rewriting the file loses nothing of an entry this program did not
// change: such an entry is written back byte for byte (whitespace aside,
// which the file's indentation sets), with its key order, number spelling
// and nulls, and no key it did not have. An entry that changed keeps the
// same, but for the keys whose value changed (written in place, or added
// at the end) and the keys removed.
//
// Reading remembers the bytes, and a copy of what they were decoded into
// that shares nothing with the entry (copyDeep): what the program changes
// in the entry, in place or not, never reaches the copy, so an entry that
// still equals it is its bytes, with no decoding again. An entry whose
// value cannot be copied so is decoded again from its bytes when it is
// written (redecoded). Either way a readEntry stands for its bytes alone:
// entries are compared by them, so an entry read, written and read again
// equals one read once.
type readEntry struct {
	raw json.RawMessage
	// typ is the alias struct type unmarshalKeep alone decoded the bytes
	// into (rememberEntry), or the entry's own type, a rereader whose
	// decoding changes the value after unmarshalKeep (rememberOwn).
	typ reflect.Type
	// base and baseExtra are the copy of the value read (a pointer to an
	// alias struct value) and of its unknown keys; base is nil when there
	// is no copy. Held as an interface and a map, not a reflect.Value, so
	// that two entries read from the same bytes are deeply equal
	// (reflect.DeepEqual), as their bytes are.
	base      any
	baseExtra Extra
}

// rereader is an entry type whose UnmarshalJSON changes the value after
// unmarshalKeep (fills a field from another key, makes a nil list empty):
// readAs is the value its MarshalJSON hands to encode, an alias struct
// value, and its unknown keys.
type rereader interface {
	readAs() (v any, extra Extra)
}

var rereaderType = reflect.TypeFor[rereader]()

// rememberEntry records b, decoded by unmarshalKeep alone into v (an
// alias struct value, with extra in its Extra field). A type that changes
// the value after unmarshalKeep records it with rememberOwn instead.
func rememberEntry(b []byte, v any, _ Extra) *readEntry { return rememberEntryIn(b, v, false) }

// entryBytes is b as an entry keeps it: a copy of b without the
// whitespace around it, or b itself when checked (b is then part of a
// document decodeFile checked, which nothing else holds or changes).
func entryBytes(b []byte, checked bool) json.RawMessage {
	if checked {
		return json.RawMessage(b[:len(b):len(b)])
	}
	return append(json.RawMessage(nil), bytes.TrimSpace(b)...)
}

// rememberEntryIn is rememberEntry, for b checked or not (see entryBytes).
func rememberEntryIn(b []byte, v any, checked bool) *readEntry {
	r := &readEntry{raw: entryBytes(b, checked), typ: reflect.TypeOf(v)}
	if entryCopyOff {
		return r
	}
	// As redecoded: the unknown keys are the copy's Extra field, and a
	// type without one is decoded again (and then written as new).
	if base, ok := copyDeep(reflect.ValueOf(v)); ok && base.CanAddr() {
		if i := extraFieldIndex(base.Type()); i >= 0 {
			r.base, r.baseExtra = base.Addr().Interface(), base.Field(i).Interface().(Extra)
		}
	}
	return r
}

// rememberOwn records b, read by the entry type of self (a rereader,
// through its pointer) as its own UnmarshalJSON reads it; self is the
// entry just read from b.
func rememberOwn(b []byte, self rereader) *readEntry { return rememberOwnIn(b, self, false) }

// rememberOwnIn is rememberOwn, for b checked or not (see entryBytes).
func rememberOwnIn(b []byte, self rereader, checked bool) *readEntry {
	r := &readEntry{raw: entryBytes(b, checked), typ: reflect.TypeOf(self).Elem()}
	if entryCopyOff {
		return r
	}
	v, extra := self.readAs()
	base, ok := copyDeep(reflect.ValueOf(v))
	ex, exOK := copyDeep(reflect.ValueOf(extra))
	if ok && exOK && base.CanAddr() {
		r.base, r.baseExtra = base.Addr().Interface(), ex.Interface().(Extra)
	}
	return r
}

var extraFieldIndexes sync.Map // reflect.Type -> int

// extraFieldIndex is the index of the struct type t's Extra field (of
// type Extra), or -1.
func extraFieldIndex(t reflect.Type) int {
	if i, ok := extraFieldIndexes.Load(t); ok {
		return i.(int)
	}
	at := -1
	if f, ok := t.FieldByName("Extra"); ok && f.Type == extraType && len(f.Index) == 1 {
		at = f.Index[0]
	}
	extraFieldIndexes.Store(t, at)
	return at
}

// entryCopyOff, set by the tests, makes every entry read keep no copy,
// so that each is decoded again from its bytes when written: the
// encoder the copy replaced, kept as the oracle.
var entryCopyOff bool

// decoded is the value the entry was read as, and its unknown keys: the
// copy kept when it was read, else decoded again from its bytes; ok is
// false when that fails (the entry is then written as a new one). The
// value returned is only read, never changed.
func (r *readEntry) decoded() (reflect.Value, Extra, bool) {
	if r.base != nil {
		return reflect.ValueOf(r.base).Elem(), r.baseExtra, true
	}
	return r.redecoded()
}

// redecoded is the value the entry was read as, and its unknown keys,
// decoded again from its bytes; ok is false when that fails.
func (r *readEntry) redecoded() (reflect.Value, Extra, bool) {
	pv := reflect.New(r.typ)
	if rr, own := pv.Interface().(rereader); own {
		if pv.Interface().(json.Unmarshaler).UnmarshalJSON(r.raw) != nil {
			return reflect.Value{}, nil, false
		}
		v, extra := rr.readAs()
		return reflect.ValueOf(v), extra, true
	}
	f, ok := r.typ.FieldByName("Extra")
	if !ok || f.Type != extraType {
		return reflect.Value{}, nil, false
	}
	ep := pv.Elem().FieldByIndex(f.Index).Addr().Interface().(*Extra)
	if unmarshalKeep(r.raw, pv.Interface(), ep) != nil {
		return reflect.Value{}, nil, false
	}
	return pv.Elem(), *ep, true
}

// readFields is each key's encoding of base, the value read, with its
// unknown keys extra, or nil when it does not encode (the entry is then
// written as a new one).
func readFields(base reflect.Value, extra Extra) map[string]json.RawMessage {
	enc, err := marshalKeep(base.Interface(), extra)
	if err != nil {
		return nil
	}
	members, ok := scanObject(enc)
	if !ok {
		return nil
	}
	fields := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		fields[m.key] = m.val
	}
	return fields
}

// had says whether the entry as read held key.
func (r *readEntry) had(key string) bool { return objectHasKey(r.raw, key) }

// objectHasKey says whether b, one JSON object with only blanks around
// it, has a member whose key, unquoted, is key: what looking through
// scanObject's members says (false when b is not such an object),
// without making the list of members and a string of every key. A gap's
// Record asks it of every field it updates, for every gap, every cycle.
func objectHasKey(b []byte, key string) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	found := false
	end, ok := scanContainer(b, i, 1, func(q, _ []byte) bool {
		found = found || quotedKeyIs(q, key)
		return true
	})
	return ok && skipSpace(b, end) == len(b) && found
}

// quotedKeyIs says whether q, a key as the scanners took it (with its
// quotes), unquotes to key: compared as written when unquoting would
// give its content back as it is (unquoteKey's own test), else unquoted.
func quotedKeyIs(q []byte, key string) bool {
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1:len(q)-1]) == key
	}
	return unquoted(q) == key
}

// encode is v (an alias struct value) with extra as the entry r was read
// as, changed only where v and extra changed; r nil encodes a new entry.
func (r *readEntry) encode(v any, extra Extra) ([]byte, error) { return encodeRead(r, v, extra) }

// encodeRead is readEntry.encode. It is a variable so that the tests can
// compare it with the encoder it replaced, which encoded and decoded
// every entry as it was read.
var encodeRead = encodeReadLazily

// encodeReadLazily is readEntry.encode deciding from the entry's bytes,
// decoded again, whether it changed (see readEntry).
func encodeReadLazily(r *readEntry, v any, extra Extra) ([]byte, error) {
	if r == nil {
		return marshalKeep(v, extra)
	}
	if same, known := sameEntryFast(r, v, extra); known {
		if same {
			return r.raw, nil
		}
	}
	base, baseExtra, ok := r.decoded()
	if ok && sameEntry(base, reflect.ValueOf(v)) && sameValue(reflect.ValueOf(baseExtra), reflect.ValueOf(extra)) {
		// Nothing changed since it was read: every key would encode as
		// it did then, and the entry is written as it was read.
		return r.raw, nil
	}
	enc, err := marshalKeep(v, extra)
	if err != nil || !ok {
		return enc, err
	}
	if out, done, err := encodeChangedPlain(r.raw, enc, base, baseExtra); done {
		return out, err
	}
	fields := readFields(base, baseExtra)
	if fields == nil {
		return enc, nil
	}
	members, ok := scanObject(enc)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	cur := make(map[string]json.RawMessage, len(members))
	changed := map[string]bool{}
	changedLower := map[string]bool{}
	for _, m := range members {
		cur[m.key] = m.val
		if old, ok := fields[m.key]; !ok || !bytes.Equal(old, m.val) {
			changed[m.key] = true
			changedLower[foldKey(m.key)] = true
		}
	}
	removed := map[string]bool{}
	for k := range fields {
		if _, ok := cur[k]; !ok {
			removed[k] = true
			changedLower[foldKey(k)] = true
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return r.raw, nil
	}
	rawMembers, ok := scanObject(r.raw)
	if !ok {
		return enc, nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	write := memberWriter(&buf, &first)
	written := map[string]bool{}
	for _, m := range rawMembers {
		k := m.key
		_, known := cur[k]
		switch {
		case changed[k]:
			write(k, cur[k])
			written[k] = true
		case removed[k]:
		case !known && changedLower[foldKey(k)]:
			// A case variant of a key rewritten: decoding read it into
			// that key's field, and keeping it would let it override the
			// new value when the file is read again.
		default:
			write(k, m.val)
		}
	}
	for _, m := range members {
		if changed[m.key] && !written[m.key] {
			write(m.key, cur[m.key])
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// changedPlainOff, set by the tests, sends every changed entry to the
// maps below encodeChangedPlain: the general path, kept as its oracle.
var changedPlainOff bool

// changedPlainMax is how many members each of the three objects
// encodeChangedPlain compares may have: it looks keys up by walking the
// lists, and marks the changed and removed ones in a word's bits.
const changedPlainMax = 64

// encodeChangedPlain is the rest of encodeReadLazily for an entry that
// changed since it was read — its new encoding enc, the value read base
// with its unknown keys — when every key of the three objects (enc, the
// value read encoded again, the entry's bytes as read raw) is plain:
// printable ASCII that needs no escape, so that a key is its own
// unquoted value and written back exactly as it was. The entry keeps
// its bytes but for the keys whose value changed (written in place, or
// added at the end) and the keys removed, as the maps of the general
// path decide, looked up here in the lists of members themselves: a gap
// recurring every cycle is rewritten every cycle, and the maps, the
// lists of members and a string of every key cost more than the entry.
// done is false when it cannot say (a key not plain, too many members):
// the general path then decides, from the start.
func encodeChangedPlain(raw, enc []byte, base reflect.Value, baseExtra Extra) (out []byte, done bool, err error) {
	if changedPlainOff {
		return nil, false, nil
	}
	benc, err := marshalKeep(base.Interface(), baseExtra)
	if err != nil {
		// The entry as read does not encode: written as a new one.
		return enc, true, nil
	}
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	ms, ok := scanMembersInto((*buf)[:0], benc)
	*buf = ms
	if !ok {
		return enc, true, nil
	}
	nf := len(ms)
	if ms, ok = scanMembersInto(ms, enc); !ok {
		*buf = ms
		return nil, true, fmt.Errorf("not a JSON object")
	}
	*buf = ms
	read, cur := ms[:nf:nf], ms[nf:]
	if !plainMembers(read) || !plainMembers(cur) {
		return nil, false, nil
	}
	// The members of cur whose value is not the one read, and those of
	// read whose key cur no longer has. A key's value is its last
	// member's, as a map of the members would hold it.
	var changed, removed uint64
	for i, m := range cur {
		if j := lastMember(read, m.quoted); j < 0 || !bytes.Equal(read[j].val, m.val) {
			changed |= 1 << i
		}
	}
	for i, m := range read {
		if lastMember(cur, m.quoted) < 0 {
			removed |= 1 << i
		}
	}
	if changed == 0 && removed == 0 {
		return raw, true, nil
	}
	if ms, ok = scanMembersInto(ms, raw); !ok {
		*buf = ms
		return enc, true, nil
	}
	*buf = ms
	was := ms[nf+len(cur):]
	if !plainMembers(was) {
		return nil, false, nil
	}
	isChanged := func(q []byte) bool { return marked(cur, changed, q, bytes.Equal) }
	out = make([]byte, 0, len(raw)+len(enc))
	out = append(out, '{')
	first := true
	write := func(q, val []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, q...)
		out = append(out, ':')
		out = append(out, val...)
	}
	for _, m := range was {
		k := m.quoted
		switch {
		case isChanged(k):
			write(k, cur[lastMember(cur, k)].val)
		case marked(read, removed, k, bytes.Equal):
		case lastMember(cur, k) < 0 && (marked(cur, changed, k, bytes.EqualFold) || marked(read, removed, k, bytes.EqualFold)):
			// A case variant of a key rewritten or removed: decoding
			// read it into that key's field, and keeping it would let
			// it override the new value when the file is read again.
		default:
			write(k, m.val)
		}
	}
	for _, m := range cur {
		// A changed key the entry did not have goes at the end.
		if isChanged(m.quoted) && lastMember(was, m.quoted) < 0 {
			write(m.quoted, cur[lastMember(cur, m.quoted)].val)
		}
	}
	return append(out, '}'), true, nil
}

// plainMembers says whether there are at most changedPlainMax members
// and every key is plain (see encodeChangedPlain).
func plainMembers(ms []rawMember) bool {
	if len(ms) > changedPlainMax {
		return false
	}
	for _, m := range ms {
		// Printable ASCII that json.Marshal writes as it is (no quote,
		// backslash or HTML character): such a key unquotes to its
		// content, and memberWriter writes it back as quoted.
		if !plainKeyJSON(bytesKey(m.quoted[1 : len(m.quoted)-1])) {
			return false
		}
	}
	return true
}

// lastMember is the index of the last member of ms whose key is q (as
// written), or -1.
func lastMember(ms []rawMember, q []byte) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if bytes.Equal(ms[i].quoted, q) {
			return i
		}
	}
	return -1
}

// marked says whether a member of ms whose bit is set in bits has a key
// that eq says is q.
func marked(ms []rawMember, bits uint64, q []byte, eq func(a, b []byte) bool) bool {
	for i, m := range ms {
		if bits&(1<<i) != 0 && eq(m.quoted, q) {
			return true
		}
	}
	return false
}

// sameEntry says whether the entry value cur (an alias struct value)
// holds what was read, base (of the same underlying struct type): every
// field but the entry's own record of its bytes equal (see sameValue).
func sameEntry(base, cur reflect.Value) bool {
	if base.Kind() != reflect.Struct || cur.Kind() != reflect.Struct || base.NumField() != cur.NumField() {
		return false
	}
	skip := readFieldIndex(base.Type())
	for i := 0; i < base.NumField(); i++ {
		if i == skip {
			continue
		}
		if !sameValue(base.Field(i), cur.Field(i)) {
			return false
		}
	}
	return true
}

var readFieldIndexes sync.Map // reflect.Type -> int

// readFieldIndex is the index of the struct type t's record of the bytes
// it was read from (its field read, a *readEntry), or -1.
func readFieldIndex(t reflect.Type) int {
	if i, ok := readFieldIndexes.Load(t); ok {
		return i.(int)
	}
	at := -1
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Type == readEntryType && f.Name == "read" {
			at = i
			break
		}
	}
	readFieldIndexes.Store(t, at)
	return at
}

// sameValue says whether a and b certainly encode alike: the same type
// and, field by field (unexported ones too, which an encoder may read),
// the same values, a nil list or map differing from an empty one and a
// float compared by its bits (-0 is written "-0"). An entry nested inside
// is the same when it was read from the same bytes. Anything it cannot
// compare is different, which only costs an encoding.
func sameValue(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Type() == readEntryType {
			return bytes.Equal(a.Elem().FieldByName("raw").Bytes(), b.Elem().FieldByName("raw").Bytes())
		}
		return a.Pointer() == b.Pointer() || sameValue(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			return bytes.Equal(a.Bytes(), b.Bytes())
		}
		for i := 0; i < a.Len(); i++ {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !sameValue(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// objectMembers lists a JSON object's keys and values in file order.
func objectMembers(b []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("not a JSON object")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	// More stops at the end of the input as at a closing brace: a line
	// cut short ({"cycle_id":16 of a torn cycle 167) is no object.
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	return keys, vals, nil
}

// LoadMemory reads episodes, principles, reflections and cascades with the
// same policy as Load: missing is empty, corrupt is listed for Quarantine.
func (s *Store) LoadMemory(snap *Snapshot) {
	read := func(name string, v any) {
		if _, _, err := s.readJSON(name, v, &snap.Warnings); err != nil {
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
	// The card asks this of every domain each cycle, and most domains
	// have no changelog: with agent/state/ held, a missing one costs one
	// failed open.
	ok, missing, b, err := s.readHeldDomainFile(domain, "lens_changelog.json", func() string { return s.LensChangelogPath(domain) })
	if !ok {
		b, _, err = s.readJSONFile(s.LensChangelogPath(domain))
	}
	if missing || errors.Is(err, fs.ErrNotExist) {
		return LensChangelog{Domain: domain}, nil
	}
	if err != nil {
		return LensChangelog{}, err
	}
	var l LensChangelog
	if err := decodeDocument(b, &l); err != nil {
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
