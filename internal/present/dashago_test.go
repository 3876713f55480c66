package present

import "testing"

// TestDashAgoSaysFromNowForARunAhead: a last run later than now (a cycle
// run with --now ahead of the clock) read "-2.0h ago".
func TestDashAgoSaysFromNowForARunAhead(t *testing.T) {
	for _, c := range []struct {
		h    float64
		want string
	}{
		{3, "3.0h ago"}, {0, "0.0h ago"}, {-0.01, "0.0h ago"}, {-2, "2.0h from now"},
		{80, "3.3d ago"}, {-100, "4.2d from now"},
	} {
		if got := dashAgo(c.h); got != c.want {
			t.Errorf("dashAgo(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}
