package orient

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// PR is the part of a forge pull request Orient reads.
type PR struct {
	Number  int
	HeadRef string
	Draft   bool
	Merged  time.Time
	Closed  time.Time
}

// HoldWindow is how long a merge must survive unreverted to count as held
// (2-B4).
const HoldWindow = 48 * time.Hour

// OutcomeInput is what re-orienting from PR outcomes reads.
type OutcomeInput struct {
	Now    time.Time
	Config *config.Config
	// Confidence is the confidence per domain before this step.
	Confidence map[string]float64
	Open       []PR
	Merged     []PR
	Closed     []PR
	Log        []state.DecisionEntry
	Counted    []int
	Outcomes   []state.Outcome
	// Reverted holds the forge's answer for merged outcomes past the hold
	// window (keyed by PR number); a PR absent here is not decided yet.
	Reverted map[int]bool
	Queue    state.ActionQueue
	// LastRun is when each domain last ran (zero: never).
	LastRun map[string]time.Time
}

// ConfidenceChange is one PR outcome that moved a domain's confidence.
type ConfidenceChange struct {
	PR      int     `json:"pr"`
	Domain  string  `json:"domain"`
	Outcome string  `json:"outcome"` // merged or rejected
	Delta   float64 `json:"confidence_delta"`
	Before  float64 `json:"before"`
	After   float64 `json:"after"`
}

// Annotation is a 2-B4 back-annotation of an earlier cycle's outcome.
type Annotation struct {
	CycleID     int     `json:"cycle_id"`
	PR          int     `json:"pr_number"`
	ResultType  string  `json:"result_type"`
	QualityMult float64 `json:"quality_multiplier"`
}

// OutcomeResult is what the PR outcomes changed.
type OutcomeResult struct {
	Confidence  map[string]float64
	Changes     []ConfidenceChange
	Counted     []int
	Outcomes    []state.Outcome
	Annotations []Annotation
	Queue       state.ActionQueue
	QueueMoves  []string
	Memos       []state.Memo
	// StaleAfterChange lists domains with a merged PR that have not run
	// since, for longer than signals.stale_after_change_hours (3-B).
	StaleAfterChange map[string]bool
	// OpenDraftImpl counts open draft PRs on the implementation branch
	// prefix (the 3-A2 open-PR penalty).
	OpenDraftImpl int
	Notes         []string
	// Warnings name the decision-log values that were left out because
	// they are not PR numbers (file, JSON path, value).
	Warnings []string
}

// maxLogWarnings bounds the warnings one hand-edited decision log can
// print per cycle.
const maxLogWarnings = 5

// DomainOfBranch matches a PR's head branch to a domain by branch_prefix
// (the longest prefix wins); the implementation prefix maps to the
// implementation domain when it is enabled. "" when nothing matches.
func DomainOfBranch(cfg *config.Config, branch string) string {
	best, bestLen := "", 0
	for _, d := range cfg.Domains {
		if p := d.BranchPrefix; p != "" && strings.HasPrefix(branch, p) && len(p) > bestLen {
			best, bestLen = d.Name, len(p)
		}
	}
	if cfg.Implementation.Enabled {
		if p := cfg.Implementation.BranchPrefix; p != "" && strings.HasPrefix(branch, p) && len(p) > bestLen {
			best = "implementation"
		}
	}
	return best
}

// FromOutcomes is the outcome half of Orient: 2-B (confidence from merged
// and rejected PRs, each counted once), 2-B2 (action-queue sync), 2-B4
// (back-annotation of earlier outcomes: merged 0.8, held 48 h without a
// revert 1.0, reverted or rejected 0.0), the stale_after_change signal and
// the open-draft count. It is pure: the forge calls happened in Observe.
func FromOutcomes(in OutcomeInput) OutcomeResult {
	cfg := in.Config
	// Cloned whole: filled a key at a time, the map rehashes every domain
	// several times over as it grows, at a thousand of them.
	out := OutcomeResult{Confidence: maps.Clone(in.Confidence), StaleAfterChange: map[string]bool{}, Queue: in.Queue}
	if out.Confidence == nil {
		out.Confidence = map[string]float64{}
	}
	counted := map[int]bool{}
	for _, n := range in.Counted {
		counted[n] = true
	}
	// Counted keeps insertion order (oldest first), so the cap drops the
	// oldest: plain-git PR numbers are hashes, not a sequence.
	order := append([]int(nil), in.Counted...)
	// A PR already in the decision log was counted there: by this engine
	// (pr_outcomes) or by the original loop before the switch
	// (prs_processed), whose own 2-B skips the same PRs. Such a number
	// joins Counted, so it stays counted after the 20-entry log forgets
	// it while the forge still lists the PR among its recent merges.
	var bad []string
	logged := func(n int) {
		if !counted[n] {
			counted[n] = true
			order = append(order, n)
		}
	}
	for _, e := range in.Log {
		for _, n := range loggedPRs(e.PROutcomes, "pr", logPath(e.Cycle, "pr_outcomes"), &bad) {
			logged(n)
		}
		for _, n := range loggedPRs(e.PRsProcessed, "number", logPath(e.Cycle, "prs_processed"), &bad) {
			logged(n)
		}
	}
	for i, b := range bad {
		if i == maxLogWarnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: %d more PR numbers in the decision log could not be read; ignored.", evolveStateFile, len(bad)-i))
			break
		}
		out.Warnings = append(out.Warnings, b)
	}
	apply := func(pr PR, outcome string, delta float64) {
		if counted[pr.Number] {
			return
		}
		d := DomainOfBranch(cfg, pr.HeadRef)
		if d == "" {
			return
		}
		counted[pr.Number] = true
		order = append(order, pr.Number)
		before, ok := out.Confidence[d]
		if !ok {
			before = cfg.Confidence.Initial
		}
		after := math.Min(math.Max(before+delta, cfg.Confidence.Min), cfg.Confidence.Max)
		out.Confidence[d] = after
		out.Changes = append(out.Changes, ConfidenceChange{PR: pr.Number, Domain: d, Outcome: outcome, Delta: round4(after - before), Before: before, After: after})
	}
	for _, pr := range in.Merged {
		apply(pr, "merged", cfg.Confidence.MergeBoost)
	}
	for _, pr := range in.Closed {
		apply(pr, "rejected", -cfg.Confidence.RejectPenalty)
	}
	out.Counted = order
	if len(out.Counted) > 500 {
		out.Counted = append([]int(nil), out.Counted[len(out.Counted)-500:]...)
	}

	out.Outcomes = backAnnotate(in, &out)
	syncQueue(in, &out)

	// stale_after_change: a merge landed in X, and X has not run since,
	// for longer than the configured hours.
	for _, pr := range in.Merged {
		d := DomainOfBranch(cfg, pr.HeadRef)
		if d == "" || d == "implementation" {
			continue
		}
		last := in.LastRun[d]
		if pr.Merged.After(last) && in.Now.Sub(last).Hours() > cfg.Signals.StaleAfterChangeHours {
			out.StaleAfterChange[d] = true
		}
	}
	for _, pr := range in.Open {
		if pr.Draft && cfg.Implementation.Enabled && strings.HasPrefix(pr.HeadRef, cfg.Implementation.BranchPrefix) {
			out.OpenDraftImpl++
		}
	}
	return out
}

// backAnnotate applies 2-B4 to a copy of the outcomes. The copy is made
// at the first annotation: most cycles annotate nothing, and a full
// buffer is 200 outcomes (about 38 KB) copied for nothing. Without one,
// the input's list itself is returned, which no caller changes.
func backAnnotate(in OutcomeInput, out *OutcomeResult) []state.Outcome {
	merged := map[int]PR{}
	for _, pr := range in.Merged {
		merged[pr.Number] = pr
	}
	closed := map[int]bool{}
	for _, pr := range in.Closed {
		closed[pr.Number] = true
	}
	outs, copied := in.Outcomes, false
	own := func() {
		if !copied {
			outs, copied = append([]state.Outcome(nil), in.Outcomes...), true
		}
	}
	set := func(i int, rt string, pf float64) {
		if outs[i].ResultType == rt {
			return
		}
		own()
		o := &outs[i]
		artifact := 1.0
		if o.ArtifactScore != nil {
			artifact = *o.ArtifactScore
		}
		o.ResultType = rt
		o.QualityMult = math.Round(pf*artifact*1000) / 1000
		p := pf
		o.ProcessFactor = &p
		out.Annotations = append(out.Annotations, Annotation{CycleID: o.CycleID, PR: *o.PRNumber, ResultType: rt, QualityMult: o.QualityMult})
	}
	for i := range outs {
		o := outs[i]
		if o.PRNumber == nil {
			continue
		}
		n := *o.PRNumber
		switch {
		case closed[n] && o.ResultType != "pr_rejected":
			set(i, "pr_rejected", 0)
		case o.ResultType == "pr_created":
			if pr, ok := merged[n]; ok {
				set(i, "pr_merged", 0.8)
				own()
				ts, _ := json.Marshal(state.FormatTime(pr.Merged))
				if outs[i].Extra == nil {
					outs[i].Extra = state.Extra{}
				} else {
					outs[i].Extra = cloneExtra(outs[i].Extra)
				}
				outs[i].Extra["merged_at"] = ts
			}
		case o.ResultType == "pr_merged":
			rev, decided := in.Reverted[n]
			if !decided {
				continue
			}
			if rev {
				set(i, "pr_rejected", 0)
			} else {
				set(i, "pr_merged_held", 1.0)
			}
		}
	}
	return outs
}

func cloneExtra(e state.Extra) state.Extra {
	c := state.Extra{}
	for k, v := range e {
		c[k] = v
	}
	return c
}

// MergedAt is when an outcome's PR was merged, as 2-B4 recorded it.
func MergedAt(o state.Outcome) (time.Time, bool) {
	raw, ok := o.Extra["merged_at"]
	if !ok {
		return time.Time{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, false
	}
	return state.ParseTime(s)
}

// HoldCandidates lists the merged outcomes whose 48-hour hold can be
// decided now: Observe asks the forge whether each was reverted.
func HoldCandidates(outcomes []state.Outcome, now time.Time) []int {
	var out []int
	for _, o := range outcomes {
		if o.ResultType != "pr_merged" || o.PRNumber == nil {
			continue
		}
		if t, ok := MergedAt(o); ok && now.Sub(t) >= HoldWindow {
			out = append(out, *o.PRNumber)
		}
	}
	return out
}

// syncQueue is 2-B2: actions proposed as a PR follow that PR.
func syncQueue(in OutcomeInput, out *OutcomeResult) {
	merged := map[int]bool{}
	for _, pr := range in.Merged {
		merged[pr.Number] = true
	}
	closed := map[int]bool{}
	for _, pr := range in.Closed {
		closed[pr.Number] = true
	}
	q := in.Queue
	var pending, inProgress []state.Action
	completed := append([]state.Action(nil), q.Completed...)
	move := func(list []state.Action, keep *[]state.Action) {
		for _, a := range list {
			if a.Status == "proposed" && a.PRNumber != nil {
				n := *a.PRNumber
				switch {
				case merged[n]:
					a.Status = "merged"
					completed = append(completed, a)
					out.QueueMoves = append(out.QueueMoves, fmt.Sprintf("%s merged (PR #%d)", a.ID, n))
					continue
				case closed[n]:
					a.Status = "rejected"
					completed = append(completed, a)
					out.QueueMoves = append(out.QueueMoves, fmt.Sprintf("%s rejected (PR #%d)", a.ID, n))
					out.Memos = append(out.Memos, state.Memo{Timestamp: state.FormatTime(in.Now), Domain: a.SourceDomain, Type: "pr_rejected",
						Message: fmt.Sprintf("PR #%d for action %s (%s) was closed without merging.", n, a.ID, a.Title)})
					continue
				}
			}
			*keep = append(*keep, a)
		}
	}
	move(q.Pending, &pending)
	move(q.InProgress, &inProgress)
	if len(out.QueueMoves) == 0 {
		return
	}
	q.Pending, q.InProgress, q.Completed = pending, inProgress, completed
	if len(q.Completed) > 30 {
		q.Completed = q.Completed[len(q.Completed)-30:]
	}
	out.Queue = q
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// logPath names a list of the decision-log entry of cycle, as a warning
// says where it is: by its cycle, since the log's own numbering is not
// the file's when the file holds elements that are not entries.
func logPath(cycle int, list string) string {
	return fmt.Sprintf("%s: the decision_log entry of cycle %d, /%s", evolveStateFile, cycle, list)
}

// evolveStateFile is state.json as warnings name it, from the project.
var evolveStateFile = filepath.ToSlash(filepath.Join("agent", "state", "evolve", state.StateFile))

// loggedPRs reads the PR numbers of a decision-log list of outcomes (key
// names the number: "pr" in pr_outcomes, "number" in prs_processed).
// Each item is read on its own: a number written as a string ("29",
// "#29") or a float with no fraction is that PR; anything else is left
// out with a warning naming path, and never costs the other items. A
// value that is not a list is one warning.
func loggedPRs(raw json.RawMessage, key, path string, bad *[]string) []int {
	if len(raw) == 0 || isJSONNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		*bad = append(*bad, fmt.Sprintf("%s: %s is not a list; its PRs are not known to be counted.", path, quoteValue(raw)))
		return nil
	}
	var out []int
	for j, it := range items {
		var obj map[string]json.RawMessage
		if json.Unmarshal(it, &obj) != nil {
			*bad = append(*bad, fmt.Sprintf("%s/%d: %s is not an object; ignored.", path, j, quoteValue(it)))
			continue
		}
		v, ok := obj[key]
		if !ok || isJSONNull(v) {
			continue
		}
		n, ok := PRNumber(v)
		if !ok {
			*bad = append(*bad, fmt.Sprintf("%s/%d/%s: %s is not a PR number; ignored.", path, j, key, quoteValue(v)))
			continue
		}
		out = append(out, n)
	}
	return out
}

// PRNumber reads a PR number as a state file may hold it: a JSON integer
// (or a float with no fraction, 29.0), or a string of one ("29", "#29").
// Zero, negative and fractional values are no PR.
func PRNumber(raw json.RawMessage) (int, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "#"), 10, 64)
		return int(n), err == nil && n > 0 && int64(int(n)) == n
	}
	var num json.Number
	if json.Unmarshal(raw, &num) != nil {
		return 0, false
	}
	if n, err := num.Int64(); err == nil {
		return int(n), n > 0 && int64(int(n)) == n
	}
	f, err := num.Float64()
	if err != nil || f <= 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, false
	}
	return int(f), true
}

func isJSONNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// quoteValue is a value for a warning: compact, at most 40 characters.
func quoteValue(raw json.RawMessage) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return s
}

// ReviewNote is one PR review as Orient reads it.
type ReviewNote struct {
	ID    int64
	User  string
	State string
	Body  string
}

// ReviewMemos is the feedback half of 2-B2: each new review of a proposed
// action's open PR becomes a memo (summarised to one line), once — the
// action remembers the review ids it has seen.
func ReviewMemos(q state.ActionQueue, reviews map[int][]ReviewNote, now time.Time) (state.ActionQueue, []state.Memo) {
	var memos []state.Memo
	touch := func(list []state.Action) []state.Action {
		out := append([]state.Action(nil), list...)
		for i := range out {
			a := &out[i]
			if a.PRNumber == nil || len(reviews[*a.PRNumber]) == 0 {
				continue
			}
			var seen []int64
			if raw, ok := a.Extra["reviews_seen"]; ok {
				_ = json.Unmarshal(raw, &seen)
			}
			known := map[int64]bool{}
			for _, id := range seen {
				known[id] = true
			}
			changed := false
			for _, r := range reviews[*a.PRNumber] {
				if known[r.ID] {
					continue
				}
				known[r.ID], changed = true, true
				seen = append(seen, r.ID)
				body := strings.Join(strings.Fields(r.Body), " ")
				if len([]rune(body)) > 160 {
					body = string([]rune(body)[:160]) + "…"
				}
				msg := fmt.Sprintf("PR #%d (action %s): %s by %s", *a.PRNumber, a.ID, strings.ToLower(strings.ReplaceAll(r.State, "_", " ")), orNone(r.User))
				if body != "" {
					msg += ": " + body
				}
				memos = append(memos, state.Memo{Timestamp: state.FormatTime(now), Domain: a.SourceDomain, Type: "pr_review", Message: msg})
			}
			if changed {
				b, _ := json.Marshal(seen)
				a.Extra = cloneExtra(a.Extra)
				a.Extra["reviews_seen"] = b
			}
		}
		return out
	}
	q.Pending = touch(q.Pending)
	q.InProgress = touch(q.InProgress)
	return q, memos
}

func orNone(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}
