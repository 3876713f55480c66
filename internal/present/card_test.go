package present

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// cardFixture is the original project's cycle-card fixture.
const cardFixture = "../../../shared/compat/ooda-loop/fixtures/cycle-card"

// cardConfig is a small project of this program's own config shape.
const cardConfig = `{
  "project": {"name": "shop"},
  "domains": {
    "service_health": {"weight": 2.0, "primary_skill": "/scan-health"},
    "test_coverage": {"weight": 1.0, "primary_skill": "/check-tests"},
    "backlog": {"weight": 0.5, "primary_skill": "/plan-backlog"}
  },
  "progressive_complexity": {"current_level": 1},
  "cost": {"daily_limit_usd": 2.5}
}`

// cardProject writes files (config.json among them, else cardConfig) into
// a new project and returns its card.
func cardProject(t *testing.T, files map[string]string) (CardView, string) {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["config.json"]; !ok {
		files["config.json"] = cardConfig
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cardOf(t, dir), dir
}

func cardOf(t *testing.T, dir string) CardView {
	t.Helper()
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New(dir)
	st.MaxRead = cfg.Safety.MaxReadBytes()
	v := BuildCard(cfg, st)
	// Every card of these tests is also built from the values a cycle
	// would hand over (those of the files that decode), and must be the
	// same card with the same corrupt files.
	if rv := BuildCardFrom(cfg, st, recordedOf(t, st)); !reflect.DeepEqual(rv, v) {
		t.Errorf("card from the recorded values:\n%+v\n%q\nfrom the files:\n%+v\n%q", rv.Card, rv.Corrupt, v.Card, v.Corrupt)
	}
	// And with the lens changelogs read ahead, as `ooda cycle` does.
	if pv := BuildCardFrom(cfg, st, Recorded{Lens: PrefetchLensChangelogs(cfg, st)}); !reflect.DeepEqual(pv, v) {
		t.Errorf("card from the prefetched lens changelogs:\n%+v\n%q\nfrom the files:\n%+v\n%q", pv.Card, pv.Corrupt, v.Card, v.Corrupt)
	}
	return v
}

// recordedOf is what a cycle that wrote the project's state files would
// hand the card: the value of each that decodes, as decoded.
func recordedOf(t *testing.T, st *state.Store) Recorded {
	t.Helper()
	var rec Recorded
	snap, lerr := st.LoadFiles(state.StateFile, state.ConfidenceFile, state.MemosFile, state.CostLedgerFile)
	if snap == nil {
		return rec
	}
	// A missing ledger is one a cycle would have written; the card of a
	// project without one is the files' only.
	if lerr == nil && snap.CostLedger != nil {
		rec.CostLedger = snap.CostLedger
	}
	bad := map[string]bool{}
	for _, c := range snap.Corrupt {
		bad[c.File] = true
	}
	if log := snap.State.DecisionLog; !bad[state.StateFile] && len(log) > 0 {
		rec.Entry = &log[len(log)-1]
	}
	if !bad[state.ConfidenceFile] {
		rec.Confidence = &snap.Confidence
	}
	if !bad[state.MemosFile] {
		rec.Memos = &snap.Memos
	}
	return rec
}

// copyDir copies the fixture, so that nothing can change it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	if _, err := os.Stat(src); err != nil {
		t.Skipf("compat fixture not available: %v", err)
	}
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	boxStyle    = Style{Terminal: true, Width: 120}
	colourStyle = Style{Terminal: true, Color: true, Width: 120}
)

// The original project's cycle-card fixture gives exactly the lines
// SPEC-NOTES §9 lists, in the box and in the plain layout.
func TestStep7_CycleCardFixture(t *testing.T) {
	dir := copyDir(t, cardFixture)
	v := cardOf(t, dir)
	if len(v.Corrupt) > 0 {
		t.Fatalf("corrupt: %v", v.Corrupt)
	}
	c := v.Card
	if c == nil {
		t.Fatal("no card for a decision log of two entries")
	}
	if c.Cycle != 152 || c.Project != "fwd.page" || c.LevelName != "Full observation" || c.Level != 2 {
		t.Errorf("header/footer data: %+v", c)
	}
	if len(c.Learn) != 2 || c.Learn[0].Kind != LearnHumanDecision || c.Learn[1].Kind != LearnLens {
		t.Fatalf("LEARN = %+v, want the human decision and the lens change", c.Learn)
	}
	for _, style := range []struct {
		name  string
		s     Style
		plain bool
	}{{"box", boxStyle, false}, {"plain", Style{}, false}, {"plain_flag", boxStyle, true}} {
		out := RenderCard(c, style.s, style.plain)
		for _, want := range []string{
			"fwd.page · ooda cycle #152",
			"2026-04-14 03:14 UTC",
			"test_coverage won (score 11.3) · confidence 0.74 ✓",
			"/check-tests → pr_created · PR #29 · Risk Tier 1",
			"PR #28 rejected → service_health confidence 0.74 → 0.54 (-0.20)",
			"lens re-aimed → flaky-alert threshold 0.3 → 0.25 (3 confirmations of a false-positi",
			"+$0.04 · $0.38 today · cap $10",
			"HALT: not active · Level 2 (Full observation)",
			"\nfwd.page ran ooda cycle #152: test_coverage → pr_created (PR #29); PR #28 rejected → service_health confidence 0.74 → 0.54 (-0.20); cost +$0.04 ($0.38 today).",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: missing %q in\n%s", style.name, want, out)
			}
		}
		if style.name == "box" {
			golden(t, "card_fixture_box", out)
		} else {
			golden(t, "card_fixture_plain", out)
		}
	}
}

// An entry of an older state (no orient summary, confidence, risk tier,
// cost, score table) and no ledger: every missing field is "—", and the
// card still renders.
func TestStep7_CycleCardLegacyEntryShowsDashes(t *testing.T) {
	v, _ := cardProject(t, map[string]string{
		"agent/state/evolve/state.json": `{"cycle_count": 7, "decision_log": [
			{"cycle": 7, "selected_domain": "backlog", "selected_skill": "/plan-backlog", "result": "success", "pr_number": 4}]}`,
	})
	c := v.Card
	if c == nil {
		t.Fatal("no card")
	}
	if c.Timestamp != nil || c.Orient != nil || c.Decide.Score != nil || c.Decide.Confidence != nil || c.Decide.GatePassed != nil ||
		c.Act.RiskTier != nil || c.Cost.CycleUSD != nil || c.Cost.TodayUSD != nil {
		t.Errorf("a missing field got a value: %+v", c)
	}
	out := RenderCard(c, Style{}, false)
	for _, want := range []string{
		"shop · ooda cycle #7 · —",
		"OBSERVE   3 domains scanned · —",
		"ORIENT    —",
		"DECIDE    backlog won (score —) · confidence —\n",
		"ACT       /plan-backlog → success · PR #4 · Risk Tier —",
		"LEARN     no new orientation this cycle (observing)",
		"COST      +— · — today · cap $2.50",
		"HALT: not active · Level 1 (Watching + testing)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	golden(t, "card_legacy", out)
	golden(t, "card_legacy_box", RenderCard(c, boxStyle, false))
}

// No cycle recorded: no card, the one sentence that says so.
func TestStep7_CycleCardEmptyLog(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no state":  {},
		"empty log": {"agent/state/evolve/state.json": `{"cycle_count": 0, "decision_log": []}`},
	} {
		v, _ := cardProject(t, files)
		if v.Card != nil {
			t.Errorf("%s: a card without a cycle: %+v", name, v.Card)
		}
		out := RenderCard(v.Card, boxStyle, false)
		if !strings.HasPrefix(out, "No cycle to card yet.") {
			t.Errorf("%s: %q", name, out)
		}
		golden(t, "card_empty", out)
	}
}

// entryState is a state.json whose newest entry is entry, of cycle 9 at
// 2026-03-02 10:00 UTC.
func entryState(entry string) string {
	return `{"cycle_count": 9, "decision_log": [` + entry + `]}`
}

const executed = `"cycle": 9, "timestamp": "2026-03-02T10:00:00Z", "action": "execute", "selected_domain": "test_coverage",
	"selected_skill": "/check-tests", "score": 12.34, "confidence": 0.7, "result": "success", "cost_usd": 0.02`

// Each LEARN source, alone and together, gives the line of its
// priority; the first two together give both.
func TestStep7_CycleCardLearnPriority(t *testing.T) {
	lensCL := `{"domain": "service_health", "entries": [
		{"cycle": 8, "item": "old", "change_type": "added", "before": null, "after": 0.5, "delta": 0.5, "reason": "earlier cycle"},
		{"cycle": 9, "item": "p99 latency", "change_type": "promoted", "before": 0.4, "after": 0.6, "delta": 0.2, "reason": "3 confirmations"},
		{"cycle": 9, "item": "disk", "change_type": "confirmed", "before": 0.5, "after": 0.55, "delta": 0.05, "reason": "seen again"}]}`
	memos := `{"interventions": [
		{"domain": "backlog", "delta": 1.0, "type": "starvation", "created_at_cycle": 8, "expires_after_cycles": 3, "applied_count": 1},
		{"domain": "service_health", "delta": -10.0, "type": "monopoly_breaker", "created_at_cycle": 9, "expires_after_cycles": 1, "applied_count": 0}]}`
	changelog := "# CHANGELOG\n\n## Cycle #9 -- 2026-03-02 10:00 UTC -- test_coverage\n- **Skill**: /check-tests\n- **Confidence**: 0.72 (trend: ↑, micro-adj: +0.02 (findings))\n"
	prs := `, "pr_outcomes": [{"pr": 3, "domain": "test_coverage", "outcome": "merged", "confidence_delta": 0.1},
		{"pr": 5, "domain": "backlog", "outcome": "rejected", "confidence_delta": -0.2}]`
	conf := `{"test_coverage": 0.82, "backlog": 0.5, "service_health": 0.7}`
	cases := []struct {
		name  string
		files map[string]string
		want  []string // kind: text
	}{
		{"nothing", map[string]string{}, []string{"observing: no new orientation this cycle (observing)"}},
		{"lesson", map[string]string{"entry": `, "lessons_recalled": ["skip backlog after 2x no_remote"]`},
			[]string{"recalled_lesson: recalled lesson: skip backlog after 2x no_remote"}},
		{"micro over lesson", map[string]string{"entry": `, "lessons_recalled": ["x"]`, "agent/state/evolve/CHANGELOG.md": changelog},
			[]string{"micro_adjustment: test_coverage confidence +0.02 (findings)"}},
		{"delivered over micro", map[string]string{"entry": `, "result_type": "action_extracted", "quality_multiplier": 0.2`, "agent/state/evolve/CHANGELOG.md": changelog},
			[]string{"delivered: delivered action_extracted (quality 0.20)"}},
		{"intervention over delivered", map[string]string{"entry": `, "result_type": "pr_created", "pr_number": 12, "quality_multiplier": 0.5`, "agent/state/evolve/memos.json": memos},
			[]string{"intervention: monopoly_breaker → service_health -10.0 for 1 cycle"}},
		{"lens over intervention", map[string]string{"agent/state/service_health/lens_changelog.json": lensCL, "agent/state/evolve/memos.json": memos},
			[]string{"lens: lens re-aimed → p99 latency 0.4 → 0.6 (3 confirmations) (+1 more lens change)"}},
		// The PR outcomes: the largest move first; the executed domain's
		// value now less its micro-adjustment is the value after.
		{"human alone", map[string]string{"entry": prs, "agent/state/evolve/confidence.json": conf, "agent/state/evolve/CHANGELOG.md": changelog, "agent/state/evolve/memos.json": memos},
			[]string{"human_decision: PR #5 rejected → backlog confidence 0.70 → 0.50 (-0.20) (+1 more PR outcome)"}},
		{"human and lens", map[string]string{"entry": `, "pr_outcomes": [{"pr": 3, "domain": "test_coverage", "outcome": "merged", "confidence_delta": 0.1}]`,
			"agent/state/evolve/confidence.json": conf, "agent/state/evolve/CHANGELOG.md": changelog, "agent/state/service_health/lens_changelog.json": lensCL},
			[]string{"human_decision: PR #3 merged → test_coverage confidence 0.70 → 0.80 (+0.10)", "lens: lens re-aimed → p99 latency 0.4 → 0.6 (3 confirmations) (+1 more lens change)"}},
		{"recorded before and after", map[string]string{"entry": `, "pr_outcomes": [{"pr": 3, "domain": "test_coverage", "outcome": "merged", "confidence_delta": 0.1, "before": 0.61, "after": 0.71}]`},
			[]string{"human_decision: PR #3 merged → test_coverage confidence 0.61 → 0.71 (+0.10)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			extra := ""
			for k, v := range tc.files {
				if k == "entry" {
					extra = v
					continue
				}
				files[k] = v
			}
			files["agent/state/evolve/state.json"] = entryState("{" + executed + extra + "}")
			v, _ := cardProject(t, files)
			if v.Card == nil {
				t.Fatal("no card")
			}
			var got []string
			for _, l := range v.Card.Learn {
				got = append(got, l.Kind+": "+l.Text)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("LEARN =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, s := range []Style{{}, boxStyle} {
				out := strings.ToLower(RenderCard(v.Card, s, false))
				for _, bad := range []string{"trained", "model updated", "learned weights"} {
					if strings.Contains(out, bad) {
						t.Errorf("the card says %q:\n%s", bad, out)
					}
				}
				if !strings.Contains(out, strings.ToLower(strings.SplitN(tc.want[0], ": ", 2)[1])) {
					t.Errorf("the LEARN line is not shown:\n%s", out)
				}
			}
		})
	}
}

// ACT and DECIDE of the cycles that ran nothing, and of a confidence
// below the gate.
func TestStep7_CycleCardSkipObserveAndGate(t *testing.T) {
	cases := map[string]struct {
		entry string
		want  []string
	}{
		"skip": {`{"cycle": 9, "timestamp": "2026-03-02T10:00:00Z", "action": "skip", "reason": "all_scores_below_minimum", "result": "skip", "scores": {"a": 1, "b": 2}}`,
			[]string{"OBSERVE   2 domains scanned · —", "DECIDE    no domain selected (all_scores_below_minimum)", "ACT       skip (all_scores_below_minimum)", "shop ran ooda cycle #9: skip (all_scores_below_minimum); no new"}},
		"observe only": {`{"cycle": 1, "timestamp": "2026-03-02T10:00:00Z", "action": "observe_only", "reason": "first_cycle", "result": "observe_only", "selected_domain": "backlog", "selected_skill": "/plan-backlog", "score": 3, "confidence": 0.7}`,
			[]string{"DECIDE    backlog won (score 3.0) · confidence 0.70 ✓", "ACT       observe-only (first_cycle)", "shop ran ooda cycle #1: observe-only (first_cycle);"}},
		"below the gate": {`{"cycle": 9, "timestamp": "2026-03-02T10:00:00Z", "action": "execute", "selected_domain": "backlog", "selected_skill": "/plan-backlog", "score": 3, "confidence": 0.1, "gated": true, "result": "error", "result_type": "error"}`,
			[]string{"DECIDE    backlog won (score 3.0) · confidence 0.10 ✗", "ACT       /plan-backlog → error", "shop ran ooda cycle #9: backlog → error;"}},
		"guidance": {`{"cycle": 9, "timestamp": "2026-03-02T10:00:00Z", "action": "execute", "selected_domain": "service_health", "selected_skill": "/scan-health", "guidance": "critical_alert", "selected_by_alert": true, "confidence": 0.8, "result": "success", "result_type": "futile"}`,
			[]string{"OBSERVE   3 domains scanned · alert in service_health", "DECIDE    service_health won (implicit guidance: critical_alert) · confidence 0.80 ✓"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, _ := cardProject(t, map[string]string{"agent/state/evolve/state.json": entryState(tc.entry)})
			out := RenderCard(v.Card, Style{}, false)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("missing %q in\n%s", w, out)
				}
			}
		})
	}
}

// The box only on a terminal at least as wide as the box; narrower, and
// always with plain, the plain layout without box drawing or emoji. Every
// line of a box is exactly its width.
func TestStep7_CycleCardLayoutByWidth(t *testing.T) {
	dir := copyDir(t, cardFixture)
	c := cardOf(t, dir).Card
	boxChars := "┌┐└┘│─🔭"
	for _, tc := range []struct {
		name  string
		s     Style
		plain bool
		box   bool
	}{
		{"terminal unknown width", Style{Terminal: true}, false, true},
		{"terminal 120", Style{Terminal: true, Width: 120}, false, true},
		{"terminal 80", Style{Terminal: true, Width: 80}, false, true},
		{"terminal 61", Style{Terminal: true, Width: 61}, false, true},
		{"terminal 59", Style{Terminal: true, Width: 59}, false, false},
		{"pipe", Style{Width: 200}, false, false},
		{"plain on a terminal", Style{Terminal: true, Color: true, Width: 200}, true, false},
	} {
		out := RenderCard(c, tc.s, tc.plain)
		hasBox := strings.ContainsAny(out, boxChars)
		if hasBox != tc.box {
			t.Errorf("%s: box drawing %v, want %v:\n%s", tc.name, hasBox, tc.box, out)
		}
		if tc.plain && strings.Contains(out, "\x1b[") {
			t.Errorf("%s: colour with --plain: %q", tc.name, out)
		}
		if !tc.box {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		boxLines := lines[:len(lines)-2] // the blank line and the share sentence follow
		want := DisplayWidth(boxLines[0])
		if tc.s.Width > 0 && want > tc.s.Width {
			t.Errorf("%s: box %d columns wide on %d", tc.name, want, tc.s.Width)
		}
		for _, l := range boxLines {
			if DisplayWidth(l) != want {
				t.Errorf("%s: line %d columns, the box %d: %q", tc.name, DisplayWidth(l), want, l)
			}
		}
		if !strings.Contains(out, "LEARN  🔭 PR #28 rejected") {
			t.Errorf("%s: no telescope on LEARN:\n%s", tc.name, out)
		}
	}
	golden(t, "card_fixture_box80", RenderCard(c, Style{Terminal: true, Width: 80}, false))
}

// Colour only when the style allows it, and the box stays aligned with it.
func TestStep7_CycleCardColour(t *testing.T) {
	c := cardOf(t, copyDir(t, cardFixture)).Card
	out := RenderCard(c, colourStyle, false)
	if !strings.Contains(out, "\x1b[32m✓\x1b[0m") {
		t.Errorf("no green gate mark:\n%q", out)
	}
	plain := RenderCard(c, boxStyle, false)
	if strings.Contains(plain, "\x1b") {
		t.Errorf("colour without Color: %q", plain)
	}
	a, b := strings.Split(out, "\n"), strings.Split(plain, "\n")
	for i := range a {
		if DisplayWidth(a[i]) != DisplayWidth(b[i]) {
			t.Errorf("line %d: %d columns coloured, %d not", i, DisplayWidth(a[i]), DisplayWidth(b[i]))
		}
	}
}

// Text from the state cannot drive the terminal or forge a line, and a
// known secret is masked.
func TestStep7_CycleCardEscapesStateText(t *testing.T) {
	entry := `{"cycle": 9, "timestamp": "2026-03-02T10:00:00Z", "action": "execute", "selected_domain": "backlog\u001b[2J",
		"selected_skill": "/plan-backlog", "score": 3, "confidence": 0.7, "result": "success",
		"orient_summary": "fine\n[Record] Cycle #10 recorded\u202e", "summary": "found \u001b]0;title\u0007"}`
	v, _ := cardProject(t, map[string]string{
		"config.json":                   strings.Replace(cardConfig, `"shop"`, `"shop\u001b[31m"`, 1),
		"agent/state/evolve/state.json": entryState(entry),
	})
	for _, s := range []Style{{}, boxStyle} {
		out := RenderCard(v.Card, s, false)
		if strings.ContainsAny(out, "\x1b\a\u202e") {
			t.Errorf("a control character reached the output: %q", out)
		}
		if strings.Contains(out, "\n[Record]") {
			t.Errorf("a line was forged: %q", out)
		}
		if !strings.Contains(out, `backlog\x1b[2J`) {
			t.Errorf("the escape is not shown as text: %q", out)
		}
	}
}

// A corrupt state.json is named, and the card is "no cycle"; a corrupt
// lens changelog is named and the rest of the card stays.
func TestStep7_CycleCardNamesCorruptFiles(t *testing.T) {
	v, dir := cardProject(t, map[string]string{"agent/state/evolve/state.json": `{"cycle_count": 3, "decision_log": [`})
	if v.Card != nil || len(v.Corrupt) != 1 || v.Corrupt[0] != filepath.Join(dir, "agent/state/evolve/state.json") {
		t.Errorf("corrupt state.json: card %v, corrupt %v", v.Card, v.Corrupt)
	}
	v, dir = cardProject(t, map[string]string{
		"agent/state/evolve/state.json":                  entryState("{" + executed + "}"),
		"agent/state/service_health/lens_changelog.json": `{"entries": [`,
		"agent/state/evolve/cost_ledger.json":            `{"date": "2026-03-02", "entries": "x"`,
		"agent/state/evolve/outcomes.json":               `not json`, // not read by the card
	})
	want := []string{filepath.Join(dir, "agent/state/evolve/cost_ledger.json"), filepath.Join(dir, "agent/state/service_health/lens_changelog.json")}
	if v.Card == nil || strings.Join(v.Corrupt, "\n") != strings.Join(want, "\n") {
		t.Errorf("corrupt = %v, want %v (card %v)", v.Corrupt, want, v.Card != nil)
	}
	if v.Card != nil && (v.Card.Cost.TodayUSD != nil || v.Card.Cost.CycleUSD == nil) {
		t.Errorf("cost with a corrupt ledger: %+v", v.Card.Cost)
	}
}

// The card's JSON has every key, with null for what is missing.
func TestStep7_CycleCardJSONKeys(t *testing.T) {
	v, _ := cardProject(t, map[string]string{"agent/state/evolve/state.json": entryState(`{"cycle": 9}`)})
	b, err := json.Marshal(v.Card)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"project", "cycle", "timestamp", "observe", "orient", "decide", "act", "learn", "cost", "halt", "level", "level_name", "share"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing: %s", k, b)
		}
	}
	if m["timestamp"] != nil || m["orient"] != nil {
		t.Errorf("missing data not null: %s", b)
	}
}
