package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ooda-loop/ooda/internal/perfstat"
)

// Defaults applied to a zero Spec field.
const (
	// DefaultHaltPoll is how often the HALT file is looked for.
	DefaultHaltPoll = 500 * time.Millisecond
	// MaxHaltPoll caps Spec.HaltPoll: a skill must be stopped within 2 s of
	// the HALT file appearing, whatever the caller asked for.
	MaxHaltPoll = 2 * time.Second
	// DefaultKillGrace is the time a stopped run gets between SIGTERM and
	// SIGKILL to clean up.
	DefaultKillGrace = 5 * time.Second
	// DefaultOutputWait is how long output is still read after the direct
	// child has exited.
	DefaultOutputWait = time.Second
)

// groupPoll is how often a run whose direct child has already exited is
// checked for remaining processes during the kill grace. A process group has
// no exit notification, and returning as soon as it is empty saves the full
// grace on every stop.
const groupPoll = 50 * time.Millisecond

// Spec describes one process to run.
type Spec struct {
	// Argv is the command and its arguments, never a shell string. Argv[0]
	// is looked up in the PATH of Env (the engine's own PATH when Env has
	// none) unless it contains a slash; a relative path with a slash is
	// taken relative to Dir. Relative PATH entries are skipped, so a
	// command is never picked up from whatever directory happens to be
	// current.
	Argv []string
	// Dir is the working directory; empty means the engine's own.
	Dir string
	// Env is the complete environment; nil means an empty one, not the
	// engine's, so that nothing reaches a skill by accident.
	Env []string
	// Timeout stops the process this long after it started; 0 means none.
	Timeout time.Duration
	// Stdin is written to the process's standard input; nil gives it
	// /dev/null.
	Stdin []byte
	// Output receives stdout and stderr merged, in the order written, as
	// they are produced. It may be nil. It is never written to after Run
	// returns.
	Output io.Writer
	// Stderr, when set, receives stderr apart from Output, for a caller
	// that parses stdout (git, a judge) and must not see diagnostics in it.
	Stderr io.Writer
	// HaltFile, when set, stops the process as soon as a file exists at
	// this path. If it exists already, the process is not started.
	HaltFile string
	// HaltPoll is the interval at which HaltFile is looked for; default
	// DefaultHaltPoll, at most MaxHaltPoll.
	HaltPoll time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL when the run is
	// stopped, and then the longest wait (at least a second) for SIGKILL to
	// take effect before a process is reported in Result.Survivors; default
	// DefaultKillGrace.
	KillGrace time.Duration
	// OnStart, when set, is called with the process group id as soon as the
	// process has started, so a caller can record which group is its own
	// (the cycle lock does, to stay live while an orphaned skill runs). It
	// runs beside the process, so that a durable record it makes costs a
	// short process no time of its own, and Run returns only after it has.
	OnStart func(pgid int)
	// OutputWait bounds how long output is still read once the direct child
	// has exited, for a background process that inherited its output and
	// keeps it open; default DefaultOutputWait. Later output is dropped.
	OutputWait time.Duration
	// Light runs the process with its process group only: no cgroup of
	// its own and no subreaper. It is for ooda's own short calls (git,
	// gh), which start no daemons of their own and run several times a
	// cycle, where creating and removing a cgroup each time would double
	// the cost of a cycle. A stop still kills the whole group.
	Light bool
}

// Result is the outcome of one Run.
type Result struct {
	// ExitCode is the exit status of the direct child; -1 when it was
	// killed by a signal or never started.
	ExitCode int
	// Elapsed is the time from start until Run returned.
	Elapsed time.Duration
	// TimedOut is set when the process was stopped because of
	// Spec.Timeout.
	TimedOut bool
	// Halted is set when the process was stopped, or not started, because
	// Spec.HaltFile exists.
	Halted bool
	// Canceled is set when the process was stopped, or not started,
	// because the context was done.
	Canceled bool
	// StartErr is why the process could not be started (not found, not
	// executable, missing Dir, empty Argv).
	StartErr error
	// OutputErr is the first error Spec.Output returned. The process is not
	// disturbed by it; the rest of its output is discarded.
	OutputErr error
	// Survivors are the pids of processes the run started that were still
	// running when Run returned although it had stopped the run: they did
	// not die of SIGKILL within the kill grace (a process in uninterruptible
	// sleep, or a frozen one). Only a stopped run has any. A caller should
	// warn: the work it stopped is not entirely over.
	Survivors []int
}

// OK reports whether the process ran to completion by itself and exited 0.
func (r Result) OK() bool {
	return r.StartErr == nil && r.ExitCode == 0 && !r.Stopped()
}

// Stopped reports whether Run stopped the process (or did not start it)
// because of a timeout, the HALT file or the context.
func (r Result) Stopped() bool {
	return r.TimedOut || r.Halted || r.Canceled
}

// Runner runs processes. The engine depends on this interface only.
type Runner interface {
	Run(ctx context.Context, s Spec) Result
}

// RunnerFunc adapts a function to Runner, which is all a fake needs.
type RunnerFunc func(ctx context.Context, s Spec) Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, s Spec) Result { return f(ctx, s) }

// Exec is the Runner that starts real processes.
type Exec struct {
	// noCgroup contains the run without a cgroup even where one could be
	// created, as on a system without them.
	noCgroup bool
}

var _ Runner = Exec{}

// Run starts the process described by s and waits until it has exited, or
// until it had to be stopped and every process it started was terminated.
func (e Exec) Run(ctx context.Context, s Spec) Result {
	res := Result{ExitCode: -1}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		res.StartErr = errors.New("proc: empty argv")
		return res
	}
	if ctx.Err() != nil {
		res.Canceled = true
		return res
	}
	if s.HaltFile != "" && exists(s.HaltFile) {
		res.Halted = true
		return res
	}
	path, err := resolve(s.Argv[0], s.Dir, s.Env)
	if err != nil {
		res.StartErr = err
		return res
	}
	perfstat.Process()

	env := s.Env
	if env == nil {
		env = []string{}
	}
	var out *guardedWriter
	if s.Output != nil {
		out = &guardedWriter{w: s.Output}
	}
	build := func(attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := &exec.Cmd{
			Path:        path,
			Args:        s.Argv,
			Dir:         s.Dir,
			Env:         env,
			SysProcAttr: attr,
			WaitDelay:   positive(s.OutputWait, DefaultOutputWait),
		}
		if s.Stdin != nil {
			cmd.Stdin = bytes.NewReader(s.Stdin)
		}
		if out != nil {
			// The same value for both streams makes os/exec hand the
			// child one pipe for stdout and stderr, so their relative
			// order survives.
			cmd.Stdout = out
			cmd.Stderr = out
		}
		if s.Stderr != nil {
			cmd.Stderr = &guardedWriter{w: s.Stderr}
		}
		return cmd
	}

	start := time.Now()
	c := newContainment(!e.noCgroup && !s.Light, !s.Light)
	cmd, err := c.start(build)
	if err != nil {
		c.finish(false, 0)
		res.StartErr = err
		res.Elapsed = time.Since(start)
		return res
	}
	// The child leads a new group whose id is its pid.
	pgid := cmd.Process.Pid
	waited := make(chan struct{})
	go func() {
		if s.OnStart != nil {
			// Before the child is waited for: until then it cannot be
			// reaped, even if it has exited, so its pid is not reused
			// and what OnStart reads of it (its start time) is its own.
			s.OnStart(pgid)
		}
		// The error only repeats what ProcessState says, or that output
		// was cut after OutputWait, which is documented behaviour.
		_ = cmd.Wait()
		close(waited)
	}()

	switch watch(ctx, s, waited, c) {
	case stopTimeout:
		res.TimedOut = true
	case stopHalt:
		res.Halted = true
	case stopCancel:
		res.Canceled = true
	}
	grace := positive(s.KillGrace, DefaultKillGrace)
	if res.Stopped() {
		stopAll(c, grace, waited)
	}
	<-waited
	res.Survivors = c.finish(res.Stopped(), grace)
	res.Elapsed = time.Since(start)
	res.ExitCode = cmd.ProcessState.ExitCode()
	if out != nil {
		res.OutputErr = out.failure()
	}
	return res
}

type stopReason int

const (
	exited stopReason = iota
	stopTimeout
	stopHalt
	stopCancel
)

// watch waits for the child to exit or for a reason to stop it, and
// meanwhile lets c record the child's descendants.
func watch(ctx context.Context, s Spec, waited <-chan struct{}, c *containment) stopReason {
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var halt <-chan time.Time
	if s.HaltFile != "" {
		t := time.NewTicker(min(positive(s.HaltPoll, DefaultHaltPoll), MaxHaltPoll))
		defer t.Stop()
		halt = t.C
	}
	var track <-chan time.Time
	if every := c.trackEvery(); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		track = t.C
	}
	for {
		select {
		case <-waited:
			return exited
		case <-timeout:
			return stopTimeout
		case <-ctx.Done():
			return stopCancel
		case <-halt:
			if exists(s.HaltFile) {
				return stopHalt
			}
		case <-track:
			c.track()
		}
	}
}

// stopAll terminates every process of the run: SIGTERM, then SIGKILL once
// grace has passed if any is still alive. It returns when none is left, or
// right after SIGKILL, which cannot be refused.
func stopAll(c *containment, grace time.Duration, waited <-chan struct{}) {
	c.signal(syscall.SIGTERM)
	// A stopped process would hold SIGTERM pending for ever.
	c.signal(syscall.SIGCONT)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	select {
	case <-waited:
	case <-deadline.C:
		c.kill()
		return
	}
	// The direct child is gone, but what it started may still be shutting
	// down or ignoring SIGTERM.
	if !c.alive() {
		return
	}
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if !c.alive() {
				return
			}
		case <-deadline.C:
			c.kill()
			return
		}
	}
}

// signalGroup sends sig to every member of the group. An empty group
// (ESRCH) is the goal, not an error, so errors are ignored.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// groupAlive reports whether the group still has a member that is not a
// zombie. A zombie holds no resources and cannot be signalled further; it
// only waits for its reaper, which may be slow to come.
func groupAlive(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	return hasLiveMember(pgid)
}

// retryTextBusy calls start again, a few times, while it fails with
// ETXTBSY. A program file that was just written may still be open for
// writing in a process forked at that moment by another goroutine, until
// that process's exec closes the descriptor; meanwhile the kernel refuses
// to execute the file. Nothing has run when exec fails, so trying again is
// safe.
func retryTextBusy(start func() (*exec.Cmd, error)) (*exec.Cmd, error) {
	for i := 1; ; i++ {
		cmd, err := start()
		if !errors.Is(err, syscall.ETXTBSY) || i == 5 {
			return cmd, err
		}
		time.Sleep(time.Duration(i) * 10 * time.Millisecond)
	}
}

// resolve finds the file to execute for argv0 as documented on Spec.Argv.
func resolve(argv0, dir string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		if dir != "" && !filepath.IsAbs(argv0) {
			return filepath.Join(dir, argv0), nil
		}
		return argv0, nil
	}
	pathList, ok := lookupEnv(env, "PATH")
	if !ok {
		pathList = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, argv0)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: argv0, Err: exec.ErrNotFound}
}

// lookupEnv returns the value of key in env. The last entry wins, as it does
// for the process that receives env.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// exists reports whether anything, even a dangling symlink, is at path:
// whoever creates a HALT file means it.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func positive(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// guardedWriter serialises writes to the caller's writer and keeps a failing
// writer from reaching the child: os/exec would close the pipe on a write
// error and the child would die of SIGPIPE over a log problem.
type guardedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		if _, err := g.w.Write(p); err != nil {
			g.err = err
		}
	}
	return len(p), nil
}

func (g *guardedWriter) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// GroupAlive reports whether process group pgid still has a live member.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	if err := syscall.Kill(-pgid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	return hasLiveMember(pgid)
}

// StopGroup stops a process group that nobody waits for (a skill orphaned
// by a crashed cycle): SIGTERM, then SIGKILL if members remain after grace.
func StopGroup(pgid int, grace time.Duration) {
	if pgid <= 0 {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !GroupAlive(pgid) {
			return
		}
		time.Sleep(groupPoll)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// ErrNotFound is the error a program that is not in PATH is reported
// with (errors.Is), so that callers never need os/exec.
var ErrNotFound = exec.ErrNotFound

// LookPath finds a program in PATH, so that callers never need os/exec:
// every process starts through this package.
func LookPath(name string) (string, error) { return exec.LookPath(name) }
