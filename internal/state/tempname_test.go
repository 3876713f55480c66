package state

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestIsTempNameIsThePattern checks the hand matcher of temporary names
// against the pattern it stands in for, on names made to sit at its
// edges and on random names over the alphabet that matters.
func TestIsTempNameIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)
	names := []string{"", ".", "..tmp-1", ".a.tmp-1", ".a.tmp-", ".a.tmp-x", ".a.tmp-1x", "a.tmp-1",
		".state.json.tmp-123", ".a.tmp-1.tmp-2", ".a.tmp-1.tmp-", ". .tmp-0", "..tmp-", "...tmp-9",
		".lock.tmp-42", ".tmp-1", ".x.tmp-١", ".a.TMP-1", ".a.tmp-+1"}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{".", "tmp", "-", "1", "0", "a", ".tmp-", "t", "m", "p", "é"}
	for range 20000 {
		s := ""
		for range r.IntN(8) {
			s += alphabet[r.IntN(len(alphabet))]
		}
		names = append(names, s, "."+s)
	}
	for _, n := range names {
		if got, want := isTempName(n), re.MatchString(n); got != want {
			t.Errorf("isTempName(%q) = %v, the pattern says %v", n, got, want)
		}
	}
}
