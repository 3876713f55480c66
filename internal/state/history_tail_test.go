package state

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func tailHistory(t *testing.T, s *Store, n int) ([]CycleRecord, HistoryStats) {
	t.Helper()
	var recs []CycleRecord
	st, err := s.CycleHistoryTail(n, func(r CycleRecord) bool { recs = append(recs, r); return true })
	if err != nil {
		t.Fatal(err)
	}
	return recs, st
}

// oddLog is a log with every kind of line a reader meets: the engine's
// own, the original's annotation lines, ids written as strings or under
// "cycle", values of the wrong type, keys in another case or escaped,
// lines that are not cycles at all, a line longer than any cycle's, CRLF
// endings and a last line without its newline.
var oddLog = strings.Join([]string{
	`{"cycle_id":1,"timestamp":"2026-04-01T00:00:00Z","domain":"api","skill":"/a","score":5.5,"confidence":0.7,"result":"success","result_type":"pr_created","quality_multiplier":0.5,"pr_number":7,"had_output":true,"cost_usd":0.02,"saturation":0,"on_mission":true,"artifact_score":null}`,
	`{"cycle_id": 2, "domain": "tests", "result_type": "futile", "quality_multiplier": 0, "custom": "kept"}`,
	`{"cycle_id": 1, "annotate": {"result_type": "pr_merged", "quality_multiplier": 0.8}, "timestamp": "2026-04-02T00:00:00Z"}`,
	`not json`,
	`[1, 2]`,
	`"a string"`,
	`42`,
	`null`,
	`{"domain": "no id"}`,
	`{"cycle_id": null, "cycle": 4, "result_type": "observe", "quality_multiplier": 0.1}`,
	`{"cycle_id": "#3", "domain": "api", "result_type": "action_extracted", "quality_multiplier": "0.2"}`,
	`{"cycle": 5, "result_type": "error", "cost_usd": "0.05"}` + "\r",
	`{"Cycle_ID": 6, "result_type": "observe"}`,
	`{"cycle\u005fid": 7, "result_type": "observe", "quality_multiplier": 0.1}`,
	`{"cycle_id": 8, "annotate": null}`,
	`{"cycle_id": 8, "annotate": "pr_merged"}`,
	`{"cycle_id": 8, "result_type": "pr_created", "pr_number": 9, "quality_multiplier": 0.5, "on_mission": "yes"}`,
	`{"cycle_id": 9, "domain": "` + strings.Repeat("x", MaxHistoryLine) + `"}`,
	`{"cycle_id": 12.0, "result_type": "pr_rejected", "pr_number": 10}`,
	`{"cycle_id": 13.5, "result_type": "observe"}`,
	``,
	`   `,
	`{"cycle_id": 8, "annotate": {"result_type": "pr_merged", "quality_multiplier": 0.8}}`,
	`{"cycle_id": 8, "annotate": {"result_type": "pr_rejected"}}`,
	`{"cycle_id": 14, "result_type": "pr_merged_held", "quality_multiplier": 1, "artifact_score": 0.4}`,
	`{"cycle_id": 15, "result_type": "observe", "quality_multiplier": 0.1, "annotate": {"result_type": "futile"}, "x": 1}`,
	`{"cycle_id": 16, "result_type": "futi`,
}, "\n")

var oddAnnotations = strings.Join([]string{
	`{"cycle_id": 1, "annotate": {"result_type": "pr_merged_held", "quality_multiplier": 1.0}, "timestamp": "2026-04-05T00:00:00Z"}`,
	`{"cycle_id": 9, "annotate": {"result_type": "pr_merged"}}`,
	`{"cycle_id": 8, "note": "no annotate member"}`,
	`{"cycle_id": 8, "annotate": {"quality_multiplier": 0.9}}`,
	`garbage`,
	`{"cycle_id": 14, "annotate": {"result_type": "pr_merged_held"}}`,
	`{"cycle_id": 12, "annotate": {"on_mission": true}}`,
}, "\n") + "\n"

// The tail reader gives, newest first, exactly the records and counts
// CycleHistory gives oldest first: the same lines taken, the same
// annotations applied (the annotation file's last), the same lines
// skipped. Its fast decoding must never take a line CycleHistory refuses
// or read a value differently.
func TestCycleHistoryTail_SameRecordsAsCycleHistory(t *testing.T) {
	s := New(t.TempDir())
	writeEvolveFile(t, s, CycleLogFile, oddLog)
	writeEvolveFile(t, s, CycleLogAnnotationsFile, oddAnnotations)
	want, wst := history(t, s)
	got, gst := tailHistory(t, s, 0)
	if len(want) < 9 {
		t.Fatalf("CycleHistory reads only %d records: the log no longer exercises the reader", len(want))
	}
	if len(got) != len(want) || gst != wst {
		t.Fatalf("tail: %d records %+v; CycleHistory: %d records %+v", len(got), gst, len(want), wst)
	}
	for i := range want {
		w, g := want[len(want)-1-i], got[i]
		if !reflect.DeepEqual(w.Line, g.Line) || w.Annotated != g.Annotated {
			t.Errorf("record %d:\n tail         %+v annotated %v\n CycleHistory %+v annotated %v", i, g.Line, g.Annotated, w.Line, w.Annotated)
		}
	}
	// Every n gives the newest n of them.
	for n := 1; n <= len(want)+2; n++ {
		got, _ := tailHistory(t, s, n)
		if len(got) != min(n, len(want)) {
			t.Fatalf("n=%d: %d records", n, len(got))
		}
		for i := range got {
			w := want[len(want)-1-i]
			if !reflect.DeepEqual(w.Line, got[i].Line) || w.Annotated != got[i].Annotated {
				t.Errorf("n=%d record %d: %+v, want %+v", n, i, got[i].Line, w.Line)
			}
		}
	}
}

// With n > 0 only the log's tail is read: a line that is not a cycle
// before the last n cycle lines is never met (not counted as skipped),
// and an annotation in the annotation file still applies.
func TestCycleHistoryTail_ReadsOnlyTheTail(t *testing.T) {
	s := New(t.TempDir())
	var b strings.Builder
	b.WriteString("garbage before the tail\n")
	for c := 1; c <= 100; c++ {
		fmt.Fprintf(&b, `{"cycle_id":%d,"result_type":"pr_created","quality_multiplier":0.5,"pr_number":%d}`+"\n", c, c)
	}
	b.WriteString(`{"cycle_id": 99, "annotate": {"result_type": "pr_merged"}}` + "\n")
	writeEvolveFile(t, s, CycleLogFile, b.String())
	writeEvolveFile(t, s, CycleLogAnnotationsFile, `{"cycle_id": 100, "annotate": {"result_type": "pr_merged_held"}}`+"\n")
	recs, st := tailHistory(t, s, 3)
	if len(recs) != 3 || st.Cycles != 3 || st.Skipped != 0 || st.Annotations != 2 {
		t.Fatalf("records %d, stats %+v", len(recs), st)
	}
	for i, want := range []struct {
		id int
		rt string
	}{{100, "pr_merged_held"}, {99, "pr_merged"}, {98, "pr_created"}} {
		if r := recs[i]; r.Line.CycleID != want.id || r.Line.ResultType != want.rt || r.Annotated != (want.rt != "pr_created") {
			t.Errorf("record %d = %d %s (annotated %v), want %d %s", i, r.Line.CycleID, r.Line.ResultType, r.Annotated, want.id, want.rt)
		}
	}
	_, st = tailHistory(t, s, 0)
	if st.Skipped != 1 || st.Cycles != 100 {
		t.Errorf("whole log: %+v", st)
	}
}

// fn returning false stops the read, in both modes.
func TestCycleHistoryTail_MissingLogAndStop(t *testing.T) {
	s := New(t.TempDir())
	if recs, st := tailHistory(t, s, 0); len(recs) != 0 || st != (HistoryStats{}) {
		t.Fatalf("missing log: %v %+v", recs, st)
	}
	writeEvolveFile(t, s, CycleLogFile, `{"cycle_id": 1}`+"\n"+`{"cycle_id": 2}`+"\n"+`{"cycle_id": 3}`+"\n")
	for _, n := range []int{0, 3} {
		var ids []int
		if _, err := s.CycleHistoryTail(n, func(r CycleRecord) bool { ids = append(ids, r.Line.CycleID); return false }); err != nil || !reflect.DeepEqual(ids, []int{3}) {
			t.Errorf("n=%d: read %v (%v)", n, ids, err)
		}
	}
}

// A log that is a pipe is refused, not waited on; a symlink out of the
// project is not followed.
func TestCycleHistoryTail_RefusesAPipeAndASymlinkOut(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.EvolvePath(CycleLogAnnotationsFile), 0o644); err != nil {
		t.Skip(err)
	}
	for _, n := range []int{0, 5} {
		if _, err := s.CycleHistoryTail(n, func(CycleRecord) bool { return true }); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("n=%d pipe: %v", n, err)
		}
	}
	os.Remove(s.EvolvePath(CycleLogAnnotationsFile))
	outside := t.TempDir() + "/log.jsonl"
	if err := os.WriteFile(outside, []byte(`{"cycle_id": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, s.EvolvePath(CycleLogFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CycleHistoryTail(0, func(CycleRecord) bool { t.Error("read a log outside the project"); return true }); err == nil {
		t.Error("symlink out: no error")
	}
}

// backLines splits a file into the same lines as a forward split, for
// every chunk size, with lines longer than the limit reported and not
// returned.
func TestBackLines_SameLinesAsAForwardSplit(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 300; trial++ {
		var lines []string
		for i := rng.Intn(12); i > 0; i-- {
			lines = append(lines, strings.Repeat(string(rune('a'+rng.Intn(26))), rng.Intn(30)))
		}
		data := strings.Join(lines, "\n")
		if rng.Intn(2) == 0 {
			data += "\n"
		}
		limit := 1 + rng.Intn(25)
		// The forward reading: every line, the last one without its
		// newline too, a line over the limit marked.
		var want []string
		fwd := strings.Split(data, "\n")
		if strings.HasSuffix(data, "\n") || data == "" {
			fwd = fwd[:len(fwd)-1]
		}
		for i := len(fwd) - 1; i >= 0; i-- {
			n := len(fwd[i])
			if i < len(fwd)-1 || strings.HasSuffix(data, "\n") {
				n++ // the forward reader counts the newline
			}
			if n > limit {
				want = append(want, "<long>")
			} else if fwd[i] != "" {
				want = append(want, fwd[i])
			}
		}
		chunk := 1 + rng.Intn(20)
		r := backLines{f: bytes.NewReader([]byte(data)), off: int64(len(data)), limit: limit, chunk: chunk}
		var got []string
		for {
			line, long, err := r.next()
			if err != nil {
				break
			}
			if long {
				got = append(got, "<long>")
			} else if len(line) > 0 {
				got = append(got, string(line))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("data %q limit %d chunk %d: got %q, want %q", data, limit, chunk, got, want)
		}
	}
}

// plainCycleID, which lets the tail reader pass over the annotations of
// other cycles undecoded, never names a cycle other than the one the
// decoded line names.
func TestPlainCycleID_NeverDisagreesWithTheDecodedLine(t *testing.T) {
	lines := append(strings.Split(oddLog+"\n"+oddAnnotations, "\n"),
		`{"cycle_id": 5, "cycle_id": 7, "annotate": {}}`,
		`{"annotate": {"cycle_id": 3}, "cycle": 4}`,
		`{"\"cycle_id": 5, "cycle_id": 6, "annotate": {}}`,
		`{"cycle_id" : 12 , "annotate": {"result_type": "pr_merged"}}`,
		`{"cycle_id": 12e0, "annotate": {}}`,
		`{"cycle_id": 007, "annotate": {}}`,
		`{"cycle_id": 99999999999, "annotate": {}}`,
		`{"cycle_id": -1, "cycle": 2, "annotate": {}}`,
	)
	took := 0
	for _, l := range lines {
		b := bytes.TrimSpace([]byte(l))
		if len(b) == 0 {
			continue
		}
		id, ok := plainCycleID(b)
		if !ok {
			continue
		}
		took++
		if cycle, _, decoded := historyLine(b); decoded && cycle != id {
			t.Errorf("%s: plainCycleID %d, decoded %d", l, id, cycle)
		}
	}
	if took < 10 {
		t.Errorf("plainCycleID read only %d lines", took)
	}
}

// The whole log is decoded in batches by several goroutines: however the
// lines fall into batches (one a batch, a line longer than a batch,
// many), the records, their order and the counts are CycleHistory's, and
// stopping early gives the newest records only.
func TestCycleHistoryTail_BatchesGiveTheSameRecords(t *testing.T) {
	defer func(n int) { tailBatch = n }(tailBatch)
	rng := rand.New(rand.NewSource(3))
	var log strings.Builder
	for c := 1; c <= 400; c++ {
		log.WriteString(randomLine(rng, c) + "\n")
		if c%7 == 0 {
			fmt.Fprintf(&log, `{"cycle_id": %d, "annotate": {"result_type": "pr_merged"}}`+"\n", c-3)
		}
	}
	s := New(t.TempDir())
	for _, size := range []int{1, 40, 333, 4096, 1 << 20} {
		tailBatch = size
		checkSameHistory(t, s, oddLog, oddAnnotations, func(CycleRecord) bool { return true })
		checkSameHistory(t, s, log.String(), `{"cycle_id": 5, "annotate": {"on_mission": true}}`+"\n", func(CycleRecord) bool { return true })
		all, _ := tailHistory(t, s, 0)
		for _, stop := range []int{1, 2, 57, len(all) - 1} {
			var got []CycleRecord
			if _, err := s.CycleHistoryTail(0, func(r CycleRecord) bool { got = append(got, r); return len(got) < stop }); err != nil {
				t.Fatal(err)
			}
			if len(got) != stop || !reflect.DeepEqual(got, all[:stop]) {
				t.Errorf("batch %d, stop after %d: %d records", size, stop, len(got))
			}
		}
	}
}
