package perfstat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The stats file is what the benchmark script reads; its counts must be
// the counters' values when the process ends, not when it started.
func TestStartWritesCountsAtStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats.json")
	t.Setenv(EnvStats, path)
	before := Snapshot()
	stop := Start(func(msg string) { t.Errorf("warn: %s", msg) })
	DurableWrite()
	DirSync()
	Process()
	Process()
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got Counts
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if got.DurableWrites-before.DurableWrites != 1 || got.DirSyncs-before.DirSyncs != 1 || got.Processes-before.Processes != 2 {
		t.Fatalf("counts %+v, before %+v", got, before)
	}
}

// A profile that cannot be created is a warning, never a failed command.
func TestStartWarnsOnUnwritableProfile(t *testing.T) {
	t.Setenv(EnvCPUProfile, filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	var warned []string
	stop := Start(func(msg string) { warned = append(warned, msg) })
	stop()
	if len(warned) != 1 {
		t.Fatalf("warnings %q, want one", warned)
	}
}

func TestStartWritesCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv(EnvCPUProfile, path)
	stop := Start(func(msg string) { t.Errorf("warn: %s", msg) })
	stop()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s: %v", path, err)
	}
}

// The phases say where the wall time went: each mark in the order passed,
// its time never before the previous one's, and the end of the process
// last. Without OODA_STATS nothing is recorded.
func TestMarkRecordsPhasesInOrder(t *testing.T) {
	// Start is once per process in ooda; earlier tests here called it.
	marking.Store(false)
	phases = nil
	Mark("before-start")
	path := filepath.Join(t.TempDir(), "stats.json")
	t.Setenv(EnvStats, path)
	stop := Start(func(msg string) { t.Errorf("warn: %s", msg) })
	Mark("observed")
	Mark("acted")
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got Counts
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var names []string
	last := -1.0
	for _, p := range got.Phases {
		names = append(names, p.Name)
		if p.MS < last {
			t.Errorf("phase %s at %.3f ms, before the previous one (%.3f ms)", p.Name, p.MS, last)
		}
		last = p.MS
	}
	if want := []string{"observed", "acted", "exit"}; !slices.Equal(names, want) {
		t.Fatalf("phases %q, want %q", names, want)
	}
}
