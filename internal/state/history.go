package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// CycleRecord is one cycle of cycle_log.jsonl as readers see it: the
// cycle's own line with the back-annotations of later cycles (2-B4)
// applied.
type CycleRecord struct {
	// Line is the cycle's line decoded as far as it reads (see
	// CycleLogLine); values of the wrong type are left at their zero value.
	Line CycleLogLine
	// Fields are the line's members with the annotations applied, for
	// readers of keys CycleLogLine does not know.
	Fields map[string]json.RawMessage
	// Annotated says whether an annotation changed the line.
	Annotated bool
}

// HistoryStats counts what reading the cycle history left out.
type HistoryStats struct {
	// Cycles is the number of cycle lines read.
	Cycles int
	// Annotations is the number of annotation lines read (from both files).
	Annotations int
	// Skipped counts the lines that are not a JSON object with a cycle id,
	// or longer than MaxHistoryLine.
	Skipped int
}

// MaxHistoryLine bounds one line of the cycle logs: a line is a few
// hundred bytes, and a longer one (written by another tool, or garbage)
// is skipped, not held in memory.
const MaxHistoryLine = 1 << 20

// CycleHistory streams the cycle history, oldest first, to fn: every
// cycle line of cycle_log.jsonl, with the latest annotation of each of its
// keys applied. Annotations are read from cycle_log.annotations.jsonl and
// from annotation lines an older cycle_log.jsonl holds (the original
// project wrote them there), the log's first: when both annotate the same
// key of a cycle, the later one wins. fn returning false stops the read.
// The logs are never read whole into memory: memory grows with the
// number of annotated cycles, not with the history. A missing log is an
// empty history; a log that must not be read (not a regular file, a
// symlink out of the project) is an error naming it.
func (s *Store) CycleHistory(fn func(CycleRecord) bool) (HistoryStats, error) {
	var st HistoryStats
	notes := map[int]map[string]json.RawMessage{}
	annotate := func(cycle int, note json.RawMessage) {
		keys, vals, err := objectMembers(note)
		if err != nil {
			st.Skipped++
			return
		}
		st.Annotations++
		m := notes[cycle]
		if m == nil {
			m = map[string]json.RawMessage{}
			notes[cycle] = m
		}
		for i, k := range keys {
			if k == "cycle_id" {
				continue
			}
			m[k] = vals[i]
		}
	}
	// Pass 1: annotations, the log's own lines first.
	err := s.eachLine(CycleLogFile, func(cycle int, members map[string]json.RawMessage) bool {
		if note, ok := members["annotate"]; ok {
			annotate(cycle, note)
		}
		return true
	}, &st)
	if err != nil {
		return st, err
	}
	err = s.eachLine(CycleLogAnnotationsFile, func(cycle int, members map[string]json.RawMessage) bool {
		if note, ok := members["annotate"]; ok {
			annotate(cycle, note)
		} else {
			st.Skipped++
		}
		return true
	}, &st)
	if err != nil {
		return st, err
	}
	// Pass 2: the cycles, annotated. Lines were counted as skipped in
	// pass 1 already: count them once.
	skipped := st.Skipped
	err = s.eachLine(CycleLogFile, func(cycle int, members map[string]json.RawMessage) bool {
		if _, ok := members["annotate"]; ok {
			return true
		}
		st.Cycles++
		rec := CycleRecord{Fields: members}
		if note := notes[cycle]; note != nil {
			for k, v := range note {
				if old, ok := members[k]; !ok || !bytes.Equal(old, v) {
					rec.Annotated = true
				}
				members[k] = v
			}
		}
		b, _ := json.Marshal(members)
		if json.Unmarshal(b, &rec.Line) != nil {
			// A value of the wrong type: read the rest member by member.
			var keys []string
			var vals []json.RawMessage
			for k, v := range members {
				keys = append(keys, k)
				vals = append(vals, v)
			}
			var ignored Extra
			decodeFields(keys, vals, &rec.Line, &ignored)
		}
		rec.Line.CycleID = cycle
		return fn(rec)
	}, &st)
	st.Skipped = skipped
	return st, err
}

// eachLine calls fn with the cycle id and members of every line of the
// evolve log name that is a JSON object with an integer cycle_id (or
// cycle), until fn returns false. Other lines are counted in st.Skipped.
func (s *Store) eachLine(name string, fn func(cycle int, members map[string]json.RawMessage) bool, st *HistoryStats) error {
	p := s.EvolvePath(name)
	rel, err := s.rel(p)
	if err != nil {
		return err
	}
	r, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fsErr("open", p, err)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fsErr("open", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsErr("stat", p, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s); not read", s.display(p), fi.Mode().Type())
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, tooLong, err := readLine(br, MaxHistoryLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fsErr("read", p, err)
		}
		if tooLong {
			st.Skipped++
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			cycle, members, ok := historyLine(t)
			if !ok {
				st.Skipped++
			} else if !fn(cycle, members) {
				return nil
			}
		}
		if err != nil {
			return nil
		}
	}
}

// historyLine reads one log line: a JSON object whose cycle_id (or, in
// older lines, cycle) is a cycle number.
func historyLine(b []byte) (int, map[string]json.RawMessage, bool) {
	keys, vals, err := objectMembers(b)
	if err != nil {
		return 0, nil, false
	}
	members := make(map[string]json.RawMessage, len(keys))
	for i, k := range keys {
		members[k] = vals[i]
	}
	for _, k := range []string{"cycle_id", "cycle"} {
		if raw, ok := members[k]; ok {
			if n, ok := cycleNumber(raw); ok && n >= 0 && n <= MaxCounter {
				return n, members, true
			}
		}
	}
	return 0, nil, false
}

// readLine reads one line of at most limit bytes. A longer line is read
// to its end and dropped (tooLong), so one huge line costs no memory.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}
