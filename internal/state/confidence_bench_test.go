package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchConfidenceFile is confidence.json of a thousand-domain project:
// OODA_BENCH_LARGE's when set (benchLargeEvolve), else one like it.
func benchConfidenceFile(tb testing.TB) []byte {
	if dir := benchLargeEvolve(); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, ConfidenceFile)); err == nil {
			return b
		}
	}
	c := NewConfidence()
	for i := 0; i < 1000; i++ {
		c.Set(fmt.Sprintf("d%d", i), 0.69, time.Date(2026, 3, 1, i%24, 0, 0, 0, time.UTC))
	}
	b, err := encodeJSON(c)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkConfidence1000 reads confidence.json of a thousand-domain
// project, and writes it after a cycle changed one score.
func BenchmarkConfidence1000(b *testing.B) {
	file := benchConfidenceFile(b)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var c Confidence
			if err := decodeFile(bytes.Clone(file), &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	var c Confidence
	if err := decodeFile(bytes.Clone(file), &c); err != nil {
		b.Fatal(err)
	}
	c.Set("d7", 0.75, time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC))
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeJSON(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoad1000 is Load of the evolve files of the benchmark project
// of 1,000 domains, copied, when OODA_BENCH_LARGE names one.
func BenchmarkLoad1000(b *testing.B) {
	src := benchLargeEvolve()
	if src == "" {
		b.Skip("OODA_BENCH_LARGE names no 1,000-domain project")
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Skip(err)
	}
	root := b.TempDir()
	dst := filepath.Join(root, "agent", "state", "evolve")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := New(root)
	for b.Loop() {
		if snap, err := s.Load(); err != nil || len(snap.Corrupt) > 0 {
			b.Fatal(err, snap.Corrupt)
		}
	}
}
