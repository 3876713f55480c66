package act

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
)

// A skill refreshes last_run on every run: a state file that differs only
// in its timestamps, at any depth, has not changed.
func TestFirst_StateChangedIgnoresTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		want                bool
	}{
		{"last_run only", `{"last_run": "2026-03-02T09:00:00Z", "status": "ok"}`, `{"last_run": "2026-03-02T10:00:00Z", "status": "ok"}`, false},
		{"every volatile key", `{"last_run": "a", "last_checked": "a", "last_updated": "a", "checked_at": "a", "updated_at": "a", "generated_at": "a", "scanned_at": "a", "timestamp": "a", "n": 1}`,
			`{"last_run": "b", "last_checked": "b", "last_updated": "b", "checked_at": "b", "updated_at": "b", "generated_at": "b", "scanned_at": "b", "timestamp": "b", "n": 1}`, false},
		{"nested in objects and lists", `{"metrics": {"checked_at": "a", "n": 1}, "alerts": [{"timestamp": "a", "message": "m"}]}`,
			`{"metrics": {"checked_at": "b", "n": 1}, "alerts": [{"timestamp": "b", "message": "m"}]}`, false},
		{"key order and spacing", `{"a": 1, "b": [1, 2]}`, "{\"b\":[1,2],\n\"a\":1}", false},
		{"a metric changed", `{"last_run": "a", "metrics": {"n": 1}}`, `{"last_run": "b", "metrics": {"n": 2}}`, true},
		{"an alert appeared", `{"last_run": "a", "alerts": []}`, `{"last_run": "a", "alerts": [{"severity": "info", "message": "m"}]}`, true},
		{"a key added", `{"last_run": "a"}`, `{"last_run": "a", "status": "ok"}`, true},
		{"a timestamp removed", `{"last_run": "a", "n": 1}`, `{"n": 1}`, false},
		{"created with content", ``, `{"last_run": "a", "status": "ok"}`, true},
		{"created with last_run only", ``, `{"last_run": "a"}`, false},
		{"created empty", ``, `{}`, false},
		{"removed", `{"status": "ok"}`, ``, false},
		{"not JSON, same bytes", `oops`, `oops`, false},
		{"not JSON, other bytes", `oops`, `oops!`, true},
		{"was not JSON", `oops`, `{"status": "ok"}`, true},
		{"is not JSON", `{"status": "ok"}`, `oops`, true},
		{"created not JSON", ``, `oops`, true},
	} {
		if got := StateChanged([]byte(tc.before), []byte(tc.after)); got != tc.want {
			t.Errorf("%s: StateChanged(%s, %s) = %v, want %v", tc.name, tc.before, tc.after, got, tc.want)
		}
	}
}

// The summary shown and recorded is one line of safe text, bounded.
func TestFirst_SummaryLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  tests pass;\n\tcoverage 78.5%  ", "tests pass; coverage 78.5%"},
		{"red\x1b[31m\r\n[Record] forged\u202e", "red [31m [Record] forged"},
		{"bad \xff byte", "bad byte"},
	} {
		r := &Report{Summary: tc.in}
		if got := r.SummaryLine(); got != tc.want {
			t.Errorf("SummaryLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := (&Report{Summary: strings.Repeat("é", 1000)}).SummaryLine()
	if n := len([]rune(long)); n != SummaryMax || !strings.HasSuffix(long, "…") {
		t.Errorf("a long summary: %d runes, %q", n, long[len(long)-10:])
	}
	var none *Report
	if none.SummaryLine() != "" {
		t.Error("no report, no summary")
	}
}

// The end of a failed run's output, bounded in lines and bytes.
func TestFirst_LastLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	got := LastLines([]byte(b.String()+"\n\n  \n"), 10, 2000)
	if len(got) != 10 || got[0] != "line 21" || got[9] != "line 30" {
		t.Errorf("last 10 lines: %q", got)
	}
	if got := LastLines([]byte("a\r\nprogress 10%\rprogress 100%\r\n"), 10, 100); fmt.Sprint(got) != "[a progress 100%]" {
		t.Errorf("carriage returns: %q", got)
	}
	// Bytes: older lines go first; one huge line keeps its end, at a
	// character boundary.
	got = LastLines([]byte("older\n"+strings.Repeat("é", 100)+"END\n"), 10, 11)
	if len(got) != 1 || got[0] != "éééé"+"END" {
		t.Errorf("bounded: %q", got)
	}
	total := 0
	for _, l := range LastLines([]byte(strings.Repeat(strings.Repeat("x", 500)+"\n", 20)), 10, FailureTailBytes) {
		total += len(l)
	}
	if total > FailureTailBytes {
		t.Errorf("%d bytes kept, more than %d", total, FailureTailBytes)
	}
	if len(LastLines(nil, 10, 100)) != 0 {
		t.Error("no output, no lines")
	}
}

// A command that cannot start says why in its output (the run log) and
// in its error, with what to do.
func TestFirst_StartFailureIsWrittenToTheOutput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "noexec.sh"), []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "noshebang.sh"), []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "badshebang.sh"), []byte("#!/no/such/interpreter\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"./missing.sh"}, "no such file: the path is relative to the project root"},
		{[]string{"./noexec.sh"}, "not executable: chmod +x it"},
		{[]string{"./noshebang.sh"}, "not a program: add a #! line"},
		{[]string{"./badshebang.sh"}, "the interpreter its #! line names does not exist"},
		{[]string{"no-such-program-ooda"}, "no such program in PATH"},
	} {
		var out bytes.Buffer
		c := &Command{Argv: tc.argv, Runner: proc.Exec{}, Source: "skills./x"}
		resp := c.Execute(context.Background(), Request{Skill: "/x", ProjectDir: dir, Timeout: time.Minute, Output: &out})
		if resp.OK || !resp.NotStarted || !strings.Contains(resp.Error, "cannot start "+tc.argv[0]) || !strings.Contains(resp.Error, tc.want) {
			t.Errorf("%v: %+v", tc.argv, resp)
		}
		if !strings.Contains(out.String(), "ooda: "+resp.Error+"\n") || !strings.Contains(out.String(), "(skills./x.command)") {
			t.Errorf("%v: output %q", tc.argv, out.String())
		}
	}
	// A program that starts and fails is not a start failure.
	c := &Command{Argv: []string{"/bin/sh", "-c", "exit 3"}, Runner: proc.Exec{}}
	if resp := c.Execute(context.Background(), Request{Skill: "/x", ProjectDir: dir, Timeout: time.Minute}); resp.NotStarted || resp.Error != "exit status 3" {
		t.Errorf("exit 3: %+v", resp)
	}
}
