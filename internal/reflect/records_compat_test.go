package reflect

import (
	"encoding/json"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// The weekly episode ranks cycles by score: an original's decision-log
// entry has no score, only its scores table, which must be read.
func TestStep6C4_CycleRecordsReadTheOriginalsScoresTable(t *testing.T) {
	var log []state.DecisionEntry
	if err := json.Unmarshal([]byte(`[
	  {"cycle": 4, "timestamp": "2026-04-14T03:00:00Z", "selected_domain": "api", "selected_skill": "/scan-api",
	   "scores": {"api": 9.5, "tests": 2.0}, "confidence_at_decision": 0.5, "result": "success"},
	  {"cycle": 5, "timestamp": "2026-04-14T04:00:00Z", "selected_domain": "tests", "score": 3.25, "scores": {"tests": 7}}
	]`), &log); err != nil {
		t.Fatal(err)
	}
	recs := CycleRecords(log, nil)
	if len(recs) != 2 || recs[0].Score != 9.5 || recs[1].Score != 3.25 {
		t.Fatalf("records = %+v, want scores 9.5 (from the table) and 3.25 (ooda's own)", recs)
	}
}
