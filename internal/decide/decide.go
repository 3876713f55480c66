package decide

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
)

// ImplementationDomain is the name of the virtual domain of 3-A2.
const ImplementationDomain = "implementation"

// Skip reasons Decide can return (CLI.md reason codes).
const (
	ReasonNoScoreable     = "no_scoreable_domains"
	ReasonBelowMinimum    = "all_scores_below_minimum"
	ReasonGoalsMetIdle    = "goals_met_idle"
	ReasonBelowConfidence = "all_below_confidence_no_fallback"
	// ReasonQuarantined is a skip because the only work that could run is
	// a quarantined domain's (session oscillation): without the quarantine
	// that domain would have won.
	ReasonQuarantined     = "quarantined"
	GuidanceCriticalAlert = "critical_alert"
	GuidanceStablePattern = "stable_pattern"
	ExcludedCooldown      = "cooldown"
	ExcludedQuarantined   = "quarantined"
	// ExcludedLevel marks a domain that progressive_complexity's current
	// level leaves out (3-G): it is shown, never scored.
	ExcludedLevel            = "level"
	minScore                 = 0.5
	stablePatternConfidence  = 0.8
	stablePatternRunLength   = 3
	observeLoopEscapeEntries = 3
)

// Option is one row of the score table: a candidate domain with every term
// as it entered the sum, and why it won or lost.
type Option struct {
	Domain         string
	Virtual        bool // the implementation virtual domain
	Skill          string
	Weight         float64
	Hours          *float64 // nil for the virtual domain
	Pending        *int     // the virtual domain's pending count
	Staleness      float64
	Queue          float64 // the virtual domain's 3-A2 queue terms
	Alert          float64
	Mission        float64
	Goal           float64
	Confidence     float64
	ConfidenceTerm float64
	Memo           float64
	Balance        float64
	// Value is adaptive scoring's learned-value term (0 when it is off).
	Value    float64
	RawScore float64
	Score    float64
	Excluded string
	// SelectedByAlert is true when the alert term is > 0 (recorded on the
	// decision-log entry for the consecutive-alert cap).
	SelectedByAlert bool
	Executions      int
	Index           int
	Reasons         []string
	// NeedsLevel is, for an option excluded by level, the lowest
	// progressive_complexity level at which the domain takes part.
	NeedsLevel int
}

// Decision is Decide's result.
type Decision struct {
	// CycleMode is "feature" until rubrics exist (3-K).
	CycleMode string
	// Options is the score table in final rank order (empty when implicit
	// guidance skipped scoring).
	Options []Option
	// Winner is nil when the cycle selects nothing (then SkipReason says why).
	Winner     *Option
	SkipReason string
	// Result is set for skips that record a result (goals_met_idle → observe_only).
	Result string
	// Gated is true when the confidence gate replaced the top scorer or fell
	// back; the winner then runs its primary skill only.
	Gated bool
	// Guidance is critical_alert or stable_pattern when 3-A0 chose the winner.
	Guidance string
	// Scored is true when the 3-A pass ran, i.e. memo adjustments were applied
	// and must be consumed.
	Scored bool
	// ScoreVerified is 3-J's verdict; Mismatch explains a failed verification.
	ScoreVerified bool
	Mismatch      string
	// QuarantineBlocked is, for a ReasonQuarantined skip, the quarantined
	// domain that would have won without the quarantine.
	QuarantineBlocked string
	// Notes explain the steps taken, in order.
	Notes []string
}

// Decide runs Step 3: 3-K, 3-G, 3-A0, the scoring pass (3-A, 3-A2, 3-B,
// 3-C), 3-D, 3-E, 3-E2, 3-F, 3-I and 3-J. Dry-run handling (3-H) belongs to
// the caller, which still needs the full decision to report.
//
// A cycle that selects nothing because the domain that would have won is
// quarantined is skipped with ReasonQuarantined rather than the reason the
// remaining options gave: the quarantine, not a lack of work, is why
// nothing runs. Only then is the decision taken a second time without the
// domain quarantine, which is the exact test of "would have won".
func Decide(in Input) Decision {
	d := decideOnce(in)
	if d.Winner != nil || len(in.Quarantined) == 0 {
		return d
	}
	switch d.SkipReason {
	case ReasonBelowMinimum, ReasonBelowConfidence:
	default:
		// No scoreable domain, or goals met: true whatever is quarantined.
		return d
	}
	free := in
	free.Quarantined = nil
	alt := decideOnce(free)
	if alt.Winner == nil || !in.Quarantined[alt.Winner.Domain] {
		return d
	}
	d.SkipReason, d.Result, d.QuarantineBlocked = ReasonQuarantined, "", alt.Winner.Domain
	d.note("3-E: only quarantined work remains: " + alt.Winner.Domain + " would have won; idling")
	for i := range d.Options {
		o := &d.Options[i]
		if o.Domain == alt.Winner.Domain && o.Excluded == ExcludedQuarantined && len(o.Reasons) > 0 {
			// explainAll's reason, last, spoke of the others' scores.
			o.Reasons[len(o.Reasons)-1] = "would have won, but is quarantined for this session (oscillation)"
		}
	}
	return d
}

func decideOnce(in Input) Decision {
	cfg := in.Config
	d := Decision{CycleMode: "feature"}
	// 3-K: leap mode needs a quality rubric with a plateau; until the
	// artifact axis exists every cycle is a feature cycle.
	d.note("3-K: cycle mode feature")

	cands, impl, cut := filter(in)
	d.note(fmt.Sprintf("3-G: level %d keeps %d domain(s)%s", cfg.ProgressiveComplex.CurrentLevel, len(cands), map[bool]string{true: " + implementation", false: ""}[impl]))
	levelRows := levelExcluded(in, cut)
	if len(levelRows) > 0 {
		d.note(fmt.Sprintf("3-G: level %d excludes %d domain(s)", cfg.ProgressiveComplex.CurrentLevel, len(levelRows)))
	}
	if len(cands) == 0 && !impl {
		d.SkipReason = ReasonNoScoreable
		d.Options = levelRows
		return d
	}
	sig := computeSignals(in, cands, impl)
	gk := newGoalKeywords(in.Goals)

	// 3-A0: implicit guidance.
	if w := criticalWinner(cands, in.Quarantined); w != nil {
		o := Option{Domain: w.Name, Skill: w.PrimarySkill, Weight: w.Weight, Hours: ptr(w.Hours), Index: w.Index,
			Confidence: in.confidence(w.Name), Executions: in.DomainExecutions[w.Name],
			Reasons: []string{"implicit guidance: critical alert (scoring skipped, confidence gate bypassed)"}}
		d.Guidance, d.Winner, d.ScoreVerified = GuidanceCriticalAlert, &o, true
		d.note("3-A0: critical alert in " + w.Name + "; bypassing scoring")
		return d
	}
	if w := stableWinner(in, cands, sig); w != nil {
		o := Option{Domain: w.Name, Skill: w.PrimarySkill, Weight: w.Weight, Hours: ptr(w.Hours), Index: w.Index,
			Confidence: in.confidence(w.Name), Executions: in.DomainExecutions[w.Name],
			Reasons: []string{fmt.Sprintf("implicit guidance: won the last %d cycles with confidence %.2f >= %.1f", stablePatternRunLength, in.confidence(w.Name), stablePatternConfidence)}}
		d.Guidance, d.Winner = GuidanceStablePattern, &o
		d.note("3-A0: stable pattern, continuing " + w.Name)
		if o.Confidence < cfg.Safety.ConfidenceThreshold {
			// Unreachable with the 0.8 requirement unless the threshold is
			// higher; the gate still applies to this shortcut.
			d.Guidance, d.Winner = "", nil
		} else {
			d.ScoreVerified = true
			return d
		}
	}

	// Scoring pass. The table is allocated once, the hours of its rows
	// share one array, and it is sorted through an index: at a thousand
	// domains, growing and sorting rows of this size cost more than the
	// scoring itself.
	d.Scored = true
	n := len(cands)
	d.Options = make([]Option, 0, n+1+len(levelRows))
	hours := make([]float64, n)
	for i := range cands {
		hours[i] = cands[i].Hours
		d.Options = append(d.Options, scoreDomain(in, &cands[i], n, sig, gk, &hours[i]))
	}
	if impl {
		d.Options = append(d.Options, scoreImplementation(in, sig, gk))
	}
	rank(d.Options)
	lessonTieBreak(in, &d)
	d.note("3-D: scored " + fmt.Sprint(len(d.Options)) + " option(s)")
	// The domains the level leaves out close the table, one row each,
	// so that none vanishes without a word; being excluded, they are
	// never eligible below.
	d.Options = append(d.Options, levelRows...)

	eligible := make([]int, 0, len(d.Options))
	for i, o := range d.Options {
		if o.Excluded == "" {
			eligible = append(eligible, i)
		}
	}
	// 3-E: minimum score.
	top := 0.0
	if len(eligible) > 0 {
		top = d.Options[eligible[0]].Score
	}
	if top < minScore {
		d.SkipReason = ReasonBelowMinimum
		d.explainAll(fmt.Sprintf("all scores below %.1f", minScore))
		return d
	}
	// 3-E2: goal-completion idle gate.
	if goalsMetIdle(in, cands) {
		d.SkipReason, d.Result = ReasonGoalsMetIdle, "observe_only"
		d.explainAll("goals met and nothing actionable: idling")
		return d
	}
	// 3-F: confidence gate.
	wi := eligible[0]
	threshold := cfg.Safety.ConfidenceThreshold
	if d.Options[wi].Confidence < threshold {
		d.Options[wi].Reasons = append(d.Options[wi].Reasons, fmt.Sprintf("top score but confidence %.2f < threshold %.2f", d.Options[wi].Confidence, threshold))
		found := -1
		// A replacement must itself be worth running: an option below the
		// minimum score (an empty implementation queue, a heavily penalised
		// domain) is no candidate; the explicit fallback below still is.
		for _, i := range eligible[1:] {
			if d.Options[i].Confidence >= threshold && d.Options[i].Score >= minScore {
				found = i
				break
			}
		}
		if found < 0 {
			// The first fallback domain in config order (in.Domains keeps it;
			// cands are sorted by weight).
			for _, c := range in.Domains {
				if c.Fallback {
					for _, i := range eligible {
						if d.Options[i].Domain == c.Name && !d.Options[i].Virtual {
							found = i
						}
					}
					if found >= 0 {
						d.Options[found].Reasons = append(d.Options[found].Reasons, "fallback domain: no candidate meets the confidence threshold")
						break
					}
				}
			}
		}
		if found < 0 {
			d.SkipReason = ReasonBelowConfidence
			d.explainAll("below the confidence threshold and no fallback domain")
			return d
		}
		wi = found
		d.Gated = true
		d.note("3-F: confidence-gated to " + d.Options[wi].Domain + " (primary skill only)")
	}
	d.Winner = &d.Options[wi]
	d.explainLosers(wi)
	d.Winner.Reasons = append(d.Winner.Reasons, "selected")

	// 3-J: score verification re-runs the same scoring for the winner.
	var again Option
	if d.Winner.Virtual {
		again = scoreImplementation(in, sig, gk)
	} else {
		for i := range cands {
			if cands[i].Name == d.Winner.Domain {
				again = scoreDomain(in, &cands[i], n, sig, gk, ptr(cands[i].Hours))
			}
		}
	}
	d.ScoreVerified = math.Abs(again.Score-d.Winner.Score) <= 0.01
	if !d.ScoreVerified {
		d.Mismatch = fmt.Sprintf("score mismatch for %s: computed %.4f, reported %.4f", d.Winner.Domain, again.Score, d.Winner.Score)
	}
	if !d.Gated && d.Winner.Confidence < threshold {
		d.ScoreVerified = false
		d.Mismatch = fmt.Sprintf("winner %s confidence %.2f below threshold %.2f without gating", d.Winner.Domain, d.Winner.Confidence, threshold)
	}
	return d
}

func (d *Decision) note(s string) { d.Notes = append(d.Notes, s) }

func (d *Decision) explainAll(why string) {
	for i := range d.Options {
		if d.Options[i].Excluded == ExcludedLevel {
			continue // not scored: its own reason says why
		}
		d.Options[i].Reasons = append(d.Options[i].Reasons, why)
	}
}

func (d *Decision) explainLosers(wi int) {
	w := d.Options[wi]
	// Most options get exactly one reason here and had none before: they
	// share one backing array, each capped at its own element so that a
	// later append copies instead of overwriting the next option's.
	spare := make([]string, len(d.Options))
	var buf []byte
	// A tie is lost for one of three reasons, and the same words for
	// every option that lost it: each is made once.
	var ties [len(tieBreakReasons)]string
	wScore, wFinite := fixed4(nil, w.Score)
	for i := range d.Options {
		if i == wi {
			continue
		}
		o := &d.Options[i]
		if o.Excluded != ExcludedLevel && o.Reasons == nil {
			// Every case but the first appends one reason.
			o.Reasons = spare[i : i : i+1]
		}
		switch {
		case o.Excluded == ExcludedLevel:
			// Not scored: its own reason says why.
		case o.Excluded != "":
			o.Reasons = append(o.Reasons, "excluded: "+o.Excluded)
		case d.Gated && i < wi:
			o.Reasons = append(o.Reasons, fmt.Sprintf("confidence %.2f below threshold: passed over by the confidence gate", o.Confidence))
		case o.Score > w.Score:
			o.Reasons = append(o.Reasons, fmt.Sprintf("scored higher, but recalled lessons favour %s within %.1f points", w.Domain, LessonMargin))
		case round9(o.Score) == round9(w.Score):
			k := tieBreakKind(&w, o)
			if ties[k] == "" {
				ties[k] = "tied with " + w.Domain + " and lost the tie-break (" + tieBreakReasons[k] + ")"
			}
			o.Reasons = append(o.Reasons, ties[k])
		default:
			buf = append(buf[:0], "lower score than "...)
			buf = append(buf, w.Domain...)
			buf = append(buf, " ("...)
			var ok bool
			if buf, ok = fixed4(buf, o.Score); ok && wFinite {
				buf = append(buf, " < "...)
				buf = append(buf, wScore...)
				buf = append(buf, ')')
				o.Reasons = append(o.Reasons, string(buf))
			} else {
				o.Reasons = append(o.Reasons, fmt.Sprintf("lower score than %s (%.4f < %.4f)", w.Domain, o.Score, w.Score))
			}
		}
	}
}

// fixed4 appends v as fmt's %.4f writes it, and reports whether it could:
// for a finite number that is strconv's 'f' format with 4 digits, which is
// what fmt itself calls; infinities and NaN are left to fmt.
func fixed4(dst []byte, v float64) ([]byte, bool) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return dst, false
	}
	return strconv.AppendFloat(dst, v, 'f', 4, 64), true
}

// tieBreakReasons are the reasons o loses a tie to w, by tieBreakKind.
var tieBreakReasons = [...]string{"more executions", "lower weight", "later in config.domains"}

// tieBreakKind is why o lost a tie to w: an index of tieBreakReasons.
func tieBreakKind(w, o *Option) int {
	switch {
	case w.Executions != o.Executions:
		return 0
	case w.Weight != o.Weight:
		return 1
	default:
		return 2
	}
}

func (in Input) confidence(d string) float64 {
	if v, ok := in.Confidence[d]; ok {
		return v
	}
	return in.Config.Confidence.Initial
}

// filter is 3-G: active domains, sorted by weight, cut to the level's
// limit. cut holds the domains the limit left out, heaviest first.
func filter(in Input) (act []Domain, impl bool, cut []Domain) {
	cfg := in.Config
	keep := make([]int, 0, len(in.Domains)) // indexes into in.Domains
	byName := make(map[string]int, len(cfg.Domains))
	for i := range cfg.Domains {
		byName[cfg.Domains[i].Name] = i
	}
	_, mode, seasonOn := cfg.SeasonModes.Active()
	for i := range in.Domains {
		d := &in.Domains[i]
		if ci, ok := byName[d.Name]; ok {
			cd := &cfg.Domains[ci]
			if !cd.Scoreable() || !cd.IsEnabled() {
				continue
			}
		}
		if seasonOn && contains(mode.DisabledDomains, d.Name) {
			continue
		}
		keep = append(keep, i)
	}
	// Each kept domain is copied once, in its final place; when every
	// domain is kept in the order given (the common case), the candidates
	// are the input's own domains, which Decide only reads, capped so
	// that no append can reach the input.
	order := byWeight(in.Domains, keep)
	if identity(order, len(in.Domains)) {
		act = in.Domains[:len(in.Domains):len(in.Domains)]
	} else {
		act = make([]Domain, len(order))
		for i, j := range order {
			act[i] = in.Domains[j]
		}
	}
	level := cfg.ProgressiveComplex.CurrentLevel
	if level <= 1 {
		if n, all := cfg.ProgressiveComplex.Level(level).DomainLimit(); !all && n < len(act) {
			n = max(n, 0)
			act, cut = act[:n], act[n:]
		}
	}
	impl = level >= 3 && cfg.Implementation.Enabled
	if impl {
		// A real domain named "implementation" stands in for the virtual one.
		for _, d := range act {
			if d.Name == ImplementationDomain {
				impl = false
			}
		}
	}
	return act, impl, cut
}

// identity reports whether order is 0, 1, ..., n-1.
func identity(order []int, n int) bool {
	if len(order) != n {
		return false
	}
	for i, j := range order {
		if i != j {
			return false
		}
	}
	return true
}

// byWeight returns the order in which sort.SliceStable, heaviest first,
// would put the domains ds[keep[0]], ds[keep[1]], ...: as indexes into ds.
// It returns keep itself when that is already the order (every domain of
// equal weight, the common case); otherwise it sorts indexes, with the
// comparisons and moves sort.SliceStable would make on the domains.
func byWeight(ds []Domain, keep []int) []int {
	sorted := true
	for i, j := range keep {
		if math.IsNaN(ds[j].Weight) || i > 0 && ds[j].Weight > ds[keep[i-1]].Weight {
			// A NaN makes "in order" a matter of which pairs are
			// compared: only the full sort knows.
			sorted = false
			break
		}
	}
	if sorted {
		return keep
	}
	order := stableOrder(len(keep), func(a, b int) bool { return ds[keep[a]].Weight > ds[keep[b]].Weight })
	for i, k := range order {
		order[i] = keep[k]
	}
	return order
}

// stableOrder returns the permutation sort.SliceStable would apply to n
// elements ordered by less: slices.SortStableFunc runs the same insertion
// sort and SymMerge, asking only whether cmp < 0.
func stableOrder(n int, less func(a, b int) bool) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	return idx
}

// permute rearranges xs in place so that it holds what was at xs[idx[0]],
// xs[idx[1]], ..., following each cycle of the permutation with one
// spare element; idx is used up.
func permute[T any](xs []T, idx []int) {
	for i := range idx {
		if idx[i] < 0 || idx[i] == i {
			continue
		}
		spare, j := xs[i], i
		for {
			k := idx[j]
			idx[j] = -1
			if k == i {
				xs[j] = spare
				break
			}
			xs[j] = xs[k]
			j = k
		}
	}
}

// levelExcluded is the score-table row of each domain 3-G's level limit
// left out: no term is computed, and NeedsLevel is the lowest level that
// keeps it. cut is in filter's order (heaviest first), which follows the
// kept domains: the first cut domain is the (limit+1)-th heaviest.
func levelExcluded(in Input, cut []Domain) []Option {
	if len(cut) == 0 {
		return nil
	}
	pc := in.Config.ProgressiveComplex
	level := pc.CurrentLevel
	kept := 0
	if n, all := pc.Level(level).DomainLimit(); !all {
		kept = max(n, 0)
	}
	out := make([]Option, 0, len(cut))
	for i, c := range cut {
		need := neededLevel(pc, level, kept+i)
		o := Option{Domain: c.Name, Skill: c.PrimarySkill, Weight: c.Weight, Hours: ptr(c.Hours), Index: c.Index,
			Confidence: in.confidence(c.Name), Executions: in.DomainExecutions[c.Name], Excluded: ExcludedLevel, NeedsLevel: need}
		o.Reasons = []string{fmt.Sprintf("excluded: level: progressive_complexity.current_level %d scores only the %d heaviest domain(s); %s takes part from level %d (set progressive_complexity.current_level to %d in config.json)",
			level, kept, c.Name, need, need)}
		out = append(out, o)
	}
	return out
}

// neededLevel is the lowest level above current whose limit keeps the
// domain at rank pos (0-based, heaviest first). Levels from 2 up keep
// every domain, whatever their configured limit says.
func neededLevel(pc config.Progressive, current, pos int) int {
	for l := current + 1; l < 2; l++ {
		if n, all := pc.Level(l).DomainLimit(); all || n > pos {
			return l
		}
	}
	return 2
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// signals is 3-B: the urgent-signal bonus per domain before dampening.
type signals struct {
	bonus map[string]float64
}

func computeSignals(in Input, cands []Domain, impl bool) signals {
	cfg := in.Config
	s := cfg.Signals.WithBonuses(in.SignalBonuses)
	out := signals{bonus: map[string]float64{}}
	for _, d := range cands {
		if d.Fallback && d.HasUrgent() {
			out.bonus[d.Name] += s.HealthAlertBonus
		}
		if in.StaleAfterChange[d.Name] {
			out.bonus[d.Name] += s.StaleAfterChangeBonus
		}
	}
	if impl {
		im := in.Impl
		if s.QueuePressureThreshold > 0 && im.PendingCount >= s.QueuePressureThreshold {
			out.bonus[ImplementationDomain] += s.QueuePressureBonus
		}
		if im.PendingCount > 0 && im.OldestPendingHours > s.QueueAgeHours {
			out.bonus[ImplementationDomain] += s.QueueAgeBonus
		}
		if im.PendingCount > 0 && len(in.Log) >= observeLoopEscapeEntries {
			escape := true
			for _, e := range in.Log[len(in.Log)-observeLoopEscapeEntries:] {
				if e.Domain == ImplementationDomain {
					escape = false
				}
			}
			if escape {
				out.bonus[ImplementationDomain] += cfg.Implementation.ObserveLoopEscapeBonus
			}
		}
	}
	return out
}

func criticalWinner(cands []Domain, quarantined map[string]bool) *Domain {
	var best *Domain
	for i := range cands {
		c := &cands[i]
		if !c.HasCritical() || quarantined[c.Name] {
			continue
		}
		if best == nil || c.Weight > best.Weight || (c.Weight == best.Weight && c.Index < best.Index) {
			best = c
		}
	}
	return best
}

func stableWinner(in Input, cands []Domain, sig signals) *Domain {
	if len(in.Log) < stablePatternRunLength {
		return nil
	}
	last := in.Log[len(in.Log)-stablePatternRunLength:]
	name := last[0].Domain
	for _, e := range last {
		// "Won scoring" (3-A0): a win the shortcut itself handed out does
		// not count, or one run of three would keep the domain forever,
		// and the monopoly-breaker and every other intervention, which
		// only scoring applies and counts down, would never take effect.
		if e.Domain != name || !e.Executed() || e.Guidance != "" {
			return nil
		}
	}
	if in.confidence(name) < stablePatternConfidence {
		return nil
	}
	for dn, b := range sig.bonus {
		if dn != name && b > 0 {
			return nil
		}
	}
	for i := range cands {
		if cands[i].Name == name {
			c := &cands[i]
			if in.Quarantined[name] || (c.MinIntervalHours != nil && c.Hours < *c.MinIntervalHours) {
				return nil
			}
			return c
		}
	}
	return nil
}

// Staleness is the 3-A staleness curve: logarithmic (default) w·K·ln(1+h/T)
// with K = 10 and T = 4 hours, or linear h·w.
func Staleness(curve string, weight, hours float64) float64 {
	if curve == "linear" {
		return hours * weight
	}
	const k, t = 10.0, 4.0
	return weight * k * math.Log1p(hours/t)
}

// scoreDomain is one row of 3-A; hours is where its Hours points, and
// holds c.Hours.
func scoreDomain(in Input, c *Domain, n int, sig signals, gk goalKeywords, hours *float64) Option {
	cfg := in.Config
	sc := cfg.Scoring
	o := Option{Domain: c.Name, Skill: c.PrimarySkill, Weight: c.Weight, Hours: hours, Index: c.Index,
		Confidence: in.confidence(c.Name), Executions: in.DomainExecutions[c.Name]}
	o.ConfidenceTerm = o.Confidence * sc.ConfidenceWeight
	if c.MinIntervalHours != nil && c.Hours < *c.MinIntervalHours {
		o.Excluded = ExcludedCooldown
		o.Reasons = append(o.Reasons, fmt.Sprintf("cooldown: %.2fh < %gh minimum", c.Hours, *c.MinIntervalHours))
		return o
	}
	stal := Staleness(sc.StalenessCurve, c.Weight, c.Hours)
	urgent := c.HasUrgent()
	if last := lastExecuted(in.Log, c.Name); last != nil && last.HadOutput != nil && !*last.HadOutput && !urgent {
		if c.Phase == "strategize" || c.Phase == "execute" {
			stal *= sc.DryDomainDampen
		} else {
			stal *= sc.MonitorDryDampen
		}
	}
	adaptive := in.adaptiveOn()
	// Mission focus scales staleness by the alignment itself, in place of
	// this step.
	if cfg.MissionSet() && c.MissionAlignment < sc.OffMissionThreshold && !urgent && !(adaptive && sc.Adaptive.MissionFocus) {
		stal *= sc.OffMissionDampen
	}
	if adaptive {
		stal = adaptiveStaleness(in, c, stal)
	}
	o.Staleness = stal

	alert := sig.bonus[c.Name]
	if alert > 0 && !c.HasCritical() {
		cd := cfg.Signals.AlertCooldownHours
		rf := 0.0
		if cd > 0 {
			rf = math.Max(0, 1-c.Hours/cd)
		}
		alert *= 1 - rf
	}
	if capN := cfg.Signals.MaxConsecutiveAlertCycles; capN > 0 && len(in.Log) >= capN && alert > 0 {
		all := true
		for _, e := range in.Log[len(in.Log)-capN:] {
			if e.Domain != c.Name || !e.SelectedByAlert {
				all = false
			}
		}
		if all {
			alert = 0
			o.Reasons = append(o.Reasons, fmt.Sprintf("alert auto-acknowledged after %d consecutive alert-driven cycles", capN))
		}
	}
	o.Alert = alert
	o.SelectedByAlert = alert > 0

	if sc.BalanceEnabled && n > 0 {
		share := float64(o.Executions) / math.Max(float64(in.TotalSkillExecutions), 1)
		o.Balance = math.Max(-sc.BalanceWeight*(share-1/float64(n)), -10)
	}
	if cfg.MissionSet() {
		o.Mission = sc.MissionWeight * c.MissionAlignment
	}
	if adaptive && sc.Adaptive.GoalPullWeight > 0 {
		o.Goal = goalPull(in, gk, c.Name)
	} else {
		o.Goal = goalContribution(in, gk, c.Name, c.GoalContribution) * sc.GoalWeight
	}
	o.Memo = in.Memo[c.Name]
	if adaptive {
		o.Value = adaptiveValue(in, c.Name)
	}
	o.RawScore = o.Staleness + o.Alert + o.Mission + o.Goal + o.ConfidenceTerm + o.Memo + o.Balance + o.Value
	o.Score = math.Max(o.RawScore, 0)
	if in.Quarantined[c.Name] {
		o.Excluded = ExcludedQuarantined
	}
	return o
}

func scoreImplementation(in Input, sig signals, gk goalKeywords) Option {
	cfg := in.Config
	sc := cfg.Scoring
	f := sc.ImplementationFormula
	im := in.Impl
	pending := im.PendingCount
	o := Option{Domain: ImplementationDomain, Virtual: true, Skill: cfg.Implementation.PrimarySkill,
		Weight: cfg.Implementation.Weight, Pending: &pending, Index: len(cfg.Domains),
		Confidence: in.confidence(ImplementationDomain), Executions: in.DomainExecutions[ImplementationDomain]}
	o.ConfidenceTerm = o.Confidence * sc.ConfidenceWeight
	if pending == 0 {
		o.Reasons = append(o.Reasons, "no pending actions")
		if in.Quarantined[ImplementationDomain] {
			o.Excluded = ExcludedQuarantined
		}
		return o
	}
	o.Queue = float64(pending)*f.PendingMultiplier + im.OldestPendingHours*f.AgeMultiplier + im.HighestRice*f.RiceMultiplier
	if im.OpenDraftPRs > 0 {
		o.Queue += f.OpenPRPenalty
	}
	o.Alert = sig.bonus[ImplementationDomain]
	o.SelectedByAlert = o.Alert > 0
	if cfg.MissionSet() {
		o.Mission = sc.MissionWeight * cfg.Implementation.Alignment()
	}
	if in.adaptiveOn() && sc.Adaptive.GoalPullWeight > 0 {
		o.Goal = goalPull(in, gk, ImplementationDomain)
	} else {
		o.Goal = goalContribution(in, gk, ImplementationDomain, nil) * sc.GoalWeight
	}
	o.Memo = in.Memo[ImplementationDomain]
	if in.adaptiveOn() {
		o.Value = adaptiveValue(in, ImplementationDomain)
	}
	o.RawScore = o.Queue + o.Alert + o.Mission + o.Goal + o.ConfidenceTerm + o.Memo + o.Value
	o.Score = math.Max(o.RawScore, 0)
	if in.Quarantined[ImplementationDomain] {
		o.Excluded = ExcludedQuarantined
	}
	return o
}

// goalContribution is 3-C: 0.5 by default, 0.5·(1 − lowest progress) of the
// related active goals, or the domain's configured override.
func goalContribution(in Input, gk goalKeywords, domain string, override *float64) float64 {
	if override != nil {
		return *override
	}
	lowest, found := 0.0, false
	var key string // the domain as the keyword fallback reads it, once
	for i, g := range in.Goals {
		if g.Status != "active" || g.Quarantined {
			continue
		}
		if g.Domain != domain && !contains(g.RelatedDomains, domain) {
			// GoalRelates's keyword fallback, on texts normalised once.
			if len(g.RelatedDomains) > 0 || g.Domain != "" || domain == "" {
				continue
			}
			if key == "" {
				key = keyword(domain)
			}
			kw := gk[i]
			if !(kw.title != "" && strings.Contains(kw.title, key) || kw.id != "" && strings.Contains(kw.id, key)) {
				continue
			}
		}
		if !found || g.Progress < lowest {
			lowest, found = g.Progress, true
		}
	}
	if !found {
		return 0.5
	}
	return 0.5 * (1 - math.Min(math.Max(lowest, 0), 1))
}

// goalConcerns is GoalRelates for goal i of the input, through its
// normalised keywords.
func goalConcerns(gk goalKeywords, i int, g Goal, domain string) bool {
	if g.Domain == domain || contains(g.RelatedDomains, domain) {
		return true
	}
	if len(g.RelatedDomains) > 0 || g.Domain != "" || domain == "" {
		return false
	}
	key := keyword(domain)
	kw := gk[i]
	return kw.title != "" && strings.Contains(kw.title, key) || kw.id != "" && strings.Contains(kw.id, key)
}

// goalKeywords holds, per goal, its title and id as the keyword fallback
// of GoalRelates reads them ("" for an empty text, which matches nothing):
// normalised once per decision instead of once per goal and domain.
type goalKeywords []struct{ title, id string }

func newGoalKeywords(goals []Goal) goalKeywords {
	gk := make(goalKeywords, len(goals))
	for i, g := range goals {
		if len(g.RelatedDomains) > 0 || g.Domain != "" {
			continue // never read: the fallback applies to goals naming no domain
		}
		if g.Title != "" {
			gk[i].title = keyword(g.Title)
		}
		if g.ID != "" {
			gk[i].id = keyword(g.ID)
		}
	}
	return gk
}

// GoalRelates is 3-C's rule for whether a goal concerns a domain:
// explicitly through its domain or related_domains, or, for a goal that
// names none, when the domain's name appears in its title or id (the
// keyword fallback). Reflect (5-D) uses the same rule.
func GoalRelates(domain, goalDomain string, related []string, title, id string) bool {
	if goalDomain == domain || contains(related, domain) {
		return true
	}
	if len(related) > 0 || goalDomain != "" {
		return false
	}
	return containsWord(title, domain) || containsWord(id, domain)
}

func lastExecuted(log []LogEntry, domain string) *LogEntry {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Domain == domain && log[i].Executed() {
			return &log[i]
		}
	}
	return nil
}

func goalsMetIdle(in Input, cands []Domain) bool {
	if !in.Config.GoalCompletionIdle {
		return false
	}
	// Goals completed by their metric (2-C marks them completed at 1.0)
	// are met goals too: without them the gate would never fire once the
	// mission is accomplished.
	active := 0
	for _, g := range in.Goals {
		if (g.Status != "active" && g.Status != "completed") || g.Quarantined {
			continue
		}
		active++
		if g.Status == "active" && g.Progress < 1.0 {
			return false
		}
	}
	if active == 0 {
		return false
	}
	// Work in a quarantined domain is work this session will not do, so
	// it does not keep the loop busy once the goals are met.
	for _, d := range in.Domains {
		if d.HasUrgent() && !in.Quarantined[d.Name] {
			return false
		}
	}
	if in.Impl.ActionablePending > 0 && !in.Quarantined[ImplementationDomain] {
		return false
	}
	for _, c := range cands {
		if (c.Phase != "strategize" && c.Phase != "execute") || in.Quarantined[c.Name] {
			continue
		}
		if last := lastExecuted(in.Log, c.Name); last != nil && last.HadOutput != nil && *last.HadOutput {
			return false
		}
	}
	return true
}

// rank sorts by score descending, then the seed's tie-break: fewer
// executions, higher weight, earlier in config.domains.
//
// The rows are large, so the order is found on indexes (with each score
// rounded once) and the rows are then moved once.
func rank(opts []Option) {
	r := make([]float64, len(opts))
	for i := range opts {
		r[i] = round9(opts[i].Score)
	}
	idx := stableOrder(len(opts), func(i, j int) bool {
		a, b := &opts[i], &opts[j]
		if ra, rb := r[i], r[j]; ra != rb {
			return ra > rb
		}
		if a.Executions != b.Executions {
			return a.Executions < b.Executions
		}
		if a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		return a.Index < b.Index
	})
	permute(opts, idx)
}

func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

func ptr[T any](v T) *T { return &v }

// LessonMargin is how close two scores must be for a recalled lesson to
// decide between them (2-F).
const LessonMargin = 0.5

// lessonTieBreak lets recalled lessons choose between the two best
// eligible options when they score within LessonMargin: the one its
// lessons lean towards goes first.
func lessonTieBreak(in Input, d *Decision) {
	if len(in.Lean) == 0 {
		return
	}
	first, second := -1, -1
	for i, o := range d.Options {
		if o.Excluded != "" {
			continue
		}
		if first < 0 {
			first = i
		} else {
			second = i
			break
		}
	}
	if second < 0 {
		return
	}
	a, b := d.Options[first], d.Options[second]
	// Only an option that could win on its own merits may be moved up: it
	// must reach the minimum score and pass the confidence gate.
	if a.Score-b.Score > LessonMargin || in.Lean[b.Domain] <= in.Lean[a.Domain] ||
		b.Score < minScore || b.Confidence < in.Config.Safety.ConfidenceThreshold {
		return
	}
	b.Reasons = append(b.Reasons, fmt.Sprintf("recalled lessons favour it over %s within %.1f points", a.Domain, LessonMargin))
	d.Options[first], d.Options[second] = b, a
	d.note(fmt.Sprintf("2-F: recalled lessons put %s ahead of %s (%.4f vs %.4f)", b.Domain, a.Domain, b.Score, a.Score))
}
