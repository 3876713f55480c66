package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// dlNow is when the entries of these tests are written.
var dlNow = time.Date(2026, 4, 14, 3, 14, 0, 0, time.UTC)

func entryJSON(t *testing.T, e state.DecisionEntry) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func TestDecisionEntry_OriginalFieldsOfAnExecutedCycle(t *testing.T) {
	score, conf, pr := 9.123456, 0.74, 28
	f := Facts{Cycle: 3, Now: dlNow, Domain: "service_health", Skill: "/scan-health", Action: "execute", Result: "success",
		Score: &score, Confidence: &conf, PRNumber: &pr, Chain: []string{"/notify"},
		Scores:       map[string]float64{"service_health": 9.123456, "backlog": 1.5},
		GapsDetected: []string{"gap-a", "gap-a", " gap-b\n", ""},
		Contrarian: &state.ContrarianRecord{Argument: "x won 5 of 7", AffectedDomain: "backlog", ScoreAdjustment: 1, DominantDomain: "service_health",
			DominantFrequency: 5, CounterDomain: "backlog", Validity: "plausible"}}
	m := entryJSON(t, DecisionEntry(f, TypeCreated, 0.5))
	want := map[string]string{
		"scores":                 `{"backlog":1.5,"service_health":9.1235}`,
		"confidence_at_decision": `0.74`,
		"confidence":             `0.74`,
		"score":                  `9.1235`,
		"chain_stopped_at":       `null`,
		"stop_reason":            `null`,
		"prs_created":            `[{"number":28,"title":null,"branch":null}]`,
		"skill_gaps_detected":    `["gap-a","gap-b"]`,
		"contrarian_check": `{"argument":"x won 5 of 7","affected_domain":"backlog","score_adjustment":1,"dominant_domain":"service_health",` +
			`"dominant_frequency":5,"counter_domain":"backlog","validity":"plausible","adjustment_applied":{"backlog":1}}`,
		"chain_executed": `["/notify"]`,
	}
	for k, w := range want {
		if got := compactJSON(m[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
}

// A skip selected nothing: no confidence at decision, the table it
// skipped on, empty lists, and the original's nulls.
func TestDecisionEntry_SkipCarriesTheOriginalsShape(t *testing.T) {
	f := Facts{Cycle: 4, Now: dlNow, Action: "skip", Reason: "all_scores_below_minimum", Result: "skip",
		Scores: map[string]float64{"a": 0.2, "b": 0.1}}
	m := entryJSON(t, DecisionEntry(f, TypeFutile, 0))
	want := map[string]string{
		"action": `"skip"`, "reason": `"all_scores_below_minimum"`, "scores": `{"a":0.2,"b":0.1}`,
		"confidence_at_decision": `null`, "chain_executed": `[]`, "chain_stopped_at": `null`, "stop_reason": `null`,
		"prs_created": `[]`, "skill_gaps_detected": `[]`, "contrarian_check": `null`,
	}
	for k, w := range want {
		if got := compactJSON(m[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
	if _, ok := m["selected_domain"]; ok {
		t.Errorf("a skip names no selected domain: %s", m["selected_domain"])
	}
	// No scoring pass (implicit guidance, nothing scoreable): an empty
	// table, never null.
	m = entryJSON(t, DecisionEntry(Facts{Cycle: 5, Now: dlNow, Action: "skip", Reason: "no_scoreable_domains"}, TypeFutile, 0))
	if got := compactJSON(m["scores"]); got != `{}` {
		t.Errorf("scores = %s, want {}", got)
	}
}

func TestDecisionEntry_StopReason(t *testing.T) {
	f := Facts{Cycle: 1, Now: dlNow, Domain: "d", Skill: "/s", Action: "execute", StopReason: StopPRLimit, ChainStoppedAt: "/dev-cycle"}
	m := entryJSON(t, DecisionEntry(f, TypeAction, 0.2))
	if compactJSON(m["stop_reason"]) != `"open_pr_limit"` || compactJSON(m["chain_stopped_at"]) != `"/dev-cycle"` {
		t.Errorf("stop_reason %s at %s", m["stop_reason"], m["chain_stopped_at"])
	}
	// A stop at a step the cycle cannot name: the reason alone.
	f.ChainStoppedAt, f.StopReason = "", StopHalt
	m = entryJSON(t, DecisionEntry(f, TypeAction, 0.2))
	if compactJSON(m["stop_reason"]) != `"halt_detected"` || compactJSON(m["chain_stopped_at"]) != `null` {
		t.Errorf("stop_reason %s at %s", m["stop_reason"], m["chain_stopped_at"])
	}
}

// The entry stays small whatever the cycle hands it.
func TestDecisionEntry_OriginalFieldsAreBounded(t *testing.T) {
	f := Facts{Cycle: 1, Now: dlNow, Domain: "d", Action: "execute", Scores: map[string]float64{},
		Contrarian: &state.ContrarianRecord{Argument: strings.Repeat("é", 3*DecisionTextMax), AffectedDomain: "b"}}
	for i := 0; i < 3*ScoresKept; i++ {
		f.Scores[fmt.Sprintf("d%03d", i)] = float64(i)
	}
	for i := 0; i < 3*GapsDetectedKept; i++ {
		f.GapsDetected = append(f.GapsDetected, fmt.Sprintf("gap-%d-%s", i, strings.Repeat("x", 2*DecisionTextMax)))
	}
	for i := 0; i < 3*PRsCreatedKept; i++ {
		f.PRsCreated = append(f.PRsCreated, state.CreatedPR{Number: i + 1})
	}
	e := DecisionEntry(f, TypeAction, 0.2)
	if len(e.Scores) != ScoresKept || len(e.SkillGapsDetected) != GapsDetectedKept || len(e.PRsCreated) != PRsCreatedKept {
		t.Fatalf("scores %d, gaps %d, prs %d; want at most %d, %d, %d", len(e.Scores), len(e.SkillGapsDetected), len(e.PRsCreated),
			ScoresKept, GapsDetectedKept, PRsCreatedKept)
	}
	// Over the cap, the highest scores stay.
	if _, ok := e.Scores[fmt.Sprintf("d%03d", 3*ScoresKept-1)]; !ok {
		t.Errorf("the top score was dropped")
	}
	if _, ok := e.Scores["d000"]; ok {
		t.Errorf("the lowest score was kept over a higher one")
	}
	for _, id := range e.SkillGapsDetected {
		if n := len([]rune(id)); n > DecisionTextMax {
			t.Errorf("gap id of %d runes kept", n)
		}
	}
	if n := len([]rune(e.ContrarianCheck.Argument)); n != DecisionTextMax {
		t.Errorf("contrarian argument of %d runes, want %d", n, DecisionTextMax)
	}
}

// What this program's readers read (the confidence trend, the episode's
// key decisions) they find in an entry of either shape.
func TestDecisionEntry_ReadersUnderstandTheOriginalsEntry(t *testing.T) {
	var e state.DecisionEntry
	if err := json.Unmarshal([]byte(`{"cycle": 5, "selected_domain": "service_health", "scores": {"service_health": 18.27, "backlog": 3.18}, "confidence_at_decision": 0.9}`), &e); err != nil {
		t.Fatal(err)
	}
	if c := e.DecidedConfidence(); c == nil || *c != 0.9 {
		t.Errorf("DecidedConfidence = %v, want 0.9 (confidence_at_decision)", c)
	}
	if s := e.DecidedScore(); s == nil || *s != 18.27 {
		t.Errorf("DecidedScore = %v, want 18.27 (scores[selected_domain])", s)
	}
	// This program's own fields win when both are there.
	score, conf := 2.0, 0.5
	e.Score, e.Confidence = &score, &conf
	if *e.DecidedConfidence() != 0.5 || *e.DecidedScore() != 2 {
		t.Errorf("own fields must win: %v %v", *e.DecidedConfidence(), *e.DecidedScore())
	}
	// A skip has neither.
	var skip state.DecisionEntry
	if err := json.Unmarshal([]byte(`{"cycle": 6, "action": "skip", "reason": "all_scores_below_minimum", "scores": {"a": 0.1}}`), &skip); err != nil {
		t.Fatal(err)
	}
	if skip.DecidedConfidence() != nil || skip.DecidedScore() != nil {
		t.Errorf("a skip has no decided confidence or score")
	}
}

// An entry read from the file is written back as it was; appending a new
// one after it does not touch it.
func TestAppendDecision_KeepsReadEntriesAsWritten(t *testing.T) {
	old := `{"cycle": 8, "timestamp": "2026-04-14T03:00:00Z", "selected_domain": "service_health", "confidence_at_decision": 0.90, "scores": {"service_health": 18.270}, "chain_stopped_at": null, "prs_processed": [{"number": "#11"}], "contrarian_check": null, "memo_written": false}`
	var st state.State
	if err := json.Unmarshal([]byte(`{"cycle_count": 8, "decision_log": [`+old+`]}`), &st); err != nil {
		t.Fatal(err)
	}
	st.DecisionLog = AppendDecision(st.DecisionLog, DecisionEntry(Facts{Cycle: 9, Now: dlNow, Action: "skip"}, TypeFutile, 0), 20)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		DecisionLog []json.RawMessage `json:"decision_log"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.DecisionLog) != 2 {
		t.Fatalf("%v: %s", err, b)
	}
	if got, want := compactJSON(back.DecisionLog[0]), compactJSON(json.RawMessage(old)); got != want {
		t.Errorf("the read entry was rewritten:\n got %s\nwant %s", got, want)
	}
}
