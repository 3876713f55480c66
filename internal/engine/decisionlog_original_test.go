package engine

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// lastEntry is the newest decision-log entry of state.json as another
// reader sees it: key by key, without this program's types.
func lastEntry(t *testing.T, dir string) map[string]json.RawMessage {
	t.Helper()
	var st struct {
		DecisionLog []map[string]json.RawMessage `json:"decision_log"`
	}
	readJSON(t, filepath.Join(dir, "agent/state/evolve/state.json"), &st)
	if len(st.DecisionLog) == 0 {
		t.Fatal("no decision-log entry written")
	}
	return st.DecisionLog[len(st.DecisionLog)-1]
}

// originalKeys are the decision-log keys the original's readers expect on
// every entry, null or empty when there is nothing to say.
var originalKeys = []string{"scores", "confidence_at_decision", "chain_executed", "chain_stopped_at", "stop_reason",
	"prs_created", "skill_gaps_detected", "contrarian_check"}

func wantKeys(t *testing.T, e map[string]json.RawMessage) {
	t.Helper()
	for _, k := range originalKeys {
		if _, ok := e[k]; !ok {
			t.Errorf("entry lacks %s (the original writes it, null when empty): %v", k, keysOf(e))
		}
	}
}

func keysOf(e map[string]json.RawMessage) []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+compact(v))
	}
	return out
}

// gapID is the id skill_gaps.json gives the gap named name.
func gapID(t *testing.T, dir, name string) string {
	t.Helper()
	var g state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &g)
	for _, x := range g.Gaps {
		if x.Key() == name {
			if x.ID != "" {
				return x.ID
			}
			return name
		}
	}
	t.Fatalf("no gap %s in skill_gaps.json", name)
	return ""
}

func TestStep6A_EntryCarriesTheOriginalsFields(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: audit\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"agent/state/evolve/confidence.json": `{"health": 0.7, "other": 0.6}`})
	res, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "audit" {
		t.Fatalf("chain %q\n%s", chainRan(t, dir), out)
	}
	e := lastEntry(t, dir)
	wantKeys(t, e)
	var scores map[string]float64
	if err := json.Unmarshal(e["scores"], &scores); err != nil || len(scores) != len(res.Decision.Options) {
		t.Fatalf("scores = %s (%v), want one row per scored domain (%d)", e["scores"], err, len(res.Decision.Options))
	}
	for _, o := range res.Decision.Options {
		if v, ok := scores[o.Domain]; !ok || v != roundTo4(o.Score) {
			t.Errorf("scores[%s] = %v, want %v", o.Domain, v, roundTo4(o.Score))
		}
	}
	if compact(e["confidence_at_decision"]) != "0.7" || compact(e["confidence"]) != "0.7" {
		t.Errorf("confidence_at_decision %s, confidence %s; want the winner's 0.7 in both", e["confidence_at_decision"], e["confidence"])
	}
	for k, want := range map[string]string{"chain_stopped_at": "null", "stop_reason": "null", "prs_created": "[]",
		"skill_gaps_detected": "[]", "contrarian_check": "null", "chain_executed": `["/audit"]`} {
		if got := compact(e[k]); got != want {
			t.Errorf("%s = %s, want %s (the chain ran through)", k, got, want)
		}
	}
}

// roundTo4 is v as the entry records it: rounded to 4 places.
func roundTo4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func TestStep6A_StopReasonConfidenceBelowThreshold(t *testing.T) {
	dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"agent/state/evolve/confidence.json": `{"health": 0.3, "other": 0.3}`})
	res, out := run(t, dir, t0, false)
	if !res.Decision.Gated || chainRan(t, dir) != "" {
		t.Fatalf("gated %v, chain %q\n%s", res.Decision.Gated, chainRan(t, dir), out)
	}
	e := lastEntry(t, dir)
	if compact(e["stop_reason"]) != `"confidence_below_threshold"` || compact(e["chain_stopped_at"]) != `"/notify"` {
		t.Errorf("stop_reason %s, chain_stopped_at %s; want confidence_below_threshold at /notify", e["stop_reason"], e["chain_stopped_at"])
	}
	if got, want := compact(e["skill_gaps_detected"]), `["`+gapID(t, dir, "chain_blocked_notify")+`"]`; got != want {
		t.Errorf("skill_gaps_detected = %s, want %s", got, want)
	}
}

func TestStep6A_StopReasonOpenPRLimitAndPRsCreated(t *testing.T) {
	dir := chainProject(t, 3, true, allowAll, "chain_triggers:\n  - target: dev-cycle\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
		"scan.sh": `printf '{"last_run": "%s", "consecutive_failures": 4}' "$OODA_NOW" > "$OODA_STATE_FILE"
printf '{"pr_number": 7, "pr_created": true}' > "$OODA_REPORT"
`})
	_, out := run(t, dir, t0, false)
	if chainRan(t, dir) != "" {
		t.Fatalf("the PR limit was bypassed:\n%s", out)
	}
	e := lastEntry(t, dir)
	if compact(e["stop_reason"]) != `"open_pr_limit"` || compact(e["chain_stopped_at"]) != `"/dev-cycle"` {
		t.Errorf("stop_reason %s, chain_stopped_at %s; want open_pr_limit at /dev-cycle", e["stop_reason"], e["chain_stopped_at"])
	}
	if got := compact(e["prs_created"]); got != `[{"number":7,"title":null,"branch":null}]` {
		t.Errorf("prs_created = %s, want PR 7 in the original's shape", got)
	}
}

func TestStep6A_StopReasonErrorAndHalt(t *testing.T) {
	t.Run("primary failed", func(t *testing.T) {
		dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
			"scan.sh": "exit 3\n"})
		run(t, dir, t0, false)
		e := lastEntry(t, dir)
		if compact(e["stop_reason"]) != `"error"` || compact(e["chain_stopped_at"]) != `"/scan"` || compact(e["result"]) != `"error"` {
			t.Errorf("stop_reason %s, chain_stopped_at %s, result %s; want error at /scan", e["stop_reason"], e["chain_stopped_at"], e["result"])
		}
	})
	t.Run("HALT before a chain step", func(t *testing.T) {
		dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
			"scan.sh": `printf '{"last_run": "%s", "consecutive_failures": 4}' "$OODA_NOW" > "$OODA_STATE_FILE"
mkdir -p agent/safety && echo stop > agent/safety/HALT
`})
		res, out := run(t, dir, t0, false)
		if res.Status != StatusHalted || chainRan(t, dir) != "" {
			t.Fatalf("status %s chain %q\n%s", res.Status, chainRan(t, dir), out)
		}
		e := lastEntry(t, dir)
		if compact(e["stop_reason"]) != `"halt_detected"` || compact(e["chain_stopped_at"]) != `"/notify"` {
			t.Errorf("stop_reason %s, chain_stopped_at %s; want halt_detected at /notify, the step it stopped before", e["stop_reason"], e["chain_stopped_at"])
		}
	})
	t.Run("HALT during the primary skill", func(t *testing.T) {
		dir := chainProject(t, 2, false, allowAll, "chain_triggers:\n  - target: notify\n    condition: \"consecutive_failures >= 3\"\n", map[string]string{
			"scan.sh": `mkdir -p agent/safety && echo stop > agent/safety/HALT
i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
`})
		res, out := run(t, dir, t0, false)
		if res.Status != StatusHalted || res.Reason != ReasonHaltDuringExecute {
			t.Fatalf("status %s reason %s\n%s", res.Status, res.Reason, out)
		}
		e := lastEntry(t, dir)
		if compact(e["stop_reason"]) != `"halt_detected"` || compact(e["chain_stopped_at"]) != `"/scan"` {
			t.Errorf("stop_reason %s, chain_stopped_at %s; want halt_detected at /scan", e["stop_reason"], e["chain_stopped_at"])
		}
	})
}

// A skip records what the original's skip records: action and reason, the
// score table it skipped on, and no selected domain's confidence.
func TestStep6A_SkipEntry(t *testing.T) {
	cfg := strings.Replace(threeDomains, `, "fallback": true`, ``, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/confidence.json": `{"service_health": 0.3, "test_coverage": 0.3, "backlog": 0.3}`})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusSkipped || res.Reason != "all_below_confidence_no_fallback" {
		t.Fatalf("status %s reason %s\n%s", res.Status, res.Reason, out)
	}
	e := lastEntry(t, dir)
	wantKeys(t, e)
	if compact(e["action"]) != `"skip"` || compact(e["reason"]) != `"all_below_confidence_no_fallback"` {
		t.Errorf("action %s reason %s", e["action"], e["reason"])
	}
	var scores map[string]float64
	if json.Unmarshal(e["scores"], &scores) != nil || len(scores) != 3 {
		t.Errorf("scores = %s, want the three domains scored", e["scores"])
	}
	if compact(e["confidence_at_decision"]) != "null" || e["selected_domain"] != nil {
		t.Errorf("confidence_at_decision %s, selected_domain %s: a skip selected nothing", e["confidence_at_decision"], e["selected_domain"])
	}
}

// The CHANGELOG trend compares with the domain's previous confidence: an
// entry the original wrote records it as confidence_at_decision.
func TestStep6A_TrendReadsTheOriginalsConfidenceAtDecision(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/state.json": `{"schema_version": "1.0.0", "cycle_count": 4, "last_cycle": "2026-04-14T03:00:00Z", "cycle_in_progress": false,
		  "decision_log": [{"cycle": 4, "timestamp": "2026-04-14T03:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health",
		   "scores": {"service_health": 9.5, "test_coverage": 2.1}, "confidence_at_decision": 0.5, "chain_executed": [], "result": "success"}]}`,
		"agent/state/evolve/confidence.json": `{"service_health": 0.8, "test_coverage": 0.7, "backlog": 0.7}`})
	_, out := mustComplete(t, dir, t0)
	cl := string(evolveBytes(t, dir, "CHANGELOG.md"))
	if !strings.Contains(cl, "- **Confidence**: 0.80 (trend: ↑") {
		t.Errorf("trend against the original's confidence_at_decision 0.5 must be ↑:\n%s\n%s", cl, out)
	}
	// The original's score table reads back through the accessor.
	st := loadState(t, dir)
	if s := st.DecisionLog[0].DecidedScore(); s == nil || *s != 9.5 {
		t.Errorf("DecidedScore of the original's entry = %v, want 9.5", s)
	}
}

func TestStep6A_ContrarianCheckRecorded(t *testing.T) {
	var log []string
	for c := 3; c <= 9; c++ {
		log = append(log, `{"cycle": `+itoa(c)+`, "timestamp": "2026-04-13T0`+itoa(c)+`:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "result": "success", "had_output": true}`)
	}
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/state.json": `{"cycle_count": 9, "last_cycle": "2026-04-13T09:00:00Z", "decision_log": [` + strings.Join(log, ",") + `]}`})
	_, out := mustComplete(t, dir, t0)
	if !strings.Contains(out, "[Memory] Contrarian check:") {
		t.Fatalf("no contrarian check at cycle 10:\n%s", out)
	}
	var c state.ContrarianRecord
	e := lastEntry(t, dir)
	if err := json.Unmarshal(e["contrarian_check"], &c); err != nil || c.AffectedDomain == "" || c.AffectedDomain == "service_health" ||
		c.ScoreAdjustment <= 0 || c.DominantDomain != "service_health" || !strings.Contains(c.Argument, "Contrarian check at cycle 10") ||
		c.DominantFrequency < 5 || c.CounterDomain != c.AffectedDomain || c.AdjustmentApplied[c.AffectedDomain] != c.ScoreAdjustment {
		t.Errorf("contrarian_check = %s (%v)", e["contrarian_check"], err)
	}
}

// Entries the original wrote are written back as they were: key order,
// number spelling, nulls, and no key added.
func TestStep6A_OriginalsEntriesKeptByteForByte(t *testing.T) {
	old := `{"cycle": 4, "timestamp": "2026-04-14T03:00:00Z", "selected_domain": "service_health", "selected_skill": "/scan-health", "scores": {"service_health": 9.50, "test_coverage": 2.0}, "confidence_at_decision": 0.50, "chain_stopped_at": null, "stop_reason": null, "result": "success", "prs_created": [], "skill_gaps_detected": ["gap-x"], "contrarian_check": {"argument": "a", "affected_domain": "backlog", "score_adjustment": 1.0, "note": "kept"}, "memo_written": false}`
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/state.json": `{"cycle_count": 4, "last_cycle": "2026-04-14T03:00:00Z", "decision_log": [` + old + `]}`})
	mustComplete(t, dir, t0)
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		DecisionLog []json.RawMessage `json:"decision_log"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.DecisionLog) != 2 {
		t.Fatalf("decision_log: %v\n%s", err, b)
	}
	if got := compact(st.DecisionLog[0]); got != compact(json.RawMessage(old)) {
		t.Errorf("the original's entry was rewritten:\n got %s\nwant %s", got, compact(json.RawMessage(old)))
	}
}
