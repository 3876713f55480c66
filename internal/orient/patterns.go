package orient

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// FutilePenalty is the 2-A one-shot score adjustment for a domain that
// produced nothing for FutileRun consecutive cycles.
const (
	FutilePenalty = -10.0
	FutileRun     = 3
	patternWindow = 5
)

// Patterns is what 2-A reads in the recent decision log.
type Patterns struct {
	// ConsecutiveDomain won the last ConsecutiveCount decisions in a row.
	ConsecutiveDomain string
	ConsecutiveCount  int
	// Failures counts error results per domain in the last 5 entries;
	// InfraIssues lists the domains with 2 or more (an infrastructure
	// issue rather than a domain with work to do).
	Failures    map[string]int
	InfraIssues []string
	// FutileDomain produced no actionable output FutileCount times in a row
	// at the end of the log; at FutileRun or more it is penalised.
	FutileDomain string
	FutileCount  int
	Notes        []string
}

// Penalised reports whether the futile-loop penalty applies.
func (p Patterns) Penalised() bool { return p.FutileCount >= FutileRun }

// AnalyzePatterns is 2-A. The decision log is the source of truth: nothing
// is kept in a separate counter, so the counts survive restarts.
func AnalyzePatterns(log []state.DecisionEntry) Patterns {
	p := Patterns{Failures: map[string]int{}}
	// Consecutive selections: entries that selected a domain (skips that
	// chose nothing neither extend nor break the run).
	for i := len(log) - 1; i >= 0; i-- {
		e := log[i]
		if e.SelectedDomain == "" {
			continue
		}
		if p.ConsecutiveDomain == "" {
			p.ConsecutiveDomain = e.SelectedDomain
		}
		if e.SelectedDomain != p.ConsecutiveDomain {
			break
		}
		p.ConsecutiveCount++
	}
	start := max(0, len(log)-patternWindow)
	for _, e := range log[start:] {
		if e.SelectedDomain != "" && (e.Result == "error" || e.Result == "failed") {
			p.Failures[e.SelectedDomain]++
		}
	}
	for _, e := range log[start:] {
		d := e.SelectedDomain
		if d != "" && p.Failures[d] >= 2 && !contains(p.InfraIssues, d) {
			p.InfraIssues = append(p.InfraIssues, d)
			p.Notes = append(p.Notes, fmt.Sprintf("[Orient] %s failed %d times in the last %d cycles: infrastructure_issue.", d, p.Failures[d], patternWindow))
		}
	}
	// Futile loop: newest entries with the same domain, result success and
	// no actionable output (no actions, alerts or PR).
	for i := len(log) - 1; i >= 0; i-- {
		e := log[i]
		if e.Result != "success" || e.PRNumber != nil || e.HadOutput == nil || *e.HadOutput {
			break
		}
		if p.FutileDomain == "" {
			p.FutileDomain = e.SelectedDomain
		}
		if e.SelectedDomain != p.FutileDomain {
			break
		}
		p.FutileCount++
	}
	if p.Penalised() {
		p.Notes = append(p.Notes, fmt.Sprintf("[Orient] Futile loop detected: %s produced no output for %d consecutive cycles. Penalizing.", p.FutileDomain, p.FutileCount))
	}
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Saturation is the outcome of the 2-A2 circuit breaker.
type Saturation struct {
	Count int
	// Evaluated is the cycle whose entry was counted (so a re-run after a
	// HALT never counts the same cycle twice).
	Evaluated int
	Warn      bool
	Boost     bool
	Halt      bool
	Message   string
}

// SaturationCheck is 2-A2: it evaluates the previous completed cycle (the
// newest decision-log entry), never the one in flight. Output (see
// EntryHadOutput) resets the counter; anything else increments it — a
// futile or observe-only cycle, and also a skip (all scores below the
// minimum, goals met and idle, the confidence gate) or a blocked skill,
// whose entry has no output: the original reads the newest entry whatever
// it is, so a loop that only skips is saturated as well (SPEC-NOTES 2-A2).
func SaturationCheck(cfg *config.Config, count, evaluated int, log []state.DecisionEntry) Saturation {
	s := Saturation{Count: count, Evaluated: evaluated}
	if len(log) == 0 {
		return s
	}
	prev := log[len(log)-1]
	if prev.Cycle <= evaluated {
		return s
	}
	s.Evaluated = prev.Cycle
	if EntryHadOutput(prev) {
		s.Count = 0
		return s
	}
	s.Count++
	sat := cfg.Saturation
	n := s.Count
	switch {
	case sat.AutoHalt && sat.HaltThreshold > 0 && n >= sat.HaltThreshold:
		s.Halt = true
		s.Message = fmt.Sprintf("Observation saturation: %d cycles without actionable output. Human review needed. Delete this file to resume.", n)
	case n == sat.BoostThreshold:
		s.Boost = true
		s.Message = fmt.Sprintf("Saturation boost: %d consecutive cycles without output; action queue +%g.", n, sat.ImplementationBoost)
	case n == sat.WarnThreshold:
		s.Warn = true
		s.Message = fmt.Sprintf("Observation saturation: %d cycles without actionable output. Consider enabling implementation or reviewing domain configuration.", n)
	}
	return s
}

// EntryHadOutput says whether a decision-log entry records a cycle with
// actionable output, as 2-A2 counts it. An entry this program wrote
// carries had_output, which is the answer. The original OODA loop's
// entries do not: its 2-A2 counts as output a PR created, actions
// extracted, new alerts or a confidence change, and its entry records only
// some of these, so the answer is inferred from what the entry does say,
// in this order (the first rule that applies decides):
//
//  1. a PR created — pr_number, or an item in prs_created — is output;
//  2. a confidence change — an item in prs_processed (each moved a
//     domain's confidence, 2-B), or a pr_outcomes item with a non-zero
//     confidence_delta — is output;
//  3. result_type, when it is one of 6-C9's: the PR types and
//     action_extracted are output; observe, futile, error and
//     leap_regressed are not;
//  4. a skip or an observe-only cycle (action or result skip,
//     observe_only) and a failure (result failure, failed, error) are not
//     output;
//  5. result success or partial_success is output: the entry does not say
//     whether actions or alerts came of the run, and taking a completed
//     run for an empty one could halt a loop that was working as soon as
//     it switched (a run that in fact produced nothing is counted from
//     the next cycle on, which carries had_output);
//  6. anything else (no result at all, an unknown word) is not output.
func EntryHadOutput(e state.DecisionEntry) bool {
	if e.HadOutput != nil {
		return *e.HadOutput
	}
	if (e.PRNumber != nil && *e.PRNumber > 0) || len(e.PRsCreated) > 0 {
		return true
	}
	if nonEmptyList(e.PRsProcessed) || confidenceMoved(e.PROutcomes) {
		return true
	}
	switch e.ResultType {
	case "pr_created", "pr_merged", "pr_merged_held", "pr_rejected", "action_extracted":
		return true
	case "observe", "futile", "error", "leap_regressed":
		return false
	}
	switch e.Action {
	case "skip", "observe_only":
		return false
	}
	switch e.Result {
	case "success", "partial_success", "pr_created", "pr_merged":
		return true
	}
	return false
}

// nonEmptyList says whether raw is a JSON array holding at least one
// object (a number or a string is no record of a processed PR).
func nonEmptyList(raw json.RawMessage) bool {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return false
	}
	for _, it := range items {
		if t := bytes.TrimSpace(it); len(t) > 0 && t[0] == '{' {
			return true
		}
	}
	return false
}

// confidenceMoved says whether a pr_outcomes list records a confidence
// delta other than zero. Each item is read on its own, so one odd item
// does not hide the others.
func confidenceMoved(raw json.RawMessage) bool {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return false
	}
	for _, it := range items {
		var o struct {
			Delta *float64 `json:"confidence_delta"`
		}
		if json.Unmarshal(it, &o) == nil && o.Delta != nil && *o.Delta != 0 {
			return true
		}
	}
	return false
}
