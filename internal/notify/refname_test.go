package notify

import (
	"regexp"
	"strings"
	"testing"
)

// refPattern is the regular expression refName was written from; the test
// holds the hand-written matcher to it.
var refPattern = regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})$`)

func refNameByPattern(v string) string {
	m := refPattern.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

func TestRefNameAsThePattern(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"$A", "A"},
		{"${A}", "A"},
		{"  $OODA_TOKEN_1\n", "OODA_TOKEN_1"},
		{"\u00a0${_x9}\u2003", "_x9"},
		{"$_", "_"},
		{"$", ""},
		{"${}", ""},
		{"${A", ""},
		{"$A}", ""},
		{"{A}", ""},
		{"$1A", ""},
		{"${1A}", ""},
		{"$A-B", ""},
		{"$A B", ""},
		{"$$A", ""},
		{"${{A}}", ""},
		{"${A}}", ""},
		{"$Aé", ""},
		{"$A\x00", ""},
		{"$A\n$B", ""},
		{"literal-secret", ""},
		{"", ""},
	} {
		if got := refName(c.in); got != c.want {
			t.Errorf("refName(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := refNameByPattern(c.in); got != c.want {
			t.Errorf("pattern(%q) = %q, want %q (the table is wrong)", c.in, got, c.want)
		}
	}
	// Every string of up to five symbols from an alphabet that holds each
	// character class the pattern tells apart.
	alphabet := []string{"$", "{", "}", "A", "z", "_", "0", "9", "-", " ", "\n", "é", "\xff"}
	var walk func(prefix string, n int)
	walk = func(prefix string, n int) {
		if got, want := refName(prefix), refNameByPattern(prefix); got != want {
			t.Fatalf("refName(%q) = %q, the pattern says %q", prefix, got, want)
		}
		if n == 0 {
			return
		}
		for _, s := range alphabet {
			walk(prefix+s, n-1)
		}
	}
	walk("", 5)
}
