package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// Long-horizon tests: the real engine, in-process, driven cycle after cycle
// by an injected clock, with tiny /bin/sh skills. They check what only
// shows up over many cycles: the saturation breaker's thresholds, the
// contrarian check, the weekly episode, principles, action decay and the
// lifecycle of a lens item.

// evolveJSON reads agent/state/evolve/<name> into v.
func evolveJSON(t *testing.T, dir, name string, v any) {
	t.Helper()
	readJSON(t, filepath.Join(dir, "agent/state/evolve", name), v)
}

// evolveBytes is the raw content of agent/state/evolve/<name> (nil when
// the file does not exist).
func evolveBytes(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve", name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

// mustComplete runs one cycle that must complete (exit 0, recorded).
func mustComplete(t *testing.T, dir string, now time.Time) (Result, string) {
	t.Helper()
	res, out := run(t, dir, now, false)
	if res.Status != StatusCompleted || res.ExitCode() != 0 {
		t.Fatalf("cycle at %s: status %s reason %s exit %d\n%s", now.Format(time.RFC3339), res.Status, res.Reason, res.ExitCode(), out)
	}
	return res, out
}

// lastCycleLogLine is the newest line of cycle_log.jsonl.
func lastCycleLogLine(t *testing.T, dir string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(evolveBytes(t, dir, "cycle_log.jsonl"))), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("cycle_log.jsonl: %v", err)
	}
	return m
}

func winnerOf(res Result) string {
	if res.Decision == nil || res.Decision.Winner == nil {
		return ""
	}
	return res.Decision.Winner.Domain
}

// quietProject is one domain whose skill never produces anything: it
// rewrites its state file with the same bytes (no last_run) and reports
// had_output false. The state file exists beforehand, so even the first
// run changes nothing. The weight is high enough that the futile-loop
// penalty of 2-A (−10 from the third futile cycle on) never pushes the only
// domain under the 0.5 minimum score: with 1 hour since the last run its
// dampened staleness is 10·10·ln(1.25)·0.6 ≈ 13.4. It is a fallback domain
// because the "no new data" micro-adjustment (−0.01 a cycle) takes its
// confidence under the 0.6 gate after 11 cycles.
func quietProject(t *testing.T, extraFiles map[string]string) string {
	const cfg = `{"domains": {"quiet": {"weight": 10, "primary_skill": "/quiet", "fallback": true}},
	  "skills": {"/quiet": {"command": ["/bin/sh", "quiet.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": ["/quiet"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 30}}`
	files := map[string]string{
		"quiet.sh": `#!/bin/sh
printf '{"status": "quiet"}\n' > "$OODA_STATE_FILE"
printf '{"had_output": false}\n' > "$OODA_REPORT"
`,
		"agent/state/quiet.json": "{\"status\": \"quiet\"}\n",
	}
	for k, v := range extraFiles {
		files[k] = v
	}
	return project(t, cfg, files)
}

// 2-A2: the counter counts the previous completed cycle, so cycle k sees
// k−1 cycles without output. The warning fires exactly at 5 (cycle 6), the
// boost exactly at 10 (cycle 11), the HALT at 15 (cycle 16), which exits 3.
func TestLongRun_SaturationWarnBoostHalt(t *testing.T) {
	queue := fmt.Sprintf(`{"pending": [
	  {"id": "A-1", "title": "Fix the flaky login test", "source_domain": "quiet", "rice_score": 40, "effective_rice": 40, "status": "pending", "extracted_at": %q, "decay_applied": 0},
	  {"id": "A-2", "title": "Document the deploy script", "source_domain": "quiet", "rice_score": 20, "effective_rice": 20, "status": "pending", "extracted_at": %q, "decay_applied": 0}
	], "in_progress": [], "completed": []}`, state.FormatTime(t0), state.FormatTime(t0))
	dir := quietProject(t, map[string]string{"agent/state/evolve/action_queue.json": queue})
	rice := func() map[string]float64 {
		var q state.ActionQueue
		evolveJSON(t, dir, "action_queue.json", &q)
		out := map[string]float64{}
		for _, a := range q.Pending {
			out[a.ID] = a.Rice()
		}
		return out
	}
	warnings := func() []state.Memo {
		var m state.Memos
		evolveJSON(t, dir, "memos.json", &m)
		var out []state.Memo
		for _, h := range m.History {
			if h.Type == "saturation_warning" {
				out = append(out, h)
			}
		}
		return out
	}

	for k := 1; k <= 15; k++ {
		now := t0.Add(time.Duration(k-1) * time.Hour)
		res, out := mustComplete(t, dir, now)
		if res.Cycle != k || res.Result != "success" || res.ResultType != "futile" {
			t.Fatalf("cycle %d: cycle %d result %s (%s)\n%s", k, res.Cycle, res.Result, res.ResultType, out)
		}
		st := loadState(t, dir)
		if st.ConsecutiveObserveOnlyCycles != k-1 {
			t.Fatalf("after cycle %d: consecutive_observe_only_cycles = %d, want %d", k, st.ConsecutiveObserveOnlyCycles, k-1)
		}
		if n := lastCycleLogLine(t, dir)["saturation"]; n != float64(k-1) {
			t.Errorf("cycle %d: the cycle log records saturation %v, want %d", k, n, k-1)
		}
		w := warnings()
		switch {
		case k < 6 && len(w) != 0:
			t.Fatalf("cycle %d: saturation warning before the counter reached 5: %+v", k, w)
		case k >= 6 && (len(w) != 1 || w[0].Cycle != 6):
			t.Fatalf("cycle %d: want exactly one saturation_warning memo, written at cycle 6; got %+v", k, w)
		}
		if hasWarn := strings.Contains(out, "Saturation warning: 5 consecutive observe-only cycles."); hasWarn != (k == 6) {
			t.Errorf("cycle %d: warning printed = %v\n%s", k, hasWarn, out)
		}
		r := rice()
		wantA1, wantA2 := 40.0, 20.0
		if k >= 11 {
			// The boost is applied once, when the counter equals 10.
			wantA1, wantA2 = 45, 25
		}
		if r["A-1"] != wantA1 || r["A-2"] != wantA2 {
			t.Fatalf("after cycle %d: effective_rice = %v, want A-1 %v, A-2 %v", k, r, wantA1, wantA2)
		}
		if hasBoost := strings.Contains(out, "Saturation boost applied: action queue +5"); hasBoost != (k == 11) {
			t.Errorf("cycle %d: boost printed = %v", k, hasBoost)
		}
		if _, err := os.Stat(filepath.Join(dir, "agent/safety/HALT")); err == nil {
			t.Fatalf("cycle %d: HALT before the counter reached 15", k)
		}
	}

	// Cycle 16 counts cycle 15: 15 cycles without output → HALT, exit 3.
	now := t0.Add(15 * time.Hour)
	res, out := run(t, dir, now, false)
	if !res.HaltCreated || res.ExitCode() != 3 {
		t.Fatalf("cycle 16 must create the HALT and exit 3: %+v\n%s", res, out)
	}
	if !strings.Contains(out, "Saturation halt: 15 cycles. HALT file created.") {
		t.Errorf("halt not announced:\n%s", out)
	}
	halt, err := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if err != nil || !strings.HasPrefix(string(halt), "Observation saturation: 15 cycles without actionable output.") {
		t.Fatalf("HALT = %q (%v)", halt, err)
	}
	st := loadState(t, dir)
	if st.ConsecutiveObserveOnlyCycles != 15 || st.CycleInProgress || st.CycleCount != 15 {
		t.Errorf("state after the halt: count %d, in progress %v, cycle_count %d", st.ConsecutiveObserveOnlyCycles, st.CycleInProgress, st.CycleCount)
	}
	// While the HALT exists nothing runs.
	res, _ = run(t, dir, now.Add(time.Hour), false)
	if res.Status != StatusHalted || res.Reason != ReasonHalt {
		t.Fatalf("a cycle under HALT: %+v", res)
	}

	// A human deletes the HALT: cycle 15 was already counted, so the
	// resumed cycle runs; the one after it counts the resumed cycle (16
	// without output) and halts again.
	if err := os.Remove(filepath.Join(dir, "agent/safety/HALT")); err != nil {
		t.Fatal(err)
	}
	res, out = mustComplete(t, dir, now.Add(2*time.Hour))
	if res.Cycle != 16 || loadState(t, dir).ConsecutiveObserveOnlyCycles != 15 {
		t.Fatalf("resumed cycle: %+v, count %d\n%s", res, loadState(t, dir).ConsecutiveObserveOnlyCycles, out)
	}
	res, _ = run(t, dir, now.Add(3*time.Hour), false)
	halt, _ = os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if !res.HaltCreated || !strings.HasPrefix(string(halt), "Observation saturation: 16 cycles") {
		t.Errorf("after resuming, the next futile cycle halts again at 16: %+v, HALT %q", res, halt)
	}
}

// A cycle with output resets the counter (2-A2: has_output → 0).
func TestLongRun_SaturationResetByOutput(t *testing.T) {
	dir := quietProject(t, nil)
	for k := 1; k <= 4; k++ {
		mustComplete(t, dir, t0.Add(time.Duration(k-1)*time.Hour))
	}
	if n := loadState(t, dir).ConsecutiveObserveOnlyCycles; n != 3 {
		t.Fatalf("counter after 4 quiet cycles = %d, want 3", n)
	}
	// The skill finds something once.
	write(t, filepath.Join(dir, "quiet.sh"), `#!/bin/sh
printf '{"status": "quiet"}\n' > "$OODA_STATE_FILE"
printf '{"had_output": true}\n' > "$OODA_REPORT"
`)
	mustComplete(t, dir, t0.Add(4*time.Hour))
	if n := loadState(t, dir).ConsecutiveObserveOnlyCycles; n != 4 {
		t.Fatalf("cycle 5 still counts cycle 4: %d, want 4", n)
	}
	mustComplete(t, dir, t0.Add(5*time.Hour))
	if n := loadState(t, dir).ConsecutiveObserveOnlyCycles; n != 0 {
		t.Errorf("cycle 6 counts cycle 5, which had output: %d, want 0", n)
	}
}

// A project of three domains in which core is so heavy that it wins
// almost every decision, run every 6 hours for 30 days.
const dominantProject = `{"domains": {
  "core": {"weight": 3.0, "primary_skill": "/core", "fallback": true},
  "docs": {"weight": 0.3, "primary_skill": "/docs"},
  "deps": {"weight": 0.3, "primary_skill": "/deps"}},
  "skills": {"/core": {"command": ["/bin/sh", "skill.sh"]}, "/docs": {"command": ["/bin/sh", "skill.sh"]}, "/deps": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/core", "/docs", "/deps"], "first_cycle_observe_only": false}}`

// 6-C4: the contrarian check runs every 10 cycles and challenges a domain
// that won ≥ 5 of the last 7 decisions by boosting the least-selected
// active domain; the memory cascade writes one episode per completed ISO
// week, never twice.
func TestLongRun_ContrarianChecksAndEpisodes(t *testing.T) {
	dir := project(t, dominantProject, map[string]string{"skill.sh": skillScript})
	const cycles = 120 // every 6 hours for 30 days
	var winners []string
	weekCycles := map[string][]int{} // EP id → cycles run that week
	contrarianAt := map[int]state.Intervention{}
	for i := 0; i < cycles; i++ {
		now := t0.Add(time.Duration(i) * 6 * time.Hour)
		res, out := mustComplete(t, dir, now)
		k := res.Cycle
		winners = append(winners, winnerOf(res))
		y, w := now.ISOWeek()
		id := fmt.Sprintf("EP-%04d-W%02d", y, w)
		weekCycles[id] = append(weekCycles[id], k)

		var m state.Memos
		evolveJSON(t, dir, "memos.json", &m)
		for _, iv := range m.Interventions {
			if iv.Type != "contrarian" || iv.CreatedAtCycle != k {
				continue
			}
			if k%10 != 0 {
				t.Fatalf("cycle %d: contrarian intervention outside the 10-cycle interval: %+v", k, iv)
			}
			contrarianAt[k] = iv
		}
		if k%10 != 0 {
			continue
		}
		// Recompute the rule from the record: the last 7 decisions and the
		// selection counts over the decision log.
		st := loadState(t, dir)
		last7 := map[string]int{}
		top, topN := "", 0
		for _, d := range winners[len(winners)-min(7, len(winners)):] {
			last7[d]++
			if last7[d] > topN {
				top, topN = d, last7[d]
			}
		}
		sel := map[string]int{}
		for _, e := range st.DecisionLog {
			if !e.IsSkip() {
				sel[e.SelectedDomain]++
			}
		}
		least, leastN := "", 1<<30
		for _, d := range []string{"core", "docs", "deps"} {
			if d != top && sel[d] < leastN {
				least, leastN = d, sel[d]
			}
		}
		iv, ok := contrarianAt[k]
		if topN < 5 {
			if ok {
				t.Errorf("cycle %d: no domain won 5 of the last 7 (%v) but a contrarian intervention was added", k, last7)
			}
			continue
		}
		if !ok {
			// An identical intervention still active is not added twice.
			dup := false
			for _, x := range m.Interventions {
				dup = dup || (x.Type == "contrarian" && x.Domain == least)
			}
			if !dup {
				t.Errorf("cycle %d: %s won %d of the last 7 but no contrarian intervention was added\n%s", k, top, topN, out)
			}
			continue
		}
		if iv.Domain != least || iv.Delta != 1.0 || iv.ExpiresAfterCycles != 3 {
			t.Errorf("cycle %d: contrarian intervention %+v, want +1.0 for 3 cycles on %s (least selected: %v)", k, iv, least, sel)
		}
		found := false
		for _, h := range m.History {
			found = found || (h.Type == "contrarian" && h.Cycle == k && h.Domain == least)
		}
		if !found {
			t.Errorf("cycle %d: no contrarian memo in the history: %+v", k, m.History)
		}
	}
	for _, k := range []int{10, 20} {
		if _, ok := contrarianAt[k]; !ok {
			t.Errorf("no contrarian intervention at cycle %d (winners %v)", k, winners[:k])
		}
	}

	// The run started on Tuesday of 2026-W16 and ended on Thursday of
	// 2026-W20: W16..W19 are complete and each gets exactly one episode.
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	want := []string{"EP-2026-W16", "EP-2026-W17", "EP-2026-W18", "EP-2026-W19"}
	if len(eps.Episodes) != len(want) {
		t.Fatalf("episodes = %d, want %d: %+v", len(eps.Episodes), len(want), eps.Episodes)
	}
	for i, ep := range eps.Episodes {
		if ep.ID != want[i] {
			t.Errorf("episode %d is %s, want %s", i, ep.ID, want[i])
			continue
		}
		cs := weekCycles[ep.ID]
		if ep.TotalCycles != len(cs) || len(ep.CycleRange) != 2 || ep.CycleRange[0] != cs[0] || ep.CycleRange[1] != cs[len(cs)-1] {
			t.Errorf("%s: total_cycles %d, cycle_range %v; the week ran cycles %d..%d (%d)", ep.ID, ep.TotalCycles, ep.CycleRange, cs[0], cs[len(cs)-1], len(cs))
		}
		// Written by the first cycle of the following week.
		next := want[i]
		if i+1 < len(want) {
			next = want[i+1]
		} else {
			next = "EP-2026-W20"
		}
		first := weekCycles[next][0]
		if wantAt := state.FormatTime(t0.Add(time.Duration(first-1) * 6 * time.Hour)); ep.CreatedAt != wantAt {
			t.Errorf("%s created_at %s, want %s (first cycle of the next week)", ep.ID, ep.CreatedAt, wantAt)
		}
		if ep.DomainsSelected["core"] < ep.TotalCycles/2 || len(ep.Lessons) == 0 {
			t.Errorf("%s: domains %v, lessons %v", ep.ID, ep.DomainsSelected, ep.Lessons)
		}
	}

	// A month of cycles leaves every bounded file within its bound, and
	// the append-only cycle log complete.
	st := loadState(t, dir)
	var rs state.Reflections
	evolveJSON(t, dir, "reflections.json", &rs)
	var outs state.Outcomes
	evolveJSON(t, dir, "outcomes.json", &outs)
	var m state.Memos
	evolveJSON(t, dir, "memos.json", &m)
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	var lens state.Lens
	readJSON(t, filepath.Join(dir, "agent/state/core/lens.json"), &lens)
	logLines := strings.Count(string(evolveBytes(t, dir, "cycle_log.jsonl")), "\n")
	changelog := strings.Count(string(evolveBytes(t, dir, "CHANGELOG.md")), "\n## Cycle #")
	if len(st.DecisionLog) != 20 || len(rs.Reflections) != 20 || len(outs.Entries) != cycles || len(m.History) > 10 ||
		len(gaps.Gaps) > 50 || len(lens.Evidence) != 20 || logLines != cycles || changelog != 50 {
		t.Errorf("after %d cycles: decision_log %d (20), reflections %d (20), outcomes %d (%d), memo history %d (≤ 10), gaps %d (≤ 50), "+
			"core lens evidence %d (20), cycle_log lines %d (%d), CHANGELOG entries %d (50)",
			cycles, len(st.DecisionLog), len(rs.Reflections), len(outs.Entries), cycles, len(m.History), len(gaps.Gaps),
			len(lens.Evidence), logLines, cycles, changelog)
	}
	if st.CycleCount != cycles || st.DecisionLog[19].Cycle != cycles {
		t.Errorf("cycle_count %d, newest entry %d", st.CycleCount, st.DecisionLog[19].Cycle)
	}
}

// 6-C4, exactly once: any number of cycles in the week after a completed
// week writes its episode once, on the first of them, and never rewrites
// it.
func TestLongRun_OneEpisodePerWeekExactlyOnce(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	// Three cycles in 2026-W16 (Tue 14 .. Thu 16 April).
	for i := 0; i < 3; i++ {
		mustComplete(t, dir, t0.Add(time.Duration(i)*24*time.Hour))
	}
	if b := evolveBytes(t, dir, "episodes.json"); b != nil {
		var eps state.Episodes
		evolveJSON(t, dir, "episodes.json", &eps)
		if len(eps.Episodes) != 0 {
			t.Fatalf("an episode for an unfinished week: %+v", eps.Episodes)
		}
	}
	// Then 40 cycles in 2026-W17, every 4 hours from Monday 00:00.
	monday := time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)
	var first []byte
	written := 0
	for i := 0; i < 40; i++ {
		now := monday.Add(time.Duration(i) * 4 * time.Hour)
		_, out := mustComplete(t, dir, now)
		written += strings.Count(out, "[Memory] Episode EP-2026-W16 written")
		b := evolveBytes(t, dir, "episodes.json")
		if i == 0 {
			first = b
			continue
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("cycle %d of the week rewrote episodes.json:\n%s\nwas\n%s", i+1, b, first)
		}
	}
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if written != 1 || len(eps.Episodes) != 1 {
		t.Fatalf("announced %d times; episodes %+v", written, eps.Episodes)
	}
	ep := eps.Episodes[0]
	if ep.ID != "EP-2026-W16" || ep.WeekStart != "2026-04-13" || ep.WeekEnd != "2026-04-19" || ep.TotalCycles != 3 ||
		len(ep.CycleRange) != 2 || ep.CycleRange[0] != 1 || ep.CycleRange[1] != 3 || ep.CreatedAt != "2026-04-20T00:00:00Z" {
		t.Errorf("episode = %+v", ep)
	}
}

// ISO weeks belong to ISO years: 2026-12-28 .. 2027-01-03 is 2026-W53, and
// the week after it is 2027-W01.
func TestLongRun_EpisodeIDUsesTheISOYearAcrossNewYear(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	mustComplete(t, dir, time.Date(2026, 12, 30, 9, 0, 0, 0, time.UTC)) // Wednesday, 2026-W53
	mustComplete(t, dir, time.Date(2027, 1, 2, 9, 0, 0, 0, time.UTC))   // Saturday, still 2026-W53
	mustComplete(t, dir, time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC))   // Tuesday, 2027-W01
	mustComplete(t, dir, time.Date(2027, 1, 12, 9, 0, 0, 0, time.UTC))  // Tuesday, 2027-W02
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if len(eps.Episodes) != 2 {
		t.Fatalf("episodes = %+v", eps.Episodes)
	}
	a, b := eps.Episodes[0], eps.Episodes[1]
	if a.ID != "EP-2026-W53" || a.WeekStart != "2026-12-28" || a.WeekEnd != "2027-01-03" || a.TotalCycles != 2 {
		t.Errorf("first episode = %+v", a)
	}
	if b.ID != "EP-2027-W01" || b.WeekStart != "2027-01-04" || b.TotalCycles != 1 {
		t.Errorf("second episode = %+v", b)
	}
}

// 6-C6: factor = min((⌊(age − D)/D⌋ + 1) × amount, 1) for age ≥ D days,
// effective = rice × (1 − factor); no second decay within D days of the
// last one; an item worth nothing moves to completed as superseded.
func TestLongRun_ActionDecaySchedule(t *testing.T) {
	now := t0
	at := func(days int) string { return state.FormatTime(now.Add(-time.Duration(days) * 24 * time.Hour)) }
	queue := fmt.Sprintf(`{"pending": [
	  {"id": "A-14", "title": "Rotate the API keys", "source_domain": "service_health", "rice_score": 100, "effective_rice": 100, "status": "pending", "extracted_at": %q, "decay_applied": 0},
	  {"id": "A-28", "title": "Split the billing module", "source_domain": "service_health", "rice_score": 100, "effective_rice": 100, "status": "pending", "extracted_at": %q, "decay_applied": 0},
	  {"id": "A-old", "title": "Migrate to the new CI runner", "source_domain": "backlog", "rice_score": 100, "effective_rice": 100, "status": "pending", "extracted_at": %q, "decay_applied": 0},
	  {"id": "A-new", "title": "Add a health endpoint", "source_domain": "service_health", "rice_score": 100, "effective_rice": 100, "status": "pending", "extracted_at": %q, "decay_applied": 0}
	], "in_progress": [], "completed": []}`, at(14), at(28), at(400), at(1))
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript, "agent/state/evolve/action_queue.json": queue})

	type view struct {
		factor, eff float64
		lastDecay   string
	}
	read := func() (map[string]view, map[string]string) {
		var q state.ActionQueue
		evolveJSON(t, dir, "action_queue.json", &q)
		pending := map[string]view{}
		for _, a := range q.Pending {
			v := view{eff: a.Rice()}
			if a.DecayApplied != nil {
				v.factor = *a.DecayApplied
			}
			if raw, ok := a.Extra["last_decay_at"]; ok {
				v.lastDecay = strings.Trim(string(raw), `"`)
			}
			pending[a.ID] = v
		}
		done := map[string]string{}
		for _, a := range q.Completed {
			done[a.ID] = a.Status
		}
		return pending, done
	}
	check := func(when string, got map[string]view, want map[string]view) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: pending %v, want %v", when, got, want)
		}
		for id, w := range want {
			if g, ok := got[id]; !ok || g != w {
				t.Errorf("%s: %s = %+v, want %+v", when, id, g, w)
			}
		}
	}

	mustComplete(t, dir, now)
	p, done := read()
	stamp := state.FormatTime(now)
	check("first cycle", p, map[string]view{
		"A-14":  {0.05, 95, stamp},
		"A-28":  {0.10, 90, stamp},
		"A-new": {0, 100, ""},
	})
	if done["A-old"] != "superseded" {
		t.Errorf("an item whose factor reached 1 must be superseded: completed %v", done)
	}

	// A day later (within D = 14 days of the decay) nothing decays again.
	mustComplete(t, dir, now.Add(24*time.Hour))
	p, _ = read()
	check("a day later", p, map[string]view{
		"A-14":  {0.05, 95, stamp},
		"A-28":  {0.10, 90, stamp},
		"A-new": {0, 100, ""},
	})

	// 14 days after the first decay, the factors are recomputed from the
	// age (absolute, never compounded): 28 → 0.10, 42 → 0.15, 15 → 0.05.
	later := now.Add(14 * 24 * time.Hour)
	mustComplete(t, dir, later)
	p, _ = read()
	stamp2 := state.FormatTime(later)
	check("14 days later", p, map[string]view{
		"A-14":  {0.10, 90, stamp2},
		"A-28":  {0.15, 85, stamp2},
		"A-new": {0.05, 95, stamp2},
	})
}

// idleProject is one domain whose skill never has output (as quietProject)
// with weight 1: a futile domain's dampened staleness after a day is well
// above the −10 futile-loop penalty.
func idleProject(t *testing.T) string {
	const cfg = `{"domains": {"idle": {"weight": 1, "primary_skill": "/idle", "fallback": true}},
	  "skills": {"/idle": {"command": ["/bin/sh", "idle.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": ["/idle"], "first_cycle_observe_only": false}}`
	return project(t, cfg, map[string]string{
		"idle.sh": `#!/bin/sh
printf '{"status": "idle"}\n' > "$OODA_STATE_FILE"
`,
		"agent/state/idle.json": "{\"status\": \"idle\"}\n",
	})
}

// 5-F → 6-C4: the lesson of a domain futile twice running is recorded in
// the week's reflections; when it recurs in two weekly episodes it becomes
// a principle (0.3) citing both, and a third episode confirms it (+0.1).
func TestLongRun_PrincipleFromRepeatedLesson(t *testing.T) {
	dir := idleProject(t)
	const lesson = "When idle yields nothing twice running, skip it for 3 cycles."
	// 2026-W16: two futile cycles; the second teaches the lesson.
	mustComplete(t, dir, t0)
	res, out := mustComplete(t, dir, t0.Add(time.Hour))
	if res.ResultType != "futile" || !strings.Contains(out, "Lesson: "+lesson) {
		t.Fatalf("second futile cycle: %s\n%s", res.ResultType, out)
	}
	// 2026-W17 (Monday 20 April): episode W16 is written; the domain is
	// still futile, so the lesson recurs.
	w17 := time.Date(2026, 4, 20, 9, 0, 0, 0, time.UTC)
	_, out = mustComplete(t, dir, w17)
	if !strings.Contains(out, "[Memory] Episode EP-2026-W16 written") || !strings.Contains(out, "Lesson: "+lesson) {
		t.Fatalf("first W17 cycle:\n%s", out)
	}
	var ps state.Principles
	if evolveBytes(t, dir, "principles.json") != nil {
		evolveJSON(t, dir, "principles.json", &ps)
		if len(ps.Principles) != 0 {
			t.Fatalf("a principle from a single episode: %+v", ps.Principles)
		}
	}
	// 2026-W18: episode W17 holds the lesson again → principle.
	w18 := w17.Add(7 * 24 * time.Hour)
	_, out = mustComplete(t, dir, w18)
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if len(eps.Episodes) != 2 || !hasString(eps.Episodes[0].Lessons, lesson) || !hasString(eps.Episodes[1].Lessons, lesson) {
		t.Fatalf("both episodes must hold the lesson: %+v", eps.Episodes)
	}
	evolveJSON(t, dir, "principles.json", &ps)
	if len(ps.Principles) != 1 {
		t.Fatalf("principles = %+v\n%s", ps.Principles, out)
	}
	p := ps.Principles[0]
	if p.Text != lesson || p.Confidence != 0.3 || p.Kind != "" || p.Occurrences != 2 ||
		strings.Join(p.SourceEpisodes, ",") != "EP-2026-W16,EP-2026-W17" || p.CreatedAt != state.FormatTime(w18) {
		t.Errorf("principle = %+v", p)
	}
	if !strings.Contains(out, "[Memory] Principle "+p.ID+" extracted") {
		t.Errorf("principle not announced:\n%s", out)
	}
	// More cycles in W18 neither duplicate nor re-confirm it.
	mustComplete(t, dir, w18.Add(24*time.Hour))
	evolveJSON(t, dir, "principles.json", &ps)
	if len(ps.Principles) != 1 || ps.Principles[0].Confidence != 0.3 {
		t.Fatalf("principles after another W18 cycle = %+v", ps.Principles)
	}
	// 2026-W19: episode W18 holds the lesson a third time → confirmed.
	mustComplete(t, dir, w18.Add(7*24*time.Hour))
	evolveJSON(t, dir, "principles.json", &ps)
	if len(ps.Principles) != 1 {
		t.Fatalf("principles = %+v", ps.Principles)
	}
	p = ps.Principles[0]
	if p.Confidence != 0.4 || strings.Join(p.SourceEpisodes, ",") != "EP-2026-W16,EP-2026-W17,EP-2026-W18" || p.Occurrences != 3 {
		t.Errorf("confirmed principle = %+v", p)
	}
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// 5-E over 15 cycles: latency_ms swings between 10 and 100 for six cycles,
// then stays at 50. The focus item is added at 0.3 once three values exist,
// confirmed +0.1 per cycle while the last-5 window is volatile (promoted
// when it reaches 0.6), decays −0.2 per cycle once the window is flat and
// is deprecated below 0.1. Every step is in lens_changelog.json.
func TestLongRun_LensItemLifecycle(t *testing.T) {
	cfg := `{"domains": {"api": {"weight": 1, "primary_skill": "/probe", "fallback": true}},
	  "skills": {"/probe": {"command": ["/bin/sh", "probe.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": ["/probe"], "first_cycle_observe_only": false}}`
	values := []int{10, 100, 10, 100, 10, 100, 50, 50, 50, 50, 50, 50, 50, 50, 50}
	var vs strings.Builder
	for _, v := range values {
		fmt.Fprintf(&vs, "%d\n", v)
	}
	dir := project(t, cfg, map[string]string{
		"values.txt": vs.String(),
		// The metric of cycle N is line N; "run" changes every cycle (a new
		// last_run alone is not output), so every run has output and the
		// futile penalty never applies.
		"probe.sh": `#!/bin/sh
v=$(sed -n "${OODA_CYCLE}p" values.txt)
printf '{"last_run": "%s", "run": %s, "metrics": {"latency_ms": %s}}\n' "$OODA_NOW" "$OODA_CYCLE" "$v" > "$OODA_STATE_FILE"
`,
	})
	const item = "latency_ms variability"
	type step struct {
		cycle         int
		kind          string
		before, after float64 // before −1: none
	}
	want := []step{
		{3, "added", -1, 0.3},
		{4, "confirmed", 0.3, 0.4},
		{5, "confirmed", 0.4, 0.5},
		{6, "promoted", 0.5, 0.6},
		{7, "confirmed", 0.6, 0.7},
		{8, "confirmed", 0.7, 0.8},
		{9, "confirmed", 0.8, 0.9},
		{10, "confirmed", 0.9, 1.0},
		{11, "decayed", 1.0, 0.8},
		{12, "decayed", 0.8, 0.6},
		{13, "decayed", 0.6, 0.4},
		{14, "decayed", 0.4, 0.2},
		{15, "decayed", 0.2, 0},
		{15, "deprecated", 0, 0},
	}
	lensConf := func() (float64, bool) {
		var l state.Lens
		readJSON(t, filepath.Join(dir, "agent/state/api/lens.json"), &l)
		for _, it := range l.FocusItems {
			if it.Item == item {
				return it.Confidence, true
			}
		}
		return 0, false
	}
	for k := 1; k <= len(values); k++ {
		res, out := mustComplete(t, dir, t0.Add(time.Duration(k-1)*time.Hour))
		if winnerOf(res) != "api" || res.Result != "success" {
			t.Fatalf("cycle %d: %+v\n%s", k, res, out)
		}
		conf, present := lensConf()
		var wantConf float64
		wantPresent := false
		for _, s := range want {
			if s.cycle <= k {
				wantConf, wantPresent = s.after, s.kind != "deprecated"
			}
		}
		if present != wantPresent || conf != wantConf {
			t.Errorf("after cycle %d: focus item present %v at %v, want present %v at %v", k, present, conf, wantPresent, wantConf)
		}
	}

	var cl state.LensChangelog
	readJSON(t, filepath.Join(dir, "agent/state/api/lens_changelog.json"), &cl)
	if cl.Domain != "api" || len(cl.Entries) != len(want) {
		t.Fatalf("changelog (%d entries, want %d): %+v", len(cl.Entries), len(want), cl.Entries)
	}
	for i, w := range want {
		e := cl.Entries[i]
		before := -1.0
		if e.Before != nil {
			before = *e.Before
		}
		if e.Cycle != w.cycle || e.ChangeType != w.kind || e.Item != item || e.Domain != "api" || before != w.before || e.After == nil || *e.After != w.after {
			t.Errorf("changelog[%d] = cycle %d %s %q before %v after %v; want cycle %d %s before %v after %v",
				i, e.Cycle, e.ChangeType, e.Item, before, e.After, w.cycle, w.kind, w.before, w.after)
		}
		if wantTS := state.FormatTime(t0.Add(time.Duration(w.cycle-1) * time.Hour)); e.Timestamp != wantTS || e.Reason == "" {
			t.Errorf("changelog[%d]: timestamp %s (want %s), reason %q", i, e.Timestamp, wantTS, e.Reason)
		}
	}
	var l state.Lens
	readJSON(t, filepath.Join(dir, "agent/state/api/lens.json"), &l)
	var dep struct {
		Item         string `json:"item"`
		Kind         string `json:"kind"`
		DeprecatedAt string `json:"deprecated_at"`
	}
	if len(l.DeprecatedItems) == 1 {
		_ = json.Unmarshal(l.DeprecatedItems[0], &dep)
	}
	if len(l.DeprecatedItems) != 1 || dep.Item != item || dep.Kind != "focus_item" || dep.DeprecatedAt != state.FormatTime(t0.Add(14*time.Hour)) {
		t.Errorf("deprecated_items = %s", l.DeprecatedItems)
	}
	if len(l.Evidence) != len(values) {
		t.Errorf("evidence holds %d observations, want %d (cap 20)", len(l.Evidence), len(values))
	}
}

// 6-C4: an episode's key_decisions are the week's top 3 decisions by
// score, over the whole week. A busy week has more cycles than the
// decision log keeps (working_memory_size 20); the first cycles of this
// one, with every domain 168 hours stale, score far above the rest.
func TestLongRun_EpisodeKeyDecisionsSpanTheWholeWeek(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	monday := time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC) // 2026-W17
	type scored struct {
		cycle int
		score float64
	}
	var week []scored
	for i := 0; i < 25; i++ {
		res, _ := mustComplete(t, dir, monday.Add(time.Duration(i)*time.Hour))
		week = append(week, scored{res.Cycle, res.Decision.Winner.Score})
	}
	mustComplete(t, dir, monday.Add(7*24*time.Hour))
	// The three highest scores of the week, ties to the earlier cycle.
	top := append([]scored(nil), week...)
	sort.SliceStable(top, func(i, j int) bool { return top[i].score > top[j].score })
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if len(eps.Episodes) != 1 || eps.Episodes[0].TotalCycles != 25 {
		t.Fatalf("episodes = %+v", eps.Episodes)
	}
	got := eps.Episodes[0].KeyDecisions
	for i := 0; i < 3; i++ {
		want := fmt.Sprintf("cycle #%d:", top[i].cycle)
		if i >= len(got) || !strings.HasPrefix(got[i], want) {
			t.Errorf("key_decisions = %q; want the week's top 3 by score: cycles #%d (%.2f), #%d (%.2f), #%d (%.2f)",
				got, top[0].cycle, top[0].score, top[1].cycle, top[1].score, top[2].cycle, top[2].score)
			break
		}
	}
}

// 6-C4: an episode records the week's contrarian_checks. With the check
// every 7 cycles and core winning nearly everything, 2026-W16 (23 cycles,
// every 6 hours from Tuesday 09:00) has checks at cycles 7, 14 and 21, and
// each of them challenges core.
func TestLongRun_EpisodeCountsTheWeeksContrarianChecks(t *testing.T) {
	cfg := strings.Replace(dominantProject, `"progressive_complexity"`, `"memory": {"contrarian_check_interval": 7}, "progressive_complexity"`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript})
	var checks []int
	now := t0
	for ; now.Before(time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)); now = now.Add(6 * time.Hour) {
		res, _ := mustComplete(t, dir, now)
		var m state.Memos
		evolveJSON(t, dir, "memos.json", &m)
		for _, iv := range m.Interventions {
			if iv.Type == "contrarian" && iv.CreatedAtCycle == res.Cycle {
				checks = append(checks, res.Cycle)
			}
		}
	}
	if fmt.Sprint(checks) != "[7 14 21]" {
		t.Fatalf("contrarian interventions at %v, want [7 14 21]", checks)
	}
	mustComplete(t, dir, now) // Monday of W17: writes EP-2026-W16
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if len(eps.Episodes) != 1 || eps.Episodes[0].TotalCycles != 23 {
		t.Fatalf("episodes = %+v", eps.Episodes)
	}
	if n := eps.Episodes[0].ContrarianChecks; n != 3 {
		t.Errorf("EP-2026-W16 contrarian_checks = %d, want 3 (cycles 7, 14, 21)", n)
	}
}

// 6-C4 decay: a principle not confirmed in the last 10 episodes loses 0.05
// per cycle and is removed below 0.1. The principles-extraction fixture's
// W15/W16 principle ages out once ten newer episodes exist (W17 .. W26).
func TestLongRun_PrincipleDecaysOnceItsEpisodesAgeOut(t *testing.T) {
	src := fixtureDir(t, "principles-extraction")
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	copyTree(t, src, dir)
	const text = "service_health dominated under logarithmic staleness"
	conf := func() (float64, bool) {
		var ps state.Principles
		evolveJSON(t, dir, "principles.json", &ps)
		for _, p := range ps.Principles {
			if p.Text == text {
				return p.Confidence, true
			}
		}
		return 0, false
	}
	// One cycle a week, Mondays of W18 .. W27: each writes the previous
	// week's episode (W18 .. W26 are new).
	w18 := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)
	for w := 0; w < 10; w++ {
		mustComplete(t, dir, w18.Add(time.Duration(w)*7*24*time.Hour))
		c, ok := conf()
		want := 0.3
		if w == 9 {
			// W27: the ten newest episodes are W17 .. W26.
			want = 0.25
		}
		if !ok || c != want {
			t.Fatalf("week %d: principle present %v at %v, want %v", 18+w, ok, c, want)
		}
	}
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if n := len(eps.Episodes); n != 12 || eps.Episodes[n-1].ID != "EP-2026-W26" {
		t.Fatalf("episodes: %d, last %s", n, eps.Episodes[n-1].ID)
	}
	// Then −0.05 per cycle: 0.2, 0.15, 0.1 (kept: not below 0.1), removed.
	w27 := w18.Add(9 * 7 * 24 * time.Hour)
	for i, want := range []float64{0.2, 0.15, 0.1} {
		mustComplete(t, dir, w27.Add(time.Duration(i+1)*time.Hour))
		if c, ok := conf(); !ok || c != want {
			t.Fatalf("decay step %d: present %v at %v, want %v", i+1, ok, c, want)
		}
	}
	mustComplete(t, dir, w27.Add(4*time.Hour))
	if c, ok := conf(); ok {
		t.Errorf("a principle at 0.05 must be removed; still there at %v", c)
	}
}

// 5-E contrarian lens review: every contrarian_check_interval cycles the
// domain's recent had_output rate is compared with its first 3 cycles. Here
// the domain delivered in its first 4 cycles and never again, so the rate
// fell from 100 % to 0 % at every review: cycles 10, 20 and 30.
func TestLongRun_LensReviewComparesWithTheDomainsFirstCycles(t *testing.T) {
	cfg := `{"domains": {"probe": {"weight": 10, "primary_skill": "/probe", "fallback": true}},
	  "skills": {"/probe": {"command": ["/bin/sh", "probe.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "saturation": {"auto_halt": false},
	  "safety": {"skill_allowlist": ["/probe"], "first_cycle_observe_only": false}}`
	// Cycles 1-3 write a new run number, cycle 4 replaces it with a fixed
	// document (still a change), then the file never changes again.
	dir := project(t, cfg, map[string]string{"probe.sh": `#!/bin/sh
if [ "$OODA_CYCLE" -le 3 ]; then
  printf '{"last_run": "%s", "run": %s}
' "$OODA_NOW" "$OODA_CYCLE" > "$OODA_STATE_FILE"
else
  printf '{"status": "quiet"}
' > "$OODA_STATE_FILE"
fi
`})
	var reviews []int
	for k := 1; k <= 30; k++ {
		res, _ := mustComplete(t, dir, t0.Add(time.Duration(k-1)*time.Hour))
		st := loadState(t, dir)
		if want := k <= 4; *st.DecisionLog[len(st.DecisionLog)-1].HadOutput != want {
			t.Fatalf("cycle %d: had_output should be %v", k, want)
		}
		var m state.Memos
		evolveJSON(t, dir, "memos.json", &m)
		for _, h := range m.History {
			if h.Type == "lens_review" && h.Cycle == res.Cycle {
				reviews = append(reviews, res.Cycle)
				if h.Message != "lens review: probe output rate fell from 100% to 0%" {
					t.Errorf("cycle %d: memo %q", k, h.Message)
				}
			}
		}
	}
	if fmt.Sprint(reviews) != "[10 20 30]" {
		t.Errorf("lens review memos at cycles %v, want [10 20 30] (compared with the domain's first 3 cycles ever)", reviews)
	}
}

// 6-C4: an episode's skill_gaps_found is what the week found. The skill
// fails once in 2026-W16 (one execution_error gap), then works: 2026-W17
// finds no gap at all.
func TestLongRun_EpisodeSkillGapsFoundAreTheWeeks(t *testing.T) {
	cfg := `{"domains": {"only": {"weight": 1, "primary_skill": "/work", "fallback": true}},
	  "skills": {"/work": {"command": ["/bin/sh", "skill.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": ["/work"], "first_cycle_observe_only": false}}`
	dir := project(t, cfg, map[string]string{"skill.sh": "exit 1\n"})
	res, _ := run(t, dir, t0, false)
	if res.Result != "error" || res.ExitCode() != 4 {
		t.Fatalf("first cycle should fail: %+v", res)
	}
	write(t, filepath.Join(dir, "skill.sh"), skillScript)
	mustComplete(t, dir, t0.Add(24*time.Hour))
	w17 := time.Date(2026, 4, 20, 9, 0, 0, 0, time.UTC)
	mustComplete(t, dir, w17)                     // writes EP-2026-W16
	mustComplete(t, dir, w17.Add(24*time.Hour))   // W17, no gap
	mustComplete(t, dir, w17.Add(7*24*time.Hour)) // writes EP-2026-W17
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Name != "execution_error_work" || gaps.Gaps[0].Frequency != 1 {
		t.Fatalf("gaps = %+v", gaps.Gaps)
	}
	var eps state.Episodes
	evolveJSON(t, dir, "episodes.json", &eps)
	if len(eps.Episodes) != 2 {
		t.Fatalf("episodes = %+v", eps.Episodes)
	}
	if a, b := eps.Episodes[0].SkillGapsFound, eps.Episodes[1].SkillGapsFound; a != 1 || b != 0 {
		t.Errorf("skill_gaps_found W16 = %d (want 1), W17 = %d (want 0): only gaps first seen in the week count", a, b)
	}
}
