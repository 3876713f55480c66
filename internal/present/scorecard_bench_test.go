package present

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// writeBenchHistory writes a cycle_log.jsonl of n cycles under the
// project root, each line as the engine writes it (state.CycleLogLine,
// marshalled), and the back-annotations a PR's life leaves in
// cycle_log.annotations.jsonl: one in ten cycles opens a PR, most are
// merged a few cycles later and held two days after.
func writeBenchHistory(tb testing.TB, root string, n int) {
	tb.Helper()
	st := state.New(root)
	if err := os.MkdirAll(st.EvolveDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	logf, err := os.Create(st.EvolvePath(state.CycleLogFile))
	if err != nil {
		tb.Fatal(err)
	}
	notef, err := os.Create(st.EvolvePath(state.CycleLogAnnotationsFile))
	if err != nil {
		tb.Fatal(err)
	}
	lw, nw := bufio.NewWriterSize(logf, 1<<20), bufio.NewWriterSize(notef, 1<<20)
	domains := []string{"service_health", "test_coverage", "backlog"}
	skills := []string{"/scan-health", "/check-tests", "/plan-backlog"}
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	pr := 0
	type note struct {
		CycleID   int            `json:"cycle_id"`
		Annotate  map[string]any `json:"annotate"`
		Timestamp string         `json:"timestamp"`
	}
	var pending []note
	for c := 1; c <= n; c++ {
		d := c % len(domains)
		score, conf := 20+float64(c%613)/10, 0.5+float64(c%41)/100
		line := state.CycleLogLine{
			CycleID: c, Timestamp: state.FormatTime(start.Add(time.Duration(c) * 4 * time.Hour)),
			Domain: domains[d], Skill: skills[d], Score: &score, Confidence: &conf,
			Result: "success", ResultType: "action_extracted", QualityMult: 0.2, HadOutput: true,
			CostUSD: 0.02, Saturation: c % 3, OnMission: c%5 != 0,
		}
		switch {
		case c%10 == 0:
			pr++
			p := pr
			line.ResultType, line.QualityMult, line.PRNumber = "pr_created", 0.5, &p
			if c%40 != 0 {
				at := state.FormatTime(start.Add(time.Duration(c+3) * 4 * time.Hour))
				pending = append(pending, note{c, map[string]any{"result_type": "pr_merged", "quality_multiplier": 0.8}, at})
				at = state.FormatTime(start.Add(time.Duration(c+12) * 4 * time.Hour))
				pending = append(pending, note{c, map[string]any{"result_type": "pr_merged_held", "quality_multiplier": 1.0}, at})
			}
		case c%7 == 0:
			line.ResultType, line.QualityMult, line.HadOutput, line.Result = "futile", 0, false, "success"
		case c%13 == 0:
			line.ResultType, line.QualityMult, line.HadOutput, line.Result = "observe", 0.1, false, "observe_only"
		case c%97 == 0:
			line.ResultType, line.QualityMult, line.HadOutput, line.Result = "error", 0, false, "error"
		}
		if c%9 == 0 {
			a := 0.4 + float64(c%50)/100
			line.ArtifactScore = &a
		}
		b, err := json.Marshal(line)
		if err != nil {
			tb.Fatal(err)
		}
		lw.Write(append(b, '\n'))
		// Annotations are written by the cycle that learns of the merge.
		for len(pending) > 0 && pending[0].Timestamp <= line.Timestamp {
			b, _ := json.Marshal(pending[0])
			nw.Write(append(b, '\n'))
			pending = pending[1:]
		}
	}
	for _, f := range []*bufio.Writer{lw, nw} {
		if err := f.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	logf.Close()
	notef.Close()
}

// peakHeap samples the live heap (runtime/metrics, which does not stop
// the world as ReadMemStats does) while fn runs and returns its peak.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		for {
			metrics.Read(sample)
			top = max(top, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- top
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return <-peak
}

// BenchmarkScorecard is DESIGN.md's target: the scorecard over a
// 1,000,000-line cycle log in under a second and 64 MiB. The history is
// written once (about 300 MB) under the benchmark's temporary directory;
// OODA_SCORECARD_BENCH_CYCLES sets another size. A project that
// OODA_SCORECARD_BENCH_PROJECT names and TestScorecardBenchHistory
// filled is read instead, so that runs do not write the history again.
func BenchmarkScorecard(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("OODA_SCORECARD_BENCH_CYCLES")); err == nil && v > 0 {
		n = v
	}
	root := os.Getenv("OODA_SCORECARD_BENCH_PROJECT")
	if _, err := os.Stat(filepath.Join(root, "agent", "state", "evolve", state.CycleLogFile)); root == "" || err != nil {
		root = b.TempDir()
		writeBenchHistory(b, root, n)
	}
	cfg := &config.Config{}
	for _, window := range []int{20, 1000, 0} {
		name := "window=" + strconv.Itoa(window)
		if window == 0 {
			name = "window=all"
		}
		b.Run(name, func(b *testing.B) {
			var sc Scorecard
			var peak uint64
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakHeap(func() { sc = BuildScorecard(cfg, state.New(root), window) }))
			}
			b.ReportMetric(float64(time.Since(t0).Milliseconds())/float64(b.N), "ms/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			if sc.CyclesScored == 0 || sc.Source != state.CycleLogFile {
				b.Fatalf("scored %d cycles from %s", sc.CyclesScored, sc.Source)
			}
		})
	}
}

// TestScorecardBenchHistory writes the benchmark's history into the
// project OODA_SCORECARD_BENCH_PROJECT names (replacing its cycle logs),
// to measure the whole command on it; skipped otherwise.
func TestScorecardBenchHistory(t *testing.T) {
	root := os.Getenv("OODA_SCORECARD_BENCH_PROJECT")
	if root == "" {
		t.Skip("set OODA_SCORECARD_BENCH_PROJECT to a project directory to write a history into it")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("OODA_SCORECARD_BENCH_CYCLES")); err == nil && v > 0 {
		n = v
	}
	writeBenchHistory(t, root, n)
	fi, err := os.Stat(filepath.Join(root, "agent", "state", "evolve", state.CycleLogFile))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("wrote %d cycles (%d bytes) to %s\n", n, fi.Size(), root)
}
