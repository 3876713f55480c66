package state

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// interventionFields is Intervention without its methods: the value its
// decoding and encoding hand to the generic functions (unmarshalKeepIn,
// readEntry.encode), and so the type of the copy its readEntry keeps.
type interventionFields Intervention

// interventionKeys are the keys of an intervention in the order
// encoding/json writes them, each quoted as a plain name needs no
// escaping; ivOmitEmpty says which are left out when empty.
var (
	interventionKeys = [...]string{
		`"domain"`, `"delta"`, `"type"`, `"reason"`,
		`"created_at_cycle"`, `"expires_after_cycles"`, `"applied_count"`,
	}
	ivOmitEmpty = [len(interventionKeys)]bool{2: true, 3: true}
)

// ivValues is an intervention's members as encoding/json writes them:
// each key's value, nil for a key left out (omitempty).
type ivValues [len(interventionKeys)][]byte

// interventionFastOff, set by the tests, sends every intervention
// through the generic encoder (readEntry.encode), kept as the oracle of
// encodeFast.
var interventionFastOff bool

// encodeFast is Intervention.MarshalJSON for the entries every project
// holds — those without unknown keys, read from an object holding each
// of its keys once, spelled as written — without the generic encoder's
// reflection, encodings decoded again and maps: a thousand-domain
// project rewrites a thousand of them every cycle (their counts change).
// It writes what readEntry.encode writes: the bytes read when no field
// changed, else those bytes with each changed key's value replaced in
// place, keys now left out (omitempty) dropped, and keys newly written
// appended in field order. ok is false whenever that is not certain (the
// generic encoder then writes the entry, or fails, as it always did).
func (iv *Intervention) encodeFast() ([]byte, bool) {
	var l ivLayout
	if !iv.layout(&l) {
		return nil, false
	}
	if l.kept != nil {
		return l.kept, true
	}
	out := make([]byte, 0, l.size()+2)
	out = append(out, '{')
	for _, m := range l.members[:l.n] {
		out = appendMember(out, int(m.key), m.val)
	}
	return append(out, '}'), true
}

// ivLayout is what an intervention is written as: kept, its bytes as
// read, or else its n members in the order they are written, each an
// index of interventionKeys and its value.
type ivLayout struct {
	kept    []byte
	members [2 * len(interventionKeys)]ivMember
	n       int
	// buf holds the values of the fields as encoded now and as read.
	buf [384]byte
}

type ivMember struct {
	key int8
	val []byte
}

// add appends the member of key k.
func (l *ivLayout) add(k int, val []byte) {
	l.members[l.n] = ivMember{key: int8(k), val: val}
	l.n++
}

// size is the length of the members written compact, without the braces.
func (l *ivLayout) size() int {
	n := 0
	for _, m := range l.members[:l.n] {
		n += len(interventionKeys[m.key]) + 2 + len(m.val)
	}
	return n
}

// layout finds what readEntry.encode writes for iv: the bytes read when
// no field changed, else those bytes with each changed key's value
// replaced in place, keys now left out (omitempty) dropped, and keys
// newly written appended in field order. ok is false whenever that is not
// certain (the generic encoder then writes the entry, or fails, as it
// always did).
func (iv *Intervention) layout(l *ivLayout) bool {
	if interventionFastOff || len(iv.Extra) != 0 {
		return false
	}
	cur := (*interventionFields)(iv)
	r := iv.read
	if r == nil {
		var now ivValues
		if _, ok := cur.appendValues(l.buf[:0], &now); !ok {
			return false
		}
		for k, val := range now {
			if val != nil {
				l.add(k, val)
			}
		}
		return true
	}
	base, ok := r.base.(*interventionFields)
	if !ok || base == nil || len(r.baseExtra) != 0 {
		return false
	}
	if base.sameAs(cur) {
		// As readEntry.encode: nothing changed, the bytes read are written.
		l.kept = r.raw
		return true
	}
	var was, now ivValues
	buf, ok := cur.appendValues(l.buf[:0], &now)
	if !ok {
		return false
	}
	if _, ok = base.appendValuesBeside(buf, &was, cur, &now); !ok {
		return false
	}
	var changed, removed [len(interventionKeys)]bool
	diff := false
	for i := range now {
		switch {
		case now[i] != nil && (was[i] == nil || !bytes.Equal(was[i], now[i])):
			changed[i], diff = true, true
		case now[i] == nil && was[i] != nil:
			removed[i], diff = true, true
		}
	}
	if !diff {
		l.kept = r.raw
		return true
	}
	// The members as read: those of was, in field order, when the bytes
	// read are exactly what this program writes of them (any entry it
	// wrote); else found in the bytes.
	var read [len(interventionKeys)]ivMember
	nread := 0
	if ivWrittenAs(r.raw, &was, ivEntryDepth) || ivWrittenAs(r.raw, &was, -1) {
		for k, val := range was {
			if val != nil {
				read[nread] = ivMember{key: int8(k), val: val}
				nread++
			}
		}
	} else {
		members, ok := scanMembers(r.raw)
		if !ok || len(members) > len(read) {
			return false
		}
		for _, m := range members {
			k := interventionKeyIndex(m.quoted)
			if k < 0 {
				// A key spelled otherwise (a case variant, an escape) or
				// an unknown one: the generic encoder knows what each
				// means.
				return false
			}
			read[nread] = ivMember{key: int8(k), val: m.val}
			nread++
		}
	}
	var seen [len(interventionKeys)]bool
	for _, m := range read[:nread] {
		k := int(m.key)
		if seen[k] {
			// A key written twice: left to the generic encoder.
			return false
		}
		seen[k] = true
		switch {
		case changed[k]:
			l.add(k, now[k])
		case removed[k]:
		default:
			l.add(k, m.val)
		}
	}
	for k := range now {
		if changed[k] && !seen[k] {
			l.add(k, now[k])
		}
	}
	return true
}

// ivEntryDepth is the depth of an intervention in memos.json: an element
// of the document's "interventions" list.
const ivEntryDepth = 2

// ivWrittenAs says whether raw is the object of the members v holds, in
// field order, as the indentation writes it at depth d — or compact, for
// d < 0.
func ivWrittenAs(raw []byte, v *ivValues, d int) bool {
	if 2*(d+1) > len(indentSpaces) {
		return false
	}
	var member, closing string
	colon := ":"
	if d >= 0 {
		member, closing, colon = "\n"+indentSpaces[:2*(d+1)], "\n"+indentSpaces[:2*d], ": "
	}
	if len(raw) < 2 || raw[0] != '{' {
		return false
	}
	rest := raw[1:]
	n := 0
	for k, val := range v {
		if val == nil {
			continue
		}
		if n > 0 {
			if len(rest) == 0 || rest[0] != ',' {
				return false
			}
			rest = rest[1:]
		}
		n++
		key := interventionKeys[k]
		if len(rest) < len(member)+len(key)+len(colon)+len(val) ||
			string(rest[:len(member)]) != member {
			return false
		}
		rest = rest[len(member):]
		if string(rest[:len(key)]) != key {
			return false
		}
		rest = rest[len(key):]
		if string(rest[:len(colon)]) != colon {
			return false
		}
		rest = rest[len(colon):]
		if !bytes.Equal(rest[:len(val)], val) {
			return false
		}
		rest = rest[len(val):]
	}
	if n > 0 {
		if len(rest) < len(closing) || string(rest[:len(closing)]) != closing {
			return false
		}
		rest = rest[len(closing):]
	}
	return len(rest) == 1 && rest[0] == '}'
}

// appendMember appends `"key":val` (after a comma unless first in its
// object) for the intervention key of index k.
func appendMember(out []byte, k int, val []byte) []byte {
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, interventionKeys[k]...)
	out = append(out, ':')
	return append(out, val...)
}

// interventionKeyIndex is the index of the quoted key q among
// interventionKeys, or -1.
func interventionKeyIndex(q []byte) int {
	for i, k := range interventionKeys {
		if string(q) == k {
			return i
		}
	}
	return -1
}

// sameAs says whether a and b encode alike, as sameEntry would find:
// every field equal, floats by their bits, the unknown keys aside (the
// caller has found both without any).
func (a *interventionFields) sameAs(b *interventionFields) bool {
	return a.Domain == b.Domain && math.Float64bits(a.Delta) == math.Float64bits(b.Delta) &&
		a.Type == b.Type && a.Reason == b.Reason && a.CreatedAtCycle == b.CreatedAtCycle &&
		a.ExpiresAfterCycles == b.ExpiresAfterCycles && a.AppliedCount == b.AppliedCount
}

// appendValues appends the encoding of each of v's fields to buf and
// records it in out (nil for a field omitempty leaves out). ok is false
// when a value is one it cannot be certain to write as encoding/json
// does, or one encoding/json refuses (NaN).
func (v *interventionFields) appendValues(buf []byte, out *ivValues) ([]byte, bool) {
	var ok bool
	mark := func(k, start int) { out[k] = buf[start:len(buf):len(buf)] }
	start := len(buf)
	if buf, ok = appendPlainString(buf, v.Domain); !ok {
		return buf, false
	}
	mark(0, start)
	start = len(buf)
	if buf, ok = appendFloat64(buf, v.Delta); !ok {
		return buf, false
	}
	mark(1, start)
	for k, s := range [...]string{2: v.Type, 3: v.Reason} {
		if k < 2 || s == "" {
			continue
		}
		start = len(buf)
		if buf, ok = appendPlainString(buf, s); !ok {
			return buf, false
		}
		mark(k, start)
	}
	for k, n := range [...]int{4: v.CreatedAtCycle, 5: v.ExpiresAfterCycles, 6: v.AppliedCount} {
		if k < 4 {
			continue
		}
		start = len(buf)
		buf = strconv.AppendInt(buf, int64(n), 10)
		mark(k, start)
	}
	return buf, true
}

// appendValuesBeside is appendValues for v, the value an intervention
// was read as, beside cur, its value now, whose encoding is in now: a
// field v shares with cur shares its encoding, and only the others are
// encoded again.
func (v *interventionFields) appendValuesBeside(buf []byte, out *ivValues, cur *interventionFields, now *ivValues) ([]byte, bool) {
	if v.Domain != cur.Domain || math.Float64bits(v.Delta) != math.Float64bits(cur.Delta) ||
		v.Type != cur.Type || v.Reason != cur.Reason {
		return v.appendValues(buf, out)
	}
	// The strings and the delta are the same: only the counts may differ.
	*out = *now
	for k, n := range [...]int{4: v.CreatedAtCycle, 5: v.ExpiresAfterCycles, 6: v.AppliedCount} {
		if k < 4 {
			continue
		}
		start := len(buf)
		buf = strconv.AppendInt(buf, int64(n), 10)
		out[k] = buf[start:len(buf):len(buf)]
	}
	return buf, true
}

// appendPlainString appends s quoted when it holds nothing encoding/json
// would escape (plainString); ok is false otherwise.
func appendPlainString(buf []byte, s string) ([]byte, bool) {
	if !plainString(s) {
		return buf, false
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), true
}

// appendFloat64 appends f as encoding/json writes a float64 in the range
// it writes without an exponent (and zero); ok is false for any other
// value, which is left to encoding/json.
func appendFloat64(buf []byte, f float64) ([]byte, bool) {
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21 || math.IsNaN(f)) {
		return buf, false
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64), true
}

var interventionFieldsType = reflect.TypeFor[interventionFields]()

// rememberIntervention is rememberEntryIn(b, *v, checked) for v, an
// intervention just decoded, without the reflection of copyDeep when v
// holds no unknown keys: its fields are then strings and numbers, which
// a copy of the struct copies deeply (its record of its bytes is nil
// until it is set from this). The readEntry is the one rememberEntryIn
// makes.
func rememberIntervention(b []byte, v *interventionFields, checked bool) *readEntry {
	if v.Extra != nil || v.read != nil || entryCopyOff || interventionFastOff {
		return rememberEntryIn(b, *v, checked)
	}
	base := *v
	return &readEntry{raw: entryBytes(b, checked), typ: interventionFieldsType, base: &base}
}

// appendIndentedAt appends the members of l as an object whose '{' is at
// depth d, as appendIndented writes the object's compact encoding there.
func (l *ivLayout) appendIndentedAt(out []byte, d int) []byte {
	out = append(out, '{')
	for i, m := range l.members[:l.n] {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '\n')
		out = append(out, indentSpaces[:2*(d+1)]...)
		out = append(out, interventionKeys[m.key]...)
		out = append(out, ':', ' ')
		out = append(out, m.val...)
	}
	if l.n > 0 {
		out = append(out, '\n')
		out = append(out, indentSpaces[:2*d]...)
	}
	return append(out, '}')
}

// encodedInterventions is the list of interventions each as it is
// written: as read when it did not change, else its encoding indented
// as an entry of memos.json is, so that encodeSpliced copies it instead
// of indenting it again (an entry left to the generic encoder is its
// compact encoding, which encodeSpliced indents). Those written here are
// marked with their blanks (see indentedRawList), so that encodeSpliced
// does not check them again. ok is false when an entry does not encode:
// the list is then left to the encoder of its entries, for its error.
func encodedInterventions(list []Intervention) (indentedRawList, bool) {
	if interventionFastOff || 2*(ivEntryDepth+1) > len(indentSpaces) || ivEntryDepth+1 > maxIndentDepth {
		return indentedRawList{}, false
	}
	out := make([]json.RawMessage, len(list))
	ws := make([]int32, len(list))
	var ends []int
	var buf []byte
	l := new(ivLayout)
	for i := range list {
		l.kept, l.n = nil, 0
		ws[i] = -1
		switch {
		case !list[i].layout(l):
			b, err := list[i].MarshalJSON()
			if err != nil || len(b) == 0 {
				return indentedRawList{}, false
			}
			out[i] = b
		case l.kept != nil:
			out[i] = l.kept
		default:
			if l.scalars() {
				// Every value a token without blanks: the object's
				// blanks are the indentation's, a line per member with a
				// space after its colon, and the line of its '}'.
				if l.n > 0 {
					ws[i] = int32(l.n*(2+2*(ivEntryDepth+1)) + 1 + 2*ivEntryDepth)
				} else {
					ws[i] = 0
				}
			}
			if buf == nil {
				// Room for every entry at once, each taken to be the
				// size of the first written.
				buf = make([]byte, 0, (l.size()+8*l.n+16)*(len(list)-i))
				ends = make([]int, len(list))
			}
			buf = l.appendIndentedAt(buf, ivEntryDepth)
			ends[i] = len(buf)
		}
	}
	// The entries written into buf, sliced once it no longer moves.
	at := 0
	for i := range out {
		if out[i] == nil {
			out[i] = json.RawMessage(buf[at:ends[i]:ends[i]])
			at = ends[i]
		}
	}
	return indentedRawList{list: out, ws: ws, at: ivEntryDepth}, true
}

// scalars says whether every member value of l is a string, a number or
// a literal: a token with no blank outside its quotes.
func (l *ivLayout) scalars() bool {
	for _, m := range l.members[:l.n] {
		if len(m.val) == 0 || m.val[0] == '{' || m.val[0] == '[' || isBlank(m.val[0]) || isBlank(m.val[len(m.val)-1]) {
			return false
		}
	}
	return true
}

// decodeFast is decode(b, true) for the interventions every project
// holds: an object of known keys, each spelled as written and present
// once, whose strings are plain printable ASCII and whose numbers are
// read as written (an integer for a count). It decodes them without the
// generic decoder's plan and reflection, and reports false, having set
// nothing, for anything else, which the generic decoder reads (or
// rejects) as it always did.
func (iv *Intervention) decodeFast(b []byte) bool {
	if interventionFastOff || len(b) < 2 || b[0] != '{' {
		return false
	}
	var v interventionFields
	var seen [len(interventionKeys)]bool
	var members [len(interventionKeys) + 1]rawMember
	ms := splitObjectInto(members[:0], b)
	if len(ms) > len(interventionKeys) {
		return false
	}
	for _, m := range ms {
		k := interventionKeyIndex(m.quoted)
		if k < 0 || seen[k] {
			// Unknown, spelled otherwise (a case variant, an escape) or
			// written twice.
			return false
		}
		seen[k] = true
		val := m.val
		switch k {
		case 0, 2, 3:
			if len(val) < 2 || val[0] != '"' || !plainASCII(val[1:len(val)-1]) {
				return false
			}
			s := string(val[1 : len(val)-1])
			switch k {
			case 0:
				v.Domain = s
			case 2:
				v.Type = s
			default:
				v.Reason = s
			}
		case 1:
			if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
				return false
			}
			f, err := strconv.ParseFloat(string(val), 64)
			if err != nil {
				return false
			}
			v.Delta = f
		default:
			if val[0] != '-' && (val[0] < '0' || val[0] > '9') || bytes.ContainsAny(val, ".eE") {
				return false
			}
			n, err := strconv.ParseInt(string(val), 10, strconv.IntSize)
			if err != nil {
				return false
			}
			switch k {
			case 4:
				v.CreatedAtCycle = int(n)
			case 5:
				v.ExpiresAfterCycles = int(n)
			default:
				v.AppliedCount = int(n)
			}
		}
	}
	*iv = Intervention(v)
	iv.read = rememberIntervention(b, &v, true)
	return true
}
