package reflect

import (
	"fmt"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// Verdicts of 5-F.
const (
	VerdictHit      = "hit"
	VerdictMiss     = "miss"
	VerdictTooEarly = "too_early"
	VerdictUnclear  = "unclear"
)

// CritiqueInput are the facts of a cycle that made a decision.
type CritiqueInput struct {
	Now    time.Time
	Cycle  int
	Domain string
	Skill  string
	Score  float64
	// Guidance is the 3-A0 shortcut that chose the domain without
	// scoring it (critical_alert, stable_pattern); Score means nothing then.
	Guidance   string
	Result     string // success, error, observe_only, blocked
	ResultType string
	// FutileRun is how many cycles in a row (this one included) the domain
	// produced nothing.
	FutileRun int
	// OpenPR is true when an earlier PR of the domain is still open.
	OpenPR bool
}

// Critique is 5-F: a deterministic verdict, a one-sentence critique and a
// lesson of at most 20 words in the imperative, derived from the pattern.
// A judge command may rewrite the critique and the lesson; the verdict
// stays this one.
func Critique(in CritiqueInput) state.Reflection {
	r := state.Reflection{Cycle: in.Cycle, Timestamp: state.FormatTime(in.Now), Domain: in.Domain, Skill: in.Skill,
		Result: in.ResultType, Status: "open"}
	d := in.Domain
	switch {
	case in.Result == "error" || in.ResultType == "error":
		r.Verdict = VerdictMiss
		r.Lesson = fmt.Sprintf("When %s fails, read its run log before selecting %s again.", in.Skill, d)
	case in.ResultType == "pr_rejected" || in.ResultType == "leap_regressed":
		r.Verdict = VerdictMiss
		r.Lesson = fmt.Sprintf("When a %s change is rejected, study the review before opening another.", d)
	case in.ResultType == "futile" && in.OpenPR:
		r.Verdict = VerdictTooEarly
		r.Lesson = fmt.Sprintf("Wait for the open %s pull request before starting more work there.", d)
	case in.ResultType == "futile" && in.FutileRun >= 2:
		r.Verdict = VerdictMiss
		r.Lesson = fmt.Sprintf("When %s yields nothing twice running, skip it for 3 cycles.", d)
	case in.ResultType == "futile":
		r.Verdict = VerdictMiss
		r.Lesson = fmt.Sprintf("When %s yields nothing, lower its priority until its state changes.", d)
	case in.ResultType == "pr_created" || in.ResultType == "pr_merged" || in.ResultType == "pr_merged_held":
		r.Verdict = VerdictHit
		r.Lesson = fmt.Sprintf("When %s finds work, carry it through to a small pull request.", d)
	case in.ResultType == "action_extracted":
		r.Verdict = VerdictHit
		r.Lesson = fmt.Sprintf("When %s surfaces findings, act on the top one soon.", d)
	default:
		r.Verdict = VerdictUnclear
		r.Lesson = fmt.Sprintf("Re-check %s after its next run before drawing conclusions.", d)
	}
	why := fmt.Sprintf("score %.2f", in.Score)
	if in.Guidance != "" {
		why = "implicit guidance: " + strings.ReplaceAll(in.Guidance, "_", " ")
	}
	r.Critique = fmt.Sprintf("Chose %s (%s) and got %s: %s.", d, why, orDash(in.ResultType), verdictWords[r.Verdict])
	r.Lesson = capWords(r.Lesson, 20)
	return r
}

var verdictWords = map[string]string{
	VerdictHit:      "the decision delivered what it was for",
	VerdictMiss:     "the decision did not pay off",
	VerdictTooEarly: "too early to judge while a pull request is open",
	VerdictUnclear:  "the outcome does not settle the decision yet",
}

func capWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) <= n {
		return s
	}
	return strings.Join(w[:n], " ")
}

// AppendReflection adds a reflection, keeping the last size (5-F).
func AppendReflection(rs state.Reflections, r state.Reflection, size int) state.Reflections {
	if size <= 0 {
		size = 20
	}
	rs.Reflections = append(append([]state.Reflection(nil), rs.Reflections...), r)
	if n := len(rs.Reflections); n > size {
		rs.Reflections = rs.Reflections[n-size:]
	}
	return rs
}
