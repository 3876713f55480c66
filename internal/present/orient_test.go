package present

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

const orientConfig = `{
  "mission": "Keep the example service healthy and its tests green.",
  "domains": {
    "service_health": {"weight": 2.0, "primary_skill": "/x", "fallback": true, "chain": ["/y"]},
    "test_coverage": {"weight": 1.0, "primary_skill": "/x"},
    "backlog": {"weight": 0.5, "primary_skill": "/x"},
    "docs": {"weight": 0.5, "primary_skill": "/x", "status": "disabled"}
  },
  "skills": {"/x": {"command": ["/bin/true"]}, "/y": {"command": ["/bin/true"]}},
  "safety": {"skill_allowlist": ["/x", "/y"]}
}
`

// orientFiles is a project after 66 cycles over three weeks, each file
// in the shape the engine writes it (taken from such a run, trimmed):
// two weekly episodes, a principle and a candidate, a lens that learned
// and lost a threshold, interventions of each kind (one never counted
// down), gaps of both kinds (a learning_loop_break among them), and the
// latest reflections.
var orientFiles = map[string]string{
	"agent/state/evolve/state.json": `{"schema_version": "1.0.0", "cycle_count": 66, "last_cycle": "2026-01-21T05:00:00Z",
	  "consecutive_observe_only_cycles": 0, "decision_log": [
	    {"cycle": 64, "timestamp": "2026-01-20T17:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/x", "result": "success", "chain_executed": ["/y"], "chain_count": 1},
	    {"cycle": 65, "timestamp": "2026-01-20T23:00:00Z", "action": "execute", "selected_domain": "test_coverage", "selected_skill": "/x", "result": "success", "chain_executed": [], "chain_count": 0},
	    {"cycle": 66, "timestamp": "2026-01-21T05:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/x", "result": "success", "chain_executed": ["/y", "/z"], "chain_count": 2}
	  ]}`,
	"agent/state/evolve/episodes.json": `{"schema_version": "1.0.0", "episodes": [
	    {"id": "EP-2026-W02", "week_start": "2026-01-05", "week_end": "2026-01-11", "cycle_range": [1, 29], "total_cycles": 29,
	     "summary": "EP-2026-W02: 29 cycles (#1-#29), service_health selected most (19 of 29 selections, 3 domains); PRs 0 created, 0 merged, 0 rejected.",
	     "domains_selected": {"backlog": 2, "service_health": 19, "test_coverage": 8}, "prs_created": 0, "prs_merged": 0, "prs_rejected": 0,
	     "key_decisions": ["cycle #1: service_health (score 83.181)"],
	     "lessons": ["When test_coverage surfaces findings, act on the top one soon.", "When service_health surfaces findings, act on the top one soon.", "When backlog yields nothing, lower its priority until its state changes."],
	     "confidence_snapshot": {"backlog": 0.69, "service_health": 0.8, "test_coverage": 0.65}, "skill_gaps_found": 1, "contrarian_checks": 2,
	     "patterns_detected": ["service_health monopoly"], "created_at": "2026-01-12T05:00:00Z"},
	    {"id": "EP-2026-W03", "week_start": "2026-01-12", "week_end": "2026-01-18", "cycle_range": [30, 57], "total_cycles": 28,
	     "summary": "EP-2026-W03: 28 cycles (#30-#57), service_health selected most (22 of 28 selections, 2 domains); PRs 0 created, 0 merged, 0 rejected.",
	     "domains_selected": {"service_health": 22, "test_coverage": 6}, "prs_created": 0, "prs_merged": 0, "prs_rejected": 0,
	     "key_decisions": ["cycle #38: service_health (score 37.516)"],
	     "lessons": ["When service_health surfaces findings, act on the top one soon.", "When test_coverage surfaces findings, act on the top one soon."],
	     "confidence_snapshot": {"backlog": 0.69, "service_health": 0.92, "test_coverage": 0.59}, "skill_gaps_found": 1, "contrarian_checks": 3,
	     "patterns_detected": [], "created_at": "2026-01-19T05:00:00Z"}
	  ]}`,
	"agent/state/evolve/principles.json": `{"schema_version": "1.0.0", "principles": [
	    {"id": "P-2", "text": "Re-check a domain after its next run before drawing conclusions.", "kind": "candidate", "confidence": 0.15, "source_episodes": ["EP-2026-W02"], "occurrences": 1, "created_at": "2026-01-19T05:00:00Z"},
	    {"id": "P-1", "text": "When test_coverage surfaces findings, act on the top one soon.", "confidence": 0.4, "source_episodes": ["EP-2026-W02", "EP-2026-W03"], "occurrences": 2, "created_at": "2026-01-19T05:00:00Z", "last_confirmed_at": "2026-01-19T05:00:00Z", "last_confirmed_episode": "EP-2026-W03"}
	  ]}`,
	"agent/state/evolve/memos.json": `{"schema_version": "1.1.0", "score_adjustments": {"backlog": 1}, "interventions": [
	    {"domain": "backlog", "delta": 1, "type": "starvation", "reason": "No executions in last 10 cycles", "created_at_cycle": 48, "expires_after_cycles": 2, "applied_count": 1},
	    {"domain": "service_health", "delta": -10, "type": "monopoly_breaker", "reason": "Selected 3 consecutive cycles", "created_at_cycle": 49, "expires_after_cycles": 1, "applied_count": 0},
	    {"domain": "backlog", "delta": 1, "type": "contrarian", "reason": "Contrarian check at cycle 50: service_health won 6 of the last 7 decisions; backlog selected least (0)", "created_at_cycle": 50, "expires_after_cycles": 0, "applied_count": 3}
	  ], "history": [], "last_memo": null}`,
	"agent/state/evolve/skill_gaps.json": `{"schema_version": "1.0.0", "gaps": [
	    {"id": "gap-domain_starvation_backlog", "name": "domain_starvation_backlog", "type": "coverage_gap", "description": "Domain not executed in 10 cycles", "detail": "Domain not executed in 10 cycles", "frequency": 41, "first_seen": "2026-01-08T17:00:00Z", "last_seen": "2026-01-21T05:00:00Z", "last_seen_cycle": 66, "related_domain": "backlog", "proposed_skill": null, "resolved": false, "resolved_at": null, "resolution": null},
	    {"id": "gap-execution_error_x", "name": "execution_error_/x", "type": "execution_failure", "detail": "skill /x exited 1", "frequency": 1, "first_seen": "2026-01-07T11:00:00Z", "last_seen": "2026-01-07T11:00:00Z", "last_seen_cycle": 9, "related_domain": "test_coverage", "proposed_skill": null, "resolved": true, "resolved_at": "2026-01-08T09:00:00Z", "resolution": "fixed the script"},
	    {"id": "gap-learning_loop_break-c30", "type": "learning_loop_break", "description": "cost_ledger.json was missing cycle 29; backfilled 1 synthetic entry", "detected_at": "2026-01-12T05:00:00Z", "detected_in_cycle": 30, "frequency": 1, "last_seen_cycle": 30, "related_domain": null, "proposed_skill": null, "resolved": false, "resolved_at": null, "resolution": null}
	  ]}`,
	"agent/state/evolve/reflections.json": `{"schema_version": "1.0.0", "reflections": [
	    {"cycle": 63, "timestamp": "2026-01-20T11:00:00Z", "domain": "backlog", "skill": "/x", "result": "futile", "verdict": "miss", "critique": "Chose backlog (score 24.26) and got futile: the decision did not pay off.", "lesson": "When backlog yields nothing, lower its priority until its state changes.", "status": "applied"},
	    {"cycle": 64, "timestamp": "2026-01-20T17:00:00Z", "domain": "service_health", "skill": "/x", "result": "action_extracted", "verdict": "hit", "critique": "Chose service_health (score 37.52) and got action_extracted: the decision delivered what it was for.", "lesson": "When service_health surfaces findings, act on the top one soon.", "status": "applied"},
	    {"cycle": 65, "timestamp": "2026-01-20T23:00:00Z", "domain": "test_coverage", "skill": "/x", "result": "observe", "verdict": "unclear", "critique": "Chose test_coverage (score 31.02) and got observe: the outcome does not settle the decision yet.", "lesson": "Re-check test_coverage after its next run before drawing conclusions.", "status": "applied"},
	    {"cycle": 66, "timestamp": "2026-01-21T05:00:00Z", "domain": "service_health", "skill": "/x", "result": "action_extracted", "verdict": "hit", "critique": "Chose service_health (score 33.10) and got action_extracted: the decision delivered what it was for.", "lesson": "When service_health surfaces findings, act on the top one soon.", "status": "open"}
	  ]}`,
	"agent/state/service_health/lens.json": `{"schema_version": "1.0.0", "domain": "service_health", "last_updated": "2026-01-21T05:00:00Z",
	  "focus_items": [{"item": "p95_ms variability", "confidence": 1.0}],
	  "learned_thresholds": [{"item": "p95_ms threshold", "confidence": 0.1, "value": 243, "direction": "above"}],
	  "discovered_signals": [{"item": "service_health alerts co-occur with test_coverage alerts", "confidence": 0.3}],
	  "evidence": [], "deprecated_items": [{"item": "p95_ms threshold", "kind": "learned_threshold", "confidence": 0, "value": 182, "deprecated_at": "2026-01-06T23:00:00Z", "reason": "confidence 0 below 0.1"}]}`,
	"agent/state/service_health/lens_changelog.json": `{"schema_version": "1.0.0", "domain": "service_health", "entries": [
	    {"cycle": 5, "timestamp": "2026-01-06T01:00:00Z", "domain": "service_health", "item": "p95_ms variability", "change_type": "added", "before": null, "after": 0.3, "delta": 0.3, "reason": "p95_ms coefficient of variation 0.76 > 0.25 over 3 observations"},
	    {"cycle": 64, "timestamp": "2026-01-20T17:00:00Z", "domain": "service_health", "item": "p95_ms threshold", "change_type": "added", "before": null, "after": 0.3, "delta": 0.3, "reason": "p95_ms moved 243 -> 820: no alert at cycle 63, alert at cycle 64"},
	    {"cycle": 65, "timestamp": "2026-01-20T23:00:00Z", "domain": "service_health", "item": "p95_ms variability", "change_type": "confirmed", "before": 0.9, "after": 1.0, "delta": 0.1, "reason": "p95_ms still varies (CV 0.71)"},
	    {"cycle": 66, "timestamp": "2026-01-21T05:00:00Z", "domain": "service_health", "item": "p95_ms threshold", "change_type": "decayed", "before": 0.3, "after": 0.1, "delta": -0.2, "reason": "p95_ms was 245 at cycle 65 and no alert followed at cycle 66"}
	  ]}`,
	"agent/state/test_coverage/lens.json": `{"schema_version": "1.0.0", "domain": "test_coverage", "last_updated": "2026-01-05T17:00:00Z", "focus_items": [], "learned_thresholds": [], "discovered_signals": [], "evidence": [], "deprecated_items": []}`,
}

// orientProject writes config.json and files into a new project and
// returns its Orient view and the project directory.
func orientProject(t *testing.T, files map[string]string) (Orient, string) {
	t.Helper()
	dir := t.TempDir()
	orientWrite(t, dir, "config.json", orientConfig)
	for rel, body := range files {
		orientWrite(t, dir, rel, body)
	}
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(dir)
	st.MaxRead = cfg.Safety.MaxReadBytes()
	return BuildOrient(st, cfg), dir
}

func orientWrite(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// orientMaxWidth fails on a line wider than width.
func orientMaxWidth(t *testing.T, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := DisplayWidth(l); w > width {
			t.Errorf("line %d is %d columns wide, over %d: %q", i+1, w, width, l)
		}
	}
}

func TestOrientAfterCycles(t *testing.T) {
	o, _ := orientProject(t, orientFiles)
	golden(t, "orient_normal", RenderOrient(o, Style{}))

	// What the view counts, besides what it shows.
	if o.CycleCount != 66 || o.Episodes.Count != 2 || o.Episodes.LastWeek == nil || *o.Episodes.LastWeek != "EP-2026-W03" {
		t.Errorf("episodes: cycle %d, %+v", o.CycleCount, o.Episodes)
	}
	if o.Principles.Count != 2 || o.Principles.Candidates != 1 || o.Principles.HighConfidence != 0 || o.Principles.Top[0].ID != "P-1" {
		t.Errorf("principles: %+v", o.Principles)
	}
	if o.Interventions.Active != 2 || o.Interventions.Expired != 1 || o.Interventions.Items[2].Type != "contrarian" {
		t.Errorf("interventions: %+v", o.Interventions)
	}
	if o.Lessons != (OrientLessons{Applied: 3, Open: 1}) {
		t.Errorf("lessons: %+v", o.Lessons)
	}
	if o.Chain.Window != 3 || o.Chain.CyclesWithChain != 2 || o.Chain.Recent[0].Cycle != 66 {
		t.Errorf("chain: %+v", o.Chain)
	}
	// docs is disabled and has no lens: not listed, not counted.
	if o.Lens.Active != 3 || o.Lens.WithLens != 2 || len(o.Lens.Domains) != 3 {
		t.Errorf("lens: %+v", o.Lens)
	}
	if len(o.Corrupt) != 0 {
		t.Errorf("corrupt: %v", o.Corrupt)
	}
}

// A learning_loop_break gap is an invariant of the loop broken, not a
// missing skill: it is counted apart, resolved and not, and the open
// ones are listed before the resolved ones.
func TestOrientCountsLoopBreakGapsApart(t *testing.T) {
	files := map[string]string{"agent/state/evolve/skill_gaps.json": `{"gaps": [
	  {"name": "a", "type": "coverage_gap", "frequency": 2, "resolved": true, "last_seen_cycle": 9},
	  {"name": "b", "type": "learning_loop_break", "frequency": 1, "resolved": false, "last_seen_cycle": 3},
	  {"name": "c", "type": "learning_loop_break", "frequency": 1, "resolved": true, "last_seen_cycle": 8},
	  {"name": "d", "type": "learning_loop_break", "frequency": 1, "resolved": false, "last_seen_cycle": 7},
	  {"name": "e", "type": "execution_failure", "frequency": 4, "resolved": false, "last_seen_cycle": 5}
	]}`}
	o, _ := orientProject(t, files)
	g := o.Gaps
	if g.Unresolved != 1 || g.Resolved != 1 || g.LoopBreak != (OrientGapCounts{Unresolved: 2, Resolved: 1}) {
		t.Errorf("counts: %+v", g)
	}
	var order []string
	for _, r := range g.Recent {
		order = append(order, r.Name)
	}
	if got := strings.Join(order, ","); got != "d,e,b,a,c" {
		t.Errorf("order %s, want the open ones first, latest seen first: d,e,b,a,c", got)
	}
	out := RenderOrient(o, Style{})
	if !strings.Contains(out, "Skill gaps: 1 open, 1 resolved; learning_loop_break: 2 open, 1 resolved\n") ||
		!strings.Contains(out, "  loop break d  ×1, last cycle 7") {
		t.Errorf("text:\n%s", out)
	}
}

func TestOrientEmptyProject(t *testing.T) {
	o, dir := orientProject(t, nil)
	out := RenderOrient(o, Style{})
	golden(t, "orient_empty", out)
	if strings.Count(out, "none yet") != 6 {
		t.Errorf("every empty section says so:\n%s", out)
	}
	// The document has every key, lists as [] (never null), and nothing
	// was created by reading.
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null,") && strings.Contains(string(b), `":null]`) {
		t.Errorf("a list is null: %s", b)
	}
	for _, key := range []string{`"recent":[]`, `"top":[]`, `"items":[]`, `"corrupt":[]`, `"last_week":null`, `"last_cycle":null`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("document lacks %s: %s", key, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agent")); !os.IsNotExist(err) {
		t.Errorf("the view created agent/: %v", err)
	}
}

// Corrupt files are named, each section shows empty and says why, and
// nothing is moved or rewritten. Files the view does not show — the
// cycle log, outcomes, goals — are not read: corrupt, they are not named.
func TestOrientCorruptFiles(t *testing.T) {
	files := map[string]string{}
	for k, v := range orientFiles {
		files[k] = v
	}
	broken := []string{
		"agent/state/evolve/episodes.json",
		"agent/state/evolve/memos.json",
		"agent/state/evolve/reflections.json",
		"agent/state/evolve/state.json",
		"agent/state/service_health/lens_changelog.json",
		"agent/state/test_coverage/lens.json",
	}
	for i, rel := range broken {
		files[rel] = []string{`{"episodes": [`, `not json`, ``, `[1, 2]`, `{"entries": {`, `{"focus_items": [`}[i]
	}
	for _, rel := range []string{"agent/state/evolve/cycle_log.jsonl", "agent/state/evolve/outcomes.json", "agent/state/evolve/goals.json"} {
		files[rel] = "\x00garbage"
	}
	o, dir := orientProject(t, files)
	// In the order the sections are read: state, episodes, the lens
	// files in the configuration's domain order, memos, reflections.
	var want []string
	for _, i := range []int{3, 0, 4, 5, 1, 2} {
		want = append(want, filepath.Join(dir, broken[i]))
	}
	if got := strings.Join(o.Corrupt, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("corrupt:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	out := RenderOrient(o, Style{})
	golden(t, "orient_corrupt", out)
	for rel, body := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(b) != body {
			t.Errorf("%s changed: %v", rel, err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "agent/state/evolve"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".corrupt-") {
			t.Errorf("a corrupt file was set aside: %s", e.Name())
		}
	}
}

// At 80 and 120 columns every line fits; without a width nothing is cut.
func TestOrientWidths(t *testing.T) {
	o, _ := orientProject(t, orientFiles)
	for _, w := range []int{80, 120} {
		out := RenderOrient(o, Style{Terminal: true, Width: w})
		golden(t, fmt.Sprintf("orient_%d", w), out)
		orientMaxWidth(t, out, w)
	}
	narrow := RenderOrient(o, Style{Terminal: true, Width: 24})
	orientMaxWidth(t, narrow, 24)
	full := RenderOrient(o, Style{})
	for _, s := range []string{
		"Contrarian check at cycle 50: service_health won 6 of the last 7 decisions; backlog selected least (0)",
		"p95_ms was 245 at cycle 65 and no alert followed at cycle 66",
	} {
		if !strings.Contains(full, s) {
			t.Errorf("width 0 cut %q:\n%s", s, full)
		}
	}
	if strings.Contains(full, "…") && !strings.Contains(full, "… and") {
		t.Errorf("width 0 cut a line:\n%s", full)
	}
}

// Colour only through Style.Paint: none without Color, and with it the
// painted view reads as the plain one once the codes are removed.
func TestOrientColor(t *testing.T) {
	o, _ := orientProject(t, orientFiles)
	plain := RenderOrient(o, Style{Terminal: true, Width: 120})
	if strings.Contains(plain, "\x1b") {
		t.Errorf("colour without Color:\n%q", plain)
	}
	color := RenderOrient(o, Style{Terminal: true, Color: true, Width: 120})
	golden(t, "orient_color", color)
	for _, want := range []string{"\x1b[32mhit\x1b[0m", "\x1b[31mloop break\x1b[0m", "\x1b[33mopen      \x1b[0m", "\x1b[1mLens:\x1b[0m"} {
		if !strings.Contains(color, want) {
			t.Errorf("%q not painted:\n%q", want, color)
		}
	}
	if strings.Contains(color, "\x1b[m") {
		t.Errorf("an empty SGR sequence:\n%q", color)
	}
	orientMaxWidth(t, color, 120)
}

// Text a skill or a hand wrote into a state file cannot drive the
// terminal or forge a line, in the text or in the document's strings
// once printed (the cli's printJSON escapes those).
func TestOrientEscapesHostileText(t *testing.T) {
	const hostile = "x\x1b[2J\r\n[WARN] forged\u202e"
	enc, _ := json.Marshal(hostile)
	files := map[string]string{
		"agent/state/evolve/reflections.json":            `{"reflections": [{"cycle": 1, "domain": ` + string(enc) + `, "verdict": "hit", "critique": ` + string(enc) + `, "lesson": ` + string(enc) + `, "status": "open"}]}`,
		"agent/state/evolve/memos.json":                  `{"interventions": [{"domain": "backlog", "delta": 1, "type": ` + string(enc) + `, "reason": ` + string(enc) + `, "expires_after_cycles": 1}]}`,
		"agent/state/evolve/principles.json":             `{"principles": [{"text": ` + string(enc) + `, "confidence": 0.5}]}`,
		"agent/state/evolve/episodes.json":               `{"episodes": [{"id": ` + string(enc) + `, "summary": ` + string(enc) + `, "patterns_detected": [` + string(enc) + `]}]}`,
		"agent/state/evolve/skill_gaps.json":             `{"gaps": [{"name": ` + string(enc) + `, "detail": ` + string(enc) + `}]}`,
		"agent/state/service_health/lens.json":           `{"focus_items": [{"item": ` + string(enc) + `, "confidence": 0.9}]}`,
		"agent/state/service_health/lens_changelog.json": `{"entries": [{"cycle": 1, "item": ` + string(enc) + `, "change_type": "added", "reason": ` + string(enc) + `}]}`,
	}
	o, _ := orientProject(t, files)
	out := RenderOrient(o, Style{Terminal: true, Color: true, Width: 400})
	stripped := strings.NewReplacer("\x1b[0m", "", "\x1b[1m", "", "\x1b[2m", "", "\x1b[31m", "", "\x1b[32m", "", "\x1b[33m", "").Replace(out)
	for _, bad := range []string{"\x1b", "\r", "\u202e", "\n[WARN]"} {
		if strings.Contains(stripped, bad) {
			t.Errorf("output carries %q:\n%q", bad, out)
		}
	}
	if n := strings.Count(out, `x\x1b[2J\r\n[WARN] forged\u202e`); n < 10 {
		t.Errorf("hostile text shown escaped %d times, want every place:\n%s", n, out)
	}
}

// A long history costs a screen: the latest few of each list are shown
// and the rest counted.
func TestOrientBoundsEachList(t *testing.T) {
	var refl, gaps, ivs, eps []string
	for i := 1; i <= 200; i++ {
		refl = append(refl, fmt.Sprintf(`{"cycle": %d, "domain": "backlog", "verdict": "hit", "lesson": "l%d", "status": "applied"}`, i, i))
		gaps = append(gaps, fmt.Sprintf(`{"name": "g%d", "type": "coverage_gap", "frequency": 1, "last_seen_cycle": %d}`, i, i))
		ivs = append(ivs, fmt.Sprintf(`{"domain": "backlog", "delta": 1, "type": "starvation", "expires_after_cycles": %d}`, i%2))
		eps = append(eps, fmt.Sprintf(`{"id": "EP-2020-W%02d", "week_start": "2020-%02d-01"}`, i%52+1, i%12+1))
	}
	files := map[string]string{
		"agent/state/evolve/reflections.json": `{"reflections": [` + strings.Join(refl, ",") + `]}`,
		"agent/state/evolve/skill_gaps.json":  `{"gaps": [` + strings.Join(gaps, ",") + `]}`,
		"agent/state/evolve/memos.json":       `{"interventions": [` + strings.Join(ivs, ",") + `]}`,
		"agent/state/evolve/episodes.json":    `{"episodes": [` + strings.Join(eps, ",") + `]}`,
	}
	o, _ := orientProject(t, files)
	if o.Reflections.Count != 200 || len(o.Reflections.Recent) != orientMaxReflections || o.Reflections.Recent[0].Cycle != 200 || o.Lessons.Applied != 200 {
		t.Errorf("reflections: count %d, %d shown, first %+v", o.Reflections.Count, len(o.Reflections.Recent), o.Reflections.Recent[0])
	}
	if o.Gaps.Unresolved != 200 || len(o.Gaps.Recent) != orientMaxGaps || o.Gaps.Recent[0].Name != "g200" {
		t.Errorf("gaps: %d open, %d shown, first %s", o.Gaps.Unresolved, len(o.Gaps.Recent), o.Gaps.Recent[0].Name)
	}
	if o.Interventions.Active != 100 || o.Interventions.Expired != 100 || len(o.Interventions.Items) != orientMaxInterventions {
		t.Errorf("interventions: %d active, %d expired, %d shown", o.Interventions.Active, o.Interventions.Expired, len(o.Interventions.Items))
	}
	if o.Episodes.Count != 200 || len(o.Episodes.Recent) != orientMaxEpisodes || o.Episodes.Recent[0].WeekStart != "2020-12-01" {
		t.Errorf("episodes: %d, %d shown, first %+v", o.Episodes.Count, len(o.Episodes.Recent), o.Episodes.Recent[0])
	}
	out := RenderOrient(o, Style{})
	for _, want := range []string{"… and 197 older\n", "… and 195 more\n", "… and 190 more\n", "… and 197 older\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines > 80 {
		t.Errorf("%d lines for a long history", lines)
	}
}
