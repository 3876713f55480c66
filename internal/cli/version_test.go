package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "f5b2a77c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"},
		{Key: "vcs.time", Value: "2026-03-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	cases := []struct {
		name     string
		info     *debug.BuildInfo
		first    string
		contains []string
	}{{
		name:     "go install at a tag",
		info:     &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ooda-loop/ooda", Version: "v1.4.0"}},
		first:    "ooda v1.4.0",
		contains: []string{"commit:  unknown", "date:    unknown", "go:      go1.26.0 "},
	}, {
		name:     "go install at a commit",
		info:     &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ooda-loop/ooda", Version: "v1.4.1-0.20260301100000-f5b2a77c0d1e"}},
		first:    "ooda v1.4.1-0.20260301100000-f5b2a77c0d1e",
		contains: []string{"commit:  f5b2a77c0d1e\n", "date:    2026-03-01T10:00:00Z (commit time)"},
	}, {
		name:     "go build in a modified checkout",
		info:     &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ooda-loop/ooda", Version: "v0.0.0-20260301100000-f5b2a77c0d1e+dirty"}, Settings: vcs},
		first:    "ooda v0.0.0-20260301100000-f5b2a77c0d1e+dirty",
		contains: []string{"commit:  f5b2a77c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a, with uncommitted changes", "date:    2026-03-01T10:00:00Z (commit time)"},
	}, {
		name:     "go run",
		info:     &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ooda-loop/ooda", Version: "(devel)"}},
		first:    "ooda (devel)",
		contains: []string{"commit:  unknown (built without version control information"},
	}, {
		name:  "no build information",
		first: "ooda (devel)",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := readVersion(c.info, c.info != nil)
			text := v.text()
			if first, _, _ := strings.Cut(text, "\n"); first != c.first || v.firstLine() != c.first {
				t.Errorf("first line %q (firstLine %q), want %q", first, v.firstLine(), c.first)
			}
			for _, s := range c.contains {
				if !strings.Contains(text, s) {
					t.Errorf("%q does not contain %q", text, s)
				}
			}
		})
	}
}

// What -ldflags sets wins over the build information.
func TestReadVersionLdflags(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "v9.9.9", "abc123", "2026-04-01T00:00:00Z"
	v := readVersion(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true)
	if v.firstLine() != "ooda v9.9.9" || !strings.Contains(v.text(), "commit:  abc123\n") || !strings.Contains(v.text(), "built:   2026-04-01T00:00:00Z") {
		t.Fatalf("got %q", v.text())
	}
}

// --version prints exactly the first line of `ooda version` (CLI.md).
func TestVersionFlagIsTheFirstLine(t *testing.T) {
	run := func(args ...string) string {
		var out, errb strings.Builder
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("ooda %s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	full, short := run("version"), run("--version")
	first, _, _ := strings.Cut(full, "\n")
	if short != first+"\n" || !strings.HasPrefix(first, "ooda ") {
		t.Fatalf("--version printed %q, want the first line of `ooda version` %q", short, first)
	}
}
