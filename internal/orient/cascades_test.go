package orient

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

func TestStep2B3_CascadeDetectionBonusAndResolution(t *testing.T) {
	deps, err := Dependencies(json.RawMessage(`{"schema": {"depends_on": ["api", "docs"], "cascade_events": ["schema_change", "entity_rename"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	cs, added := DetectCascades(state.Cascades{}, deps, "schema", []string{"schema_change", "unrelated", "schema_change"}, now)
	if len(added) != 1 || added[0].ID != "C-20260414-1" || added[0].Status != "pending" || len(added[0].AffectedDomains) != 2 {
		t.Fatalf("added %+v", added)
	}
	if _, none := DetectCascades(cs, deps, "api", []string{"schema_change"}, now); len(none) != 0 {
		t.Error("only a declared source cascades")
	}
	// First Orient: one bonus per affected domain.
	r := ApplyCascades(cs, map[string]time.Time{}, now.Add(time.Hour))
	if r.Bonus["api"] != 3 || r.Bonus["docs"] != 3 || !r.Changed {
		t.Fatalf("bonus %v", r.Bonus)
	}
	// Still pending next cycle: no second bonus (no compounding).
	r2 := ApplyCascades(r.Cascades, map[string]time.Time{"api": now.Add(2 * time.Hour)}, now.Add(2*time.Hour))
	if len(r2.Bonus) != 0 || r2.Cascades.Cascades[0].Status != "pending" {
		t.Errorf("second pass: bonus %v status %s", r2.Bonus, r2.Cascades.Cascades[0].Status)
	}
	// Both affected domains ran since the cascade: resolved.
	r3 := ApplyCascades(r2.Cascades, map[string]time.Time{"api": now.Add(2 * time.Hour), "docs": now.Add(3 * time.Hour)}, now.Add(3*time.Hour))
	if c := r3.Cascades.Cascades[0]; c.Status != "resolved" || c.ResolvedAt == "" {
		t.Errorf("not resolved: %+v", c)
	}
	if cs.Cascades[0].BonusAppliedTo != nil {
		t.Error("ApplyCascades must not modify its input")
	}
	// A second cascade the same day gets the next number.
	_, more := DetectCascades(r3.Cascades, deps, "schema", []string{"entity_rename"}, now)
	if len(more) != 1 || more[0].ID != "C-20260414-2" {
		t.Errorf("next id: %+v", more)
	}
}
