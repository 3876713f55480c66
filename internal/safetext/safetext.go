// Package safetext makes text that comes from outside ooda — skill output
// and reports, state files, contracts, forge data such as branch names —
// safe to print on a terminal or in a log.
//
// Such text may carry an escape sequence that rewrites the screen, a
// carriage return or newline that forges a line of ooda's own output (a
// fake "[Record]" line), or a bidirectional override that makes the text
// read differently from what it is. Escape writes each of these as a
// visible escape (\x1b, \n, \u202e), so what is shown is exactly what was
// received, on one line.
package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/secret"
)

const hexDigits = "0123456789abcdef"

// Escape returns s with every character that could control a terminal or
// fake a line escaped:
//
//   - C0 controls U+0000–U+001F and DEL as \n, \r, \t or \xNN;
//   - C1 controls U+0080–U+009F as \u0080 … \u009f;
//   - the bidirectional marks U+061C, U+200E and U+200F, embeddings,
//     overrides and isolates U+202A–U+202E and U+2066–U+2069, and the line
//     and paragraph separators U+2028 and U+2029, as \u202e and the like;
//   - each byte of invalid UTF-8 as \xNN.
//
// Everything else, including a backslash and all printable Unicode, is
// unchanged; a string with nothing to escape is returned as is, without
// copying.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeHexByte(&b, s[i])
		case r < 0x20 || r == 0x7f:
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				writeHexByte(&b, byte(r))
			}
		case unsafeRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Multiline is Escape for text whose line structure is meant to be shown,
// such as a CHANGELOG entry: a newline is kept, every other character
// Escape escapes (a carriage return included) is escaped. A line of such
// text can still look like any other line, so use it only where the whole
// text is shown as a quoted block.
func Multiline(s string) string {
	if firstUnsafe(s) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// TabWidth is the distance between the tab stops OutputLine expands a tab
// to, a terminal's default.
const TabWidth = 8

// OutputLine is Text for one line of a program's output shown as a
// terminal would show it, such as the last lines of a failed skill: a tab
// becomes the spaces up to the next tab stop (every TabWidth columns,
// counted in characters of what is shown), so `go test`'s aligned columns
// stay aligned instead of reading "FAIL\tpkg\t0.015s". A tab moves the
// cursor and nothing else, so it can neither fake a line nor drive the
// terminal; every other character Escape escapes is escaped, and known
// secrets are masked, as Text does.
func OutputLine(s string) string {
	s = secret.Redact(s)
	if !strings.Contains(s, "\t") {
		return Escape(s)
	}
	var b strings.Builder
	col := 0
	for i, seg := range strings.Split(s, "\t") {
		if i > 0 {
			n := TabWidth - col%TabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
		}
		e := Escape(seg)
		b.WriteString(e)
		col += utf8.RuneCountInString(e)
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte that starts something
// Escape changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// Unsafe reports whether r must not reach a terminal from outside text:
// C0 controls and DEL, C1 controls, the bidirectional marks, embeddings,
// overrides and isolates, and the line and paragraph separators. It is the
// set Escape escapes (apart from invalid UTF-8), for writers that drop such
// characters instead, such as a commit message that `git log` will show.
func Unsafe(r rune) bool { return r < 0x20 || r == 0x7f || unsafeRune(r) }

// unsafeRune reports the non-ASCII characters Escape escapes.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// JSON returns a document encoding/json wrote with every character it
// leaves raw that Escape escapes — DEL, the C1 controls, the bidirectional
// marks, embeddings, overrides and isolates — written as a \uXXXX escape.
// Outside its strings a JSON document holds only ASCII punctuation, digits,
// letters and whitespace, so each such character is inside a string, where
// the escape decodes to the same character: the document means exactly
// what it did, and printing it cannot drive a terminal or reorder what it
// shows. b is returned unchanged (not copied) when it holds none.
func JSON(b []byte) []byte {
	i := firstJSONUnsafe(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if jsonUnsafe(r, size) {
			out = append(out, '\\', 'u', hexDigits[(r>>12)&0xf], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstJSONUnsafe(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if jsonUnsafe(r, size) {
			return i
		}
		i += size
	}
	return -1
}

// jsonUnsafe reports the characters JSON escapes. Invalid UTF-8 (which
// encoding/json never writes) is left as it is: \uXXXX cannot spell a byte.
func jsonUnsafe(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return r == 0x7f || unsafeRune(r)
}

func writeHexByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// Text is what ooda prints of a value from outside: its known secrets
// masked (secret.Redact), then escaped.
func Text(s string) string { return Escape(secret.Redact(s)) }

// Error is Text for an error's message. An error joining several
// (errors.Join) is shown one error per line, each escaped, so the lines
// are ooda's own and no message can add one. A nil error is "".
func Error(err error) string {
	if err == nil {
		return ""
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			if e != nil {
				parts = append(parts, Error(e))
			}
		}
		return strings.Join(parts, "\n")
	}
	return Text(err.Error())
}

// Args returns a copy of a, ready for a fmt format string: every string,
// []string, []byte, error and fmt.Stringer is replaced by its Text (a
// []string by a []string of them). Numbers, booleans, nil and every other
// value are left alone, so a verb such as %d or %.2f works as before; a
// struct or a map holding outside text must not be printed with it.
func Args(a ...any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = arg(v)
	}
	return out
}

func arg(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return Text(x)
	case []byte:
		return Text(string(x))
	case []string:
		c := make([]string, len(x))
		for i, s := range x {
			c[i] = Text(s)
		}
		return c
	case error:
		return safeCall(v, func() string { return Error(x) })
	case fmt.Stringer:
		return safeCall(v, func() string { return Text(x.String()) })
	}
	return v
}

// safeCall formats an error or a Stringer, leaving a value whose method
// panics (a nil pointer receiver) to fmt, which prints it as <nil> or a
// %!v(PANIC=...) note instead of crashing.
func safeCall(v any, f func() string) (res any) {
	defer func() {
		if recover() != nil {
			res = v
		}
	}()
	return f()
}
