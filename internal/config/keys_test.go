package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The original project's files carry __doc__ notes and sections this
// version does not define; taking over such a project must not greet its
// owner with warnings about a file that is correct.
func TestCompatConfigsLoadWithoutWarnings(t *testing.T) {
	for _, path := range compatConfigs(t) {
		t.Run(strings.TrimPrefix(path, compatDir+"/"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseProject(path, raw, t.TempDir())
			if err != nil {
				t.Fatalf("compat config rejected:\n%v", err)
			}
			for _, w := range cfg.Warnings {
				t.Errorf("unexpected warning: %s", w)
			}
		})
	}
}

// Every key the program reads must be in the schema, or setting it would
// draw an "unknown key" warning: the schema is walked along the Config
// struct, field by field.
func TestSchemaDefinesEveryKeyTheConfigReads(t *testing.T) {
	schemaOnce.Do(compileSchema)
	root := schemaDoc.(map[string]any)
	var walk func(node map[string]any, typ reflect.Type, path string)
	walk = func(node map[string]any, typ reflect.Type, path string) {
		node = resolveRef(root, node)
		if typ == reflect.TypeOf(Domains{}) {
			return // an object of domains, walked below
		}
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			if typ.Kind() == reflect.Slice {
				if items, ok := node["items"].(map[string]any); ok {
					node = resolveRef(root, items)
				}
			}
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Map:
			if addl, ok := node["additionalProperties"].(map[string]any); ok {
				walk(addl, typ.Elem(), path+"/*")
			}
			return
		case reflect.Struct:
		default:
			return
		}
		props, _ := node["properties"].(map[string]any)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous {
				walk(node, f.Type, path)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			sub, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s/%s (%s.%s) is read but not in the schema", path, name, typ.Name(), f.Name)
				continue
			}
			walk(sub, f.Type, path+"/"+name)
		}
	}
	walk(root, reflect.TypeOf(Config{}), "")
	// Domains is a slice decoded from an object of domains.
	domains := root["properties"].(map[string]any)["domains"].(map[string]any)["additionalProperties"].(map[string]any)
	walk(domains, reflect.TypeOf(Domain{}), "/domains/*")
}

func TestSuggestFindsTheNearestKnownKey(t *testing.T) {
	domainKeys := []string{"branch_prefix", "chain", "description", "enabled", "fallback", "goal_contribution",
		"min_interval_hours", "mission_alignment", "ooda_phase", "primary_skill", "quality_rubric", "rotation",
		"state_file", "status", "weight"}
	for _, tt := range []struct{ key, want string }{
		{"wieght", "weight"}, // two letters swapped: one edit
		{"wight", "weight"},  // one missing
		{"weigth", "weight"}, // swapped at the end
		{"primary_skil", "primary_skill"},
		{"primary-skill", "primary_skill"}, // "-" for "_"
		{"primarySkill", "primary_skill"},  // camelCase: case and one "_"
		{"Status", "status"},               // case
		{"stat_file", "state_file"},
		{"state_files", "state_file"},
		{"fallbak", "fallback"},
		{"mision_alignment", "mission_alignment"},
		{"flux_capacitor", ""},
		{"x", ""},
		{"wt", ""}, // a short key must be very close
	} {
		if got := Suggest(tt.key, domainKeys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	// Equally near: the first candidate wins, so the message is stable.
	if got := Suggest("ab", []string{"ac", "ad"}); got != "ac" {
		t.Errorf("tie: got %q, want the first candidate", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"weight", "weight", 0},
		{"wieght", "weight", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"é", "e", 1},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestIsDocKey(t *testing.T) {
	for k, want := range map[string]bool{"__doc__": true, "__auto_merge_doc__": true, "__x__": true,
		"____": false, "__doc": false, "doc__": false, "_doc_": false, "doc": false} {
		if got := IsDocKey(k); got != want {
			t.Errorf("IsDocKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// warningsOf loads raw as a project's config.json, which must load, and
// returns its warnings as "path: reason".
func warningsOf(t *testing.T, raw string) []string {
	t.Helper()
	root, path := project(t, raw)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	var out []string
	for _, w := range cfg.Warnings {
		if w.File != path {
			t.Errorf("warning names %q, want the file %q", w.File, path)
		}
		out = append(out, w.Path+": "+w.Reason)
	}
	return out
}

// A misspelt key used to validate and silently leave its setting at the
// default; in every section the schema defines it is now a warning with
// its JSON path, and the setting still takes the default (the file loads).
func TestUnknownKeysInsideSectionsAreWarnings(t *testing.T) {
	got := warningsOf(t, `{
	  "domains": {"tests": {"wieght": 2, "primary_skill": "/t",
	    "quality_rubric": {"dimensions": [{"name": "speed", "wieght": 1, "targets": [{"metric": "p95", "opp": "<="}]}]}}},
	  "skills": {"/t": {"command": ["true"], "timout": "1m", "env": {"ANY_NAME": "x"}, "contract": {"free": 1}}},
	  "safety": {"confidence_treshold": 0.5},
	  "scoring": {"implementation_formula": {"pending_multiplyer": 1}, "rice_extensions": {"security": {"weight": 2, "note": "x"}}},
	  "progressive_complexity": {"levels": {"3": {"nmae": "x"}}},
	  "season_modes": {"modes": {"launch": {"weight_overides": {}}}},
	  "notifications": {"slack": {"enabled": false, "webhook_ur": "$X"}},
	  "agent": {"comand": ["x"]}
	}`)
	want := []string{
		`/agent/comand: unknown key "comand" is ignored: did you mean "command"?`,
		`/domains/tests/quality_rubric/dimensions/0/targets/0/opp: unknown key "opp" is ignored: did you mean "op"?`,
		`/domains/tests/quality_rubric/dimensions/0/wieght: unknown key "wieght" is ignored: did you mean "weight"?`,
		`/domains/tests/wieght: unknown key "wieght" is ignored: did you mean "weight"?`,
		`/notifications/slack/webhook_ur: unknown key "webhook_ur" is ignored: did you mean "webhook_url"?`,
		`/progressive_complexity/levels/3/nmae: unknown key "nmae" is ignored: did you mean "name"?`,
		`/safety/confidence_treshold: unknown key "confidence_treshold" is ignored: did you mean "confidence_threshold"?`,
		`/scoring/implementation_formula/pending_multiplyer: unknown key "pending_multiplyer" is ignored: did you mean "pending_multiplier"?`,
		`/season_modes/modes/launch/weight_overides: unknown key "weight_overides" is ignored: did you mean "weight_overrides"?`,
		`/skills/~1t/timout: unknown key "timout" is ignored: did you mean "timeout"?`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// What the issue reported: "wieght" validated and the weight silently
// became 0. It still loads (the original's loader ignores unknown keys),
// but no longer silently.
func TestMisspeltWeightIsNamed(t *testing.T) {
	root, path := project(t, `{"domains": {"tests": {"wieght": 1.0, "primary_skill": "/t"}}}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := cfg.Domains.Get("tests"); d.Weight != 0 {
		t.Fatalf("weight = %v: the misspelt key must not be read", d.Weight)
	}
	if len(cfg.Warnings) != 1 || cfg.Warnings[0].String() != path+`: /domains/tests/wieght: unknown key "wieght" is ignored: did you mean "weight"?` {
		t.Fatalf("warnings = %v", cfg.Warnings)
	}
}

// Notes, unknown top-level sections and the content of free-form objects
// (names of domains, skills, env variables, modes; a contract) are not
// typos.
func TestNotesTopLevelAndFreeFormKeysAreNotWarned(t *testing.T) {
	got := warningsOf(t, `{
	  "__doc__": "x", "future_section": {"anything": {"wieght": 1}}, "references_v2": 1,
	  "domains": {"any_name": {"__doc__": "x", "__weights_doc__": "x", "weight": 1, "primary_skill": "/s"}},
	  "domain_dependencies": {"any_name": {"depends_on": ["x"], "__doc__": "x"}},
	  "skills": {"/s": {"command": ["true"], "env": {"WIEGHT": "1"}, "contract": {"phase": "observe", "anything": 1}}},
	  "season_modes": {"modes": {"any_mode": {"weight_overrides": {"any_name": 2}, "signal_bonuses": {"whatever": 1}}}},
	  "safety": {"__auto_merge_doc__": "x", "risk_rules": [{"pattern": "*", "tier": "low", "free": 1}]},
	  "scoring": {"rice_extensions": {"timing": {"weight": 0.3, "note": "other keys are ignored"}}},
	  "progressive_complexity": {"levels": {"3": {"__auto_merge_doc__": "x", "auto_merge": false}}, "last_level_change": {"from": 1}},
	  "deploy_workflow_inputs": {"free": 1},
	  "quality_rubric": {"dimensions": [{"name": "x", "reference": {"anything": 1}}]}
	}`)
	if len(got) > 0 {
		t.Errorf("unexpected warnings:\n  %s", strings.Join(got, "\n  "))
	}
}

// A configuration that fails keeps its warnings, so that `ooda config
// validate` shows the misspelling behind an error beside it.
func TestErrorsCarryTheWarnings(t *testing.T) {
	ce := loadErr(t, `{"domains": {"d": {"weight": -1, "primary_skill": "/s", "fallbak": true}}}`)
	if !hasIssue(ce, "/domains/d/weight", "must be >= 0") {
		t.Fatalf("error = %v", ce)
	}
	if len(ce.Warnings) != 1 || ce.Warnings[0].Path != "/domains/d/fallbak" || !strings.Contains(ce.Warnings[0].Reason, `did you mean "fallback"?`) {
		t.Errorf("warnings = %v", ce.Warnings)
	}
}

// The original project's example with one misspelt key: exactly that key
// is reported, so the walk really covers the original's files.
func TestCompatExampleWithATypoWarnsOnce(t *testing.T) {
	compatConfigs(t) // skips without the compat directory
	raw, err := os.ReadFile(compatDir + "/config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(raw), `"weight"`, `"wieght"`, 1)
	if typo == string(raw) {
		t.Fatal("the example has no weight to misspell")
	}
	cfg, err := ParseProject("config.json", []byte(typo), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.HasSuffix(cfg.Warnings[0].Path, "/wieght") {
		t.Fatalf("warnings = %v", cfg.Warnings)
	}
}

// "primary_skil" used to validate and produce a skill named "/" with blank
// messages: a domain that can run must name its skill.
func TestDomainThatCanRunNeedsAPrimarySkill(t *testing.T) {
	for _, tt := range []struct{ name, domain, path, want string }{
		{"missing", `{"weight": 1}`, "/domains/d", `domain "d" has no "primary_skill": name the skill to run when it wins`},
		{"misspelt", `{"weight": 1, "primary_skil": "/s"}`, "/domains/d", `domain "d" has no "primary_skill": "primary_skil" is not a key, did you mean "primary_skill"?`},
		{"empty", `{"weight": 1, "primary_skill": ""}`, "/domains/d/primary_skill", `domain "d" names no skill`},
		{"active", `{"status": "active"}`, "/domains/d", `has no "primary_skill"`},
		{"degraded", `{"status": "degraded"}`, "/domains/d", `has no "primary_skill"`},
		{"enabled", `{"enabled": true}`, "/domains/d", `has no "primary_skill"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, `{"domains": {"d": `+tt.domain+`, "ok": {"primary_skill": "/s"}}}`)
			if !hasIssue(ce, tt.path, tt.want) {
				t.Errorf("want an issue at %s containing %q, got %v", tt.path, tt.want, ce)
			}
			if hasIssue(ce, "/domains/ok", "") {
				t.Errorf("the domain with a skill is reported: %v", ce)
			}
		})
	}
	// A domain that never runs may leave it out; the original's example
	// lists "available" domains, and disabling is how one parks a domain.
	for _, d := range []string{`{"status": "available"}`, `{"status": "disabled"}`, `{"enabled": false}`, `{"status": "active", "enabled": false}`} {
		root, path := project(t, `{"domains": {"d": `+d+`}}`)
		if _, err := LoadProject(path, root); err != nil {
			t.Errorf("%s rejected: %v", d, err)
		}
	}
}

// A key of hundreds of kilobytes is quoted briefly in the reason (the
// path, like every path, holds it whole).
func TestHugeUnknownKeyIsQuotedBriefly(t *testing.T) {
	huge := strings.Repeat("w", 900_000)
	got := warningsOf(t, `{"domains": {"d": {"primary_skill": "/s", "`+huge+`": 1}}}`)
	if len(got) != 1 || len(got[0]) > len(huge)+200 || !strings.Contains(got[0], `unknown key "wwww`) || !strings.Contains(got[0], `…"`) {
		t.Fatalf("warning: %.200s", got)
	}
}

// A top-level key one edit from a known one ("mision", "saftey"; two for
// a long key) is a misspelling whose section is silently not read: it is
// warned, the first load and a load the remembered verdict speeds alike.
// A section further from every known key (the original's own sections)
// is not.
func TestNearMissTopLevelKeysAreWarned(t *testing.T) {
	raw := `{"mision": "ship it", "saftey": {"max_silent_failures": 1}, "progresive_complexity": {}, "references_v2": 1, "deploy_workflow_v2": {},
	  "domains": {"d": {"weight": 1, "primary_skill": "/s"}}}`
	want := []string{
		`/mision: unknown top-level key "mision" is ignored: did you mean "mission"?`,
		`/progresive_complexity: unknown top-level key "progresive_complexity" is ignored: did you mean "progressive_complexity"?`,
		`/saftey: unknown top-level key "saftey" is ignored: did you mean "safety"?`,
	}
	root, path := project(t, raw)
	for round := 1; round <= 2; round++ {
		cfg, err := LoadProject(path, root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range cfg.Warnings {
			got = append(got, w.Path+": "+w.Reason)
		}
		if !slices.Equal(got, want) {
			t.Errorf("load %d: warnings\n  %s\nwant\n  %s", round, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if cfg.Mission != "" {
			t.Errorf("mission = %q: a misspelt key must not be read", cfg.Mission)
		}
	}
}
