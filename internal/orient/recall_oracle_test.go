package orient

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// recallReflectionsOracle is RecallReflections as first written, with a
// set of every candidate: kept as the oracle of the one that makes a set
// of the reflections' domains when there are fewer of them.
func recallReflectionsOracle(rs []state.Reflection, candidates []string, n int) Recall {
	out := Recall{Lean: map[string]int{}}
	if n <= 0 {
		return out
	}
	seen := map[string]bool{}
	cand := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		cand[c] = true
	}
	pick := func(match bool) {
		for i := len(rs) - 1; i >= 0 && len(out.Indexes) < n; i-- {
			r := rs[i]
			if r.Lesson == "" || cand[r.Domain] != match || containsInt(out.Indexes, i) || seen[r.Domain+"\x00"+r.Lesson] {
				continue
			}
			seen[r.Domain+"\x00"+r.Lesson] = true
			out.Indexes = append(out.Indexes, i)
			out.Lessons = append(out.Lessons, r)
			switch r.Verdict {
			case "hit":
				out.Lean[r.Domain]++
			case "miss":
				out.Lean[r.Domain]--
			}
		}
	}
	pick(true)
	pick(false)
	return out
}

// TestRecallReflectionsIsTheOracle recalls from random reflections —
// about candidates and not, the empty domain, names that differ only in
// case or by a NUL, repeated lessons, empty lessons — among random
// candidate lists longer and shorter than the reflections, with repeats,
// and requires the oracle's recall.
func TestRecallReflectionsIsTheOracle(t *testing.T) {
	names := []string{"", "d0", "d1", "D1", "d1\x00", "implementation", "a b", "é", "d10"}
	lessons := []string{"", "retry", "lower its priority", "retry"}
	verdicts := []string{"hit", "miss", "", "partial"}
	r := rand.New(rand.NewPCG(9, 2))
	for k := range 5000 {
		rs := make([]state.Reflection, r.IntN(12))
		for i := range rs {
			rs[i] = state.Reflection{Domain: names[r.IntN(len(names))], Lesson: lessons[r.IntN(len(lessons))], Verdict: verdicts[r.IntN(len(verdicts))]}
		}
		var cands []string
		for range r.IntN(20) {
			cands = append(cands, names[r.IntN(len(names))])
		}
		n := r.IntN(6) - 1
		got, want := RecallReflections(rs, cands, n), recallReflectionsOracle(rs, cands, n)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: reflections %+v, candidates %q, n %d:\n got %+v\nwant %+v", k, rs, cands, n, got, want)
		}
	}
}
