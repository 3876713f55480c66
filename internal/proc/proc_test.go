package proc

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testEnv is a minimal environment for scripts: a PATH to find sleep and
// friends, nothing else from the test process.
var testEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}

// script writes an executable /bin/sh script into dir and returns its path.
func script(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "skill.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// readPID waits for the script to have written a pid into file.
func readPID(t *testing.T, file string) int {
	t.Helper()
	pid, err := waitPID(file)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitPID is readPID for goroutines other than the test's, which may not
// call t.Fatal.
func waitPID(file string) (int, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			return 0, errors.New("pid file " + file + " never written")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertGone waits for pid to be dead. A zombie counts as dead: the
// process no longer runs, and reparented orphans are reaped by init, which
// may take its time.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
		if zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 3} {
		dir := t.TempDir()
		r := Exec{}.Run(context.Background(), Spec{
			Argv: []string{script(t, dir, "exit "+strconv.Itoa(code)+"\n")},
			Env:  testEnv,
		})
		if r.StartErr != nil {
			t.Fatalf("exit %d: start error %v", code, r.StartErr)
		}
		if r.ExitCode != code || r.OK() != (code == 0) || r.Stopped() {
			t.Errorf("exit %d: got %+v", code, r)
		}
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(notExec, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want error
	}{
		{"not in PATH", Spec{Argv: []string{"ooda-no-such-binary"}, Env: testEnv}, exec.ErrNotFound},
		{"missing path", Spec{Argv: []string{filepath.Join(dir, "missing")}}, fs.ErrNotExist},
		{"not executable", Spec{Argv: []string{notExec}}, fs.ErrPermission},
		{"missing dir", Spec{Argv: []string{"/bin/sh", "-c", "true"}, Dir: filepath.Join(dir, "nope")}, fs.ErrNotExist},
		{"empty argv", Spec{}, nil},
	}
	for _, tt := range tests {
		r := Exec{}.Run(context.Background(), tt.spec)
		if r.StartErr == nil || r.ExitCode != -1 || r.OK() {
			t.Errorf("%s: got %+v, want a start error", tt.name, r)
			continue
		}
		if tt.want != nil && !errors.Is(r.StartErr, tt.want) {
			t.Errorf("%s: StartErr = %v, want %v", tt.name, r.StartErr, tt.want)
		}
	}
}

func TestEnvDirAndStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	work := t.TempDir()
	var out bytes.Buffer
	r := Exec{}.Run(context.Background(), Spec{
		Argv:   []string{script(t, dir, `echo "skill=$OODA_SKILL home=${HOME-unset}"; pwd; cat`)},
		Dir:    work,
		Env:    append(testEnv, "OODA_SKILL=backlog"),
		Stdin:  []byte("from stdin\n"),
		Output: &out,
	})
	if !r.OK() {
		t.Fatalf("run: %+v", r)
	}
	realWork, err := filepath.EvalSymlinks(work)
	if err != nil {
		t.Fatal(err)
	}
	// HOME is unset: the environment is exactly Env, nothing inherited.
	want := "skill=backlog home=unset\n" + realWork + "\nfrom stdin\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestRelativeArgvAndPathFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script(t, dir, "echo relative\n")
	var out bytes.Buffer
	r := Exec{}.Run(context.Background(), Spec{Argv: []string{"./skill.sh"}, Dir: dir, Env: testEnv, Output: &out})
	if !r.OK() || out.String() != "relative\n" {
		t.Errorf("relative to Dir: %+v, output %q", r, out.String())
	}

	out.Reset()
	r = Exec{}.Run(context.Background(), Spec{Argv: []string{"skill.sh"}, Env: []string{"PATH=" + dir + ":/bin"}, Output: &out})
	if !r.OK() || out.String() != "relative\n" {
		t.Errorf("looked up in Env's PATH: %+v, output %q", r, out.String())
	}
}

func TestOutputMergedInOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tail := NewTailBuffer(LogTailSize)
	r := Exec{}.Run(context.Background(), Spec{
		Argv:   []string{script(t, dir, "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done\nexit 1\n")},
		Env:    testEnv,
		Output: tail,
	})
	if r.ExitCode != 1 || r.OK() {
		t.Errorf("result %+v", r)
	}
	var want strings.Builder
	for i := 1; i <= 5; i++ {
		want.WriteString("out" + strconv.Itoa(i) + "\nerr" + strconv.Itoa(i) + "\n")
	}
	if got := string(tail.Bytes()); got != want.String() {
		t.Errorf("output %q, want %q", got, want.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFailingOutputDoesNotKillProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := Exec{}.Run(context.Background(), Spec{
		Argv:   []string{script(t, dir, "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done\n")},
		Env:    testEnv,
		Output: failingWriter{},
	})
	if !r.OK() || r.OutputErr == nil {
		t.Errorf("result %+v, want exit 0 and an OutputErr", r)
	}
}

// groupScript starts a background grandchild, records its pid, and waits.
// extra runs first, e.g. a trap.
func groupScript(t *testing.T, dir, extra string) (path, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(dir, "grandchild.pid")
	body := extra + "sleep 1000 &\necho $! > " + pidFile + "\nsleep 1000\n"
	return script(t, dir, body), pidFile
}

func TestTimeoutStopsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv0, pidFile := groupScript(t, dir, "")
	r := Exec{}.Run(context.Background(), Spec{
		Argv:    []string{argv0},
		Env:     testEnv,
		Timeout: time.Second,
	})
	if !r.TimedOut || r.Halted || r.Canceled || r.OK() {
		t.Errorf("result %+v, want TimedOut", r)
	}
	if r.Elapsed > 10*time.Second {
		t.Errorf("stopping took %v", r.Elapsed)
	}
	assertGone(t, readPID(t, pidFile))
}

func TestHaltFileStopsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv0, pidFile := groupScript(t, dir, "")
	halt := filepath.Join(dir, "HALT")
	go func() {
		// Create the HALT file only once the skill is under way.
		_, _ = waitPID(pidFile)
		_ = os.WriteFile(halt, []byte("stop\n"), 0o644)
	}()
	r := Exec{}.Run(context.Background(), Spec{
		Argv:     []string{argv0},
		Env:      testEnv,
		Timeout:  time.Minute,
		HaltFile: halt,
	})
	if !r.Halted || r.TimedOut || r.Canceled || r.OK() {
		t.Errorf("result %+v, want Halted", r)
	}
	if r.Elapsed > 10*time.Second {
		t.Errorf("halt took %v", r.Elapsed)
	}
	assertGone(t, readPID(t, pidFile))
}

func TestHaltFilePresentBeforeStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	halt := filepath.Join(dir, "HALT")
	if err := os.WriteFile(halt, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	r := Exec{}.Run(context.Background(), Spec{
		Argv:     []string{script(t, dir, "touch "+marker+"\n")},
		Env:      testEnv,
		HaltFile: halt,
	})
	if !r.Halted || r.ExitCode != -1 || r.StartErr != nil {
		t.Errorf("result %+v, want Halted without start", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("process ran although HALT existed")
	}
}

func TestSIGTERMIgnoredThenKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Both the script and its grandchild ignore SIGTERM (the trap is
	// inherited by the background child).
	argv0, pidFile := groupScript(t, dir, "trap '' TERM\n")
	grace := 300 * time.Millisecond
	r := Exec{}.Run(context.Background(), Spec{
		Argv:      []string{argv0},
		Env:       testEnv,
		Timeout:   time.Second,
		KillGrace: grace,
	})
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("result %+v, want TimedOut and killed by a signal", r)
	}
	if r.Elapsed < time.Second+grace {
		t.Errorf("elapsed %v: SIGKILL came before the grace was over", r.Elapsed)
	}
	assertGone(t, readPID(t, pidFile))
}

func TestLeaderExitsButGrandchildIgnoresTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	// The grandchild ignores SIGTERM; the script itself dies of it.
	argv0 := script(t, dir, "(trap '' TERM; exec sleep 1000) &\necho $! > "+pidFile+"\nwait\n")
	r := Exec{}.Run(context.Background(), Spec{
		Argv:      []string{argv0},
		Env:       testEnv,
		Timeout:   time.Second,
		KillGrace: 300 * time.Millisecond,
	})
	if !r.TimedOut {
		t.Errorf("result %+v, want TimedOut", r)
	}
	assertGone(t, readPID(t, pidFile))
}

func TestCancelStopsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv0, pidFile := groupScript(t, dir, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = waitPID(pidFile)
		cancel()
	}()
	r := Exec{}.Run(ctx, Spec{Argv: []string{argv0}, Env: testEnv, Timeout: time.Minute})
	if !r.Canceled || r.TimedOut || r.Halted || r.OK() {
		t.Errorf("result %+v, want Canceled", r)
	}
	assertGone(t, readPID(t, pidFile))

	r = Exec{}.Run(ctx, Spec{Argv: []string{argv0}, Env: testEnv})
	if !r.Canceled || r.ExitCode != -1 || r.StartErr != nil {
		t.Errorf("already canceled: %+v, want Canceled without start", r)
	}
}

func TestNormalExitLeavesBackgroundChildAndReturns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "daemon.pid")
	// The background child keeps the output pipe open; Run must still
	// return promptly after OutputWait.
	argv0 := script(t, dir, "sleep 1000 &\necho $! > "+pidFile+"\necho done\n")
	var out bytes.Buffer
	r := Exec{}.Run(context.Background(), Spec{
		Argv:       []string{argv0},
		Env:        testEnv,
		Output:     &out,
		OutputWait: 200 * time.Millisecond,
	})
	pid := readPID(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !r.OK() || out.String() != "done\n" {
		t.Errorf("result %+v, output %q", r, out.String())
	}
	if r.Elapsed > 10*time.Second {
		t.Errorf("Run waited %v for a background child", r.Elapsed)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("background child was stopped after a normal exit: %v", err)
	}
}

func TestRunnerFunc(t *testing.T) {
	t.Parallel()
	var got []string
	var r Runner = RunnerFunc(func(_ context.Context, s Spec) Result {
		got = s.Argv
		return Result{}
	})
	if res := r.Run(context.Background(), Spec{Argv: []string{"git", "status"}}); !res.OK() {
		t.Errorf("fake result %+v", res)
	}
	if strings.Join(got, " ") != "git status" {
		t.Errorf("argv %q", got)
	}
}

func TestStderrKeptApartWhenAsked(t *testing.T) {
	var out, errb bytes.Buffer
	res := Exec{}.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "echo out; echo err >&2"}, Env: os.Environ(), Output: &out, Stderr: &errb})
	if !res.OK() || out.String() != "out\n" || errb.String() != "err\n" {
		t.Errorf("stdout %q stderr %q (%+v)", out.String(), errb.String(), res)
	}
}

// One seam for processes: no package but this one starts a process.
func TestOnlyProcImportsOsExec(t *testing.T) {
	files, _ := filepath.Glob("../*/*.go")
	more, _ := filepath.Glob("../../cmd/*/*.go")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") || strings.Contains(f, "/proc/") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\"os/exec\"") {
			t.Errorf("%s imports os/exec; start processes through internal/proc", f)
		}
	}
}
