package proc

import (
	"os"
	"sync"
)

// prepared guards Prepare's one warm-up per process.
var prepared sync.Once

// Prepare starts, in the background, the once-per-process work the first
// contained run would otherwise do on its own start-up path: finding this
// process's cgroup (and removing the stale run cgroups of processes that
// are gone), and the standard library's check that pidfds work, which
// forks a probe child. Both are what the first Run does anyway, guarded by
// the same once; Prepare only lets that work overlap with whatever the
// caller does before it starts the run (the cycle writes files first). It
// returns at once and may be called any number of times.
func Prepare() {
	prepared.Do(func() { go warm() })
}

// warm is Prepare's work, run at most once.
func warm() {
	prepareContainment()
	// FindProcess answers through a pidfd when pidfds work, and so runs the
	// same one-time check that os.StartProcess runs before its first fork.
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}
