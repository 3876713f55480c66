package state

import (
	"bytes"
	"encoding/json"
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
// value is written instead.
func marshalKeep(v any, extra Extra) ([]byte, error) {
	b, err := marshalNoEscape(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	kept, keys := keptFields(reflect.ValueOf(v), extra)
	var buf bytes.Buffer
	first := true
	write := memberWriter(&buf, &first)
	if len(kept) == 0 {
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
			write(k, mv[i])
		}
		// A field left out of the encoding (omitempty) gets its kept
		// value among the unknown keys.
		for _, ek := range kept {
			keys = append(keys, ek)
		}
		sort.Strings(keys)
	}
	for _, k := range keys {
		write(k, extra[k])
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
