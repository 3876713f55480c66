package artifact

import (
	"strings"
	"testing"
)

func Test3K_GateDefersLeapOnCaps(t *testing.T) {
	leap := defaultLeap() // cost_limit_usd 0.5, max_per_day 2
	plateau := Decision{Plateau: true, Mode: ModeLeap, LeapTarget: "visual"}
	cases := []struct {
		name     string
		d        Decision
		b        Budget
		mode     string
		deferred string
	}{
		{"room in both caps", plateau, Budget{SpentTodayUSD: 9.5, DailyLimitUSD: 10, LeapsToday: 1}, ModeLeap, ""},
		{"cost cap", plateau, Budget{SpentTodayUSD: 9.51, DailyLimitUSD: 10}, ModeFeature, "cost.daily_limit_usd"},
		{"no cost cap set", plateau, Budget{SpentTodayUSD: 500}, ModeLeap, ""},
		{"per-day cap", plateau, Budget{DailyLimitUSD: 10, LeapsToday: 2}, ModeFeature, "leap.max_per_day 2"},
		{"rewrite is gated too", Decision{Mode: ModeRewrite}, Budget{DailyLimitUSD: 10, LeapsToday: 2}, ModeFeature, "leap.max_per_day"},
		{"dry run", plateau, Budget{DryRun: true}, ModeFeature, "dry run"},
		{"halt passes through", Decision{Mode: ModeHalt}, Budget{DryRun: true, LeapsToday: 9}, ModeHalt, ""},
		{"feature passes through", Decision{Mode: ModeFeature}, Budget{}, ModeFeature, ""},
	}
	for _, c := range cases {
		mode, deferred := Gate(c.d, leap, c.b)
		if mode != c.mode || (c.deferred == "") != (deferred == "") || !strings.Contains(deferred, c.deferred) {
			t.Errorf("%s: %q %q, want %q %q", c.name, mode, deferred, c.mode, c.deferred)
		}
	}
}

func Test3K_GapToBarBonus(t *testing.T) {
	leap := defaultLeap() // gap_weight 30
	cases := []struct{ bar, artifact, want float64 }{
		{0.7, 0.35, 15}, // 30 × 0.35/0.7
		{0.7, 0.7, 0},   // at bar
		{0.65, 0.8, 0},  // above bar (below bar_coast): never negative
		{0, 0.1, 0},     // no bar
		{0.5, 0.125, 22.5},
	}
	for _, c := range cases {
		if got := GapBonus(leap, c.bar, c.artifact); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("GapBonus(bar %v, artifact %v) = %v, want %v", c.bar, c.artifact, got, c.want)
		}
	}
}

func Test3K_LeapBrief(t *testing.T) {
	r := mustParse(t, `{"dimensions": [{"name": "visual", "techniques": ["bloom pass", "PBR"], "asset_sources": ["assets/car.glb"]}]}`)
	b := LeapBrief(r, ModeLeap, "visual", defaultLeap())
	if b.Mode != ModeLeap || b.Dimension != "visual" || b.MaxLines != 1500 ||
		strings.Join(b.Techniques, ",") != "bloom pass,PBR" || strings.Join(b.AssetSources, ",") != "assets/car.glb" {
		t.Errorf("%+v", b)
	}
}

func Test4C2_VerifyLeap(t *testing.T) {
	r := mustParse(t, `{"bar": 0.7, "dimensions": [{"name": "visual", "weight": 1}, {"name": "feel", "weight": 1}]}`)
	leap := defaultLeap() // min_dimension_delta 0.05
	base := map[string]*float64{"visual": f(0.3), "feel": f(0.8)}

	v := VerifyLeap(r, base, map[string]*float64{"visual": f(0.45), "feel": f(0.8)}, "visual", leap, 1)
	if !v.Kept || *v.Delta != 0.15 || v.Attempt != (LeapAttempt{Dimension: "visual", AttemptNumber: 1, DeltaScore: v.Delta}) ||
		!strings.Contains(v.Remainder, "visual at 0.45 is still below bar 0.7") {
		t.Errorf("kept leap: %+v", v)
	}
	v = VerifyLeap(r, base, map[string]*float64{"visual": f(0.75), "feel": f(0.8)}, "visual", leap, 1)
	if !v.Kept || v.Remainder != "" {
		t.Errorf("leap to bar: %+v", v)
	}
	v = VerifyLeap(r, base, map[string]*float64{"visual": f(0.33), "feel": f(0.8)}, "visual", leap, 2)
	if v.Kept || *v.Attempt.DeltaScore != 0.03 || v.Attempt.AttemptNumber != 2 || !strings.Contains(v.Reason, "leap.min_dimension_delta") {
		t.Errorf("too small: %+v", v)
	}
	// The target rose but the artifact fell: the leap broke something else.
	v = VerifyLeap(r, base, map[string]*float64{"visual": f(0.5), "feel": f(0.4)}, "visual", leap, 1)
	if v.Kept || !strings.Contains(v.Reason, "the artifact fell") || *v.Attempt.DeltaScore != 0.2 {
		t.Errorf("artifact regressed: %+v", v)
	}
	// No score after the leap (capture failed): nothing shows a rise.
	v = VerifyLeap(r, base, map[string]*float64{"visual": nil, "feel": f(0.9)}, "visual", leap, 1)
	if v.Kept || v.Delta != nil || v.Attempt.DeltaScore != nil || !strings.Contains(v.Reason, "no score after") {
		t.Errorf("unmeasured: %+v", v)
	}
	v = VerifyLeap(r, nil, map[string]*float64{"visual": f(0.9)}, "visual", leap, 1)
	if v.Kept || !strings.Contains(v.Reason, "no score before") {
		t.Errorf("no baseline: %+v", v)
	}
}
