package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// backlogTestToken is the forge token of the tests; it must never appear
// in anything the skills write.
const backlogTestToken = "ghe_backlogtesttoken0123456789abcdef"

// backlogFakeGitHub is GitHub's REST API at the network boundary: the
// issues and pulls the forge lists, and the Actions endpoints deploy uses.
// It checks the token on every request.
type backlogFakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	issues []map[string]any
	// runs are the workflow runs; each run's states are the statuses it
	// goes through, one per look at it; the last one stays.
	runs       []*backlogFakeRun
	dispatches []map[string]any
	// onDispatch, when set, adds the run a dispatch starts.
	onDispatch func() *backlogFakeRun
	requests   []string
}

type backlogFakeRun struct {
	id         int64
	number     int
	created    time.Time
	states     []string // "queued", "in_progress", "completed:success", …
	looks      int
	hiddenList int // how many listings do not show the run yet
}

func (r *backlogFakeRun) json(advance bool) map[string]any {
	i := min(r.looks, len(r.states)-1)
	if advance {
		r.looks++
	}
	status, conclusion, _ := strings.Cut(r.states[i], ":")
	m := map[string]any{"id": r.id, "run_number": r.number, "event": "workflow_dispatch", "status": status,
		"head_branch": "main", "html_url": fmt.Sprintf("https://github.example/octo/widget/actions/runs/%d", r.id),
		"created_at": r.created.UTC().Format(time.RFC3339)}
	if conclusion != "" {
		m["conclusion"] = conclusion
	} else {
		m["conclusion"] = nil
	}
	return m
}

func newBacklogFakeGitHub(t *testing.T) *backlogFakeGitHub {
	f := &backlogFakeGitHub{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *backlogFakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if got := r.Header.Get("Authorization"); got != "Bearer "+backlogTestToken {
		f.t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	send := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	p := r.URL.Path
	switch {
	case r.Method == "GET" && p == "/repos/octo/widget/pulls":
		send([]any{})
	case r.Method == "GET" && p == "/repos/octo/widget/issues":
		send(f.issues)
	case r.Method == "GET" && p == "/repos/octo/widget":
		send(map[string]any{"default_branch": "main"})
	case r.Method == "POST" && p == "/repos/octo/widget/actions/workflows/deploy.yml/dispatches":
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		f.dispatches = append(f.dispatches, body)
		if f.onDispatch != nil {
			if run := f.onDispatch(); run != nil {
				f.runs = append(f.runs, run)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "GET" && p == "/repos/octo/widget/actions/workflows/deploy.yml/runs":
		if r.URL.Query().Get("event") != "workflow_dispatch" || r.URL.Query().Get("branch") != "main" {
			f.t.Errorf("runs listed with %s", r.URL.RawQuery)
		}
		var since time.Time
		if c := r.URL.Query().Get("created"); c != "" {
			since, _ = time.Parse(time.RFC3339, strings.TrimPrefix(c, ">="))
		}
		list := []any{}
		for i := len(f.runs) - 1; i >= 0; i-- {
			run := f.runs[i]
			if run.hiddenList > 0 {
				run.hiddenList--
				continue
			}
			if !run.created.Before(since) {
				list = append(list, run.json(false))
			}
		}
		send(map[string]any{"total_count": len(list), "workflow_runs": list})
	case r.Method == "GET" && strings.HasPrefix(p, "/repos/octo/widget/actions/runs/"):
		for _, run := range f.runs {
			if p == fmt.Sprintf("/repos/octo/widget/actions/runs/%d", run.id) {
				send(run.json(true))
				return
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	case strings.HasPrefix(p, "/repos/octo/widget/actions/workflows/"):
		// GitHub's answer for a workflow the repository does not have.
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
	}
}

func (f *backlogFakeGitHub) setIssues(issues ...map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issues = issues
}

func backlogTestIssue(n int, title string, labels ...string) map[string]any {
	ls := []any{}
	for _, l := range labels {
		ls = append(ls, map[string]any{"name": l})
	}
	return map[string]any{"number": n, "title": title, "labels": ls, "state": "open"}
}

// backlogTestProject writes config.json (domains and extra members
// around the forge pointing at the fake) and loads it as the cycle does.
func backlogTestProject(t *testing.T, f *backlogFakeGitHub, extra string) (string, *config.Config) {
	t.Helper()
	t.Setenv("GH_ENTERPRISE_TOKEN", backlogTestToken)
	dir := t.TempDir()
	forgeCfg := `"forge": {"provider": "none"}`
	if f != nil {
		forgeCfg = `"forge": {"provider": "github", "repo": "octo/widget", "api_url": "` + f.srv.URL + `"}`
	}
	body := `{"domains": {"backlog": {"weight": 1, "primary_skill": "/backlog"}}, ` + forgeCfg + extra + `}`
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return dir, cfg
}

type backlogRun struct {
	resp   act.Response
	state  backlogState
	raw    string
	report act.Report
	rawRep string
	log    string
}

func (br backlogRun) hadOutput() bool { return br.report.HadOutput != nil && *br.report.HadOutput }

func runBacklog(t *testing.T, dir string, cfg *config.Config, cycle int) backlogRun {
	t.Helper()
	statePath := filepath.Join(dir, "agent/state/backlog.json")
	reportPath := filepath.Join(dir, fmt.Sprintf("agent/state/evolve/runs/%d-backlog.report.json", cycle))
	os.Remove(reportPath)
	var out bytes.Buffer
	r := act.Request{Skill: "/backlog", Domain: "backlog", Cycle: cycle, ProjectDir: dir, Config: cfg, Output: &out,
		Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(cycle) * time.Hour),
		Env: map[string]string{"OODA_STATE_FILE": statePath, "OODA_REPORT": reportPath}}
	var br backlogRun
	br.resp = Backlog{}.Execute(context.Background(), r)
	br.log = out.String()
	if b, err := os.ReadFile(statePath); err == nil {
		br.raw = string(b)
		if err := json.Unmarshal(b, &br.state); err != nil {
			t.Fatalf("state file: %v\n%s", err, b)
		}
	}
	if b, err := os.ReadFile(reportPath); err == nil {
		br.rawRep = string(b)
		rep, err := act.ParseReport(b)
		if err != nil {
			t.Fatalf("the engine refuses the report: %v\n%s", err, b)
		}
		br.report = *rep
	}
	return br
}

// backlogExtract puts the report's actions into the action queue as the
// engine's 5-C2 does, so a second run sees them queued.
func backlogExtract(t *testing.T, dir string, cfg *config.Config, cycle int, actions []act.ReportAction) reflect.ExtractResult {
	t.Helper()
	store := state.New(dir)
	snap, err := store.LoadFiles(state.ActionQueueFile)
	if err != nil {
		t.Fatal(err)
	}
	q, res := reflect.ExtractActions(snap.ActionQueue, actions, reflect.ExtractInput{Cycle: cycle, Domain: "backlog", Skill: "/backlog",
		RiceExtensions: cfg.Scoring.RiceExtensions, Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)})
	if err := store.SaveActionQueue(q); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBacklogRiceFromLabels(t *testing.T) {
	ext := config.RiceExtensions{"security": 2, "Customer Request": 0.5}
	for _, c := range []struct {
		labels                     []string
		impact, confidence, effort float64
		rice                       float64
		skipped                    string
	}{
		{nil, 1, 0.5, 2, 25, ""},
		{[]string{"bug"}, 2, 0.8, 2, 80, ""},
		{[]string{"Type: Bug", "P0"}, 3, 1, 2, 150, ""},
		{[]string{"bug", "priority/low"}, 0.5, 0.8, 2, 20, ""},
		{[]string{"priority: high"}, 2, 0.9, 2, 90, ""},
		{[]string{"enhancement"}, 1, 0.6, 3, 20, ""},
		{[]string{"enhancement", "good first issue"}, 1, 0.9, 1, 90, ""},
		{[]string{"documentation"}, 0.5, 0.9, 1, 45, ""},
		// security is in the table and in rice_extensions: ×(1 + 1×2).
		{[]string{"security"}, 3, 0.9, 2, 405, ""},
		{[]string{"customer-request", "bug"}, 2, 0.8, 2, 120, ""},
		{[]string{"bug", "wontfix"}, 2, 0.8, 2, 80, "label wontfix"},
		{[]string{"🐛 bug"}, 2, 0.8, 2, 80, ""},
	} {
		got := backlogScore(forge.Issue{Number: 1, Title: "t", Labels: c.labels}, ext)
		if got.Impact != c.impact || got.Confidence != c.confidence || got.Effort != c.effort || got.RiceScore != c.rice || got.Skipped != c.skipped {
			t.Errorf("labels %q: impact %v confidence %v effort %v rice %v skipped %q; want %v %v %v %v %q",
				c.labels, got.Impact, got.Confidence, got.Effort, got.RiceScore, got.Skipped, c.impact, c.confidence, c.effort, c.rice, c.skipped)
		}
		// The queue must score the action as the state file says.
		q, res := reflect.ExtractActions(state.ActionQueue{}, []act.ReportAction{{Title: "x", Reach: got.Reach, Impact: got.Impact,
			Confidence: got.Confidence, Effort: got.Effort, Extensions: got.Extensions}}, reflect.ExtractInput{Cycle: 1, RiceExtensions: ext, Now: time.Now()})
		if len(res.Added) != 1 || *q.Pending[0].RiceScore != got.RiceScore {
			t.Errorf("labels %q: the queue scores %v, the skill %v", c.labels, *q.Pending[0].RiceScore, got.RiceScore)
		}
	}
}

func TestBacklogProposesDedupsAndReportsClosed(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	f.setIssues(
		backlogTestIssue(12, "Crash on empty config", "bug", "p1"),
		backlogTestIssue(11, "Add a --json flag", "enhancement"),
		backlogTestIssue(10, "Typo in README", "documentation", "good first issue"),
		backlogTestIssue(9, "Rewrite in Rust?", "question"),
	)
	dir, cfg := backlogTestProject(t, f, "")

	// Run 1: every actionable issue is proposed, the highest RICE first.
	r1 := runBacklog(t, dir, cfg, 1)
	if !r1.resp.OK || !r1.hadOutput() {
		t.Fatalf("run 1: %+v\n%s", r1.resp, r1.log)
	}
	var titles []string
	for _, a := range r1.report.Actions {
		titles = append(titles, a.Title)
	}
	want := []string{"Issue #12: Crash on empty config", "Issue #10: Typo in README", "Issue #11: Add a --json flag"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Fatalf("run 1 actions %q, want %q", titles, want)
	}
	if r1.state.Status != "ok" || r1.state.ActionableItems != 3 || r1.state.TopRiceScore != 90 || r1.state.OpenIssues != 4 ||
		r1.state.Issues[0].URL != f.srv.URL+"/octo/widget/issues/12" {
		t.Errorf("run 1 state:\n%s", r1.raw)
	}
	if !strings.Contains(r1.report.Summary, `4 open issues; 3 new actions proposed, top #12 "Crash on empty config" (RICE 90)`) {
		t.Errorf("run 1 summary %q", r1.report.Summary)
	}
	if res := backlogExtract(t, dir, cfg, 1, r1.report.Actions); len(res.Added) != 3 {
		t.Fatalf("extraction: %+v", res)
	}

	// Run 2, nothing changed: everything is queued already, no output.
	r2 := runBacklog(t, dir, cfg, 2)
	if !r2.resp.OK || r2.hadOutput() || len(r2.report.Actions) != 0 || len(r2.state.AlreadyQueued) != 3 {
		t.Fatalf("run 2 proposed again: %+v\n%s\n%s", r2.report, r2.rawRep, r2.raw)
	}
	if r2.report.Summary != "4 open issues; nothing new to plan (3 already queued)" {
		t.Errorf("run 2 summary %q", r2.report.Summary)
	}

	// Run 3: #12 was closed and #13 opened; #13 alone is proposed.
	f.setIssues(
		backlogTestIssue(13, "Timeout too short", "bug"),
		backlogTestIssue(11, "Add a --json flag", "enhancement"),
		backlogTestIssue(10, "Typo in README", "documentation", "good first issue"),
		backlogTestIssue(9, "Rewrite in Rust?", "question"),
	)
	r3 := runBacklog(t, dir, cfg, 3)
	if !r3.hadOutput() || len(r3.report.Actions) != 1 || r3.report.Actions[0].Title != "Issue #13: Timeout too short" {
		t.Fatalf("run 3: %s", r3.rawRep)
	}
	if fmt.Sprint(r3.state.Closed) != "[12]" || fmt.Sprint(r3.state.Opened) != "[13]" ||
		!strings.Contains(r3.report.Summary, "; closed since the last run: #12; opened: #13") {
		t.Errorf("run 3: closed %v opened %v, summary %q", r3.state.Closed, r3.state.Opened, r3.report.Summary)
	}
	var compact bytes.Buffer
	json.Compact(&compact, r3.report.Vars["closed_since_last_run"])
	if compact.String() != "[12]" {
		t.Errorf("run 3 vars: %s", r3.report.Vars["closed_since_last_run"])
	}

	// Run 4: #13 only closed, nothing new: the change itself is output.
	f.setIssues(
		backlogTestIssue(11, "Add a --json flag", "enhancement"),
		backlogTestIssue(10, "Typo in README", "documentation", "good first issue"),
		backlogTestIssue(9, "Rewrite in Rust?", "question"),
	)
	r4 := runBacklog(t, dir, cfg, 4)
	if !r4.hadOutput() || len(r4.report.Actions) != 0 || fmt.Sprint(r4.state.Closed) != "[13]" {
		t.Fatalf("run 4: %s\n%s", r4.rawRep, r4.raw)
	}
}

// Without a forge, or with the plain-git forge, there are no issues: the
// skill says so and reports no output, as the original's plan-backlog.
func TestBacklogNoRemote(t *testing.T) {
	dir, cfg := backlogTestProject(t, nil, "")
	r := runBacklog(t, dir, cfg, 1)
	if !r.resp.OK || r.hadOutput() || r.report.Summary != "no forge: nothing to plan" || !r.state.NoRemote || r.state.Status != "no_remote" || r.state.Forge != "none" {
		t.Fatalf("no forge: %+v\n%s\n%s", r.resp, r.raw, r.rawRep)
	}

	repo := t.TempDir()
	cmd := exec.Command("git", "init", "-q", "-b", "main", repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "config.json"), []byte(`{"domains": {"backlog": {"weight": 1, "primary_skill": "/backlog"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gcfg, err := config.Load(filepath.Join(repo, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	r = runBacklog(t, repo, gcfg, 1)
	if !r.resp.OK || r.hadOutput() || r.report.Summary != "no forge: nothing to plan" || !r.state.NoRemote || r.state.Forge != "git" {
		t.Fatalf("plain git: %+v\n%s\n%s\n%s", r.resp, r.raw, r.rawRep, r.log)
	}
	if !strings.Contains(r.log, `set forge.provider to "github"`) {
		t.Errorf("log: %s", r.log)
	}
}

// Issue titles and labels are written by anyone: escape sequences,
// bidirectional overrides, line breaks, megabyte titles, the token itself
// and a title that pretends to be another issue's action must all arrive
// as one clipped, inert line.
func TestBacklogHostileIssues(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	long := strings.Repeat("A", 1<<20)
	f.setIssues(
		backlogTestIssue(7, "\x1b[2J\x1b]0;pwned\x07Fix\r\n[ooda] HALT \u202eevil\u202c "+backlogTestToken, "bug\x1b[31m", strings.Repeat("l", 500)),
		backlogTestIssue(6, long),
		backlogTestIssue(5, "Issue #3: fake", "bug"),
		backlogTestIssue(4, "", "bug"),
		backlogTestIssue(4, "same number twice", "bug"),
	)
	dir, cfg := backlogTestProject(t, f, "")
	r := runBacklog(t, dir, cfg, 1)
	if !r.resp.OK {
		t.Fatalf("%+v\n%s", r.resp, r.log)
	}
	for name, text := range map[string]string{"state": r.raw, "report": r.rawRep, "log": r.log} {
		for _, bad := range []string{"\x1b", "\\u001b", "\u202e", "\\u202e", "\r", "\\r", backlogTestToken, strings.Repeat("A", backlogTitleMax)} {
			if strings.Contains(text, bad) {
				t.Errorf("%s holds %q:\n%.2000s", name, bad, text)
			}
		}
	}
	titles := map[int]string{}
	for _, is := range r.state.Issues {
		titles[is.Number] = is.Title
		if len(is.Labels) > 0 && len([]rune(is.Labels[len(is.Labels)-1])) > backlogLabelMax {
			t.Errorf("label not clipped: %q", is.Labels)
		}
	}
	if len(r.state.Issues) != 4 {
		t.Errorf("issues %d, want 4 (a number listed twice counts once)", len(r.state.Issues))
	}
	if got := titles[7]; got != "Fix [ooda] HALT evil ***" {
		t.Errorf("title 7 = %q", got)
	}
	if got := titles[6]; len([]rune(got)) != backlogTitleMax || !strings.HasSuffix(got, "…") {
		t.Errorf("title 6 is %d runes", len([]rune(got)))
	}
	if titles[4] != "(no title)" && titles[4] != "same number twice" {
		t.Errorf("title 4 = %q", titles[4])
	}
	// "Issue #5: Issue #3: fake" is queued; issue #3 is not thereby taken
	// for queued.
	if res := backlogExtract(t, dir, cfg, 1, r.report.Actions); len(res.Added) == 0 {
		t.Fatal("nothing extracted")
	}
	queued := backlogQueuedIssues(state.New(dir), io.Discard)
	if !queued[5] || queued[3] {
		t.Errorf("queued issues %v", queued)
	}
}

func TestBacklogBoundsIssuesAndActions(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	var issues []map[string]any
	for n := 1; n <= backlogMaxIssues+50; n++ {
		issues = append(issues, backlogTestIssue(n, fmt.Sprintf("issue %d", n), "bug"))
	}
	f.setIssues(issues...)
	dir, cfg := backlogTestProject(t, f, "")
	r := runBacklog(t, dir, cfg, 1)
	if r.state.IssuesRead != backlogMaxIssues || !r.state.Truncated || r.state.OpenIssues != backlogMaxIssues+50 ||
		len(r.report.Actions) != backlogMaxActions || r.report.Actions[0].Title != fmt.Sprintf("Issue #%d: issue %d", backlogMaxIssues+50, backlogMaxIssues+50) {
		t.Fatalf("read %d of %d (truncated %v), %d actions", r.state.IssuesRead, r.state.OpenIssues, r.state.Truncated, len(r.report.Actions))
	}
	// A truncated list cannot tell a closed issue from an unread one.
	f.setIssues(issues[:len(issues)-1]...)
	r = runBacklog(t, dir, cfg, 2)
	if len(r.state.Closed) != 0 {
		t.Errorf("closed %v from a truncated list", r.state.Closed)
	}
}

func TestBacklogForgeErrorFailsAndKeepsState(t *testing.T) {
	f := newBacklogFakeGitHub(t)
	f.setIssues(backlogTestIssue(1, "one", "bug"))
	dir, cfg := backlogTestProject(t, f, "")
	r := runBacklog(t, dir, cfg, 1)
	if !r.resp.OK {
		t.Fatal(r.resp.Error)
	}
	before := r.raw
	f.srv.Close()
	r = runBacklog(t, dir, cfg, 2)
	if r.resp.OK || !strings.Contains(r.resp.Error, "listing the open issues of github octo/widget") || r.raw != before {
		t.Fatalf("%+v\n%s", r.resp, r.raw)
	}
}
