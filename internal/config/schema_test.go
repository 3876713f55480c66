package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// compatDir holds the original project's config.example.json and fixtures;
// every config there must validate, or ooda could not take over an existing
// OODA-loop project.
const compatDir = "../../../shared/compat/ooda-loop"

// compatConfigs lists config.example.json and every fixture config*.json.
func compatConfigs(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(compatDir); err != nil {
		t.Skipf("compat directory %s not available: %v", compatDir, err)
	}
	var files []string
	err := filepath.WalkDir(compatDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasPrefix(name, "config") && strings.HasSuffix(name, ".json") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join(compatDir, "config.example.json")) {
		t.Fatalf("config.example.json missing from %s", compatDir)
	}
	return files
}

func TestValidateSchemaAcceptsCompatConfigs(t *testing.T) {
	for _, path := range compatConfigs(t) {
		t.Run(strings.TrimPrefix(path, compatDir+"/"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateSchema(path, raw); err != nil {
				t.Fatalf("compat config rejected:\n%v", err)
			}
		})
	}
}

func TestValidateSchemaAcceptsValidConfigs(t *testing.T) {
	ext, err := os.ReadFile("testdata/extensions.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		raw  string
	}{
		{"extension keys", string(ext)},
		{"empty object", `{}`},
		{"nullable keys null", `{"active_context": {"path": null, "refresh_skill": null},
			"deploy_workflow": null, "progressive_complexity": {"last_level_change": null},
			"implementation": {"mission_alignment": null}}`},
		{"nullable keys set", `{"active_context": {"path": "ctx.json", "refresh_skill": "/refresh"},
			"deploy_workflow": "deploy.yml", "progressive_complexity": {"last_level_change": "2025-01-01T00:00:00Z"}}`},
		{"unknown keys everywhere", `{"__doc__": "x", "brand_new": {"a": 1},
			"safety": {"__auto_merge_doc__": "x", "future": [1]},
			"domains": {"d": {"primary_skill": "/a", "weight": 1, "__note__": "x", "future": {}}},
			"progressive_complexity": {"levels": {"3": {"__doc__": "x"}, "7": {"name": "beyond"}}},
			"skills": {"s": {"builtin": "health", "future": 1}}}`},
		{"level domains zero", `{"progressive_complexity": {"levels": {"0": {"domains": 0}}}}`},
		{"bounds inclusive", `{"safety": {"confidence_threshold": 1}, "confidence": {"min": 0, "max": 1},
			"progressive_complexity": {"current_level": 3}, "cost": {"warning_threshold_pct": 100}}`},
		{"negative penalty allowed", `{"scoring": {"implementation_formula": {"open_pr_penalty": -3}}}`},
		{"zero duration", `{"agent": {"command": ["a"], "timeout": "0"}}`},
		{"micro duration", `{"judge": {"timeout": "1.5µs"}}`},
		{"command with empty argument", `{"skills": {"s": {"command": ["run", ""]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateSchema("config.json", []byte(tt.raw)); err != nil {
				t.Fatalf("rejected:\n%v", err)
			}
		})
	}
}

func TestValidateSchemaRejects(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		wantPath   string
		wantReason string // substring of the reason
	}{
		{"wrong type", `{"safety": {"confidence_threshold": "high"}}`,
			"/safety/confidence_threshold", "expected number, got string"},
		{"above maximum", `{"safety": {"confidence_threshold": 1.5}}`,
			"/safety/confidence_threshold", "must be <= 1, got 1.5"},
		{"negative weight", `{"domains": {"backlog": {"primary_skill": "/a", "weight": -0.5}}}`,
			"/domains/backlog/weight", "must be >= 0, got -0.5"},
		{"negative count", `{"memory": {"working_memory_size": -1}}`,
			"/memory/working_memory_size", "must be >= 0, got -1"},
		{"fractional count", `{"safety": {"max_files_per_pr": 2.5}}`,
			"/safety/max_files_per_pr", "expected integer, got number"},
		{"zero interval", `{"memory": {"contrarian_check_interval": 0}}`,
			"/memory/contrarian_check_interval", "must be >= 1, got 0"},
		{"zero decay days", `{"memory": {"action_queue_decay_days": 0}}`,
			"/memory/action_queue_decay_days", "must be > 0, got 0"},
		{"level too high", `{"progressive_complexity": {"current_level": 4}}`,
			"/progressive_complexity/current_level", "must be <= 3, got 4"},
		{"bad staleness curve", `{"scoring": {"staleness_curve": "exponential"}}`,
			"/scoring/staleness_curve", `must be one of "logarithmic", "linear", got "exponential"`},
		{"bad domain status", `{"domains": {"d": {"primary_skill": "/a", "status": "paused"}}}`,
			"/domains/d/status", `must be one of "active", "disabled", "available", "degraded"`},
		{"domain not an object", `{"domains": {"d": 3}}`,
			"/domains/d", "expected object, got number"},
		{"skill with neither builtin nor command", `{"skills": {"/scan-health": {"timeout": "10m"}}}`,
			"/skills/~1scan-health", `needs either "builtin"`},
		{"skill with empty command", `{"skills": {"s": {"command": []}}}`,
			"/skills/s/command", "must not be empty"},
		{"skill with empty program", `{"skills": {"s": {"command": [""]}}}`,
			"/skills/s/command/0", "must not be empty"},
		{"skill with empty builtin", `{"skills": {"s": {"builtin": ""}}}`,
			"/skills/s/builtin", "must not be empty"},
		{"skill command not strings", `{"skills": {"s": {"command": ["run", 3]}}}`,
			"/skills/s/command/1", "expected string, got number"},
		{"skill env not strings", `{"skills": {"s": {"builtin": "x", "env": {"A": 1}}}}`,
			"/skills/s/env/A", "expected string, got number"},
		{"level domains some", `{"progressive_complexity": {"levels": {"1": {"domains": "some"}}}}`,
			"/progressive_complexity/levels/1/domains", `must be an integer from 0 to 1000000 or "all", got "some"`},
		{"level domains negative", `{"progressive_complexity": {"levels": {"1": {"domains": -1}}}}`,
			"/progressive_complexity/levels/1/domains", `must be an integer from 0 to 1000000 or "all", got -1`},
		{"agent command empty", `{"agent": {"command": []}}`,
			"/agent/command", "must not be empty"},
		{"agent command a string", `{"agent": {"command": "claude -p"}}`,
			"/agent/command", "expected array, got string"},
		{"bad timeout", `{"agent": {"command": ["a"], "timeout": "ten minutes"}}`,
			"/agent/timeout", `must be a Go duration such as "90s", "10m" or "1h30m", got "ten minutes"`},
		{"timeout without unit", `{"skills": {"s": {"builtin": "x", "timeout": "10"}}}`,
			"/skills/s/timeout", "must be a Go duration"},
		{"nullable wrong type", `{"active_context": {"path": 5}}`,
			"/active_context/path", "expected string or null, got number"},
		{"null where not nullable", `{"domains": {"d": {"primary_skill": "/a", "weight": null}}}`,
			"/domains/d/weight", "expected number, got null"},
		{"boolean as string", `{"git": {"commit_state": "yes"}}`,
			"/git/commit_state", "expected boolean, got string"},
		{"pointer escaping", `{"skills": {"/s": {"builtin": "x", "env": {"a/b~c": 1}}}}`,
			"/skills/~1s/env/a~1b~0c", "expected string, got number"},
		{"not an object", `[]`, "", "expected object, got array"},
		{"not JSON", `{"mission": `, "", "parse error"},
		{"trailing data", `{} {}`, "", "parse error"},
		{"number out of range", `{"__doc__": 1e999}`, "/__doc__", "number out of range, got 1e999"},
		// The validator would dereference a nil big.Rat for this number.
		{"exponent beyond big.Rat", `{"safety": {"confidence_threshold": 1e99999999}}`,
			"/safety/confidence_threshold", "number out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ce := validateErr(t, tt.raw)
			if ce.Path != tt.wantPath {
				t.Errorf("Path = %q, want %q (reason %q)", ce.Path, tt.wantPath, ce.Reason)
			}
			if !strings.Contains(ce.Reason, tt.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", ce.Reason, tt.wantReason)
			}
			if strings.Contains(ce.Reason, "mem:") || strings.Contains(ce.Reason, "jsonschema") {
				t.Errorf("Reason leaks schema internals: %q", ce.Reason)
			}
		})
	}
}

// validateErr validates raw and returns the *Error it must produce.
func validateErr(t *testing.T, raw string) *Error {
	t.Helper()
	err := ValidateSchema("config.json", []byte(raw))
	if err == nil {
		t.Fatalf("accepted %s", raw)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not *Error: %v", err, err)
	}
	if ce.File != "config.json" {
		t.Errorf("File = %q, want config.json", ce.File)
	}
	return ce
}

func TestValidateSchemaReportsEveryIssueSorted(t *testing.T) {
	raw, err := os.ReadFile("testdata/many-errors.json")
	if err != nil {
		t.Fatal(err)
	}
	ce := validateErr(t, string(raw))
	want := []Issue{
		{"/agent/command", "must not be empty"},
		{"/domains/backlog/status", `must be one of "active", "disabled", "available", "degraded", got "sleeping"`},
		{"/domains/backlog/weight", "must be >= 0, got -1"},
		{"/domains/tests/weight", "expected number, got string"},
		{"/judge/timeout", `must be a Go duration such as "90s", "10m" or "1h30m", got "soon"`},
		{"/progressive_complexity/current_level", "must be <= 3, got 4"},
		{"/progressive_complexity/levels/1/domains", `must be an integer from 0 to 1000000 or "all", got "some"`},
		{"/safety/confidence_threshold", "must be <= 1, got 1.5"},
		{"/safety/max_prs_per_cycle", "expected integer, got number"},
		{"/scoring/staleness_curve", `must be one of "logarithmic", "linear", got "exponential"`},
		{"/skills/~1scan-health", `needs either "builtin" (a built-in skill name) or "command" (an argument vector)`},
	}
	if !reflect.DeepEqual(ce.Issues, want) {
		t.Errorf("Issues:\n%s\nwant:\n%s", issuesText(ce.Issues), issuesText(want))
	}
	if ce.Path != want[0].Path || ce.Reason != want[0].Reason {
		t.Errorf("Path, Reason = %q, %q; want the first issue %q, %q", ce.Path, ce.Reason, want[0].Path, want[0].Reason)
	}
	msg := ce.Error()
	if !strings.HasPrefix(msg, "config.json: 11 problems:") || !strings.Contains(msg, "\n  /judge/timeout: ") {
		t.Errorf("Error() = %q", msg)
	}
	// The report must not depend on map iteration order.
	for range 20 {
		again := validateErr(t, string(raw))
		if !reflect.DeepEqual(again.Issues, ce.Issues) {
			t.Fatalf("issues differ between runs:\n%s\nvs\n%s", issuesText(again.Issues), issuesText(ce.Issues))
		}
	}
}

func issuesText(issues []Issue) string {
	var b strings.Builder
	for _, is := range issues {
		b.WriteString("  " + is.Path + ": " + is.Reason + "\n")
	}
	return b.String()
}

func TestComparePointersOrdersIndexesNumerically(t *testing.T) {
	got := []string{"/a/10", "/b", "/a/2", "", "/a/2/x", "/a/x"}
	slices.SortFunc(got, comparePointers)
	want := []string{"", "/a/2", "/a/2/x", "/a/10", "/a/x", "/b"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}

func TestSchemaDocument(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatalf("Schema() is not JSON: %v", err)
	}
	if got := doc["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", got)
	}
	if doc["type"] != "object" {
		t.Errorf("type = %v, want object", doc["type"])
	}
	b := Schema()
	b[0] = 'X'
	if Schema()[0] != '{' {
		t.Error("Schema() exposes the embedded bytes")
	}
}

// TestSchemaDescribesEveryProperty keeps the schema usable as user
// documentation: every declared property and definition says what it is for.
func TestSchemaDescribesEveryProperty(t *testing.T) {
	doc := schemaMap(t)
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		for _, kw := range []string{"properties", "$defs"} {
			props, _ := node[kw].(map[string]any)
			for name, sub := range props {
				s, ok := sub.(map[string]any)
				if !ok {
					t.Errorf("%s/%s/%s is not a schema object", path, kw, name)
					continue
				}
				if d, _ := s["description"].(string); strings.TrimSpace(d) == "" {
					t.Errorf("%s/%s/%s has no description", path, kw, name)
				}
				if s["additionalProperties"] == false {
					t.Errorf("%s/%s/%s forbids unknown keys", path, kw, name)
				}
				walk(path+"/"+kw+"/"+name, s)
			}
		}
		for _, kw := range []string{"additionalProperties", "items"} {
			if s, ok := node[kw].(map[string]any); ok {
				walk(path+"/"+kw, s)
			}
		}
	}
	walk("#", doc)
	if doc["additionalProperties"] == false {
		t.Error("the root forbids unknown keys")
	}
}

// TestSchemaDeclaresEveryExampleKey checks that every key of the original
// config.example.json (except __doc__-style notes) is documented.
func TestSchemaDeclaresEveryExampleKey(t *testing.T) {
	files := compatConfigs(t)
	doc := schemaMap(t)
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		var walk func(ptr string, v any, node map[string]any)
		walk = func(ptr string, v any, node map[string]any) {
			node = deref(t, doc, node)
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if strings.HasPrefix(k, "__") {
						continue
					}
					sub := propertySchema(node, k)
					if sub == nil {
						t.Errorf("%s: key %s%s/%s is not declared in the schema", path, ptr, "", k)
						continue
					}
					walk(ptr+"/"+k, e, sub)
				}
			case []any:
				if items, ok := node["items"].(map[string]any); ok {
					for _, e := range v {
						walk(ptr+"/*", e, items)
					}
				}
			}
		}
		walk("", v, doc)
	}
}

// TestSchemaDeclaresEveryConfigField checks that every JSON key of the Go
// Config type is documented in the schema, so new fields cannot slip in
// undocumented.
func TestSchemaDeclaresEveryConfigField(t *testing.T) {
	doc := schemaMap(t)
	rawMessage := reflect.TypeFor[json.RawMessage]()
	domains := reflect.TypeFor[Domains]()
	var walk func(path string, typ reflect.Type, node map[string]any)
	walk = func(path string, typ reflect.Type, node map[string]any) {
		node = deref(t, doc, node)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch {
		case typ == rawMessage:
			return
		case typ == domains:
			walk(path+"/*", typ.Elem(), subschema(node, "additionalProperties"))
		case typ.Kind() == reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if f.Anonymous && name == "" {
					// encoding/json promotes an embedded struct's keys.
					walk(path, f.Type, node)
					continue
				}
				sub := propertySchema(node, name)
				if sub == nil {
					t.Errorf("Config field %s/%s (%s) is not declared in the schema", path, name, f.Name)
					continue
				}
				walk(path+"/"+name, f.Type, sub)
			}
		case typ.Kind() == reflect.Map:
			if sub := subschema(node, "additionalProperties"); sub != nil {
				walk(path+"/*", typ.Elem(), sub)
			}
		case typ.Kind() == reflect.Slice:
			if sub := subschema(node, "items"); sub != nil {
				walk(path+"/*", typ.Elem(), sub)
			}
		}
	}
	walk("", reflect.TypeFor[Config](), doc)
}

// TestSchemaDefaultsMatchGo keeps the documented defaults honest: every
// "default" in the schema equals the value Default() gives that key.
func TestSchemaDefaultsMatchGo(t *testing.T) {
	doc := schemaMap(t)
	raw, err := json.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	var def any
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(ptr string, node map[string]any, goVal any, present bool)
	walk = func(ptr string, node map[string]any, goVal any, present bool) {
		if want, ok := node["default"]; ok && present && goVal != nil {
			checked++
			if !reflect.DeepEqual(want, goVal) {
				t.Errorf("%s: schema default %v, Default() gives %v", ptr, want, goVal)
			}
		}
		props, _ := node["properties"].(map[string]any)
		obj, _ := goVal.(map[string]any)
		for name, sub := range props {
			s, _ := sub.(map[string]any)
			v, ok := obj[name]
			walk(ptr+"/"+name, s, v, ok)
		}
	}
	walk("", doc, def, true)
	if checked < 50 {
		t.Errorf("only %d defaults compared; the walk lost its way", checked)
	}
}

func schemaMap(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// deref follows a local "$ref" to its definition.
func deref(t *testing.T, doc, node map[string]any) map[string]any {
	t.Helper()
	for node != nil {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			t.Fatalf("unexpected $ref %q", ref)
		}
		node = subschema(doc["$defs"].(map[string]any), name)
	}
	return node
}

// propertySchema returns the schema a key of an object validated by node
// gets: its declared property, else the additionalProperties schema.
func propertySchema(node map[string]any, key string) map[string]any {
	if props, ok := node["properties"].(map[string]any); ok {
		if s := subschema(props, key); s != nil {
			return s
		}
	}
	return subschema(node, "additionalProperties")
}

func subschema(node map[string]any, key string) map[string]any {
	s, _ := node[key].(map[string]any)
	return s
}

func FuzzValidateSchema(f *testing.F) {
	for _, path := range compatConfigs(f) {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, path := range []string{"testdata/extensions.json", "testdata/many-errors.json"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"progressive_complexity": {"levels": {"0": {"domains": "some"}}}}`))
	f.Add([]byte(`{"skills": {"x": {}}, "agent": {"command": [""]}}`))
	f.Add([]byte(`{"safety": {"confidence_threshold": 1e400}}`))
	f.Add([]byte(`[1, 2]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := ValidateSchema("fuzz.json", raw)
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %T is not *Error: %v", err, err)
		}
		if ce.File == "" {
			t.Fatal("empty File")
		}
		if ce.Reason == "" {
			t.Fatal("empty Reason")
		}
		for _, is := range ce.Issues {
			if is.Reason == "" {
				t.Fatalf("issue at %q has an empty reason", is.Path)
			}
		}
		if len(ce.Issues) > 0 && (ce.Path != ce.Issues[0].Path || ce.Reason != ce.Issues[0].Reason) {
			t.Fatalf("Path/Reason %q/%q are not the first issue %+v", ce.Path, ce.Reason, ce.Issues[0])
		}
		if !slices.IsSortedFunc(ce.Issues, func(a, b Issue) int { return comparePointers(a.Path, b.Path) }) {
			t.Fatalf("issues not sorted: %+v", ce.Issues)
		}
	})
}
