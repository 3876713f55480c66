package state

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Extra holds the keys of a JSON object that the typed model does not know.
// They are written back unchanged so that files shared with other tools
// (the original OODA-loop skills, newer versions) lose nothing. It also
// holds, under its own key, a known field's value that was not read as
// written (a wrong type, see decodeFields), to be written back as it was.
type Extra map[string]json.RawMessage

// unmarshalKeep decodes b into v (a pointer to an alias struct type) and
// collects the keys v does not declare into extra. An object json.Unmarshal
// refuses (a value of the wrong type, here or in an entry) is read member
// by member instead (see decodeFields): only b not being an object is an
// error. It is a variable so that the tests can compare it with the
// decoder it replaced.
var unmarshalKeep = unmarshalKeepOnce

// unmarshalKeepOnce is unmarshalKeep reading the object once: one scan
// splits it into members (validating it as json.Unmarshal would), each
// member naming a field is decoded into that field in place, in file
// order, exactly as encoding/json decodes a struct (the last of duplicate
// or case-variant keys wins, a list or a map is decoded into the value
// already there), and the others are kept as written. Decoding the whole
// object and then again into a map to find its unknown keys cost a third
// of a cycle's CPU. What the single pass cannot match exactly (a type
// with embedded or ",string" fields, a nesting deeper than encoding/json
// allows) is left to encoding/json (unmarshalKeepSlow).
func unmarshalKeepOnce(b []byte, v any, extra *Extra) error {
	if isNull(b) {
		// encoding/json hands a null to the decoder of a value, which would
		// make it an empty entry (cycle 0, no id) that counts; refused, it
		// is a value that is not an object, reported and kept as written.
		return errNotAnObject
	}
	rv := reflect.ValueOf(v).Elem()
	plan := planFor(rv.Type())
	if plan == nil {
		return unmarshalKeepSlow(b, v, extra)
	}
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	members, ok := scanMembersInto((*buf)[:0], b)
	*buf = members
	if !ok {
		return unmarshalKeepSlow(b, v, extra)
	}
	return decodeMembers(b, members, rv, plan, extra, false)
}

// memberBufs are lists of members for decodeMembers to reuse: an object
// is split, decoded and done with before its caller goes on, so the list
// of every entry of a file need not be a new allocation. An entry inside
// takes another list while its container's is in use.
var memberBufs = sync.Pool{New: func() any { return new([]rawMember) }}

// elemBufs are lists of array elements for decodeEntries to reuse, as
// memberBufs are lists of members.
var elemBufs = sync.Pool{New: func() any { return new([][]byte) }}

// putElems gives a list back, emptied so that it holds on to nothing.
func putElems(buf *[][]byte) {
	clear(*buf)
	*buf = (*buf)[:0]
	elemBufs.Put(buf)
}

// putMembers gives a list back, emptied so that it holds on to nothing.
func putMembers(buf *[]rawMember) {
	clear(*buf)
	*buf = (*buf)[:0]
	memberBufs.Put(buf)
}

// decodeMembers decodes the members of the object b into rv (the struct
// v points to) by its plan, and keeps the others in extra; checked says
// that b is part of a document read and checked by decodeFile (see
// unmarshalKeepChecked).
func decodeMembers(b []byte, members []rawMember, rv reflect.Value, plan *decodePlan, extra *Extra, checked bool) error {
	var unknown []objectMember
	for _, m := range members {
		f, known := plan.lookupQuoted(m.quoted)
		if !known {
			unknown = append(unknown, objectMember{key: m.key(), val: m.val})
			continue
		}
		if err := decodeKnown(m.val, rv.Field(f.index), f, checked); err != nil {
			// As json.Unmarshal refusing the object: read member by member.
			keys, vals, merr := objectMembers(b)
			if merr != nil {
				return err
			}
			decodeFields(keys, vals, rv.Addr().Interface(), extra)
			return nil
		}
	}
	*extra = keepMembers(unknown)
	return nil
}

// checkedDecoder is a type that decodes itself from bytes decodeFile has
// checked (see unmarshalKeepChecked) exactly as its UnmarshalJSON decodes
// them, with less work.
type checkedDecoder interface {
	unmarshalChecked(b []byte) error
}

// checkedDecodeOff, set by the tests, sends every value through its
// UnmarshalJSON: the decoding unmarshalKeepChecked replaced.
var checkedDecodeOff bool

// decodeFile is decodeDocument for the bytes of a file just read: a
// value whose type is a checkedDecoder is handed a copy of the document
// once the scanner has found it to be one JSON value, a copy nothing
// else holds, so that neither it nor the entries it holds (which keep
// their bytes, see readEntry) check or copy any part of it again.
func decodeFile(b []byte, v any) error { return decodeFileIn(b, v, false) }

// decodeFileIn is decodeFile; owned says that the caller hands b over:
// b is its own, just read from the file, and neither it nor anything
// else changes it once handed (it may still read it): the document is
// then decoded in place, without its copy (which cost as much as
// reading the file).
func decodeFileIn(b []byte, v any, owned bool) error {
	_, _, err := decodeFileScan(b, v, owned, false)
	return err
}

// decodeFileScan is decodeFileIn; with dups, it also says, when scanned,
// whether the document may name a key twice in one object
// (hasDuplicateKeys's answer), found by the walk that checked it.
func decodeFileScan(b []byte, v any, owned, dups bool) (scanned, dup bool, err error) {
	if cd, ok := v.(checkedDecoder); ok && !checkedDecodeOff {
		var start, end int
		if dups && !scanDocumentOff {
			start, end, ok, dup = scanDocument(b)
		} else {
			start = skipSpace(b, 0)
			end, ok = scanValue(b, start, 0)
			ok = ok && skipSpace(b, end) == len(b)
			if ok && dups {
				dup = hasDuplicateKeys(b)
			}
		}
		if ok {
			doc := b[start:end:end]
			if !owned || ownedCopyOn {
				doc = bytes.Clone(doc)
			}
			return true, dup, cd.unmarshalChecked(doc)
		}
	}
	return false, false, decodeDocument(b, v)
}

// scanDocumentOff, set by the tests, checks a document and looks for its
// duplicated keys in two walks: what scanDocument replaced.
var scanDocumentOff bool

// ownedCopyOn, set by the tests, copies a document handed over as well:
// what decoding an owned document in place replaced.
var ownedCopyOn bool

// unmarshalKeepChecked is unmarshalKeep for b, a JSON value inside a
// document decodeFile checked, held by nothing else and never changed:
// the object is split into its members without checking it again, a
// list of entries into its elements likewise, and an entry that is a
// checkedDecoder keeps a slice of b as its bytes instead of a copy. The
// value decoded is the one unmarshalKeep decodes from the same bytes;
// anything but an object of a type with a plan goes to unmarshalKeep.
func unmarshalKeepChecked(b []byte, v any, extra *Extra) error {
	if checkedDecodeOff || len(b) == 0 || b[0] != '{' {
		return unmarshalKeep(b, v, extra)
	}
	rv := reflect.ValueOf(v).Elem()
	plan := planFor(rv.Type())
	if plan == nil {
		return unmarshalKeep(b, v, extra)
	}
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	*buf = splitObjectInto((*buf)[:0], b)
	return decodeMembers(b, *buf, rv, plan, extra, true)
}

// unmarshalKeepIn is unmarshalKeepChecked when checked, else unmarshalKeep.
func unmarshalKeepIn(b []byte, v any, extra *Extra, checked bool) error {
	if checked {
		return unmarshalKeepChecked(b, v, extra)
	}
	return unmarshalKeep(b, v, extra)
}

// splitObject splits b, one JSON object known valid, into its members,
// as scanMembers does, without checking it.
func splitObject(b []byte) []rawMember { return splitObjectInto(make([]rawMember, 0, 16), b) }

// splitObjectInto is splitObject appending to members.
func splitObjectInto(members []rawMember, b []byte) []rawMember {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		return members
	}
	for i < len(b) {
		end := skipString(b, i)
		key := b[i:end]
		i = skipSpace(b, skipSpace(b, end)+1)
		end = skipValue(b, i)
		members = append(members, rawMember{quoted: key, val: b[i:end]})
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipSpace(b, i+1)
	}
	return members
}

// splitArray splits b, one JSON array known valid, into its elements, as
// scanArray does, without checking it.
func splitArray(b []byte) [][]byte { return splitArrayInto(nil, b) }

// splitArrayInto is splitArray appending to elems.
func splitArrayInto(elems [][]byte, b []byte) [][]byte {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return elems
	}
	for i < len(b) {
		end := skipValue(b, i)
		elems = append(elems, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipSpace(b, i+1)
	}
	return elems
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			// Blanks, digits, literals, commas and colons change nothing
			// here: a run of them (an indented file's indentation) is
			// stepped over without the switch.
			for i < len(b) && !skipStop[b[i]] {
				i++
			}
			if i == len(b) {
				break
			}
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipStop marks the bytes skipValue acts on inside a container.
var skipStop = [256]bool{'{': true, '}': true, '[': true, ']': true, '"': true}

// skipString returns the index just past the valid JSON string at b[i]
// (its opening quote): the first quote after it not escaped.
func skipString(b []byte, i int) int {
	if end := stringEnd(b, i); end >= 0 {
		return end
	}
	return len(b)
}

// stringEnd returns the index just past the string that starts at b[i]
// (a quote), valid or not: the first quote after it that a backslash
// does not escape, found as a byte-by-byte walk taking each backslash
// with the byte after it would find it, or -1 when there is none.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// Backslashes right before the quote escape it when they are odd
		// in number: each pair is one escaped backslash.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
	return -1
}

// decodeDocument is json.Unmarshal(b, v) for a whole file. A value that
// decodes itself is handed the document as soon as the scanner below
// finds it to be one JSON value: encoding/json would check it with its
// own scanner, then scan it again to find where it ends, before handing
// it over. A document the scanner does not take (not JSON, or nested
// deeper than encoding/json allows) is left to encoding/json, for its
// error.
func decodeDocument(b []byte, v any) error {
	if u, ok := v.(json.Unmarshaler); ok {
		start := skipSpace(b, 0)
		if end, ok := scanValue(b, start, 0); ok && skipSpace(b, end) == len(b) {
			return u.UnmarshalJSON(b[start:end])
		}
	}
	return json.Unmarshal(b, v)
}

// keepMembers is the unknown members as Extra (nil when there are none),
// their values copied out of the decoder's buffer into one allocation; a
// key repeated keeps its last value, as a map decoded from the object does.
func keepMembers(ms []objectMember) Extra {
	if len(ms) == 0 {
		return nil
	}
	n := 0
	for _, m := range ms {
		n += len(m.val)
	}
	buf := make([]byte, 0, n)
	out := make(Extra, len(ms))
	for _, m := range ms {
		at := len(buf)
		buf = append(buf, m.val...)
		out[m.key] = json.RawMessage(buf[at:len(buf):len(buf)])
	}
	return out
}

// unmarshalKeepSlow is unmarshalKeep by encoding/json alone: the object
// decoded into v, then into a map for its unknown keys.
func unmarshalKeepSlow(b []byte, v any, extra *Extra) error {
	if err := json.Unmarshal(b, v); err != nil {
		keys, vals, merr := objectMembers(b)
		if merr != nil {
			return err
		}
		decodeFields(keys, vals, v, extra)
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	fields := jsonFields(reflect.TypeOf(v).Elem())
	for k := range m {
		// encoding/json matches keys case-insensitively, so a case variant
		// of a known key was decoded into its field: it is not unknown, and
		// writing it back would let it override the real key next time.
		if _, known := fields[foldKey(k)]; known {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		m = nil
	}
	*extra = m
	return nil
}

// marshalKeep encodes v (an alias struct value) and appends the extra keys,
// sorted, after the known ones. An extra key naming one of v's fields holds
// the value the file had there when it was not read as written: while the
// field still holds what was read from it, that value is written in the
// field's place, as it was; once the program has set the field, the new
// value is written instead — but for a list's unreadable elements, which
// the new list keeps (see keepUnreadable).
func marshalKeep(v any, extra Extra) ([]byte, error) {
	b, err := marshalStruct(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	rv := reflect.ValueOf(v)
	kept, keys := keptFields(rv, extra)
	lists := changedLists(rv, extra, kept)
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	tail := map[string]json.RawMessage{}
	for _, k := range keys {
		tail[k] = extra[k]
	}
	if len(kept) == 0 && len(lists) == 0 {
		buf.Write(b[:len(b)-1])
		first = len(b) == 2
	} else {
		mk, mv, err := objectMembers(b)
		if err != nil {
			return nil, err
		}
		buf.WriteByte('{')
		for i, k := range mk {
			if ek, ok := kept[k]; ok {
				write(ek, extra[ek])
				delete(kept, k)
				continue
			}
			if l, ok := lists[k]; ok {
				write(k, keepUnreadable(mv[i], l.field, extra[l.key], l.elem))
				delete(lists, k)
				continue
			}
			write(k, mv[i])
		}
		// A field left out of the encoding (omitempty) gets its kept
		// value among the unknown keys, and a list left out, its
		// unreadable elements.
		for _, ek := range kept {
			tail[ek] = extra[ek]
		}
		for name, l := range lists {
			tail[name] = keepUnreadable(json.RawMessage("[]"), reflect.Value{}, extra[l.key], l.elem)
		}
	}
	order := make([]string, 0, len(tail))
	for k := range tail {
		order = append(order, k)
	}
	sort.Strings(order)
	for _, k := range order {
		write(k, tail[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping (a user's `&&`
// stays `&&` in the file, not \u0026\u0026).
func marshalNoEscape(v any) ([]byte, error) {
	// The encoder is reused: a value's MarshalJSON calling back here
	// takes another one from the pool.
	e := noEscapePool.Get().(*noEscapeEncoder)
	defer noEscapePool.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimRight(e.buf.Bytes(), "\n")), nil
}

// memberWriter returns a function that appends one `"key":value` member of
// a JSON object to buf, with the comma every member but the first needs;
// *first says whether none has been written yet.
func memberWriter(buf *bytes.Buffer, first *bool) func(k string, val []byte) {
	return func(k string, val []byte) {
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		if plainKeyJSON(k) {
			// What json.Marshal writes for it, without its allocation:
			// every key of a rewritten entry or file passes here.
			buf.WriteByte('"')
			buf.WriteString(k)
			buf.WriteByte('"')
		} else {
			kb, _ := json.Marshal(k)
			buf.Write(kb)
		}
		buf.WriteByte(':')
		buf.Write(val)
	}
}

// plainKeyJSON says whether json.Marshal writes k as k in quotes:
// printable ASCII without a quote, a backslash or a character it escapes
// for HTML (<, >, &).
func plainKeyJSON(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// listKeep is a list field the program changed whose value in the file
// held elements that could not be read (see keepUnreadable).
type listKeep struct {
	key   string        // the extra key holding the list as the file had it
	field reflect.Value // the field's current value
	elem  reflect.Type  // the type of the list's elements
}

// changedLists finds, among the extra keys of the struct value rv, the
// lists the program has set since they were read (they are not in kept)
// and that held elements not read: field name -> where to find them.
func changedLists(rv reflect.Value, extra Extra, kept map[string]string) map[string]listKeep {
	var out map[string]listKeep
	fields := jsonFields(rv.Type())
	for k, raw := range extra {
		f, ok := fields[foldKey(k)]
		if !ok || f.typ.Kind() != reflect.Slice || f.typ == rawType || f.typ.Elem().Kind() == reflect.Uint8 {
			continue
		}
		if _, unchanged := kept[f.name]; unchanged {
			continue
		}
		if _, dup := out[f.name]; dup || !hasUnreadable(raw, f.typ.Elem()) {
			continue
		}
		if out == nil {
			out = map[string]listKeep{}
		}
		out[f.name] = listKeep{key: k, field: rv.Field(f.index), elem: f.typ.Elem()}
	}
	return out
}

// hasUnreadable says whether raw is a JSON array holding an element that
// cannot be read as elem.
func hasUnreadable(raw json.RawMessage, elem reflect.Type) bool {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return false
	}
	for _, e := range elems {
		if _, _, ok := readLoose(e, elem, "", nil); !ok {
			return true
		}
	}
	return false
}

// keepUnreadable is the list cur (the encoding of a list the program
// changed, field its value) with the elements of raw (the list as the file
// had it) that could not be read as elem put back, each as the file wrote
// it. They were left out of every computation, and the file keeps them:
//
//   - each goes right after the readable element that preceded it in the
//     file, wherever that element is now (found by its bytes as read, for
//     an entry that remembers them (see readEntry), else by its encoding);
//     when that element is gone (trimmed, moved to another list, or
//     changed and not recognisable), after the one before it, and so on;
//     when none of those remains, at the front of the list, in file order;
//   - only the elements raw holds are put back, once each: a list the
//     program trims to N entries holds N plus the unreadable elements the
//     file already had, never more, however often it is rewritten.
func keepUnreadable(cur json.RawMessage, field reflect.Value, raw json.RawMessage, elem reflect.Type) json.RawMessage {
	var now, was []json.RawMessage
	if json.Unmarshal(cur, &now) != nil || json.Unmarshal(raw, &was) != nil {
		return cur
	}
	// Where each element of the current list can be found, by the bytes
	// it was read from and by its encoding. The work is linear in the
	// list, as reading it was (the file's size is bounded when read).
	byRead := map[string][]int{}
	byEnc := map[string][]int{}
	withRead := field.IsValid() && field.Kind() == reflect.Slice && field.Len() == len(now)
	for j, e := range now {
		k := compactRaw(e)
		byEnc[k] = append(byEnc[k], j)
		if withRead {
			if r := entryReadRaw(field.Index(j)); r != nil {
				k = compactRaw(r)
				byRead[k] = append(byRead[k], j)
			}
		}
	}
	used := make([]bool, len(now))
	take := func(idx []int) int {
		for _, j := range idx {
			if !used[j] {
				used[j] = true
				return j
			}
		}
		return -1
	}
	var front []json.RawMessage
	after := map[int][]json.RawMessage{}
	anchor := -1 // where the last readable element of the file is now
	for _, e := range was {
		v, _, ok := readLoose(e, elem, "", nil)
		if !ok {
			if anchor < 0 {
				front = append(front, e)
			} else {
				after[anchor] = append(after[anchor], e)
			}
			continue
		}
		j := take(byRead[compactRaw(e)])
		if j < 0 {
			if enc, err := marshalNoEscape(v.Interface()); err == nil {
				j = take(byEnc[compactRaw(enc)])
			}
		}
		if j >= 0 {
			anchor = j
		}
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	put := func(e json.RawMessage) {
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		buf.Write(bytes.TrimSpace(e))
	}
	for _, e := range front {
		put(e)
	}
	for j, e := range now {
		put(e)
		for _, u := range after[j] {
			put(u)
		}
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// compactRaw is raw without insignificant whitespace (raw itself when it
// is not JSON).
func compactRaw(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

var readEntryType = reflect.TypeFor[*readEntry]()

// entryReadRaw is the bytes an entry was read from, when its type
// remembers them (an unexported field read of type *readEntry), else nil.
func entryReadRaw(v reflect.Value) []byte {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("read")
	if !f.IsValid() || f.Type() != readEntryType || f.IsNil() {
		return nil
	}
	return f.Elem().FieldByName("raw").Bytes()
}

// readList reads raw as a JSON array of T, element by element (see
// readLoose): items are the elements read, unread counts the others,
// which the caller keeps; ok is false when raw is not an array.
func readList[T any](raw json.RawMessage) (items []T, unread int, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return nil, 0, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(t, &elems) != nil {
		return nil, 0, false
	}
	typ := reflect.TypeFor[T]()
	items = make([]T, 0, len(elems))
	for _, e := range elems {
		v, _, ok := readLoose(e, typ, "", nil)
		if !ok {
			unread++
			continue
		}
		items = append(items, v.Interface().(T))
	}
	return items, unread, true
}

// errNotAnObject is unmarshalKeep's refusal of a null.
var errNotAnObject = errors.New("null is not an object")

// objectMember is one member of a JSON object: its key, unquoted, and its
// value as written (a slice of the object's bytes, without whitespace).
type objectMember struct {
	key string
	val []byte
}

// maxScanDepth is encoding/json's limit on nesting: deeper documents are
// left to it, so that they fail with its error.
const maxScanDepth = 10000

// scanObject splits b, one JSON object with only whitespace around it,
// into its members in file order. ok is false when b is anything else or
// not JSON as encoding/json reads it (the same grammar: no control
// character in a string, \u with four hex digits, no leading zero, no
// trailing comma; invalid UTF-8 is accepted, as encoding/json does).
func scanObject(b []byte) (members []objectMember, ok bool) {
	raw, ok := scanMembers(b)
	if !ok {
		return nil, false
	}
	members = make([]objectMember, len(raw))
	for i, m := range raw {
		members[i] = objectMember{key: m.key(), val: m.val}
	}
	return members, true
}

// rawMember is one member of a JSON object as written: its key with its
// quotes, and its value (slices of the object's bytes). Its key is
// unquoted only when asked for: a key that names a field is looked up
// as written (decodePlan.lookupQuoted), without making a string of it.
type rawMember struct {
	quoted, val []byte
}

// key is the member's key, unquoted.
func (m rawMember) key() string { return unquoted(m.quoted) }

// scanMembers is scanObject with the keys as written.
func scanMembers(b []byte) (members []rawMember, ok bool) {
	return scanMembersInto(make([]rawMember, 0, 16), b)
}

// scanMembersInto is scanMembers appending to members (which it returns
// even when b is not an object, for the caller to reuse).
func scanMembersInto(members []rawMember, b []byte) ([]rawMember, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return members, false
	}
	end, ok := scanContainer(b, i, 1, func(key, val []byte) bool {
		members = append(members, rawMember{quoted: key, val: val})
		return true
	})
	if !ok || skipSpace(b, end) != len(b) {
		return members[:0], false
	}
	return members, true
}

// scanArray splits b, one JSON array, into its elements.
func scanArray(b []byte) (elems [][]byte, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	end, ok := scanContainer(b, i, 1, func(_, val []byte) bool {
		elems = append(elems, val)
		return true
	})
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
	}
	return elems, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanContainer scans the object or array starting at b[i] (depth deep)
// and returns the index just past it; each member (key with its quotes,
// value) or element (nil key) is handed to each, which may stop the scan.
// Values nested deeper are only validated.
func scanContainer(b []byte, i, depth int, each func(key, val []byte) bool) (int, bool) {
	if depth > maxScanDepth {
		return 0, false
	}
	obj := b[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		var key []byte
		if obj {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			end, _, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			key = b[i:end]
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
		end, ok := scanValue(b, i, depth)
		if !ok {
			return 0, false
		}
		if each != nil && !each(key, b[i:end]) {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanValue returns the index just past the JSON value starting at b[i].
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		return scanContainer(b, i, depth+1, nil)
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == 't':
		return scanWord(b, i, "true")
	case c == 'f':
		return scanWord(b, i, "false")
	case c == 'n':
		return scanWord(b, i, "null")
	case c == '-' || ('0' <= c && c <= '9'):
		return scanJSONNumber(b, i)
	}
	return 0, false
}

func scanWord(b []byte, i int, w string) (int, bool) {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return 0, false
	}
	return i + len(w), true
}

// scanJSONNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanJSONNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}

// scanString returns the index just past the string starting at b[i] (a
// quote); plain is true when it holds no escape and no byte outside ASCII,
// so that its content is its value.
func scanString(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	for i++; i < len(b); i++ {
		// Eight bytes at a time while none is a quote, a backslash, a
		// control character or a byte outside ASCII: the loop below
		// would only step over them.
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return 0, false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false, false
					}
				}
				i += 4
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// plainWord says whether none of the eight bytes of x is a quote, a
// backslash, below 0x20 or at or above 0x80 (the usual bit tricks: a
// byte is below n when subtracting n borrows into its top bit, and is
// zero, once xored with c, when it equals c).
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	special := x&highs | (x-0x20*ones)&^x&highs | hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones))
	return special == 0
}

// unquoteKey is the value of the quoted JSON string q, as encoding/json
// reads it (an invalid UTF-8 byte or a lone surrogate becomes U+FFFD).
func unquoteKey(q []byte) (string, bool) {
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	return s, json.Unmarshal(q, &s) == nil
}

// memberKind is how decodeKnown decodes a field's value.
type memberKind uint8

const (
	kindGeneric memberKind = iota // json.Unmarshal into the field
	kindString
	kindBool
	kindInt
	kindUint
	kindFloat
	kindPtr     // a pointer to one of the scalar kinds above (elem)
	kindRaw     // json.RawMessage
	kindEntries // a list of a struct type with its own UnmarshalJSON
	kindList    // a list of one of the scalar kinds above (elem)
	kindMap     // a map by string of one of the scalar kinds above (elem)
	kindRawList // []json.RawMessage: a list of values kept as written
)

// memberField is a field of a decodePlan.
type memberField struct {
	index int
	kind  memberKind
	elem  memberKind // for kindPtr
}

// decodePlan is how unmarshalKeepOnce decodes one struct type: its
// fields by JSON key, as written and folded.
type decodePlan struct {
	byName, byFold map[string]memberField
}

// lookupQuoted is lookup of the key q, quoted as written: a key spelled
// in plain ASCII, as every field's name is, is looked up without being
// unquoted into a new string.
func (p *decodePlan) lookupQuoted(q []byte) (memberField, bool) {
	if k := q[1 : len(q)-1]; plainASCII(k) {
		if f, ok := p.byName[string(k)]; ok {
			return f, true
		}
	}
	return p.lookup(unquoted(q))
}

// unquoted is the JSON string q, a key the scanners took, unquoted
// (which cannot fail: they took it as a JSON string).
func unquoted(q []byte) string {
	k, _ := unquoteKey(q)
	return k
}

// plainASCII says whether b holds only printable ASCII but the quote and
// the backslash: a JSON string's content that is its own value.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// lookup finds the field that encoding/json decodes key into: the key
// as written, else its case-folded form (no two fields of a plan fold
// alike, so the two agree).
func (p *decodePlan) lookup(key string) (memberField, bool) {
	if f, ok := p.byName[key]; ok {
		return f, true
	}
	f, ok := p.byFold[foldKey(key)]
	return f, ok
}

var planCache sync.Map // reflect.Type -> *decodePlan (nil: not decoded in one pass)

// planFor is t's decodePlan, nil when encoding/json would read t in a way
// the one pass does not reproduce: an embedded struct (its fields are
// promoted), a ",string" option, a key with characters encoding/json does
// not take from a tag, two keys that fold alike.
func planFor(t reflect.Type) *decodePlan {
	if p, ok := planCache.Load(t); ok {
		return p.(*decodePlan)
	}
	p := buildPlan(t)
	planCache.Store(t, p)
	return p
}

// plainKey says whether name is spelled only with ASCII letters, digits
// and underscores, and not empty: a key encoding/json takes from a tag
// as written, and writes without escaping.
func plainKey(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func buildPlan(t reflect.Type) *decodePlan {
	p := &decodePlan{byName: make(map[string]memberField, t.NumField()), byFold: make(map[string]memberField, t.NumField())}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !plainKey(name) || hasOption(opts, "string") {
			return nil
		}
		folded := foldKey(name)
		if _, dup := p.byFold[folded]; dup {
			return nil
		}
		mf := memberField{index: i, kind: kindOf(f.Type)}
		if mf.kind == kindPtr || mf.kind == kindList || mf.kind == kindMap {
			mf.elem = kindOf(f.Type.Elem())
		}
		p.byName[name] = mf
		p.byFold[folded] = mf
	}
	return p
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// hasOption says whether the tag options opts ("omitempty,string")
// hold o.
func hasOption(opts, o string) bool {
	for opts != "" {
		var cur string
		cur, opts, _ = strings.Cut(opts, ",")
		if cur == o {
			return true
		}
	}
	return false
}

// decodesItself says whether encoding/json hands values of type t to a
// method of t's.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || pt.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// kindOf is how decodeKnown decodes a field of type t.
func kindOf(t reflect.Type) memberKind {
	if t == rawType {
		return kindRaw
	}
	if t == rawListType {
		return kindRawList
	}
	if decodesItself(t) {
		return kindGeneric
	}
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Pointer:
		if k := kindOf(t.Elem()); k >= kindString && k <= kindFloat {
			return kindPtr
		}
	case reflect.Slice:
		e := t.Elem()
		if e.Kind() == reflect.Struct && !e.Implements(unmarshalerType) && reflect.PointerTo(e).Implements(unmarshalerType) {
			return kindEntries
		}
		if k := kindOf(e); k >= kindString && k <= kindFloat && k != kindUint {
			return kindList
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && !decodesItself(t.Key()) {
			if k := kindOf(t.Elem()); k >= kindString && k <= kindFloat && k != kindUint {
				return kindMap
			}
		}
	}
	return kindGeneric
}

// decodeKnown decodes val, a valid JSON value, into dst, the field f
// of the struct being decoded, as encoding/json decodes a member into a
// struct's field; the scalar kinds it reads as json.Unmarshal would and
// leaves anything else (a type mismatch included) to json.Unmarshal.
// checked says that val is part of a document decodeFile checked.
func decodeKnown(val []byte, dst reflect.Value, f memberField, checked bool) error {
	switch f.kind {
	case kindRaw:
		// As RawMessage.UnmarshalJSON, a null included.
		dst.SetBytes(append(dst.Bytes()[:0], val...))
		return nil
	case kindString, kindBool, kindInt, kindUint, kindFloat:
		if decodeScalar(val, dst, f.kind) {
			return nil
		}
	case kindPtr:
		if val[0] == 'n' {
			dst.SetZero()
			return nil
		}
		if !dst.IsNil() {
			// encoding/json decodes into the value already pointed to.
			if decodeScalar(val, dst.Elem(), f.elem) {
				return nil
			}
			break
		}
		nv := reflect.New(dst.Type().Elem())
		if decodeScalar(val, nv.Elem(), f.elem) {
			dst.Set(nv)
			return nil
		}
	case kindEntries:
		if val[0] == 'n' {
			dst.SetZero()
			return nil
		}
		if val[0] == '[' {
			return decodeEntries(val, dst, checked)
		}
	case kindRawList:
		if val[0] == 'n' {
			dst.SetZero()
			return nil
		}
		// Into a list not yet set only, as kindList.
		if val[0] == '[' && dst.IsNil() && !rawListOff {
			*(dst.Addr().Interface().(*[]json.RawMessage)) = rawList(val)
			return nil
		}
	case kindList, kindMap:
		if val[0] == 'n' {
			// As encoding/json: null makes a list or a map nil.
			dst.SetZero()
			return nil
		}
		// Into a list or map not yet set only: encoding/json decodes a
		// second value of the key (a duplicate) into the one there.
		if dst.IsNil() && decodeScalars(val, dst, f) {
			return nil
		}
	}
	return json.Unmarshal(val, dst.Addr().Interface())
}

// decodeScalars decodes val, a valid JSON array (into a list) or object
// (into a map), into dst, a nil list or map of the scalar kind f.elem,
// as json.Unmarshal does when every element is a value decodeScalar
// reads (a null leaves the element zero); dst is left alone, and the
// answer is false, for anything else.
func decodeScalars(val []byte, dst reflect.Value, f memberField) bool {
	if ok, typed := decodeScalarsTyped(val, dst); typed {
		return ok
	}
	t := dst.Type()
	switch {
	case f.kind == kindList && val[0] == '[':
		elems := splitArray(val)
		out := reflect.MakeSlice(t, len(elems), len(elems))
		for i, e := range elems {
			if !decodeScalar(e, out.Index(i), f.elem) {
				return false
			}
		}
		dst.Set(out)
		return true
	case f.kind == kindMap && val[0] == '{':
		members := splitObject(val)
		out := reflect.MakeMapWithSize(t, len(members))
		for _, m := range members {
			ev := reflect.New(t.Elem()).Elem()
			if !decodeScalar(m.val, ev, f.elem) {
				return false
			}
			out.SetMapIndex(reflect.ValueOf(m.key()).Convert(t.Key()), ev)
		}
		dst.Set(out)
		return true
	}
	return false
}

// decodeScalar sets dst (of kind k) to the value of val when that is a
// value json.Unmarshal reads into it without error, and reports whether
// it did; dst is left alone otherwise.
func decodeScalar(val []byte, dst reflect.Value, k memberKind) bool {
	if val[0] == 'n' {
		return true // null leaves a scalar as it is
	}
	switch k {
	case kindString:
		if val[0] != '"' {
			return false
		}
		s := val[1 : len(val)-1]
		if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
			return false
		}
		dst.SetString(string(s))
		return true
	case kindBool:
		switch val[0] {
		case 't':
			dst.SetBool(true)
			return true
		case 'f':
			dst.SetBool(false)
			return true
		}
		return false
	case kindInt:
		n, ok := plainInt(val)
		if !ok || dst.OverflowInt(n) {
			return false
		}
		dst.SetInt(n)
		return true
	case kindUint:
		n, ok := plainInt(val)
		if !ok || n < 0 || dst.OverflowUint(uint64(n)) {
			return false
		}
		dst.SetUint(uint64(n))
		return true
	case kindFloat:
		if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
			return false
		}
		var f float64
		if n, ok := plainInt(val); ok && n > -1<<53 && n < 1<<53 {
			f = float64(n) // exact, as ParseFloat reads it
			if n == 0 && val[0] == '-' {
				f = math.Copysign(0, -1)
			}
		} else {
			var err error
			f, err = strconv.ParseFloat(string(val), dst.Type().Bits())
			if err != nil {
				return false
			}
		}
		if dst.OverflowFloat(f) {
			return false
		}
		dst.SetFloat(f)
		return true
	}
	return false
}

// plainInt reads a JSON number written as an integer of at most 18
// digits ("-12", "0"), the only numbers ParseInt reads alike.
func plainInt(val []byte) (int64, bool) {
	d := val
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if val[0] == '-' {
		n = -n
	}
	return n, true
}

// decodeEntries decodes the JSON array val into the list dst, whose
// elements decode themselves, as encoding/json decodes an array into a
// slice: element i into the slice's element i (the ones past its length
// reused when its capacity holds them), the slice cut to the array's
// length, an empty array an empty (not nil) list.
//
// When checked, val is part of a document decodeFile checked: it is
// split without checking it again, and an element that is a
// checkedDecoder decodes itself so.
func decodeEntries(val []byte, dst reflect.Value, checked bool) error {
	var elems [][]byte
	if checked {
		// The list of elements is done with once they are decoded (each
		// keeps a slice of val, not of the list): a file's hundreds of
		// entries need not grow a new one step by step.
		buf := elemBufs.Get().(*[][]byte)
		defer putElems(buf)
		*buf = splitArrayInto((*buf)[:0], val)
		elems = *buf
	} else {
		var ok bool
		if elems, ok = scanArray(val); !ok {
			return json.Unmarshal(val, dst.Addr().Interface())
		}
	}
	if n := len(elems); dst.Cap() < n {
		// Room for every element at once: growing one at a time copies
		// the list (entries of a few hundred bytes each) again and again.
		dst.Grow(n - dst.Len())
	}
	i := 0
	for _, e := range elems {
		if i >= dst.Cap() {
			dst.Grow(1)
		}
		if i >= dst.Len() {
			dst.SetLen(i + 1)
		}
		el := dst.Index(i).Addr().Interface()
		var err error
		if cd, ok := el.(checkedDecoder); ok && checked {
			err = cd.unmarshalChecked(e)
		} else {
			err = el.(json.Unmarshaler).UnmarshalJSON(e)
		}
		if err != nil {
			return err
		}
		i++
	}
	if i < dst.Len() {
		dst.SetLen(i)
	}
	if i == 0 {
		dst.Set(reflect.MakeSlice(dst.Type(), 0, 0))
	}
	return nil
}

// rawListOff, set by the tests, sends every []json.RawMessage field to
// json.Unmarshal: the decoding rawList replaced.
var rawListOff bool

// rawList is json.Unmarshal of val, a valid JSON array, into a nil
// []json.RawMessage: each element's bytes as written (its blanks inside
// kept, none around it), a null element as "null", an empty array an
// empty list. A lens's evidence, twenty entries, no longer goes through
// encoding/json's scanner twice. The elements share one allocation, each
// cut to its own length and capacity.
func rawList(val []byte) []json.RawMessage {
	buf := elemBufs.Get().(*[][]byte)
	defer putElems(buf)
	*buf = splitArrayInto((*buf)[:0], val)
	n := 0
	for _, e := range *buf {
		n += len(e)
	}
	data := make([]byte, 0, n)
	out := make([]json.RawMessage, len(*buf))
	for i, e := range *buf {
		at := len(data)
		data = append(data, e...)
		out[i] = json.RawMessage(data[at:len(data):len(data)])
	}
	return out
}
