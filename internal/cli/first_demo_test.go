package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `ooda demo` shows what each skill said it found, under its cycle's row,
// and in --json; the CHANGELOG entry it prints carries the summary too.
func TestFirst_DemoShowsTheSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb strings.Builder
	code := Main([]string{"demo", "--dir", dir, "--cycles", "3", "--json"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	human := errb.String()
	// Cycle 3 runs /check-tests, whose report says "tests pass; coverage 78.5%".
	if !strings.Contains(human, "→ action_extracted\n          /check-tests reports: tests pass; coverage 78.5%\n") {
		t.Errorf("no summary under the row:\n%s", human)
	}
	if !strings.Contains(human, "- **Summary**: tests pass; coverage 78.5%\n") {
		t.Errorf("the CHANGELOG entry shown has no summary:\n%s", human)
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
