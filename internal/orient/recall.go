package orient

import (
	"github.com/ooda-loop/ooda/internal/state"
)

// Recall is what 2-F brought back.
type Recall struct {
	// Lessons are the recalled lessons, most recent first.
	Lessons []state.Reflection
	// Indexes are the positions in reflections.json to mark applied.
	Indexes []int
	// Lean maps a domain to the direction its recalled lessons push it:
	// +1 after a hit (do more of what worked), −1 after a miss.
	Lean map[string]int
}

// RecallReflections is 2-F: up to n reflections, most recent first,
// preferring those about a current candidate domain. Decide uses their
// lean as the tie-break within 0.5 points.
func RecallReflections(rs []state.Reflection, candidates []string, n int) Recall {
	out := Recall{Lean: map[string]int{}}
	if n <= 0 {
		return out
	}
	seen := map[string]bool{}
	cand := candidateSet(rs, candidates)
	pick := func(match bool) {
		for i := len(rs) - 1; i >= 0 && len(out.Indexes) < n; i-- {
			r := rs[i]
			if r.Lesson == "" || cand[r.Domain] != match || containsInt(out.Indexes, i) || seen[r.Domain+"\x00"+r.Lesson] {
				continue
			}
			// The same lesson recalled twice would count twice in the lean.
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

// candidateSet says, of every domain a reflection of rs names, whether
// it is among candidates (a missing name is not). With fewer reflections
// than candidates (a few dozen lessons, a thousand domains), the set is
// of the reflections' domains, each marked when a candidate is it: the
// same answers as a set of every candidate, without making one.
func candidateSet(rs []state.Reflection, candidates []string) map[string]bool {
	if len(rs) >= len(candidates) {
		cand := make(map[string]bool, len(candidates))
		for _, c := range candidates {
			cand[c] = true
		}
		return cand
	}
	cand := make(map[string]bool, len(rs))
	for _, r := range rs {
		cand[r.Domain] = false
	}
	for _, c := range candidates {
		if _, named := cand[c]; named {
			cand[c] = true
		}
	}
	return cand
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
