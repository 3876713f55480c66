package state

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// looseWarningsOracle is looseWarnings as it was before it spelled a
// pointer only for a report and skipped the values that can hold none,
// kept word for word as the oracle of the tests below.
//
// looseWarnings lists, for the decoded file v, every value kept because
// it was not read as written: "<JSON pointer>: <value> is not <kind>;
// read as <value>" or "...; not used, and kept in the file as written".
// At most limit are listed, then a count of the others.
func looseWarningsOracle(v any, limit int) []string {
	var all []string
	walkLooseOracle(reflect.ValueOf(v), "", func(ptr, msg string) {
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
func asFilePositionerOracle(v reflect.Value) (filePositioner, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	fp, ok := v.Interface().(filePositioner)
	return fp, ok
}

func walkLooseOracle(v reflect.Value, ptr string, report func(ptr, msg string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkLooseOracle(v.Elem(), ptr, report)
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
			if fp, ok := asFilePositionerOracle(v); ok && fv.Kind() == reflect.Slice {
				if at := fp.filePointers(f.name); len(at) == fv.Len() {
					for i := 0; i < fv.Len(); i++ {
						walkLooseOracle(fv.Index(i), ptr+at[i], report)
					}
					continue
				}
			}
			if raw, ok := keptRaw[f.index]; ok && fv.Kind() == reflect.Slice {
				// The elements read from a list partly read are numbered
				// as the file numbers them.
				walkSliceAtOracle(fv, raw, ptr+config.Pointer(f.name), report)
				continue
			}
			walkLooseOracle(fv, ptr+config.Pointer(f.name), report)
		}
	case reflect.Slice:
		if v.Type() == rawType || v.Type() == extraType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			walkLooseOracle(v.Index(i), ptr+"/"+strconv.Itoa(i), report)
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
			walkLooseOracle(v.MapIndex(k), ptr+"/"+escapePointer(fmt.Sprint(k.Interface())), report)
		}
	}
}

// walkSliceAt walks the elements of a list read in part from raw, each
// under its index in raw.
func walkSliceAtOracle(s reflect.Value, raw json.RawMessage, ptr string, report func(ptr, msg string)) {
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
		walkLooseOracle(s.Index(i), ptr+"/"+strconv.Itoa(idx), report)
	}
}

// clampFloatsOracle is clampFloats as it was before it spelled a
// pointer only for a report and skipped the values that can hold no
// float, kept word for word as the oracle of the tests below.
//
// clampFloats limits every float64 reachable from v (structs by their JSON
// names, slices, pointers, maps of numbers or slices) to ±MaxStateNumber,
// reporting each change with its JSON pointer. Unknown keys (Extra) and
// raw JSON are kept as written: ooda does not compute with them.
func clampFloatsOracle(v reflect.Value, ptr string, report func(ptr string, was, now float64)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clampFloatsOracle(v.Elem(), ptr, report)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Type == extraType || f.Type == rawType {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			clampFloatsOracle(v.Field(i), ptr+config.Pointer(name), report)
		}
	case reflect.Slice:
		if v.Type() == rawType || v.Type() == extraType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			clampFloatsOracle(v.Index(i), ptr+"/"+strconv.Itoa(i), report)
		}
	case reflect.Map:
		if v.Type() == extraType {
			return
		}
		switch v.Type().Elem().Kind() {
		case reflect.Float64:
			iter := v.MapRange()
			type change struct {
				k   reflect.Value
				was float64
				now float64
			}
			var changes []change
			for iter.Next() {
				f := iter.Value().Float()
				if c, ok := clampNumber(f, MaxStateNumber); ok {
					changes = append(changes, change{iter.Key(), f, c})
				}
			}
			for _, c := range changes {
				v.SetMapIndex(c.k, reflect.ValueOf(c.now).Convert(v.Type().Elem()))
				report(ptr+"/"+escapePointer(fmt.Sprint(c.k.Interface())), c.was, c.now)
			}
		case reflect.Slice, reflect.Pointer:
			// The elements of a slice or the target of a pointer held in
			// a map are addressable through the copy.
			iter := v.MapRange()
			for iter.Next() {
				clampFloatsOracle(iter.Value(), ptr+"/"+escapePointer(fmt.Sprint(iter.Key().Interface())), report)
			}
		}
	case reflect.Float64:
		if c, ok := clampNumber(v.Float(), MaxStateNumber); ok && v.CanSet() {
			was := v.Float()
			v.SetFloat(c)
			report(ptr, was, c)
		}
	}
}

// looseDocs hold values not taken as written and numbers out of range,
// in lists, maps, nested entries and the cost ledger's own numbering.
var looseDocs = map[string]string{
	StateFile: `{"cycle_count": "7", "decision_log": [{"cycle": "#3", "score": "0.5", "scores": {"a": 1e300, "b/~c": -2e16},
		"chain_executed": [1, "x"], "contrarian_check": {"argument": 5, "adjustment_applied": {"d": 1e99}}}, "junk",
		{"cycle": 4, "pr_number": "#29", "elapsed_seconds": 1e20}], "domain_first_outputs": {"a": [{"cycle": "2", "had_output": "yes"}]},
		"alert_streaks": {"x": "3"}}`,
	OutcomesFile: `{"entries": [{"cycle_id": "12", "score": 5e15, "quality_multiplier": "1.5", "pr_number": "#7"}, 7,
		{"cycle_id": 13, "artifact_score": -1e16, "had_output": "true"}]}`,
	CostLedgerFile: `{"date": "2026-03-01", "entries": [{"cycle_id": null, "estimated_usd": 1}, {"cycle_id": "#4", "chain": "x", "estimated_usd": "0.5"},
		{"cycle_id": 5, "synthetic": "false", "timestamp": 9}], "total_estimated_usd": 2}`,
	EpisodesFile:    `{"episodes": [{"id": "EP-2026-W10", "confidence_snapshot": {"a": 1e17, "b": "0.5"}, "total_cycles": "168", "cycle_range": ["1", 2]}]}`,
	GoalsFile:       `{"goals": [{"id": "g", "progress": 2e15, "target": "10", "related_domains": "a"}]}`,
	MemosFile:       `{"schema_version": "1.1.0", "score_adjustments": {"a": 1e300, "b": "2"}, "interventions": [{"domain": "a", "delta": "1", "applied_count": 1.5}], "history": [{"cycle": "x"}]}`,
	ActionQueueFile: `{"pending": [{"id": "a1", "rice_score": "75", "impact": 1e18}], "in_progress": {"id": "a2", "effort": "2"}, "completed": [3]}`,
	ConfidenceFile:  `{"a": 1e300, "b": "0.5", "c": -1e16}`,
	MetricsFile:     `{"counters": {"total_cycles": "4", "domain_executions": {"a": "2"}}, "cost": {"total_estimated_usd": 1e300}}`,
}

// looseCorpus is entryCorpus and looseDocs.
func looseCorpus(t testing.TB) []struct {
	name   string
	decode func([]byte) (any, error)
	doc    []byte
} {
	out := entryCorpus(t)
	for name, b := range looseDocs {
		out = append(out, struct {
			name   string
			decode func([]byte) (any, error)
			doc    []byte
		}{"loose " + name, fileModels[name], []byte(b)})
	}
	return out
}

// Every file warns about the values it did not take as written with the
// same words and pointers, in the same order, as before the walk spelled
// pointers only for a report.
func TestLooseWarnings_MatchOracle(t *testing.T) {
	warned := 0
	for _, d := range looseCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		got, want := looseWarnings(v, 1000), looseWarningsOracle(v, 1000)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: warnings\n%q\nthe oracle's\n%q", d.name, got, want)
		}
		warned += len(got)
	}
	if warned < 20 {
		t.Fatalf("only %d warnings compared", warned)
	}
}

// Every number out of range is clamped to the same value and reported
// with the same pointer as before.
func TestClampFloats_MatchOracle(t *testing.T) {
	clamped := 0
	for _, d := range looseCorpus(t) {
		gv, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		wv, _ := d.decode(d.doc)
		got, want := reflect.New(reflect.TypeOf(gv)), reflect.New(reflect.TypeOf(wv))
		got.Elem().Set(reflect.ValueOf(gv))
		want.Elem().Set(reflect.ValueOf(wv))
		var gr, wr []string
		clampFloats(got.Elem(), "", func(ptr string, was, now float64) {
			gr = append(gr, fmt.Sprintf("%s %v %v", ptr, was, now))
		})
		clampFloatsOracle(want.Elem(), "", func(ptr string, was, now float64) {
			wr = append(wr, fmt.Sprintf("%s %v %v", ptr, was, now))
		})
		// A map's numbers are visited in the map's (random) order.
		sort.Strings(gr)
		sort.Strings(wr)
		if !reflect.DeepEqual(gr, wr) {
			t.Fatalf("%s: clamped\n%q\nthe oracle\n%q", d.name, gr, wr)
		}
		gb, _ := json.Marshal(got.Interface())
		wb, _ := json.Marshal(want.Interface())
		if string(gb) != string(wb) {
			t.Fatalf("%s: clamped to\n%s\nthe oracle to\n%s", d.name, gb, wb)
		}
		clamped += len(gr)
	}
	if clamped < 10 {
		t.Fatalf("only %d numbers clamped", clamped)
	}
}

// A pointer is spelled as config.Pointer spells its tokens.
func TestPtrPath_Spelling(t *testing.T) {
	p := &ptrPath{up: &ptrPath{up: &ptrPath{kind: pathRaw, tok: "/entries/3"}, kind: pathKey, tok: "a/b~c"}, kind: pathIndex, idx: 7}
	if got, want := p.String(), "/entries/3"+config.Pointer("a/b~c")+"/7"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := (*ptrPath)(nil).String(); got != "" {
		t.Fatalf("the root is %q", got)
	}
}

// looseItem and looseHolder put values not taken as written where no
// state file has them yet: in maps of entries, behind pointers and
// interfaces, in lists of lists.
type looseItem struct {
	N     int      `json:"n"`
	F     *float64 `json:"f"`
	Extra Extra    `json:"-"`
}

type looseHolder struct {
	ByName map[string]looseItem              `json:"by_name"`
	ByPtr  map[string]*looseItem             `json:"by_ptr"`
	Nested map[string]map[string][]looseItem `json:"nested"`
	Lists  [][]looseItem                     `json:"lists"`
	Any    any                               `json:"any"`
	Scores map[string]float64                `json:"scores"`
	Extra  Extra                             `json:"-"`
}

func TestLooseWarnings_MatchOracleInMapsAndInterfaces(t *testing.T) {
	bad := func(v string) looseItem {
		return looseItem{Extra: Extra{"n": json.RawMessage(v), "F": json.RawMessage(`"1.5"`), "other": json.RawMessage(`1`)}}
	}
	h := looseHolder{
		ByName: map[string]looseItem{"b/x": bad(`"#2"`), "a~y": bad(`"two"`), "c": {}},
		ByPtr:  map[string]*looseItem{"p": ptrTo(bad(`1.5`)), "nil": nil},
		Nested: map[string]map[string][]looseItem{"o": {"i": {{}, bad(`"3"`)}}},
		Lists:  [][]looseItem{{}, {bad(`true`)}},
		Any:    bad(`"4"`),
		Scores: map[string]float64{"a": 1e300},
		Extra:  Extra{"scores": json.RawMessage(`{"a": "x"}`), "by_name": json.RawMessage(`[]`)},
	}
	for _, v := range []any{h, &h, []looseHolder{h, {}}, map[string]looseHolder{"k": h}} {
		got, want := looseWarnings(v, 1000), looseWarningsOracle(v, 1000)
		if !reflect.DeepEqual(got, want) || len(got) < 10 {
			t.Fatalf("warnings\n%q\nthe oracle's\n%q", got, want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
