package proc

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// OnStart runs beside the process: a slow record (a lock written to a
// slow disk) holds up neither the process nor a stop, yet Run returns only
// once it is done. Here OnStart waits until the process has been stopped
// by its timeout, which can only happen while OnStart is still running.
func TestOnStartRunsBesideTheProcess(t *testing.T) {
	t.Parallel()
	var got atomic.Int64
	var done atomic.Bool
	r := Exec{}.Run(context.Background(), Spec{
		Argv:    []string{"/bin/sleep", "60"},
		Env:     testEnv,
		Timeout: 100 * time.Millisecond,
		OnStart: func(pgid int) {
			got.Store(int64(pgid))
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if errors.Is(syscall.Kill(pgid, 0), syscall.ESRCH) || zombie(pgid) {
					done.Store(true)
					return
				}
			}
		},
	})
	if !r.TimedOut {
		t.Errorf("result %+v, want TimedOut", r)
	}
	if !done.Load() {
		t.Fatal("the process was not stopped while OnStart ran, or Run returned before OnStart did")
	}
	if got.Load() <= 0 {
		t.Errorf("OnStart got pgid %d", got.Load())
	}
}

// However soon the process exits, it is not reaped before OnStart
// returns: its pid still names it, not a process that reused the number,
// so what OnStart records of it (the cycle lock records its start time)
// is its own.
func TestOnStartSeesTheProcessBeforeItIsReaped(t *testing.T) {
	t.Parallel()
	var exitedUnreaped atomic.Bool
	r := Exec{}.Run(context.Background(), Spec{
		Argv: []string{"/bin/true"},
		Env:  testEnv,
		OnStart: func(pgid int) {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if zombie(pgid) {
					exitedUnreaped.Store(true)
					return
				}
				if errors.Is(syscall.Kill(pgid, 0), syscall.ESRCH) {
					return
				}
			}
		},
	})
	if !r.OK() {
		t.Fatalf("result %+v", r)
	}
	if !exitedUnreaped.Load() {
		t.Error("the process was reaped while OnStart still ran")
	}
}
