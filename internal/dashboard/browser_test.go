package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/dashboard"
	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/proc"
)

// The browser tests drive Debian's headless Chromium over the real
// handler (docs/dashboard.md, "Browser tests"). Without a `chromium` in
// PATH they are skipped, unless OODA_BROWSER_TESTS is "required", as
// scripts/test.sh sets it once scripts/browser.sh has installed one, so
// that a CI run cannot pass without them.

// screenW and screenH are the viewport of every page and screenshot.
const screenW, screenH = 1280, 800

// browserTimeout bounds every step in the browser, so that a page that
// never loads fails the test instead of hanging it; it measures nothing.
const browserTimeout = time.Minute

// liveWait is how long the live view may take to show a cycle that has
// finished: the page polls every 2 s, so a view still stale after this
// is broken, not slow.
const liveWait = 20 * time.Second

// startBrowser starts one headless Chromium for all the subtests of t
// and returns its context; each tab is a chromedp.NewContext of it.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := proc.LookPath("chromium")
	if err != nil {
		if os.Getenv("OODA_BROWSER_TESTS") == "required" {
			t.Fatalf("OODA_BROWSER_TESTS=required but chromium is not in PATH: %v (scripts/browser.sh installs it)", err)
		}
		t.Skipf("chromium is not in PATH (%v): the browser tests are skipped; scripts/browser.sh installs it", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(screenW, screenH))
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (a CI container).
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	// The first run starts the browser, which lives as long as bctx: it
	// must not carry a timeout.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return bctx
}

// tab is one browser tab and what its page has reported: console
// messages at warning level or above, uncaught exceptions, browser log
// entries (a Content-Security-Policy violation, a failed load) at warning
// level or above, and dialogs opened by a script.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string
}

// newTab opens a tab of browser with the dashboard's viewport and starts
// recording what its pages report.
func newTab(t *testing.T, browser context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, tb.record); err != nil {
		t.Fatalf("listening to the tab: %v", err)
	}
	tb.do(chromedp.EmulateViewport(screenW, screenH))
	return tb
}

// record keeps every event of the tab that says something went wrong. It
// runs on the tab's reading loop: it only appends.
func (tb *tab) record(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		switch ev.Type {
		case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
			var args []string
			for _, a := range ev.Args {
				if a.Description != "" {
					args = append(args, a.Description)
				} else {
					args = append(args, string(a.Value))
				}
			}
			p = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		p = fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, d.Text)
		if d.Exception != nil {
			p += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		if e := ev.Entry; e.Level == log.EntryLevelError || e.Level == log.EntryLevelWarning {
			p = fmt.Sprintf("browser log (%s, %s): %s %s", e.Source, e.Level, e.Text, e.URL)
		}
	case *page.EventJavascriptDialogOpening:
		p = fmt.Sprintf("a script opened a %s dialog: %q", ev.Type, ev.Message)
	}
	if p != "" {
		tb.mu.Lock()
		tb.problems = append(tb.problems, p)
		tb.mu.Unlock()
	}
}

// reported is what the tab's pages have reported so far.
func (tb *tab) reported() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.problems...)
}

// noProblems fails the test with every message the tab's pages reported.
func (tb *tab) noProblems(what string) {
	tb.t.Helper()
	for _, p := range tb.reported() {
		tb.t.Errorf("%s: %s", what, p)
	}
}

// do runs the actions in the tab within browserTimeout.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("in the browser: %v", err)
	}
}

// open loads url in the tab and waits for its load event.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url))
}

// eval is the value of the JavaScript expression in the tab's page,
// decoded into T.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// screenshot writes the tab's viewport as a PNG named name into the
// artifact directory: $OODA_ARTIFACTS, or a temporary directory.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("OODA_ARTIFACTS")
	if dir == "" {
		dir = tb.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
}

// domChart is a plot as the browser's DOM holds it.
type domChart struct {
	ID     string `json:"id"`
	SVGs   int    `json:"svgs"`
	Points []struct {
		Class string            `json:"class"`
		Data  map[string]string `json:"data"`
	} `json:"points"`
}

// chartsJS lists every plot of the page with its data points.
const chartsJS = `Array.from(document.querySelectorAll("figure.chart")).map(function (f) {
  return {
    id: f.id.replace(/^chart-/, ""),
    svgs: f.querySelectorAll("svg.plot").length,
    points: Array.from(f.querySelectorAll("svg.plot .point")).map(function (p) {
      return {class: p.getAttribute("class"), data: Object.assign({}, p.dataset)};
    })
  };
})`

// domCharts are the tab's plots by id.
func (tb *tab) domCharts() map[string]domChart {
	tb.t.Helper()
	out := map[string]domChart{}
	for _, c := range eval[[]domChart](tb, chartsJS) {
		out[c.ID] = c
	}
	return out
}

// expectedPoints is how many data points each plot of the project at dir
// must hold, counted from its cycle log, its decision log, its history
// files and the scorecard's trend at url, as TestPlotPointsCountTheCycles
// and TestHistoryPlotsDrawEveryFile check the markup: a point per cycle
// and per other domain scored (score), per value of a domain's confidence
// in the log, the episodes, the checkpoints and confidence.json
// (confidence), per goal's progress in the episodes and goals.json
// (goals), per day and result type (results), per day (cost), per cycle
// with a skill_seconds (skills), per window with a value of each KPI
// (kpi). A plot of no point is the text saying so, not a drawing.
func expectedPoints(t *testing.T, dir, url string) map[string]int {
	t.Helper()
	lines := logLines(t, dir)
	others := otherScoredDomains(t, dir)
	days, dayTypes := map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		day := l["timestamp"].(string)[:10]
		days[day] = true
		dayTypes[day+" "+l["result_type"].(string)] = true
	}
	var sc struct {
		Trend struct {
			Windows []map[string]*float64 `json:"windows"`
		} `json:"trend"`
	}
	if err := json.Unmarshal([]byte(get(t, url+"/api/scorecard").body), &sc); err != nil {
		t.Fatal(err)
	}
	kpi := 0
	for _, w := range sc.Trend.Windows {
		for _, key := range []string{"loop_value_score", "futile_cycle_rate_pct", "mission_hit_pct", "artifact_quality"} {
			if w[key] != nil {
				kpi++
			}
		}
	}
	hist := wantHistory(t, dir)
	return map[string]int{
		"score":      len(lines) + others,
		"confidence": len(hist["confidence"]),
		"goals":      len(hist["goals"]),
		"skills":     len(hist["skills"]),
		"results":    len(dayTypes),
		"cost":       len(days),
		"kpi":        kpi,
	}
}

// logPoints are the points of a plot drawn from the cycle log.
func logPoints(c domChart) []string {
	var out []string
	for _, p := range c.Points {
		if p.Data["source"] == "cycle_log" {
			out = append(out, p.Data["cycle"])
		}
	}
	return out
}

// checkPlots compares the plots the browser shows of the project at dir
// with what its files say.
func checkPlots(t *testing.T, tb *tab, dir, url string) {
	t.Helper()
	got := tb.domCharts()
	want := expectedPoints(t, dir, url)
	for id, n := range want {
		c, ok := got[id]
		if !ok {
			t.Errorf("the page has no plot %q", id)
			continue
		}
		if drawings := min(n, 1); c.SVGs != drawings || len(c.Points) != n {
			t.Errorf("plot %q: %d drawings with %d points, want %d with %d", id, c.SVGs, len(c.Points), drawings, n)
		}
	}
	// The winner of every cycle is marked, once.
	winners := map[string]int{}
	for _, p := range got["score"].Points {
		if strings.Contains(" "+p.Class+" ", " winner ") {
			winners[p.Data["cycle"]]++
		}
	}
	if len(winners) != len(logLines(t, dir)) {
		t.Errorf("score plot: winners of %d cycles, want %d: %v", len(winners), len(logLines(t, dir)), winners)
	}
	for c, n := range winners {
		if n != 1 {
			t.Errorf("score plot: cycle %s has %d winners", c, n)
		}
	}
	if a, ok := got["artifact"]; !ok || a.SVGs != 0 {
		t.Errorf("the artifact plot of a project without a rubric: %+v", a)
	}
}

// TestInBrowser loads the dashboard in headless Chromium: the pages load
// without a console error or a policy violation, the plots hold the
// points the files call for, the live view follows a cycle, a corrupt
// file is named, hostile strings stay text, and screenshots of the pages
// are written as artifacts.
func TestInBrowser(t *testing.T) {
	browser := startBrowser(t)

	// The checks below would pass vacuously if the listener heard
	// nothing: a page breaking the policy must be reported.
	t.Run("a violation is reported", func(t *testing.T) {
		srv := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", dashboard.ContentSecurityPolicy)
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!DOCTYPE html><html><head><title>x</title></head><body><p>inline</p><script>document.title = "ran"</script></body></html>`)
		}))
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		if title := eval[string](tb, "document.title"); title != "x" {
			t.Errorf("an inline script ran under the policy: title %q", title)
		}
		found := false
		for _, p := range tb.reported() {
			if strings.Contains(p, "Content Security Policy") {
				found = true
			}
		}
		if !found {
			t.Errorf("the inline script's violation was not reported: %q", tb.reported())
		}
	})

	t.Run("project page", func(t *testing.T) {
		dir := demo(t, "", "demo")
		withHistory(t, dir)
		srv := serve(t, dir)
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		if title := eval[string](tb, `document.querySelector("h1").textContent`); title == "" {
			t.Error("the page has no heading")
		}
		if n := eval[int](tb, `document.styleSheets.length`); n != 1 {
			t.Errorf("%d style sheets applied, want the dashboard's one", n)
		}
		checkPlots(t, tb, dir, srv.URL)
		tb.screenshot("dashboard-project.png")
		eval[chromedp.Void](tb, `document.querySelector("#plots").scrollIntoView({block: "start"})`)
		tb.screenshot("dashboard-plots.png")
		tb.noProblems("the project page")
	})

	t.Run("live view follows a cycle", func(t *testing.T) {
		dir := demo(t, "", "demo")
		srv := serve(t, dir)
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		before := len(logPoints(tb.domCharts()["confidence"]))
		if eval[bool](tb, `document.body.hasAttribute("data-live-updated")`) {
			t.Fatal("the page says it was updated before anything changed")
		}
		var out, errb strings.Builder
		if code := cli.Main([]string{"--project", dir, "--now", demoNow.Add(time.Hour).Format(time.RFC3339), "cycle"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("ooda cycle: exit %d\n%s", code, errb.String())
		}
		// The predicate waits for the page's own signal and the new
		// point; liveWait only turns a view that never updates into a
		// failure.
		ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
		defer cancel()
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(
			`document.body.hasAttribute("data-live-updated") && document.querySelectorAll('#chart-confidence svg .point[data-source="cycle_log"]').length === %d`, before+1),
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(liveWait)))
		if err != nil {
			t.Fatalf("the live view did not show cycle %d within %s of its end: %v (%d confidence points of the log)", before+1, liveWait,
				err, len(logPoints(tb.domCharts()["confidence"])))
		}
		checkPlots(t, tb, dir, srv.URL)
		if !strings.Contains(eval[string](tb, `document.querySelector("#overview").textContent`), fmt.Sprintf("%d (last:", before+1)) {
			t.Errorf("the overview does not count %d cycles", before+1)
		}
		tb.noProblems("the live page")
	})

	t.Run("a corrupt file is named", func(t *testing.T) {
		dir := demo(t, "", "demo")
		write(t, dir, "agent/state/evolve/confidence.json", "{\"backlog\": ")
		srv := serve(t, dir)
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		named := eval[[]string](tb, `Array.from(document.querySelectorAll("#corrupt li code")).map(function (c) { return c.textContent; })`)
		if len(named) != 1 || named[0] != "agent/state/evolve/confidence.json" {
			t.Errorf("the corrupt files named on the page: %q", named)
		}
		if !eval[bool](tb, `document.querySelector("#corrupt").getBoundingClientRect().height > 0`) {
			t.Error("the corrupt-file notice is not displayed")
		}
		tb.screenshot("dashboard-corrupt.png")
		tb.noProblems("the page with a corrupt file")
	})

	t.Run("hostile strings are text", func(t *testing.T) {
		dir := demo(t, "", "demo")
		const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`
		replaceIn(t, dir, "agent/state/evolve/state.json", `"summary": "backlog unchanged"`, `"summary": "`+strings.ReplaceAll(evil, `"`, `\"`)+`"`)
		replaceIn(t, dir, "agent/state/evolve/action_queue.json", "Add tests for the retry wrapper", `</td><script>alert(3)</script><b id=injected>x</b>`)
		replaceIn(t, dir, "config.json", "Keep the example service healthy and its tests green.", `<script>alert(5)</script><iframe src=/></iframe>`)
		replaceIn(t, dir, "agent/state/evolve/cycle_log.jsonl", `"cycle_id":3,"timestamp":"2026-01-05T17:00:00Z","domain":"test_coverage"`,
			`"cycle_id":3,"timestamp":"2026-01-05T17:00:00Z","domain":"<svg onload=alert(7)><\/svg><g id=injected2>"`)
		write(t, dir, "agent/safety/HALT", "<script>alert(6)</script>\n")
		srv := serve(t, dir)
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		injected := eval[[]string](tb, `Array.from(document.querySelectorAll(
			"body script, img, iframe, b#injected, #injected2, [onerror], [onload], svg svg")).map(function (e) { return e.outerHTML; })`)
		if len(injected) != 0 {
			t.Errorf("elements made of the state files' strings: %q", injected)
		}
		if n := eval[int](tb, `document.scripts.length`); n != 1 {
			t.Errorf("%d scripts on the page, want the live script alone", n)
		}
		text := eval[string](tb, `document.body.innerText`)
		for _, want := range []string{evil, "</td><script>alert(3)</script><b id=injected>x</b>", "<script>alert(5)</script><iframe src=/></iframe>", "<script>alert(6)</script>"} {
			if !strings.Contains(text, want) {
				t.Errorf("the page does not show %q as text", want)
			}
		}
		if tips := eval[string](tb, `Array.from(document.querySelectorAll("#chart-score .point title")).map(function (e) { return e.textContent; }).join("\n")`); !strings.Contains(tips, "<svg onload=alert(7)></svg><g id=injected2>") {
			t.Errorf("the score plot does not name the hostile domain as text:\n%s", tips)
		}
		tb.noProblems("the page of hostile strings")
	})

	t.Run("many projects", func(t *testing.T) {
		root := t.TempDir()
		dirs := []string{demo(t, root, "checkout"), demo(t, root, "payments"), demo(t, root, "search")}
		write(t, dirs[1], "agent/safety/HALT", "maintenance window\n")
		mps, err := metrics.Projects(dirs)
		if err != nil {
			t.Fatal(err)
		}
		var ps []dashboard.Project
		for _, p := range mps {
			ps = append(ps, dashboard.Project{Name: p.Name, Dir: p.Dir})
		}
		h, err := dashboard.New(dashboard.Options{Projects: ps, Many: true, Now: func() time.Time { return demoNow }})
		if err != nil {
			t.Fatal(err)
		}
		srv := serveHandler(t, h)
		tb := newTab(t, browser)
		tb.open(srv.URL + "/")
		links := eval[[]string](tb, `Array.from(document.querySelectorAll("main tbody tr td:first-child a")).map(function (a) { return a.getAttribute("href"); })`)
		if strings.Join(links, " ") != "/p/checkout/ /p/payments/ /p/search/" {
			t.Errorf("the list links to %q", links)
		}
		tb.screenshot("dashboard-projects.png")
		tb.do(chromedp.Click(chromedp.CSS(`a[href="/p/payments/"]`)), chromedp.WaitVisible(chromedp.CSS("#halt")))
		if h := eval[string](tb, `document.querySelector("#halt h2").textContent`); h != "HALT: ACTIVE" {
			t.Errorf("the page of the halted project says %q", h)
		}
		checkPlots(t, tb, dirs[1], srv.URL+"/p/payments")
		tb.noProblems("the list and a project's page")
	})
}
