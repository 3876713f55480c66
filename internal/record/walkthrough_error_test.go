package record

import (
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// A failed cycle's CHANGELOG entry said only "Result: error (error)": it
// has an Error line after Result now, with the message and the run log,
// on one line, bounded and escaped; an entry without an error has none.
func TestWalkthrough_ChangelogErrorLine(t *testing.T) {
	f := Facts{Cycle: 4, Now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), Domain: "todos", Skill: "/count-todos",
		Result: "error", Error: "cannot start ./scripts/count-todos.sh: fork/exec scripts/count-todos.sh: no such file or directory",
		LogPath: "agent/state/evolve/runs/4-count-todos.log"}
	got := Changelog(f, TypeError)
	want := "- **Result**: error (error)\n- **Error**: cannot start ./scripts/count-todos.sh: fork/exec scripts/count-todos.sh: no such file or directory (log: agent/state/evolve/runs/4-count-todos.log)\n- **Score**: "
	if !strings.Contains(got, want) {
		t.Fatalf("entry:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n != 14 {
		t.Errorf("%d lines, want 14:\n%s", n, got)
	}

	// A message that tries to start a heading, or to drive a terminal, is
	// one escaped line; a long one is cut.
	f.Error = "exit status 1\n## Cycle #99 -- forged\x1b[2J"
	got = Changelog(f, TypeError)
	if !strings.Contains(got, "- **Error**: exit status 1 ## Cycle #99 -- forged\\x1b[2J (log: ") || strings.Contains(got, "\x1b") || strings.Contains(got, "\n## Cycle #99") {
		t.Errorf("an error's line breaks and escapes:\n%s", got)
	}
	f.Error = strings.Repeat("e", 5*ErrorMax)
	got = Changelog(f, TypeError)
	if !strings.Contains(got, "- **Error**: "+strings.Repeat("e", ErrorMax-1)+"… (log: ") {
		t.Errorf("a long error is cut at %d runes:\n%s", ErrorMax, got)
	}

	// No log (a skill no executor runs): the message alone.
	f.Error, f.LogPath = "no executor for /count-todos", ""
	if got := Changelog(f, TypeError); !strings.Contains(got, "- **Error**: no executor for /count-todos\n") {
		t.Errorf("without a log:\n%s", got)
	}

	// Success: no Error line, the original's lines exactly.
	f.Result, f.Error = "success", ""
	if got := Changelog(f, TypeAction); strings.Contains(got, "Error") || strings.Count(got, "\n") != 13 {
		t.Errorf("a success has no Error line:\n%s", got)
	}
}

// The state package reads an entry with an Error line as one entry: the
// line is kept with it, and the next entry goes above it.
func TestWalkthrough_ChangelogErrorLineReadsBack(t *testing.T) {
	dir := t.TempDir()
	s := state.New(dir)
	f := Facts{Cycle: 1, Now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), Domain: "a", Skill: "/a", Result: "error", Error: "exit status 1", LogPath: "agent/state/evolve/runs/1-a.log"}
	if err := s.PrependChangelog(Changelog(f, TypeError)); err != nil {
		t.Fatal(err)
	}
	f.Cycle, f.Result, f.Error, f.LogPath = 2, "success", "", ""
	if err := s.PrependChangelog(Changelog(f, TypeAction)); err != nil {
		t.Fatal(err)
	}
	entries, err := s.ChangelogEntries()
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	if !strings.HasPrefix(entries[1], "## Cycle #1 ") || !strings.Contains(entries[1], "\n- **Error**: exit status 1 (log: agent/state/evolve/runs/1-a.log)\n") {
		t.Errorf("entry 1:\n%s", entries[1])
	}
	if strings.Contains(entries[0], "Error") {
		t.Errorf("entry 2:\n%s", entries[0])
	}
}

// Error texts are recorded without this machine's paths: inside the
// project they are relative to it, the root itself is ".", and a path
// that merely starts like the root, or contains it, is left alone.
func TestWalkthrough_ProjectRelative(t *testing.T) {
	const root = "/home/ann/pflag"
	cases := []struct{ in, want string }{
		{"cannot start ./scripts/x.sh: fork/exec /home/ann/pflag/scripts/x.sh: no such file or directory",
			"cannot start ./scripts/x.sh: fork/exec scripts/x.sh: no such file or directory"},
		{"open /home/ann/pflag/agent/state/evolve/state.json: permission denied; write /home/ann/pflag/agent/state/x.json: no space",
			"open agent/state/evolve/state.json: permission denied; write agent/state/x.json: no space"},
		{"chdir /home/ann/pflag: no such file", "chdir .: no such file"},
		{"in /home/ann/pflag/ now", "in ./ now"},
		{`"/home/ann/pflag/scripts/x.sh" does not exist`, `"scripts/x.sh" does not exist`},
		{"dir=/home/ann/pflag/sub", "dir=sub"},
		{"/home/ann/pflag2/x and /home/ann/pflag.old", "/home/ann/pflag2/x and /home/ann/pflag.old"},
		{"/backup/home/ann/pflag/x", "/backup/home/ann/pflag/x"},
		{"/usr/bin/go: exit status 1", "/usr/bin/go: exit status 1"},
		{"", ""},
	}
	for _, c := range cases {
		if got := ProjectRelative(c.in, root); got != c.want {
			t.Errorf("ProjectRelative(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The root as the system resolved it, too.
	if got := ProjectRelative("fork/exec /private/tmp/p/x.sh: denied", "/tmp/p", "/private/tmp/p"); got != "fork/exec x.sh: denied" {
		t.Errorf("resolved root: %q", got)
	}
	// No root, or the file system's root, changes nothing.
	for _, r := range []string{"", "/", "relative/dir"} {
		if got := ProjectRelative("/home/ann/pflag/x", r); got != "/home/ann/pflag/x" {
			t.Errorf("root %q: %q", r, got)
		}
	}
}
