package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const lockTimeout = 30 * time.Minute

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeLock(t *testing.T, path string, li LockInfo) []byte {
	t.Helper()
	b, err := json.Marshal(li)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
	return b
}

// deadPID is the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start true: %v", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Wait()
	return pid
}

func TestLock_AcquireWritesHolderAndReleaseRemovesIt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent", "state", "evolve", ".lock")
	now := time.Date(2026, 4, 14, 3, 14, 0, 0, time.FixedZone("CEST", 2*3600))
	l, stale, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if stale != nil {
		t.Fatalf("fresh lock reported stale: %+v", stale)
	}
	if l.Path() != p {
		t.Fatalf("Path = %q", l.Path())
	}
	li, ok := ReadLock(p)
	if !ok {
		t.Fatal("no lock file after acquiring")
	}
	if li.PID != os.Getpid() || li.Host != hostname(t) || li.StartedAt != "2026-04-14T01:14:00Z" {
		t.Fatalf("lock content = %+v", li)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock still present after Release: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	var nilLock *Lock
	if err := nilLock.Release(); err != nil {
		t.Fatalf("Release on nil: %v", err)
	}
}

// The lock must hold between processes, not only goroutines: ten copies
// of the test binary race for it at once and exactly one may win.
func TestLock_ExclusiveAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, ".lock")
	release := filepath.Join(dir, "release")
	const n = 10

	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bytes.Buffer
	}
	children := make([]child, n)
	for i := range children {
		cmd := helperCommand(t, "lock", "OODA_LOCK_PATH="+lockPath, "OODA_LOCK_RELEASE="+release)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[i] = child{cmd, in, out}
	}
	// Closing stdin is the start barrier: every child is already running
	// and tries at the same moment.
	for _, c := range children {
		c.stdin.Close()
	}
	exited := make(chan int, n)
	for i, c := range children {
		go func() {
			_ = c.cmd.Wait()
			exited <- i
		}()
	}
	// The winner holds the lock until every loser has given up, so a late
	// starter can never take it after an early release.
	var finished []int
	deadline := time.After(30 * time.Second)
wait:
	for len(finished) < n-1 {
		select {
		case i := <-exited:
			finished = append(finished, i)
		case <-deadline:
			break wait
		}
	}
	writeFile(t, release, "go")
	for len(finished) < n {
		select {
		case i := <-exited:
			finished = append(finished, i)
		case <-time.After(30 * time.Second):
			t.Fatalf("children did not exit; %d of %d finished", len(finished), n)
		}
	}

	acquired, locked := 0, 0
	for i, c := range children {
		out := strings.TrimSpace(c.out.String())
		switch {
		case c.cmd.ProcessState.ExitCode() != 0:
			t.Errorf("child %d exited %d: %s", i, c.cmd.ProcessState.ExitCode(), out)
		case strings.HasPrefix(out, "ACQUIRED"):
			acquired++
		case strings.HasPrefix(out, "LOCKED"):
			locked++
		default:
			t.Errorf("child %d: unexpected output %q", i, out)
		}
	}
	if acquired != 1 || locked != n-1 {
		t.Fatalf("acquired %d, locked %d; want exactly 1 and %d", acquired, locked, n-1)
	}
	if _, err := os.Stat(lockPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the winner did not release the lock: %v", err)
	}
}

func lockHelper() int {
	lockPath, release := os.Getenv("OODA_LOCK_PATH"), os.Getenv("OODA_LOCK_RELEASE")
	_, _ = io.Copy(io.Discard, os.Stdin)
	l, _, err := AcquireLock(lockPath, time.Now(), time.Hour)
	var locked *ErrLocked
	switch {
	case errors.As(err, &locked):
		fmt.Println("LOCKED", locked.Holder.PID)
		return 0
	case err != nil:
		fmt.Println("ERROR", err)
		return 2
	}
	fmt.Println("ACQUIRED", os.Getpid())
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(release); err == nil {
			break
		}
	}
	if err := l.Release(); err != nil {
		fmt.Println("RELEASE", err)
		return 2
	}
	return 0
}

func TestLock_StaleByAge(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Date(2026, 4, 19, 6, 0, 0, 0, time.UTC)
	// A live PID on this host: only the age can make it stale.
	old := LockInfo{PID: os.Getpid(), Host: hostname(t), StartedAt: FormatTime(now.Add(-31 * time.Minute))}
	writeLock(t, p, old)
	l, stale, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if stale == nil {
		t.Fatal("stale lock not reported")
	}
	if stale.Why != "timeout" || stale.Holder != old || stale.Age != 31*time.Minute {
		t.Fatalf("stale = %+v", stale)
	}
	li, _ := ReadLock(p)
	if li.StartedAt != FormatTime(now) || li.PID != os.Getpid() {
		t.Fatalf("lock not taken over: %+v", li)
	}
	if names := dirNames(t, filepath.Dir(p)); len(names) != 1 {
		t.Fatalf("directory holds %v, want only the new lock", names)
	}
}

func TestLock_StaleAtExactlyTheTimeout(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Date(2026, 4, 19, 6, 0, 0, 0, time.UTC)
	writeLock(t, p, LockInfo{PID: os.Getpid(), Host: hostname(t), StartedAt: FormatTime(now.Add(-lockTimeout))})
	l, stale, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatalf("a lock aged exactly lock_timeout_minutes is stale (age < timeout is live): %v", err)
	}
	defer l.Release()
	if stale == nil || stale.Why != "timeout" {
		t.Fatalf("stale = %+v", stale)
	}
}

func TestLock_StaleByDeadPID(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Now()
	holder := LockInfo{PID: deadPID(t), Host: hostname(t), StartedAt: FormatTime(now.Add(-time.Minute))}
	writeLock(t, p, holder)
	l, stale, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if stale == nil || stale.Why != "dead_pid" || stale.Holder != holder {
		t.Fatalf("stale = %+v", stale)
	}
}

// A PID is only meaningful on the host that owns it.
func TestLock_DeadPIDOnOtherHostIsRespected(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Now()
	orig := writeLock(t, p, LockInfo{PID: deadPID(t), Host: hostname(t) + "-elsewhere", StartedAt: FormatTime(now.Add(-time.Minute))})
	_, _, err := AcquireLock(p, now, lockTimeout)
	var locked *ErrLocked
	if !errors.As(err, &locked) {
		t.Fatalf("err = %v, want *ErrLocked", err)
	}
	if got := readString(t, p); got != string(orig) {
		t.Fatalf("lock file changed to %q", got)
	}
}

func TestLock_LiveLockRespected(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Now()
	holder := LockInfo{PID: os.Getpid(), Host: hostname(t), StartedAt: FormatTime(now.Add(-5 * time.Minute))}
	orig := writeLock(t, p, holder)
	l, stale, err := AcquireLock(p, now, lockTimeout)
	var locked *ErrLocked
	if !errors.As(err, &locked) {
		t.Fatalf("err = %v (lock %v, stale %v), want *ErrLocked", err, l, stale)
	}
	if locked.Holder != holder {
		t.Fatalf("holder = %+v", locked.Holder)
	}
	if locked.Age < 4*time.Minute || locked.Age > 6*time.Minute {
		t.Fatalf("age = %v", locked.Age)
	}
	if !strings.Contains(locked.Error(), "another cycle is running") {
		t.Fatalf("message = %q", locked.Error())
	}
	if got := readString(t, p); got != string(orig) {
		t.Fatalf("live lock file changed to %q", got)
	}
}

func TestLock_ReleaseOnlyOwn(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Now()
	l, _, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	// Our lock went stale and another cycle took over in the meantime.
	other := writeLock(t, p, LockInfo{PID: os.Getpid() + 1, Host: hostname(t), StartedAt: FormatTime(now.Add(time.Hour))})
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != string(other) {
		t.Fatalf("another holder's lock was touched: %q", got)
	}
}

// A crash between creating the lock and writing it leaves an empty file:
// young, it may be a holder mid-write; old, it is stale.
func TestLock_EmptyFileFromCrash(t *testing.T) {
	t.Run("young empty file is respected", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), ".lock")
		writeFile(t, p, "")
		_, _, err := AcquireLock(p, time.Now(), lockTimeout)
		var locked *ErrLocked
		if !errors.As(err, &locked) {
			t.Fatalf("err = %v, want *ErrLocked", err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatal("young empty lock removed")
		}
	})
	t.Run("old empty file is stale", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), ".lock")
		writeFile(t, p, "")
		old := time.Now().Add(-time.Minute)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		l, stale, err := AcquireLock(p, time.Now(), lockTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		if stale == nil || stale.Why != "unreadable" {
			t.Fatalf("stale = %+v", stale)
		}
		if li, _ := ReadLock(p); li.PID != os.Getpid() {
			t.Fatalf("lock not taken: %+v", li)
		}
	})
	t.Run("garbage older than the timeout is stale", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), ".lock")
		writeFile(t, p, "{not json")
		old := time.Now().Add(-2 * lockTimeout)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		l, stale, err := AcquireLock(p, time.Now(), lockTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		if stale == nil || stale.Why != "unreadable" {
			t.Fatalf("stale = %+v", stale)
		}
	})
}

func TestLock_ReadLockMissing(t *testing.T) {
	if li, ok := ReadLock(filepath.Join(t.TempDir(), ".lock")); ok || li != (LockInfo{}) {
		t.Fatalf("ReadLock on a missing file = %+v, %v", li, ok)
	}
}

// staleRecoveryRace lets AcquireLock judge a lock at path stale, then —
// at lockJudgedHook, between the judgment and the removal — replaces that
// lock the way a concurrent recoverer would (with fresh, already or not yet
// written), and lets AcquireLock continue.
func staleRecoveryRace(t *testing.T, fresh []byte) (path string, l *Lock, err error) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, ".lock")
	now := time.Now()
	stale, _ := json.Marshal(LockInfo{PID: 1, Host: "gone", StartedAt: FormatTime(now.Add(-2 * time.Hour))})
	writeFile(t, path, string(stale))
	lockJudgedHook = func() {
		if err := os.Rename(path, filepath.Join(dir, "judged")); err != nil {
			t.Error(err)
		}
		writeFile(t, path, string(fresh))
	}
	defer func() { lockJudgedHook = nil }()
	l, _, err = AcquireLock(path, now, lockTimeout)
	return path, l, err
}

func TestLock_StaleRecoveryKeepsALockTakenMeanwhile(t *testing.T) {
	t.Run("fresh lock already written", func(t *testing.T) {
		fresh, _ := json.Marshal(LockInfo{PID: os.Getpid(), Host: hostname(t), StartedAt: FormatTime(time.Now())})
		path, l, err := staleRecoveryRace(t, fresh)
		var locked *ErrLocked
		if !errors.As(err, &locked) {
			l.Release()
			t.Fatalf("err = %v, want *ErrLocked", err)
		}
		if got := readString(t, path); got != string(fresh) {
			t.Fatalf("the fresh lock became %q", got)
		}
	})
	// The other recoverer has created its lock with O_EXCL but not written
	// it yet. Deleting that file lets both processes believe they hold the
	// lock: the other one keeps writing into the unlinked file.
	t.Run("fresh lock not yet written", func(t *testing.T) {
		path, l, err := staleRecoveryRace(t, nil)
		if err == nil {
			l.Release()
			t.Fatal("AcquireLock removed a lock created after its stale check and took the lock: two holders")
		}
		if _, serr := os.Stat(path); serr != nil {
			t.Fatalf("the fresh lock was removed (err %v)", err)
		}
	})
}

// A holder that renews its lock is never stale by age, however long its
// cycle runs; once it stops renewing, the lock ages from the last beat.
func TestLock_RenewedLockIsNotStale(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	start := time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)
	l, _, err := AcquireLock(p, start, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Renew(start.Add(40 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	var locked *ErrLocked
	if _, _, err := AcquireLock(p, start.Add(45*time.Minute), 30*time.Minute); !errors.As(err, &locked) || locked.Age != 5*time.Minute {
		t.Fatalf("a renewed lock must stay live: %v", err)
	}
	li, _ := ReadLock(p)
	if li.RenewedAt != "2026-04-14T09:40:00Z" || li.StartedAt != "2026-04-14T09:00:00Z" {
		t.Errorf("lock = %+v", li)
	}
}

// Held: the holder's own lock is held (and survives its heartbeat); one
// another process replaced is not, and says whose it is; a removed one is
// not; a nil lock (a dry run's) is.
func TestLock_HeldUntilAnotherProcessTakesIt(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Date(2026, 4, 14, 3, 0, 0, 0, time.UTC)
	l, _, err := AcquireLock(p, now, lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Renew(now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if held, cur := l.Held(); !held || cur.PID != os.Getpid() {
		t.Fatalf("own lock: held %v, %+v", held, cur)
	}
	if err := os.WriteFile(p, []byte(`{"pid": 7, "host": "h2", "started_at": "2026-04-10T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if held, cur := l.Held(); held || cur.PID != 7 || cur.Host != "h2" {
		t.Fatalf("taken lock: held %v, %+v", held, cur)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if held, cur := l.Held(); held || cur != (LockInfo{}) {
		t.Fatalf("removed lock: held %v, %+v", held, cur)
	}
	var nilLock *Lock
	if held, _ := nilLock.Held(); !held {
		t.Error("a nil lock is not held")
	}
}

// A lock whose started_at is in the future never aged (its age was
// negative), so it kept every cycle out for good, however old the file:
// such a time is not trusted, and the lock ages from the file's
// modification time instead — live while a holder renews it.
func TestLock_AFutureStartAgesByTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	now := time.Date(2026, 4, 14, 3, 0, 0, 0, time.UTC)
	future := fmt.Sprintf(`{"pid": 1, "host": %q, "started_at": "2999-01-01T00:00:00Z"}`, hostname(t))
	if err := os.WriteFile(p, []byte(future), 0o644); err != nil {
		t.Fatal(err)
	}
	// Fresh: a holder (pid 1 is alive) that may be renewing it.
	if _, _, err := AcquireLock(p, now, lockTimeout); err == nil {
		t.Fatal("a fresh lock from the future was taken")
	}
	old := time.Now().Add(-2 * lockTimeout)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	l, stale, err := AcquireLock(p, now, lockTimeout)
	if err != nil || stale == nil || stale.Why != "timeout" {
		t.Fatalf("an old lock from the future: stale %+v, err %v", stale, err)
	}
	l.Release()
}
