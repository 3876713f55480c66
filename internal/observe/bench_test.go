package observe

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// benchProject is the shape of a large project as Step 1 meets it each
// cycle: n domains, each with a lens and no state file of its own yet,
// most with a run recorded in state.json (one record is empty).
func benchProject(b *testing.B, n int) (string, *config.Config, *state.Snapshot) {
	root := b.TempDir()
	cfg := config.Default()
	snap := &state.Snapshot{}
	snap.State.DomainLastRun = map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%d", i)
		cfg.Domains = append(cfg.Domains, config.Domain{Name: name, Index: i, Weight: 1, PrimarySkill: "/true", StateFile: "agent/state/" + name + ".json"})
		writeAt(b, root, filepath.Join("agent", "state", name, "lens.json"),
			`{"schema_version": "1.0.0", "domain": "`+name+`", "last_updated": "2026-03-01T00:00:00Z", "focus_items": [], "evidence": []}`)
		switch {
		case i == 1:
			snap.State.DomainLastRun[name] = ""
		case i%10 != 0:
			snap.State.DomainLastRun[name] = time.Date(2026, 3, 1, i%24, 0, 0, 0, time.UTC).Format(time.RFC3339)
		}
	}
	return root, cfg, snap
}

func benchmarkObserve(b *testing.B, n int) {
	root, cfg, snap := benchProject(b, n)
	st := state.New(root)
	phase := func(string) string { return "" }
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if o := Observe(Input{Now: firstNow, Config: cfg, Store: st, Snap: snap, PhaseOf: phase}); len(o.Domains) != n {
			b.Fatalf("observed %d domains, want %d", len(o.Domains), n)
		}
	}
}

func BenchmarkObserve8(b *testing.B)    { benchmarkObserve(b, 8) }
func BenchmarkObserve1000(b *testing.B) { benchmarkObserve(b, 1000) }

// TestParseTimeSkipsOnlyEmpty checks that the empty-string shortcut answers
// as state.ParseTime does, for the empty string and for the others.
func TestParseTimeSkipsOnlyEmpty(t *testing.T) {
	for _, s := range []string{"", " ", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00.5+02:00", "2026-03-01T10:00:00", "2026-03-01 10:00:00", "2026-03-01", "yesterday", "0"} {
		gt, gok := parseTime(s)
		wt, wok := state.ParseTime(s)
		if gok != wok || !gt.Equal(wt) {
			t.Errorf("parseTime(%q) = %v, %v; state.ParseTime gives %v, %v", s, gt, gok, wt, wok)
		}
	}
}
