package state

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compactMetrics is b without insignificant whitespace.
func compactMetrics(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return buf.String()
}

// The state design's metrics.json, read through the store: the top-level
// domain counts and the streaks block are the counters Decide and Step 6
// use, and writing the file back unchanged changes nothing in it.
func TestCompatMetrics_StateDesignLayoutReadAndKept(t *testing.T) {
	s := New(t.TempDir())
	const doc = `{"schema_version": "1.0.0",
	  "counters": {"total_cycles": 12, "total_skill_executions": 15, "total_chain_executions": 3, "total_halts": 1, "total_dry_runs": 2},
	  "domain_executions": {"api": 9, "docs": "3", "ops": 0},
	  "cost": {"total_estimated_usd": 0.5, "daily_log": [{"date": "2026-01-15", "estimated_usd": 0.42, "cycles": 3}]},
	  "streaks": {"current_domain": "api", "current_streak": 4, "longest_streak": 6, "longest_streak_domain": "docs"},
	  "first_cycle_at": null, "last_updated": "2026-01-15T10:00:00Z"}`
	writeFile(t, s.EvolvePath(MetricsFile), doc)
	snap := loadClean(t, s)
	c := snap.Metrics.Counters
	if c.DomainExecutions["api"] != 9 || c.DomainExecutions["docs"] != 3 || c.TotalSkillExecutions != 15 {
		t.Errorf("domain counts read as %v of %d", c.DomainExecutions, c.TotalSkillExecutions)
	}
	if c.CurrentDomain != "api" || c.CurrentStreak != 4 || c.LongestStreak != 6 {
		t.Errorf("streak read as %q %d %d", c.CurrentDomain, c.CurrentStreak, c.LongestStreak)
	}
	if c.TotalChainExecutions == nil || *c.TotalChainExecutions != 3 {
		t.Errorf("total_chain_executions = %v", c.TotalChainExecutions)
	}
	found := false
	for _, w := range snap.Warnings {
		found = found || (strings.Contains(w, MetricsFile) && strings.Contains(w, "/domain_executions/docs"))
	}
	if !found {
		t.Errorf("no warning names /domain_executions/docs: %q", snap.Warnings)
	}
	if err := s.SaveMetrics(snap.Metrics); err != nil {
		t.Fatal(err)
	}
	got := compactMetrics(t, []byte(readString(t, s.EvolvePath(MetricsFile))))
	// first_cycle_at null is the one key not kept: ooda sets it on the
	// next cycle anyway.
	want := strings.Replace(compactMetrics(t, []byte(doc)), `"first_cycle_at":null,`, "", 1)
	// Unchanged counters are written as read: no counter is added
	// (ooda's own are added only when they count something), none
	// reordered.
	if got != want {
		t.Errorf("written back as\n%s\nwant\n%s", got, want)
	}
}

// A file holding both layouts (the counters of one reader, the top-level
// copy of another, one behind the other) counts each execution once: the
// larger count is taken, never the sum, and both copies are written with
// the same numbers.
func TestCompatMetrics_BothLayoutsNeverDoubleCount(t *testing.T) {
	var m Metrics
	doc := `{"counters": {"total_skill_executions": 30, "domain_executions": {"api": 20, "docs": 10}, "current_domain": "docs", "current_streak": 2, "longest_streak": 3},
	  "domain_executions": {"api": 18, "docs": 12, "ops": 1},
	  "streaks": {"current_domain": "api", "current_streak": 9, "longest_streak": 9, "longest_streak_domain": "api"}}`
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"api": 20, "docs": 12, "ops": 1}
	for d, n := range want {
		if got := m.Counters.DomainExecutions[d]; got != n {
			t.Errorf("%s = %d, want %d (the larger copy)", d, got, n)
		}
	}
	if m.Counters.CurrentDomain != "docs" || m.Counters.CurrentStreak != 2 || m.Counters.LongestStreak != 9 {
		t.Errorf("streak = %q %d longest %d", m.Counters.CurrentDomain, m.Counters.CurrentStreak, m.Counters.LongestStreak)
	}
	m.Counters.DomainExecutions["api"]++
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Counters struct {
			DomainExecutions map[string]int `json:"domain_executions"`
			CurrentStreak    *int           `json:"current_streak"`
		} `json:"counters"`
		DomainExecutions map[string]int `json:"domain_executions"`
		Streaks          struct {
			CurrentDomain string `json:"current_domain"`
			CurrentStreak int    `json:"current_streak"`
		} `json:"streaks"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	want["api"] = 21
	for d, n := range want {
		if out.Counters.DomainExecutions[d] != n || out.DomainExecutions[d] != n {
			t.Errorf("%s written %d under counters and %d at the top, want %d in both:\n%s", d, out.Counters.DomainExecutions[d], out.DomainExecutions[d], n, b)
		}
	}
	if out.Counters.CurrentStreak == nil || out.Streaks.CurrentDomain != "docs" || out.Streaks.CurrentStreak != 2 {
		t.Errorf("the two streak copies disagree:\n%s", b)
	}
}

// ooda's own layout is unchanged, and a new file is written in it: the
// domain counts and the streak under counters, no top-level copies.
func TestCompatMetrics_OwnLayoutGetsNoStateDesignKeys(t *testing.T) {
	var m Metrics
	if err := json.Unmarshal([]byte(`{"counters": {"total_cycles": 2, "domain_executions": {"api": 2}, "current_domain": "api", "current_streak": 2, "longest_streak": 2}, "cost": {"total_estimated_usd": 0.04}}`), &m); err != nil {
		t.Fatal(err)
	}
	for _, v := range []Metrics{m, {}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var top map[string]json.RawMessage
		_ = json.Unmarshal(b, &top)
		for _, k := range []string{"domain_executions", "streaks"} {
			if _, ok := top[k]; ok {
				t.Errorf("%s added at the top level: %s", k, b)
			}
		}
		if !strings.Contains(string(top["counters"]), `"domain_executions":`) || !strings.Contains(string(top["counters"]), `"current_streak":`) ||
			strings.Contains(string(top["cost"]), "daily_log") {
			t.Errorf("ooda's layout not kept: %s", b)
		}
	}
}
