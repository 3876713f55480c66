package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/dashboard"
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
	tmp, err := os.MkdirTemp("", "ooda-dashboard-demo-")
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

// demo copies the demo project into a fresh directory at rel under root
// (a new temporary directory when root is empty).
func demo(t *testing.T, root, rel string) string {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	dir := filepath.Join(root, rel)
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

// replaceIn replaces old, which must be there, in the file rel of dir.
func replaceIn(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not hold %q", rel, old)
	}
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serve starts the dashboard of the project at dir.
func serve(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	h, err := dashboard.New(dashboard.Options{Projects: []dashboard.Project{{Dir: dir}}, Now: func() time.Time { return demoNow }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// client gives up on a request after a minute: only so that a broken
// server fails the test rather than hanging it, not a measured time.
var client = &http.Client{Timeout: time.Minute}

type response struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func get(t *testing.T, url string) response { return do(t, http.MethodGet, url) }

// liveScriptTag is the one script element a served page holds.
const liveScriptTag = `<script src="/live.js" defer></script>`

// withoutLiveScript is page without its live-update script's element,
// which must be there once, so that a test can look for any other.
func withoutLiveScript(t *testing.T, page string) string {
	t.Helper()
	if n := strings.Count(page, liveScriptTag); n != 1 {
		t.Errorf("the page holds the live script %d times, want once", n)
	}
	return strings.Replace(page, liveScriptTag, "", 1)
}

// cliOut is what the command line prints on stdout for the project at dir.
func cliOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--project", dir, "--now", demoNow.Format(time.RFC3339)}, args...)
	if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("ooda %q: exit %d\n%s", args, code, errb.String())
	}
	return out.String()
}

// Every route answers with its status and content type.
func TestRoutes(t *testing.T) {
	srv := serve(t, demo(t, "", "demo"))
	cases := []struct {
		path, ctype string
		code        int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/api/status", "application/json", 200},
		{"/api/scorecard", "application/json", 200},
		{"/api/scorecard?window=2", "application/json", 200},
		{"/api/scorecard?window=0", "application/json", 400},
		{"/api/scorecard?window=x", "application/json", 400},
		{"/api/history", "application/json", 200},
		{"/api/history?from=2&to=3", "application/json", 200},
		{"/metrics", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", 200},
		{"/static/dashboard.css", "text/css; charset=utf-8", 200},
		{"/nothing", "text/plain; charset=utf-8", 404},
		{"/api/", "text/plain; charset=utf-8", 404},
		{"/p/demo/", "text/plain; charset=utf-8", 404},
	}
	for _, tc := range cases {
		r := get(t, srv.URL+tc.path)
		if r.code != tc.code {
			t.Errorf("GET %s: %d, want %d\n%s", tc.path, r.code, tc.code, r.body)
		}
		if got := r.header.Get("Content-Type"); got != tc.ctype && !(tc.path == "/metrics" && strings.HasPrefix(got, "text/plain; version=0.0.4")) {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.ctype)
		}
	}
	head := do(t, http.MethodHead, srv.URL+"/")
	if head.code != 200 || head.body != "" || head.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD /: %d %q %q", head.code, head.header.Get("Content-Type"), head.body)
	}
	// /metrics is the exposition `ooda status --metrics` prints.
	m := get(t, srv.URL+"/metrics")
	parser := expfmt.NewTextParser(model.LegacyValidation)
	if _, err := parser.TextToMetricFamilies(strings.NewReader(m.body)); err != nil {
		t.Errorf("/metrics does not parse: %v\n%s", err, m.body)
	}
	if !strings.Contains(m.body, "ooda_cycles_total 6\n") {
		t.Errorf("/metrics lacks the cycles:\n%s", m.body)
	}
}

// /api/status is, byte for byte, `ooda status --json`; /api/scorecard is
// `ooda status --scorecard --json`, with and without a window.
func TestAPIIsTheCommandsJSON(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/safety/HALT", "stopped by hand\n")
	srv := serve(t, dir)
	for _, tc := range []struct {
		path string
		args []string
	}{
		{"/api/status", []string{"status", "--json"}},
		{"/api/scorecard", []string{"status", "--scorecard", "--json"}},
		{"/api/scorecard?window=2", []string{"status", "--scorecard", "--window", "2", "--json"}},
	} {
		r := get(t, srv.URL+tc.path)
		if want := cliOut(t, dir, tc.args...); r.body != want {
			t.Errorf("GET %s differs from ooda %s:\n%s\nwant:\n%s", tc.path, strings.Join(tc.args, " "), r.body, want)
		}
	}
	var doc struct {
		Halt struct{ Active bool } `json:"halt"`
	}
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/status").body), &doc); err != nil || !doc.Halt.Active {
		t.Errorf("the HALT is not in /api/status: %v %+v", err, doc)
	}
}

// The headers every response carries, an error's included.
func TestSecurityHeaders(t *testing.T) {
	srv := serve(t, demo(t, "", "demo"))
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	}
	for _, rq := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/api/status"}, {"GET", "/api/scorecard"}, {"GET", "/api/history"},
		{"GET", "/metrics"}, {"GET", "/static/dashboard.css"}, {"GET", "/missing"},
		{"GET", "/api/history?from=1&to=99999"}, {"HEAD", "/"}, {"POST", "/"}, {"DELETE", "/api/status"},
	} {
		r := do(t, rq.method, srv.URL+rq.path)
		for k, v := range want {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s %s (%d): %s = %q, want %q", rq.method, rq.path, r.code, k, got, v)
			}
		}
	}
}

// tree lists every file under dir with its size, mode and modification
// time, so that a write anywhere shows.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Only GET and HEAD are served, and nothing a request does writes to the
// project: no lock, no file set aside, not even a corrupt one.
func TestOnlyReads(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/memos.json", "{not json")
	srv := serve(t, dir)
	before := tree(t, dir)
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		for _, p := range []string{"/", "/api/status", "/metrics"} {
			r := do(t, m, srv.URL+p)
			if r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d (Allow %q), want 405 (GET, HEAD)", m, p, r.code, r.header.Get("Allow"))
			}
		}
	}
	for _, p := range []string{"/", "/api/status", "/api/scorecard", "/api/history", "/metrics"} {
		get(t, srv.URL+p)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("serving changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A summary, a status, an action title, a HALT reason and the mission
// holding markup are shown as text: no element is made of them, and a
// known secret among them is masked on the page and in the JSON.
func TestHostileStringsAreText(t *testing.T) {
	const tok = "ghp_dashboardToken0123456789"
	secret.Register(tok)
	dir := demo(t, "", "demo")
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	replaceIn(t, dir, "agent/state/evolve/state.json", `"summary": "backlog unchanged"`, `"summary": "`+strings.ReplaceAll(evil, `"`, `\"`)+` `+tok+`"`)
	replaceIn(t, dir, "agent/state/evolve/action_queue.json", "Add tests for the retry wrapper", `</td><script>alert(3)</script>`)
	replaceIn(t, dir, "agent/state/backlog.json", `"idle"`, `"<script>alert(4)</script>\u001b[2J"`)
	replaceIn(t, dir, "config.json", "Keep the example service healthy and its tests green.", `<script>alert(5)</script>`)
	write(t, dir, "agent/safety/HALT", "<script>alert(6)</script> "+tok+"\n")
	srv := serve(t, dir)
	page := get(t, srv.URL+"/")
	if page.code != 200 {
		t.Fatalf("GET /: %d\n%s", page.code, page.body)
	}
	low := strings.ToLower(withoutLiveScript(t, page.body))
	for _, bad := range []string{"<script", "<img", tok, "\x1b"} {
		if strings.Contains(low, strings.ToLower(bad)) {
			t.Errorf("the page holds %q:\n%s", bad, page.body)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; ***",
		"&lt;/td&gt;&lt;script&gt;alert(3)&lt;/script&gt;",
		`&lt;script&gt;alert(4)&lt;/script&gt;\x1b[2J`,
		"&lt;script&gt;alert(5)&lt;/script&gt;",
		"&lt;script&gt;alert(6)&lt;/script&gt; ***",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page does not show %q as text:\n%s", want, page.body)
		}
	}
	for _, p := range []string{"/api/status", "/api/history", "/metrics"} {
		if r := get(t, srv.URL+p); strings.Contains(r.body, tok) || strings.Contains(r.body, "\x1b") {
			t.Errorf("%s carries the token or an escape:\n%s", p, r.body)
		}
	}
}

// A corrupt state file is named on the page, relative to the project, and
// the rest still renders.
func TestCorruptFileIsNamed(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/confidence.json", "{\"backlog\": ")
	srv := serve(t, dir)
	r := get(t, srv.URL+"/")
	if r.code != 200 {
		t.Fatalf("GET /: %d", r.code)
	}
	if !strings.Contains(r.body, `<section id="corrupt"`) || !strings.Contains(r.body, "<code>agent/state/evolve/confidence.json</code>") {
		t.Errorf("the corrupt file is not named:\n%s", r.body)
	}
	if strings.Contains(r.body, dir) {
		t.Errorf("the page shows where the project lives:\n%s", r.body)
	}
	if !strings.Contains(r.body, "service_health") {
		t.Errorf("the domains are not shown:\n%s", r.body)
	}
}

// A named pipe in place of a state file, the HALT file, the cycle log or
// the configuration does not block a request: each is refused and named.
func TestFIFOsDoNotHang(t *testing.T) {
	dir := demo(t, "", "demo")
	fifo := func(dir, rel string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		os.Remove(p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"agent/state/evolve/confidence.json", "agent/state/evolve/cycle_log.jsonl", "agent/state/backlog.json", "agent/state/evolve/sessions/s1.json"} {
		fifo(dir, rel)
	}
	srv := serve(t, dir)
	page := get(t, srv.URL+"/")
	for _, want := range []string{"agent/state/evolve/confidence.json", "agent/state/backlog.json", "agent/state/evolve/cycle_log.jsonl"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page does not name %s:\n%s", want, page.body)
		}
	}
	if r := get(t, srv.URL+"/api/history"); r.code != 500 || !strings.Contains(r.body, "cycle_log.jsonl") {
		t.Errorf("/api/history over a pipe: %d %s", r.code, r.body)
	}
	for _, p := range []string{"/api/status", "/api/scorecard", "/metrics"} {
		if r := get(t, srv.URL+p); r.code != 200 {
			t.Errorf("GET %s: %d", p, r.code)
		}
	}

	// The configuration refuses a HALT path that is a pipe: the page
	// says so.
	haltDir := demo(t, "", "halt")
	fifo(haltDir, "agent/safety/HALT")
	if r := get(t, serve(t, haltDir).URL+"/"); r.code != 500 || !strings.Contains(r.body, "agent/safety/HALT") || strings.Contains(r.body, haltDir) {
		t.Errorf("a HALT file that is a pipe: %d\n%s", r.code, r.body)
	}

	cfgDir := demo(t, "", "cfg")
	os.Remove(filepath.Join(cfgDir, "config.json"))
	h, err := dashboard.New(dashboard.Options{Projects: []dashboard.Project{{Name: "cfg", Dir: cfgDir}}, Many: true, Now: func() time.Time { return demoNow }})
	if err != nil {
		t.Fatal(err)
	}
	many := httptest.NewServer(h)
	defer many.Close()
	if err := syscall.Mkfifo(filepath.Join(cfgDir, "config.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := get(t, many.URL+"/"); r.code != 200 || !strings.Contains(r.body, "config.json") {
		t.Errorf("a configuration that is a pipe is not named in the list: %d\n%s", r.code, r.body)
	}
	if r := get(t, many.URL+"/p/cfg/"); r.code != 500 || !strings.Contains(r.body, "config.json") {
		t.Errorf("a configuration that is a pipe: %d\n%s", r.code, r.body)
	}
}

// history decodes /api/history and returns the cycle ids.
func history(t *testing.T, r response) []int {
	t.Helper()
	if r.code != 200 {
		t.Fatalf("history: %d %s", r.code, r.body)
	}
	var recs []map[string]any
	if err := json.Unmarshal([]byte(r.body), &recs); err != nil {
		t.Fatalf("history is not a JSON array: %v\n%s", err, r.body)
	}
	ids := []int{}
	for _, rec := range recs {
		ids = append(ids, int(rec["cycle_id"].(float64)))
	}
	return ids
}

// /api/history serves the cycles of a range with later annotations
// applied, and refuses a range wider than MaxHistoryCycles or malformed.
func TestHistory(t *testing.T) {
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/cycle_log.annotations.jsonl", `{"cycle_id":3,"annotate":{"result_type":"pr_merged_held","pr_number":7}}`+"\n")
	srv := serve(t, dir)
	if got := history(t, get(t, srv.URL+"/api/history")); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("the whole history: %v", got)
	}
	if got := history(t, get(t, srv.URL+"/api/history?from=2&to=3")); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("from=2&to=3: %v", got)
	}
	if got := history(t, get(t, srv.URL+"/api/history?from=5")); !slices.Equal(got, []int{5, 6}) {
		t.Errorf("from=5: %v", got)
	}
	if got := history(t, get(t, srv.URL+"/api/history?to=2")); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("to=2: %v", got)
	}
	if got := history(t, get(t, srv.URL+"/api/history?from=100&to=200")); len(got) != 0 {
		t.Errorf("a range past the history: %v", got)
	}
	if got := history(t, get(t, srv.URL+fmt.Sprintf("/api/history?from=1&to=%d", dashboard.MaxHistoryCycles))); len(got) != 6 {
		t.Errorf("the widest range: %v", got)
	}
	var recs []map[string]any
	json.Unmarshal([]byte(get(t, srv.URL+"/api/history?from=3&to=3").body), &recs)
	if len(recs) != 1 || recs[0]["result_type"] != "pr_merged_held" || recs[0]["pr_number"] != float64(7) {
		t.Errorf("the annotation is not applied: %v", recs)
	}
	for _, q := range []string{
		fmt.Sprintf("from=1&to=%d", dashboard.MaxHistoryCycles+1),
		"from=1&to=99999999",
		"from=5&to=2",
		"from=0&to=3",
		"from=-1",
		"from=x",
		"to=",
		"from=1e3",
	} {
		r := get(t, srv.URL+"/api/history?"+q)
		if r.code != 400 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("history?%s: %d %q, want 400", q, r.code, r.header.Get("Content-Type"))
		}
		var e struct{ Error string }
		if json.Unmarshal([]byte(r.body), &e) != nil || e.Error == "" {
			t.Errorf("history?%s: no error said: %s", q, r.body)
		}
	}
}

// Many projects: a list with one row each, linking to each project's page
// and API under /p/<name>/; a name that is no project is 404; /metrics
// labels every series with its project; a project named with markup is
// text.
func TestManyProjects(t *testing.T) {
	root := t.TempDir()
	a, b := demo(t, root, "a/api"), demo(t, root, "b/api")
	evil := demo(t, root, "x/<script>alert(1)")
	write(t, b, "agent/safety/HALT", "maintenance\n")
	mps, err := metrics.Projects([]string{a, b, evil})
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
	srv := httptest.NewServer(h)
	defer srv.Close()

	list := get(t, srv.URL+"/")
	if list.code != 200 {
		t.Fatalf("GET /: %d", list.code)
	}
	if n := strings.Count(list.body, "<tr>\n<td><a href="); n != 3 {
		t.Errorf("%d project rows, want 3:\n%s", n, list.body)
	}
	for _, want := range []string{`<a href="/p/a/api/">a/api</a>`, `<a href="/p/b/api/">b/api</a>`, "ACTIVE: maintenance", "$0.04 of $10.00", "F"} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the list lacks %q:\n%s", want, list.body)
		}
	}
	if strings.Contains(withoutLiveScript(t, list.body), "<script") || !strings.Contains(list.body, "&lt;script&gt;alert(1)") {
		t.Errorf("the project named with markup is not text:\n%s", list.body)
	}

	for _, tc := range []struct {
		path string
		code int
	}{
		{"/p/a/api/", 200}, {"/p/b/api/api/status", 200}, {"/p/a/api/api/scorecard?window=3", 200},
		{"/p/a/api/api/history?from=1&to=2", 200}, {"/p/a/api/nothing", 404},
		{"/p/nope/", 404}, {"/p/api/", 404}, {"/p/", 404}, {"/p/a/", 404},
		{"/api/status", 404}, {"/p/../a/api/", 404},
	} {
		if r := get(t, srv.URL+tc.path); r.code != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.path, r.code, tc.code)
		}
	}
	// The escaped link of the project named with markup leads to it.
	evilPage := get(t, srv.URL+"/p/%3Cscript%3Ealert%281%29/")
	if evilPage.code != 200 || strings.Contains(withoutLiveScript(t, evilPage.body), "<script") {
		t.Errorf("the page of the project named with markup: %d\n%s", evilPage.code, evilPage.body)
	}
	// A project without its trailing slash is sent to its page.
	noFollow := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(srv.URL + "/p/a/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/p/a/api/" {
		t.Errorf("/p/a/api: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Each project's API is that project's: b is halted, a is not.
	if got, want := get(t, srv.URL+"/p/b/api/api/status").body, cliOut(t, b, "status", "--json"); got != want {
		t.Errorf("/p/b/api/api/status is not b's status:\n%s\nwant:\n%s", got, want)
	}
	if got, want := get(t, srv.URL+"/p/a/api/api/status").body, cliOut(t, a, "status", "--json"); got != want {
		t.Errorf("/p/a/api/api/status is not a's status")
	}
	if page := get(t, srv.URL+"/p/b/api/"); !strings.Contains(page.body, "HALT: ACTIVE") || !strings.Contains(page.body, `<a href="/">All projects</a>`) || !strings.Contains(page.body, `href="/p/b/api/api/status"`) {
		t.Errorf("b's page:\n%s", page.body)
	}

	m := get(t, srv.URL+"/metrics")
	parser := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(m.body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	halted := map[string]float64{}
	for _, s := range mfs["ooda_halt_active"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "project" {
				halted[l.GetValue()] = s.GetGauge().GetValue()
			}
		}
	}
	if halted["a/api"] != 0 || halted["b/api"] != 1 || len(halted) != 3 {
		t.Errorf("ooda_halt_active by project: %v", halted)
	}

	// A configuration broken while the server runs is named in its row.
	write(t, a, "config.json", "{")
	if r := get(t, srv.URL+"/"); !strings.Contains(r.body, "invalid configuration") || !strings.Contains(r.body, "config.json") {
		t.Errorf("the broken configuration is not named:\n%s", r.body)
	}
}

// New refuses what it cannot serve.
func TestNewRefuses(t *testing.T) {
	if _, err := dashboard.New(dashboard.Options{}); err == nil {
		t.Error("no project: no error")
	}
	two := []dashboard.Project{{Name: "a", Dir: "/a"}, {Name: "b", Dir: "/b"}}
	if _, err := dashboard.New(dashboard.Options{Projects: two}); err == nil {
		t.Error("two projects without Many: no error")
	}
	same := []dashboard.Project{{Name: "a", Dir: "/a"}, {Name: "a", Dir: "/b"}}
	if _, err := dashboard.New(dashboard.Options{Projects: same, Many: true}); err == nil {
		t.Error("two projects of one name: no error")
	}
}

// The page and the style sheet name no other origin: everything the page
// needs is served by the dashboard itself, and its only script is the
// live-update script it serves.
func TestNoExternalURL(t *testing.T) {
	srv := serve(t, demo(t, "", "demo"))
	for _, p := range []string{"/", "/static/dashboard.css", "/live.js"} {
		body := get(t, srv.URL+p).body
		if p == "/" {
			body = withoutLiveScript(t, body)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "<script", "style=\""} {
			if strings.Contains(body, bad) {
				t.Errorf("%s holds %q", p, bad)
			}
		}
	}
}

// A known secret in a goal's title or a skill's name — text the history
// plots draw and cut to a legend's width — is masked on the page and in
// the self-contained file (safetext.Text masks before it is cut), whole
// or cut.
func TestPlotLegendsMaskSecrets(t *testing.T) {
	const tok = "ghp_plotLegendToken0123456789"
	secret.Register(tok)
	dir := demo(t, "", "demo")
	write(t, dir, "agent/state/evolve/goals.json", `{"schema_version": "1.0.0", "goals": [
  {"id": "G1", "title": "`+tok+`", "status": "active", "progress": 0.4}]}
`)
	logPath := filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"cycle_id":7,"timestamp":"2026-01-06T09:00:00Z","domain":"backlog","skill":"%s","result":"success","result_type":"observe","quality_multiplier":0.1,"skill_seconds":0.5}`+"\n", tok)
	f.Close()
	page := get(t, serve(t, dir).URL+"/").body
	var file bytes.Buffer
	if _, err := dashboard.WriteHTML(&file, dir, "", time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"the page": page, "the file": file.String()} {
		if !strings.Contains(body, `data-goal="G1"`) || !strings.Contains(body, `data-skill="***"`) {
			t.Errorf("%s lacks the goal's or the masked skill's points", name)
		}
		if strings.Contains(body, tok[:12]) {
			t.Errorf("%s holds the token, or its start:\n%s", name, body)
		}
	}
}
