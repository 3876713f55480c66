package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deepState is the attack file: a valid state.json with one unknown key
// holding arrays nested depth levels deep.
func deepState(depth int) string {
	return `{"cycle_count":1,"x0":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
}

func newEvolve(t *testing.T) (*Store, string) {
	t.Helper()
	root := t.TempDir()
	s := New(root)
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return s, root
}

func TestDeeplyNestedStateFileIsRefusedAndMovedAside(t *testing.T) {
	s, _ := newEvolve(t)
	p := s.EvolvePath(StateFile)
	writeFile(t, p, deepState(9990))
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != StateFile {
		t.Fatalf("Corrupt = %+v, want state.json refused", snap.Corrupt)
	}
	cerr := snap.Corrupt[0].Err
	var de *DepthError
	if !errors.As(cerr, &de) || de.Depth != 9991 || !IsRefused(cerr) {
		t.Fatalf("err = %v, want a refusal naming depth 9991", cerr)
	}
	if !strings.Contains(cerr.Error(), StateFile) || !strings.Contains(cerr.Error(), "9991") {
		t.Errorf("error %q does not name the file and the depth", cerr)
	}
	dst, err := s.Quarantine(snap.Corrupt[0], time.Date(2026, 2, 3, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("state.json still in place after Quarantine (err %v): a deep file is moved, not copied", err)
	}
	if got := readString(t, dst); got != deepState(9990) {
		t.Errorf("moved file changed: %d bytes", len(got))
	}
}

func TestDeepJSONIsRefusedEverywhereStateIsRead(t *testing.T) {
	s, root := newEvolve(t)
	deep := `{"a":` + strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth) + `}`
	ok := `{"a":` + strings.Repeat("[", MaxJSONDepth-1) + strings.Repeat("]", MaxJSONDepth-1) + `}`
	for _, f := range []string{"agent/state/d.json", "agent/state/d/lens.json", "agent/state/d/rotation_cursor.json",
		"agent/state/d/lens_changelog.json", "agent/state/external/x.json", "ctx.json"} {
		writeFile(t, filepath.Join(root, f), deep)
	}
	writeFile(t, filepath.Join(root, "agent/state/external/y.json"), ok)
	check := func(what string, err error) {
		t.Helper()
		var de *DepthError
		if !errors.As(err, &de) || de.Depth != MaxJSONDepth+1 {
			t.Errorf("%s: err = %v, want a *DepthError of depth %d", what, err, MaxJSONDepth+1)
		}
	}
	_, err := s.ReadDomainState("agent/state/d.json")
	check("domain state", err)
	_, _, err = s.ReadLens("d")
	check("lens", err)
	_, err = s.ReadRotationCursor("d")
	check("rotation cursor", err)
	_, err = s.ReadLensChangelog("d")
	check("lens changelog", err)
	_, _, err = s.ReadActiveContext("ctx.json")
	check("active context", err)
	sig, errs := s.ReadExternalSignals()
	if len(sig) != 1 || sig[0].Name != "y.json" || len(errs) != 1 {
		t.Fatalf("signals = %v, errs = %v; want y.json read (depth %d is allowed) and x.json refused", sig, errs, MaxJSONDepth)
	}
	check("external", errs[0])
	writeFile(t, s.ReportPath(3, "/scan"), deep)
	_, err = s.ReadReport(3, "/scan")
	check("report", err)
}

// The amplifier: SetIndent gave every level of a preserved value its own
// line, so 20 KB of nested arrays became a 200 MB file.
func TestEncodingDoesNotAmplifyPreservedValues(t *testing.T) {
	var st State
	if err := json.Unmarshal([]byte(deepState(9990)), &st); err != nil {
		t.Fatal(err)
	}
	b, err := encodeJSON(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 100_000 {
		t.Fatalf("encoded state is %d bytes from a 20 KB file", len(b))
	}
	var back map[string]json.RawMessage
	var x0 bytes.Buffer
	if err := json.Unmarshal(b, &back); err != nil || json.Compact(&x0, back["x0"]) != nil || x0.Len() != 2*9990 {
		t.Fatalf("x0 not preserved: %v, %d bytes", err, x0.Len())
	}
	// A long array of nested values is bounded too: output within twice
	// the input and 64 KiB.
	flat := `{"cycle_count":1,"x":[` + strings.Repeat("[[[[[[[[1]]]]]]]],", 100_000) + `1]}`
	if err := json.Unmarshal([]byte(flat), &st); err != nil {
		t.Fatal(err)
	}
	if b, err = encodeJSON(st); err != nil || len(b) > 2*len(flat)+70_000 || !json.Valid(b) {
		t.Fatalf("encoded %d bytes from %d (err %v)", len(b), len(flat), err)
	}
}

func TestNegativeAndAbsurdCountersAreReadAsZero(t *testing.T) {
	s, _ := newEvolve(t)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count":5,"consecutive_silent_failures":-1000000,"consecutive_observe_only_cycles":-1000000,"alert_streaks":{"a":-3}}`)
	writeFile(t, s.EvolvePath(MetricsFile), `{"counters":{"total_cycles":9223372036854775807,"total_skill_executions":-4,"domain_executions":{"x":-1}}}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	st := snap.State
	if st.ConsecutiveSilentFailures != 0 || st.ConsecutiveObserveOnlyCycles != 0 || st.AlertStreaks["a"] != 0 || st.CycleCount != 5 {
		t.Errorf("state = %+v", st)
	}
	mc := snap.Metrics.Counters
	if mc.TotalCycles != MaxCounter || mc.TotalSkillExecutions != 0 || mc.DomainExecutions["x"] != 0 {
		t.Errorf("counters = %+v", mc)
	}
	w := strings.Join(snap.Warnings, "\n")
	for _, want := range []string{"state.json: /consecutive_silent_failures: -1000000 is negative",
		"state.json: /consecutive_observe_only_cycles: -1000000 is negative", "state.json: /alert_streaks/a",
		"metrics.json: /counters/total_cycles: 9223372036854775807 is out of range",
		"metrics.json: /counters/total_skill_executions", "metrics.json: /counters/domain_executions/x"} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in:\n%s", want, w)
		}
	}
}

func TestAbsurdCycleCountResumesAfterRecordedCycles(t *testing.T) {
	s, _ := newEvolve(t)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count":9223372036854775807}`)
	writeFile(t, s.EvolvePath(OutcomesFile), `{"entries":[{"cycle_id":7,"result_type":"x","quality_multiplier":1}]}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.State.CycleCount != 7 {
		t.Errorf("cycle_count = %d, want 7", snap.State.CycleCount)
	}
	if w := strings.Join(snap.Warnings, "\n"); !strings.Contains(w, "state.json: /cycle_count: 9223372036854775807 is out of range") {
		t.Errorf("warnings:\n%s", w)
	}
}

// A state.json that is set aside must not restart numbering at 1: the
// cycle log's last lines (and the other files) say where the loop was.
func TestSetAsideStateResumesFromCycleLogTail(t *testing.T) {
	for name, plant := range map[string]func(p string){
		"garbage":   func(p string) { writeFile(t, p, "not json") },
		"directory": func(p string) { os.MkdirAll(p, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newEvolve(t)
			// A long log: the early lines are beyond the tail window, the
			// highest id is at the end.
			var log strings.Builder
			for i := 1; log.Len() < 3*cycleLogTailBytes; i++ {
				fmt.Fprintf(&log, `{"cycle_id":%d,"note":"%s"}`+"\n", i%40, strings.Repeat("x", 200))
			}
			log.WriteString(`{"type":"annotation","cycle":41}` + "\n" + `{"cycle_id":42}` + "\n")
			writeFile(t, s.EvolvePath(CycleLogFile), log.String())
			plant(s.EvolvePath(StateFile))
			snap, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if snap.State.CycleCount != 42 {
				t.Fatalf("cycle_count = %d, want 42 from the end of cycle_log.jsonl", snap.State.CycleCount)
			}
			if w := strings.Join(snap.Warnings, "\n"); !strings.Contains(w, "using 42") {
				t.Errorf("no warning with the recovered value:\n%s", w)
			}
			if _, err := s.Quarantine(snap.Corrupt[0], time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := s.Reset(StateFile); err != nil {
				t.Fatal(err)
			}
			// A cycle that ends before Step 6 leaves the reset file: it
			// must still carry the recovered count.
			again, err := New(s.Root).Load()
			if err != nil || again.State.CycleCount != 42 {
				t.Fatalf("after reset cycle_count = %d (err %v), want 42", again.State.CycleCount, err)
			}
		})
	}
}

func TestNegativeCycleCountUsesCycleLogTail(t *testing.T) {
	s, _ := newEvolve(t)
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count":-5}`)
	writeFile(t, s.EvolvePath(CycleLogFile), `{"cycle_id":9}`+"\n"+`{"cycle_id":12}`+"\n")
	snap, err := s.Load()
	if err != nil || snap.State.CycleCount != 12 {
		t.Fatalf("cycle_count = %d (err %v), want 12", snap.State.CycleCount, err)
	}
}

func TestCycleLogDirectoryIsMovedAside(t *testing.T) {
	s, _ := newEvolve(t)
	p := s.EvolvePath(CycleLogFile)
	if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendCycleLog(map[string]int{"cycle_id": 3}); err != nil {
		t.Fatalf("append to a log that is a directory: %v", err)
	}
	if got := readString(t, p); got != `{"cycle_id":3}`+"\n" {
		t.Errorf("new log = %q", got)
	}
	m, _ := filepath.Glob(p + ".corrupt-*")
	if len(m) != 1 {
		t.Fatalf("set-aside logs: %v", m)
	}
	if fi, err := os.Stat(filepath.Join(m[0], "sub")); err != nil || !fi.IsDir() {
		t.Errorf("the directory was not moved intact: %v", err)
	}
	if n := s.Notices(); len(n) != 1 || !strings.Contains(n[0], "cycle_log.jsonl") {
		t.Errorf("notices = %v", n)
	}
}

func TestRunsAndProposalsThatAreNotDirectoriesAreMovedAside(t *testing.T) {
	outside := t.TempDir()
	sentinel := filepath.Join(outside, "sentinel")
	writeFile(t, sentinel, "keep")
	for name, plant := range map[string]func(p string){
		"file":        func(p string) { writeFile(t, p, "x") },
		"symlink out": func(p string) { os.Symlink(outside, p) },
		"dangling":    func(p string) { os.Symlink(filepath.Join(outside, "none"), p) },
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newEvolve(t)
			runs := filepath.Join(s.EvolveDir, "runs")
			plant(runs)
			if err := s.PrepareRunsDir(4, "/scan"); err != nil {
				t.Fatalf("PrepareRunsDir: %v", err)
			}
			if fi, err := os.Lstat(runs); err != nil || !fi.IsDir() {
				t.Fatalf("runs is not a directory: %v", err)
			}
			if err := s.SaveRunLog(4, "/scan", []byte("out")); err != nil {
				t.Fatal(err)
			}
			prop := filepath.Join(s.EvolveDir, "proposed-skills")
			plant(prop)
			if wrote, err := s.WriteProposal("gap", "text"); err != nil || !wrote {
				t.Fatalf("WriteProposal: %v %v", wrote, err)
			}
			if readString(t, sentinel) != "keep" {
				t.Error("sentinel outside changed")
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("something written outside: %v", ents)
			}
			if n := s.Notices(); len(n) != 2 {
				t.Errorf("notices = %v, want runs and proposed-skills", n)
			}
		})
	}
}

func TestExternalSignalsAreBoundedInNumberAndTotal(t *testing.T) {
	s, root := newEvolve(t)
	dir := filepath.Join(root, "agent/state/external")
	for i := 0; i < MaxExternalSignals+20; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("s%03d.json", i)), `{"v":1}`)
	}
	sig, errs := s.ReadExternalSignals()
	if len(sig) != MaxExternalSignals || len(errs) != 1 || !strings.Contains(errs[0].Error(), "20 skipped") {
		t.Fatalf("%d signals, errs %v", len(sig), errs)
	}

	s, root = newEvolve(t)
	s.MaxRead = 1000
	dir = filepath.Join(root, "agent/state/external")
	big := `{"v":"` + strings.Repeat("a", 390) + `"}`
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("s%d.json", i)), big)
	}
	sig, errs = s.ReadExternalSignals()
	total := 0
	for _, x := range sig {
		total += len(x.Content)
	}
	if len(sig) != 2 || total > 1000 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "3 file(s) skipped") {
		t.Fatalf("%d signals of %d bytes, errs %v", len(sig), total, errs)
	}
}

func TestLedgerDatedInTheFutureIsNotReset(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := CostLedger{Date: "2026-03-02", Entries: []CostEntry{{CycleID: 1, EstimatedUSD: 9}}, TotalEstimatedUSD: 9}
	if !l.DateInFuture(now) {
		t.Error("DateInFuture = false for tomorrow")
	}
	if l.ResetIfNewDay(now) || l.TotalEstimatedUSD != 9 || len(l.Entries) != 1 || l.Date != "2026-03-02" {
		t.Fatalf("a future-dated ledger was reset: %+v", l)
	}
	past := CostLedger{Date: "2026-02-28", Entries: []CostEntry{{CycleID: 1, EstimatedUSD: 9}}, TotalEstimatedUSD: 9}
	if past.DateInFuture(now) || !past.ResetIfNewDay(now) || past.TotalEstimatedUSD != 0 || past.Date != "2026-03-01" {
		t.Fatalf("yesterday's ledger was not reset: %+v", past)
	}
}
