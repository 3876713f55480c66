package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/config"
)

// Tolerant reading. One value of the wrong type in an evolve file (a
// pr_number written "#29", a delta written "0.5") must not cost the file:
// the entry is read field by field, the value is coerced where its meaning
// is unambiguous or else left out of the computation, and it stays in the
// file as it was written (in the entry's Extra, under its own key) until
// the program sets that field to a new value. An element of a list that
// cannot be read at all (a string among the entries of a log) is left out
// the same way, and stays in the list even after the program changes it
// (see keepUnreadable). Only a file that is not JSON, or whose top level
// is not an object, is corrupt.

// fieldInfo is one JSON-visible field of a struct.
type fieldInfo struct {
	index int
	name  string // the key the field is written under
	typ   reflect.Type
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo, by folded key

// jsonFields maps the folded JSON key of every exported, encoded field of
// the struct type t to the field. Unexported fields are not keys:
// encoding/json neither reads nor writes them.
func jsonFields(t reflect.Type) map[string]fieldInfo {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]fieldInfo)
	}
	fields := map[string]fieldInfo{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[foldKey(name)] = fieldInfo{index: i, name: name, typ: f.Type}
	}
	fieldCache.Store(t, fields)
	return fields
}

// foldKey folds a key the way encoding/json matches keys to fields
// (case-insensitively, each rune to the smallest of its fold set), so
// that every key the decoder would take for a field is recognised as it.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		b.WriteRune(r)
	}
	return b.String()
}

// decodeFields is unmarshalKeep's reading of an object that json.Unmarshal
// refused: each member on its own. A member naming a field is read with
// readLoose; when it is not read exactly it is kept in extra under its own
// key, so that marshalKeep writes it back as it was while the field still
// holds what was read from it. As with encoding/json, the last member
// naming a field wins. keys and vals are the object's members in order.
func decodeFields(keys []string, vals []json.RawMessage, v any, extra *Extra) {
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	fields := jsonFields(rv.Type())
	out := Extra{}
	keptFor := map[int]string{}
	for i, k := range keys {
		f, ok := fields[foldKey(k)]
		if !ok {
			out[k] = vals[i]
			continue
		}
		fv, exact, ok := readLoose(vals[i], f.typ, "", nil)
		if !ok {
			fv = reflect.Zero(f.typ)
		}
		rv.Field(f.index).Set(fv)
		if old, had := keptFor[f.index]; had {
			delete(out, old)
			delete(keptFor, f.index)
		}
		if !exact {
			out[k] = vals[i]
			keptFor[f.index] = k
		}
	}
	if len(out) == 0 {
		out = nil
	}
	*extra = out
}

// readLoose decodes raw into a value of type t as far as it can. exact is
// true when json.Unmarshal accepts it as it is. Otherwise a scalar is
// coerced where its meaning is unambiguous (see looseInt, looseFloat,
// looseBool; a number where a string is expected is read as its digits),
// an array or an object is read element by element leaving out what
// cannot be read, and ok is false when nothing usable remains (v is then
// the zero value). report, when not nil, hears of every value not taken as
// written, with its JSON pointer (ptr and below).
func readLoose(raw json.RawMessage, t reflect.Type, ptr string, report func(ptr, msg string)) (v reflect.Value, exact, ok bool) {
	pv := reflect.New(t)
	if json.Unmarshal(raw, pv.Interface()) == nil {
		return pv.Elem(), true, true
	}
	if report == nil {
		report = func(string, string) {}
	}
	zero := reflect.Zero(t)
	tr := bytes.TrimSpace(raw)
	show := showJSONValue(tr)
	notUsed := func(what string) (reflect.Value, bool, bool) {
		report(ptr, fmt.Sprintf("%s is not %s; not used, and kept in the file as written", show, what))
		return zero, false, false
	}
	coerced := func(what, as string) {
		if len(tr) > 0 && tr[0] == '"' {
			report(ptr, fmt.Sprintf("%s is a string, not %s; read as %s", show, what, as))
			return
		}
		report(ptr, fmt.Sprintf("%s is not %s; read as %s", show, what, as))
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Pointer:
		ev, _, ok := readLoose(raw, t.Elem(), ptr, report)
		if !ok {
			return zero, false, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(ev)
		return p, false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := looseInt(tr)
		if !ok || out.OverflowInt(n) {
			return notUsed("an integer")
		}
		out.SetInt(n)
		coerced("an integer", strconv.FormatInt(n, 10))
		return out, false, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := looseInt(tr)
		if !ok || n < 0 || out.OverflowUint(uint64(n)) {
			return notUsed("a non-negative integer")
		}
		out.SetUint(uint64(n))
		coerced("an integer", strconv.FormatInt(n, 10))
		return out, false, true
	case reflect.Float32, reflect.Float64:
		f, ok := looseFloat(tr)
		if !ok {
			return notUsed("a number")
		}
		if out.OverflowFloat(f) {
			f = math.Copysign(math.MaxFloat32, f)
		}
		out.SetFloat(f)
		coerced("a number", num(f))
		return out, false, true
	case reflect.Bool:
		b, ok := looseBool(tr)
		if !ok {
			return notUsed("true or false")
		}
		out.SetBool(b)
		coerced("true or false", strconv.FormatBool(b))
		return out, false, true
	case reflect.String:
		if len(tr) > 0 && (tr[0] == '-' || (tr[0] >= '0' && tr[0] <= '9')) {
			out.SetString(string(tr))
			coerced("a string", strconv.QuoteToASCII(string(tr)))
			return out, false, true
		}
		return notUsed("a string")
	case reflect.Slice:
		var elems []json.RawMessage
		if len(tr) == 0 || tr[0] != '[' || json.Unmarshal(tr, &elems) != nil {
			return notUsed("an array")
		}
		s := reflect.MakeSlice(t, 0, len(elems))
		for i, e := range elems {
			if ev, _, ok := readLoose(e, t.Elem(), ptr+"/"+strconv.Itoa(i), report); ok {
				s = reflect.Append(s, ev)
			}
		}
		return s, false, true
	case reflect.Map:
		keys, vals, err := objectMembers(tr)
		if err != nil || t.Key().Kind() != reflect.String {
			return notUsed("an object")
		}
		m := reflect.MakeMapWithSize(t, len(keys))
		for i, k := range keys {
			kv := reflect.ValueOf(k).Convert(t.Key())
			if ev, _, ok := readLoose(vals[i], t.Elem(), ptr+config.Pointer(k), report); ok {
				m.SetMapIndex(kv, ev)
			} else {
				m.SetMapIndex(kv, reflect.Value{})
			}
		}
		return m, false, true
	case reflect.Struct:
		keys, vals, err := objectMembers(tr)
		if err != nil {
			return notUsed("an object")
		}
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			// Its own decoder refused an object: nothing to read field
			// by field here.
			return notUsed("readable")
		}
		fields := jsonFields(t)
		for i, k := range keys {
			f, ok := fields[foldKey(k)]
			if !ok {
				continue
			}
			fv, _, ok := readLoose(vals[i], f.typ, ptr+config.Pointer(k), report)
			if !ok {
				fv = reflect.Zero(f.typ)
			}
			out.Field(f.index).Set(fv)
		}
		return out, false, true
	}
	return notUsed("of the expected kind")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// intPattern is an integer as a string may spell one: digits, with an
// optional sign or a leading "#" (a PR or a cycle number, "#29").
var intPattern = regexp.MustCompile(`^(?:#|[+-])?[0-9]{1,18}$`)

// looseInt reads an integer written as a string ("12", "#29", "-3") or as
// a whole number in another notation (12.0, 1.2e1).
func looseInt(t []byte) (int64, bool) {
	if len(t) == 0 {
		return 0, false
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
		if !intPattern.MatchString(s) {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
		return n, err == nil
	}
	var f float64
	if json.Unmarshal(t, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// floatPattern is a decimal number as a string may spell one: no hex,
// no "Inf" or "NaN", no digit separators, no unit.
var floatPattern = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// looseFloat reads a number written as a string ("0.8"), or a number too
// large for a float64 (1e309), which reads as the largest float of its
// sign: out of range, but never taken for 0 (the sanitizer then clamps it).
func looseFloat(t []byte) (float64, bool) {
	if len(t) == 0 {
		return 0, false
	}
	s := string(t)
	if t[0] == '"' {
		if json.Unmarshal(t, &s) != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
		if len(s) > 64 || !floatPattern.MatchString(s) {
			return 0, false
		}
	} else if !floatPattern.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if math.IsInf(f, 0) {
		return math.Copysign(math.MaxFloat64, f), true
	}
	return f, err == nil
}

// looseBool reads "true" and "false" written as strings, in any case.
func looseBool(t []byte) (bool, bool) {
	var s string
	if len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// keptUnchanged says whether the field value cur is still what was read
// from raw, the value kept for it: then raw is written back, as it was.
// Otherwise the program set the field since, and its value is written.
func keptUnchanged(cur reflect.Value, raw json.RawMessage, t reflect.Type) bool {
	was, _, ok := readLoose(raw, t, "", nil)
	if !ok {
		was = reflect.Zero(t)
	}
	if isEmptyValue(cur) && isEmptyValue(was) {
		// A MarshalJSON that writes a nil list as [] has not changed it.
		return true
	}
	return reflect.DeepEqual(cur.Interface(), was.Interface())
}

// isEmptyValue is a zero value, or an empty list or map.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

// keptFields splits extra into the keys it holds for fields of the struct
// value rv whose value is still the one read (field name -> extra key),
// and the other keys, sorted. A key kept for a field the program has set
// since is in neither: the new value replaces it.
func keptFields(rv reflect.Value, extra Extra) (kept map[string]string, rest []string) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fields := jsonFields(rv.Type())
	for _, k := range keys {
		f, ok := fields[foldKey(k)]
		if !ok {
			rest = append(rest, k)
			continue
		}
		if _, dup := kept[f.name]; dup {
			continue
		}
		if keptUnchanged(rv.Field(f.index), extra[k], f.typ) {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[f.name] = k
		}
	}
	return kept, rest
}

// maxLooseWarnings bounds the warnings about values not taken as written,
// per file: the rest are counted in one more line.
const maxLooseWarnings = 5

// looseWarnings lists, for the decoded file v, every value kept because
// it was not read as written: "<JSON pointer>: <value> is not <kind>;
// read as <value>" or "...; not used, and kept in the file as written".
// At most limit are listed, then a count of the others.
func looseWarnings(v any, limit int) []string {
	var all []string
	walkLoose(reflect.ValueOf(v), "", func(ptr, msg string) {
		if ptr == "" {
			ptr = "(root)"
		}
		all = append(all, ptr+": "+msg)
	})
	if len(all) > limit {
		n := len(all) - limit
		all = append(all[:limit:limit], fmt.Sprintf("%d more values not taken as written", n))
	}
	return all
}

// walkLoose visits every struct reachable from v (through pointers,
// slices and maps, by JSON names) and reports the values its Extra keeps
// for its own fields, with their pointers.
// filePositioner is a file's type that knows where in the file each
// element of a list field was read, when that is not the list's own
// numbering (the cost ledger sets entries without a cycle id apart; the
// action queue moves an item marked in progress out of pending): the
// JSON pointer of each element, relative to the value's own, or nil.
type filePositioner interface {
	filePointers(field string) []string
}

func asFilePositioner(v reflect.Value) (filePositioner, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	fp, ok := v.Interface().(filePositioner)
	return fp, ok
}

func walkLoose(v reflect.Value, ptr string, report func(ptr, msg string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkLoose(v.Elem(), ptr, report)
		}
	case reflect.Struct:
		t := v.Type()
		fields := jsonFields(t)
		var extra Extra
		if f, ok := t.FieldByName("Extra"); ok && f.Type == extraType {
			extra = v.FieldByIndex(f.Index).Interface().(Extra)
		}
		keptRaw := map[int]json.RawMessage{}
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f, ok := fields[foldKey(k)]; ok {
				readLoose(extra[k], f.typ, ptr+config.Pointer(k), report)
				keptRaw[f.index] = extra[k]
			}
		}
		names := make([]string, 0, len(fields))
		for n := range fields {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return fields[names[i]].index < fields[names[j]].index })
		for _, n := range names {
			f := fields[n]
			if f.typ == extraType || f.typ == rawType {
				continue
			}
			fv := v.Field(f.index)
			if fp, ok := asFilePositioner(v); ok && fv.Kind() == reflect.Slice {
				if at := fp.filePointers(f.name); len(at) == fv.Len() {
					for i := 0; i < fv.Len(); i++ {
						walkLoose(fv.Index(i), ptr+at[i], report)
					}
					continue
				}
			}
			if raw, ok := keptRaw[f.index]; ok && fv.Kind() == reflect.Slice {
				// The elements read from a list partly read are numbered
				// as the file numbers them.
				walkSliceAt(fv, raw, ptr+config.Pointer(f.name), report)
				continue
			}
			walkLoose(fv, ptr+config.Pointer(f.name), report)
		}
	case reflect.Slice:
		if v.Type() == rawType || v.Type() == extraType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			walkLoose(v.Index(i), ptr+"/"+strconv.Itoa(i), report)
		}
	case reflect.Map:
		switch v.Type().Elem().Kind() {
		case reflect.Struct, reflect.Slice, reflect.Pointer, reflect.Map:
		default:
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		for _, k := range keys {
			walkLoose(v.MapIndex(k), ptr+"/"+escapePointer(fmt.Sprint(k.Interface())), report)
		}
	}
}

// walkSliceAt walks the elements of a list read in part from raw, each
// under its index in raw.
func walkSliceAt(s reflect.Value, raw json.RawMessage, ptr string, report func(ptr, msg string)) {
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	var at []int
	for i, e := range elems {
		if _, _, ok := readLoose(e, s.Type().Elem(), "", nil); ok {
			at = append(at, i)
		}
	}
	for i := 0; i < s.Len(); i++ {
		idx := i
		if len(at) == s.Len() {
			idx = at[i]
		}
		walkLoose(s.Index(i), ptr+"/"+strconv.Itoa(idx), report)
	}
}
