package present

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// How much of each list the Orient view shows; the rest is counted. The
// files are capped by the engine (20 reflections, 50 lens items, 52
// episodes), but a hand-edited file may hold more, and a person reads a
// screen, not a file.
const (
	orientMaxEpisodes      = 3
	orientMaxPrinciples    = 5
	orientMaxLensItems     = 5
	orientMaxLensChanges   = 3
	orientMaxInterventions = 10
	orientMaxGaps          = 5
	orientMaxReflections   = 3
	// orientMaxChainWindow is how many of the latest decision-log entries
	// are looked at for chains, as the original's dashboard counts them.
	orientMaxChainWindow = 10
)

// Orient is the Orient-health view of `ooda status --orient` and its
// --json document: is the learning side of the loop running? Every key
// is always present; lists are empty, never null, and a value there is
// nothing to show for is null.
type Orient struct {
	CycleCount    int                 `json:"cycle_count"`
	LastCycle     *string             `json:"last_cycle"`
	Episodes      OrientEpisodeList   `json:"episodes"`
	Principles    OrientPrincipleList `json:"principles"`
	Lens          OrientLens          `json:"lens"`
	Interventions OrientIntervList    `json:"interventions"`
	Gaps          OrientGapList       `json:"gaps"`
	Reflections   OrientReflList      `json:"reflections"`
	Lessons       OrientLessons       `json:"lessons"`
	Chain         OrientChain         `json:"chain"`
	// Corrupt names each file that could not be read or decoded; its
	// section shows as empty and says so.
	Corrupt []string `json:"corrupt"`
}

// OrientEpisodeList is episodes.json: the weekly summaries (6-C4).
type OrientEpisodeList struct {
	Count      int             `json:"count"`
	LastWeek   *string         `json:"last_week"`
	Recent     []OrientEpisode `json:"recent"`
	Unreadable bool            `json:"unreadable"`
}

// OrientEpisode is one weekly episode, newest first in Recent.
type OrientEpisode struct {
	ID          string   `json:"id"`
	WeekStart   string   `json:"week_start"`
	WeekEnd     string   `json:"week_end"`
	CycleRange  []int    `json:"cycle_range"`
	TotalCycles int      `json:"total_cycles"`
	Summary     string   `json:"summary"`
	Lessons     int      `json:"lessons"`
	Patterns    []string `json:"patterns_detected"`
}

// OrientPrincipleList is principles.json (6-C4).
type OrientPrincipleList struct {
	Count int `json:"count"`
	// HighConfidence counts principles at confidence >= 0.5.
	HighConfidence int `json:"high_confidence"`
	// Candidates counts the clustered "candidate" entries.
	Candidates int               `json:"candidates"`
	Top        []OrientPrinciple `json:"top"`
	Unreadable bool              `json:"unreadable"`
}

// OrientPrinciple is one principle; Top holds the most confident first.
type OrientPrinciple struct {
	ID         string  `json:"id"`
	Text       string  `json:"text"`
	Kind       string  `json:"kind"`
	Confidence float64 `json:"confidence"`
	// Weeks is the number of episodes it has evidence from.
	Weeks         int     `json:"weeks"`
	LastConfirmed *string `json:"last_confirmed"`
}

// OrientLens is the lens of each domain (5-E).
type OrientLens struct {
	// WithLens counts the domains whose lens.json exists; Active counts
	// the domains that run (active or degraded).
	WithLens int                `json:"with_lens"`
	Active   int                `json:"active_domains"`
	Domains  []OrientLensDomain `json:"domains"`
}

// OrientLensDomain is one domain's lens and its latest changes.
type OrientLensDomain struct {
	Domain            string          `json:"domain"`
	Status            string          `json:"status"`
	Found             bool            `json:"found"`
	LastUpdated       *string         `json:"last_updated"`
	FocusItems        OrientLensItems `json:"focus_items"`
	LearnedThresholds OrientLensItems `json:"learned_thresholds"`
	DiscoveredSignals OrientLensItems `json:"discovered_signals"`
	Deprecated        int             `json:"deprecated"`
	Changes           OrientLensLog   `json:"changes"`
	Unreadable        bool            `json:"unreadable"`
}

// OrientLensItems is one kind of lens item: the count, how many are in
// the active lens passed to skills, and the most confident.
type OrientLensItems struct {
	Count  int              `json:"count"`
	Active int              `json:"active"`
	Top    []OrientLensItem `json:"top"`
}

// OrientLensItem is one focus item, learned threshold or signal.
type OrientLensItem struct {
	Item       string   `json:"item"`
	Confidence float64  `json:"confidence"`
	Value      *float64 `json:"value"`
}

// OrientLensLog is lens_changelog.json: its size and latest entries,
// newest first.
type OrientLensLog struct {
	Count      int                `json:"count"`
	Recent     []OrientLensChange `json:"recent"`
	Unreadable bool               `json:"unreadable"`
}

// OrientLensChange is one lens_changelog.json entry.
type OrientLensChange struct {
	Cycle      int      `json:"cycle"`
	Item       string   `json:"item"`
	ChangeType string   `json:"change_type"`
	Before     *float64 `json:"before"`
	After      *float64 `json:"after"`
	Reason     string   `json:"reason"`
}

// OrientIntervList is memos.json's interventions (2-D, 5-C, 6-C4).
type OrientIntervList struct {
	Active     int                  `json:"active"`
	Expired    int                  `json:"expired"`
	Items      []OrientIntervention `json:"items"`
	Unreadable bool                 `json:"unreadable"`
}

// OrientIntervention is one intervention. It is active while it has
// cycles left; the engine removes one when its last cycle is used, so an
// expired one is an entry the scoring has not counted down yet.
type OrientIntervention struct {
	Domain         string  `json:"domain"`
	Type           string  `json:"type"`
	Delta          float64 `json:"delta"`
	Reason         string  `json:"reason"`
	CreatedAtCycle int     `json:"created_at_cycle"`
	CyclesLeft     int     `json:"cycles_left"`
	AppliedCount   int     `json:"applied_count"`
	Active         bool    `json:"active"`
}

// OrientGapList is skill_gaps.json (5-A, 6-C8). Gaps of type
// learning_loop_break flag the loop's own invariants broken, not a
// missing skill, and are counted apart.
type OrientGapList struct {
	Unresolved int             `json:"unresolved"`
	Resolved   int             `json:"resolved"`
	LoopBreak  OrientGapCounts `json:"learning_loop_break"`
	Recent     []OrientGap     `json:"recent"`
	Unreadable bool            `json:"unreadable"`
}

// OrientGapCounts counts the learning_loop_break gaps.
type OrientGapCounts struct {
	Unresolved int `json:"unresolved"`
	Resolved   int `json:"resolved"`
}

// OrientGap is one gap; Recent holds the unresolved first, then the
// most recently seen.
type OrientGap struct {
	Name          string  `json:"name"`
	Type          string  `json:"type"`
	Domain        *string `json:"domain"`
	Detail        string  `json:"detail"`
	Frequency     int     `json:"frequency"`
	LastSeen      *string `json:"last_seen"`
	LastSeenCycle *int    `json:"last_seen_cycle"`
	Resolved      bool    `json:"resolved"`
	LoopBreak     bool    `json:"loop_break"`
}

// OrientReflList is reflections.json (5-F).
type OrientReflList struct {
	Count      int                `json:"count"`
	Verdicts   OrientVerdicts     `json:"verdicts"`
	Recent     []OrientReflection `json:"recent"`
	Unreadable bool               `json:"unreadable"`
}

// OrientVerdicts counts the reflections by verdict.
type OrientVerdicts struct {
	Hit      int `json:"hit"`
	Miss     int `json:"miss"`
	TooEarly int `json:"too_early"`
	Unclear  int `json:"unclear"`
	Other    int `json:"other"`
}

// OrientReflection is one self-critique, newest first in Recent.
type OrientReflection struct {
	Cycle    int    `json:"cycle"`
	Domain   string `json:"domain"`
	Skill    string `json:"skill"`
	Result   string `json:"result"`
	Verdict  string `json:"verdict"`
	Critique string `json:"critique"`
	Lesson   string `json:"lesson"`
	Status   string `json:"status"`
}

// OrientLessons counts the reflections' lessons by status: applied
// (recalled by a later decision, 2-F) or open.
type OrientLessons struct {
	Applied int `json:"applied"`
	Open    int `json:"open"`
	Other   int `json:"other"`
}

// OrientChain is what the decision log records of chains: how many of
// its last orientMaxChainWindow entries ran one, and which.
type OrientChain struct {
	Window          int                `json:"window"`
	CyclesWithChain int                `json:"cycles_with_chain"`
	Recent          []OrientChainEntry `json:"recent"`
	Unreadable      bool               `json:"unreadable"`
}

// OrientChainEntry is one decision that ran a chain, newest first.
type OrientChainEntry struct {
	Cycle  int      `json:"cycle"`
	Domain string   `json:"domain"`
	Skills []string `json:"skills"`
}

// BuildOrient reads the Orient layer's files through st and builds the
// view. It reads only what the view shows — state.json (for the cycle
// count and the decision log's chains), episodes.json, principles.json,
// memos.json, skill_gaps.json, reflections.json and each domain's
// lens.json and lens_changelog.json — never the cycle log, so it costs
// the same after a million cycles. It writes, locks and moves nothing: a
// missing file is an empty section and a corrupt one is named in Corrupt
// and shown empty.
func BuildOrient(st *state.Store, cfg *config.Config) Orient {
	o := Orient{Corrupt: []string{}}
	corrupt := func(name string, err error) bool {
		if err == nil {
			return false
		}
		o.Corrupt = append(o.Corrupt, st.EvolvePath(name))
		return true
	}

	s, _, err := orientRead[state.State](st, state.StateFile)
	o.Chain.Unreadable = corrupt(state.StateFile, err)
	o.CycleCount = s.CycleCount
	if s.LastCycle != nil && *s.LastCycle != "" {
		o.LastCycle = s.LastCycle
	}
	o.Chain = orientBuildChain(s.DecisionLog, o.Chain.Unreadable)

	eps, _, err := orientRead[state.Episodes](st, state.EpisodesFile)
	o.Episodes = orientBuildEpisodes(eps.Episodes)
	o.Episodes.Unreadable = corrupt(state.EpisodesFile, err)

	prs, _, err := orientRead[state.Principles](st, state.PrinciplesFile)
	o.Principles = orientBuildPrinciples(prs.Principles)
	o.Principles.Unreadable = corrupt(state.PrinciplesFile, err)

	o.Lens = orientBuildLens(st, cfg, &o.Corrupt)

	memos, _, err := orientRead[state.Memos](st, state.MemosFile)
	o.Interventions = orientBuildInterventions(memos.Interventions)
	o.Interventions.Unreadable = corrupt(state.MemosFile, err)

	gaps, _, err := orientRead[state.SkillGaps](st, state.SkillGapsFile)
	o.Gaps = orientBuildGaps(gaps.Gaps)
	o.Gaps.Unreadable = corrupt(state.SkillGapsFile, err)

	refl, _, err := orientRead[state.Reflections](st, state.ReflectionsFile)
	o.Reflections, o.Lessons = orientBuildReflections(refl.Reflections)
	o.Reflections.Unreadable = corrupt(state.ReflectionsFile, err)
	return o
}

// orientRead decodes one evolve file with the store's own limits (size,
// regular file, inside the project). found is false for a missing file;
// an empty or undecodable file is an error and the zero value.
func orientRead[T any](st *state.Store, name string) (v T, found bool, err error) {
	b, err := st.RawEvolveFile(name)
	if err != nil || b == nil {
		return v, false, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return v, false, errors.New("empty file")
	}
	var fresh T
	if err := json.Unmarshal(b, &fresh); err != nil {
		return v, false, err
	}
	return fresh, true, nil
}

func orientBuildChain(log []state.DecisionEntry, unreadable bool) OrientChain {
	c := OrientChain{Recent: []OrientChainEntry{}, Unreadable: unreadable}
	if len(log) > orientMaxChainWindow {
		log = log[len(log)-orientMaxChainWindow:]
	}
	c.Window = len(log)
	for i := len(log) - 1; i >= 0; i-- {
		e := log[i]
		if len(e.ChainExecuted) == 0 {
			continue
		}
		c.CyclesWithChain++
		c.Recent = append(c.Recent, OrientChainEntry{Cycle: e.Cycle, Domain: e.SelectedDomain, Skills: append([]string{}, e.ChainExecuted...)})
	}
	return c
}

func orientBuildEpisodes(eps []state.Episode) OrientEpisodeList {
	l := OrientEpisodeList{Count: len(eps), Recent: []OrientEpisode{}}
	// The file is appended week by week, but an original's or a hand's
	// may not be: the newest is the latest week.
	idx := make([]int, len(eps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return eps[idx[a]].Start() > eps[idx[b]].Start() })
	for n, i := range idx {
		e := eps[i]
		if n == 0 {
			if w := e.Week(); w != "" {
				l.LastWeek = &w
			}
		}
		if n >= orientMaxEpisodes {
			break
		}
		oe := OrientEpisode{ID: e.Week(), WeekStart: e.Start(), WeekEnd: e.WeekEnd, CycleRange: []int{},
			TotalCycles: e.TotalCycles, Summary: e.Summary, Lessons: len(e.Lessons), Patterns: []string{}}
		if len(e.CycleRange) == 2 {
			oe.CycleRange = []int{e.CycleRange[0], e.CycleRange[1]}
		}
		oe.Patterns = append(oe.Patterns, e.PatternsDetected...)
		l.Recent = append(l.Recent, oe)
	}
	return l
}

func orientBuildPrinciples(ps []state.Principle) OrientPrincipleList {
	l := OrientPrincipleList{Count: len(ps), Top: []OrientPrinciple{}}
	idx := make([]int, len(ps))
	for i, p := range ps {
		idx[i] = i
		if p.Confidence >= 0.5 {
			l.HighConfidence++
		}
		if p.Kind == "candidate" {
			l.Candidates++
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]].Confidence > ps[idx[b]].Confidence })
	for n, i := range idx {
		if n >= orientMaxPrinciples {
			break
		}
		p := ps[i]
		op := OrientPrinciple{ID: p.ID, Text: p.Text, Kind: p.Kind, Confidence: p.Confidence, Weeks: len(p.WeekSources())}
		if op.Kind == "" {
			op.Kind = "principle"
		}
		if t, ok := p.ConfirmedAt(); ok {
			s := state.FormatTime(t)
			op.LastConfirmed = &s
		} else if t, ok := state.ParseTime(p.LastConfirmedAt); ok {
			s := state.FormatTime(t)
			op.LastConfirmed = &s
		}
		l.Top = append(l.Top, op)
	}
	return l
}

func orientBuildLens(st *state.Store, cfg *config.Config, corrupt *[]string) OrientLens {
	l := OrientLens{Domains: []OrientLensDomain{}}
	defer st.HoldRoot()()
	for _, d := range cfg.Domains {
		runs := d.IsEnabled() && d.Scoreable()
		if runs {
			l.Active++
		}
		status := d.EffectiveStatus()
		if !d.IsEnabled() {
			status = "disabled"
		}
		od := OrientLensDomain{Domain: d.Name, Status: status,
			FocusItems: orientNoItems(), LearnedThresholds: orientNoItems(), DiscoveredSignals: orientNoItems(),
			Changes: OrientLensLog{Recent: []OrientLensChange{}}}
		lens, found, err := st.ReadLens(d.Name)
		if err != nil {
			od.Unreadable = true
			*corrupt = append(*corrupt, st.LensPath(d.Name))
		}
		if !runs && !found && err == nil {
			// A domain that does not run and never had a lens has
			// nothing to show; one that has a lens (it ran before it was
			// disabled) keeps it, and it is shown.
			continue
		}
		if found {
			l.WithLens++
			od.Found = true
			if t, ok := state.ParseTime(lens.LastUpdated); ok {
				s := state.FormatTime(t)
				od.LastUpdated = &s
			}
			od.FocusItems = orientLensItems(lens.FocusItems, false)
			od.LearnedThresholds = orientLensItems(lens.LearnedThresholds, false)
			od.DiscoveredSignals = orientLensItems(lens.DiscoveredSignals, true)
			od.Deprecated = len(lens.DeprecatedItems)
		}
		log, lerr := st.ReadLensChangelog(d.Name)
		if lerr != nil {
			od.Changes.Unreadable = true
			*corrupt = append(*corrupt, st.LensChangelogPath(d.Name))
		} else {
			od.Changes.Count = len(log.Entries)
			for i := len(log.Entries) - 1; i >= 0 && len(od.Changes.Recent) < orientMaxLensChanges; i-- {
				e := log.Entries[i]
				od.Changes.Recent = append(od.Changes.Recent, OrientLensChange{Cycle: e.Cycle, Item: e.Item,
					ChangeType: e.ChangeType, Before: e.Before, After: e.After, Reason: e.Reason})
			}
		}
		l.Domains = append(l.Domains, od)
	}
	return l
}

func orientNoItems() OrientLensItems { return OrientLensItems{Top: []OrientLensItem{}} }

// orientLensItems counts items and keeps the most confident. Items at
// confidence >= 0.6 are in the active lens passed to skills; discovered
// signals are passed whatever their confidence (state.Lens.Active).
func orientLensItems(items []state.LensItem, allActive bool) OrientLensItems {
	out := OrientLensItems{Count: len(items), Top: []OrientLensItem{}}
	idx := make([]int, len(items))
	for i, it := range items {
		idx[i] = i
		if allActive || it.Confidence >= 0.6 {
			out.Active++
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return items[idx[a]].Confidence > items[idx[b]].Confidence })
	for n, i := range idx {
		if n >= orientMaxLensItems {
			break
		}
		it := items[i]
		out.Top = append(out.Top, OrientLensItem{Item: it.Item, Confidence: it.Confidence, Value: it.Value})
	}
	return out
}

func orientBuildInterventions(ivs []state.Intervention) OrientIntervList {
	l := OrientIntervList{Items: []OrientIntervention{}}
	var expired []OrientIntervention
	for _, iv := range ivs {
		oi := OrientIntervention{Domain: iv.Domain, Type: iv.Type, Delta: iv.Delta, Reason: iv.Reason,
			CreatedAtCycle: iv.CreatedAtCycle, CyclesLeft: iv.ExpiresAfterCycles, AppliedCount: iv.AppliedCount,
			Active: iv.ExpiresAfterCycles > 0}
		if oi.Active {
			l.Active++
			if len(l.Items) < orientMaxInterventions {
				l.Items = append(l.Items, oi)
			}
			continue
		}
		l.Expired++
		expired = append(expired, oi)
	}
	for _, oi := range expired {
		if len(l.Items) >= orientMaxInterventions {
			break
		}
		l.Items = append(l.Items, oi)
	}
	return l
}

func orientBuildGaps(gaps []state.Gap) OrientGapList {
	l := OrientGapList{Recent: []OrientGap{}}
	idx := make([]int, len(gaps))
	for i, g := range gaps {
		idx[i] = i
		switch {
		case g.IsLoopBreak() && g.Resolved:
			l.LoopBreak.Resolved++
		case g.IsLoopBreak():
			l.LoopBreak.Unresolved++
		case g.Resolved:
			l.Resolved++
		default:
			l.Unresolved++
		}
	}
	// Unresolved first; then the latest seen (by cycle where recorded,
	// else by time); the file's order, which is the order of first
	// sight, last.
	seen := func(g state.Gap) (int, string) {
		c := -1
		if g.LastSeenCycle != nil {
			c = *g.LastSeenCycle
		}
		ts := ""
		if t, ok := state.ParseTime(g.LastSeen); ok {
			ts = state.FormatTime(t)
		}
		return c, ts
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ga, gb := gaps[idx[a]], gaps[idx[b]]
		if ga.Resolved != gb.Resolved {
			return !ga.Resolved
		}
		ca, ta := seen(ga)
		cb, tb := seen(gb)
		if ca != cb {
			return ca > cb
		}
		return ta > tb
	})
	for n, i := range idx {
		if n >= orientMaxGaps {
			break
		}
		g := gaps[i]
		og := OrientGap{Name: g.Key(), Type: g.Type, Domain: g.RelatedDomain, Detail: g.Text(), Frequency: g.Frequency,
			LastSeenCycle: g.LastSeenCycle, Resolved: g.Resolved, LoopBreak: g.IsLoopBreak()}
		if og.Domain != nil && *og.Domain == "" {
			og.Domain = nil
		}
		if g.LastSeen != "" {
			s := g.LastSeen
			og.LastSeen = &s
		}
		l.Recent = append(l.Recent, og)
	}
	return l
}

func orientBuildReflections(rs []state.Reflection) (OrientReflList, OrientLessons) {
	l := OrientReflList{Count: len(rs), Recent: []OrientReflection{}}
	var lessons OrientLessons
	for _, r := range rs {
		switch r.Verdict {
		case "hit":
			l.Verdicts.Hit++
		case "miss":
			l.Verdicts.Miss++
		case "too_early":
			l.Verdicts.TooEarly++
		case "unclear":
			l.Verdicts.Unclear++
		default:
			l.Verdicts.Other++
		}
		switch r.Status {
		case "applied":
			lessons.Applied++
		case "open", "":
			lessons.Open++
		default:
			lessons.Other++
		}
	}
	for i := len(rs) - 1; i >= 0 && len(l.Recent) < orientMaxReflections; i-- {
		r := rs[i]
		l.Recent = append(l.Recent, OrientReflection{Cycle: r.Cycle, Domain: r.Domain, Skill: r.Skill, Result: r.Result,
			Verdict: r.Verdict, Critique: r.Critique, Lesson: r.Lesson, Status: r.Status})
	}
	return l, lessons
}

// orientSeg is a piece of a line: plain text, already made safe, and the
// colour it is orientPaint in ("" for none).
type orientSeg struct {
	text  string
	color Color
}

func orientPlain(text string) orientSeg          { return orientSeg{text: text} }
func orientPaint(c Color, text string) orientSeg { return orientSeg{text: text, color: c} }

// orientWriter writes lines of segments fitted to the style's width: a line
// that would run past it is cut at the segment that does, ending in "…",
// and the segments before keep their colour. Width 0 cuts nothing.
type orientWriter struct {
	b strings.Builder
	s Style
}

func (w *orientWriter) line(indent int, segs ...orientSeg) {
	w.b.WriteString(strings.Repeat(" ", indent))
	used := indent
	for _, p := range segs {
		t := p.text
		if w.s.Width > 0 {
			room := w.s.Width - used
			if room < 1 {
				break
			}
			if DisplayWidth(t) > room {
				w.b.WriteString(w.paint(p.color, Fit(t, room)))
				break
			}
		}
		used += DisplayWidth(t)
		w.b.WriteString(w.paint(p.color, t))
	}
	w.b.WriteString("\n")
}

// paint is Style.Paint for a segment that may have no colour.
func (w *orientWriter) paint(c Color, t string) string {
	if c == "" {
		return t
	}
	return w.s.Paint(c, t)
}

// orientSafe is text from a state file as it may be printed: secrets masked,
// controls escaped; "—" when there is none.
func orientSafe(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return safetext.Text(s)
}

// orientNum prints a confidence or a delta with two decimals; an absurd value
// (a hand-edited 1e300) stays short.
func orientNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1e9 {
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// orientTime is a state time to the minute ("2026-01-21 05:00"), or the
// text as it is when it is not a time.
func orientTime(ts string) string {
	if t, ok := state.ParseTime(ts); ok {
		return t.Format("2006-01-02 15:04")
	}
	return orientSafe(ts)
}

func orientSigned(f float64) string {
	if f >= 0 {
		return "+" + orientNum(f)
	}
	return orientNum(f)
}

func orientOptNum(f *float64) string {
	if f == nil {
		return "—"
	}
	return orientNum(*f)
}

func orientPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// RenderOrient draws the Orient view as text for s: every section, in
// the order of the document; a section with nothing yet says so, and one
// whose file could not be read says that instead.
func RenderOrient(o Orient, s Style) string {
	w := &orientWriter{s: s}
	head := "Orient health: no cycle yet"
	switch {
	case o.Chain.Unreadable:
		// The chain section is state.json's: unreadable, the count is
		// unknown, not zero.
		head = "Orient health: cycle count unknown (state.json unreadable)"
	case o.CycleCount > 0:
		head = "Orient health after " + orientPlural(o.CycleCount, "cycle", "cycles")
		if o.LastCycle != nil {
			head += " (last " + orientSafe(*o.LastCycle) + ")"
		}
	}
	w.line(0, orientPaint(Bold, head))

	orientEpisodes(w, o.Episodes)
	orientPrinciples(w, o.Principles)
	orientLens(w, o.Lens)
	orientInterventions(w, o.Interventions)
	orientGaps(w, o.Gaps)
	orientReflections(w, o.Reflections, o.Lessons)
	orientChain(w, o.Chain)
	return w.b.String()
}

func (w *orientWriter) heading(title, counts string) {
	w.b.WriteString("\n")
	if counts == "" {
		w.line(0, orientPaint(Bold, title))
		return
	}
	w.line(0, orientPaint(Bold, title), orientPlain(" "+counts))
}

func (w *orientWriter) noneYet(unreadable bool) {
	if unreadable {
		w.line(2, orientPaint(Yellow, "unreadable: the file is corrupt and shown as empty (see the warning)"))
		return
	}
	w.line(2, orientPaint(Dim, "none yet"))
}

func orientEpisodes(w *orientWriter, l OrientEpisodeList) {
	counts := strconv.Itoa(l.Count)
	if l.LastWeek != nil {
		counts += ", last " + orientSafe(*l.LastWeek)
	}
	w.heading("Episodes:", counts)
	if l.Count == 0 {
		w.noneYet(l.Unreadable)
		return
	}
	for _, e := range l.Recent {
		segs := []orientSeg{orientPlain(orientSafe(e.ID)), orientPlain("  " + orientSafe(e.WeekStart) + " to " + orientSafe(e.WeekEnd))}
		if len(e.CycleRange) == 2 {
			segs = append(segs, orientPlain(fmt.Sprintf("  cycles #%d-#%d", e.CycleRange[0], e.CycleRange[1])))
		}
		segs = append(segs, orientPlain("  "+orientPlural(e.TotalCycles, "cycle", "cycles")+", "+orientPlural(e.Lessons, "lesson", "lessons")))
		w.line(2, segs...)
		if strings.TrimSpace(e.Summary) != "" {
			w.line(4, orientPaint(Dim, orientSafe(e.Summary)))
		}
		if len(e.Patterns) > 0 {
			ps := make([]string, len(e.Patterns))
			for i, p := range e.Patterns {
				ps[i] = orientSafe(p)
			}
			w.line(4, orientPlain("patterns: "+strings.Join(ps, ", ")))
		}
	}
	if more := l.Count - len(l.Recent); more > 0 {
		w.line(2, orientPaint(Dim, fmt.Sprintf("… and %d older", more)))
	}
}

func orientPrinciples(w *orientWriter, l OrientPrincipleList) {
	w.heading("Principles:", fmt.Sprintf("%d (%d at confidence ≥ 0.5, %s)", l.Count, l.HighConfidence, orientPlural(l.Candidates, "candidate", "candidates")))
	if l.Count == 0 {
		w.noneYet(l.Unreadable)
		return
	}
	for _, p := range l.Top {
		kind := ""
		if p.Kind != "principle" {
			kind = " [" + orientSafe(p.Kind) + "]"
		}
		w.line(2, orientPlain(orientNum(p.Confidence)), orientPlain("  "+orientSafe(p.Text)), orientPaint(Dim, kind+"  "+orientPlural(p.Weeks, "week", "weeks")))
	}
	if more := l.Count - len(l.Top); more > 0 {
		w.line(2, orientPaint(Dim, fmt.Sprintf("… and %d less confident", more)))
	}
}

func orientLens(w *orientWriter, l OrientLens) {
	verb := "have"
	if l.Active == 1 {
		verb = "has"
	}
	w.heading("Lens:", fmt.Sprintf("%d of %s %s a lens", l.WithLens, orientPlural(l.Active, "active domain", "active domains"), verb))
	if len(l.Domains) == 0 {
		w.noneYet(false)
		return
	}
	width := 0
	for _, d := range l.Domains {
		width = max(width, DisplayWidth(orientSafe(d.Domain)))
	}
	for _, d := range l.Domains {
		name := orientPlain(Pad(orientSafe(d.Domain), width))
		status := ""
		if d.Status != "active" {
			status = " (" + orientSafe(d.Status) + ")"
		}
		switch {
		case d.Unreadable:
			w.line(2, name, orientPlain(status+"  "), orientPaint(Yellow, "lens unreadable: the file is corrupt (see the warning)"))
		case !d.Found:
			w.line(2, name, orientPlain(status+"  "), orientPaint(Dim, "no lens yet"))
		case d.FocusItems.Count+d.LearnedThresholds.Count+d.DiscoveredSignals.Count+d.Deprecated == 0:
			w.line(2, name, orientPlain(status+"  "), orientPaint(Dim, "no items yet"))
		default:
			active := d.FocusItems.Active + d.LearnedThresholds.Active + d.DiscoveredSignals.Active
			segs := []orientSeg{name, orientPlain(fmt.Sprintf("%s  focus %d, thresholds %d, signals %d; %d active, %d deprecated", status,
				d.FocusItems.Count, d.LearnedThresholds.Count, d.DiscoveredSignals.Count, active, d.Deprecated))}
			if d.LastUpdated != nil {
				segs = append(segs, orientPaint(Dim, "; updated "+orientTime(*d.LastUpdated)))
			}
			w.line(2, segs...)
			orientLensItemLines(w, "focus", d.FocusItems)
			orientLensItemLines(w, "threshold", d.LearnedThresholds)
			orientLensItemLines(w, "signal", d.DiscoveredSignals)
		}
		if d.Changes.Unreadable {
			w.line(4, orientPaint(Yellow, "changelog unreadable: the file is corrupt (see the warning)"))
		}
		for _, c := range d.Changes.Recent {
			w.line(4, orientPaint(Dim, fmt.Sprintf("#%d ", c.Cycle)), orientPlain(orientSafe(c.ChangeType)+" "+orientSafe(c.Item)+" "+orientOptNum(c.Before)+" → "+orientOptNum(c.After)),
				orientPaint(Dim, "  "+orientSafe(c.Reason)))
		}
		if more := d.Changes.Count - len(d.Changes.Recent); more > 0 {
			w.line(4, orientPaint(Dim, "… and "+orientPlural(more, "earlier change", "earlier changes")))
		}
	}
}

func orientLensItemLines(w *orientWriter, kind string, l OrientLensItems) {
	for _, it := range l.Top {
		v := ""
		if it.Value != nil {
			v = " = " + strconv.FormatFloat(*it.Value, 'g', 6, 64)
		}
		w.line(4, orientPlain(fmt.Sprintf("%-9s %s  ", kind, orientNum(it.Confidence))), orientPlain(orientSafe(it.Item)+v))
	}
	if more := l.Count - len(l.Top); more > 0 {
		w.line(4, orientPaint(Dim, fmt.Sprintf("%-9s … and %d more", kind, more)))
	}
}

func orientInterventions(w *orientWriter, l OrientIntervList) {
	w.heading("Interventions:", fmt.Sprintf("%d active, %d expired", l.Active, l.Expired))
	if len(l.Items) == 0 {
		w.noneYet(l.Unreadable)
		return
	}
	width, tw := 0, 0
	for _, iv := range l.Items {
		width = max(width, DisplayWidth(orientSafe(iv.Domain)))
		tw = max(tw, DisplayWidth(orientSafe(iv.Type)))
	}
	for _, iv := range l.Items {
		left := orientPaint(Dim, "expired")
		if iv.Active {
			left = orientPlain(orientPlural(iv.CyclesLeft, "cycle", "cycles") + " left")
		}
		w.line(2, orientPlain(Pad(orientSafe(iv.Domain), width)+"  "+Pad(orientSigned(iv.Delta), 6)+"  "+Pad(orientSafe(iv.Type), tw)+"  "), left,
			orientPlain("  "+orientSafe(iv.Reason)), orientPaint(Dim, fmt.Sprintf("  (since cycle %d, applied %d)", iv.CreatedAtCycle, iv.AppliedCount)))
	}
	if more := l.Active + l.Expired - len(l.Items); more > 0 {
		w.line(2, orientPaint(Dim, fmt.Sprintf("… and %d more", more)))
	}
}

func orientGaps(w *orientWriter, l OrientGapList) {
	counts := fmt.Sprintf("%d open, %d resolved; learning_loop_break: %d open, %d resolved",
		l.Unresolved, l.Resolved, l.LoopBreak.Unresolved, l.LoopBreak.Resolved)
	w.heading("Skill gaps:", counts)
	if len(l.Recent) == 0 {
		w.noneYet(l.Unreadable)
		return
	}
	for _, g := range l.Recent {
		mark := orientPaint(Yellow, Pad("open", 10))
		switch {
		case g.Resolved:
			mark = orientPaint(Green, Pad("resolved", 10))
		case g.LoopBreak:
			mark = orientPaint(Red, "loop break")
		}
		seen := ""
		switch {
		case g.LastSeenCycle != nil:
			seen = fmt.Sprintf(", last cycle %d", *g.LastSeenCycle)
		case g.LastSeen != nil:
			seen = ", last " + orientSafe(*g.LastSeen)
		}
		w.line(2, mark, orientPlain(" "+orientSafe(g.Name)+fmt.Sprintf("  ×%d", g.Frequency)+seen), orientPaint(Dim, "  "+orientSafe(g.Detail)))
	}
	if more := l.Unresolved + l.Resolved + l.LoopBreak.Unresolved + l.LoopBreak.Resolved - len(l.Recent); more > 0 {
		w.line(2, orientPaint(Dim, fmt.Sprintf("… and %d more", more)))
	}
}

func orientReflections(w *orientWriter, l OrientReflList, lessons OrientLessons) {
	v := l.Verdicts
	counts := fmt.Sprintf("%d kept: %d hit, %d miss, %d too early, %d unclear", l.Count, v.Hit, v.Miss, v.TooEarly, v.Unclear)
	if v.Other > 0 {
		counts += fmt.Sprintf(", %d other", v.Other)
	}
	w.heading("Reflections:", counts)
	if l.Count == 0 {
		w.noneYet(l.Unreadable)
	}
	for _, r := range l.Recent {
		verdict := orientPlain(orientSafe(r.Verdict))
		switch r.Verdict {
		case "hit":
			verdict = orientPaint(Green, "hit")
		case "miss":
			verdict = orientPaint(Red, "miss")
		case "too_early":
			verdict = orientPaint(Yellow, "too_early")
		}
		w.line(2, orientPlain(fmt.Sprintf("#%d  ", r.Cycle)), verdict, orientPlain("  "+orientSafe(r.Domain)+" "+orientSafe(r.Skill)+" → "+orientSafe(r.Result)),
			orientPaint(Dim, "  lesson "+orientSafe(r.Status)))
		w.line(6, orientPaint(Dim, "critique: "), orientPlain(orientSafe(r.Critique)))
		w.line(6, orientPaint(Dim, "lesson:   "), orientPlain(orientSafe(r.Lesson)))
	}
	if more := l.Count - len(l.Recent); more > 0 {
		w.line(2, orientPaint(Dim, fmt.Sprintf("… and %d older", more)))
	}
	w.heading("Lessons:", fmt.Sprintf("%d applied, %d open", lessons.Applied, lessons.Open))
	if lessons.Other > 0 {
		w.line(2, orientPlain(fmt.Sprintf("%d with another status", lessons.Other)))
	}
}

func orientChain(w *orientWriter, c OrientChain) {
	if c.Window == 0 {
		w.heading("Chains:", "")
		w.noneYet(c.Unreadable)
		return
	}
	w.heading("Chains:", fmt.Sprintf("%d of the last %s ran a chain", c.CyclesWithChain, orientPlural(c.Window, "decision", "decisions")))
	for _, e := range c.Recent {
		skills := make([]string, len(e.Skills))
		for i, s := range e.Skills {
			skills[i] = orientSafe(s)
		}
		w.line(2, orientPlain(fmt.Sprintf("#%d  %s: %s", e.Cycle, orientSafe(e.Domain), strings.Join(skills, " → "))))
	}
}
