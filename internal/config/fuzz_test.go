package config

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseProject checks what validation promises the rest of ooda: a
// config that loads holds only finite numbers of sane magnitude, plain
// domain names, and paths that stay inside the project even through the
// symlinks the project holds.
func FuzzParseProject(f *testing.F) {
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
	for _, s := range []string{
		`{"domains": {"../../../escaped": {"weight": 1}}}`,
		`{"domains": {"d": {"state_file": "../../etc/passwd"}}}`,
		`{"domains": {"d": {"state_file": "out/passwd"}}}`,
		`{"domains": {"d": {"state_file": "dangling"}}}`,
		`{"domains": {"d": {"state_file": "in/x.json", "weight": 1e6}}}`,
		`{"domains": {"d": {"weight": 1e308}}}`,
		`{"safety": {"halt_file": "/etc/HALT", "min_cycle_interval_minutes": 1e308}}`,
		`{"active_context": {"path": "out/ctx.json"}}`,
		`{"skills": {"s": {"builtin": "noop", "contract": {"output": {"files": ["../x"]}}}}}`,
		`{"safety": {"halt_file": "a", "halt_file": "b"}}`,
		`{"forge": {"repo": "noslash"}}`,
		`{"__doc__": -1e300, "leap": {"mega_leap": {"x": 1e16}}}`,
		`{"safety": {"halt_file": ".git/HEAD", "lock_timeout_minutes": 1e-300}}`,
		`{"safety": {"halt_file": "fuzz.json"}, "domains": {"d": {"state_file": "agent/state/evolve/.lock"}}}`,
		`{"domains": {"evolve": {}, "d": {"primary_skill": "--output=/tmp/x", "chain": ["\u001b"]}}}`,
		`{"agent": {"command": ["sort", "{skill_name}"]}, "skills": {"/x": {"command": ["true"], "timeout_minutes": 1e-300,
			"contract": {"chain_triggers": [{"target": "--output=/tmp/x", "condition": "cost_usd >= 0"}]}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a": {"b": ` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}}`))

	root := f.TempDir()
	outside := f.TempDir()
	for link, target := range map[string]string{
		"out":      outside,
		"dangling": filepath.Join(outside, "missing"),
		"in":       "agent",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "agent", "state"), 0o755); err != nil {
		f.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseProject("fuzz.json", raw, root)
		if err != nil {
			if !IsConfigError(err) {
				t.Fatalf("error %T is not a configuration error: %v", err, err)
			}
			return
		}
		checkNumbers(t, "", reflect.ValueOf(c).Elem())
		var doc any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("a valid config does not decode: %v", err)
		}
		checkRawNumbers(t, "", doc)
		for _, d := range c.Domains {
			if err := ValidDomainName(d.Name); err != nil {
				t.Fatalf("domain %q loaded: %v", d.Name, err)
			}
			inProject(t, root, realRoot, d.StateFile)
		}
		inProject(t, root, realRoot, c.Safety.HaltFile)
		if lt := c.Safety.LockTimeout(); lt < MinLockTimeout {
			t.Fatalf("lock timeout %v loaded", lt)
		}
		for _, p := range append([]string{c.Safety.HaltFile}, stateFiles(c)...) {
			if r, err := resolveIn(root, p); err != nil || r.inGitDir() || r.inEvolveDir() {
				t.Fatalf("path %q loaded: it names git's or ooda's own files", p)
			}
		}
		for _, name := range skillRefs(c) {
			if err := ValidSkillName(name); err != nil {
				t.Fatalf("skill name %q loaded: %v", name, err)
			}
		}
		if p := c.ActiveContext.Path; p != nil && *p != "" {
			inProject(t, root, realRoot, *p)
		}
		for _, s := range c.Skills {
			for _, p := range contractOutputs(s.Contract) {
				inProject(t, root, realRoot, p)
			}
		}
	})
}

// stateFiles lists the state file of every domain.
func stateFiles(c *Config) []string {
	var out []string
	for _, d := range c.Domains {
		out = append(out, d.StateFile)
	}
	return out
}

// skillRefs lists every non-empty skill name the config holds.
func skillRefs(c *Config) []string {
	out := append([]string{c.Implementation.PrimarySkill}, c.Safety.SkillAllowlist...)
	if r := c.ActiveContext.RefreshSkill; r != nil && *r != "" {
		out = append(out, *r)
	}
	for _, d := range c.Domains {
		if d.PrimarySkill != "" {
			out = append(out, d.PrimarySkill)
		}
		out = append(out, d.Chain...)
	}
	for name, s := range c.Skills {
		out = append(out, name)
		var ct struct {
			ChainTriggers []struct {
				Target string `json:"target"`
			} `json:"chain_triggers"`
		}
		if json.Unmarshal(s.Contract, &ct) == nil {
			for _, tr := range ct.ChainTriggers {
				out = append(out, tr.Target)
			}
		}
	}
	return out
}

// checkNumbers fails on any float64 of the decoded config that is not
// finite or exceeds MaxMagnitude.
func checkNumbers(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > MaxMagnitude {
			t.Fatalf("%s = %g loaded", path, f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkNumbers(t, path, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				checkNumbers(t, path+"/"+v.Type().Field(i).Name, v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // json.RawMessage: checkRawNumbers reads the document
		}
		for i := range v.Len() {
			checkNumbers(t, path+"/"+strconv.Itoa(i), v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			checkNumbers(t, path+"/"+k.String(), v.MapIndex(k))
		}
	}
}

// checkRawNumbers fails on any number of the document beyond MaxMagnitude,
// including those in sections kept raw for later versions.
func checkRawNumbers(t *testing.T, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			checkRawNumbers(t, path+"/"+k, e)
		}
	case []any:
		for _, e := range v {
			checkRawNumbers(t, path+"/*", e)
		}
	case json.Number:
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > MaxMagnitude {
			t.Fatalf("%s = %s loaded", path, v)
		}
	}
}

// inProject fails unless p stays inside the project, judged independently
// of ResolveInProject: the longest existing prefix is resolved with
// filepath.EvalSymlinks and the rest appended lexically.
func inProject(t *testing.T, root, realRoot, p string) {
	t.Helper()
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(root, p)
	}
	full = filepath.Clean(full)
	prefix, rest := full, ""
	for {
		if _, err := os.Lstat(prefix); err == nil {
			break
		}
		parent := filepath.Dir(prefix)
		if parent == prefix {
			break
		}
		rest = filepath.Join(filepath.Base(prefix), rest)
		prefix = parent
	}
	real, err := filepath.EvalSymlinks(prefix)
	if err != nil {
		t.Fatalf("path %q loaded, but %s does not resolve: %v", p, prefix, err)
	}
	real = filepath.Join(real, rest)
	if !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		t.Fatalf("path %q loaded, but it leads to %s, outside %s", p, real, realRoot)
	}
}
