package skills_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ooda-loop/ooda/internal/cli"
)

// The backlog skill through `ooda cycle`, as a user runs it: a domain
// whose primary skill is "/backlog" and a GitHub forge (a local fake of
// its API). The engine must turn the reported actions into queue items
// with their RICE scores, and a second cycle with nothing new must be
// futile, not a second copy of every issue.
func TestBacklogThroughOodaCycle(t *testing.T) {
	const token = "ghe_cycletesttoken9876543210"
	t.Setenv("GH_ENTERPRISE_TOKEN", token)
	var closed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/repos/octo/widget/pulls":
			w.Write([]byte(`[]`))
		case "/repos/octo/widget/issues":
			issues := []map[string]any{
				{"number": 12, "title": "Crash on empty config", "labels": []map[string]string{{"name": "bug"}, {"name": "security"}}},
				{"number": 8, "title": "Add a --json flag", "labels": []map[string]string{{"name": "enhancement"}}},
				{"number": 9, "title": "Fix the docs link", "pull_request": map[string]string{"url": "x"}},
			}
			if closed.Load() {
				issues = issues[1:]
			}
			json.NewEncoder(w).Encode(issues)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := `{
  "mission": "Ship what users ask for.",
  "domains": {"backlog": {"weight": 2, "primary_skill": "/backlog", "fallback": true, "mission_alignment": 1}},
  "forge": {"provider": "github", "repo": "octo/widget", "api_url": "` + srv.URL + `"},
  "scoring": {"rice_extensions": {"security": 1}},
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/backlog"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cycle := func(now string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := cli.Main([]string{"cycle", "--project", dir, "--now", now}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("ooda cycle exited %d\n%s\n%s", code, out.String(), errb.String())
		}
		if strings.Contains(out.String()+errb.String(), token) {
			t.Fatalf("the token was printed:\n%s\n%s", out.String(), errb.String())
		}
		return out.String()
	}
	type item struct {
		Title string  `json:"title"`
		Rice  float64 `json:"rice_score"`
	}
	queue := func() []item {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/action_queue.json"))
		if err != nil {
			t.Fatal(err)
		}
		var q struct {
			Pending []item `json:"pending"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		return q.Pending
	}

	out := cycle("2026-03-02T09:00:00Z")
	for _, want := range []string{
		"[Act] /backlog starting... (builtin backlog)",
		`[Act] /backlog reports: 2 open issues; 2 new actions proposed, top #12 "Crash on empty config" (RICE 270)`,
		"(action_extracted,",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("cycle 1: no %q in\n%s", want, out)
		}
	}
	q := queue()
	if len(q) != 2 || q[0].Title != "Issue #12: Crash on empty config" || q[0].Rice != 270 || q[1].Title != "Issue #8: Add a --json flag" || q[1].Rice != 20 {
		t.Fatalf("queue after cycle 1: %+v", q)
	}

	out = cycle("2026-03-02T10:00:00Z")
	if !strings.Contains(out, "[Act] /backlog reports: 2 open issues; nothing new to plan (2 already queued)") || !strings.Contains(out, "(futile,") {
		t.Fatalf("cycle 2:\n%s", out)
	}
	if q := queue(); len(q) != 2 {
		t.Fatalf("queue after cycle 2: %+v", q)
	}

	closed.Store(true)
	out = cycle("2026-03-02T11:00:00Z")
	if !strings.Contains(out, "closed since the last run: #12") || !strings.Contains(out, "(action_extracted,") {
		t.Fatalf("cycle 3:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/backlog.json"))
	if err != nil || !strings.Contains(string(b), `"closed_since_last_run": [
    12
  ]`) {
		t.Fatalf("state file: %v\n%s", err, b)
	}
}
