package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireRunCgroups skips the test when this system does not let this
// process create run cgroups: the cgroup containment cannot be tested
// there, and runs are contained by the process tree instead, which
// TestHaltStopsProcessesThatLeftTheGroupWithoutCgroup covers everywhere.
func requireRunCgroups(t *testing.T) {
	t.Helper()
	g := newCgroup()
	if g == nil {
		cgroups.mu.Lock()
		why := cgroups.off
		cgroups.mu.Unlock()
		t.Skipf("skipped: cgroup v2 run cgroups are unavailable here (%v), so the cgroup containment cannot be tested; the process-tree containment is tested without cgroups", why)
	}
	g.close()
	g.remove()
}

// cgroupOf returns the cgroup v2 path in a copy of /proc/<pid>/cgroup.
func cgroupOf(t *testing.T, content []byte) string {
	t.Helper()
	for line := range strings.SplitSeq(string(content), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return rest
		}
	}
	t.Fatalf("no cgroup v2 line in %q", content)
	return ""
}

// runCgroupDir is the directory of the run cgroup the script recorded.
func runCgroupDir(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	path := cgroupOf(t, b)
	name := filepath.Base(path)
	if pid, ok := cgroupOwner(name); !ok || pid != os.Getpid() {
		t.Fatalf("the skill ran in cgroup %s, not in a run cgroup of this process", path)
	}
	base, err := cgroupBase()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(base, name)
}

// escapingScript is a skill that starts processes that leave its process
// group, each recording its pid, and then sleeps: one in a session of its
// own (setsid), one that also ignores SIGTERM, and with doubleFork one
// double-forked, whose parent exits at once so that it is orphaned.
func escapingScript(t *testing.T, dir string, doubleFork bool) (argv0 string, pidFiles []string) {
	t.Helper()
	body := fmt.Sprintf(`cat /proc/self/cgroup > %[1]s/cgroup
setsid sh -c 'echo $$ > %[1]s/setsid.pid; exec sleep 300' &
setsid sh -c 'trap "" TERM; echo $$ > %[1]s/stubborn.pid; exec sleep 300' &
`, dir)
	names := []string{"setsid", "stubborn"}
	if doubleFork {
		body += fmt.Sprintf("(setsid sh -c 'echo $$ > %[1]s/double.pid; exec sleep 300' &)\n", dir)
		names = append(names, "double")
	}
	body += fmt.Sprintf("echo $$ > %[1]s/skill.pid\nsleep 300\n", dir)
	for _, n := range append(names, "skill") {
		pidFiles = append(pidFiles, filepath.Join(dir, n+".pid"))
	}
	return script(t, dir, body), pidFiles
}

// haltWhenStarted creates the HALT file once every pid file has been
// written, and sends the processes they name, read while they run.
func haltWhenStarted(halt string, pidFiles []string) <-chan []pinfo {
	ch := make(chan []pinfo, 1)
	go func() {
		var procs []pinfo
		for _, f := range pidFiles {
			pid, err := waitPID(f)
			if err != nil {
				break
			}
			if p, ok := readStat(pid); ok {
				procs = append(procs, p)
			}
		}
		_ = os.WriteFile(halt, []byte("stop\n"), 0o644)
		ch <- procs
	}()
	return ch
}

// running reports whether the process p still runs: same pid, same start
// time (not a later process that reused the pid), not a zombie.
func running(p pinfo) bool {
	now, ok := readStat(p.pid)
	return ok && now.start == p.start && now.live()
}

func checkHaltStopsEscaped(t *testing.T, e Exec, dir string, doubleFork bool) []pinfo {
	t.Helper()
	argv0, pidFiles := escapingScript(t, dir, doubleFork)
	halt := filepath.Join(dir, "HALT")
	started := haltWhenStarted(halt, pidFiles)
	r := e.Run(context.Background(), Spec{
		Argv:      []string{argv0},
		Env:       testEnv,
		Timeout:   time.Minute,
		HaltFile:  halt,
		HaltPoll:  100 * time.Millisecond,
		KillGrace: 300 * time.Millisecond,
	})
	procs := <-started
	t.Cleanup(func() {
		for _, p := range procs {
			if running(p) {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	})
	if len(procs) != len(pidFiles) {
		t.Fatalf("only %d of the %d processes were seen running", len(procs), len(pidFiles))
	}
	if !r.Halted || r.TimedOut {
		t.Errorf("result %+v, want Halted", r)
	}
	for _, pid := range r.Survivors {
		st, _ := readStat(pid)
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		t.Errorf("survivor %d (%+v, command %q, cgroup %q), want none; the run's processes were %+v", pid, st, cmd, cg, procs)
	}
	// Checked at once, without waiting: Run returns only once every
	// process of the run has ended.
	for i, p := range procs {
		if running(p) {
			t.Errorf("%s: process %d (session %d, group %d) still runs after Run returned", filepath.Base(pidFiles[i]), p.pid, p.sid, p.pgrp)
		}
	}
	return procs
}

// A HALT stops even the processes that left the skill's process group, in
// a run cgroup.
func TestHaltStopsProcessesThatLeftTheGroupInCgroup(t *testing.T) {
	t.Parallel()
	requireRunCgroups(t)
	dir := t.TempDir()
	checkHaltStopsEscaped(t, Exec{}, dir, true)
	runDir := runCgroupDir(t, dir)
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("run cgroup %s left behind (%v)", runDir, err)
	}
}

// Without a cgroup, the process tree finds them. Not parallel: an orphan
// reparented to this process is attributed to a run only while no other
// run is in progress.
func TestHaltStopsProcessesThatLeftTheGroupWithoutCgroup(t *testing.T) {
	procs := checkHaltStopsEscaped(t, Exec{noCgroup: true}, t.TempDir(), true)
	if !subreaper.on.Load() {
		t.Error("a run without a cgroup did not make this process a child subreaper")
	}
	// Orphans were reparented to this process; it must also have reaped
	// them, or every stop would leave zombies behind.
	for _, p := range procs {
		if now, ok := readStat(p.pid); ok && now.start == p.start {
			t.Errorf("process %d not reaped: state %c, parent %d", p.pid, now.state, now.ppid)
		}
	}
}

// With other runs in progress, processes that left the group but whose
// parent still runs when the HALT comes are found by their ancestry.
func TestHaltStopsProcessesThatLeftTheGroupBesideOtherRuns(t *testing.T) {
	t.Parallel()
	other := registerRun()
	defer other.done()
	checkHaltStopsEscaped(t, Exec{noCgroup: true}, t.TempDir(), false)
}

// A run that ends by itself is left as it was: its output and exit status
// are reported, and a daemon it started, even in a session of its own, is
// not stopped. A run cgroup is removed and the daemon moved out of it.
func TestNormalExitKeepsEscapedDaemon(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		exec   Exec
		cgroup bool
	}{{"cgroup", Exec{}, true}, {"tree", Exec{noCgroup: true}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.cgroup {
				requireRunCgroups(t)
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "daemon.pid")
			argv0 := script(t, dir, fmt.Sprintf(`cat /proc/self/cgroup > %[1]s/cgroup
setsid sh -c 'echo $$ > %[1]s/daemon.pid; exec sleep 300' >/dev/null 2>&1 &
while [ ! -s %[1]s/daemon.pid ]; do sleep 0.05; done
echo done
exit 0
`, dir))
			var out bytes.Buffer
			r := tc.exec.Run(context.Background(), Spec{Argv: []string{argv0}, Env: testEnv, Output: &out, Timeout: time.Minute})
			if r.StartErr != nil {
				t.Fatalf("start: %v", r.StartErr)
			}
			pid := readPID(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if !r.OK() || out.String() != "done\n" || r.Survivors != nil {
				t.Errorf("result %+v, output %q", r, out.String())
			}
			p, ok := readStat(pid)
			if !ok || !p.live() {
				t.Fatalf("the daemon %d was stopped after a normal exit", pid)
			}
			if !tc.cgroup {
				return
			}
			runDir := runCgroupDir(t, dir)
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Errorf("run cgroup %s left behind (%v)", runDir, err)
			}
			own, err := os.ReadFile("/proc/self/cgroup")
			if err != nil {
				t.Fatal(err)
			}
			daemon, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
			if err != nil {
				t.Fatal(err)
			}
			if cgroupOf(t, daemon) != cgroupOf(t, own) {
				t.Errorf("daemon is in cgroup %s, want it moved back to %s", cgroupOf(t, daemon), cgroupOf(t, own))
			}
		})
	}
}

// A process SIGKILL cannot end in time (here one frozen by the cgroup v1
// freezer: a kill takes effect only once it is thawed) is reported in
// Result.Survivors rather than passed over in silence.
func TestUnkillableProcessReportedAsSurvivor(t *testing.T) {
	t.Parallel()
	freezer := "/sys/fs/cgroup/freezer"
	if _, err := os.Stat(filepath.Join(freezer, "tasks")); err != nil {
		t.Skipf("skipped: no cgroup v1 freezer at %s (%v), so no process can be made unkillable for the test", freezer, err)
	}
	probe := filepath.Join(freezer, fmt.Sprintf("ooda-test-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !os.IsExist(err) {
		t.Skipf("skipped: no writable cgroup v1 freezer (%v), so no process can be made unkillable for the test", err)
	}
	_ = syscall.Rmdir(probe)

	for _, tc := range []struct {
		name   string
		exec   Exec
		cgroup bool
	}{{"cgroup", Exec{}, true}, {"tree", Exec{noCgroup: true}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.cgroup {
				requireRunCgroups(t)
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "frozen.pid")
			halt := filepath.Join(dir, "HALT")
			argv0 := script(t, dir, fmt.Sprintf(`cat /proc/self/cgroup > %[1]s/cgroup
setsid sh -c 'echo $$ > %[1]s/frozen.pid; exec sleep 300' &
sleep 300
`, dir))
			fz := filepath.Join(freezer, "ooda-test-"+strings.ReplaceAll(strings.TrimPrefix(dir, "/"), "/", "_"))
			if err := os.Mkdir(fz, 0o755); err != nil {
				t.Fatal(err)
			}
			thaw := func() { _ = os.WriteFile(filepath.Join(fz, "freezer.state"), []byte("THAWED"), 0) }
			t.Cleanup(func() {
				// Whatever happened, nothing stays frozen: the
				// tasks are thawed, killed, and the freezer
				// cgroup removed once they are gone.
				thaw()
				b, _ := os.ReadFile(filepath.Join(fz, "tasks"))
				for f := range bytes.FieldsSeq(b) {
					if pid, err := strconv.Atoi(string(f)); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
						assertGone(t, pid)
					}
				}
				_ = syscall.Rmdir(fz)
			})
			frozen := make(chan error, 1)
			go func() {
				err := func() error {
					pid, err := waitPID(pidFile)
					if err != nil {
						return err
					}
					if err := os.WriteFile(filepath.Join(fz, "tasks"), []byte(strconv.Itoa(pid)), 0); err != nil {
						return err
					}
					if err := os.WriteFile(filepath.Join(fz, "freezer.state"), []byte("FROZEN"), 0); err != nil {
						return err
					}
					for {
						b, err := os.ReadFile(filepath.Join(fz, "freezer.state"))
						if err != nil {
							return err
						}
						if strings.TrimSpace(string(b)) == "FROZEN" {
							return nil
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
				_ = os.WriteFile(halt, nil, 0o644)
				frozen <- err
			}()
			r := tc.exec.Run(context.Background(), Spec{
				Argv: []string{argv0}, Env: testEnv, Timeout: time.Minute,
				HaltFile: halt, HaltPoll: 100 * time.Millisecond, KillGrace: 200 * time.Millisecond,
			})
			ferr := <-frozen
			pid := readPID(t, pidFile)
			thaw()
			assertGone(t, pid) // the pending SIGKILL acts once thawed
			if tc.cgroup {
				// Still populated when Run returned, the run cgroup stayed.
				(&cgroup{dir: runCgroupDir(t, dir), fd: -1}).remove()
			}
			if ferr != nil {
				t.Fatalf("freezing the process: %v", ferr)
			}
			if !r.Halted || !slices.Equal(r.Survivors, []int{pid}) {
				t.Errorf("result %+v, want Halted with Survivors [%d]", r, pid)
			}
		})
	}
}

func TestTreeMembers(t *testing.T) {
	t.Parallel()
	const self, root = 10, 100
	tr := tree{root: root, rootStart: 1000, self: self, known: map[int]uint64{}}
	procs := []pinfo{
		{pid: 1, ppid: 0, pgrp: 1, sid: 1, start: 1},
		{pid: self, ppid: 1, pgrp: self, sid: 5, start: 900},
		{pid: root, ppid: self, pgrp: root, sid: 5, start: 1000},
		{pid: 101, ppid: root, pgrp: root, sid: 5, start: 1001},         // child
		{pid: 102, ppid: 101, pgrp: 102, sid: 102, start: 1002},         // setsid'd grandchild
		{pid: 103, ppid: 1, pgrp: 103, sid: 102, start: 1003},           // in its session, orphaned to init
		{pid: 104, ppid: 1, pgrp: root, sid: 5, start: 1004},            // in the skill's group, orphaned
		{pid: 105, ppid: self, pgrp: 105, sid: 105, start: 1005},        // orphan reparented to self
		{pid: 106, ppid: 105, pgrp: 105, sid: 105, start: 1006},         // its child
		{pid: 107, ppid: self, pgrp: 107, sid: 107, start: 950},         // an orphan older than the run
		{pid: 108, ppid: 1, pgrp: 108, sid: 108, start: 1008},           // unrelated
		{pid: 109, ppid: 1, pgrp: root, sid: 5, start: 999, state: 'S'}, // older than the run
	}
	ids := func(m map[int]pinfo) []int {
		var out []int
		for pid := range m {
			out = append(out, pid)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(tr.members(procs, false)), []int{100, 101, 102, 103, 104}; !slices.Equal(got, want) {
		t.Errorf("without orphans: members %v, want %v", got, want)
	}
	if got, want := ids(tr.members(procs, true)), []int{100, 101, 102, 103, 104, 105, 106}; !slices.Equal(got, want) {
		t.Errorf("with orphans: members %v, want %v", got, want)
	}

	// Later: 101 and the skill have exited; 102 was reparented to init,
	// 105 is no longer attributable as an orphan but is known; pid 103 was
	// freed and reused, and its number is now a new session's id.
	later := []pinfo{
		{pid: 102, ppid: 1, pgrp: 102, sid: 102, start: 1002},
		{pid: 110, ppid: 102, pgrp: 102, sid: 102, start: 1010},
		{pid: 105, ppid: self, pgrp: 105, sid: 105, start: 1005},
		{pid: 103, ppid: 1, pgrp: 103, sid: 103, start: 2000},
		{pid: 111, ppid: 1, pgrp: 103, sid: 103, start: 2001},
	}
	if got, want := ids(tr.members(later, false)), []int{102, 105, 110}; !slices.Equal(got, want) {
		t.Errorf("later: members %v, want %v", got, want)
	}

	if m := (&tree{self: self, known: map[int]uint64{}}).members(procs, true); len(m) != 0 {
		t.Errorf("a run that never started has members %v", ids(m))
	}
}

// Not parallel: it needs to be the only run in progress.
func TestRunExclusivity(t *testing.T) {
	a := registerRun()
	if !a.exclusive() {
		t.Fatal("a lone run is not exclusive")
	}
	b := registerRun()
	if a.exclusive() || b.exclusive() {
		t.Error("overlapping runs are exclusive")
	}
	b.done()
	if a.exclusive() {
		t.Error("a run stopped being overlapped when the other ended")
	}
	a.done()
	c := registerRun()
	defer c.done()
	if !c.exclusive() {
		t.Error("a run after the others ended is not exclusive")
	}
}

func TestCgroupPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		own, root, rel string
		ok             bool
	}{
		{"/", "/", "", true},
		{"/user.slice/app.scope", "/", "user.slice/app.scope", true},
		{"/a/b", "/a", "b", true},
		{"/a", "/a", "", true},
		{"/ab", "/a", "", false},
		{"/x/../../etc", "/", "", false},
	} {
		rel, ok := cgroupWithin(tc.own, tc.root)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("cgroupWithin(%q, %q) = %q %v, want %q %v", tc.own, tc.root, rel, ok, tc.rel, tc.ok)
		}
	}
	if got := unescapeMount(`/mnt/with\040space\134`); got != `/mnt/with space\` {
		t.Errorf("unescapeMount: %q", got)
	}
	if got := unescapeMount(`/a\134b\12`); got != `/a\b\12` {
		t.Errorf("unescapeMount: %q", got)
	}
	for name, want := range map[string]int{"ooda-12-3": 12, "ooda-12": 0, "ooda-x-1": 0, "other-12-3": 0, "ooda-0-1": 0} {
		pid, ok := cgroupOwner(name)
		if pid != want && ok || ok != (want != 0) {
			t.Errorf("cgroupOwner(%q) = %d %v", name, pid, ok)
		}
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "42 (a (weird) name) S 1 40 39 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 123456 4202496 96 18446744073709551615"
	p, ok := parseStat([]byte(line))
	if !ok || p != (pinfo{pid: 42, ppid: 1, pgrp: 40, sid: 39, start: 123456, state: 'S'}) {
		t.Errorf("got %+v %v", p, ok)
	}
	for _, bad := range []string{"garbage", "42 (x) S 1 40", "x (y) S 1 40 39 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7"} {
		if p, ok := parseStat([]byte(bad)); ok {
			t.Errorf("%q parsed as %+v", bad, p)
		}
	}
}

// zombie reports whether pid has exited and waits for its reaper.
func zombie(pid int) bool {
	p, ok := readStat(pid)
	return ok && !p.live()
}

// A run that ends by itself leaves no cgroup behind: neither its own,
// removed at once when empty, nor one the skill created inside it, which
// makes that first removal fail and is taken down with it.
func TestNormalExitRemovesRunCgroup(t *testing.T) {
	t.Parallel()
	requireRunCgroups(t)
	base, err := cgroupBase()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"empty":           "",
		"a cgroup inside": `mkdir "$BASE/$(basename "$(sed -n 's/^0:://p' /proc/self/cgroup)")/inner" && echo made` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			argv0 := script(t, dir, fmt.Sprintf("cat /proc/self/cgroup > %s/cgroup\n%sexit 0\n", dir, body))
			var out bytes.Buffer
			r := Exec{}.Run(context.Background(), Spec{Argv: []string{argv0}, Env: append(testEnv, "BASE="+base), Output: &out, Timeout: time.Minute})
			if want := map[bool]string{true: "made\n"}[body != ""]; !r.OK() || out.String() != want {
				t.Fatalf("result %+v, output %q, want %q", r, out.String(), want)
			}
			runDir := runCgroupDir(t, dir)
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Errorf("run cgroup %s left behind (%v)", runDir, err)
			}
		})
	}
}
