package state

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CycleLogAnnotationsFile holds the back-annotations of earlier cycles'
// log lines (2-B4, 6-C9): cycle_log.jsonl stays one line per cycle for
// readers that count its lines, and readers apply the latest annotation
// of a cycle, from this file and from annotation lines an older log holds.
const CycleLogAnnotationsFile = "cycle_log.annotations.jsonl"

// AppendCycleLogAnnotation appends one annotation line
// ({"cycle_id", "annotate": {...}, "timestamp"}) to
// cycle_log.annotations.jsonl. Like the cycle log, it is append-only.
func (s *Store) AppendCycleLogAnnotation(line any) error {
	return s.appendLogLine(CycleLogAnnotationsFile, line)
}

// appendLogLine appends one JSON line to an append-only evolve log. A log
// that cannot be appended to because it must not be (a directory, a pipe,
// a symlink out of the project) is moved aside, said in a notice, and a
// new log started: the record of the cycle matters more than the old
// file's place.
func (s *Store) appendLogLine(name string, line any) error {
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encode %s line: %w", name, err)
	}
	p := s.EvolvePath(name)
	err = s.appendFile(p, b)
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
