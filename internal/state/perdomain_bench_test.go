package state

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// domainsProject is a project of n domains, each with its directory and
// lens under agent/state/, as a thousand-domain project has after its
// first cycles.
func domainsProject(b *testing.B, n int) (*Store, []string) {
	b.Helper()
	root := b.TempDir()
	var names []string
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("d%d", i)
		names = append(names, d)
		dir := filepath.Join(root, "agent", "state", d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		lens := fmt.Sprintf(`{"schema_version":"1.0.0","domain":%q,"last_updated":"2026-03-01T00:00:00Z","focus_items":[],"learned_thresholds":[],"discovered_signals":[],"evidence":[],"deprecated_items":[]}`, d)
		if err := os.WriteFile(filepath.Join(dir, "lens.json"), []byte(lens), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "evolve", "runs"), 0o755); err != nil {
		b.Fatal(err)
	}
	return New(root), names
}

// BenchmarkRemoveTempFiles1000 is the cleanup every cycle starts with, in
// a project of 1,000 domain directories.
func BenchmarkRemoveTempFiles1000(b *testing.B) {
	s, _ := domainsProject(b, 1000)
	for b.Loop() {
		if removed, err := s.RemoveTempFiles(); err != nil || len(removed) != 0 {
			b.Fatal(removed, err)
		}
	}
}

// BenchmarkObserveReads1000 is Observe's reads of a 1,000-domain project:
// each domain's state file (missing) and lens, and the card's lens
// changelogs (missing), with the root held as Observe and the card hold it.
func BenchmarkObserveReads1000(b *testing.B) {
	s, names := domainsProject(b, 1000)
	for b.Loop() {
		release := s.HoldRoot()
		for _, d := range names {
			if _, err := s.ReadDomainState(filepath.Join("agent", "state", d+".json")); err != nil {
				b.Fatal(err)
			}
			if _, found, err := s.ReadLens(d); err != nil || !found {
				b.Fatal(d, found, err)
			}
			if _, err := s.ReadLensChangelog(d); err != nil {
				b.Fatal(err)
			}
		}
		release()
	}
}
