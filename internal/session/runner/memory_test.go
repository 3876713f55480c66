package runner

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// twoDomains is a project with a flaky domain (quarantined early in a
// session), a steady one that runs whenever it can, and a goal measured
// every cycle: every part of a session's record is exercised.
const twoDomains = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "flaky": {"weight": 1.0, "primary_skill": "/flaky", "fallback": true, "mission_alignment": 1.0},
    "steady": {"weight": 0.8, "primary_skill": "/steady", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/flaky": {"command": ["/bin/sh", "flaky.sh"]}, "/steady": {"command": ["/bin/sh", "steady.sh"]}},
  "forge": {"provider": "none"},
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/flaky", "/steady"], "min_cycle_interval_minutes": 30, "first_cycle_observe_only": false, "max_silent_failures": 1000}
}`

// steadySkill delivers, and raises a new alert every fifth run: the
// findings keep changing for the whole session.
const steadySkill = countRuns + delivers + `if [ $((n % 5)) -eq 0 ]; then
  printf '{"status": "degraded", "alerts": [{"severity": "warning", "id": "a%s", "message": "slow again"}]}' $n > agent/state/steady.json
fi
echo "0.$(( (n * 7) % 10 ))" > progress.txt
`

// TestSessionMemoryIsFlat runs a long session with scripted skills and
// simulated time, and compares the live heap after cycle 50 with the heap
// at its end: a session keeps only bounded state (the record's lists are
// capped, the ledger is appended and never read back), so the heap must
// not grow with the number of cycles. 150 cycles by default; the figure
// of docs/benchmarks.md is 500:
//
//	OODA_SESSION_CYCLES=500 go test ./internal/session/runner/ -run TestSessionMemoryIsFlat -v
func TestSessionMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("a long session of real cycles")
	}
	dir := project(t, twoDomains, map[string]string{
		"flaky.sh":                      flakySkill,
		"steady.sh":                     steadySkill,
		"progress.txt":                  "0.1\n",
		"agent/state/evolve/goals.json": `{"goals": [{"id": "latency", "title": "Keep p95 low", "status": "active", "progress": 0.1, "metric_command": "cat progress.txt"}]}`,
	})
	total := 150
	if v, err := strconv.Atoi(os.Getenv("OODA_SESSION_CYCLES")); err == nil && v > 50 {
		total = v
	}
	heap := map[int]uint64{}
	started := time.Now()
	var out tailWriter
	lap, laps := started, []string{}
	sum, _ := runSession(t, dir, Options{Session: "run-mem", MaxCycles: total, Out: &out,
		AfterTick: func(tk Tick, _ *state.Session) {
			if tk.Iteration%100 == 0 && len(laps) < tk.Iteration/100 {
				laps = append(laps, time.Since(lap).Round(100*time.Millisecond).String())
				lap = time.Now()
			}
			if tk.Iteration == 50 || tk.Iteration == total {
				if _, done := heap[tk.Iteration]; !done {
					heap[tk.Iteration] = liveHeap()
				}
			}
		}})
	if sum.Record.Iteration != total || sum.StopReason == "" {
		t.Fatalf("iteration %d, stop %q\n%s", sum.Record.Iteration, sum.StopReason, out.String())
	}
	if !sum.Record.IsQuarantined("flaky") {
		t.Errorf("flaky was not quarantined: %v", sum.Record.Quarantined)
	}
	if n := len(sum.Record.DetermineLog); n != min(total, state.MaxDetermineLog) {
		t.Errorf("determine_log holds %d entries, want the newest %d", n, min(total, state.MaxDetermineLog))
	}
	fi, err := os.Stat(filepath.Join(dir, "agent", "state", "evolve", "sessions", "run-mem.json"))
	if err != nil {
		t.Fatal(err)
	}
	h50, hEnd := heap[50], heap[total]
	t.Logf("%d cycles in %s (each 100: %v); live heap after cycle 50: %s, after cycle %d: %s; session record %d bytes; stop %s",
		total, time.Since(started).Round(time.Second), laps, mib(h50), total, mib(hEnd), fi.Size(), sum.StopReason)
	// Flat: a quarter more at most (the runtime's own variations), never
	// in proportion to the cycles between. The session's output kept
	// whole (about 1.5 KiB a cycle) would break this bound.
	if hEnd > h50+max(h50/4, 256<<10) {
		t.Errorf("the live heap grew from %s after cycle 50 to %s after cycle %d", mib(h50), mib(hEnd), total)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 2, 64) + " MiB" }

// tailWriter keeps the last 4 KiB written: the session's output, which
// a test buffer holding whole would make grow with the cycles.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if n := len(w.b); n > 8<<10 {
		w.b = append(w.b[:0], w.b[n-4<<10:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.b) }
