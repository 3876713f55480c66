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

// CycleHistoryTail streams the cycle history newest first: the last n
// cycle lines of cycle_log.jsonl (every line when n <= 0), each with the
// latest annotation of each of its keys applied, as CycleHistory applies
// them. fn returning false stops the read.
//
// The log is read from its end backwards, so the last n cycles of a long
// history cost what n cycles cost: only the lines after the n-th last
// cycle line are read, and the annotation lines among them (annotations
// of earlier cycles are written after the cycle they annotate).
// cycle_log.annotations.jsonl is always read whole. With n <= 0 the whole
// log is streamed; memory grows with the number of annotated cycles, not
// with the history.
//
// The records' Fields are nil: a reader of keys CycleLogLine does not
// know uses CycleHistory. The stats count the lines read, which with
// n > 0 is the tail of the log only.
func (s *Store) CycleHistoryTail(n int, fn func(CycleRecord) bool) (HistoryStats, error) {
	var st HistoryStats
	t := tailReader{s: s, st: &st, logNotes: map[int][]json.RawMessage{}}
	if n <= 0 {
		// Every annotation first, then the log newest first: the log's
		// own annotation lines come after the cycles they annotate, so
		// reading backwards meets each before its cycle.
		if err := t.readFileNotes(nil); err != nil {
			return st, err
		}
		err := t.scanBack(func(l tailLine) bool {
			st.Cycles++
			return fn(t.record(l))
		})
		return st, err
	}
	var tail []tailLine
	err := t.scanBack(func(l tailLine) bool {
		st.Cycles++
		l.raw = bytes.Clone(l.raw)
		tail = append(tail, l)
		return len(tail) < n
	})
	if err != nil {
		return st, err
	}
	want := make(map[int]bool, len(tail))
	for _, l := range tail {
		want[l.cycle] = true
	}
	if err := t.readFileNotes(want); err != nil {
		return st, err
	}
	for _, l := range tail {
		if !fn(t.record(l)) {
			break
		}
	}
	return st, nil
}

// tailReader holds the annotations met so far: the log's own (newest
// first, as the log is read backwards) and the annotation file's (in file
// order). The file's are applied last, as CycleHistory applies them.
type tailReader struct {
	s         *Store
	st        *HistoryStats
	logNotes  map[int][]json.RawMessage
	fileNotes map[int][]json.RawMessage
}

// tailLine is one cycle line as read: decoded when the fast decoding
// took it as written (ok), and its bytes for the records an annotation
// changes or whose values need the tolerant decoding.
type tailLine struct {
	cycle int
	line  CycleLogLine
	ok    bool
	raw   []byte
}

// fastLine decodes a log line in one json.Unmarshal. The outer cycle_id
// shadows the embedded one, so that a cycle_id written as "12" or 12.0
// does not fail the line.
type fastLine struct {
	CycleLogLine
	RawCycleID json.RawMessage `json:"cycle_id"`
	RawCycle   json.RawMessage `json:"cycle"`
	Annotate   json.RawMessage `json:"annotate"`
}

var (
	keyCycleID  = []byte(`"cycle_id"`)
	keyCycle    = []byte(`"cycle"`)
	keyAnnotate = []byte(`"annotate"`)
)

// lineKind is what a log line is.
type lineKind int

const (
	skipLine lineKind = iota
	cycleLine
	noteLine
)

// classify reads one non-empty log line: a cycle line, an annotation
// line (its note: the annotate member, an object) or neither. Lines the
// fast decoding cannot take exactly as CycleHistory would (a value of the
// wrong type, a key written with escapes or in other case) are read the
// way CycleHistory reads them.
func classify(b []byte) (lineKind, int, json.RawMessage, tailLine) {
	if b[0] != '{' {
		return skipLine, 0, nil, tailLine{}
	}
	var f fastLine
	if json.Unmarshal(b, &f) == nil {
		cycle, idOK := -1, false
		switch {
		case f.RawCycleID != nil && bytes.Contains(b, keyCycleID):
			cycle, idOK = cycleNumber(f.RawCycleID)
		case f.RawCycleID == nil && f.RawCycle != nil && bytes.Contains(b, keyCycle):
			cycle, idOK = cycleNumber(f.RawCycle)
		case f.RawCycleID == nil && f.RawCycle == nil:
			return skipLine, 0, nil, tailLine{}
		}
		annotOK := f.Annotate == nil || bytes.Contains(b, keyAnnotate)
		if idOK && cycle <= MaxCounter && annotOK {
			if f.Annotate != nil {
				if t := bytes.TrimSpace(f.Annotate); len(t) > 0 && t[0] == '{' {
					return noteLine, cycle, f.Annotate, tailLine{}
				}
				return skipLine, 0, nil, tailLine{}
			}
			f.CycleLogLine.CycleID = cycle
			return cycleLine, cycle, nil, tailLine{cycle: cycle, line: f.CycleLogLine, ok: true, raw: b}
		}
	}
	cycle, members, ok := historyLine(b)
	if !ok {
		return skipLine, 0, nil, tailLine{}
	}
	if note, ok := members["annotate"]; ok {
		if _, _, err := objectMembers(note); err != nil {
			return skipLine, 0, nil, tailLine{}
		}
		return noteLine, cycle, note, tailLine{}
	}
	return cycleLine, cycle, nil, tailLine{cycle: cycle, raw: b}
}

// record is the line as CycleHistory gives it: annotations applied, the
// log's in file order, then the annotation file's.
func (t *tailReader) record(l tailLine) CycleRecord {
	logN, fileN := t.logNotes[l.cycle], t.fileNotes[l.cycle]
	if l.ok && len(logN) == 0 && len(fileN) == 0 {
		return CycleRecord{Line: l.line}
	}
	_, members, ok := historyLine(l.raw)
	if !ok {
		// classify read it; a line cannot change between the two reads.
		return CycleRecord{Line: l.line}
	}
	rec := CycleRecord{}
	apply := func(note json.RawMessage) {
		keys, vals, err := objectMembers(note)
		if err != nil {
			return
		}
		for i, k := range keys {
			if k == "cycle_id" {
				continue
			}
			if old, ok := members[k]; !ok || !bytes.Equal(old, vals[i]) {
				rec.Annotated = true
			}
			members[k] = vals[i]
		}
	}
	for i := len(logN) - 1; i >= 0; i-- {
		apply(logN[i])
	}
	for _, note := range fileN {
		apply(note)
	}
	b, _ := json.Marshal(members)
	if json.Unmarshal(b, &rec.Line) != nil {
		keys := make([]string, 0, len(members))
		vals := make([]json.RawMessage, 0, len(members))
		for k, v := range members {
			keys = append(keys, k)
			vals = append(vals, v)
		}
		var ignored Extra
		decodeFields(keys, vals, &rec.Line, &ignored)
	}
	rec.Line.CycleID = l.cycle
	return rec
}

// readFileNotes reads cycle_log.annotations.jsonl, keeping the notes of
// the cycles in want (all when want is nil). With want, a line that
// plainly names another cycle is passed over without being decoded (a
// long history has one or two annotations for every PR), so it is not
// counted in the stats either.
func (t *tailReader) readFileNotes(want map[int]bool) error {
	t.fileNotes = map[int][]json.RawMessage{}
	f, err := t.s.openLog(CycleLogAnnotationsFile)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	p := t.s.EvolvePath(CycleLogAnnotationsFile)
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, tooLong, err := readLine(br, MaxHistoryLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fsErr("read", p, err)
		}
		if tooLong {
			t.st.Skipped++
		} else if b := bytes.TrimSpace(line); len(b) > 0 {
			if id, ok := plainCycleID(b); ok && want != nil && !want[id] {
				// Another cycle's annotation: not decoded, not counted.
				continue
			}
			kind, cycle, note, _ := classify(b)
			if kind == noteLine {
				t.st.Annotations++
				if want == nil || want[cycle] {
					t.fileNotes[cycle] = append(t.fileNotes[cycle], bytes.Clone(note))
				}
			} else {
				t.st.Skipped++
			}
		}
		if err != nil {
			return nil
		}
	}
}

// tailChunk is how much of the log one backward read takes.
const tailChunk = 64 << 10

// scanBack reads cycle_log.jsonl from its end, calling fn with each cycle
// line (its raw bytes valid only during the call) and keeping the
// annotation lines met, until fn returns false or the log's start.
func (t *tailReader) scanBack(fn func(tailLine) bool) error {
	f, err := t.s.openLog(CycleLogFile)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	p := t.s.EvolvePath(CycleLogFile)
	fi, err := f.Stat()
	if err != nil {
		return fsErr("stat", p, err)
	}
	r := backLines{f: f, off: fi.Size(), limit: MaxHistoryLine}
	for {
		line, tooLong, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fsErr("read", p, err)
		}
		if tooLong {
			t.st.Skipped++
			continue
		}
		b := bytes.TrimSpace(line)
		if len(b) == 0 {
			continue
		}
		kind, cycle, note, l := classify(b)
		switch kind {
		case skipLine:
			t.st.Skipped++
		case noteLine:
			t.st.Annotations++
			t.logNotes[cycle] = append(t.logNotes[cycle], bytes.Clone(note))
		case cycleLine:
			if !fn(l) {
				return nil
			}
		}
	}
}

// openLog opens an evolve log for reading as eachLine does: nil for a
// missing log, an error naming a log that must not be read.
func (s *Store) openLog(name string) (*os.File, error) {
	p := s.EvolvePath(name)
	rel, err := s.rel(p)
	if err != nil {
		return nil, err
	}
	r, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fsErr("open", p, err)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fsErr("open", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fsErr("stat", p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s); not read", s.display(p), fi.Mode().Type())
	}
	return f, nil
}

// backLines yields a file's lines from the last to the first. A line
// longer than limit is reported tooLong, its bytes dropped as they are
// read, so one huge line costs no memory. The last line need not end
// with a newline (a line being appended is read as it stands, as the
// forward reader reads it).
type backLines struct {
	f     io.ReaderAt
	off   int64 // the file's bytes [0, off) are not read yet
	limit int
	chunk int    // bytes per read; tailChunk when 0
	buf   []byte // buf[:end] is read and not yet returned
	end   int
	long  bool // the line that ends at buf[end] lost its later bytes
	// started is set once the file's last line, the one that may lack
	// its newline, has been returned.
	started bool
}

func (r *backLines) next() (line []byte, tooLong bool, err error) {
	for {
		if i := bytes.LastIndexByte(r.buf[:r.end], '\n'); i >= 0 {
			line, tooLong = r.buf[i+1:r.end], r.long
			r.end, r.long = i, false
			return r.bounded(line, tooLong)
		}
		if r.off == 0 {
			if r.end == 0 && !r.long {
				return nil, false, io.EOF
			}
			line, tooLong = r.buf[:r.end], r.long
			r.end, r.long = 0, false
			return r.bounded(line, tooLong)
		}
		if r.end > r.limit {
			r.end, r.long = 0, true
		}
		chunk := r.chunk
		if chunk <= 0 {
			chunk = tailChunk
		}
		n := int(min(int64(chunk), r.off))
		if cap(r.buf) < n+r.end {
			nb := make([]byte, n+r.end, max(2*cap(r.buf), n+r.end))
			copy(nb[n:], r.buf[:r.end])
			r.buf = nb
		} else {
			r.buf = r.buf[:n+r.end]
			copy(r.buf[n:], r.buf[:r.end])
		}
		if _, err := r.f.ReadAt(r.buf[:n], r.off-int64(n)); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		r.off -= int64(n)
		r.end += n
	}
}

// bounded holds a line to the limit as the forward reader does: a line
// with its newline longer than limit is too long, whether or not its
// bytes were dropped on the way.
func (r *backLines) bounded(line []byte, tooLong bool) ([]byte, bool, error) {
	n := len(line)
	if r.started {
		n++
	}
	r.started = true
	if tooLong || n > r.limit {
		return nil, true, nil
	}
	return line, false, nil
}

// plainCycleID reads the cycle id of a line written as the engine writes
// one, without decoding it: no backslash anywhere (so no quote is
// escaped and every "cycle_id" is a key or a whole string), "cycle_id"
// once and "cycle" never (a nested cycle_id beside a top-level cycle),
// its value a plain integer. It says nothing (ok false) of any
// other line, which is then decoded. A line it reads names that cycle if
// it names any: historyLine takes the same top-level cycle_id; a nested
// one names no cycle, and such a line is only passed over when its id is
// not wanted.
func plainCycleID(b []byte) (int, bool) {
	if bytes.IndexByte(b, '\\') >= 0 {
		return 0, false
	}
	i := bytes.Index(b, keyCycleID)
	if i < 0 || bytes.Index(b[i+len(keyCycleID):], keyCycleID) >= 0 || bytes.Contains(b, keyCycle) {
		return 0, false
	}
	rest := bytes.TrimLeft(b[i+len(keyCycleID):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	n, digits := 0, 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		n = n*10 + int(rest[digits]-'0')
		digits++
		if digits > 10 {
			return 0, false
		}
	}
	if digits == 0 || n > MaxCounter {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[digits:], " \t\r\n")
	if len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return 0, false
	}
	return n, true
}
