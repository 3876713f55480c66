package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowRunLogs makes every run log written on a goroutine take 300 ms to
// start, for the length of the test.
func slowRunLogs(t *testing.T) {
	runLogWriteHook = func() { time.Sleep(300 * time.Millisecond) }
	t.Cleanup(func() { runLogWriteHook = nil })
}

// A successful run's log is made durable while the cycle goes on, but
// before Step 6 makes the record durable: however slow its write, the
// log is older than the record's files and state.json.
func TestStep6_RunLogOnDiskBeforeTheRecord(t *testing.T) {
	slowRunLogs(t)
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s\n%s", res.Status, out)
	}
	ev := filepath.Join(dir, "agent/state/evolve")
	mtime := func(rel string) time.Time {
		t.Helper()
		fi, err := os.Stat(filepath.Join(ev, rel))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	log := mtime("runs/1-scan-health.log")
	for _, rel := range []string{"outcomes.json", "metrics.json", "state.json"} {
		if m := mtime(rel); log.After(m) {
			t.Errorf("the run log (%s) was written after %s (%s)", log.Format(time.StampMicro), rel, m.Format(time.StampMicro))
		}
	}
}

// A judge is a program run in the project: when it is asked for the 5-F
// critique, after the skill ran, the run log is on disk under its own
// name, however slow its write.
func TestJudge_SeesTheRunLog(t *testing.T) {
	slowRunLogs(t)
	judge := `#!/bin/sh
in=$(cat)
case "$in" in
*'"kind":"critique"'*)
  if [ -f agent/state/evolve/runs/1-scan-health.log ] && ! ls -a agent/state/evolve/runs | grep -q tmp; then
    echo seen >> log-at-critique.txt
  else
    echo missing >> log-at-critique.txt
  fi ;;
esac
printf '{"error": "no opinion"}\n'
`
	dir := project(t, judgeConfig(), map[string]string{"skill.sh": skillScript, "judge.sh": judge})
	if res, out := run(t, dir, t0, false); res.Status != StatusCompleted {
		t.Fatalf("status %s\n%s", res.Status, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "log-at-critique.txt"))
	if err != nil || strings.TrimSpace(string(b)) != "seen" {
		t.Fatalf("at the critique the judge found the run log: %q (%v)", b, err)
	}
}
