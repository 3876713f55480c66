package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// A cycle log that cannot be appended to (here a directory) is moved
// aside under a name from the cycle's clock, as every other file set
// aside is: with --now the name is the injected instant, not the
// machine's.
func TestStep6C9_CycleLogSetAsideNamedByTheCyclesClock(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, nil)
	if err := os.MkdirAll(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out := mustComplete(t, dir, t0)
	want := filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl.corrupt-"+t0.UTC().Format("20060102T150405Z"))
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Fatalf("the log was not set aside as %s: %v\n%s", filepath.Base(want), err, out)
	}
}
