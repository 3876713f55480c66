package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The original project documents rice_extensions as {"label": {"weight": w}}
// (5-C2) while its example config and ooda's docs use {"label": w}: a
// project written either way must load, and scoring must see the weights.
func TestRiceExtensionsBothForms(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want map[string]float64
	}{
		{"number form", `{"security": 2.0, "chore": -0.5}`, map[string]float64{"security": 2, "chore": -0.5}},
		{"object form", `{"timing": {"weight": 0.3}, "novelty": {"weight": 0.2}}`, map[string]float64{"timing": 0.3, "novelty": 0.2}},
		{"object form with other keys", `{"timing": {"weight": 0.3, "description": "when it matters", "source": ["a"]}}`,
			map[string]float64{"timing": 0.3}},
		{"both forms mixed", `{"timing": {"weight": 0.3}, "security": 2}`, map[string]float64{"timing": 0.3, "security": 2}},
		{"empty", `{}`, map[string]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"scoring": {"rice_extensions": ` + tc.raw + `}}`
			cfg, err := Parse(filepath.Join(t.TempDir(), "config.json"), []byte(raw))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := cfg.Scoring.RiceExtensions
			if len(got) != len(tc.want) {
				t.Fatalf("rice_extensions = %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if v, ok := got[k]; !ok || v != w {
					t.Errorf("rice_extensions[%q] = %v (present %v), want %v", k, v, ok, w)
				}
			}
			// Scoring takes a plain map (internal/reflect): the loaded
			// value must be usable as one.
			var plain map[string]float64 = cfg.Scoring.RiceExtensions
			if len(plain) != len(tc.want) {
				t.Errorf("as a plain map: %v", plain)
			}
		})
	}
}

// The original's example config with its extensions in the object form,
// as a project following its 5-C2 text would have it, loads whole.
func TestRiceExtensionsObjectFormInOriginalExample(t *testing.T) {
	path := filepath.Join(compatDir, "config.example.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("original example not available: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["scoring"].(map[string]any)["rice_extensions"] = map[string]any{
		"timing":  map[string]any{"weight": 0.3},
		"novelty": map[string]any{"weight": 0.2, "note": "kept out of scoring"},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := cfg.Scoring.RiceExtensions; got["timing"] != 0.3 || got["novelty"] != 0.2 || len(got) != 2 {
		t.Errorf("rice_extensions = %v, want timing 0.3, novelty 0.2", got)
	}
}

// Any other shape is a configuration error naming the label's JSON path.
func TestRiceExtensionsOtherShapesAreConfigErrors(t *testing.T) {
	tests := []struct {
		name, value string
	}{
		{"string", `"0.3"`},
		{"array", `[0.3]`},
		{"boolean", `true`},
		{"null", `null`},
		{"object without weight", `{"description": "timing"}`},
		{"object with a string weight", `{"weight": "0.3"}`},
		{"object with a null weight", `{"weight": null}`},
		{"weight out of range", `{"weight": 1e7}`},
		{"number out of range", `-1e7`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"scoring": {"rice_extensions": {"security": 2, "timing": ` + tc.value + `}}}`
			_, err := Parse(filepath.Join(t.TempDir(), "config.json"), []byte(raw))
			if err == nil {
				t.Fatal("accepted")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("not a configuration error: %v", err)
			}
			if !strings.Contains(err.Error(), "/scoring/rice_extensions/timing") {
				t.Errorf("error does not name /scoring/rice_extensions/timing: %v", err)
			}
		})
	}
}

// The decoder itself refuses the other shapes, naming the field, so a
// config that reaches it without the schema (a future caller, a schema
// edit) cannot load a weight of 0 for a mistyped value.
func TestRiceExtensionsDecoderNamesTheField(t *testing.T) {
	for _, value := range []string{`"0.3"`, `[1]`, `{"note": 1}`, `{"weight": "x"}`, `false`} {
		raw := []byte(`{"scoring": {"rice_extensions": {"timing": ` + value + `}}}`)
		var c Config
		err := json.Unmarshal(raw, &c)
		if err == nil {
			t.Errorf("%s: decoded as %v", value, c.Scoring.RiceExtensions)
			continue
		}
		ce := typeError("config.json", err).(*Error)
		if ce.Path != "/scoring/rice_extensions/timing" {
			t.Errorf("%s: path %q (%v), want /scoring/rice_extensions/timing", value, ce.Path, ce)
		}
	}
	var c Config
	if err := json.Unmarshal([]byte(`{"scoring": {"rice_extensions": "all"}}`), &c); err == nil {
		t.Error("a string rice_extensions decoded")
	} else if ce := typeError("config.json", err).(*Error); !strings.HasPrefix(ce.Path, "/scoring/rice_extensions") {
		t.Errorf("path %q (%v), want /scoring/rice_extensions", ce.Path, ce)
	}
}
