package present

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Lens changelogs read ahead, while the cycle records itself: one the
// cycle then rewrites (named in Written) is read again, so the card is
// the card of the files as they end; one it does not name keeps what was
// read ahead, which is why the prefetch may start only once nothing but
// the cycle's own recording writes them.
func TestStep7_CycleCardPrefetchedLensChangelogs(t *testing.T) {
	lensCL := `{"domain": "service_health", "entries": [
		{"cycle": 9, "item": "p99 latency", "change_type": "promoted", "before": 0.4, "after": 0.6, "delta": 0.2, "reason": "3 confirmations"}]}`
	before, dir := cardProject(t, map[string]string{
		"agent/state/evolve/state.json":                  entryState("{" + executed + "}"),
		"agent/state/service_health/lens_changelog.json": `{"domain": "service_health", "entries": []}`,
	})
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(dir)
	p := PrefetchLensChangelogs(cfg, st)
	WaitLensPrefetch(p)
	// Step 6 writes the lens changelog of service_health.
	if err := os.WriteFile(filepath.Join(dir, "agent/state/service_health/lens_changelog.json"), []byte(lensCL), 0o644); err != nil {
		t.Fatal(err)
	}
	after := BuildCard(cfg, st)
	if reflect.DeepEqual(before.Card.Learn, after.Card.Learn) || !strings.Contains(after.Card.Learn[0].Text, "p99 latency") {
		t.Fatalf("the rewritten changelog does not show: %+v", after.Card.Learn)
	}
	written := []string{"agent/state/evolve/state.json", filepath.Join("agent", "state", "service_health", "lens_changelog.json")}
	if got := BuildCardFrom(cfg, st, Recorded{Lens: p, Written: written}); !reflect.DeepEqual(got, after) {
		t.Errorf("prefetched, the rewritten file named:\n%+v\nfrom the files:\n%+v", got.Card.Learn, after.Card.Learn)
	}
	if got := BuildCardFrom(cfg, st, Recorded{Lens: p}); !reflect.DeepEqual(got.Card.Learn, before.Card.Learn) {
		t.Errorf("prefetched, the rewritten file not named: %+v, want what was read ahead %+v", got.Card.Learn, before.Card.Learn)
	}
}
