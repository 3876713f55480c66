package config

import "testing"

func TestMatchPath(t *testing.T) {
	for _, c := range []struct {
		pattern, file string
		want          bool
	}{
		{"agent/safety/*", "agent/safety/HALT", true},
		{"agent/safety/*", "agent/safety/deep/x.json", true},
		{"docs/**", "docs/a/b.md", true},
		{"./config.json", "config.json", true},
		{"config.json", "./config.json", true},
		{"*.pem", "key.pem", true},
		{"agent/safety/*", "agent/safetyx/a", false},
		{"config.json", "src/config.json.go", false},
	} {
		if got := MatchPath(c.pattern, c.file); got != c.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", c.pattern, c.file, got, c.want)
		}
	}
}
