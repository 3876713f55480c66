package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The tests below hold the encoder of encodefast.go and the copy an
// entry keeps of the value it was read as (entrycopy.go) to the
// encoding they replaced: every value written through encoding/json
// alone, and every entry compared with its bytes decoded again.

// withOldEncoding runs f with the replaced encoding.
func withOldEncoding(f func()) {
	savedFast, savedCopy, savedIv := encodeFastOff, entryCopyOff, interventionFastOff
	encodeFastOff, entryCopyOff, interventionFastOff = true, true, true
	defer func() { encodeFastOff, entryCopyOff, interventionFastOff = savedFast, savedCopy, savedIv }()
	f()
}

// decodePair decodes b with dec twice: as the program reads it, and as
// the replaced encoding read it (no entry keeps a copy). The values are
// returned through pointers, so that a change can be made to both.
func decodePair(dec func([]byte) (any, error), b []byte) (cur, old reflect.Value, err error) {
	v, err := dec(b)
	if err != nil {
		return
	}
	var w any
	withOldEncoding(func() { w, _ = dec(b) })
	cur = reflect.New(reflect.TypeOf(v))
	cur.Elem().Set(reflect.ValueOf(v))
	old = reflect.New(reflect.TypeOf(w))
	old.Elem().Set(reflect.ValueOf(w))
	return cur, old, nil
}

// sameAsOldEncoding fails unless cur, encoded as the program does, and
// old, encoded by the replaced encoding, give the same bytes or the same
// error; both as a whole file (encodeJSON) and as a value inside another
// (json.Marshal).
func sameAsOldEncoding(t *testing.T, name string, cur, old reflect.Value) {
	t.Helper()
	got, gotErr := encodeJSON(cur.Elem().Interface())
	var want []byte
	var wantErr error
	withOldEncoding(func() { want, wantErr = encodeJSON(old.Elem().Interface()) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("%s: writes\n%s (%v)\nthe old encoding writes\n%s (%v)", name, got, gotErr, want, wantErr)
	}
	got, gotErr = json.Marshal(cur.Elem().Interface())
	withOldEncoding(func() { want, wantErr = json.Marshal(old.Elem().Interface()) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("%s: marshals\n%s (%v)\nthe old encoding marshals\n%s (%v)", name, got, gotErr, want, wantErr)
	}
}

// mutateInPlace changes, in place, the first value it reaches from f
// through a pointer, a list or a map (never replacing f itself): what a
// copy sharing f's pointers would see too. ok is false when f reaches
// none.
func mutateInPlace(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			return false
		}
		return changeScalar(f.Elem()) || mutateInPlace(f.Elem())
	case reflect.Slice:
		if f.Len() == 0 {
			return false
		}
		if f.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		return changeScalar(f.Index(0)) || mutateInPlace(f.Index(0))
	case reflect.Map:
		if f.Len() == 0 {
			return false
		}
		// The first key in order, so that two maps alike change alike.
		keys := f.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		nv := reflect.New(f.Type().Elem()).Elem()
		nv.Set(f.MapIndex(keys[0]))
		if !changeScalar(nv) {
			if !mutateInPlace(nv) {
				f.SetMapIndex(keys[0], reflect.Value{})
				return true
			}
			return true
		}
		f.SetMapIndex(keys[0], nv)
		return true
	case reflect.Struct:
		for i := 0; i < f.NumField(); i++ {
			if f.Type().Field(i).IsExported() && (changeScalar(f.Field(i)) || mutateInPlace(f.Field(i))) {
				return true
			}
		}
	}
	return false
}

// changeScalar changes the scalar v (settable) to another value.
func changeScalar(v reflect.Value) bool {
	if !v.CanSet() {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "+")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(v.Int() + 1)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(v.Float() + 0.5)
	default:
		return false
	}
	return true
}

// cycleChange is what a cycle does to a capped list of entries: the
// oldest dropped, a new one appended. It changes the first list of
// entries it finds in the document v (a pointer).
func cycleChange(v reflect.Value) bool {
	s := v.Elem()
	if s.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		if !s.Type().Field(i).IsExported() || f.Kind() != reflect.Slice || f.Len() == 0 || f.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		n := reflect.New(f.Type().Elem()).Elem()
		for j := 0; j < n.NumField(); j++ {
			if n.Type().Field(j).IsExported() {
				changeScalar(n.Field(j))
			}
		}
		f.Set(reflect.Append(f.Slice(1, f.Len()), n))
		return true
	}
	return false
}

// encodeCorpus is every document of entryCorpus, of the compat project's
// fixtures (through every model) and of the edge documents.
func encodeCorpus(t *testing.T) []struct {
	name   string
	decode func([]byte) (any, error)
	doc    []byte
} {
	out := entryCorpus(t)
	for i, s := range decodeOnceEdgeDocs {
		for j, dec := range allModels() {
			out = append(out, struct {
				name   string
				decode func([]byte) (any, error)
				doc    []byte
			}{fmt.Sprintf("edge %d, model %d", i, j), dec, []byte(s)})
		}
	}
	return out
}

// Every document, unchanged, after a cycle's change to its first list,
// with each field of its first and last entries replaced or changed in
// place, writes exactly as with the replaced encoding.
func TestEncodeFast_MatchesOldEncoding(t *testing.T) {
	compared := 0
	for _, d := range encodeCorpus(t) {
		cur, old, err := decodePair(d.decode, d.doc)
		if err != nil {
			continue
		}
		sameAsOldEncoding(t, d.name, cur, old)
		compared++
		if cur, old, _ := decodePair(d.decode, d.doc); cycleChange(cur) && cycleChange(old) {
			sameAsOldEncoding(t, d.name+": a cycle's change", cur, old)
			compared++
		}
		n := len(readEntries(cur))
		if n == 0 {
			continue
		}
		at := []int{0, n - 1}
		if len(d.doc) > 16<<10 {
			// A long document's entries are alike: its last one (the one a
			// cycle adds) stands for them.
			at = at[1:]
		}
		for _, at := range at {
			entry := readEntries(cur)[at]
			for fi := 0; fi < entry.NumField(); fi++ {
				if !entry.Type().Field(fi).IsExported() {
					continue
				}
				name := fmt.Sprintf("%s: entry %d, %s", d.name, at, entry.Type().Field(fi).Name)
				for ci, change := range entryChanges {
					cur, old, _ := decodePair(d.decode, d.doc)
					ce, oe := readEntries(cur)[at], readEntries(old)[at]
					nv, ok := change(ce.Field(fi))
					if !ok {
						continue
					}
					ov, _ := change(oe.Field(fi))
					ce.Field(fi).Set(nv)
					oe.Field(fi).Set(ov)
					sameAsOldEncoding(t, fmt.Sprintf("%s replaced (%d)", name, ci), cur, old)
					compared++
				}
				cur, old, _ := decodePair(d.decode, d.doc)
				ce, oe := readEntries(cur)[at], readEntries(old)[at]
				if mutateInPlace(ce.Field(fi)) && mutateInPlace(oe.Field(fi)) {
					sameAsOldEncoding(t, name+" changed in place", cur, old)
					compared++
				}
			}
		}
	}
	if compared < 2000 {
		t.Fatalf("only %d encodings compared", compared)
	}
}

// A change made in place, through a pointer, a map or a list the entry
// shares with nothing else, is seen: the entry is not written as the
// bytes it was read from. Without the copy kept being deep, each of these
// would be written as read.
func TestEncodeFast_EntryChangedInPlaceIsWritten(t *testing.T) {
	doc := []byte(`{"cycle_count": 3, "decision_log": [{"cycle": 3, "timestamp": "t", "score": 1.5,
		"scores": {"a": 1}, "chain_executed": ["x"], "prs_created": [{"number": 4, "title": "T", "branch": null}],
		"contrarian_check": {"argument": "a", "affected_domain": "d", "score_adjustment": 1, "adjustment_applied": {"d": 2}},
		"x_more": {"k": [1, 2]}}]}`)
	changes := map[string]func(e *DecisionEntry){
		"a pointer's value":          func(e *DecisionEntry) { *e.Score = 2.5 },
		"a map's value":              func(e *DecisionEntry) { e.Scores["a"] = 9 },
		"a list's element":           func(e *DecisionEntry) { e.ChainExecuted[0] = "y" },
		"a nested struct's field":    func(e *DecisionEntry) { e.PRsCreated[0].Number = 5 },
		"a nested pointer's value":   func(e *DecisionEntry) { *e.PRsCreated[0].Title = "U" },
		"a map in a nested pointer":  func(e *DecisionEntry) { e.ContrarianCheck.AdjustmentApplied["d"] = 3 },
		"an unknown key's bytes":     func(e *DecisionEntry) { copy(e.Extra["x_more"], `{"k": [7, 2]}`) },
		"an unknown key added":       func(e *DecisionEntry) { e.Extra["x_new"] = json.RawMessage(`1`) },
		"a field of a pointed value": func(e *DecisionEntry) { e.ContrarianCheck.Argument = "b" },
	}
	for name, change := range changes {
		var s State
		if err := decodeDocument(doc, &s); err != nil {
			t.Fatal(err)
		}
		before, err := encodeJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		change(&s.DecisionLog[0])
		got, err := encodeJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, before) {
			t.Errorf("%s changed in place: the entry is written as it was read\n%s", name, got)
		}
		var o State
		withOldEncoding(func() {
			if err := decodeDocument(doc, &o); err != nil {
				t.Fatal(err)
			}
			change(&o.DecisionLog[0])
		})
		var want []byte
		withOldEncoding(func() { want, _ = encodeJSON(o) })
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed in place: writes\n%s\nthe old encoding writes\n%s", name, got, want)
		}
	}
}

// Values made by the program, not read — strings to escape, numbers at
// the edges, a value that is not JSON, nesting past encoding/json's limit
// — write, or fail, exactly as with encoding/json.
func TestEncodeFast_HostileValues(t *testing.T) {
	nested := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	strs := []string{"plain", "", "quote \" and \\", "<&>", "tab\tnl\nnul\x00", "del\x7f", "\u2028\u2029", "bad \xff\xfe utf8",
		"é 中 😀", "\x1f", "ends in \\"}
	floats := []float64{0, math.Copysign(0, -1), 1e21, 1e20, 1e-6, 1e-7, -1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}
	var values []any
	for _, s := range strs {
		values = append(values,
			Outcomes{SchemaVersion: s, Entries: []Outcome{{Domain: s, Skill: s, ResultType: s, Extra: Extra{s: json.RawMessage(`1`)}}}},
			State{CycleStartedAt: s, DomainLastRun: map[string]string{s: s}, ContrarianChecks: []string{s},
				DecisionLog: []DecisionEntry{{Timestamp: s, Action: s, ChainExecuted: []string{s}, Scores: map[string]float64{s: 1}}}})
	}
	for _, f := range floats {
		values = append(values,
			Outcomes{Entries: []Outcome{{QualityMult: f, Score: &f}}},
			State{DecisionLog: []DecisionEntry{{Score: &f, Scores: map[string]float64{"a": f}}}})
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		values = append(values, Outcomes{Entries: []Outcome{{QualityMult: bad}}}, State{DecisionLog: []DecisionEntry{{Score: &bad}}})
	}
	for _, raw := range []json.RawMessage{json.RawMessage(`{ "a" : [ 1 , 2 ] }`), json.RawMessage(`{"a":`), json.RawMessage(`tr ue`),
		json.RawMessage(` 1 `), json.RawMessage(``), json.RawMessage(`"\u00"`), json.RawMessage("\"\xff\""), json.RawMessage(`1 2`),
		nested(9999), nested(10000), nested(10001)} {
		values = append(values,
			Outcomes{Entries: []Outcome{{CycleID: 1, Extra: Extra{"x": raw}}}},
			Outcomes{Extra: Extra{"x": raw}},
			State{DecisionLog: []DecisionEntry{{PROutcomes: raw}}},
			State{DecisionLog: []DecisionEntry{{Extra: Extra{"x": raw}}}, Extra: Extra{"y": raw}})
	}
	values = append(values,
		State{CycleCount: math.MaxInt, ConsecutiveSilentFailures: math.MinInt, CountedPRs: []int{math.MaxInt}},
		Outcomes{}, State{}, Outcomes{Entries: []Outcome{}}, State{DecisionLog: []DecisionEntry{}},
		Memos{}, Episodes{}, Reflections{}, SkillGaps{}, Metrics{}, Goals{}, ActionQueue{}, Checkpoints{}, Cascades{},
		Principles{}, NewConfidence(), CostLedger{}, Lens{}, LensChangelog{})
	for i, v := range values {
		got, gotErr := encodeJSON(v)
		var want []byte
		var wantErr error
		withOldEncoding(func() { want, wantErr = encodeJSON(v) })
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("value %d (%T): writes\n%.400s (%v)\nencoding/json writes\n%.400s (%v)", i, v, got, gotErr, want, wantErr)
		}
	}
}

// The fast paths leave to encoding/json what they cannot do alike, and a
// plan is refused for the struct shapes encoding/json reads otherwise.
func TestEncodeFast_FallsBackWhereUnsure(t *testing.T) {
	type embedded struct{ A int }
	type withEmbedded struct {
		embedded
		B int
	}
	type withString struct {
		A int `json:"a,string"`
	}
	type withOmitZero struct {
		A int `json:"a,omitzero"`
	}
	type twoOfAName struct {
		A int
		B int `json:"A"`
	}
	type oddName struct {
		A int `json:"a-b"`
	}
	type plain struct {
		A int    `json:"a,omitempty"`
		B string `json:"b"`
		c int
		D []Outcome `json:"d"`
		E *float64  `json:"e"`
		F any       `json:"f,omitempty"`
		G string    `json:"-"`
	}
	for _, v := range []any{withEmbedded{}, withString{}, withOmitZero{}, twoOfAName{A: 1, B: 2}, oddName{}} {
		if encPlanFor(reflect.TypeOf(v)) != nil {
			t.Errorf("%T has a plan", v)
		}
		got, err := marshalStruct(v)
		want, werr := marshalNoEscape(v)
		if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("%T: %s (%v), encoding/json %s (%v)", v, got, err, want, werr)
		}
	}
	if encPlanFor(reflect.TypeOf(plain{})) == nil {
		t.Fatal("a plain struct has no plan")
	}
	f := 0.5
	for _, v := range []plain{{}, {A: 1, B: "<b>", c: 2, D: []Outcome{{CycleID: 1}}, E: &f, F: map[string]any{"z": 1, "a": []any{"\u2028"}}, G: "g"}} {
		got, err := marshalStruct(v)
		want, werr := marshalNoEscape(v)
		if !bytes.Equal(got, want) || err != nil || werr != nil {
			t.Errorf("%+v: %s (%v), encoding/json %s (%v)", v, got, err, want, werr)
		}
	}
	// Output that is not JSON goes back to encoding/json, for its error.
	if _, ok := encodeDocument(Outcomes{Extra: Extra{"x": json.RawMessage(`{`)}}); ok {
		t.Error("a document holding a value that is not JSON was encoded by the fast path")
	}
	if _, ok := encodeDocument(struct{ A int }{1}); ok {
		t.Error("a value that does not encode itself was encoded by the fast path")
	}
}

// appendCompactValid takes exactly what encoding/json compacts, and
// writes what it writes.
func FuzzAppendCompactValid(f *testing.F) {
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	f.Add([]byte(" [ 1 , { \"a\" : \"b c\" } ] \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want bytes.Buffer
		werr := json.Compact(&want, b)
		got, ok := appendCompactValid(nil, b)
		if ok != (werr == nil) {
			t.Fatalf("%q: ok %v, encoding/json: %v", b, ok, werr)
		}
		if ok && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q: compacts to %q, encoding/json to %q", b, got, want.Bytes())
		}
	})
}

// Every document an e2e project of the benchmarks holds (a real
// cycle-2000 project when OODA_BENCH_PROJECT names one) writes as with
// the replaced encoding, unchanged and after a cycle's change.
func TestEncodeFast_BenchProject(t *testing.T) {
	root := os.Getenv("OODA_BENCH_PROJECT")
	if root == "" {
		root = benchProject(t, 2000)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "agent", "state", "*", "*.json"))
	n := 0
	for _, p := range paths {
		dec, ok := fileModels[filepath.Base(p)]
		if !ok {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cur, old, err := decodePair(dec, b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sameAsOldEncoding(t, p, cur, old)
		if cycleChange(cur) && cycleChange(old) {
			sameAsOldEncoding(t, p+": a cycle's change", cur, old)
		}
		n++
	}
	if n < 8 {
		t.Fatalf("only %d files compared", n)
	}
}

// FuzzEncodeFastMatchesOldEncoding: whatever the bytes, every model that
// decodes them writes them, unchanged and after a cycle's change, as
// the replaced encoding does.
func FuzzEncodeFastMatchesOldEncoding(f *testing.F) {
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, s := range checkedEdgeDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, dec := range allModels() {
			cur, old, err := decodePair(dec, b)
			if err != nil {
				continue
			}
			sameAsOldEncoding(t, fmt.Sprintf("model %d", i), cur, old)
			if cur, old, _ := decodePair(dec, b); cycleChange(cur) && cycleChange(old) {
				sameAsOldEncoding(t, fmt.Sprintf("model %d, a cycle's change", i), cur, old)
			}
		}
	})
}

// The copy an entry keeps when read is the value its bytes decode to
// again: what the encoder it replaced compared the entry with. Every
// entry type the files hold keeps one.
func TestReadEntry_CopyIsTheValueDecodedAgain(t *testing.T) {
	n := 0
	types := map[reflect.Type]bool{}
	for _, d := range entryCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		for _, e := range readEntries(reflect.ValueOf(v)) {
			r := readOf(e)
			if r == nil {
				continue
			}
			again, againExtra, ok := r.redecoded()
			if !ok {
				t.Fatalf("%s: %s read from %s does not decode again", d.name, e.Type(), r.raw)
			}
			if r.base == nil {
				// Only a type copyDeep cannot copy (a reference in an
				// unexported field) keeps none, and is decoded again.
				if _, copyable := structCopyPlan(again.Type()); copyable {
					t.Fatalf("%s: %s read from %s keeps no copy", d.name, e.Type(), r.raw)
				}
				continue
			}
			kept, keptExtra, _ := r.decoded()
			if !sameEntry(kept, again) || !sameValue(reflect.ValueOf(keptExtra), reflect.ValueOf(againExtra)) {
				t.Fatalf("%s: %s kept\n%+v %v\ndecoded again\n%+v %v", d.name, e.Type(), kept, keptExtra, again, againExtra)
			}
			types[e.Type()] = true
			n++
		}
	}
	if n < 200 || len(types) < 10 {
		t.Fatalf("only %d entries of %d types compared", n, len(types))
	}
}
