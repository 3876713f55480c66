package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `ooda demo --example quickstart` shows what each skill said it found, on
// its cycle's card (OBSERVE's most notable change) and in --json; the
// Loop Scorecard of the cycles follows the cards.
func TestFirst_DemoShowsTheSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb strings.Builder
	code := Main([]string{"demo", "--example", "quickstart", "--dir", dir, "--cycles", "3", "--json"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	human := errb.String()
	// Cycle 3 runs /check-tests, whose report says "tests pass; coverage 78.5%".
	card3 := strings.Index(human, "quickstart · ooda cycle #3 · ")
	if card3 < 0 || !strings.Contains(human[card3:], "\nOBSERVE   3 domains scanned · tests pass; coverage 78.5%\n") {
		t.Errorf("cycle 3's card does not show the summary:\n%s", human)
	}
	if i := strings.Index(human, "Loop Scorecard — all 3 cycles"); i < card3 {
		t.Errorf("the scorecard does not follow the cards:\n%s", human)
	}
	var doc struct {
		Cycles []struct {
			Cycle   int    `json:"cycle"`
			Summary string `json:"summary"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || len(doc.Cycles) != 3 {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if doc.Cycles[2].Summary != "tests pass; coverage 78.5%" || doc.Cycles[0].Summary != "" {
		t.Errorf("--json cycles: %+v", doc.Cycles)
	}
}

// `ooda demo` runs the whole loop on the example service: the broken
// health check and the failing test are noticed, the scripted agent's fix
// becomes a pull request that the demo merges as the user, the next
// cycle's LEARN shows the merge raising confidence, and the Scorecard
// counts the merged PR. Every step is real: the repository, the branch,
// the merge and the test runs are checked on disk afterwards.
func TestDemo_WholeLoopOnTheService(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the demo needs %s: %v", tool, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "shop")
	var out, errb strings.Builder
	if code := Main([]string{"demo", "--dir", dir, "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	human := errb.String()
	// The story, in order: each act's plain header, then its card.
	acts := []string{
		"── Cycle 1 of 8 · First look: the loop reads the project, changes nothing yet",
		"▶ A teammate pushes a change to main",
		"── Cycle 2 of 8 · The service fails its health check: the loop notices",
		"OBSERVE   5 domains scanned · 0 of 1 endpoints up; /health down (HTTP 500, expected 2xx)",
		"── Cycle 3 of 8 · The tests fail: the loop notices and queues a fix",
		"OBSERVE   5 domains scanned · 1 failing (TestTotal)",
		"── Cycle 4 of 8 · It asks the coding agent for a fix: a pull request",
		"ACT       /dev-cycle → pr_created · PR #",
		"In plain words: pr_created = opened a pull request for a person to review.",
		"▶ You review pull request #",
		"and merge it. The fix is deployed: /health answers 200 again. (The demo\n  plays you.",
		"LEARN     PR #",
		"The loop saw your merge:\n    PR #",
		"── Cycle 7 of 8 · The tests pass again",
		"Loop Scorecard — all 8 cycles, from cycle_log.jsonl",
		"Grade: ",
	}
	at := 0
	for _, a := range acts {
		i := strings.Index(human[at:], a)
		if i < 0 {
			t.Fatalf("the output lacks %q after offset %d:\n%s", a, at, human)
		}
		at += i + len(a)
	}
	if !regexp.MustCompile(`(?m)^LEARN     PR #\d+ merged → implementation confidence 0\.70 → 0\.80 \(\+0\.10\)$`).MatchString(human) {
		t.Errorf("no card shows the merge raising confidence:\n%s", human)
	}
	if !regexp.MustCompile(`(?m)^  Task completion     12\.5% `).MatchString(human) || !strings.Contains(human, "pr_merged 1") {
		t.Errorf("the scorecard does not count the merged PR:\n%s", human)
	}

	// On disk: main holds the agent's fix through a merge of the PR branch,
	// and the branch is the one dev-cycle opened.
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	branch := git("branch", "--list", "auto/dev-cycle/*", "--format=%(refname:short)")
	if !strings.HasPrefix(branch, "auto/dev-cycle/") || strings.Contains(branch, "\n") {
		t.Fatalf("PR branches: %q", branch)
	}
	if log := git("log", "--format=%s", "main"); !strings.Contains(log, "(branch "+branch+")") {
		t.Errorf("main does not hold the merge of %s:\n%s", branch, log)
	}
	cart, err := os.ReadFile(filepath.Join(dir, "cart.go"))
	if err != nil || !strings.Contains(string(cart), "total += it.PriceCents * it.Qty\n") {
		t.Errorf("cart.go on main is not fixed: %v\n%s", err, cart)
	}
	var q struct {
		Completed []struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		} `json:"completed"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent", "state", "evolve", "action_queue.json"))
	if err != nil || json.Unmarshal(b, &q) != nil || len(q.Completed) != 1 || q.Completed[0].Status != "merged" {
		t.Errorf("the fix's action is not completed as merged: %v\n%s", err, b)
	}

	var doc struct {
		Example string `json:"example"`
		Cycles  []struct {
			Cycle      int    `json:"cycle"`
			Winner     string `json:"winner"`
			ResultType string `json:"result_type"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || len(doc.Cycles) != 8 || doc.Example != "service" {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if c := doc.Cycles[3]; c.Winner != "implementation" || c.ResultType != "pr_created" {
		t.Errorf("--json cycle 4: %+v", c)
	}
}
