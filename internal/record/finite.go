package record

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/ooda-loop/ooda/internal/state"
)

// Finite replaces every NaN and ±Inf float reachable from ptr (a pointer to
// a value about to be written) with 0, and returns one description per
// value replaced: its JSON path under root and what it was. JSON has no
// spelling for those values, so a single one makes the whole file
// unencodable; a score or multiplier that overflowed is worth less than the
// record it would cost.
func Finite(ptr any, root string) []string {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	var out []string
	finiteWalk(v.Elem(), nil, &out, 0)
	for i := range out {
		out[i] = root + ": " + out[i]
	}
	return out
}

// finiteMaxDepth stops the walk on a structure nested deeper than any
// state file is.
const finiteMaxDepth = 64

// finitePath is the path of a value being walked: its last step and the
// steps above it (nil is the value itself). Every value of a file about
// to be written is walked and almost none is replaced, so a path is
// spelled out only for a replacement.
type finitePath struct {
	up    *finitePath
	name  string // a field or map key; "" with index set
	index int
	isIdx bool
}

// String spells the path as "decision_log[3].score".
func (p *finitePath) String() string {
	var steps []*finitePath
	for q := p; q != nil; q = q.up {
		steps = append(steps, q)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		q := steps[i]
		if q.isIdx {
			b.WriteString("[" + strconv.Itoa(q.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(q.name)
	}
	return b.String()
}

func finiteWalk(v reflect.Value, path *finitePath, out *[]string, depth int) {
	if depth > finiteMaxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*out = append(*out, fmt.Sprintf("%s was %v", orTop(path.String()), f))
			v.SetFloat(0)
		}
	case reflect.Pointer:
		if !v.IsNil() && finiteMayHold(v.Type().Elem(), 0) {
			finiteWalk(v.Elem(), path, out, depth+1)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// An interface's dynamic value is not addressable: walk a copy and
		// put it back when something changed.
		cp := reflect.New(v.Elem().Type()).Elem()
		cp.Set(v.Elem())
		n := len(*out)
		finiteWalk(cp, path, out, depth+1)
		if len(*out) > n && v.CanSet() {
			v.Set(cp)
		}
	case reflect.Struct:
		for _, f := range finiteFieldsOf(v.Type()) {
			// An embedded struct's fields are its parent's in JSON.
			p := path
			if !f.embedded {
				p = &finitePath{up: path, name: f.name}
			}
			finiteWalk(v.Field(f.index), p, out, depth+1)
		}
	case reflect.Slice, reflect.Array:
		// Raw JSON bytes hold no float to fix.
		if v.Type().Elem().Kind() == reflect.Uint8 || !finiteMayHold(v.Type().Elem(), 0) {
			return
		}
		for i := 0; i < v.Len(); i++ {
			if finiteEntry(v.Index(i)) {
				continue
			}
			finiteWalk(v.Index(i), &finitePath{up: path, index: i, isIdx: true}, out, depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !finiteMayHold(v.Type().Elem(), 0) {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			// Map values are not addressable either.
			cp := reflect.New(v.Type().Elem()).Elem()
			cp.Set(iter.Value())
			n := len(*out)
			finiteWalk(cp, &finitePath{up: path, name: fmt.Sprint(iter.Key().Interface())}, out, depth+1)
			if len(*out) > n {
				v.SetMapIndex(iter.Key(), cp)
			}
		}
	}
}

// finiteField is a field finiteWalk descends into: its index, its JSON
// name, and whether it is embedded (its fields are its parent's).
type finiteField struct {
	index    int
	name     string
	embedded bool
}

var finiteFields sync.Map // reflect.Type -> []finiteField

// finiteFieldsOf lists the fields of the struct type t that the walk
// visits and that can hold a float, in field order.
func finiteFieldsOf(t reflect.Type) []finiteField {
	if v, ok := finiteFields.Load(t); ok {
		return v.([]finiteField)
	}
	var out []finiteField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := sf.Name
		if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag == "-" {
			continue
		} else if tag != "" {
			name = tag
		}
		if finiteMayHold(sf.Type, 0) {
			out = append(out, finiteField{index: i, name: name, embedded: sf.Anonymous})
		}
	}
	finiteFields.Store(t, out)
	return out
}

var finiteHolds sync.Map // reflect.Type -> bool, finiteMayHold(t, 0)

// finiteMayHold reports whether a value of type t can contain a float, so
// values that cannot are not walked (nor maps of strings or ints copied
// entry by entry) for nothing.
func finiteMayHold(t reflect.Type, depth int) bool {
	if depth == 0 {
		if v, ok := finiteHolds.Load(t); ok {
			return v.(bool)
		}
		yes := finiteMayHoldAt(t, 0)
		finiteHolds.Store(t, yes)
		return yes
	}
	return finiteMayHoldAt(t, depth)
}

func finiteMayHoldAt(t reflect.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() != reflect.Map && t.Elem().Kind() == reflect.Uint8 {
			return false
		}
		return finiteMayHold(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() && finiteMayHold(t.Field(i).Type, depth+1) {
				return true
			}
		}
	}
	return false
}

// orTop names the value itself when it has no path of its own.
func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// finiteEntryOff, set by the tests, walks every entry by reflection: the
// walk finiteEntry spares.
var finiteEntryOff bool

// finiteEntry says whether v is an entry of a type the state files hold
// by the hundred (outcomes, decisions, episodes) every float of which is
// finite: the walk would find nothing to replace in it. It reads the
// entry's floats directly; false (walk it) for any other value, and for
// an entry with a float to replace, which the walk then names.
func finiteEntry(v reflect.Value) bool {
	if finiteEntryOff || !v.CanAddr() {
		return false
	}
	switch e := v.Addr().Interface().(type) {
	case *state.Outcome:
		return finitePtrs(e.Score, e.ProcessFactor, e.ArtifactScore) && isFinite(e.QualityMult)
	case *state.DecisionEntry:
		if !finitePtrs(e.Score, e.RawScore, e.Confidence, e.QualityMult, e.ElapsedSeconds, e.CostUSD, e.ConfidenceAtDecision) ||
			!finiteMap(e.Scores) {
			return false
		}
		c := e.ContrarianCheck
		return c == nil || isFinite(c.ScoreAdjustment) && finiteMap(c.AdjustmentApplied)
	case *state.Episode:
		return finiteMap(e.ConfidenceSnapshot)
	}
	return false
}

// isFinite says whether f is neither NaN nor infinite: f-f is NaN for
// both.
func isFinite(f float64) bool { return f-f == 0 }

// finitePtrs says whether every float the pointers point to is finite.
func finitePtrs(ps ...*float64) bool {
	for _, p := range ps {
		if p != nil && !isFinite(*p) {
			return false
		}
	}
	return true
}

// finiteMap says whether every value of m is finite.
func finiteMap(m map[string]float64) bool {
	for _, f := range m {
		if !isFinite(f) {
			return false
		}
	}
	return true
}
