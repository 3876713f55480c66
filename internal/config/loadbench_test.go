package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchConfigJSON is the benchmark fixtures' configuration (see
// scripts/bench): n domains each running the skill /true, one of them the
// fallback, indented as json.MarshalIndent writes it.
func benchConfigJSON(n int) []byte {
	domains := map[string]any{}
	for i := 0; i < n; i++ {
		d := map[string]any{"weight": 1.0, "primary_skill": "/true", "mission_alignment": 1.0}
		if i == 0 {
			d["fallback"] = true
		}
		domains[fmt.Sprintf("d%d", i)] = d
	}
	cfg := map[string]any{
		"mission": "Keep the benchmark project healthy.",
		"domains": domains,
		"skills":  map[string]any{"/true": map[string]any{"command": []string{"true"}}},
		"safety": map[string]any{
			"skill_allowlist":            []string{"/true"},
			"min_cycle_interval_minutes": 30,
		},
		"saturation":             map[string]any{"auto_halt": false},
		"progressive_complexity": map[string]any{"current_level": 2},
		"git":                    map[string]any{"commit_state": false, "push": false},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

var benchSizes = []int{8, 1000}

// BenchmarkDecodeConfig is decoding the configuration into Config: by hand
// (decodeConfig) and the way it was before (decodeConfigSplit).
func BenchmarkDecodeConfig(b *testing.B) {
	for _, n := range benchSizes {
		raw := benchConfigJSON(n)
		if _, ok := decodeConfigFast(raw); !ok {
			b.Fatal("the fixture's configuration is not decoded by hand")
		}
		for _, way := range []struct {
			name   string
			decode func([]byte) (*Config, error)
		}{{"fast", decodeConfig}, {"split", decodeConfigSplit}} {
			b.Run(fmt.Sprintf("%s/%d", way.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := way.decode(raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUnknownKeys is finding the unknown keys of a configuration known
// valid: along the key tree, and along the decoded schema (its decoding,
// once per process, not counted: BenchmarkDecodeSchema is that).
func BenchmarkUnknownKeys(b *testing.B) {
	for _, n := range benchSizes {
		raw := benchConfigJSON(n)
		for _, way := range []struct {
			name string
			walk func([]byte) ([]Issue, bool)
		}{{"tree", unknownKeyIssuesRaw}, {"schema", unknownKeyIssuesRawSchema}} {
			b.Run(fmt.Sprintf("%s/%d", way.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, ok := way.walk(raw); !ok {
						b.Fatal("not walked")
					}
				}
			})
		}
	}
}

// BenchmarkDecodeSchema is the decoding of the embedded schema the key
// tree spares every process.
func BenchmarkDecodeSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		decodeSchema()
	}
}

// BenchmarkParseProject is the whole load of the fixtures' configuration
// as a cycle makes it, the schema's verdict remembered.
func BenchmarkParseProject(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	b.Setenv(NoCacheEnv, "")
	verdictsInTests = true
	b.Cleanup(func() { verdictsInTests = false })
	for _, n := range benchSizes {
		root := b.TempDir()
		file := filepath.Join(root, "config.json")
		raw := benchConfigJSON(n)
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseProject(file, raw, root); err != nil {
			b.Fatal(err)
		}
		if !knownValid(raw) {
			b.Fatal("the verdict is not remembered")
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseProject(file, raw, root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
