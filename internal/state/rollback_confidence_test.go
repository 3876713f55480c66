package state

import (
	"testing"
	"time"
)

// The original's flat snapshot holds only some scores: restoring it into
// a flat confidence.json sets those scores in the file, which keeps its
// schema_version, its other scores and its key order.
func TestRollbackConfidence_FlatSnapshotIntoAFlatFile(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ConfidenceFile), `{"schema_version":"1.0.0","service_health":0.54,"test_coverage":0.74,"backlog":0.7}`)
	writeFile(t, s.EvolvePath(CheckpointsFile), `{"checkpoints": [{"cycle": 6, "timestamp": "2026-04-14T05:00:00Z", "state_snapshot": {"confidence": {"service_health": 0.9, "test_coverage": 0.5}}}]}`)
	snap := loadClean(t, s)
	cp, _ := snap.Checkpoints.Find(6)
	conf, exact, ok := cp.StateSnapshot.RestoreConfidence(snap.Confidence, time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC))
	if !ok || exact {
		t.Fatalf("restore: ok %v exact %v, want the scores set in the file", ok, exact)
	}
	if err := s.SaveConfidence(conf); err != nil {
		t.Fatal(err)
	}
	got := compactMetrics(t, []byte(readString(t, s.EvolvePath(ConfidenceFile))))
	if want := `{"schema_version":"1.0.0","service_health":0.9,"test_coverage":0.5,"backlog":0.7}`; got != want {
		t.Errorf("confidence.json after the rollback:\n%s\nwant\n%s", got, want)
	}
}

// A snapshot in the file's nested shape is the whole file as it was, and
// is still restored as it is; with no file now any snapshot is.
func TestRollbackConfidence_WholeFileSnapshotsRestoredAsKept(t *testing.T) {
	now := time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ file, snapshot string }{
		{`{"domains": {"a": {"score": 0.4}, "b": {"score": 0.6}}}`, `{"domains": {"a": {"score": 0.9}}}`},
		{"", `{"a": 0.9}`},
	} {
		s := New(t.TempDir())
		if tc.file != "" {
			writeFile(t, s.EvolvePath(ConfidenceFile), tc.file)
		}
		writeFile(t, s.EvolvePath(CheckpointsFile), `{"checkpoints": [{"cycle": 6, "state_snapshot": {"confidence": `+tc.snapshot+`}}]}`)
		snap := loadClean(t, s)
		cp, _ := snap.Checkpoints.Find(6)
		if _, exact, ok := cp.StateSnapshot.RestoreConfidence(snap.Confidence, now); !ok || !exact {
			t.Errorf("file %q, snapshot %s: ok %v exact %v, want it restored as kept", tc.file, tc.snapshot, ok, exact)
		}
	}
}
