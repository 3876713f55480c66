package config

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// nested returns n levels of arrays around nothing: "[[…]]".
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// bombConfig is the reported attack: 40 top-level keys, each holding
// 9,990 nested arrays (about 800 KB). Every command validated it for
// minutes and gigabytes before the depth limit.
func bombConfig() []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x` + strconv.Itoa(i) + `": ` + nested(9990))
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func TestDeeplyNestedConfigIsRefusedAtTheDepthLimit(t *testing.T) {
	raw := bombConfig()
	ce := loadErr(t, string(raw))
	want := "objects and arrays nest deeper than the limit of 64 levels: level 65 opens at /x0/0/0/…(59 more)…/0/0, 60 levels below this value"
	if ce.Path != "/x0/0/0/0" || ce.Reason != want || len(ce.Issues) != 0 {
		t.Errorf("error = %#v", ce)
	}
	if !strings.HasSuffix(ce.Error(), "config.json: /x0/0/0/0: "+want) {
		t.Errorf("Error() = %q", ce.Error())
	}
	// ValidateSchema, exported on its own, refuses it the same way.
	if ve := validateErr(t, string(raw)); ve.Path != "/x0/0/0/0" || ve.Reason != want {
		t.Errorf("ValidateSchema: %#v", ve)
	}

	// Refusing it reads the file's bytes once and allocates next to
	// nothing: no pass that walks the nesting runs. Decoding it, as every
	// command did first, takes hundreds of thousands of allocations.
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := ParseProject("config.json", raw, t.TempDir()); err == nil {
			t.Fatal("accepted")
		}
	})
	if allocs > 2000 {
		t.Errorf("refusing the file took %.0f allocations", allocs)
	}
}

func TestDepthLimitBoundary(t *testing.T) {
	// The top-level object is level 1: "__doc__" holds levels 2 to 64.
	root, path := project(t, `{"__doc__": `+nested(MaxDepth-1)+`, "mission": "m"}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("64 levels refused: %v", err)
	}
	ce := loadErr(t, `{"__doc__": `+nested(MaxDepth)+`}`)
	if !strings.HasPrefix(ce.Reason, "objects and arrays nest deeper than the limit of 64 levels: level 65 opens at /__doc__/0/0/…(59 more)…/0/0,") {
		t.Errorf("65 levels: %v", ce)
	}

	// Brackets inside strings, escaped quotes included, are text.
	text := strings.Repeat(`[{\"[`, 100)
	root, path = project(t, `{"mission": "`+text+`", "__doc__": {"a": ["`+strings.Repeat("{", 100)+`"]}}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("brackets in strings counted: %v", err)
	}
}

func TestDepthErrorNamesThePlaceThroughObjectsAndKeys(t *testing.T) {
	// Level 2 is the object at "a/b"; from there "k~" objects and then
	// arrays whose third element is the deep one.
	var b strings.Builder
	b.WriteString(`{"mission": "m", "a/b": `)
	for range 10 {
		b.WriteString(`{"x": 1, "k~": `)
	}
	for range 60 {
		b.WriteString(`[1, 2, `)
	}
	b.WriteString(`[]`)
	ce := loadErr(t, b.String()) // never closed: the limit comes first
	if ce.Path != "/a~1b/k~0/k~0/k~0" {
		t.Errorf("path %q", ce.Path)
	}
	if want := "level 65 opens at /a~1b/k~0/k~0/…(59 more)…/2/2, 60 levels below this value"; !strings.Contains(ce.Reason, want) {
		t.Errorf("reason %q lacks %q", ce.Reason, want)
	}

	// A hostile key is shortened in the reason.
	long := strings.Repeat("k", 10000) // 70 of them stay under MaxConfigBytes
	ce = loadErr(t, `{"a": {"b": {`+strings.Repeat(`"`+long+`": {`, 70))
	if ce.Path != "/a/b" || len(ce.Error()) > 500 {
		t.Errorf("path %q, message of %d bytes", ce.Path, len(ce.Error()))
	}

	// A syntax error before the limit is crossed is the error reported.
	ce = loadErr(t, `{"a": [1 2, `+nested(100)+`]}`)
	if !strings.HasPrefix(ce.Reason, "parse error at line 1, column 10") {
		t.Errorf("syntax error: %v", ce)
	}
}

// totalAlloc returns the bytes f allocates.
func totalAlloc(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The walks that name a problem's JSON path keep one path, instead of
// copying it at every level: on 9,990 levels, copying allocated about
// 800 MB for the duplicate-key walk alone. The depth limit keeps them
// from such input, so they are driven directly here.
func TestPathWalksAreLinearInTheDepth(t *testing.T) {
	const depth = 9990
	raw := []byte(`{"x": ` + nested(depth-2) + `, "x": 1}`)
	var issues []Issue
	if n := totalAlloc(func() { issues = duplicateKeyIssues(raw) }); n > 32<<20 {
		t.Errorf("duplicateKeyIssues allocated %d MB", n>>20)
	}
	if len(issues) != 1 || issues[0].Path != "/x" {
		t.Errorf("issues = %v", issues)
	}

	deep := strings.Repeat(`{"k": `, depth) + `1e999` + strings.Repeat("}", depth)
	var inst any
	dec := json.NewDecoder(strings.NewReader(deep))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		t.Fatal(err)
	}
	var unparsable []Issue
	if n := totalAlloc(func() { unparsable, _ = numberIssues(inst) }); n > 32<<20 {
		t.Errorf("numberIssues allocated %d MB", n>>20)
	}
	if len(unparsable) != 1 || unparsable[0].Path != strings.Repeat("/k", depth) {
		t.Errorf("%d issues", len(unparsable))
	}
}
