package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Alert is one entry of a domain state file's alerts array.
type Alert struct {
	Severity string `json:"severity"`
	Message  string `json:"message,omitempty"`
	ID       string `json:"id,omitempty"`
}

// Urgent reports a warning or critical alert.
func (a Alert) Urgent() bool { return a.Severity == "warning" || a.Severity == "critical" }

// DomainState is a domain's state file (written by its skill, only read by
// the engine). Raw keeps the whole document for chain conditions and the
// "state changed" test.
type DomainState struct {
	Found    bool
	LastRun  string
	Status   string
	RunCount int
	Alerts   []Alert
	Metrics  map[string]float64
	Raw      map[string]json.RawMessage
	Bytes    []byte
	ModTime  time.Time
	// Warnings name each value of the wrong type (a last_run that is a
	// number, alerts given as a string, a status that is an object): the
	// file, the JSON pointer, the value, and what was done with it. A
	// skill's typo would otherwise read as silently zero: a domain that
	// never seems to have run, or an alert that never fires.
	Warnings []string
}

// LastRunTime is the later of last_run and the legacy last_check.
func (d DomainState) LastRunTime() (time.Time, bool) {
	if d.LastRun == "" {
		// No layout parses an empty string: spared the four failed
		// parses (and their errors) for each domain that never ran.
		return time.Time{}, false
	}
	return ParseTime(d.LastRun)
}

// HoldsSecret reports whether the project file rel (a domain state file
// a skill wrote) holds the value of a known secret. Every file ooda writes
// has them masked; a file a skill wrote is as the skill wrote it, and ooda
// must not be the one to commit it.
func (s *Store) HoldsSecret(rel string) (bool, error) {
	b, _, err := s.readFile(s.Path(rel))
	if err != nil {
		return false, err
	}
	return !bytes.Equal(secret.RedactBytes(b), b), nil
}

// ReadDomainState reads a domain state file; a missing file is Found=false.
// Alerts are read tolerantly: an alert given as a plain string is a warning
// with that message, and an unknown severity counts as info.
//
// The file must be inside the project (after symlinks), a regular file and
// within MaxRead; otherwise the error is a refusal (see IsRefused) and the
// file is not read.
func (s *Store) ReadDomainState(rel string) (DomainState, error) {
	if s.heldAbsent(rel) {
		return DomainState{}, nil
	}
	p := s.Path(rel)
	b, fi, err := s.readJSONFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return DomainState{}, nil
		}
		if IsRefused(err) {
			return DomainState{}, err
		}
		return DomainState{}, fmt.Errorf("read %s: %w", p, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return DomainState{}, fmt.Errorf("read %s: %w", p, err)
	}
	ds := DomainState{Found: true, Raw: raw, Bytes: b, ModTime: fi.ModTime()}
	var warns []string
	warn := func(ptr, msg string) { warns = append(warns, ptr+": "+msg) }
	str := func(k string) string {
		v, ok := raw[k]
		if !ok || isNull(v) {
			return ""
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			warn(config.Pointer(k), showJSONValue(v)+" is not a string; not used")
		}
		return s
	}
	timeStr := func(k string) string {
		v := str(k)
		if _, ok := ParseTime(v); v != "" && !ok {
			warn(config.Pointer(k), strconv.QuoteToASCII(v)+" is not a time (write RFC 3339 UTC, e.g. 2026-03-02T09:00:00Z); not used")
		}
		return v
	}
	last, lastCheck := timeStr("last_run"), timeStr("last_check")
	ds.LastRun = last
	if t2, ok2 := ParseTime(lastCheck); ok2 {
		if t1, ok1 := ParseTime(last); !ok1 || t2.After(t1) {
			ds.LastRun = lastCheck
		}
	}
	ds.Status = str("status")
	if v, ok := raw["run_count"]; ok && !isNull(v) {
		if n, _, ok := readLoose(v, reflect.TypeFor[int](), "/run_count", warn); ok {
			ds.RunCount = int(n.Int())
		}
	}
	if v, ok := raw["alerts"]; ok && !isNull(v) {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			warn("/alerts", showJSONValue(v)+" is not an array of alerts; no alert read")
		}
		for i, it := range items {
			ptr := "/alerts/" + strconv.Itoa(i)
			var msg string
			if json.Unmarshal(it, &msg) == nil {
				ds.Alerts = append(ds.Alerts, Alert{Severity: "warning", Message: msg})
				continue
			}
			var a Alert
			if json.Unmarshal(it, &a) != nil {
				warn(ptr, showJSONValue(it)+` is not an alert (an object {"severity": "warning", "message": "…"} or a string); not used`)
				continue
			}
			a.Severity = strings.ToLower(a.Severity)
			switch a.Severity {
			case "info", "warning", "critical":
			case "":
				warn(ptr+"/severity", "missing (info, warning or critical); counted as info")
				a.Severity = "info"
			default:
				warn(ptr+"/severity", strconv.QuoteToASCII(a.Severity)+" is not info, warning or critical; counted as info")
				a.Severity = "info"
			}
			ds.Alerts = append(ds.Alerts, a)
		}
	}
	if v, ok := raw["metrics"]; ok && !isNull(v) {
		keys, vals, err := objectMembers(bytes.TrimSpace(v))
		if err != nil {
			warn("/metrics", showJSONValue(v)+" is not an object of numbers; no metric read")
		} else {
			ds.Metrics = map[string]float64{}
			for i, k := range keys {
				if isNull(vals[i]) {
					continue
				}
				if f, _, ok := readLoose(vals[i], reflect.TypeFor[float64](), "/metrics"+config.Pointer(k), warn); ok {
					ds.Metrics[k] = f.Float()
				}
			}
		}
	}
	if len(warns) > maxLooseWarnings {
		n := len(warns) - maxLooseWarnings
		warns = append(warns[:maxLooseWarnings:maxLooseWarnings], fmt.Sprintf("%d more values not taken as written", n))
	}
	for _, w := range warns {
		ds.Warnings = append(ds.Warnings, s.display(p)+": "+w)
	}
	return ds, nil
}

// LensItem is one focus item, learned threshold or discovered signal.
type LensItem struct {
	Item       string   `json:"item"`
	Confidence float64  `json:"confidence"`
	Value      *float64 `json:"value,omitempty"`
	Extra      Extra    `json:"-"`

	// read is the entry as the file held it (nil for a new entry).
	read *readEntry
}

// UnmarshalJSON keeps unknown keys, and the entry as read (see readEntry).
func (l *LensItem) UnmarshalJSON(b []byte) error {
	type alias LensItem
	*l = LensItem{}
	if err := unmarshalKeep(b, (*alias)(l), &l.Extra); err != nil {
		return err
	}
	l.read = rememberEntry(b, alias(*l), l.Extra)
	return nil
}

// MarshalJSON writes unknown keys back; an entry read from the file is
// written as it was read, but for the keys that changed (see readEntry).
func (l LensItem) MarshalJSON() ([]byte, error) {
	type alias LensItem
	return l.read.encode(alias(l), l.Extra)
}

// Lens is agent/state/<domain>/lens.json.
type Lens struct {
	SchemaVersion     string            `json:"schema_version"`
	Domain            string            `json:"domain"`
	LastUpdated       string            `json:"last_updated"`
	FocusItems        []LensItem        `json:"focus_items"`
	LearnedThresholds []LensItem        `json:"learned_thresholds"`
	DiscoveredSignals []LensItem        `json:"discovered_signals"`
	Evidence          []json.RawMessage `json:"evidence"`
	DeprecatedItems   []json.RawMessage `json:"deprecated_items"`
	Extra             Extra             `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (l *Lens) UnmarshalJSON(b []byte) error {
	type alias Lens
	return unmarshalKeep(b, (*alias)(l), &l.Extra)
}

// MarshalJSON writes unknown keys back.
func (l Lens) MarshalJSON() ([]byte, error) { return marshalKeep(l.keepParts()) }

// keepParts is what MarshalJSON encodes (see keepParter).
func (l Lens) keepParts() (any, Extra) {
	type alias Lens
	for _, p := range []*[]LensItem{&l.FocusItems, &l.LearnedThresholds, &l.DiscoveredSignals} {
		if *p == nil {
			*p = []LensItem{}
		}
	}
	for _, p := range []*[]json.RawMessage{&l.Evidence, &l.DeprecatedItems} {
		if *p == nil {
			*p = []json.RawMessage{}
		}
	}
	return alias(l), l.Extra
}

// Active returns the lens passed to skills: focus items and learned
// thresholds at confidence >= 0.6, and every discovered signal (1-A).
func (l Lens) Active() Lens {
	out := Lens{SchemaVersion: l.SchemaVersion, Domain: l.Domain, LastUpdated: l.LastUpdated}
	for _, it := range l.FocusItems {
		if it.Confidence >= 0.6 {
			out.FocusItems = append(out.FocusItems, it)
		}
	}
	for _, it := range l.LearnedThresholds {
		if it.Confidence >= 0.6 {
			out.LearnedThresholds = append(out.LearnedThresholds, it)
		}
	}
	out.DiscoveredSignals = l.DiscoveredSignals
	return out
}

// LensPath is agent/state/<domain>/lens.json. It only computes the name:
// the methods that read or write it refuse a domain that is not a plain
// name (CheckName).
func (s *Store) LensPath(domain string) string {
	return filepath.Join(s.Root, "agent", "state", domain, "lens.json")
}

// ReadLens reads a domain's lens; found is false when missing, and a
// corrupt or refused lens is an error (the cycle proceeds without a lens).
func (s *Store) ReadLens(domain string) (Lens, bool, error) {
	if err := CheckName("domain", domain); err != nil {
		return Lens{}, false, err
	}
	b, _, err := s.readJSONFile(s.LensPath(domain))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Lens{}, false, nil
		}
		return Lens{}, false, err
	}
	l, err := s.decodeLens(domain, b)
	if err != nil {
		return Lens{}, false, err
	}
	return l, true, nil
}

// decodeLens decodes the bytes of domain's lens file as ReadLens does.
func (s *Store) decodeLens(domain string, b []byte) (Lens, error) {
	var l Lens
	// Every cycle reads every domain's lens: one scan, not json.Unmarshal's
	// three (decodeDocument).
	if err := decodeDocument(b, &l); err != nil {
		return Lens{}, fmt.Errorf("lens %s: %w", s.LensPath(domain), err)
	}
	return l, nil
}

// LensState is ReadLens for a caller that needs to know only whether the
// lens exists and reads: found, and the error ReadLens would return.
// Step 1 asks it of every domain's lens each cycle and uses nothing else
// of it, so the lens is not decoded when it need not be: a lens that is
// one JSON object reads without error whatever its members hold (a value
// of the wrong type is kept as written, not refused), so a file the
// scanner ReadLens's decoder starts with takes as one object is found and
// readable. Anything else is decoded as ReadLens decodes it, for its
// error.
func (s *Store) LensState(domain string) (found bool, err error) {
	if err := CheckName("domain", domain); err != nil {
		return false, err
	}
	buf := lensBufs.Get().(*[]byte)
	b, err := s.readLensBytes(domain, *buf)
	if err != nil {
		lensBufs.Put(buf)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if start := skipSpace(b, 0); start < len(b) && b[start] == '{' {
		if end, ok := scanValue(b, start, 0); ok && skipSpace(b, end) == len(b) {
			lensBufs.Put(buf)
			return true, nil
		}
	}
	// Decoded, the lens keeps slices of b: the buffer is not reused.
	if _, err := s.decodeLens(domain, b); err != nil {
		return false, err
	}
	return true, nil
}

// lensBufs are LensState's read buffers: a lens is read, scanned and
// dropped, a thousand of them each cycle.
var lensBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// NewLens is the initial lens of 1-A's pre-init.
func NewLens(domain string, now time.Time) Lens {
	return Lens{SchemaVersion: "1.0.0", Domain: domain, LastUpdated: FormatTime(now)}
}

// InitLens writes the initial lens file when none exists (1-A lens pre-init).
func (s *Store) InitLens(domain string, now time.Time) (bool, error) {
	if err := CheckName("domain", domain); err != nil {
		return false, err
	}
	p := s.LensPath(domain)
	if _, err := s.lstat(p); err == nil {
		return false, nil
	} else if IsRefused(err) {
		return false, err
	}
	b, err := encodeJSON(NewLens(domain, now))
	if err != nil {
		return false, err
	}
	if err := s.writeFile(p, append(b, '\n')); err != nil {
		return false, err
	}
	s.written[p] = true
	return true, nil
}

// ExternalSignal is one file of agent/state/external/ (1-C).
type ExternalSignal struct {
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
}

// MaxExternalSignals is how many agent/state/external/*.json files one
// cycle reads; the rest, in name order, are skipped with one warning.
const MaxExternalSignals = 100

// ReadExternalSignals reads agent/state/external/*.json in name order. A
// missing directory is no signals; an unreadable or refused file (too
// large, not regular, a symlink out of the project, nested too deep) is
// reported and skipped. At most MaxExternalSignals files are read, and at
// most the read limit (safety.max_read_mib) in total: each file alone may
// be that large, and a directory of them would otherwise cost its whole
// size in memory. A file that would pass the total is skipped, and so is
// every file after it.
func (s *Store) ReadExternalSignals() ([]ExternalSignal, []error) {
	dir := filepath.Join(s.Root, "agent", "state", "external")
	ents, err := s.readDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("external signals: %w", err)}
	}
	var matches []string
	for _, e := range ents {
		if ok, _ := filepath.Match("*.json", e.Name()); ok {
			matches = append(matches, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(matches)
	var out []ExternalSignal
	var errs []error
	if len(matches) > MaxExternalSignals {
		errs = append(errs, fmt.Errorf("external signals %s: %d files; only the first %d in name order are read, %d skipped", s.display(dir), len(matches), MaxExternalSignals, len(matches)-MaxExternalSignals))
		matches = matches[:MaxExternalSignals]
	}
	left := s.maxRead()
	for i, m := range matches {
		b, _, err := s.readFileLimit(m, min(s.maxRead(), left))
		var tl *TooLargeError
		if errors.As(err, &tl) && left < s.maxRead() {
			errs = append(errs, fmt.Errorf("external signals %s: the files read so far and %s pass the total read limit of %s (safety.max_read_mib); %d file(s) skipped", s.display(dir), s.display(m), config.SizeString(s.maxRead()), len(matches)-i))
			break
		}
		if err == nil {
			err = checkDepth(m, b)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("external signal %s: %w", m, err))
			continue
		}
		if !json.Valid(b) {
			errs = append(errs, fmt.Errorf("external signal %s: not valid JSON", m))
			continue
		}
		left -= int64(len(b))
		out = append(out, ExternalSignal{Name: filepath.Base(m), Content: json.RawMessage(b)})
	}
	return out, errs
}

// ReadActiveContext reads the active context blob (opaque JSON) and its age.
func (s *Store) ReadActiveContext(rel string) (json.RawMessage, time.Time, error) {
	p := s.Path(rel)
	b, fi, err := s.readJSONFile(p)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !json.Valid(b) {
		return nil, time.Time{}, fmt.Errorf("%s: not valid JSON", p)
	}
	return json.RawMessage(b), fi.ModTime(), nil
}

// RotationCursor is agent/state/<domain>/rotation_cursor.json (4-B).
type RotationCursor struct {
	Cursor      int     `json:"cursor"`
	LastUpdated *string `json:"last_updated"`
	FocusItem   *string `json:"focus_item"`
	Extra       Extra   `json:"-"`
}

// UnmarshalJSON keeps unknown keys.
func (r *RotationCursor) UnmarshalJSON(b []byte) error {
	type alias RotationCursor
	return unmarshalKeep(b, (*alias)(r), &r.Extra)
}

// MarshalJSON writes unknown keys back.
func (r RotationCursor) MarshalJSON() ([]byte, error) {
	type alias RotationCursor
	return marshalKeep(alias(r), r.Extra)
}

// RotationCursorPath is agent/state/<domain>/rotation_cursor.json.
func (s *Store) RotationCursorPath(domain string) string {
	return filepath.Join(s.Root, "agent", "state", domain, "rotation_cursor.json")
}

// ReadRotationCursor reads a domain's rotation cursor; a missing or
// invalid file is cursor 0 (4-B), with the decode error returned for a
// warning.
func (s *Store) ReadRotationCursor(domain string) (RotationCursor, error) {
	if err := CheckName("domain", domain); err != nil {
		return RotationCursor{}, err
	}
	b, _, err := s.readJSONFile(s.RotationCursorPath(domain))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return RotationCursor{}, nil
		}
		return RotationCursor{}, err
	}
	var rc RotationCursor
	if err := json.Unmarshal(b, &rc); err != nil {
		return RotationCursor{}, fmt.Errorf("rotation cursor %s: %w", s.RotationCursorPath(domain), err)
	}
	return rc, nil
}

// SaveRotationCursor writes a domain's rotation cursor atomically.
func (s *Store) SaveRotationCursor(domain string, rc RotationCursor) error {
	if err := CheckName("domain", domain); err != nil {
		return err
	}
	b, err := encodeJSON(rc)
	if err != nil {
		return err
	}
	p := s.RotationCursorPath(domain)
	if err := s.writeFile(p, append(b, '\n')); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}
