package present

import (
	"strings"
	"unicode/utf8"
)

// Style is how a view is drawn on its output. The zero Style is plain
// text of unbounded width: what a pipe, a file or a script gets.
type Style struct {
	// Terminal says the output is a terminal: box drawing, sparklines
	// and emoji are for a person looking at a screen.
	Terminal bool
	// Color allows ANSI colours: only on a terminal, and never with
	// --no-color or NO_COLOR.
	Color bool
	// Width is the number of columns to fit in; 0 when unknown (not a
	// terminal and no COLUMNS), when nothing is cut.
	Width int
}

// Color is an ANSI SGR attribute.
type Color string

// The colours the views use: red for what needs a person (HALT, critical,
// failures), yellow for what is worth a look, green for what is fine, dim
// for what is secondary, bold for headings.
const (
	Red    Color = "31"
	Yellow Color = "33"
	Green  Color = "32"
	Dim    Color = "2"
	Bold   Color = "1"
)

// Paint wraps text in c when colours are allowed. text must already be
// safe for a terminal (see safetext); Paint adds only the SGR codes.
func (s Style) Paint(c Color, text string) string {
	if !s.Color || text == "" {
		return text
	}
	return "\x1b[" + string(c) + "m" + text + "\x1b[0m"
}

// DisplayWidth is the number of terminal columns text takes: one per
// rune, two for the wide runes (CJK, emoji). ANSI SGR sequences take
// none, so a painted string measures as its text.
func DisplayWidth(text string) int {
	n := 0
	for i := 0; i < len(text); {
		if text[i] == 0x1b && i+1 < len(text) && text[i+1] == '[' {
			j := i + 2
			for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r == 0x200d || (r >= 0xfe00 && r <= 0xfe0f) || (r >= 0x300 && r <= 0x36f):
		// Zero-width joiner, variation selectors, combining marks.
		return 0
	case r >= 0x1100 && r <= 0x115f,
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff,
		r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1faff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// Fit cuts plain text (no ANSI codes) to at most n columns, ending it with
// "…" when something was cut. n <= 0 means no limit.
func Fit(text string, n int) string {
	if n <= 0 || DisplayWidth(text) <= n {
		return text
	}
	var b strings.Builder
	w := 0
	for _, r := range text {
		rw := runeWidth(r)
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteString("…")
	return b.String()
}

// Pad right-pads plain or painted text with spaces to n columns.
func Pad(text string, n int) string {
	if w := DisplayWidth(text); w < n {
		return text + strings.Repeat(" ", n-w)
	}
	return text
}
