package state

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
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
		err := t.scanBackAll(func(l tailLine) bool {
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
	fileNotes noteIndex
	in        interner
	notes     []json.RawMessage // record's scratch
}

// tailLine is one cycle line as read: decoded when the fast decoding
// took it (ok), and its bytes for the records an annotation changes or
// whose values need encoding/json's reading.
type tailLine struct {
	cycle int
	line  CycleLogLine
	ok    bool
	raw   []byte
}

var (
	keyCycleID = []byte(`"cycle_id"`)
	keyCycle   = []byte(`"cycle"`)
)

// lineKind is what a log line is.
type lineKind int

const (
	skipLine lineKind = iota
	cycleLine
	noteLine
)

// classify reads one non-empty log line: a cycle line, an annotation
// line (its note: the annotate member, an object) or neither. A line the
// fast decoding (history_fast.go) does not take is read the way
// CycleHistory reads it.
func (t *tailReader) classify(b []byte) (lineKind, int, json.RawMessage, tailLine) {
	return classifyLine(b, &t.in)
}

func classifyLine(b []byte, in *interner) (lineKind, int, json.RawMessage, tailLine) {
	if b[0] != '{' {
		return skipLine, 0, nil, tailLine{}
	}
	if kind, cycle, note, line, ok := fastClassify(b, in); ok {
		return kind, cycle, note, tailLine{cycle: cycle, line: line, ok: kind == cycleLine, raw: b}
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
	var logN []json.RawMessage
	if len(t.logNotes) > 0 {
		logN = t.logNotes[l.cycle]
	}
	fileN := t.fileNotes.of(l.cycle)
	if l.ok && len(logN) == 0 && len(fileN) == 0 {
		return CycleRecord{Line: l.line}
	}
	notes := t.notes[:0]
	for i := len(logN) - 1; i >= 0; i-- {
		notes = append(notes, logN[i])
	}
	for _, n := range fileN {
		notes = append(notes, t.fileNotes.note(n))
	}
	t.notes = notes
	if l.ok {
		if rec, ok := fastRecord(l.raw, l.cycle, notes, &t.in); ok {
			return rec
		}
	}
	_, members, ok := historyLine(l.raw)
	if !ok {
		// classify read it; a line cannot change between the two reads.
		return CycleRecord{Line: l.line}
	}
	// As CycleHistory: the notes' members merged, the latest of each key
	// kept, then each compared with the line's and put in its place.
	merged := map[string]json.RawMessage{}
	for _, note := range notes {
		keys, vals, err := objectMembers(note)
		if err != nil {
			continue
		}
		for i, k := range keys {
			if k != "cycle_id" {
				merged[k] = vals[i]
			}
		}
	}
	rec := CycleRecord{}
	for k, v := range merged {
		if old, ok := members[k]; !ok || !bytes.Equal(old, v) {
			rec.Annotated = true
		}
		members[k] = v
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
	t.fileNotes = noteIndex{}
	defer t.fileNotes.sort()
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
			kind, cycle, note, _ := t.classify(b)
			if kind == noteLine {
				t.st.Annotations++
				if want == nil || want[cycle] {
					t.fileNotes.add(cycle, note)
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
		kind, cycle, note, l := t.classify(b)
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

// tailBatch is how many bytes of lines scanBackAll hands a worker at a
// time; a variable for the tests, which make it small.
var tailBatch = 256 << 10

// lineBatch is a run of consecutive log lines, newest first, copied out
// of the reader's buffer, and what a worker made of each.
type lineBatch struct {
	buf   []byte
	lines []batchLine
	done  chan struct{} // closed once every line is classified
	err   error         // the read error that ended the log, after the lines
}

type batchLine struct {
	off, end int
	tooLong  bool
	kind     lineKind
	cycle    int
	note     json.RawMessage
	l        tailLine
}

// scanBackAll is scanBack for the whole log: the lines are read in one
// goroutine and decoded by as many as there are processors, in batches,
// while this one applies them in order, so a long history costs its
// decoding divided among the cores. Memory is bounded: at most
// 2*workers batches are in flight.
func (t *tailReader) scanBackAll(fn func(tailLine) bool) error {
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers < 2 {
		return t.scanBack(fn)
	}
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
	inFlight := 2 * workers
	free := make(chan *lineBatch, inFlight)
	for i := 0; i < inFlight; i++ {
		free <- &lineBatch{}
	}
	ordered := make(chan *lineBatch, inFlight)
	work := make(chan *lineBatch, inFlight)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in interner
			for b := range work {
				for i := range b.lines {
					bl := &b.lines[i]
					if !bl.tooLong {
						bl.kind, bl.cycle, bl.note, bl.l = classifyLine(b.buf[bl.off:bl.end], &in)
					}
				}
				close(b.done)
			}
		}()
	}
	// The reader: lines into batches, each sent in order to this
	// goroutine and to a worker.
	go func() {
		defer close(work)
		defer close(ordered)
		r := backLines{f: f, off: fi.Size(), limit: MaxHistoryLine}
		var cur *lineBatch
		// ordered and work hold as many batches as there are, so that
		// sending never blocks.
		send := func() {
			ordered <- cur
			work <- cur
			cur = nil
		}
		for {
			line, tooLong, err := r.next()
			end := err != nil
			if end {
				if errors.Is(err, io.EOF) {
					err = nil
				} else {
					err = fsErr("read", p, err)
				}
			} else if !tooLong {
				if line = bytes.TrimSpace(line); len(line) == 0 {
					continue
				}
			}
			if cur != nil && !end && len(cur.buf)+len(line) > cap(cur.buf) {
				send()
			}
			if cur == nil {
				select {
				case cur = <-free:
				case <-quit:
					return
				}
				cur.buf, cur.lines, cur.done, cur.err = cur.buf[:0], cur.lines[:0], make(chan struct{}), nil
				if n := max(tailBatch, len(line)); cap(cur.buf) < n {
					cur.buf = make([]byte, 0, n)
				}
			}
			if end {
				// The log's start, or a read error: the last batch.
				cur.err = err
				send()
				return
			}
			off := len(cur.buf)
			cur.buf = append(cur.buf, line...)
			cur.lines = append(cur.lines, batchLine{off: off, end: len(cur.buf), tooLong: tooLong})
		}
	}()
	defer func() {
		// Stopped early or not, let the reader and the workers end.
		close(quit)
		for b := range ordered {
			<-b.done
		}
		wg.Wait()
	}()
	for b := range ordered {
		<-b.done
		for i := range b.lines {
			bl := &b.lines[i]
			if bl.tooLong {
				t.st.Skipped++
				continue
			}
			switch bl.kind {
			case skipLine:
				t.st.Skipped++
			case noteLine:
				t.st.Annotations++
				t.logNotes[bl.cycle] = append(t.logNotes[bl.cycle], bytes.Clone(bl.note))
			case cycleLine:
				if !fn(bl.l) {
					return nil
				}
			}
		}
		if b.err != nil {
			return b.err
		}
		free <- b
	}
	return nil
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
	nl    []int // the offsets of the newlines in buf[:end], in order
	long  bool  // the line that ends at buf[end] lost its later bytes
	// started is set once the file's last line, the one that may lack
	// its newline, has been returned.
	started bool
}

func (r *backLines) next() (line []byte, tooLong bool, err error) {
	for {
		if k := len(r.nl); k > 0 {
			i := r.nl[k-1]
			r.nl = r.nl[:k-1]
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
		// The newlines of the chunk read, found forwards (IndexByte is
		// much faster than LastIndexByte); the bytes after it hold none.
		r.nl = r.nl[:0]
		for i := 0; i < n; {
			j := bytes.IndexByte(r.buf[i:n], '\n')
			if j < 0 {
				break
			}
			r.nl = append(r.nl, i+j)
			i += j + 1
		}
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

// noteIndex holds the annotation file's notes in one buffer, sorted by
// cycle (file order kept within a cycle): a long history has one or two
// notes for every PR, and a map of them, read once for every cycle line,
// cost more than the lines' decoding.
type noteIndex struct {
	buf   []byte
	notes []noteRef
}

// noteRef is one note: its cycle and its bytes in noteIndex.buf.
type noteRef struct {
	cycle    int
	off, end int
}

func (x *noteIndex) add(cycle int, note []byte) {
	off := len(x.buf)
	x.buf = append(x.buf, note...)
	x.notes = append(x.notes, noteRef{cycle, off, len(x.buf)})
}

func (x *noteIndex) sort() {
	slices.SortStableFunc(x.notes, func(a, b noteRef) int { return cmp.Compare(a.cycle, b.cycle) })
}

// of is the notes of one cycle, in file order.
func (x *noteIndex) of(cycle int) []noteRef {
	lo, hi := 0, len(x.notes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.notes[m].cycle < cycle {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(x.notes) && x.notes[end].cycle == cycle {
		end++
	}
	return x.notes[lo:end]
}

func (x *noteIndex) note(n noteRef) json.RawMessage {
	return x.buf[n.off:n.end:n.end]
}
