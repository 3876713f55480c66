package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// fakeForge stands in for GitHub at the network boundary.
type fakeForge struct {
	status    forge.Status
	statusErr error
	facts     map[int]forge.Facts
	reverted  map[int]bool
	merged    []int
	mergeErr  error
	calls     []string
}

func (f *fakeForge) Name() string { return "fake" }
func (f *fakeForge) Status(context.Context) (forge.Status, error) {
	f.calls = append(f.calls, "status")
	return f.status, f.statusErr
}
func (f *fakeForge) Facts(_ context.Context, n int) (forge.Facts, error) {
	f.calls = append(f.calls, "facts")
	fa, ok := f.facts[n]
	if !ok {
		return forge.Facts{}, forge.ErrNotFound
	}
	return fa, nil
}
func (f *fakeForge) MergeSquash(_ context.Context, n int, head string) error {
	f.calls = append(f.calls, "merge")
	if f.mergeErr != nil {
		return f.mergeErr
	}
	if head != f.facts[n].HeadSHA {
		return forge.ErrHeadMoved
	}
	f.merged = append(f.merged, n)
	return nil
}
func (f *fakeForge) Reverted(_ context.Context, pr forge.PR) (bool, error) {
	f.calls = append(f.calls, "reverted")
	return f.reverted[pr.Number], nil
}

func runForge(t *testing.T, dir string, now time.Time, fg forge.Forge) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: &out, Forge: fg})
	if err != nil {
		t.Fatalf("RunCycle: %v\n%s", err, out.String())
	}
	return res, out.String()
}

func TestStep1B_ForgeUnreachableIsOneWarning(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	res, out := runForge(t, dir, t0, &fakeForge{statusErr: errors.New("dial tcp: connection refused")})
	if res.Status != StatusCompleted || strings.Count(out, "[WARN] Forge fake unreachable") != 1 {
		t.Errorf("status %s\n%s", res.Status, out)
	}
}

func TestStep2B_ConfidenceFromPROutcomesEndToEnd(t *testing.T) {
	cfg := strings.Replace(threeDomains, `"primary_skill": "/scan-health", "fallback": true`, `"primary_skill": "/scan-health", "fallback": true, "branch_prefix": "auto/scan-health/"`, 1)
	dir := project(t, cfg, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/confidence.json":   `{"domains": {"service_health": {"score": 0.74, "recent_outcomes": ["x"]}}}`,
		"agent/state/evolve/outcomes.json":     `{"entries": [{"cycle_id": 7, "result_type": "pr_created", "quality_multiplier": 0.5, "pr_number": 28}]}`,
		"agent/state/evolve/action_queue.json": `{"pending": [], "in_progress": [{"id": "a9", "title": "retry wrapper", "status": "proposed", "pr_number": 28, "source_domain": "service_health"}], "completed": []}`,
	})
	fg := &fakeForge{status: forge.Status{Closed: []forge.PR{{Number: 28, HeadRef: "auto/scan-health/retry", State: forge.StateClosed, Closed: t0.Add(-time.Hour)}}}}
	res, out := runForge(t, dir, t0, fg)
	if !strings.Contains(out, "[Orient] PR #28 rejected -> service_health confidence -0.20 (0.74 → 0.54)") {
		t.Fatalf("no confidence change:\n%s", out)
	}
	var conf struct {
		Domains map[string]map[string]any `json:"domains"`
	}
	readJSON(t, filepath.Join(dir, "agent/state/evolve/confidence.json"), &conf)
	if sh := conf.Domains["service_health"]; sh["score"] != 0.54 || sh["recent_outcomes"] == nil || sh["last_updated"] != "2026-04-14T09:00:00Z" {
		t.Errorf("nested confidence updated in place: %v", sh)
	}
	st := loadState(t, dir)
	var outs []map[string]any
	json.Unmarshal(st.DecisionLog[0].PROutcomes, &outs)
	if len(outs) != 1 || outs[0]["pr"] != 28.0 || outs[0]["outcome"] != "rejected" || len(st.CountedPRs) != 1 {
		t.Errorf("pr_outcomes %s counted %v", st.DecisionLog[0].PROutcomes, st.CountedPRs)
	}
	var o state.Outcomes
	readJSON(t, filepath.Join(dir, "agent/state/evolve/outcomes.json"), &o)
	if o.Entries[0].ResultType != "pr_rejected" || o.Entries[0].QualityMult != 0 || len(o.Entries) != 2 {
		t.Errorf("outcomes = %+v", o.Entries)
	}
	// cycle_log.jsonl stays one line per cycle; the back-annotation of
	// cycle 7 goes to cycle_log.annotations.jsonl.
	log, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 1 || strings.Contains(string(log), `"annotate"`) {
		t.Errorf("cycle log = %s", log)
	}
	ann, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/cycle_log.annotations.jsonl"))
	lines = strings.Split(strings.TrimSpace(string(ann)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"annotate":{"pr_number":28,"quality_multiplier":0,"result_type":"pr_rejected"}`) || !strings.Contains(lines[0], `"cycle_id":7`) {
		t.Errorf("annotations = %s", ann)
	}
	var q state.ActionQueue
	readJSON(t, filepath.Join(dir, "agent/state/evolve/action_queue.json"), &q)
	if len(q.InProgress) != 0 || len(q.Completed) != 1 || q.Completed[0].Status != "rejected" {
		t.Errorf("queue = %+v", q)
	}
	var m state.Metrics
	readJSON(t, filepath.Join(dir, "agent/state/evolve/metrics.json"), &m)
	if m.Counters.TotalPRsRejected != 1 {
		t.Errorf("total_prs_rejected = %d", m.Counters.TotalPRsRejected)
	}
	_ = res
	// The same closed PR next cycle changes nothing.
	_, out = runForge(t, dir, t0.Add(time.Hour), fg)
	if strings.Contains(out, "PR #28 rejected") {
		t.Errorf("PR counted twice:\n%s", out)
	}
}

func TestStep2B4_HoldDecidedThroughTheForge(t *testing.T) {
	dir := project(t, threeDomains, map[string]string{"skill.sh": skillScript,
		"agent/state/evolve/outcomes.json": `{"entries": [{"cycle_id": 3, "result_type": "pr_merged", "quality_multiplier": 0.8, "pr_number": 41, "merged_at": "2026-04-11T09:00:00Z"},
		  {"cycle_id": 4, "result_type": "pr_merged", "quality_multiplier": 0.8, "pr_number": 42, "merged_at": "2026-04-14T08:00:00Z"}]}`})
	fg := &fakeForge{reverted: map[int]bool{41: false}}
	_, out := runForge(t, dir, t0, fg)
	if !strings.Contains(out, "cycle #3 PR #41 → pr_merged_held (1.0)") || strings.Contains(out, "PR #42 →") {
		t.Errorf("hold:\n%s", out)
	}
	if n := strings.Count(strings.Join(fg.calls, ","), "reverted"); n != 1 {
		t.Errorf("only merges past 48 h are checked, got %d checks", n)
	}
}
