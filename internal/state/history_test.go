package state

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeEvolveFile(t *testing.T, s *Store, name, content string) {
	t.Helper()
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.EvolvePath(name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func history(t *testing.T, s *Store) ([]CycleRecord, HistoryStats) {
	t.Helper()
	var recs []CycleRecord
	st, err := s.CycleHistory(func(r CycleRecord) bool { recs = append(recs, r); return true })
	if err != nil {
		t.Fatal(err)
	}
	return recs, st
}

// 6-C9: cycle_log.jsonl is one line per cycle; annotations of earlier
// cycles are applied from cycle_log.annotations.jsonl and from the
// annotation lines an original's log holds, the later one winning.
func TestStep6C9_CycleHistoryAppliesAnnotationsFromBothFiles(t *testing.T) {
	s := New(t.TempDir())
	writeEvolveFile(t, s, CycleLogFile, strings.Join([]string{
		`{"cycle_id": 1, "timestamp": "2026-04-01T00:00:00Z", "domain": "api", "result_type": "pr_created", "quality_multiplier": 0.5, "pr_number": 7}`,
		`{"cycle_id": 2, "domain": "tests", "result_type": "futile", "quality_multiplier": 0, "custom": "kept"}`,
		// The original wrote its annotations into the log itself.
		`{"cycle_id": 1, "annotate": {"result_type": "pr_merged", "quality_multiplier": 0.8}, "timestamp": "2026-04-02T00:00:00Z"}`,
		`not json`,
		`{"cycle_id": "#3", "domain": "api", "result_type": "action_extracted", "quality_multiplier": "0.2"}`,
		"",
	}, "\n"))
	writeEvolveFile(t, s, CycleLogAnnotationsFile,
		`{"cycle_id": 1, "annotate": {"result_type": "pr_merged_held", "quality_multiplier": 1.0}, "timestamp": "2026-04-05T00:00:00Z"}`+"\n"+
			`{"cycle_id": 9, "annotate": {"result_type": "pr_merged"}}`+"\n")
	recs, st := history(t, s)
	if len(recs) != 3 || st.Cycles != 3 || st.Annotations != 3 || st.Skipped != 1 {
		t.Fatalf("records %d, stats %+v", len(recs), st)
	}
	if r := recs[0]; r.Line.CycleID != 1 || r.Line.ResultType != "pr_merged_held" || r.Line.QualityMult != 1 || !r.Annotated || *r.Line.PRNumber != 7 {
		t.Errorf("cycle 1 = %+v (annotated %v)", r.Line, r.Annotated)
	}
	if r := recs[1]; r.Line.CycleID != 2 || r.Annotated || string(r.Fields["custom"]) != `"kept"` {
		t.Errorf("cycle 2 = %+v", r)
	}
	// A mistyped value is read where its meaning is plain.
	if r := recs[2]; r.Line.CycleID != 3 || r.Line.QualityMult != 0.2 || r.Line.Domain != "api" {
		t.Errorf("cycle 3 = %+v", r.Line)
	}
}

func TestCycleHistory_MissingLogsAreAnEmptyHistoryAndFnStops(t *testing.T) {
	s := New(t.TempDir())
	recs, st := history(t, s)
	if len(recs) != 0 || st != (HistoryStats{}) {
		t.Fatalf("%v %+v", recs, st)
	}
	writeEvolveFile(t, s, CycleLogFile, `{"cycle_id": 1}`+"\n"+`{"cycle_id": 2}`+"\n")
	n := 0
	if _, err := s.CycleHistory(func(CycleRecord) bool { n++; return false }); err != nil || n != 1 {
		t.Fatalf("stopped after %d (%v)", n, err)
	}
}

// A line far longer than any cycle's is skipped without being held whole.
func TestCycleHistory_HugeLineIsSkipped(t *testing.T) {
	s := New(t.TempDir())
	huge := `{"cycle_id": 2, "domain": "` + strings.Repeat("x", 3*MaxHistoryLine) + `"}`
	writeEvolveFile(t, s, CycleLogFile, `{"cycle_id": 1}`+"\n"+huge+"\n"+`{"cycle_id": 3}`)
	recs, st := history(t, s)
	if len(recs) != 2 || recs[0].Line.CycleID != 1 || recs[1].Line.CycleID != 3 || st.Skipped != 1 {
		t.Fatalf("records %v, stats %+v", len(recs), st)
	}
}

// A log another tool made a pipe or a symlink out of the project is not
// read: a pipe would block the reader forever.
func TestCycleHistory_RefusesAPipeAndASymlinkOut(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.EvolvePath(CycleLogFile), 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := s.CycleHistory(func(CycleRecord) bool { return true }); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("pipe: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(outside, []byte(`{"cycle_id": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.EvolvePath(CycleLogFile))
	if err := os.Symlink(outside, s.EvolvePath(CycleLogFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CycleHistory(func(CycleRecord) bool { t.Error("read a log outside the project"); return true }); err == nil {
		t.Error("symlink out: no error")
	}
}

// A line cut short after a value (the torn end of cycle 167's line reads
// {"cycle_id":16) is no cycle's line: neither reader takes it as cycle
// 16, nor applies cycle 16's annotations to it.
func TestCycleHistory_ACutLineIsNoCycle(t *testing.T) {
	s := New(t.TempDir())
	writeEvolveFile(t, s, CycleLogFile, `{"cycle_id":16,"domain":"api"}`+"\n"+`{"cycle_id" :16`+"\n"+`{"cycle_id":17,"domain":"web"`+"\n")
	writeEvolveFile(t, s, CycleLogAnnotationsFile, `{"cycle_id":16,"annotate":{"result_type":"pr_merged"}}`+"\n")
	recs, st := history(t, s)
	if len(recs) != 1 || recs[0].Line.Domain != "api" || st.Cycles != 1 || st.Skipped != 2 {
		t.Fatalf("CycleHistory: %d records %+v, stats %+v; want cycle 16 of api alone and 2 lines skipped", len(recs), recs, st)
	}
	tail, tst := tailHistory(t, s, 0)
	if len(tail) != 1 || tail[0].Line.Domain != "api" || tst != st {
		t.Fatalf("CycleHistoryTail: %d records %+v, stats %+v; want what CycleHistory reads (%+v)", len(tail), tail, tst, st)
	}
}
