// Package clock is the engine's one source of "now". Everything
// time-dependent (staleness, lock age, intervals, the daily cost reset)
// reads a Clock so that `--now` and tests can pin time exactly.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Real is the system clock in UTC.
type Real struct{}

// Now returns the current UTC time.
func (Real) Now() time.Time { return time.Now().UTC() }

// Fixed is a settable clock: it returns its instant until advanced, which
// makes simulated sessions reproducible.
type Fixed struct {
	mu sync.Mutex
	t  time.Time
}

// NewFixed returns a clock pinned at t.
func NewFixed(t time.Time) *Fixed { return &Fixed{t: t.UTC()} }

// Now returns the pinned instant.
func (f *Fixed) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Advance moves the clock forward by d.
func (f *Fixed) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// Set pins the clock at t.
func (f *Fixed) Set(t time.Time) {
	f.mu.Lock()
	f.t = t.UTC()
	f.mu.Unlock()
}
