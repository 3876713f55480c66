package present

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// The Cycle Card of Step 7: what one cycle saw, thought, chose, did and
// re-aimed, and what it cost, in a dozen lines a person can screenshot or
// paste. It is built from the state as the cycle wrote it (the newest
// decision-log entry, the cost ledger, the lens changelogs, memos.json and
// the CHANGELOG entry), so the card printed at the end of a cycle and
// `ooda status --share` later are the same card. The card at the end of a
// cycle may take the values the cycle has just written to some of those
// files instead of reading them back (Recorded), only where reading them
// back could not give a different card.

// Card is the Cycle Card as data: the `card` object of `ooda cycle
// --json` and the document of `ooda status --share --json`. A pointer is
// nil (JSON null, shown as "—") where the state does not record the value.
type Card struct {
	// Project is config.project.name, else the project directory's name.
	Project string `json:"project"`
	Cycle   int    `json:"cycle"`
	// Timestamp is the decision-log entry's instant, as recorded.
	Timestamp *string     `json:"timestamp"`
	Observe   CardObserve `json:"observe"`
	// Orient is the cycle's orient summary, whole (the text cuts it).
	Orient *string    `json:"orient"`
	Decide CardDecide `json:"decide"`
	Act    CardAct    `json:"act"`
	// Learn holds one line, or two when a human's PR decision and a lens
	// change both happened; never empty.
	Learn []CardLearn `json:"learn"`
	Cost  CardCost    `json:"cost"`
	Halt  CardHalt    `json:"halt"`
	Level int         `json:"level"`
	// LevelName is progressive_complexity.levels[level].name.
	LevelName string `json:"level_name"`
	// Share is the one plain sentence printed under the card.
	Share string `json:"share"`

	// executed says a skill ran (not a skip or an observe-only cycle).
	executed bool
}

// CardObserve is the OBSERVE line.
type CardObserve struct {
	// DomainsScanned is the number of domains the cycle scored.
	DomainsScanned *int `json:"domains_scanned"`
	// NotableChange is what the skill's report said it found, else the
	// alert that selected the domain.
	NotableChange *string `json:"notable_change"`
}

// CardDecide is the DECIDE line.
type CardDecide struct {
	Domain     *string  `json:"domain"`
	Skill      *string  `json:"skill"`
	Score      *float64 `json:"score"`
	Confidence *float64 `json:"confidence"`
	// GatePassed says the selected domain's confidence met
	// safety.confidence_threshold (✓) or not (✗, a fallback run).
	GatePassed *bool `json:"gate_passed"`
	// Guidance is the implicit-guidance shortcut that chose the domain.
	Guidance *string `json:"guidance"`
	// Reason is why nothing ran, for a skip or an observe-only cycle.
	Reason *string `json:"reason"`
}

// CardAct is the ACT line.
type CardAct struct {
	// Action is execute, observe_only, skip or blocked.
	Action     *string `json:"action"`
	Result     *string `json:"result"`
	ResultType *string `json:"result_type"`
	PRNumber   *int    `json:"pr_number"`
	RiskTier   *int    `json:"risk_tier"`
	// Text is the line as the card shows it.
	Text string `json:"text"`
}

// The kinds of LEARN line, in their priority order.
const (
	LearnHumanDecision = "human_decision"
	LearnLens          = "lens"
	LearnIntervention  = "intervention"
	LearnDelivered     = "delivered"
	LearnMicro         = "micro_adjustment"
	LearnLesson        = "recalled_lesson"
	LearnObserving     = "observing"
)

// CardLearn is one LEARN line.
type CardLearn struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// CardCost is the COST line, in US dollars.
type CardCost struct {
	CycleUSD *float64 `json:"cycle_usd"`
	TodayUSD *float64 `json:"today_usd"`
	// CapUSD is cost.daily_limit_usd; null when no cap is set.
	CapUSD *float64 `json:"cap_usd"`
}

// CardHalt is the HALT state when the card is drawn.
type CardHalt struct {
	Active bool    `json:"active"`
	Reason *string `json:"reason"`
}

// CardView is the card of the latest cycle, nil when no cycle was
// recorded yet, with the state files that could not be read.
type CardView struct {
	Card *Card
	// Corrupt names each file the card reads that is corrupt or refused;
	// the card shows "—" for what it would have given.
	Corrupt []string
}

// NoCardYet is what the card says when the decision log is empty.
const NoCardYet = "No cycle to card yet. Run `ooda cycle` first."

// BuildCard builds the Cycle Card of the newest decision-log entry. It
// only reads (no lock, no writes, no quarantine): a missing file is its
// default and a corrupt one is named in Corrupt.
func BuildCard(cfg *config.Config, st *state.Store) CardView {
	return BuildCardFrom(cfg, st, Recorded{})
}

// BuildCardFrom is BuildCard, taking from rec the values of the files a
// cycle has just written instead of reading them again (see Recorded);
// the files rec does not hold, or holds values of that the card cannot be
// sure it would read back the same, are read.
func BuildCardFrom(cfg *config.Config, st *state.Store, rec Recorded) CardView {
	var v CardView
	// A lens changelog per domain: one open of the root for all.
	defer st.HoldRoot()()
	// A project of many domains reads their lens changelogs while the
	// files below are read.
	var changelogs func() lensLogs
	waitLogs := func() {}
	if logs, ok := prefetched(cfg, st, rec); ok {
		changelogs = func() lensLogs { return logs }
	} else {
		changelogs, waitLogs = readLensChangelogs(cfg, st)
	}
	defer waitLogs()
	entry, conf, memos, ledger := rec.usable()
	// The card shows these files (and the cost ledger, the lens
	// changelogs and the CHANGELOG) and reads no other; in the order
	// LoadFiles reads them, which is the order their corruption is named.
	names := make([]string, 0, 4)
	if entry == nil {
		names = append(names, state.StateFile)
	}
	if conf == nil {
		names = append(names, state.ConfidenceFile)
	}
	if memos == nil {
		names = append(names, state.MemosFile)
	}
	if ledger == nil {
		names = append(names, state.CostLedgerFile)
	}
	var snap *state.Snapshot
	var lerr error
	if len(names) > 0 {
		snap, lerr = st.LoadFiles(names...)
	}
	if snap == nil {
		snap = &state.Snapshot{Confidence: state.NewConfidence()}
	}
	for _, c := range snap.Corrupt {
		v.Corrupt = append(v.Corrupt, c.Path)
	}
	var cle *state.CorruptLedgerError
	switch {
	case errors.As(lerr, &cle):
		v.Corrupt = append(v.Corrupt, cle.Path)
	case lerr != nil:
		v.Corrupt = append(v.Corrupt, st.EvolveDir+" ("+lerr.Error()+")")
	}
	if conf != nil {
		snap.Confidence = *conf
	}
	if memos != nil {
		snap.Memos = *memos
	}
	if ledger != nil {
		snap.CostLedger = ledger
	}
	var e state.DecisionEntry
	if entry != nil {
		e = *entry
	} else {
		log := snap.State.DecisionLog
		if len(log) == 0 {
			return v
		}
		e = log[len(log)-1]
	}
	c := &Card{Project: cfg.Project.Name, Cycle: e.Cycle, Level: cfg.ProgressiveComplex.CurrentLevel, Learn: []CardLearn{}}
	if strings.TrimSpace(c.Project) == "" {
		c.Project = filepath.Base(st.Root)
	}
	c.LevelName = cfg.ProgressiveComplex.Level(c.Level).Name
	c.Timestamp = cardText(e.Timestamp)

	entryText, clErr := cardChangelogEntry(st, e.Cycle)
	if clErr != nil {
		v.Corrupt = append(v.Corrupt, st.EvolvePath(state.ChangelogFile))
	}

	// OBSERVE: the domains this cycle scored (an entry without its score
	// table, one the original wrote, counts the enabled domains).
	n := len(e.Scores)
	if n == 0 {
		for _, d := range cfg.Domains {
			if d.IsEnabled() && d.Scoreable() {
				n++
			}
		}
	}
	if n > 0 {
		c.Observe.DomainsScanned = &n
	}
	c.Observe.NotableChange = cardNotableChange(e, entryText)
	c.Orient = cardText(e.OrientSummary)

	// DECIDE.
	d := &c.Decide
	d.Domain, d.Skill, d.Guidance = cardText(e.SelectedDomain), cardText(e.SelectedSkill), cardText(e.Guidance)
	d.Score, d.Confidence = e.DecidedScore(), e.DecidedConfidence()
	if d.Domain != nil && d.Confidence != nil {
		ok := *d.Confidence >= cfg.Safety.ConfidenceThreshold
		d.GatePassed = &ok
	}
	if e.IsSkip() || e.Action == "observe_only" || e.Action == "blocked" {
		d.Reason = cardText(e.Reason)
	}

	// ACT.
	a := &c.Act
	a.Action, a.Result, a.ResultType = cardText(e.Action), cardText(e.Result), cardText(e.ResultType)
	a.PRNumber, a.RiskTier = e.PRNumber, e.RiskTier
	a.Text, c.executed = cardActText(e)

	c.Learn = cardLearnLines(cfg, st, changelogs, snap, e, entryText, &v)
	c.Cost = cardCostOf(cfg, snap.CostLedger, e)
	if active, content := st.HaltExists(cfg.Safety.HaltFile); active {
		r := state.HaltLine(content)
		c.Halt = CardHalt{Active: true, Reason: &r}
	}
	c.Share = cardShareSentence(c)
	v.Card = c
	return v
}

// cardText is s, or nil when it is empty.
func cardText(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return &s
}

// cardChangelogEntry is the CHANGELOG.md entry of cycle n ("" when there is
// none); an error when the file cannot be read.
func cardChangelogEntry(st *state.Store, n int) (string, error) {
	entries, err := st.ChangelogEntries()
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("## Cycle #%d ", n)
	for _, en := range entries {
		if strings.HasPrefix(en, head) {
			return en, nil
		}
	}
	return "", nil
}

// cardChangelogField is the value of a "- **Name**: value" line of entry.
func cardChangelogField(entry, name string) string {
	prefix := "- **" + name + "**: "
	for _, l := range strings.Split(entry, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cardNotableChange is the single most notable change the cycle observed:
// the skill's own summary of what it found, else the alert that selected
// the domain.
func cardNotableChange(e state.DecisionEntry, entry string) *string {
	if raw, ok := e.Extra[record.SummaryKey]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
			return &s
		}
	}
	if s := cardChangelogField(entry, "Summary"); s != "" {
		return &s
	}
	if e.SelectedByAlert && e.SelectedDomain != "" {
		s := "alert in " + e.SelectedDomain
		return &s
	}
	return nil
}

// cardResultTypes are the 6-C9 result types, which the original's entries
// write as their result.
var cardResultTypes = map[string]bool{
	record.TypeLeapRegressed: true, record.TypeMergedHeld: true, record.TypeMerged: true,
	record.TypeRejected: true, record.TypeError: true, record.TypeCreated: true,
	record.TypeObserve: true, record.TypeAction: true, record.TypeFutile: true,
}

// cardResultTypeOf is the entry's 6-C9 result type: its own, else its result
// when that is one (an entry the original wrote); "" otherwise.
func cardResultTypeOf(e state.DecisionEntry) string {
	if e.ResultType != "" {
		return e.ResultType
	}
	if cardResultTypes[e.Result] {
		return e.Result
	}
	return ""
}

// cardActText is the ACT line: what ran and what came of it, with the PR and
// its risk tier; observe-only or skip when nothing ran (then false).
func cardActText(e state.DecisionEntry) (string, bool) {
	why := ""
	if e.Reason != "" {
		why = " (" + e.Reason + ")"
	}
	switch {
	case e.Action == "observe_only" || (e.Action == "" && e.Result == "observe_only"):
		return "observe-only" + why, false
	case e.IsSkip() || e.Action == "blocked" || (e.Action == "" && e.Result == "skip"):
		return "skip" + why, false
	}
	skill := cardOrDash(e.SelectedSkill)
	res := cardResultTypeOf(e)
	if res == "" {
		res = cardOrDash(e.Result)
	}
	s := skill + " → " + res
	if e.PRNumber != nil {
		s += fmt.Sprintf(" · PR #%d · Risk Tier %s", *e.PRNumber, cardIntOrDash(e.RiskTier))
	}
	return s, true
}

func cardOrDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

func cardIntOrDash(p *int) string {
	if p == nil {
		return "—"
	}
	return strconv.Itoa(*p)
}

// cardPrOutcome is one pr_outcomes item of a decision-log entry; before and
// after are read when the entry records them.
type cardPrOutcome struct {
	PR      int      `json:"pr"`
	Domain  string   `json:"domain"`
	Outcome string   `json:"outcome"`
	Delta   *float64 `json:"confidence_delta"`
	Before  *float64 `json:"before"`
	After   *float64 `json:"after"`
}

// cardLearnLines picks the LEARN line by its priority: a human's merge or
// reject that moved a confidence, a lens change, a new intervention,
// delivered output, a micro-adjustment, a recalled lesson, else nothing
// new. The first two are shown together when both happened.
func cardLearnLines(cfg *config.Config, st *state.Store, changelogs func() lensLogs, snap *state.Snapshot, e state.DecisionEntry, entry string, v *CardView) []CardLearn {
	var out []CardLearn
	micro, microDelta := cardMicroAdjustment(entry)
	if l, ok := cardHumanDecision(snap, e, microDelta); ok {
		out = append(out, l)
	}
	if l, ok := cardLensChange(cfg, st, changelogs(), e.Cycle, v); ok {
		out = append(out, l)
	}
	if len(out) > 0 {
		return out
	}
	if l, ok := cardNewIntervention(snap.Memos, e.Cycle); ok {
		return []CardLearn{l}
	}
	if rt := cardResultTypeOf(e); rt == record.TypeMergedHeld || rt == record.TypeMerged || rt == record.TypeCreated || rt == record.TypeAction {
		s := "delivered " + rt
		if e.QualityMult != nil {
			s += fmt.Sprintf(" (quality %.2f)", *e.QualityMult)
		}
		if e.PRNumber != nil {
			s += fmt.Sprintf(" → PR #%d", *e.PRNumber)
		}
		return []CardLearn{{Kind: LearnDelivered, Text: s}}
	}
	if micro != "" && e.SelectedDomain != "" {
		return []CardLearn{{Kind: LearnMicro, Text: e.SelectedDomain + " confidence " + micro}}
	}
	if l, ok := cardRecalledLesson(e); ok {
		return []CardLearn{l}
	}
	return []CardLearn{{Kind: LearnObserving, Text: "no new orientation this cycle (observing)"}}
}

// cardMicroAdjustment reads the 2-B1 micro-adjustment of the CHANGELOG
// entry's Confidence line ("+0.02 (findings)"): its label and delta; ""
// when there was none.
func cardMicroAdjustment(entry string) (string, float64) {
	line := cardChangelogField(entry, "Confidence")
	_, after, ok := strings.Cut(line, "micro-adj: ")
	if !ok {
		return "", 0
	}
	label := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(after), ")"))
	if label == "" || label == "none" {
		return "", 0
	}
	// The label closes its own parenthesis: "+0.02 (findings)".
	if strings.Count(label, "(") > strings.Count(label, ")") {
		label += ")"
	}
	num, _, _ := strings.Cut(label, " ")
	d, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return label, 0
	}
	return label, d
}

// cardHumanDecision is the LEARN line of the PR merges and rejections this
// cycle counted: the one that moved a confidence most, with the others
// counted. An entry that does not record a confidence before and after
// gets them from confidence.json, which this cycle wrote last: walking the
// cycle's changes of that domain back from its value now (less the
// micro-adjustment of the executed domain, applied after them).
func cardHumanDecision(snap *state.Snapshot, e state.DecisionEntry, microDelta float64) (CardLearn, bool) {
	var outs []cardPrOutcome
	if len(e.PROutcomes) > 0 {
		var raw []json.RawMessage
		if json.Unmarshal(e.PROutcomes, &raw) != nil {
			return CardLearn{}, false
		}
		for _, r := range raw {
			var o cardPrOutcome
			if json.Unmarshal(r, &o) == nil && o.Domain != "" && (o.Outcome == "merged" || o.Outcome == "rejected") {
				outs = append(outs, o)
			}
		}
	}
	if len(outs) == 0 {
		return CardLearn{}, false
	}
	now := map[string]float64{}
	for i := len(outs) - 1; i >= 0; i-- {
		o := &outs[i]
		if o.Before != nil && o.After != nil {
			continue
		}
		cur, seen := now[o.Domain]
		if !seen {
			v, ok := snap.Confidence.Get(o.Domain)
			if !ok || o.Delta == nil {
				continue
			}
			cur = v
			if o.Domain == e.SelectedDomain {
				cur -= microDelta
			}
		}
		if o.Delta == nil {
			delete(now, o.Domain)
			continue
		}
		after, before := cardRound4(cur), cardRound4(cur-*o.Delta)
		o.After, o.Before = &after, &before
		now[o.Domain] = before
	}
	best := 0
	for i, o := range outs {
		if math.Abs(cardDelta(o)) > math.Abs(cardDelta(outs[best])) {
			best = i
		}
	}
	o := outs[best]
	s := fmt.Sprintf("PR #%d %s → %s confidence ", o.PR, o.Outcome, o.Domain)
	switch {
	case o.Before != nil && o.After != nil:
		s += fmt.Sprintf("%.2f → %.2f", *o.Before, *o.After)
		if o.Delta != nil {
			s += fmt.Sprintf(" (%+.2f)", *o.Delta)
		}
	case o.Delta != nil:
		s += fmt.Sprintf("%+.2f", *o.Delta)
	default:
		s += "—"
	}
	if more := len(outs) - 1; more > 0 {
		s += fmt.Sprintf(" (+%d more PR outcome%s)", more, cardPlural(more))
	}
	return CardLearn{Kind: LearnHumanDecision, Text: s}, true
}

func cardDelta(o cardPrOutcome) float64 {
	if o.Delta == nil {
		return 0
	}
	return *o.Delta
}

func cardRound4(v float64) float64 { return math.Round(v*1e4)/1e4 + 0 }

func cardPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cardLensChange is the LEARN line of the lens changes (5-E) the cycle wrote
// in any domain's lens_changelog.json (logs, as readLensChangelogs read
// them): the largest, with the others counted.
func cardLensChange(cfg *config.Config, st *state.Store, logs lensLogs, cycle int, v *CardView) (CardLearn, bool) {
	var all []state.LensChange
	for i, d := range cfg.Domains {
		l := logs.at(i)
		cl, err := l.cl, l.err
		if err != nil {
			if state.CheckName("domain", d.Name) == nil {
				v.Corrupt = append(v.Corrupt, st.LensChangelogPath(d.Name))
			}
			continue
		}
		for _, ch := range cl.Entries {
			if ch.Cycle == cycle && ch.Item != "" {
				if ch.Domain == "" {
					ch.Domain = d.Name
				}
				all = append(all, ch)
			}
		}
	}
	if len(all) == 0 {
		return CardLearn{}, false
	}
	best := 0
	for i, ch := range all {
		if math.Abs(ch.Delta) > math.Abs(all[best].Delta) {
			best = i
		}
	}
	ch := all[best]
	s := "lens re-aimed → " + ch.Item
	switch {
	case ch.Before != nil && ch.After != nil:
		s += " " + cardNum(*ch.Before) + " → " + cardNum(*ch.After)
	case ch.After != nil:
		s += " " + ch.ChangeType + " at " + cardNum(*ch.After)
	default:
		s += " " + ch.ChangeType
	}
	if ch.Reason != "" {
		s += " (" + ch.Reason + ")"
	}
	if more := len(all) - 1; more > 0 {
		s += fmt.Sprintf(" (+%d more lens change%s)", more, cardPlural(more))
	}
	return CardLearn{Kind: LearnLens, Text: s}, true
}

// lensLog is a domain's lens changelog as read, or the error reading it.
type lensLog struct {
	cl  state.LensChangelog
	err error
}

// lensLogs are the lens changelogs of the configured domains, in their
// order: base's, or when base is nil those ahead read ahead, but where
// over holds one read again.
type lensLogs struct {
	base  []lensLog
	ahead *LensPrefetch
	over  map[int]lensLog
}

// at is the changelog of the i-th configured domain.
func (l lensLogs) at(i int) lensLog {
	if v, ok := l.over[i]; ok {
		return v
	}
	if l.base == nil && l.ahead != nil {
		return l.ahead.at(i)
	}
	return l.base[i]
}

// readAheadMin is the number of domains from which the card reads their
// lens changelogs alongside its other files.
const readAheadMin = 64

// readLensChangelogs reads every configured domain's lens changelog
// (Store.ReadEach shares the reads among goroutines): logs waits for them
// and returns them in configuration order. With many domains the reads
// start at once, beside the card's other reads, and wait waits for them
// to end; with few they are made when logs is first called.
func readLensChangelogs(cfg *config.Config, st *state.Store) (logs func() lensLogs, wait func()) {
	out := make([]lensLog, len(cfg.Domains))
	read := func() {
		st.ReadEach(len(cfg.Domains), func(i int) {
			out[i].cl, out[i].err = st.ReadLensChangelog(cfg.Domains[i].Name)
		})
	}
	if len(cfg.Domains) < readAheadMin {
		var once sync.Once
		return func() lensLogs {
			once.Do(read)
			return lensLogs{base: out}
		}, func() {}
	}
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		read()
	}()
	return func() lensLogs {
		<-done
		if panicked != nil {
			panic(panicked)
		}
		return lensLogs{base: out}
	}, func() { <-done }
}

// cardNum prints a lens value as written: 0.3, 0.25, 12.
func cardNum(v float64) string { return strconv.FormatFloat(cardRound4(v), 'f', -1, 64) }

// cardNewIntervention is the LEARN line of an intervention 5-C created this
// cycle (memos.json keeps it until it expires).
func cardNewIntervention(m state.Memos, cycle int) (CardLearn, bool) {
	for _, iv := range m.Interventions {
		if iv.CreatedAtCycle != cycle || iv.Domain == "" {
			continue
		}
		kind := iv.Type
		if kind == "" {
			kind = "intervention"
		}
		n := iv.ExpiresAfterCycles
		return CardLearn{Kind: LearnIntervention, Text: fmt.Sprintf("%s → %s %+.1f for %d cycle%s", kind, iv.Domain, iv.Delta, n, cardPlural(n))}, true
	}
	return CardLearn{}, false
}

// cardRecalledLesson is the LEARN line of a past lesson 2-F recalled for the
// cycle, when the entry records which.
func cardRecalledLesson(e state.DecisionEntry) (CardLearn, bool) {
	raw, ok := e.Extra[record.LessonsRecalledKey]
	if !ok {
		return CardLearn{}, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return CardLearn{}, false
	}
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			var obj struct {
				Lesson string `json:"lesson"`
			}
			if json.Unmarshal(it, &obj) != nil {
				continue
			}
			s = obj.Lesson
		}
		if strings.TrimSpace(s) != "" {
			return CardLearn{Kind: LearnLesson, Text: "recalled lesson: " + s}, true
		}
	}
	return CardLearn{}, false
}

// cardCostOf is the COST line: the entry's own cost (else the ledger's entry
// for the cycle), the day's total when the ledger is of the cycle's UTC
// day, and the cap.
func cardCostOf(cfg *config.Config, l *state.CostLedger, e state.DecisionEntry) CardCost {
	var c CardCost
	if lim := cfg.Cost.DailyLimitUSD; lim > 0 {
		c.CapUSD = &lim
	}
	if e.CostUSD != nil {
		v := *e.CostUSD
		c.CycleUSD = &v
	}
	if l == nil {
		return c
	}
	inLedger := false
	sum := 0.0
	for _, en := range l.Entries {
		if en.CycleID == e.Cycle && !en.Synthetic {
			inLedger = true
			sum += en.EstimatedUSD
		}
	}
	if c.CycleUSD == nil && inLedger {
		v := cardRound4(sum)
		c.CycleUSD = &v
	}
	day := ""
	if t, ok := state.ParseTime(e.Timestamp); ok {
		day = t.UTC().Format("2006-01-02")
	}
	if (day != "" && l.Date == day) || (day == "" && inLedger) {
		v := cardRound4(record.Spent(*l))
		c.TodayUSD = &v
	}
	return c
}

// cardUsd prints an amount in dollars with cents; a whole cap as $10.
func cardUsd(v float64, whole bool) string {
	if whole && v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("$%.0f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// cardCostText is the COST line's text.
func cardCostText(c CardCost) string {
	cycle, today, limit := "+—", "—", "no cap"
	if c.CycleUSD != nil {
		cycle = "+" + cardUsd(*c.CycleUSD, false)
	}
	if c.TodayUSD != nil {
		today = cardUsd(*c.TodayUSD, false)
	}
	if c.CapUSD != nil {
		limit = "cap " + cardUsd(*c.CapUSD, true)
	}
	return cycle + " · " + today + " today · " + limit
}

// cardDecideText is the DECIDE line, without its gate mark.
func cardDecideText(d CardDecide) string {
	if d.Domain == nil {
		s := "no domain selected"
		if d.Reason != nil {
			s += " (" + *d.Reason + ")"
		}
		return s
	}
	s := *d.Domain + " won"
	switch {
	case d.Guidance != nil:
		s += " (implicit guidance: " + *d.Guidance + ")"
	case d.Score != nil:
		s += fmt.Sprintf(" (score %.1f)", *d.Score)
	default:
		s += " (score —)"
	}
	if d.Confidence != nil {
		s += fmt.Sprintf(" · confidence %.2f", *d.Confidence)
	} else {
		s += " · confidence —"
	}
	return s
}

// cardGateMark is ✓ when the confidence gate passed, ✗ when the domain ran
// below it, "" when unknown.
func cardGateMark(d CardDecide) string {
	switch {
	case d.GatePassed == nil:
		return ""
	case *d.GatePassed:
		return "✓"
	}
	return "✗"
}

// cardObserveText is the OBSERVE line.
func cardObserveText(o CardObserve) string {
	n := "—"
	if o.DomainsScanned != nil {
		n = strconv.Itoa(*o.DomainsScanned)
	}
	word := "domains"
	if o.DomainsScanned != nil && *o.DomainsScanned == 1 {
		word = "domain"
	}
	change := "—"
	if o.NotableChange != nil {
		change = *o.NotableChange
	}
	return n + " " + word + " scanned · " + change
}

// OrientMax is how many columns of the orient summary the card shows.
const OrientMax = 70

// cardHeaderTime is the cycle's instant as the card heads it.
func cardHeaderTime(c *Card) string {
	if c.Timestamp == nil {
		return "—"
	}
	if t, ok := state.ParseTime(*c.Timestamp); ok {
		return t.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	return *c.Timestamp
}

// cardFooterText is the footer: the HALT state and the level with its name.
func cardFooterText(c *Card) string {
	h := "HALT: not active"
	if c.Halt.Active {
		h = "HALT: ACTIVE"
		if c.Halt.Reason != nil && *c.Halt.Reason != "" {
			h += " — " + *c.Halt.Reason
		}
	}
	return h + " · Level " + strconv.Itoa(c.Level) + " (" + cardOrDash(c.LevelName) + ")"
}

// cardShareSentence is the one line under the card, for copy and paste.
func cardShareSentence(c *Card) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ran ooda cycle #%d: ", cardOneLine(c.Project), c.Cycle)
	if c.executed {
		// What ran and what came of it; the skill and the risk tier
		// are the card's detail.
		res := "—"
		for _, p := range []*string{c.Act.ResultType, c.Act.Result} {
			if p != nil {
				res = *p
				break
			}
		}
		b.WriteString(cardOneLine(cardOrDash(cardDeref(c.Decide.Domain))) + " → " + cardOneLine(res))
		if c.Act.PRNumber != nil {
			fmt.Fprintf(&b, " (PR #%d)", *c.Act.PRNumber)
		}
	} else {
		b.WriteString(cardOneLine(c.Act.Text))
	}
	if len(c.Learn) > 0 {
		b.WriteString("; " + strings.TrimRight(cardOneLine(c.Learn[0].Text), ". "))
	}
	b.WriteString("; cost ")
	cost := c.Cost
	if cost.CycleUSD != nil {
		b.WriteString("+" + cardUsd(*cost.CycleUSD, false))
	} else {
		b.WriteString("—")
	}
	if cost.TodayUSD != nil {
		b.WriteString(" (" + cardUsd(*cost.TodayUSD, false) + " today)")
	}
	b.WriteString(".")
	return b.String()
}

func cardDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// cardOneLine joins a text's lines with spaces.
func cardOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cardRow is one line of the card: a label column and a value, with an
// optional coloured mark after the value.
type cardRow struct {
	label string
	value string // safe for a terminal already
	mark  string
	color Color
	emoji bool // LEARN's telescope goes in the label column
}

// cardLabelWidth is the label column: "OBSERVE" and two spaces, and room
// for LEARN's telescope.
const cardLabelWidth = 10

// cardMaxBoxWidth is the widest box drawn: a card a screenshot can hold;
// a longer line is cut there (the share sentence keeps it whole).
const cardMaxBoxWidth = 100

// cardMinBoxWidth is the narrowest box drawn; a narrower terminal gets the
// plain layout.
const cardMinBoxWidth = 60

// rows are the card's lines between header and footer, every state text
// escaped (safetext.Text) so that none can drive the terminal.
func (c *Card) rows() []cardRow {
	orient := "—"
	if c.Orient != nil {
		orient = Fit(safetext.Text(cardOneLine(*c.Orient)), OrientMax)
	}
	markColor := Green
	if c.Decide.GatePassed != nil && !*c.Decide.GatePassed {
		markColor = Red
	}
	rows := []cardRow{
		{label: "OBSERVE", value: safetext.Text(cardObserveText(c.Observe))},
		{label: "ORIENT", value: orient},
		{label: "DECIDE", value: safetext.Text(cardDecideText(c.Decide)), mark: cardGateMark(c.Decide), color: markColor},
		{label: "ACT", value: safetext.Text(c.Act.Text)},
	}
	for i, l := range c.Learn {
		r := cardRow{value: safetext.Text(cardOneLine(l.Text))}
		if i == 0 {
			r.label, r.emoji = "LEARN", true
		}
		rows = append(rows, r)
	}
	rows = append(rows, cardRow{label: "COST", value: cardCostText(c.Cost)})
	return rows
}

// RenderCard draws the card of v and the share sentence under it, or
// NoCardYet when there is no card. On a terminal wide enough (s.Terminal,
// and s.Width unknown or at least the box's) it is a box with the LEARN
// telescope; otherwise, and always when plain, it is the plain layout,
// with no box drawing, no emoji and (plain) no colour.
func RenderCard(c *Card, s Style, plain bool) string {
	if c == nil {
		return NoCardYet + "\n"
	}
	if plain {
		s.Color = false
	}
	title := safetext.Text(cardOneLine(c.Project)) + " · ooda cycle #" + strconv.Itoa(c.Cycle)
	when := safetext.Text(cardHeaderTime(c))
	footer := safetext.Text(cardFooterText(c))
	rows := c.rows()
	share := safetext.Text(c.Share)

	if !plain && s.Terminal {
		natural := DisplayWidth(title) + DisplayWidth(when) + 9
		for _, r := range rows {
			w := cardLabelWidth + DisplayWidth(r.value)
			if r.mark != "" {
				w += 1 + DisplayWidth(r.mark)
			}
			natural = max(natural, w+6)
		}
		natural = min(max(natural, DisplayWidth(footer)+6, cardMinBoxWidth), cardMaxBoxWidth)
		width := natural
		if s.Width > 0 && s.Width < width {
			width = s.Width
		}
		if width >= cardMinBoxWidth {
			return cardBox(c, s, width, title, when, footer, rows) + "\n" + share + "\n"
		}
	}
	var b strings.Builder
	b.WriteString(s.Paint(Bold, title) + " · " + when + "\n")
	for _, r := range rows {
		label := Pad(r.label, cardLabelWidth)
		b.WriteString(s.Paint(Bold, label))
		b.WriteString(r.value)
		if r.mark != "" {
			b.WriteString(" " + s.Paint(r.color, r.mark))
		}
		b.WriteString("\n")
	}
	b.WriteString(cardPaintFooter(c, s, footer) + "\n")
	b.WriteString("\n" + share + "\n")
	return b.String()
}

// cardPaintFooter paints an active HALT red.
func cardPaintFooter(c *Card, s Style, footer string) string {
	if c.Halt.Active {
		return s.Paint(Red, footer)
	}
	return footer
}

// cardBox draws the card in a box width columns wide, cutting each value
// (with "…") to fit.
func cardBox(c *Card, s Style, width int, title, when, footer string, rows []cardRow) string {
	inner := width - 6
	var b strings.Builder
	// ┌─ title ───── when ─┐
	room := width - 9 - DisplayWidth(when)
	title = Fit(title, room)
	fill := width - 8 - DisplayWidth(title) - DisplayWidth(when)
	b.WriteString("┌─ " + s.Paint(Bold, title) + " " + strings.Repeat("─", max(fill, 1)) + " " + when + " ─┐\n")
	line := func(content string) {
		b.WriteString("│  " + Pad(content, inner) + "  │\n")
	}
	line("")
	for _, r := range rows {
		label := r.label
		if r.emoji {
			label = "LEARN  🔭"
		}
		avail := inner - cardLabelWidth
		value := r.value
		mark := ""
		if r.mark != "" {
			value = Fit(value, avail-1-DisplayWidth(r.mark))
			mark = " " + s.Paint(r.color, r.mark)
		} else {
			value = Fit(value, avail)
		}
		line(s.Paint(Bold, Pad(label, cardLabelWidth)) + value + mark)
	}
	line("")
	line(cardPaintFooter(c, s, Fit(footer, inner)))
	b.WriteString("└" + strings.Repeat("─", width-2) + "┘\n")
	return b.String()
}
