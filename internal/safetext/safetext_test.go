package safetext

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

func TestEscape(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain ASCII", "feature/login-page v1.2 (50%) \\path", "feature/login-page v1.2 (50%) \\path"},
		{"plain Unicode", "résumé — 日本語 ✓ 🚀", "résumé — 日本語 ✓ 🚀"},
		{"empty", "", ""},
		{"escape sequence", "x\x1b[2J\x1b]0;owned\x07y", `x\x1b[2J\x1b]0;owned\x07y`},
		// A branch name that ends the current line and forges one of
		// ooda's own.
		{"forged line", "main\n[Record] Cycle #9 recorded: api (success, quality 1.000).",
			`main\n[Record] Cycle #9 recorded: api (success, quality 1.000).`},
		{"carriage return", "ok\r[HALT] fake", `ok\r[HALT] fake`},
		{"tab and NUL", "a\tb\x00c", `a\tb\x00c`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "file\u202etxt.exe", `file\u202etxt.exe`},
		{"bidi isolates", "\u2066a\u2069", `\u2066a\u2069`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"ESC byte after valid multibyte", "é\x1b", `é\x1b`},
	}
	for _, c := range cases {
		got := Escape(c.in)
		if got != c.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		// Nothing a terminal acts on survives.
		for _, bad := range []string{"\x1b", "\n", "\r", "\u202e", "\u009b", "\x00", "\x7f"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: %q survived in %q", c.name, bad, got)
			}
		}
	}
}

func TestMultilineKeepsOnlyNewlines(t *testing.T) {
	in := "## Cycle 3\n- fix\x1b[31m red\r\n- ok"
	want := "## Cycle 3\n- fix\\x1b[31m red\\r\n- ok"
	if got := Multiline(in); got != want {
		t.Fatalf("Multiline = %q, want %q", got, want)
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type nilStringer struct{ s string }

func (n *nilStringer) String() string { return n.s }

func TestArgs(t *testing.T) {
	const tok = "ghp_safetextArgsToken1234"
	secret.Register(tok)
	var np *nilStringer
	args := Args("br\x1b[2J", errors.New("bad "+tok+"\n[Record] x"), stringer{"s\u202e"}, 42, 1.5, true, nil,
		[]string{"a\nb"}, []byte("c\rd"), np)
	got := fmt.Sprintf("%s|%v|%s|%d|%.1f|%t|%v|%v|%s|%v", args...)
	want := `br\x1b[2J|bad ***\n[Record] x|s\u202e|42|1.5|true|<nil>|[a\nb]|c\rd|<nil>`
	if got != want {
		t.Fatalf("formatted = %q\nwant        %q", got, want)
	}
	// A joined error keeps one line per error, and no error adds a line.
	j := errors.Join(errors.New("first\nforged"), errors.New("second"))
	if got := fmt.Sprint(Args(j)...); got != "first\\nforged\nsecond" {
		t.Fatalf("joined error = %q", got)
	}
}
