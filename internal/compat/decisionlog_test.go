package compat

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trend is a re-statement of the original dashboard's Trend column: the
// domain's two most recent decision_log appearances, compared by their
// confidence_at_decision (↑/↓/→); fewer than two appearances with a
// number render →, and ok is false.
func trend(log []json.RawMessage, domain string) (arrow string, ok bool) {
	var seen []float64
	for i := len(log) - 1; i >= 0 && len(seen) < 2; i-- {
		if str(field(log[i], "selected_domain")) != domain {
			continue
		}
		var c *float64
		if json.Unmarshal(field(log[i], "confidence_at_decision"), &c) != nil || c == nil {
			continue
		}
		seen = append(seen, *c)
	}
	if len(seen) < 2 {
		return "→", false
	}
	switch d := seen[0] - seen[1]; {
	case d > 1e-9:
		return "↑", true
	case d < -1e-9:
		return "↓", true
	}
	return "→", true
}

// After a switch, the dashboard's Trend column compares an entry ooda
// wrote with one the original wrote, and agrees with ooda's own trend.
func TestCompat_DecisionLogTrendAcrossTheSwitch(t *testing.T) {
	dir := fixture(t, "changelog-design")
	writeFile(t, filepath.Join(dir, evolve, "confidence.json"), []byte(`{"service_health": 0.8, "test_coverage": 0.6, "backlog": 0.7}`))
	completed(t, dir, t0, nil)
	log := load(t, dir, evolve+"/state.json").list("decision_log")
	last := log[len(log)-1]
	d := str(field(last, "selected_domain"))
	if d == "" {
		t.Fatalf("the cycle selected nothing: %s", compact(last))
	}
	arrow, ok := trend(log, d)
	if !ok {
		t.Fatalf("the Trend column finds fewer than two confidences for %s in\n  %s", d, joinCompact(log))
	}
	cl := string(readFile(t, dir, evolve+"/CHANGELOG.md"))
	if !strings.Contains(cl, "(trend: "+arrow) {
		t.Errorf("dashboard trend %s for %s, but ooda's CHANGELOG says otherwise:\n%s", arrow, d, cl)
	}
	if arrow == "→" {
		t.Errorf("%s moved from the original's 0.7 to %s; the trend must show it", d, field(last, "confidence_at_decision"))
	}
}

// Every entry ooda writes carries the original's decision_log fields with
// the types its field table gives, null (not absent) where it writes null.
func TestCompat_DecisionLogNewEntriesInTheOriginalsShape(t *testing.T) {
	dir := fixture(t, "changelog-design")
	before := load(t, dir, evolve+"/state.json").list("decision_log")
	for i := 0; i < 3; i++ {
		completed(t, dir, t0.Add(time.Duration(i)*time.Hour), nil)
	}
	after := load(t, dir, evolve+"/state.json").list("decision_log")
	sameEntries(t, "decision_log", before, after)
	if len(after) != len(before)+3 {
		t.Fatalf("decision_log has %d entries, want %d", len(after), len(before)+3)
	}
	stops := map[string]bool{"confidence_below_threshold": true, "open_pr_limit": true, "halt_detected": true, "error": true}
	for i, e := range after[len(before):] {
		kind := func(k string) string {
			raw := field(e, k)
			if raw == nil {
				return "absent"
			}
			var v any
			_ = json.Unmarshal(raw, &v)
			switch v.(type) {
			case nil:
				return "null"
			case map[string]any:
				return "object"
			case []any:
				return "array"
			case string:
				return "string"
			case float64:
				return "number"
			case bool:
				return "boolean"
			}
			return "?"
		}
		want := map[string][]string{
			"cycle": {"number"}, "timestamp": {"string"}, "selected_domain": {"string"}, "selected_skill": {"string"},
			"scores": {"object"}, "confidence_at_decision": {"number"}, "chain_executed": {"array"},
			"chain_stopped_at": {"string", "null"}, "stop_reason": {"string", "null"}, "result": {"string"},
			"prs_created": {"array"}, "skill_gaps_detected": {"array"}, "memo_written": {"boolean"},
			"contrarian_check": {"object", "null"},
		}
		for k, kinds := range want {
			if got := kind(k); !strings.Contains(strings.Join(kinds, " "), got) {
				t.Errorf("new entry %d: %s is %s, want %s: %s", i, k, got, strings.Join(kinds, " or "), compact(e))
			}
		}
		var scores map[string]float64
		if json.Unmarshal(field(e, "scores"), &scores) != nil || len(scores) == 0 {
			t.Errorf("new entry %d: scores = %s, want a number per scored domain", i, field(e, "scores"))
		}
		if s := str(field(e, "stop_reason")); s != "" && !stops[s] {
			t.Errorf("new entry %d: stop_reason %q on a cycle whose chain ran through", i, s)
		}
	}
}
