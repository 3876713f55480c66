package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/dashboard"
)

// figure is the markup of the plot id of page, from its <figure> to its
// end.
func figure(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `<figure class="chart" id="chart-`+id+`">`)
	if start < 0 {
		t.Fatalf("the page has no plot %q", id)
	}
	end := strings.Index(page[start:], "</figure>")
	if end < 0 {
		t.Fatalf("the plot %q is not closed", id)
	}
	return page[start : start+end]
}

var markRE = regexp.MustCompile(`<(?:circle|rect)\b[^>]*\bclass="(point[^"]*)"[^>]*>`)
var attrRE = regexp.MustCompile(`\b(data-[a-z]+)="([^"]*)"`)

// point is one data point of a plot: its classes and data- attributes.
type point struct {
	class string
	data  map[string]string
}

func points(fig string) []point {
	var out []point
	for _, m := range markRE.FindAllStringSubmatch(fig, -1) {
		p := point{class: m[1], data: map[string]string{}}
		for _, a := range attrRE.FindAllStringSubmatch(m[0], -1) {
			p.data[a[1]] = html.UnescapeString(a[2])
		}
		out = append(out, p)
	}
	return out
}

func (p point) is(class string) bool {
	return strings.Contains(" "+p.class+" ", " "+class+" ")
}

// logLines are the cycle lines of the project's cycle_log.jsonl.
func logLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["annotate"]; !ok {
			out = append(out, m)
		}
	}
	return out
}

// setLogField sets key of the cycle lines of the project's log to the
// value given for their cycle.
func setLogField(t *testing.T, dir string, vals map[int]any, key string) {
	t.Helper()
	p := filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		if _, note := m["annotate"]; !note {
			if v, ok := vals[int(m["cycle_id"].(float64))]; ok {
				m[key] = v
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every plot of the demo project has one point per cycle (or per day,
// per window), each naming the cycle and the value it stands for.
func TestPlotPointsCountTheCycles(t *testing.T) {
	dir := demo(t, "", "demo")
	page := get(t, serve(t, dir).URL+"/").body
	lines := logLines(t, dir)
	if len(lines) != 6 {
		t.Fatalf("the demo logs %d cycles, want 6", len(lines))
	}
	if n := strings.Count(page, `<svg class="plot" role="img" aria-label="`); n != 6 {
		t.Errorf("%d plots, want 6 (the artifact has no rubric, the demo no goal)", n)
	}

	// Score: the selected domain of each cycle, filled, at its score; the
	// other domains of the decision log's score tables, hollow.
	others := otherScoredDomains(t, dir)
	if others == 0 {
		t.Fatal("the demo's decision log has no other domain's score: the hollow points are not tested")
	}
	winners, hollow := 0, 0
	for _, p := range points(figure(t, page, "score")) {
		switch {
		case p.is("winner"):
			c, _ := strconv.Atoi(p.data["data-cycle"])
			if c < 1 || c > 6 {
				t.Errorf("a winner point of cycle %q", p.data["data-cycle"])
				continue
			}
			l := lines[c-1]
			if p.data["data-domain"] != l["domain"] || p.data["data-value"] != strconv.FormatFloat(l["score"].(float64), 'f', -1, 64) {
				t.Errorf("cycle %d: winner %s at %s, the log says %v at %v", c, p.data["data-domain"], p.data["data-value"], l["domain"], l["score"])
			}
			winners++
		case p.is("other"):
			hollow++
		}
	}
	if winners != 6 || hollow != others {
		t.Errorf("score plot: %d winner points, %d others; want 6 and %d", winners, hollow, others)
	}

	// Confidence: one point per cycle, the log's confidence, and today's
	// confidence.json of each domain at the last cycle.
	var conf []point
	nowConf := map[string]string{}
	for _, p := range points(figure(t, page, "confidence")) {
		switch p.data["data-source"] {
		case "cycle_log":
			conf = append(conf, p)
		case "now":
			if p.data["data-cycle"] != "6" {
				t.Errorf("today's confidence of %s drawn at cycle %s, want 6", p.data["data-domain"], p.data["data-cycle"])
			}
			nowConf[p.data["data-domain"]] = p.data["data-value"]
		default:
			t.Errorf("a confidence point of the demo, which has no episode or checkpoint: %+v", p)
		}
	}
	if len(conf) != 6 {
		t.Errorf("confidence plot: %d points of the log, want 6", len(conf))
	}
	seen := map[int]bool{}
	for _, p := range conf {
		c, _ := strconv.Atoi(p.data["data-cycle"])
		if c < 1 || c > 6 || seen[c] {
			t.Errorf("a confidence point of cycle %q", p.data["data-cycle"])
			continue
		}
		seen[c] = true
		l := lines[c-1]
		if want := strconv.FormatFloat(l["confidence"].(float64), 'f', -1, 64); p.data["data-value"] != want || p.data["data-domain"] != l["domain"] {
			t.Errorf("confidence point of cycle %d: %s at %s, the log says %v at %s", c, p.data["data-domain"], p.data["data-value"], l["domain"], want)
		}
	}
	if want := confidenceNow(t, dir); !maps.Equal(nowConf, want) {
		t.Errorf("today's confidence drawn: %v, confidence.json: %v", nowConf, want)
	}

	// Result types: the stacked bars count every cycle once.
	sum, byType := 0, map[string]int{}
	for _, p := range points(figure(t, page, "results")) {
		n, _ := strconv.Atoi(p.data["data-value"])
		sum += n
		byType[p.data["data-type"]] += n
	}
	want := map[string]int{}
	for _, l := range lines {
		want[l["result_type"].(string)]++
	}
	if sum != 6 || len(byType) != len(want) {
		t.Errorf("result bars count %d cycles by %v, want 6 by %v", sum, byType, want)
	}
	for k, v := range want {
		if byType[k] != v {
			t.Errorf("result bars: %d %s, want %d", byType[k], k, v)
		}
	}

	// Cost: a bar per day, summing the cycles' cost, and the cap's line.
	costs := map[string]float64{}
	for _, l := range lines {
		costs[l["timestamp"].(string)[:10]] += l["cost_usd"].(float64)
	}
	cost := points(figure(t, page, "cost"))
	if len(cost) != len(costs) {
		t.Errorf("cost plot: %d bars, want %d days", len(cost), len(costs))
	}
	for _, p := range cost {
		v, _ := strconv.ParseFloat(p.data["data-value"], 64)
		if d := v - costs[p.data["data-day"]]; d > 0.005 || d < -0.005 {
			t.Errorf("cost of %s: %v, the log sums %v", p.data["data-day"], v, costs[p.data["data-day"]])
		}
	}
	if !strings.Contains(figure(t, page, "cost"), `class="ref cap"`) {
		t.Error("the cost plot has no cap line")
	}

	// KPIs: a point per window of the scorecard's trend that has a value.
	var sc struct {
		Trend struct {
			Windows []map[string]*float64 `json:"windows"`
		} `json:"trend"`
	}
	if err := json.Unmarshal([]byte(get(t, serve(t, dir).URL+"/api/scorecard").body), &sc); err != nil {
		t.Fatal(err)
	}
	kpis := map[string]int{}
	for _, p := range points(figure(t, page, "kpi")) {
		kpis[p.data["data-series"]]++
	}
	for series, key := range map[string]string{"loop_value": "loop_value_score", "futile_rate": "futile_cycle_rate_pct", "mission_hit": "mission_hit_pct", "artifact_quality": "artifact_quality"} {
		n := 0
		for _, w := range sc.Trend.Windows {
			if w[key] != nil {
				n++
			}
		}
		if kpis[series] != n {
			t.Errorf("KPI plot: %d points of %s, want %d (the trend's windows with a value)", kpis[series], series, n)
		}
	}
	if kpis["loop_value"] == 0 {
		t.Error("the KPI plot has no loop value point")
	}
	if !strings.Contains(figure(t, page, "artifact"), "no quality_rubric is configured") {
		t.Error("the artifact plot of a project without a rubric does not say so")
	}
}

// With a quality rubric, each graded cycle is a point against the
// rubric's bars.
func TestArtifactPlotAgainstTheBars(t *testing.T) {
	dir := demo(t, "", "demo")
	replaceIn(t, dir, "config.json", `"domains":`, `"quality_rubric": {"bar": 0.7, "bar_leap": 0.6, "capture_method": "command", "capture_command": "true", "dimensions": [{"name": "tests", "weight": 1, "targets": [{"metric": "passed", "op": ">=", "value": 1}]}]}, "domains":`)
	setLogField(t, dir, map[int]any{2: 0.55, 5: 0.8}, "artifact_score")
	page := get(t, serve(t, dir).URL+"/").body
	fig := figure(t, page, "artifact")
	ps := points(fig)
	if len(ps) != 2 {
		t.Fatalf("artifact plot: %d points, want 2:\n%s", len(ps), fig)
	}
	if ps[0].data["data-cycle"] != "2" || ps[0].data["data-value"] != "0.55" || !ps[0].is("below") || ps[1].is("below") {
		t.Errorf("artifact points: %+v", ps)
	}
	if n := strings.Count(fig, `class="ref"`); n < 2 {
		t.Errorf("artifact plot: %d bar lines, want the rubric's 2:\n%s", n, fig)
	}
	for _, want := range []string{"bar 0.7", "bar_leap 0.6"} {
		if !strings.Contains(fig, want) {
			t.Errorf("the artifact plot does not name %q", want)
		}
	}
}

// A domain name and a result type holding markup, from a hand-edited log,
// are text in the plots: in their labels, tooltips and data- attributes.
func TestPlotsShowMarkupAsText(t *testing.T) {
	dir := demo(t, "", "demo")
	const evil = `<script>alert(7)</script>`
	replaceIn(t, dir, "agent/state/evolve/cycle_log.jsonl", `"cycle_id":3,"timestamp":"2026-01-05T17:00:00Z","domain":"test_coverage"`, `"cycle_id":3,"timestamp":"2026-01-05T17:00:00Z","domain":"`+strings.ReplaceAll(evil, "/", `\/`)+`\"><g onload=x>"`)
	replaceIn(t, dir, "agent/state/evolve/cycle_log.jsonl", `"result_type":"futile"`, `"result_type":"<svg onload=alert(8)>"`)
	page := get(t, serve(t, dir).URL+"/").body
	plots := page[strings.Index(page, `<section id="plots">`):]
	low := strings.ToLower(withoutLiveScript(t, page))
	for _, bad := range []string{"<script", "<svg onload", "<g onload", `"><g`} {
		if strings.Contains(low, bad) {
			t.Errorf("the page holds %q:\n%s", bad, plots)
		}
	}
	for _, want := range []string{
		`data-domain="&lt;script&gt;alert(7)&lt;/script&gt;&#34;&gt;&lt;g onload=x&gt;"`,
		`>&lt;script&gt;alert(7)&lt;/script&gt;&#34;&gt;&lt;g onload=x&gt;</text>`,
		`data-type="&lt;svg onload=alert(8)&gt;"`,
	} {
		if !strings.Contains(plots, want) {
			t.Errorf("the plots do not show %q as text:\n%s", want, plots)
		}
	}
}

// A project without a cycle says so in each plot, without an empty frame.
func TestPlotsOfAnEmptyProject(t *testing.T) {
	dir := demo(t, "", "demo")
	for _, f := range []string{"cycle_log.jsonl", "state.json", "outcomes.json"} {
		if err := os.Remove(filepath.Join(dir, "agent/state/evolve", f)); err != nil {
			t.Fatal(err)
		}
	}
	r := get(t, serve(t, dir).URL+"/")
	if r.code != 200 {
		t.Fatalf("GET /: %d", r.code)
	}
	if strings.Contains(r.body, "<svg") {
		t.Errorf("a project without cycles has a plot frame:\n%s", r.body)
	}
	for _, id := range []string{"score", "confidence", "kpi", "goals", "results", "cost", "skills"} {
		if !strings.Contains(figure(t, r.body, id), `<p class="muted empty">no cycles yet</p>`) {
			t.Errorf("the %s plot does not say there are no cycles:\n%s", id, figure(t, r.body, id))
		}
	}
}

func serveHandler(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// version is the project's /api/version.
func version(t *testing.T, url string) string {
	t.Helper()
	r := get(t, url)
	var v struct {
		Version string `json:"version"`
	}
	if r.code != 200 || r.header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(r.body), &v) != nil || v.Version == "" {
		t.Fatalf("GET %s: %d %q %s", url, r.code, r.header.Get("Content-Type"), r.body)
	}
	return v.Version
}

// /api/version stays while the dashboard is only read, and changes when a
// cycle runs; the page carries the version it was drawn from.
func TestVersionFollowsTheStateFiles(t *testing.T) {
	dir := demo(t, "", "demo")
	srv := serve(t, dir)
	v1 := version(t, srv.URL+"/api/version")
	for _, p := range []string{"/", "/api/status", "/api/scorecard", "/api/history", "/metrics", "/live.js"} {
		get(t, srv.URL+p)
	}
	if v2 := version(t, srv.URL+"/api/version"); v2 != v1 {
		t.Fatalf("reading the dashboard changed the version: %s, then %s", v1, v2)
	}
	page := get(t, srv.URL+"/").body
	if !strings.Contains(page, `<body data-version-url="/api/version" data-version="`+v1+`">`) {
		t.Errorf("the page does not carry its version %s", v1)
	}
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"--project", dir, "--now", demoNow.Add(time.Hour).Format(time.RFC3339), "cycle"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("ooda cycle: exit %d\n%s", code, errb.String())
	}
	v3 := version(t, srv.URL+"/api/version")
	if v3 == v1 {
		t.Errorf("the version did not change after a cycle: %s", v3)
	}
	if page := get(t, srv.URL+"/").body; !strings.Contains(page, `data-version="`+v3+`"`) || len(pointsFrom(points(figure(t, page, "confidence")), "cycle_log")) != 7 {
		t.Errorf("the page after the cycle is not of version %s with 7 cycles", v3)
	}
}

// /live.js is served as a script of the dashboard's own origin, under
// the same policy as every response, and the page loads it from there.
func TestLiveScriptIsServed(t *testing.T) {
	srv := serve(t, demo(t, "", "demo"))
	r := get(t, srv.URL+"/live.js")
	if r.code != 200 || r.header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("GET /live.js: %d %q", r.code, r.header.Get("Content-Type"))
	}
	if r.header.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("/live.js headers: %v", r.header)
	}
	if !strings.Contains(dashboard.ContentSecurityPolicy, "script-src 'self';") || strings.Contains(dashboard.ContentSecurityPolicy, "unsafe-inline") {
		t.Errorf("the policy lets more than the dashboard's own script run: %s", dashboard.ContentSecurityPolicy)
	}
	for _, want := range []string{"/api/version", `querySelector("main")`, "data-version-url"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("/live.js lacks %q", want)
		}
	}
	page := get(t, srv.URL+"/")
	if page.header.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy {
		t.Errorf("the page's policy: %q", page.header.Get("Content-Security-Policy"))
	}
	withoutLiveScript(t, page.body)
}

// Each project of many has its own version and its page polls it; the
// list polls the version of them all.
func TestVersionOfManyProjects(t *testing.T) {
	root := t.TempDir()
	a, b := demo(t, root, "a"), demo(t, root, "b")
	h, err := dashboard.New(dashboard.Options{Projects: []dashboard.Project{{Name: "a", Dir: a}, {Name: "b", Dir: b}}, Many: true, Now: func() time.Time { return demoNow }})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, h)
	all, va, vb := version(t, srv.URL+"/api/version"), version(t, srv.URL+"/p/a/api/version"), version(t, srv.URL+"/p/b/api/version")
	if page := get(t, srv.URL+"/p/a/").body; !strings.Contains(page, `data-version-url="/p/a/api/version" data-version="`+va+`"`) {
		t.Errorf("the page of a does not poll its own version")
	}
	if list := get(t, srv.URL+"/").body; !strings.Contains(list, `data-version-url="/api/version" data-version="`+all+`"`) {
		t.Errorf("the list does not poll the version of all")
	}
	write(t, b, "agent/safety/HALT", "maintenance\n")
	if version(t, srv.URL+"/p/a/api/version") != va {
		t.Error("a HALT in b changed the version of a")
	}
	if version(t, srv.URL+"/p/b/api/version") == vb || version(t, srv.URL+"/api/version") == all {
		t.Error("a HALT in b changed neither b's version nor the list's")
	}
}

// pointsFrom are the points of ps whose data-source is src.
func pointsFrom(ps []point, src string) []point {
	var out []point
	for _, p := range ps {
		if p.data["data-source"] == src {
			out = append(out, p)
		}
	}
	return out
}

// readJSON decodes the project's file rel into v.
func readJSON(t *testing.T, dir, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// writeJSON writes v as the project's file rel.
func writeJSON(t *testing.T, dir, rel string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, rel, string(b)+"\n")
}

// ratio is a value as data-value spells it.
func ratio(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// confidenceNow is the project's confidence.json, nested as the loop
// writes it: each domain's score as data-value spells it.
func confidenceNow(t *testing.T, dir string) map[string]string {
	t.Helper()
	var c struct {
		Domains map[string]struct {
			Score float64 `json:"score"`
		} `json:"domains"`
	}
	readJSON(t, dir, "agent/state/evolve/confidence.json", &c)
	out := map[string]string{}
	for d, v := range c.Domains {
		out[d] = ratio(v.Score)
	}
	return out
}

// withHistory gives the demo project at dir a history beyond its log: it
// runs a cycle a week after the demo's, so that the loop writes the
// episode of the demo's week (episodes.json, with its
// confidence_snapshot), then adds what the original project writes and
// the demo does not: the goals' progress over that week (the episode's
// goal_progress_snapshot), goals.json with three goals (one with that
// history, one without, one without a progress), and two checkpoints
// (checkpoints.json, the state design's flat confidence and a copy of a
// nested confidence.json).
func withHistory(t *testing.T, dir string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"--project", dir, "--now", demoNow.AddDate(0, 0, 7).Format(time.RFC3339), "cycle"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("ooda cycle: exit %d\n%s", code, errb.String())
	}
	var eps map[string]any
	readJSON(t, dir, "agent/state/evolve/episodes.json", &eps)
	list, _ := eps["episodes"].([]any)
	if len(list) != 1 {
		t.Fatalf("the cycle a week later wrote %d episodes, want the demo's week", len(list))
	}
	ep := list[0].(map[string]any)
	if len(ep["confidence_snapshot"].(map[string]any)) == 0 {
		t.Fatal("the loop's episode has no confidence_snapshot")
	}
	ep["goal_progress_snapshot"] = []any{
		map[string]any{"id": "G1", "progress_start": 0.1, "progress_end": 0.3},
	}
	writeJSON(t, dir, "agent/state/evolve/episodes.json", eps)
	write(t, dir, "agent/state/evolve/goals.json", `{"schema_version": "1.0.0", "goals": [
  {"id": "G1", "title": "Raise test coverage", "status": "active", "progress": 0.45, "target": 80, "current_value": 62},
  {"id": "G2", "title": "Trim the backlog", "status": "active", "progress": 0.1},
  {"id": "G3", "title": "Document the API", "status": "active"}
]}
`)
	write(t, dir, "agent/state/evolve/checkpoints.json", `{"schema_version": "1.0.0", "checkpoints": [
  {"cycle": 4, "branch": "main", "commit_sha": "abc123", "timestamp": "2026-01-05T21:00:00Z",
   "state_snapshot": {"confidence": {"service_health": 0.7, "test_coverage": 0.72, "backlog": 0.7}, "action_queue_pending": []},
   "leap_baseline_scores": null, "rubric_hash": null},
  {"cycle": 7, "branch": "main", "commit_sha": "def456", "timestamp": "2026-01-13T09:00:00Z",
   "state_snapshot": {"confidence": {"schema_version": "1.0.0", "domains": {"service_health": {"score": 0.72}, "test_coverage": {"score": 0.72}, "backlog": {"score": 0.7}}}, "action_queue_pending": []},
   "leap_baseline_scores": null, "rubric_hash": null}
]}
`)
}

// wantHistory is, for each history plot of the project at dir, its
// points as "source cycle name value", read from the files as
// docs/dashboard.md says the plots read them: the project's files hold
// no more domains, goals or skills than a plot draws, no more points than
// a series keeps, and every episode has a cycle_range.
func wantHistory(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(plot, src string, cycle int, name string, v float64) {
		out[plot] = append(out[plot], fmt.Sprintf("%s %d %s %s", src, cycle, name, ratio(v)))
	}
	evolve := func(rel string) (string, bool) {
		_, err := os.Stat(filepath.Join(dir, "agent/state/evolve", rel))
		return "agent/state/evolve/" + rel, err == nil
	}
	last := 0
	if rel, ok := evolve("state.json"); ok {
		var st struct {
			CycleCount int `json:"cycle_count"`
		}
		readJSON(t, dir, rel, &st)
		last = st.CycleCount
	}
	for _, l := range logLines(t, dir) {
		cycle := int(l["cycle_id"].(float64))
		last = max(last, cycle)
		if v, ok := l["confidence"].(float64); ok && v >= 0 && v <= 1 {
			add("confidence", "cycle_log", cycle, l["domain"].(string), v)
		}
		if v, ok := l["skill_seconds"].(float64); ok && v >= 0 && v <= dashboard.MaxSkillSeconds {
			add("skills", "cycle_log", cycle, l["skill"].(string), v)
		}
	}
	if rel, ok := evolve("episodes.json"); ok {
		var eps struct {
			Episodes []struct {
				CycleRange []int              `json:"cycle_range"`
				Confidence map[string]float64 `json:"confidence_snapshot"`
				Goals      []struct {
					ID    string   `json:"id"`
					Start *float64 `json:"progress_start"`
					End   *float64 `json:"progress_end"`
				} `json:"goal_progress_snapshot"`
			} `json:"episodes"`
		}
		readJSON(t, dir, rel, &eps)
		for _, ep := range eps.Episodes {
			for d, v := range ep.Confidence {
				add("confidence", "episode", ep.CycleRange[1], d, v)
			}
			for _, g := range ep.Goals {
				if g.Start != nil {
					add("goals", "episode_start", ep.CycleRange[0], g.ID, *g.Start)
				}
				if g.End != nil {
					add("goals", "episode_end", ep.CycleRange[1], g.ID, *g.End)
				}
			}
		}
	}
	if rel, ok := evolve("checkpoints.json"); ok {
		var cps struct {
			Checkpoints []struct {
				Cycle int `json:"cycle"`
				Snap  struct {
					Confidence map[string]json.RawMessage `json:"confidence"`
				} `json:"state_snapshot"`
			} `json:"checkpoints"`
		}
		readJSON(t, dir, rel, &cps)
		for _, cp := range cps.Checkpoints {
			conf := cp.Snap.Confidence
			if raw, nested := conf["domains"]; nested {
				var ds map[string]struct {
					Score float64 `json:"score"`
				}
				if err := json.Unmarshal(raw, &ds); err != nil {
					t.Fatal(err)
				}
				for d, v := range ds {
					add("confidence", "checkpoint", cp.Cycle, d, v.Score)
				}
				continue
			}
			for d, raw := range conf {
				var v float64
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatal(err)
				}
				add("confidence", "checkpoint", cp.Cycle, d, v)
			}
		}
	}
	if _, ok := evolve("confidence.json"); ok {
		for d, v := range confidenceNow(t, dir) {
			out["confidence"] = append(out["confidence"], fmt.Sprintf("now %d %s %s", last, d, v))
		}
	}
	if rel, ok := evolve("goals.json"); ok {
		var gs struct {
			Goals []struct {
				ID       string   `json:"id"`
				Progress *float64 `json:"progress"`
			} `json:"goals"`
		}
		readJSON(t, dir, rel, &gs)
		for _, g := range gs.Goals {
			if g.Progress != nil {
				add("goals", "now", last, g.ID, *g.Progress)
			}
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// drawn is each point of a history plot as wantHistory spells it, the
// name from the data- attribute given.
func drawn(ps []point, name string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.Join([]string{p.data["data-source"], p.data["data-cycle"], p.data[name], p.data["data-value"]}, " "))
	}
	slices.Sort(out)
	return out
}

// The confidence plot draws every domain's confidence from every file
// that keeps one, each point at its cycle: the log's per cycle, the
// episode's snapshot at the week's last cycle, each checkpoint's before
// its cycle, confidence.json's at the last cycle; the goal plot draws
// each goal's start and end of week and today's progress; the skill plot
// each cycle's skill_seconds.
func TestHistoryPlotsDrawEveryFile(t *testing.T) {
	dir := demo(t, "", "demo")
	withHistory(t, dir)
	page := get(t, serve(t, dir).URL+"/").body
	want := wantHistory(t, dir)
	for plot, attr := range map[string]string{"confidence": "data-domain", "goals": "data-goal", "skills": "data-skill"} {
		got := drawn(points(figure(t, page, plot)), attr)
		if !slices.Equal(got, want[plot]) {
			t.Errorf("%s plot draws\n  %q\nthe files hold\n  %q", plot, got, want[plot])
		}
	}
	// Every source is there, at the cycle it stands for.
	conf := points(figure(t, page, "confidence"))
	for src, n := range map[string]int{"cycle_log": 7, "episode": 3, "checkpoint": 6, "now": 3} {
		if got := len(pointsFrom(conf, src)); got != n {
			t.Errorf("confidence plot: %d points of %s, want %d", got, src, n)
		}
	}
	for _, p := range pointsFrom(conf, "episode") {
		if p.data["data-cycle"] != "6" || !strings.HasPrefix(p.class, "point episode") {
			t.Errorf("the episode of cycles 1 to 6 drawn at cycle %s as %q", p.data["data-cycle"], p.class)
		}
	}
	fig := figure(t, page, "confidence")
	for _, s := range []string{"episodes.json confidence_snapshot", "checkpoints.json", "today&#39;s confidence.json, at cycle 7"} {
		if !strings.Contains(fig, s) {
			t.Errorf("the confidence plot's note does not say %q:\n%s", s, fig)
		}
	}

	// Goals: G1 has its week and today, joined by a line; G2 today only,
	// said so in the legend, with no line; G3 has no progress at all.
	goals := figure(t, page, "goals")
	if n := strings.Count(goals, "<polyline"); n != 1 {
		t.Errorf("goal plot: %d lines, want G1's alone:\n%s", n, goals)
	}
	if !strings.Contains(goals, ">G2 (today only)</text>") {
		t.Errorf("the goal without history is not marked today only:\n%s", goals)
	}
	if strings.Contains(goals, "G3") {
		t.Errorf("the goal without a progress is drawn:\n%s", goals)
	}

	// Skills: the demo's skills, each in its own colour.
	fills := map[string]string{}
	for _, m := range regexp.MustCompile(`<circle [^>]*fill="(#[0-9a-f]+)"[^>]*data-skill="([^"]*)"`).FindAllStringSubmatch(figure(t, page, "skills"), -1) {
		if f, ok := fills[m[2]]; ok && f != m[1] {
			t.Errorf("skill %s drawn in %s and %s", m[2], f, m[1])
		}
		fills[m[2]] = m[1]
	}
	if len(fills) != 3 || len(slices.Compact(slices.Sorted(maps.Values(fills)))) != 3 {
		t.Errorf("skill colours: %v, want 3 skills in 3 colours", fills)
	}
}

// coordRE finds every coordinate and size a plot draws with.
var coordRE = regexp.MustCompile(`\b(?:cx|cy|r|x|y|x1|y1|x2|y2|width|height)="([^"]*)"|\bpoints="([^"]*)"`)

// checkGeometry fails the test for a coordinate of the plot that is not a
// finite number inside its view box.
func checkGeometry(t *testing.T, id, fig string) {
	t.Helper()
	for _, m := range coordRE.FindAllStringSubmatch(fig, -1) {
		vals := []string{m[1]}
		if m[2] != "" {
			vals = strings.FieldsFunc(m[2], func(r rune) bool { return r == ' ' || r == ',' })
		}
		for _, v := range vals {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= -10 && f <= 650) {
				t.Errorf("%s plot: a coordinate %q (%s)", id, v, m[0])
			}
		}
	}
}

// Values a hand-edited or hostile file may hold never break a history
// plot: a number written as a string, 1e308, a negative or a value past
// 1, a cycle after the last, a week no cycle is known of, a snapshot of
// the wrong shape, a thousand episodes and a dozen domains and goals, and
// names holding markup. What is not drawn is counted under the plot, the
// series past the cap are named, and every name is text.
func TestHistoryPlotsBoundHostileValues(t *testing.T) {
	dir := demo(t, "", "demo")
	const evilDomain = `<script>alert(1)</script>`
	const evilGoal = `<img src=x onerror=alert(2)>`
	var eps []any
	// A thousand weeks of one domain: more points than a series keeps.
	for i := range 1000 {
		c := i%6 + 1
		eps = append(eps, map[string]any{"id": fmt.Sprintf("EP-%04d-W01", 1000+i), "cycle_range": []int{c, c},
			"confidence_snapshot": map[string]any{"flood": 0.5}})
	}
	many := map[string]any{evilDomain: 0.4, "as_string": "NaN", "huge": 1e308, "negative": -0.5, "past_one": 1.5}
	for i := range 10 {
		many[fmt.Sprintf("extra_%02d", i)] = 0.3
	}
	goals := []any{
		map[string]any{"id": evilGoal, "progress_start": "NaN", "progress_end": 0.6},
		map[string]any{"id": "G_huge", "progress_start": 1e308, "progress_end": -2},
		map[string]any{"id": 5, "progress_end": 0.5},
		"not a goal",
	}
	for i := range 12 {
		goals = append(goals, map[string]any{"id": fmt.Sprintf("H%02d", i), "progress_end": 0.2})
	}
	eps = append(eps,
		map[string]any{"id": "EP-2026-W02", "cycle_range": []int{1, 6}, "confidence_snapshot": many, "goal_progress_snapshot": goals},
		// After the last cycle: not drawn.
		map[string]any{"id": "EP-2026-W03", "cycle_range": []int{7, 99}, "confidence_snapshot": map[string]any{"backlog": 0.9}},
		// No cycle_range and a week the log has no cycle of.
		map[string]any{"id": "EP-2025-W40", "week_start": "2025-09-29", "week_end": "2025-10-05", "cycle_range": "x",
			"confidence_snapshot": map[string]any{"backlog": 0.8}, "goal_progress_snapshot": "not a list"},
	)
	writeJSON(t, dir, "agent/state/evolve/episodes.json", map[string]any{"schema_version": "1.0.0", "episodes": eps})
	write(t, dir, "agent/state/evolve/checkpoints.json", `{"checkpoints": [
  {"cycle": 2, "state_snapshot": {"confidence": {"service_health": "NaN", "backlog": 1e308, "test_coverage": -1}}},
  {"cycle": 3, "state_snapshot": {"confidence": [1, 2]}},
  {"cycle": -3, "state_snapshot": {"confidence": {"backlog": 0.5}}}
]}
`)
	writeJSON(t, dir, "agent/state/evolve/goals.json", map[string]any{"goals": []any{
		map[string]any{"id": evilGoal, "title": evilDomain, "status": "active", "progress": 0.5},
		map[string]any{"id": "G_past", "status": "active", "progress": 2},
	}})
	setLogField(t, dir, map[int]any{1: "NaN", 2: -1, 3: 1e308, 4: 1e9, 5: 0.5, 6: 2.25}, "skill_seconds")
	// A score near the largest float: its axis must stay finite.
	setLogField(t, dir, map[int]any{1: 1.7e308}, "score")

	r := get(t, serve(t, dir).URL+"/")
	if r.code != 200 {
		t.Fatalf("GET /: %d\n%s", r.code, r.body)
	}
	page := r.body
	if strings.Contains(page, `<section id="corrupt"`) {
		t.Errorf("files of odd values, but JSON, are named corrupt:\n%s", figure(t, page, "confidence"))
	}
	low := strings.ToLower(withoutLiveScript(t, page))
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(low, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	checkGeometry(t, "score", figure(t, page, "score"))
	for _, id := range []string{"confidence", "goals", "skills"} {
		fig := figure(t, page, id)
		checkGeometry(t, id, fig)
		for _, p := range points(fig) {
			if v, err := strconv.ParseFloat(p.data["data-value"], 64); err != nil || math.IsInf(v, 0) || math.IsNaN(v) || strings.Contains(p.data["data-value"], "e") {
				t.Errorf("%s plot: a point of value %q", id, p.data["data-value"])
			}
		}
	}

	// Confidence: the three configured domains first, then the five
	// seen last; at most MaxSeriesPoints points of each.
	conf := figure(t, page, "confidence")
	perDomain := map[string]int{}
	for _, p := range points(conf) {
		perDomain[p.data["data-domain"]]++
		if v, err := strconv.ParseFloat(p.data["data-value"], 64); err != nil || v < 0 || v > 1 {
			t.Errorf("a confidence point of value %q", p.data["data-value"])
		}
	}
	if len(perDomain) != dashboard.MaxChartSeries {
		t.Errorf("confidence plot: %d domains drawn, want %d: %v", len(perDomain), dashboard.MaxChartSeries, perDomain)
	}
	for _, d := range []string{"service_health", "test_coverage", "backlog", evilDomain, "extra_00"} {
		if perDomain[d] == 0 {
			t.Errorf("confidence plot: %s is not drawn: %v", d, perDomain)
		}
	}
	if perDomain["flood"] != 0 {
		// Last seen at cycle 6 as the others, it comes after them by name.
		t.Errorf("the flood domain is drawn over the others: %v", perDomain)
	}
	for _, want := range []string{
		`data-domain="&lt;script&gt;alert(1)&lt;/script&gt;"`,
		`Left out past 8 domains: extra_04, extra_05, extra_06, extra_07, extra_08, and 2 more.`,
		// huge, negative, past_one; the checkpoint's backlog and test_coverage.
		`5 values out of the plot&#39;s range or not a number are not drawn.`,
		`1 values said to be of a cycle after cycle 6, the last, are not drawn.`,
		// The week of no known cycle, and the checkpoint of cycle -3.
		`2 values that no cycle could be found for are not drawn.`,
		`1 snapshots that are not a confidence object are not drawn.`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("the confidence plot does not say %q:\n%s", want, conf)
		}
	}

	// The flood alone: its 1000 weeks are cut to the last MaxSeriesPoints.
	writeJSON(t, dir, "agent/state/evolve/episodes.json", map[string]any{"episodes": eps[:1000]})
	conf = figure(t, get(t, serve(t, dir).URL+"/").body, "confidence")
	flood := 0
	for _, p := range points(conf) {
		if p.data["data-domain"] == "flood" {
			flood++
		}
	}
	if flood != dashboard.MaxSeriesPoints || !strings.Contains(conf, fmt.Sprintf("%d older points are left out", 1000-dashboard.MaxSeriesPoints)) {
		t.Errorf("the flood domain: %d points drawn, want %d and the rest counted:\n%s", flood, dashboard.MaxSeriesPoints, conf)
	}
	checkGeometry(t, "confidence", conf)

	// Goals: the hostile id is text, its "NaN" start and the huge and
	// negative values are not drawn, the goals past the cap are named.
	goalsFig := figure(t, page, "goals")
	perGoal := map[string]int{}
	for _, p := range points(goalsFig) {
		perGoal[p.data["data-goal"]]++
	}
	if len(perGoal) != dashboard.MaxChartSeries || perGoal[evilGoal] != 2 || perGoal["G_huge"] != 0 || perGoal["G_past"] != 0 {
		t.Errorf("goal plot draws %v", perGoal)
	}
	for _, want := range []string{
		`data-goal="&lt;img src=x onerror=alert(2)&gt;"`,
		`Left out past 8 goals: H07, H08, H09, H10, H11.`,
		// "NaN", the entry whose id is a number, the entry that is a
		// string, the snapshot that is not a list.
		`4 goal_progress_snapshot entries or values are not a goal&#39;s id and progress and are not drawn.`,
		// G_huge's two values and G_past's progress of 2.
		`3 values out of the plot&#39;s range or not a number are not drawn.`,
	} {
		if !strings.Contains(goalsFig, want) {
			t.Errorf("the goal plot does not say %q:\n%s", want, goalsFig)
		}
	}

	// Skills: only the two durations that are one.
	skills := points(figure(t, page, "skills"))
	if got := drawn(skills, "data-skill"); !slices.Equal(got, []string{"cycle_log 5 /scan-health 0.5", "cycle_log 6 /plan-backlog 2.25"}) {
		t.Errorf("skill plot draws %q", got)
	}
	if fig := figure(t, page, "skills"); !strings.Contains(fig, "3 values out of the plot&#39;s range or not a number are not drawn.") {
		t.Errorf("the skill plot does not count the negative, the huge and the week-long durations:\n%s", fig)
	}
}

// An episode without a cycle_range is placed by its week: at the first
// and last cycle the log timestamps between its week_start and week_end.
func TestEpisodeIsPlacedByItsWeek(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/episodes.json", `{"episodes": [
  {"week_year": "2026-W02", "week_start": "2026-01-05", "week_end": "2026-01-11",
   "confidence_snapshot": {"backlog": 0.65},
   "goal_progress_snapshot": [{"id": "G1", "progress_start": 0.2, "progress_end": 0.25}]}
]}
`)
	page := get(t, serve(t, dir).URL+"/").body
	if got := drawn(pointsFrom(points(figure(t, page, "confidence")), "episode"), "data-domain"); !slices.Equal(got, []string{"episode 6 backlog 0.65"}) {
		t.Errorf("the week's confidence drawn as %q, want at its last cycle, 6", got)
	}
	if got := drawn(points(figure(t, page, "goals")), "data-goal"); !slices.Equal(got, []string{"episode_end 6 G1 0.25", "episode_start 1 G1 0.2"}) {
		t.Errorf("the week's goal progress drawn as %q, want at cycles 1 and 6", got)
	}
}

// A history file that cannot be read is named on the page with the
// others, and the plots draw what the rest holds.
func TestCorruptHistoryFilesAreNamed(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/episodes.json", `{"episodes": [`)
	write(t, dir, "agent/state/evolve/checkpoints.json", `not json`)
	r := get(t, serve(t, dir).URL+"/")
	if r.code != 200 {
		t.Fatalf("GET /: %d", r.code)
	}
	for _, f := range []string{"episodes.json", "checkpoints.json"} {
		if !strings.Contains(r.body, "<li><code>agent/state/evolve/"+f+"</code></li>") {
			t.Errorf("%s is not named:\n%s", f, r.body[:strings.Index(r.body, `<section id="overview">`)])
		}
	}
	if n := len(pointsFrom(points(figure(t, r.body, "confidence")), "cycle_log")); n != 6 {
		t.Errorf("the confidence plot draws %d cycles of the log beside the corrupt files, want 6", n)
	}
}

// A domain directory a skill filled with more files than the version
// reads still moves the version when a file is added to it, and the
// evolve files are still followed.
func TestVersionOfAFullDirectory(t *testing.T) {
	dir := demo(t, "", "demo")
	full := filepath.Join(dir, "agent", "state", "backlog")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := os.WriteFile(filepath.Join(full, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := serve(t, dir)
	v1 := version(t, srv.URL+"/api/version")
	if v := version(t, srv.URL+"/api/version"); v != v1 {
		t.Fatalf("the version moved with nothing changed: %s, then %s", v1, v)
	}
	// The directory's time moves in the file system's resolution: make
	// the change visible whatever it is.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(full, old, old); err != nil {
		t.Fatal(err)
	}
	v2 := version(t, srv.URL+"/api/version")
	if err := os.WriteFile(filepath.Join(full, "zz-new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if v3 := version(t, srv.URL+"/api/version"); v3 == v2 {
		t.Errorf("a file added to a directory past the bound did not move the version")
	}
	v4 := version(t, srv.URL+"/api/version")
	write(t, dir, "agent/state/evolve/goals.json", `{"schema_version": "1.0.0", "goals": []}`+"\n")
	if v5 := version(t, srv.URL+"/api/version"); v5 == v4 {
		t.Errorf("a write to goals.json did not move the version")
	}
}

// otherScoredDomains counts the domains the decision log's score tables
// hold besides each cycle's selected one: the hollow points of the score
// plot.
func otherScoredDomains(t *testing.T, dir string) int {
	t.Helper()
	var st struct {
		DecisionLog []struct {
			SelectedDomain string             `json:"selected_domain"`
			Scores         map[string]float64 `json:"scores"`
		} `json:"decision_log"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, e := range st.DecisionLog {
		for d := range e.Scores {
			if d != e.SelectedDomain {
				others++
			}
		}
	}
	return others
}
