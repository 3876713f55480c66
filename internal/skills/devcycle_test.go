package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/skills"
)

// devQueue is the action queue every test starts from: a1 is the top
// pending action, a2 a lower one, b0 blocked above both.
const devQueue = `{"schema_version": "1.0.0", "pending": [
  {"id": "a2", "title": "Lower priority", "rice_score": 10, "status": "pending", "extracted_at": "2026-05-01T00:00:00Z"},
  {"id": "b0", "title": "Blocked one", "rice_score": 99, "status": "blocked", "extracted_at": "2026-05-01T00:00:00Z"},
  {"id": "a1", "title": "Add the greeting file", "rice_score": 50, "status": "pending", "extracted_at": "2026-05-01T00:00:00Z", "related_files": ["svc.txt"]}
], "in_progress": [], "completed": []}
`

func devGitEnv(t *testing.T) {
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.invalid")
}

func devGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func devWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// devProject is a committed git repository on main with the queue, and
// the agent script (outside the repository) that the test wrote.
type devProject struct {
	dir    string // the project
	remote string // its bare origin, "" without one
	agent  string // the agent script
	out    string // where the agent leaves what it saw
}

func newDevProject(t *testing.T, agentScript string, withRemote bool) devProject {
	t.Helper()
	devGitEnv(t)
	p := devProject{dir: t.TempDir(), out: t.TempDir()}
	devWrite(t, filepath.Join(p.dir, "svc.txt"), "service\n")
	devWrite(t, filepath.Join(p.dir, "secrets/key.txt"), "key\n")
	devWrite(t, filepath.Join(p.dir, "agent/state/evolve/action_queue.json"), devQueue)
	devGit(t, p.dir, "init", "--quiet", "-b", "main")
	devGit(t, p.dir, "add", "-A")
	devGit(t, p.dir, "commit", "--quiet", "-m", "initial")
	if withRemote {
		p.remote = t.TempDir()
		devGit(t, p.remote, "init", "--quiet", "--bare", "-b", "main")
		devGit(t, p.dir, "remote", "add", "origin", p.remote)
		devGit(t, p.dir, "push", "--quiet", "-u", "origin", "main")
	}
	p.agent = filepath.Join(t.TempDir(), "agent.sh")
	devWrite(t, p.agent, agentScript)
	return p
}

// config is the project's configuration with the agent, as config.json
// would give it.
func (p devProject) config(t *testing.T, extra string) *config.Config {
	t.Helper()
	if !strings.Contains(extra, `"test_command"`) {
		extra += `, "test_command": "test -f greeting.txt"`
	}
	raw := `{"agent": {"command": ["/bin/sh", "` + p.agent + `", "{prompt_file}", "{prompt}"], "timeout": "1m", "env": {"OUT": "` + p.out + `"}},
	  "safety": {"protected_paths": ["secrets/*"], "max_files_per_pr": 3, "max_lines_per_pr": 20}` + extra + `}`
	cfg, err := config.ParseProject("config.json", []byte(raw), p.dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// argvRecorder runs processes for real and remembers every argv.
type argvRecorder struct {
	mu   sync.Mutex
	argv [][]string
}

func (a *argvRecorder) Run(ctx context.Context, s proc.Spec) proc.Result {
	a.mu.Lock()
	a.argv = append(a.argv, append([]string(nil), s.Argv...))
	a.mu.Unlock()
	return proc.Exec{}.Run(ctx, s)
}

type devResult struct {
	resp act.Response
	rep  act.Report
	raw  string
	log  string
	rec  *argvRecorder
}

func (p devProject) run(t *testing.T, cfg *config.Config, cycle int) devResult {
	t.Helper()
	report := filepath.Join(p.dir, "agent/state/evolve/runs", "dev-cycle.report.json")
	_ = os.Remove(report)
	var log bytes.Buffer
	rec := &argvRecorder{}
	resp := skills.DevCycle{}.Execute(context.Background(), act.Request{
		Skill: "/dev-cycle", Domain: "implementation", Cycle: cycle, ProjectDir: p.dir,
		Now: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC), Env: map[string]string{"OODA_REPORT": report},
		Timeout: time.Minute, Output: &log, Config: cfg, Runner: rec,
	})
	res := devResult{resp: resp, log: log.String(), rec: rec}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, res.log)
	}
	res.raw = string(b)
	if err := json.Unmarshal(b, &res.rep); err != nil {
		t.Fatal(err)
	}
	return res
}

type devItem struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	PR       *int   `json:"pr_number"`
	Branch   string `json:"branch"`
	Note     string `json:"dev_cycle_note"`
	Attempts int    `json:"dev_cycle_attempts"`
}

func (p devProject) queue(t *testing.T) (pending, inProgress map[string]devItem) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, "agent/state/evolve/action_queue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var q struct{ Pending, InProgress []devItem }
	var raw struct {
		Pending    []devItem `json:"pending"`
		InProgress []devItem `json:"in_progress"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	q.Pending, q.InProgress = raw.Pending, raw.InProgress
	pending, inProgress = map[string]devItem{}, map[string]devItem{}
	for _, a := range q.Pending {
		pending[a.ID] = a
	}
	for _, a := range q.InProgress {
		inProgress[a.ID] = a
	}
	return pending, inProgress
}

// branches lists the branches of the project besides main.
func (p devProject) branches(t *testing.T) []string {
	out := devGit(t, p.dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
	var bs []string
	for _, b := range strings.Split(out, "\n") {
		if b != "" && b != "main" {
			bs = append(bs, b)
		}
	}
	return bs
}

// noWorktreeLeft checks that the run removed its worktree.
func (p devProject) noWorktreeLeft(t *testing.T) {
	t.Helper()
	if out := devGit(t, p.dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("a worktree is left:\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(p.dir, "agent/state/evolve/worktrees")); len(entries) != 0 {
		t.Errorf("worktrees directory not empty: %v", entries)
	}
}

const devGreetingAgent = `set -e
test -f "$1"
printf '%s\n' "$OODA_ACTION_TITLE" > "$OUT/title"
printf '%s\n' "$PWD" > "$OUT/pwd"
printf 'hello\n' > greeting.txt
printf 'service\nwith greeting\n' > svc.txt
`

// The happy path on the plain-git forge: the top pending action (not the
// blocked one above it) becomes a branch under the prefix with one
// commit, pushed to origin; the forge sees it as an open PR with the
// number reported; the action is in progress as proposed. The user's
// checkout is not touched, and the engine's own modified state file does
// not count as uncommitted work.
func TestDevCycleOpensAPullRequestOnThePlainGitForge(t *testing.T) {
	p := newDevProject(t, devGreetingAgent, true)
	devWrite(t, filepath.Join(p.dir, "agent/state/evolve/action_queue.json"), devQueue+" ")
	r := p.run(t, p.config(t, ""), 7)
	if !r.resp.OK {
		t.Fatalf("run failed: %s\n%s", r.resp.Error, r.log)
	}
	const branch = "auto/dev-cycle/a1-add-the-greeting-file"
	if r.rep.PRNumber == nil || *r.rep.PRNumber != forge.BranchNumber(branch) || r.rep.PRCreated == nil || !*r.rep.PRCreated ||
		r.rep.TestStatus != "passed" || r.rep.ProtectedBlocked != nil || !*r.rep.HadOutput {
		t.Fatalf("report:\n%s\n%s", r.raw, r.log)
	}
	if !strings.Contains(r.rep.Summary, `opened PR #`) || !strings.Contains(r.rep.Summary, `2 file(s), 2 line(s) changed, tests passed`) {
		t.Errorf("summary %q", r.rep.Summary)
	}
	if got := p.branches(t); len(got) != 1 || got[0] != branch {
		t.Fatalf("branches %v", got)
	}
	if got := devGit(t, p.dir, "log", "--format=%s", "main.."+branch); got != "Add the greeting file" {
		t.Errorf("commits on the branch: %q", got)
	}
	if got := devGit(t, p.dir, "rev-parse", branch+"^"); got != devGit(t, p.dir, "rev-parse", "main") {
		t.Errorf("the branch does not start at main")
	}
	if got := devGit(t, p.remote, "rev-parse", branch); got != devGit(t, p.dir, "rev-parse", branch) {
		t.Errorf("not pushed: %s", got)
	}
	if devGit(t, p.dir, "symbolic-ref", "HEAD") != "refs/heads/main" || fileExists(filepath.Join(p.dir, "greeting.txt")) {
		t.Errorf("the user's checkout was changed")
	}
	if pwd, _ := os.ReadFile(filepath.Join(p.out, "pwd")); !strings.Contains(string(pwd), "agent/state/evolve/worktrees/") {
		t.Errorf("the agent ran in %q, not in a worktree", pwd)
	}
	p.noWorktreeLeft(t)
	fg, err := forge.NewGit(forge.GitOptions{Dir: p.dir, BranchPrefixes: []string{"auto/dev-cycle/"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := fg.Status(context.Background())
	if err != nil || len(st.Open) != 1 || st.Open[0].Number != *r.rep.PRNumber || st.Open[0].Title != "Add the greeting file" {
		t.Fatalf("forge status %+v %v", st, err)
	}
	pending, inProgress := p.queue(t)
	a1, ok := inProgress["a1"]
	if !ok || a1.Status != "proposed" || a1.PR == nil || *a1.PR != *r.rep.PRNumber || a1.Branch != branch {
		t.Fatalf("a1 not proposed: %+v", inProgress)
	}
	if _, ok := pending["a1"]; ok || pending["a2"].Status != "pending" || pending["b0"].Status != "blocked" {
		t.Fatalf("pending: %+v", pending)
	}
	prompt, err := os.ReadFile(filepath.Join(p.dir, "agent/state/evolve/runs/7-dev-cycle.prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "Add the greeting file") || !strings.Contains(string(prompt), "secrets/*") ||
		!strings.Contains(string(prompt), "- svc.txt") || !strings.Contains(string(prompt), "test -f greeting.txt") {
		t.Errorf("prompt: %v\n%s", err, prompt)
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// An agent that changes protected paths (one it edits, one it creates)
// gets them reverted: the PR holds the rest, and the report says
// protected_blocked, which keeps it from auto-merge.
func TestDevCycleRevertsProtectedPaths(t *testing.T) {
	p := newDevProject(t, devGreetingAgent+`printf 'stolen\n' > secrets/key.txt
printf 'new\n' > secrets/new.txt
printf 'x\n' > agent/state/evolve/state.json
`, false)
	r := p.run(t, p.config(t, ""), 1)
	if !r.resp.OK || r.rep.ProtectedBlocked == nil || !*r.rep.ProtectedBlocked || r.rep.PRCreated == nil || !*r.rep.PRCreated {
		t.Fatalf("report:\n%s\n%s", r.raw, r.log)
	}
	branch := p.branches(t)[0]
	files := devGit(t, p.dir, "diff", "--name-only", "main", branch)
	if files != "greeting.txt\nsvc.txt" {
		t.Fatalf("the branch changes %q", files)
	}
	var vars struct {
		Reverted []string `json:"reverted_paths"`
	}
	b, _ := json.Marshal(r.rep.Vars)
	_ = json.Unmarshal(b, &vars)
	if strings.Join(vars.Reverted, ",") != "agent/state/evolve/state.json,secrets/key.txt,secrets/new.txt" {
		t.Errorf("reverted %v", vars.Reverted)
	}
	if !strings.Contains(r.log, "reverted secrets/key.txt: it matches the protected path secrets/*") {
		t.Errorf("log:\n%s", r.log)
	}
	p.noWorktreeLeft(t)
}

// A change over max_files_per_pr or max_lines_per_pr is discarded: no
// branch is left, the action stays pending with the reason.
func TestDevCycleAbandonsAChangeOverTheLimits(t *testing.T) {
	for _, tc := range []struct{ name, agent, want string }{
		{"files", devGreetingAgent + "printf '1\\n' > a.txt\nprintf '2\\n' > b.txt\n", "4 files > safety.max_files_per_pr 3"},
		{"lines", devGreetingAgent + "seq 1 30 > a.txt\n", "lines > safety.max_lines_per_pr 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newDevProject(t, tc.agent, false)
			r := p.run(t, p.config(t, ""), 1)
			if !r.resp.OK || *r.rep.PRCreated || r.rep.PRNumber != nil || *r.rep.HadOutput || !strings.Contains(r.rep.Summary, tc.want) {
				t.Fatalf("report:\n%s\n%s", r.raw, r.log)
			}
			if bs := p.branches(t); len(bs) != 0 {
				t.Errorf("branches left: %v", bs)
			}
			pending, inProgress := p.queue(t)
			if a := pending["a1"]; a.Status != "pending" || a.Attempts != 1 || !strings.Contains(a.Note, tc.want) || len(inProgress) != 0 {
				t.Errorf("queue: %+v %+v", pending, inProgress)
			}
			p.noWorktreeLeft(t)
		})
	}
}

// An agent that fails is the run's failure; the action stays pending,
// and the third failure on it marks it blocked.
func TestDevCycleAgentFailing(t *testing.T) {
	p := newDevProject(t, "printf 'half\\n' > greeting.txt\necho 'agent: out of ideas'\nexit 3\n", false)
	cfg := p.config(t, "")
	for i := 1; i <= 3; i++ {
		r := p.run(t, cfg, i)
		if r.resp.OK || r.resp.Error != "the agent failed: exit status 3" || *r.rep.PRCreated {
			t.Fatalf("run %d: %+v\n%s\n%s", i, r.resp, r.raw, r.log)
		}
		if !strings.Contains(r.log, "agent: out of ideas") {
			t.Errorf("the agent's output is not in the run log:\n%s", r.log)
		}
		pending, _ := p.queue(t)
		want := "pending"
		if i == 3 {
			want = "blocked"
		}
		if a := pending["a1"]; a.Status != want || a.Attempts != i {
			t.Fatalf("run %d: a1 %+v", i, a)
		}
	}
	if bs := p.branches(t); len(bs) != 0 {
		t.Errorf("branches left: %v", bs)
	}
	p.noWorktreeLeft(t)
	// Blocked, a1 is passed over.
	r := p.run(t, cfg, 4)
	if !strings.Contains(r.log, "action a2: Lower priority") {
		t.Errorf("the blocked action was taken again:\n%s", r.log)
	}
}

// Tests that fail with the change still give a pull request, with
// test_status failed, which the auto-merge gate refuses.
func TestDevCycleTestsFailingAfterTheChange(t *testing.T) {
	p := newDevProject(t, devGreetingAgent, false)
	r := p.run(t, p.config(t, `, "test_command": "echo 'FAIL: TestGreeting'; exit 1"`), 1)
	if !r.resp.OK || r.rep.TestStatus != "failed" || !*r.rep.PRCreated || r.rep.PRNumber == nil {
		t.Fatalf("report:\n%s\n%s", r.raw, r.log)
	}
	if !strings.Contains(r.log, "FAIL: TestGreeting") {
		t.Errorf("test output not in the log:\n%s", r.log)
	}
	_, inProgress := p.queue(t)
	if inProgress["a1"].Status != "proposed" {
		t.Errorf("a1: %+v", inProgress)
	}
}

// Uncommitted work in the user's checkout: nothing is started, nothing
// written to the queue.
func TestDevCycleRefusesADirtyWorktree(t *testing.T) {
	p := newDevProject(t, devGreetingAgent, false)
	devWrite(t, filepath.Join(p.dir, "svc.txt"), "my unfinished work\n")
	before, _ := os.ReadFile(filepath.Join(p.dir, "agent/state/evolve/action_queue.json"))
	r := p.run(t, p.config(t, ""), 1)
	if r.resp.OK || !strings.Contains(r.resp.Error, "uncommitted changes (svc.txt)") {
		t.Fatalf("%+v\n%s", r.resp, r.log)
	}
	if fileExists(filepath.Join(p.out, "title")) {
		t.Error("the agent ran")
	}
	after, _ := os.ReadFile(filepath.Join(p.dir, "agent/state/evolve/action_queue.json"))
	if !bytes.Equal(before, after) || len(p.branches(t)) != 0 {
		t.Errorf("queue or branches changed")
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "svc.txt")); string(b) != "my unfinished work\n" {
		t.Errorf("the user's work was touched: %q", b)
	}
}

// A hostile action (an id and a title made to be git options, shell
// code, terminal escapes and new lines) reaches git's argv nowhere, runs
// nothing, and is one clean line in the commit, the environment and the
// report.
func TestDevCycleHostileAction(t *testing.T) {
	p := newDevProject(t, devGreetingAgent, false)
	hostile := `{"pending": [{"id": "--upload-pack=touch pwned0", "title": "--upload-pack=touch pwned1\n\u001b[31mRED $(touch pwned2) ` + "`touch pwned3`" + `; touch pwned4", "rice_score": 5}], "in_progress": [], "completed": []}`
	devWrite(t, filepath.Join(p.dir, "agent/state/evolve/action_queue.json"), hostile)
	devGit(t, p.dir, "commit", "--quiet", "-am", "hostile queue")
	r := p.run(t, p.config(t, ""), 1)
	if !r.resp.OK || !*r.rep.PRCreated {
		t.Fatalf("%+v\n%s\n%s", r.resp, r.raw, r.log)
	}
	prompts := 0
	for _, argv := range r.rec.argv {
		for _, a := range argv {
			if strings.HasPrefix(a, "# Implement one action") {
				// The prompt: one argv element of the agent's, the
				// title a line of it, without its escape.
				prompts++
				if strings.Contains(a, "\x1b") {
					t.Errorf("the prompt holds an escape: %q", a)
				}
				continue
			}
			if strings.HasPrefix(a, "-") && strings.Contains(a, "upload-pack") || strings.Contains(a, "touch pwned") || strings.Contains(a, "\x1b") {
				t.Errorf("argv %q holds the action's text", argv)
			}
		}
	}
	if prompts != 1 {
		t.Errorf("the prompt was passed %d times", prompts)
	}
	for _, dir := range []string{p.dir, os.TempDir()} {
		for i := 0; i <= 4; i++ {
			if fileExists(filepath.Join(dir, "pwned"+string(rune('0'+i)))) {
				t.Errorf("pwned%d was created in %s", i, dir)
			}
		}
	}
	branch := p.branches(t)[0]
	if !strings.HasPrefix(branch, "auto/dev-cycle/upload-pack-touch-pwned0-upload-pack-touch-pwned1") {
		t.Errorf("branch %q", branch)
	}
	msg := devGit(t, p.dir, "log", "-1", "--format=%B", branch)
	subject, _, _ := strings.Cut(msg, "\n")
	if strings.ContainsAny(msg, "\x1b\r") || subject != "--upload-pack=touch pwned1 [31mRED $(touch pwned2) `touch pwned3`; touch pwned4" {
		t.Errorf("commit message %q", msg)
	}
	title, _ := os.ReadFile(filepath.Join(p.out, "title"))
	if strings.ContainsAny(strings.TrimSuffix(string(title), "\n"), "\x1b\n") {
		t.Errorf("OODA_ACTION_TITLE %q", title)
	}
	if strings.ContainsAny(r.raw, "\x1b") || strings.Contains(r.log, "\x1b") {
		t.Errorf("escape in report or log:\n%s\n%s", r.raw, r.log)
	}
}

// On GitHub the pushed branch becomes a draft pull request through the
// REST API (a local fake of it): head, base and title as the action has
// them, draft true; its number is the one reported and queued.
func TestDevCycleOpensAGitHubDraft(t *testing.T) {
	const token = "ghe_devcycletesttoken0123456789"
	t.Setenv("GH_ENTERPRISE_TOKEN", token)
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/repos/octo/widget/pulls" || r.Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			http.NotFound(w, r)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"number": 42, "title": %q, "state": "open", "draft": true, "head": {"ref": %q, "sha": "%s"}}`,
			got["title"], got["head"], strings.Repeat("a", 40))
	}))
	defer srv.Close()
	p := newDevProject(t, devGreetingAgent, true)
	r := p.run(t, p.config(t, `, "forge": {"provider": "github", "repo": "octo/widget", "api_url": "`+srv.URL+`"}`), 1)
	if !r.resp.OK || r.rep.PRNumber == nil || *r.rep.PRNumber != 42 || !*r.rep.PRCreated {
		t.Fatalf("%+v\n%s\n%s", r.resp, r.raw, r.log)
	}
	const branch = "auto/dev-cycle/a1-add-the-greeting-file"
	if got["draft"] != true || got["head"] != branch || got["base"] != "main" || got["title"] != "Add the greeting file" ||
		!strings.Contains(got["body"].(string), "Implements action a1") {
		t.Errorf("request body %v", got)
	}
	if devGit(t, p.remote, "rev-parse", branch) != devGit(t, p.dir, "rev-parse", branch) {
		t.Error("the branch was not pushed before the PR was opened")
	}
	_, inProgress := p.queue(t)
	if a := inProgress["a1"]; a.PR == nil || *a.PR != 42 || a.Status != "proposed" {
		t.Errorf("a1: %+v", a)
	}
	if strings.Contains(r.log+r.raw, token) {
		t.Error("the token was written")
	}
}

// Through `ooda cycle` at level 3 with implementation enabled: the
// implementation domain wins on the pending action, the built-in runs
// (no skills entry: the name matches), its PR is read back from the
// plain-git forge, and with auto-merge on the small green change is
// squash-merged into main; the next cycle finds the action merged.
func TestDevCycleThroughOodaCycle(t *testing.T) {
	p := newDevProject(t, "printf '%s\\n' \"$OODA_ACTION_TITLE\" >> greeting.txt\n", false)
	cfg := `{
  "mission": "Greet every user.",
  "domains": {"quality": {"weight": 1, "primary_skill": "/noop", "fallback": true}},
  "implementation": {"enabled": true},
  "skills": {"/dev-cycle": {"builtin": "dev-cycle"}},
  "agent": {"command": ["/bin/sh", "` + p.agent + `", "{prompt_file}"], "timeout": "1m", "env": {"OUT": "` + p.out + `"}},
  "test_command": "test -f greeting.txt",
  "progressive_complexity": {"current_level": 3},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0,
             "enable_auto_merge": true, "protected_paths": ["secrets/*"]}
}`
	devWrite(t, filepath.Join(p.dir, "config.json"), cfg)
	// The queue keeps its blocked item: the engine rewrites the queue at
	// the end of the cycle (the blocked item's bookkeeping), and must keep
	// what the skill changed in the file while it ran.
	devWrite(t, filepath.Join(p.dir, "agent/state/evolve/action_queue.json"), devQueue)
	devGit(t, p.dir, "add", "-A")
	devGit(t, p.dir, "commit", "--quiet", "-m", "config")
	cycle := func(now string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := cli.Main([]string{"cycle", "--project", p.dir, "--now", now}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("ooda cycle exited %d\n%s\n%s", code, out.String(), errb.String())
		}
		return out.String()
	}
	out := cycle("2026-05-04T09:00:00Z")
	for _, want := range []string{
		"[Act] /dev-cycle starting... (builtin dev-cycle)",
		`[Act] /dev-cycle reports: opened PR #338558 (branch auto/dev-cycle/a1-add-the-greeting-file) for action a1 "Add the greeting file": 1 file(s), 1 line(s) changed, tests passed`,
		"[Act] PR #338558 Risk Tier 1 (auto-merge eligible).",
		"[Act] Auto-merged PR #338558 (low-risk, opt-in). Health: ok.",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 1: no %q in\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "greeting.txt")); err != nil || string(b) != "Add the greeting file\n" {
		t.Fatalf("the merge is not on main: %v %q", err, b)
	}
	_, inProgress := p.queue(t)
	if a := inProgress["a1"]; a.Status != "proposed" || a.PR == nil || *a.PR != 338558 {
		t.Fatalf("after cycle 1, a1 is not proposed: %+v", inProgress)
	}

	// The merged PR moves the action to completed; the next action's turn.
	out = cycle("2026-05-04T10:00:00Z")
	if !strings.Contains(out, "[Orient] PR #338558 merged") || !strings.Contains(out, `for action a2 "Lower priority"`) ||
		!strings.Contains(out, "Auto-merged PR #") {
		t.Fatalf("cycle 2:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(p.dir, "agent/state/evolve/action_queue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var q struct {
		Completed []devItem `json:"completed"`
	}
	merged := false
	if err := json.Unmarshal(b, &q); err == nil {
		for _, a := range q.Completed {
			merged = merged || (a.ID == "a1" && a.Status == "merged")
		}
	}
	if !merged {
		t.Fatalf("a1 not merged:\n%s", b)
	}
}
