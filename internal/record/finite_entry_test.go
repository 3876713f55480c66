package record

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// fillAll gives every exported field of v (written to JSON) a value: a
// pointer a new target, a list one element, a map two, so that every
// float the type can hold is there to find.
func fillAll(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Int, reflect.Int64:
		v.SetInt(3)
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(`1`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for _, k := range []string{"a", "b"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fillAll(e, depth+1)
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				fillAll(v.Field(i), depth+1)
			}
		}
	}
}

// floatLeaves finds every float fillAll put in v, by reflection, as a
// function that sets it: whatever float a type gains later is found too.
func floatLeaves(v reflect.Value, path string) map[string]func(float64) {
	out := map[string]func(float64){}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		out[path] = v.SetFloat
	case reflect.Pointer:
		if !v.IsNil() {
			return floatLeaves(v.Elem(), path)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			for p, f := range floatLeaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i)) {
				out[p] = f
			}
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Float64 {
			for _, k := range v.MapKeys() {
				out[path+"."+k.String()] = func(f float64) { v.SetMapIndex(k, reflect.ValueOf(f)) }
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				for p, set := range floatLeaves(v.Field(i), path+"."+f.Name) {
					out[p] = set
				}
			}
		}
	}
	return out
}

// finiteWith is Finite with the entry check on or off, sorted (a map's
// floats come in its random order).
func finiteWith(off bool, ptr any) []string {
	saved := finiteEntryOff
	finiteEntryOff = off
	defer func() { finiteEntryOff = saved }()
	out := Finite(ptr, "f.json")
	sort.Strings(out)
	return out
}

// The entries finiteEntry checks without the walk: with every float
// finite it skips them and Finite says nothing; with any one float NaN or
// infinite (each float the type can hold, found by reflection, in turn)
// it walks them, and Finite replaces and names exactly what the walk
// without the check, and the oracle walk, replace and name.
func TestFiniteEntryMatchesWalk(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[state.Outcome](), reflect.TypeFor[state.DecisionEntry](), reflect.TypeFor[state.Episode]()} {
		base := reflect.New(typ)
		fillAll(base.Elem(), 0)
		if !finiteEntry(base.Elem()) {
			t.Fatalf("%s: a finite entry is not skipped", typ)
		}
		leaves := floatLeaves(base.Elem(), "")
		if len(leaves) == 0 {
			t.Fatalf("%s: no float found", typ)
		}
		for leaf := range leaves {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				// Three copies of one list of entries, the bad float in the
				// middle one: built alike, then each walked its own way.
				build := func() any {
					list := reflect.MakeSlice(reflect.SliceOf(typ), 3, 3)
					for i := 0; i < 3; i++ {
						fillAll(list.Index(i), 0)
					}
					floatLeaves(list.Index(1), "")[leaf](bad)
					p := reflect.New(list.Type())
					p.Elem().Set(list)
					return p.Interface()
				}
				fast, walked, oracle := build(), build(), build()
				if finiteEntry(reflect.ValueOf(fast).Elem().Index(1)) {
					t.Fatalf("%s%s = %v: the entry is skipped", typ, leaf, bad)
				}
				g, w := finiteWith(false, fast), finiteWith(true, walked)
				o := finiteOracle(oracle, "f.json")
				sort.Strings(o)
				if len(g) != 1 || !strings.HasPrefix(g[0], "f.json: [1]") || strings.Join(g, "|") != strings.Join(w, "|") ||
					strings.Join(g, "|") != strings.Join(o, "|") {
					t.Fatalf("%s%s = %v: %q, without the check %q, the oracle %q", typ, leaf, bad, g, w, o)
				}
				gb, gerr := json.Marshal(fast)
				wb, werr := json.Marshal(oracle)
				if gerr != nil || werr != nil || string(gb) != string(wb) {
					t.Fatalf("%s%s = %v: left %s (%v), the oracle %s (%v)", typ, leaf, bad, gb, gerr, wb, werr)
				}
			}
		}
	}
	// Values of other types are walked as before.
	if finiteEntry(reflect.ValueOf(&state.Reflection{}).Elem()) || finiteEntry(reflect.ValueOf(state.Outcome{})) {
		t.Fatal("a value finiteEntry does not check is skipped")
	}
}

// BenchmarkFinite walks what a cycle at its caps hands Finite: 200
// outcomes and a state of 20 decisions with a score table each.
func BenchmarkFinite(b *testing.B) {
	mk := func(f float64) *float64 { return &f }
	var outcomes state.Outcomes
	for i := range 200 {
		outcomes.Entries = append(outcomes.Entries, state.Outcome{CycleID: i, Score: mk(0), ProcessFactor: mk(0), QualityMult: 1})
	}
	var st state.State
	for i := range 20 {
		scores := map[string]float64{}
		for d := range 8 {
			scores[fmt.Sprint("d", d)] = 70.5
		}
		st.DecisionLog = append(st.DecisionLog, state.DecisionEntry{Cycle: i, Score: mk(0), RawScore: mk(1), Confidence: mk(0.1),
			QualityMult: mk(0), ElapsedSeconds: mk(0.5), CostUSD: mk(0.02), ConfidenceAtDecision: mk(0.1), Scores: scores})
	}
	for _, off := range []bool{false, true} {
		b.Run(map[bool]string{false: "checked", true: "walked"}[off], func(b *testing.B) {
			saved := finiteEntryOff
			finiteEntryOff = off
			defer func() { finiteEntryOff = saved }()
			b.ReportAllocs()
			for b.Loop() {
				Finite(&outcomes, "outcomes.json")
				Finite(&st, "state.json")
			}
		})
	}
}
