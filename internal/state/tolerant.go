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
	// ASCII without a lower-case letter folds to itself; other ASCII to
	// its upper case, a byte at a time.
	ascii, lower := true, false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			ascii = false
			break
		} else if 'a' <= c && c <= 'z' {
			lower = true
		}
	}
	if ascii {
		if !lower {
			return s
		}
		u := []byte(s)
		for i, c := range u {
			if 'a' <= c && c <= 'z' {
				u[i] = c - ('a' - 'A')
			}
		}
		return string(u)
	}
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
var intPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:#|[+-])?[0-9]{1,18}$`) })

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
		if !intPattern().MatchString(s) {
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
var floatPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
})

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
		if len(s) > 64 || !floatPattern().MatchString(s) {
			return 0, false
		}
	} else if !floatPattern().MatchString(s) {
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
	a := getPathArena()
	defer putPathArena(a)
	walkLoose(reflect.ValueOf(v), nil, a, func(ptr, msg string) {
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

// filePositioner is a file's type that knows where in the file each
// element of a list field was read, when that is not the list's own
// numbering (the cost ledger sets entries without a cycle id apart; the
// action queue moves an item marked in progress out of pending): the
// JSON pointer of each element, relative to the value's own, or nil.
type filePositioner interface {
	filePointers(field string) []string
}

var filePositionerType = reflect.TypeFor[filePositioner]()

// ptrPath is a JSON pointer being walked: its last step and the steps
// above it (nil is the root). A walk visits every value of a file and
// reports few, so the pointer is spelled out only for a report.
type ptrPath struct {
	up   *ptrPath
	kind uint8 // pathKey, pathIndex or pathRaw
	tok  string
	idx  int
}

const (
	pathKey   = iota // tok is an object key, escaped when spelled
	pathIndex        // idx is an array index
	pathRaw          // tok is a pointer suffix, spelled as it is
)

// String spells the pointer, "" for the root.
func (p *ptrPath) String() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	p.write(&b)
	return b.String()
}

// write spells the pointer into b, root first. Recursive, so that no step
// is kept anywhere: the steps of a walk, made for every field and
// element visited, stay on the walker's stack.
func (p *ptrPath) write(b *strings.Builder) {
	if p == nil {
		return
	}
	p.up.write(b)
	switch p.kind {
	case pathKey:
		b.WriteString(config.Pointer(p.tok))
	case pathIndex:
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(p.idx))
	default:
		b.WriteString(p.tok)
	}
}

// pathArena hands out the steps of one walk, last in, first out: a walk
// makes a step for every field and element it visits and keeps none
// past the visit, so a few dozen nodes, reused, serve it whole instead
// of one allocation each. Past its size (a nesting that deep) a step is
// allocated as before.
type pathArena struct {
	nodes [64]ptrPath
	top   int
}

// pathArenas are arenas for the walks to reuse: a load walks every
// file twice (walkLoose, clampFloats), and each walk's arena is a few
// kilobytes that no step outlives (a pointer is spelled out when it is
// reported).
var pathArenas = sync.Pool{New: func() any { return new(pathArena) }}

// getPathArena is an empty arena from pathArenas.
func getPathArena() *pathArena { return pathArenas.Get().(*pathArena) }

// putPathArena gives a back, emptied: every step of a walk is popped by
// its end, but a walk cut short by a panic may have left some.
func putPathArena(a *pathArena) {
	clear(a.nodes[:])
	a.top = 0
	pathArenas.Put(a)
}

// push is a new step below up.
func (a *pathArena) push(up *ptrPath, kind uint8, tok string, idx int) *ptrPath {
	if a.top >= len(a.nodes) {
		return &ptrPath{up: up, kind: kind, tok: tok, idx: idx}
	}
	n := &a.nodes[a.top]
	a.top++
	*n = ptrPath{up: up, kind: kind, tok: tok, idx: idx}
	return n
}

// pop gives back n, the step pushed last, once its visit is over.
func (a *pathArena) pop(n *ptrPath) {
	if a.top > 0 && n == &a.nodes[a.top-1] {
		a.top--
		a.nodes[a.top] = ptrPath{}
	}
}

// looseStruct is how walkLoose visits a struct type: where its Extra is
// (nil when it has none), the fields it descends into, in field order
// (those whose values can hold no Extra left out), and whether it numbers
// its lists itself (filePositioner).
type looseStruct struct {
	extra   []int
	fields  []fieldInfo
	fieldOf map[string]fieldInfo // every JSON field, by folded key
	fp      bool
}

var looseStructs sync.Map // reflect.Type -> *looseStruct

func looseStructOf(t reflect.Type) *looseStruct {
	if v, ok := looseStructs.Load(t); ok {
		return v.(*looseStruct)
	}
	ls := &looseStruct{fieldOf: jsonFields(t), fp: t.Implements(filePositionerType)}
	if f, ok := t.FieldByName("Extra"); ok && f.Type == extraType {
		ls.extra = f.Index
	}
	for _, f := range ls.fieldOf {
		if f.typ == extraType || f.typ == rawType || !mayHoldLoose(f.typ) {
			continue
		}
		ls.fields = append(ls.fields, f)
	}
	sort.Slice(ls.fields, func(i, j int) bool { return ls.fields[i].index < ls.fields[j].index })
	looseStructs.Store(t, ls)
	return ls
}

var looseReach sync.Map // reflect.Type -> bool

// mayHoldLoose says whether a value of type t can hold, where walkLoose
// looks, a struct with an Extra field: the only place a value not taken
// as written is kept. An interface may hold anything.
func mayHoldLoose(t reflect.Type) bool {
	return reachesType(&looseReach, t, map[reflect.Type]bool{}, func(t reflect.Type) (bool, []reflect.Type) {
		switch t.Kind() {
		case reflect.Interface:
			return true, nil
		case reflect.Pointer:
			return false, []reflect.Type{t.Elem()}
		case reflect.Slice:
			if t == rawType || t == extraType {
				return false, nil
			}
			return false, []reflect.Type{t.Elem()}
		case reflect.Map:
			switch t.Elem().Kind() {
			case reflect.Struct, reflect.Slice, reflect.Pointer, reflect.Map:
				return false, []reflect.Type{t.Elem()}
			}
		case reflect.Struct:
			if f, ok := t.FieldByName("Extra"); ok && f.Type == extraType {
				return true, nil
			}
			var next []reflect.Type
			for _, f := range jsonFields(t) {
				if f.typ != extraType && f.typ != rawType {
					next = append(next, f.typ)
				}
			}
			return false, next
		}
		return false, nil
	})
}

// reachesType says whether t, or a type reachable from it by step, is one
// step says yes to (cached in cache). A type met again while it is being
// answered counts as yes: a recursive type is walked, never wrongly
// skipped.
func reachesType(cache *sync.Map, t reflect.Type, visiting map[reflect.Type]bool, step func(reflect.Type) (bool, []reflect.Type)) bool {
	if v, ok := cache.Load(t); ok {
		return v.(bool)
	}
	if visiting[t] {
		return true
	}
	visiting[t] = true
	yes, next := step(t)
	for _, n := range next {
		if yes {
			break
		}
		yes = reachesType(cache, n, visiting, step)
	}
	delete(visiting, t)
	cache.Store(t, yes)
	return yes
}

// walkLoose visits every struct reachable from v (through pointers,
// slices and maps, by JSON names) and reports the values its Extra keeps
// for its own fields, with their pointers. Values whose type can hold no
// Extra are not visited.
func walkLoose(v reflect.Value, path *ptrPath, a *pathArena, report func(ptr, msg string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkLoose(v.Elem(), path, a, report)
		}
	case reflect.Struct:
		ls := looseStructOf(v.Type())
		var keptRaw map[int]json.RawMessage
		if ls.extra != nil {
			if extra := v.FieldByIndex(ls.extra).Interface().(Extra); len(extra) > 0 {
				keys := make([]string, 0, len(extra))
				for k := range extra {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if f, ok := ls.fieldOf[foldKey(k)]; ok {
						readLoose(extra[k], f.typ, (&ptrPath{up: path, kind: pathKey, tok: k}).String(), report)
						if keptRaw == nil {
							keptRaw = map[int]json.RawMessage{}
						}
						keptRaw[f.index] = extra[k]
					}
				}
			}
		}
		var fp filePositioner
		if ls.fp && v.CanInterface() {
			fp = v.Interface().(filePositioner)
		}
		for _, f := range ls.fields {
			fv := v.Field(f.index)
			if fp != nil && fv.Kind() == reflect.Slice {
				if at := fp.filePointers(f.name); len(at) == fv.Len() {
					for i := 0; i < fv.Len(); i++ {
						step := a.push(path, pathRaw, at[i], 0)
						walkLoose(fv.Index(i), step, a, report)
						a.pop(step)
					}
					continue
				}
			}
			step := a.push(path, pathKey, f.name, 0)
			if raw, ok := keptRaw[f.index]; ok && fv.Kind() == reflect.Slice {
				// The elements read from a list partly read are numbered
				// as the file numbers them.
				walkSliceAt(fv, raw, step, a, report)
			} else {
				walkLoose(fv, step, a, report)
			}
			a.pop(step)
		}
	case reflect.Slice:
		if v.Type() == rawType || v.Type() == extraType || !mayHoldLoose(v.Type().Elem()) {
			return
		}
		for i := 0; i < v.Len(); i++ {
			step := a.push(path, pathIndex, "", i)
			walkLoose(v.Index(i), step, a, report)
			a.pop(step)
		}
	case reflect.Map:
		switch v.Type().Elem().Kind() {
		case reflect.Struct, reflect.Slice, reflect.Pointer, reflect.Map:
		default:
			return
		}
		if !mayHoldLoose(v.Type().Elem()) {
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		for _, k := range keys {
			step := a.push(path, pathKey, fmt.Sprint(k.Interface()), 0)
			walkLoose(v.MapIndex(k), step, a, report)
			a.pop(step)
		}
	}
}

// walkSliceAt walks the elements of a list read in part from raw, each
// under its index in raw.
func walkSliceAt(s reflect.Value, raw json.RawMessage, path *ptrPath, a *pathArena, report func(ptr, msg string)) {
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
		step := a.push(path, pathIndex, "", idx)
		walkLoose(s.Index(i), step, a, report)
		a.pop(step)
	}
}
