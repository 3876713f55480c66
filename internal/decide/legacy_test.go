package decide

// The decision as it was computed before the per-domain work was cut
// (every domain copied and sorted with sort.SliceStable, each goal's title
// normalised again for every domain, the score table grown a row at a time
// and sorted in place, each loser's reason through fmt): kept unchanged as
// the oracle that TestDecideMatchesLegacy compares the current code with.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
)

// legacyDecide is Decide as it was. Decide runs Step 3: 3-K, 3-G, 3-A0, the scoring pass (3-A, 3-A2, 3-B,
// 3-C), 3-D, 3-E, 3-E2, 3-F, 3-I and 3-J. Dry-run handling (3-H) belongs to
// the caller, which still needs the full decision to report.
//
// A cycle that selects nothing because the domain that would have won is
// quarantined is skipped with ReasonQuarantined rather than the reason the
// remaining options gave: the quarantine, not a lack of work, is why
// nothing runs. Only then is the decision taken a second time without the
// domain quarantine, which is the exact test of "would have won".
func legacyDecide(in Input) Decision {
	d := legacyDecideOnce(in)
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
	alt := legacyDecideOnce(free)
	if alt.Winner == nil || !in.Quarantined[alt.Winner.Domain] {
		return d
	}
	d.SkipReason, d.Result, d.QuarantineBlocked = ReasonQuarantined, "", alt.Winner.Domain
	d.legacyNote("3-E: only quarantined work remains: " + alt.Winner.Domain + " would have won; idling")
	for i := range d.Options {
		o := &d.Options[i]
		if o.Domain == alt.Winner.Domain && o.Excluded == ExcludedQuarantined && len(o.Reasons) > 0 {
			// explainAll's reason, last, spoke of the others' scores.
			o.Reasons[len(o.Reasons)-1] = "would have won, but is quarantined for this session (oscillation)"
		}
	}
	return d
}

func legacyDecideOnce(in Input) Decision {
	cfg := in.Config
	d := Decision{CycleMode: "feature"}
	// 3-K: leap mode needs a quality rubric with a plateau; until the
	// artifact axis exists every cycle is a feature cycle.
	d.legacyNote("3-K: cycle mode feature")

	cands, impl, cut := legacyFilter(in)
	d.legacyNote(fmt.Sprintf("3-G: level %d keeps %d domain(s)%s", cfg.ProgressiveComplex.CurrentLevel, len(cands), map[bool]string{true: " + implementation", false: ""}[impl]))
	levelRows := legacyLevelExcluded(in, cut)
	if len(levelRows) > 0 {
		d.legacyNote(fmt.Sprintf("3-G: level %d excludes %d domain(s)", cfg.ProgressiveComplex.CurrentLevel, len(levelRows)))
	}
	if len(cands) == 0 && !impl {
		d.SkipReason = ReasonNoScoreable
		d.Options = levelRows
		return d
	}
	sig := legacyComputeSignals(in, cands, impl)

	// 3-A0: implicit guidance.
	if w := legacyCriticalWinner(cands, in.Quarantined); w != nil {
		o := Option{Domain: w.Name, Skill: w.PrimarySkill, Weight: w.Weight, Hours: legacyPtr(w.Hours), Index: w.Index,
			Confidence: in.legacyConfidence(w.Name), Executions: in.DomainExecutions[w.Name],
			Reasons: []string{"implicit guidance: critical alert (scoring skipped, confidence gate bypassed)"}}
		d.Guidance, d.Winner, d.ScoreVerified = GuidanceCriticalAlert, &o, true
		d.legacyNote("3-A0: critical alert in " + w.Name + "; bypassing scoring")
		return d
	}
	if w := legacyStableWinner(in, cands, sig); w != nil {
		o := Option{Domain: w.Name, Skill: w.PrimarySkill, Weight: w.Weight, Hours: legacyPtr(w.Hours), Index: w.Index,
			Confidence: in.legacyConfidence(w.Name), Executions: in.DomainExecutions[w.Name],
			Reasons: []string{fmt.Sprintf("implicit guidance: won the last %d cycles with confidence %.2f >= %.1f", stablePatternRunLength, in.legacyConfidence(w.Name), stablePatternConfidence)}}
		d.Guidance, d.Winner = GuidanceStablePattern, &o
		d.legacyNote("3-A0: stable pattern, continuing " + w.Name)
		if o.Confidence < cfg.Safety.ConfidenceThreshold {
			// Unreachable with the 0.8 requirement unless the threshold is
			// higher; the gate still applies to this shortcut.
			d.Guidance, d.Winner = "", nil
		} else {
			d.ScoreVerified = true
			return d
		}
	}

	// Scoring pass.
	d.Scored = true
	n := len(cands)
	for _, c := range cands {
		d.Options = append(d.Options, legacyScoreDomain(in, c, n, sig))
	}
	if impl {
		d.Options = append(d.Options, legacyScoreImplementation(in, sig))
	}
	legacyRank(d.Options)
	legacyLessonTieBreak(in, &d)
	d.legacyNote("3-D: scored " + fmt.Sprint(len(d.Options)) + " option(s)")
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
	if legacyGoalsMetIdle(in, cands) {
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
		d.legacyNote("3-F: confidence-gated to " + d.Options[wi].Domain + " (primary skill only)")
	}
	d.Winner = &d.Options[wi]
	d.explainLosers(wi)
	d.Winner.Reasons = append(d.Winner.Reasons, "selected")

	// 3-J: score verification re-runs the same scoring for the winner.
	var again Option
	if d.Winner.Virtual {
		again = legacyScoreImplementation(in, sig)
	} else {
		for _, c := range cands {
			if c.Name == d.Winner.Domain {
				again = legacyScoreDomain(in, c, n, sig)
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

func (d *Decision) legacyNote(s string) { d.Notes = append(d.Notes, s) }

func (d *Decision) legacyExplainAll(why string) {
	for i := range d.Options {
		if d.Options[i].Excluded == ExcludedLevel {
			continue // not scored: its own reason says why
		}
		d.Options[i].Reasons = append(d.Options[i].Reasons, why)
	}
}

func (d *Decision) legacyExplainLosers(wi int) {
	w := d.Options[wi]
	for i := range d.Options {
		if i == wi {
			continue
		}
		o := &d.Options[i]
		switch {
		case o.Excluded == ExcludedLevel:
			// Not scored: its own reason says why.
		case o.Excluded != "":
			o.Reasons = append(o.Reasons, "excluded: "+o.Excluded)
		case d.Gated && i < wi:
			o.Reasons = append(o.Reasons, fmt.Sprintf("confidence %.2f below threshold: passed over by the confidence gate", o.Confidence))
		case o.Score > w.Score:
			o.Reasons = append(o.Reasons, fmt.Sprintf("scored higher, but recalled lessons favour %s within %.1f points", w.Domain, LessonMargin))
		case legacyRound9(o.Score) == legacyRound9(w.Score):
			o.Reasons = append(o.Reasons, "tied with "+w.Domain+" and lost the tie-break ("+legacyTieBreakWhy(w, *o)+")")
		default:
			o.Reasons = append(o.Reasons, fmt.Sprintf("lower score than %s (%.4f < %.4f)", w.Domain, o.Score, w.Score))
		}
	}
}

func legacyTieBreakWhy(w, o Option) string {
	switch {
	case w.Executions != o.Executions:
		return "more executions"
	case w.Weight != o.Weight:
		return "lower weight"
	default:
		return "later in config.domains"
	}
}

func (in Input) legacyConfidence(d string) float64 {
	if v, ok := in.Confidence[d]; ok {
		return v
	}
	return in.Config.Confidence.Initial
}

// filter is 3-G: active domains, sorted by weight, cut to the level's
// limit. cut holds the domains the limit left out, heaviest first.
func legacyFilter(in Input) (act []Domain, impl bool, cut []Domain) {
	cfg := in.Config
	act = make([]Domain, 0, len(in.Domains))
	byName := make(map[string]int, len(cfg.Domains))
	for i, cd := range cfg.Domains {
		byName[cd.Name] = i
	}
	for _, d := range in.Domains {
		if i, ok := byName[d.Name]; ok {
			cd := cfg.Domains[i]
			if !cd.Scoreable() || !cd.IsEnabled() {
				continue
			}
		}
		if _, mode, on := cfg.SeasonModes.Active(); on && legacyContains(mode.DisabledDomains, d.Name) {
			continue
		}
		act = append(act, d)
	}
	sort.SliceStable(act, func(i, j int) bool { return act[i].Weight > act[j].Weight })
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

// levelExcluded is the score-table row of each domain 3-G's level limit
// left out: no term is computed, and NeedsLevel is the lowest level that
// keeps it. cut is in filter's order (heaviest first), which follows the
// kept domains: the first cut domain is the (limit+1)-th heaviest.
func legacyLevelExcluded(in Input, cut []Domain) []Option {
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
		need := legacyNeededLevel(pc, level, kept+i)
		o := Option{Domain: c.Name, Skill: c.PrimarySkill, Weight: c.Weight, Hours: legacyPtr(c.Hours), Index: c.Index,
			Confidence: in.legacyConfidence(c.Name), Executions: in.DomainExecutions[c.Name], Excluded: ExcludedLevel, NeedsLevel: need}
		o.Reasons = []string{fmt.Sprintf("excluded: level: progressive_complexity.current_level %d scores only the %d heaviest domain(s); %s takes part from level %d (set progressive_complexity.current_level to %d in config.json)",
			level, kept, c.Name, need, need)}
		out = append(out, o)
	}
	return out
}

// neededLevel is the lowest level above current whose limit keeps the
// domain at rank pos (0-based, heaviest first). Levels from 2 up keep
// every domain, whatever their configured limit says.
func legacyNeededLevel(pc config.Progressive, current, pos int) int {
	for l := current + 1; l < 2; l++ {
		if n, all := pc.Level(l).DomainLimit(); all || n > pos {
			return l
		}
	}
	return 2
}

func legacyContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// signals is 3-B: the urgent-signal bonus per domain before dampening.
type legacySignals struct {
	bonus map[string]float64
}

func legacyComputeSignals(in Input, cands []Domain, impl bool) legacySignals {
	cfg := in.Config
	s := cfg.Signals.WithBonuses(in.SignalBonuses)
	out := legacySignals{bonus: map[string]float64{}}
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

func legacyCriticalWinner(cands []Domain, quarantined map[string]bool) *Domain {
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

func legacyStableWinner(in Input, cands []Domain, sig legacySignals) *Domain {
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
	if in.legacyConfidence(name) < stablePatternConfidence {
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

func legacyScoreDomain(in Input, c Domain, n int, sig legacySignals) Option {
	cfg := in.Config
	sc := cfg.Scoring
	o := Option{Domain: c.Name, Skill: c.PrimarySkill, Weight: c.Weight, Hours: legacyPtr(c.Hours), Index: c.Index,
		Confidence: in.legacyConfidence(c.Name), Executions: in.DomainExecutions[c.Name]}
	o.ConfidenceTerm = o.Confidence * sc.ConfidenceWeight
	if c.MinIntervalHours != nil && c.Hours < *c.MinIntervalHours {
		o.Excluded = ExcludedCooldown
		o.Reasons = append(o.Reasons, fmt.Sprintf("cooldown: %.2fh < %gh minimum", c.Hours, *c.MinIntervalHours))
		return o
	}
	stal := Staleness(sc.StalenessCurve, c.Weight, c.Hours)
	urgent := c.HasUrgent()
	if last := legacyLastExecuted(in.Log, c.Name); last != nil && last.HadOutput != nil && !*last.HadOutput && !urgent {
		if c.Phase == "strategize" || c.Phase == "execute" {
			stal *= sc.DryDomainDampen
		} else {
			stal *= sc.MonitorDryDampen
		}
	}
	if cfg.MissionSet() && c.MissionAlignment < sc.OffMissionThreshold && !urgent {
		stal *= sc.OffMissionDampen
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
		share := float64(in.DomainExecutions[c.Name]) / math.Max(float64(in.TotalSkillExecutions), 1)
		o.Balance = math.Max(-sc.BalanceWeight*(share-1/float64(n)), -10)
	}
	if cfg.MissionSet() {
		o.Mission = sc.MissionWeight * c.MissionAlignment
	}
	o.Goal = legacyGoalContribution(in, c.Name, c.GoalContribution) * sc.GoalWeight
	o.Memo = in.Memo[c.Name]
	o.RawScore = o.Staleness + o.Alert + o.Mission + o.Goal + o.ConfidenceTerm + o.Memo + o.Balance
	o.Score = math.Max(o.RawScore, 0)
	if in.Quarantined[c.Name] {
		o.Excluded = ExcludedQuarantined
	}
	return o
}

func legacyScoreImplementation(in Input, sig legacySignals) Option {
	cfg := in.Config
	sc := cfg.Scoring
	f := sc.ImplementationFormula
	im := in.Impl
	pending := im.PendingCount
	o := Option{Domain: ImplementationDomain, Virtual: true, Skill: cfg.Implementation.PrimarySkill,
		Weight: cfg.Implementation.Weight, Pending: &pending, Index: len(cfg.Domains),
		Confidence: in.legacyConfidence(ImplementationDomain), Executions: in.DomainExecutions[ImplementationDomain]}
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
	o.Goal = legacyGoalContribution(in, ImplementationDomain, nil) * sc.GoalWeight
	o.Memo = in.Memo[ImplementationDomain]
	o.RawScore = o.Queue + o.Alert + o.Mission + o.Goal + o.ConfidenceTerm + o.Memo
	o.Score = math.Max(o.RawScore, 0)
	if in.Quarantined[ImplementationDomain] {
		o.Excluded = ExcludedQuarantined
	}
	return o
}

// goalContribution is 3-C: 0.5 by default, 0.5·(1 − lowest progress) of the
// related active goals, or the domain's configured override.
func legacyGoalContribution(in Input, domain string, override *float64) float64 {
	if override != nil {
		return *override
	}
	lowest, found := 0.0, false
	for _, g := range in.Goals {
		if g.Status != "active" || g.Quarantined || !legacyRelates(g, domain) {
			continue
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

func legacyRelates(g Goal, domain string) bool {
	return legacyGoalRelates(domain, g.Domain, g.RelatedDomains, g.Title, g.ID)
}

// GoalRelates is 3-C's rule for whether a goal concerns a domain:
// explicitly through its domain or related_domains, or, for a goal that
// names none, when the domain's name appears in its title or id (the
// keyword fallback). Reflect (5-D) uses the same rule.
func legacyGoalRelates(domain, goalDomain string, related []string, title, id string) bool {
	if goalDomain == domain || legacyContains(related, domain) {
		return true
	}
	if len(related) > 0 || goalDomain != "" {
		return false
	}
	return legacyContainsWord(title, domain) || legacyContainsWord(id, domain)
}

func legacyLastExecuted(log []LogEntry, domain string) *LogEntry {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Domain == domain && log[i].Executed() {
			return &log[i]
		}
	}
	return nil
}

func legacyGoalsMetIdle(in Input, cands []Domain) bool {
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
		if last := legacyLastExecuted(in.Log, c.Name); last != nil && last.HadOutput != nil && *last.HadOutput {
			return false
		}
	}
	return true
}

// rank sorts by score descending, then the seed's tie-break: fewer
// executions, higher weight, earlier in config.domains.
func legacyRank(opts []Option) {
	sort.SliceStable(opts, func(i, j int) bool {
		a, b := opts[i], opts[j]
		if ra, rb := legacyRound9(a.Score), legacyRound9(b.Score); ra != rb {
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
}

func legacyRound9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

func legacyPtr[T any](v T) *T { return &v }

// lessonTieBreak lets recalled lessons choose between the two best
// eligible options when they score within LessonMargin: the one its
// lessons lean towards goes first.
func legacyLessonTieBreak(in Input, d *Decision) {
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
	d.legacyNote(fmt.Sprintf("2-F: recalled lessons put %s ahead of %s (%.4f vs %.4f)", b.Domain, a.Domain, b.Score, a.Score))
}

func legacyContainsWord(text, domain string) bool {
	if text == "" || domain == "" {
		return false
	}
	return strings.Contains(legacyNormalizer.Replace(strings.ToLower(text)), legacyNormalizer.Replace(strings.ToLower(domain)))
}

var legacyNormalizer = strings.NewReplacer("_", " ", "-", " ")

// legacySortByWeight is the old filter's sort.
func legacySortByWeight(act []Domain) {
	sort.SliceStable(act, func(i, j int) bool { return act[i].Weight > act[j].Weight })
}
