package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

const cardCLIConfig = `{
  "project": {"name": "shop"},
  "domains": {
    "health": {"weight": 2.0, "primary_skill": "/x", "fallback": true},
    "tests": {"weight": 1.0, "primary_skill": "/y"}
  },
  "skills": {
    "/x": {"command": ["/bin/sh", "x.sh"]},
    "/y": {"command": ["/bin/sh", "x.sh"]}
  },
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/x", "/y"]},
  "cost": {"daily_limit_usd": 4}
}
`

// cardCLIProject is a project past its first cycle whose skill reports a
// summary, output and a cost, or fails when the file "fail" exists.
func cardCLIProject(t *testing.T, config string) string {
	t.Helper()
	dir := tempRoot(t)
	mkfile(t, dir, "config.json", config)
	mkfile(t, dir, "x.sh", `if [ -e fail ]; then echo broken >&2; exit 3; fi
printf '{"summary": "2 flaky tests", "had_output": true, "cost_usd": 0.05}\n' > "$OODA_REPORT"
`)
	mkfile(t, dir, "agent/state/evolve/state.json", `{"cycle_count": 20, "last_cycle": "2026-03-02T08:00:00Z", "cycle_in_progress": false, "decision_log": []}`)
	mkfile(t, dir, "agent/state/health.json", `{"last_run": "2026-03-01T07:00:00Z", "status": "healthy", "alerts": []}`)
	mkfile(t, dir, "agent/state/tests.json", `{"last_run": "2026-03-02T07:00:00Z", "status": "passed", "alerts": []}`)
	return dir
}

// cardPart is the card at the end of a cycle's human output: from its
// header line to the end.
func cardPart(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\nshop · ooda cycle #")
	if i < 0 {
		t.Fatalf("no card in the output:\n%s", out)
	}
	return out[i+1:]
}

// A cycle that ran prints its card at the end, on stdout; `status --share`
// later prints the same card, reading only; the card's fields are the
// same in `cycle --json` (the text then on stderr) and `status --share
// --json`.
func TestStep7_CycleCardAfterCycleIsTheShareCard(t *testing.T) {
	dir := cardCLIProject(t, cardCLIConfig)
	code, stdout, stderr := run(t, dir, "cycle", "--now", "2026-03-02T09:00:00Z")
	if code != 0 {
		t.Fatalf("cycle: exit %d: %s", code, stderr)
	}
	card := cardPart(t, stdout)
	for _, want := range []string{
		"shop · ooda cycle #21 · 2026-03-02 09:00 UTC\n",
		"OBSERVE   2 domains scanned · 2 flaky tests\n",
		"DECIDE    health won (score ",
		"ACT       /x → action_extracted\n",
		"COST      +$0.05 · $0.05 today · cap $4\n",
		"HALT: not active · Level 2 (Full observation)\n",
		"\nshop ran ooda cycle #21: health → action_extracted; ",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("missing %q in the card:\n%s", want, card)
		}
	}
	if !strings.HasSuffix(stdout, card) || !strings.Contains(stdout, "[Record] Cycle #21 recorded") {
		t.Errorf("the card is not the end of the cycle's output:\n%s", stdout)
	}

	before := statusTree(t, dir)
	code, share, serr := run(t, dir, "status", "--share")
	if code != 0 || serr != "" {
		t.Fatalf("status --share: exit %d: %s", code, serr)
	}
	if share != card {
		t.Errorf("status --share differs from the cycle's card:\n--- cycle\n%s--- share\n%s", card, share)
	}
	if plain := runOK(t, dir, "status", "--share", "--plain"); plain != card {
		t.Errorf("--plain off a terminal differs:\n%s", plain)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status --share changed the project")
	}

	// The next cycle with --json: the card's fields in the document, the
	// text on stderr.
	code, stdout, stderr = run(t, dir, "cycle", "--json", "--now", "2026-03-02T10:00:00Z")
	if code != 0 {
		t.Fatalf("cycle --json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Status string          `json:"status"`
		Card   json.RawMessage `json:"card"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("cycle --json: %v: %s", err, stdout)
	}
	if strings.Contains(stdout, "ooda cycle #") && !strings.Contains(stdout, `"share": "shop ran ooda cycle #22`) {
		t.Errorf("card text on stdout under --json:\n%s", stdout)
	}
	if !strings.Contains(stderr, "shop · ooda cycle #22 ·") {
		t.Errorf("no card on stderr under --json:\n%s", stderr)
	}
	var shareDoc struct {
		Card json.RawMessage `json:"card"`
	}
	if err := json.Unmarshal([]byte(runOK(t, dir, "status", "--share", "--json")), &shareDoc); err != nil {
		t.Fatal(err)
	}
	if cardCompactJSON(t, doc.Card) != cardCompactJSON(t, shareDoc.Card) {
		t.Errorf("cycle --json card differs from status --share --json:\n%s\n%s", doc.Card, shareDoc.Card)
	}
	var c struct {
		Cycle  int `json:"cycle"`
		Decide struct {
			Domain string `json:"domain"`
		} `json:"decide"`
		Learn []struct{ Kind, Text string } `json:"learn"`
		Cost  struct {
			CycleUSD float64 `json:"cycle_usd"`
			TodayUSD float64 `json:"today_usd"`
			CapUSD   float64 `json:"cap_usd"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(doc.Card, &c); err != nil {
		t.Fatal(err)
	}
	if c.Cycle != 22 || c.Decide.Domain == "" || len(c.Learn) == 0 || c.Cost.CycleUSD != 0.05 || c.Cost.TodayUSD != 0.1 || c.Cost.CapUSD != 4 {
		t.Errorf("card fields: %+v", c)
	}
}

func runOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(t, dir, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

func cardCompactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// No card for a dry run, a cycle skipped as too soon, or a halted one;
// their --json card is null. A cycle whose skill failed (exit 4) was
// recorded: it gets its card.
func TestStep7_CycleCardOnlyForCyclesThatRan(t *testing.T) {
	dir := cardCLIProject(t, cardCLIConfig)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"dry run", []string{"cycle", "--dry-run", "--now", "2026-03-02T09:00:00Z"}, 0},
		{"too soon", []string{"cycle", "--now", "2026-03-02T08:01:00Z"}, 0},
	} {
		code, stdout, stderr := run(t, dir, tc.args...)
		if code != tc.code || strings.Contains(stdout+stderr, "ooda cycle #") {
			t.Errorf("%s: exit %d, output:\n%s%s", tc.name, code, stdout, stderr)
		}
		code, stdout, _ = run(t, dir, append(tc.args, "--json")...)
		if code != tc.code || !strings.Contains(stdout, `"card": null`) {
			t.Errorf("%s --json: exit %d, card not null:\n%s", tc.name, code, stdout)
		}
	}

	mkfile(t, dir, "agent/safety/HALT", "stop for the test\n")
	code, stdout, stderr := run(t, dir, "cycle", "--now", "2026-03-02T09:00:00Z")
	if code != 3 || strings.Contains(stdout+stderr, "ooda cycle #") {
		t.Errorf("halted: exit %d:\n%s%s", code, stdout, stderr)
	}
	if code, _, _ := run(t, dir, "resume"); code != 0 {
		t.Fatal("resume failed")
	}

	mkfile(t, dir, "fail", "")
	code, stdout, stderr = run(t, dir, "cycle", "--now", "2026-03-02T09:00:00Z")
	if code != 4 {
		t.Fatalf("failed skill: exit %d: %s", code, stderr)
	}
	card := cardPart(t, stdout)
	if !strings.Contains(card, "ACT       /x → error\n") {
		t.Errorf("the failed cycle's card:\n%s", card)
	}
}

// output.cycle_card false: no card text after a cycle; --json keeps the
// card's fields for scripts.
func TestStep7_CycleCardOffByConfig(t *testing.T) {
	dir := cardCLIProject(t, strings.Replace(cardCLIConfig, `"cost":`, `"output": {"cycle_card": false}, "cost":`, 1))
	_, stdout, _ := run(t, dir, "cycle", "--now", "2026-03-02T09:00:00Z")
	if strings.Contains(stdout, "ooda cycle #") || !strings.Contains(stdout, "[Record] Cycle #21 recorded") {
		t.Errorf("a card with output.cycle_card false:\n%s", stdout)
	}
	code, stdout, stderr := run(t, dir, "cycle", "--json", "--now", "2026-03-02T10:00:00Z")
	if code != 0 || !strings.Contains(stdout, `"share": "shop ran ooda cycle #22`) || strings.Contains(stderr, "ooda cycle #22 ·") {
		t.Errorf("--json with the card off: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// --share still shows it: asked for by name.
	if out := runOK(t, dir, "status", "--share"); !strings.HasPrefix(out, "shop · ooda cycle #22 ·") {
		t.Errorf("status --share: %s", out)
	}
}

// Before any cycle: the sentence that says so, exit 0; --json null. A
// corrupt state.json is named on stderr and the card is the same sentence.
func TestStatusShareWithoutACycle(t *testing.T) {
	dir := statusProject(t)
	code, stdout, stderr := run(t, dir, "status", "--share")
	if code != 0 || stdout != "No cycle to card yet. Run `ooda cycle` first.\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if out := runOK(t, dir, "status", "--share", "--json"); cardCompactJSON(t, []byte(out)) != `{"card":null}` {
		t.Errorf("--json: %s", out)
	}
	p := mkfile(t, dir, "agent/state/evolve/state.json", `{"cycle_count": 3, "decision_log": [{"cycle": 3`)
	before := statusTree(t, dir)
	code, stdout, stderr = run(t, dir, "status", "--share")
	if code != 0 || !strings.HasPrefix(stdout, "No cycle to card yet.") || stderr != "[WARN] corrupt state file: "+p+"\n" {
		t.Errorf("corrupt state: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if statusTree(t, dir) != before {
		t.Error("status --share moved or repaired the corrupt file")
	}
}

// The card cannot be driven by hostile state text, and a known secret in
// it is masked, in the text and in the JSON.
func TestStatusShareEscapesAndMasks(t *testing.T) {
	const tok = "ghp_cardShareToken0123456789abcd"
	dir := statusProject(t)
	mkfile(t, dir, "agent/state/evolve/state.json", `{"cycle_count": 3, "decision_log": [{"cycle": 3, "timestamp": "2026-03-02T10:00:00Z",
		"action": "execute", "selected_domain": "health", "selected_skill": "/x", "score": 2, "confidence": 0.7, "result": "success",
		"orient_summary": "ok\u001b[2J\r[Record] Cycle #4 recorded token `+tok+`"}]}`)
	secret.Register(tok)
	for _, args := range [][]string{{"status", "--share"}, {"status", "--share", "--json"}} {
		code, stdout, stderr := run(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(stdout, "\x1b\r") || strings.Contains(stdout, "\n[Record]") {
			t.Errorf("%v: control characters or a forged line: %q", args, stdout)
		}
		if strings.Contains(stdout, tok) {
			t.Errorf("%v: the token is shown: %s", args, stdout)
		}
	}
}
