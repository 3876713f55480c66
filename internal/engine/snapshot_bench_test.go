package engine

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/skills"
)

// BenchmarkRunCycle_Snapshot runs the next cycle of a real project kept as
// a snapshot, from a fresh copy each time: OODA_BENCH_SNAPSHOT=DIR names the
// project (only read) and OODA_BENCH_NOW the cycle's instant (RFC 3339).
// The copy is made under OODA_BENCH_TMP (default: the test's temporary
// directory) with the timer stopped; a tmpfs there leaves the cycle's
// computation without the disk's fsyncs. Skipped when unset.
func BenchmarkRunCycle_Snapshot(b *testing.B) {
	src, nowText := os.Getenv("OODA_BENCH_SNAPSHOT"), os.Getenv("OODA_BENCH_NOW")
	if src == "" || nowText == "" {
		b.Skip("OODA_BENCH_SNAPSHOT and OODA_BENCH_NOW not set")
	}
	now, err := time.Parse(time.RFC3339, nowText)
	if err != nil {
		b.Fatal(err)
	}
	tmp := os.Getenv("OODA_BENCH_TMP")
	if tmp == "" {
		tmp = b.TempDir()
	}
	dir := filepath.Join(tmp, "snapshot-run")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
			b.Fatalf("copy: %v\n%s", err, out)
		}
		b.StartTimer()
		res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != StatusCompleted {
			b.Fatalf("cycle %d: %s (%s)", res.Cycle, res.Status, res.Reason)
		}
	}
	b.StopTimer()
	os.RemoveAll(dir)
}
