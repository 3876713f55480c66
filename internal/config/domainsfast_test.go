package config

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// domainValues are domain objects of every shape config.json can hold:
// the common ones the one-pass decoder takes, and the ones it must leave
// to encoding/json (a key in another case, an escape, a null, a value of
// the wrong type, a number out of range, a duplicated key).
var domainValues = []string{
	`{}`,
	`{"weight": 1, "primary_skill": "/true"}`,
	`{"weight":1.5,"state_file":"agent/state/x.json","primary_skill":"/scan","chain":["/a","/b"],"branch_prefix":"auto/x/","fallback":true,"enabled":false,"status":"degraded","mission_alignment":0.5,"description":"d","rotation":[],"ooda_phase":"act","min_interval_hours":2,"goal_contribution":0,"quality_rubric":{"a": [1, 2]}}`,
	` { "weight" : 2e1 , "chain" : [ ] , "rotation" : [ "x" , "y" ] } `,
	`{"weight": -0.0, "mission_alignment": 1e-320}`,
	`{"Weight": 3}`,
	`{"weight": 1, "WEIGHT": 2}`,
	`{"primary_Skill": "/x"}`,
	`{"weight": 1, "weight": 4}`,
	`{"chain": ["a"], "chain": ["b", "c"]}`,
	`{"unknown": {"deep": [1, {"x": null}]}, "weight": 1}`,
	`{"__doc__": "a note", "weight": 1}`,
	`{"-": 5, "Name": "n", "Index": 3}`,
	`{"weight": null}`,
	`{"enabled": null}`,
	`{"chain": null}`,
	`{"quality_rubric": null}`,
	`{"mission_alignment": null}`,
	`{"weight": "1"}`,
	`{"weight": true}`,
	`{"fallback": 1}`,
	`{"enabled": "yes"}`,
	`{"chain": "a"}`,
	`{"chain": [1]}`,
	`{"chain": ["a", null]}`,
	`{"status": 3}`,
	`{"weight": 1e999}`,
	`{"state_file": "a\"b"}`,
	`{"state_file": "a\\u00e9"}`,
	`{"description": "caf\u00e9"}`,
	`{"description": "tab\there"}`,
	`{"st\u0061tus": "x"}`,
	`{"stätus": "x"}`,
	`{"quality_rubric": [1,2, 3]}`,
	`{"quality_rubric": "text"}`,
	`null`,
	`"a domain"`,
	`[1, 2]`,
	`3`,
}

// decodeBoth decodes the domains object b with the one-pass decoder (as
// Domains.UnmarshalJSON does, through encoding/json) and with encoding/json
// alone, and fails the test when they differ in any value or error.
func decodeBoth(t *testing.T, b string) (taken bool) {
	t.Helper()
	var fast Domains
	ferr := json.Unmarshal([]byte(b), &fast)
	slow, serr := unmarshalDomainsSlow([]byte(b))
	if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
		t.Errorf("%s:\n one pass: %v\n encoding/json: %v", b, ferr, serr)
		return false
	}
	if serr == nil && !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s:\n one pass:      %#v\n encoding/json: %#v", b, fast, slow)
	}
	_, taken = unmarshalDomainsFast([]byte(b))
	return taken
}

// TestDomainsFastAgreesWithEncodingJSON decodes every domain value alone,
// in pairs and all together, and requires the one-pass decoder to give
// what encoding/json gives, value for value and error for error. It also
// requires that the common shapes are taken by the one pass and the others
// left to encoding/json, so that both paths are exercised.
func TestDomainsFastAgreesWithEncodingJSON(t *testing.T) {
	fastTaken, slowTaken := 0, 0
	count := func(taken bool) {
		if taken {
			fastTaken++
		} else {
			slowTaken++
		}
	}
	for i, v := range domainValues {
		count(decodeBoth(t, fmt.Sprintf(`{"d%d": %s}`, i, v)))
		for j, w := range domainValues {
			count(decodeBoth(t, fmt.Sprintf(`{"a%d": %s, "b%d": %s}`, i, v, j, w)))
		}
	}
	var all []string
	for i, v := range domainValues {
		all = append(all, fmt.Sprintf(`"d%d":%s`, i, v))
	}
	count(decodeBoth(t, "{"+strings.Join(all, ",")+"}"))
	for _, b := range []string{`{}`, ` { } `, `{"a": {}, "a": {}}`, `{"a\u0062": {}}`, `{"é": {}}`, `null`, `[]`, `{"x": {"weight": 1}, "y": {"weight": 2}}`} {
		count(decodeBoth(t, b))
	}
	if fastTaken == 0 || slowTaken == 0 {
		t.Errorf("one pass took %d objects and left %d: both paths must be exercised", fastTaken, slowTaken)
	}
	for _, common := range []string{`{"d": {"weight": 1, "primary_skill": "/true"}}`, `{"d": ` + domainValues[2] + `}`, `{}`} {
		if _, ok := unmarshalDomainsFast([]byte(common)); !ok {
			t.Errorf("%s was left to encoding/json; the one pass is for this shape", common)
		}
	}
}

// TestDomainsFastRandom decodes random domain objects built from the
// members above, shuffled and with random whitespace, both ways.
func TestDomainsFastRandom(t *testing.T) {
	members := []string{`"weight": 1`, `"weight": 0.25`, `"primary_skill": "/x"`, `"chain": ["/a"]`, `"chain": []`, `"enabled": true`,
		`"enabled": false`, `"fallback": true`, `"status": "active"`, `"mission_alignment": 2`, `"rotation": ["a", "b"]`, `"Weight": 5`,
		`"weight": null`, `"x": [1, {"y": "z"}]`, `"state_file": "agent/state/q.json"`, `"quality_rubric": {"k": 1}`, `"status": "\u0041"`}
	ws := []string{"", " ", "\n", "\t "}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		var doms []string
		for d := 0; d < 1+r.IntN(4); d++ {
			var ms []string
			for m := 0; m < r.IntN(6); m++ {
				ms = append(ms, ws[r.IntN(len(ws))]+members[r.IntN(len(members))]+ws[r.IntN(len(ws))])
			}
			doms = append(doms, fmt.Sprintf(`"d%d":%s{%s}`, r.IntN(6), ws[r.IntN(len(ws))], strings.Join(ms, ",")))
		}
		decodeBoth(t, "{"+strings.Join(doms, ",")+"}")
	}
}

// TestPlainNameIsTheRegexp compares plainName with the regexp it stands
// in for, on names of every length and character class around the rule.
func TestPlainNameIsTheRegexp(t *testing.T) {
	names := []string{"", "a", "A", "0", "_", ".", "-", "a_", "a.", "a-", "_a", ".a", "-a", "a b", "a/b", "a\\b", "a\x00", "a\n", "é", "aé",
		"..", "a..b", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63), "Z9.z_-"}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}), string([]byte{byte(c)})+"a")
	}
	for _, n := range names {
		if got, want := plainName(n), plainNameRE().MatchString(n); got != want {
			t.Errorf("plainName(%q) = %v, the regexp says %v", n, got, want)
		}
	}
}

// unknownKeyCorpus is configurations with unknown keys everywhere the
// schema lists keys: in sections, in domains, in skills, in arrays of
// objects, with documentation keys, and at the top level (not reported).
func unknownKeyCorpus(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, f := range []string{"../../examples/quickstart/config.json", "../../examples/service/config.json", "../compat/testdata/config.json",
		"../compat/testdata/status-dashboard/config.json", "../compat/testdata/rice-extensions/config.json", "testdata/extensions.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	out = append(out, []byte(`{"mission": "m", "topextra": 1, "__doc__": "x",
  "domains": {"a": {"weight": 1, "primary_skill": "/x", "wieght": 2, "__doc__": "d", "rotation": ["x"]},
              "b": {"weight": 2, "primary_skill": "/x", "status": "active", "stat": "x", "nested": {"k": [1, {"q": 2}]}}},
  "safety": {"confidence_treshold": 0.5, "halt_file": "HALT"},
  "scoring": {"weights": 1, "hours_if_never_run": 24},
  "skills": {"/x": {"command": ["true"], "timeout_minutes": 1, "comand": ["x"], "contract": {"anything": [1]}}},
  "health_endpoints": [{"url": "http://x", "nme": "y"}, {"url": "http://z"}],
  "season_modes": {"enabled": false, "modes": {"m": {"weight_overrides": {"a": 1}, "disbled_domains": []}}},
  "progressive_complexity": {"current_level": 1, "levels": [{"name": "x", "extra": 1}]}}`))
	return out
}

// TestUnknownKeysRawAgreesWithDecoded finds the unknown keys of each
// configuration by walking its text and by walking it decoded, and
// requires the same warnings, sorted as keyWarnings sorts them.
func TestUnknownKeysRawAgreesWithDecoded(t *testing.T) {
	sawIssue := false
	for i, raw := range unknownKeyCorpus(t) {
		inst, err := decodeInstance(raw)
		if err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		fromRaw, ok := unknownKeyIssuesRaw(raw)
		if !ok {
			t.Fatalf("config %d: the walk of the text gave up on a configuration of plain keys", i)
		}
		want, got := issueWarnings("f", unknownKeyIssues(inst)), issueWarnings("f", fromRaw)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("config %d:\n from the text: %v\n decoded:       %v", i, got, want)
		}
		sawIssue = sawIssue || len(want) > 0
	}
	if !sawIssue {
		t.Fatal("no configuration of the corpus has an unknown key")
	}
	// A key with an escape or a byte that is not ASCII is left to the
	// decoded walk.
	for _, raw := range []string{`{"domains": {"caf\u00e9": {"weight": 1}}}`, `{"domains": {"é": {"wieght": 1}}}`, `{"safety": {"h\u0061lt_file": "x"}}`} {
		if _, ok := unknownKeyIssuesRaw([]byte(raw)); ok {
			t.Errorf("%s: the walk of the text took a key it cannot unquote as encoding/json does", raw)
		}
	}
}

// TestRememberedConfigWarnsAsFresh loads configurations with unknown keys
// twice, the second time from a remembered verdict (the text walked, not
// decoded), and requires the same warnings.
func TestRememberedConfigWarnsAsFresh(t *testing.T) {
	withVerdicts(t)
	warned := 0
	defer func() {
		if !t.Failed() && warned == 0 {
			t.Error("no valid configuration of the corpus has an unknown key")
		}
	}()
	for i, raw := range unknownKeyCorpus(t) {
		root, path := project(t, string(raw))
		fresh, ferr := LoadProject(path, root)
		if !knownValid(raw) {
			if ferr == nil {
				t.Fatalf("config %d loaded but was not remembered", i)
			}
			continue // not valid: nothing is remembered, nothing is walked
		}
		if _, ok := unknownKeyIssuesRaw(raw); !ok {
			t.Fatalf("config %d: not walked from its text", i)
		}
		again, aerr := LoadProject(path, root)
		if (ferr == nil) != (aerr == nil) || (ferr != nil && ferr.Error() != aerr.Error()) {
			t.Fatalf("config %d: fresh %v, remembered %v", i, ferr, aerr)
		}
		if ferr == nil && !reflect.DeepEqual(fresh.Warnings, again.Warnings) {
			t.Errorf("config %d:\n fresh:      %v\n remembered: %v", i, fresh.Warnings, again.Warnings)
		}
		if ferr == nil && len(fresh.Warnings) > 0 {
			warned++
		}
	}
}

// TestDecodeConfigIsEncodingJSONs decodes configurations — the corpus
// above, one of many domains, and ones with a type error before, inside
// and after the domains, the domains null, empty, twice or under another
// case — with the domains decoded apart and with encoding/json alone, and
// requires the same configuration and the same error.
func TestDecodeConfigIsEncodingJSONs(t *testing.T) {
	docs := unknownKeyCorpus(t)
	var many []string
	for i := 0; i < 300; i++ {
		many = append(many, fmt.Sprintf(`"d%d": {"weight": %d, "primary_skill": "/x", "chain": ["/y"], "mission_alignment": 0.5}`, i, i%7))
	}
	docs = append(docs, []byte(`{"mission": "m", "domains": {`+strings.Join(many, ", ")+`}, "safety": {"confidence_threshold": 0.4}}`))
	for _, d := range []string{
		`{"safety": {"confidence_threshold": "high"}, "domains": {"a": {"weight": 1}}}`,
		`{"domains": {"a": {"weight": 1}}, "safety": {"confidence_threshold": "high"}}`,
		`{"domains": {"a": {"weight": "heavy"}}, "safety": {"confidence_threshold": "high"}}`,
		`{"scoring": [], "domains": {"a": {"weight": "heavy"}}}`,
		`{"domains": {"a": {"weight": 1}, "a": {"weight": 2}}}`,
		`{"domains": null}`, `{"domains": {}}`, `{"domains": []}`, `{"domains": "x"}`,
		`{"Domains": {"a": {"weight": 1}}}`,
		`{"domains": {"a": {"weight": 1}}, "DOMAINS": {"b": {"weight": 2}}}`,
		`{"domains": {"a": {"weight": 1}}, "domains": {"b": {"weight": 2}}}`,
		`{"domains": {"a": {"Weight": 1}}, "project": {"name": "p"}}`,
		`{"dom\u0061ins": {"a": {"weight": 1}}}`,
		`{"project": {"name": "\u00e9"}, "domains": {"a": {"weight": 1, "primary_skill": "/x"}}, "mission": "m"}`,
		` { "domains" : { "a" : { "weight" : 1 } } , "mission" : "m" } `,
	} {
		docs = append(docs, []byte(d))
	}
	split := 0
	for i, b := range docs {
		b = integralNumbers(b)
		want := Default()
		werr := json.Unmarshal(b, want)
		got, gerr := decodeConfigSplit(b)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("document %d: decoded apart %v, encoding/json %v", i, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("document %d:\n decoded apart: %+v\n encoding/json: %+v", i, got, want)
		}
		if start, end, ok := domainsSpan(b); ok {
			if _, ok := unmarshalDomainsFast(b[start:end]); ok {
				split++
			}
		}
	}
	if split < 3 || split == len(docs) {
		t.Errorf("%d of %d documents decoded apart: both paths must be exercised", split, len(docs))
	}
}

// plainNameRE is plainName's rule as a regexp, the oracle it is tested
// against.
var plainNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
})
