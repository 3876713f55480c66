package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// cycleLogLines decodes every line of the project's cycle log.
func cycleLogLines(t *testing.T, dir string) []map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("cycle log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// 6-C9: the cycle's line records how long its skill ran (skill_seconds,
// after the fifteen keys of the original), a failed skill's too; a cycle
// that ran no skill (the first cycle, observe-only) has no such key.
func TestStep6C9_CycleLogRecordsTheSkillsDuration(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"first_cycle_observe_only": false`, `"first_cycle_observe_only": true`, 1)
	slow := "sleep 0.3\n" + skillScript
	dir := project(t, cfg, map[string]string{"skill.sh": slow})
	run(t, dir, t0, false)
	run(t, dir, t0.Add(time.Hour), false)
	write(t, filepath.Join(dir, "skill.sh"), "sleep 0.2\nexit 3\n")
	run(t, dir, t0.Add(2*time.Hour), false)

	lines := cycleLogLines(t, dir)
	if len(lines) != 3 {
		t.Fatalf("%d cycle log lines, want 3", len(lines))
	}
	if raw, ok := lines[0]["skill_seconds"]; ok {
		t.Errorf("the observe-only first cycle ran no skill, yet its line has skill_seconds %s", raw)
	}
	st := loadState(t, dir)
	for i, min := range map[int]float64{1: 0.3, 2: 0.2} {
		var secs float64
		if err := json.Unmarshal(lines[i]["skill_seconds"], &secs); err != nil {
			t.Fatalf("cycle %d: skill_seconds %s: %v", i+1, lines[i]["skill_seconds"], err)
		}
		e := st.DecisionLog[len(st.DecisionLog)-3+i]
		if secs < min || e.ElapsedSeconds == nil || secs > *e.ElapsedSeconds {
			t.Errorf("cycle %d: skill_seconds %v, want at least the skill's sleep (%v) and at most the cycle's %v", i+1, secs, min, e.ElapsedSeconds)
		}
	}
	var result string
	json.Unmarshal(lines[2]["result"], &result)
	if result != "error" {
		t.Errorf("cycle 3's skill exits 3, its result is %q", result)
	}
	// The log's readers decode it.
	var got []*float64
	if _, err := state.New(dir).CycleHistory(func(r state.CycleRecord) bool {
		got = append(got, r.Line.SkillSeconds)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != nil || got[1] == nil || got[2] == nil || *got[1] < 0.3 {
		t.Errorf("CycleHistory's skill_seconds: %v", got)
	}
}
