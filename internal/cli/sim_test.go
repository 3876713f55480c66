package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `ooda sim --json` prints the documented shape (CLI.md): one result per
// scenario with exactly the documented keys.
func TestSimJSON(t *testing.T) {
	code, out, stderr := run(t, t.TempDir(), "sim", "--scenario", "B_library", "--cycles", "3", "--strategy", "spec", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Strategy string                       `json:"strategy"`
		Results  []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Strategy != "spec" || len(doc.Results) != 1 {
		t.Fatalf("%s", out)
	}
	var keys []string
	for k := range doc.Results[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"cycles", "futile_rate_pct", "goal_progress_pct", "halted", "loop_value_score", "mission_hit_rate_pct", "scenario", "skipped_idle", "strategy", "winners"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	var winners []string
	json.Unmarshal(doc.Results[0]["winners"], &winners)
	if len(winners) != 3 {
		t.Errorf("winners %v", winners)
	}
}

// Mistakes on the command line and in a scenario file are usage errors
// (exit 2) that say what is wrong, naming the file and the field.
func TestSimUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "s.json")
	os.WriteFile(bad, []byte(`{"name": "s", "domains": {"api": {"kind": "deploy"}}}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--cycles", "0"}, "--cycles 0"},
		{[]string{"sim", "--strategy", "greedy"}, `--strategy "greedy"`},
		{[]string{"sim", "--scenario", "nope"}, "neither a built-in scenario"},
		{[]string{"sim", "--scenario", bad}, bad + ": /domains/api/kind"},
		{[]string{"sim", "extra"}, "takes no arguments"},
	} {
		code, _, stderr := run(t, dir, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)", c.args, code, stderr, c.want)
		}
	}
}
