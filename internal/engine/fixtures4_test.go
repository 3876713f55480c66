package engine

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// The original OODA-loop project's fixtures for the Orient and Reflect half
// (SPEC-NOTES 9), run through the real engine: the fixture's files are
// copied into a project and one cycle is run on them.

// fixtureDir is a compat fixture's directory; the test is skipped when
// the fixtures are not available.
func fixtureDir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(compat, "fixtures", name)
	if _, err := os.Stat(d); err != nil {
		t.Skipf("compat fixture %s not available", name)
	}
	return d
}

// copyTree copies every file under src into dst, keeping relative paths.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		write(t, filepath.Join(dst, rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The memo-intervention fixture has no config: these are its four domains
// with the example config's weights, each run by a command skill.
const memoInterventionConfig = `{"domains": {
  "service_health": {"weight": 2.0, "primary_skill": "/scan-health", "fallback": true},
  "test_coverage": {"weight": 0.5, "primary_skill": "/check-tests", "fallback": true},
  "backlog": {"weight": 0.3, "primary_skill": "/plan-backlog"},
  "ux_evolution": {"weight": 1.0, "primary_skill": "/scan-ux", "fallback": true}},
  "skills": {"/scan-health": {"command": ["/bin/sh", "skill.sh"]}, "/check-tests": {"command": ["/bin/sh", "skill.sh"]},
             "/plan-backlog": {"command": ["/bin/sh", "skill.sh"]}, "/scan-ux": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/scan-health", "/check-tests", "/plan-backlog", "/scan-ux"]}}`

// 5-C on the fixture's 16-cycle log: ux_evolution was last selected at
// cycle 5, so after cycle 17 it has not run in cycles 8..17 → a starvation
// intervention (+1.0 for 3 cycles). No domain state file exists, so every
// domain is 168 hours stale and the heaviest, service_health, wins cycle
// 17: its third selection in a row (15, 16, 17) → a monopoly breaker
// (−10 for 1 cycle), and the other domains +1.0 one-shots.
func TestCompatFixture_MemoIntervention(t *testing.T) {
	src := fixtureDir(t, "memo-intervention")
	dir := project(t, memoInterventionConfig, map[string]string{"skill.sh": skillScript})
	copyTree(t, src, dir)
	res, out := mustComplete(t, dir, time.Date(2026, 4, 19, 9, 0, 0, 0, time.UTC))
	if res.Cycle != 17 || winnerOf(res) != "service_health" {
		t.Fatalf("cycle %d won by %q\n%s", res.Cycle, winnerOf(res), out)
	}
	var m state.Memos
	evolveJSON(t, dir, "memos.json", &m)
	ivs := map[string]state.Intervention{}
	for _, iv := range m.Interventions {
		if _, dup := ivs[iv.Type]; dup {
			t.Errorf("two %s interventions: %+v", iv.Type, m.Interventions)
		}
		ivs[iv.Type] = iv
	}
	if len(m.Interventions) != 2 {
		t.Errorf("interventions = %+v", m.Interventions)
	}
	if iv, ok := ivs["starvation"]; !ok || iv.Domain != "ux_evolution" || iv.Delta != 1.0 || iv.CreatedAtCycle != 17 || iv.ExpiresAfterCycles != 3 || iv.AppliedCount != 0 {
		t.Errorf("starvation intervention = %+v", iv)
	}
	if iv, ok := ivs["monopoly_breaker"]; !ok || iv.Domain != "service_health" || iv.Delta != -10 || iv.CreatedAtCycle != 17 || iv.ExpiresAfterCycles != 1 {
		t.Errorf("monopoly breaker = %+v", iv)
	}
	for _, d := range []string{"test_coverage", "backlog", "ux_evolution"} {
		if m.ScoreAdjustments[d] != 1.0 {
			t.Errorf("3 consecutive service_health cycles: %s one-shot = %v, want +1.0", d, m.ScoreAdjustments[d])
		}
	}
	if _, ok := m.ScoreAdjustments["service_health"]; ok {
		t.Errorf("the repeated domain gets no one-shot: %v", m.ScoreAdjustments)
	}
	if !strings.Contains(out, "Starvation intervention: ux_evolution boosted +1.0 for 3 cycles.") ||
		!strings.Contains(out, "Monopoly-breaker intervention: service_health penalized -10.0 for 1 cycle.") {
		t.Errorf("interventions not announced:\n%s", out)
	}
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	var names []string
	for _, g := range gaps.Gaps {
		names = append(names, g.Name)
	}
	if strings.Join(names, ",") != "domain_starvation_ux_evolution" {
		t.Errorf("5-A gaps = %v", names)
	}

	// Cycle 18 applies both: service_health takes −10 and loses.
	res, out = mustComplete(t, dir, time.Date(2026, 4, 19, 10, 0, 0, 0, time.UTC))
	if w := winnerOf(res); w == "service_health" {
		t.Errorf("the monopoly breaker did not stop service_health\n%s", out)
	}
	for _, o := range res.Decision.Options {
		if o.Domain == "service_health" && o.Memo != -10 {
			t.Errorf("service_health memo term = %v, want -10", o.Memo)
		}
		if o.Domain == "ux_evolution" && o.Memo != 2.0 {
			t.Errorf("ux_evolution memo term = %v, want +2.0 (starvation +1, one-shot +1)", o.Memo)
		}
	}
}

// 6-C4 principles on the fixture's three episodes: the W15 and W16 lessons
// about service_health's dominance share 4 of 6 significant tokens
// (Jaccard 0.67 ≥ 0.5), so they become one principle (0.3), worded as the
// most recent lesson, citing both episodes. W17's ten lessons are all
// different, and since a principle was created no candidates are added.
func TestCompatFixture_PrinciplesExtraction(t *testing.T) {
	src := fixtureDir(t, "principles-extraction")
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	copyTree(t, src, dir)
	epsBefore := evolveBytes(t, dir, "episodes.json")
	now := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC) // Monday of 2026-W18
	_, out := mustComplete(t, dir, now)
	var ps state.Principles
	evolveJSON(t, dir, "principles.json", &ps)
	if len(ps.Principles) != 1 {
		t.Fatalf("principles = %+v\n%s", ps.Principles, out)
	}
	p := ps.Principles[0]
	if p.ID != "P-1" || p.Text != "service_health dominated under logarithmic staleness" || p.Confidence != 0.3 || p.Kind != "" ||
		strings.Join(p.SourceEpisodes, ",") != "EP-2026-W15,EP-2026-W16" || p.Occurrences != 2 || p.CreatedAt != state.FormatTime(now) {
		t.Errorf("principle = %+v", p)
	}
	// W17 already has its episode: the file is not rewritten.
	if !bytes.Equal(evolveBytes(t, dir, "episodes.json"), epsBefore) {
		t.Errorf("episodes.json was rewritten")
	}
	// The next cycle sees the same episodes: no duplicate, no confirmation.
	mustComplete(t, dir, now.Add(time.Hour))
	evolveJSON(t, dir, "principles.json", &ps)
	if len(ps.Principles) != 1 || ps.Principles[0].Confidence != 0.3 || len(ps.Principles[0].SourceEpisodes) != 2 {
		t.Errorf("principles after a second cycle = %+v", ps.Principles)
	}
}

// 6-C8 on the fixture: cycle_count 42 and ledger entries only for 37-39.
// Cycle 43 adds its own entry, then the integrity gate backfills 40-42 with
// synthetic $0.02 entries, counts them in the total and records one
// learning_loop_break gap.
func TestCompatFixture_CostLedgerAutopatch(t *testing.T) {
	src := fixtureDir(t, "cost-ledger-autopatch")
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	copyTree(t, src, dir)
	now := time.Date(2026, 4, 19, 12, 0, 0, 0, time.UTC)
	res, out := mustComplete(t, dir, now)
	if res.Cycle != 43 || !strings.Contains(out, "Cost ledger had no entries for 3 cycle(s) ([40 41 42])") {
		t.Fatalf("cycle %d\n%s", res.Cycle, out)
	}
	var l state.CostLedger
	evolveJSON(t, dir, "cost_ledger.json", &l)
	if l.Date != "2026-04-19" || len(l.Entries) != 7 {
		t.Fatalf("ledger = %+v", l)
	}
	for i, e := range l.Entries {
		id := 37 + i
		synthetic := id >= 40 && id <= 42
		if e.CycleID != id || e.Synthetic != synthetic {
			t.Errorf("entry %d = %+v, want cycle %d synthetic %v", i, e, id, synthetic)
		}
		if synthetic && (e.EstimatedUSD != 0.02 || e.Timestamp != state.FormatTime(now)) {
			t.Errorf("synthetic entry = %+v", e)
		}
	}
	if l.TotalEstimatedUSD != 0.16 {
		t.Errorf("total = %v, want 0.16 (0.08 recorded + 0.02 cycle 43 + 3 × 0.02 synthetic)", l.TotalEstimatedUSD)
	}
	// One learning_loop_break gap, as the original's 6-C8 writes it: its
	// frequency is the number of cycles backfilled.
	gapOf := func() (n int, freq int) {
		var gaps state.SkillGaps
		evolveJSON(t, dir, "skill_gaps.json", &gaps)
		for _, g := range gaps.Gaps {
			if g.Type == "learning_loop_break" {
				n++
				freq = g.Frequency
				if g.ID != "gap-cost-ledger-autopatch-43" {
					t.Errorf("loop-break gap id = %q", g.ID)
				}
			}
		}
		return n, freq
	}
	if n, freq := gapOf(); n != 1 || freq != 3 {
		t.Errorf("learning_loop_break gaps = %d (frequency %d), want one for the 3 cycles backfilled", n, freq)
	}
	// The ledger is whole now: the next cycle backfills nothing.
	_, out = mustComplete(t, dir, now.Add(time.Hour))
	evolveJSON(t, dir, "cost_ledger.json", &l)
	if strings.Contains(out, "Cost ledger had no entries") || len(l.Entries) != 8 || l.TotalEstimatedUSD != 0.18 {
		t.Errorf("second cycle: %d entries, total %v\n%s", len(l.Entries), l.TotalEstimatedUSD, out)
	}
	if n, freq := gapOf(); n != 1 || freq != 3 {
		t.Errorf("learning_loop_break after a whole ledger = %d (frequency %d)", n, freq)
	}
}

// 1-A lens pre-init on the fixture's config, with the first cycle allowed
// to act: every active domain's lens.json exists before any skill runs, so
// the winning skill finds its lens at $OODA_LENS on the very first cycle.
func TestCompatFixture_LensPreInitBeforeTheSkillReads(t *testing.T) {
	src := fixtureDir(t, "lens-pre-init")
	b, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), `"safety": {`, `"safety": {"first_cycle_observe_only": false, `, 1)
	cfg = strings.Replace(cfg, `"scoring":`, `"skills": {
	  "/scan-health": {"command": ["/bin/sh", "-c", "cp \"$OODA_LENS\" \"seen-$OODA_DOMAIN.json\""]},
	  "/check-tests": {"command": ["/bin/sh", "-c", "cp \"$OODA_LENS\" \"seen-$OODA_DOMAIN.json\""]},
	  "/plan-backlog": {"command": ["/bin/sh", "-c", "cp \"$OODA_LENS\" \"seen-$OODA_DOMAIN.json\""]}},
	  "scoring":`, 1)
	if !strings.Contains(cfg, `"first_cycle_observe_only": false`) || !strings.Contains(cfg, `"/plan-backlog": {"command"`) {
		t.Fatalf("fixture config changed shape:\n%s", cfg)
	}
	dir := project(t, cfg, nil)
	res, out := mustComplete(t, dir, t0)
	if winnerOf(res) != "service_health" || res.Result != "success" || !strings.Contains(out, "[Observe] Initialized lens for service_health.") {
		t.Fatalf("res = %+v\n%s", res, out)
	}
	var seen state.Lens
	readJSON(t, filepath.Join(dir, "seen-service_health.json"), &seen)
	if seen.Domain != "service_health" || seen.SchemaVersion != "1.0.0" || len(seen.Evidence) != 0 {
		t.Errorf("the skill saw lens %+v, want the freshly initialised one", seen)
	}
	for _, d := range []string{"service_health", "test_coverage", "backlog"} {
		var l state.Lens
		readJSON(t, filepath.Join(dir, "agent/state", d, "lens.json"), &l)
		if l.Domain != d {
			t.Errorf("%s: lens = %+v", d, l)
		}
	}
	// The executed domain's lens then learned from the cycle (5-E).
	var l state.Lens
	readJSON(t, filepath.Join(dir, "agent/state/service_health/lens.json"), &l)
	if len(l.Evidence) != 1 {
		t.Errorf("service_health evidence after its first run = %d entries", len(l.Evidence))
	}
}
