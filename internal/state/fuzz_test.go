package state

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// addFixtureSeeds seeds f with every compat fixture file of the given names.
func addFixtureSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		paths, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "evolve", name))
		more, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "*", name))
		for _, p := range append(paths, more...) {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
}

func addExtraKeySeeds(f *testing.F, names ...string) {
	for _, tc := range extraKeyDocs {
		for _, n := range names {
			if tc.name == n {
				f.Add([]byte(tc.doc))
			}
		}
	}
}

// roundTrip checks the contract every decoder must meet on arbitrary input:
// no panic; whatever decodes re-encodes to valid JSON; that JSON decodes
// again; and from then on writing and reading are a fixed point, so a file
// never drifts from one cycle to the next.
func roundTrip[T any](t *testing.T, data []byte) (v1, v2 T, ok bool) {
	t.Helper()
	if json.Unmarshal(data, &v1) != nil {
		return v1, v2, false
	}
	b1, err := json.Marshal(v1)
	if err != nil {
		t.Fatalf("%T decoded but does not encode: %v", v1, err)
	}
	if !json.Valid(b1) {
		t.Fatalf("%T encodes to invalid JSON: %s", v1, b1)
	}
	if err := json.Unmarshal(b1, &v2); err != nil {
		t.Fatalf("%T does not read back its own output: %v\n%s", v1, err, b1)
	}
	b2, err := json.Marshal(v2)
	if err != nil {
		t.Fatalf("%T re-read does not encode: %v", v2, err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("%T second write differs from the first:\n%s\n%s", v1, b1, b2)
	}
	var v3 T
	if err := json.Unmarshal(b2, &v3); err != nil || !reflect.DeepEqual(v2, v3) {
		t.Fatalf("%T read-back is not stable: %v\n%+v\n%+v", v1, err, v2, v3)
	}
	return v1, v2, true
}

func FuzzDecodeState(f *testing.F) {
	addFixtureSeeds(f, StateFile)
	addExtraKeySeeds(f, "State", "DecisionEntry")
	f.Add([]byte(`{"cycle_count": 1, "last_cycle": null, "decision_log": null}`))
	f.Add([]byte(`{"decision_log": [{"cycle": 2, "action": "skip", "reason": "idle", "score": null}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, v2, ok := roundTrip[State](t, data)
		if !ok {
			return
		}
		if v1.CycleCount != v2.CycleCount || len(v1.DecisionLog) != len(v2.DecisionLog) || v1.ConsecutiveSilentFailures != v2.ConsecutiveSilentFailures {
			t.Fatalf("state changed across a write: %+v -> %+v", v1, v2)
		}
		for i := range v1.DecisionLog {
			a, b := v1.DecisionLog[i], v2.DecisionLog[i]
			if a.Cycle != b.Cycle || a.SelectedDomain != b.SelectedDomain || !reflect.DeepEqual(a.PRNumber, b.PRNumber) || !reflect.DeepEqual(a.Score, b.Score) {
				t.Fatalf("decision %d changed across a write: %+v -> %+v", i, a, b)
			}
		}
	})
}

func FuzzDecodeConfidence(f *testing.F) {
	addFixtureSeeds(f, ConfidenceFile)
	f.Add([]byte(flatConfidence))
	f.Add([]byte(nestedConfidence))
	f.Add([]byte(`{"domains": {"a": {"score": 0.12345}, "b": null, "c": {"score": "x"}}}`))
	f.Add([]byte(`{"domains": 3, "a": -0.5}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, v2, ok := roundTrip[Confidence](t, data)
		if !ok {
			return
		}
		if v1.Nested() != v2.Nested() {
			t.Fatalf("shape changed across a write: nested %v -> %v", v1.Nested(), v2.Nested())
		}
		if len(v1.Scores) != len(v2.Scores) {
			t.Fatalf("domains changed across a write: %v -> %v", v1.Scores, v2.Scores)
		}
		// Unchanged scores are written back exactly as read.
		for d, s := range v1.Scores {
			got, ok := v2.Scores[d]
			if !ok || got != s {
				t.Fatalf("score of %q changed across a write: %v -> %v", d, s, got)
			}
		}
	})
}

func FuzzDecodeMemos(f *testing.F) {
	addFixtureSeeds(f, MemosFile)
	addExtraKeySeeds(f, "Memos", "Intervention")
	f.Add([]byte(`{"schema_version": "1.0.0", "score_adjustments": {"a": 1}, "history": []}`))
	f.Add([]byte(`{"schema_version": "1.0.0", "memos": [{"cycle": 1, "message": "m"}]}`))
	f.Add([]byte(`{"memos": null, "last_memo": "text"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, v2, ok := roundTrip[Memos](t, data)
		if !ok {
			return
		}
		if len(v1.History) != len(v2.History) || len(v1.Interventions) != len(v2.Interventions) || len(v1.ScoreAdjustments) != len(v2.ScoreAdjustments) {
			t.Fatalf("memos changed across a write: %+v -> %+v", v1, v2)
		}
		for d, a := range v1.ScoreAdjustments {
			if v2.ScoreAdjustments[d] != a {
				t.Fatalf("adjustment of %q changed: %v -> %v", d, a, v2.ScoreAdjustments[d])
			}
		}
		if v2.SchemaVersion != "1.1.0" {
			t.Fatalf("written schema_version %q", v2.SchemaVersion)
		}
	})
}

func FuzzDecodeCostLedger(f *testing.F) {
	addFixtureSeeds(f, CostLedgerFile)
	addExtraKeySeeds(f, "CostLedger", "CostEntry")
	f.Add([]byte(`{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [], "total_estimated_usd": 0.0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, v2, ok := roundTrip[CostLedger](t, data)
		if !ok {
			return
		}
		if v1.Date != v2.Date || v1.TotalEstimatedUSD != v2.TotalEstimatedUSD || len(v1.Entries) != len(v2.Entries) {
			t.Fatalf("ledger changed across a write: %+v -> %+v", v1, v2)
		}
		for i := range v1.Entries {
			if v1.Entries[i].EstimatedUSD != v2.Entries[i].EstimatedUSD || v1.Entries[i].CycleID != v2.Entries[i].CycleID {
				t.Fatalf("entry %d changed: %+v -> %+v", i, v1.Entries[i], v2.Entries[i])
			}
		}
	})
}

func FuzzDecodeActionQueueAndGoals(f *testing.F) {
	addFixtureSeeds(f, ActionQueueFile, GoalsFile)
	addExtraKeySeeds(f, "ActionQueue", "Action", "Goals", "Goal")
	f.Add([]byte(`{"pending": [{"id": "a1", "rice_score": null}], "completed": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if q1, q2, ok := roundTrip[ActionQueue](t, data); ok {
			if len(q1.Pending) != len(q2.Pending) || len(q1.InProgress) != len(q2.InProgress) || len(q1.Completed) != len(q2.Completed) {
				t.Fatalf("queue changed across a write: %+v -> %+v", q1, q2)
			}
			for i := range q1.Pending {
				if q1.Pending[i].ID != q2.Pending[i].ID || q1.Pending[i].Rice() != q2.Pending[i].Rice() {
					t.Fatalf("pending %d changed: %+v -> %+v", i, q1.Pending[i], q2.Pending[i])
				}
			}
		}
		if g1, g2, ok := roundTrip[Goals](t, data); ok {
			if len(g1.Goals) != len(g2.Goals) {
				t.Fatalf("goals changed across a write: %+v -> %+v", g1, g2)
			}
			for i := range g1.Goals {
				if g1.Goals[i].ID != g2.Goals[i].ID || g1.Goals[i].ProgressValue() != g2.Goals[i].ProgressValue() {
					t.Fatalf("goal %d changed: %+v -> %+v", i, g1.Goals[i], g2.Goals[i])
				}
			}
		}
	})
}

func FuzzDecodeOtherEvolveFiles(f *testing.F) {
	addFixtureSeeds(f, SkillGapsFile, MetricsFile, OutcomesFile, "lens.json")
	addExtraKeySeeds(f, "SkillGaps", "Gap", "Metrics", "Counters", "Outcomes", "Outcome", "Lens")
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip[SkillGaps](t, data)
		roundTrip[Metrics](t, data)
		roundTrip[Outcomes](t, data)
		roundTrip[Lens](t, data)
	})
}
