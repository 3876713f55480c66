package artifact

import (
	"encoding/json"
	"strings"
	"testing"
)

func Test2G_EntryFromJSON(t *testing.T) {
	e, warns, err := EntryFromJSON(json.RawMessage(`{"cycle_id": 12, "domain": "build", "result_type": "leap_regressed",
		"cycle_mode": "leap", "artifact_score": 0.41, "weakest_dimension": "visual", "leap_target": "visual",
		"dimension_scores": {"visual": 0.2, "feel": null}, "quality_multiplier": 0,
		"leap_attempts": [{"dimension": "visual", "attempt_number": 2, "delta_score": -0.03}]}`), "outcomes.json entries[3]")
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if e.CycleID != 12 || e.Domain != "build" || e.ResultType != ResultLeapRegressed || e.CycleMode != ModeLeap ||
		*e.ArtifactScore != 0.41 || e.WeakestDimension != "visual" || e.LeapTarget != "visual" ||
		*e.DimensionScores["visual"] != 0.2 || e.DimensionScores["feel"] != nil ||
		len(e.LeapAttempts) != 1 || e.LeapAttempts[0].AttemptNumber != 2 || *e.LeapAttempts[0].DeltaScore != -0.03 {
		t.Errorf("%+v", e)
	}
}

// A tampered or corrupt entry cannot pass off bad values as scores.
func Test2G_EntryFromJSONHostile(t *testing.T) {
	e, warns, err := EntryFromJSON(json.RawMessage(`{"cycle_id": "12", "domain": 7, "artifact_score": 1.7,
		"dimension_scores": {"visual": "0.9", "../x": 0.5, "feel": -1},
		"leap_attempts": [{"dimension": "visual", "delta_score": "0.5"}, 3, {"dimension": "a\nb", "delta_score": 0.1}]}`), "outcomes.json entries[0]")
	if err != nil {
		t.Fatal(err)
	}
	if e.CycleID != 0 || e.Domain != "" || e.ArtifactScore != nil || e.DimensionScores["visual"] != nil || e.DimensionScores["feel"] != nil {
		t.Errorf("%+v", e)
	}
	if _, ok := e.DimensionScores["../x"]; ok {
		t.Error("a key that is no dimension name was kept")
	}
	// The string delta is not a measured delta: it reads as missing, which
	// the thrashing guard counts as a failed leap.
	if len(e.LeapAttempts) != 1 || e.LeapAttempts[0].DeltaScore != nil {
		t.Errorf("attempts %+v", e.LeapAttempts)
	}
	joined := strings.Join(warns, "\n")
	for _, want := range []string{"outcomes.json entries[0].cycle_id", "entries[0].artifact_score", "entries[0].dimension_scores.visual",
		"entries[0].leap_attempts[0].delta_score", "entries[0].leap_attempts[1]", "entries[0].leap_attempts[2].dimension"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %s:\n%s", want, joined)
		}
	}
	if _, _, err := EntryFromJSON(json.RawMessage(`[1]`), "outcomes.json entries[4]"); err == nil || !strings.Contains(err.Error(), "entries[4]: must be an object") {
		t.Errorf("list entry: %v", err)
	}
}
