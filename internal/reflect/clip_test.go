package reflect

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A metric command's output quoted in a goal note is cut at a character
// boundary, so the message stays valid UTF-8.
func TestStep2C_MetricErrorQuotesValidUTF8(t *testing.T) {
	_, err := ParseMetric(strings.Repeat("é", 100))
	if err == nil || !utf8.ValidString(err.Error()) || !strings.Contains(err.Error(), "…") {
		t.Fatalf("error = %q", err)
	}
}
