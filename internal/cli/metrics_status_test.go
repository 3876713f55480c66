package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsDemo is a project of six demo cycles (`ooda demo --example
// quickstart`), without symlinks in its path.
func metricsDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(tempRoot(t), "demo")
	var out, errb bytes.Buffer
	if code := Main([]string{"demo", "--example", "quickstart", "--dir", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	return dir
}

// parseMetrics reads the text as Prometheus does, with the strict name
// rules every version accepts.
func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, text)
	}
	return mfs
}

// gaugeOf is the value of the family's series whose labels include the
// pairs given; ok false when there is no such series.
func gaugeOf(mfs map[string]*dto.MetricFamily, name string, pairs ...string) (float64, bool) {
	for _, m := range mfs[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(pairs); i += 2 {
			match = match && labels[pairs[i]] == pairs[i+1]
		}
		if match {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// `ooda status --metrics` prints the numbers of the project named by
// --project, and the same from a subdirectory of it (saying on stderr
// which project it found), without writing to it.
func TestStatusMetrics_ProjectAndSubdirectory(t *testing.T) {
	dir := metricsDemo(t)
	sub := mkdir(t, dir, "src/deep")
	before := statusTree(t, dir)

	code, stdout, stderr := run(t, dir, "status", "--metrics", "--now", "2026-01-06T09:00:00Z")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	mfs := parseMetrics(t, stdout)
	for _, ck := range []struct {
		name  string
		pairs []string
		want  float64
	}{
		{"ooda_cycles_total", nil, 6},
		{"ooda_cycle_results", []string{"result_type", "action_extracted"}, 4},
		{"ooda_domain_confidence_ratio", []string{"domain", "service_health"}, 0.72},
		{"ooda_cost_today_usd", nil, 0.04},
		{"ooda_cost_daily_limit_usd", nil, 10},
		{"ooda_halt_active", nil, 0},
		{"ooda_actions_pending", nil, 1},
	} {
		if got, ok := gaugeOf(mfs, ck.name, ck.pairs...); !ok || got != ck.want {
			t.Errorf("%s%v = %v (present %v), want %v", ck.name, ck.pairs, got, ok, ck.want)
		}
	}
	if mfs["ooda_cycles_total"].GetType() != dto.MetricType_COUNTER || mfs["ooda_halt_active"].GetType() != dto.MetricType_GAUGE {
		t.Errorf("types: %v %v", mfs["ooda_cycles_total"].GetType(), mfs["ooda_halt_active"].GetType())
	}

	t.Chdir(sub)
	var out, errb bytes.Buffer
	code = Main([]string{"status", "--metrics", "--now", "2026-01-06T09:00:00Z"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("from %s: exit %d: %s", sub, code, errb.String())
	}
	if out.String() != stdout {
		t.Errorf("from a subdirectory the output differs:\n%s\nwith --project:\n%s", out.String(), stdout)
	}
	if !strings.Contains(errb.String(), "found from src/deep") {
		t.Errorf("stderr does not say which project was found: %q", errb.String())
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status --metrics wrote to the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A corrupt file is named on stderr as every status view names it, and in
// the text by ooda_state_file_corrupt; what it feeds is left out, the rest
// is printed and the exit is 0.
func TestStatusMetrics_CorruptFileNamed(t *testing.T) {
	dir := metricsDemo(t)
	mkfile(t, dir, "agent/state/evolve/memos.json", `{"score_adjustments": {`)
	code, stdout, stderr := run(t, dir, "status", "--metrics", "--now", "2026-01-06T09:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "[WARN] corrupt state file: " + filepath.Join(dir, "agent/state/evolve/memos.json") + "\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	mfs := parseMetrics(t, stdout)
	if v, ok := gaugeOf(mfs, "ooda_state_file_corrupt", "file", "agent/state/evolve/memos.json"); !ok || v != 1 {
		t.Errorf("the corrupt file is not named in the text:\n%s", stdout)
	}
	for _, name := range []string{"ooda_memos_pending", "ooda_interventions_active"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("%s is printed from a corrupt file", name)
		}
	}
	if v, ok := gaugeOf(mfs, "ooda_cycles_total"); !ok || v != 6 {
		t.Errorf("ooda_cycles_total = %v, %v", v, ok)
	}
}

// --metrics is a view of its own and prints text, never JSON; an invalid
// configuration is a configuration error, with nothing on stdout for a
// cron job to install.
func TestStatusMetrics_Usage(t *testing.T) {
	dir := metricsDemo(t)
	for _, args := range [][]string{
		{"status", "--metrics", "--json"},
		{"status", "--metrics", "--scorecard"},
		{"status", "--metrics", "--share"},
		{"status", "--metrics", "--window", "3"},
	} {
		code, stdout, stderr := run(t, dir, args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "status: --") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	// The message for the other views alone is as it was.
	if _, _, stderr := run(t, dir, "status", "--orient", "--share"); !strings.Contains(stderr, "status: --orient, --scorecard and --share are separate views; give one") {
		t.Errorf("stderr %q", stderr)
	}
	mkfile(t, dir, "config.json", `{"domains": {"api": {"weight": -1}}}`)
	code, stdout, stderr := run(t, dir, "status", "--metrics")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "config.json") {
		t.Errorf("invalid config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
