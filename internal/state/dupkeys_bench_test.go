package state

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkHasDuplicateKeys1000 is the duplicate-key pre-check of the
// evolve files of the benchmark project of 1,000 domains, when the
// machine has it.
func BenchmarkHasDuplicateKeys1000(b *testing.B) {
	dir := "/tmp/ooda-bench-309954115/d-bin-large/agent/state/evolve"
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
