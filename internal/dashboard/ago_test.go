package dashboard

import "testing"

// TestAgoSaysFromNowForARunAhead: the page says a run recorded later
// than now (a cycle run with --now ahead of the clock) is that far "from
// now", as ooda status does, not "-2h ago".
func TestAgoSaysFromNowForARunAhead(t *testing.T) {
	ago := funcs["ago"].(func(float64) string)
	for h, want := range map[float64]string{3: "3h ago", 1.5: "1.5h ago", -2: "2h from now"} {
		if got := ago(h); got != want {
			t.Errorf("ago(%v) = %q, want %q", h, got, want)
		}
	}
}
