package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manyDomainsConfig writes a project of n domains (state files under
// agent/state/, half of them present) and returns its config file.
func manyDomainsConfig(tb testing.TB, n int) (file, root string) {
	tb.Helper()
	root = tb.TempDir()
	domains := map[string]any{}
	for i := 0; i < n; i++ {
		domains[fmt.Sprintf("d%d", i)] = map[string]any{"weight": 1.0, "primary_skill": "/true"}
	}
	cfg := map[string]any{
		"mission": "bench", "domains": domains,
		"skills": map[string]any{"/true": map[string]any{"command": []string{"true"}}},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "evolve"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i += 2 {
		if err := os.WriteFile(filepath.Join(root, "agent", "state", fmt.Sprintf("d%d.json", i)), []byte("{}"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	file = filepath.Join(root, "config.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	return file, root
}

// BenchmarkPathIssues1000 is the path checks of a configuration of 1,000
// domains, which every process that loads the configuration runs.
func BenchmarkPathIssues1000(b *testing.B) {
	file, root := manyDomainsConfig(b, 1000)
	c, err := LoadProject(file, root)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if issues := c.pathIssues(file, root); len(issues) != 0 {
			b.Fatal(issues)
		}
	}
}

// TestPathShortcutsAgreeWithFilepath checks the string shortcuts of the
// path checks against the filepath functions they stand in for, on clean
// absolute paths (the only ones they are given).
func TestPathShortcutsAgreeWithFilepath(t *testing.T) {
	paths := []string{"/", "/a", "/ab", "/a/b", "/a/bc", "/a/b/c", "/abc/d", "/a/b/..x", "/é/ü", "/a/\xff/b"}
	for _, dir := range paths {
		for _, p := range paths {
			rel, err := filepath.Rel(dir, p)
			want := err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
			if got := within(dir, p); got != want {
				t.Errorf("within(%q, %q) = %v, filepath.Rel says %v (%q)", dir, p, got, want, rel)
			}
			if got, gerr := relPath(dir, p); got != rel || (gerr == nil) != (err == nil) {
				t.Errorf("relPath(%q, %q) = %q, %v; filepath.Rel: %q, %v", dir, p, got, gerr, rel, err)
			}
		}
		for _, c := range []string{"x", "x.json", ".git", "é"} {
			if got, want := joinComponent(dir, c), filepath.Join(dir, c); got != want {
				t.Errorf("joinComponent(%q, %q) = %q, filepath.Join: %q", dir, c, got, want)
			}
		}
	}
	for _, p := range []string{"", "/", "//", "a", "/a//b/", "a/b/c", "./a/../b", "/\xff/é//x/", "///x"} {
		want := strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator || r == '/' })
		if got := splitPath(p); !slices.Equal(got, want) {
			t.Errorf("splitPath(%q) = %q, strings.FieldsFunc: %q", p, got, want)
		}
	}
}
