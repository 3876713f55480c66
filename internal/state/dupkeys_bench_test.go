package state

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkHasDuplicateKeys1000 is the duplicate-key pre-check of the
// evolve files of the benchmark project of 1,000 domains, when
// OODA_BENCH_LARGE names one.
func BenchmarkHasDuplicateKeys1000(b *testing.B) {
	dir := benchLargeEvolve()
	if dir == "" {
		b.Skip("OODA_BENCH_LARGE names no 1,000-domain project")
	}
	for _, name := range []string{"memos.json", "confidence.json", "skill_gaps.json", "state.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Skip(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if hasDuplicateKeys(raw) {
					b.Fatal("duplicates")
				}
			}
		})
	}
}

// benchLargeEvolve is the evolve directory of a 1,000-domain project when
// OODA_BENCH_LARGE names one (the d-bin-large project that
// `scripts/bench.sh --only d --keep` leaves), else "".
func benchLargeEvolve() string {
	if p := os.Getenv("OODA_BENCH_LARGE"); p != "" {
		return filepath.Join(p, "agent", "state", "evolve")
	}
	return ""
}
