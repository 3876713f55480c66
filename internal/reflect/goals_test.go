package reflect

import (
	"errors"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

func fp(v float64) *float64 { return &v }

func TestStep2C_MetricParsing(t *testing.T) {
	for out, want := range map[string]float64{"42\n": 42, "true": 1, "false\n": 0, "noise\n0.75": 0.75, "81.5%": 81.5} {
		if v, err := ParseMetric(out); err != nil || v != want {
			t.Errorf("ParseMetric(%q) = %v, %v; want %v", out, v, err, want)
		}
	}
	for _, bad := range []string{"", "  \n", "n/a", "NaN"} {
		if _, err := ParseMetric(bad); err == nil {
			t.Errorf("ParseMetric(%q) accepted", bad)
		}
	}
}

func TestStep2C_GoalProgress(t *testing.T) {
	gs := state.Goals{Goals: []state.Goal{
		{ID: "cov", Status: "active", Target: fp(80), Progress: fp(0.5)},
		{ID: "drain", Status: "active", Progress: fp(0.5)},
		{ID: "broken", Status: "active", Progress: fp(0.3)},
		{ID: "done", Status: "completed", Progress: fp(1)},
	}}
	out, notes := ApplyProgress(gs, map[string]Measurement{
		"cov": {Value: 60}, "drain": {Value: 1}, "broken": {Err: errors.New("exit status 2")}, "done": {Value: 0},
	})
	g := out.Goals
	if *g[0].Progress != 0.75 || *g[0].CurrentValue != 60 || g[0].Status != "active" {
		t.Errorf("cov = %+v", g[0])
	}
	if *g[1].Progress != 1 || g[1].Status != "completed" {
		t.Errorf("drain = %+v", g[1])
	}
	if *g[2].Progress != 0.3 || !strings.Contains(strings.Join(notes, ";"), "Goal broken: metric_command failed (exit status 2); keeping progress 0.30") {
		t.Errorf("broken = %+v, notes %v", g[2], notes)
	}
	if *g[3].Progress != 1 {
		t.Error("a completed goal is not re-measured")
	}
	if *gs.Goals[0].Progress != 0.5 {
		t.Error("ApplyProgress must not modify its input")
	}
}

func TestStep5D_TouchAndProposeGoals(t *testing.T) {
	gs := state.Goals{Goals: []state.Goal{
		{ID: "g1", Title: "Keep test coverage >= 80%", Status: "active"},
		{ID: "g2", Status: "active", RelatedDomains: []string{"api"}},
	}}
	out, ids := TouchGoals(gs, "test_coverage", t0)
	if strings.Join(ids, ",") != "g1" || out.Goals[0].LastActivity != "2026-04-14T09:00:00Z" || out.Goals[1].LastActivity != "" {
		t.Errorf("touched %v: %+v", ids, out.Goals)
	}
	streaks := UpdateAlertStreaks(map[string]int{"db": 2, "api": 2, "web": 1}, map[string]bool{"db": true, "api": true}, []string{"db", "api", "web"})
	if streaks["db"] != 3 || streaks["api"] != 3 || streaks["web"] != 0 {
		t.Errorf("streaks = %v", streaks)
	}
	out, added := ProposeGoals(gs, streaks, t0)
	if len(added) != 1 || added[0].ID != "G-db-alerts" || added[0].Status != "proposed" || len(out.Goals) != 3 {
		t.Errorf("proposed %+v (api already has a related goal)", added)
	}
	if _, again := ProposeGoals(out, streaks, t0); len(again) != 0 {
		t.Errorf("a proposed goal is not proposed twice: %+v", again)
	}
}

func TestStep2B1_ObservationMicroAdjustments(t *testing.T) {
	c := cfgDomains("a")
	c.ProgressiveComplex.CurrentLevel = 2
	for _, tc := range []struct {
		in    MicroInput
		after float64
		label string
	}{
		{MicroInput{Findings: true, Before: 0.7}, 0.72, "+0.02 (findings)"},
		{MicroInput{Alerting: true, Before: 0.7}, 0.73, "+0.03 (alert)"},
		{MicroInput{Unchanged: true, Before: 0.7}, 0.69, "-0.01 (no new data)"},
		{MicroInput{Before: 0.7}, 0.7, ""},
		{MicroInput{Findings: true, Before: 0.99}, 1.0, "+0.02 (findings)"},
		{MicroInput{Unchanged: true, Before: 0.1}, 0.1, "-0.01 (no new data)"},
	} {
		tc.in.Config = c
		if after, label := MicroAdjust(tc.in); after != tc.after || label != tc.label {
			t.Errorf("%+v → %v %q, want %v %q", tc.in, after, label, tc.after, tc.label)
		}
	}
	c.ProgressiveComplex.CurrentLevel = 3
	if after, label := MicroAdjust(MicroInput{Config: c, Findings: true, Before: 0.7}); after != 0.7 || label != "" {
		t.Error("suppressed at level 3")
	}
	c.ProgressiveComplex.CurrentLevel = 1
	c.Confidence.ObservationMicroAdjustments = false
	if after, _ := MicroAdjust(MicroInput{Config: c, Findings: true, Before: 0.7}); after != 0.7 {
		t.Error("switched off")
	}
}
