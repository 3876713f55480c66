package record

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// finiteOracle is Finite as it was before it spelled a path only for a
// replacement and skipped the values that can hold no float, its walk
// kept word for word as the oracle of the test below.
func finiteOracle(ptr any, root string) []string {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	var out []string
	finiteWalkOracle(v.Elem(), "", &out, 0)
	for i := range out {
		out[i] = root + ": " + out[i]
	}
	return out
}

func finiteWalkOracle(v reflect.Value, path string, out *[]string, depth int) {
	if depth > finiteMaxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*out = append(*out, fmt.Sprintf("%s was %v", orTop(path), f))
			v.SetFloat(0)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			finiteWalkOracle(v.Elem(), path, out, depth+1)
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
		finiteWalkOracle(cp, path, out, depth+1)
		if len(*out) > n && v.CanSet() {
			v.Set(cp)
		}
	case reflect.Struct:
		t := v.Type()
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
			// An embedded struct's fields are its parent's in JSON.
			p := path
			if !sf.Anonymous {
				p = joinPathOracle(path, name)
			}
			finiteWalkOracle(v.Field(i), p, out, depth+1)
		}
	case reflect.Slice, reflect.Array:
		// Raw JSON bytes hold no float to fix.
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			finiteWalkOracle(v.Index(i), path+"["+strconv.Itoa(i)+"]", out, depth+1)
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
			finiteWalkOracle(cp, joinPathOracle(path, fmt.Sprint(iter.Key().Interface())), out, depth+1)
			if len(*out) > n {
				v.SetMapIndex(iter.Key(), cp)
			}
		}
	}
}

func joinPathOracle(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// finiteEmbedded and finiteHolder put non-finite floats where the walk
// goes: embedded structs, maps of lists and of pointers, interfaces,
// arrays, and values that can hold none.
type finiteEmbedded struct {
	E float64 `json:"e"`
}

type finiteHolder struct {
	finiteEmbedded
	Named  float64                       `json:"named"`
	Plain  float64                       // no tag: the field's name
	Skip   float64                       `json:"-"`
	Ptrs   map[string]*float64           `json:"ptrs"`
	Lists  map[string][]float64          `json:"lists"`
	Nested map[string]map[string]float64 `json:"nested"`
	Any    any                           `json:"any"`
	Arr    [2]float64                    `json:"arr"`
	Strs   []string                      `json:"strs"`
	Raw    json.RawMessage               `json:"raw"`
	Deep   [][]struct {
		X float32 `json:"x"`
	} `json:"deep"`
	hidden float64
}

// Every non-finite float is replaced and named with the same path as
// before: in the state files as ooda writes them and in every shape the
// walk knows.
func TestFinite_MatchesOracle(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	build := func() []any {
		score, conf := nan, inf
		st := state.State{CycleCount: 3, DecisionLog: []state.DecisionEntry{
			{Cycle: 1, Score: &score, Scores: map[string]float64{"a": inf, "b/c": 1, "": nan}},
			{Cycle: 2, Confidence: &conf, ContrarianCheck: &state.ContrarianRecord{ScoreAdjustment: nan, AdjustmentApplied: map[string]float64{"x": -inf}}},
		}}
		h := finiteHolder{finiteEmbedded: finiteEmbedded{E: nan}, Named: inf, Plain: -inf, Skip: nan,
			Ptrs: map[string]*float64{"p": &score, "nil": nil}, Lists: map[string][]float64{"l": {1, nan, inf}},
			Nested: map[string]map[string]float64{"o": {"i": nan}}, Any: map[string]any{"k": []any{1.0, nan}},
			Arr: [2]float64{inf, 2}, Strs: []string{"s"}, Raw: json.RawMessage(`1`), hidden: nan}
		h.Deep = append(h.Deep, []struct {
			X float32 `json:"x"`
		}{{X: float32(inf)}, {X: 1}})
		o := state.Outcomes{Entries: []state.Outcome{{CycleID: 1, QualityMult: nan}, {CycleID: 2, Score: &conf}}}
		return []any{&st, &h, &o, &[]float64{nan, 1, inf}, &map[string]float64{"a": inf}}
	}
	got, want := build(), build()
	for i := range got {
		g, w := Finite(got[i], "f.json"), finiteOracle(want[i], "f.json")
		// A map's floats are met in the map's (random) order.
		sort.Strings(g)
		sort.Strings(w)
		if strings.Join(g, "|") != strings.Join(w, "|") || len(g) == 0 {
			t.Fatalf("value %d: %q, the oracle %q", i, g, w)
		}
		gb, gerr := json.Marshal(got[i])
		wb, werr := json.Marshal(want[i])
		if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("value %d: left %s (%v), the oracle %s (%v)", i, gb, gerr, wb, werr)
		}
	}
}
