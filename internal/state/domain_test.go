package state

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func readDomain(t *testing.T, content string) DomainState {
	t.Helper()
	s := New(t.TempDir())
	writeFile(t, s.Path("agent/state/service_health.json"), content)
	ds, err := s.ReadDomainState("agent/state/service_health.json")
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Found {
		t.Fatal("existing file not found")
	}
	return ds
}

func TestDomainState_LastRunVersusLegacyLastCheck(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"last_run only", `{"last_run": "2026-04-10T00:00:00Z"}`, "2026-04-10T00:00:00Z"},
		{"legacy last_check only", `{"last_check": "2026-04-11T00:00:00Z"}`, "2026-04-11T00:00:00Z"},
		{"last_check later", `{"last_run": "2026-04-10T00:00:00Z", "last_check": "2026-04-12T00:00:00Z"}`, "2026-04-12T00:00:00Z"},
		{"last_run later", `{"last_run": "2026-04-13T00:00:00Z", "last_check": "2026-04-12T00:00:00Z"}`, "2026-04-13T00:00:00Z"},
		{"offsets compared as instants", `{"last_run": "2026-04-12T01:00:00+02:00", "last_check": "2026-04-12T00:00:00Z"}`, "2026-04-12T00:00:00Z"},
		{"unparseable last_run", `{"last_run": "soon", "last_check": "2026-04-12T00:00:00Z"}`, "2026-04-12T00:00:00Z"},
		{"neither", `{"status": "ok"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := readDomain(t, tc.doc)
			if ds.LastRun != tc.want {
				t.Fatalf("LastRun = %q, want %q", ds.LastRun, tc.want)
			}
			got, ok := ds.LastRunTime()
			if tc.want == "" {
				if ok {
					t.Fatalf("LastRunTime = %v for a file without a run", got)
				}
				return
			}
			want, _ := time.Parse(time.RFC3339, tc.want)
			if !ok || !got.Equal(want) {
				t.Fatalf("LastRunTime = %v, %v", got, ok)
			}
		})
	}
}

func TestDomainState_Alerts(t *testing.T) {
	ds := readDomain(t, `{"alerts": [
	  {"severity": "critical", "message": "api down", "id": "a1"},
	  {"severity": "WARNING", "message": "slow"},
	  "disk almost full",
	  {"severity": "sev-2", "message": "unknown scale"},
	  {"message": "no severity"},
	  42,
	  {"severity": "info"}
	]}`)
	want := []Alert{
		{Severity: "critical", Message: "api down", ID: "a1"},
		{Severity: "warning", Message: "slow"},
		{Severity: "warning", Message: "disk almost full"},
		{Severity: "info", Message: "unknown scale"},
		{Severity: "info", Message: "no severity"},
		{Severity: "info"},
	}
	if !reflect.DeepEqual(ds.Alerts, want) {
		t.Fatalf("alerts = %+v\nwant     %+v", ds.Alerts, want)
	}
	urgent := 0
	for _, a := range ds.Alerts {
		if a.Urgent() {
			urgent++
		}
	}
	if urgent != 3 {
		t.Fatalf("%d urgent alerts, want 3", urgent)
	}
	if ds := readDomain(t, `{"alerts": "none"}`); len(ds.Alerts) != 0 {
		t.Fatalf("alerts from a non-array: %+v", ds.Alerts)
	}
}

func TestDomainState_MetricsNumbersOnly(t *testing.T) {
	ds := readDomain(t, `{"status": "degraded", "run_count": 7, "metrics": {"p95_ms": 240, "error_rate": 0.02, "region": "eu", "ok": true, "nested": {"a": 1}, "none": null}}`)
	if want := map[string]float64{"p95_ms": 240, "error_rate": 0.02}; !reflect.DeepEqual(ds.Metrics, want) {
		t.Fatalf("metrics = %v, want %v", ds.Metrics, want)
	}
	if ds.Status != "degraded" || ds.RunCount != 7 {
		t.Fatalf("status %q run_count %d", ds.Status, ds.RunCount)
	}
	if ds.ModTime.IsZero() || len(ds.Bytes) == 0 || string(ds.Raw["status"]) != `"degraded"` {
		t.Fatalf("raw document not kept: %+v", ds)
	}
	if ds := readDomain(t, `{"metrics": [1, 2]}`); len(ds.Metrics) != 0 {
		t.Fatalf("metrics from an array: %v", ds.Metrics)
	}
}

func TestDomainState_MissingFileIsNotFound(t *testing.T) {
	s := New(t.TempDir())
	ds, err := s.ReadDomainState("agent/state/backlog.json")
	if err != nil || ds.Found {
		t.Fatalf("missing file: %+v, %v", ds, err)
	}
}

func TestDomainState_InvalidJSONIsAnError(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.Path("agent/state/backlog.json"), `{"last_run": "2026-04-10T00:00:00Z",`)
	ds, err := s.ReadDomainState("agent/state/backlog.json")
	if err == nil {
		t.Fatalf("invalid JSON read as %+v", ds)
	}
	if ds.Found {
		t.Fatal("invalid file reported as found")
	}
}

func TestLens_ActiveThreshold(t *testing.T) {
	l := decode[Lens](t, `{"schema_version": "1.0.0", "domain": "d", "last_updated": "2026-04-14T03:14:00Z",
	  "focus_items": [{"item": "low", "confidence": 0.59}, {"item": "edge", "confidence": 0.6}, {"item": "high", "confidence": 0.9}],
	  "learned_thresholds": [{"item": "t-low", "confidence": 0.3, "value": 1}, {"item": "t-edge", "confidence": 0.6, "value": 2}],
	  "discovered_signals": [{"item": "s-low", "confidence": 0.1}],
	  "evidence": [{"cycle": 1}], "deprecated_items": [{"item": "gone"}]}`)
	a := l.Active()
	names := func(items []LensItem) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Item)
		}
		return out
	}
	if got := names(a.FocusItems); !reflect.DeepEqual(got, []string{"edge", "high"}) {
		t.Fatalf("active focus items %v", got)
	}
	if got := names(a.LearnedThresholds); !reflect.DeepEqual(got, []string{"t-edge"}) {
		t.Fatalf("active thresholds %v", got)
	}
	if got := names(a.DiscoveredSignals); !reflect.DeepEqual(got, []string{"s-low"}) {
		t.Fatalf("discovered signals %v", got)
	}
}

func TestLens_InitAndCorrupt(t *testing.T) {
	s := New(t.TempDir())
	now := time.Date(2026, 4, 14, 5, 14, 0, 0, time.FixedZone("CEST", 2*3600))
	created, err := s.InitLens("ux_evolution", now)
	if err != nil || !created {
		t.Fatalf("InitLens = %v, %v", created, err)
	}
	got := generic(t, []byte(readString(t, s.LensPath("ux_evolution"))))
	want := map[string]any{"schema_version": "1.0.0", "domain": "ux_evolution", "last_updated": "2026-04-14T03:14:00Z",
		"focus_items": []any{}, "learned_thresholds": []any{}, "discovered_signals": []any{}, "evidence": []any{}, "deprecated_items": []any{}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("initial lens %v", got)
	}
	writeFile(t, s.LensPath("ux_evolution"), `{"domain": "ux_evolution", "focus_items": [{"item": "kept", "confidence": 0.8}]}`)
	if created, err := s.InitLens("ux_evolution", now); err != nil || created {
		t.Fatalf("InitLens over an existing lens = %v, %v", created, err)
	}
	if l, _, _ := s.ReadLens("ux_evolution"); len(l.FocusItems) != 1 {
		t.Fatal("InitLens replaced an existing lens")
	}
	writeFile(t, s.LensPath("backlog"), `{"focus_items": [`)
	if _, found, err := s.ReadLens("backlog"); err == nil || found {
		t.Fatalf("corrupt lens: found=%v err=%v", found, err)
	}
}

func TestExternalSignals_NameOrderAndInvalidSkipped(t *testing.T) {
	s := New(t.TempDir())
	if sigs, errs := s.ReadExternalSignals(); len(sigs) != 0 || len(errs) != 0 {
		t.Fatalf("missing directory: %v %v", sigs, errs)
	}
	dir := filepath.Join(s.Root, "agent", "state", "external")
	writeFile(t, filepath.Join(dir, "b.json"), `{"b": 1}`)
	writeFile(t, filepath.Join(dir, "a.json"), `{"a": 1}`)
	writeFile(t, filepath.Join(dir, "c.json"), `{"c":`)
	writeFile(t, filepath.Join(dir, "notes.txt"), `ignored`)
	sigs, errs := s.ReadExternalSignals()
	if len(sigs) != 2 || sigs[0].Name != "a.json" || sigs[1].Name != "b.json" || !json.Valid(sigs[0].Content) {
		t.Fatalf("signals = %+v", sigs)
	}
	if len(errs) != 1 {
		t.Fatalf("errors = %v", errs)
	}
}
