package present

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// scorecardFixture is the original project's scorecard fixture.
const scorecardFixture = "../../../shared/compat/ooda-loop/fixtures/scorecard"

// scCopyTree copies src into dst, so that a test never touches the
// fixture itself.
func scCopyTree(t *testing.T, src, dst string) {
	t.Helper()
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
}

func scWrite(t *testing.T, root, name, content string) {
	t.Helper()
	st := state.New(root)
	if err := os.MkdirAll(st.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.EvolvePath(name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func scFloat(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %s, want %v", name, scOpt(got, ""), want)
	}
}

// SPEC-NOTES §9: the original's scorecard fixture gives exactly the
// figures its own reference script gives.
func TestScorecard_FixtureScorecard(t *testing.T) {
	if _, err := os.Stat(scorecardFixture); err != nil {
		t.Skipf("compat fixture not available: %v", err)
	}
	root := t.TempDir()
	scCopyTree(t, scorecardFixture, root)
	sc := BuildScorecard(&config.Config{}, state.New(root), 0)
	if sc.CyclesScored != 6 || sc.Source != state.OutcomesFile || len(sc.Corrupt) != 0 {
		t.Fatalf("scored %d cycles from %s (corrupt %v)", sc.CyclesScored, sc.Source, sc.Corrupt)
	}
	scFloat(t, "loop value", sc.LoopValueScore, 0.433)
	scFloat(t, "task completion", sc.TaskCompletionRatePct, 33.3)
	scFloat(t, "futile", sc.FutileCycleRatePct, 16.7)
	scFloat(t, "PR merge", sc.PRMergeRatePct, 100)
	scFloat(t, "hold", sc.PRMergeAndHoldRatePct, 100)
	scFloat(t, "queue resolution", sc.ActionResolutionRatePct, 50)
	scFloat(t, "cost per success", sc.CostPerSuccessfulCycle, 0.15)
	scFloat(t, "goal progress", sc.GoalProgressPct, 75)
	scFloat(t, "mission-hit", sc.MissionHitPct, 60)
	scFloat(t, "gap resolution", sc.SkillGapResolutionPct, 50)
	scFloat(t, "lesson application", sc.LessonApplicationPct, 66.7)
	scFloat(t, "grade score", sc.GradeScore, 0.798)
	if sc.ActiveGoals != 2 || sc.Grade == nil || *sc.Grade != "B" || sc.Goodhart.BelowBar || sc.Goodhart.Capped {
		t.Errorf("active goals %d, grade %v, goodhart %+v", sc.ActiveGoals, sc.Grade, sc.Goodhart)
	}
	golden(t, "scorecard_fixture_plain", RenderScorecard(sc, Style{}))
}

// Every key of SPEC-NOTES §7 is in the document, null when there is
// nothing to divide: with no cycle at all every KPI is "—" and there is
// no grade.
func TestScorecard_NoCyclesEveryKPIIsADash(t *testing.T) {
	root := t.TempDir()
	// Files that would give figures if there were cycles.
	scWrite(t, root, state.GoalsFile, `{"goals": [{"id": "g", "status": "active", "progress": 0.5}]}`)
	scWrite(t, root, state.SkillGapsFile, `{"gaps": [{"name": "a", "resolved": true}]}`)
	scWrite(t, root, state.MetricsFile, `{"counters": {"actions_added": 2, "actions_resolved": 1}}`)
	sc := BuildScorecard(&config.Config{}, state.New(root), 0)
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := "window, cycles_scored, artifact_quality, artifact_bar, artifact_cycles, loop_value_score, task_completion_rate_pct, futile_cycle_rate_pct, pr_merge_rate_pct, pr_merge_and_hold_rate_pct, action_resolution_rate_pct, cost_per_successful_cycle, active_goals, goal_progress_pct, mission_hit_pct, skill_gap_resolution_pct, lesson_application_pct, pending_actions, result_breakdown, totals, grade, grade_score, goodhart"
	for _, k := range strings.Split(keys, ", ") {
		if _, ok := doc[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	for _, k := range []string{"artifact_quality", "loop_value_score", "task_completion_rate_pct", "futile_cycle_rate_pct", "pr_merge_rate_pct", "pr_merge_and_hold_rate_pct", "action_resolution_rate_pct", "cost_per_successful_cycle", "goal_progress_pct", "mission_hit_pct", "skill_gap_resolution_pct", "lesson_application_pct", "grade", "grade_score"} {
		if doc[k] != nil {
			t.Errorf("%s = %v with no cycle, want null", k, doc[k])
		}
	}
	if doc["window"] != "all" || doc["cycles_scored"] != 0.0 || doc["active_goals"] != 1.0 || doc["verdict"] != "none" || doc["source"] != "none" {
		t.Errorf("document: %s", b)
	}
	golden(t, "scorecard_empty_plain", RenderScorecard(sc, Style{}))
}

// scLogProject is a project whose cycle log has 24 cycles that improve:
// observing first, then actions, then PRs that merge and hold, graded
// artifacts in the later ones; and the files the learning KPIs read.
func scLogProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var log, notes strings.Builder
	for c := 1; c <= 24; c++ {
		rt, q, pr, art, onMission := "observe", 0.1, "null", "null", c%3 != 0
		switch {
		case c <= 6:
		case c%4 == 0:
			rt, q, pr = "pr_created", 0.5, fmt.Sprint(c)
			fmt.Fprintf(&notes, `{"cycle_id": %d, "annotate": {"result_type": "pr_merged_held", "quality_multiplier": 1.0}, "timestamp": "2026-05-02T00:00:00Z"}`+"\n", c)
		case c%5 == 0:
			rt, q = "futile", 0
		default:
			rt, q = "action_extracted", 0.2
		}
		if c > 12 {
			art = fmt.Sprintf("%.2f", 0.5+float64(c)/100)
		}
		fmt.Fprintf(&log, `{"cycle_id":%d,"timestamp":"2026-05-01T%02d:00:00Z","domain":"api","skill":"/x","score":10,"confidence":0.7,"result":"success","result_type":"%s","quality_multiplier":%v,"pr_number":%s,"had_output":true,"cost_usd":0.05,"saturation":0,"on_mission":%v,"artifact_score":%s}`+"\n", c, c-1, rt, q, pr, onMission, art)
	}
	scWrite(t, root, state.CycleLogFile, log.String())
	scWrite(t, root, state.CycleLogAnnotationsFile, notes.String())
	scWrite(t, root, state.GoalsFile, `{"goals": [{"id": "g1", "status": "active", "progress": 0.8}, {"id": "g2", "status": "done", "progress": 1}]}`)
	scWrite(t, root, state.MetricsFile, `{"counters": {"total_prs_created": 4, "total_prs_merged": 4, "actions_added": 10, "actions_resolved": 7}, "cost": {"total_estimated_usd": 99}}`)
	scWrite(t, root, state.ReflectionsFile, `{"reflections": [{"cycle": 3, "status": "applied"}, {"cycle": 4, "status": "open"}]}`)
	scWrite(t, root, state.SkillGapsFile, `{"gaps": [{"name": "a", "resolved": true}]}`)
	scWrite(t, root, state.ActionQueueFile, `{"pending": [{"id": "a1"}], "completed": []}`)
	// outcomes.json disagrees on purpose: the log wins when it exists.
	scWrite(t, root, state.OutcomesFile, `{"entries": [{"cycle_id": 24, "result_type": "futile", "quality_multiplier": 0}]}`)
	return root
}

// The cycle log is the source when it exists, with its back-annotations
// applied: a PR cycle annotated merged-and-held counts as a success, its
// cost is the log's own, and the window is the last N lines.
func TestScorecard_LogWithAnnotationsAndWindow(t *testing.T) {
	root := scLogProject(t)
	cfg := &config.Config{QualityRubric: json.RawMessage(`{"bar": 0.7}`)}
	sc := BuildScorecard(cfg, state.New(root), 8)
	if sc.Source != state.CycleLogFile || sc.CyclesScored != 8 || sc.Window != 8 {
		t.Fatalf("source %s, %d cycles, window %v", sc.Source, sc.CyclesScored, sc.Window)
	}
	// Cycles 17 to 24: PRs at 20 and 24 (annotated held), futile at none
	// (20 is a PR), actions at 17, 18, 19, 21, 22, 23.
	if sc.ResultBreakdown["pr_merged_held"] != 2 || sc.ResultBreakdown["action_extracted"] != 6 || sc.ResultBreakdown["pr_created"] != 0 {
		t.Errorf("breakdown %v: the annotations were not applied", sc.ResultBreakdown)
	}
	scFloat(t, "task completion", sc.TaskCompletionRatePct, 25)
	scFloat(t, "PR merge", sc.PRMergeRatePct, 100)
	scFloat(t, "hold", sc.PRMergeAndHoldRatePct, 100)
	scFloat(t, "cost per success", sc.CostPerSuccessfulCycle, 0.2) // 8 × 0.05 / 2
	scFloat(t, "loop value", sc.LoopValueScore, 0.4)               // (6 × 0.2 + 2 × 1) / 8
	scFloat(t, "artifact", sc.ArtifactQuality, 0.705)              // mean of 0.67 … 0.74
	if sc.ArtifactBar != 0.7 || sc.Goodhart.BelowBar || sc.Totals.CostUSD != 0.4 {
		t.Errorf("bar %v, goodhart %+v, cost %v", sc.ArtifactBar, sc.Goodhart, sc.Totals.CostUSD)
	}
	// The trend: three windows of 8, oldest first, the last the KPIs'.
	if sc.Trend.WindowCycles != 8 || len(sc.Trend.Windows) != 3 {
		t.Fatalf("trend %+v", sc.Trend)
	}
	last := sc.Trend.Windows[2]
	if last.Cycles != 8 || *last.LoopValueScore != *sc.LoopValueScore || sc.Trend.Windows[0].ArtifactQuality != nil {
		t.Errorf("trend windows %+v", sc.Trend.Windows)
	}

	for _, c := range []struct {
		name string
		s    Style
	}{
		{"scorecard_log_plain", Style{}},
		{"scorecard_log_terminal_80", Style{Terminal: true, Width: 80}},
		{"scorecard_log_terminal_120", Style{Terminal: true, Color: true, Width: 120}},
		{"scorecard_log_terminal_narrow", Style{Terminal: true, Width: 50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := RenderScorecard(sc, c.s)
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if c.s.Width > 0 && DisplayWidth(l) > c.s.Width {
					t.Errorf("line wider than %d: %q", c.s.Width, l)
				}
			}
			hasSpark := strings.ContainsAny(out, "▁▂▃▄▅▆▇█")
			if want := c.s.Terminal && c.s.Width >= scorecardSparkWidth; hasSpark != want {
				t.Errorf("sparklines %v, want %v:\n%s", hasSpark, want, out)
			}
			golden(t, c.name, out)
		})
	}
}

// With all cycles the trend puts them in at most 8 windows of a power of
// two, aligned on the newest cycle; a window larger than the history is
// the whole history.
func TestScorecard_AllCyclesAndAWindowLargerThanTheHistory(t *testing.T) {
	root := scLogProject(t)
	all := BuildScorecard(&config.Config{}, state.New(root), 0)
	if all.CyclesScored != 24 || all.Window != "all" || all.Trend.WindowCycles != 4 || len(all.Trend.Windows) != 6 {
		t.Fatalf("all: %d cycles, trend of %d × %d", all.CyclesScored, len(all.Trend.Windows), all.Trend.WindowCycles)
	}
	total := 0
	for _, w := range all.Trend.Windows {
		total += w.Cycles
	}
	if total != 24 {
		t.Errorf("the trend's windows hold %d cycles", total)
	}
	big := BuildScorecard(&config.Config{}, state.New(root), 500)
	if big.CyclesScored != 24 || *big.LoopValueScore != *all.LoopValueScore || len(big.Trend.Windows) != 1 {
		t.Errorf("window 500: %d cycles, lv %v, %d trend windows", big.CyclesScored, *big.LoopValueScore, len(big.Trend.Windows))
	}
	if out := RenderScorecard(big, Style{}); !strings.Contains(out, "last 500 cycles (24 recorded)") {
		t.Errorf("the heading does not say the history is shorter:\n%s", out)
	}
}

// Lines that are not cycle records are skipped and counted, never
// scored; a value of the wrong type is read where its meaning is plain.
func TestScorecard_LinesOfWrongTypesAreSkippedAndCounted(t *testing.T) {
	root := t.TempDir()
	scWrite(t, root, state.CycleLogFile, strings.Join([]string{
		`{"cycle_id": 1, "result_type": "pr_merged_held", "quality_multiplier": 1, "pr_number": 3}`,
		`[1, 2, 3]`,
		`"a string"`,
		`{"no": "cycle id"}`,
		`{"cycle_id": 2, "result_type": "futile", "quality_multiplier": "0"}`,
		`not json at all`,
	}, "\n")+"\n")
	sc := BuildScorecard(&config.Config{}, state.New(root), 0)
	if sc.CyclesScored != 2 || sc.SkippedLines != 4 {
		t.Fatalf("%d cycles, %d skipped", sc.CyclesScored, sc.SkippedLines)
	}
	scFloat(t, "futile", sc.FutileCycleRatePct, 50)
	scFloat(t, "loop value", sc.LoopValueScore, 0.5)
	if out := RenderScorecard(sc, Style{}); !strings.Contains(out, "Note: 4 lines of the cycle logs read are not a cycle record and were skipped.") {
		t.Errorf("the skipped lines are not said:\n%s", out)
	}
}

// The Goodhart cap: an artifact below the bar caps the letter however
// good the process numbers are, the further below the lower the cap.
// The bar is the top-level rubric's bar_coast, else bar, else the first
// domain's, else 0.65.
func TestScorecard_GoodhartCapsTheGrade(t *testing.T) {
	root := t.TempDir()
	var log strings.Builder
	for c := 1; c <= 4; c++ {
		fmt.Fprintf(&log, `{"cycle_id": %d, "result_type": "pr_merged_held", "quality_multiplier": 1, "pr_number": %d, "on_mission": true, "artifact_score": 0.5}`+"\n", c, c)
	}
	scWrite(t, root, state.CycleLogFile, log.String())
	scWrite(t, root, state.GoalsFile, `{"goals": [{"id": "g", "status": "active", "progress": 1}]}`)
	for _, c := range []struct {
		name       string
		cfg        *config.Config
		bar        float64
		grade, cap string
		capped     bool
	}{
		// a = 0.5, goal 1 discounted by a/bar, no futile cycle, value 1.
		// 0.225 + 0.25 × 0.769 + 0.2 + 0.1 = 0.717, B; a ≥ 0.75 × bar: C.
		{"no rubric: 0.65", &config.Config{}, 0.65, "C", "C", true},
		// 0.664, B; 0.5 × 0.9 ≤ a < 0.75 × 0.9: D.
		{"top-level bar_coast", &config.Config{QualityRubric: json.RawMessage(`{"bar": 0.4, "bar_coast": 0.9}`)}, 0.9, "D", "D", true},
		// a ≥ bar: 0.225 + 0.25 + 0.2 + 0.1 = 0.775, B, no cap.
		{"top-level bar", &config.Config{QualityRubric: json.RawMessage(`{"bar": 0.45}`)}, 0.45, "B", "", false},
		// The first domain in the file's order: 0.639, C; a < 0.5 × 1.1: F.
		{"first domain's", &config.Config{Domains: config.Domains{{Name: "b", Index: 1, QualityRubric: json.RawMessage(`{"bar": 2}`)}, {Name: "a", Index: 0, QualityRubric: json.RawMessage(`{"bar_coast": 1.1}`)}}}, 1.1, "F", "F", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := BuildScorecard(c.cfg, state.New(root), 0)
			if sc.ArtifactBar != c.bar || sc.Grade == nil || *sc.Grade != c.grade {
				t.Fatalf("bar %v grade %v (%v), want bar %v grade %s", sc.ArtifactBar, scDeref(sc.Grade), scOpt(sc.GradeScore, ""), c.bar, c.grade)
			}
			g := sc.Goodhart
			if g.BelowBar != (c.cap != "") || scDeref(g.Cap) != c.cap || g.Capped != c.capped || (g.Reason != nil) != g.BelowBar {
				t.Errorf("goodhart %+v", g)
			}
			if c.capped && scDeref(g.LetterBefore) == c.grade {
				t.Errorf("capped but the letter before is the letter: %+v", g)
			}
		})
	}
}

func scDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// A corrupt file is named and scored as its default; the scorecard still
// renders.
func TestScorecard_CorruptFilesAreNamed(t *testing.T) {
	root := scLogProject(t)
	scWrite(t, root, state.GoalsFile, `{"goals": [`)
	scWrite(t, root, state.MetricsFile, `not json`)
	sc := BuildScorecard(&config.Config{}, state.New(root), 0)
	if len(sc.Corrupt) != 2 || !strings.HasSuffix(sc.Corrupt[0], state.GoalsFile) || !strings.HasSuffix(sc.Corrupt[1], state.MetricsFile) {
		t.Errorf("corrupt %v", sc.Corrupt)
	}
	if sc.CyclesScored != 24 || sc.ActiveGoals != 0 || sc.ActionResolutionRatePct != nil {
		t.Errorf("%d cycles, %d goals, resolution %v", sc.CyclesScored, sc.ActiveGoals, sc.ActionResolutionRatePct)
	}
}

// A result type from the log is text from outside: it is escaped before
// it reaches a terminal.
func TestScorecard_ResultTypesAreEscaped(t *testing.T) {
	root := t.TempDir()
	scWrite(t, root, state.CycleLogFile, `{"cycle_id": 1, "result_type": "\u001b[2Jevil"}`+"\n")
	out := RenderScorecard(BuildScorecard(&config.Config{}, state.New(root), 0), Style{Terminal: true})
	if strings.Contains(out, "\x1b[2J") {
		t.Errorf("a control sequence from the log reached the output: %q", out)
	}
}

// A rubric that sets no bar grades its cycles against the default bar
// (0.70, 5-G): the scorecard compares with that bar, not with the 0.65
// it uses when no rubric exists.
func TestScorecard_BarOfARubricWithoutBars(t *testing.T) {
	for _, tc := range []struct {
		rubric string
		want   float64
	}{
		{`{"dimensions": [{"name": "latency", "weight": 1}]}`, 0.70},
		{`{"axes": [{"name": "latency", "weight": 1}], "bar": 0.8}`, 0.8},
		{`{"dimensions": [], "bar_coast": 0.9, "bar": 0.8}`, 0.9},
		{``, 0.65},
	} {
		cfg := &config.Config{QualityRubric: json.RawMessage(tc.rubric)}
		if got := scorecardBar(cfg); got != tc.want {
			t.Errorf("rubric %s: bar %v, want %v", tc.rubric, got, tc.want)
		}
	}
}
