package state

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
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
	members, ok := scanObject(b)
	if !ok {
		return unmarshalKeepSlow(b, v, extra)
	}
	var unknown []objectMember
	for _, m := range members {
		f, known := plan.lookup(m.key)
		if !known {
			unknown = append(unknown, m)
			continue
		}
		if err := decodeKnown(m.val, rv.Field(f.index), f); err != nil {
			// As json.Unmarshal refusing the object: read member by member.
			keys, vals, merr := objectMembers(b)
			if merr != nil {
				return err
			}
			decodeFields(keys, vals, v, extra)
			return nil
		}
	}
	*extra = keepMembers(unknown)
	return nil
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
	b, err := marshalNoEscape(v)
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
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
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(val)
	}
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
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	members = make([]objectMember, 0, 16)
	end, ok := scanContainer(b, i, 1, func(key, val []byte) bool {
		k, ok := unquoteKey(key)
		if ok {
			members = append(members, objectMember{key: k, val: val})
		}
		return ok
	})
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
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

var plainKeyRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func buildPlan(t reflect.Type) *decodePlan {
	p := &decodePlan{byName: map[string]memberField{}, byFold: map[string]memberField{}}
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
		if !plainKeyRE.MatchString(name) || strings.Contains(","+opts+",", ",string,") {
			return nil
		}
		folded := foldKey(name)
		if _, dup := p.byFold[folded]; dup {
			return nil
		}
		mf := memberField{index: i, kind: kindOf(f.Type)}
		if mf.kind == kindPtr {
			mf.elem = kindOf(f.Type.Elem())
		}
		p.byName[name] = mf
		p.byFold[folded] = mf
	}
	return p
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

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
	}
	return kindGeneric
}

// decodeKnown decodes val, a valid JSON value, into dst, the field f
// of the struct being decoded, as encoding/json decodes a member into a
// struct's field; the scalar kinds it reads as json.Unmarshal would and
// leaves anything else (a type mismatch included) to json.Unmarshal.
func decodeKnown(val []byte, dst reflect.Value, f memberField) error {
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
			return decodeEntries(val, dst)
		}
	}
	return json.Unmarshal(val, dst.Addr().Interface())
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
func decodeEntries(val []byte, dst reflect.Value) error {
	elems, ok := scanArray(val)
	if !ok {
		return json.Unmarshal(val, dst.Addr().Interface())
	}
	i := 0
	for _, e := range elems {
		if i >= dst.Cap() {
			dst.Grow(1)
		}
		if i >= dst.Len() {
			dst.SetLen(i + 1)
		}
		if err := dst.Index(i).Addr().Interface().(json.Unmarshaler).UnmarshalJSON(e); err != nil {
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
