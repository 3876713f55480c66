package record

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

func TestStep6C8_CostLedgerIntegrityGate(t *testing.T) {
	b, err := os.ReadFile("../../../shared/compat/ooda-loop/fixtures/cost-ledger-autopatch/agent/state/evolve/cost_ledger.json")
	if err != nil {
		t.Skip("compat fixtures not available")
	}
	var l state.CostLedger
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	// The fixture's state says cycle_count 42; the ledger stops at 39.
	got, filled := IntegrityGate(l, 42, 100, t0)
	if len(filled) != 3 || filled[0] != 40 || filled[2] != 42 || len(got.Entries) != 6 || got.TotalEstimatedUSD != 0.14 {
		t.Fatalf("filled %v, entries %d, total %v", filled, len(got.Entries), got.TotalEstimatedUSD)
	}
	for _, e := range got.Entries[3:] {
		if !e.Synthetic || e.EstimatedUSD != 0.02 {
			t.Errorf("synthetic entry = %+v", e)
		}
	}
	if len(l.Entries) != 3 {
		t.Error("IntegrityGate must not modify its input")
	}
	// Nothing missing: unchanged. A cap bounds the backfill, newest first.
	if _, f := IntegrityGate(got, 42, 100, t0); len(f) != 0 {
		t.Errorf("complete ledger backfilled %v", f)
	}
	_, f := IntegrityGate(l, 1000, 5, t0)
	if len(f) != 5 || f[0] != 996 || f[4] != 1000 {
		t.Errorf("capped backfill = %v", f)
	}
	if _, f := IntegrityGate(state.CostLedger{}, 10, 100, t0); len(f) != 0 {
		t.Error("an empty ledger has no lowest id to start from")
	}
}
