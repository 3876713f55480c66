package deploy_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The instants the cycles run at: far enough apart for the minimum cycle
// interval, on one UTC day for the cost cap.
const (
	firstCycleAt  = "2026-03-02T09:00:00Z"
	secondCycleAt = "2026-03-02T11:00:00Z"
	thirdCycleAt  = "2026-03-02T13:00:00Z"
)

// project is a user's repository: a bare "remote" and a clone of it with
// ooda configured, as actions/checkout leaves it.
type project struct {
	remote, work, home string
}

// baseConfig is a project whose one domain runs the skill given to
// newProject; the first cycle may act, so one cycle shows a skill's result.
func baseConfig(skill map[string]any) map[string]any {
	return map[string]any{
		"schema_version": "1.5.0",
		"mission":        "keep the service healthy",
		"project":        map[string]any{"name": "app", "timezone": "UTC"},
		"domains": map[string]any{
			"checks": map[string]any{"weight": 1, "primary_skill": "/check", "fallback": true, "mission_alignment": 0.5},
		},
		"skills": map[string]any{"/check": skill},
		"safety": map[string]any{
			"halt_file":                  "agent/safety/HALT",
			"min_cycle_interval_minutes": 30,
			"first_cycle_observe_only":   false,
			"skill_allowlist":            []string{"/check"},
		},
		"git": map[string]any{"push": false},
	}
}

// noopSkill succeeds and reports nothing.
var noopSkill = map[string]any{"builtin": "noop"}

// newProject creates the remote and the clone, commits the configuration
// and pushes it, so the branch has an upstream as after a checkout.
func newProject(t *testing.T, cfg map[string]any) *project {
	t.Helper()
	root := t.TempDir()
	p := &project{remote: filepath.Join(root, "remote.git"), work: filepath.Join(root, "work"), home: filepath.Join(root, "home")}
	if err := os.Mkdir(p.home, 0o755); err != nil {
		t.Fatal(err)
	}
	p.git(t, root, "init", "--quiet", "--bare", "--initial-branch=main", p.remote)
	p.git(t, root, "clone", "--quiet", p.remote, p.work)
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "config.json", string(b)+"\n")
	p.write(t, ".gitignore", "agent/state/evolve/.lock\nagent/state/evolve/runs/\nagent/safety/HALT\n")
	p.write(t, "README.md", "# app\n")
	p.git(t, p.work, "add", "-A")
	p.git(t, p.work, "commit", "--quiet", "-m", "add ooda")
	p.git(t, p.work, "push", "--quiet", "-u", "origin", "main")
	return p
}

// env is the environment every process of a test gets: git's identity and
// configuration isolated from the machine's.
func (p *project) env(extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "OODA_") ||
			k == "HOME" || k == "RUNNER_TEMP" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+p.home, "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=ooda test", "GIT_AUTHOR_EMAIL=ooda-test@example.invalid",
		"GIT_COMMITTER_NAME=ooda test", "GIT_COMMITTER_EMAIL=ooda-test@example.invalid")
	return append(env, extra...)
}

func (p *project) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = p.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *project) write(t *testing.T, rel, content string) {
	t.Helper()
	path := filepath.Join(p.work, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run is one run of scripts/action/cycle.sh as action.yml starts it.
type run struct {
	code    int
	log     string
	outputs map[string]string
}

// runScript runs the action's script in the clone with sh, as action.yml
// does, with the runner's output file and the given extra environment.
func (p *project) runScript(t *testing.T, now string, extra ...string) run {
	t.Helper()
	outFile := filepath.Join(t.TempDir(), "github_output")
	if err := os.WriteFile(outFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", filepath.Join(repoRoot, "scripts", "action", "cycle.sh"))
	script, err := filepath.Abs(cmd.Args[1])
	if err != nil {
		t.Fatal(err)
	}
	cmd.Args[1] = script
	cmd.Dir = p.work
	cmd.Env = p.env(append([]string{
		"OODA_BIN=" + filepath.Join(binDir, "ooda"),
		"OODA_NOW=" + now,
		"GITHUB_OUTPUT=" + outFile,
		"RUNNER_TEMP=" + t.TempDir(),
	}, extra...)...)
	out, err := cmd.CombinedOutput()
	r := run{log: string(out), outputs: map[string]string{}}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("cycle.sh did not run: %v", err)
		}
		r.code = ee.ExitCode()
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		r.outputs[k] = v
	}
	return r
}

// remoteLog is the remote main's history, one subject a line, newest first.
func (p *project) remoteLog(t *testing.T) []string {
	t.Helper()
	return strings.Split(p.git(t, p.remote, "log", "--format=%s", "main"), "\n")
}

func expectOutputs(t *testing.T, r run, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r.outputs[k]; got != v {
			t.Errorf("GITHUB_OUTPUT %s = %q, want %q (all: %v)\nlog:\n%s", k, got, v, r.outputs, r.log)
		}
	}
}

// A cycle's state commit reaches the remote: after two runs the remote
// holds both cycles, and the clone has nothing of the loop's left over.
func TestCycleScriptPushesTheStateCommit(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))

	r := p.runScript(t, firstCycleAt)
	if r.code != 0 {
		t.Fatalf("cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"exit-code": "0", "status": "completed", "cycle": "1", "pushed": "true"})
	if log := p.remoteLog(t); !strings.HasPrefix(log[0], "evolve: cycle #1 -- checks") {
		t.Fatalf("remote main's last commit is %q, want the cycle #1 state commit\n%s", log[0], r.log)
	}
	if res := r.outputs["result-file"]; res != "" {
		b, err := os.ReadFile(res)
		if err != nil || !json.Valid(b) {
			t.Errorf("result-file %s is not ooda cycle --json's document (%v): %q", res, err, b)
		}
	} else {
		t.Error("no result-file output")
	}

	r = p.runScript(t, secondCycleAt)
	if r.code != 0 {
		t.Fatalf("second run: cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"cycle": "2", "pushed": "true"})
	log := p.remoteLog(t)
	if !strings.HasPrefix(log[0], "evolve: cycle #2") || !strings.HasPrefix(log[1], "evolve: cycle #1") {
		t.Fatalf("remote main: %q, want cycle #2 on cycle #1", log)
	}
	if st := p.git(t, p.work, "status", "--porcelain"); st != "" {
		t.Errorf("the clone is not clean after the runs:\n%s", st)
	}
	if local, remote := p.git(t, p.work, "rev-parse", "HEAD"), p.git(t, p.remote, "rev-parse", "main"); local != remote {
		t.Errorf("clone HEAD %s, remote main %s: the push did not send the clone's HEAD", local, remote)
	}
}

// With push off the commit stays in the clone.
func TestCycleScriptPushOff(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))
	r := p.runScript(t, firstCycleAt, "OODA_PUSH=false")
	if r.code != 0 {
		t.Fatalf("cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"pushed": "false"})
	if log := p.remoteLog(t); log[0] != "add ooda" {
		t.Errorf("remote main moved to %q with push off", log[0])
	}
}

// A skill that fails makes the job fail with ooda's exit 4, and the cycle,
// recorded all the same, is still pushed.
func TestCycleScriptSkillFailureFailsTheJob(t *testing.T) {
	p := newProject(t, baseConfig(map[string]any{"command": []string{"sh", "-c", "echo the checker broke >&2; exit 1"}}))
	r := p.runScript(t, firstCycleAt, "GITHUB_ACTIONS=true")
	if r.code != 4 {
		t.Fatalf("cycle.sh exited %d, want 4 (the skill failed)\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"exit-code": "4", "status": "completed", "cycle": "1", "pushed": "true"})
	if !strings.Contains(r.log, "::error title=ooda: skill failed::ooda cycle exited 4: cycle 1 ran and was recorded") {
		t.Errorf("no error annotation for exit 4:\n%s", r.log)
	}
	if log := p.remoteLog(t); !strings.HasPrefix(log[0], "evolve: cycle #1 -- checks (error)") {
		t.Errorf("remote main's last commit is %q, want the failed cycle's state commit", log[0])
	}
}

// A HALT file stops the job with exit 3 and pushes nothing.
func TestCycleScriptHaltStopsTheJob(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))
	p.write(t, "agent/safety/HALT", "stopped by a person\n")
	r := p.runScript(t, firstCycleAt, "GITHUB_ACTIONS=true")
	if r.code != 3 {
		t.Fatalf("cycle.sh exited %d, want 3 (halted)\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"exit-code": "3", "status": "halted", "reason": "halt", "cycle": "", "pushed": "false"})
	if !strings.Contains(r.log, "::error title=ooda: halted::") {
		t.Errorf("no error annotation for exit 3:\n%s", r.log)
	}
	if log := p.remoteLog(t); log[0] != "add ooda" {
		t.Errorf("remote main moved to %q on a halted run", log[0])
	}
}

// A HALT a breaker creates (here the daily cost cap) is committed and
// pushed although .gitignore names it, so the next run, on a fresh
// checkout, stops too instead of spending past the cap.
func TestCycleScriptCommitsABreakerHalt(t *testing.T) {
	cfg := baseConfig(noopSkill)
	cfg["cost"] = map[string]any{"daily_limit_usd": 0.01}
	p := newProject(t, cfg)
	r := p.runScript(t, firstCycleAt)
	if r.code != 3 {
		t.Fatalf("cycle.sh exited %d, want 3 (the cost cap created the HALT file)\n%s", r.code, r.log)
	}
	log := p.remoteLog(t)
	if !strings.HasPrefix(log[0], "evolve: cycle #1 -- HALT file created") || !strings.HasPrefix(log[1], "evolve: cycle #1 -- checks") {
		t.Fatalf("remote main: %q, want the HALT commit on the cycle's state commit\n%s", log, r.log)
	}

	fresh := &project{remote: p.remote, work: filepath.Join(t.TempDir(), "fresh"), home: p.home}
	p.git(t, p.home, "clone", "--quiet", p.remote, fresh.work)
	r = fresh.runScript(t, secondCycleAt)
	if r.code != 3 {
		t.Fatalf("a fresh checkout after the breaker: cycle.sh exited %d, want 3\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"status": "halted", "reason": "halt"})

	// A person resumes by deleting the file in a commit.
	fresh.git(t, fresh.work, "rm", "--quiet", "agent/safety/HALT")
	fresh.git(t, fresh.work, "commit", "--quiet", "-m", "resume")
	fresh.git(t, fresh.work, "push", "--quiet")
	cfg["cost"] = map[string]any{"daily_limit_usd": 10}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	fresh.write(t, "config.json", string(b))
	fresh.git(t, fresh.work, "commit", "--quiet", "-am", "raise the cap")
	fresh.git(t, fresh.work, "push", "--quiet")
	if r = fresh.runScript(t, thirdCycleAt); r.code != 0 {
		t.Fatalf("after the resume commit: cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
}

// Commits of the user's own on the branch are not pushed for them, and the
// job says so.
func TestCycleScriptPushesOnlyTheLoopsCommits(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))
	p.write(t, "notes.md", "unreviewed\n")
	p.git(t, p.work, "add", "notes.md")
	p.git(t, p.work, "commit", "--quiet", "-m", "my own work")
	r := p.runScript(t, firstCycleAt, "GITHUB_ACTIONS=true")
	if r.code != 1 {
		t.Fatalf("cycle.sh exited %d, want 1 (not pushed)\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"exit-code": "0", "pushed": "false"})
	if !strings.Contains(r.log, "::error title=ooda: not pushed::branch main has 1 commit(s) that are not the loop's own") {
		t.Errorf("no annotation naming the foreign commit:\n%s", r.log)
	}
	if log := p.remoteLog(t); log[0] != "add ooda" {
		t.Errorf("remote main moved to %q: the user's commit was pushed for them", log[0])
	}
}

// When someone pushed while the cycle ran, the loop's commit is rebased
// onto theirs and pushed; neither is lost.
func TestCycleScriptRebasesWhenTheRemoteMovedOn(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))
	other := filepath.Join(t.TempDir(), "other")
	p.git(t, p.home, "clone", "--quiet", p.remote, other)
	if err := os.WriteFile(filepath.Join(other, "README.md"), []byte("# app\n\nedited meanwhile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git(t, other, "commit", "--quiet", "-am", "a person's commit")
	p.git(t, other, "push", "--quiet")

	r := p.runScript(t, firstCycleAt)
	if r.code != 0 {
		t.Fatalf("cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"pushed": "true"})
	log := p.remoteLog(t)
	if len(log) < 3 || !strings.HasPrefix(log[0], "evolve: cycle #1") || log[1] != "a person's commit" {
		t.Fatalf("remote main: %q, want the cycle's commit on top of the person's", log)
	}
	if !strings.Contains(r.log, "push to origin/main rejected; fetching and rebasing") {
		t.Errorf("the log does not say the push was retried:\n%s", r.log)
	}
}

// A detached HEAD is refused before the cycle runs: nothing there could be
// committed, so the cycle would be lost with the runner.
func TestCycleScriptRefusesADetachedHead(t *testing.T) {
	p := newProject(t, baseConfig(noopSkill))
	p.git(t, p.work, "checkout", "--quiet", "--detach")
	r := p.runScript(t, firstCycleAt)
	if r.code != 2 {
		t.Fatalf("cycle.sh exited %d on a detached HEAD, want 2\n%s", r.code, r.log)
	}
	if !strings.Contains(r.log, "HEAD is detached") {
		t.Errorf("the log does not say why:\n%s", r.log)
	}
	if _, err := os.Stat(filepath.Join(p.work, "agent", "state")); err == nil {
		t.Error("a cycle ran on the detached HEAD")
	}
}

// The push token reaches git's push over https through the credential
// helper and nothing else: not ooda (and so no skill), not a pre-push hook
// a skill could have written. The remote is git's own smart-http server
// behind a test server that demands the token.
func TestCycleScriptTokenReachesOnlyThePush(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	execPath, err := exec.Command(gitPath, "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	const token = "ghs_pushTokenForTheTest0123456789"
	p := newProject(t, baseConfig(noopSkill))
	p.git(t, p.remote, "config", "http.receivepack", "true")

	var authorized, refused int
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(p.remote), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + p.home},
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			refused++
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "token required", http.StatusUnauthorized)
			return
		}
		authorized++
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p.git(t, p.work, "remote", "set-url", "origin", srv.URL+"/remote.git")

	// ooda, wrapped to record the environment it was started with.
	wrapDir := t.TempDir()
	envSeen := filepath.Join(wrapDir, "ooda.env")
	wrapper := filepath.Join(wrapDir, "ooda")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nenv >>'"+envSeen+"'\nexec '"+filepath.Join(binDir, "ooda")+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookRan := filepath.Join(wrapDir, "hook.env")
	p.write(t, ".git/hooks/pre-push", "#!/bin/sh\nenv >'"+hookRan+"'\n")
	if err := os.Chmod(filepath.Join(p.work, ".git", "hooks", "pre-push"), 0o755); err != nil {
		t.Fatal(err)
	}

	r := p.runScript(t, firstCycleAt, "OODA_BIN="+wrapper, "OODA_PUSH_TOKEN="+token)
	if r.code != 0 {
		t.Fatalf("cycle.sh exited %d, want 0\n%s", r.code, r.log)
	}
	expectOutputs(t, r, map[string]string{"pushed": "true"})
	if authorized == 0 {
		t.Errorf("the push never presented the token (%d requests refused)\n%s", refused, r.log)
	}
	if log := p.remoteLog(t); !strings.HasPrefix(log[0], "evolve: cycle #1") {
		t.Errorf("remote main's last commit is %q, want the cycle's", log[0])
	}
	seen, err := os.ReadFile(envSeen)
	if err != nil {
		t.Fatalf("the wrapper never ran: %v", err)
	}
	if strings.Contains(string(seen), token) {
		t.Error("ooda was started with the push token in its environment")
	}
	if _, err := os.Stat(hookRan); err == nil {
		t.Error("the repository's pre-push hook ran during the token's push")
	}
	if strings.Contains(r.log, token) {
		t.Error("the log shows the token")
	}
	if cfg := p.git(t, p.work, "config", "--list", "--local"); strings.Contains(cfg, token) {
		t.Error("the token was written into .git/config")
	}
}
