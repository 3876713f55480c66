package state

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeAsFile decodes b into a T as Load decodes a file (decodeFile:
// the checked path the fast decoder is on).
func decodeAsFile[T any](b []byte) (T, error) {
	var v T
	err := decodeFile(b, &v)
	return v, err
}

// decodeOutcomesFile decodes b as Load decodes outcomes.json.
func decodeOutcomesFile(b []byte) (Outcomes, error) { return decodeAsFile[Outcomes](b) }

// withEntryOracle runs f with every entry read, copied and compared by
// the general path the fast one replaced.
func withEntryOracle(f func()) {
	saved := entryFastOff
	entryFastOff = true
	defer func() { entryFastOff = saved }()
	f()
}

// likeEntryOracle decodes the document b as a T with the fast path and
// with the general one, and fails unless they agree: the error, the
// value (unknown keys and the entries' records of their bytes and copies
// included), the warnings, the encoding, and the encoding after each of
// changes (made to a value of its own each time).
func likeEntryOracle[T any](t *testing.T, name string, b []byte, changes ...func(*T)) {
	t.Helper()
	got, gotErr := decodeAsFile[T](b)
	var want T
	var wantErr error
	withEntryOracle(func() { want, wantErr = decodeAsFile[T](b) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: error %v, the oracle's %v\n%s", name, gotErr, wantErr, b)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded\n%#v\nthe oracle decoded\n%#v\nfrom %s", name, got, want, b)
	}
	if gw, ww := looseWarnings(got, 100), looseWarnings(want, 100); !reflect.DeepEqual(gw, ww) {
		t.Fatalf("%s: warnings %q, the oracle's %q", name, gw, ww)
	}
	for i, change := range append([]func(*T){func(*T) {}}, changes...) {
		g, gerr := decodeAsFile[T](b)
		var w T
		var werr error
		withEntryOracle(func() { w, werr = decodeAsFile[T](b) })
		if gerr != nil || werr != nil {
			t.Fatal(gerr, werr)
		}
		change(&g)
		change(&w)
		gb, gerr := encodeJSON(g)
		var wb []byte
		withEntryOracle(func() { wb, werr = encodeJSON(w) })
		if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%s: change %d writes\n%s (%v)\nthe oracle's\n%s (%v)", name, i, gb, gerr, wb, werr)
		}
	}
}

// outcomesLikeOracle is likeEntryOracle for outcomes.json, with the
// changes a cycle makes to it and changes in place.
func outcomesLikeOracle(t *testing.T, name string, b []byte) {
	t.Helper()
	likeEntryOracle(t, name, b,
		func(o *Outcomes) { o.Entries = append(o.Entries, Outcome{CycleID: 9999, ResultType: "futile"}) },
		func(o *Outcomes) {
			if len(o.Entries) > 0 {
				o.Entries = o.Entries[1:]
			}
		},
		func(o *Outcomes) {
			for i := range o.Entries {
				e := &o.Entries[i]
				switch i % 5 {
				case 0:
					e.Domain += "x"
				case 1:
					if e.Score != nil {
						*e.Score += 1 // in place: only the copy tells
					} else {
						e.Score = new(float64)
					}
				case 2:
					e.HadOutput = nil
				case 3:
					if e.Extra == nil {
						e.Extra = Extra{}
					}
					e.Extra["added"] = json.RawMessage(`1`)
				}
			}
		})
}

// stateLikeOracle is likeEntryOracle for state.json, with changes to its
// decision log: in place, at any depth, and of the list.
func stateLikeOracle(t *testing.T, name string, b []byte) {
	t.Helper()
	likeEntryOracle(t, name, b,
		func(s *State) {
			s.DecisionLog = append(s.DecisionLog, DecisionEntry{Cycle: 9999, Action: "execute"})
		},
		func(s *State) {
			if len(s.DecisionLog) > 0 {
				s.DecisionLog = s.DecisionLog[1:]
			}
		},
		func(s *State) {
			for i := range s.DecisionLog {
				e := &s.DecisionLog[i]
				switch i % 6 {
				case 0:
					if e.Scores != nil {
						for k := range e.Scores {
							e.Scores[k]++
						}
					} else {
						e.Scores = map[string]float64{}
					}
				case 1:
					if e.ContrarianCheck != nil {
						e.ContrarianCheck.Validity += "x"
					}
				case 2:
					if e.Score != nil {
						*e.Score = -*e.Score
					}
				case 3:
					e.ChainExecuted = append(e.ChainExecuted, "/x")
				case 4:
					if len(e.PRsCreated) > 0 {
						e.PRsCreated[0].Number++
					}
				case 5:
					for k := range e.Extra {
						e.Extra[k] = json.RawMessage(`null`)
					}
				}
			}
		})
}

// outcomeValues are values of every JSON type, as a file may hold them
// under any key: well typed, mistyped, escaped, at the edges of what a
// number reads as.
var outcomeValues = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-12`, `42`, `1.5`, `-0.0`, `1e3`, `1E-2`, `123456789012345678`,
	`1234567890123456789`, `9007199254740993`, `1e400`, `-1e400`, `0.1`, `""`, `"x"`, `"d0"`, `"caf\u00e9"`,
	`"a\"b"`, `"é"`, `"\ud83d\ude00"`, `[]`, `[1]`, `{}`, `{"a":1}`, `"2026-05-14T23:00:00Z"`, `"futile"`,
}

// outcomeKeys are the keys an outcome may hold: its own, case variants,
// escaped spellings, and unknown ones.
var outcomeKeys = []string{
	"cycle_id", "timestamp", "domain", "skill", "result", "result_type", "score", "process_factor",
	"quality_multiplier", "pr_number", "had_output", "on_mission", "artifact_score", "cycle_mode",
	"Score", "CYCLE_ID", "cycle_\\u0069d", "extra_key", "notes", "", "cycleid", "read", "Extra",
}

// randomOutcomeDoc is an outcomes.json document of n random entries,
// most of them well formed (the fast path's case), some not.
func randomOutcomeDoc(r *rand.Rand, n int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"schema_version": "1.0.0", "entries": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",\n  ")
		}
		if r.Intn(20) == 0 {
			sb.WriteString(outcomeValues[r.Intn(len(outcomeValues))]) // not an object
			continue
		}
		sb.WriteString("{")
		members := 1 + r.Intn(16)
		wellFormed := r.Intn(2) == 0
		for j := 0; j < members; j++ {
			if j > 0 {
				sb.WriteString(", ")
			}
			var k, v string
			if wellFormed {
				k = outcomeKeys[r.Intn(14)]
				v = wellTypedOutcomeValue(r, k)
			} else {
				k = outcomeKeys[r.Intn(len(outcomeKeys))]
				v = outcomeValues[r.Intn(len(outcomeValues))]
			}
			fmt.Fprintf(&sb, "%q:%s%s", k, strings.Repeat(" ", r.Intn(2)), v)
		}
		sb.WriteString("}")
	}
	sb.WriteString("]}")
	// %q escapes a backslash; the escaped keys are meant as written.
	return []byte(strings.ReplaceAll(sb.String(), `\\u`, `\u`))
}

// wellTypedOutcomeValue is a value of the JSON type the field of key k
// takes, or null.
func wellTypedOutcomeValue(r *rand.Rand, k string) string {
	if r.Intn(8) == 0 {
		return "null"
	}
	switch k {
	case "cycle_id", "pr_number":
		return fmt.Sprint(r.Intn(5000) - 10)
	case "score", "process_factor", "quality_multiplier", "artifact_score":
		return []string{"0", "-0", "0.25", "1", "2.5e1", "1e-3", "-1.75", "100000000000000000001"}[r.Intn(8)]
	case "had_output", "on_mission":
		return []string{"true", "false"}[r.Intn(2)]
	}
	return []string{`"d0"`, `"/true"`, `"success"`, `"futile"`, `"feature"`, `""`, `"2026-05-15T00:00:00Z"`}[r.Intn(7)]
}

// The fast path decodes, warns and writes every outcomes.json as the
// general path does: random documents, well formed or not.
func TestOutcomeFastMatchesOracleOnRandomDocs(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for i := 0; i < 1500; i++ {
		outcomesLikeOracle(t, fmt.Sprintf("doc %d", i), randomOutcomeDoc(r, 1+r.Intn(6)))
	}
}

// ... and the original project's files, this package's test documents,
// and every fixture read as an outcomes.json.
func TestOutcomeFastMatchesOracleOnCompat(t *testing.T) {
	n := 0
	for p, b := range decodeOnceCorpus(t) {
		docs := [][]byte{b}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "fuzz" {
			docs = fuzzCorpusValues(b)
		}
		for _, doc := range docs {
			outcomesLikeOracle(t, p, doc)
			n++
		}
	}
	for _, tc := range extraKeyDocs {
		outcomesLikeOracle(t, tc.name, []byte(tc.doc))
		outcomesLikeOracle(t, tc.name, []byte(`{"entries":[`+tc.doc+`]}`))
		n += 2
	}
	if n < 20 {
		t.Fatalf("only %d documents compared", n)
	}
}

// The fast path takes an entry only when it is sure to read it as the
// general path does; each entry below fails one of its preconditions,
// falls back, and is still read as the general path reads it.
func TestOutcomeFastFallsBack(t *testing.T) {
	plain := `{"cycle_id": 7, "timestamp": "2026-05-14T23:00:00Z", "score": 0.5, "pr_number": null, "had_output": false}`
	var o Outcome
	if !decodeOutcomeFast([]byte(plain), &o) || o.CycleID != 7 || *o.Score != 0.5 || o.PRNumber != nil || *o.HadOutput {
		t.Fatalf("the fast path did not take a plain entry: %+v", o)
	}
	for _, doc := range []string{
		`{"cycle_id": 7, "notes": "an unknown key"}`,
		`{"Cycle_ID": 7}`,                   // a case variant
		`{"cycle_\u0069d": 7}`,              // an escaped key
		`{"cycle_id": "7"}`,                 // a mistyped value
		`{"cycle_id": 7.5}`,                 // not an integer
		`{"cycle_id": 1234567890123456789}`, // more digits than plainInt reads
		`{"domain": "caf\u00e9"}`,           // an escaped string
		`{"score": 1e400}`,                  // out of a float's range
		`{"had_output": 1}`,                 // a number for a bool
		`{"score": [1]}`,                    // a list for a number
	} {
		var o Outcome
		if decodeOutcomeFast([]byte(doc), &o) {
			t.Errorf("the fast path took %s", doc)
		}
		outcomesLikeOracle(t, doc, []byte(`{"entries":[`+doc+`]}`))
	}
}

// An outcome read and left alone is written as its bytes, and one
// changed in place (through a pointer it shares with nothing) is not:
// the fast comparison sees the change the copy made at reading keeps
// from it.
func TestOutcomeFastSeesChangesInPlace(t *testing.T) {
	doc := []byte(`{"entries":[{"cycle_id":1,  "score": 1.0, "pr_number": 3}]}`)
	o, err := decodeOutcomesFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := o.Entries[0].MarshalJSON(); string(b) != `{"cycle_id":1,  "score": 1.0, "pr_number": 3}` {
		t.Fatalf("an unchanged entry is written as %s", b)
	}
	*o.Entries[0].Score = 2
	*o.Entries[0].PRNumber = 4
	if b, _ := o.Entries[0].MarshalJSON(); string(b) != `{"cycle_id":1,"score":2,"pr_number":4}` {
		t.Fatalf("an entry changed in place is written as %s", b)
	}
}

// fillRandom sets every exported field of the value v points to, at any
// depth, to a random value: a pointer, list or map nil, empty or filled,
// a float now and then -0 (which differs from 0 by its bits).
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString([]string{"", "a", "d0", "é"}[r.Intn(4)])
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(r.Intn(7) - 3))
	case reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 0.5, -2, 70.5036}[r.Intn(5)])
	case reflect.Pointer:
		if r.Intn(3) == 0 || depth > 4 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := r.Intn(4); {
		case n == 0 || depth > 4:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := 0; i < s.Len(); i++ {
				fillRandom(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.Intn(4); {
		case n == 0 || depth > 4:
			v.SetZero()
		default:
			m := reflect.MakeMap(v.Type())
			for i := 0; i < n-1; i++ {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(fmt.Sprint("k", i))
				e := reflect.New(v.Type().Elem()).Elem()
				fillRandom(r, e, depth+1)
				if e.Type() == rawType && e.IsNil() {
					e.SetBytes([]byte(`null`)) // an unknown key holds JSON
				}
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillRandom(r, v.Field(i), depth+1)
			}
		}
	}
	if v.Type() == rawType && !v.IsNil() {
		v.SetBytes([]byte(`1`)) // a RawMessage holds JSON
	}
}

// sharedRefs lists the paths at which a and b (of one type) hold the
// same pointer, list or map: a copy that shares one is not a copy.
func sharedRefs(a, b reflect.Value, path string) []string {
	var out []string
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || a.Type() == readEntryType {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		return sharedRefs(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for i := 0; i < a.Len(); i++ {
			out = append(out, sharedRefs(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for it := a.MapRange(); it.Next(); {
			out = append(out, sharedRefs(it.Value(), b.MapIndex(it.Key()), path+"."+it.Key().String())...)
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			out = append(out, sharedRefs(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	}
	return out
}

// leafPaths lists every changeable leaf of v (a field, a list element,
// a map value, a pointer's target, whether it is nil), each as a function
// that changes it in place.
func leafChanges(v reflect.Value, path string) map[string]func() {
	out := map[string]func(){}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.String:
			out[path] = func() { v.SetString(v.String() + "x") }
		case reflect.Bool:
			out[path] = func() { v.SetBool(!v.Bool()) }
		case reflect.Int, reflect.Int64:
			out[path] = func() { v.SetInt(v.Int() + 1) }
		case reflect.Float64:
			out[path] = func() {
				if v.Float() == 0 {
					v.SetFloat(-v.Float()) // 0 and -0: equal, not the same
				} else {
					v.SetFloat(v.Float() * 2)
				}
			}
		case reflect.Pointer:
			if v.Type() == readEntryType {
				return
			}
			out[path+"(nil)"] = func() {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				} else {
					v.SetZero()
				}
			}
			if !v.IsNil() {
				walk(v.Elem(), path+"*")
			}
		case reflect.Slice:
			out[path+"(nil)"] = func() {
				if v.IsNil() {
					v.Set(reflect.MakeSlice(v.Type(), 0, 0))
				} else {
					v.SetZero()
				}
			}
			if v.Type().Elem().Kind() == reflect.Uint8 {
				out[path+"(bytes)"] = func() { v.SetBytes(append(append([]byte(nil), v.Bytes()...), ' ')) }
				return
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Map:
			out[path+"(nil)"] = func() {
				if v.IsNil() {
					v.Set(reflect.MakeMap(v.Type()))
				} else {
					v.SetZero()
				}
			}
			for _, k := range v.MapKeys() {
				out[path+"."+k.String()+"(del)"] = func() { v.SetMapIndex(k, reflect.Value{}) }
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(v.MapIndex(k))
				switch e.Kind() {
				case reflect.Float64:
					out[path+"."+k.String()] = func() { v.SetMapIndex(k, reflect.ValueOf(e.Float()+1)) }
				case reflect.Int:
					out[path+"."+k.String()] = func() { v.SetMapIndex(k, reflect.ValueOf(int(e.Int())+1)) }
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i), path+"."+v.Type().Field(i).Name)
				}
			}
		}
	}
	walk(v, path)
	return out
}

// checkFastCopy compares copy and same, the fast copy and comparison of
// an alias entry type A, with copyDeep and sameEntry on random values:
// the copy equals copyDeep's and shares nothing with what it copies,
// and a change anywhere in the value (every field, a new one included:
// the walk finds it by reflection) is seen by both comparisons alike.
func checkFastCopy[A any](t *testing.T, copyFn func(*A) *A, same func(a, b *A) bool) {
	t.Helper()
	r := rand.New(rand.NewSource(5))
	changes := 0
	for i := 0; i < 400; i++ {
		var v A
		fillRandom(r, reflect.ValueOf(&v).Elem(), 0)
		c := copyFn(&v)
		want, ok := copyDeep(reflect.ValueOf(v))
		if !ok || !reflect.DeepEqual(*c, want.Interface()) {
			t.Fatalf("copy\n%#v\ncopyDeep\n%#v", *c, want.Interface())
		}
		if s := sharedRefs(reflect.ValueOf(v), reflect.ValueOf(*c), "v"); len(s) > 0 {
			t.Fatalf("the copy shares %v with the value", s)
		}
		if !same(c, &v) || !sameEntry(reflect.ValueOf(*c), reflect.ValueOf(v)) {
			t.Fatalf("a copy is not the same as its value: %#v", v)
		}
		for path := range leafChanges(reflect.ValueOf(&v).Elem(), "v") {
			// Each change made to a value of its own, whose leaves are
			// found again: the copy below shares none of v's.
			w := *copyFn(&v)
			c := copyFn(&w)
			leafChanges(reflect.ValueOf(&w).Elem(), "v")[path]()
			got, want := same(c, &w), sameEntry(reflect.ValueOf(*c), reflect.ValueOf(w))
			if got != want {
				t.Fatalf("after a change at %s: same %v, sameEntry %v", path, got, want)
			}
			if got {
				t.Fatalf("a change at %s is not seen", path)
			}
			changes++
		}
	}
	if changes < 1000 {
		t.Fatalf("only %d changes compared", changes)
	}
}

// copyDecision and sameDecision do what copyDeep and sameEntry do.
func TestDecisionFastCopyMatchesReflection(t *testing.T) {
	checkFastCopy(t, copyDecision, sameDecision)
}

// copyOutcome and sameOutcome do what copyDeep and sameEntry do, for an
// outcome without unknown keys (the only one copyOutcome is given).
func TestOutcomeFastCopyMatchesReflection(t *testing.T) {
	checkFastCopy(t, func(o *outcomeAlias) *outcomeAlias {
		o.Extra = nil
		return copyOutcome((*Outcome)(o))
	}, sameOutcome)
}

// The fast copy and comparison of decision-log entries read, copy and
// write every state.json as the general ones do: the original project's
// files, this package's, and random decision logs (with unknown keys).
func TestDecisionFastMatchesOracle(t *testing.T) {
	n := 0
	for p, b := range decodeOnceCorpus(t) {
		docs := [][]byte{b}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "fuzz" {
			docs = fuzzCorpusValues(b)
		}
		for _, doc := range docs {
			stateLikeOracle(t, p, doc)
			n++
		}
	}
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 300; i++ {
		log := make([]DecisionEntry, 1+r.Intn(4))
		for j := range log {
			fillRandom(r, reflect.ValueOf(&log[j]).Elem(), 0)
		}
		b, err := json.Marshal(map[string]any{"cycle_count": i, "decision_log": log})
		if err != nil {
			t.Fatal(err)
		}
		if r.Intn(2) == 0 {
			b = []byte(strings.Replace(string(b), `"cycle":`, `"lessons_recalled":["a"],"cycle":`, -1))
		}
		stateLikeOracle(t, fmt.Sprint("random state ", i), b)
		n++
	}
	if n < 300 {
		t.Fatalf("only %d documents compared", n)
	}
}

// copyEpisode and sameEpisode do what copyDeep and sameEntry do.
func TestEpisodeFastCopyMatchesReflection(t *testing.T) {
	checkFastCopy(t, copyEpisode, sameEpisode)
}

// copyReflection and sameReflection do what copyDeep and sameEntry do.
func TestReflectionFastCopyMatchesReflection(t *testing.T) {
	checkFastCopy(t, copyReflection, sameReflection)
}

// The fast copies and comparisons of episodes and reflections read,
// copy and write every episodes.json and reflections.json as the general
// ones do: the original project's files, this package's, and random
// ones, left alone or changed in place.
func TestMemoryFastMatchesOracle(t *testing.T) {
	episodes := func(name string, b []byte) {
		likeEntryOracle(t, name, b,
			func(e *Episodes) {
				for i := range e.Episodes {
					ep := &e.Episodes[i]
					switch i % 4 {
					case 0:
						for k := range ep.DomainsSelected {
							ep.DomainsSelected[k]++
						}
					case 1:
						if len(ep.CycleRange) > 0 {
							ep.CycleRange[0]++
						}
					case 2:
						ep.Lessons = append(ep.Lessons, "x")
					case 3:
						for k := range ep.ConfidenceSnapshot {
							ep.ConfidenceSnapshot[k] = -ep.ConfidenceSnapshot[k]
						}
					}
				}
			},
			func(e *Episodes) {
				if len(e.Episodes) > 0 {
					e.Episodes = e.Episodes[1:]
				}
			})
	}
	reflections := func(name string, b []byte) {
		likeEntryOracle(t, name, b,
			func(r *Reflections) {
				for i := range r.Reflections {
					if i%2 == 0 {
						r.Reflections[i].Status += "x"
					} else {
						for k := range r.Reflections[i].Extra {
							r.Reflections[i].Extra[k] = json.RawMessage(`2`)
						}
					}
				}
			},
			func(r *Reflections) { r.Reflections = append(r.Reflections, Reflection{Cycle: 9}) })
	}
	n := 0
	for p, b := range decodeOnceCorpus(t) {
		docs := [][]byte{b}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "fuzz" {
			docs = fuzzCorpusValues(b)
		}
		for _, doc := range docs {
			episodes(p, doc)
			reflections(p, doc)
			n++
		}
	}
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 200; i++ {
		eps := make([]Episode, 1+r.Intn(3))
		for j := range eps {
			fillRandom(r, reflect.ValueOf(&eps[j]).Elem(), 0)
		}
		refl := make([]Reflection, 1+r.Intn(3))
		for j := range refl {
			fillRandom(r, reflect.ValueOf(&refl[j]).Elem(), 0)
		}
		eb, err1 := json.Marshal(Episodes{Episodes: eps})
		rb, err2 := json.Marshal(Reflections{Reflections: refl})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		episodes(fmt.Sprint("random episodes ", i), eb)
		reflections(fmt.Sprint("random reflections ", i), rb)
		n++
	}
	if n < 200 {
		t.Fatalf("only %d documents compared", n)
	}
}

// skipValue steps over a container to the index the checking scanner
// finds, however its blanks and scalars run.
func TestSkipValueMatchesScanValue(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	n := 0
	for _, d := range entryCorpus(t) {
		docs := []string{string(d.doc)}
		for k := 0; k < 5; k++ {
			docs = append(docs, string(randomOutcomeDoc(r, 1+r.Intn(4))))
		}
		for _, s := range docs {
			b := []byte(s)
			i := skipSpace(b, 0)
			end, ok := scanValue(b, i, 0)
			if !ok {
				continue
			}
			if got := skipValue(b, i); got != end {
				t.Fatalf("skipValue(%s) = %d, scanValue %d", b, got, end)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d values compared", n)
	}
}

// Load decodes each file it reads in place (decodeFileScan, owned): every
// project of the original's fixtures, and this package's benchmark
// projects, load and write exactly as when each file's bytes were
// copied first.
func TestLoadOwnedMatchesCopied(t *testing.T) {
	roots := []string{benchProject(t, 10), benchProject(t, 2000)}
	dirs, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "evolve"))
	for _, d := range dirs {
		roots = append(roots, filepath.Dir(filepath.Dir(filepath.Dir(d))))
	}
	if len(roots) < 5 {
		t.Fatalf("only %d projects", len(roots))
	}
	for _, root := range roots {
		got, gerr := New(root).Load()
		ownedCopyOn = true
		want, werr := New(root).Load()
		ownedCopyOn = false
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%s: error %v, copied %v", root, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: loaded\n%#v\ncopied\n%#v", root, got, want)
		}
		for i, pair := range [][2]any{{got.State, want.State}, {got.Outcomes, want.Outcomes},
			{got.Reflections, want.Reflections}, {got.Episodes, want.Episodes}, {got.Memos, want.Memos},
			{got.SkillGaps, want.SkillGaps}, {got.Metrics, want.Metrics}, {got.Confidence, want.Confidence}} {
			gb, gerr := encodeJSON(pair[0])
			wb, werr := encodeJSON(pair[1])
			if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s: value %d writes\n%s\ncopied\n%s", root, i, gb, wb)
			}
		}
	}
}

// decodeScalarsTyped reads every list and map as decodeScalars' walk by
// reflection does: the answer and the value, for arrays and objects of
// every kind of element (well typed, mistyped, null, escaped, at the
// edges of a number's range), into each of the types it takes.
func TestScalarsTypedMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	values := append([]string{`"a b"`, `"2026-04-11T15:00:00Z"`, `7`, `-3`, `2.5`}, outcomeValues...)
	types := []reflect.Type{reflect.TypeFor[[]string](), reflect.TypeFor[[]int](),
		reflect.TypeFor[map[string]float64](), reflect.TypeFor[map[string]int]()}
	typedTaken := 0
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		obj := r.Intn(2) == 0
		if obj {
			sb.WriteString("{")
		} else {
			sb.WriteString("[")
		}
		for i, k := 0, r.Intn(5); i < k; i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			if obj {
				fmt.Fprintf(&sb, `"%s": `, []string{"d0", "d1", "d0", `d\u0031`, "é"}[r.Intn(5)])
			}
			sb.WriteString(values[r.Intn(len(values))])
		}
		if obj {
			sb.WriteString("}")
		} else {
			sb.WriteString("]")
		}
		val := []byte(sb.String())
		for _, typ := range types {
			f := memberField{kind: kindOf(typ), elem: kindOf(typ.Elem())}
			got, want := reflect.New(typ).Elem(), reflect.New(typ).Elem()
			gok := decodeScalars(val, got, f)
			var wok bool
			withEntryOracle(func() { wok = decodeScalars(val, want, f) })
			if gok != wok || !reflect.DeepEqual(got.Interface(), want.Interface()) ||
				got.IsNil() != want.IsNil() {
				t.Fatalf("%s into %v: %v %#v, by reflection %v %#v", val, typ, gok, got, wok, want)
			}
			if _, typed := decodeScalarsTyped(val, got); typed {
				typedTaken++
			}
		}
	}
	if typedTaken < 10000 {
		t.Fatalf("the typed path read only %d values", typedTaken)
	}
}
