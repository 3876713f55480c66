package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fastKeyLists pairs each struct the hand-written decoder takes with the
// keys it knows of it.
var fastKeyLists = map[reflect.Type][]string{
	reflect.TypeFor[Config]():         configKeys,
	reflect.TypeFor[Project]():        projectKeys,
	reflect.TypeFor[Implementation](): implementationKeys,
	reflect.TypeFor[Scoring]():        scoringKeys,
	reflect.TypeFor[Adaptive]():       adaptiveKeys,
	reflect.TypeFor[ImplFormula]():    implFormulaKeys,
	reflect.TypeFor[ConfidenceCfg]():  confidenceKeys,
	reflect.TypeFor[Safety]():         safetyKeys,
	reflect.TypeFor[Progressive]():    progressiveKeys,
	reflect.TypeFor[Level]():          levelKeys,
	reflect.TypeFor[Signals]():        signalsKeys,
	reflect.TypeFor[Saturation]():     saturationKeys,
	reflect.TypeFor[Memory]():         memoryKeys,
	reflect.TypeFor[SeasonModes]():    seasonModesKeys,
	reflect.TypeFor[SeasonMode]():     seasonModeKeys,
	reflect.TypeFor[ActiveContext]():  activeContextKeys,
	reflect.TypeFor[Output]():         outputKeys,
	reflect.TypeFor[Cost]():           costKeys,
	reflect.TypeFor[Leap]():           leapKeys,
	reflect.TypeFor[SkillSpec]():      skillSpecKeys,
	reflect.TypeFor[Agent]():          agentKeys,
	reflect.TypeFor[Git]():            gitKeys,
	reflect.TypeFor[Forge]():          forgeKeys,
	reflect.TypeFor[Session]():        sessionKeys,
	reflect.TypeFor[Judge]():          judgeKeys,
	reflect.TypeFor[Eval]():           evalKeys,
}

// jsonFields are the fields of struct type t as encoding/json names them:
// tagged names, "-" left out, an embedded struct's fields promoted.
func jsonFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		f.Name = name // the JSON key, for the callers
		out = append(out, f)
	}
	return out
}

// TestFastKeysAreTheTags requires every struct reachable from Config (but
// Domain, decoded by the domains' own decoder) to have its key list, and
// each list to be exactly the struct's JSON keys: a field added to a
// struct and not to the hand-written decoder fails here.
func TestFastKeysAreTheTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			visit(t.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[t] || t == reflect.TypeFor[Domain]() || t == reflect.TypeFor[Warning]() {
			return
		}
		seen[t] = true
		keys, ok := fastKeyLists[t]
		if !ok {
			panic(fmt.Sprintf("%v has no key list of the hand-written decoder", t))
		}
		var want []string
		for _, f := range jsonFields(t) {
			want = append(want, f.Name)
			visit(f.Type)
		}
		got := slices.Clone(keys)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			panic(fmt.Sprintf("%v: the decoder knows %v, the tags say %v", t, got, want))
		}
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatal(r)
		}
	}()
	visit(reflect.TypeFor[Config]())
	if len(seen) != len(fastKeyLists) {
		t.Fatalf("%d structs reached, %d key lists", len(seen), len(fastKeyLists))
	}
}

// everyFieldJSON is a JSON value of type t with every field of every
// struct set, variant 0 or 1 giving other values (true and false, a list
// and an empty one...).
func everyFieldJSON(t reflect.Type, variant int) string {
	switch t {
	case reflect.TypeFor[json.RawMessage]():
		return []string{`{"r": [1, 2.5, "x"]}`, `"s"`}[variant]
	case reflect.TypeFor[Domains]():
		return []string{`{"b": {"weight": 2, "primary_skill": "/x"}, "a": {"weight": 1, "chain": ["/y"]}}`, `{}`}[variant]
	case reflect.TypeFor[RiceExtensions]():
		return []string{`{"timing": 0.3, "reach": 2}`, `{}`}[variant]
	}
	switch t.Kind() {
	case reflect.Pointer:
		return everyFieldJSON(t.Elem(), variant)
	case reflect.String:
		return []string{`"alpha"`, `"beta/x"`}[variant]
	case reflect.Float64:
		return []string{`12.5`, `-3`}[variant]
	case reflect.Int:
		return []string{`7`, `-2`}[variant]
	case reflect.Bool:
		return []string{`true`, `false`}[variant]
	case reflect.Slice:
		if variant == 1 {
			return `[]`
		}
		e := everyFieldJSON(t.Elem(), 0)
		return "[" + e + ", " + everyFieldJSON(t.Elem(), 1) + "]"
	case reflect.Map:
		if variant == 1 {
			return `{"default": ` + everyFieldJSON(t.Elem(), 1) + `}`
		}
		return `{"k1": ` + everyFieldJSON(t.Elem(), 0) + `, "2": ` + everyFieldJSON(t.Elem(), 1) + `}`
	case reflect.Struct:
		var ms []string
		for _, f := range jsonFields(t) {
			ms = append(ms, fmt.Sprintf("%q: %s", f.Name, everyFieldJSON(f.Type, variant)))
		}
		return "{" + strings.Join(ms, ", ") + "}"
	}
	panic(fmt.Sprintf("no JSON for %v", t))
}

// decodeBothWays decodes b with encoding/json into the defaults (the
// oracle), with decodeConfigFast and with decodeConfig, and fails unless
// the configurations are the same and decodeConfig's error is
// encoding/json's; fast says whether the hand-written decoder took b.
func decodeBothWays(t testing.TB, b []byte) (fast bool) {
	t.Helper()
	want := Default()
	werr := json.Unmarshal(b, want)
	got, ok := decodeConfigFast(b)
	if ok && (werr != nil || !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s:\n hand-written:  %+v\n encoding/json: %+v (%v)", b, got, want, werr)
	}
	full, ferr := decodeConfig(b)
	if (werr == nil) != (ferr == nil) || (werr != nil && werr.Error() != ferr.Error()) {
		t.Fatalf("%s: decodeConfig %v, encoding/json %v", b, ferr, werr)
	}
	if werr == nil && !reflect.DeepEqual(full, want) {
		t.Fatalf("%s:\n decodeConfig:  %+v\n encoding/json: %+v", b, full, want)
	}
	return ok
}

// TestFastDecodeEveryField decodes documents setting every field of every
// struct, in two variants, and requires the hand-written decoder to take
// them and to decode them as encoding/json does.
func TestFastDecodeEveryField(t *testing.T) {
	for v := 0; v < 2; v++ {
		doc := everyFieldJSON(reflect.TypeFor[Config](), v)
		if !decodeBothWays(t, []byte(doc)) {
			t.Fatalf("variant %d not taken by the hand-written decoder: %s", v, doc)
		}
	}
}

// fastFallbacks are documents the hand-written decoder must leave to
// encoding/json, one precondition failing in each.
var fastFallbacks = []string{
	`{"mission": "caf\u00e9"}`,         // an escape in a string
	`{"mission": "café"}`,              // a byte that is not ASCII
	`{"mi\u0073sion": "m"}`,            // an escape in a key
	`{"Mission": "m"}`,                 // a key matching a field but for case
	`{"safety": {"HALT_FILE": "x"}}`,   // the same, deeper
	`{"mission": "a", "mission": "b"}`, // a key twice
	`{"safety": {"halt_file": "a", "halt_file": "b"}}`,
	`{"skills": {"/x": {"command": ["a"]}, "/x": {"builtin": "y"}}}`,
	`{"mission": null}`, // a null
	`{"safety": null}`,
	`{"notifications": null}`,
	`{"health_endpoints": [null]}`,
	`{"safety": {"max_prs_per_cycle": 1.5}}`, // a fraction for an int
	`{"safety": {"max_prs_per_cycle": 99999999999999999999}}`,
	`{"safety": {"confidence_threshold": 1e400}}`,  // beyond a float64
	`{"safety": {"confidence_threshold": "high"}}`, // another type
	`{"safety": []}`,
	`{"skills": []}`,
	`{"skills": {"/x": {"command": "true"}}}`,
	`{"scoring": {"rice_extensions": {"timing": {"weight": 0.3}}}}`,
	`{"scoring": {"rice_extensions": {"timing": "x"}}}`,
	`{"domains": {"a": {"weight": 1}, "a": {"weight": 2}}}`, // domains the one pass does not take
	`{"domains": {"a": {"Weight": 1}}}`,
	`{"domains": null}`,
	`{"git": {"push": "yes"}}`,
	`[]`,
}

// TestFastDecodeFallsBack requires each document of fastFallbacks to be
// left to encoding/json, and decodeConfig to give encoding/json's result
// or error for it.
func TestFastDecodeFallsBack(t *testing.T) {
	for _, d := range fastFallbacks {
		if decodeBothWays(t, []byte(d)) {
			t.Errorf("%s: taken by the hand-written decoder", d)
		}
	}
}

// valueMutations are raw with one member's value replaced at a time, at
// every depth, by values of every JSON type and some the hand-written
// decoder must refuse.
func valueMutations(raw []byte) [][]byte {
	var out [][]byte
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == ':':
			j := skipWS(raw, i+1)
			end, ok := valueEnd(raw, j)
			if !ok {
				continue
			}
			for _, v := range []string{`null`, `"x"`, `2.5`, `-7`, `true`, `["a"]`, `{"k": 1}`} {
				b := append(append(append([]byte(nil), raw[:j]...), v...), raw[end:]...)
				out = append(out, b)
			}
		}
	}
	return out
}

// TestFastDecodeIsEncodingJSONs decodes every configuration at hand, each
// with keys inserted and each with values replaced at every depth, by
// hand and with encoding/json, and requires the same configurations and
// errors; both the hand-written decoder and the fallback must be taken.
func TestFastDecodeIsEncodingJSONs(t *testing.T) {
	taken, left := 0, 0
	for _, raw := range configCorpus(t) {
		docs := append(append([][]byte{raw}, keyMutations(raw)...), valueMutations(raw)...)
		for _, b := range docs {
			if !json.Valid(b) {
				continue
			}
			if decodeBothWays(t, integralNumbers(b)) {
				taken++
			} else {
				left++
			}
		}
	}
	if taken < 1000 || left < 1000 {
		t.Fatalf("%d documents decoded by hand, %d left to encoding/json: both must be exercised", taken, left)
	}
	t.Logf("%d documents decoded by hand, %d left to encoding/json", taken, left)
}

// FuzzDecodeConfigFast decodes valid JSON documents by hand and with
// encoding/json and requires the same configuration, or the fallback.
func FuzzDecodeConfigFast(f *testing.F) {
	for _, b := range configCorpus(f) {
		f.Add(b)
	}
	for _, d := range fastFallbacks {
		f.Add([]byte(d))
	}
	f.Add([]byte(everyFieldJSON(reflect.TypeFor[Config](), 0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		decodeBothWays(t, integralNumbers(b))
	})
}

// TestDecodedKeepsNoBytesOfTheFile decodes every configuration at hand,
// then overwrites the bytes it was decoded from, and requires the
// configuration, the domains and the unknown-key issues to be what the
// untouched bytes give: keys are read in place while decoding, and
// whatever is kept must be a copy.
func TestDecodedKeepsNoBytesOfTheFile(t *testing.T) {
	scribble := func(b []byte) {
		for i := range b {
			b[i] = 'X'
		}
	}
	checked := 0
	for _, raw := range configCorpus(t) {
		for _, b := range append([][]byte{raw}, keyMutations(raw)[:20]...) {
			b = integralNumbers(b)
			buf := append([]byte(nil), b...)
			c, ok := decodeConfigFast(buf)
			issues, iok := unknownKeyIssuesRaw(buf)
			start, end, sok := domainsSpan(buf)
			var ds Domains
			if sok {
				ds, sok = unmarshalDomainsFast(buf[start:end])
			}
			scribble(buf)
			if ok {
				want, _ := decodeConfigFast(b)
				if !reflect.DeepEqual(c, want) {
					t.Fatalf("%s: the decoded configuration changed with the bytes it came from", b)
				}
				checked++
			}
			if iok {
				want, _ := unknownKeyIssuesRaw(b)
				if !reflect.DeepEqual(issues, want) {
					t.Fatalf("%s: the issues changed with the bytes they came from", b)
				}
			}
			if sok {
				start, end, _ := domainsSpan(b)
				want, _ := unmarshalDomainsFast(b[start:end])
				if !reflect.DeepEqual(ds, want) {
					t.Fatalf("%s: the domains changed with the bytes they came from", b)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d configurations decoded by hand", checked)
	}
}
