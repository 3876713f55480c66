package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The benchmarks time a whole `ooda cycle` process, as cron would start
// it: exec, config load, lock, Steps 0 to 6, exit. The skill is the
// built-in noop, so what is measured is the engine's own overhead. A noop
// never produces output, so the saturation breaker's HALT is switched off:
// a benchmark runs far more than 15 cycles.

const noopConfig = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/noop", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/noop": {"builtin": "noop"}},
  "safety": {"skill_allowlist": ["/noop"]},
  "saturation": {"auto_halt": false}
}
`

func BenchmarkCycleProcess_NoopSkill(b *testing.B) {
	benchmarkCycleProcess(b, 0)
}

// The cycle log only ever grows; a cycle must append to it, never read it
// whole, so a long history must not slow a cycle down.
func BenchmarkCycleProcess_NoopSkill_200kLog(b *testing.B) {
	benchmarkCycleProcess(b, 200_000)
}

func benchmarkCycleProcess(b *testing.B, logLines int) {
	bin := oodaBinary(b)
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "config.json"), noopConfig)
	start := t0
	if logLines > 0 {
		writeCycleLog(b, filepath.Join(dir, "agent", "state", "evolve", "cycle_log.jsonl"), logLines, start)
		start = start.Add(time.Duration(logLines) * time.Hour)
		writeFile(b, filepath.Join(dir, "agent", "state", "evolve", "state.json"),
			fmt.Sprintf(`{"cycle_count": %d, "last_cycle": %q, "cycle_in_progress": false, "decision_log": []}`, logLines, start.Format(time.RFC3339)))
	}
	now := start
	for b.Loop() {
		// An hour apart, so that no cycle is skipped as too soon.
		now = now.Add(time.Hour)
		cmd := exec.Command(bin, "--project", dir, "cycle", "--now", now.Format(time.RFC3339))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ooda cycle: %v\n%s", err, out)
		}
	}
}

// writeCycleLog writes n lines shaped like the ones Step 6 appends.
func writeCycleLog(b *testing.B, p string, n int, start time.Time) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	results := []string{"success", "success", "success", "error", "observe_only"}
	types := []string{"action_extracted", "futile", "state_updated", "error", "observe"}
	for i := 1; i <= n; i++ {
		k := i % len(results)
		fmt.Fprintf(w, `{"cycle_id":%d,"timestamp":%q,"domain":"health","skill":"/noop","score":%.4f,"confidence":0.7,"result":%q,"result_type":%q,"quality_multiplier":%.1f,"pr_number":null,"had_output":%t,"cost_usd":0,"saturation":%d,"on_mission":true,"artifact_score":null}`+"\n",
			i, start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), 40+float64(i%97)/7, results[k], types[k], float64(k)/10, k%2 == 0, i%5)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
