package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// talkativeProject is a project whose files each give Load something to
// say: values of the wrong type (warnings in several files), a key
// written twice, a corrupt file and, with badLedger, a corrupt cost
// ledger.
func talkativeProject(t *testing.T, badLedger bool) string {
	root := t.TempDir()
	ev := filepath.Join(root, "agent", "state", "evolve")
	writeFile(t, filepath.Join(ev, StateFile), `{"cycle_count": "many", "cycle_count": 4, "consecutive_observe_only_cycles": -3, "domain_last_run": {"api": 7}}`)
	writeFile(t, filepath.Join(ev, ConfidenceFile), `{"api": "high", "web": 0.5}`)
	writeFile(t, filepath.Join(ev, MemosFile), `{"score_adjustments": {"api": "up"}, "interventions": [{"domain": 5, "remaining_cycles": "x"}]}`)
	writeFile(t, filepath.Join(ev, OutcomesFile), `{"entries": [{"cycle_id": "3", "score": "high"}, {"cycle_id": 4, "domain": 5}]}`)
	writeFile(t, filepath.Join(ev, EpisodesFile), `{"episodes": [{"id": 9}]`)
	writeFile(t, filepath.Join(ev, ReflectionsFile), `{"reflections": [{"cycle": "two", "cycle": 2}]}`)
	writeFile(t, filepath.Join(ev, MetricsFile), `{"current_streak": "long"}`)
	writeFile(t, filepath.Join(ev, SkillGapsFile), `[1, 2]`)
	ledger := `{"daily": {"2026-03-01": {"total_usd": "lots"}}}`
	if badLedger {
		ledger = `{"daily": `
	}
	writeFile(t, filepath.Join(ev, CostLedgerFile), ledger)
	return root
}

// Load reads its files concurrently (readAll): whichever read finishes
// first, the snapshot, its warnings and corruptions (in the files'
// order) and its error are those of the files read one after another —
// for the benchmark projects, the original's fixtures and projects
// whose every file has something to report.
func TestLoadParallelMatchesSequential(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	roots := []string{benchProject(t, 10), benchProject(t, 2000), talkativeProject(t, false), talkativeProject(t, true)}
	dirs, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "agent", "state", "evolve"))
	for _, d := range dirs {
		roots = append(roots, filepath.Dir(filepath.Dir(filepath.Dir(d))))
	}
	if len(roots) < 7 {
		t.Fatalf("only %d projects", len(roots))
	}
	sequential := func(root string) (*Snapshot, error) {
		parallelLoadOff = true
		defer func() { parallelLoadOff = false }()
		return New(root).Load()
	}
	readers := 0
	sharedHook = func(n int) { readers = max(readers, n) }
	defer func() { sharedHook = nil }()
	said := 0
	for _, root := range roots {
		want, werr := sequential(root)
		said += len(want.Warnings) + len(want.Corrupt)
		for range 20 {
			got, gerr := New(root).Load()
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s: error %v, one after another %v", root, gerr, werr)
			}
			if !reflect.DeepEqual(got.Warnings, want.Warnings) {
				t.Fatalf("%s: warnings\n%s\none after another\n%s", root, strings.Join(got.Warnings, "\n"), strings.Join(want.Warnings, "\n"))
			}
			if fmt.Sprint(got.Corrupt) != fmt.Sprint(want.Corrupt) {
				t.Fatalf("%s: corrupt %v, one after another %v", root, got.Corrupt, want.Corrupt)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: loaded\n%#v\none after another\n%#v", root, got, want)
			}
		}
	}
	if said < 10 {
		t.Fatalf("the projects gave only %d warnings and corruptions to order", said)
	}
	if readers < 2 {
		t.Fatalf("the files were read on %d goroutines", readers)
	}
}

// Whatever order the files are read in, what Load says about them is in
// the order it reads them one after another (state.json, confidence.json,
// goals.json, memos.json … cost_ledger.json), and so is the list of the
// corrupt ones; the checks Load makes once every file is read come last.
func TestLoadTellsFilesInTheirOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	order := []string{StateFile, ConfidenceFile, GoalsFile, MemosFile, ActionQueueFile, SkillGapsFile, MetricsFile,
		OutcomesFile, CheckpointsFile, EpisodesFile, PrinciplesFile, ReflectionsFile, CascadesFile, CostLedgerFile}
	rank := func(s string) int {
		for i, name := range order {
			if strings.Contains(s, "evolve/"+name+":") || strings.HasSuffix(s, "evolve/"+name) {
				return i
			}
		}
		return -1
	}
	root := talkativeProject(t, false)
	for range 20 {
		snap, err := New(root).Load()
		if err != nil {
			t.Fatal(err)
		}
		var files []int
		for _, w := range snap.Warnings {
			files = append(files, rank(w))
		}
		// The last one is sanitize's, about state.json, made after the reads.
		if len(files) != 9 || files[8] != 0 || !slices.IsSorted(files[:8]) || files[0] != 0 || files[7] != rank("evolve/"+ReflectionsFile) {
			t.Fatalf("warnings in the order of files %v:\n%s", files, strings.Join(snap.Warnings, "\n"))
		}
		var corrupt []int
		for _, c := range snap.Corrupt {
			corrupt = append(corrupt, rank(c.Path))
		}
		if fmt.Sprint(corrupt) != fmt.Sprint([]int{rank("evolve/" + SkillGapsFile), rank("evolve/" + EpisodesFile)}) {
			t.Fatalf("corrupt files in the order %v: %v", corrupt, snap.Corrupt)
		}
	}
}

// LoadFiles reads only the files named, concurrently or not.
func TestLoadFilesParallelReadsOnlyThoseNamed(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	root := talkativeProject(t, true)
	snap, err := New(root).LoadFiles(OutcomesFile, StateFile)
	if err != nil {
		t.Fatalf("the corrupt ledger was read: %v", err)
	}
	if !snap.StateFound || len(snap.Outcomes.Entries) != 2 || len(snap.Memos.Interventions) != 0 || len(snap.Corrupt) != 0 {
		t.Fatalf("LoadFiles(outcomes, state) = state %v, %d outcomes, memos %v, corrupt %v", snap.StateFound, len(snap.Outcomes.Entries), snap.Memos.Interventions, snap.Corrupt)
	}
	for _, w := range snap.Warnings {
		if !strings.Contains(w, OutcomesFile) && !strings.Contains(w, StateFile) {
			t.Fatalf("a warning about a file not named: %s", w)
		}
	}
}

// What each file gave is where the files read one after another put it:
// the state found or not (a corrupt state.json is not found), the
// confidence file's values or a new one, the cost ledger or, when it is
// corrupt, the error that says so.
func TestLoadParallelKeepsWhatEachFileGave(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	root := talkativeProject(t, false)
	snap, err := New(root).Load()
	if err != nil || !snap.StateFound || snap.State.CycleCount != 4 || snap.CostLedger == nil {
		t.Fatalf("Load = err %v, state found %v (cycle_count %d), ledger %v", err, snap.StateFound, snap.State.CycleCount, snap.CostLedger)
	}
	if v, ok := snap.Confidence.Get("web"); !ok || v != 0.5 {
		t.Fatalf("confidence of web = %v, %v; want 0.5 from the file", v, ok)
	}

	root = talkativeProject(t, true)
	ev := filepath.Join(root, "agent", "state", "evolve")
	writeFile(t, filepath.Join(ev, StateFile), `{"cycle_count": `)
	writeFile(t, filepath.Join(ev, ConfidenceFile), `{"web": [`)
	snap, err = New(root).Load()
	var le *CorruptLedgerError
	if !errors.As(err, &le) || snap.CostLedger != nil {
		t.Fatalf("a corrupt ledger: err %v, ledger %v", err, snap.CostLedger)
	}
	if snap.StateFound {
		t.Fatalf("a corrupt state.json was found")
	}
	if _, ok := snap.Confidence.Get("web"); ok || !reflect.DeepEqual(snap.Confidence, NewConfidence()) {
		t.Fatalf("a corrupt confidence.json left %#v, not a new one", snap.Confidence)
	}
	var names []string
	for _, c := range snap.Corrupt {
		names = append(names, c.File)
	}
	if want := []string{StateFile, ConfidenceFile, SkillGapsFile, EpisodesFile}; !slices.Equal(names, want) {
		t.Fatalf("corrupt %v, want %v (the ledger is an error, not one of them)", names, want)
	}
}

// A panic in one of the calls eachShared shares out is raised again in
// its caller, once every call that started has returned: a decoder that
// fails that way on a hostile file stops the command as it would have
// without the goroutines, and nothing still reads when the caller's
// deferred clean-up (the held root) runs.
func TestEachSharedRaisesAPanicOnceAllStopped(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var running, calls atomic.Int32
	got := func() (r any) {
		defer func() { r = recover() }()
		eachShared(14, 2, 1, func(i int) {
			running.Add(1)
			defer running.Add(-1)
			calls.Add(1)
			if i == 3 {
				panic("decoder failed")
			}
			time.Sleep(2 * time.Millisecond)
		})
		return nil
	}()
	if got != "decoder failed" {
		t.Fatalf("recovered %v, want the panic of call 3", got)
	}
	if n := running.Load(); n != 0 {
		t.Fatalf("%d calls still running when the panic reached the caller", n)
	}
	if calls.Load() < 4 {
		t.Fatalf("only %d calls made", calls.Load())
	}
}
