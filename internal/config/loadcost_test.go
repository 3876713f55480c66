package config

import (
	"path/filepath"
	"testing"
)

// BenchmarkLoadProject1000 is the whole load of a configuration of 1,000
// domains as every cycle makes it: the schema's verdict remembered.
func BenchmarkLoadProject1000(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	b.Setenv(NoCacheEnv, "")
	verdictsInTests = true
	b.Cleanup(func() { verdictsInTests = false })
	file, root := manyDomainsConfig(b, 1000)
	if _, err := LoadProject(file, root); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := LoadProject(file, root); err != nil {
			b.Fatal(err)
		}
	}
}
