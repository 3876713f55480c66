package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ooda-loop/ooda/internal/config"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// File names under agent/state/evolve/.
const (
	StateFile       = "state.json"
	ConfidenceFile  = "confidence.json"
	GoalsFile       = "goals.json"
	MemosFile       = "memos.json"
	ActionQueueFile = "action_queue.json"
	SkillGapsFile   = "skill_gaps.json"
	MetricsFile     = "metrics.json"
	CostLedgerFile  = "cost_ledger.json"
	OutcomesFile    = "outcomes.json"
	ChangelogFile   = "CHANGELOG.md"
	CycleLogFile    = "cycle_log.jsonl"
	CheckpointsFile = "checkpoints.json"
	LockFile        = ".lock"
)

// Store reads and writes one project's state. It records every file it
// writes so that Step 6-D can commit exactly those.
//
// Every read and write stays inside the project after symlinks are
// resolved, reads only regular files within MaxRead bytes, and every byte
// written has the values of known secrets replaced (docs/state.md).
type Store struct {
	// Root is the project root; EvolveDir is agent/state/evolve under it.
	Root      string
	EvolveDir string
	// MaxRead caps every read, in bytes (safety.max_read_mib); 0 means
	// DefaultMaxRead. A larger file is refused with *TooLargeError.
	MaxRead int64
	// Now is the clock that names the copies of files set aside
	// (<name>.corrupt-<UTC>); nil is the real clock. A cycle sets its
	// injected clock, so --now names them too.
	Now     func() time.Time
	written map[string]bool
	// recoveredCycle is the cycle count the last Load recovered (a
	// negative, absurd or set-aside cycle_count), or -1: Reset writes it,
	// so a state.json reset by a cycle that then ends early still numbers
	// the next cycle after the recorded ones.
	recoveredCycle int
	notices        []string
	// batch, when set, holds this store's writes until its Commit: the
	// store is a Batch's (Store.Batch).
	batch *Batch
}

// New returns the store of the project at root.
func New(root string) *Store {
	return &Store{Root: root, EvolveDir: filepath.Join(root, "agent", "state", "evolve"), written: map[string]bool{}, recoveredCycle: -1}
}

// ForConfig is the store of the project at root, reading within the
// configuration's safety.max_read_mib (the default limit for a nil
// configuration): how every reader outside a cycle opens the state.
func ForConfig(root string, cfg *config.Config) *Store {
	s := New(root)
	if cfg == nil {
		cfg = config.Default()
	}
	s.MaxRead = cfg.Safety.MaxReadBytes()
	return s
}

// Path joins a path relative to the project root (an absolute path is
// returned as it is). It only computes a name, for messages and for the
// store's own methods, which refuse a path outside the project; a path
// handed to another process should come from Resolve.
func (s *Store) Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(s.Root, rel)
}

// EvolvePath is the path of an evolve file.
func (s *Store) EvolvePath(name string) string { return filepath.Join(s.EvolveDir, name) }

// Written lists the files written through this store, relative to the root, sorted.
func (s *Store) Written() []string {
	out := make([]string, 0, len(s.written))
	for p := range s.written {
		if rel, err := filepath.Rel(s.Root, p); err == nil {
			out = append(out, rel)
		} else {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Corruption records an evolve file that could not be read or decoded.
// Err is the decode error, or a refusal (see IsRefused): the file is too
// large, not a regular file, or a symlink out of the project.
type Corruption struct {
	File string // base name, e.g. "memos.json"
	Path string
	Err  error
}

// CorruptLedgerError is returned when cost_ledger.json exists but cannot be
// decoded or read: the ledger fails closed, because recreating it at $0
// would erase today's spend and defeat the daily cap.
type CorruptLedgerError struct {
	Path string
	Err  error
}

func (e *CorruptLedgerError) Error() string {
	return fmt.Sprintf("cost ledger %s is corrupt: %v", e.Path, e.Err)
}

// Unwrap returns the decode error or the refusal.
func (e *CorruptLedgerError) Unwrap() error { return e.Err }

// Snapshot is every evolve file the engine reads at cycle start.
type Snapshot struct {
	State       State
	Confidence  Confidence
	Goals       Goals
	Memos       Memos
	ActionQueue ActionQueue
	SkillGaps   SkillGaps
	Metrics     Metrics
	Outcomes    Outcomes
	Checkpoints Checkpoints
	Episodes    Episodes
	Principles  Principles
	Reflections Reflections
	Cascades    Cascades
	// CostLedger is nil when the file is missing (1-A creates it).
	CostLedger *CostLedger
	// StateFound is false for a project that never ran a cycle.
	StateFound bool
	Corrupt    []Corruption
	// Warnings name a file, a field (a JSON pointer) and the reason for
	// every value Load did not take as written — a negative cycle_count, a
	// negative or impossible cost, a number out of range, a duplicated key
	// — and the value used instead.
	Warnings []string
	// Bytes is how many bytes of the evolve files Load read, corrupt ones
	// included: a cycle's memory grows with it (the engine maps its heap
	// ahead by it, prefault.HeapFor).
	Bytes int64
}

// Load reads the snapshot. A missing file is its empty default; a corrupt
// or refused file is listed in Corrupt and replaced by its default (see
// Quarantine). A corrupt or refused cost ledger is a *CorruptLedgerError.
// An evolve directory reached through a symlink out of the project is an
// *OutsideError: no state is read or written through it.
func (s *Store) Load() (*Snapshot, error) { return s.load(nil) }

// LoadFiles is Load restricted to the named evolve files (StateFile,
// ConfidenceFile, …): the others are left at their empty defaults and
// are neither read nor named corrupt. A view that shows a few files
// reads only those.
func (s *Store) LoadFiles(names ...string) (*Snapshot, error) {
	only := map[string]bool{}
	for _, n := range names {
		only[n] = true
	}
	return s.load(only)
}

// load reads the files of only, or every file when only is nil.
func (s *Store) load(only map[string]bool) (*Snapshot, error) {
	snap := &Snapshot{Confidence: NewConfidence()}
	if err := s.checkEvolveDir(); err != nil {
		return snap, err
	}
	// Fourteen files read through one held root: each read alone opens
	// the project root and walks agent/state/evolve/ again, about a
	// hundred system calls a load.
	defer s.HoldRoot()()
	var ledger CostLedger
	files := [...]loadedFile{
		{name: StateFile, v: &snap.State},
		{name: ConfidenceFile, v: &snap.Confidence},
		{name: GoalsFile, v: &snap.Goals},
		{name: MemosFile, v: &snap.Memos},
		{name: ActionQueueFile, v: &snap.ActionQueue},
		{name: SkillGapsFile, v: &snap.SkillGaps},
		{name: MetricsFile, v: &snap.Metrics},
		{name: OutcomesFile, v: &snap.Outcomes},
		{name: CheckpointsFile, v: &snap.Checkpoints},
		{name: EpisodesFile, v: &snap.Episodes},
		{name: PrinciplesFile, v: &snap.Principles},
		{name: ReflectionsFile, v: &snap.Reflections},
		{name: CascadesFile, v: &snap.Cascades},
		{name: CostLedgerFile, v: &ledger},
	}
	todo := make([]*loadedFile, 0, len(files))
	for i := range files {
		if only == nil || only[files[i].name] {
			todo = append(todo, &files[i])
		}
	}
	s.readAll(todo)
	// What the reads found is told in the files' order, whichever read
	// finished first.
	var err error
	for i := range files {
		f := &files[i]
		snap.Warnings = append(snap.Warnings, f.warns...)
		snap.Bytes += int64(f.size)
		switch {
		case f.name == CostLedgerFile && f.err != nil:
			err = &CorruptLedgerError{Path: s.EvolvePath(CostLedgerFile), Err: f.err}
		case f.name == CostLedgerFile && f.found:
			snap.CostLedger = &ledger
		case f.err != nil:
			snap.Corrupt = append(snap.Corrupt, Corruption{File: f.name, Path: s.EvolvePath(f.name), Err: f.err})
		}
	}
	// A file not found, not read or corrupt left its value as it was: a
	// new Confidence, the zero value of the others.
	snap.StateFound = files[0].found // state.json
	s.sanitize(snap)
	return snap, err
}

// loadedFile is one evolve file a Load reads: into v, what it found, and
// the warnings and error of its read, kept apart until every read is
// done so that they are told in the same order however the reads ran.
type loadedFile struct {
	name  string
	v     any
	found bool
	size  int // the bytes read
	err   error
	warns []string
}

// readAll reads the files, on up to parallelMax goroutines when the
// process may run more than one (eachShared, which raises a read's panic
// again here): a late project's files (a capped outcomes.json of 74 KB,
// a state.json of 36 KB, a thousand domains' memos.json of 220 KB) are
// most of a cycle's decoding, and each is decoded into its own value, so
// they need not wait for one another. The files are taken largest first,
// as they usually are, so that no reader is left with a large one at the
// end.
func (s *Store) readAll(files []*loadedFile) {
	read := func(f *loadedFile) { f.found, f.size, f.err = s.readJSON(f.name, f.v, &f.warns) }
	if parallelLoadOff {
		for _, f := range files {
			read(f)
		}
		return
	}
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b *loadedFile) int { return loadRank(a.name) - loadRank(b.name) })
	eachShared(len(order), 2, 1, func(i int) { read(order[i]) })
}

// parallelLoadOff reads a Load's files one after another, in their
// order (tests compare the two).
var parallelLoadOff bool

// loadRank orders the evolve files by the size they usually reach,
// largest first (docs/benchmarks.md lists them at cycle 2,000 and at a
// thousand domains); a file not named comes last.
func loadRank(name string) int {
	switch name {
	case MemosFile:
		return 0
	case OutcomesFile:
		return 1
	case StateFile:
		return 2
	case ConfidenceFile:
		return 3
	case SkillGapsFile:
		return 4
	case EpisodesFile:
		return 5
	case ReflectionsFile:
		return 6
	}
	return 7
}

// checkEvolveDir refuses an evolve directory that leads out of the
// project (agent/state or agent/state/evolve a symlink to elsewhere): one
// clear error instead of every file being reported corrupt.
func (s *Store) checkEvolveDir() error {
	rel, err := s.rel(s.EvolveDir)
	if err != nil {
		return err
	}
	r, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fsErr("open", s.rootDir(), err)
	}
	defer r.Close()
	if _, err := r.Stat(rel); err != nil && isEscape(err) {
		return fmt.Errorf("state directory: %w", fsErr("stat", s.EvolveDir, err))
	}
	return nil
}

// readJSON decodes an evolve file into v. found is false for a missing
// file; the error is a decode (corruption) error, a refusal or a read
// error. Duplicated keys are reported in warns. size is how many bytes
// were read, whatever the outcome.
func (s *Store) readJSON(name string, v any, warns *[]string) (found bool, size int, err error) {
	p := s.EvolvePath(name)
	b, _, err := s.readJSONFile(p)
	size = len(b)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, size, nil
		}
		return false, size, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return false, size, errors.New("empty file")
	}
	// Decode into a fresh value and keep it only on success, so that a file
	// that fails half-way never leaves half of its values behind.
	fresh := reflect.New(reflect.TypeOf(v).Elem())
	// b is this read's own (readFile makes it), and only read below.
	scanned, dup, err := decodeFileScan(b, fresh.Interface(), true, warns != nil)
	if err != nil {
		return false, size, err
	}
	reflect.ValueOf(v).Elem().Set(fresh.Elem())
	noteReadSize(v, len(b))
	if warns != nil {
		// Values read in another meaning than written (a string cycle_id
		// read as a number, say) are said, with their path.
		var dws []string
		if dw, ok := v.(interface{ DecodeWarnings() []string }); ok {
			dws = dw.DecodeWarnings()
		}
		// Values of the wrong type, coerced or left out, and kept in
		// the file as written: one warning each, a few per file.
		dws = append(dws, looseWarnings(v, max(0, maxLooseWarnings-len(dws)))...)
		for _, w := range dws {
			*warns = append(*warns, s.display(p)+": "+w)
		}
		switch {
		case !scanned:
			*warns = append(*warns, duplicateKeyWarnings(s.display(p), b)...)
		case dup:
			// The walk that checked the document found a key that may
			// be repeated: the precise walk names it, or finds none.
			*warns = append(*warns, duplicateKeyWalk(s.display(p), b)...)
		}
	}
	return true, size, nil
}

// Quarantine keeps a corrupt file's bytes in <name>.corrupt-<UTC
// timestamp> and returns that path. A decodable-but-corrupt file is copied
// (with secrets redacted) and the original left in place; the next write
// replaces it with the reset content. A file that must not be read — too
// large, not a regular file, or a symlink out of the project — is moved
// there instead, without a byte being read or copied, so a 20 GiB file, a
// pipe or a device costs nothing and a symlink's target is never touched.
// So is any symlink, even one to a file inside the project: copied, the
// bytes it reaches (.git/config, a .env) would land in a new file under
// agent/state/ that nothing ignores.
func (s *Store) Quarantine(c Corruption, now time.Time) (string, error) {
	dst := s.freeName(c.Path + ".corrupt-" + now.UTC().Format("20060102T150405Z"))
	if fi, err := s.lstat(c.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return s.moveAside(c.Path, dst)
	}
	b, _, err := s.readJSONFile(c.Path)
	if err != nil {
		if s.movable(c.Path, err) {
			return s.moveAside(c.Path, dst)
		}
		return "", fmt.Errorf("quarantine %s: %w", c.Path, err)
	}
	if err := s.writeFile(dst, b); err != nil {
		return "", err
	}
	return dst, nil
}

// QuarantineLedger moves a corrupt cost ledger to cost_ledger.json.corrupt
// (the original project's name; a timestamp is added when that exists),
// as the original does. The cycle still fails closed — the engine writes
// the HALT file — but once a human resumes, the next cycle starts a new
// ledger instead of halting again on the same bytes. A rename: nothing is
// read or copied, and a symlink is moved itself.
func (s *Store) QuarantineLedger(now time.Time) (string, error) {
	p := s.EvolvePath(CostLedgerFile)
	dst := p + ".corrupt"
	if _, err := s.lstat(dst); err == nil {
		dst = s.freeName(dst + "-" + now.UTC().Format("20060102T150405Z"))
	}
	return s.moveAside(p, dst)
}

// moveAside renames p (a symlink itself, never its target) to dst.
func (s *Store) moveAside(p, dst string) (string, error) {
	rel, err := s.rel(p)
	if err != nil {
		return "", err
	}
	relDst, err := s.rel(dst)
	if err != nil {
		return "", err
	}
	r, err := s.openRoot(false)
	if err != nil {
		return "", fsErr("rename", p, err)
	}
	defer r.Close()
	if err := r.Rename(rel, relDst); err != nil {
		return "", fmt.Errorf("set aside %s: %w", p, fsErr("rename", p, err))
	}
	if err := syncDirIn(r, filepath.Dir(relDst), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// writeJSON writes v as indented JSON to an evolve file, atomically.
func (s *Store) writeJSON(name string, v any) error {
	b, err := encodeJSON(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	b = append(b, '\n')
	p := s.EvolvePath(name)
	if err := s.writeFile(p, b); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// SaveState writes state.json.
func (s *Store) SaveState(v State) error { return s.writeJSON(StateFile, v) }

// SaveConfidence writes confidence.json in the file's own shape.
func (s *Store) SaveConfidence(v Confidence) error { return s.writeJSON(ConfidenceFile, v) }

// SaveGoals writes goals.json.
func (s *Store) SaveGoals(v Goals) error { return s.writeJSON(GoalsFile, v) }

// SaveMemos writes memos.json (always in the 1.1.0 shape).
func (s *Store) SaveMemos(v Memos) error { return s.writeJSON(MemosFile, v) }

// SaveActionQueue writes action_queue.json.
func (s *Store) SaveActionQueue(v ActionQueue) error { return s.writeJSON(ActionQueueFile, v) }

// SaveSkillGaps writes skill_gaps.json.
func (s *Store) SaveSkillGaps(v SkillGaps) error {
	if v.SchemaVersion == "" {
		v.SchemaVersion = "1.0.0"
	}
	return s.writeJSON(SkillGapsFile, v)
}

// SaveMetrics writes metrics.json.
func (s *Store) SaveMetrics(v Metrics) error {
	if v.SchemaVersion == "" {
		v.SchemaVersion = "1.0.0"
	}
	return s.writeJSON(MetricsFile, v)
}

// SaveCostLedger writes cost_ledger.json.
func (s *Store) SaveCostLedger(v CostLedger) error {
	if v.SchemaVersion == "" {
		v.SchemaVersion = "1.0.0"
	}
	return s.writeJSON(CostLedgerFile, v)
}

// SaveOutcomes writes outcomes.json.
func (s *Store) SaveOutcomes(v Outcomes) error {
	if v.SchemaVersion == "" {
		v.SchemaVersion = "1.0.0"
	}
	return s.writeJSON(OutcomesFile, v)
}

// SaveCheckpoints writes checkpoints.json.
func (s *Store) SaveCheckpoints(v Checkpoints) error { return s.writeJSON(CheckpointsFile, v) }

// RawEvolveFile returns an evolve file's bytes (nil when missing), for a
// checkpoint that keeps a file exactly as it was.
func (s *Store) RawEvolveFile(name string) ([]byte, error) {
	b, _, err := s.readFile(s.EvolvePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// RestoreEvolveFile writes bytes kept by a checkpoint back, atomically.
func (s *Store) RestoreEvolveFile(name string, b []byte) error {
	p := s.EvolvePath(name)
	if err := s.writeFile(p, b); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// AppendCycleLog appends one line to cycle_log.jsonl. The log is never read
// whole, truncated or rewritten by a cycle. A log that cannot be appended
// to because it is not a regular file or is a symlink out of the project
// is moved aside to cycle_log.jsonl.corrupt-<UTC> (not read, not copied)
// and a new log started, so a planted pipe or link cannot lose the cycle.
func (s *Store) AppendCycleLog(line any) error {
	return s.appendLogLine(CycleLogFile, line)
}

// cycleLogTailBytes is how much of the end of cycle_log.jsonl is read to
// recover a lost cycle count: the log grows forever and is never read
// whole.
const cycleLogTailBytes = 64 << 10

// cycleLogTailHigh is the highest cycle_id (or cycle) of the lines in the
// last cycleLogTailBytes of cycle_log.jsonl, or 0. Only a regular file
// inside the project is read; anything else counts as no log.
func (s *Store) cycleLogTailHigh() int {
	p := s.EvolvePath(CycleLogFile)
	rel, err := s.rel(p)
	if err != nil {
		return 0
	}
	r, err := s.openRoot(false)
	if err != nil {
		return 0
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	off := max(0, fi.Size()-cycleLogTailBytes)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	lines := bytes.Split(buf[:n], []byte("\n"))
	if off > 0 && len(lines) > 0 {
		// The first line is cut at the window's start.
		lines = lines[1:]
	}
	high := 0
	for _, line := range lines {
		var l struct {
			CycleID *int `json:"cycle_id"`
			Cycle   *int `json:"cycle"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		for _, c := range []*int{l.CycleID, l.Cycle} {
			if c != nil && *c > high && *c <= MaxCounter {
				high = *c
			}
		}
	}
	return high
}

// changelogHeadBytes is how much of the start of CHANGELOG.md is read to
// recover a lost cycle count: its newest entries are at the top.
const changelogHeadBytes = 64 << 10

// changelogHigh is the highest cycle number of the "## Cycle #N" entry
// headings (outside code fences) in the first changelogHeadBytes of
// CHANGELOG.md, or 0. Only a regular file inside the project is read;
// anything else counts as no changelog.
func (s *Store) changelogHigh() int {
	head := string(s.readHead(s.EvolvePath(ChangelogFile), changelogHeadBytes))
	fences := 0
	for ln := range strings.Lines(head) {
		if isFence(ln) {
			fences++
		}
	}
	high, in, seen := 0, false, 0
	for ln := range strings.Lines(head) {
		if isFence(ln) {
			// As splitChangelog: a fence that never closes is none.
			seen++
			if in || seen < fences || fences%2 == 0 {
				in = !in
			}
			continue
		}
		rest, ok := strings.CutPrefix(ln, "## Cycle #")
		if in || !ok {
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if end == 0 || end > 10 {
			continue
		}
		if n, err := strconv.Atoi(rest[:end]); err == nil && n > high && n <= MaxCounter {
			high = n
		}
	}
	return high
}

// readHead is at most n bytes from the start of the regular file p inside
// the project, or nil.
func (s *Store) readHead(p string, n int64) []byte {
	rel, err := s.rel(p)
	if err != nil {
		return nil
	}
	r, err := s.openRoot(false)
	if err != nil {
		return nil
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	buf := make([]byte, min(n, fi.Size()))
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil
	}
	return buf[:k]
}

// LockPath is the cycle lock's path.
func (s *Store) LockPath() string { return s.EvolvePath(LockFile) }

// HaltExists reports whether the HALT file exists and returns its content
// (at most 64 KiB of it). A HALT path that cannot be checked — outside the
// project, or reached through a symlink out of it — halts, with the reason
// saying why: a stop switch that cannot be read is never taken as off.
func (s *Store) HaltExists(haltFile string) (bool, string) {
	p := s.Path(haltFile)
	// Lstat, so that anything at the path halts, even a dangling symlink:
	// the running-skill watcher uses the same test.
	if _, err := s.lstat(p); err != nil {
		if IsRefused(err) {
			return true, "(refused: " + err.Error() + ")"
		}
		return false, ""
	}
	b, _, err := s.readFileLimit(p, haltReadLimit)
	if err != nil {
		return true, "(unreadable: " + err.Error() + ")"
	}
	return true, strings.TrimSpace(string(b))
}

// HaltLine is a HALT file's content on one line, its lines joined with
// "; " (the reason, then "created_at: ..."), for a one-line message: shown
// as it is, the line break would print escaped, as "\n".
func HaltLine(content string) string {
	var b strings.Builder
	for _, l := range strings.Split(content, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if b.Len() > 0 {
			// A line that ends a sentence needs no "; " after it.
			if strings.ContainsAny(b.String()[b.Len()-1:], ".!?;:") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// WriteHalt creates (or replaces) the HALT file with the reason and a UTC timestamp.
func (s *Store) WriteHalt(haltFile, reason string, now time.Time) error {
	content := fmt.Sprintf("%s\ncreated_at: %s\n", strings.TrimSpace(reason), FormatTime(now))
	return s.writeFile(s.Path(haltFile), []byte(content))
}

// RemoveHalt deletes the HALT file; removed is false when there was none.
// A symlink at the HALT path is removed itself.
func (s *Store) RemoveHalt(haltFile string) (removed bool, err error) {
	err = s.remove(s.Path(haltFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove HALT file: %w", err)
	}
	return true, nil
}

// Reset replaces an evolve file with its empty default, after Quarantine
// has kept the corrupt bytes, so that the next cycle reads a valid file
// instead of setting the same corruption aside again.
func (s *Store) Reset(name string) error {
	switch name {
	case StateFile:
		return s.SaveState(State{SchemaVersion: "1.2.0", CycleCount: max(0, s.recoveredCycle)})
	case ConfidenceFile:
		return s.SaveConfidence(NewConfidence())
	case GoalsFile:
		return s.SaveGoals(Goals{SchemaVersion: "1.0.0"})
	case MemosFile:
		return s.SaveMemos(Memos{})
	case ActionQueueFile:
		return s.SaveActionQueue(ActionQueue{SchemaVersion: "1.0.0"})
	case SkillGapsFile:
		return s.SaveSkillGaps(SkillGaps{})
	case MetricsFile:
		return s.SaveMetrics(Metrics{})
	case OutcomesFile:
		return s.SaveOutcomes(Outcomes{})
	case CheckpointsFile:
		return s.SaveCheckpoints(Checkpoints{})
	case EpisodesFile:
		return s.SaveEpisodes(Episodes{})
	case PrinciplesFile:
		return s.SavePrinciples(Principles{})
	case ReflectionsFile:
		return s.SaveReflections(Reflections{})
	case CascadesFile:
		return s.SaveCascades(Cascades{})
	}
	return fmt.Errorf("reset %s: not a resettable state file", name)
}

// freeName returns p, or p with the first free "-N" suffix, so a copy of
// corrupt bytes never overwrites an earlier copy.
func (s *Store) freeName(p string) string {
	if _, err := s.lstat(p); err != nil {
		return p
	}
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s-%d", p, i)
		if _, err := s.lstat(c); err != nil {
			return c
		}
	}
}

// Exists reports whether anything (even a dangling symlink) is at an
// evolve file's name.
func (s *Store) Exists(name string) bool {
	_, err := s.lstat(s.EvolvePath(name))
	return err == nil
}

// asideName is the name a file at p is set aside under, at the store's now.
func (s *Store) asideName(p string) string {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return s.freeName(p + ".corrupt-" + now().UTC().Format("20060102T150405Z"))
}
