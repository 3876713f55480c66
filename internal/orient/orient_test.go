package orient

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

var now = time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)

func cfgWith(domains ...string) *config.Config {
	c := config.Default()
	for i, d := range domains {
		c.Domains = append(c.Domains, config.Domain{Name: d, Index: i, Weight: 1})
	}
	return c
}

func TestStep2B_ConfidenceInitialForNewDomainsBothShapes(t *testing.T) {
	for _, raw := range []string{`{"a": 0.9}`, `{"domains": {"a": {"score": 0.9, "recent_outcomes": []}}}`} {
		var conf state.Confidence
		if err := json.Unmarshal([]byte(raw), &conf); err != nil {
			t.Fatal(err)
		}
		o := Orient(Input{Now: now, Config: cfgWith("a", "b"), Confidence: conf, Domains: []string{"a", "b"}})
		if o.Confidence["a"] != 0.9 || o.Confidence["b"] != 0.7 || len(o.NewConfidence) != 1 || o.NewConfidence[0] != "b" {
			t.Errorf("%s: confidence %v, new %v", raw, o.Confidence, o.NewConfidence)
		}
	}
	// Out-of-range values are clamped to [min, max].
	var conf state.Confidence
	json.Unmarshal([]byte(`{"a": 1.7, "b": 0.01}`), &conf)
	o := Orient(Input{Now: now, Config: cfgWith("a", "b"), Confidence: conf, Domains: []string{"a", "b"}})
	if o.Confidence["a"] != 1.0 || o.Confidence["b"] != 0.1 {
		t.Errorf("clamped = %v", o.Confidence)
	}
}

func TestStep2D_MemoAdjustmentsAndInterventions(t *testing.T) {
	var m state.Memos
	json.Unmarshal([]byte(`{"schema_version": "1.1.0", "score_adjustments": {"a": 1.5, "ghost": 3},
	  "interventions": [{"domain": "a", "delta": -10, "type": "monopoly_breaker", "expires_after_cycles": 1},
	                    {"domain": "b", "delta": 1, "type": "starvation", "expires_after_cycles": 3}]}`), &m)
	o := Orient(Input{Now: now, Config: cfgWith("a", "b"), Memos: m, Domains: []string{"a", "b"}})
	if o.Memo["a"] != -8.5 || o.Memo["b"] != 1 || len(o.Memo) != 2 {
		t.Errorf("memo = %v", o.Memo)
	}
	if len(o.MemoWarnings) != 1 || o.MemoWarnings[0] != "[WARN] Memo adjustment for unknown domain 'ghost' -- ignored and cleared." {
		t.Errorf("warnings = %v", o.MemoWarnings)
	}
	// Schema 1.0.0 without interventions, and the pre-1.1.0 "memos" array.
	var legacy state.Memos
	json.Unmarshal([]byte(`{"schema_version": "1.0.0", "memos": [{"type": "note", "message": "m"}]}`), &legacy)
	o = Orient(Input{Now: now, Config: cfgWith("a"), Memos: legacy, Domains: []string{"a"}})
	if len(o.Memo) != 0 || len(legacy.History) != 1 {
		t.Errorf("legacy memos: %v / %+v", o.Memo, legacy.History)
	}
}

func TestStep6C_ConsumeMemos(t *testing.T) {
	m := state.Memos{ScoreAdjustments: map[string]float64{"a": 1},
		Interventions: []state.Intervention{{Domain: "a", Delta: 1, ExpiresAfterCycles: 2}, {Domain: "b", Delta: -10, ExpiresAfterCycles: 1}}}
	got := ConsumeMemos(m)
	// Interventions are counted down by Reflect, on cycles that scored.
	if len(got.ScoreAdjustments) != 0 || len(got.Interventions) != 2 || got.Interventions[0].ExpiresAfterCycles != 2 || got.Interventions[0].AppliedCount != 0 {
		t.Errorf("consumed = %+v", got)
	}
	if len(m.ScoreAdjustments) != 1 || m.Interventions[0].ExpiresAfterCycles != 2 {
		t.Error("ConsumeMemos must not modify its input")
	}
}

func TestStep2E_OrientSummary(t *testing.T) {
	long := strings.Repeat("é", 600)
	o := Orient(Input{Now: now, Config: cfgWith("a"), Log: []state.DecisionEntry{{Cycle: 1, OrientSummary: long}}, Domains: []string{"a"}})
	if n := len([]rune(o.PrevSummary)); n != SummaryMax {
		t.Errorf("the prior summary is cut to %d characters, got %d", SummaryMax, n)
	}
	s := Summarize(SummaryFacts{Observed: 3, Alerts: []string{"api (warning)"}, Winner: "api", Prev: "Urgent: none. Focus: api.", PrevWinner: "api"})
	if s != "Urgent: api (warning). Focus: api. Same focus as last cycle." {
		t.Errorf("summary = %q", s)
	}
	s = Summarize(SummaryFacts{Observed: 2, Skip: "all_scores_below_minimum"})
	if s != "2 domain(s) observed, no active alerts. Nothing to act on (all scores below minimum)." {
		t.Errorf("summary = %q", s)
	}
	many := make([]string, 200)
	for i := range many {
		many[i] = "domain_with_a_long_name (warning)"
	}
	if n := len([]rune(Summarize(SummaryFacts{Alerts: many, Winner: "x"}))); n > SummaryMax {
		t.Errorf("summary of %d characters exceeds %d", n, SummaryMax)
	}
}
