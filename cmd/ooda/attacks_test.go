package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The attacks of docs/security.md ("How this is tested"), one test per
// defect of the hardening list, each performed through the real `ooda`
// binary on a real project. Every attack runs in a project that sits in an
// outer directory beside a sentinel directory, with ooda's credentials and
// a notification secret in the environment, and checks what no attack may
// achieve: a write beside the project (the sentinel and the outer directory
// are byte-identical afterwards, with no new entry), a secret or a byte of
// the sentinel in any file under the project (git history included), a
// cycle that ran but was not recorded, and a lock left behind.

// The values no file ooda writes, and no line it prints, may hold.
const (
	attackGitHubToken     = "ghp_attackGitHubToken0123456789abcdef"
	attackGHToken         = "gho_attackGHToken0123456789abcdef"
	attackEnterpriseToken = "ghe_attackEnterpriseToken0123456789"
	attackSlackURL        = "https://hooks.slack.invalid/services/T0/B0/attackSlackSecret0123"
	// sentinelSecret is the content of sentinel/secret.txt, the file
	// symlinks planted in the project point at: a private key beside the
	// project, which must never be copied into it.
	sentinelSecret = "sentinel-private-key-0123456789abcdef"
)

var attackSecrets = []string{attackGitHubToken, attackGHToken, attackEnterpriseToken, attackSlackURL, sentinelSecret}

// attackLimit bounds every ooda process of these tests: an attack that
// makes ooda hang (a FIFO read, an endless de-duplication) fails the test
// instead of hanging the suite. It is a guard, not a timing assertion.
const attackLimit = 2 * time.Minute

// reportScript is a skill that succeeds with output.
const reportScript = `printf '{"had_output": true}' > "$OODA_REPORT"` + "\n"

// attackConfig is a one-domain project whose skill /x is x.sh, with the
// first-cycle observe-only rule off (so the first cycle runs the skill),
// no forge, and a Slack notification whose webhook URL is a secret
// reference: ooda must treat $OODA_ATTACK_SLACK as a credential.
func attackConfig() map[string]any {
	return map[string]any{
		"mission": "Keep the example service healthy.",
		"domains": map[string]any{
			"health": map[string]any{"weight": 1.0, "primary_skill": "/x", "fallback": true, "mission_alignment": 1.0},
		},
		"skills": map[string]any{"/x": map[string]any{"command": []any{"/bin/sh", "x.sh"}}},
		"safety": map[string]any{
			"skill_allowlist": []any{"/x"}, "min_cycle_interval_minutes": 30, "lock_timeout_minutes": 30,
			"first_cycle_observe_only": false,
		},
		"forge":         map[string]any{"provider": "none"},
		"notifications": map[string]any{"slack": map[string]any{"enabled": false, "webhook_url": "$OODA_ATTACK_SLACK"}},
	}
}

// set sets a dotted path of a config map ("safety.max_read_mib"); every
// object on the way must exist.
func set(cfg map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	m := cfg
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	m[keys[len(keys)-1]] = v
}

// attack is one attacked project and what it must leave untouched.
type attack struct {
	t        *testing.T
	outer    string // holds the project and the sentinel, nothing else
	dir      string // the project
	sentinel string // beside the project
	env      []string
	outside  string // manifest of outer without the project, before the attack
	outputs  []run  // every ooda run, whose output must hold no secret
}

// newAttack writes the project (config.json from cfg, then files) and the
// sentinel directory beside it, and records the sentinel's state.
func newAttack(t *testing.T, cfg map[string]any, files map[string]string) *attack {
	t.Helper()
	outer := t.TempDir()
	a := &attack{t: t, outer: outer, dir: filepath.Join(outer, "project"), sentinel: filepath.Join(outer, "sentinel")}
	writeFile(t, filepath.Join(a.sentinel, "secret.txt"), sentinelSecret+"\n")
	writeFile(t, filepath.Join(a.sentinel, "victim.json"), `{"precious": true}`+"\n")
	writeFile(t, filepath.Join(a.sentinel, "lens.json"), `{"precious": "lens"}`+"\n")
	if cfg != nil {
		b, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(a.dir, "config.json"), string(b)+"\n")
	}
	for name, body := range files {
		writeFile(t, filepath.Join(a.dir, name), body)
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a.env = []string{
		"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GITHUB_TOKEN=" + attackGitHubToken, "GH_TOKEN=" + attackGHToken, "GH_ENTERPRISE_TOKEN=" + attackEnterpriseToken,
		"OODA_ATTACK_SLACK=" + attackSlackURL,
	}
	a.outside = a.manifestOutside()
	return a
}

// path is a path under the project, from slash-separated parts.
func (a *attack) path(rel string) string { return filepath.Join(a.dir, filepath.FromSlash(rel)) }

func (a *attack) evolve(name string) string { return a.path("agent/state/evolve/" + name) }

// cmd prepares `ooda --project DIR args...` with the attack's environment.
func (a *attack) cmd(args ...string) *exec.Cmd {
	cmd := oodaCmd(a.t, a.dir, args...)
	cmd.Env = append(cmd.Env, a.env...)
	return cmd
}

// ooda runs ooda to its end, at most attackLimit.
func (a *attack) ooda(args ...string) run {
	a.t.Helper()
	cmd := a.cmd(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	r := a.wait(cmd, &out, &errb)
	a.outputs = append(a.outputs, r)
	return r
}

// wait waits for a started ooda, killing it and failing the test when it
// runs longer than attackLimit.
func (a *attack) wait(cmd *exec.Cmd, out, errb *bytes.Buffer) run {
	a.t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(attackLimit):
		_ = cmd.Process.Kill()
		<-done
		a.t.Fatalf("ooda %s still ran after %s: it hangs\n--- stdout\n%s--- stderr\n%s", strings.Join(cmd.Args[1:], " "), attackLimit, out, errb)
	}
	r := run{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		a.t.Fatalf("%v: %v", cmd.Args, err)
	}
	return r
}

// mustOoda runs ooda and requires its exit code.
func (a *attack) mustOoda(want int, args ...string) run {
	a.t.Helper()
	r := a.ooda(args...)
	if r.code != want {
		a.t.Fatalf("ooda %s: want exit %d, got\n%s", strings.Join(args, " "), want, r)
	}
	return r
}

// cycle runs one cycle at the simulated instant at(d).
func (a *attack) cycle(want int, d time.Duration) run {
	a.t.Helper()
	return a.mustOoda(want, "cycle", "--now", at(d))
}

// git runs git in the project.
func (a *attack) git(args ...string) string {
	a.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", a.dir}, args...)...)
	cmd.Env = append(os.Environ(), a.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		a.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitInit makes the project a git repository with everything committed.
func (a *attack) gitInit() {
	a.t.Helper()
	a.git("init", "-q", "-b", "main")
	a.git("add", "-A")
	a.git("commit", "-q", "-m", "initial")
}

// manifestOutside describes every entry under the outer directory except
// the project: path, mode, size, content hash, modification time.
func (a *attack) manifestOutside() string {
	a.t.Helper()
	var lines []string
	err := filepath.WalkDir(a.outer, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == a.dir {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := "-"
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(a.outer, p)
		lines = append(lines, fmt.Sprintf("%s %v %d %s %d", rel, info.Mode(), info.Size(), sum, info.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// checkOutside requires the sentinel and the outer directory to be exactly
// as they were: nothing written, created, removed or touched beside the
// project.
func (a *attack) checkOutside() {
	a.t.Helper()
	if now := a.manifestOutside(); now != a.outside {
		a.t.Errorf("something beside the project changed:\nbefore:\n%s\nafter:\n%s", a.outside, now)
	}
}

// checkNoSecret requires that no regular file under the project, no commit
// of its git history and no output of ooda holds a secret or the
// sentinel's bytes. skillOwn lists files the skill itself wrote (its
// report): what a skill writes is its own (docs/security.md), and they must
// not reach git either, which the history check covers.
func (a *attack) checkNoSecret(skillOwn ...string) {
	a.t.Helper()
	own := map[string]bool{}
	for _, p := range skillOwn {
		own[p] = true
	}
	err := filepath.WalkDir(a.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		// Symlinks and FIFOs planted by an attack are not read: only
		// files ooda could have written hold bytes.
		if !d.Type().IsRegular() || own[p] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range attackSecrets {
			if bytes.Contains(b, []byte(s)) {
				a.t.Errorf("%s holds the secret %q:\n%s", p, s, b)
			}
		}
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
	if exists(a.path(".git")) {
		history := a.git("log", "-p", "--all", "--format=commit %H%n%B")
		for _, s := range attackSecrets {
			if strings.Contains(history, s) {
				a.t.Errorf("the git history holds the secret %q", s)
			}
		}
	}
	for _, r := range a.outputs {
		for _, s := range attackSecrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				a.t.Errorf("ooda printed the secret %q:\n%s", s, r)
			}
		}
	}
}

// checkLockGone requires the cycle lock to be released.
func (a *attack) checkLockGone() {
	a.t.Helper()
	if _, err := os.Lstat(lockPath(a.dir)); err == nil {
		a.t.Error("the lock file is still there")
	}
}

// cycleLog is the cycle_id of every line of cycle_log.jsonl.
func (a *attack) cycleLog() []int {
	a.t.Helper()
	b, err := os.ReadFile(a.evolve("cycle_log.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		a.t.Fatal(err)
	}
	var ids []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			CycleID int `json:"cycle_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			a.t.Fatalf("cycle_log.jsonl: %v: %s", err, sc.Bytes())
		}
		ids = append(ids, line.CycleID)
	}
	return ids
}

// checkRecorded requires that cycle n is the last one recorded: state.json
// counts it and does not claim a cycle in progress, cycle_log.jsonl ends
// with it, and every state file ooda keeps still parses.
func (a *attack) checkRecorded(n int) {
	a.t.Helper()
	st := readState(a.t, a.dir)
	if st["cycle_count"] != float64(n) || st["cycle_in_progress"] != false {
		a.t.Errorf("state.json: cycle_count %v, cycle_in_progress %v; want %d and false", st["cycle_count"], st["cycle_in_progress"], n)
	}
	if ids := a.cycleLog(); len(ids) == 0 || ids[len(ids)-1] != n {
		a.t.Errorf("cycle_log.jsonl records cycles %v, want the last to be %d", ids, n)
	}
	a.checkStateParses()
}

// checkNotRecorded requires that no cycle was recorded beyond the first n
// (n = 0: no state at all), for an attack whose right answer is a refusal.
func (a *attack) checkNotRecorded(n int) {
	a.t.Helper()
	if n == 0 {
		if _, err := os.Lstat(a.evolve("state.json")); err == nil {
			a.t.Errorf("a refused command wrote state.json:\n%v", readState(a.t, a.dir))
		}
		if ids := a.cycleLog(); len(ids) != 0 {
			a.t.Errorf("a refused command recorded cycles %v", ids)
		}
		return
	}
	if st := readState(a.t, a.dir); st["cycle_count"] != float64(n) {
		a.t.Errorf("state.json: cycle_count %v, want %d (unchanged)", st["cycle_count"], n)
	}
	if ids := a.cycleLog(); len(ids) != n {
		a.t.Errorf("cycle_log.jsonl records cycles %v, want %d", ids, n)
	}
}

// checkStateParses requires every regular JSON file ooda keeps under
// agent/state to parse. runs/ holds the skills' own reports, which an
// attack may have made invalid.
func (a *attack) checkStateParses() {
	a.t.Helper()
	err := filepath.WalkDir(a.path("agent/state"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "runs" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !json.Valid(b) {
			a.t.Errorf("%s does not parse:\n%s", p, b)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.t.Fatal(err)
	}
}

// checkAfter is what every attack must leave: nothing beside the project,
// no secret, no lock.
func (a *attack) checkAfter(skillOwn ...string) {
	a.t.Helper()
	a.checkOutside()
	a.checkNoSecret(skillOwn...)
	a.checkLockGone()
}

// wantLines requires each text in the run's output (stdout and stderr).
func wantLines(t *testing.T, r run, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("the output lacks %q:\n%s", w, r)
		}
	}
}

// gapNames are the names of skill_gaps.json's gaps.
func (a *attack) gapNames() []string {
	a.t.Helper()
	var g struct {
		Gaps []struct {
			Name   string `json:"name"`
			Detail string `json:"detail"`
		} `json:"gaps"`
	}
	a.readJSON(a.evolve("skill_gaps.json"), &g)
	var names []string
	for _, x := range g.Gaps {
		names = append(names, x.Name)
	}
	return names
}

func (a *attack) wantGaps(names ...string) {
	a.t.Helper()
	have := a.gapNames()
	for _, n := range names {
		found := false
		for _, h := range have {
			found = found || h == n
		}
		if !found {
			a.t.Errorf("skill_gaps.json has gaps %v, lacking %s", have, n)
		}
	}
}

func (a *attack) readJSON(p string, v any) {
	a.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		a.t.Fatalf("%s: %v\n%s", p, err, b)
	}
}

// symlink plants a symlink at the project path rel.
func (a *attack) symlink(target, rel string) {
	a.t.Helper()
	p := a.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		a.t.Fatal(err)
	}
}

// mkfifo plants a named pipe at the project path rel; no one ever opens
// its other end, so a blocking open or read of it never returns.
func (a *attack) mkfifo(rel string) {
	a.t.Helper()
	p := a.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		a.t.Fatal(err)
	}
}

// noPanic requires that a run ended without a Go panic, whether it
// crashed the process or was recovered into an internal error.
func noPanic(t *testing.T, r run) {
	t.Helper()
	if out := r.stdout + r.stderr; strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") || strings.Contains(out, "runtime error") {
		t.Errorf("ooda crashed:\n%s", r)
	}
}

// 1. A checkpoint's commit_sha once reached git as an option: `ooda config
// rollback 1` with "--output=FILE" truncated FILE, printed "Rolled back"
// and exited 0. The rollback must be refused, naming the file and the
// field, before git or anything else runs.
func TestAttack1_CommitSHAIsNotAnOption(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, commit string
		hard         bool
	}{
		{"output option", "--output=SENTINEL/victim.json", false},
		{"output option, hard", "--output=SENTINEL/victim.json", true},
		{"short option, hard", "-oSENTINEL/victim.json", true},
		{"end of options", "--end-of-options", false},
		{"revision expression", "HEAD~1", true},
		{"newline", "0123456789012345678901234567890123456789\n--output=SENTINEL/victim.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAttack(t, attackConfig(), map[string]string{"x.sh": reportScript})
			a.gitInit()
			a.cycle(0, 0)
			commit := strings.ReplaceAll(tc.commit, "SENTINEL", a.sentinel)
			writeCheckpoint(t, a.dir, commit)
			a.git("add", "-A")
			a.git("commit", "-q", "-m", "checkpoint")
			head := a.git("rev-parse", "HEAD")

			args := []string{"config", "rollback", "1", "--confirm", "rollback 1"}
			if tc.hard {
				args = append(args, "--hard")
			}
			r := a.ooda(args...)
			if r.code == 0 || strings.Contains(r.stdout+r.stderr, "Rolled back") {
				t.Errorf("the rollback ran:\n%s", r)
			}
			noPanic(t, r)
			wantLines(t, r, filepath.Join("agent", "state", "evolve", "checkpoints.json")+": checkpoints[0].commit_sha: "+strconv.Quote(commit)+" is not a commit SHA")
			if got := a.git("rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD moved from %s to %s", head, got)
			}
			if st := a.git("status", "--porcelain", "--untracked-files=no"); st != "" {
				t.Errorf("the refused rollback changed tracked files:\n%s", st)
			}
			if exists(a.path("agent/safety/HALT")) {
				t.Error("the refused rollback wrote a HALT file")
			}
			a.checkAfter()
			a.checkNotRecorded(1)
		})
	}
}

// 2. Paths escaped the project: a domain named ../../../escaped made ooda
// write lens.json and rotation_cursor.json outside it, a state_file of
// ../../../../etc/passwd was handed to the skill, and a symlinked memos.json
// copied a secret's bytes into memos.json.corrupt-*.
func TestAttack2_PathsStayInsideTheProject(t *testing.T) {
	t.Parallel()

	t.Run("domain name climbing out", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		cfg["domains"] = map[string]any{"../../../escaped": map[string]any{
			"weight": 1.0, "primary_skill": "/x", "fallback": true, "rotation": []any{"a", "b"}}}
		a := newAttack(t, cfg, map[string]string{"x.sh": reportScript})
		for _, args := range [][]string{
			{"config", "validate"},
			{"cycle", "--now", at(0)},
			{"cycle", "--dry-run", "--now", at(0)},
		} {
			r := a.mustOoda(2, args...)
			wantLines(t, r, filepath.Join(a.dir, "config.json")+": /domains/..~1..~1..~1escaped: a domain name must be 1 to 64 letters, digits")
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	t.Run("configured paths outside", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		a := newAttack(t, nil, nil)
		set(cfg, "domains.health.state_file", "../sentinel/victim.json")
		set(cfg, "safety.halt_file", filepath.Join(a.sentinel, "HALT"))
		b, _ := json.Marshal(cfg)
		writeFile(t, a.path("config.json"), string(b))
		// The skill would overwrite its state file: with the path
		// accepted, that is the sentinel's victim.json.
		writeFile(t, a.path("x.sh"), `echo '{"pwned": true}' > "$OODA_STATE_FILE"`+"\n"+reportScript)
		for _, args := range [][]string{{"config", "validate"}, {"cycle", "--now", at(0)}} {
			r := a.mustOoda(2, args...)
			wantLines(t, r,
				`/domains/health/state_file: "../sentinel/victim.json" is outside the project `+a.dir,
				`/safety/halt_file: "`+filepath.Join(a.sentinel, "HALT")+`" is outside the project `+a.dir)
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	t.Run("state_file symlinked out", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		set(cfg, "domains.health.state_file", "agent/state/health.json")
		a := newAttack(t, cfg, map[string]string{"x.sh": `echo '{"pwned": true}' > "$OODA_STATE_FILE"` + "\n" + reportScript})
		a.symlink("../../../sentinel/victim.json", "agent/state/health.json")
		for _, args := range [][]string{{"config", "validate"}, {"cycle", "--now", at(0)}} {
			r := a.mustOoda(2, args...)
			wantLines(t, r, `/domains/health/state_file: "agent/state/health.json" leads outside the project `+a.dir+` through a symlink`)
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	t.Run("symlinks planted in the state", func(t *testing.T) {
		t.Parallel()
		// The skill replaces its state file and its report with symlinks
		// to the sentinel's secret, as a hostile skill or a merged PR
		// could; memos.json and the domain's lens.json already are.
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": `rm -f agent/state/health.json
ln -s ../../../sentinel/secret.txt agent/state/health.json
ln -s ../../../../../sentinel/secret.txt "$OODA_REPORT"
`})
		a.symlink("../../../../sentinel/secret.txt", "agent/state/evolve/memos.json")
		a.symlink("../../../../sentinel/lens.json", "agent/state/health/lens.json")
		r := a.cycle(0, 0)
		refused := ": outside the project, or reached through a symlink that leads out of it"
		wantLines(t, r,
			"[WARN] memos.json is refused ("+a.evolve("memos.json")+refused,
			"; continuing from an empty memos.json.",
			a.path("agent/state/health/lens.json")+refused,
			"[WARN] "+a.path("agent/state/health.json")+refused,
			"[WARN] "+a.evolve("runs/1-x.report.json")+refused)
		a.wantGaps("input_outside_project_memos", "input_outside_project_health", "input_outside_project_report_x")
		if target, err := os.Readlink(a.path("agent/state/health/lens.json")); err != nil || target != "../../../../sentinel/lens.json" {
			t.Errorf("lens.json is no longer the planted symlink (%q, %v)", target, err)
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("state directory symlinked out", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": "touch ran\n" + reportScript})
		// A sentinel directory that looks like ooda's state: a cycle
		// that followed the link would read and rewrite it.
		writeFile(t, filepath.Join(a.sentinel, "evolve", "state.json"), `{"cycle_count": 7}`+"\n")
		a.outside = a.manifestOutside()
		a.symlink("../../../sentinel/evolve", "agent/state/evolve")
		r := a.ooda("cycle", "--now", at(0))
		if r.code != 2 {
			t.Fatalf("a cycle with agent/state/evolve leading out of the project must stop with exit 2:\n%s", r)
		}
		noPanic(t, r)
		wantLines(t, r, "ooda: agent/state/evolve leads out of the project (a symlink that leaves it, or an absolute one): ooda keeps its state only inside the project; replace it with a directory")
		if exists(a.path("ran")) {
			t.Error("the skill ran")
		}
		a.checkAfter()
	})

	t.Run("init through a symlinked agent directory", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, nil, nil)
		a.symlink("../sentinel", "agent")
		r := a.mustOoda(2, "init", "--yes")
		wantLines(t, r, a.path("agent")+" is a symlink to "+a.sentinel+", outside the project "+a.dir)
		a.checkAfter()
	})
}

// 3. Every secret reached every skill: GITHUB_TOKEN, GH_TOKEN,
// GH_ENTERPRISE_TOKEN and the notification secrets were in each child's
// environment, and a skill echoing one into an action title got it
// committed in action_queue.json.
func TestAttack3_SecretsStayWithOoda(t *testing.T) {
	t.Parallel()
	const echo = `printf '{"had_output": true, "summary": "saw %s", "actions": [{"title": "seen gh=%s gh2=%s ghe=%s slack=%s", "reach": 1, "impact": 1, "confidence": 1, "effort": 1}]}' \
  "${GITHUB_TOKEN:-unset}" "${GITHUB_TOKEN:-unset}" "${GH_TOKEN:-unset}" "${GH_ENTERPRISE_TOKEN:-unset}" "${OODA_ATTACK_SLACK:-unset}" > "$OODA_REPORT"
echo "stdout token ${GITHUB_TOKEN:-unset}"
echo "stderr token ${GITHUB_TOKEN:-unset}" >&2
`
	// spy records what a clean filter run by ooda's own commit (Step 6-D)
	// sees: filters are configured in .git/, which a skill can write, and
	// the commit runs them to hash the state files (no commit hook runs
	// for it: docs/security.md).
	const spy = `#!/bin/sh
echo "${GITHUB_TOKEN:-unset} ${GH_TOKEN:-unset} ${GH_ENTERPRISE_TOKEN:-unset} ${OODA_ATTACK_SLACK:-unset}" > hook-saw.txt
exec cat
`
	title := func(a *attack) string {
		var q struct {
			Pending []struct {
				Title string `json:"title"`
			} `json:"pending"`
		}
		a.readJSON(a.evolve("action_queue.json"), &q)
		if len(q.Pending) != 1 {
			t.Fatalf("action_queue.json: %+v", q)
		}
		return q.Pending[0].Title
	}

	t.Run("withheld by default", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": echo})
		a.gitInit()
		writeFile(t, a.path(".git/spy.sh"), spy)
		if err := os.Chmod(a.path(".git/spy.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		a.git("config", "filter.spy.clean", a.path(".git/spy.sh"))
		writeFile(t, a.path(".git/info/attributes"), "*.json filter=spy\n")
		r := a.cycle(0, 0)
		wantLines(t, r, "[Record] Committed ")
		if got, want := title(a), "seen gh=unset gh2=unset ghe=unset slack=unset"; got != want {
			t.Errorf("the skill saw credentials: action title %q, want %q", got, want)
		}
		if b, err := os.ReadFile(a.path("hook-saw.txt")); err != nil || string(b) != "unset unset unset unset\n" {
			t.Errorf("the clean filter of ooda's state commit saw %q (%v), want no credential", b, err)
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("passed on request and masked", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		set(cfg, "skills./x.env_passthrough", []any{"GITHUB_TOKEN"})
		a := newAttack(t, cfg, map[string]string{"x.sh": echo})
		a.gitInit()
		r := a.cycle(0, 0)
		wantLines(t, r, "[Record] Committed ")
		if got, want := title(a), "seen gh=*** gh2=unset ghe=unset slack=unset"; got != want {
			t.Errorf("action title %q, want %q: only the passed token, masked", got, want)
		}
		log, err := os.ReadFile(a.evolve("runs/1-x.log"))
		if err != nil || !bytes.Contains(log, []byte("stdout token ***")) || !bytes.Contains(log, []byte("stderr token ***")) {
			t.Errorf("runs/1-x.log does not show the skill's output masked (%v):\n%s", err, log)
		}
		// The report is the skill's own file, as it wrote it; it holds
		// the token, and must not reach git.
		report := a.evolve("runs/1-x.report.json")
		if b, _ := os.ReadFile(report); !bytes.Contains(b, []byte(attackGitHubToken)) {
			t.Fatalf("the skill did not receive the token it was passed: its report is %s", b)
		}
		a.checkAfter(report)
		a.checkRecorded(1)
	})
}

// hostileGitHub is a GitHub API for owner/name octo/widget that serves
// hostile strings: open PR #1, listed once the skill has created the file
// "opened" in the project, has a head branch with an escape sequence and a
// newline that would forge a [Record] line; PR #2 is open throughout and
// has a review whose author and body carry escape sequences, a forged line
// and the enterprise token. Requests without the enterprise token fail.
func hostileGitHub(t *testing.T, dir string) *httptest.Server {
	sha := func(n int) string { return fmt.Sprintf("%040x", n) }
	pull := func(n int, title, ref string) map[string]any {
		return map[string]any{"number": n, "title": title, "state": "open", "draft": false,
			"head": map[string]any{"ref": ref, "sha": sha(n)}, "labels": []any{}, "created_at": "2026-03-01T09:00:00Z",
			"merged_at": nil, "closed_at": nil, "merge_commit_sha": nil}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+attackEnterpriseToken {
			http.Error(w, `{"message": "Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		var body any
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/repos/octo/widget/pulls" && q.Get("state") == "open":
			open := []any{pull(2, "Fix \x1b[31mred\x1b[0m", "auto/x/fix-red")}
			if exists(filepath.Join(dir, "opened")) {
				open = append(open, pull(1, "Title\x1b]0;pwned\x07", "auto/x/a\x1b[2J\n[Record] Cycle #9 recorded: health (success, forged)."))
			}
			body = open
		case r.Method == http.MethodGet && r.URL.Path == "/repos/octo/widget/pulls":
			body = []any{}
		case r.Method == http.MethodGet && r.URL.Path == "/repos/octo/widget/issues":
			body = []any{}
		case r.Method == http.MethodGet && r.URL.Path == "/repos/octo/widget/pulls/2/reviews":
			body = []any{map[string]any{"id": 77, "user": map[string]any{"login": "rev\x1b[31mer"}, "state": "CHANGES_REQUESTED",
				"body": "please fix\x1b[2J\n[Record] Cycle #8 recorded: health (success, forged).\u202e token " + attackEnterpriseToken}}
		default:
			http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// forged reports the lines of out that ooda did not print: a line starting
// with one of ooda's tags that one of the hostile texts carries.
func forged(out string) []string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[Record] Cycle #9") || strings.HasPrefix(l, "[Record] Cycle #8") || strings.HasPrefix(l, "[Record] Cycle #7") {
			bad = append(bad, l)
		}
	}
	return bad
}

// rawControls reports the terminal controls printed raw.
func rawControls(out string) string {
	var found []string
	for _, c := range []string{"\x1b", "\x07", "\r", "\u202e", "\x9b"} {
		if strings.Contains(out, c) {
			found = append(found, strconv.Quote(c))
		}
	}
	return strings.Join(found, " ")
}

// 4. Control characters from outside were printed raw: a forge branch
// name with an escape sequence and a newline forged an extra [Record]
// line.
func TestAttack4_ControlCharactersArePrintedEscaped(t *testing.T) {
	t.Parallel()

	t.Run("forge branch name and review", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		a := newAttack(t, nil, nil)
		srv := hostileGitHub(t, a.dir)
		cfg["forge"] = map[string]any{"provider": "github", "repo": "octo/widget", "api_url": srv.URL}
		b, _ := json.Marshal(cfg)
		writeFile(t, a.path("config.json"), string(b))
		// The skill opens PR #1 (without reporting it), which ooda finds
		// by its branch prefix after the skill ran; PR #2 is the open PR
		// of a proposed action, whose reviews ooda reads.
		writeFile(t, a.path("x.sh"), "touch opened\n"+reportScript)
		writeFile(t, a.evolve("action_queue.json"), `{"schema_version": "1.0.0", "pending": [{"id": "A-1-1", "title": "Fix red",
  "source_domain": "health", "rice_score": 10, "effective_rice": 10, "status": "proposed", "pr_number": 2,
  "extracted_at": "2026-03-01T09:00:00Z", "decay_applied": 0}], "in_progress": [], "completed": []}`)
		r := a.cycle(0, 0)
		if c := rawControls(r.stdout + r.stderr); c != "" {
			t.Errorf("terminal controls printed raw (%s):\n%q", c, r.stdout+r.stderr)
		}
		if f := forged(r.stdout + r.stderr); len(f) > 0 {
			t.Errorf("forged lines printed: %q", f)
		}
		wantLines(t, r,
			"(github octo/widget)",
			`[Orient] Review feedback: PR #2 (action A-1-1): changes requested by rev\x1b[31mer: please fix\x1b[2J [Record] Cycle #8 recorded: health (success, forged).\u202e token ***`)
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("HALT text written by a skill", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": `mkdir -p agent/safety
printf 'stop\033[2J\r\n[Record] Cycle #7 recorded: health (success, forged).\n\342\200\256evil\n' > agent/safety/HALT
sleep 30
`})
		r := a.cycle(3, 0)
		wantLines(t, r, "[HALT] HALT file appeared during /x; stopped it.")
		a.checkRecorded(1)
		r = a.cycle(3, time.Hour)
		// One line: the forged "[Record]" starts none of its own.
		wantLines(t, r, `[HALT] Agent stopped. Reason: stop\x1b[2J; [Record] Cycle #7 recorded: health (success, forged). \u202eevil`)
		r2 := a.mustOoda(0, "resume")
		wantLines(t, r2, "\n  [Record] Cycle #7 recorded: health (success, forged).\n")
		for _, x := range []run{r, r2} {
			if c := rawControls(x.stdout + x.stderr); c != "" {
				t.Errorf("terminal controls printed raw (%s):\n%q", c, x.stdout+x.stderr)
			}
			if f := forged(x.stdout + x.stderr); len(f) > 0 {
				t.Errorf("forged lines printed: %q", f)
			}
		}
		a.checkAfter()
		a.checkRecorded(1)
	})
}

// 5. An infinite number stopped every cycle from being recorded: a
// reported cost of 1e303 (or a weight of 1e308) made Step 6 fail on
// "unsupported value: +Inf" after the skill ran, every cycle.
func TestAttack5_InfiniteNumbersNeverLoseACycle(t *testing.T) {
	t.Parallel()

	t.Run("reported cost 1e303", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		cfg["cost"] = map[string]any{"daily_limit_usd": 5}
		a := newAttack(t, cfg, map[string]string{"x.sh": `printf '{"cost_usd": 1e303, "had_output": true}' > "$OODA_REPORT"` + "\n"})
		for i := 1; i <= 2; i++ {
			r := a.cycle(0, time.Duration(i)*time.Hour)
			wantLines(t, r, fmt.Sprintf("[WARN] /x: ignoring its report agent/state/evolve/runs/%d-x.report.json: skill report: cost_usd 1e+303 is out of range (0 to 1e+06)", i),
				fmt.Sprintf("[Record] Cycle #%d recorded", i))
			a.checkRecorded(i)
		}
		var l struct {
			Total   float64 `json:"total_estimated_usd"`
			Entries []any   `json:"entries"`
		}
		a.readJSON(a.evolve("cost_ledger.json"), &l)
		if len(l.Entries) != 2 || l.Total != 0.04 {
			t.Errorf("cost_ledger.json: %d entries, total %v; want the two $0.02 estimates", len(l.Entries), l.Total)
		}
		a.wantGaps("report_invalid_x")
		a.checkAfter()
	})

	t.Run("weight and interval at the float limit", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		set(cfg, "domains.health.weight", 1e308)
		set(cfg, "safety.min_cycle_interval_minutes", 1e308)
		a := newAttack(t, cfg, map[string]string{"x.sh": reportScript})
		for _, args := range [][]string{{"config", "validate"}, {"cycle", "--now", at(0)}} {
			r := a.mustOoda(2, args...)
			wantLines(t, r, filepath.Join(a.dir, "config.json")+": 2 problems:",
				"/domains/health/weight: must be <= 1000000, got 1e+308",
				"/safety/min_cycle_interval_minutes: must be <= 525600, got 1e+308")
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	t.Run("ledger total at the float limit", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		cfg["cost"] = map[string]any{"daily_limit_usd": 5}
		a := newAttack(t, cfg, map[string]string{
			"x.sh":                                `printf '{"cost_usd": 1000000, "had_output": true}' > "$OODA_REPORT"` + "\n",
			"agent/state/evolve/cost_ledger.json": `{"schema_version": "1.0.0", "date": "2026-03-02", "entries": [], "total_estimated_usd": 1.7e308}`,
		})
		r := a.cycle(3, 0)
		wantLines(t, r, "[HALT] Daily cost cap reached", "[Record] Cycle #1 recorded")
		b, _ := os.ReadFile(a.evolve("cost_ledger.json"))
		var l struct {
			Total float64 `json:"total_estimated_usd"`
		}
		if err := json.Unmarshal(b, &l); err != nil || l.Total < 1e6 {
			t.Errorf("cost_ledger.json (%v): %s", err, b)
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("a record that cannot be written", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		set(cfg, "safety.max_silent_failures", 2)
		// The skill succeeds but makes metrics.json unwritable: the
		// cycle must still be recorded (as an error), and the breaker
		// must count it.
		a := newAttack(t, cfg, map[string]string{"x.sh": `rm -rf agent/state/evolve/metrics.json
mkdir -p agent/state/evolve/metrics.json/x
` + reportScript})
		for i, code := range []int{1, 3} {
			if err := os.RemoveAll(a.evolve("metrics.json")); err != nil {
				t.Fatal(err)
			}
			r := a.cycle(code, time.Duration(i+1)*time.Hour)
			wantLines(t, r, "[WARN] step 6: metrics.json: ", ". The cycle is recorded as an error.",
				fmt.Sprintf("[Record] Cycle #%d recorded: health (error", i+1))
			a.checkRecorded(i + 1)
			a.checkLockGone()
		}
		if b, err := os.ReadFile(a.path("agent/safety/HALT")); err != nil || !strings.HasPrefix(string(b), "2 consecutive cycles failed; the last one could not write its record (step 6: metrics.json:") {
			t.Errorf("HALT file: %q, %v", b, err)
		}
		a.wantGaps("record_write_failed")
		a.checkAfter()
	})
}

// 6. Reads had no size limit: a report or state file that is a symlink to
// /dev/zero made ooda run out of memory and leave the lock; a FIFO hung
// forever holding the lock.
func TestAttack6_ReadsAreBounded(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ name, script, want, gap string }{
		{"report is /dev/zero", `ln -s /dev/zero "$OODA_REPORT"`, "runs/1-x.report.json: outside the project, or reached through a symlink", "input_outside_project_report_x"},
		{"report is a FIFO", `mkfifo "$OODA_REPORT"`, "runs/1-x.report.json: not a regular file (a named pipe); not read; continuing without it.", "input_not_regular_report_x"},
		{"report too large", `head -c 1200000 /dev/zero | tr '\0' ' ' > "$OODA_REPORT"`, "runs/1-x.report.json: larger than the read limit of 1 MiB (safety.max_read_mib); not read; continuing without it.", "input_too_large_report_x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := attackConfig()
			set(cfg, "safety.max_read_mib", 1)
			a := newAttack(t, cfg, map[string]string{"x.sh": tc.script + "\n"})
			r := a.cycle(0, 0)
			wantLines(t, r, "[WARN] "+a.evolve(tc.want))
			a.wantGaps(tc.gap)
			a.checkAfter()
			a.checkRecorded(1)
		})
	}

	t.Run("state files", func(t *testing.T) {
		t.Parallel()
		cfg := attackConfig()
		set(cfg, "safety.max_read_mib", 1)
		a := newAttack(t, cfg, map[string]string{
			"x.sh":                                reportScript,
			"agent/state/evolve/reflections.json": `{"reflections": [], "pad": "` + strings.Repeat(" ", 1200000) + `"}`,
		})
		a.symlink("/dev/zero", "agent/state/evolve/memos.json")
		a.mkfifo("agent/state/evolve/goals.json")
		a.mkfifo("agent/state/health.json")
		r := a.cycle(0, 0)
		wantLines(t, r,
			"[WARN] memos.json is refused ("+a.evolve("memos.json")+": outside the project, or reached through a symlink",
			"[WARN] goals.json is refused ("+a.evolve("goals.json")+": not a regular file (a named pipe); not read). Moved to goals.json.corrupt-",
			"[WARN] reflections.json is refused ("+a.evolve("reflections.json")+": larger than the read limit of 1 MiB (safety.max_read_mib); not read). Moved to reflections.json.corrupt-",
			a.path("agent/state/health.json")+": not a regular file (a named pipe); not read")
		a.wantGaps("input_outside_project_memos", "input_not_regular_goals", "input_too_large_reflections", "input_not_regular_health")
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("contract", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": reportScript})
		a.mkfifo("skills/x/contract.yaml")
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] contract of /x rejected: "+a.path("skills/x/contract.yaml")+": not a regular file (a named pipe)", "(running it without a contract)")
		a.wantGaps("contract_invalid_x")
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("config.json is /dev/zero", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, nil, map[string]string{"x.sh": reportScript})
		a.symlink("/dev/zero", "config.json")
		for _, args := range [][]string{{"config", "validate"}, {"cycle", "--now", at(0)}} {
			r := a.mustOoda(2, args...)
			noPanic(t, r)
			wantLines(t, r, a.path("config.json"))
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	t.Run("lock is a FIFO", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": reportScript})
		a.mkfifo("agent/state/evolve/.lock")
		// An unreadable lock is aged by its file time, which is the real
		// clock's, so it is made old by the real clock.
		old := time.Now().Add(-2 * time.Hour)
		if err := os.Chtimes(lockPath(a.dir), old, old); err != nil {
			t.Fatal(err)
		}
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Stale lock detected (pid 0, age ", "m, unreadable). Removing and recovering.", "[Record] Cycle #1 recorded")
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("forge answer too large", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			// An endless answer: ooda must stop reading at its limit.
			_, _ = w.Write([]byte("["))
			chunk := []byte(strings.Repeat(`{"number": 1},`, 1024))
			for {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		t.Cleanup(srv.Close)
		cfg := attackConfig()
		set(cfg, "safety.max_read_mib", 1)
		cfg["forge"] = map[string]any{"provider": "github", "repo": "octo/widget", "api_url": srv.URL}
		a := newAttack(t, cfg, map[string]string{"x.sh": reportScript})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Forge github octo/widget unreachable (github: GET /repos/octo/widget/pulls?per_page=100&state=open: the answer is larger than 1 MiB",
			"[Record] Cycle #1 recorded")
		a.checkAfter()
		a.checkRecorded(1)
	})
}

// bigReport is a report of n distinct actions.
func bigReport(n int) string {
	var b strings.Builder
	b.WriteString(`{"had_output": true, "actions": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"title": "fix issue %d", "reach": 1, "impact": 1, "confidence": 1, "effort": 1}`, i)
	}
	b.WriteString("]}\n")
	return b.String()
}

// 7. Action de-duplication was quadratic and ignored SIGTERM: 20,000
// reported actions took 21 s, 10^6 ran for 15 minutes through timeout's
// SIGTERM.
func TestAttack7_HugeReportsAreBounded(t *testing.T) {
	t.Parallel()

	t.Run("100000 actions", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": `cp big.json "$OODA_REPORT"` + "\n", "big.json": bigReport(100_000)})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] the report lists 100000 actions; only the first 200 are taken, 99800 dropped",
			"[Reflect] Actions: 200 extracted, 0 duplicate(s).", "[Record] Cycle #1 recorded")
		var q struct {
			Pending   []any `json:"pending"`
			Completed []any `json:"completed"`
		}
		a.readJSON(a.evolve("action_queue.json"), &q)
		if len(q.Pending) > 20 || len(q.Pending)+len(q.Completed) > 200 {
			t.Errorf("action_queue.json: %d pending, %d completed", len(q.Pending), len(q.Completed))
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("SIGTERM once the skill is done", func(t *testing.T) {
		t.Parallel()
		// The signal arrives once the skill has exited, while ooda takes
		// the actions of its report: that work observes the signal, or is
		// short enough that the cycle ends before it matters. Whichever
		// step it lands in, ooda ends, records the cycle whose skill ran
		// and releases the lock. (Before the cap, de-duplicating these
		// actions ran for minutes, deaf to the signal.)
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": `cp big.json "$OODA_REPORT"
echo $$ > done
`, "big.json": bigReport(100_000)})
		cmd := a.cmd("cycle", "--now", at(0))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		skill, err := strconv.Atoi(waitFile(t, a.path("done"), 20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(attackLimit); alive(skill) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		// An error here is an ooda that has already exited.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		r := a.wait(cmd, &out, &errb)
		a.outputs = append(a.outputs, r)
		if r.code != 0 {
			t.Errorf("ooda cycle after SIGTERM: want exit 0, got\n%s", r)
		}
		a.checkAfter()
		a.checkRecorded(1)
	})
}

// 8. A forge.repo that is not owner/name validated, and then every cycle
// panicked on a nil *GitHub inside a non-nil Forge.
func TestAttack8_ForgeRepoThatIsNotOwnerName(t *testing.T) {
	t.Parallel()
	for _, repo := range []string{"not-owner-name", "a/b/c", "../x", "owner/", "o w/n", "--output=x/y"} {
		t.Run(repo, func(t *testing.T) {
			t.Parallel()
			for _, provider := range []string{"auto", "github"} {
				cfg := attackConfig()
				cfg["forge"] = map[string]any{"provider": provider, "repo": repo}
				a := newAttack(t, cfg, map[string]string{"x.sh": reportScript})
				// The cycles first: a cycle must refuse the config
				// itself, whatever validate says.
				for _, args := range [][]string{{"cycle", "--dry-run", "--now", at(0)}, {"cycle", "--now", at(0)}, {"config", "validate"}} {
					r := a.mustOoda(2, args...)
					noPanic(t, r)
					wantLines(t, r, `/forge/repo: must be "owner/name"`, "got "+strconv.Quote(repo))
				}
				a.checkAfter()
				a.checkNotRecorded(0)
			}
		})
	}

	// A default branch that is a git option never validates.
	t.Run("git option as default branch", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, nil, map[string]string{"x.sh": reportScript})
		cfg := attackConfig()
		cfg["forge"] = map[string]any{"provider": "git", "default_branch": "--output=" + a.sentinel + "/victim.json"}
		b, _ := json.Marshal(cfg)
		writeFile(t, a.path("config.json"), string(b))
		a.gitInit()
		for _, args := range [][]string{{"cycle", "--dry-run", "--now", at(0)}, {"cycle", "--now", at(0)}, {"config", "validate"}} {
			r := a.mustOoda(2, args...)
			noPanic(t, r)
			wantLines(t, r, "/forge/default_branch", "is not usable as a git branch name")
		}
		a.checkAfter()
		a.checkNotRecorded(0)
	})

	// Configurations that validate but name a forge ooda cannot use: each
	// is one warning, and the cycle runs and is recorded without a forge.
	for _, tc := range []struct {
		name  string
		forge map[string]any
		git   bool
		want  string
	}{
		{"git outside a repository", map[string]any{"provider": "git"}, false, "[WARN] Forge not available (forge git: "},
		{"github without a repo", map[string]any{"provider": "github"}, false, "[WARN] Forge not available (forge github: set forge.repo (owner/name)"},
		{"token over plain http", map[string]any{"provider": "github", "repo": "octo/widget", "api_url": "http://ghe.example.invalid/api/v3"}, false,
			`[WARN] Forge not available (forge.api_url "http://ghe.example.invalid/api/v3": a token is only sent over https (or http to a loopback address))`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAttack(t, nil, map[string]string{"x.sh": reportScript})
			cfg := attackConfig()
			f := map[string]any{}
			for k, v := range tc.forge {
				f[k] = strings.ReplaceAll(fmt.Sprint(v), "SENTINEL", a.sentinel)
			}
			cfg["forge"] = f
			b, _ := json.Marshal(cfg)
			writeFile(t, a.path("config.json"), string(b))
			if tc.git {
				a.gitInit()
			}
			want := strings.ReplaceAll(tc.want, "SENTINEL", a.sentinel)
			r := a.mustOoda(0, "cycle", "--dry-run", "--now", at(0))
			noPanic(t, r)
			wantLines(t, r, want)
			r = a.cycle(0, 0)
			noPanic(t, r)
			wantLines(t, r, want, "[Record] Cycle #1 recorded")
			a.mustOoda(0, "config", "validate")
			a.checkAfter()
			a.checkRecorded(1)
		})
	}
}

// 9. Growth: proposed-skills/ grew to 401 files, each principle's
// source_episodes grew forever, temporary files of killed writes stayed,
// and metrics.json's counters drifted from cycle_count after crashes.
func TestAttack9_GrowthIsBounded(t *testing.T) {
	t.Parallel()

	t.Run("proposed-skills is full", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{"x.sh": `printf 'not json' > "$OODA_REPORT"` + "\n"}
		for i := range 50 {
			files[fmt.Sprintf("agent/state/evolve/proposed-skills/old_gap_%02d.md", i)] = "# an old proposal\n"
		}
		a := newAttack(t, attackConfig(), files)
		// The invalid report is a gap each cycle; at its third it is due
		// a proposal, which the full directory refuses.
		var r run
		for i := 1; i <= 3; i++ {
			r = a.cycle(0, time.Duration(i)*time.Hour)
			a.checkRecorded(i)
		}
		wantLines(t, r, "[WARN] proposal for report_invalid_x: "+filepath.Join("agent", "state", "evolve", "proposed-skills", "report_invalid_x.md")+
			" not written: proposed-skills/ is full (50 proposals, the cap); review and delete old ones to make room")
		ents, err := os.ReadDir(a.evolve("proposed-skills"))
		if err != nil || len(ents) != 50 {
			t.Errorf("proposed-skills/ holds %d entries (%v), want the 50 it had", len(ents), err)
		}
		a.checkAfter()
	})

	t.Run("source_episodes", func(t *testing.T) {
		t.Parallel()
		var eps []string
		for i := range 60 {
			eps = append(eps, fmt.Sprintf("%d-W%02d", 2024+i/52, i%52+1))
		}
		b, _ := json.Marshal(map[string]any{"schema_version": "1.0.0", "principles": []any{map[string]any{
			"id": "P-1", "text": "When health yields nothing, lower its priority.", "confidence": 0.5,
			"source_episodes": eps, "occurrences": 60, "created_at": "2025-01-06T00:00:00Z",
		}}})
		a := newAttack(t, attackConfig(), map[string]string{"x.sh": reportScript, "agent/state/evolve/principles.json": string(b)})
		a.cycle(0, 0)
		var ps struct {
			Principles []struct {
				SourceEpisodes []string `json:"source_episodes"`
				Occurrences    int      `json:"occurrences"`
			} `json:"principles"`
		}
		a.readJSON(a.evolve("principles.json"), &ps)
		if len(ps.Principles) != 1 || len(ps.Principles[0].SourceEpisodes) != 52 || ps.Principles[0].Occurrences != 60 ||
			ps.Principles[0].SourceEpisodes[51] != eps[59] || ps.Principles[0].SourceEpisodes[0] != eps[8] {
			t.Errorf("principles.json: %+v; want the newest 52 of the 60 source episodes and occurrences 60", ps.Principles)
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("temporary files of a killed write", func(t *testing.T) {
		t.Parallel()
		// The killed cycle left state.json saying it was in progress.
		a := newAttack(t, attackConfig(), map[string]string{
			"x.sh":                          reportScript,
			"agent/state/evolve/state.json": `{"cycle_count": 0, "cycle_in_progress": true}`,
			"agent/state/evolve/.state.json.tmp-123456": `{"cycle_count": 9`,
			"agent/state/evolve/.memos.json.tmp-42":     `{"memos": [`,
			"agent/state/health/.lens.json.tmp-7":       `{`,
		})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Removed 2 temporary file(s) a killed process left behind: ", "[WARN] Removed 1 temporary file(s) a killed process left behind: agent/state/health/.lens.json.tmp-7")
		for _, p := range []string{"agent/state/evolve/.state.json.tmp-123456", "agent/state/evolve/.memos.json.tmp-42", "agent/state/health/.lens.json.tmp-7"} {
			if exists(a.path(p)) {
				t.Errorf("%s is still there", p)
			}
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("temporary file in a domain directory after a killed cycle's lock", func(t *testing.T) {
		t.Parallel()
		// A lock whose holder is dead on this host (no pid is that high).
		host, _ := os.Hostname()
		lock := fmt.Sprintf(`{"pid": 999999999, "host": %q, "started_at": "2026-01-01T00:00:00Z"}`, host)
		a := newAttack(t, attackConfig(), map[string]string{
			"x.sh":                                reportScript,
			"agent/state/evolve/.lock":            lock,
			"agent/state/health/.lens.json.tmp-7": `{`,
		})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Stale lock detected", "[WARN] Removed 1 temporary file(s) a killed process left behind: agent/state/health/.lens.json.tmp-7")
		if exists(a.path("agent/state/health/.lens.json.tmp-7")) {
			t.Errorf("the domain's temporary file is still there")
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	// Only a cycle writes a domain's directory, so without a killed cycle
	// (no stale lock, state.json not in progress) its directory is not
	// listed: a temporary-looking file there is not ooda's to remove.
	t.Run("temporary file in a domain directory without a crash", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{
			"x.sh":                                  reportScript,
			"agent/state/evolve/.memos.json.tmp-42": `{"memos": [`,
			"agent/state/health/.lens.json.tmp-7":   `{`,
		})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Removed 1 temporary file(s) a killed process left behind: agent/state/evolve/.memos.json.tmp-42")
		if exists(a.path("agent/state/evolve/.memos.json.tmp-42")) || !exists(a.path("agent/state/health/.lens.json.tmp-7")) {
			t.Errorf("evolve's temporary file must go and the domain's stay")
		}
		a.checkAfter()
		a.checkRecorded(1)
	})

	t.Run("metrics after a crash", func(t *testing.T) {
		t.Parallel()
		a := newAttack(t, attackConfig(), map[string]string{
			"x.sh":                          reportScript,
			"agent/state/evolve/state.json": `{"cycle_count": 162, "last_cycle": "2026-03-01T09:00:00Z", "cycle_in_progress": true, "cycle_started_at": "2026-03-01T10:00:00Z"}`,
			"agent/state/evolve/metrics.json": `{"schema_version": "1.0.0", "counters": {"total_cycles": 182, "total_futile_cycles": 4, "domain_executions": {}},
  "cost": {"total_estimated_usd": 1}}`,
		})
		r := a.cycle(0, 0)
		wantLines(t, r, "[WARN] Cycle #163 did not complete (crash/kill detected).",
			"[WARN] metrics.json: counters.total_cycles was 183 after cycle #163; reconciled to 163.")
		var m struct {
			Counters struct {
				TotalCycles int `json:"total_cycles"`
			} `json:"counters"`
		}
		a.readJSON(a.evolve("metrics.json"), &m)
		if m.Counters.TotalCycles != 163 {
			t.Errorf("metrics.json: total_cycles %d, want 163", m.Counters.TotalCycles)
		}
		a.checkAfter()
		a.checkRecorded(163)
	})
}

// 10. Bad values in state stalled or skipped the rails: a negative ledger
// total let cycles run past the cap, a future last_cycle skipped every
// cycle, a negative cycle_count numbered the next cycle -4, duplicate keys
// silently took the last value.
func TestAttack10_BadStateValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		code  int
		cycle int
		want  []string
	}{
		{"negative ledger total", map[string]string{
			"agent/state/evolve/state.json": `{"cycle_count": 1, "last_cycle": "2026-03-02T08:00:00Z"}`,
			"agent/state/evolve/cost_ledger.json": `{"schema_version": "1.0.0", "date": "2026-03-02", "total_estimated_usd": -1000,
  "entries": [{"cycle_id": 1, "timestamp": "2026-03-02T08:00:00Z", "skill": "/x", "chain": [], "estimated_usd": 4.99}]}`,
		}, 3, 2, []string{
			"[WARN] agent/state/evolve/cost_ledger.json: /total_estimated_usd: -1000 is not a total (negative or not finite); using 4.99, the sum of its entries",
			"[HALT] Daily cost cap reached: $5.01 spent today",
		}},
		{"future last_cycle", map[string]string{
			"agent/state/evolve/state.json": `{"cycle_count": 3, "last_cycle": "2026-04-02T09:00:00Z"}`,
		}, 0, 4, []string{
			"[WARN] state.json: last_cycle 2026-04-02T09:00:00Z is 744h0m0s in the future, more than min_cycle_interval_minutes ahead (clock skew?); running without waiting.",
		}},
		{"negative cycle_count", map[string]string{
			"agent/state/evolve/state.json": `{"cycle_count": -5}`,
		}, 0, 1, []string{
			"[WARN] agent/state/evolve/state.json: /cycle_count: -5 is negative; using 0",
			"[Record] Cycle #1 recorded",
		}},
		{"duplicate keys", map[string]string{
			"agent/state/evolve/state.json": `{"cycle_count": 2, "cycle_count": 7, "last_cycle": "2026-03-01T09:00:00Z"}`,
		}, 0, 8, []string{
			"[WARN] agent/state/evolve/state.json: /cycle_count: the key appears more than once in one object; the last value is used",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := attackConfig()
			cfg["cost"] = map[string]any{"daily_limit_usd": 5}
			files := map[string]string{"x.sh": reportScript}
			for k, v := range tc.files {
				files[k] = v
			}
			a := newAttack(t, cfg, files)
			r := a.cycle(tc.code, 0)
			wantLines(t, r, tc.want...)
			wantLines(t, r, fmt.Sprintf("[Record] Cycle #%d recorded", tc.cycle))
			a.checkAfter()
			a.checkRecorded(tc.cycle)
		})
	}
}

// procStat reads a process's session id (field 6 of /proc/PID/stat) and
// start time (field 22), which tells it from a later process given the
// same pid.
func procStat(pid int) (sid int, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, "", false
	}
	sid, err = strconv.Atoi(f[3])
	return sid, f[19], err == nil
}

// procStart is the start time of a running process.
func procStart(pid int) (string, bool) {
	_, start, ok := procStat(pid)
	return start, ok
}

// 11. A grandchild that left the skill's process group with setsid
// survived HALT, and the lock was released while it ran.
func TestAttack11_SetsidGrandchildDiesWithHalt(t *testing.T) {
	t.Parallel()
	// The skill starts a process in a session of its own, and a
	// double-forked one that also ignores SIGTERM (orphaned at once), each
	// recording its pid; then it waits for the HALT.
	a := newAttack(t, attackConfig(), map[string]string{"x.sh": `setsid sleep 300 &
echo $! > escaped.tmp && mv escaped.tmp escaped.pid
(setsid sh -c 'trap "" TERM; echo $$ > double.tmp && mv double.tmp double.pid; exec sleep 300' &)
while [ ! -e double.pid ]; do sleep 0.01; done
echo $$ > started.tmp && mv started.tmp started
sleep 300
`})
	cmd := a.cmd("cycle", "--json", "--now", at(0))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range []string{"started", "escaped.pid", "double.pid"} {
		pid, err := strconv.Atoi(waitFile(t, a.path(f), 20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	starts := map[int]string{}
	for _, pid := range pids {
		if s, ok := procStart(pid); ok {
			starts[pid] = s
		}
		t.Cleanup(func() {
			if s, ok := procStart(pid); ok && s == starts[pid] {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
	for _, pid := range pids[1:] {
		if sid, _, ok := procStat(pid); !ok || sid != pid {
			t.Fatalf("process %d is not the leader of a session of its own (session %d); the attack needs it to be", pid, sid)
		}
	}

	a.mustOoda(0, "halt", "operator", "stop")
	r := a.wait(cmd, &out, &errb)
	a.outputs = append(a.outputs, r)
	// Checked at once: ooda returns only once every process of the run
	// has ended.
	for i, pid := range pids {
		if s, ok := procStart(pid); ok && s == starts[pid] && alive(pid) {
			t.Errorf("%s: process %d still runs after the HALTed cycle returned", []string{"the skill", "the setsid grandchild", "the double-forked grandchild"}[i], pid)
		}
	}
	if r.code != 3 {
		t.Errorf("ooda cycle: want exit 3 after HALT during the skill, got\n%s", r)
	}
	d := decodeCycle(t, r)
	if d.Status != "halted" || deref(d.Reason) != "halt_during_execution" {
		t.Errorf("status %s, reason %s; want halted, halt_during_execution", d.Status, deref(d.Reason))
	}
	wantLines(t, r, "[HALT] HALT file appeared during /x; stopped it. Partial execution logged.")
	if strings.Contains(r.stderr, "still run after it was stopped") {
		t.Errorf("ooda reports survivors:\n%s", r)
	}
	a.checkAfter()
	a.checkRecorded(1)
}
