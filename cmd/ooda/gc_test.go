package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// tuneGC sets GOGC 400 and a soft memory limit, each unless its variable
// is set: the user's setting wins.
func TestTuneGC(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) }()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GOGC %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != softMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, softMemoryLimit)
	}

	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: %d, want it left alone", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit %d, want it left alone", got)
	}
}
