package clock

import (
	"testing"
	"time"
)

func TestFixedClockAdvances(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	c := NewFixed(t0)
	if got := c.Now(); !got.Equal(t0) || got.Location() != time.UTC {
		t.Errorf("Now = %v, want %v in UTC", got, t0)
	}
	c.Advance(90 * time.Minute)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Minute)) {
		t.Errorf("after Advance: %v", got)
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Error("Set")
	}
	if Real.Now(Real{}).Location() != time.UTC {
		t.Error("the real clock reports UTC")
	}
}
