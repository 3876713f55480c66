package dashboard_test

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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
	if n := strings.Count(page, `<svg class="plot" role="img" aria-label="`); n != 5 {
		t.Errorf("%d plots, want 5 (the artifact has no rubric)", n)
	}

	// Score: the selected domain of each cycle, filled, at its score; the
	// other domains of the decision log's score tables, hollow.
	var st struct {
		DecisionLog []struct {
			Cycle          int                `json:"cycle"`
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

	// Confidence: one point per cycle, the log's confidence.
	conf := points(figure(t, page, "confidence"))
	if len(conf) != 6 {
		t.Errorf("confidence plot: %d points, want 6", len(conf))
	}
	for i, p := range conf {
		if want := strconv.FormatFloat(lines[i]["confidence"].(float64), 'f', -1, 64); p.data["data-value"] != want || p.data["data-cycle"] != strconv.Itoa(i+1) {
			t.Errorf("confidence point %d: cycle %s value %s, want cycle %d value %s", i, p.data["data-cycle"], p.data["data-value"], i+1, want)
		}
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
	for _, id := range []string{"score", "confidence", "kpi", "results", "cost"} {
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
	if page := get(t, srv.URL+"/").body; !strings.Contains(page, `data-version="`+v3+`"`) || len(points(figure(t, page, "confidence"))) != 7 {
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
