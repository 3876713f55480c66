package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/state"
)

// artifactConfig is a one-domain project whose rubric grades a web
// service: latency (p95 from a capture script, two targets) and errors.
const artifactConfig = `{
  "mission": "a fast, reliable service",
  "domains": {"build": {"weight": 1, "mission_alignment": 1, "primary_skill": "/build", "fallback": true,
    "quality_rubric": {"bar": 0.9, "plateau_window": 3, "dimensions": [
      {"name": "latency", "weight": 2, "capture_method": "command", "capture_command": "sh capture.sh",
       "targets": [{"metric": "p95_ms", "op": "<=", "value": 200}, {"metric": "p95_ms", "op": "<=", "value": 300}],
       "techniques": ["connection pooling", "response cache"]},
      {"name": "errors", "weight": 1, "capture_method": "command", "capture_command": "sh capture.sh",
       "targets": [{"metric": "error_rate", "op": "<=", "value": 0.05}]}]}}},
  "skills": {"/build": {"command": ["/bin/sh", "build.sh"]}},
  "git": {"commit_state": false},
  "leap": {"max_per_day": 10, "max_lines": 800},
  "safety": {"skill_allowlist": ["/build"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0,
    "protected_paths": ["config.json", "capture.sh"]}
}`

// captureScript prints the service's numbers as JSON; it fails when the
// file capture_fails exists.
const captureScript = `if [ -e capture_fails ]; then echo "load generator crashed" >&2; exit 3; fi
printf '{"p95_ms": %s, "error_rate": 0.01}\n' "$(cat p95)"
`

// buildScript is the build skill: on a leap or rewrite cycle it applies the
// next move of the file moves (milliseconds taken off p95, negative for
// a regression) and commits it, unless the move line says nocommit; it
// logs the leap variables it was given.
const buildScript = `echo "$OODA_CYCLE_MODE target=$OODA_TARGET_DIMENSION max_lines=$OODA_LEAP_MAX_LINES brief=$OODA_LEAP_BRIEF" >> modes.log
if [ "$OODA_CYCLE_MODE" != feature ]; then
  set -- $(head -n 1 moves)
  tail -n +2 moves > moves.next && mv moves.next moves
  echo $(( $(cat p95) - $1 )) > p95
  if [ "$2" != nocommit ]; then git add p95 && git commit --quiet -m "leap on latency"; fi
  echo "scratch" > "leap-notes-$OODA_CYCLE.txt"
fi
printf '{"had_output": true, "artifact_changed": true, "summary": "tuned the service"}' > "$OODA_REPORT"
`

// artifactProject is the rubric project in a git repository; moves and
// modes.log are the script's own files, untracked from the start.
func artifactProject(t *testing.T, moves string) string {
	t.Helper()
	dir, _ := gitProject(t, artifactConfig, map[string]string{"capture.sh": captureScript, "build.sh": buildScript, "p95": "400\n"})
	write(t, filepath.Join(dir, "moves"), moves)
	write(t, filepath.Join(dir, "modes.log"), "")
	return dir
}

// recordedHashes is a checkpoint's rubric_hashes.
func recordedHashes(t *testing.T, cp state.Checkpoint) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(cp.Extra[rubricHashesKey], &m); err != nil {
		t.Fatalf("rubric_hashes: %v", err)
	}
	return m
}

func outcomeEntries(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var o struct {
		Entries []map[string]any `json:"entries"`
	}
	readJSON(t, filepath.Join(dir, "agent/state/evolve/outcomes.json"), &o)
	return o.Entries
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// golden compares got with testdata/artifact/<name>; OODA_UPDATE_GOLDEN=1
// rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "artifact", name)
	if os.Getenv("OODA_UPDATE_GOLDEN") == "1" {
		write(t, p, got)
		return
	}
	want := readFile(t, p)
	if got != want {
		t.Errorf("%s differs from the golden file (OODA_UPDATE_GOLDEN=1 rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestStep5G_2G_3K_4C2_ArtifactAxisEndToEnd drives a rubric domain through
// scored cycles, a plateau, a leap that is kept and locks its dimension
// below bar, a leap that regresses and is reverted (its commit reverted),
// another that fails, the stall→rewrite escalation and the HALT.
func TestStep5G_2G_3K_4C2_ArtifactAxisEndToEnd(t *testing.T) {
	// Leap moves: +150 ms kept; -100 ms committed and regressed; -50 ms
	// left uncommitted (failed); the rewrite 0 (failed).
	dir := artifactProject(t, "150\n-100\n-50 nocommit\n0\n")
	var outs []string
	cycle := func(i int) (Result, string) {
		res, out := run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
		outs = append(outs, out)
		return res, out
	}
	p95 := func() string { return strings.TrimSpace(readFile(t, filepath.Join(dir, "p95"))) }

	// 1: a feature cycle, graded; the rubric hash recorded on first use.
	res, out := cycle(1)
	if res.ResultType != "action_extracted" || !strings.Contains(out, "[5-G] Critique of build: artifact 0.333, weakest 'latency'.") {
		t.Fatalf("cycle 1:\n%s", out)
	}
	var cps state.Checkpoints
	readJSON(t, filepath.Join(dir, "agent/state/evolve/checkpoints.json"), &cps)
	if n := len(cps.Checkpoints); n != 1 || cps.Checkpoints[0].RubricHash == nil || recordedHashes(t, cps.Checkpoints[0])["build"] != *cps.Checkpoints[0].RubricHash {
		t.Fatalf("rubric hash not recorded: %+v", cps.Checkpoints)
	}

	// 2: below bar_leap: plateau, leap on latency, kept (0 → 0.5), still
	// below bar: the remainder is queued.
	_, out = cycle(2)
	for _, want := range []string{"[Orient] PLATEAU on build (0.333)", "[Decide] LEAP MODE (leap): overhaul 'latency'",
		"[Leap] latency rose 0 → 0.5 (Δ +0.5). Quantum jump confirmed.", "[5-G] Remainder queued: quality remainder: latency at 0.5 is still below bar 0.9."} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 2 lacks %q:\n%s", want, out)
		}
	}
	if p95() != "250" {
		t.Fatalf("the kept leap's change is gone: p95 %s", p95())
	}
	if log := readFile(t, filepath.Join(dir, "modes.log")); !strings.Contains(log, `leap target=latency max_lines=800 brief={"mode":"leap","dimension":"latency","max_lines":800,"techniques":["connection pooling","response cache"]}`) {
		t.Fatalf("the build skill did not get the leap brief:\n%s", log)
	}
	var q state.ActionQueue
	readJSON(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), &q)
	if len(q.Pending) != 1 || q.Pending[0].SourceDomain != "build" || string(q.Pending[0].Extra["origin"]) != `"leap_remainder_auto"` {
		t.Fatalf("remainder not queued: %+v", q.Pending)
	}

	// 3: the dimension stays the target (below bar); this leap commits a
	// regression, which is reverted with a revert commit.
	head := git(t, dir, "rev-parse", "HEAD")
	res, out = cycle(3)
	if res.ResultType != "leap_regressed" || !strings.Contains(out, "[Leap] latency moved 0.5 → 0 (Δ -0.5), less than leap.min_dimension_delta 0.05; reverted.") {
		t.Fatalf("cycle 3:\n%s", out)
	}
	if p95() != "250" || git(t, dir, "log", "-1", "--format=%s") != `Revert "leap on latency"` || git(t, dir, "rev-parse", "HEAD~2") != head {
		t.Fatalf("regressed leap not reverted: p95 %s, log:\n%s", p95(), git(t, dir, "log", "--oneline", "-4"))
	}
	if _, err := os.Stat(filepath.Join(dir, "leap-notes-3.txt")); !os.IsNotExist(err) {
		t.Fatalf("the regressed leap's new file was left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "leap-notes-2.txt")); err != nil {
		t.Fatalf("the kept leap's file, there before this leap, was removed: %v", err)
	}

	// 4: leap again, worse and not committed: the file is restored; two
	// failed attempts.
	if res, out = cycle(4); res.ResultType != "leap_regressed" || p95() != "250" {
		t.Fatalf("cycle 4 (p95 %s):\n%s", p95(), out)
	}
	// 5: the thrashing guard: one rewrite, with its memo.
	res, out = cycle(5)
	if !strings.Contains(out, "[Orient] STALL→REWRITE: leaps on 'latency' (build) stalled 2×.") || res.ResultType != "leap_regressed" {
		t.Fatalf("cycle 5:\n%s", out)
	}
	var memos state.Memos
	readJSON(t, filepath.Join(dir, "agent/state/evolve/memos.json"), &memos)
	found := false
	for _, m := range memos.History {
		found = found || (m.Type == "stall_detected" && strings.Contains(string(m.Extra["dimension"]), "latency"))
	}
	if !found {
		t.Fatalf("no stall_detected memo: %+v", memos.History)
	}
	// 6: the rewrite stalled too: a feature cycle, then the HALT.
	res, out = cycle(6)
	if !res.HaltCreated || !strings.Contains(out, "artifact dimension latency of domain build cannot be moved by the loop") {
		t.Fatalf("cycle 6:\n%s", out)
	}
	if res, _ = cycle(7); res.Status != StatusHalted {
		t.Fatalf("cycle 7 ran under the HALT: %+v", res)
	}

	// The records of the six cycles, and their CHANGELOG entries.
	b, _ := json.MarshalIndent(outcomeEntries(t, dir), "", "  ")
	golden(t, "outcomes.json", string(b)+"\n")
	log := regexp.MustCompile(`(?m)^- \*\*Elapsed\*\*: .*$`).ReplaceAllString(readFile(t, filepath.Join(dir, "agent/state/evolve/CHANGELOG.md")), "- **Elapsed**: (elapsed)")
	golden(t, "CHANGELOG.md", log)
	if modes := readFile(t, filepath.Join(dir, "modes.log")); strings.Count(modes, "rewrite target=latency") != 1 || strings.Count(modes, "leap target=latency") != 3 {
		t.Errorf("modes given to the skill:\n%s", modes)
	}

	// The scorecard over these records: the artifact's KPIs (graded
	// cycles only), and the grade capped by the artifact below its bar.
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	sc := present.BuildScorecard(cfg, state.New(dir), 0)
	if sc.ArtifactCycles != 3 || sc.ArtifactQuality == nil || *sc.ArtifactQuality != 0.556 || !sc.Goodhart.BelowBar || sc.Goodhart.Cap == nil {
		t.Errorf("scorecard: artifact %v over %d cycles, goodhart %+v", sc.ArtifactQuality, sc.ArtifactCycles, sc.Goodhart)
	}
	golden(t, "scorecard.txt", present.RenderScorecard(sc, present.Style{}))
}

// TestStep5G_MutatedRubricHalts: the loop may not change its own grading
// standard — a rubric that differs from the hash recorded on first use
// stops the loop, and the cycle is not graded.
func TestStep5G_MutatedRubricHalts(t *testing.T) {
	dir := artifactProject(t, "")
	if _, out := run(t, dir, t0, false); !strings.Contains(out, "first used: sha256") {
		t.Fatalf("no hash recorded:\n%s", out)
	}
	// Re-indenting and reordering keys is not a change.
	cfg := strings.ReplaceAll(artifactConfig, `"bar": 0.9, "plateau_window": 3`, `"plateau_window": 3,   "bar": 0.90`)
	write(t, filepath.Join(dir, "config.json"), cfg)
	if res, out := run(t, dir, t0.Add(time.Hour), false); res.HaltCreated || strings.Contains(out, "changed since it was first used") {
		t.Fatalf("a re-indented rubric halted:\n%s", out)
	}
	// A target moved is.
	write(t, filepath.Join(dir, "config.json"), strings.Replace(cfg, `"value": 300`, `"value": 450`, 1))
	res, out := run(t, dir, t0.Add(2*time.Hour), false)
	if !res.HaltCreated || !strings.Contains(out, "config.json domains.build.quality_rubric changed since it was first used") {
		t.Fatalf("mutated rubric did not halt:\n%s", out)
	}
	last := outcomeEntries(t, dir)[2]
	if _, graded := last["artifact_score"]; graded {
		t.Errorf("graded against the mutated rubric: %v", last)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json")), "rubric_mutated_build") {
		t.Error("no rubric_mutated gap")
	}
}

// TestStep5G_CaptureFailureIsNullNotAScore: a capture that fails leaves
// every dimension null with a gap; no score is made up, and the cycle's
// quality is not scaled by a fake artifact score.
func TestStep5G_CaptureFailureIsNullNotAScore(t *testing.T) {
	dir := artifactProject(t, "")
	write(t, filepath.Join(dir, "capture_fails"), "")
	res, out := run(t, dir, t0, false)
	if res.ResultType != "action_extracted" || !strings.Contains(out, "[5-G] Critique of build: artifact null") {
		t.Fatalf("cycle:\n%s", out)
	}
	e := outcomeEntries(t, dir)[0]
	if _, ok := e["artifact_score"]; ok {
		t.Errorf("artifact_score made up: %v", e)
	}
	ds, _ := e["dimension_scores"].(map[string]any)
	if v, ok := ds["latency"]; !ok || v != nil || e["quality_multiplier"] != 0.2 {
		t.Errorf("dimension_scores %v, quality %v: want latency null and quality 0.2 (process only)", ds, e["quality_multiplier"])
	}
	gaps := readFile(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"))
	if !strings.Contains(gaps, "latency") || !strings.Contains(gaps, "capture_failure") {
		t.Errorf("no capture-failure gap:\n%s", gaps)
	}
	// No history of scores, no plateau: the next cycle is a feature one.
	if _, out := run(t, dir, t0.Add(time.Hour), false); strings.Contains(out, "LEAP MODE") {
		t.Errorf("leapt without a score:\n%s", out)
	}
	// Once the artifact has a score, a failed capture does not pay better
	// than that score: its quality keeps the last one (0.2 × 0.333), and
	// it is not on mission (0.333 < bar). No leaps here (max_per_day 0).
	write(t, filepath.Join(dir, "config.json"), strings.Replace(artifactConfig, `"max_per_day": 10`, `"max_per_day": 0`, 1))
	os.Remove(filepath.Join(dir, "capture_fails"))
	run(t, dir, t0.Add(2*time.Hour), false) // graded 0.333
	write(t, filepath.Join(dir, "capture_fails"), "")
	_, out = run(t, dir, t0.Add(3*time.Hour), false)
	last := outcomeEntries(t, dir)[3]
	if _, ok := last["artifact_score"]; ok || last["on_mission"] != false || last["quality_multiplier"] != 0.067 {
		t.Errorf("a failed capture after a score: %v\n%s", last, out)
	}
}

// TestStep2C_GoalCappedByArtifactEvidence: a goal of a graded domain whose
// own metric says done is not completed until the artifact held its bar
// for plateau_window graded cycles; until then its progress is capped and
// the evidence kept on the goal.
func TestStep2C_GoalCappedByArtifactEvidence(t *testing.T) {
	dir := artifactProject(t, "")
	write(t, filepath.Join(dir, "p95"), "100\n") // every target met: artifact 1.0
	write(t, filepath.Join(dir, "agent/state/evolve/goals.json"),
		`{"goals": [{"id": "G1", "title": "fast service", "domain": "build", "status": "active", "metric_command": "echo 1", "target": 1}]}`)
	goal := func() map[string]any {
		var gs struct {
			Goals []map[string]any `json:"goals"`
		}
		readJSON(t, filepath.Join(dir, "agent/state/evolve/goals.json"), &gs)
		return gs.Goals[0]
	}
	_, out := run(t, dir, t0, false)
	if g := goal(); g["status"] != "active" || g["progress"] != 0.0 || !strings.Contains(out, "[Orient] Goal G1: progress 1.00 capped at 0.00") || strings.Contains(out, "Goal G1 completed") {
		t.Fatalf("no evidence yet, but %v:\n%s", g, out)
	}
	for i := 1; i <= 2; i++ {
		run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
	}
	if g := goal(); g["status"] != "active" || g["progress"] != 0.99 {
		t.Fatalf("two graded cycles at bar do not complete a goal (plateau_window 3): %v", g)
	}
	_, out = run(t, dir, t0.Add(3*time.Hour), false)
	g := goal()
	ev, _ := g["evidence"].(map[string]any)
	if g["status"] != "completed" || ev["consecutive_above_bar"] != 3.0 || ev["rolling_artifact_mean"] != 1.0 || !strings.Contains(out, "Goal G1 completed") {
		t.Fatalf("held at bar for 3 cycles, but %v:\n%s", g, out)
	}
}

// TestStep4C2_RevertTouchesOnlyWhatTheLeapChanged: a regressed leap's
// revert restores the files the skill changed and removes the ones it
// created, but a path is only ever itself (a file named like a git
// pathspec does not widen the checkout), a symlink it planted is removed
// without its target being touched, and the user's own uncommitted work
// is left as it was.
func TestStep4C2_RevertTouchesOnlyWhatTheLeapChanged(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "precious")
	write(t, outside, "keep me")
	dir, _ := gitProject(t, artifactConfig, map[string]string{"capture.sh": captureScript, "p95": "400\n",
		"wip.txt": "committed\n", ":(glob)*": "magic\n",
		"build.sh": `if [ "$OODA_CYCLE_MODE" != feature ]; then
  echo 500 > p95
  echo changed > ':(glob)*'
  ln -s "` + outside + `" planted-link
fi
printf '{"had_output": true, "artifact_changed": true}' > "$OODA_REPORT"
`})
	run(t, dir, t0, false) // graded: 0.333, below bar_leap
	write(t, filepath.Join(dir, "wip.txt"), "the user's edit\n")
	res, out := run(t, dir, t0.Add(time.Hour), false)
	if res.ResultType != "leap_regressed" {
		t.Fatalf("want a regressed leap:\n%s", out)
	}
	for name, want := range map[string]string{"p95": "400\n", ":(glob)*": "magic\n", "wip.txt": "the user's edit\n"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q after the revert, want %q", name, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "planted-link")); !os.IsNotExist(err) {
		t.Errorf("planted symlink left behind: %v", err)
	}
	if got := readFile(t, outside); got != "keep me" {
		t.Errorf("the symlink's target was touched: %q", got)
	}
}

// TestStep5G_MutatedRubricPlansNoLeap: a rubric changed after its first
// use is caught before plateau detection, so the changed standard cannot
// even choose a leap; the cycle runs as a feature cycle and the HALT
// follows, said once.
func TestStep5G_MutatedRubricPlansNoLeap(t *testing.T) {
	dir := artifactProject(t, "150\n")
	run(t, dir, t0, false) // graded 0.333: the next cycle would leap
	write(t, filepath.Join(dir, "config.json"), strings.Replace(artifactConfig, `"value": 300`, `"value": 310`, 1))
	res, out := run(t, dir, t0.Add(time.Hour), false)
	if strings.Contains(out, "LEAP MODE") || !res.HaltCreated || strings.Count(out, "changed since it was first used (sha256") != 2 {
		t.Fatalf("want no leap, one warning and the HALT:\n%s", out)
	}
	if e := outcomeEntries(t, dir)[1]; e["cycle_mode"] != "feature" {
		t.Errorf("cycle_mode %v", e["cycle_mode"])
	}
}

// TestStep5G_RubricRemovedHaltsAndAcceptingStartsAfresh: emptying or
// removing a rubric once used stops the loop like changing it would (the
// easiest escape from grading is to stop it); a human accepts a new
// rubric by deleting the domain from the newest checkpoint's
// rubric_hashes, and the history under the old rubric then no longer
// plans leaps.
func TestStep5G_RubricRemovedHaltsAndAcceptingStartsAfresh(t *testing.T) {
	dir := artifactProject(t, "0\n0\n0\n0\n")
	run(t, dir, t0, false) // graded 0.333, recorded
	emptied := regexp.MustCompile(`"dimensions": \[(?s:.*)\]\}\}\},`).ReplaceAllString(artifactConfig, `"dimensions": []}}},`)
	if emptied == artifactConfig {
		t.Fatal("test config not emptied")
	}
	write(t, filepath.Join(dir, "config.json"), emptied)
	res, out := run(t, dir, t0.Add(time.Hour), false)
	if !res.HaltCreated || !strings.Contains(out, "the quality_rubric of domain build was removed, emptied or made unusable since its first use") {
		t.Fatalf("an emptied rubric did not halt:\n%s", out)
	}
	// The human writes a new rubric and accepts it.
	write(t, filepath.Join(dir, "config.json"), strings.Replace(artifactConfig, `"value": 300`, `"value": 310`, 1))
	p := filepath.Join(dir, "agent/state/evolve/checkpoints.json")
	var cps map[string]any
	readJSON(t, p, &cps)
	list := cps["checkpoints"].([]any)
	newest := list[len(list)-1].(map[string]any)
	delete(newest["rubric_hashes"].(map[string]any), "build")
	b, _ := json.Marshal(cps)
	write(t, p, string(b))
	os.Remove(filepath.Join(dir, "agent/safety/HALT"))
	res, out = run(t, dir, t0.Add(2*time.Hour), false)
	if res.HaltCreated || strings.Contains(out, "LEAP MODE") || !strings.Contains(out, "[5-G] Rubric of build first used") {
		t.Fatalf("the accepted rubric: want a graded feature cycle that records it:\n%s", out)
	}
	var gaps state.SkillGaps
	readJSON(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json"), &gaps)
	for _, g := range gaps.Gaps {
		if g.Key() == "rubric_mutated_build" && !g.Resolved {
			t.Errorf("the accepted rubric left its change's gap open: %+v", g)
		}
	}
	// From here the history is the new rubric's: cycle 3 on.
	var after state.Checkpoints
	readJSON(t, p, &after)
	var since map[string]int
	if err := json.Unmarshal(after.Checkpoints[len(after.Checkpoints)-1].Extra[rubricSinceKey], &since); err != nil || since["build"] != 3 {
		t.Errorf("rubric_since = %v (%v)", since, err)
	}
}

// verdictJudge answers 7-B with what the file verdict holds, and the 5-F
// critique and the summary with an error (their defaults stand).
const verdictJudge = `in=$(cat)
case "$in" in
*'"kind":"goal_verdict"'*)
  echo "$in" > verdict-request.json
  printf '{"answer": %s}\n' "$(cat verdict)" ;;
*) printf '{"error": "not my kind"}\n' ;;
esac
`

// TestStep7B_GoalVerdictBesideTheOutcome: with eval.enabled the judge's
// verdict is recorded beside the outcome and never moves its quality; a
// verdict that contradicts the artifact's bar is an eval_disagreement gap;
// result types outside eval.grade_on are not asked about.
func TestStep7B_GoalVerdictBesideTheOutcome(t *testing.T) {
	cfg := strings.Replace(artifactConfig, `"git": {"commit_state": false},`,
		`"git": {"commit_state": false}, "eval": {"enabled": true, "model": "small"}, "judge": {"command": ["/bin/sh", "judge.sh"], "timeout": "20s"},`, 1)
	dir, _ := gitProject(t, cfg, map[string]string{"capture.sh": captureScript, "build.sh": buildScript, "p95": "100\n",
		"judge.sh": verdictJudge, "verdict": `{"achieved": false, "reason": "latency is fine but the errors page still fails", "confidence": 0.7}`})
	write(t, filepath.Join(dir, "moves"), "")
	write(t, filepath.Join(dir, "agent/state/evolve/goals.json"), `{"goals": [{"id": "G1", "title": "p95 under 200 ms", "domain": "build", "status": "active"}]}`)
	_, out := run(t, dir, t0, false)
	if !strings.Contains(out, "[Eval] Independent verdict: achieved false (0.70) — latency is fine but the errors page still fails") {
		t.Fatalf("no verdict:\n%s", out)
	}
	e := outcomeEntries(t, dir)[0]
	v, _ := e["verifier_verdict"].(map[string]any)
	if v["achieved"] != false || v["confidence"] != 0.7 || e["quality_multiplier"] != 0.2 || e["artifact_score"] != 1.0 {
		t.Errorf("outcome %v", e)
	}
	req := readFile(t, filepath.Join(dir, "verdict-request.json"))
	for _, want := range []string{`"declared_goal":"p95 under 200 ms"`, `"model":"small"`, `"artifact_score":1`} {
		if !strings.Contains(req, want) {
			t.Errorf("request lacks %s: %s", want, req)
		}
	}
	if gaps := readFile(t, filepath.Join(dir, "agent/state/evolve/skill_gaps.json")); !strings.Contains(gaps, "eval_disagreement_build") || !strings.Contains(gaps, "eval_gap") {
		t.Errorf("no eval_disagreement gap:\n%s", gaps)
	}
	// Not a result it grades: no question asked.
	write(t, filepath.Join(dir, "config.json"), strings.Replace(cfg, `"model": "small"`, `"model": "small", "grade_on": ["pr_created"]`, 1))
	os.Remove(filepath.Join(dir, "verdict-request.json"))
	if _, out = run(t, dir, t0.Add(time.Hour), false); strings.Contains(out, "[Eval]") {
		t.Errorf("asked about an action_extracted cycle:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "verdict-request.json")); !os.IsNotExist(err) {
		t.Errorf("the judge was asked: %v", err)
	}
}

// TestStep5G_SharedCaptureRunsOnce: dimensions that share a capture
// command read one run of it per critique (a load test is not run twice).
func TestStep5G_SharedCaptureRunsOnce(t *testing.T) {
	dir := artifactProject(t, "")
	write(t, filepath.Join(dir, "capture.sh"), "echo run >> capture-runs.txt\n"+captureScript)
	run(t, dir, t0, false)
	if runs := readFile(t, filepath.Join(dir, "capture-runs.txt")); runs != "run\n" {
		t.Errorf("capture ran %d times for two dimensions", strings.Count(runs, "run"))
	}
}

// TestStep6C5b_CostCapAndArtifactHaltShareTheFile: a cycle that reaches the
// cost cap and finds a changed rubric writes one HALT file with both
// reasons; neither replaces the other.
func TestStep6C5b_CostCapAndArtifactHaltShareTheFile(t *testing.T) {
	dir := artifactProject(t, "")
	run(t, dir, t0, false)
	cfg := strings.Replace(artifactConfig, `"value": 300`, `"value": 310`, 1)
	cfg = strings.Replace(cfg, `"git": {"commit_state": false},`, `"git": {"commit_state": false}, "cost": {"daily_limit_usd": 0.01},`, 1)
	write(t, filepath.Join(dir, "config.json"), cfg)
	if res, out := run(t, dir, t0.Add(time.Hour), false); !res.HaltCreated {
		t.Fatalf("no HALT:\n%s", out)
	}
	halt := readFile(t, filepath.Join(dir, "agent/safety/HALT"))
	if !strings.Contains(halt, "Daily cost cap reached") || !strings.Contains(halt, "changed since it was first used") {
		t.Errorf("HALT file lost a reason:\n%s", halt)
	}
}
