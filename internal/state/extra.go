package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
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
// error.
func unmarshalKeep(b []byte, v any, extra *Extra) error {
	if isNull(b) {
		// encoding/json hands a null to the decoder of a value, which would
		// make it an empty entry (cycle 0, no id) that counts; refused, it
		// is a value that is not an object, reported and kept as written.
		return errNotAnObject
	}
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
