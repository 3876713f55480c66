package safetext

import (
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// `go test` aligns its summary lines with tabs; a failed skill's last
// lines showed them as "FAIL\tpkg\t0.015s". A tab is shown as the spaces
// up to the next tab stop, and nothing else that Escape escapes gets
// through.
func TestOutputLineExpandsTabs(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"go test summary", "FAIL\tgithub.com/spf13/pflag\t0.015s", "FAIL    github.com/spf13/pflag  0.015s"},
		{"tab at a stop", "12345678\tx", "12345678        x"},
		{"leading tab", "\tplanted_test.go:13: want 3", "        planted_test.go:13: want 3"},
		{"no tab", "--- FAIL: TestX (0.00s)", "--- FAIL: TestX (0.00s)"},
		// An escape counts as the characters it is shown as.
		{"escape before a tab", "a\x1b\tb", `a\x1b` + "   b"},
		{"still escaped", "ok\r[HALT] fake\n\u202e", `ok\r[HALT] fake\n\u202e`},
		{"wide characters", "é\tx", "é       x"},
	}
	for _, c := range cases {
		got := OutputLine(c.in)
		if got != c.want {
			t.Errorf("%s: OutputLine(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		for _, bad := range []string{"\t", "\x1b", "\n", "\r", "\u202e"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: %q survived in %q", c.name, bad, got)
			}
		}
		// Printing it again (the cycle's printf escapes every argument)
		// changes nothing.
		if again := Text(got); again != got {
			t.Errorf("%s: Text(OutputLine) = %q, want %q", c.name, again, got)
		}
	}
}

// A secret in a line is masked as Text masks it, before the tabs are
// expanded.
func TestOutputLineMasksSecrets(t *testing.T) {
	secret.Register("s3cr3t-outputline-value")
	got := OutputLine("token\ts3cr3t-outputline-value")
	if strings.Contains(got, "s3cr3t-outputline-value") || strings.Contains(got, "\t") {
		t.Fatalf("OutputLine = %q", got)
	}
}
