package state

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// decisionKeys are the keys a decision-log entry may hold: its own (the
// first 37), case variants, escaped spellings and unknown ones.
var decisionKeys = []string{
	"cycle", "timestamp", "action", "reason", "selected_domain", "selected_skill", "score", "raw_score",
	"confidence", "orient_summary", "result", "score_verified", "memo_written", "pr_number", "risk_tier",
	"had_output", "selected_by_alert", "guidance", "gated", "result_type", "quality_multiplier", "cycle_mode",
	"chain_executed", "chain_count", "elapsed_seconds", "cost_usd", "pr_outcomes", "error", "prs_processed",
	"scores", "confidence_at_decision", "chain_stopped_at", "stop_reason", "prs_created",
	"skill_gaps_detected", "proposed_skills_generated", "contrarian_check",
	"Cycle", "SCORES", "cycl\\u0065", "lessons_recalled", "notes", "", "read", "Extra", "chainexecuted",
}

// decisionValues are values of every JSON type as a file may hold them
// under any key, with the lists, maps and objects a decision holds.
var decisionValues = append(append([]string{}, outcomeValues...),
	`["a", "b"]`, `["a", null]`, `["caf\u00e9"]`, `[1, "a"]`, `{"d0": 1.5, "d1": -0}`, `{"d\u0030": 2}`,
	`{"d0": "x"}`, `{"d0": null}`, `[ ]`, `[{"number": 3, "title": "t", "branch": null}]`, `[{"number": "3"}]`,
	`{"argument": "a", "affected_domain": "d1", "score_adjustment": 1, "adjustment_applied": {"d1": 1}}`,
	`{"argument": 1}`, `{"Argument": "x", "argument": "y"}`, `{ }`)

// wellTypedDecisionValue is a value of the JSON type the field of key k
// takes, or null.
func wellTypedDecisionValue(r *rand.Rand, k string) string {
	if r.Intn(8) == 0 {
		return "null"
	}
	switch k {
	case "cycle", "chain_count", "pr_number", "risk_tier":
		return fmt.Sprint(r.Intn(5000) - 10)
	case "score", "raw_score", "confidence", "quality_multiplier", "elapsed_seconds", "cost_usd", "confidence_at_decision":
		return []string{"0", "-0", "0.25", "1", "2.5e1", "1e-3", "-16.6733", "100000000000000000001"}[r.Intn(8)]
	case "score_verified", "memo_written", "had_output", "selected_by_alert", "gated":
		return []string{"true", "false"}[r.Intn(2)]
	case "chain_executed", "skill_gaps_detected", "proposed_skills_generated":
		return []string{`[]`, `["/true"]`, `["gap-a", "gap-b", null]`, `[ ]`}[r.Intn(4)]
	case "scores":
		return []string{`{}`, `{"d0": 0, "d1": 70.6033}`, `{"d0": -1e-3}`}[r.Intn(3)]
	case "pr_outcomes", "prs_processed":
		return []string{`[]`, `[{"number": 1, "action": "merged"}]`, `{"x": [1, 2]}`}[r.Intn(3)]
	case "prs_created":
		return []string{`[]`, `[{"number": 4, "title": "t", "branch": "b"}]`, `[ ]`}[r.Intn(3)]
	case "contrarian_check":
		return `{"argument": "a", "affected_domain": "d1", "score_adjustment": 1, "dominant_domain": "d0", "dominant_frequency": 7, "counter_domain": "d1", "validity": "plausible", "adjustment_applied": {"d1": 1}}`
	case "lessons_recalled", "notes":
		return `["When d0 yields nothing twice running, skip it."]`
	}
	return []string{`"d0"`, `"/true"`, `"success"`, `"futile"`, `"feature"`, `""`, `"2026-05-15T00:00:00Z"`}[r.Intn(7)]
}

// randomDecisionDoc is a state.json document whose decision log holds n
// random entries, most of them well formed (the fast path's case, unknown
// keys included), some with keys repeated, mistyped or spelled otherwise.
func randomDecisionDoc(r *rand.Rand, n int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"cycle_count": 3, "decision_log": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",\n  ")
		}
		if r.Intn(25) == 0 {
			sb.WriteString(decisionValues[r.Intn(len(decisionValues))]) // not an object
			continue
		}
		sb.WriteString("{")
		members := 1 + r.Intn(40)
		wellFormed := r.Intn(2) == 0
		for j := 0; j < members; j++ {
			if j > 0 {
				sb.WriteString(",")
				sb.WriteString(strings.Repeat(" ", r.Intn(2)))
			}
			var k, v string
			switch {
			case wellFormed && r.Intn(10) == 0:
				k = decisionKeys[40+r.Intn(2)] // an unknown key the fast path keeps
				v = wellTypedDecisionValue(r, k)
			case wellFormed:
				k = decisionKeys[r.Intn(37)]
				v = wellTypedDecisionValue(r, k)
			default:
				k = decisionKeys[r.Intn(len(decisionKeys))]
				v = decisionValues[r.Intn(len(decisionValues))]
			}
			fmt.Fprintf(&sb, "%q:%s%s", k, strings.Repeat(" ", r.Intn(2)), v)
		}
		sb.WriteString("}")
	}
	sb.WriteString("]}")
	// %q escapes a backslash; the escaped keys are meant as written.
	return []byte(strings.ReplaceAll(sb.String(), `\\u`, `\u`))
}

// The fast decision decoder decodes, warns and writes every state.json
// as the general path does: random documents, well formed or not, keys
// repeated, unknown keys, every value type under every key.
func TestDecisionFastDecoderMatchesOracleOnRandomDocs(t *testing.T) {
	r := rand.New(rand.NewSource(2000))
	taken, fell := 0, 0
	// Under the race detector a fifth of them (see raceDetector).
	n, least := 1500, 500
	if raceDetector {
		n, least = 300, 100
	}
	for i := 0; i < n; i++ {
		doc := randomDecisionDoc(r, 1+r.Intn(5))
		stateLikeOracle(t, fmt.Sprintf("doc %d", i), doc)
		var s struct {
			Log []json.RawMessage `json:"decision_log"`
		}
		if json.Unmarshal(doc, &s) != nil {
			continue
		}
		for _, raw := range s.Log {
			var e DecisionEntry
			if len(raw) > 0 && raw[0] == '{' && decodeDecisionFast(raw, &e) {
				taken++
			} else {
				fell++
			}
		}
	}
	// Both sides of the comparison were exercised.
	if taken < least || fell < least {
		t.Fatalf("fast path taken %d times, fell back %d times", taken, fell)
	}
}

// Every entry ooda writes (the decision log of a cycle-2,000 project:
// unknown keys, nulls, empty lists, a score table, contrarian checks) is
// read by the fast decoder, as the general path reads it.
func TestDecisionFastDecoderTakesWhatOodaWrites(t *testing.T) {
	doc := benchFiles(2000)["evolve/"+StateFile]
	// One entry with a contrarian check and a PR, as a cycle writes them.
	doc = []byte(strings.Replace(string(doc), `"contrarian_check": null`, `"contrarian_check": {"argument": "a", "affected_domain": "d1",
      "score_adjustment": 1, "dominant_domain": "d0", "dominant_frequency": 7, "counter_domain": "d1", "validity": "plausible",
      "adjustment_applied": {"d1": 1}}`, 1))
	doc = []byte(strings.Replace(string(doc), `"prs_created": []`, `"prs_created": [{"number": 12, "title": "Fix", "branch": null}]`, 1))
	var s struct {
		Log []json.RawMessage `json:"decision_log"`
	}
	if err := json.Unmarshal(doc, &s); err != nil || len(s.Log) != 20 {
		t.Fatalf("%v, %d entries", err, len(s.Log))
	}
	for i, raw := range s.Log {
		var e DecisionEntry
		if !decodeDecisionFast(raw, &e) {
			t.Fatalf("entry %d not taken by the fast decoder: %s", i, raw)
		}
		if string(e.Extra["lessons_recalled"]) != `["When d0 yields nothing twice running, skip it for 3 cycles."]` {
			t.Fatalf("entry %d: unknown key not kept as written: %q", i, e.Extra)
		}
	}
	stateLikeOracle(t, "cycle 2000", doc)
	// Written back untouched, the file is its own bytes but for the
	// indentation: the unknown keys and the nulls are kept.
	st, err := decodeAsFile[State](doc)
	if err != nil {
		t.Fatal(err)
	}
	if st.DecisionLog[0].ContrarianCheck == nil || st.DecisionLog[0].ContrarianCheck.AdjustmentApplied["d1"] != 1 ||
		len(st.DecisionLog[0].PRsCreated) != 1 || st.DecisionLog[0].PRsCreated[0].Branch != nil {
		t.Fatalf("contrarian check or PR not read: %+v", st.DecisionLog[0])
	}
}

// The fast decoder takes an entry only when it is sure to read it as the
// general path does; each entry below fails one of its preconditions,
// falls back, and is still read as the general path reads it.
func TestDecisionFastDecoderFallsBack(t *testing.T) {
	plain := `{"cycle": 7, "timestamp": "t", "score": 0.5, "pr_number": null, "scores": {"d0": 1}, "chain_executed": [], "prs_created": [], "x": {"y": 1}}`
	var e DecisionEntry
	if !decodeDecisionFast([]byte(plain), &e) || e.Cycle != 7 || *e.Score != 0.5 || e.PRNumber != nil ||
		e.Scores["d0"] != 1 || e.ChainExecuted == nil || e.PRsCreated == nil || string(e.Extra["x"]) != `{"y": 1}` {
		t.Fatalf("the fast path did not take a plain entry: %+v", e)
	}
	for _, doc := range []string{
		`{"Cycle": 7}`,                             // a case variant
		`{"cycl\u0065": 7}`,                        // an escaped key
		`{"cycle": "7"}`,                           // a mistyped value
		`{"cycle": 7.5}`,                           // not an integer
		`{"cycle": 1234567890123456789}`,           // more digits than plainInt reads
		`{"reason": "caf\u00e9"}`,                  // an escaped string
		`{"score": 1e400}`,                         // out of a float's range
		`{"gated": 1}`,                             // a number for a bool
		`{"score": 1, "score": 2}`,                 // a key twice
		`{"scores": {"a": 1}, "scores": {"b": 2}}`, // a map twice: encoding/json merges them
		`{"chain_executed": ["a", 1]}`,             // a list element mistyped
		`{"scores": {"d0": "x"}}`,                  // a map value mistyped
		`{"prs_created": [{"number": "3"}]}`,       // a PR mistyped
		`{"contrarian_check": {"argument": 1}}`,    // a check mistyped
		`{"contrarian_check": [1]}`,                // a list for an object
	} {
		var e DecisionEntry
		if decodeDecisionFast([]byte(doc), &e) {
			t.Errorf("the fast path took %s", doc)
		}
		stateLikeOracle(t, doc, []byte(`{"decision_log":[`+doc+`]}`))
	}
}

// An entry read by the fast decoder keeps its own copies: values that
// the general path would allocate (pointers, lists, maps, raw bytes) are
// not shared with the document or between entries.
func TestDecisionFastDecoderSharesNothing(t *testing.T) {
	doc := []byte(`{"decision_log":[{"cycle":1,"score":1,"prs_processed":[1],"scores":{"d0":1},"chain_executed":["a"]},
		{"cycle":2,"score":1,"prs_processed":[1],"scores":{"d0":1},"chain_executed":["a"]}]}`)
	st, err := decodeAsFile[State](doc)
	if err != nil {
		t.Fatal(err)
	}
	a, b := st.DecisionLog[0], st.DecisionLog[1]
	if a.read == nil || b.read == nil {
		t.Fatal("entries do not keep their bytes")
	}
	if refs := sharedRefs(reflect.ValueOf(a), reflect.ValueOf(b), "entry"); len(refs) > 0 {
		t.Fatalf("entries share %v", refs)
	}
	st.DecisionLog[0].PRsProcessed[1] = '2'
	if strings.Count(string(doc), `"prs_processed":[1]`) != 2 || !strings.Contains(string(st.DecisionLog[0].read.raw), `"prs_processed":[1]`) {
		t.Fatal("a change to an entry's value reached the bytes it was read from")
	}
}

// BenchmarkDecisionDecode reads the 20 decision-log entries of a
// cycle-2,000 project's state.json with the fast decoder and with the
// general path it stands in for.
func BenchmarkDecisionDecode(b *testing.B) {
	var s struct {
		Log []json.RawMessage `json:"decision_log"`
	}
	if err := json.Unmarshal(benchFiles(2000)["evolve/"+StateFile], &s); err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range s.Log {
				var e DecisionEntry
				if !decodeDecisionFast(raw, &e) {
					b.Fatal("not taken")
				}
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range s.Log {
				var e DecisionEntry
				if err := unmarshalKeepChecked(raw, (*decisionAlias)(&e), &e.Extra); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
