package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/state"
)

// Determine results.
const (
	ResultDone     = "done"
	ResultContinue = "continue"
)

// JudgeInput is what the judge weighs after a cycle. The caller runs
// what needs a process — the completion command, the judge command — and
// passes their outcomes; Judge itself does no I/O.
type JudgeInput struct {
	// Cycle is the cycle just run (recorded in the determine_log entry).
	Cycle int
	// Findings is what remains to be done after the cycle
	// (CollectFindings).
	Findings []Finding
	// Goals is goals.json after the cycle.
	Goals state.Goals
	// Command is the outcome of session.completion_command; nil when none
	// is configured (or it was not run).
	Command *CommandOutcome
	// Judge is the judge command's answer on session.completion
	// (ParseCompletion); nil when it was not asked.
	Judge *JudgeAnswer
	// GoalsImproved and GoalsRegressed count the goals whose progress
	// rose or fell this cycle (Record's goal lines): a goal's progress is
	// progress, as a resolved finding is.
	GoalsImproved, GoalsRegressed int
}

// GoalMoves counts the goal lines of a cycle's ledger that improved and
// that failed, for JudgeInput.
func GoalMoves(lines []state.LedgerLine) (improved, regressed int) {
	for _, l := range lines {
		if l.Kind != state.KindGoal {
			continue
		}
		switch l.Result {
		case state.ResultImproved:
			improved++
		case state.ResultFail:
			regressed++
		}
	}
	return improved, regressed
}

// openGoals counts the goals still to reach: active, not quarantined, and
// below progress 1.0. They are work the session has left, though no
// finding names them.
func openGoals(rec state.Session, goals state.Goals) int {
	n := 0
	for _, g := range goals.Goals {
		if g.Status != "active" || (g.ID != "" && rec.IsQuarantined(g.ID)) {
			continue
		}
		if finite(g.Progress) == nil || *g.Progress < 1.0 {
			n++
		}
	}
	return n
}

// CommandOutcome is how session.completion_command ended. Only an exit
// status of 0 with no Err meets the condition.
type CommandOutcome struct {
	ExitCode int
	// Err says why the command did not run to an exit status (not
	// found, timed out, stopped); it is then not met.
	Err string
}

// JudgeAnswer is the judge command's answer on the completion condition.
// Anything but a confident {"done": true} is "not done": uncertain means
// continue.
type JudgeAnswer struct {
	Done   bool
	Reason string
	// Note says why an answer was not taken (no judge, an invalid
	// answer); empty when the judge answered.
	Note string
}

// Verdict is the judge's decision on one iteration.
type Verdict struct {
	// Result is ResultDone or ResultContinue.
	Result string
	// StopReason is one of the done_* or stopped_* reasons when Result is
	// done, "" otherwise. Only done_* is a success (Success).
	StopReason string
	// Reason says why, in words.
	Reason string
	// LimitReached says the iteration limit is reached (condition A
	// holds), whichever condition decided: the run ends then, with or
	// without --until-done.
	LimitReached bool
	// Deferred are the ids of the findings deferred in this iteration.
	Deferred []string
	// Entry is the determine_log entry appended to the record.
	Entry state.DetermineEntry
}

// Success reports whether the verdict is a success (done_completed,
// done_no_work). A stagnation or no-progress stop is done, never a
// success.
func (v Verdict) Success() bool { return IsSuccess(v.StopReason) }

// Ends reports whether the run ends after this iteration: at the
// iteration limit always, and on any done verdict with --until-done
// (untilDone). Without it, verdicts are recorded and shown only.
func (v Verdict) Ends(untilDone bool) bool {
	return v.LimitReached || (untilDone && v.Result == ResultDone)
}

// ResultLine is the line printed after each iteration: "RESULT: done
// (<stop reason>: <reason>)" or "RESULT: continue (<reason>)".
func (v Verdict) ResultLine() string {
	if v.Result == ResultDone {
		return fmt.Sprintf("RESULT: done (%s: %s)", v.StopReason, v.Reason)
	}
	return fmt.Sprintf("RESULT: continue (%s)", v.Reason)
}

// maxReason bounds a reason as stored and printed (a judge's reason may
// be anything).
const maxReason = 300

// Judge is the termination judge of one iteration (seed 003, SPEC-NOTES
// §8), called once after each cycle of the session, after Record. It
// counts the iteration, updates the findings (new, resolved, present
// once more), defers those present and unresolved for
// p.StagnationWindow consecutive iterations, computes net progress
// (resolved − new, plus goals risen − goals fallen), then checks the
// conditions in this order — a success is recognised before a limit: B
// completion → done_completed, D all remaining work deferred now →
// stopped_stagnation, C no remaining work → done_no_work (an unmet
// active goal is remaining work for D and C), E net progress ≤ 0 for p.RegressionWindow iterations →
// stopped_no_progress, A the iteration limit → stopped_max_iterations.
// The entry is appended to rec.DetermineLog.
func Judge(rec *state.Session, p Params, in JudgeInput, now time.Time) Verdict {
	p = p.withDefaults()
	if rec.Findings == nil {
		rec.Findings = map[string]state.SessionFinding{}
	}
	rec.Iteration++
	it := rec.Iteration
	cur := capFindings(in.Findings)
	present := make(map[string]bool, len(cur))
	var newN, resolvedN int
	var deferred []string
	for _, f := range cur {
		present[f.ID] = true
		r, ok := rec.Findings[f.ID]
		if !ok || r.Status == state.FindingResolved {
			// A finding seen for the first time, or back after it was
			// resolved, is new. A deferred one is never new again.
			newN++
			r = state.SessionFinding{Kind: f.Kind, Status: state.FindingOpen, FirstSeen: it}
		}
		r.Summary = f.Summary
		r.LastSeen = it
		r.Consecutive++
		if r.Status == state.FindingOpen && r.Consecutive >= p.StagnationWindow {
			r.Status = state.FindingDeferred
			r.DeferredAt = it
			deferred = append(deferred, f.ID)
		}
		rec.Findings[f.ID] = r
	}
	remaining, deferredTotal := 0, 0
	for id, r := range rec.Findings {
		switch {
		case r.Status == state.FindingResolved:
			continue
		case !present[id]:
			// Gone from the state: resolved, deferred or not.
			r.Status = state.FindingResolved
			r.ResolvedAt = it
			r.Consecutive = 0
			rec.Findings[id] = r
			resolvedN++
		case r.Status == state.FindingDeferred:
			deferredTotal++
		default:
			remaining++
		}
	}
	// Net progress: findings resolved − new (seed 003), and, our
	// addition, goals whose progress rose − goals whose progress fell, so
	// that a session working toward its goals alone is not judged to make
	// no progress.
	net := resolvedN - newN + in.GoalsImproved - in.GoalsRegressed
	goalsLeft := openGoals(*rec, in.Goals)
	prevNet := 0
	if it > 1 {
		prevNet = rec.LastNetProgress
	}
	rec.LastNetProgress = net
	if net <= 0 {
		rec.NoProgressStreak++
	} else {
		rec.NoProgressStreak = 0
	}
	v := Verdict{Result: ResultDone, Deferred: deferred,
		LimitReached: rec.MaxIterations > 0 && it >= rec.MaxIterations}
	if met, why := completion(*rec, in); met {
		v.StopReason, v.Reason = DoneCompleted, why
	} else if remaining == 0 && goalsLeft == 0 && len(deferred) > 0 {
		v.StopReason = StoppedStagnation
		v.Reason = fmt.Sprintf("all remaining work deferred: %d finding(s) present for %d iterations without resolution", len(deferred), p.StagnationWindow)
	} else if remaining == 0 && goalsLeft == 0 && len(deferred) == 0 && prevNet >= 0 {
		v.StopReason = DoneNoWork
		v.Reason = fmt.Sprintf("no remaining actionable work after %d iteration(s)", it)
		if deferredTotal > 0 {
			v.Reason += fmt.Sprintf(" (%d deferred)", deferredTotal)
		}
	} else if rec.NoProgressStreak >= p.RegressionWindow {
		v.StopReason = StoppedNoProgress
		v.Reason = fmt.Sprintf("no net progress for %d consecutive iterations (net %+d this iteration)", rec.NoProgressStreak, net)
	} else if v.LimitReached {
		v.StopReason = StoppedMaxIterations
		v.Reason = fmt.Sprintf("iteration limit reached (%d of %d)", it, rec.MaxIterations)
	} else {
		v.Result = ResultContinue
		v.Reason = fmt.Sprintf("net progress %+d (%d resolved, %d new); %d finding(s) remain, %d deferred", net, resolvedN, newN, remaining, deferredTotal)
		if in.GoalsImproved > 0 || in.GoalsRegressed > 0 {
			v.Reason += fmt.Sprintf("; goals: %d rose, %d fell", in.GoalsImproved, in.GoalsRegressed)
		}
		if goalsLeft > 0 {
			v.Reason += fmt.Sprintf("; %d goal(s) not met", goalsLeft)
		}
		if len(deferred) > 0 {
			v.Reason += fmt.Sprintf("; %d deferred now after %d iterations without resolution", len(deferred), p.StagnationWindow)
		}
	}
	v.Reason = clip(oneLine(v.Reason), maxReason)
	v.Entry = state.DetermineEntry{Iteration: it, Cycle: in.Cycle, Result: v.Result, NetProgress: net,
		Resolved: resolvedN, New: newN, DeferredCount: deferredTotal, DeferredNow: len(deferred),
		Remaining: remaining, StagnationDetected: len(deferred) > 0, StopReason: v.StopReason,
		Reason: v.Reason, Timestamp: state.FormatTime(now)}
	rec.DetermineLog = append(rec.DetermineLog, v.Entry)
	state.BoundSession(rec)
	rec.UpdatedAt = state.FormatTime(now)
	return v
}

// completion is condition B: every goal met, the completion command
// exited 0, or the judge is confident the condition holds.
func completion(rec state.Session, in JudgeInput) (bool, string) {
	if met, n := GoalsMet(rec, in.Goals); met {
		return true, fmt.Sprintf("completion: all %d goal(s) met (progress ≥ 1.0)", n)
	}
	if c := in.Command; c != nil && c.Err == "" && c.ExitCode == 0 {
		return true, "completion: completion_command exited 0"
	}
	if j := in.Judge; j != nil && j.Done {
		return true, "completion: judge: " + j.Reason
	}
	return false, ""
}

// GoalsMet is the goal form of condition B: at least one goal that is
// active or completed (2-C marks a goal completed when its progress
// reaches 1.0) and not quarantined, and every one of them completed or at
// progress ≥ 1.0. n is the number of such goals. A quarantined goal
// counts neither way.
func GoalsMet(rec state.Session, goals state.Goals) (met bool, n int) {
	for _, g := range goals.Goals {
		if (g.Status != "active" && g.Status != "completed") || (g.ID != "" && rec.IsQuarantined(g.ID)) {
			continue
		}
		n++
		if g.Status == "active" && (finite(g.Progress) == nil || *g.Progress < 1.0) {
			return false, n
		}
	}
	return n > 0, n
}

// maxJudgeFacts bounds the lists sent to the judge.
const maxJudgeFacts = 50

// CompletionRequest is the judge request of kind "completion": has the
// natural-language condition (session.completion) been met? Its facts
// are the session's iteration, the remaining and deferred findings, the
// goals and the last verdicts; its default is {"done": false}, so that
// without a valid answer the session continues.
func CompletionRequest(condition string, rec state.Session, findings []Finding, goals state.Goals) judge.Request {
	var remaining []string
	for _, f := range capFindings(findings) {
		if r, ok := rec.Findings[f.ID]; ok && r.Status == state.FindingDeferred {
			continue
		}
		if len(remaining) < maxJudgeFacts {
			remaining = append(remaining, f.ID+": "+f.Summary)
		}
	}
	var deferred []string
	for id, r := range rec.Findings {
		if r.Status == state.FindingDeferred {
			deferred = append(deferred, id)
		}
	}
	sort.Strings(deferred)
	deferred = deferred[:min(len(deferred), maxJudgeFacts)]
	var gs []map[string]any
	for _, g := range goals.Goals {
		if len(gs) >= maxJudgeFacts {
			break
		}
		if g.Status != "active" && g.Status != "completed" {
			continue
		}
		var progress any
		if p := finite(g.Progress); p != nil {
			progress = *p
		}
		gs = append(gs, map[string]any{"id": g.ID, "title": clip(oneLine(g.Title), maxSummary), "status": g.Status,
			"progress": progress, "quarantined": rec.IsQuarantined(g.ID)})
	}
	var recent []map[string]any
	for _, e := range rec.DetermineLog[max(0, len(rec.DetermineLog)-3):] {
		recent = append(recent, map[string]any{"iteration": e.Iteration, "result": e.Result, "net_progress": e.NetProgress, "reason": e.Reason})
	}
	return judge.Request{
		Kind: judge.KindCompletion,
		Prompt: "Has this completion condition been met: " + strings.TrimSpace(condition) +
			" Answer {\"done\": true, \"reason\": \"<why>\"} only if you are confident it has; when uncertain, answer {\"done\": false, \"reason\": \"<what is missing>\"}.",
		Facts: map[string]any{
			"condition":          strings.TrimSpace(condition),
			"iteration":          rec.Iteration,
			"max_iterations":     rec.MaxIterations,
			"remaining_findings": remaining,
			"deferred_findings":  deferred,
			"goals":              gs,
			"quarantined":        rec.Quarantined,
			"recent_verdicts":    recent,
		},
		Default: map[string]any{"done": false, "reason": ""},
	}
}

// ParseCompletion reads the judge's answer to CompletionRequest. Only an
// answer from the judge itself that is an object whose "done" is the JSON
// value true counts as done; a default, an error, "done": "yes" or an
// "uncertain": true answer is not done.
func ParseCompletion(resp judge.Response) JudgeAnswer {
	if resp.Source != judge.SourceJudge {
		note := resp.Error
		if note == "" {
			note = "no judge answer"
		}
		return JudgeAnswer{Note: note}
	}
	var a struct {
		Done      json.RawMessage `json:"done"`
		Reason    string          `json:"reason"`
		Uncertain bool            `json:"uncertain"`
	}
	if err := json.Unmarshal(resp.Answer, &a); err != nil {
		return JudgeAnswer{Note: "the judge's answer is not an object with a boolean \"done\" and a string \"reason\""}
	}
	reason := clip(oneLine(a.Reason), maxReason)
	if !bytes.Equal(bytes.TrimSpace(a.Done), []byte("true")) || a.Uncertain {
		return JudgeAnswer{Reason: reason}
	}
	if reason == "" {
		reason = "the judge answered done"
	}
	return JudgeAnswer{Done: true, Reason: reason}
}

// LastJudgment is the newest determine_log entry (for `ooda status`);
// ok is false before the first iteration.
func LastJudgment(rec state.Session) (e state.DetermineEntry, ok bool) {
	if len(rec.DetermineLog) == 0 {
		return state.DetermineEntry{}, false
	}
	return rec.DetermineLog[len(rec.DetermineLog)-1], true
}
