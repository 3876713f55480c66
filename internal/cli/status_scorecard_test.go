package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The scorecard reads the cycle log through the command line: text on
// stdout, one JSON document with --json, a corrupt file named on stderr,
// and nothing in the project written or moved.
func TestStatusScorecard_TextJSONAndCorruptFiles(t *testing.T) {
	dir := statusProject(t)
	ev := "agent/state/evolve/"
	var log strings.Builder
	for c := 1; c <= 10; c++ {
		rt, q := "action_extracted", 0.2
		if c%5 == 0 {
			rt, q = "futile", 0
		}
		fmt.Fprintf(&log, `{"cycle_id": %d, "result_type": "%s", "quality_multiplier": %v, "cost_usd": 0.01, "on_mission": true}`+"\n", c, rt, q)
	}
	mkfile(t, dir, ev+"cycle_log.jsonl", log.String())
	mkfile(t, dir, ev+"cycle_log.annotations.jsonl", `{"cycle_id": 10, "annotate": {"result_type": "pr_merged_held", "quality_multiplier": 1}}`+"\n")
	mkfile(t, dir, ev+"goals.json", `{"goals": [`)
	before := statusTree(t, dir)

	code, stdout, stderr := run(t, dir, "status", "--scorecard", "--window", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Loop Scorecard — last 5 cycles, from cycle_log.jsonl\n",
		"  Task completion     20%      ",
		"  Futile cycles       0%       ",
		"Results: pr_merged_held 1, action_extracted 4\n",
		"Trend, 2 windows of 5 cycles (oldest first):\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[WARN] corrupt state file: ") || !strings.Contains(stderr, "goals.json") {
		t.Errorf("the corrupt goals file is not named: %q", stderr)
	}

	code, stdout, _ = run(t, dir, "status", "--scorecard", "--json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("--json: exit %d: %q", code, stdout)
	}
	if doc["window"] != "all" || doc["cycles_scored"] != 10.0 || doc["loop_value_score"] != 0.26 || doc["futile_cycle_rate_pct"] != 10.0 || doc["grade"] == nil {
		t.Errorf("document: %s", stdout)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("the scorecard wrote to the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
