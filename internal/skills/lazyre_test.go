package skills

import (
	"regexp"
	"testing"
)

// The parsers' patterns are compiled on first use: each must still be a
// valid pattern, which is checked here rather than by a user's run.
func TestLazyPatternsCompile(t *testing.T) {
	if len(lazyPatterns) < 40 {
		t.Fatalf("%d patterns registered; the parsers hold more", len(lazyPatterns))
	}
	for _, l := range lazyPatterns {
		if _, err := regexp.Compile(l.pattern); err != nil {
			t.Errorf("%q: %v", l.pattern, err)
		}
	}
}
