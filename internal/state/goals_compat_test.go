package state

import (
	"encoding/json"
	"strings"
	"testing"
)

// A goal in the state design's shape names itself with name and records
// its measurement in current: both are read, current is kept up to date,
// and an unmeasured goal is written back as it was.
func TestGoal_StateDesignShape(t *testing.T) {
	const entry = `{"id": "G1", "name": "Reduce service_health cost", "target": 20, "current": 65, "unit": "USD/month", "progress": 0.0, "status": "active", "updated_at": "2026-01-01T00:00:00Z"}`
	var gs Goals
	if err := json.Unmarshal([]byte(`{"goals": [`+entry+`]}`), &gs); err != nil {
		t.Fatal(err)
	}
	g := gs.Goals[0]
	if g.Title != "Reduce service_health cost" || g.CurrentValue == nil || *g.CurrentValue != 65 {
		t.Fatalf("read as title %q, current %v", g.Title, g.CurrentValue)
	}
	b, _ := json.Marshal(g)
	if string(b) != strings.ReplaceAll(strings.ReplaceAll(entry, `": `, `":`), `, "`, `,"`) {
		t.Errorf("unchanged goal rewritten:\n got %s\nwant %s", b, entry)
	}
	m := g
	m.SetMeasured(30, 0.5)
	var out map[string]json.RawMessage
	b, _ = json.Marshal(m)
	_ = json.Unmarshal(b, &out)
	if string(out["current"]) != "30" || string(out["progress"]) != "0.5" || string(out["name"]) != `"Reduce service_health cost"` {
		t.Errorf("measured goal = %s", b)
	}
	if _, ok := out["title"]; ok {
		t.Errorf("a title was added to a goal named by name: %s", b)
	}
	if string(gs.Goals[0].Extra["current"]) != "65" {
		t.Errorf("measuring a copy changed the goal it was copied from: current %s", gs.Goals[0].Extra["current"])
	}
}
