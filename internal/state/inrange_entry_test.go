package state

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// clampFill gives every exported field of v (written to JSON) a value: a
// pointer a new target, a list one element, a map two, so that every
// float the type can hold is there to find.
func clampFill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Int:
		v.SetInt(3)
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		clampFill(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(`1`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		clampFill(v.Index(0), depth+1)
	case reflect.Map:
		if v.Type() == extraType {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for _, k := range []string{"a", "b"} {
			e := reflect.New(v.Type().Elem()).Elem()
			clampFill(e, depth+1)
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				clampFill(v.Field(i), depth+1)
			}
		}
	}
}

// clampLeaves finds every float64 clampFill put in v, by reflection, as
// a function that sets it: whatever float a type gains later is found
// too.
func clampLeaves(v reflect.Value, path string) map[string]func(float64) {
	out := map[string]func(float64){}
	switch v.Kind() {
	case reflect.Float64:
		out[path] = v.SetFloat
	case reflect.Pointer:
		if !v.IsNil() {
			return clampLeaves(v.Elem(), path)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			for p, f := range clampLeaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i)) {
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
				for p, set := range clampLeaves(v.Field(i), path+"."+f.Name) {
					out[p] = set
				}
			}
		}
	}
	return out
}

// clampReports is clampFloats of ptr's value with the entry check on or
// off (or the oracle walk), its reports sorted (a map's numbers come in
// its random order).
func clampReports(ptr any, walk func(reflect.Value, string, func(string, float64, float64))) []string {
	var out []string
	walk(reflect.ValueOf(ptr).Elem(), "", func(p string, was, now float64) {
		out = append(out, fmt.Sprintf("%s %v %v", p, was, now))
	})
	sort.Strings(out)
	return out
}

// The entries inRangeEntry checks without the walk: with every float in
// range it skips them and nothing is clamped; with any one float out of
// range or NaN (each float the type can hold, found by reflection, in
// turn) it walks them, and clampFloats clamps and reports exactly what
// the walk without the check, and the oracle walk, clamp and report. A
// number at the bound itself is left alone by all three.
func TestInRangeEntryMatchesWalk(t *testing.T) {
	withoutCheck := func(v reflect.Value, p string, r func(string, float64, float64)) {
		inRangeEntryOff = true
		defer func() { inRangeEntryOff = false }()
		clampFloats(v, p, r)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Outcome](), reflect.TypeFor[DecisionEntry](), reflect.TypeFor[Episode]()} {
		base := reflect.New(typ)
		clampFill(base.Elem(), 0)
		if !inRangeEntry(base.Elem()) {
			t.Fatalf("%s: an entry in range is not skipped", typ)
		}
		leaves := clampLeaves(base.Elem(), "")
		if len(leaves) == 0 {
			t.Fatalf("%s: no float found", typ)
		}
		for leaf := range leaves {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 2e15, -1e16, MaxStateNumber, -MaxStateNumber} {
				// A list of three entries, the number in the middle one:
				// built alike, then each walked its own way.
				build := func() any {
					list := reflect.MakeSlice(reflect.SliceOf(typ), 3, 3)
					for i := 0; i < 3; i++ {
						clampFill(list.Index(i), 0)
					}
					clampLeaves(list.Index(1), "")[leaf](bad)
					p := reflect.New(list.Type())
					p.Elem().Set(list)
					return p.Interface()
				}
				fast, walked, oracle := build(), build(), build()
				clamps := math.Abs(bad) != MaxStateNumber
				if inRangeEntry(reflect.ValueOf(fast).Elem().Index(1)) == clamps {
					t.Fatalf("%s%s = %v: skipped %v", typ, leaf, bad, !clamps)
				}
				g, w, o := clampReports(fast, clampFloats), clampReports(walked, withoutCheck), clampReports(oracle, clampFloatsOracle)
				if len(g) != map[bool]int{true: 1}[clamps] || (clamps && !strings.HasPrefix(g[0], "/1/")) ||
					strings.Join(g, "|") != strings.Join(w, "|") || strings.Join(g, "|") != strings.Join(o, "|") {
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
	if inRangeEntry(reflect.ValueOf(&Reflection{}).Elem()) || inRangeEntry(reflect.ValueOf(Outcome{})) {
		t.Fatal("a value inRangeEntry does not check is skipped")
	}
}
