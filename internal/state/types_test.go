package state

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 4, 19, 6, 0, 0, 0, time.UTC)

func decode[T any](t *testing.T, doc string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return v
}

func encodeGeneric(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	m, ok := generic(t, b).(map[string]any)
	if !ok {
		t.Fatalf("%T encodes to a non-object: %s", v, b)
	}
	return m
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const flatConfidence = `{
  "schema_version": "1.0.0",
  "service_health": 0.54,
  "test_coverage": 0.74,
  "backlog": 0.7
}`

const nestedConfidence = `{
  "schema_version": "1.0.0",
  "updated_by": "framework",
  "domains": {
    "service_health": {"score": 0.54, "last_updated": "2026-04-13T15:00:00Z", "recent_outcomes": ["rejected", "merged"]},
    "backlog": {"score": 0.7, "last_updated": "2026-04-01T00:00:00Z", "note": "quiet"}
  }
}`

func TestConfidence_FlatAndNested(t *testing.T) {
	t.Run("read flat", func(t *testing.T) {
		c := decode[Confidence](t, flatConfidence)
		if c.Nested() {
			t.Fatal("flat file read as nested")
		}
		want := map[string]float64{"service_health": 0.54, "test_coverage": 0.74, "backlog": 0.7}
		if !reflect.DeepEqual(c.Scores, want) {
			t.Fatalf("scores = %v, want %v", c.Scores, want)
		}
		if v, ok := c.Get("backlog"); !ok || v != 0.7 {
			t.Fatalf("Get(backlog) = %v, %v", v, ok)
		}
		if _, ok := c.Get("ux_evolution"); ok {
			t.Fatal("Get reports a domain the file does not have")
		}
	})
	t.Run("read nested", func(t *testing.T) {
		c := decode[Confidence](t, nestedConfidence)
		if !c.Nested() {
			t.Fatal("nested file read as flat")
		}
		want := map[string]float64{"service_health": 0.54, "backlog": 0.7}
		if !reflect.DeepEqual(c.Scores, want) {
			t.Fatalf("scores = %v, want %v", c.Scores, want)
		}
	})
	t.Run("flat stays flat with bare floats", func(t *testing.T) {
		c := decode[Confidence](t, flatConfidence)
		c.Set("service_health", 0.34, testNow)
		c.Set("ux_evolution", 0.5, testNow)
		m := encodeGeneric(t, c)
		if _, ok := m["domains"]; ok {
			t.Fatalf("flat file converted to nested: %v", m)
		}
		want := map[string]any{"schema_version": "1.0.0", "service_health": 0.34, "test_coverage": 0.74, "backlog": 0.7, "ux_evolution": 0.5}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("written %v, want %v", m, want)
		}
	})
	t.Run("nested updates score in place", func(t *testing.T) {
		c := decode[Confidence](t, nestedConfidence)
		c.Set("service_health", 0.34, testNow)
		c.Set("ux_evolution", 0.5, testNow)
		m := encodeGeneric(t, c)
		if m["updated_by"] != "framework" || m["schema_version"] != "1.0.0" {
			t.Fatalf("top-level keys lost: %v", m)
		}
		domains, ok := m["domains"].(map[string]any)
		if !ok {
			t.Fatalf("nested file lost its domains: %v", m)
		}
		sh := domains["service_health"].(map[string]any)
		if sh["score"] != 0.34 || sh["last_updated"] != FormatTime(testNow) {
			t.Fatalf("service_health = %v", sh)
		}
		if !reflect.DeepEqual(sh["recent_outcomes"], []any{"rejected", "merged"}) {
			t.Fatalf("recent_outcomes lost: %v", sh)
		}
		backlog := domains["backlog"].(map[string]any)
		wantBacklog := map[string]any{"score": 0.7, "last_updated": "2026-04-01T00:00:00Z", "note": "quiet"}
		if !reflect.DeepEqual(backlog, wantBacklog) {
			t.Fatalf("untouched backlog = %v, want %v", backlog, wantBacklog)
		}
		ux := domains["ux_evolution"].(map[string]any)
		wantUX := map[string]any{"score": 0.5, "last_updated": FormatTime(testNow)}
		if !reflect.DeepEqual(ux, wantUX) {
			t.Fatalf("new domain = %v, want %v", ux, wantUX)
		}
		for k := range m {
			if k != "schema_version" && k != "updated_by" && k != "domains" {
				t.Fatalf("nested file gained top-level key %q", k)
			}
		}
	})
	t.Run("nested round trip reads the same scores", func(t *testing.T) {
		c := decode[Confidence](t, nestedConfidence)
		c.Set("backlog", 0.8, testNow)
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2 := decode[Confidence](t, string(b))
		if !c2.Nested() || !reflect.DeepEqual(c2.Scores, map[string]float64{"service_health": 0.54, "backlog": 0.8}) {
			t.Fatalf("re-read nested=%v scores=%v", c2.Nested(), c2.Scores)
		}
	})
	t.Run("new file is nested", func(t *testing.T) {
		c := NewConfidence()
		c.Set("backlog", 0.5, testNow)
		m := encodeGeneric(t, c)
		want := map[string]any{"schema_version": "1.0.0", "domains": map[string]any{"backlog": map[string]any{"score": 0.5, "last_updated": FormatTime(testNow)}}}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("written %v, want %v", m, want)
		}
	})
}

// A domain the cycle did not change keeps its last_updated, even when the
// file spells its score differently from Go (Python writes 1.0 and 0.70).
func TestConfidence_NestedWriteStampsOnlyChangedDomains(t *testing.T) {
	c := decode[Confidence](t, `{"domains": {
	  "test_coverage": {"score": 1.0, "last_updated": "2026-04-01T00:00:00Z"},
	  "backlog": {"score": 0.70, "last_updated": "2026-04-02T00:00:00Z"}
	}}`)
	c.Set("ux_evolution", 0.5, testNow)
	domains := encodeGeneric(t, c)["domains"].(map[string]any)
	for d, want := range map[string]string{"test_coverage": "2026-04-01T00:00:00Z", "backlog": "2026-04-02T00:00:00Z"} {
		if got := domains[d].(map[string]any)["last_updated"]; got != want {
			t.Errorf("%s last_updated = %v, want %s (its score was not changed)", d, got, want)
		}
	}
}

// JSON null is "no value": it must neither become a score of 0 nor be
// rewritten as 0 (a null metadata key in a flat file is not a domain).
func TestConfidence_NullIsNotAScore(t *testing.T) {
	flat := decode[Confidence](t, `{"schema_version": "1.0.0", "backlog": 0.7, "reviewed_at": null}`)
	if _, ok := flat.Get("reviewed_at"); ok {
		t.Errorf("flat: null read as a score: %v", flat.Scores)
	}
	if v := encodeGeneric(t, flat)["reviewed_at"]; v != nil {
		t.Errorf("flat: null rewritten as %v", v)
	}
	nested := decode[Confidence](t, `{"domains": {"backlog": {"score": null, "last_updated": "2026-04-01T00:00:00Z"}}}`)
	if _, ok := nested.Get("backlog"); ok {
		t.Errorf("nested: null score read as a score: %v", nested.Scores)
	}
}

// Writing rounds scores to 4 decimals; a value too large for that rounding
// must still be written as itself, not wrapped around.
func TestConfidence_LargeScoreSurvivesWrite(t *testing.T) {
	c := decode[Confidence](t, `{"backlog": 1e20, "ux": -3e15}`)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back := decode[Confidence](t, string(b))
	for d, want := range map[string]float64{"backlog": 1e20, "ux": -3e15} {
		if got := back.Scores[d]; got != want {
			t.Errorf("%s written as %v, want %v", d, got, want)
		}
	}
}

func TestMemos_LegacyShapes(t *testing.T) {
	t.Run("1.0.0 without interventions", func(t *testing.T) {
		m := decode[Memos](t, `{"schema_version": "1.0.0", "score_adjustments": {"backlog": 0.5},
		  "history": [{"cycle": 3, "domain": "backlog", "type": "boost", "message": "drain it"}], "last_memo": null}`)
		if m.SchemaVersion != "1.0.0" {
			t.Fatalf("schema_version changed on read: %q", m.SchemaVersion)
		}
		if len(m.Interventions) != 0 {
			t.Fatalf("interventions = %v", m.Interventions)
		}
		if m.ScoreAdjustments["backlog"] != 0.5 || len(m.History) != 1 || m.History[0].Message != "drain it" {
			t.Fatalf("memos = %+v", m)
		}
		out := encodeGeneric(t, m)
		want := map[string]any{
			"schema_version":    "1.1.0",
			"score_adjustments": map[string]any{"backlog": 0.5},
			"interventions":     []any{},
			"history":           []any{map[string]any{"cycle": 3.0, "domain": "backlog", "type": "boost", "message": "drain it"}},
			"last_memo":         nil,
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("written %v, want %v", out, want)
		}
	})
	t.Run("legacy memos array becomes history", func(t *testing.T) {
		m := decode[Memos](t, `{"schema_version": "1.0.0", "memos": [
		  {"timestamp": "2026-04-05T00:00:00Z", "cycle": 1, "domain": "backlog", "message": "first", "source": "operator"},
		  {"cycle": 2, "domain": "test_coverage", "message": "second"}]}`)
		if len(m.History) != 2 || m.History[0].Message != "first" || m.History[1].Domain != "test_coverage" {
			t.Fatalf("history = %+v", m.History)
		}
		if len(m.ScoreAdjustments) != 0 || len(m.Interventions) != 0 {
			t.Fatalf("memos = %+v", m)
		}
		out := encodeGeneric(t, m)
		if got := keysOf(out); !reflect.DeepEqual(got, []string{"history", "interventions", "last_memo", "schema_version", "score_adjustments"}) {
			t.Fatalf("written keys %v", got)
		}
		if out["schema_version"] != "1.1.0" || !reflect.DeepEqual(out["score_adjustments"], map[string]any{}) || out["last_memo"] != nil {
			t.Fatalf("written %v", out)
		}
		first := out["history"].([]any)[0].(map[string]any)
		if first["source"] != "operator" || first["timestamp"] != "2026-04-05T00:00:00Z" {
			t.Fatalf("legacy memo lost keys: %v", first)
		}
	})
	t.Run("history wins over a stray memos array", func(t *testing.T) {
		m := decode[Memos](t, `{"schema_version": "1.1.0", "history": [{"message": "kept"}], "memos": [{"message": "other"}]}`)
		if len(m.History) != 1 || m.History[0].Message != "kept" {
			t.Fatalf("history = %+v", m.History)
		}
		if _, ok := encodeGeneric(t, m)["memos"]; !ok {
			t.Fatal("the unrelated memos key was dropped")
		}
	})
	t.Run("interventions are read", func(t *testing.T) {
		m := decode[Memos](t, `{"schema_version": "1.1.0", "score_adjustments": {}, "interventions": [
		  {"domain": "backlog", "delta": 1.0, "type": "contrarian", "reason": "starved", "created_at_cycle": 10, "expires_after_cycles": 3, "applied_count": 0}],
		  "history": [], "last_memo": {"cycle": 10, "message": "boost backlog"}}`)
		want := Intervention{Domain: "backlog", Delta: 1, Type: "contrarian", Reason: "starved", CreatedAtCycle: 10, ExpiresAfterCycles: 3}
		if len(m.Interventions) != 1 || !reflect.DeepEqual(exportedOnly(reflect.ValueOf(m.Interventions[0])).Interface(), want) {
			t.Fatalf("interventions = %+v", m.Interventions)
		}
		if last := encodeGeneric(t, m)["last_memo"]; !reflect.DeepEqual(last, map[string]any{"cycle": 10.0, "message": "boost backlog"}) {
			t.Fatalf("last_memo = %v", last)
		}
	})
}

// extraKeyDocs are documents of every typed file with keys the model does
// not know, at the top level and inside nested objects.
var extraKeyDocs = []struct {
	name   string
	decode func([]byte) (any, error)
	doc    string
}{
	{"State", decoder[State](), `{"schema_version": "1.2.0", "cycle_count": 152, "last_cycle": "2026-04-14T03:14:00Z",
	  "cycle_in_progress": false, "consecutive_observe_only_cycles": 2, "consecutive_silent_failures": 1,
	  "domain_last_run": {"backlog": "2026-04-14T03:14:00Z"},
	  "decision_log": [{"cycle": 151, "timestamp": "2026-04-13T15:00:00Z", "selected_domain": "service_health", "score": 9.1,
	    "pr_number": 28, "chain_executed": ["/scan-health"], "chain_count": 1, "pr_outcomes": [{"pr": 27, "outcome": "merged"}],
	    "x_reviewer": {"name": "ops", "votes": [1, 2]}}],
	  "season": "preparation", "x_future": {"a": [true, null, 1.5]}}`},
	{"DecisionEntry", decoder[DecisionEntry](), `{"cycle": 3, "timestamp": "2026-04-06T12:00:00Z", "action": "skip", "reason": "min_score",
	  "chain_executed": [], "chain_count": 0, "x_note": "kept", "x_nested": {"deep": {"deeper": [1]}}}`},
	{"Goals", decoder[Goals](), `{"schema_version": "1.0.0", "goals": [{"id": "g1", "title": "Drain the backlog", "status": "active",
	  "progress": 0.5, "related_domains": ["backlog"], "x_owner": "ops", "x_milestones": [{"at": 0.25}]}], "x_review": "2026-Q2"}`},
	{"Goal", decoder[Goal](), `{"id": "g2", "target": 80, "current_value": 71.5, "x_unit": "%"}`},
	{"Memos", decoder[Memos](), `{"schema_version": "1.1.0", "score_adjustments": {"backlog": -0.5},
	  "interventions": [{"domain": "backlog", "delta": 1, "created_at_cycle": 4, "expires_after_cycles": 2, "applied_count": 1, "x_by": "operator"}],
	  "history": [{"cycle": 4, "message": "m", "x_tag": ["a"]}], "last_memo": {"cycle": 4, "x": 1}, "x_meta": {"v": 2}}`},
	{"Intervention", decoder[Intervention](), `{"domain": "ux", "delta": -10, "created_at_cycle": 61, "expires_after_cycles": 5, "applied_count": 0, "x_ticket": 42}`},
	{"ActionQueue", decoder[ActionQueue](), `{"schema_version": "1.0.0", "pending": [{"id": "a1", "rice_score": 12.5, "related_files": ["x.go"], "x_labels": ["ui"]}],
	  "in_progress": [{"id": "a2", "pr_number": 7, "x_branch": "impl/a2"}], "completed": [], "x_last_triage": "2026-04-10"}`},
	{"Action", decoder[Action](), `{"id": "a3", "effective_rice": 3.25, "decay_applied": 0.9, "x_rice_parts": {"reach": 10, "impact": 2}}`},
	{"SkillGaps", decoder[SkillGaps](), `{"schema_version": "1.0.0", "gaps": [{"name": "g_a", "type": "coverage_gap", "frequency": 2, "resolved": true,
	  "x_resolution": {"pr": 12}}], "x_cap": 50}`},
	{"Gap", decoder[Gap](), `{"name": "g_b", "frequency": 1, "resolved": false, "x_source": "5-A"}`},
	{"Metrics", decoder[Metrics](), `{"schema_version": "1.0.0", "counters": {"total_cycles": 6, "total_prs_created": 1, "domain_executions": {"backlog": 2},
	  "x_total_leaps": 3}, "cost": {"total_estimated_usd": 0.3, "x_currency": "USD"}, "first_cycle_at": "2026-04-01T00:00:00Z", "x_kpis": {"grade": "B"}}`},
	{"Counters", decoder[Counters](), `{"total_cycles": 1, "current_domain": "backlog", "current_streak": 1, "x_new_counter": 9}`},
	{"CostLedger", decoder[CostLedger](), `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [
	  {"cycle_id": 37, "timestamp": "2026-04-19T00:00:00Z", "skill": "/scan-health", "chain": ["/check-tests"], "estimated_usd": 0.02, "x_tokens": {"in": 100}}],
	  "total_estimated_usd": 0.02, "x_limit": 5}`},
	{"CostEntry", decoder[CostEntry](), `{"cycle_id": 38, "timestamp": "2026-04-19T06:00:00Z", "skill": "/check-tests", "chain": [], "estimated_usd": 0.05, "synthetic": true, "x_model": "m"}`},
	{"Outcomes", decoder[Outcomes](), `{"schema_version": "1.0.0", "entries": [{"cycle_id": 3, "result_type": "pr_created", "quality_multiplier": 0.5,
	  "pr_number": 41, "on_mission": true, "x_review": {"lgtm": 2}}], "x_window": 20}`},
	{"Outcome", decoder[Outcome](), `{"cycle_id": 1, "result_type": "observe", "quality_multiplier": 0.1, "pr_number": null, "x_note": null}`},
	{"Lens", decoder[Lens](), `{"schema_version": "1.0.0", "domain": "service_health", "last_updated": "2026-04-14T03:14:00Z",
	  "focus_items": [{"item": "/api/expand latency", "confidence": 0.6, "x_since": 150}],
	  "learned_thresholds": [{"item": "flaky-alert threshold", "value": 0.25, "confidence": 0.7}],
	  "discovered_signals": [], "evidence": [{"cycle": 152, "observation": "o"}], "deprecated_items": [], "x_owner": "ops"}`},
}

func decoder[T any]() func([]byte) (any, error) {
	return func(b []byte) (any, error) {
		var v T
		err := json.Unmarshal(b, &v)
		return v, err
	}
}

func TestUnknownKeysPreserved(t *testing.T) {
	for _, tc := range extraKeyDocs {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.decode([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if lost := missingFrom(generic(t, []byte(tc.doc)), generic(t, out), tc.name); len(lost) > 0 {
				t.Fatalf("re-encoding lost data:\n  %s\nwritten: %s", strings.Join(lost, "\n  "), out)
			}
			// The written file must read back to the same value.
			v2, err := tc.decode(out)
			if err != nil {
				t.Fatal(err)
			}
			out2, _ := json.Marshal(v2)
			if string(out2) != string(out) {
				t.Fatalf("second write differs:\n%s\n%s", out, out2)
			}
		})
	}
}

// Go matches JSON keys to fields case-insensitively, so a key differing
// from a known one only in case lands both in the field and in Extra; it
// must not override the real key's value when the file is read back.
func TestUnknownKeys_CaseVariantDoesNotOverrideKnownKey(t *testing.T) {
	s := decode[State](t, `{"Cycle_Count": 7, "cycle_count": 152, "decision_log": []}`)
	if s.CycleCount != 152 {
		t.Fatalf("cycle_count = %d, want 152 (the exact key)", s.CycleCount)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2 := decode[State](t, string(b))
	if s2.CycleCount != 152 {
		t.Fatalf("after a write and a read cycle_count = %d, want 152; written: %s", s2.CycleCount, b)
	}
}

func TestMissingFieldsDecodeToZeroValues(t *testing.T) {
	zeroOf := []any{State{}, DecisionEntry{}, Goals{}, Goal{}, Memos{}, Intervention{}, Memo{}, ActionQueue{}, Action{},
		SkillGaps{}, Gap{}, Metrics{}, Counters{}, MetricsCost{}, CostLedger{}, CostEntry{}, Outcomes{}, Outcome{}, Lens{}, LensItem{}}
	for _, zero := range zeroOf {
		t.Run(fmt.Sprintf("%T", zero), func(t *testing.T) {
			p := reflect.New(reflect.TypeOf(zero))
			if err := json.Unmarshal([]byte(`{}`), p.Interface()); err != nil {
				t.Fatal(err)
			}
			// What a value was read as is remembered in unexported
			// fields: only the fields the file sets are compared.
			got := exportedOnly(p.Elem()).Interface()
			if !reflect.DeepEqual(got, zero) {
				t.Fatalf("{} decoded to %+v", got)
			}
		})
	}
	t.Run("old decision-log entry", func(t *testing.T) {
		e := decode[DecisionEntry](t, `{"cycle": 1, "timestamp": "2026-04-05T00:00:00Z", "selected_domain": "backlog", "selected_skill": "/plan-backlog", "result": "success", "memo_written": false}`)
		if e.HadOutput != nil || e.Score != nil || e.PRNumber != nil || e.ChainExecuted != nil || e.SelectedByAlert || e.IsSkip() {
			t.Fatalf("entry = %+v", e)
		}
		if e.MemoWritten == nil || *e.MemoWritten {
			t.Fatalf("memo_written = %v", e.MemoWritten)
		}
	})
	t.Run("confidence", func(t *testing.T) {
		c := decode[Confidence](t, `{}`)
		if c.Nested() || len(c.Scores) != 0 {
			t.Fatalf("{} read as nested=%v scores=%v", c.Nested(), c.Scores)
		}
	})
}

func TestCostLedger_DailyResetUTC(t *testing.T) {
	ledger := func() CostLedger {
		return decode[CostLedger](t, `{"schema_version": "1.0.0", "date": "2026-04-19", "entries": [
		  {"cycle_id": 37, "timestamp": "2026-04-19T00:00:00Z", "skill": "/scan-health", "chain": [], "estimated_usd": 0.02},
		  {"cycle_id": 38, "timestamp": "2026-04-19T06:00:00Z", "skill": "/check-tests", "chain": [], "estimated_usd": 0.06}],
		  "total_estimated_usd": 0.08}`)
	}
	t.Run("same UTC day, later local day", func(t *testing.T) {
		l := ledger()
		// 2026-04-20 01:00 in UTC+5 is still 2026-04-19 in UTC.
		now := time.Date(2026, 4, 20, 1, 0, 0, 0, time.FixedZone("UTC+5", 5*3600))
		if l.ResetIfNewDay(now) {
			t.Fatal("reset on the same UTC day")
		}
		if l.Date != "2026-04-19" || len(l.Entries) != 2 || l.TotalEstimatedUSD != 0.08 {
			t.Fatalf("ledger changed: %+v", l)
		}
	})
	t.Run("new UTC day, same local day", func(t *testing.T) {
		l := ledger()
		// 2026-04-19 23:30 in UTC-5 is already 2026-04-20 in UTC.
		now := time.Date(2026, 4, 19, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))
		if !l.ResetIfNewDay(now) {
			t.Fatal("no reset on a new UTC day")
		}
		if l.Date != "2026-04-20" || len(l.Entries) != 0 || l.TotalEstimatedUSD != 0 {
			t.Fatalf("ledger after reset: %+v", l)
		}
		if e := encodeGeneric(t, l)["entries"]; !reflect.DeepEqual(e, []any{}) {
			t.Fatalf("entries written as %v, want []", e)
		}
	})
	t.Run("initial ledger", func(t *testing.T) {
		now := time.Date(2026, 4, 19, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))
		got := encodeGeneric(t, NewCostLedger(now))
		want := map[string]any{"schema_version": "1.0.0", "date": "2026-04-20", "entries": []any{}, "total_estimated_usd": 0.0}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("initial ledger %v, want %v", got, want)
		}
	})
}

func TestSkillGaps_Record(t *testing.T) {
	t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	t.Run("existing gap is incremented", func(t *testing.T) {
		g := SkillGaps{Gaps: []Gap{{Name: "execution_error_/check-tests", Type: "execution_error", Frequency: 2, FirstSeen: FormatTime(t0), LastSeen: FormatTime(t0)}}}
		g.Record(GapEvent{Name: "execution_error_/check-tests", Type: "execution_error", Detail: "", Cycle: 7}, testNow)
		if len(g.Gaps) != 1 {
			t.Fatalf("gaps = %+v", g.Gaps)
		}
		got := g.Gaps[0]
		if got.Frequency != 3 || got.LastSeen != FormatTime(testNow) || got.FirstSeen != FormatTime(t0) {
			t.Fatalf("gap = %+v", got)
		}
	})
	t.Run("new gap starts at 1", func(t *testing.T) {
		var g SkillGaps
		g.Record(GapEvent{Name: "domain_starvation_backlog", Type: "coverage_gap", Detail: "not selected in 10 cycles", Cycle: 7}, testNow)
		seven, seven2 := 7, 7
		want := Gap{ID: "gap-domain_starvation_backlog", Name: "domain_starvation_backlog", Type: "coverage_gap", Description: "not selected in 10 cycles", Detail: "not selected in 10 cycles",
			DetectedAt: FormatTime(testNow), DetectedInCycle: &seven, OODAPhase: "strategize", Frequency: 1, FirstSeen: FormatTime(testNow), LastSeen: FormatTime(testNow), LastSeenCycle: &seven2}
		if len(g.Gaps) != 1 || !reflect.DeepEqual(g.Gaps[0], want) {
			t.Fatalf("gaps = %+v", g.Gaps)
		}
	})
	t.Run("cap 50 evicts resolved oldest first, then unresolved oldest", func(t *testing.T) {
		var g SkillGaps
		for i := 0; i < 50; i++ {
			at := t0.Add(time.Duration(i) * time.Hour)
			g.Gaps = append(g.Gaps, Gap{Name: fmt.Sprintf("g%02d", i), Frequency: 1, FirstSeen: FormatTime(at), LastSeen: FormatTime(at), Resolved: i == 5 || i == 10})
		}
		has := func(name string) bool {
			for _, x := range g.Gaps {
				if x.Name == name {
					return true
				}
			}
			return false
		}
		g.Record(GapEvent{Name: "new1", Type: "", Detail: "", Cycle: 7}, testNow)
		if len(g.Gaps) != 50 || has("g05") || !has("g10") || !has("g00") || !has("new1") {
			t.Fatalf("after new1: %d gaps, g05=%v g10=%v g00=%v", len(g.Gaps), has("g05"), has("g10"), has("g00"))
		}
		g.Record(GapEvent{Name: "new2", Type: "", Detail: "", Cycle: 7}, testNow)
		if len(g.Gaps) != 50 || has("g10") || !has("g00") || !has("new2") {
			t.Fatalf("after new2: %d gaps, g10=%v g00=%v", len(g.Gaps), has("g10"), has("g00"))
		}
		g.Record(GapEvent{Name: "new3", Type: "", Detail: "", Cycle: 7}, testNow)
		if len(g.Gaps) != 50 || has("g00") || !has("g01") || !has("new1") || !has("new3") {
			t.Fatalf("after new3: %d gaps, g00=%v g01=%v", len(g.Gaps), has("g00"), has("g01"))
		}
		// Recording an existing name at the cap evicts nothing.
		g.Record(GapEvent{Name: "g20", Type: "", Detail: "", Cycle: 7}, testNow)
		if len(g.Gaps) != 50 || !has("g01") {
			t.Fatalf("re-recording an existing gap evicted one: %d gaps", len(g.Gaps))
		}
	})
}

func TestTimeFormat(t *testing.T) {
	if got := FormatTime(time.Date(2026, 4, 14, 5, 14, 0, 0, time.FixedZone("CEST", 2*3600))); got != "2026-04-14T03:14:00Z" {
		t.Fatalf("FormatTime = %q", got)
	}
	for _, s := range []string{"2026-04-14T03:14:00Z", "2026-04-14T03:14:00.123Z", "2026-04-14T05:14:00+02:00", "2026-04-14T03:14:00", "2026-04-14 03:14:00"} {
		got, ok := ParseTime(s)
		if !ok || !got.Truncate(time.Second).Equal(time.Date(2026, 4, 14, 3, 14, 0, 0, time.UTC)) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v", s, got, ok)
		}
	}
	if got, ok := ParseTime("2026-04-14"); !ok || !got.Equal(time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseTime(date) = %v, %v", got, ok)
	}
	if _, ok := ParseTime("yesterday"); ok {
		t.Error("ParseTime accepted garbage")
	}
}

func TestStateFilesAreNotHTMLEscaped(t *testing.T) {
	s := New(t.TempDir())
	g := Goals{Goals: []Goal{{ID: "g", MetricCommand: "test -f a && jq '.x > 1' b"}}}
	if err := s.SaveGoals(g); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.EvolvePath(GoalsFile))
	if !strings.Contains(string(b), "test -f a && jq '.x > 1' b") {
		t.Errorf("escaped: %s", b)
	}
}

// exportedOnly is a copy of the struct v with only its exported fields
// (and theirs, in nested structs) set.
func exportedOnly(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Struct {
		return v
	}
	out := reflect.New(v.Type()).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() {
			out.Field(i).Set(exportedOnly(v.Field(i)))
		}
	}
	return out
}
