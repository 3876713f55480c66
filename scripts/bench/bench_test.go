package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPairRatiosMedianIsTakenPairByPair(t *testing.T) {
	// The second pair ran while the machine was busy: both of its runs are
	// ten times slower. Taken pair by pair, the ratio stays 2; a ratio of
	// the two sides' medians would not.
	a := []time.Duration{20 * time.Millisecond, 200 * time.Millisecond, 22 * time.Millisecond}
	b := []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, 10 * time.Millisecond}
	r, err := pairRatios(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2, 2, 2.2}
	for i := range want {
		if math.Abs(r[i]-want[i]) > 1e-12 {
			t.Fatalf("ratios = %v, want %v", r, want)
		}
	}
	s := spread(r)
	if s.Median != 2 || s.Min != 2 || math.Abs(s.Max-2.2) > 1e-12 || s.N != 3 {
		t.Fatalf("spread = %+v, want median 2, min 2, max 2.2, n 3", s)
	}
}

func TestPairRatiosRefusesUnpairedRuns(t *testing.T) {
	if _, err := pairRatios([]time.Duration{1, 2}, []time.Duration{1}); err == nil {
		t.Fatal("2 runs against 1: no error")
	}
	if _, err := pairRatios([]time.Duration{1}, []time.Duration{0}); err == nil {
		t.Fatal("a zero second run: no error")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		in := append([]float64(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("median reordered its argument: %v, was %v", c.in, in)
			}
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	if v := verdict(median(nil), 1.15); v != "no data" {
		t.Errorf("verdict of no data = %q", v)
	}
	if v := verdict(1.15, 1.15); v != "met" {
		t.Errorf("verdict at the target = %q, want met", v)
	}
	if v := verdict(1.16, 1.15); v != "not met" {
		t.Errorf("verdict over the target = %q, want not met", v)
	}
}

func TestParseStats(t *testing.T) {
	c, err := parseStats([]byte(`{"durable_writes":11,"appends":1,"file_fsyncs":13,"dir_fsyncs":11,"processes":25}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{DurableWrites: 11, Appends: 1, FileSyncs: 13, DirSyncs: 11, Processes: 25}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("parsed %+v, want %+v", c, want)
	}
	if c.Durable() != 12 {
		t.Fatalf("Durable() = %d, want 12 (11 files + 1 append)", c.Durable())
	}
	for _, bad := range []struct{ in, field string }{
		{`{"durable_writes":11,"file_fsyncs":13,"dir_fsyncs":11,"processes":25}`, "/appends"},
		{`{"durable_writes":"11","appends":1,"file_fsyncs":13,"dir_fsyncs":11,"processes":25}`, "/durable_writes"},
		{`{"durable_writes":-1,"appends":1,"file_fsyncs":13,"dir_fsyncs":11,"processes":25}`, "/durable_writes"},
		{`{"durable_writes":11,`, "stats"},
	} {
		_, err := parseStats([]byte(bad.in))
		if err == nil || !strings.Contains(err.Error(), bad.field) {
			t.Errorf("parseStats(%s) = %v, want an error naming %s", bad.in, err, bad.field)
		}
	}
}

func TestMedianCounts(t *testing.T) {
	got := medianCounts([]Counts{
		{DurableWrites: 13, Appends: 1, FileSyncs: 15, DirSyncs: 13, Processes: 9},
		{DurableWrites: 15, Appends: 1, FileSyncs: 17, DirSyncs: 15, Processes: 9},
		{DurableWrites: 13, Appends: 1, FileSyncs: 15, DirSyncs: 13, Processes: 29},
	})
	want := Counts{DurableWrites: 13, Appends: 1, FileSyncs: 15, DirSyncs: 13, Processes: 9}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("medianCounts = %+v, want %+v", got, want)
	}
}

// A trimmed strace -ff -y record of one cycle: the main thread, one more
// thread of ooda, the Go runtime's probe child (never executes anything),
// a git child (whose own rename is git's, not ooda's) and the skill.
func TestStraceCountsOnlyOodasOwnOperations(t *testing.T) {
	tasks := map[int]string{
		100: `execve("/bin/ooda", ["/bin/ooda", "cycle"], 0x7ffd /* 36 vars */) = 0
clone(child_stack=0xc000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS, tls=0xc0) = 101
+++ exited with 0 +++
`,
		101: `clone(child_stack=NULL, flags=CLONE_VM|CLONE_PIDFD|CLONE_VFORK, parent_tid=[14<anon_inode:[pidfd]>]) = 102
clone(child_stack=NULL, flags=CLONE_VM|CLONE_PIDFD|CLONE_VFORK|SIGCHLD, parent_tid=[15<anon_inode:[pidfd]>]) = 103
openat(AT_FDCWD</p>, "/p/agent/state/evolve/cycle_log.jsonl", O_WRONLY|O_CREAT|O_APPEND|O_NONBLOCK|O_CLOEXEC, 0644) = 11</p/agent/state/evolve/cycle_log.jsonl>
fsync(11</p/agent/state/evolve/.state.json.tmp-1>) = 0
renameat(9</p/agent/state/evolve>, ".state.json.tmp-1", 9</p/agent/state/evolve>, "state.json") = 0
fsync(9</p/agent/state/evolve>)    = 0
fsync(11</p/agent/state/evolve/cycle_log.jsonl>) = 0
fsync(11</p/agent/state/evolve/.lock>) = 0
renameat(9</p/agent/state/evolve>, ".x.tmp", 9</p/agent/state/evolve>, "x") = -1 ENOENT (No such file or directory)
clone3({flags=CLONE_VM|CLONE_PIDFD|CLONE_VFORK|CLONE_INTO_CGROUP, exit_signal=SIGCHLD, stack=NULL, stack_size=0, cgroup=5} => {pidfd=[15<anon_inode:[pidfd]>]}, 88) = 104
--- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=100, si_uid=0} ---
`,
		102: `+++ exited with 0 +++
`,
		103: `execve("/usr/bin/git", ["git", "commit"], 0xfb6 /* 38 vars */) = 0
rename("/p/.git/index.lock", "/p/.git/index") = 0
fsync(3</p/.git/index.lock>) = 0
+++ exited with 0 +++
`,
		104: `execve("/usr/bin/true", ["true"], 0xfb6 /* 51 vars */) = 0
+++ exited with 0 +++
`,
	}
	dirs := map[string]bool{"/p/agent/state/evolve": true}
	c, err := straceCounts(tasks, "/bin/ooda", func(p string) bool { return dirs[p] })
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{DurableWrites: 1, Appends: 1, FileSyncs: 3, DirSyncs: 1, Processes: 2}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("counted %+v, want %+v", c, want)
	}
	if _, err := straceCounts(tasks, "/bin/other", func(string) bool { return false }); err == nil {
		t.Fatal("a record without the binary's execve: no error")
	}
}

// The phases become steps: each phase's time since the one before; out
// of order or unnamed, the file is refused, naming the phase.
func TestParseStatsPhases(t *testing.T) {
	const counts = `"durable_writes":12,"appends":1,"file_fsyncs":15,"dir_fsyncs":7,"processes":1`
	c, err := parseStats([]byte(`{` + counts + `,"phases":[{"name":"main","ms":0.5},{"name":"config loaded","ms":2.5},{"name":"exit","ms":20}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{{"main", 0.5}, {"config loaded", 2}, {"exit", 17.5}}
	if !reflect.DeepEqual(c.Steps, want) || c.goMS() != 20 {
		t.Fatalf("steps %+v (%v ms), want %+v (20 ms)", c.Steps, c.goMS(), want)
	}
	for _, bad := range []string{
		`[{"name":"main","ms":3},{"name":"config loaded","ms":2}]`,
		`[{"name":"","ms":3}]`,
		`[{"name":"main","ms":-1}]`,
		`{"name":"main"}`,
	} {
		if _, err := parseStats([]byte(`{` + counts + `,"phases":` + bad + `}`)); err == nil || !strings.Contains(err.Error(), "/phases") {
			t.Errorf("phases %s: %v, want an error naming /phases", bad, err)
		}
	}
}

// The median of each step over the cycles, in the order they were
// reached; a step some cycles did not reach is the median of those that
// did.
func TestMedianSteps(t *testing.T) {
	got := medianCounts([]Counts{
		{Steps: []Step{{"main", 1}, {"acted", 10}, {outsideGo, 5}}},
		{Steps: []Step{{"main", 3}, {"acted", 30}, {outsideGo, 7}}},
		{Steps: []Step{{"main", 2}, {outsideGo, 6}}},
	}).Steps
	want := []Step{{"main", 2}, {"acted", 20}, {outsideGo, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %+v, want %+v", got, want)
	}
}

// TestFullSession: a session counts only when its cycles are exactly the
// n it was asked for and every one of them executed a skill.
func TestFullSession(t *testing.T) {
	entry := func(cycle int, action string) struct {
		Cycle  int    `json:"cycle"`
		Action string `json:"action"`
	} {
		return struct {
			Cycle  int    `json:"cycle"`
			Action string `json:"action"`
		}{cycle, action}
	}
	before := decisions{CycleCount: 5}
	before.DecisionLog = append(before.DecisionLog, entry(5, "execute"))
	ok := decisions{CycleCount: 7}
	ok.DecisionLog = append(ok.DecisionLog, entry(5, "observe_only"), entry(6, "execute"), entry(7, "execute"))
	if err := fullSession(before, ok, 2); err != nil {
		t.Errorf("two executed cycles: %v", err)
	}
	if err := fullSession(before, ok, 3); err == nil {
		t.Error("two cycles taken for three")
	}
	skipped := decisions{CycleCount: 7}
	skipped.DecisionLog = append(skipped.DecisionLog, entry(6, "execute"), entry(7, "observe_only"))
	if err := fullSession(before, skipped, 2); err == nil || !strings.Contains(err.Error(), `cycle 7: action "observe_only"`) {
		t.Errorf("an observe-only cycle: %v", err)
	}
	missing := decisions{CycleCount: 7}
	missing.DecisionLog = append(missing.DecisionLog, entry(7, "execute"))
	if err := fullSession(before, missing, 2); err == nil {
		t.Error("a cycle missing from the decision log")
	}
}
