package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests need what only a separate, real ooda process gives: a PID
// that can be killed at any instant, a process group of its own skill, and
// many processes racing for one lock.

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// oodaBinary builds ./cmd/ooda once per test binary run and returns its path.
func oodaBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "ooda-e2e-bin-")
		if buildErr != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is needed to build ooda: %w", err)
			return
		}
		buildPath = filepath.Join(buildDir, "ooda")
		out, err := exec.Command(goTool, "build", "-o", buildPath, "github.com/ooda-loop/ooda/cmd/ooda").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildPath
}

func removeBuiltBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// t0 is the simulated instant of a project's first cycle; the tests move
// --now forward from it so that no cycle depends on the wall clock.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }

// projectConfig has one domain whose skill /x is the project's x.sh.
const projectConfig = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/x", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/x": {"command": ["/bin/sh", "x.sh"]}},
  "safety": {"skill_allowlist": ["/x"], "min_cycle_interval_minutes": 30, "lock_timeout_minutes": 30}
}
`

// newProject writes a project whose skill runs script.
func newProject(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), projectConfig)
	writeFile(t, filepath.Join(dir, "x.sh"), script)
	return dir
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// oodaCmd prepares `ooda --project dir args...` with an environment that
// carries no OODA_NOW of the developer's.
func oodaCmd(tb testing.TB, dir string, args ...string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(oodaBinary(tb), append([]string{"--project", dir}, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OODA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "NO_COLOR=1")
	return cmd
}

type run struct {
	stdout, stderr string
	code           int
}

func (r run) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

func runCmd(t testing.TB, cmd *exec.Cmd) run {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return r
}

func ooda(t testing.TB, dir string, args ...string) run {
	t.Helper()
	return runCmd(t, oodaCmd(t, dir, args...))
}

func mustRun(t testing.TB, dir string, want int, args ...string) run {
	t.Helper()
	r := ooda(t, dir, args...)
	if r.code != want {
		t.Fatalf("ooda %s: want exit %d, got\n%s", strings.Join(args, " "), want, r)
	}
	return r
}

func readState(t testing.TB, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent", "state", "evolve", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("state.json: %v\n%s", err, b)
	}
	return m
}

func lockPath(dir string) string { return filepath.Join(dir, "agent", "state", "evolve", ".lock") }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// waitFile waits for a file the skill writes once it is running, and
// returns its content.
func waitFile(t *testing.T, p string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %s", p, limit)
	return ""
}

// waitLockGroup waits until the cycle lock records pgid as its skill's
// process group.
func waitLockGroup(t *testing.T, dir string, pgid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var l struct {
			SkillPGID int `json:"skill_pgid"`
		}
		if b, err := os.ReadFile(lockPath(dir)); err == nil && json.Unmarshal(b, &l) == nil && l.SkillPGID == pgid {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the lock did not record the skill's group %d within %s", pgid, limit)
}

// alive reports whether pid is a process that has not exited. A zombie has
// exited: an orphan's zombie lingers until whoever adopted it reaps it,
// which in a container may be never.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	st := b[i+2]
	return st != 'Z' && st != 'X'
}

// hangingSkill records its PID and then sleeps while the file "hang"
// exists, so the same project can run it again quickly once a test is done
// interrupting it. The PID is written through a rename so a reader never
// sees it half-written.
const hangingSkill = `echo $$ > started.tmp && mv started.tmp started
if [ -e hang ]; then sleep 30; fi
`

func TestCrash_SIGKILLDuringSkill(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after is how long after the killed cycle's --now the recovering
		// cycle runs.
		after   time.Duration
		staleBy string
	}{
		{"lock_timed_out", 45 * time.Minute, "timeout"},
		{"lock_holder_dead", 5 * time.Minute, "dead_pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newProject(t, hangingSkill)
			mustRun(t, dir, 0, "cycle", "--now", at(0)) // observe-only first cycle
			writeFile(t, filepath.Join(dir, "hang"), "")

			killedAt := time.Hour
			cmd := oodaCmd(t, dir, "cycle", "--now", at(killedAt))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(waitFile(t, filepath.Join(dir, "started"), 20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// The skill leads its own process group, which the kill of
			// ooda does not reach: this is the crash as a machine
			// reboot or the OOM killer would leave it, minus the orphan.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Logf("killed cycle output:\n%s", out.String())

			if err := allJSONParses(filepath.Join(dir, "agent")); err != nil {
				t.Errorf("torn state after SIGKILL: %v", err)
			}
			if st := readState(t, dir); st["cycle_in_progress"] != true || st["cycle_count"] != 1.0 {
				t.Errorf("after SIGKILL, state.json has cycle_in_progress %v and cycle_count %v, want true and 1", st["cycle_in_progress"], st["cycle_count"])
			}
			if !exists(lockPath(dir)) {
				t.Fatal("the killed cycle's lock is gone; nothing was left to recover from")
			}

			os.Remove(filepath.Join(dir, "hang"))
			os.Remove(filepath.Join(dir, "started"))
			r := mustRun(t, dir, 0, "cycle", "--now", at(killedAt+tc.after))
			for _, want := range []string{
				"[WARN] Stale lock detected",
				tc.staleBy,
				"Cycle #2 did not complete (crash/kill detected).",
				"Last completed: #1",
				"[Record] Cycle #2 recorded",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("recovering cycle: output lacks %q\n%s", want, r)
				}
			}
			st := readState(t, dir)
			if st["cycle_in_progress"] != false || st["cycle_count"] != 2.0 {
				t.Errorf("after recovery, state.json has cycle_in_progress %v and cycle_count %v, want false and 2", st["cycle_in_progress"], st["cycle_count"])
			}
			if exists(lockPath(dir)) {
				t.Error("the recovering cycle left its lock behind")
			}
			if !exists(filepath.Join(dir, "started")) {
				t.Error("the recovering cycle did not run the skill")
			}
		})
	}
}

// A skill orphaned by a killed ooda process keeps the cycle lock live (the
// lock records the skill's process group), so the next cycle does not start
// a second skill beside it; once the lock times out, the recovering cycle
// stops the orphan before it runs anything.
func TestCrash_OrphanedSkillKeepsTheLockUntilRecovered(t *testing.T) {
	t.Parallel()
	dir := newProject(t, hangingSkill)
	mustRun(t, dir, 0, "cycle", "--now", at(0))
	writeFile(t, filepath.Join(dir, "hang"), "")

	cmd := oodaCmd(t, dir, "cycle", "--now", at(time.Hour))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(waitFile(t, filepath.Join(dir, "started"), 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	// The skill can write its pid before ooda has recorded its group in
	// the lock; kill ooda only once the lock names the group, the state
	// this test is about.
	waitLockGroup(t, dir, pid, 20*time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !alive(pid) {
		t.Fatal("the skill died with ooda; this test needs it orphaned")
	}
	// Within the lock timeout: the holder is dead but its skill runs on.
	r := mustRun(t, dir, 0, "cycle", "--json", "--now", at(time.Hour+5*time.Minute))
	if d := decodeCycle(t, r); d.Status != "skipped" || d.Reason == nil || *d.Reason != "locked" {
		t.Fatalf("a cycle while the orphaned skill runs must skip as locked, got\n%s", r)
	}
	// It says what holds the lock: not a running cycle, the skill the
	// killed one left, and how to stop it.
	if !strings.Contains(r.stderr, "its skill still runs (process group "+strconv.Itoa(pid)) || !strings.Contains(r.stderr, "kill -- -"+strconv.Itoa(pid)) {
		t.Errorf("the skip does not name the orphaned skill:\n%s", r.stderr)
	}
	if !alive(pid) {
		t.Fatal("the orphaned skill was stopped by a cycle that did not take over")
	}
	// Past the lock timeout: the recoverer stops the orphan and proceeds.
	os.Remove(filepath.Join(dir, "hang"))
	r = mustRun(t, dir, 0, "cycle", "--now", at(2*time.Hour))
	if !strings.Contains(r.stdout+r.stderr, "is still running; stopping it") {
		t.Errorf("the recovering cycle did not say it stopped the orphan:\n%s", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && alive(pid) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the orphaned skill (pid %d) still runs after the lock was recovered", pid)
	}
}

// cycleDoc is the part of `ooda cycle --json` these tests read.
type cycleDoc struct {
	Status      string  `json:"status"`
	Reason      *string `json:"reason"`
	Cycle       *int    `json:"cycle"`
	Result      *string `json:"result"`
	HaltCreated bool    `json:"halt_created"`
}

func decodeCycle(t testing.TB, r run) cycleDoc {
	t.Helper()
	var d cycleDoc
	if err := exactlyOneJSON([]byte(r.stdout)); err != nil {
		t.Fatalf("--json output: %v\n%s", err, r)
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("--json output: %v\n%s", err, r)
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func TestConcurrency_TenCycles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// staleLock leaves a crashed cycle's lock behind, so that all ten
		// race to recover it as well as to take it.
		staleLock bool
	}{{"no_lock", false}, {"stale_lock", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newProject(t, "sleep 1\necho \"$OODA_CYCLE $$\" >> ran.txt\n")
			mustRun(t, dir, 0, "cycle", "--now", at(0))
			before := readState(t, dir)["cycle_count"].(float64)
			if tc.staleLock {
				host, _ := os.Hostname()
				writeFile(t, lockPath(dir), fmt.Sprintf(`{"pid": %d, "host": %q, "started_at": %q}`, os.Getpid(), host, at(0)))
			}

			const n = 10
			cmds := make([]*exec.Cmd, n)
			outs := make([]*bytes.Buffer, n)
			errs := make([]*bytes.Buffer, n)
			for i := range cmds {
				cmds[i] = oodaCmd(t, dir, "cycle", "--json", "--now", at(time.Hour))
				outs[i], errs[i] = &bytes.Buffer{}, &bytes.Buffer{}
				cmds[i].Stdout, cmds[i].Stderr = outs[i], errs[i]
			}
			for _, c := range cmds {
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
			}
			completed, locked := 0, 0
			for i, c := range cmds {
				r := run{}
				err := c.Wait()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					r.code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				r.stdout, r.stderr = outs[i].String(), errs[i].String()
				if r.code != 0 {
					t.Errorf("process %d: want exit 0, got\n%s", i, r)
					continue
				}
				d := decodeCycle(t, r)
				switch {
				case d.Status == "completed" && deref(d.Result) == "success":
					completed++
					if tc.staleLock && !strings.Contains(r.stderr, "Stale lock detected") {
						t.Errorf("the cycle that ran did not report the stale lock it removed:\n%s", r)
					}
				case d.Status == "skipped" && deref(d.Reason) == "locked":
					locked++
				default:
					t.Errorf("process %d: status %s, reason %s; want completed, or skipped for locked\n%s", i, d.Status, deref(d.Reason), r)
				}
			}
			if completed != 1 || locked != n-1 {
				t.Errorf("%d processes completed and %d skipped for the lock, want 1 and %d", completed, locked, n-1)
			}
			b, err := os.ReadFile(filepath.Join(dir, "ran.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(string(b), "\n"); lines != 1 {
				t.Errorf("the skill ran %d times, want once:\n%s", lines, b)
			}
			if after := readState(t, dir)["cycle_count"].(float64); after != before+1 {
				t.Errorf("cycle_count went from %v to %v, want +1", before, after)
			}
			if exists(lockPath(dir)) {
				t.Error("a lock file remains after every cycle ended")
			}
		})
	}
}

// interrupted is what remains of a cycle whose skill was stopped from
// outside while it ran.
type interrupted struct {
	dir          string
	res          run
	skill, child int // PIDs of the skill's shell and of its background child
	stoppedAt    time.Time
}

// interruptSkill runs the second cycle of a project whose skill starts a
// background child and then sleeps, calls stop once both are running, and
// waits (at most 10 s) for ooda to exit.
func interruptSkill(t *testing.T, stop func(t *testing.T, dir string, ooda *os.Process)) interrupted {
	t.Helper()
	dir := newProject(t, `sleep 300 &
echo $! > child.tmp && mv child.tmp child
echo $$ > started.tmp && mv started.tmp started
sleep 300
`)
	mustRun(t, dir, 0, "cycle", "--now", at(0))

	cmd := oodaCmd(t, dir, "cycle", "--json", "--now", at(time.Hour))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// Whatever failed, never leave a 300 s sleeper behind.
		_ = cmd.Process.Kill()
		if b, err := os.ReadFile(filepath.Join(dir, "started")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	in := interrupted{dir: dir}
	in.skill, _ = strconv.Atoi(waitFile(t, filepath.Join(dir, "started"), 20*time.Second))
	in.child, _ = strconv.Atoi(waitFile(t, filepath.Join(dir, "child"), 20*time.Second))

	stop(t, dir, cmd.Process)
	in.stoppedAt = time.Now()

	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("ooda still running 10 s after the skill was interrupted\n%s%s", out.String(), errb.String())
	}
	in.res = run{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		in.res.code = ee.ExitCode()
	}
	return in
}

// checkStoppedCleanly requires what every interruption must leave: no
// process of the skill's, no lock, and a state that claims no cycle runs.
func checkStoppedCleanly(t *testing.T, in interrupted) {
	t.Helper()
	for time.Since(in.stoppedAt) < 10*time.Second && (alive(in.skill) || alive(in.child)) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(in.skill) {
		t.Errorf("the skill (pid %d) still runs 10 s after it was interrupted", in.skill)
	}
	if alive(in.child) {
		t.Errorf("the skill's background child (pid %d) still runs 10 s after it was interrupted", in.child)
	}
	if exists(lockPath(in.dir)) {
		t.Error("the interrupted cycle did not release its lock")
	}
	if err := allJSONParses(filepath.Join(in.dir, "agent")); err != nil {
		t.Error(err)
	}
	if st := readState(t, in.dir); st["cycle_in_progress"] != false {
		t.Errorf("state.json after the interrupted cycle: cycle_in_progress %v", st["cycle_in_progress"])
	}
}

func createHalt(t *testing.T, dir string, _ *os.Process) {
	r := mustRun(t, dir, 0, "halt", "operator", "stop")
	if !strings.Contains(r.stdout, "HALT file created") {
		t.Errorf("ooda halt: %s", r)
	}
}

func sigterm(t *testing.T, _ string, p *os.Process) {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

func TestHaltDuringSkill(t *testing.T) {
	t.Parallel()
	in := interruptSkill(t, createHalt)
	if in.res.code != 3 {
		t.Errorf("ooda cycle: want exit 3 after HALT during the skill, got\n%s", in.res)
	}
	d := decodeCycle(t, in.res)
	if d.Status != "halted" || deref(d.Reason) != "halt_during_execution" {
		t.Errorf("status %s, reason %s; want halted, halt_during_execution", d.Status, deref(d.Reason))
	}
	checkStoppedCleanly(t, in)
}

// A cycle stopped by SIGTERM (systemd stop, a CI cancel, Ctrl-C) stops its
// skill's whole process group and still releases the lock.
func TestSIGTERMDuringSkill(t *testing.T) {
	t.Parallel()
	in := interruptSkill(t, sigterm)
	if in.res.code != 0 {
		t.Errorf("ooda cycle: want exit 0 after SIGTERM, got\n%s", in.res)
	}
	decodeCycle(t, in.res)
	checkStoppedCleanly(t, in)
}

// The seed (4-B) separates "HALT during execution: stop immediately, log
// partial execution" from "Error during execution", which alone feeds the
// max_silent_failures breaker. An operator stopping a skill is not the
// skill failing: counted as one, two interruptions and a single real
// error HALT the loop.
func TestInterruptedSkillIsNotASkillFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, dir string, ooda *os.Process)
	}{
		{name: "halt", stop: createHalt},
		{name: "sigterm", stop: sigterm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := interruptSkill(t, tc.stop)
			if st := readState(t, in.dir); st["consecutive_silent_failures"] != 0.0 {
				t.Errorf("consecutive_silent_failures is %v after an interruption, want 0", st["consecutive_silent_failures"])
			}
			b, _ := os.ReadFile(filepath.Join(in.dir, "agent", "state", "evolve", "skill_gaps.json"))
			if bytes.Contains(b, []byte("execution_error_x")) {
				t.Errorf("an interruption was recorded as a skill execution error:\n%s", b)
			}
		})
	}
}
