package orient

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

func outcomeCfg() *config.Config {
	c := config.Default()
	c.Domains = config.Domains{
		{Name: "service_health", Weight: 2, BranchPrefix: "auto/scan-health/"},
		{Name: "test_coverage", Weight: 1, BranchPrefix: "auto/check-tests/"},
	}
	c.Implementation.Enabled = true
	return c
}

func ip(n int) *int { return &n }

func TestDomainOfBranch(t *testing.T) {
	c := outcomeCfg()
	c.Domains = append(c.Domains, config.Domain{Name: "deep", BranchPrefix: "auto/scan-health/deep/"})
	for branch, want := range map[string]string{
		"auto/scan-health/fix-1":     "service_health",
		"auto/scan-health/deep/x":    "deep",
		"auto/dev-cycle/a1":          "implementation",
		"feature/other":              "",
		"auto/check-tests/2026-01-x": "test_coverage",
	} {
		if got := DomainOfBranch(c, branch); got != want {
			t.Errorf("DomainOfBranch(%q) = %q, want %q", branch, got, want)
		}
	}
	c.Implementation.Enabled = false
	if got := DomainOfBranch(c, "auto/dev-cycle/a1"); got != "" {
		t.Errorf("implementation PRs count only when implementation is enabled: %q", got)
	}
}

func TestStep2B_ConfidenceFromMergedAndRejectedPRs(t *testing.T) {
	c := outcomeCfg()
	in := OutcomeInput{Now: now, Config: c, Confidence: map[string]float64{"service_health": 0.74, "test_coverage": 0.95},
		Merged: []PR{{Number: 30, HeadRef: "auto/check-tests/a", Merged: now.Add(-time.Hour)}, {Number: 31, HeadRef: "unrelated"}},
		Closed: []PR{{Number: 28, HeadRef: "auto/scan-health/retry", Closed: now.Add(-2 * time.Hour)}},
	}
	r := FromOutcomes(in)
	if r.Confidence["service_health"] != 0.54 || r.Confidence["test_coverage"] != 1.0 {
		t.Errorf("confidence = %v (reject -0.2; merge +0.1 capped at max)", r.Confidence)
	}
	if len(r.Changes) != 2 || r.Changes[0].PR != 30 || r.Changes[0].Delta != 0.05 || r.Changes[1].PR != 28 || r.Changes[1].Delta != -0.2 || r.Changes[1].Outcome != "rejected" {
		t.Errorf("changes = %+v", r.Changes)
	}
	// Counted once: the next cycle sees the same PRs and changes nothing.
	in.Confidence, in.Counted = r.Confidence, r.Counted
	if r2 := FromOutcomes(in); len(r2.Changes) != 0 || r2.Confidence["service_health"] != 0.54 {
		t.Errorf("a PR was counted twice: %+v", r2.Changes)
	}
	// PRs already in a decision-log entry's pr_outcomes are not counted again either.
	in.Counted = nil
	in.Log = []state.DecisionEntry{{Cycle: 9, PROutcomes: json.RawMessage(`[{"pr": 28, "domain": "service_health", "outcome": "rejected", "confidence_delta": -0.2}, {"pr": 30}]`)}}
	if r3 := FromOutcomes(in); len(r3.Changes) != 0 {
		t.Errorf("decision-log pr_outcomes must prevent double counting: %+v", r3.Changes)
	}
	// Floor at min.
	in.Log, in.Confidence = nil, map[string]float64{"service_health": 0.15}
	if r4 := FromOutcomes(in); r4.Confidence["service_health"] != 0.1 {
		t.Errorf("floor: %v", r4.Confidence)
	}
}

func TestStep2B4_OutcomeBackAnnotation(t *testing.T) {
	c := outcomeCfg()
	outs := []state.Outcome{
		{CycleID: 3, ResultType: "pr_created", QualityMult: 0.5, PRNumber: ip(41)},
		{CycleID: 4, ResultType: "pr_created", QualityMult: 0.5, PRNumber: ip(42)},
		{CycleID: 5, ResultType: "futile"},
	}
	merge := now.Add(-time.Hour)
	in := OutcomeInput{Now: now, Config: c, Outcomes: outs,
		Merged: []PR{{Number: 41, HeadRef: "auto/dev-cycle/a", Merged: merge}},
		Closed: []PR{{Number: 42, HeadRef: "auto/dev-cycle/b"}}}
	r := FromOutcomes(in)
	if r.Outcomes[0].ResultType != "pr_merged" || r.Outcomes[0].QualityMult != 0.8 || r.Outcomes[1].ResultType != "pr_rejected" || r.Outcomes[1].QualityMult != 0 {
		t.Fatalf("outcomes = %+v", r.Outcomes)
	}
	if at, ok := MergedAt(r.Outcomes[0]); !ok || !at.Equal(merge) {
		t.Errorf("merged_at recorded as %v", at)
	}
	if len(r.Annotations) != 2 || r.Annotations[0] != (Annotation{CycleID: 3, PR: 41, ResultType: "pr_merged", QualityMult: 0.8}) {
		t.Errorf("annotations = %+v", r.Annotations)
	}
	if outs[0].ResultType != "pr_created" {
		t.Error("FromOutcomes must not modify its input")
	}
	// Before 48 h the hold is not decided; after, the forge says.
	if c := HoldCandidates(r.Outcomes, now.Add(46*time.Hour)); len(c) != 0 {
		t.Errorf("candidates before 48h: %v", c)
	}
	later := now.Add(47 * time.Hour) // 48 h after the merge
	if c := HoldCandidates(r.Outcomes, later); len(c) != 1 || c[0] != 41 {
		t.Errorf("candidates after 48h: %v", c)
	}
	held := FromOutcomes(OutcomeInput{Now: later, Config: c, Outcomes: r.Outcomes, Reverted: map[int]bool{41: false}})
	if held.Outcomes[0].ResultType != "pr_merged_held" || held.Outcomes[0].QualityMult != 1.0 {
		t.Errorf("held: %+v", held.Outcomes[0])
	}
	reverted := FromOutcomes(OutcomeInput{Now: later, Config: c, Outcomes: r.Outcomes, Reverted: map[int]bool{41: true}})
	if reverted.Outcomes[0].ResultType != "pr_rejected" || reverted.Outcomes[0].QualityMult != 0 {
		t.Errorf("reverted: %+v", reverted.Outcomes[0])
	}
	undecided := FromOutcomes(OutcomeInput{Now: later, Config: c, Outcomes: r.Outcomes})
	if undecided.Outcomes[0].ResultType != "pr_merged" || len(undecided.Annotations) != 0 {
		t.Errorf("without the forge's answer nothing changes: %+v", undecided.Outcomes[0])
	}
}

func TestStep2B2_ActionQueueSync(t *testing.T) {
	q := state.ActionQueue{
		Pending:    []state.Action{{ID: "a1", Status: "pending"}},
		InProgress: []state.Action{{ID: "a2", Status: "proposed", PRNumber: ip(50)}, {ID: "a3", Status: "proposed", PRNumber: ip(51)}, {ID: "a4", Status: "proposed", PRNumber: ip(52)}},
	}
	r := FromOutcomes(OutcomeInput{Now: now, Config: outcomeCfg(), Queue: q,
		Merged: []PR{{Number: 50}}, Closed: []PR{{Number: 51}}, Open: []PR{{Number: 52}}})
	if len(r.Queue.InProgress) != 1 || r.Queue.InProgress[0].ID != "a4" || len(r.Queue.Completed) != 2 ||
		r.Queue.Completed[0].Status != "merged" || r.Queue.Completed[1].Status != "rejected" || len(r.Queue.Pending) != 1 {
		t.Errorf("queue = %+v", r.Queue)
	}
	if len(r.Memos) != 1 || r.Memos[0].Type != "pr_rejected" {
		t.Errorf("a rejected PR adds a memo: %+v", r.Memos)
	}
}

func TestStep3B_StaleAfterChangeAndOpenDrafts(t *testing.T) {
	c := outcomeCfg()
	r := FromOutcomes(OutcomeInput{Now: now, Config: c,
		Merged:  []PR{{Number: 1, HeadRef: "auto/scan-health/a", Merged: now.Add(-30 * time.Hour)}, {Number: 2, HeadRef: "auto/check-tests/a", Merged: now.Add(-30 * time.Hour)}},
		Open:    []PR{{Number: 3, HeadRef: "auto/dev-cycle/x", Draft: true}, {Number: 4, HeadRef: "auto/dev-cycle/y"}, {Number: 5, HeadRef: "other", Draft: true}},
		LastRun: map[string]time.Time{"service_health": now.Add(-40 * time.Hour), "test_coverage": now.Add(-2 * time.Hour)}})
	if !r.StaleAfterChange["service_health"] || r.StaleAfterChange["test_coverage"] || len(r.StaleAfterChange) != 1 {
		t.Errorf("stale after change = %v", r.StaleAfterChange)
	}
	if r.OpenDraftImpl != 1 {
		t.Errorf("open draft implementation PRs = %d", r.OpenDraftImpl)
	}
}

func TestStep2B2_ReviewFeedbackMemos(t *testing.T) {
	q := state.ActionQueue{InProgress: []state.Action{{ID: "a2", Status: "proposed", PRNumber: ip(50), SourceDomain: "api"}}}
	reviews := map[int][]ReviewNote{50: {{ID: 1, User: "ana", State: "CHANGES_REQUESTED", Body: "Please\n add a test."}, {ID: 2, User: "bo", State: "APPROVED"}}}
	q2, memos := ReviewMemos(q, reviews, now)
	if len(memos) != 2 || memos[0].Message != "PR #50 (action a2): changes requested by ana: Please add a test." || memos[1].Message != "PR #50 (action a2): approved by bo" || memos[0].Type != "pr_review" {
		t.Fatalf("memos = %+v", memos)
	}
	// Seen reviews are remembered on the action: no memo twice.
	if _, again := ReviewMemos(q2, reviews, now); len(again) != 0 {
		t.Errorf("repeated memos: %+v", again)
	}
	if _, ok := q.InProgress[0].Extra["reviews_seen"]; ok {
		t.Error("ReviewMemos must not modify its input")
	}
}
