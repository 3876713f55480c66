package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/state"
)

// 6-A prs_created: every PR the cycle opened, as the forge lists it
// (number, title, branch), in the original's shape; a title is one line
// and bounded, whatever the PR's author wrote.
func TestStep6A_PRsCreatedCarryTitleAndBranch(t *testing.T) {
	dir := mergeProject(t, `{"test_status": "passed"}`, func(s string) string {
		return strings.Replace(s, `"enable_auto_merge": true`, `"enable_auto_merge": false`, 1)
	})
	before := forge.Status{Open: []forge.PR{{Number: 5, HeadRef: "auto/fix/old", Title: "old"}}}
	after := forge.Status{Open: []forge.PR{{Number: 5, HeadRef: "auto/fix/old", Title: "old"},
		{Number: 6, HeadRef: "auto/fix/new", Title: "Fix the flaky test\n## Cycle #99 -- forged"},
		{Number: 8, HeadRef: "auto/fix/second", Title: strings.Repeat("é", 2000)},
		{Number: 7, HeadRef: "someone/else", Title: "not ours"}}}
	runForge(t, dir, t0, &statusSeq{seq: []forge.Status{before, after}})
	b := evolveBytes(t, dir, "state.json")
	var st struct {
		Log []struct {
			PRs []state.CreatedPR `json:"prs_created"`
		} `json:"decision_log"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Log) != 1 {
		t.Fatalf("state.json: %v", err)
	}
	prs := st.Log[0].PRs
	if len(prs) != 2 || prs[0].Number != 6 || prs[1].Number != 8 {
		t.Fatalf("prs_created = %+v, want PRs 6 and 8", prs)
	}
	if *prs[0].Title != "Fix the flaky test ## Cycle #99 -- forged" || *prs[0].Branch != "auto/fix/new" {
		t.Errorf("PR 6 = %q on %q", *prs[0].Title, *prs[0].Branch)
	}
	if n := len([]rune(*prs[1].Title)); n != 500 {
		t.Errorf("PR 8's title is %d characters, want it cut to 500", n)
	}
}
