package reflect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

var lensTestStart = time.Date(2026, 4, 14, 3, 0, 0, 0, time.UTC)

// lensTestState is a found domain state with the given metrics and alerts.
func lensTestState(metrics map[string]float64, alerts ...state.Alert) state.DomainState {
	return state.DomainState{Found: true, Metrics: metrics, Alerts: alerts}
}

var lensTestWarn = state.Alert{Severity: "warning", ID: "queue-high", Message: "queue high"}

// lensTestRun applies one cycle and checks that the inputs came back
// unchanged, since every caller relies on UpdateLens being pure.
func lensTestRun(t *testing.T, l state.Lens, cl state.LensChangelog, in LensInput) (state.Lens, state.LensChangelog, LensResult) {
	t.Helper()
	if in.Now.IsZero() {
		in.Now = lensTestStart.Add(time.Duration(in.Cycle) * time.Hour)
	}
	if in.Domain == "" {
		in.Domain = "svc"
	}
	lb, clb := lensTestJSON(t, l), lensTestJSON(t, cl)
	nl, ncl, res := UpdateLens(l, cl, in)
	if !bytes.Equal(lb, lensTestJSON(t, l)) || !bytes.Equal(clb, lensTestJSON(t, cl)) {
		t.Fatalf("cycle %d: UpdateLens modified its inputs", in.Cycle)
	}
	return nl, ncl, res
}

func lensTestJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lensTestItem(list []state.LensItem, item string) (state.LensItem, bool) {
	for _, it := range list {
		if it.Item == item {
			return it, true
		}
	}
	return state.LensItem{}, false
}

func lensTestEntries(cl state.LensChangelog, item string) []state.LensChange {
	var out []state.LensChange
	for _, e := range cl.Entries {
		if e.Item == item {
			out = append(out, e)
		}
	}
	return out
}

func TestStep5E_FocusItemFromVariability(t *testing.T) {
	var l state.Lens
	var cl state.LensChangelog
	series := []map[string]float64{
		{"latency": 100, "steady": 100, "zero_mean": -1},
		{"latency": 200, "steady": 101, "zero_mean": 1},
		{"latency": 50, "steady": 99, "zero_mean": 0},
	}
	for i, m := range series {
		var res LensResult
		l, cl, res = lensTestRun(t, l, cl, LensInput{Cycle: i + 1, State: lensTestState(m)})
		if i < 2 && len(l.FocusItems) != 0 {
			t.Fatalf("cycle %d: focus item from fewer than 3 observations: %+v", i+1, l.FocusItems)
		}
		if i == 2 && (res.ItemsAdded != 1 || len(res.Changes) != 1) {
			t.Fatalf("cycle 3 result = %+v", res)
		}
	}
	if l.SchemaVersion != "1.0.0" || l.Domain != "svc" || l.LastUpdated != "2026-04-14T06:00:00Z" {
		t.Errorf("lens header = %q %q %q", l.SchemaVersion, l.Domain, l.LastUpdated)
	}
	if len(l.FocusItems) != 1 || l.FocusItems[0].Item != "latency variability" || l.FocusItems[0].Confidence != 0.3 {
		t.Fatalf("focus items = %+v; want only latency variability at 0.3 (steady has low CV, zero_mean has no CV)", l.FocusItems)
	}
	e := cl.Entries
	if len(e) != 1 || e[0].ChangeType != "added" || e[0].Before != nil || *e[0].After != 0.3 || e[0].Delta != 0.3 ||
		e[0].Cycle != 3 || e[0].Domain != "svc" || e[0].Timestamp != "2026-04-14T06:00:00Z" || !strings.Contains(e[0].Reason, "latency") {
		t.Fatalf("changelog = %+v", e)
	}
	if cl.Domain != "svc" {
		t.Errorf("changelog domain = %q", cl.Domain)
	}
	// The evidence entry carries the observation the rules read back.
	var ev map[string]any
	if err := json.Unmarshal(l.Evidence[2], &ev); err != nil {
		t.Fatal(err)
	}
	if ev["source"] != LensSource || ev["cycle"] != 3.0 || ev["items_added"] != 1.0 || ev["confidence_changes"] != 0.0 {
		t.Errorf("evidence = %v", ev)
	}
	if m, _ := ev["metrics"].(map[string]any); m["latency"] != 50.0 || len(m) != 3 {
		t.Errorf("evidence metrics = %v", ev["metrics"])
	}
	if a, _ := ev["alerts"].([]any); a == nil || len(a) != 0 {
		t.Errorf("evidence alerts = %#v; want []", ev["alerts"])
	}
}

func TestStep5E_LearnedThresholdFromAlertAfterCrossing(t *testing.T) {
	var l state.Lens
	var cl state.LensChangelog
	info := state.Alert{Severity: "info", ID: "fyi"}
	steps := []struct {
		queue  float64
		alerts []state.Alert
		want   float64 // confidence of "queue threshold" after the step; 0 = absent
		kind   string  // the step's changelog entry for it, "" for none
	}{
		{10, nil, 0, ""},
		{50, []state.Alert{info}, 0, ""}, // info alerts do not count
		{80, []state.Alert{lensTestWarn}, 0.3, "added"},
		{20, nil, 0.3, ""},                                  // an alert was firing: no information
		{55, nil, 0.3, ""},                                  // 20 had not reached 50
		{90, []state.Alert{lensTestWarn}, 0.4, "confirmed"}, // 55 >= 50, quiet, then alert
		{60, nil, 0.4, ""},
		{60, nil, 0.2, "decayed"}, // 60 >= 50 and no alert followed
	}
	for i, s := range steps {
		cycle := i + 1
		var res LensResult
		l, cl, res = lensTestRun(t, l, cl, LensInput{Cycle: cycle, State: lensTestState(map[string]float64{"queue": s.queue, "const": 5}, s.alerts...)})
		it, ok := lensTestItem(l.LearnedThresholds, "queue threshold")
		if (s.want == 0) == ok || (ok && it.Confidence != s.want) {
			t.Fatalf("cycle %d: queue threshold = %+v (present %v), want %v", cycle, it, ok, s.want)
		}
		var kind string
		for _, c := range res.Changes {
			if c.Item == "queue threshold" {
				kind = c.ChangeType
			}
		}
		if kind != s.kind {
			t.Fatalf("cycle %d: change %q, want %q", cycle, kind, s.kind)
		}
	}
	it, _ := lensTestItem(l.LearnedThresholds, "queue threshold")
	if it.Value == nil || *it.Value != 50 || string(it.Extra["direction"]) != `"above"` {
		t.Errorf("threshold = value %v extra %s; want 50 above", it.Value, it.Extra)
	}
	// A metric that did not move crossed nothing.
	if _, ok := lensTestItem(l.LearnedThresholds, "const threshold"); ok {
		t.Error("an unchanged metric proposed a threshold")
	}

	// A falling metric learns a lower limit.
	var l2 state.Lens
	l2, _, _ = lensTestRun(t, l2, state.LensChangelog{}, LensInput{Cycle: 1, State: lensTestState(map[string]float64{"free_disk": 30})})
	l2, _, _ = lensTestRun(t, l2, state.LensChangelog{}, LensInput{Cycle: 2, State: lensTestState(map[string]float64{"free_disk": 5}, lensTestWarn)})
	it, ok := lensTestItem(l2.LearnedThresholds, "free_disk threshold")
	if !ok || *it.Value != 30 || string(it.Extra["direction"]) != `"below"` {
		t.Errorf("falling threshold = %+v", it)
	}
}

func TestStep5E_DiscoveredSignalFromCoOccurringAlerts(t *testing.T) {
	var l state.Lens
	var cl state.LensChangelog
	const item = "svc + db alerts co-occur"
	cycles := [][]string{{"svc", "db"}, {"svc"}, {"svc", "db", "cache"}, {"db", "svc"}, {"svc", "db"}, {}, {}, {}, {}, {}}
	// The window still holds 3 co-occurrences two cycles after they stop.
	want := []float64{0, 0, 0, 0.3, 0.4, 0.5, 0.6, 0.4, 0.2, 0}
	kinds := []string{"", "", "", "added", "confirmed", "confirmed", "promoted", "decayed", "decayed", "decayed"}
	for i := range cycles {
		var res LensResult
		l, cl, res = lensTestRun(t, l, cl, LensInput{Cycle: i + 1, State: lensTestState(nil), CoAlerts: cycles[:i+1]})
		it, ok := lensTestItem(l.DiscoveredSignals, item)
		if (want[i] == 0) == ok || it.Confidence != want[i] {
			t.Fatalf("cycle %d: signal = %+v (present %v), want %v", i+1, it, ok, want[i])
		}
		var got []string
		for _, c := range res.Changes {
			if c.Item == item {
				got = append(got, c.ChangeType)
			}
		}
		if kinds[i] == "" && got != nil || kinds[i] != "" && (len(got) == 0 || got[0] != kinds[i]) {
			t.Fatalf("cycle %d: changes %v, want %q first", i+1, got, kinds[i])
		}
		if _, ok := lensTestItem(l.DiscoveredSignals, "svc + cache alerts co-occur"); ok {
			t.Fatalf("cycle %d: one co-occurrence proposed a signal", i+1)
		}
	}
	if len(l.DiscoveredSignals) != 0 || len(l.DeprecatedItems) != 1 {
		t.Fatalf("signals %+v deprecated %d; want the decayed signal deprecated", l.DiscoveredSignals, len(l.DeprecatedItems))
	}

	// Only the last 5 cycles count.
	old := [][]string{{"svc", "db"}, {"svc", "db"}, {"svc", "db"}, {"svc"}, {"svc"}, {"svc"}, {"db"}, {}}
	l3, _, _ := lensTestRun(t, state.Lens{}, state.LensChangelog{}, LensInput{Cycle: 8, State: lensTestState(nil), CoAlerts: old})
	if len(l3.DiscoveredSignals) != 0 {
		t.Errorf("co-occurrences older than 5 cycles proposed %+v", l3.DiscoveredSignals)
	}
}

func TestStep5E_ConfirmPromoteDecayDeprecate(t *testing.T) {
	var l state.Lens
	var cl state.LensChangelog
	const item = "latency variability"
	wasActive := false
	for cycle := 1; cycle <= 20; cycle++ {
		v := 10.0
		switch {
		case cycle > 8:
			v = 100
		case cycle%2 == 0:
			v = 30
		}
		l, cl, _ = lensTestRun(t, l, cl, LensInput{Cycle: cycle, State: lensTestState(map[string]float64{"latency": v})})
		if _, ok := lensTestItem(ActiveLens(l).FocusItems, item); ok {
			wasActive = true
		}
		if cycle == 6 {
			if _, ok := lensTestItem(ActiveLens(l).FocusItems, item); !ok {
				t.Fatalf("cycle 6: item at 0.6 not in the active lens: %+v", l.FocusItems)
			}
		}
	}
	if !wasActive {
		t.Fatal("item never became active")
	}
	entries := lensTestEntries(cl, item)
	type step struct {
		cycle int
		kind  string
		after float64
	}
	want := []step{
		{3, "added", 0.3}, {4, "confirmed", 0.4}, {5, "confirmed", 0.5}, {6, "promoted", 0.6},
		{7, "confirmed", 0.7}, {8, "confirmed", 0.8}, {9, "confirmed", 0.9}, {10, "confirmed", 1.0},
		// 11 and 12: still variable but at the 1.0 cap, so nothing logged.
		{13, "decayed", 0.8}, {14, "decayed", 0.6}, {15, "decayed", 0.4}, {16, "decayed", 0.2}, {17, "decayed", 0},
		{17, "deprecated", 0},
	}
	if len(entries) != len(want) {
		t.Fatalf("changelog for %s = %d entries, want %d: %+v", item, len(entries), len(want), entries)
	}
	var prev *float64
	for i, e := range entries {
		w := want[i]
		if e.Cycle != w.cycle || e.ChangeType != w.kind || *e.After != w.after {
			t.Errorf("entry %d = cycle %d %s after %v; want %+v", i, e.Cycle, e.ChangeType, *e.After, w)
		}
		if (prev == nil) != (e.Before == nil) || prev != nil && *prev != *e.Before {
			t.Errorf("entry %d: before %v does not follow the previous after %v", i, e.Before, prev)
		}
		if e.Before != nil && e.Delta != lensRound(*e.After-*e.Before) {
			t.Errorf("entry %d: delta %v", i, e.Delta)
		}
		prev = e.After
	}
	if _, ok := lensTestItem(l.FocusItems, item); ok {
		t.Fatal("deprecated item still in focus_items")
	}
	if len(l.DeprecatedItems) != 1 {
		t.Fatalf("deprecated_items = %s", l.DeprecatedItems)
	}
	var dep map[string]any
	_ = json.Unmarshal(l.DeprecatedItems[0], &dep)
	if dep["item"] != item || dep["kind"] != "focus_item" || dep["confidence"] != 0.0 ||
		dep["deprecated_at"] != state.FormatTime(lensTestStart.Add(17*time.Hour)) || dep["reason"] == "" {
		t.Errorf("deprecated entry = %v", dep)
	}
}

func TestStep5E_ActiveLensFiltersEveryList(t *testing.T) {
	l := state.Lens{
		FocusItems:        []state.LensItem{{Item: "a", Confidence: 0.6}, {Item: "b", Confidence: 0.5}},
		LearnedThresholds: []state.LensItem{{Item: "c", Confidence: 0.59}, {Item: "d", Confidence: 1}},
		DiscoveredSignals: []state.LensItem{{Item: "e", Confidence: 0.3}, {Item: "f", Confidence: 0.7}},
		Evidence:          []json.RawMessage{json.RawMessage(`{}`)},
	}
	a := ActiveLens(l)
	names := func(list []state.LensItem) string {
		var s []string
		for _, it := range list {
			s = append(s, it.Item)
		}
		return strings.Join(s, ",")
	}
	if got := names(a.FocusItems) + "|" + names(a.LearnedThresholds) + "|" + names(a.DiscoveredSignals); got != "a|d|f" {
		t.Errorf("active = %s, want a|d|f", got)
	}
	if a.Evidence != nil {
		t.Error("active lens carries evidence")
	}
}

func TestStep5E_Caps(t *testing.T) {
	// Evidence: 25 cycles keep the last 20.
	var l state.Lens
	var cl state.LensChangelog
	for cycle := 1; cycle <= 25; cycle++ {
		l, cl, _ = lensTestRun(t, l, cl, LensInput{Cycle: cycle, State: lensTestState(map[string]float64{"x": 1})})
	}
	if len(l.Evidence) != LensEvidenceCap {
		t.Fatalf("evidence = %d entries, want %d", len(l.Evidence), LensEvidenceCap)
	}
	var first struct{ Cycle int }
	_ = json.Unmarshal(l.Evidence[0], &first)
	if first.Cycle != 6 {
		t.Errorf("oldest kept evidence is cycle %d, want 6", first.Cycle)
	}

	// Items and changelog: 60 variable metrics propose 60 focus items at
	// once; 10 are deprecated by the cap, 70 entries are cut to 50.
	l = state.Lens{}
	for i := range 49 {
		l.DeprecatedItems = append(l.DeprecatedItems, json.RawMessage(fmt.Sprintf(`{"item":"old %d"}`, i)))
	}
	cl = state.LensChangelog{}
	var res LensResult
	for cycle, f := range []float64{1, 3, 1} {
		m := map[string]float64{}
		for i := range 60 {
			m[fmt.Sprintf("m%02d", i)] = f * float64(i+1)
		}
		l, cl, res = lensTestRun(t, l, cl, LensInput{Cycle: cycle + 1, State: lensTestState(m)})
	}
	if n := len(l.FocusItems) + len(l.LearnedThresholds) + len(l.DiscoveredSignals); n != LensItemCap {
		t.Fatalf("items = %d, want %d", n, LensItemCap)
	}
	if l.FocusItems[0].Item != "m00 variability" || l.FocusItems[49].Item != "m49 variability" {
		t.Errorf("cap kept %s..%s; ties drop the later items", l.FocusItems[0].Item, l.FocusItems[49].Item)
	}
	if res.ItemsAdded != 60 || res.Deprecated != 10 || len(res.Changes) != 70 {
		t.Errorf("result: added %d deprecated %d changes %d", res.ItemsAdded, res.Deprecated, len(res.Changes))
	}
	if len(cl.Entries) != LensChangelogCap {
		t.Fatalf("changelog = %d entries, want %d", len(cl.Entries), LensChangelogCap)
	}
	last := cl.Entries[len(cl.Entries)-1]
	if last.ChangeType != "deprecated" || last.Item != "m59 variability" || !strings.Contains(last.Reason, "cap") {
		t.Errorf("last changelog entry = %+v", last)
	}
	if len(l.DeprecatedItems) != LensDeprecatedCap || !strings.Contains(string(l.DeprecatedItems[0]), `"old 9"`) {
		t.Errorf("deprecated_items = %d, first %s", len(l.DeprecatedItems), l.DeprecatedItems[0])
	}
}

func TestStep5E_FixtureLensUpdates(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "compat", "ooda-loop", "fixtures", "cycle-card", "agent", "state", "service_health")
	lb, err := os.ReadFile(filepath.Join(dir, "lens.json"))
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	cb, err := os.ReadFile(filepath.Join(dir, "lens_changelog.json"))
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	// Unknown keys at every level must survive the update.
	lb = bytes.Replace(lb, []byte(`"schema_version"`), []byte(`"x_lens_note": "keep", "schema_version"`), 1)
	lb = bytes.Replace(lb, []byte(`"value": 0.25,`), []byte(`"value": 0.25, "x_item_note": 1,`), 1)
	cb = bytes.Replace(cb, []byte(`"schema_version"`), []byte(`"x_log_note": true, "schema_version"`), 1)
	var l state.Lens
	var cl state.LensChangelog
	if err := json.Unmarshal(lb, &l); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cb, &cl); err != nil {
		t.Fatal(err)
	}
	oldEvidence := string(l.Evidence[0])
	in := LensInput{Domain: "service_health"}
	for i, v := range []float64{120, 480, 90, 400, 110} {
		in.Cycle = 153 + i
		in.State = lensTestState(map[string]float64{"p95_ms": v})
		l, cl, _ = lensTestRun(t, l, cl, in)
	}
	if it, ok := lensTestItem(l.FocusItems, "/api/expand latency"); !ok || it.Confidence != 0.6 {
		t.Errorf("fixture focus item = %+v, %v", it, ok)
	}
	if it, ok := lensTestItem(l.LearnedThresholds, "flaky-alert threshold"); !ok || it.Confidence != 0.7 || *it.Value != 0.25 || string(it.Extra["x_item_note"]) != "1" {
		t.Errorf("fixture threshold = %+v, %v", it, ok)
	}
	if it, ok := lensTestItem(l.FocusItems, "p95_ms variability"); !ok || it.Confidence != 0.5 {
		t.Errorf("new focus item = %+v, %v", it, ok)
	}
	if len(l.Evidence) != 6 || string(l.Evidence[0]) != oldEvidence {
		t.Errorf("evidence: %d entries, first %s", len(l.Evidence), l.Evidence[0])
	}
	if cl.Entries[0].Item != "flaky-alert threshold" || cl.Entries[0].ChangeType != "decayed" || len(cl.Entries) != 4 {
		t.Errorf("changelog entries = %+v", cl.Entries)
	}
	out := string(lensTestJSON(t, l)) + string(lensTestJSON(t, cl))
	for _, k := range []string{`"x_lens_note":"keep"`, `"x_item_note":1`, `"x_log_note":true`} {
		if !strings.Contains(out, k) {
			t.Errorf("unknown key %s lost", k)
		}
	}
}

func TestStep5E_NoStateFileIsNoObservation(t *testing.T) {
	var l state.Lens
	for cycle, m := range []map[string]float64{{"x": 1}, {"x": 9}} {
		l, _, _ = lensTestRun(t, l, state.LensChangelog{}, LensInput{Cycle: cycle + 1, State: lensTestState(m)})
	}
	l, _, res := lensTestRun(t, l, state.LensChangelog{}, LensInput{Cycle: 3})
	if len(l.FocusItems) != 0 || !strings.HasPrefix(res.Observation, "no domain state file") {
		t.Fatalf("missing state counted as an observation: %+v %q", l.FocusItems, res.Observation)
	}
	if strings.Contains(string(l.Evidence[2]), `"metrics"`) {
		t.Errorf("evidence without a state file carries metrics: %s", l.Evidence[2])
	}
	l, _, _ = lensTestRun(t, l, state.LensChangelog{}, LensInput{Cycle: 4, State: lensTestState(map[string]float64{"x": 2})})
	if len(l.FocusItems) != 1 {
		t.Errorf("third real observation did not count: %+v", l.FocusItems)
	}
}

func TestStep5E_ContrarianLensReview(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name    string
		in      ReviewInput
		want    bool
		message string
	}{
		{"fell", ReviewInput{Cycle: 20, Interval: 10, Domain: "svc", Outputs: []bool{true, true, true, true, false, false, true, false}},
			true, "lens review: svc output rate fell from 100% to 40%"},
		{"rounded rates", ReviewInput{Cycle: 10, Interval: 10, Domain: "svc", Outputs: []bool{true, true, false, false, true, false, false, true}},
			true, "lens review: svc output rate fell from 67% to 40%"},
		{"off interval", ReviewInput{Cycle: 21, Interval: 10, Domain: "svc", Outputs: []bool{true, true, true, false, false, false, false, false}}, false, ""},
		{"held", ReviewInput{Cycle: 10, Interval: 10, Domain: "svc", Outputs: []bool{true, false, true, true, true, false, true, true}}, false, ""},
		{"rose", ReviewInput{Cycle: 10, Interval: 10, Domain: "svc", Outputs: []bool{false, false, false, true}}, false, ""},
		{"too little history", ReviewInput{Cycle: 10, Interval: 10, Domain: "svc", Outputs: []bool{true, true, false}}, false, ""},
		{"no interval", ReviewInput{Cycle: 10, Interval: 0, Domain: "svc", Outputs: []bool{true, true, true, false, false}}, false, ""},
	}
	for _, tt := range tests {
		got, msg := LensReview(tt.in)
		if got != tt.want || msg != tt.message {
			t.Errorf("%s: LensReview = %v %q, want %v %q", tt.name, got, msg, tt.want, tt.message)
		}
	}

	log := []state.DecisionEntry{
		{SelectedDomain: "svc", Action: "execute", HadOutput: &yes},
		{SelectedDomain: "svc", Action: "skip", HadOutput: &no},
		{SelectedDomain: "db", Action: "execute", HadOutput: &no},
		{SelectedDomain: "svc", Action: "observe_only", HadOutput: &no},
		{SelectedDomain: "svc"}, // older entry without had_output
		{SelectedDomain: "svc", HadOutput: &no},
	}
	if got := fmt.Sprint(LensOutputs(log, "svc")); got != "[true false]" {
		t.Errorf("LensOutputs = %s, want [true false]", got)
	}
}

// A domain state of thousands of metrics is observed through its first
// LensMetricsCap (by name): the evidence kept and the items proposed stay
// bounded, so the rules do not compare every metric with every item.
func TestStep5E_MetricsPerObservationAreCapped(t *testing.T) {
	var l state.Lens
	var cl state.LensChangelog
	for c := 1; c <= 4; c++ {
		m := map[string]float64{}
		for i := 0; i < 5000; i++ {
			m[fmt.Sprintf("m%05d", i)] = float64((c * (i + 1)) % 7)
		}
		l, cl, _ = lensTestRun(t, l, cl, LensInput{Cycle: c, State: lensTestState(m)})
	}
	var ev struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(l.Evidence[len(l.Evidence)-1], &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Metrics) != LensMetricsCap {
		t.Fatalf("evidence holds %d metrics, want %d", len(ev.Metrics), LensMetricsCap)
	}
	if _, ok := ev.Metrics["m00000"]; !ok {
		t.Errorf("the first metrics by name are kept")
	}
	if _, ok := ev.Metrics[fmt.Sprintf("m%05d", LensMetricsCap)]; ok {
		t.Errorf("metric beyond the cap kept")
	}
	if n := len(l.FocusItems) + len(l.LearnedThresholds) + len(l.DiscoveredSignals); n > LensItemCap {
		t.Errorf("%d items", n)
	}
}
