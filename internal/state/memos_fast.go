package state

import (
	"bytes"
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
	if interventionFastOff || len(iv.Extra) != 0 {
		return nil, false
	}
	cur := (*interventionFields)(iv)
	r := iv.read
	if r == nil {
		var v ivValues
		buf, ok := cur.appendValues(make([]byte, 0, 192), &v)
		if !ok {
			return nil, false
		}
		return joinMembers(make([]byte, 0, len(buf)+96), &v), true
	}
	base, ok := r.base.(*interventionFields)
	if !ok || base == nil || len(r.baseExtra) != 0 {
		return nil, false
	}
	if base.sameAs(cur) {
		// As readEntry.encode: nothing changed, the bytes read are written.
		return r.raw, true
	}
	var was, now ivValues
	buf, ok := base.appendValues(make([]byte, 0, 384), &was)
	if !ok {
		return nil, false
	}
	if _, ok = cur.appendValues(buf, &now); !ok {
		return nil, false
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
		return r.raw, true
	}
	members, ok := scanMembers(r.raw)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(r.raw)+32)
	out = append(out, '{')
	var seen [len(interventionKeys)]bool
	for _, m := range members {
		k := interventionKeyIndex(m.quoted)
		if k < 0 || seen[k] {
			// A key spelled otherwise (a case variant, an escape), an
			// unknown one or one written twice: the generic encoder
			// knows what each means.
			return nil, false
		}
		seen[k] = true
		switch {
		case changed[k]:
			out = appendMember(out, k, now[k])
		case removed[k]:
		default:
			out = appendMember(out, k, m.val)
		}
	}
	for k := range now {
		if changed[k] && !seen[k] {
			out = appendMember(out, k, now[k])
		}
	}
	return append(out, '}'), true
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

// joinMembers is the object of the members v holds, in field order.
func joinMembers(out []byte, v *ivValues) []byte {
	out = append(out, '{')
	for k, val := range v {
		if val != nil {
			out = appendMember(out, k, val)
		}
	}
	return append(out, '}')
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
