package reflect

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/state"
)

// A domain state of 150,000 warning alerts put every alert id into the
// evidence of each of LensEvidenceCap cycles: lens.json reached 22.8 MB,
// past the read limit, and was refused from then on. An observation keeps
// LensAlertsCap tags, each id cut at LensTagMax, and metric names longer
// than LensTagMax are left out; the observation still counts every alert.
func TestUpdateLens_HugeAlertListsStayBounded(t *testing.T) {
	alerts := make([]state.Alert, 150_000)
	for i := range alerts {
		alerts[i] = state.Alert{Severity: "warning", ID: fmt.Sprintf("alert-%d-%s", i, strings.Repeat("z", 100))}
	}
	alerts[0].ID = strings.Repeat("é", 10_000)
	metrics := map[string]float64{"ok": 1, strings.Repeat("m", 100_000): 2}
	var l state.Lens
	var cl state.LensChangelog
	var res LensResult
	for c := 1; c <= LensEvidenceCap+2; c++ {
		ds := state.DomainState{Found: true, Metrics: metrics, Alerts: alerts}
		l, cl, res = UpdateLens(l, cl, LensInput{Cycle: c, Now: lensTestStart, Domain: "d", State: ds})
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20 {
		t.Fatalf("lens.json would be %d bytes", len(b))
	}
	var ev struct {
		Alerts  []string           `json:"alerts"`
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(l.Evidence[len(l.Evidence)-1], &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Alerts) != LensAlertsCap || utf8.RuneCountInString(ev.Alerts[0]) != len("warning:")+LensTagMax || len(ev.Metrics) != 1 {
		t.Errorf("evidence: %d alerts (first %d characters), metrics %v", len(ev.Alerts), utf8.RuneCountInString(ev.Alerts[0]), len(ev.Metrics))
	}
	if !strings.Contains(res.Observation, "150000 urgent alerts") {
		t.Errorf("observation %q", res.Observation)
	}
}

// ClipText cuts at a rune boundary and says so; text within the bound is
// returned as it is.
func TestClipText(t *testing.T) {
	for _, c := range []struct {
		in, want string
		n        int
		cut      bool
	}{
		{"abc", "abc", 3, false},
		{"abcd", "ab…", 3, true},
		{"ééé", "ééé", 3, false},
		{"éééé", "éé…", 3, true},
		{"", "", 3, false},
	} {
		if got, cut := ClipText(c.in, c.n); got != c.want || cut != c.cut {
			t.Errorf("ClipText(%q, %d) = %q, %v; want %q, %v", c.in, c.n, got, cut, c.want, c.cut)
		}
	}
}
