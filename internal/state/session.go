package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Session files (SPEC-NOTES §8): one record per session under
// agent/state/evolve/sessions/, and the cycle-history ledger shared by
// every session.
const (
	SessionsDir      = "sessions"
	CycleHistoryFile = "cycle-history.jsonl"
)

// Session statuses. A session that ended with a success (done_completed,
// done_no_work) is "done"; one that ended any other way — stagnation, no
// progress, the iteration limit, HALT, a signal — is "stopped", so that a
// stop is never read as a success.
const (
	SessionRunning = "running"
	SessionDone    = "done"
	SessionStopped = "stopped"
)

// Finding statuses in a session record.
const (
	FindingOpen     = "open"
	FindingDeferred = "deferred"
	FindingResolved = "resolved"
)

// Bounds of a session record. A session runs for days, so every list in
// its record is bounded and per-cycle work stays flat however long it
// runs; a record read with more is cut to these bounds, with a warning.
const (
	// MaxDetermineLog is how many determine_log entries are kept: the
	// newest. The judge's own windows are counters in the record, not
	// read back from this log.
	MaxDetermineLog = 200
	// MaxSessionFindings is how many unresolved findings (open and
	// deferred) a record tracks; findings beyond it (by id order) are
	// not tracked.
	MaxSessionFindings = 1000
	// MaxResolvedFindings is how many resolved findings are kept: the most
	// recently resolved.
	MaxResolvedFindings = 200
	// MaxSessionTargets is how many targets (domains and goals) a record
	// tracks; beyond it the least recently seen target that is not
	// quarantined is dropped.
	MaxSessionTargets = 1000
	// maxSessionText bounds a finding's summary and a determine_log
	// reason as stored.
	maxSessionText = 300
)

// sessionIDPattern is stricter than CheckName: a session id names a file
// and is typed on a command line (`--session NAME`), so it is a short
// word of letters, digits, '.', '_' and '-' that starts with a letter or a
// digit.
var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// stopReasonPattern is the shape of every stop reason (done_completed,
// stopped_stagnation, signal …): a record read with anything else has
// none.
var stopReasonPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z_]{0,39}$`) })

// CheckSessionID refuses a session id that is not a plain short name.
func CheckSessionID(id string) error {
	if err := CheckName("session", id); err != nil {
		return err
	}
	if !sessionIDPattern().MatchString(id) {
		return fmt.Errorf("session id %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or a digit", id)
	}
	return nil
}

// Session is agent/state/evolve/sessions/<id>.json: the state of one
// `ooda run` session, everything the session needs to decide the next
// cycle without reading the cycle-history ledger back.
type Session struct {
	ID        string `json:"id"`
	StartedAt string `json:"started_at"`
	UpdatedAt string `json:"updated_at,omitempty"`
	EndedAt   string `json:"ended_at,omitempty"`
	// Status is SessionRunning, SessionDone or SessionStopped.
	Status string `json:"status"`
	// Iteration is the number of iterations judged so far.
	Iteration int `json:"iteration"`
	// MaxIterations is the iteration limit (condition A); 0 means none
	// (`--forever`).
	MaxIterations int `json:"max_iterations"`
	// Quarantined are the targets quarantined for oscillation, in the
	// order they were quarantined.
	Quarantined []string `json:"quarantined"`
	// Findings is every tracked finding by its stable id.
	Findings map[string]SessionFinding `json:"findings"`
	// DetermineLog is the judge's record, oldest first, the newest
	// MaxDetermineLog entries.
	DetermineLog []DetermineEntry `json:"determine_log"`
	// StopReason is empty (null in the file) while the session runs.
	StopReason string `json:"stop_reason"`
	// Targets is the last result and the improved→fail transition count
	// of every target seen in this session.
	Targets map[string]SessionTarget `json:"targets"`
	// LastNetProgress is the previous iteration's net progress
	// (condition C); NoProgressStreak the number of consecutive
	// iterations, up to the last, whose net progress was ≤ 0 (E).
	LastNetProgress  int   `json:"last_net_progress"`
	NoProgressStreak int   `json:"no_progress_streak"`
	Extra            Extra `json:"-"`
}

// UnmarshalJSON keeps unknown keys; values of the wrong type are read as
// far as they can be and kept as written (see unmarshalKeep).
func (s *Session) UnmarshalJSON(b []byte) error {
	type alias Session
	*s = Session{}
	return unmarshalKeep(b, (*alias)(s), &s.Extra)
}

// MarshalJSON writes unknown keys back; stop_reason is null while empty.
func (s Session) MarshalJSON() ([]byte, error) {
	type alias Session
	if s.Quarantined == nil {
		s.Quarantined = []string{}
	}
	if s.Findings == nil {
		s.Findings = map[string]SessionFinding{}
	}
	if s.DetermineLog == nil {
		s.DetermineLog = []DetermineEntry{}
	}
	if s.Targets == nil {
		s.Targets = map[string]SessionTarget{}
	}
	b, err := marshalKeep(alias(s), s.Extra)
	if err != nil || s.StopReason != "" {
		return b, err
	}
	// An empty stop_reason is written as null: the session has not
	// stopped, which "" would not say.
	keys, vals, err := objectMembers(b)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	buf.WriteByte('{')
	for i, k := range keys {
		if k == "stop_reason" {
			vals[i] = json.RawMessage("null")
		}
		write(k, vals[i])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// IsQuarantined reports whether target is quarantined in this session.
func (s Session) IsQuarantined(target string) bool {
	for _, q := range s.Quarantined {
		if q == target {
			return true
		}
	}
	return false
}

// SessionFinding is one finding a session tracks (seed 003): something
// that remains to be done, identified by a stable id such as
// "action:<id>", "gap:<name>" or "alert:<domain>:<id>".
type SessionFinding struct {
	Kind    string `json:"kind"`
	Summary string `json:"summary,omitempty"`
	// Status is FindingOpen, FindingDeferred or FindingResolved.
	Status string `json:"status"`
	// FirstSeen and LastSeen are iterations (0: present when the session
	// started).
	FirstSeen int `json:"first_seen"`
	LastSeen  int `json:"last_seen"`
	// Consecutive is the number of consecutive iterations the finding has
	// been present and unresolved.
	Consecutive int   `json:"consecutive"`
	DeferredAt  int   `json:"deferred_at,omitempty"`
	ResolvedAt  int   `json:"resolved_at,omitempty"`
	Extra       Extra `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (f *SessionFinding) UnmarshalJSON(b []byte) error {
	type alias SessionFinding
	*f = SessionFinding{}
	return unmarshalKeep(b, (*alias)(f), &f.Extra)
}

// MarshalJSON writes unknown keys back.
func (f SessionFinding) MarshalJSON() ([]byte, error) {
	type alias SessionFinding
	return marshalKeep(alias(f), f.Extra)
}

// SessionTarget is what a session keeps of one target (a domain or a
// goal) to detect oscillation (seed 002) without reading the ledger: its
// last result and its improved→fail transitions.
type SessionTarget struct {
	Kind        string `json:"kind"`
	LastResult  string `json:"last_result,omitempty"`
	Transitions int    `json:"transitions"`
	LastCycle   int    `json:"last_cycle"`
	// LastValue is a goal's progress at its last reading.
	LastValue *float64 `json:"last_value,omitempty"`
	Extra     Extra    `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (t *SessionTarget) UnmarshalJSON(b []byte) error {
	type alias SessionTarget
	*t = SessionTarget{}
	return unmarshalKeep(b, (*alias)(t), &t.Extra)
}

// MarshalJSON writes unknown keys back.
func (t SessionTarget) MarshalJSON() ([]byte, error) {
	type alias SessionTarget
	return marshalKeep(alias(t), t.Extra)
}

// DetermineEntry is one determine_log entry: the judge's verdict on one
// iteration (seed 003, step 6).
type DetermineEntry struct {
	Iteration int `json:"iteration"`
	Cycle     int `json:"cycle"`
	// Result is "done" or "continue".
	Result      string `json:"result"`
	NetProgress int    `json:"net_progress"`
	Resolved    int    `json:"resolved"`
	New         int    `json:"new"`
	// DeferredCount is the number of findings deferred so far and still
	// unresolved; DeferredNow those deferred in this iteration.
	DeferredCount      int    `json:"deferred_count"`
	DeferredNow        int    `json:"deferred_now"`
	Remaining          int    `json:"remaining"`
	StagnationDetected bool   `json:"stagnation_detected"`
	StopReason         string `json:"stop_reason,omitempty"`
	Reason             string `json:"reason"`
	Timestamp          string `json:"timestamp,omitempty"`
	Extra              Extra  `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (d *DetermineEntry) UnmarshalJSON(b []byte) error {
	type alias DetermineEntry
	*d = DetermineEntry{}
	return unmarshalKeep(b, (*alias)(d), &d.Extra)
}

// MarshalJSON writes unknown keys back.
func (d DetermineEntry) MarshalJSON() ([]byte, error) {
	type alias DetermineEntry
	return marshalKeep(alias(d), d.Extra)
}

// Ledger results and kinds (cycle-history.jsonl).
const (
	ResultImproved    = "improved"
	ResultFail        = "fail"
	ResultUnchanged   = "unchanged"
	ResultQuarantined = "quarantined"
	ResultIdle        = "idle"
	KindDomain        = "domain"
	KindGoal          = "goal"
)

// LedgerLine is one line of cycle-history.jsonl: one target's result in
// one cycle of a session. Value is the domain's quality multiplier or the
// goal's progress (for a quarantined line, the transition count), null
// when there is none.
type LedgerLine struct {
	Session    string   `json:"session"`
	Cycle      int      `json:"cycle"`
	Target     string   `json:"target"`
	Kind       string   `json:"kind"`
	Result     string   `json:"result"`
	Value      *float64 `json:"value"`
	ResultType string   `json:"result_type,omitempty"`
	Timestamp  string   `json:"timestamp"`
}

// SessionPath is the path of a session's record (the id is not checked).
func (s *Store) SessionPath(id string) string {
	return s.EvolvePath(filepath.Join(SessionsDir, id+".json"))
}

// SaveSession writes a session's record atomically, cut to the bounds
// above first, so no caller can make it grow without limit.
func (s *Store) SaveSession(sess Session) error {
	if err := CheckSessionID(sess.ID); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	BoundSession(&sess)
	return s.writeJSON(filepath.Join(SessionsDir, sess.ID+".json"), sess)
}

// SessionFileError is a session record that cannot be read: Path is the
// file, so a reader names it as it names any other corrupt state file.
type SessionFileError struct {
	Path  string
	shown string
	Err   error
}

func (e *SessionFileError) Error() string { return "session " + e.shown + ": " + e.Err.Error() }

func (e *SessionFileError) Unwrap() error { return e.Err }

// LoadSession reads a session's record. found is false for a missing
// file. A record that is not a JSON object, too large, not a regular
// file or reached through a symlink out of the project is an error naming
// it. Values of the wrong type, lists beyond their bounds and an id that
// does not match the file name are warnings (file, JSON pointer, reason)
// and are repaired in the returned record.
func (s *Store) LoadSession(id string) (sess Session, found bool, warns []string, err error) {
	if err := CheckSessionID(id); err != nil {
		return Session{}, false, nil, err
	}
	name := filepath.Join(SessionsDir, id+".json")
	found, _, err = s.readJSON(name, &sess, &warns)
	if err != nil {
		return Session{}, false, warns, &SessionFileError{Path: s.EvolvePath(name), shown: s.display(s.EvolvePath(name)), Err: err}
	}
	if !found {
		return Session{}, false, warns, nil
	}
	warns = append(warns, sanitizeSession(&sess, id, s.display(s.EvolvePath(name)))...)
	return sess, true, warns, nil
}

// LatestSession reads the most recently written session record (by
// modification time, then name), for `ooda status`. Only the record
// chosen is read. found is false when there is no session.
func (s *Store) LatestSession() (sess Session, found bool, warns []string, err error) {
	dir := s.EvolvePath(SessionsDir)
	ents, err := s.readDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Session{}, false, nil, nil
		}
		return Session{}, false, nil, fmt.Errorf("sessions: %w", err)
	}
	var best string
	var bestAt time.Time
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || CheckSessionID(id) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if at := fi.ModTime(); best == "" || at.After(bestAt) || (at.Equal(bestAt) && id > best) {
			best, bestAt = id, at
		}
	}
	if best == "" {
		return Session{}, false, nil, nil
	}
	return s.LoadSession(best)
}

// NewSessionID is a fresh session id for a session started at now: its
// UTC time, with the first free "-N" suffix when a session of that name
// exists (two simulated sessions started at the same --now). A sessions
// directory that cannot be looked in (a symlink out of the project, a
// file in its place) is an error, not a name taken: the search would
// otherwise never end.
func (s *Store) NewSessionID(now time.Time) (string, error) {
	base := now.UTC().Format("20060102T150405Z")
	id := base
	for i := 2; i <= maxSessionSuffix; i++ {
		taken, err := s.sessionExists(id)
		if err != nil {
			return "", fmt.Errorf("session %s: %w", id, err)
		}
		if !taken {
			return id, nil
		}
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return "", fmt.Errorf("sessions %s-2 to %s-%d are all taken: name one with --session", base, base, maxSessionSuffix)
}

// maxSessionSuffix bounds the "-N" suffixes NewSessionID tries.
const maxSessionSuffix = 1000

// sessionExists reports whether a session file of id is there; err is
// why it could not be looked for.
func (s *Store) sessionExists(id string) (bool, error) {
	_, err := s.lstat(s.SessionPath(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// AppendCycleHistory appends lines to cycle-history.jsonl in one write on
// an O_APPEND descriptor, then fsyncs: a line is never torn, and lines of
// one cycle are never interleaved with another writer's. The ledger is
// never read whole, truncated or rewritten; a ledger that cannot be
// appended to (not a regular file, a symlink out of the project) is moved
// aside and a new one started, as cycle_log.jsonl is.
func (s *Store) AppendCycleHistory(lines []LedgerLine) error {
	if len(lines) == 0 {
		return nil
	}
	var buf []byte
	for i, l := range lines {
		if l.Value != nil && (math.IsNaN(*l.Value) || math.IsInf(*l.Value, 0)) {
			l.Value = nil
		}
		b, err := marshalNoEscape(l)
		if err != nil {
			return fmt.Errorf("encode %s line: %w", CycleHistoryFile, err)
		}
		if i > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, b...)
	}
	return s.appendRaw(CycleHistoryFile, buf)
}

// appendRaw is appendLogLine for bytes already encoded (one or several
// lines without the final newline).
func (s *Store) appendRaw(name string, b []byte) error {
	p := s.EvolvePath(name)
	err := s.appendFile(p, b)
	if err != nil && IsRefused(err) && s.movable(p, err) {
		dst := s.asideName(p)
		if _, merr := s.moveAside(p, dst); merr != nil {
			return errors.Join(err, merr)
		}
		s.notices = append(s.notices, fmt.Sprintf("%s cannot be appended to (%v); moved to %s and a new log started", s.display(p), err, s.display(dst)))
		err = s.appendFile(p, b)
	}
	if err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// BoundSession cuts a record's lists to their bounds: the newest
// determine_log entries, the most recently resolved findings, the
// unresolved findings first by id, and the targets most recently seen
// (quarantined ones always kept). It reports what it cut, as JSON
// pointers with the reason.
func BoundSession(sess *Session) []string {
	var warns []string
	if n := len(sess.DetermineLog); n > MaxDetermineLog {
		sess.DetermineLog = append([]DetermineEntry(nil), sess.DetermineLog[n-MaxDetermineLog:]...)
		warns = append(warns, fmt.Sprintf("/determine_log: %d entries, more than %d; the oldest %d dropped", n, MaxDetermineLog, n-MaxDetermineLog))
	}
	var open, resolved []string
	for id, f := range sess.Findings {
		if f.Status == FindingResolved {
			resolved = append(resolved, id)
		} else {
			open = append(open, id)
		}
	}
	if len(open) > MaxSessionFindings {
		sort.Strings(open)
		for _, id := range open[MaxSessionFindings:] {
			delete(sess.Findings, id)
		}
		warns = append(warns, fmt.Sprintf("/findings: %d unresolved findings, more than %d; those after %q (by id) dropped", len(open), MaxSessionFindings, open[MaxSessionFindings-1]))
	}
	if len(resolved) > MaxResolvedFindings {
		sort.Slice(resolved, func(i, j int) bool {
			a, b := sess.Findings[resolved[i]], sess.Findings[resolved[j]]
			if a.ResolvedAt != b.ResolvedAt {
				return a.ResolvedAt > b.ResolvedAt
			}
			return resolved[i] < resolved[j]
		})
		for _, id := range resolved[MaxResolvedFindings:] {
			delete(sess.Findings, id)
		}
		warns = append(warns, fmt.Sprintf("/findings: %d resolved findings, more than %d; the earliest resolved dropped", len(resolved), MaxResolvedFindings))
	}
	if len(sess.Quarantined) > MaxSessionTargets {
		warns = append(warns, fmt.Sprintf("/quarantined: %d targets, more than %d; the last %d dropped", len(sess.Quarantined), MaxSessionTargets, len(sess.Quarantined)-MaxSessionTargets))
		sess.Quarantined = append([]string(nil), sess.Quarantined[:MaxSessionTargets]...)
	}
	if n := len(sess.Targets); n > MaxSessionTargets {
		names := make([]string, 0, n)
		for name := range sess.Targets {
			if !sess.IsQuarantined(name) {
				names = append(names, name)
			}
		}
		// Least recently seen first; the name breaks ties so the cut is
		// the same on every run.
		sort.Slice(names, func(i, j int) bool {
			a, b := sess.Targets[names[i]], sess.Targets[names[j]]
			if a.LastCycle != b.LastCycle {
				return a.LastCycle < b.LastCycle
			}
			return names[i] < names[j]
		})
		for _, name := range names[:min(len(names), n-MaxSessionTargets)] {
			delete(sess.Targets, name)
		}
		warns = append(warns, fmt.Sprintf("/targets: %d targets, more than %d; the least recently seen dropped", n, MaxSessionTargets))
	}
	return warns
}

// sanitizeSession repairs what a hostile or damaged record may hold:
// an id that is not the file's, negative or absurd counters, unknown
// statuses, empty or duplicated quarantined targets, long texts, and
// lists beyond their bounds. Each repair is a warning naming the file
// and the JSON pointer.
func sanitizeSession(sess *Session, id, display string) []string {
	var warns []string
	warn := func(ptr, msg string) { warns = append(warns, display+": "+ptr+": "+msg) }
	if sess.ID != id {
		warn("/id", fmt.Sprintf("%q is not the file's name; using %q", clipText(sess.ID, 80), id))
		sess.ID = id
	}
	counter := func(ptr string, v *int) {
		if *v < 0 || *v > MaxCounter {
			warn(ptr, fmt.Sprintf("%d is out of range [0, %d]; using 0", *v, MaxCounter))
			*v = 0
		}
	}
	counter("/iteration", &sess.Iteration)
	counter("/max_iterations", &sess.MaxIterations)
	counter("/no_progress_streak", &sess.NoProgressStreak)
	if sess.LastNetProgress < -MaxCounter || sess.LastNetProgress > MaxCounter {
		warn("/last_net_progress", fmt.Sprintf("%d is out of range; using 0", sess.LastNetProgress))
		sess.LastNetProgress = 0
	}
	switch sess.Status {
	case SessionRunning, SessionDone, SessionStopped:
	default:
		warn("/status", fmt.Sprintf("%q is not running, done or stopped; using %q", clipText(sess.Status, 80), SessionStopped))
		sess.Status = SessionStopped
	}
	if sess.StopReason != "" && !stopReasonPattern().MatchString(sess.StopReason) {
		warn("/stop_reason", fmt.Sprintf("%q is not a stop reason; ignored", clipText(sess.StopReason, 80)))
		sess.StopReason = ""
	}
	seen := map[string]bool{}
	var q []string
	for i, t := range sess.Quarantined {
		if t == "" || len(t) > maxSessionText || seen[t] {
			warn(fmt.Sprintf("/quarantined/%d", i), "empty, too long or repeated; dropped")
			continue
		}
		seen[t] = true
		q = append(q, t)
	}
	sess.Quarantined = q
	for fid, f := range sess.Findings {
		ptr := "/findings/" + escapePointer(fid)
		changed := false
		if fid == "" || len(fid) > maxSessionText {
			warn(ptr, "an empty or too long finding id; dropped")
			delete(sess.Findings, fid)
			continue
		}
		switch f.Status {
		case FindingOpen, FindingDeferred, FindingResolved:
		default:
			warn(ptr+"/status", fmt.Sprintf("%q is not open, deferred or resolved; using open", clipText(f.Status, 80)))
			f.Status, changed = FindingOpen, true
		}
		for _, c := range []struct {
			name string
			v    *int
		}{{"first_seen", &f.FirstSeen}, {"last_seen", &f.LastSeen}, {"consecutive", &f.Consecutive}, {"deferred_at", &f.DeferredAt}, {"resolved_at", &f.ResolvedAt}} {
			if *c.v < 0 || *c.v > MaxCounter {
				warn(ptr+"/"+c.name, fmt.Sprintf("%d is out of range; using 0", *c.v))
				*c.v, changed = 0, true
			}
		}
		if len(f.Summary) > maxSessionText {
			f.Summary, changed = clipText(f.Summary, maxSessionText), true
		}
		if changed {
			sess.Findings[fid] = f
		}
	}
	for name, t := range sess.Targets {
		ptr := "/targets/" + escapePointer(name)
		if name == "" || len(name) > maxSessionText {
			warn(ptr, "an empty or too long target name; dropped")
			delete(sess.Targets, name)
			continue
		}
		changed := false
		if t.Transitions < 0 || t.Transitions > MaxCounter {
			warn(ptr+"/transitions", fmt.Sprintf("%d is out of range; using 0", t.Transitions))
			t.Transitions, changed = 0, true
		}
		if t.LastCycle < 0 || t.LastCycle > MaxCounter {
			warn(ptr+"/last_cycle", fmt.Sprintf("%d is out of range; using 0", t.LastCycle))
			t.LastCycle, changed = 0, true
		}
		if t.LastValue != nil && (math.IsNaN(*t.LastValue) || math.IsInf(*t.LastValue, 0)) {
			t.LastValue, changed = nil, true
		}
		if changed {
			sess.Targets[name] = t
		}
	}
	for _, w := range BoundSession(sess) {
		warns = append(warns, display+": "+w)
	}
	return warns
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
