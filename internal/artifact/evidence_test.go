package artifact

import "testing"

func goalHistory(scores ...float64) []Entry {
	var es []Entry
	for i, s := range scores {
		v := s
		es = append(es, Entry{CycleID: i + 1, Domain: "build", ArtifactScore: &v,
			DimensionScores: map[string]*float64{"visual": f(v / 2)}})
	}
	return es
}

// A goal cannot be reported above what the artifact supports.
func Test2C_GoalCappedByRollingArtifactMean(t *testing.T) {
	r := mustParse(t, `{"bar": 0.8, "plateau_window": 3, "dimensions": [{"name": "visual"}]}`)
	hist := goalHistory(0.9, 0.2, 0.4, 0.6) // last 3: mean 0.4 → cap 0.5
	p, ev := CapGoal(0.99, hist, "build", "", r)
	if p != 0.5 || *ev.RollingArtifactMean != 0.4 || ev.ConsecutiveAboveBar != 0 {
		t.Errorf("progress %v evidence %+v", p, ev)
	}
	if p, _ := CapGoal(0.3, hist, "build", "", r); p != 0.3 {
		t.Errorf("below the cap: %v", p)
	}
	// Tied to a dimension: that dimension's scores (half the artifact's here).
	if p, ev := CapGoal(0.99, hist, "build", "visual", r); p != 0.25 || *ev.RollingArtifactMean != 0.2 {
		t.Errorf("dimension: %v %+v", p, ev)
	}
}

// Completion needs quality held at bar for plateau_window cycles; one
// good spike is not enough.
func Test2C_CompletionNeedsQualityHeld(t *testing.T) {
	r := mustParse(t, `{"bar": 0.8, "plateau_window": 3, "dimensions": [{"name": "visual"}]}`)
	spike := goalHistory(0.3, 0.9, 0.9, 1.0) // 3 in a row at bar
	if p, ev := CapGoal(1, spike, "build", "", r); p != 1 || ev.ConsecutiveAboveBar != 3 {
		t.Errorf("held for the window: %v %+v", p, ev)
	}
	short := goalHistory(0.79, 1.0, 1.0) // mean 0.93 ≥ bar, but 2 above in a row
	if p, ev := CapGoal(1, short, "build", "", r); p != 0.99 || ev.ConsecutiveAboveBar != 2 {
		t.Errorf("not held: %v %+v", p, ev)
	}
}

func Test2C_NoEvidenceNoProgress(t *testing.T) {
	r := mustParse(t, `{"dimensions": [{"name": "visual"}]}`)
	other := goalHistory(1, 1, 1, 1)
	for i := range other {
		other[i].Domain = "docs"
	}
	hostile := goalHistory(3)
	if p, ev := CapGoal(0.9, append(other, hostile...), "build", "", r); p != 0 || ev.RollingArtifactMean != nil {
		t.Errorf("no evidence: %v %+v", p, ev)
	}
	if p, _ := CapGoal(0.4, nil, "build", "", nil); p != 0.4 {
		t.Errorf("no rubric, no cap: %v", p)
	}
	if p, _ := CapGoal(7, nil, "build", "", nil); p != 1 {
		t.Errorf("progress clamped: %v", p)
	}
}
