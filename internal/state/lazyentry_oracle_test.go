package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// encodeReadEagerly is the readEntry encoder that encodeReadLazily
// replaced, kept word for word as the oracle of the tests below, but for
// where its fields come from: it kept, for every entry read, each key's
// encoding right after decoding (marshalKeep of the value as decoded,
// decoded again into a map). Here they are computed the same way from
// the value as decoded, which TestReadEntry_DecodedIsTheValueAsRead
// shows decoded() gives back.
func encodeReadEagerly(r *readEntry, v any, extra Extra) ([]byte, error) {
	enc, err := marshalKeep(v, extra)
	if err != nil || r == nil {
		return enc, err
	}
	var fields map[string]json.RawMessage
	if base, baseExtra, ok := r.decoded(); ok {
		if b, err := marshalKeep(base.Interface(), baseExtra); err == nil && json.Unmarshal(b, &fields) != nil {
			fields = nil
		}
	}
	if fields == nil {
		return enc, nil // the entry as read did not encode: a new entry
	}
	keys, vals, err := objectMembers(enc)
	if err != nil {
		return nil, err
	}
	cur := make(map[string]json.RawMessage, len(keys))
	changed := map[string]bool{}
	changedLower := map[string]bool{}
	for i, k := range keys {
		cur[k] = vals[i]
		if old, ok := fields[k]; !ok || !bytes.Equal(old, vals[i]) {
			changed[k] = true
			changedLower[foldKey(k)] = true
		}
	}
	removed := map[string]bool{}
	for k := range fields {
		if _, ok := cur[k]; !ok {
			removed[k] = true
			changedLower[foldKey(k)] = true
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return r.raw, nil
	}
	rawKeys, rawVals, err := objectMembers(r.raw)
	if err != nil {
		return enc, nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	write := memberWriter(&buf, &first)
	written := map[string]bool{}
	for i, k := range rawKeys {
		_, known := cur[k]
		switch {
		case changed[k]:
			write(k, cur[k])
			written[k] = true
		case removed[k]:
		case !known && changedLower[foldKey(k)]:
		default:
			write(k, rawVals[i])
		}
	}
	for _, k := range keys {
		if changed[k] && !written[k] {
			write(k, cur[k])
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// withEagerEntries runs f with every entry read encoded by the oracle.
func withEagerEntries(f func()) {
	saved := encodeRead
	encodeRead, unboxedOff = encodeReadEagerly, true
	defer func() { encodeRead, unboxedOff = saved, false }()
	f()
}

// readEntries lists the entries (structs that remember how they were
// read) reachable from v, addressable, in walk order.
func readEntries(v reflect.Value) []reflect.Value {
	var out []reflect.Value
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > 32 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), depth+1)
			}
		case reflect.Struct:
			if f, ok := v.Type().FieldByName("read"); ok && f.Type == readEntryType && v.CanAddr() {
				out = append(out, v)
			}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i), depth+1)
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// readOf is the readEntry of the entry e, or nil.
func readOf(e reflect.Value) *readEntry {
	f := e.FieldByName("read")
	if f.IsNil() {
		return nil
	}
	return (*readEntry)(f.UnsafePointer())
}

// entryView is the entry e as its MarshalJSON hands it to encode: its
// own readAs for a rereader, else the struct itself, and its Extra.
func entryView(e reflect.Value) (reflect.Value, Extra) {
	if rr, ok := e.Addr().Interface().(rereader); ok {
		v, extra := rr.readAs()
		return reflect.ValueOf(v), extra
	}
	return e, e.FieldByName("Extra").Interface().(Extra)
}

// entryCorpus is every document of the fixtures and of the benchmark
// projects, with the model that reads it.
func entryCorpus(t testing.TB) []struct {
	name   string
	decode func([]byte) (any, error)
	doc    []byte
} {
	type doc = struct {
		name   string
		decode func([]byte) (any, error)
		doc    []byte
	}
	var out []doc
	for p, b := range decodeOnceCorpus(t) {
		if dec, ok := fileModels[filepath.Base(p)]; ok {
			out = append(out, doc{p, dec, b})
		}
	}
	for _, cycles := range []int{3, 2000} {
		for name, b := range benchFiles(cycles) {
			if dec, ok := fileModels[filepath.Base(name)]; ok {
				out = append(out, doc{fmt.Sprintf("cycle %d: %s", cycles, name), dec, b})
			}
		}
	}
	for _, tc := range extraKeyDocs {
		out = append(out, doc{tc.name, tc.decode, []byte(tc.doc)})
	}
	for name, b := range rereadDocs {
		out = append(out, doc{name, fileModels[name], []byte(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// rereadDocs hold entries whose type changes the value after decoding
// it (a nil list made empty, a field filled from another key, a cycle_id
// read from a string): what a write compares with is the value after.
var rereadDocs = map[string]string{
	CostLedgerFile: `{"date": "2026-03-01", "entries": [{"cycle_id": 3, "estimated_usd": 0.02},
		{"cycle_id": "#4", "skill": "/s", "chain": null}, {"cycle_id": 5.0, "estimated_usd": 1}], "total_estimated_usd": 1.02}`,
	GoalsFile: `{"goals": [{"id": "g1", "name": "Named", "current": 3, "target": 10}, {"id": "g2", "title": "T", "name": "N"}]}`,
	PrinciplesFile: `{"principles": [{"id": "P001", "principle": "From the state design", "source_ids": ["2026-W10"],
		"last_validated": "2026-03-02T00:00:00Z", "validation_count": 2}, {"text": "t", "source_episodes": null}]}`,
	StateFile:   `{"cycle_count": 2, "decision_log": [{"cycle": 1, "action": "skip"}, {"cycle": 2, "chain_executed": null, "scores": {"a": 1}}]}`,
	MetricsFile: `{"counters": {"total_cycles": 4, "current_streak": 1}, "domain_executions": {"a": 2}}`,
}

// Decoding an entry's remembered bytes again gives the value as it was
// read: the value every write compares the entry with.
func TestReadEntry_DecodedIsTheValueAsRead(t *testing.T) {
	n := 0
	for _, d := range entryCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		for _, e := range readEntries(reflect.ValueOf(v)) {
			r := readOf(e)
			if r == nil {
				continue
			}
			base, baseExtra, ok := r.decoded()
			if !ok {
				t.Fatalf("%s: %s read from %s does not decode again", d.name, e.Type(), r.raw)
			}
			view, extra := entryView(e)
			if !sameEntry(base, view) || !sameValue(reflect.ValueOf(baseExtra), reflect.ValueOf(extra)) {
				t.Fatalf("%s: %s decoded again\n%+v %v\nis not the value read\n%+v %v", d.name, e.Type(), base, baseExtra, view, extra)
			}
			n++
		}
	}
	if n < 200 {
		t.Fatalf("only %d entries compared", n)
	}
}

// entryChanges are the changes made to one field of an entry before it
// is written again: each gives the field's new value, or !ok to skip.
var entryChanges = []func(f reflect.Value) (reflect.Value, bool){
	func(f reflect.Value) (reflect.Value, bool) { return reflect.Zero(f.Type()), !f.IsZero() },
	func(f reflect.Value) (reflect.Value, bool) {
		n := reflect.New(f.Type()).Elem()
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			n.SetInt(f.Int() + 1)
		case reflect.Float64:
			n.SetFloat(f.Float() + 0.25)
		case reflect.String:
			n.SetString(f.String() + "·x")
		case reflect.Bool:
			n.SetBool(!f.Bool())
		case reflect.Pointer:
			if !f.IsNil() {
				return n, false
			}
			n.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			if f.Type() == rawType {
				n.SetBytes([]byte(`{"changed":true}`))
				break
			}
			n.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, f.Len()+1), reflect.Zero(f.Type().Elem())))
		case reflect.Map:
			if f.Type().Key().Kind() != reflect.String {
				return n, false
			}
			n.Set(reflect.MakeMap(f.Type()))
			for it := f.MapRange(); it.Next(); {
				n.SetMapIndex(it.Key(), it.Value())
			}
			if f.Type() == extraType {
				n.SetMapIndex(reflect.ValueOf("x_added"), reflect.ValueOf(json.RawMessage(`[1, 2]`)))
			} else {
				n.SetMapIndex(reflect.ValueOf("k_added").Convert(f.Type().Key()), reflect.Zero(f.Type().Elem()))
			}
		default:
			return n, false
		}
		return n, true
	},
	// A zero written as -0: equal to 0, but written "-0".
	func(f reflect.Value) (reflect.Value, bool) {
		if f.Kind() != reflect.Float64 || f.Float() != 0 {
			return f, false
		}
		n := reflect.New(f.Type()).Elem()
		n.SetFloat(math.Copysign(0, -1))
		return n, true
	},
}

// Every file, unchanged and with each field of its first and last
// entries changed in turn, is written by the encoder that decodes an
// entry's bytes again exactly as by the one that kept each entry's
// encoding from when it was read.
func TestReadEntry_EncodesAsTheOracle(t *testing.T) {
	compared := 0
	for _, d := range entryCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		sameAsEagerOracle(t, d.name, v)
		entries := readEntries(reflect.ValueOf(v))
		if len(entries) == 0 {
			continue
		}
		for _, at := range []int{0, len(entries) - 1} {
			for fi := 0; fi < entries[at].NumField(); fi++ {
				if !entries[at].Type().Field(fi).IsExported() {
					continue
				}
				for ci, change := range entryChanges {
					v, _ := d.decode(d.doc)
					e := readEntries(reflect.ValueOf(v))[at]
					nv, ok := change(e.Field(fi))
					if !ok {
						continue
					}
					e.Field(fi).Set(nv)
					sameAsEagerOracle(t, fmt.Sprintf("%s: entry %d, %s changed (%d)", d.name, at, e.Type().Field(fi).Name, ci), v)
					compared++
				}
			}
		}
	}
	if compared < 500 {
		t.Fatalf("only %d changes compared", compared)
	}
}

// sameAsEagerOracle fails unless v (a pointer to a decoded file) encodes
// alike with both entry encoders.
func sameAsEagerOracle(t *testing.T, name string, v any) {
	t.Helper()
	got, gotErr := encodeJSON(v)
	var want []byte
	var wantErr error
	withEagerEntries(func() { want, wantErr = encodeJSON(v) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("%s: writes\n%s (%v)\nthe oracle writes\n%s (%v)", name, got, gotErr, want, wantErr)
	}
}
