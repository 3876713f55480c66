package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// TimeFormat is the timestamp format of every state file: RFC 3339, UTC, with a Z.
const TimeFormat = time.RFC3339

// FormatTime renders t the way every state file stores instants.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime accepts the timestamp shapes found in the wild (RFC 3339 with or
// without fractional seconds or offset, and a bare date).
func ParseTime(s string) (time.Time, bool) {
	if s == "" {
		// No layout takes it; each failed time.Parse would allocate its
		// error.
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Goal is one goals.json goal. Besides its own shape it reads the state
// design's {id, name, target, current, …}: Title holds name when the
// entry has no title, and CurrentValue holds current when it has no
// current_value; SetMeasured keeps current up to date in such an entry.
type Goal struct {
	ID             string   `json:"id"`
	Title          string   `json:"title,omitempty"`
	Status         string   `json:"status,omitempty"`
	Progress       *float64 `json:"progress,omitempty"`
	Target         *float64 `json:"target,omitempty"`
	CurrentValue   *float64 `json:"current_value,omitempty"`
	MetricCommand  string   `json:"metric_command,omitempty"`
	RelatedDomains []string `json:"related_domains,omitempty"`
	Domain         string   `json:"domain,omitempty"`
	LastActivity   string   `json:"last_activity,omitempty"`
	Extra          Extra    `json:"-"`

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (g *Goal) UnmarshalJSON(b []byte) error {
	type alias Goal
	*g = Goal{}
	if err := unmarshalKeep(b, (*alias)(g), &g.Extra); err != nil {
		return err
	}
	if g.Title == "" {
		g.Title = extraString(g.Extra, "name")
	}
	if g.CurrentValue == nil {
		if raw, ok := g.Extra["current"]; ok {
			var v float64
			if json.Unmarshal(raw, &v) == nil {
				g.CurrentValue = &v
			}
		}
	}
	g.read = rememberOwn(b, g)
	return nil
}

// readAs is the goal as MarshalJSON encodes it (see rereader).
func (g *Goal) readAs() (any, Extra) {
	type alias Goal
	return alias(*g), g.Extra
}

// SetMeasured records a measurement of the goal (2-C): its value and
// progress, and, in an entry of the state design's shape, its current.
func (g *Goal) SetMeasured(value, progress float64) {
	g.CurrentValue, g.Progress = &value, &progress
	if _, ok := g.Extra["current"]; ok {
		if b, err := json.Marshal(value); err == nil {
			// A copy: the goal this one was copied from shares the map.
			ex := make(Extra, len(g.Extra))
			maps.Copy(ex, g.Extra)
			ex["current"] = b
			g.Extra = ex
		}
	}
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (g Goal) MarshalJSON() ([]byte, error) {
	type alias Goal
	return g.read.encode(alias(g), g.Extra)
}

// ProgressValue is the goal's progress, 0 when unknown.
func (g Goal) ProgressValue() float64 {
	if g.Progress == nil {
		return 0
	}
	return *g.Progress
}

// Goals is agent/state/evolve/goals.json.
type Goals struct {
	SchemaVersion string `json:"schema_version,omitempty"`
	Goals         []Goal `json:"goals"`
	Extra         Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (g *Goals) UnmarshalJSON(b []byte) error {
	type alias Goals
	return unmarshalKeep(b, (*alias)(g), &g.Extra)
}

// MarshalJSON writes unknown keys back.
func (g Goals) MarshalJSON() ([]byte, error) {
	type alias Goals
	if g.Goals == nil {
		g.Goals = []Goal{}
	}
	return marshalKeep(alias(g), g.Extra)
}

// CostEntry is one cost_ledger.json entry (6-C5b).
type CostEntry struct {
	CycleID      int      `json:"cycle_id"`
	Timestamp    string   `json:"timestamp"`
	Skill        string   `json:"skill"`
	Chain        []string `json:"chain"`
	EstimatedUSD float64  `json:"estimated_usd"`
	Synthetic    bool     `json:"synthetic,omitempty"`
	Extra        Extra    `json:"-"`

	// cycleIDRaw is the cycle_id as the file wrote it when that was not a
	// plain integer ("12", "#12", 12.0): CycleID holds the number read
	// from it (cycleIDRead), and the file keeps what it said.
	cycleIDRaw  json.RawMessage `json:"-"`
	cycleIDRead int             `json:"-"`
	// uncounted says why the cycle_id is no cycle number (null, missing,
	// "twelve"): CostLedger sets such an entry aside, and raw keeps it.
	uncounted string          `json:"-"`
	raw       json.RawMessage `json:"-"`

	// read is the entry as the file held it (nil for a new entry): an
	// entry the program did not change is written back as it was, with
	// its key order, its 0.030 and its "synthetic": false (see readEntry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys. A cycle_id that is not an integer
// does not fail the entry (the original project's own cycles wrote
// strings and nulls there): a string or number that names one cycle
// unambiguously is read as that cycle, anything else marks the entry as
// not counted by cycle (see CostLedger).
func (c *CostEntry) UnmarshalJSON(b []byte) error {
	type alias CostEntry
	var probe struct {
		CycleID json.RawMessage `json:"cycle_id"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	*c = CostEntry{}
	if probe.CycleID == nil || isPlainInt(probe.CycleID) {
		// A missing cycle_id is 0 here, as any missing field; the ledger
		// sets such an entry aside (see CostLedger.UnmarshalJSON).
		if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
			return err
		}
		c.read = rememberOwn(b, c)
		return nil
	}
	// Every other key decodes as usual (tolerantly); cycle_id is read
	// here instead, by the ledger's own rule.
	if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
		return err
	}
	for k := range c.Extra {
		if foldKey(k) == foldKey("cycle_id") {
			delete(c.Extra, k)
		}
	}
	if len(c.Extra) == 0 {
		c.Extra = nil
	}
	if n, ok := cycleNumber(probe.CycleID); ok {
		c.CycleID, c.cycleIDRead = n, n
		c.cycleIDRaw = append(json.RawMessage(nil), probe.CycleID...)
		// Remembered with the number: while it stays the same, the
		// cycle_id keeps the file's spelling ("6", "#7", 7.0).
		c.read = rememberOwn(b, c)
		return nil
	}
	c.CycleID = 0
	c.uncounted = "is not a cycle number"
	c.raw = append(json.RawMessage(nil), b...)
	return nil
}

// readAs is the entry as MarshalJSON encodes it (see rereader).
func (c *CostEntry) readAs() (any, Extra) {
	type alias CostEntry
	return alias(c.canonical()), c.Extra
}

// MarshalJSON writes unknown keys back, and a cycle_id read from a string
// as the file wrote it. An entry set aside by its ledger is written back
// as it was read, and so is any entry read from the file, but for the
// keys that changed (see readEntry).
func (c CostEntry) MarshalJSON() ([]byte, error) {
	type alias CostEntry
	if c.raw != nil {
		return c.raw, nil
	}
	c = c.canonical()
	if c.read != nil || c.cycleIDRaw == nil || c.CycleID != c.cycleIDRead {
		return c.read.encode(alias(c), c.Extra)
	}
	// The known keys come first, as for any entry; cycle_id keeps its
	// place and its original spelling.
	b, err := marshalKeep(alias(c), c.Extra)
	if err != nil {
		return nil, err
	}
	num, _ := json.Marshal(c.CycleID)
	prefix := append(append([]byte(`{"cycle_id":`), num...), ',')
	if !bytes.HasPrefix(b, prefix) {
		return b, nil
	}
	out := append([]byte(`{"cycle_id":`), c.cycleIDRaw...)
	return append(out, b[len(prefix)-1:]...), nil
}

// canonical is the entry as it is encoded: chain is a list, even an empty
// one.
func (c CostEntry) canonical() CostEntry {
	if c.Chain == nil {
		c.Chain = []string{}
	}
	return c
}

// isPlainInt reports whether raw is a JSON integer that fits an int.
func isPlainInt(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.IndexAny(t, ".eE") >= 0 || t[0] == '"' || t[0] == 'n' {
		return false
	}
	var n int
	return json.Unmarshal(t, &n) == nil
}

// cycleNumber reads a cycle_id written as something other than an
// integer, where the meaning is unambiguous: a string of digits, with or
// without a leading "#" ("12", "#12"), or a whole number written as a
// float (12.0). Anything else — null, "", "12a", "twelve", 12.5, a
// negative number, an object — names no cycle.
func cycleNumber(raw json.RawMessage) (int, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0, false
	}
	switch t[0] {
	case '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return 0, false
		}
		s = strings.TrimPrefix(strings.TrimSpace(s), "#")
		if s == "" || len(s) > 10 || strings.Trim(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		if err != nil || n > MaxCounter {
			return 0, false
		}
		return n, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var f float64
		if json.Unmarshal(t, &f) != nil || f < 0 || f > MaxCounter || f != math.Trunc(f) {
			return 0, false
		}
		return int(f), true
	}
	return 0, false
}

// CostLedger is agent/state/evolve/cost_ledger.json: today's spend (UTC day).
//
// An entry whose cycle_id names no cycle (null, missing, "twelve") is not
// in Entries: the integrity gate and the recovery of a lost cycle count
// must not take it for cycle 0. It is kept, in its place, and written back
// as it was read; its cost still counts, through total_estimated_usd,
// which decoding raises to the sum of all the entries when it is below it.
type CostLedger struct {
	SchemaVersion     string      `json:"schema_version"`
	Date              string      `json:"date"`
	Entries           []CostEntry `json:"entries"`
	TotalEstimatedUSD float64     `json:"total_estimated_usd"`
	Extra             Extra       `json:"-"`

	// asideEntries are the entries set aside, each with its index in the
	// file's entries array; decodeWarnings say what decoding read
	// differently from the file, as "<JSON pointer>: <reason>".
	asideEntries   []asideEntry `json:"-"`
	decodeWarnings []string     `json:"-"`
	// entryAt is the place in the file's entries array of each of
	// Entries, when entries set aside or elements that are not entries
	// make the two differ (nil when they do not), so that a warning about
	// a value in an entry names the entry as the file numbers it.
	entryAt []int
}

// filePointers gives walkLoose the file's numbering of Entries.
func (c CostLedger) filePointers(field string) []string {
	if field != "entries" || len(c.entryAt) != len(c.Entries) {
		return nil
	}
	out := make([]string, len(c.entryAt))
	for i, at := range c.entryAt {
		out[i] = "/entries/" + strconv.Itoa(at)
	}
	return out
}

// asideEntry is a cost entry kept out of Entries, with its position.
type asideEntry struct {
	at  int
	raw json.RawMessage
}

// maxDecodeWarnings bounds the decode warnings of one file: a ledger of
// ten thousand string ids says so in a few lines, not ten thousand.
const maxDecodeWarnings = 5

// UnmarshalJSON keeps unknown keys, sets aside the entries whose cycle_id
// names no cycle, and records a warning for each cycle_id it did not take
// as written.
func (c *CostLedger) UnmarshalJSON(b []byte) error {
	type alias CostLedger
	if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
		return err
	}
	var warns []string
	kept := c.Entries[:0:0]
	var keptAt []int
	asideUSD := 0.0
	// The file's entries that read as entries, and their places in the
	// file: an element that is not an entry (a string) is left out of
	// c.Entries and kept in the file apart, so c.Entries' indices are not
	// the file's. Parsed only when a warning or a missing id needs them.
	var rawEntries []json.RawMessage
	var fileIndex []int
	raws := func() error {
		if rawEntries != nil {
			return nil
		}
		var doc struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
		rawEntries = []json.RawMessage{}
		for at, raw := range doc.Entries {
			if _, _, ok := readLoose(raw, reflect.TypeFor[CostEntry](), "", nil); ok {
				rawEntries = append(rawEntries, raw)
				fileIndex = append(fileIndex, at)
			}
		}
		return nil
	}
	for i, e := range c.Entries {
		pointer := func() string {
			at := i
			if raws() == nil && i < len(fileIndex) {
				at = fileIndex[i]
			}
			return "/entries/" + strconv.Itoa(at) + "/cycle_id"
		}
		if e.CycleID == 0 && e.cycleIDRaw == nil && e.uncounted == "" {
			// 0 is what a missing cycle_id decodes to: tell the two apart.
			if err := raws(); err != nil {
				return err
			}
			if i < len(rawEntries) && entryCycleID(rawEntries[i]) == nil {
				e.uncounted = "is missing"
				e.raw = rawEntries[i]
			}
		}
		switch {
		case e.uncounted != "":
			c.asideEntries = append(c.asideEntries, asideEntry{at: i, raw: e.raw})
			if v := e.EstimatedUSD; v > 0 {
				asideUSD += min(v, MaxCostUSD)
			}
			what := "cycle_id " + e.uncounted
			if e.uncounted != "is missing" {
				what = showJSONValue(entryCycleID(e.raw)) + " " + e.uncounted
			}
			warns = append(warns, fmt.Sprintf("%s: %s; the entry is kept in the file but not counted as a cycle (its cost still counts)", pointer(), what))
			continue
		case e.cycleIDRaw != nil:
			warns = append(warns, fmt.Sprintf("%s: %s is not an integer; read as cycle %d", pointer(), showJSONValue(e.cycleIDRaw), e.CycleID))
		}
		kept = append(kept, e)
		keptAt = append(keptAt, i)
	}
	if _, partly := c.Extra["entries"]; partly || len(c.asideEntries) > 0 {
		// Entries no longer numbers the entries as the file does.
		c.entryAt = make([]int, len(keptAt))
		for j, i := range keptAt {
			c.entryAt[j] = i
			if raws() == nil && i < len(fileIndex) {
				c.entryAt[j] = fileIndex[i]
			}
		}
	}
	if len(c.asideEntries) > 0 {
		c.Entries = kept
		sum := asideUSD
		for _, e := range kept {
			if v := e.EstimatedUSD; v > 0 {
				sum += min(v, MaxCostUSD)
			}
		}
		sum = math.Round(sum*1e6) / 1e6
		if t := c.TotalEstimatedUSD; t < sum-0.005 {
			// The entries set aside are invisible to the sum Load checks
			// the total against: without this, a total edited down would
			// hide their spend from the daily cap.
			warns = append(warns, fmt.Sprintf("/total_estimated_usd: %s is less than the sum of its entries, the ones not counted as cycles included; using %s",
				strconv.FormatFloat(t, 'g', -1, 64), strconv.FormatFloat(sum, 'g', -1, 64)))
			c.TotalEstimatedUSD = sum
		}
	}
	if len(warns) > maxDecodeWarnings {
		n := len(warns) - maxDecodeWarnings
		warns = append(warns[:maxDecodeWarnings:maxDecodeWarnings], fmt.Sprintf("/entries: %d more cycle_id values not taken as written", n))
	}
	c.decodeWarnings = warns
	return nil
}

// MarshalJSON writes unknown keys back, and the entries set aside at their
// places (after the entries before them in the file; at the end when the
// ledger has fewer entries now).
func (c CostLedger) MarshalJSON() ([]byte, error) {
	type alias CostLedger
	if c.Entries == nil {
		c.Entries = []CostEntry{}
	}
	if len(c.asideEntries) > 0 {
		merged := make([]CostEntry, 0, len(c.Entries)+len(c.asideEntries))
		rest := c.Entries
		for _, a := range c.asideEntries {
			for len(merged) < a.at && len(rest) > 0 {
				merged = append(merged, rest[0])
				rest = rest[1:]
			}
			merged = append(merged, CostEntry{raw: a.raw})
		}
		c.Entries = append(merged, rest...)
	}
	return marshalKeep(alias(c), c.Extra)
}

// DecodeWarnings lists what decoding read differently from the file, each
// as "<JSON pointer>: <reason>" (cycle ids read from strings, entries set
// aside), for the caller to report with the file's name.
func (c CostLedger) DecodeWarnings() []string { return c.decodeWarnings }

// AsideEntries is the number of entries kept in the file but not in
// Entries, because their cycle_id names no cycle.
func (c CostLedger) AsideEntries() int { return len(c.asideEntries) }

// entryCycleID is the cycle_id of an entry's bytes (nil when missing).
func entryCycleID(entry json.RawMessage) json.RawMessage {
	var probe struct {
		CycleID json.RawMessage `json:"cycle_id"`
	}
	_ = json.Unmarshal(entry, &probe)
	return probe.CycleID
}

// maxShownValue bounds a value quoted in a warning.
const maxShownValue = 40

// showJSONValue renders a JSON value for a warning: a string re-quoted in
// ASCII (no control or bidirectional character reaches a terminal) and cut
// at maxShownValue characters, an object or array by its kind only.
func showJSONValue(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "(missing)"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return "a string"
		}
		if r := []rune(s); len(r) > maxShownValue {
			return strconv.QuoteToASCII(string(r[:maxShownValue])) + "…"
		}
		return strconv.QuoteToASCII(s)
	}
	if len(t) > maxShownValue {
		return string(t[:maxShownValue]) + "…"
	}
	return string(t)
}

// NewCostLedger is the initial ledger of 1-A for the UTC day of now.
func NewCostLedger(now time.Time) CostLedger {
	return CostLedger{SchemaVersion: "1.0.0", Date: now.UTC().Format("2006-01-02"), Entries: []CostEntry{}}
}

// ResetIfNewDay applies the 1-A daily reset: a ledger from an earlier UTC
// day starts over at zero. It reports whether it reset. A ledger dated
// after today is clock skew (or a hostile edit), not a new day: it is kept
// as it is, entries and total, so the day's spend still counts against
// the daily cap (see DateInFuture, for the caller's warning).
func (c *CostLedger) ResetIfNewDay(now time.Time) bool {
	today := now.UTC().Format("2006-01-02")
	if c.Date == today || c.DateInFuture(now) {
		return false
	}
	c.Date = today
	c.Entries = []CostEntry{}
	c.asideEntries = nil
	c.TotalEstimatedUSD = 0
	return true
}

// DateInFuture reports whether the ledger's date is a UTC day after now's:
// the clock went back, or the file was edited. ResetIfNewDay keeps such a
// ledger; the caller warns.
func (c *CostLedger) DateInFuture(now time.Time) bool {
	d, err := time.Parse("2006-01-02", c.Date)
	if err != nil {
		return false
	}
	today, _ := time.Parse("2006-01-02", now.UTC().Format("2006-01-02"))
	return d.After(today)
}

// Outcome is one outcomes.json entry (6-C9).
type Outcome struct {
	CycleID    int    `json:"cycle_id"`
	Timestamp  string `json:"timestamp,omitempty"`
	Domain     string `json:"domain,omitempty"`
	Skill      string `json:"skill,omitempty"`
	Result     string `json:"result,omitempty"`
	ResultType string `json:"result_type"`
	// Score is the winner's score, kept so that weekly episodes can rank
	// decisions beyond the 20-entry decision log.
	Score         *float64 `json:"score,omitempty"`
	ProcessFactor *float64 `json:"process_factor,omitempty"`
	QualityMult   float64  `json:"quality_multiplier"`
	PRNumber      *int     `json:"pr_number"`
	HadOutput     *bool    `json:"had_output,omitempty"`
	OnMission     *bool    `json:"on_mission,omitempty"`
	ArtifactScore *float64 `json:"artifact_score,omitempty"`
	CycleMode     string   `json:"cycle_mode,omitempty"`
	Extra         Extra    `json:"-"`

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (o *Outcome) UnmarshalJSON(b []byte) error { return o.decode(b, false) }

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (o *Outcome) unmarshalChecked(b []byte) error { return o.decode(b, true) }

func (o *Outcome) decode(b []byte, checked bool) error {
	*o = Outcome{}
	if checked && !entryFastOff && !checkedDecodeOff && len(b) > 0 && b[0] == '{' {
		// See entryfast.go; what it does not read is read below.
		if decodeOutcomeFast(b, o) {
			r := &readEntry{raw: entryBytes(b, true), typ: outcomeAliasType}
			if !entryCopyOff {
				r.base = copyOutcome(o) // as read: without r
			}
			o.read = r
			return nil
		}
		*o = Outcome{}
	}
	if err := unmarshalKeepIn(b, (*outcomeAlias)(o), &o.Extra, checked); err != nil {
		return err
	}
	o.read = rememberEntryIn(b, outcomeAlias(*o), checked)
	return nil
}

var outcomeAliasType = reflect.TypeFor[outcomeAlias]()

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (o Outcome) MarshalJSON() ([]byte, error) {
	if b, ok := o.read.unchangedOutcome((*outcomeAlias)(&o), o.Extra); ok {
		return b, nil
	}
	return o.read.encode(outcomeAlias(o), o.Extra)
}

// Outcomes is agent/state/evolve/outcomes.json.
type Outcomes struct {
	SchemaVersion string    `json:"schema_version,omitempty"`
	Entries       []Outcome `json:"entries"`
	Extra         Extra     `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (o *Outcomes) UnmarshalJSON(b []byte) error {
	type alias Outcomes
	return unmarshalKeep(b, (*alias)(o), &o.Extra)
}

// unmarshalChecked is UnmarshalJSON for checked bytes (see checkedDecoder).
func (o *Outcomes) unmarshalChecked(b []byte) error {
	type alias Outcomes
	return unmarshalKeepChecked(b, (*alias)(o), &o.Extra)
}

// MarshalJSON writes unknown keys back.
func (o Outcomes) MarshalJSON() ([]byte, error) { return marshalKeep(o.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (o Outcomes) keepParts() (any, Extra) {
	type alias Outcomes
	if o.Entries == nil {
		o.Entries = []Outcome{}
	}
	return alias(o), o.Extra
}

// CycleLogLine is one line of the append-only cycle_log.jsonl (6-C9).
type CycleLogLine struct {
	CycleID       int      `json:"cycle_id"`
	Timestamp     string   `json:"timestamp"`
	Domain        string   `json:"domain"`
	Skill         string   `json:"skill"`
	Score         *float64 `json:"score"`
	Confidence    *float64 `json:"confidence"`
	Result        string   `json:"result"`
	ResultType    string   `json:"result_type"`
	QualityMult   float64  `json:"quality_multiplier"`
	PRNumber      *int     `json:"pr_number"`
	HadOutput     bool     `json:"had_output"`
	CostUSD       float64  `json:"cost_usd"`
	Saturation    int      `json:"saturation"`
	OnMission     bool     `json:"on_mission"`
	ArtifactScore *float64 `json:"artifact_score"`
	// SkillSeconds is how long the cycle's skill ran, to the millisecond;
	// absent when no skill ran (and in lines older tools wrote). It is
	// ooda's own key after the fifteen of 6-C9.
	SkillSeconds *float64 `json:"skill_seconds,omitempty"`
}

// CycleOutput is whether one executed cycle produced output.
type CycleOutput struct {
	Cycle     int  `json:"cycle"`
	HadOutput bool `json:"had_output"`
}
