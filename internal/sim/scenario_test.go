package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scenFile is the name Parse is given in these tests: every error must
// carry it.
const scenFile = "scenarios/mine.json"

// validScenario is a scenario using every field, as a document the tests
// below break one field at a time.
func validScenario() map[string]any {
	return map[string]any{
		"name":    "mine",
		"mission": "Ship it.",
		"domains": map[string]any{
			"api":  map[string]any{"weight": 2.0, "mission_alignment": 0.9, "kind": "execute"},
			"docs": map[string]any{"weight": 0.5, "mission_alignment": 0.1, "kind": "observe"},
		},
		"goal":            map[string]any{"id": "ship", "domain": "api", "target_cycles": 4},
		"hours_per_cycle": 6,
		"initial_hours":   12,
		"work":            map[string]any{"api": map[string]any{"from": 2}, "docs": true},
		"alerts":          map[string]any{"api": []any{map[string]any{"cycle": 3, "severity": "warning"}}},
	}
}

// scenJSON is validScenario after edit.
func scenJSON(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	m := validScenario()
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func domainsOf(m map[string]any) map[string]any { return m["domains"].(map[string]any) }

// wantParseError checks that err is a *ParseError naming scenFile and
// the JSON pointer, and that its text says why (every sub).
func wantParseError(t *testing.T, err error, pointer string, subs ...string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *ParseError at %q", err, err, pointer)
	}
	if pe.File != scenFile || pe.Pointer != pointer {
		t.Errorf("error names file %q pointer %q, want %q %q (%v)", pe.File, pe.Pointer, scenFile, pointer, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, scenFile+": "+pointer) {
		t.Errorf("error %q does not start with the file and the pointer %q", msg, scenFile+": "+pointer)
	}
	for _, s := range subs {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not say %q", msg, s)
		}
	}
}

func TestScenario_ParseBuiltins(t *testing.T) {
	if got, want := Builtins(), []string{"A_webapp", "B_library", "C_greenfield"}; !slices.Equal(got, want) {
		t.Fatalf("Builtins() = %v, want %v", got, want)
	}
	type dom = Domain
	cases := map[string]struct {
		domains []Domain
		goal    Goal
		mission string
		work    map[string]string // Work.String of each domain's rule
		alerts  map[string][]Alert
	}{
		"A_webapp": {
			domains: []dom{{"service_health", 2, 0.7, "observe"}, {"test_coverage", 0.5, 0.4, "observe"}, {"backlog", 1, 1, "strategize"}, {"competitors", 0.3, 0, "observe"}},
			goal:    Goal{ID: "ship_v1", Domain: "backlog", TargetCycles: 6},
			mission: "Keep the live app healthy and ship the launch backlog to v1.",
			work:    map[string]string{"backlog": "true", "service_health": `{"cycles":[3,7]}`, "test_coverage": `{"cycles":[5]}`, "competitors": "true"},
			alerts:  map[string][]Alert{"service_health": {{3, "warning"}, {7, "warning"}}},
		},
		"B_library": {
			domains: []dom{{"test_coverage", 1, 1, "observe"}, {"backlog", 0.8, 0.6, "strategize"}, {"service_health", 2, 0, "observe"}},
			goal:    Goal{ID: "green_suite", Domain: "test_coverage", TargetCycles: 5},
			mission: "Keep the test suite green and grow coverage; correctness over features.",
			work:    map[string]string{"test_coverage": "true", "backlog": `{"every": 2}`, "service_health": "false"},
			alerts:  map[string][]Alert{"test_coverage": {{2, "critical"}}},
		},
		"C_greenfield": {
			domains: []dom{{"backlog", 1, 1, "strategize"}, {"implementation", 1.5, 1, "execute"}, {"ux_evolution", 1, 0.1, "observe"}, {"competitors", 0.5, 0, "observe"}},
			goal:    Goal{ID: "pipeline_mvp", Domain: "implementation", TargetCycles: 7},
			mission: "Build the core data pipeline; ignore everything not on the critical path.",
			work:    map[string]string{"backlog": `{"until": 3}`, "implementation": `{"from": 2}`, "ux_evolution": "true", "competitors": "true"},
			alerts:  map[string][]Alert{},
		},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			sc, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != name || sc.Mission != want.mission || sc.HoursPerCycle != 4 || sc.InitialHours != 24 {
				t.Errorf("name %q mission %q hours %g/%g", sc.Name, sc.Mission, sc.HoursPerCycle, sc.InitialHours)
			}
			if !slices.Equal(sc.Domains, want.domains) {
				t.Errorf("domains = %+v\nwant %+v", sc.Domains, want.domains)
			}
			if sc.Goal == nil || *sc.Goal != want.goal {
				t.Errorf("goal = %+v, want %+v", sc.Goal, want.goal)
			}
			got := map[string]string{}
			for d, w := range sc.Work {
				got[d] = w.String()
			}
			if !reflect.DeepEqual(got, want.work) {
				t.Errorf("work = %v, want %v", got, want.work)
			}
			if !reflect.DeepEqual(sc.Alerts, want.alerts) {
				t.Errorf("alerts = %v, want %v", sc.Alerts, want.alerts)
			}
			// Load by name is the same scenario.
			t.Chdir(t.TempDir())
			loaded, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(loaded, sc) {
				t.Errorf("Load(%q) = %+v, want %+v", name, loaded, sc)
			}
		})
	}
	if _, err := Builtin("D_unknown"); err == nil || !strings.Contains(err.Error(), "A_webapp, B_library, C_greenfield") {
		t.Errorf("Builtin of an unknown name: %v; want the built-in names listed", err)
	}
}

func TestScenario_ParseDefaults(t *testing.T) {
	sc, err := Parse([]byte(`{"name": "min", "domains": {"a": {}}}`), scenFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Domain{{Name: "a", Weight: 1, MissionAlignment: 0.5, Kind: "observe"}}; !slices.Equal(sc.Domains, want) {
		t.Errorf("domains = %+v, want %+v", sc.Domains, want)
	}
	if sc.HoursPerCycle != 4 || sc.InitialHours != 24 || sc.Goal != nil || sc.Mission != "" {
		t.Errorf("defaults: %+v", sc)
	}
	if w := sc.Work["a"]; w.At(1) || w.At(100) {
		t.Error("a domain without a work rule has work")
	}
	// Zero is a weight and an alignment, not "unset".
	sc, err = Parse([]byte(`{"name": "z", "domains": {"a": {"weight": 0, "mission_alignment": 0}}, "initial_hours": 0}`), scenFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := sc.Domains[0]; d.Weight != 0 || d.MissionAlignment != 0 || sc.InitialHours != 0 {
		t.Errorf("explicit zeros read as %+v, initial_hours %g", d, sc.InitialHours)
	}
}

func TestScenario_ParseDomainOrder(t *testing.T) {
	// Neither sorted nor reverse-sorted: the file's order is the only
	// order that gives this.
	const doc = `{"name": "o", "domains": {"m": {}, "z": {}, "a": {}, "q": {}, "b": {}},
		"work": {"b": true, "a": true}}`
	sc, err := Parse([]byte(doc), scenFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range sc.Domains {
		got = append(got, d.Name)
	}
	if want := []string{"m", "z", "a", "q", "b"}; !slices.Equal(got, want) {
		t.Errorf("domains in order %v, want the file's %v", got, want)
	}
}

func TestScenario_ParseErrors(t *testing.T) {
	tooLong := strings.Repeat("n", 65)
	cases := []struct {
		what    string
		edit    func(m map[string]any)
		pointer string
		subs    []string
	}{
		{"name missing", func(m map[string]any) { delete(m, "name") }, "/name", []string{"missing"}},
		{"name empty", func(m map[string]any) { m["name"] = "" }, "/name", nil},
		{"name too long", func(m map[string]any) { m["name"] = tooLong }, "/name", []string{"64"}},
		{"name with a control character", func(m map[string]any) { m["name"] = "a\x1b[2Jb" }, "/name", []string{"control"}},
		{"name not a string", func(m map[string]any) { m["name"] = 5 }, "/name", nil},
		{"hours_per_cycle 0", func(m map[string]any) { m["hours_per_cycle"] = 0 }, "/hours_per_cycle", nil},
		{"hours_per_cycle negative", func(m map[string]any) { m["hours_per_cycle"] = -4 }, "/hours_per_cycle", []string{"-4"}},
		{"hours_per_cycle above a year", func(m map[string]any) { m["hours_per_cycle"] = 24*365 + 1 }, "/hours_per_cycle", nil},
		{"initial_hours negative", func(m map[string]any) { m["initial_hours"] = -1 }, "/initial_hours", nil},
		{"domains missing", func(m map[string]any) { delete(m, "domains") }, "/domains", []string{"at least one domain"}},
		{"domains empty", func(m map[string]any) { m["domains"] = map[string]any{} }, "/domains", []string{"at least one domain"}},
		{"domains a list", func(m map[string]any) { m["domains"] = []any{"api"} }, "/domains", []string{"object"}},
		{"weight negative", func(m map[string]any) { domainsOf(m)["api"].(map[string]any)["weight"] = -1 }, "/domains/api/weight", []string{"-1"}},
		{"weight above 1000", func(m map[string]any) { domainsOf(m)["api"].(map[string]any)["weight"] = 1001 }, "/domains/api/weight", []string{"1001"}},
		{"weight a string", func(m map[string]any) { domainsOf(m)["api"].(map[string]any)["weight"] = "heavy" }, "/domains/api/weight", nil},
		{"alignment above 1", func(m map[string]any) { domainsOf(m)["docs"].(map[string]any)["mission_alignment"] = 1.5 }, "/domains/docs/mission_alignment", []string{"1.5"}},
		{"alignment negative", func(m map[string]any) { domainsOf(m)["docs"].(map[string]any)["mission_alignment"] = -0.1 }, "/domains/docs/mission_alignment", nil},
		{"kind unknown", func(m map[string]any) { domainsOf(m)["docs"].(map[string]any)["kind"] = "build" }, "/domains/docs/kind", []string{`"build"`, "observe, detect, strategize, execute"}},
		{"domain name with a slash", func(m map[string]any) { domainsOf(m)["a/b"] = map[string]any{} }, "/domains/a~1b", []string{"domain name"}},
		{"domain name with ..", func(m map[string]any) { domainsOf(m)["a..b"] = map[string]any{} }, "/domains/a..b", []string{".."}},
		{"domain name ..", func(m map[string]any) { domainsOf(m)[".."] = map[string]any{} }, "/domains/..", nil},
		{"domain name reserved", func(m map[string]any) { domainsOf(m)["evolve"] = map[string]any{} }, "/domains/evolve", []string{"reserved"}},
		{"one domain too many", func(m map[string]any) {
			for i := range MaxDomains - 1 { // with api and docs
				domainsOf(m)[fmt.Sprintf("d%03d", i)] = map[string]any{}
			}
		}, "/domains", []string{fmt.Sprint(MaxDomains + 1), fmt.Sprint(MaxDomains)}},
		{"goal id empty", func(m map[string]any) { m["goal"].(map[string]any)["id"] = "" }, "/goal/id", nil},
		{"goal id with a space", func(m map[string]any) { m["goal"].(map[string]any)["id"] = "ship it" }, "/goal/id", nil},
		{"goal domain unknown", func(m map[string]any) { m["goal"].(map[string]any)["domain"] = "web" }, "/goal/domain", []string{`"web"`}},
		{"goal domain missing", func(m map[string]any) { delete(m["goal"].(map[string]any), "domain") }, "/goal/domain", nil},
		{"goal target_cycles 0", func(m map[string]any) { m["goal"].(map[string]any)["target_cycles"] = 0 }, "/goal/target_cycles", []string{"0"}},
		{"goal target_cycles too many", func(m map[string]any) { m["goal"].(map[string]any)["target_cycles"] = MaxCycles + 1 }, "/goal/target_cycles", []string{fmt.Sprint(MaxCycles + 1)}},
		{"goal target_cycles fractional", func(m map[string]any) { m["goal"].(map[string]any)["target_cycles"] = 2.5 }, "/goal/target_cycles", nil},
		{"work for an unknown domain", func(m map[string]any) { m["work"].(map[string]any)["web"] = true }, "/work/web", []string{`"web"`}},
		{"alerts for an unknown domain", func(m map[string]any) { m["alerts"].(map[string]any)["web"] = []any{} }, "/alerts/web", []string{`"web"`}},
		{"alert cycle 0", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": 0, "severity": "warning"}}
		}, "/alerts/api/0/cycle", nil},
		{"second alert's cycle too high", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": 2, "severity": "info"}, map[string]any{"cycle": MaxCycles + 1, "severity": "info"}}
		}, "/alerts/api/1/cycle", nil},
		{"alert cycle a string", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": "3", "severity": "info"}}
		}, "/alerts/api/0/cycle", nil},
		{"alerts not a list", func(m map[string]any) { m["alerts"].(map[string]any)["api"] = map[string]any{"cycle": 3} }, "/alerts/api", nil},
		{"goal target_cycles a string", func(m map[string]any) { m["goal"].(map[string]any)["target_cycles"] = "4" }, "/goal/target_cycles", nil},
		{"mission not a string", func(m map[string]any) { m["mission"] = []any{"x"} }, "/mission", nil},
		{"alert severity unknown", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": 1, "severity": "fatal"}}
		}, "/alerts/api/0/severity", []string{`"fatal"`}},
		{"alert severity missing", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": 1}}
		}, "/alerts/api/0/severity", nil},
		{"unknown key", func(m map[string]any) { m["domain"] = map[string]any{} }, "/domain", []string{"unknown"}},
		{"unknown key in a domain", func(m map[string]any) { domainsOf(m)["api"].(map[string]any)["colour"] = "red" }, "/domains/api/colour", []string{"unknown"}},
		{"unknown key in the goal", func(m map[string]any) { m["goal"].(map[string]any)["steps"] = 3 }, "/goal/steps", []string{"unknown"}},
		{"unknown key in an alert", func(m map[string]any) {
			m["alerts"].(map[string]any)["api"] = []any{map[string]any{"cycle": 1, "severity": "info", "message": "x"}}
		}, "/alerts/api/0/message", []string{"unknown"}},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			sc, err := Parse(scenJSON(t, c.edit), scenFile)
			if err == nil {
				t.Fatalf("parsed: %+v", sc)
			}
			wantParseError(t, err, c.pointer, c.subs...)
		})
	}

	// The valid document the cases above break, and the most domains a
	// scenario may have, do parse.
	if _, err := Parse(scenJSON(t, nil), scenFile); err != nil {
		t.Fatalf("the valid scenario: %v", err)
	}
	most := scenJSON(t, func(m map[string]any) {
		for i := range MaxDomains - 2 {
			domainsOf(m)[fmt.Sprintf("d%03d", i)] = map[string]any{}
		}
	})
	if sc, err := Parse(most, scenFile); err != nil || len(sc.Domains) != MaxDomains {
		t.Fatalf("%d domains: %v", MaxDomains, err)
	}
}

func TestScenario_ParseDocumentErrors(t *testing.T) {
	valid := `{"name": "a", "domains": {"a": {}}}`
	for _, c := range []struct{ what, doc, sub string }{
		{"two JSON values", valid + valid, "more than one JSON value"},
		{"two JSON values on lines", valid + "\n" + valid + "\n", "more than one JSON value"},
		{"trailing text", valid + " x", ""},
		{"trailing bracket", valid + "]", ""},
		{"trailing brace", valid + "}", ""},
		{"empty", "", ""},
		{"a list", "[]", ""},
		{"truncated", valid[:len(valid)-1], ""},
		{"a domain named twice", `{"name": "a", "domains": {"a": {}, "a": {"weight": 2}}}`, "twice"},
	} {
		t.Run(c.what, func(t *testing.T) {
			sc, err := Parse([]byte(c.doc), scenFile)
			if err == nil {
				t.Fatalf("parsed: %+v", sc)
			}
			ptr := ""
			if c.what == "a domain named twice" {
				ptr = "/domains/a"
			}
			wantParseError(t, err, ptr, c.sub)
		})
	}
	// Whitespace after the document is no second value.
	if _, err := Parse([]byte(valid+"\n\t \n"), scenFile); err != nil {
		t.Errorf("trailing whitespace: %v", err)
	}
}

func TestScenario_ParseWorkForms(t *testing.T) {
	bad := []string{
		`"yes"`, `3`, `[]`, `[1, 2]`, `{}`,
		`{"cycles": [1], "from": 2}`, `{"cycles": "1"}`, `{"cycles": [0]}`, `{"cycles": [10001]}`, `{"cycles": [1.5]}`,
		`{"from": 0}`, `{"from": "2"}`, `{"from": 10001}`, `{"until": 0}`, `{"until": -3}`,
		`{"every": 0}`, `{"every": 1.5}`, `{"every": null}`, `{"bogus": 1}`, `{"always": true}`,
	}
	for _, rule := range bad {
		t.Run(rule, func(t *testing.T) {
			doc := `{"name": "w", "domains": {"api": {}}, "work": {"api": ` + rule + `}}`
			sc, err := Parse([]byte(doc), scenFile)
			if err == nil {
				t.Fatalf("work rule %s parsed: %v", rule, sc.Work["api"])
			}
			wantParseError(t, err, "/work/api")
		})
	}
}

func TestScenario_WorkAt(t *testing.T) {
	cases := []struct {
		rule string
		want []int // the cycles of 1..12 with work
	}{
		{`true`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{`false`, nil},
		{`null`, nil},
		{`{"cycles": [3, 7, 12, 40]}`, []int{3, 7, 12}},
		{`{"cycles": []}`, nil},
		{`{"from": 5}`, []int{5, 6, 7, 8, 9, 10, 11, 12}},
		{`{"from": 1}`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{`{"until": 4}`, []int{1, 2, 3}},
		{`{"until": 1}`, nil},
		{`{"every": 3}`, []int{3, 6, 9, 12}},
		{`{"every": 1}`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			doc := `{"name": "w", "domains": {"api": {}, "docs": {}}, "work": {"api": ` + c.rule + `}}`
			sc, err := Parse([]byte(doc), scenFile)
			if err != nil {
				t.Fatal(err)
			}
			w := sc.Work["api"]
			var got []int
			for cy := 1; cy <= 12; cy++ {
				if w.At(cy) {
					got = append(got, cy)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: work in cycles %v, want %v", c.rule, got, c.want)
			}
			// The rule reads back as the format writes it.
			again, err := Parse([]byte(`{"name": "w", "domains": {"api": {}}, "work": {"api": `+w.String()+`}}`), scenFile)
			if err != nil {
				t.Fatalf("%s written back as %s: %v", c.rule, w.String(), err)
			}
			for cy := 1; cy <= 12; cy++ {
				if again.Work["api"].At(cy) != w.At(cy) {
					t.Errorf("%s written back as %s differs in cycle %d", c.rule, w.String(), cy)
				}
			}
			if sc.Work["docs"].At(1) {
				t.Error("docs, without a rule, has work")
			}
		})
	}
}

// writeScen writes a scenario file named name in dir.
func writeScen(t *testing.T, dir, name, scenarioName string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	doc := `{"name": "` + scenarioName + `", "domains": {"only": {"weight": 3}}}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScenario_LoadFile(t *testing.T) {
	dir := t.TempDir()
	p := writeScen(t, dir, "mine.json", "mine")
	sc, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "mine" || len(sc.Domains) != 1 || sc.Domains[0].Weight != 3 {
		t.Errorf("Load(%s) = %+v", p, sc)
	}

	// A file's errors name the file as given.
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "b", "domains": {"a": {"kind": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *ParseError
	if _, err := Load(bad); !errors.As(err, &pe) || pe.File != bad || pe.Pointer != "/domains/a/kind" {
		t.Errorf("Load of a bad file: %v; want a ParseError naming %s at /domains/a/kind", err, bad)
	}
}

func TestScenario_LoadRefuses(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		p := filepath.Join(dir, "nope.json")
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Load(%s) = %v; want a not-exist error naming the file", p, err)
		}
	})
	t.Run("neither built-in nor file", func(t *testing.T) {
		t.Chdir(t.TempDir())
		_, err := Load("D_unknown")
		if err == nil || !strings.Contains(err.Error(), `"D_unknown"`) || !strings.Contains(err.Error(), "A_webapp") {
			t.Errorf("Load(D_unknown) = %v; want the name and the built-ins", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load(%s) = %v; want not a regular file", dir, err)
		}
	})
	t.Run("named pipe", func(t *testing.T) {
		p := filepath.Join(dir, "fifo.json")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := Load(p)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v; want not a regular file", p, err)
			}
		case <-time.After(30 * time.Second):
			// Unblock the reader so the goroutine ends with the test.
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatal("Load of a named pipe blocked: it waits for a writer")
		}
	})
	t.Run("larger than MaxScenarioBytes", func(t *testing.T) {
		valid := `{"name": "big", "domains": {"a": {}}}`
		// Padding after the document: it would parse if read in full.
		at := filepath.Join(dir, "at-limit.json")
		if err := os.WriteFile(at, []byte(valid+strings.Repeat(" ", MaxScenarioBytes-len(valid))), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(at); err != nil {
			t.Fatalf("a file of exactly %d bytes: %v", MaxScenarioBytes, err)
		}
		over := filepath.Join(dir, "over.json")
		if err := os.WriteFile(over, []byte(valid+strings.Repeat(" ", MaxScenarioBytes-len(valid)+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		var pe *ParseError
		_, err := Load(over)
		if !errors.As(err, &pe) || pe.File != over || !strings.Contains(err.Error(), fmt.Sprint(MaxScenarioBytes)) {
			t.Errorf("Load of %d bytes = %v; want a ParseError naming the file and the limit", MaxScenarioBytes+1, err)
		}
	})
}

func TestScenario_LoadBuiltinOrFile(t *testing.T) {
	t.Run("a built-in name", func(t *testing.T) {
		t.Chdir(t.TempDir())
		sc, err := Load("B_library")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != "B_library" || len(sc.Domains) != 3 {
			t.Errorf("Load(B_library) = %+v", sc)
		}
	})
	t.Run("a file named like a built-in wins", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		writeScen(t, dir, "A_webapp", "local")
		sc, err := Load("A_webapp")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != "local" {
			t.Errorf("Load(A_webapp) with a file A_webapp in the working directory read %q, want the file's scenario", sc.Name)
		}
	})
	t.Run("a file named like a built-in with .json", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		writeScen(t, dir, "A_webapp.json", "local")
		sc, err := Load("A_webapp")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != "A_webapp" {
			t.Errorf("Load(A_webapp) read %q; A_webapp.json is another name, the built-in should load", sc.Name)
		}
	})
}
