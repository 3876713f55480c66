package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
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
type Store struct {
	// Root is the project root; EvolveDir is agent/state/evolve under it.
	Root      string
	EvolveDir string
	written   map[string]bool
}

// New returns the store of the project at root.
func New(root string) *Store {
	return &Store{Root: root, EvolveDir: filepath.Join(root, "agent", "state", "evolve"), written: map[string]bool{}}
}

// Path resolves a path relative to the project root (absolute paths pass through).
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

// Corruption records an evolve file that could not be decoded.
type Corruption struct {
	File string // base name, e.g. "memos.json"
	Path string
	Err  error
}

// CorruptLedgerError is returned when cost_ledger.json exists but cannot be
// decoded: the ledger fails closed, because recreating it at $0 would erase
// today's spend and defeat the daily cap.
type CorruptLedgerError struct {
	Path string
	Err  error
}

func (e *CorruptLedgerError) Error() string {
	return fmt.Sprintf("cost ledger %s is corrupt: %v", e.Path, e.Err)
}

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
}

// Load reads the snapshot. A missing file is its empty default; a corrupt
// file is listed in Corrupt and replaced by its default (see Quarantine).
// A corrupt cost ledger is a *CorruptLedgerError.
func (s *Store) Load() (*Snapshot, error) {
	snap := &Snapshot{Confidence: NewConfidence()}
	var err error
	read := func(name string, v any) bool {
		found, cerr := s.readJSON(name, v)
		if cerr != nil {
			snap.Corrupt = append(snap.Corrupt, Corruption{File: name, Path: s.EvolvePath(name), Err: cerr})
			return false
		}
		return found
	}
	snap.StateFound = read(StateFile, &snap.State)
	if !read(ConfidenceFile, &snap.Confidence) {
		snap.Confidence = NewConfidence()
	}
	read(GoalsFile, &snap.Goals)
	read(MemosFile, &snap.Memos)
	read(ActionQueueFile, &snap.ActionQueue)
	read(SkillGapsFile, &snap.SkillGaps)
	read(MetricsFile, &snap.Metrics)
	read(OutcomesFile, &snap.Outcomes)
	read(CheckpointsFile, &snap.Checkpoints)
	s.LoadMemory(snap)
	var ledger CostLedger
	found, lerr := s.readJSON(CostLedgerFile, &ledger)
	switch {
	case lerr != nil:
		err = &CorruptLedgerError{Path: s.EvolvePath(CostLedgerFile), Err: lerr}
	case found:
		snap.CostLedger = &ledger
	}
	return snap, err
}

// readJSON decodes an evolve file into v. found is false for a missing
// file; the error is a decode (corruption) or read error.
func (s *Store) readJSON(name string, v any) (found bool, err error) {
	b, err := os.ReadFile(s.EvolvePath(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return false, errors.New("empty file")
	}
	// Decode into a fresh value and keep it only on success, so that a file
	// that fails half-way never leaves half of its values behind.
	fresh := reflect.New(reflect.TypeOf(v).Elem())
	if err := json.Unmarshal(b, fresh.Interface()); err != nil {
		return false, err
	}
	reflect.ValueOf(v).Elem().Set(fresh.Elem())
	return true, nil
}

// Quarantine copies a corrupt file's bytes to <name>.corrupt-<UTC timestamp>
// so they are never lost, and returns the copy's path. The original is left
// in place; the next write replaces it with the reset content.
func (s *Store) Quarantine(c Corruption, now time.Time) (string, error) {
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", c.Path, err)
	}
	dst := freeName(c.Path + ".corrupt-" + now.UTC().Format("20060102T150405Z"))
	if err := WriteFileAtomic(dst, b, 0o644); err != nil {
		return "", err
	}
	return dst, nil
}

// QuarantineLedger copies a corrupt cost ledger to cost_ledger.json.corrupt
// (the original project's name; a timestamp is added when that exists).
func (s *Store) QuarantineLedger(now time.Time) (string, error) {
	p := s.EvolvePath(CostLedgerFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	dst := p + ".corrupt"
	if _, err := os.Stat(dst); err == nil {
		dst = freeName(dst + "-" + now.UTC().Format("20060102T150405Z"))
	}
	if err := WriteFileAtomic(dst, b, 0o644); err != nil {
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
	if err := WriteFileAtomic(p, b, 0o644); err != nil {
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
	b, err := os.ReadFile(s.EvolvePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// RestoreEvolveFile writes bytes kept by a checkpoint back, atomically.
func (s *Store) RestoreEvolveFile(name string, b []byte) error {
	p := s.EvolvePath(name)
	if err := WriteFileAtomic(p, b, 0o644); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// AppendCycleLog appends one line to cycle_log.jsonl. The log is never read
// whole, truncated or rewritten by a cycle.
func (s *Store) AppendCycleLog(line any) error {
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encode cycle log line: %w", err)
	}
	p := s.EvolvePath(CycleLogFile)
	if err := AppendLine(p, b); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// LockPath is the cycle lock's path.
func (s *Store) LockPath() string { return s.EvolvePath(LockFile) }

// HaltExists reports whether the HALT file exists and returns its content.
func (s *Store) HaltExists(haltFile string) (bool, string) {
	p := s.Path(haltFile)
	// Lstat, so that anything at the path halts, even a dangling symlink:
	// the running-skill watcher uses the same test.
	if _, err := os.Lstat(p); err != nil {
		return false, ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return true, "(unreadable: " + err.Error() + ")"
	}
	return true, strings.TrimSpace(string(b))
}

// WriteHalt creates (or replaces) the HALT file with the reason and a UTC timestamp.
func (s *Store) WriteHalt(haltFile, reason string, now time.Time) error {
	content := fmt.Sprintf("%s\ncreated_at: %s\n", strings.TrimSpace(reason), FormatTime(now))
	return WriteFileAtomic(s.Path(haltFile), []byte(content), 0o644)
}

// RemoveHalt deletes the HALT file; removed is false when there was none.
func (s *Store) RemoveHalt(haltFile string) (removed bool, err error) {
	err = os.Remove(s.Path(haltFile))
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
		return s.SaveState(State{SchemaVersion: "1.2.0"})
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
func freeName(p string) string {
	if _, err := os.Lstat(p); err != nil {
		return p
	}
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s-%d", p, i)
		if _, err := os.Lstat(c); err != nil {
			return c
		}
	}
}

// Exists reports whether an evolve file exists.
func (s *Store) Exists(name string) bool {
	_, err := os.Stat(s.EvolvePath(name))
	return err == nil
}
