package artifact

import (
	"strings"
	"testing"
)

// defaultLeap is config leap's defaults.
func defaultLeap() LeapPolicy {
	return LeapPolicy{RewriteOnStall: true, MaxLines: 1500, MinDimensionDelta: 0.05, MaxAttemptsPerDimension: 2,
		MaxPerDay: 2, GapWeight: 30, CostLimitUSD: 0.5, LockUntilBar: true}
}

// rubric2G: bar 0.7, bar_leap 0.5, bar_coast 0.85, window 4, eps 0.05.
const rubric2G = `{"bar": 0.7, "bar_leap": 0.5, "bar_coast": 0.85, "dimensions": [
	{"name": "visual", "weight": 0.5}, {"name": "feel", "weight": 0.3}, {"name": "audio", "weight": 0.2}]}`

// scoredEntry is a feature cycle of domain build with dimension scores
// visual v, feel 0.8, audio 0.8.
func scoredEntry(t *testing.T, r *Rubric, id int, v float64) Entry {
	t.Helper()
	s := Aggregate(r, map[string]*float64{"visual": f(v), "feel": f(0.8), "audio": f(0.8)})
	return Entry{CycleID: id, Domain: "build", ResultType: "pr_created", CycleMode: ModeFeature,
		ArtifactScore: s.ArtifactScore, WeakestDimension: s.WeakestDimension, DimensionScores: s.DimensionScores}
}

func leapEntry(t *testing.T, r *Rubric, id int, v float64, mode, target string, delta *float64) Entry {
	e := scoredEntry(t, r, id, v)
	e.CycleMode, e.LeapTarget = mode, target
	e.LeapAttempts = []LeapAttempt{{Dimension: target, AttemptNumber: 1, DeltaScore: delta}}
	if delta == nil || *delta < 0.05 {
		e.ResultType = ResultLeapRegressed
	}
	return e
}

func Test2G_PlateauBelowBarLeap(t *testing.T) {
	r := mustParse(t, rubric2G)
	// visual 0.1 → artifact 0.05 + 0.24 + 0.16 = 0.45 < bar_leap 0.5
	d := Plan([]Entry{scoredEntry(t, r, 1, 0.1)}, "build", r, defaultLeap())
	if !d.Plateau || d.Mode != ModeLeap || d.LeapTarget != "visual" || !strings.Contains(d.Reason, "below bar_leap") {
		t.Errorf("%+v", d)
	}
	if d.ArtifactScore == nil || *d.ArtifactScore != 0.45 || d.WeakestDimension != "visual" || !d.Active() {
		t.Errorf("%+v", d)
	}
}

// Between bar_leap and bar_coast: a plateau when the window's scores rose
// less than plateau_eps from the first, and only on a full window.
func Test2G_PlateauFlatWindow(t *testing.T) {
	r := mustParse(t, rubric2G)
	// visual 0.6 → 0.3+0.24+0.16 = 0.7; +0.02 visual is +0.01 artifact.
	var flat []Entry
	for i, v := range []float64{0.6, 0.62, 0.64, 0.66} {
		flat = append(flat, scoredEntry(t, r, i+1, v))
	}
	for i := range flat { // a different weakest each cycle, to test only the flatness rule
		flat[i].WeakestDimension = []string{"visual", "feel", "audio", "visual"}[i]
	}
	if d := Plan(flat[:3], "build", r, defaultLeap()); d.Plateau {
		t.Errorf("3 of 4 cycles: %+v", d)
	}
	d := Plan(flat, "build", r, defaultLeap())
	if !d.Plateau || d.Mode != ModeLeap || !strings.Contains(d.Reason, "less than plateau_eps") {
		t.Errorf("flat window: %+v", d)
	}
	rising := append([]Entry(nil), flat...)
	rising[3] = scoredEntry(t, r, 4, 0.72) // artifact 0.7 → 0.76: +0.06
	rising[3].WeakestDimension = "feel"
	if d := Plan(rising, "build", r, defaultLeap()); d.Plateau || d.Mode != ModeFeature {
		t.Errorf("rising window: %+v", d)
	}
	// A window that dipped and came back is measured from its first score.
	dipped := append([]Entry(nil), flat...)
	dipped[0] = scoredEntry(t, r, 1, 0.5) // 0.65, then 0.71, 0.72, 0.73: rose 0.08
	dipped[0].WeakestDimension = "audio"
	if d := Plan(dipped, "build", r, defaultLeap()); d.Plateau {
		t.Errorf("dipped window: %+v", d)
	}
}

func Test2G_PlateauSameWeakestDimension(t *testing.T) {
	r := mustParse(t, rubric2G)
	var es []Entry
	for i, v := range []float64{0.5, 0.6, 0.7, 0.75} { // artifact 0.65 → 0.775, rising fast
		es = append(es, scoredEntry(t, r, i+1, v))
	}
	d := Plan(es, "build", r, defaultLeap())
	if !d.Plateau || d.LeapTarget != "visual" || !strings.Contains(d.Reason, "visual has been the weakest dimension for 4") {
		t.Errorf("%+v", d)
	}
	es[1].WeakestDimension = "feel"
	if d := Plan(es, "build", r, defaultLeap()); d.Plateau {
		t.Errorf("weakest changed within the window: %+v", d)
	}
}

// At or above bar_coast nothing is a plateau, however flat.
func Test2G_NoPlateauAtBarCoast(t *testing.T) {
	r := mustParse(t, rubric2G)
	var es []Entry
	for i := 0; i < 6; i++ {
		es = append(es, scoredEntry(t, r, i+1, 0.95))
		es[i].ArtifactScore = f(0.85)
	}
	if d := Plan(es, "build", r, defaultLeap()); d.Plateau || d.Mode != ModeFeature {
		t.Errorf("%+v", d)
	}
}

// Only the domain's own scored cycles count; unscored cycles and hostile
// scores are skipped.
func Test2G_HistoryFiltering(t *testing.T) {
	r := mustParse(t, rubric2G)
	other := scoredEntry(t, r, 1, 0.1)
	other.Domain = "docs"
	unscored := Entry{CycleID: 2, Domain: "build", ResultType: "futile", CycleMode: ModeFeature}
	hostile := scoredEntry(t, r, 3, 0.1)
	hostile.ArtifactScore = f(-4)
	d := Plan([]Entry{other, unscored, hostile}, "build", r, defaultLeap())
	if d.Plateau || !strings.Contains(d.Reason, "no artifact-scored cycle") {
		t.Errorf("%+v", d)
	}
	if d := Plan(nil, "build", nil, defaultLeap()); d.Mode != ModeFeature {
		t.Errorf("no rubric: %+v", d)
	}
}

// The thrashing guard counts leap_attempts on the leap target whose
// delta_score missed leap.min_dimension_delta, and escalates to one
// rewrite, carrying a memo naming the failed leaps.
func Test2G_ThrashingGuardEscalatesToRewrite(t *testing.T) {
	r := mustParse(t, rubric2G)
	base := []Entry{scoredEntry(t, r, 1, 0.1)}
	// Not failures: a good leap, a leap on another dimension, an attempt
	// recorded on a feature cycle, another domain's leap.
	good := leapEntry(t, r, 2, 0.1, ModeLeap, "visual", f(0.2))
	elsewhere := leapEntry(t, r, 3, 0.1, ModeLeap, "feel", f(0.0))
	feature := leapEntry(t, r, 4, 0.1, ModeFeature, "visual", f(0.0))
	foreign := leapEntry(t, r, 5, 0.1, ModeLeap, "visual", f(0.0))
	foreign.Domain = "docs"
	failed1 := leapEntry(t, r, 6, 0.1, ModeLeap, "visual", f(0.01))
	hist := append(base, good, elsewhere, feature, foreign, failed1)
	d := Plan(hist, "build", r, defaultLeap())
	if d.Mode != ModeLeap || d.FailedLeaps != 1 {
		t.Fatalf("one failed leap: %+v", d)
	}
	failed2 := leapEntry(t, r, 7, 0.1, ModeLeap, "visual", nil) // unmeasured: a failure too
	d = Plan(append(hist, failed2), "build", r, defaultLeap())
	if d.Mode != ModeRewrite || d.FailedLeaps != 2 || d.LeapTarget != "visual" || !d.Active() {
		t.Fatalf("two failed leaps: %+v", d)
	}
	m := d.Memo
	if m == nil || m.Type != "stall_detected" || m.Dimension != "visual" ||
		!strings.Contains(m.StalledApproach, "cycle #6 (Δ 0.01)") || !strings.Contains(m.StalledApproach, "cycle #7 (no delta)") ||
		!strings.Contains(m.Instruction, "from scratch") || !strings.Contains(m.Instruction, "do not reuse") {
		t.Errorf("memo %+v", m)
	}
}

// After the one rewrite, the next stall is a HALT with a leap_stuck gap,
// even when deferred leaps put many feature cycles in between.
func Test2G_RewriteOnceThenHalt(t *testing.T) {
	r := mustParse(t, rubric2G)
	hist := []Entry{
		leapEntry(t, r, 1, 0.1, ModeLeap, "visual", f(0.0)),
		leapEntry(t, r, 2, 0.1, ModeLeap, "visual", f(0.02)),
		leapEntry(t, r, 3, 0.1, ModeRewrite, "visual", f(0.01)),
	}
	for i := 4; i < 12; i++ {
		hist = append(hist, scoredEntry(t, r, i, 0.1))
	}
	d := Plan(hist, "build", r, defaultLeap())
	if d.Mode != ModeHalt || d.Active() || d.Memo != nil {
		t.Fatalf("%+v", d)
	}
	for _, want := range []string{"visual", "build", "quality_rubric.dimensions[0]", "asset_sources", "reweight"} {
		if !strings.Contains(d.Halt, want) {
			t.Errorf("HALT %q lacks %q", d.Halt, want)
		}
	}
	if len(d.Gaps) != 1 || d.Gaps[0].Name != "leap_stuck_visual" || d.Gaps[0].Type != GapQuality {
		t.Errorf("gaps %+v", d.Gaps)
	}
	noRewrite := defaultLeap()
	noRewrite.RewriteOnStall = false
	d = Plan(hist[:2], "build", r, noRewrite)
	if d.Mode != ModeHalt || !strings.Contains(d.Reason, "rewrite_on_stall is off") {
		t.Errorf("rewrite off: %+v", d)
	}
}

// A kept leap that left its dimension below bar keeps the loop on that
// dimension; within plateau_eps of bar counts as done.
func Test2G_DimensionLockUntilBar(t *testing.T) {
	r := mustParse(t, `{"bar": 0.7, "bar_coast": 0.7, "dimensions": [
		{"name": "visual", "weight": 0.1}, {"name": "feel", "weight": 0.9}]}`)
	entry := func(visual float64, mode, result string) Entry {
		s := Aggregate(r, map[string]*float64{"visual": f(visual), "feel": f(0.95)})
		return Entry{CycleID: 9, Domain: "build", ResultType: result, CycleMode: mode, LeapTarget: "visual",
			ArtifactScore: s.ArtifactScore, WeakestDimension: s.WeakestDimension, DimensionScores: s.DimensionScores,
			LeapAttempts: []LeapAttempt{{Dimension: "visual", AttemptNumber: 1, DeltaScore: f(0.2)}}}
	}
	// visual 0.5 → artifact 0.905 ≥ bar_coast: no plateau, but locked.
	d := Plan([]Entry{entry(0.5, ModeLeap, "pr_created")}, "build", r, defaultLeap())
	if d.Plateau || d.Mode != ModeLeap || !d.Locked || d.LeapTarget != "visual" || !strings.Contains(d.Reason, "still below bar") {
		t.Errorf("locked: %+v", d)
	}
	noTarget := entry(0.5, ModeLeap, "pr_created")
	noTarget.LeapTarget = ""
	if d := Plan([]Entry{noTarget}, "build", r, defaultLeap()); !d.Locked || d.LeapTarget != "visual" {
		t.Errorf("target from leap_attempts: %+v", d)
	}
	for name, e := range map[string]Entry{
		"within the eps band": entry(0.66, ModeLeap, "pr_created"),
		"regressed leap":      entry(0.5, ModeLeap, ResultLeapRegressed),
		"feature cycle":       entry(0.5, ModeFeature, "pr_created"),
	} {
		if d := Plan([]Entry{e}, "build", r, defaultLeap()); d.Mode != ModeFeature || d.Locked {
			t.Errorf("%s: %+v", name, d)
		}
	}
	off := defaultLeap()
	off.LockUntilBar = false
	if d := Plan([]Entry{entry(0.5, ModeLeap, "pr_created")}, "build", r, off); d.Locked {
		t.Errorf("lock_until_bar off: %+v", d)
	}
}

// A dimension at its code-only ceiling is not leapt; supplying assets
// lifts the ceiling.
func Test2G_AssetCeiling(t *testing.T) {
	const raw = `{"bar": 0.7, "bar_leap": 0.7, "bar_coast": 0.85, "dimensions": [
		{"name": "visual", "weight": 0.6, "ceiling_without_assets": 0.35, "ceiling_note": "needs authored models" %s},
		{"name": "feel", "weight": 0.4}]}`
	r := mustParse(t, strings.Replace(raw, "%s", "", 1))
	s := Aggregate(r, map[string]*float64{"visual": f(0.36), "feel": f(0.5)})
	e := Entry{CycleID: 1, Domain: "build", CycleMode: ModeFeature, ArtifactScore: s.ArtifactScore,
		WeakestDimension: s.WeakestDimension, DimensionScores: s.DimensionScores}
	if s.LeapTarget != "visual" {
		t.Fatalf("without the ceiling visual would be the target: %+v", s)
	}
	d := Plan([]Entry{e}, "build", r, defaultLeap())
	if d.Mode != ModeLeap || d.LeapTarget != "feel" {
		t.Errorf("capped visual still targeted: %+v", d)
	}
	if len(d.Gaps) != 1 || d.Gaps[0].Name != "asset_ceiling_visual" || d.Gaps[0].Type != GapHumanRequired ||
		!strings.Contains(d.Gaps[0].Detail, "needs authored models") {
		t.Errorf("gaps %+v", d.Gaps)
	}
	// Only visual is below bar_coast: nothing left to leap.
	s = Aggregate(r, map[string]*float64{"visual": f(0.36), "feel": f(0.9)})
	e.ArtifactScore, e.DimensionScores = s.ArtifactScore, s.DimensionScores
	if d := Plan([]Entry{e}, "build", r, defaultLeap()); !d.Plateau || d.Mode != ModeFeature || d.LeapTarget != "" {
		t.Errorf("only a capped dimension left: %+v", d)
	}
	withAssets := mustParse(t, strings.Replace(raw, "%s", `, "asset_sources": ["assets/car.glb"]`, 1))
	d = Plan([]Entry{e}, "build", withAssets, defaultLeap())
	if d.Mode != ModeLeap || d.LeapTarget != "visual" || len(d.Gaps) != 0 || strings.Join(d.ResolvedGaps, ",") != "asset_ceiling_visual" {
		t.Errorf("assets supplied: %+v", d)
	}
}

// A leap whose target rose but which was reverted because the artifact as
// a whole fell counts as failed: otherwise such leaps would repeat forever,
// never reaching the rewrite or the HALT.
func Test2G_RevertedLeapWhoseTargetRoseIsAFailure(t *testing.T) {
	r := mustParse(t, rubric2G)
	hist := []Entry{scoredEntry(t, r, 1, 0.1)}
	for i := 2; i <= 3; i++ {
		e := leapEntry(t, r, i, 0.1, ModeLeap, "visual", f(0.3))
		e.ResultType = ResultLeapRegressed
		hist = append(hist, e)
	}
	d := Plan(hist, "build", r, defaultLeap())
	if d.Mode != ModeRewrite || d.FailedLeaps != 2 || d.Memo == nil || !strings.Contains(d.Memo.StalledApproach, "artifact fell") {
		t.Fatalf("two reverted leaps: %+v", d)
	}
}
