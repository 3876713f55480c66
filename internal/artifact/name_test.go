package artifact

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestValidNameIsThePattern: the hand check accepts exactly what the
// pattern it replaced accepts, over every short string of the characters
// that matter and random longer ones.
func TestValidNameIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
	check := func(s string) {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
	alphabet := []string{"a", "Z", "0", "_", ".", "-", " ", "/", "é", "\x00", ":"}
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		check(prefix)
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+c, depth-1)
		}
	}
	walk("", 3)
	r := rand.New(rand.NewPCG(1, 2))
	chars := "abcXYZ019_.-/ :"
	for range 20000 {
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		check(string(b))
	}
}
