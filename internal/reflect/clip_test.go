package reflect

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Text quoted in a goal note (a metric command's output) is cut at a
// character boundary: cutting "é…" at an odd byte count must not split a
// character.
func TestStep2C_ClippedTextStaysValidUTF8(t *testing.T) {
	got := clip(strings.Repeat("é", 100), 81)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) != 82 {
		t.Fatalf("clip = %q (%d runes)", got, utf8.RuneCountInString(got))
	}
}
