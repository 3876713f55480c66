package state

import (
	"reflect"
	"strings"
	"testing"
)

// A value of the wrong type in a domain state file is a warning naming
// the file and the JSON pointer, never a silent zero: a last_run written
// as a number would otherwise make the domain look as if it never ran,
// and alerts written as a string would never fire.
func TestFirstDomainState_WrongTypesAreWarned(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // substrings, one warning each, in order
	}{
		{"last_run a number", `{"last_run": 1767225600}`,
			[]string{"agent/state/service_health.json: /last_run: 1767225600 is not a string; not used"}},
		{"last_run not a time", `{"last_run": "yesterday"}`,
			[]string{`agent/state/service_health.json: /last_run: "yesterday" is not a time (write RFC 3339 UTC`}},
		{"legacy last_check an object", `{"last_check": {"at": "2026-03-02T09:00:00Z"}}`,
			[]string{"/last_check: an object is not a string; not used"}},
		{"status an object", `{"status": {"ok": true}}`,
			[]string{"/status: an object is not a string; not used"}},
		{"alerts a string", `{"alerts": "disk full"}`,
			[]string{`/alerts: "disk full" is not an array of alerts; no alert read`}},
		{"alert of the wrong kind", `{"alerts": [42, {"severity": 3}]}`,
			[]string{"/alerts/0: 42 is not an alert", "/alerts/1: an object is not an alert"}},
		{"severity misspelt", `{"alerts": [{"severity": "critcal", "message": "down"}, {"message": "bare"}]}`,
			[]string{`/alerts/0/severity: "critcal" is not info, warning or critical; counted as info`, "/alerts/1/severity: missing (info, warning or critical); counted as info"}},
		{"run_count a string", `{"run_count": "7"}`,
			[]string{`/run_count: "7" is a string, not an integer; read as 7`}},
		{"run_count a word", `{"run_count": "many"}`,
			[]string{`/run_count: "many" is not an integer; not used`}},
		{"metrics an array", `{"metrics": [1, 2]}`,
			[]string{"/metrics: an array is not an object of numbers; no metric read"}},
		{"metric a word", `{"metrics": {"p95_ms": "fast", "errors": "3"}}`,
			[]string{`/metrics/p95_ms: "fast" is not a number; not used`, `/metrics/errors: "3" is a string, not a number; read as 3`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := readDomain(t, tc.doc)
			if len(ds.Warnings) != len(tc.want) {
				t.Fatalf("warnings %q, want %d like %q", ds.Warnings, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(ds.Warnings[i], w) || !strings.HasPrefix(ds.Warnings[i], "agent/state/service_health.json: /") {
					t.Errorf("warning %d = %q, want it to name the file and contain %q", i, ds.Warnings[i], w)
				}
			}
		})
	}
}

// The values that are read are still read: a coerced run_count and
// metric, a string alert, an unknown severity as info.
func TestFirstDomainState_ReadValuesKept(t *testing.T) {
	ds := readDomain(t, `{"run_count": "7", "metrics": {"errors": "3", "p95": 240}, "alerts": ["disk", {"severity": "sev-2"}], "status": "ok"}`)
	if ds.RunCount != 7 || ds.Status != "ok" {
		t.Fatalf("run_count %d status %q", ds.RunCount, ds.Status)
	}
	if want := map[string]float64{"errors": 3, "p95": 240}; !reflect.DeepEqual(ds.Metrics, want) {
		t.Fatalf("metrics %v, want %v", ds.Metrics, want)
	}
	if want := []Alert{{Severity: "warning", Message: "disk"}, {Severity: "info"}}; !reflect.DeepEqual(ds.Alerts, want) {
		t.Fatalf("alerts %+v, want %+v", ds.Alerts, want)
	}
}

// A well-formed file, with nulls where a skill has nothing to say, reads
// without a warning: the warnings are for mistakes only.
func TestFirstDomainState_WellFormedIsQuiet(t *testing.T) {
	ds := readDomain(t, `{"last_run": "2026-03-02T09:00:00Z", "last_check": null, "status": "ok", "run_count": 3,
	  "alerts": [{"severity": "Warning", "message": "slow"}, "disk"], "metrics": {"p95": 240, "none": null}, "custom": {"any": "thing"}}`)
	if len(ds.Warnings) != 0 {
		t.Fatalf("warnings for a well-formed file: %q", ds.Warnings)
	}
	if ds := readDomain(t, `{"alerts": null, "metrics": null, "status": null, "run_count": null, "last_run": null}`); len(ds.Warnings) != 0 {
		t.Fatalf("warnings for nulls: %q", ds.Warnings)
	}
}

// A file full of mistakes says a few, then how many more.
func TestFirstDomainState_WarningsBounded(t *testing.T) {
	ds := readDomain(t, `{"last_run": 1, "last_check": 2, "status": 3, "run_count": "x", "alerts": "y", "metrics": "z"}`)
	if len(ds.Warnings) != maxLooseWarnings+1 || !strings.HasSuffix(ds.Warnings[maxLooseWarnings], "1 more values not taken as written") {
		t.Fatalf("warnings %q", ds.Warnings)
	}
}
