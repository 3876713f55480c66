package metrics_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/secret"
)

// demoNow is four hours after the demo's last cycle, on the day of its
// cost ledger.
var demoNow = time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC)

// demoDir is a project made by `ooda demo --example quickstart` once for
// the whole package (TestMain); each test copies it.
var demoDir string

func TestMain(m *testing.M) {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	os.Setenv("OODA_NO_CACHE", "1")
	tmp, err := os.MkdirTemp("", "ooda-metrics-demo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoDir = filepath.Join(tmp, "demo")
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"demo", "--example", "quickstart", "--dir", demoDir}, strings.NewReader(""), &out, &errb); code != 0 {
		fmt.Fprintf(os.Stderr, "ooda demo: exit %d\n%s%s", code, out.String(), errb.String())
		os.RemoveAll(tmp)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// demo copies the demo project into a fresh directory named name.
func demo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(demoDir)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expose is the text `ooda status --metrics` prints for the project at dir.
func expose(t *testing.T, dir string, now time.Time) (string, *metrics.Reading) {
	t.Helper()
	r := metrics.Read(metrics.Project{Dir: dir}, now)
	var b strings.Builder
	if err := metrics.Write(&b, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String(), r
}

// parse reads the exposition as Prometheus does, with the strict (legacy)
// name rules every Prometheus and node_exporter version accepts, and lints
// it against the naming conventions.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	return mfs
}

// series is one sample: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

// samples lists the family's samples, with its type checked.
func samples(t *testing.T, mfs map[string]*dto.MetricFamily, name string, typ dto.MetricType) []series {
	t.Helper()
	mf, ok := mfs[name]
	if !ok {
		t.Errorf("%s is missing", name)
		return nil
	}
	if mf.GetType() != typ {
		t.Errorf("%s is a %v, want a %v", name, mf.GetType(), typ)
	}
	var out []series
	for _, m := range mf.GetMetric() {
		s := series{labels: map[string]string{}}
		for _, l := range m.GetLabel() {
			s.labels[l.GetName()] = l.GetValue()
		}
		switch typ {
		case dto.MetricType_COUNTER:
			s.value = m.GetCounter().GetValue()
		default:
			s.value = m.GetGauge().GetValue()
		}
		out = append(out, s)
	}
	return out
}

// value is the one sample of name whose labels include want.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, typ dto.MetricType, want ...string) float64 {
	t.Helper()
	var found []float64
	for _, s := range samples(t, mfs, name, typ) {
		ok := true
		for i := 0; i+1 < len(want); i += 2 {
			if v, has := s.labels[want[i]]; !has || v != want[i+1] {
				ok = false
			}
		}
		if ok {
			found = append(found, s.value)
		}
	}
	if len(found) != 1 {
		t.Errorf("%s%v: %d samples, want 1", name, want, len(found))
		return math.NaN()
	}
	return found[0]
}

const (
	g = dto.MetricType_GAUGE
	c = dto.MetricType_COUNTER
)

// tree records every file under dir with its mode, time and content, to
// show that reading the metrics wrote, moved and created nothing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := p + " " + info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// The demo's six cycles, as `ooda status` and its scorecard show them
// (docs/status.md), come out as numbers of the right names, types and
// labels; reading them writes nothing.
func TestDemoProjectMetrics(t *testing.T) {
	dir := demo(t, "p")
	before := tree(t, dir)
	text, r := expose(t, dir, demoNow)
	if after := tree(t, dir); after != before {
		t.Fatalf("reading the metrics changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if len(r.Corrupt) != 0 || len(r.Warnings) != 0 {
		t.Errorf("corrupt files in a sound project: %v %v", r.Corrupt, r.Warnings)
	}
	mfs := parse(t, text)

	checks := []struct {
		name   string
		typ    dto.MetricType
		labels []string
		want   float64
	}{
		{"ooda_halt_active", g, nil, 0},
		{"ooda_cycles_total", c, nil, 6},
		{"ooda_last_cycle_timestamp_seconds", g, nil, float64(time.Date(2026, 1, 6, 5, 0, 0, 0, time.UTC).Unix())},
		{"ooda_cycle_in_progress", g, nil, 0},
		{"ooda_level", g, nil, 2},
		{"ooda_cycle_results", g, []string{"result_type", "action_extracted"}, 4},
		{"ooda_cycle_results", g, []string{"result_type", "observe"}, 1},
		{"ooda_cycle_results", g, []string{"result_type", "futile"}, 1},
		{"ooda_cycle_results", g, []string{"result_type", "pr_merged"}, 0},
		{"ooda_domain_confidence_ratio", g, []string{"domain", "service_health"}, 0.72},
		{"ooda_domain_confidence_ratio", g, []string{"domain", "test_coverage"}, 0.72},
		{"ooda_domain_confidence_ratio", g, []string{"domain", "backlog"}, 0.7},
		{"ooda_domain_status", g, []string{"domain", "service_health", "status", "healthy"}, 1},
		{"ooda_domain_status", g, []string{"domain", "test_coverage", "status", "passed"}, 1},
		{"ooda_domain_status", g, []string{"domain", "backlog", "status", "idle"}, 1},
		{"ooda_domain_alerts", g, []string{"domain", "service_health"}, 0},
		{"ooda_domain_last_run_timestamp_seconds", g, []string{"domain", "test_coverage"}, float64(time.Date(2026, 1, 5, 17, 0, 0, 0, time.UTC).Unix())},
		{"ooda_domain_executions_total", c, []string{"domain", "service_health"}, 3},
		{"ooda_domain_executions_total", c, []string{"domain", "backlog"}, 1},
		{"ooda_skill_executions_total", c, nil, 5},
		{"ooda_actions_pending", g, nil, 1},
		{"ooda_actions_added_total", c, nil, 1},
		{"ooda_actions_resolved_total", c, nil, 0},
		{"ooda_prs_created_total", c, nil, 0},
		{"ooda_memos_pending", g, nil, 0},
		{"ooda_interventions_active", g, nil, 0},
		{"ooda_saturation_cycles", g, nil, 0},
		{"ooda_saturation_halt_threshold_cycles", g, nil, 15},
		{"ooda_silent_failures", g, nil, 0},
		{"ooda_silent_failures_halt_threshold", g, nil, 3},
		{"ooda_cost_today_usd", g, nil, 0.04},
		{"ooda_cost_daily_limit_usd", g, nil, 10},
		{"ooda_cost_warning_threshold_ratio", g, nil, 0.8},
		{"ooda_cost_usd_total", c, nil, 0.09},
		{"ooda_scorecard_loop_value_ratio", g, nil, 0.15},
		{"ooda_scorecard_futile_cycles_ratio", g, nil, 0.167},
		{"ooda_scorecard_task_completion_ratio", g, nil, 0},
		{"ooda_scorecard_mission_hit_ratio", g, nil, 1},
		{"ooda_scorecard_lesson_application_ratio", g, nil, 0.833},
		{"ooda_scorecard_artifact_bar_ratio", g, nil, 0.65},
		{"ooda_scorecard_grade_score_ratio", g, nil, 0.31},
		{"ooda_session_running", g, nil, 0},
		{"ooda_session_quarantined_targets", g, nil, 0},
	}
	for _, ck := range checks {
		if got := value(t, mfs, ck.name, ck.typ, ck.labels...); got != ck.want {
			t.Errorf("%s%v = %v, want %v", ck.name, ck.labels, got, ck.want)
		}
	}
	// The demo measures its cycles' real durations.
	if d := value(t, mfs, "ooda_last_cycle_duration_seconds", g); !(d >= 0) {
		t.Errorf("ooda_last_cycle_duration_seconds = %v", d)
	}
	// Only the configured domains, one series each.
	var domains []string
	for _, s := range samples(t, mfs, "ooda_domain_confidence_ratio", g) {
		domains = append(domains, s.labels["domain"])
	}
	slices.Sort(domains)
	if want := []string{"backlog", "service_health", "test_coverage"}; !slices.Equal(domains, want) {
		t.Errorf("domains %v, want %v", domains, want)
	}
	// Without their files (no goals, no session, no PR) or a denominator,
	// these are left out rather than shown as 0.
	for _, name := range []string{"ooda_goals_active", "ooda_session_iteration", "ooda_scorecard_pr_merge_ratio", "ooda_scorecard_goal_progress_ratio", "ooda_scorecard_artifact_quality_ratio", "ooda_scorecard_cost_per_successful_cycle_usd", "ooda_state_file_corrupt"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("%s is present: %v", name, mfs[name])
		}
	}

	// Another day: the ledger is yesterday's, today's spend is 0.
	mfs = parse(t, must(expose(t, dir, demoNow.Add(24*time.Hour))))
	if got := value(t, mfs, "ooda_cost_today_usd", g); got != 0 {
		t.Errorf("the next day's cost = %v, want 0", got)
	}
}

func must(s string, _ *metrics.Reading) string { return s }

// A HALT file, a goal, a running session and an annotation moving a cycle
// to pr_merged_held all show in the next reading.
func TestReadingFollowsTheState(t *testing.T) {
	dir := demo(t, "p")
	write(t, dir, "agent/safety/HALT", "deploy freeze\ncreated_at: 2026-01-06T08:00:00Z\n")
	write(t, dir, "agent/state/evolve/goals.json", `{"goals": [{"id": "g1", "status": "active", "progress": 0.4}, {"id": "g2", "status": "done"}]}`)
	write(t, dir, "agent/state/evolve/cycle_log.annotations.jsonl", `{"cycle_id": 5, "annotate": {"result_type": "pr_merged_held", "quality_multiplier": 1, "pr_number": 7}}`+"\n")
	write(t, dir, "agent/state/evolve/sessions/s1.json", `{"id": "s1", "status": "running", "started_at": "2026-01-06T06:00:00Z", "iteration": 2, "max_iterations": 10, "quarantined": ["service_health"]}`)
	text, r := expose(t, dir, demoNow)
	if len(r.Corrupt) != 0 {
		t.Fatalf("corrupt: %v %v", r.Corrupt, r.Warnings)
	}
	mfs := parse(t, text)
	for _, ck := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ooda_halt_active", nil, 1},
		{"ooda_goals_active", nil, 1},
		{"ooda_scorecard_goal_progress_ratio", nil, 0.4},
		{"ooda_cycle_results", []string{"result_type", "action_extracted"}, 3},
		{"ooda_cycle_results", []string{"result_type", "pr_merged_held"}, 1},
		{"ooda_scorecard_task_completion_ratio", nil, 0.167},
		{"ooda_scorecard_pr_merge_and_hold_ratio", nil, 1},
		{"ooda_session_running", nil, 1},
		{"ooda_session_iteration", nil, 2},
		{"ooda_session_max_iterations", nil, 10},
		{"ooda_session_quarantined_targets", nil, 1},
	} {
		if got := value(t, mfs, ck.name, g, ck.labels...); got != ck.want {
			t.Errorf("%s%v = %v, want %v", ck.name, ck.labels, got, ck.want)
		}
	}
}

// A collector registered once reads the project at every scrape: a server
// sees the HALT file written after it started.
func TestCollectorReadsAtEveryScrape(t *testing.T) {
	dir := demo(t, "p")
	c := metrics.NewCollector(metrics.Project{Dir: dir}, func() time.Time { return demoNow })
	scrape := func() map[string]*dto.MetricFamily {
		var b strings.Builder
		if err := c.Write(&b); err != nil {
			t.Fatalf("Write: %v", err)
		}
		return parse(t, b.String())
	}
	if got := value(t, scrape(), "ooda_halt_active", g); got != 0 {
		t.Fatalf("halt before = %v", got)
	}
	write(t, dir, "agent/safety/HALT", "stop\n")
	if got := value(t, scrape(), "ooda_halt_active", g); got != 1 {
		t.Errorf("halt after = %v, want 1", got)
	}
}

// Corrupt files: each is named by ooda_state_file_corrupt, the metrics it
// feeds are left out (not shown as a default a graph would take for a
// measurement), the others remain, and a named pipe where a file should
// be is refused without blocking.
func TestCorruptFilesAreNamedAndTheirMetricsLeftOut(t *testing.T) {
	dir := demo(t, "p")
	ev := "agent/state/evolve/"
	write(t, dir, ev+"state.json", `{"cycle_count": 6, "decision_log": [`)
	write(t, dir, ev+"metrics.json", "")
	write(t, dir, "agent/state/service_health.json", `{"status": "healthy", "alerts": [`)
	if err := os.Remove(filepath.Join(dir, ev+"confidence.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ev+"confidence.json"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// A cycle log that is a pipe: the scorecard falls back on outcomes.json.
	if err := os.Remove(filepath.Join(dir, ev+"cycle_log.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ev+"cycle_log.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	text, r := expose(t, dir, demoNow)
	if after := tree(t, dir); after != before {
		t.Fatalf("reading the metrics changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	mfs := parse(t, text)

	wantCorrupt := []string{ev + "confidence.json", ev + "cycle_log.jsonl", ev + "metrics.json", ev + "state.json", "agent/state/service_health.json"}
	var named []string
	for _, s := range samples(t, mfs, "ooda_state_file_corrupt", g) {
		if s.value != 1 {
			t.Errorf("ooda_state_file_corrupt%v = %v, want 1", s.labels, s.value)
		}
		named = append(named, s.labels["file"])
	}
	slices.Sort(named)
	if !slices.Equal(named, wantCorrupt) || !slices.Equal(r.Corrupt, wantCorrupt) {
		t.Errorf("corrupt files named %v (Reading.Corrupt %v), want %v", named, r.Corrupt, wantCorrupt)
	}
	for _, w := range r.Warnings {
		if !filepath.IsAbs(strings.Fields(w)[0]) {
			t.Errorf("warning %q does not name the file's path", w)
		}
	}

	for _, name := range []string{
		// state.json
		"ooda_cycles_total", "ooda_last_cycle_timestamp_seconds", "ooda_last_cycle_duration_seconds", "ooda_saturation_cycles", "ooda_silent_failures", "ooda_cycle_in_progress",
		// confidence.json
		"ooda_domain_confidence_ratio",
		// metrics.json
		"ooda_domain_executions_total", "ooda_skill_executions_total", "ooda_prs_created_total", "ooda_actions_added_total",
	} {
		if mf, ok := mfs[name]; ok {
			t.Errorf("%s is shown from a corrupt file: %v", name, mf)
		}
	}
	// The corrupt domain file: its alerts and status are left out, the
	// other domains' remain.
	for _, s := range samples(t, mfs, "ooda_domain_alerts", g) {
		if s.labels["domain"] == "service_health" {
			t.Errorf("alerts of a corrupt domain file: %v", s)
		}
	}
	for _, s := range samples(t, mfs, "ooda_domain_status", g) {
		if s.labels["domain"] == "service_health" {
			t.Errorf("status of a corrupt domain file: %v", s)
		}
	}
	if got := value(t, mfs, "ooda_domain_status", g, "domain", "backlog", "status", "idle"); got != 1 {
		t.Errorf("backlog status = %v", got)
	}
	// From the files that are sound: the queue, the ledger, and the
	// results from outcomes.json in place of the cycle log.
	if got := value(t, mfs, "ooda_actions_pending", g); got != 1 {
		t.Errorf("ooda_actions_pending = %v", got)
	}
	if got := value(t, mfs, "ooda_cost_today_usd", g); got != 0.04 {
		t.Errorf("ooda_cost_today_usd = %v", got)
	}
	if got := value(t, mfs, "ooda_cycle_results", g, "result_type", "action_extracted"); got != 4 {
		t.Errorf("action_extracted from outcomes.json = %v, want 4", got)
	}
	if got := value(t, mfs, "ooda_halt_active", g); got != 0 {
		t.Errorf("ooda_halt_active = %v", got)
	}
}

// Missing files are not corrupt: nothing is named, and what they would
// feed is left out; what the configuration says is still there.
func TestMissingFilesLeaveTheirMetricsOut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "config.json", `{"domains": {"api": {"weight": 1, "primary_skill": "/x"}}, "skills": {"/x": {"command": ["/bin/true"]}}, "safety": {"skill_allowlist": ["/x"]}, "cost": {"daily_limit_usd": 5}}`)
	text, r := expose(t, dir, demoNow)
	if len(r.Corrupt) != 0 {
		t.Errorf("a project without state has corrupt files: %v", r.Corrupt)
	}
	mfs := parse(t, text)
	var names []string
	for n := range mfs {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{
		"ooda_cost_daily_limit_usd", "ooda_cost_warning_threshold_ratio", "ooda_domain_status", "ooda_halt_active", "ooda_level",
		"ooda_saturation_halt_threshold_cycles", "ooda_scorecard_artifact_bar_ratio", "ooda_session_quarantined_targets",
		"ooda_session_running", "ooda_silent_failures_halt_threshold",
	}
	if !slices.Equal(names, want) {
		t.Errorf("families of a project that never ran:\n got %v\nwant %v", names, want)
	}
	if got := value(t, mfs, "ooda_domain_status", g, "domain", "api", "status", "unknown"); got != 1 {
		t.Errorf("status of a domain that never ran = %v", got)
	}
	if got := value(t, mfs, "ooda_cost_daily_limit_usd", g); got != 5 {
		t.Errorf("cap = %v", got)
	}
}

// Every label value from a state file may hold anything: a quote, a
// newline and a brace that would end the label set, markup, a terminal
// escape, a secret. Each comes back from the parser as it
// was (the exposition escapes the quote, backslash and newline), except
// what must not reach a terminal or a log (an escape sequence, a carriage
// return, a bidirectional override), which is escaped as ooda escapes it
// everywhere, and the secret, which is masked. A log's unknown result type
// cannot add a series.
func TestHostileLabelValues(t *testing.T) {
	const tok = "ghp_metricsLabelToken0123456789"
	secret.Register(tok)
	dir := demo(t, "p")
	write(t, dir, "agent/state/service_health.json", `{"status": "a\"b\n}", "alerts": []}`)
	write(t, dir, "agent/state/test_coverage.json", `{"status": "<script>alert(1)</script>", "alerts": []}`)
	write(t, dir, "agent/state/backlog.json", `{"status": "x\u001b[2J\r`+tok+`\u202e", "alerts": []}`)
	log, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, rt := range []string{`a\"b\n}`, "<script>", "z1", "z2"} {
		log = fmt.Appendf(log, `{"cycle_id": %d, "result_type": "%s", "quality_multiplier": 0}`+"\n", 7+i, rt)
	}
	write(t, dir, "agent/state/evolve/cycle_log.jsonl", string(log))

	text, _ := expose(t, dir, demoNow)
	for _, bad := range []string{"\x1b", "\r", "\u202e", tok, "\n}"} {
		if strings.Contains(text, bad) {
			t.Errorf("the exposition carries %q:\n%s", bad, text)
		}
	}
	mfs := parse(t, text)
	status := map[string]string{}
	for _, s := range samples(t, mfs, "ooda_domain_status", g) {
		status[s.labels["domain"]] = s.labels["status"]
	}
	want := map[string]string{
		"service_health": "a\"b\n}",
		"test_coverage":  "<script>alert(1)</script>",
		"backlog":        `x\x1b[2J\r***\u202e`,
	}
	for d, w := range want {
		if status[d] != w {
			t.Errorf("status of %s = %q, want %q", d, status[d], w)
		}
	}
	var types []string
	for _, s := range samples(t, mfs, "ooda_cycle_results", g) {
		types = append(types, s.labels["result_type"])
	}
	if slices.Contains(types, "<script>") || slices.Contains(types, "a\"b\n}") || slices.Contains(types, "z1") {
		t.Errorf("an unknown result type became a series: %v", types)
	}
	if got := value(t, mfs, "ooda_cycle_results", g, "result_type", "other"); got != 4 {
		t.Errorf("other = %v, want 4", got)
	}
}

// A skill's status of any length is cut: a long label value would make a
// Prometheus with label_value_length_limit refuse the whole scrape.
func TestLongStatusIsCut(t *testing.T) {
	dir := demo(t, "p")
	write(t, dir, "agent/state/backlog.json", `{"status": "`+strings.Repeat("é", 5000)+`"}`)
	mfs := parse(t, must(expose(t, dir, demoNow)))
	for _, s := range samples(t, mfs, "ooda_domain_status", g) {
		if s.labels["domain"] == "backlog" {
			if want := strings.Repeat("é", 63) + "…"; s.labels["status"] != want {
				t.Errorf("status = %q (%d bytes), want 64 characters", s.labels["status"], len(s.labels["status"]))
			}
		}
	}
}

// Several projects: every series is labelled with its project, named by
// the directory (told apart by its parent when two share a name, a
// directory given twice listed once); directory names are label values
// like any other; a directory without a configuration is named, and the
// others still read.
func TestManyProjects(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) string {
		d := filepath.Join(root, rel)
		if err := os.CopyFS(d, os.DirFS(demoDir)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := mk("a/api"), mk("b/api")
	hostile := mk("x/a\"b\n}")
	script := mk("x/<script>")
	write(t, b, "agent/safety/HALT", "stop\n")
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	projects, err := metrics.Projects([]string{a, b, hostile, script, empty, a})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range projects {
		names = append(names, p.Name)
	}
	if want := []string{"a/api", "b/api", "a\"b\n}", "<script>", "empty"}; !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	var out strings.Builder
	if err := metrics.WriteMany(&out, projects, demoNow); err != nil {
		t.Fatalf("WriteMany: %v", err)
	}
	mfs := parse(t, out.String())
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			has := false
			for _, l := range m.GetLabel() {
				has = has || l.GetName() == "project"
			}
			if !has {
				t.Errorf("%s has a series without a project label", name)
			}
		}
	}
	for _, ck := range []struct {
		project string
		want    float64
	}{{"a/api", 0}, {"b/api", 1}, {"a\"b\n}", 0}, {"<script>", 0}} {
		if got := value(t, mfs, "ooda_halt_active", g, "project", ck.project); got != ck.want {
			t.Errorf("halt of %q = %v, want %v", ck.project, got, ck.want)
		}
		if got := value(t, mfs, "ooda_cycles_total", c, "project", ck.project); got != 6 {
			t.Errorf("cycles of %q = %v, want 6", ck.project, got)
		}
	}
	if got := value(t, mfs, "ooda_state_file_corrupt", g, "project", "empty", "file", "config.json"); got != 1 {
		t.Errorf("the directory without a configuration is not named: %v", got)
	}
	for _, s := range samples(t, mfs, "ooda_cycles_total", c) {
		if s.labels["project"] == "empty" {
			t.Errorf("a directory without a configuration has cycles: %v", s)
		}
	}
}

// Names are the shortest path ends that tell the directories apart.
func TestProjectNames(t *testing.T) {
	cases := []struct {
		dirs, want []string
	}{
		{[]string{"/srv/api", "/srv/web"}, []string{"api", "web"}},
		{[]string{"/a/api", "/b/api", "/srv/web"}, []string{"a/api", "b/api", "web"}},
		{[]string{"/x/a/api", "/y/a/api"}, []string{"x/a/api", "y/a/api"}},
		{[]string{"/api", "/x/api"}, []string{"/api", "x/api"}},
		{[]string{"/srv/api/", "/srv/api", "/srv/./api"}, []string{"api"}},
	}
	for _, tc := range cases {
		ps, err := metrics.Projects(tc.dirs)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Projects(%q) = %q, want %q", tc.dirs, got, tc.want)
		}
	}
	if _, err := metrics.Projects(nil); err == nil {
		t.Error("no directory: no error")
	}
	if _, err := metrics.NewManyCollector([]metrics.Project{{Name: "p", Dir: "/a"}, {Name: "p", Dir: "/b"}}, time.Now); err == nil {
		t.Error("two projects of one name: no error")
	}
}

// ooda_skill_duration_seconds counts each cycle line's skill_seconds in
// its skill's histogram: a configured skill under its configured name
// however the line spells it, any other name as other (a log cannot
// create series), and a value that is no duration — negative, a string,
// past float64, longer than a week — not at all, nor a line without one.
func TestSkillDurationHistogram(t *testing.T) {
	dir := demo(t, "durations")
	line := func(cycle int, skill, secs string) string {
		name, _ := json.Marshal(skill)
		l := fmt.Sprintf(`{"cycle_id":%d,"timestamp":"2026-01-05T09:00:00Z","domain":"backlog","skill":%s,"result":"success","result_type":"observe","quality_multiplier":0.1`, cycle, name)
		if secs != "" {
			l += `,"skill_seconds":` + secs
		}
		return l + "}\n"
	}
	write(t, dir, "agent/state/evolve/cycle_log.jsonl", line(1, "/scan-health", "0.004")+
		line(2, "scan-health", "0.2")+
		line(3, "/check-tests", "30")+
		line(4, "/evil\x1b[31m<script>", "1")+
		line(5, "/plan-backlog", "")+
		line(6, "/plan-backlog", "-1")+
		line(7, "/plan-backlog", `"fast"`)+
		line(8, "/plan-backlog", "1e400")+
		line(10, "/plan-backlog", "1e300")+
		line(9, "/plan-backlog", "5000"))
	write(t, dir, "agent/state/evolve/cycle_log.annotations.jsonl", `{"cycle_id":3,"annotate":{"skill_seconds":31}}`+"\n")
	text, _ := expose(t, dir, time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC))
	mf := parse(t, text)["ooda_skill_duration_seconds"]
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("ooda_skill_duration_seconds is missing or not a histogram:\n%s", text)
	}
	type want struct {
		count   uint64
		sum     float64
		buckets map[float64]uint64 // some cumulative counts
	}
	wants := map[string]want{
		"/scan-health":  {2, 0.204, map[float64]uint64{0.01: 1, 0.1: 1, 0.25: 2, 3600: 2}},
		"/check-tests":  {1, 31, map[float64]uint64{30: 0, 60: 1}},
		"other":         {1, 1, map[float64]uint64{0.5: 0, 1: 1}},
		"/plan-backlog": {1, 5000, map[float64]uint64{3600: 0}},
	}
	got := map[string]bool{}
	for _, m := range mf.GetMetric() {
		var skill string
		for _, l := range m.GetLabel() {
			if l.GetName() == "skill" {
				skill = l.GetValue()
			}
		}
		w, ok := wants[skill]
		if !ok {
			t.Errorf("unexpected series skill=%q", skill)
			continue
		}
		got[skill] = true
		h := m.GetHistogram()
		if h.GetSampleCount() != w.count || math.Abs(h.GetSampleSum()-w.sum) > 1e-9 {
			t.Errorf("skill=%q: count %d sum %v, want %d and %v", skill, h.GetSampleCount(), h.GetSampleSum(), w.count, w.sum)
		}
		for _, b := range h.GetBucket() {
			if n, ok := w.buckets[b.GetUpperBound()]; ok && b.GetCumulativeCount() != n {
				t.Errorf("skill=%q le=%v: %d, want %d", skill, b.GetUpperBound(), b.GetCumulativeCount(), n)
			}
		}
		if len(h.GetBucket()) != 18 {
			t.Errorf("skill=%q: %d buckets, want 17 and +Inf", skill, len(h.GetBucket()))
		}
	}
	for s := range wants {
		if !got[s] {
			t.Errorf("no series for skill=%q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "<script>") || strings.Contains(text, "\x1b") {
		t.Errorf("a log's skill name reached the exposition:\n%s", text)
	}
}
