// Package record is Step 6 of the cycle: it turns what the cycle did into
// the durable record — the decision-log entry, the CHANGELOG entry, the
// metrics counters, the cost entry and the outcome with its cycle-log line.
//
// The functions here compute new values from old ones and never write:
// the engine persists their results through the state package, so the
// rules of Step 6 are testable without a filesystem.
package record

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// Result types of 6-C9.
const (
	TypeLeapRegressed = "leap_regressed"
	TypeMergedHeld    = "pr_merged_held"
	TypeMerged        = "pr_merged"
	TypeRejected      = "pr_rejected"
	TypeError         = "error"
	TypeCreated       = "pr_created"
	TypeObserve       = "observe"
	TypeAction        = "action_extracted"
	TypeFutile        = "futile"
)

// Facts are what a cycle did, as Step 6 needs them.
type Facts struct {
	Cycle  int
	Now    time.Time
	Domain string // "" for a skip that selected nothing
	Skill  string
	Action string // execute, observe_only, skip, blocked
	Reason string
	Result string // success, error, observe_only, skip, blocked
	// Error is why the cycle's skill failed (or the record could not be
	// written), as recorded: paths inside the project relative to it
	// (ProjectRelative). "" when nothing failed.
	Error string
	// LogPath is the failed skill's run log, relative to the project
	// root; "" when it has none.
	LogPath    string
	Score      *float64
	RawScore   *float64
	Staleness  float64
	Alert      float64
	Balance    float64
	Confidence *float64
	// PrevConfidence is the domain's confidence recorded by the previous
	// cycle that selected it, for the CHANGELOG trend arrow.
	PrevConfidence *float64
	MicroAdj       string
	OrientSummary  string
	// Summary is what the primary skill's report says it found, as
	// act.Report.SummaryLine gives it; "" when it gave none.
	Summary string
	// LessonsRecalled are the lessons 2-F recalled for the cycle, most
	// recent first: the Cycle Card's "recalled lesson" LEARN line.
	LessonsRecalled []string
	PRNumber        *int
	RiskTier        *int
	HadOutput       bool
	Executed        bool
	SelectedByAlert bool
	Guidance        string
	Gated           bool
	ScoreVerified   bool
	CycleMode       string
	Chain           []string
	Elapsed         time.Duration
	// SkillElapsed is how long the cycle's skill (the one named by Skill,
	// not its chain) ran; nil when none ran.
	SkillElapsed *time.Duration
	CostUSD      float64
	CostToday    float64
	Saturation   int
	Season       string
	Focus        string
	// OnMission is the 6-C9 on-mission flag computed by the caller.
	OnMission bool
	// ArtifactScore is the 5-G aggregate of the winner's rubric, nil when
	// the cycle was not graded (no rubric, no artifact change, nothing
	// captured).
	ArtifactScore *float64
	// DimensionScores, WeakestDimension: the rest of the 5-G critique
	// (nil and "" when not graded); a dimension without a score is null.
	DimensionScores  map[string]*float64
	WeakestDimension string
	// LeapTarget is the dimension a leap or rewrite cycle targeted;
	// LeapAttempts its 4-C2 record ({dimension, attempt_number,
	// delta_score}), which 2-G's thrashing guard reads back.
	LeapTarget   string
	LeapAttempts []LeapAttempt
	// QualityArtifact is the artifact factor of the quality for a cycle
	// that was to be graded and has no score of its own: the domain's
	// last score. nil leaves ArtifactScore's rule (1.0 when absent).
	QualityArtifact *float64
	// Verdict is the 7-B goal-conformance verdict (eval.enabled), nil when
	// none was asked or given.
	Verdict *Verdict
	// LeapRegressed: the leap was reverted by its verification gate.
	LeapRegressed bool
	// LeapBelowBar is set on a kept leap: whether its dimension is still
	// below bar (the outcome's leap_dim_still_below_bar).
	LeapBelowBar *bool

	// What the original OODA loop's decision-log readers read besides the
	// above (see state.DecisionEntry).

	// Scores is the cycle's score table, {domain: score}; nil when no
	// scoring pass ran.
	Scores map[string]float64
	// ChainStoppedAt and StopReason say where and why the chain stopped;
	// "" when it ran through.
	ChainStoppedAt string
	StopReason     string
	// PRsCreated are the PRs the cycle opened; nil means the one PRNumber
	// names, if any.
	PRsCreated []state.CreatedPR
	// GapsDetected are the ids of the gaps the cycle detected.
	GapsDetected []string
	// ProposalsWritten are the skill proposals (5-B) the cycle wrote.
	ProposalsWritten []string
	// Contrarian is the contrarian check the cycle made, nil if none.
	Contrarian *state.ContrarianRecord
}

// Verdict is an outcome's verifier_verdict (7-B): a second opinion that
// never moves a score.
type Verdict struct {
	Achieved   bool     `json:"achieved"`
	Reason     string   `json:"reason"`
	Confidence *float64 `json:"confidence"`
}

// LeapAttempt is one leap_attempts[] entry of an outcome.
type LeapAttempt struct {
	Dimension     string   `json:"dimension"`
	AttemptNumber int      `json:"attempt_number"`
	DeltaScore    *float64 `json:"delta_score"`
}

// Bounds of the lists a decision-log entry carries: the log is read at
// the start of every cycle and must stay small.
const (
	// ScoresKept is how many rows of the score table an entry keeps.
	ScoresKept = 100
	// GapsDetectedKept is how many gap ids, and how many proposal names, an
	// entry keeps.
	GapsDetectedKept = 20
	// PRsCreatedKept is how many created PRs an entry keeps.
	PRsCreatedKept = 10
	// DecisionTextMax bounds, in runes, each text an entry copies from
	// another file (a gap id, a contrarian argument).
	DecisionTextMax = 500
)

// ProcessFactor is the 6-C9 process factor of a result type.
func ProcessFactor(resultType string) float64 {
	switch resultType {
	case TypeMergedHeld:
		return 1.0
	case TypeMerged:
		return 0.8
	case TypeCreated:
		return 0.5
	case TypeAction:
		return 0.2
	case TypeObserve:
		return 0.1
	}
	return 0
}

// ResultType classifies a cycle by the first 6-C9 rule that matches. The
// PR-outcome rules (merged, held, rejected) are applied later by
// back-annotation; at cycle end a PR can only have been created.
func ResultType(f Facts) string {
	switch {
	case f.LeapRegressed:
		return TypeLeapRegressed
	case f.Result == "error":
		return TypeError
	case f.PRNumber != nil:
		return TypeCreated
	case f.Result == "observe_only":
		return TypeObserve
	case f.HadOutput:
		return TypeAction
	}
	return TypeFutile
}

// QualityOf is the quality of a cycle of facts f: Quality with the
// cycle's artifact score, else the artifact factor it keeps
// (QualityArtifact).
func QualityOf(resultType string, f Facts) float64 {
	if f.ArtifactScore == nil && f.QualityArtifact != nil {
		return Quality(resultType, f.QualityArtifact)
	}
	return Quality(resultType, f.ArtifactScore)
}

// Quality is process × artifact (1.0 when absent), rounded to 3 places.
func Quality(resultType string, artifact *float64) float64 {
	a := 1.0
	if artifact != nil {
		a = *artifact
	}
	return round(ProcessFactor(resultType)*a, 3)
}

// round rounds v to places decimals. A value so large that scaling it
// overflows has no decimals left to round and is returned as it is: the
// scaled +Inf must never reach a state file.
func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	r := math.Round(v*p) / p
	if math.IsInf(r, 0) && !math.IsInf(v, 0) {
		return v
	}
	return r
}

// addCost adds a run's cost to a running total. The total saturates at the
// largest float instead of overflowing to +Inf, so a total at the limit still
// trips every cap and can still be written.
func addCost(total, cost float64) float64 {
	sum := round(total+cost, 6)
	switch {
	case math.IsInf(sum, 1):
		return math.MaxFloat64
	case math.IsInf(sum, -1):
		return -math.MaxFloat64
	}
	return sum
}

func boolp(b bool) *bool { return &b }

// DecisionEntry builds the 6-A decision-log entry.
func DecisionEntry(f Facts, resultType string, quality float64) state.DecisionEntry {
	e := state.DecisionEntry{
		Cycle: f.Cycle, Timestamp: state.FormatTime(f.Now), Action: f.Action, Reason: f.Reason,
		SelectedDomain: f.Domain, SelectedSkill: f.Skill, Score: roundp(f.Score), RawScore: roundp(f.RawScore),
		Confidence: roundp(f.Confidence), OrientSummary: f.OrientSummary, Result: f.Result,
		ScoreVerified: boolp(f.ScoreVerified), MemoWritten: boolp(false), PRNumber: f.PRNumber, RiskTier: f.RiskTier,
		HadOutput: boolp(f.HadOutput), SelectedByAlert: f.SelectedByAlert, Guidance: f.Guidance, Gated: f.Gated,
		ResultType: resultType, QualityMult: &quality, CycleMode: f.CycleMode,
		ChainExecuted: append([]string{}, f.Chain...), ChainCount: len(f.Chain), Error: f.Error,
	}
	el := round(f.Elapsed.Seconds(), 3)
	e.ElapsedSeconds = &el
	if s := clip(oneLine(f.Summary), DecisionTextMax); s != "" {
		// ooda's own key: the original's readers pass over it.
		b, _ := json.Marshal(s)
		e.Extra = state.Extra{SummaryKey: b}
	}
	if len(f.LessonsRecalled) > 0 {
		lessons := make([]string, 0, len(f.LessonsRecalled))
		for _, l := range f.LessonsRecalled {
			if l = clip(oneLine(l), DecisionTextMax); l != "" {
				lessons = append(lessons, l)
			}
		}
		if len(lessons) > 0 {
			b, _ := json.Marshal(lessons)
			if e.Extra == nil {
				e.Extra = state.Extra{}
			}
			e.Extra[LessonsRecalledKey] = b
		}
	}
	cost := round(f.CostUSD, 4)
	e.CostUSD = &cost
	OriginalFields(&e, f)
	return e
}

// SummaryKey is the decision-log key of the primary skill's summary, set
// only when the skill reported one.
const SummaryKey = "summary"

// LessonsRecalledKey is the decision-log key of the lessons 2-F recalled
// for the cycle, set only when it recalled some.
const LessonsRecalledKey = "lessons_recalled"

// Stop reasons of a decision-log entry in the original OODA loop's words
// (its chain stops for these); other stops are named in this program's.
const (
	StopConfidence = "confidence_below_threshold"
	StopPRLimit    = "open_pr_limit"
	StopHalt       = "halt_detected"
	StopError      = "error"
)

// OriginalFields (re)sets the fields of e that the original OODA loop's
// readers read from f, each present: an empty list or table, or null,
// where the cycle had nothing to record. DecisionEntry sets them; the
// engine sets them again once the cycle knows its gaps and its contrarian
// check.
func OriginalFields(e *state.DecisionEntry, f Facts) {
	// Over the cap, the highest scores are the rows worth keeping (ties
	// by name, so the same table always keeps the same rows).
	domains := make([]string, 0, len(f.Scores))
	for d := range f.Scores {
		domains = append(domains, d)
	}
	sort.Slice(domains, func(i, j int) bool {
		a, b := f.Scores[domains[i]], f.Scores[domains[j]]
		if a != b {
			return a > b
		}
		return domains[i] < domains[j]
	})
	e.Scores = make(map[string]float64, min(len(domains), ScoresKept))
	for _, d := range domains[:min(len(domains), ScoresKept)] {
		e.Scores[d] = round(f.Scores[d], 4)
	}
	e.ConfidenceAtDecision, e.StopReason, e.ChainStoppedAt, e.ContrarianCheck = nil, nil, nil, nil
	if f.Domain != "" {
		e.ConfidenceAtDecision = roundp(f.Confidence)
	}
	if f.StopReason != "" {
		reason := oneLine(f.StopReason)
		e.StopReason = &reason
		if at := oneLine(f.ChainStoppedAt); at != "" {
			e.ChainStoppedAt = &at
		}
	}
	prs := f.PRsCreated
	if prs == nil && f.PRNumber != nil {
		prs = []state.CreatedPR{{Number: *f.PRNumber}}
	}
	e.PRsCreated = make([]state.CreatedPR, 0, min(len(prs), PRsCreatedKept))
	for _, p := range prs[:min(len(prs), PRsCreatedKept)] {
		// A title comes from the forge, whoever wrote it: one line, bounded.
		for _, t := range []**string{&p.Title, &p.Branch} {
			if *t != nil {
				v := clip(oneLine(**t), DecisionTextMax)
				*t = &v
			}
		}
		e.PRsCreated = append(e.PRsCreated, p)
	}
	e.SkillGapsDetected = boundedIDs(f.GapsDetected)
	e.ProposedSkillsGenerated = boundedIDs(f.ProposalsWritten)
	if c := f.Contrarian; c != nil {
		r := *c
		r.Argument = clip(oneLine(c.Argument), DecisionTextMax)
		r.AffectedDomain = clip(c.AffectedDomain, DecisionTextMax)
		r.DominantDomain = clip(c.DominantDomain, DecisionTextMax)
		r.CounterDomain = clip(c.CounterDomain, DecisionTextMax)
		r.Validity = clip(c.Validity, DecisionTextMax)
		// The adjustment applied is the one the check made: a single
		// domain's delta.
		r.AdjustmentApplied = nil
		if r.AffectedDomain != "" {
			r.AdjustmentApplied = map[string]float64{r.AffectedDomain: r.ScoreAdjustment}
		}
		e.ContrarianCheck = &r
	}
}

// clip cuts s to at most n runes.
// boundedIDs is ids as an entry keeps them: one line each, no empty or
// repeated one, at most GapsDetectedKept, never nil (the original writes []).
func boundedIDs(ids []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		id = clip(oneLine(id), DecisionTextMax)
		if id == "" || seen[id] {
			continue
		}
		if len(out) == GapsDetectedKept {
			break
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func roundp(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := round(*v, 4)
	return &r
}

// AppendDecision appends e to the log, keeping the last size entries (6-A).
func AppendDecision(log []state.DecisionEntry, e state.DecisionEntry, size int) []state.DecisionEntry {
	if size <= 0 {
		size = 20
	}
	if len(log)+1 > size {
		// The newest size entries, copied once into a list of their
		// own (appending first would copy the whole log before).
		kept := make([]state.DecisionEntry, 0, size)
		kept = append(kept, log[len(log)+1-size:]...)
		return append(kept, e)
	}
	return append(log, e)
}

// Changelog renders the 6-C3 CHANGELOG.md entry: every field, every time.
func Changelog(f Facts, resultType string) string {
	var b strings.Builder
	// Every value stays on its own line: a line break in a focus item or
	// a reason must not start a heading that reads back as another entry.
	domain := orNone(oneLine(f.Domain))
	fmt.Fprintf(&b, "## Cycle #%d -- %s UTC -- %s\n", f.Cycle, f.Now.UTC().Format("2006-01-02 15:04"), domain)
	fmt.Fprintf(&b, "- **Skill**: %s\n", orNone(oneLine(f.Skill)))
	chain := "none"
	if len(f.Chain) > 0 {
		chain = oneLine(strings.Join(f.Chain, " -> "))
	}
	fmt.Fprintf(&b, "- **Chain**: %s\n", chain)
	beside := resultType
	if r := oneLine(f.Reason); r != "" {
		beside += ", " + r
	}
	fmt.Fprintf(&b, "- **Result**: %s (%s)\n", changelogResult(f), beside)
	if line := changelogError(f); line != "" {
		// Only for a failure: an entry without one keeps the original's
		// 6-C3 lines exactly.
		b.WriteString(line)
	}
	// Only for a graded or leap cycle, likewise.
	b.WriteString(changelogArtifact(f))
	score := 0.0
	if f.Score != nil {
		score = *f.Score
	}
	fmt.Fprintf(&b, "- **Score**: %.1f (staleness: %.1f, alert: %.1f, balance: %.1f)\n", nz(score), nz(f.Staleness), nz(f.Alert), nz(f.Balance))
	if f.Confidence != nil {
		fmt.Fprintf(&b, "- **Confidence**: %.2f (trend: %s, micro-adj: %s)\n", *f.Confidence, trend(f.PrevConfidence, *f.Confidence), orNone(oneLine(f.MicroAdj)))
	} else {
		fmt.Fprintf(&b, "- **Confidence**: none (trend: →, micro-adj: %s)\n", orNone(oneLine(f.MicroAdj)))
	}
	fmt.Fprintf(&b, "- **Orient**: %s\n", orNone(oneLine(f.OrientSummary)))
	if s := clip(oneLine(f.Summary), DecisionTextMax); s != "" {
		// Only when the skill reported one: an entry without it keeps the
		// original's 6-C3 lines exactly.
		fmt.Fprintf(&b, "- **Summary**: %s\n", s)
	}
	if f.PRNumber != nil {
		tier := ""
		if f.RiskTier != nil {
			tier = fmt.Sprintf(" (Risk Tier %d)", *f.RiskTier)
		}
		fmt.Fprintf(&b, "- **PR**: #%d%s\n", *f.PRNumber, tier)
	} else {
		b.WriteString("- **PR**: none\n")
	}
	fmt.Fprintf(&b, "- **Elapsed**: %s\n", elapsed(f.Elapsed))
	fmt.Fprintf(&b, "- **Saturation**: %d observe-only cycles\n", f.Saturation)
	fmt.Fprintf(&b, "- **Cost**: +$%.2f (total today: $%.2f)\n", f.CostUSD, f.CostToday)
	fmt.Fprintf(&b, "- **Season**: %s\n", orDefault(oneLine(f.Season), "default"))
	fmt.Fprintf(&b, "- **Focus**: %s\n", orNone(oneLine(f.Focus)))
	return b.String()
}

// changelogArtifact is the Artifact line of a cycle the 5-G critique
// graded, and the Leap line of a leap or rewrite cycle; "" for any other.
// Dimension names come from config.json and are escaped like every other
// value the CHANGELOG shows.
func changelogArtifact(f Facts) string {
	var b strings.Builder
	if f.ArtifactScore != nil || f.DimensionScores != nil {
		score := "null"
		if f.ArtifactScore != nil {
			score = strconv.FormatFloat(*f.ArtifactScore, 'f', 3, 64)
		}
		names := make([]string, 0, len(f.DimensionScores))
		for n := range f.DimensionScores {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, n := range names {
			v := "null"
			if p := f.DimensionScores[n]; p != nil {
				v = strconv.FormatFloat(*p, 'f', 3, 64)
			}
			parts = append(parts, safetext.Text(oneLine(n))+" "+v)
		}
		fmt.Fprintf(&b, "- **Artifact**: %s (weakest: %s; %s)\n", score, orNone(safetext.Text(oneLine(f.WeakestDimension))), orNone(strings.Join(parts, ", ")))
	}
	if f.LeapTarget != "" {
		verdict := "kept"
		if f.LeapRegressed {
			verdict = "regressed, reverted"
		}
		delta := ""
		if n := len(f.LeapAttempts); n > 0 && f.LeapAttempts[n-1].DeltaScore != nil {
			delta = fmt.Sprintf(", Δ %+.3f", *f.LeapAttempts[n-1].DeltaScore)
		}
		fmt.Fprintf(&b, "- **Leap**: %s on %s (%s%s)\n", orDefault(oneLine(f.CycleMode), "leap"), safetext.Text(oneLine(f.LeapTarget)), verdict, delta)
	}
	return b.String()
}

// ErrorMax bounds, in runes, the message of a CHANGELOG entry's Error
// line.
const ErrorMax = 300

// changelogError is the Error line of an entry whose cycle failed: why,
// and where the run log is, so that the CHANGELOG alone says what went
// wrong. The message is one line, at most ErrorMax runes ("…" marks a
// cut), with its secrets masked and every character that could drive a
// terminal escaped (safetext.Text), as the log path is. "" when nothing
// failed.
func changelogError(f Facts) string {
	msg := oneLine(f.Error)
	if msg == "" {
		return ""
	}
	if utf8.RuneCountInString(msg) > ErrorMax {
		msg = string([]rune(msg)[:ErrorMax-1]) + "…"
	}
	line := "- **Error**: " + safetext.Text(msg)
	if p := oneLine(f.LogPath); p != "" {
		line += " (log: " + safetext.Text(p) + ")"
	}
	return line + "\n"
}

// changelogResult is the Result word of 6-C3, in the original's
// vocabulary (success, error, skip, observe_only, dry-run), which its
// readers and its users know; ooda's finer result type goes beside it. A
// cycle whose skill the allowlist blocked did not run: the original says
// skip. A dry run writes no entry at all.
func changelogResult(f Facts) string {
	switch f.Result {
	case "success", "error", "skip", "observe_only", "dry-run":
		return f.Result
	case "blocked":
		return "skip"
	case "":
		return "none"
	}
	return oneLine(f.Result)
}

func trend(prev *float64, cur float64) string {
	switch {
	case prev == nil:
		return "→"
	case cur > *prev+1e-9:
		return "↑"
	case cur < *prev-1e-9:
		return "↓"
	}
	return "→"
}

func elapsed(d time.Duration) string {
	s := int(math.Round(d.Seconds()))
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm %ds", s/60, s%60)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orNone(s string) string { return orDefault(s, "none") }

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// AddCost appends the 6-C5b cost entry and returns the new ledger total.
func AddCost(l state.CostLedger, f Facts) state.CostLedger {
	skill := f.Skill
	if !f.Executed {
		skill = "none"
	}
	l.Entries = append(l.Entries, state.CostEntry{
		CycleID: f.Cycle, Timestamp: state.FormatTime(f.Now), Skill: skill,
		Chain: append([]string{}, f.Chain...), EstimatedUSD: round(f.CostUSD, 6),
	})
	l.TotalEstimatedUSD = addCost(l.TotalEstimatedUSD, f.CostUSD)
	return l
}

// Spent is what the ledger says was spent today, for the daily cap: the
// larger of its total and the sum of its entries (each counted as at least
// 0). The ledger holds only today's entries (1-A resets it daily), and a
// total edited down, or negative, must not let cycles run past the cap
// while the entries still show the spend.
func Spent(l state.CostLedger) float64 {
	sum := 0.0
	for _, e := range l.Entries {
		if v := e.EstimatedUSD; v > 0 && !math.IsNaN(v) {
			sum = addCost(sum, v)
		}
	}
	if t := l.TotalEstimatedUSD; !math.IsNaN(t) && t > sum {
		return t
	}
	return sum
}

// Outcome builds the 6-C9 outcome entry.
func Outcome(f Facts, resultType string, quality float64) state.Outcome {
	pf := ProcessFactor(resultType)
	o := state.Outcome{
		CycleID: f.Cycle, Timestamp: state.FormatTime(f.Now), Domain: f.Domain, Skill: f.Skill, Score: roundp(f.Score),
		Result: f.Result, ResultType: resultType, ProcessFactor: &pf, QualityMult: quality,
		PRNumber: f.PRNumber, HadOutput: boolp(f.HadOutput), OnMission: boolp(f.OnMission),
		ArtifactScore: f.ArtifactScore, CycleMode: f.CycleMode,
	}
	// The critique's other fields have no typed place in the outcome (an
	// older reader must keep reading the file): they are kept as the
	// original writes them, beside the typed ones.
	put := func(key string, v any) {
		if b, err := json.Marshal(v); err == nil {
			if o.Extra == nil {
				o.Extra = state.Extra{}
			}
			o.Extra[key] = b
		}
	}
	if f.ArtifactScore != nil || f.DimensionScores != nil {
		put("dimension_scores", f.DimensionScores)
		if f.WeakestDimension != "" {
			put("weakest_dimension", f.WeakestDimension)
		} else {
			put("weakest_dimension", nil)
		}
	}
	if f.LeapTarget != "" {
		put("leap_target", f.LeapTarget)
	}
	if len(f.LeapAttempts) > 0 {
		put("leap_attempts", f.LeapAttempts)
	}
	if f.LeapBelowBar != nil {
		put("leap_dim_still_below_bar", *f.LeapBelowBar)
	}
	if f.Verdict != nil {
		put("verifier_verdict", f.Verdict)
	}
	return o
}

// AppendOutcome appends o, keeping the last size entries.
func AppendOutcome(os state.Outcomes, o state.Outcome, size int) state.Outcomes {
	if size <= 0 {
		size = 200
	}
	// A cycle recovered after a crash reuses its number: its outcome
	// replaces the half-recorded one rather than counting twice.
	// The list is built once, at its final length: a full buffer is 200
	// entries, and copying them all to drop the oldest made it twice.
	n := 1
	for i := range os.Entries {
		if os.Entries[i].CycleID != o.CycleID {
			n++
		}
	}
	drop := max(0, n-size)
	kept := make([]state.Outcome, 0, n-drop)
	for i := range os.Entries {
		if os.Entries[i].CycleID == o.CycleID {
			continue
		}
		if drop > 0 {
			drop--
			continue
		}
		kept = append(kept, os.Entries[i])
	}
	os.Entries = append(kept, o)
	return os
}

// CycleLogLine builds the cycle_log.jsonl line of 6-C9.
func CycleLogLine(f Facts, resultType string, quality float64) state.CycleLogLine {
	return state.CycleLogLine{
		CycleID: f.Cycle, Timestamp: state.FormatTime(f.Now), Domain: f.Domain, Skill: f.Skill,
		Score: roundp(f.Score), Confidence: roundp(f.Confidence), Result: f.Result, ResultType: resultType,
		QualityMult: quality, PRNumber: f.PRNumber, HadOutput: f.HadOutput, CostUSD: round(f.CostUSD, 6),
		Saturation: f.Saturation, OnMission: f.OnMission, ArtifactScore: f.ArtifactScore,
		SkillSeconds: skillSeconds(f.SkillElapsed),
	}
}

// MaxSkillSeconds is the longest skill_seconds a reader of the cycle log
// takes as a skill's run time: a cycle does not hold its lock for a week,
// so a longer value (a hand-edited 1e300, or 1e400, which decodes to the
// largest float) is a broken line, not a duration to sum or draw.
const MaxSkillSeconds = 7 * 24 * 3600

// skillSeconds is a skill's run time in seconds to the millisecond, nil
// when no skill ran; a negative duration (a clock stepped back) is 0.
func skillSeconds(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	v := max(round(d.Seconds(), 3), 0)
	return &v
}

// nz rounds to one place as printed and drops the sign of a zero, so the
// CHANGELOG never shows "-0.0".
func nz(v float64) float64 {
	r := math.Round(v*10) / 10
	if r == 0 {
		return 0
	}
	return r
}
