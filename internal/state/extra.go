package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Extra holds the keys of a JSON object that the typed model does not know.
// They are written back unchanged so that files shared with other tools
// (the original OODA-loop skills, newer versions) lose nothing.
type Extra map[string]json.RawMessage

var knownKeys sync.Map // reflect.Type -> map[string]bool

func jsonKeys(t reflect.Type) map[string]bool {
	if v, ok := knownKeys.Load(t); ok {
		return v.(map[string]bool)
	}
	keys := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		keys[strings.ToLower(name)] = true
	}
	knownKeys.Store(t, keys)
	return keys
}

// unmarshalKeep decodes b into v (a pointer to an alias struct type) and
// collects the keys v does not declare into extra.
func unmarshalKeep(b []byte, v any, extra *Extra) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	known := jsonKeys(reflect.TypeOf(v).Elem())
	for k := range m {
		// encoding/json matches keys case-insensitively, so a case variant
		// of a known key was decoded into its field: it is not unknown, and
		// writing it back would let it override the real key next time.
		if known[strings.ToLower(k)] {
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
// sorted, after the known ones.
func marshalKeep(v any, extra Extra) ([]byte, error) {
	b, err := marshalNoEscape(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	first := len(b) == 2
	for _, k := range keys {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
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
