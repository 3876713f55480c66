package safetext

import (
	"encoding/json"
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
		{"bidi marks", "a\u200eb\u200fc\u061cd", `a\u200eb\u200fc\u061cd`},
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

// encoding/json leaves DEL, the C1 controls and the bidirectional controls
// raw; JSON escapes them and the document still decodes to the same value.
func TestJSONEscapesWhatEncodingJSONLeaves(t *testing.T) {
	in := map[string]string{"x\u009by\u202ez": "a\u0080b\u009fc\x7fd\u061c\u200e\u200f\u202a\u202d\u2066\u2069 é 日本 🚀 \\u202e \u2028"}
	enc, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(enc)
	for _, r := range []rune{0x7f, 0x80, 0x9b, 0x9f, 0x61c, 0x200e, 0x200f, 0x202a, 0x202d, 0x202e, 0x2066, 0x2069, 0x2028} {
		if strings.ContainsRune(string(got), r) {
			t.Errorf("U+%04X survived in %s", r, got)
		}
	}
	if !strings.Contains(string(got), `"x\u009by\u202ez"`) || !strings.Contains(string(got), "é 日本 🚀") {
		t.Errorf("escaped document %s", got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["x\u009by\u202ez"] != in["x\u009by\u202ez"] {
		t.Fatalf("does not decode to the same value: %v %q", err, back)
	}
	plain := []byte(`{"a": "é"}`)
	if out := JSON(plain); &out[0] != &plain[0] {
		t.Error("a document with nothing to escape is copied")
	}
}
