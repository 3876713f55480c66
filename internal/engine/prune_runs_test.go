package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Step 6 prunes the run files of cycles RunsKept (50) and more before
// the one it records — while the record's files are made durable — and
// keeps the others, whatever their kind.
func TestStep6_PrunesRunFilesOfCyclesLongPast(t *testing.T) {
	runs := "agent/state/evolve/runs/"
	files := map[string]string{
		"skill.sh":                          skillScript,
		"agent/state/evolve/state.json":     `{"cycle_count": 59}`,
		runs + "1-scan-health.log":          "old",
		runs + "9-backlog.lens.json":        "{}",
		runs + "10-check-tests.report.json": "{}",
		runs + "11-scan-health.log":         "kept",
		runs + "59-backlog.lens.json":       "{}",
		runs + "notes.txt":                  "not a run file",
	}
	dir := project(t, threeDomains, files)
	res, out := run(t, dir, t0, false)
	if res.Cycle != 60 {
		t.Fatalf("cycle %d, want 60\n%s", res.Cycle, out)
	}
	entries, err := os.ReadDir(filepath.Join(dir, runs))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, gone := range []string{"1-scan-health.log", "9-backlog.lens.json", "10-check-tests.report.json"} {
		if slices.Contains(names, gone) {
			t.Errorf("%s (a run of cycle ≤ 10) was kept: %v", gone, names)
		}
	}
	for _, kept := range []string{"11-scan-health.log", "59-backlog.lens.json", "notes.txt"} {
		if !slices.Contains(names, kept) {
			t.Errorf("%s was removed: %v", kept, names)
		}
	}
	if !slices.ContainsFunc(names, func(n string) bool { return len(n) > 3 && n[:3] == "60-" }) {
		t.Errorf("cycle 60 left no run file: %v", names)
	}
}
