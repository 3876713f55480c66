package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/cli"
)

// metrics.json in the state design's layout: domain_executions at the top
// level, a streaks block, a daily cost log, and the chain, halt and
// dry-run counters. The balance term sees the 40 executions of
// service_health (a share of 1 against an expected third: -3.3, where a
// reader of counters alone would see none and give +1.7), and the file
// stays in its layout, every counter brought up to date once.
func TestCompat_MetricsStateDesignLayout(t *testing.T) {
	dir := fixture(t, "metrics-design")
	before := load(t, dir, evolve+"/metrics.json")
	res, _ := completed(t, dir, t0, nil)
	continues(t, dir, res, 40)

	changelog := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	if !strings.Contains(changelog, "-- service_health\n") || !strings.Contains(changelog, "balance: -3.3)") {
		t.Errorf("the balance term must see the 40 executions already counted (share 1.0, -3.3):\n%s", changelog)
	}

	m := load(t, dir, evolve+"/metrics.json")
	// The layout is kept: nothing the state design keeps elsewhere is
	// added under counters, and the top-level copies are updated.
	for _, k := range []string{"domain_executions", "current_domain", "current_streak", "longest_streak"} {
		if m.at("counters", k) != nil {
			t.Errorf("counters.%s added to a file that keeps it elsewhere: %s", k, m.at("counters"))
		}
	}
	want := map[string]float64{
		"counters/total_cycles": 41, "counters/total_skill_executions": 41, "counters/total_chain_executions": 4,
		"counters/total_prs_created": 3, "counters/total_prs_merged": 2, "counters/total_prs_rejected": 1,
		"counters/total_halts": 2, "counters/total_dry_runs": 5,
		"domain_executions/service_health": 41, "domain_executions/test_coverage": 0, "domain_executions/backlog": 0,
		"streaks/current_streak": 41, "streaks/longest_streak": 41,
		// With a daily log the total holds only the days evicted from it.
		"cost/total_estimated_usd": 1.5,
	}
	for path, w := range want {
		if got, ok := m.num(strings.Split(path, "/")...); !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", path, got, ok, w)
		}
	}
	if d := str(m.at("streaks", "current_domain")); d != "service_health" {
		t.Errorf("streaks.current_domain = %q", d)
	}
	if d := str(m.at("streaks", "longest_streak_domain")); d != "service_health" {
		t.Errorf("streaks.longest_streak_domain = %q", d)
	}
	days := m.list("cost", "daily_log")
	old := before.list("cost", "daily_log")
	if len(days) != 2 {
		t.Fatalf("daily_log = %s", m.at("cost", "daily_log"))
	}
	sameEntries(t, "cost.daily_log", old[:1], days[:1])
	today := load(t, dir, evolve+"/cost_ledger.json")
	spent, _ := today.num("total_estimated_usd")
	var d struct {
		Date   string  `json:"date"`
		USD    float64 `json:"estimated_usd"`
		Cycles int     `json:"cycles"`
	}
	if err := json.Unmarshal(days[1], &d); err != nil || d.Date != "2026-04-14" || d.Cycles != 2 || !near(d.USD, 0.1+spent) {
		t.Errorf("today's daily_log entry = %s, want 2026-04-14 with 2 cycles and 0.1 + %v", days[1], spent)
	}
	keysKept(t, "metrics.json", before.raw, m.raw, "counters", "domain_executions", "cost", "streaks", "last_updated")
	if str(m.at("operator_note")) != "kept" {
		t.Errorf("unknown key lost: %s", m.raw)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// gitInit makes dir a committed git repository and returns its HEAD.
func gitInit(t *testing.T, dir string) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	return git("rev-parse", "HEAD")
}

// checkpointProject is the checkpoints-original fixture in a git
// repository, its checkpoints naming the repository's HEAD.
func checkpointProject(t *testing.T) string {
	t.Helper()
	dir := fixture(t, "checkpoints-original")
	head := gitInit(t, dir)
	p := filepath.Join(dir, evolve, "checkpoints.json")
	writeFile(t, p, bytes.ReplaceAll(readFile(t, dir, evolve+"/checkpoints.json"), []byte("COMMIT"), []byte(head)))
	return dir
}

func rollback(t *testing.T, dir, cycle string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"--project", dir, "config", "rollback", cycle, "--confirm", "rollback " + cycle}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("rollback %s: exit %d\n%s%s", cycle, code, out.String(), errb.String())
	}
}

// `ooda config rollback` of the original's checkpoint: its flat
// {domain: score} confidence is set in the nested confidence.json (which
// stays nested, every other field kept), and its action_queue_pending
// becomes the pending queue.
func TestCompat_RollbackToTheOriginalsCheckpoint(t *testing.T) {
	dir := checkpointProject(t)
	conf := load(t, dir, evolve+"/confidence.json")
	cps := load(t, dir, evolve+"/checkpoints.json")
	rollback(t, dir, "6")

	now := load(t, dir, evolve+"/confidence.json")
	if now.at("domains") == nil || now.at("service_health") != nil {
		t.Fatalf("confidence.json flattened:\n%s", now.raw)
	}
	if v, _ := now.num("domains", "service_health", "score"); v != 0.8 {
		t.Errorf("service_health restored to %v, want the checkpoint's 0.8", v)
	}
	keysKept(t, "confidence.json", conf.raw, now.raw, "domains")
	keysKept(t, "domains.service_health", conf.at("domains", "service_health"), now.at("domains", "service_health"), "score", "last_updated")
	for _, d := range []string{"test_coverage", "backlog"} {
		if !valueEq(now.at("domains", d), conf.at("domains", d)) {
			t.Errorf("domains.%s changed though the checkpoint holds its score (or none): %s", d, now.at("domains", d))
		}
	}

	q := load(t, dir, evolve+"/action_queue.json")
	pending := q.list("pending")
	if len(pending) != 1 || str(field(pending[0], "id")) != "a-kept" || str(field(pending[0], "origin_note")) != "kept" {
		t.Errorf("pending queue = %s, want the checkpoint's action_queue_pending", q.at("pending"))
	}
	if compact(load(t, dir, evolve+"/checkpoints.json").raw) != compact(cps.raw) {
		t.Errorf("checkpoints.json rewritten by a rollback")
	}
	if _, err := os.Stat(filepath.Join(dir, "agent/safety/HALT")); err != nil {
		t.Errorf("no HALT after the rollback: %v", err)
	}
}

// A checkpoint of the original's that kept no queue leaves the queue as
// it is: restoring it must not empty it.
func TestCompat_RollbackToACheckpointWithoutQueueKeepsTheQueue(t *testing.T) {
	dir := checkpointProject(t)
	before := load(t, dir, evolve+"/action_queue.json")
	rollback(t, dir, "5")
	after := load(t, dir, evolve+"/action_queue.json")
	if compact(after.raw) != compact(before.raw) {
		t.Errorf("action_queue.json changed by a checkpoint without a queue:\nwas %s\nnow %s", compact(before.raw), compact(after.raw))
	}
	if v, _ := load(t, dir, evolve+"/confidence.json").num("domains", "service_health", "score"); v != 0.9 {
		t.Errorf("service_health = %v, want the checkpoint's 0.9", v)
	}
}
