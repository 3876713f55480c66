package state

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"sync"
)

// A state file that grows with a project's age is mostly entries this
// cycle did not touch: outcomes.json's 200, the decision log, the weekly
// episodes. encodeDocument writes such a file by encoding it compact —
// each unchanged entry's bytes as read, stripped of their blanks — then
// checking the whole document and indenting it: three passes over bytes
// that, for a file this program wrote, come out exactly as they were
// read. encodeSpliced writes the document indented in one pass instead,
// and an unchanged entry whose bytes already are what the indentation
// would make of them (canonicalAt: any file this program wrote) is copied
// as it is. Whatever it is not certain to write exactly as encodeDocument
// would — unknown keys kept at the document's level, a field or an entry
// that does not encode, a document so large that encodeDocument's bound
// on indentation would start writing it compact — is left to
// encodeDocument.

// spliceOff, set by the tests, leaves every document to encodeDocument's
// compact-then-indent path: the encoding encodeSpliced shortens, kept as
// its oracle.
var spliceOff bool

// keepParter is a document type whose MarshalJSON is
// marshalKeep(keepParts()): the alias struct value it encodes (its
// defaults filled in) and its unknown keys.
type keepParter interface {
	keepParts() (v any, extra Extra)
}

// encodeSpliced is encodeDocument's output for v, written indented in
// one pass (see above); ok is false when v is not a keepParter without
// unknown keys or anything in it is not certain to come out alike, and
// encodeDocument then writes it.
func encodeSpliced(v any) ([]byte, bool) {
	if spliceOff {
		return nil, false
	}
	kp, ok := v.(keepParter)
	if !ok {
		return nil, false
	}
	av, extra := kp.keepParts()
	if len(extra) > 0 {
		// marshalKeep merges them among the fields: its own order.
		return nil, false
	}
	rv := reflect.ValueOf(av)
	if rv.Kind() != reflect.Struct {
		return nil, false
	}
	p := encPlanFor(rv.Type())
	if p == nil {
		return nil, false
	}
	room, sized := outputRoom(p.lastIndented.Load(), reflect.TypeOf(v))
	w := indentWriter{out: make([]byte, 0, room), sized: sized}
	if !w.appendStruct(p, rv, 0) {
		return nil, false
	}
	// indentCounting writes the rest of a document compact once the
	// indentation it added passes the compact size plus 64 KiB: a
	// document whose whole indentation stays within that is indented
	// throughout, as here; any other is left to it.
	if w.ws > len(w.out)-w.ws+64<<10 {
		return nil, false
	}
	p.lastIndented.Store(int64(len(w.out)))
	return w.out, true
}

// readSizes holds, by document type (State, Outcomes, …), the size of
// the file of that type readJSON read last (noteReadSize): the room its
// first encoding in the process starts with. A process writes most files
// once; without it, a 74 KB outcomes.json grew its buffer from 256 bytes
// and left a copy at every step, every one a page the process touches.
var readSizes sync.Map // reflect.Type -> int64

// noteReadSize records that a file of n bytes was read into v (a
// pointer to its document's value).
func noteReadSize(v any, n int) {
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		readSizes.Store(t.Elem(), int64(n))
	}
}

// outputRoom is the capacity an indented document of type t starts
// with: a little more than its type's last indented encoding in this
// process (last), or, before there was one, than the file of its type
// read, which a cycle's change (an entry added or replaced) alters by
// little; 256 bytes when neither is known, and never more than 512 KiB
// at once. sized says whether it came from a size known. Only the room
// depends on it, never the bytes written.
func outputRoom(last int64, t reflect.Type) (room int64, sized bool) {
	if last == 0 && t != nil {
		if n, ok := readSizes.Load(t); ok {
			last = n.(int64)
			return min(max(256, last+last/16+512), 512<<10), true
		}
	}
	return min(max(256, last*9/8), 512<<10), last > 0
}

// indentWriter writes a document indented as indentCounting indents its
// compact encoding; ws counts the blanks it added.
type indentWriter struct {
	out []byte
	ws  int
	// sized says that out was made with room for a document of the size
	// this one had before (outputRoom): its lists need no estimate.
	sized bool
}

// newline starts a line at depth d, as indentCounting's newline.
func (w *indentWriter) newline(d int) {
	w.out = append(w.out, '\n')
	d = max(d, 0)
	w.ws += 1 + 2*d
	for ; d > len(indentSpaces)/2; d -= len(indentSpaces) / 2 {
		w.out = append(w.out, indentSpaces...)
	}
	w.out = append(w.out, indentSpaces[:2*d]...)
}

// appendStruct writes the struct value v, whose '{' is at depth (its
// members one deeper), by its plan p: the members marshalStruct writes,
// in its order.
func (w *indentWriter) appendStruct(p *encPlan, v reflect.Value, depth int) bool {
	if depth+2 > maxIndentDepth {
		// Entries of a list field sit two levels down: deeper documents
		// are not this writer's.
		return false
	}
	w.out = append(w.out, '{')
	n := 0
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		if f.omitEmpty && omitsEmpty(fv) {
			continue
		}
		if n > 0 {
			w.out = append(w.out, ',')
		}
		n++
		w.newline(depth + 1)
		w.out = append(w.out, f.key...)
		w.out = append(w.out, ' ')
		w.ws++
		if !w.appendField(f, fv, depth+1) {
			return false
		}
	}
	if n > 0 {
		w.newline(depth)
	}
	w.out = append(w.out, '}')
	return true
}

// appendField writes the value fv of field f, which sits at depth d.
func (w *indentWriter) appendField(f *encField, fv reflect.Value, d int) bool {
	switch f.kind {
	case encString:
		if s := fv.String(); plainString(s) {
			w.out = append(w.out, '"')
			w.out = append(w.out, s...)
			w.out = append(w.out, '"')
			return true
		}
	case encBool:
		w.out = strconv.AppendBool(w.out, fv.Bool())
		return true
	case encInt:
		w.out = strconv.AppendInt(w.out, fv.Int(), 10)
		return true
	case encUint:
		w.out = strconv.AppendUint(w.out, fv.Uint(), 10)
		return true
	case encEntries:
		return w.appendEntries(fv, d)
	case encGeneric:
		switch fv.Type() {
		case rawListType:
			if fv.IsNil() {
				w.out = append(w.out, "null"...)
				return true
			}
			return w.appendRawList(fv.Interface().([]json.RawMessage), nil, d)
		case indentedRawListType:
			l := fv.Interface().(indentedRawList)
			if l.list == nil {
				w.out = append(w.out, "null"...)
				return true
			}
			ws := l.ws
			if l.at != d+1 || len(ws) != len(l.list) || indentedRawListOff {
				// Indented for another depth than its elements sit at:
				// each is checked.
				ws = nil
			}
			return w.appendRawList(l.list, ws, d)
		}
	}
	b, err := marshalNoEscape(fv.Interface())
	if err != nil {
		return false
	}
	return w.appendChecked(b, d)
}

// appendEntries writes the list fv of entries (a struct type with its
// own MarshalJSON), whose '[' is at depth d.
func (w *indentWriter) appendEntries(fv reflect.Value, d int) bool {
	if fv.IsNil() {
		w.out = append(w.out, "null"...)
		return true
	}
	if fv.Len() == 0 {
		w.out = append(w.out, "[]"...)
		return true
	}
	w.out = append(w.out, '[')
	readAt := readFieldIndex(fv.Type().Elem())
	for i := 0; i < fv.Len(); i++ {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		w.newline(d + 1)
		el := fv.Index(i)
		b, err := el.Addr().Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return false
		}
		if i == 0 && !w.sized {
			// Room for the list at once, its entries taken to be the
			// size of the first: no earlier size of the document is
			// known, and growing the output step by step copies it
			// again at every step. (With a size known, the estimate
			// only costs a second buffer when the first entry is
			// longer than most.)
			w.out = slices.Grow(w.out, (len(b)+2*d+8)*fv.Len())
		}
		if readAt >= 0 && !keptBytesOff && isKeptBytes(el.Field(readAt), b) {
			// Its bytes as read, which decoding found to be one JSON
			// value (see isKeptBytes): as they are when they already
			// are their indentation here, else indented.
			if ws, ok := canonicalAt(b, d+1); ok {
				w.out = append(w.out, b...)
				w.ws += ws
			} else {
				w.appendIndented(b, d+1)
			}
			continue
		}
		if !w.appendChecked(b, d+1) {
			return false
		}
	}
	w.newline(d)
	w.out = append(w.out, ']')
	return true
}

var rawListType = reflect.TypeFor[[]json.RawMessage]()

// indentedRawList is a list written as a []json.RawMessage is, some of
// whose elements the program has just written itself indented at depth
// at, as indentCounting indents them there: ws[i] is the number of blanks
// element i holds when it is one of those, -1 when it is not (bytes as
// read from a file, an encoding left compact), which appendRawList then
// checks. memos.json's interventions are written so.
type indentedRawList struct {
	list []json.RawMessage
	ws   []int32
	at   int
}

// MarshalJSON is the list's encoding, as a []json.RawMessage's.
func (l indentedRawList) MarshalJSON() ([]byte, error) { return json.Marshal(l.list) }

var indentedRawListType = reflect.TypeFor[indentedRawList]()

// indentedRawListOff, set by the tests, checks every element of an
// indentedRawList: what its blank counts spare.
var indentedRawListOff bool

// appendRawList writes list, a []json.RawMessage (a lens's evidence, kept
// as read) that is not nil, whose '[' is at depth d, as encoding/json
// writes it — null for a nil element, each element compacted — then
// indented: an element already its own indentation (as read from a file
// ooda wrote) is copied. An element the package's scanner does not take
// is left to encoding/json, for its error. An element i with ws[i] >= 0
// (ws may be nil) is one the program wrote itself, indented at d+1, with
// ws[i] blanks: copied without a check.
func (w *indentWriter) appendRawList(list []json.RawMessage, ws []int32, d int) bool {
	if len(list) == 0 {
		w.out = append(w.out, "[]"...)
		return true
	}
	// Room for the list at once: its elements, each on a line of its own.
	n := 2*d + 4
	for _, el := range list {
		n += len(el) + 2*d + 4
	}
	w.out = slices.Grow(w.out, n)
	w.out = append(w.out, '[')
	for i, el := range list {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		w.newline(d + 1)
		if el == nil {
			w.out = append(w.out, "null"...)
			continue
		}
		if ws != nil && ws[i] >= 0 {
			w.out = append(w.out, el...)
			w.ws += int(ws[i])
			continue
		}
		start := skipSpace(el, 0)
		end, ok := scanValue(el, start, d+1)
		if !ok || skipSpace(el, end) != len(el) {
			return false
		}
		if ws, ok := canonicalAt(el[start:end], d+1); ok {
			w.out = append(w.out, el[start:end]...)
			w.ws += ws
		} else {
			w.appendIndented(el[start:end], d+1)
		}
	}
	w.newline(d)
	w.out = append(w.out, ']')
	return true
}

// appendChecked writes b, the encoding of a value at depth d, indented,
// once the package's scanner found it one JSON value with only blanks
// around it — the check encodeDocument makes of the whole document.
func (w *indentWriter) appendChecked(b []byte, d int) bool {
	start := skipSpace(b, 0)
	end, ok := scanValue(b, start, d)
	if !ok || skipSpace(b, end) != len(b) {
		return false
	}
	w.appendIndented(b[start:end], d)
	return true
}

// appendIndented writes src, one valid JSON value that starts at depth
// d, as indentCounting writes it there: its blanks left out, a line of
// its own for every member and element down to maxIndentDepth, a space
// after every colon.
func (w *indentWriter) appendIndented(src []byte, d int) {
	depth := d
	needIndent := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if isBlank(c) {
			continue
		}
		if needIndent && c != ']' && c != '}' {
			needIndent = false
			if depth <= maxIndentDepth {
				w.newline(depth)
			}
		}
		switch c {
		case '"':
			start := i
			if end := stringEnd(src, i); end >= 0 {
				i = end - 1
			} else {
				i = len(src)
			}
			w.out = append(w.out, src[start:min(i+1, len(src))]...)
		case '{', '[':
			w.out = append(w.out, c)
			depth++
			needIndent = true
		case ',':
			w.out = append(w.out, c)
			if depth <= maxIndentDepth {
				w.newline(depth)
			}
		case ':':
			w.out = append(w.out, c)
			if depth <= maxIndentDepth {
				w.out = append(w.out, ' ')
				w.ws++
			}
		case '}', ']':
			if needIndent {
				needIndent = false
			} else if depth <= maxIndentDepth {
				w.newline(depth - 1)
			}
			depth--
			w.out = append(w.out, c)
		default:
			w.out = append(w.out, c)
		}
	}
}

// canonicalAt says whether b, one valid JSON value, is already what
// indentCounting makes of it at depth d — every blank outside its
// strings one that the indentation puts there, and every one it puts
// there present — and how many blanks that is. It reads b once and
// writes nothing: the bytes of an entry this program wrote are their own
// indentation, and are then copied instead of indented again.
func canonicalAt(b []byte, d int) (ws int, ok bool) {
	depth := d
	i := 0
	// line matches a line start at depth dd at b[i].
	line := func(dd int) bool {
		dd = max(dd, 0)
		n := 1 + 2*dd
		if len(b)-i < n || b[i] != '\n' {
			return false
		}
		for k := i + 1; k < i+n; k++ {
			if b[k] != ' ' {
				return false
			}
		}
		i += n
		ws += n
		return true
	}
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			// To the first quote a backslash does not escape, each
			// backslash taken with the byte after it (as stringEnd):
			// keys and values are short, a walk is quicker than a search.
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return 0, false
			}
			i = j + 1
		case '{', '[':
			i++
			depth++
			if j := skipSpace(b, i); j < len(b) && (b[j] == '}' || b[j] == ']') {
				// An empty container is "[]" or "{}", blanks inside
				// or not.
				if j != i {
					return 0, false
				}
				depth--
				i++
				continue
			}
			if depth <= maxIndentDepth && !line(depth) {
				return 0, false
			}
		case ',':
			i++
			if depth <= maxIndentDepth && !line(depth) {
				return 0, false
			}
		case ':':
			i++
			if depth <= maxIndentDepth {
				if i >= len(b) || b[i] != ' ' {
					return 0, false
				}
				i++
				ws++
			}
		case '\n':
			// Only the line a closing bracket starts on.
			if depth > maxIndentDepth || !line(depth-1) || i >= len(b) || (b[i] != '}' && b[i] != ']') {
				return 0, false
			}
			depth--
			i++
		case '}', ']':
			if depth <= maxIndentDepth {
				// Its line is missing.
				return 0, false
			}
			depth--
			i++
		case ' ', '\t', '\r':
			return 0, false
		default:
			i++
		}
	}
	return ws, true
}
