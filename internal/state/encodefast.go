package state

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The encoders below write exactly what encoding/json writes (with HTML
// escaping off) for the values every state file is made of, with less
// work: encoding/json checks and compacts the output of each value that
// encodes itself — every entry of a list, then the whole file, which
// holds them all, again — with a scanner that costs more than the
// encoding. Here each entry's output is checked and compacted once, by
// the package's own scanner (the grammar encoding/json reads, see
// scanObject), and the file once more as a whole. Whatever they are not
// certain to write alike — a struct type encoding/json reads in a way the
// plan below does not reproduce, output that does not scan — is left to
// encoding/json, which then writes it, or fails, as it always did.

// encodeDocument is encodeJSON for a value that encodes itself (every
// state file's type): its MarshalJSON output, checked by the package's
// scanner, compacted when it holds whitespace between its tokens, then
// indented. ok is false when v is anything else, or its output is not
// JSON: encodeJSON then encodes v with encoding/json, for its error.
func encodeDocument(v any) ([]byte, bool) {
	if encodeFastOff {
		return nil, false
	}
	if b, ok := encodeSpliced(v); ok {
		return b, true
	}
	m, ok := v.(json.Marshaler)
	if !ok {
		return nil, false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, false
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, false
	}
	start := skipSpace(b, 0)
	end, ok := scanValue(b, start, 0)
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
	}
	// Usually compact already (the entries were compacted one by one):
	// then it is indented as it is, without a compacted copy. Indenting
	// skips blanks, so whether it was compact is known once it is done;
	// when it was not, the indentation's bound (a share of the input's
	// size) is taken from the compacted copy, as it always was.
	c := b[start:end]
	if !compactCheckFirst {
		out, blanks := indentCounting(c)
		if blanks == 0 {
			return out, true
		}
		// Indenting skipped the blanks: out is the compacted copy's
		// indentation too, unless the bound on indentation (a share of
		// the input's size) made either pass write compact — which
		// neither did when all the indentation out holds is within the
		// compacted copy's bound.
		if compact := len(c) - blanks; !blanksRedoOn && len(out)-compact <= compact+64<<10 {
			return out, true
		}
	} else if !hasSpaceBetweenTokens(c) {
		return indentBounded(c), true
	}
	return indentBounded(appendStripped(make([]byte, 0, len(c)), c)), true
}

// blanksRedoOn, set by the tests, indents a document that held blanks
// again from its compacted copy, as encodeDocument did before it kept
// the first indentation.
var blanksRedoOn bool

// compactCheckFirst, set by the tests, looks for blanks in a document
// before indenting it (hasSpaceBetweenTokens): the order indentCounting
// replaced, kept as its oracle.
var compactCheckFirst bool

// hasSpaceBetweenTokens says whether the valid JSON value b holds
// whitespace outside its strings.
func hasSpaceBetweenTokens(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case ' ', '\t', '\n', '\r':
			return true
		}
	}
	return false
}

// appendCompactValid appends src, one JSON value with only whitespace
// around it, to dst without its insignificant whitespace: what
// encoding/json makes of a MarshalJSON output. ok is false (dst
// unchanged) when src is not such a value.
func appendCompactValid(dst, src []byte) ([]byte, bool) {
	start := skipSpace(src, 0)
	end, ok := scanValue(src, start, 0)
	if !ok || skipSpace(src, end) != len(src) {
		return dst, false
	}
	return appendStripped(dst, src[start:end]), true
}

// appendStripped appends src, a valid JSON value, without the whitespace
// between its tokens.
func appendStripped(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			if end := stringEnd(src, i); end >= 0 {
				i = end - 1
			} else {
				i = len(src)
			}
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			// An indented file's blanks come in runs (a line end and
			// the next line's indentation): the run goes at once.
			for i+1 < len(src) && isBlank(src[i+1]) {
				i++
			}
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// encodeFastOff, set by the tests, leaves every value to encoding/json:
// the encoding the functions above replaced, kept as their oracle.
var encodeFastOff bool

// marshalStruct is marshalNoEscape(v) for v an alias struct value: by
// its field plan when it has one (see encPlanFor), else by encoding/json.
func marshalStruct(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Struct && !encodeFastOff {
		if p := encPlanFor(rv.Type()); p != nil {
			// Sized as the type's last encoding was: a file written twice
			// in a cycle (state.json) grows its buffer once.
			if b, ok := p.append(make([]byte, 0, min(max(256, p.lastLen.Load()*9/8), 256<<10)), rv); ok {
				p.lastLen.Store(int64(len(b)))
				return b, nil
			}
		}
	}
	return marshalNoEscape(v)
}

// encKind is how encPlan encodes a field.
type encKind uint8

const (
	encGeneric encKind = iota // marshalNoEscape of the field's value
	encString
	encBool
	encInt
	encUint
	encEntries // a list of a struct type with its own MarshalJSON
)

// encField is a field of an encPlan: its index, its `"name":` and how
// it is written.
type encField struct {
	index     int
	key       []byte
	omitEmpty bool
	kind      encKind
}

// encPlan is how marshalStruct writes one struct type: its fields in
// encoding/json's order, each with its name and options.
type encPlan struct {
	fields []encField
	// lastLen is the length of the type's last encoding; lastIndented,
	// of its last indented one (encodeSpliced).
	lastLen      atomic.Int64
	lastIndented atomic.Int64
}

var encPlans sync.Map // reflect.Type -> *encPlan (nil: left to encoding/json)

// encPlanFor is t's encPlan, nil when encoding/json would write t in a
// way the plan does not reproduce: an embedded field (its fields are
// promoted), a ",string" or "omitzero" option, a name with characters
// encoding/json does not take from a tag or would escape, two fields of
// one name (encoding/json drops both).
func encPlanFor(t reflect.Type) *encPlan {
	if p, ok := encPlans.Load(t); ok {
		return p.(*encPlan)
	}
	p := buildEncPlan(t)
	encPlans.Store(t, p)
	return p
}

func buildEncPlan(t reflect.Type) *encPlan {
	if implementsAny(t) {
		return nil
	}
	p := &encPlan{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if !plainKey(name) {
			return nil
		}
		omitEmpty := false
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "":
			case "omitempty":
				omitEmpty = true
			default:
				// ",string", "omitzero" and anything unknown.
				return nil
			}
		}
		for _, g := range p.fields {
			if string(g.key[1:len(g.key)-2]) == name {
				return nil
			}
		}
		// A plain name needs no escaping: quoted, it is itself.
		p.fields = append(p.fields, encField{index: i, key: []byte(`"` + name + `":`), omitEmpty: omitEmpty, kind: encKindOf(f.Type)})
	}
	return p
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// implementsAny says whether encoding/json hands a value of type t, or
// of its pointer, to a method of t's.
func implementsAny(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)
}

// encKindOf is how encPlan writes a field of type t.
func encKindOf(t reflect.Type) encKind {
	if t.Kind() == reflect.Slice {
		e := t.Elem()
		if e.Kind() == reflect.Struct && e.Implements(marshalerType) && !implementsAny(t) {
			return encEntries
		}
		return encGeneric
	}
	if implementsAny(t) {
		return encGeneric
	}
	switch t.Kind() {
	case reflect.String:
		return encString
	case reflect.Bool:
		return encBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encUint
	}
	return encGeneric
}

// append writes the struct value v to dst as encoding/json does; ok is
// false when a value did not encode (encoding/json then says why).
func (p *encPlan) append(dst []byte, v reflect.Value) ([]byte, bool) {
	dst = append(dst, '{')
	first := true
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		if f.omitEmpty && omitsEmpty(fv) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.key...)
		var ok bool
		if dst, ok = f.appendValue(dst, fv); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendValue writes the field's value fv.
func (f *encField) appendValue(dst []byte, fv reflect.Value) ([]byte, bool) {
	switch f.kind {
	case encString:
		if s := fv.String(); plainString(s) {
			dst = append(dst, '"')
			dst = append(dst, s...)
			return append(dst, '"'), true
		}
	case encBool:
		return strconv.AppendBool(dst, fv.Bool()), true
	case encInt:
		return strconv.AppendInt(dst, fv.Int(), 10), true
	case encUint:
		return strconv.AppendUint(dst, fv.Uint(), 10), true
	case encEntries:
		if fv.IsNil() {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		readAt := readFieldIndex(fv.Type().Elem())
		for i := 0; i < fv.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			el := fv.Index(i)
			b, err := el.Addr().Interface().(json.Marshaler).MarshalJSON()
			if err != nil {
				return dst, false
			}
			if readAt >= 0 && !keptBytesOff && isKeptBytes(el.Field(readAt), b) {
				// An entry unchanged since it was read is its bytes as
				// read, which decoding them found to be one JSON value:
				// only their blanks go, with no second check.
				dst = appendStripped(dst, b)
				continue
			}
			var ok bool
			if dst, ok = appendCompactValid(dst, b); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	b, err := marshalNoEscape(fv.Interface())
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// keptBytesOff, set by the tests, checks the bytes of every entry as
// those of a new one: the encoding isKeptBytes shortens, kept as its
// oracle.
var keptBytesOff bool

// isKeptBytes says whether b, an entry's encoding, is the very bytes its
// record read (the field read, a *readEntry) holds — the same memory,
// not only the same text — with no blank at either end. A record is made
// only once its bytes decoded (the decoders check the whole value, or
// decode an element of a document the scanner checked), and nothing
// changes them after (entryBytes). So such a b is one valid JSON value
// with nothing around it, which appendCompactValid would only confirm.
// Anything else (a changed entry's new encoding, equal text elsewhere)
// is checked as before.
func isKeptBytes(read reflect.Value, b []byte) bool {
	if read.Kind() != reflect.Pointer || read.IsNil() || len(b) == 0 {
		return false
	}
	r := (*readEntry)(read.UnsafePointer())
	return len(r.raw) == len(b) && unsafe.SliceData(r.raw) == unsafe.SliceData(b) &&
		!isBlank(b[0]) && !isBlank(b[len(b)-1])
}

// isBlank is JSON's insignificant whitespace.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// plainString says whether encoding/json writes s as it is, between
// quotes: printable ASCII without a quote or a backslash.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// omitsEmpty is encoding/json's test for omitempty.
func omitsEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// noEscapeEncoder is a reusable encoder without HTML escaping.
type noEscapeEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var noEscapePool = sync.Pool{New: func() any {
	e := &noEscapeEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}
