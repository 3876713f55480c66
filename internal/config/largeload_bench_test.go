package config

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// benchLargeProject is the 1,000-domain project OODA_BENCH_LARGE names,
// copied (its config.json and agent/state/ listing), or a skip.
func benchLargeProject(b *testing.B) (file, root string) {
	src := os.Getenv("OODA_BENCH_LARGE")
	if src == "" {
		b.Skip("OODA_BENCH_LARGE names no 1,000-domain project")
	}
	root = b.TempDir()
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
	return filepath.Join(root, "config.json"), root
}

// BenchmarkLoadProjectLarge is LoadProject of the OODA_BENCH_LARGE
// project as a cycle makes it, the schema's verdict remembered: in order,
// and concurrently (parseKnownConcurrently).
func BenchmarkLoadProjectLarge(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	b.Setenv(NoCacheEnv, "")
	verdictsInTests = true
	b.Cleanup(func() { verdictsInTests = false })
	file, root := benchLargeProject(b)
	if _, err := LoadProject(file, root); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name  string
		bytes int
	}{{"sequential", math.MaxInt}, {"concurrent", concurrentLoadBytes}} {
		b.Run(mode.name, func(b *testing.B) {
			defer func(n int) { concurrentLoadBytes = n }(concurrentLoadBytes)
			concurrentLoadBytes = mode.bytes
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LoadProject(file, root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
