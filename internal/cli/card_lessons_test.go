package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Step 7's "recalled lesson" LEARN line names a lesson that informed the
// cycle: 2-F recalls lessons for every candidate, and the decision-log
// entry keeps only the winner's. Without that filter the quickstart demo's
// cycle 6 (backlog) would claim a service_health lesson.
func TestStep7_LessonsRecalledAreTheWinners(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb strings.Builder
	if code := Main([]string{"demo", "--example", "quickstart", "--dir", dir, "--cycles", "9"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var st struct {
		Log []struct {
			Cycle   int      `json:"cycle"`
			Domain  string   `json:"selected_domain"`
			Lessons []string `json:"lessons_recalled"`
		} `json:"decision_log"`
	}
	var refl struct {
		Reflections []struct {
			Domain string `json:"domain"`
			Lesson string `json:"lesson"`
		} `json:"reflections"`
	}
	for name, v := range map[string]any{"state.json": &st, "reflections.json": &refl} {
		b, err := os.ReadFile(filepath.Join(dir, "agent", "state", "evolve", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	domainOf := map[string]map[string]bool{}
	for _, r := range refl.Reflections {
		if domainOf[r.Lesson] == nil {
			domainOf[r.Lesson] = map[string]bool{}
		}
		domainOf[r.Lesson][r.Domain] = true
	}
	recalled := 0
	for _, e := range st.Log {
		for _, l := range e.Lessons {
			recalled++
			if !domainOf[l][e.Domain] {
				t.Errorf("cycle %d (%s) records the lesson %q, which is not one of %s's", e.Cycle, e.Domain, l, e.Domain)
			}
		}
	}
	if recalled == 0 {
		t.Fatalf("no cycle of the demo recorded a recalled lesson:\n%s", out.String())
	}
}
