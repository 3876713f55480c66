package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `ooda demo` shows what each skill said it found, on its cycle's card
// (OBSERVE's most notable change) and in --json; the Loop Scorecard of
// the cycles follows the cards.
func TestFirst_DemoShowsTheSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb strings.Builder
	code := Main([]string{"demo", "--dir", dir, "--cycles", "3", "--json"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	human := errb.String()
	// Cycle 3 runs /check-tests, whose report says "tests pass; coverage 78.5%".
	card3 := strings.Index(human, "quickstart · ooda cycle #3 · ")
	if card3 < 0 || !strings.Contains(human[card3:], "\nOBSERVE   3 domains scanned · tests pass; coverage 78.5%\n") {
		t.Errorf("cycle 3's card does not show the summary:\n%s", human)
	}
	if i := strings.Index(human, "Loop Scorecard — all 3 cycles"); i < card3 {
		t.Errorf("the scorecard does not follow the cards:\n%s", human)
	}
	var doc struct {
		Cycles []struct {
			Cycle   int    `json:"cycle"`
			Summary string `json:"summary"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || len(doc.Cycles) != 3 {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if doc.Cycles[2].Summary != "tests pass; coverage 78.5%" || doc.Cycles[0].Summary != "" {
		t.Errorf("--json cycles: %+v", doc.Cycles)
	}
}
