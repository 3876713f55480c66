package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// metrics.json exists in two layouts. ooda (and the original's evolve
// Step 6-C5, its status and scorecard readers) keep everything under
// "counters": domain_executions, current_domain, current_streak and
// longest_streak included. The original's state design keeps
// domain_executions at the top level, the streaks in a "streaks" block and a
// per-day cost log in cost.daily_log. Both are read into the same fields
// (Counters), so the balance term of Decide sees a project's execution
// history whichever layout it has; a file is written back in the layout it
// had, updated, and a new file in ooda's.

// Counters are the permanent metrics.json counters (6-C5).
type Counters struct {
	TotalCycles          int `json:"total_cycles"`
	TotalSkillExecutions int `json:"total_skill_executions"`
	// TotalChainExecutions counts the chains that ran (one per cycle that
	// ran chain members). It is nil, and stays absent, in a file that has
	// no such counter: starting it at 0 under years of history would
	// report a count that is not one.
	TotalChainExecutions *int           `json:"total_chain_executions,omitempty"`
	TotalPRsCreated      int            `json:"total_prs_created"`
	TotalPRsMerged       int            `json:"total_prs_merged"`
	TotalPRsRejected     int            `json:"total_prs_rejected"`
	DomainExecutions     map[string]int `json:"domain_executions"`
	TotalFutileCycles    int            `json:"total_futile_cycles"`
	ActionsAdded         int            `json:"actions_added"`
	ActionsResolved      int            `json:"actions_resolved"`
	CurrentDomain        string         `json:"current_domain,omitempty"`
	CurrentStreak        int            `json:"current_streak"`
	LongestStreak        int            `json:"longest_streak"`
	Extra                Extra          `json:"-"`

	// hasDomains and hasStreak say whether the file had domain_executions
	// and the streak keys under counters; omitDomains and omitStreak,
	// set by Metrics when it writes them elsewhere, leave them out here.
	hasDomains, hasStreak   bool
	omitDomains, omitStreak bool
	// read is the object as the file held it (see readEntry): counters
	// keep their order and spelling, and a counter is added at the end.
	read *readEntry
}

// streakKeys are the counters keys of the streak; the state design keeps
// them in the streaks block instead.
var streakKeys = []string{"current_domain", "current_streak", "longest_streak"}

// UnmarshalJSON keeps unknown keys.
func (c *Counters) UnmarshalJSON(b []byte) error {
	type alias Counters
	*c = Counters{}
	if err := unmarshalKeep(b, (*alias)(c), &c.Extra); err != nil {
		return err
	}
	keys, _, _ := objectMembers(b)
	for _, k := range keys {
		switch k {
		case "domain_executions":
			c.hasDomains = true
		case "current_domain", "current_streak", "longest_streak":
			c.hasStreak = true
		}
	}
	c.read = rememberOwn(b, c)
	return nil
}

// readAs is the block as MarshalJSON hands it to encode (see rereader).
func (c *Counters) readAs() (any, Extra) {
	type alias Counters
	return alias(c.canonical()), c.Extra
}

func (c Counters) canonical() Counters {
	if c.DomainExecutions == nil {
		c.DomainExecutions = map[string]int{}
	}
	return c
}

// MarshalJSON writes unknown keys back.
func (c Counters) MarshalJSON() ([]byte, error) {
	type alias Counters
	b, err := c.read.encode(alias(c.canonical()), c.Extra)
	if err != nil || (!c.omitDomains && !c.omitStreak) {
		return b, err
	}
	drop := map[string]bool{}
	if c.omitDomains {
		drop["domain_executions"] = true
	}
	if c.omitStreak {
		for _, k := range streakKeys {
			drop[k] = true
		}
	}
	keys, vals, err := objectMembers(b)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	buf.WriteByte('{')
	for i, k := range keys {
		if !drop[k] {
			write(k, vals[i])
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// DailyLogKept is how many days cost.daily_log keeps (the state design's
// 90): older days are folded into total_estimated_usd.
const DailyLogKept = 90

// DailyCost is one cost.daily_log entry of the state design's layout.
type DailyCost struct {
	Date         string  `json:"date"`
	EstimatedUSD float64 `json:"estimated_usd"`
	Cycles       int     `json:"cycles"`
	Extra        Extra   `json:"-"`

	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (d *DailyCost) UnmarshalJSON(b []byte) error {
	type alias DailyCost
	*d = DailyCost{}
	if err := unmarshalKeep(b, (*alias)(d), &d.Extra); err != nil {
		return err
	}
	d.read = rememberEntry(b, alias(*d), d.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file keeps
// its order, changed only where its values changed.
func (d DailyCost) MarshalJSON() ([]byte, error) {
	type alias DailyCost
	return d.read.encode(alias(d), d.Extra)
}

// MetricsCost is metrics.json's cost block. Without a daily log (ooda's
// layout) total_estimated_usd is the running total of every cycle's cost.
// With one (the state design's), each day's cost is in its daily_log entry
// and total_estimated_usd holds only the days evicted from the log, as the
// original keeps it: the whole spend is TotalUSD.
type MetricsCost struct {
	TotalEstimatedUSD float64 `json:"total_estimated_usd"`
	// DailyLog is the state design's per-day log, its entries as written
	// (nil when the file has none). An entry is rewritten only when its
	// day's cost changes.
	DailyLog *[]json.RawMessage `json:"daily_log,omitempty"`
	Extra    Extra              `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (c *MetricsCost) UnmarshalJSON(b []byte) error {
	type alias MetricsCost
	return unmarshalKeep(b, (*alias)(c), &c.Extra)
}

// MarshalJSON writes unknown keys back.
func (c MetricsCost) MarshalJSON() ([]byte, error) {
	type alias MetricsCost
	return marshalKeep(alias(c), c.Extra)
}

// TotalUSD is the whole spend the block records: the total, plus the days
// still in the daily log.
func (c MetricsCost) TotalUSD() float64 {
	t := c.TotalEstimatedUSD
	if c.DailyLog != nil {
		for _, raw := range *c.DailyLog {
			var d DailyCost
			if json.Unmarshal(raw, &d) == nil {
				t += d.EstimatedUSD
			}
		}
	}
	return t
}

// Streaks is the state design's streaks block.
type Streaks struct {
	CurrentDomain       *string `json:"current_domain"`
	CurrentStreak       int     `json:"current_streak"`
	LongestStreak       int     `json:"longest_streak"`
	LongestStreakDomain *string `json:"longest_streak_domain"`
	Extra               Extra   `json:"-"`

	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the block as read (see readEntry).
func (s *Streaks) UnmarshalJSON(b []byte) error {
	type alias Streaks
	*s = Streaks{}
	if err := unmarshalKeep(b, (*alias)(s), &s.Extra); err != nil {
		return err
	}
	s.read = rememberEntry(b, alias(*s), s.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; a block read from the file keeps
// its order, changed only where its values changed.
func (s Streaks) MarshalJSON() ([]byte, error) {
	type alias Streaks
	return s.read.encode(alias(s), s.Extra)
}

// Metrics is agent/state/evolve/metrics.json.
type Metrics struct {
	SchemaVersion string   `json:"schema_version,omitempty"`
	Counters      Counters `json:"counters"`
	// DomainExecutions is the state design's top-level domain_executions
	// as the file had it (nil when it had none). Its counts are read into
	// Counters.DomainExecutions, which is the one to use; the changed ones
	// are written back here from there.
	DomainExecutions json.RawMessage `json:"domain_executions,omitempty"`
	Cost             MetricsCost     `json:"cost"`
	// Streaks is the state design's streaks block (nil when the file has
	// none). Read into, and written from, the streak fields of Counters.
	Streaks      *Streaks `json:"streaks,omitempty"`
	FirstCycleAt string   `json:"first_cycle_at,omitempty"`
	LastUpdated  string   `json:"last_updated,omitempty"`
	Extra        Extra    `json:"-"`

	// read says the value came from a file (a new file gets the counters
	// a file of ooda's own has).
	read bool
	// topRead holds the top-level domain counts as read, to tell the
	// changed ones; warnings say which were not read as written.
	topRead  map[string]int
	warnings []string
}

// UnmarshalJSON keeps unknown keys and reads the state design's layout
// into the counters.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	type alias Metrics
	*m = Metrics{}
	if err := unmarshalKeep(b, (*alias)(m), &m.Extra); err != nil {
		return err
	}
	m.read = true
	c := &m.Counters
	if top := m.topDomains(); top != nil {
		m.topRead = top
		if c.DomainExecutions == nil {
			c.DomainExecutions = map[string]int{}
		}
		// Both copies count the same executions, one perhaps behind the
		// other (a reader that updated only one): the larger count is the
		// one that happened. Adding them would count every run twice.
		for d, n := range top {
			if v, ok := c.DomainExecutions[d]; !ok || n > v {
				c.DomainExecutions[d] = n
			}
		}
	}
	if s := m.Streaks; s != nil {
		if !c.hasStreak {
			c.CurrentDomain = ""
			if s.CurrentDomain != nil {
				c.CurrentDomain = *s.CurrentDomain
			}
			c.CurrentStreak = s.CurrentStreak
		}
		c.LongestStreak = max(c.LongestStreak, s.LongestStreak)
	}
	return nil
}

// topDomains reads the top-level domain_executions, value by value: nil
// when the file has none (or not an object).
func (m *Metrics) topDomains() map[string]int {
	keys, vals, err := objectMembers(bytes.TrimSpace(m.DomainExecutions))
	if len(m.DomainExecutions) == 0 || err != nil {
		return nil
	}
	out := make(map[string]int, len(keys))
	for i, k := range keys {
		v, _, ok := readLoose(vals[i], reflect.TypeFor[int](), "/domain_executions/"+escapePointer(k), func(ptr, msg string) {
			m.warnings = append(m.warnings, ptr+": "+msg)
		})
		if ok {
			out[k] = int(v.Int())
		}
	}
	return out
}

// DecodeWarnings says which top-level domain counts were not read as
// written.
func (m Metrics) DecodeWarnings() []string {
	if len(m.warnings) > maxLooseWarnings {
		n := len(m.warnings) - maxLooseWarnings
		return append(m.warnings[:maxLooseWarnings:maxLooseWarnings], fmt.Sprintf("%d more values not taken as written", n))
	}
	return m.warnings
}

// New reports whether the value was not read from a file: a new metrics
// file, which gets every counter ooda keeps.
func (m Metrics) New() bool { return !m.read }

// MarshalJSON writes the file in the layout it was read in: each copy of
// the domain counts and of the streak it had, updated, and nothing added
// to the counters that the state design keeps elsewhere.
func (m Metrics) MarshalJSON() ([]byte, error) {
	type alias Metrics
	c := &m.Counters
	if m.topRead != nil {
		m.DomainExecutions = m.writeTopDomains()
		c.omitDomains = !c.hasDomains
	}
	if m.Streaks != nil {
		s := *m.Streaks
		if c.CurrentDomain != "" {
			d := c.CurrentDomain
			s.CurrentDomain = &d
		} else if s.CurrentDomain != nil && *s.CurrentDomain != "" {
			s.CurrentDomain = nil
		}
		s.CurrentStreak, s.LongestStreak = c.CurrentStreak, c.LongestStreak
		m.Streaks = &s
		c.omitStreak = !c.hasStreak
	}
	return marshalKeep(alias(m), m.Extra)
}

// writeTopDomains is the top-level domain_executions with the counts that
// changed since it was read: the others stay as written, in their order,
// and new domains follow, sorted.
func (m Metrics) writeTopDomains() json.RawMessage {
	keys, vals, err := objectMembers(bytes.TrimSpace(m.DomainExecutions))
	if err != nil {
		return m.DomainExecutions
	}
	counts := m.Counters.DomainExecutions
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	buf.WriteByte('{')
	seen := map[string]bool{}
	for i, k := range keys {
		seen[k] = true
		n, ok := counts[k]
		if was, read := m.topRead[k]; !ok || (read && was == n) {
			write(k, vals[i])
			continue
		}
		nb, _ := json.Marshal(n)
		write(k, nb)
	}
	added := make([]string, 0, len(counts))
	for d := range counts {
		if !seen[d] {
			added = append(added, d)
		}
	}
	sort.Strings(added)
	for _, d := range added {
		nb, _ := json.Marshal(counts[d])
		write(d, nb)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
