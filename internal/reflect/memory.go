package reflect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Memory-cascade constants (6-C4) that the config does not expose.
const (
	// PrincipleConfidence is a new principle's confidence.
	PrincipleConfidence = 0.3
	// CandidateConfidence is a cluster candidate's confidence: half a
	// principle's, because first-words clustering is weaker evidence than
	// recurrence at the similarity threshold.
	CandidateConfidence = 0.15
	// PrincipleConfirmStep is what one confirming episode adds (cap 1.0).
	PrincipleConfirmStep = 0.1
	// PrincipleDecayStep is what an entry not confirmed in the last
	// PrincipleDecayWindow episodes loses per call, that is per cycle.
	PrincipleDecayStep = 0.05
	// PrincipleDecayWindow is how many of the most recent episodes count
	// as recent evidence.
	PrincipleDecayWindow = 10
	// PrincipleFloor removes an entry whose confidence falls below it.
	PrincipleFloor = 0.1
	// PrinciplesCap bounds principles.json; the lowest confidence goes.
	PrinciplesCap = 50
	// SourceEpisodesCap bounds an entry's source_episodes, the newest
	// kept: a year of weekly episodes. occurrences keeps counting every
	// confirmation, and an older episode cannot confirm the entry again
	// because it is not newer than the last confirmed one.
	SourceEpisodesCap = 52
	// PrincipleLessonsCap bounds the lessons principle extraction compares,
	// the newest kept: lessons are grouped pairwise, and an episodes file
	// holding far more than a year of weekly lessons (a damaged or planted
	// one) must not make a cycle run for hours.
	PrincipleLessonsCap = 2000
	// ClusterMinLessons is how many lessons the episodes must hold before
	// the cluster fallback proposes candidates.
	ClusterMinLessons = 10
	// ClusterTop is how many clusters the fallback looks at.
	ClusterTop = 3
	// ContrarianWindow is how many recent decisions the contrarian check
	// looks at.
	ContrarianWindow = 7
	// ContrarianWins is how many of them one domain must have won for its
	// dominance to be challenged.
	ContrarianWins = 5
	// ContrarianDelta is the challenger's score boost.
	ContrarianDelta = 1.0
	// ContrarianCycles is for how many scored cycles the boost lasts.
	ContrarianCycles = 3
)

// Defaults used when the config is absent or holds a zero value, so that a
// partial config never disables the cascade by accident.
const (
	memDefaultRetentionWeeks = 52
	memDefaultInterval       = 10
	memDefaultThreshold      = 0.5
	memDefaultMinOccurrences = 2
)

// memStopWords are dropped before lessons are compared or clustered: they
// carry no meaning of their own and would make unrelated lessons similar.
var memStopWords = map[string]bool{
	"the": true, "a": true, "an": true, "is": true, "for": true, "in": true, "to": true,
	"of": true, "and": true, "was": true, "were": true, "under": true,
}

// CycleRecord is one cycle as the episode summary needs it: built from the
// outcomes and the decision log (see CycleRecords) or from cycle_log.jsonl.
type CycleRecord struct {
	Cycle      int
	Timestamp  time.Time
	Domain     string
	Score      float64
	ResultType string
	PRNumber   *int
	// Skip marks a cycle that selected nothing to run; it counts as a cycle
	// of the week but not as a selection.
	Skip   bool
	Reason string
}

// CycleRecords merges the outcomes with the decision log, one record per
// cycle in cycle order. The outcome's result_type wins because Orient
// back-annotates outcomes.json (a PR merged later); the decision log adds
// the score and the skip cycles, which have no outcome.
func CycleRecords(log []state.DecisionEntry, outcomes []state.Outcome) []CycleRecord {
	byCycle := map[int]*CycleRecord{}
	var order []int
	get := func(c int) *CycleRecord {
		if r, ok := byCycle[c]; ok {
			return r
		}
		r := &CycleRecord{Cycle: c}
		byCycle[c] = r
		order = append(order, c)
		return r
	}
	for _, e := range log {
		r := get(e.Cycle)
		if t, ok := state.ParseTime(e.Timestamp); ok {
			r.Timestamp = t
		}
		r.Domain = e.SelectedDomain
		if sc := e.DecidedScore(); sc != nil {
			r.Score = *sc
		}
		r.ResultType = e.ResultType
		r.PRNumber = memClonePtr(e.PRNumber)
		r.Skip = e.IsSkip() || e.SelectedDomain == ""
		r.Reason = e.Reason
	}
	for _, o := range outcomes {
		r := get(o.CycleID)
		if r.Timestamp.IsZero() {
			if t, ok := state.ParseTime(o.Timestamp); ok {
				r.Timestamp = t
			}
		}
		if o.Domain != "" {
			r.Domain = o.Domain
			r.Skip = false
		}
		if o.ResultType != "" {
			r.ResultType = o.ResultType
		}
		if o.PRNumber != nil {
			r.PRNumber = memClonePtr(o.PRNumber)
		}
		if o.Score != nil && r.Score == 0 {
			r.Score = *o.Score
		}
	}
	sort.Ints(order)
	out := make([]CycleRecord, 0, len(order))
	for _, c := range order {
		out = append(out, *byCycle[c])
	}
	return out
}

// EpisodeInput is what the weekly episode (6-C4, tier-2 memory) reads.
type EpisodeInput struct {
	Now time.Time
	// Config supplies memory.episode_retention_weeks; nil means defaults.
	Config   *config.Config
	Episodes state.Episodes
	// Log is the cycle history to summarise; records outside the week are
	// ignored, so the caller may pass everything it has.
	Log []CycleRecord
	// Reflections supply the week's lessons (5-F).
	Reflections      []state.Reflection
	Confidence       map[string]float64
	GapsFound        int
	ContrarianChecks int
}

// WriteEpisode writes the episode of the most recently completed ISO week
// (Monday to Sunday, UTC) when that week has cycles and no episode with its
// id exists yet; it returns the episodes and the one written (nil when
// none). An entry of the original project's older shape, with a week_year
// ("2026-W15") and no id, stands for its week too (state.Episode.Week). Because the id is derived from the week alone, any number of calls
// during the following week writes it exactly once. A week in which the
// engine never ran afterwards is never summarised: only the most recently
// completed week is considered.
func WriteEpisode(in EpisodeInput) (state.Episodes, *state.Episode) {
	out := memCloneEpisodes(in.Episodes)
	start, end := memPreviousWeek(in.Now)
	id := memEpisodeID(start)
	for _, ep := range out.Episodes {
		if ep.Week() == id {
			return out, nil
		}
	}
	week := memWeekRecords(in.Log, start, end)
	if len(week) == 0 {
		return out, nil
	}
	ep := memBuildEpisode(id, start, week, in)
	out.Episodes = append(out.Episodes, ep)
	out.Episodes = memEvictEpisodes(out.Episodes, memRetention(in.Config), len(out.Episodes)-1)
	written := memCloneEpisode(ep)
	return out, &written
}

// EpisodeDue reports whether WriteEpisode could write an episode at now:
// none is kept yet for the ISO week before now's. Once a week's episode
// is written it is false for the rest of the week, so a cycle can skip
// gathering the week's records (every outcome and decision) that
// WriteEpisode would only look at to find that out.
func EpisodeDue(eps state.Episodes, now time.Time) bool {
	start, _ := memPreviousWeek(now)
	id := memEpisodeID(start)
	for _, ep := range eps.Episodes {
		if ep.Week() == id {
			return false
		}
	}
	return true
}

// memPreviousWeek is [Monday 00:00, next Monday 00:00) of the ISO week
// before the one containing now, in UTC.
func memPreviousWeek(now time.Time) (time.Time, time.Time) {
	u := now.UTC()
	day := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	// time.Weekday counts from Sunday; ISO weeks start on Monday.
	sinceMonday := (int(day.Weekday()) + 6) % 7
	thisMonday := day.AddDate(0, 0, -sinceMonday)
	return thisMonday.AddDate(0, 0, -7), thisMonday
}

// memEpisodeID names a week by its ISO year, which differs from the
// calendar year around New Year (2026-12-28 is in 2026-W53, 2027-01-03 too).
func memEpisodeID(monday time.Time) string {
	y, w := monday.ISOWeek()
	return fmt.Sprintf("EP-%04d-W%02d", y, w)
}

// memWeekRecords are the records timestamped inside [start, end), one per
// cycle (the last record given for a cycle wins), in cycle order.
func memWeekRecords(log []CycleRecord, start, end time.Time) []CycleRecord {
	idx := map[int]int{}
	var out []CycleRecord
	for _, r := range log {
		t := r.Timestamp.UTC()
		if r.Timestamp.IsZero() || t.Before(start) || !t.Before(end) {
			continue
		}
		r.PRNumber = memClonePtr(r.PRNumber)
		if i, ok := idx[r.Cycle]; ok {
			out[i] = r
			continue
		}
		idx[r.Cycle] = len(out)
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cycle < out[j].Cycle })
	return out
}

func memBuildEpisode(id string, start time.Time, week []CycleRecord, in EpisodeInput) state.Episode {
	end := start.AddDate(0, 0, 7)
	ep := state.Episode{
		ID:                 id,
		WeekStart:          start.Format("2006-01-02"),
		WeekEnd:            start.AddDate(0, 0, 6).Format("2006-01-02"),
		CycleRange:         []int{week[0].Cycle, week[len(week)-1].Cycle},
		TotalCycles:        len(week),
		DomainsSelected:    map[string]int{},
		KeyDecisions:       []string{},
		Lessons:            []string{},
		ConfidenceSnapshot: map[string]float64{},
		SkillGapsFound:     in.GapsFound,
		ContrarianChecks:   in.ContrarianChecks,
		PatternsDetected:   []string{},
		CreatedAt:          state.FormatTime(in.Now),
	}
	for k, v := range in.Confidence {
		ep.ConfidenceSnapshot[k] = v
	}
	// firstSeen breaks ties between equally selected domains by which was
	// selected first in the week, so the summary does not depend on map order.
	firstSeen := map[string]int{}
	var selected []CycleRecord
	for _, r := range week {
		switch r.ResultType {
		case "pr_created":
			ep.PRsCreated++
		case "pr_merged", "pr_merged_held":
			ep.PRsMerged++
		case "pr_rejected":
			ep.PRsRejected++
		}
		if r.Skip || r.Domain == "" {
			continue
		}
		selected = append(selected, r)
		if _, ok := firstSeen[r.Domain]; !ok {
			firstSeen[r.Domain] = len(firstSeen)
		}
		ep.DomainsSelected[r.Domain]++
	}
	top, topN := "", 0
	for d, n := range ep.DomainsSelected {
		if n > topN || (n == topN && firstSeen[d] < firstSeen[top]) {
			top, topN = d, n
		}
	}

	byScore := append([]CycleRecord(nil), selected...)
	sort.SliceStable(byScore, func(i, j int) bool {
		if byScore[i].Score != byScore[j].Score {
			return byScore[i].Score > byScore[j].Score
		}
		return byScore[i].Cycle < byScore[j].Cycle
	})
	for _, r := range byScore[:min(3, len(byScore))] {
		ep.KeyDecisions = append(ep.KeyDecisions, fmt.Sprintf("cycle #%d: %s (score %s)", r.Cycle, r.Domain, memNum(r.Score)))
	}

	seen := map[string]bool{}
	for _, rf := range in.Reflections {
		t, ok := state.ParseTime(rf.Timestamp)
		lesson := strings.TrimSpace(rf.Lesson)
		if !ok || lesson == "" || t.Before(start) || !t.Before(end) || seen[lesson] {
			continue
		}
		seen[lesson] = true
		ep.Lessons = append(ep.Lessons, lesson)
	}

	// A single domain holding 60 % of the week's selections is a monopoly
	// the next weeks should read about.
	if len(selected) > 0 && float64(topN) >= 0.6*float64(len(selected)) {
		ep.PatternsDetected = append(ep.PatternsDetected, top+" monopoly")
	}
	// Skip cycles ran nothing, so they neither extend nor break a streak
	// of cycles that produced nothing (as with saturation, 2-A2).
	run, longest := 0, 0
	for _, r := range selected {
		if r.ResultType == "futile" {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest >= 3 {
		ep.PatternsDetected = append(ep.PatternsDetected, "futile streak")
	}

	ep.Summary = memSummary(ep, top, topN, len(selected))
	return ep
}

// memSummary is the episode's one sentence, built from its facts only.
func memSummary(ep state.Episode, top string, topN, selections int) string {
	var b strings.Builder
	if ep.TotalCycles == 1 {
		fmt.Fprintf(&b, "%s: 1 cycle (#%d)", ep.ID, ep.CycleRange[0])
	} else {
		fmt.Fprintf(&b, "%s: %d cycles (#%d-#%d)", ep.ID, ep.TotalCycles, ep.CycleRange[0], ep.CycleRange[1])
	}
	if selections == 0 {
		b.WriteString(", all skipped")
	} else {
		fmt.Fprintf(&b, ", %s selected most (%d of %d selections, %d domains)", top, topN, selections, len(ep.DomainsSelected))
	}
	fmt.Fprintf(&b, "; PRs %d created, %d merged, %d rejected.", ep.PRsCreated, ep.PRsMerged, ep.PRsRejected)
	return b.String()
}

// memEvictEpisodes keeps the newest keep episodes by their week's start
// (state.Episode.Start; ties: file order), never evicting the one just written, and preserves file order.
func memEvictEpisodes(eps []state.Episode, keep, protect int) []state.Episode {
	excess := len(eps) - keep
	if excess <= 0 {
		return eps
	}
	idx := make([]int, 0, len(eps))
	for i := range eps {
		if i != protect {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return eps[idx[a]].Start() < eps[idx[b]].Start() })
	drop := map[int]bool{}
	for _, i := range idx[:min(excess, len(idx))] {
		drop[i] = true
	}
	out := make([]state.Episode, 0, len(eps)-len(drop))
	for i, ep := range eps {
		if !drop[i] {
			out = append(out, ep)
		}
	}
	return out
}

func memRetention(cfg *config.Config) int {
	if cfg == nil || cfg.Memory.EpisodeRetentionWeeks <= 0 {
		return memDefaultRetentionWeeks
	}
	return cfg.Memory.EpisodeRetentionWeeks
}

// PrincipleInput is what principle extraction (6-C4, tier-3 memory) reads
// beyond the episodes and principles.
type PrincipleInput struct {
	Now time.Time
	// Config supplies principle_similarity_threshold and
	// principle_min_occurrences; nil or zero values mean 0.5 and 2.
	Config *config.Config
}

// PrincipleResult lists, by principle id, what ExtractPrinciples did.
type PrincipleResult struct {
	Created    []string // new principles from recurring lessons
	Promoted   []string // candidates a new episode confirmed into principles
	Confirmed  []string // entries a new episode confirmed (once per entry)
	Candidates []string // candidates added by the cluster fallback
	Decayed    []string // entries not confirmed in the last 10 episodes
	Removed    []string // entries decayed below the floor
	Dropped    []string // entries cut by the cap of 50
	Trimmed    []string // entries whose source_episodes were cut to SourceEpisodesCap
	// Lessons is the number of lessons the episodes hold.
	Lessons int
}

// memLesson is one lesson occurrence: each episode contributes a lesson
// text once.
type memLesson struct {
	ep     int // chronological episode index
	text   string
	tid    int      // the text's memTokenCache number
	tokens []string // significant tokens, in order
	set    map[string]bool
}

// ExtractPrinciples runs the principle half of the cascade:
//
//  1. An existing principle or candidate whose text matches a lesson (Jaccard
//     ≥ threshold) of an episode newer than its last_confirmed_episode and
//     not among its source_episodes is confirmed: +0.1 (cap 1.0), once per
//     such episode, so the same episode never confirms twice. A confirmed
//     candidate has now recurred and becomes a principle.
//  2. The remaining lessons are grouped by similarity; a group found in
//     ≥ principle_min_occurrences distinct episodes becomes a principle
//     (0.3) worded as its most recent lesson.
//  3. When neither created nor promoted a principle and the episodes hold
//     ≥ 10 lessons, lessons are clustered by their first 3 significant
//     tokens; each of the 3 largest clusters (ties: first appearance) that
//     has at least two lessons proposes its most frequent lesson as a
//     candidate (0.15), unless an entry already says the same.
//  4. An entry last confirmed outside the last 10 episodes loses 0.05 and
//     is removed below 0.1; hand-written entries without episode
//     provenance never decay.
//  5. At most 50 entries are kept, the lowest confidence going first.
//
// An entry's source_episodes keeps its newest SourceEpisodesCap ids (in the
// order they were added); occurrences is not changed by the cut. Only the
// newest PrincipleLessonsCap lessons are read, and a file holding more than
// four times the cap of entries is cut to that (as in 5) first, so a huge
// episodes or principles file cannot make the pairwise comparisons run for
// hours.
//
// An entry is only born from evidence inside the last 10 episodes, since
// older evidence would decay it at once and recreate it the next cycle.
func ExtractPrinciples(eps state.Episodes, ps state.Principles, in PrincipleInput) (state.Principles, PrincipleResult) {
	out := memClonePrinciples(ps)
	var res PrincipleResult
	thr, minOcc := memThreshold(in.Config), memMinOccurrences(in.Config)
	now := state.FormatTime(in.Now)

	// Every cycle runs this over every episode and principle, and most
	// cycles change nothing: what it derives more than once from the same
	// value (an episode's week, a text's tokens, an entry's provenance) is
	// derived once, and what only a new entry needs is derived when one is
	// made.
	chron, weeks := memChronological(eps.Episodes)
	toks := memTokenCache{}
	lessons := memLessons(chron, toks)
	if n := len(lessons); n > PrincipleLessonsCap {
		lessons = lessons[n-PrincipleLessonsCap:]
	}
	// Likewise a principles file far over the cap is cut to four times the
	// cap before each entry is compared with every lesson, in the order
	// step 5 drops entries.
	if len(out.Principles) > 4*PrinciplesCap {
		res.Dropped = append(res.Dropped, memCapPrinciples(&out, 4*PrinciplesCap)...)
	}
	for _, ep := range chron {
		for _, l := range ep.Lessons {
			if strings.TrimSpace(l) != "" {
				res.Lessons++
			}
		}
	}
	recent := map[string]bool{}
	for _, w := range weeks[max(0, len(weeks)-PrincipleDecayWindow):] {
		recent[w] = true
	}
	// The ids and the file's shape are those of the entries as they are
	// now (steps 1 to 3 change no id and read no shape of their own).
	nextID := memLazyNextID(out.Principles)
	shape := memLazyShape(ps.Principles)

	// 1. Confirmation. covered marks lessons an entry already stands for,
	// so they do not also seed a duplicate principle. prov keeps what each
	// entry's provenance says, for the decay of an entry left unchanged.
	covered := make([]bool, len(lessons))
	prov := make([]memProvenance, len(out.Principles))
	for pi := range out.Principles {
		p := &out.Principles[pi]
		_, pset := toks.get(p.Text)
		// A lesson recurs word for word week after week: each text is
		// compared once.
		similar := make([]int8, len(toks)) // by tid: 0 unknown, 1 similar, -1 not
		var matching []int                 // chronological episode indexes
		for li, l := range lessons {
			if similar[l.tid] == 0 {
				similar[l.tid] = -1
				if memJaccard(l.set, pset) >= thr {
					similar[l.tid] = 1
				}
			}
			if similar[l.tid] < 0 {
				continue
			}
			covered[li] = true
			if len(matching) == 0 || matching[len(matching)-1] != l.ep {
				matching = append(matching, l.ep)
			}
		}
		pv := memProvenanceOf(*p)
		prov[pi] = pv
		last := pv.last
		sources := memSourcesFrom(*p, pv.weeks)
		// The original project dates a confirmation (last_confirmed,
		// last_validated) instead of naming the episode: a week that had
		// ended by then was already counted.
		seenAt, dated := pv.at, pv.dated
		var fresh []int
		for _, ei := range matching {
			id := weeks[ei]
			if id == "" || sources[id] || (last != "" && id <= last) || (dated && memWeekEndedBy(chron[ei], seenAt)) {
				continue
			}
			sources[id] = true
			fresh = append(fresh, ei)
		}
		// Without any provenance every matching episode would look new;
		// only the newest one counts, once.
		if last == "" && !dated && len(fresh) > 1 {
			fresh = fresh[len(fresh)-1:]
		}
		if len(fresh) == 0 {
			continue
		}
		prov[pi].changed = true
		for _, ei := range fresh {
			p.Confidence = memRound(math.Min(1, p.Confidence+PrincipleConfirmStep))
			p.RecordConfirmation(weeks[ei], in.Now)
		}
		res.Confirmed = append(res.Confirmed, memLabel(*p))
		if p.Kind == "candidate" {
			p.Kind = ""
			p.Confidence = math.Max(p.Confidence, PrincipleConfidence)
			res.Promoted = append(res.Promoted, memLabel(*p))
		}
	}

	// 2. New principles from the lessons no entry stands for yet. Each
	// group is anchored on its first lesson so every member is similar to
	// that one, which keeps the grouping independent of chaining.
	type group struct {
		seed    map[string]bool
		members []int
	}
	var groups []*group
	for li, l := range lessons {
		if covered[li] || len(l.set) == 0 {
			continue
		}
		var g *group
		for _, cand := range groups {
			if memJaccard(l.set, cand.seed) >= thr {
				g = cand
				break
			}
		}
		if g == nil {
			g = &group{seed: l.set}
			groups = append(groups, g)
		}
		g.members = append(g.members, li)
	}
	for _, g := range groups {
		var epIDs []string
		for _, li := range g.members {
			id := weeks[lessons[li].ep]
			if !memContains(epIDs, id) {
				epIDs = append(epIDs, id)
			}
		}
		newest := epIDs[len(epIDs)-1]
		if len(epIDs) < minOcc || !recent[newest] {
			continue
		}
		text := lessons[g.members[len(g.members)-1]].text
		p := shape().entry(state.Principle{ID: nextID(), Text: text, Confidence: PrincipleConfidence,
			SourceEpisodes: epIDs, Occurrences: len(epIDs), CreatedAt: now, LastConfirmedAt: now, LastConfirmedEp: newest}, 0)
		out.Principles = append(out.Principles, p)
		res.Created = append(res.Created, memLabel(p))
	}

	// 3. Cluster fallback.
	if len(res.Created) == 0 && len(res.Promoted) == 0 && res.Lessons >= ClusterMinLessons {
		type cluster struct {
			members []int
		}
		var order []string
		clusters := map[string]*cluster{}
		for li, l := range lessons {
			if len(l.tokens) == 0 {
				continue
			}
			key := strings.Join(l.tokens[:min(3, len(l.tokens))], " ")
			c, ok := clusters[key]
			if !ok {
				c = &cluster{}
				clusters[key] = c
				order = append(order, key)
			}
			c.members = append(c.members, li)
		}
		sort.SliceStable(order, func(i, j int) bool { return len(clusters[order[i]].members) > len(clusters[order[j]].members) })
		for _, key := range order[:min(ClusterTop, len(order))] {
			c := clusters[key]
			if len(c.members) < 2 {
				continue
			}
			text := memMostFrequent(lessons, c.members)
			_, tset := toks.get(text)
			exists := false
			for _, p := range out.Principles {
				if p.Text == text {
					exists = true
					break
				}
				if _, pset := toks.get(p.Text); memJaccard(tset, pset) >= thr {
					exists = true
					break
				}
			}
			var epIDs []string
			for _, li := range c.members {
				id := weeks[lessons[li].ep]
				if !memContains(epIDs, id) {
					epIDs = append(epIDs, id)
				}
			}
			newest := epIDs[len(epIDs)-1]
			if exists || !recent[newest] {
				continue
			}
			p := shape().entry(state.Principle{ID: nextID(), Text: text, Kind: "candidate",
				Confidence: CandidateConfidence, SourceEpisodes: epIDs, Occurrences: len(c.members), CreatedAt: now,
				LastConfirmedAt: now, LastConfirmedEp: newest}, len(c.members))
			out.Principles = append(out.Principles, p)
			res.Candidates = append(res.Candidates, memLabel(p))
		}
	}

	// Provenance is bounded: a principle confirmed every week for years
	// must not grow its entry forever. Entries loaded with a longer list
	// are trimmed too.
	for i := range out.Principles {
		p := &out.Principles[i]
		if n := len(p.SourceEpisodes); n > SourceEpisodesCap {
			if p.LastConfirmedEp == "" {
				// The newest source is what memLastConfirmed falls back on.
				p.LastConfirmedEp = memLastConfirmed(*p)
			}
			p.SourceEpisodes = append([]string(nil), p.SourceEpisodes[n-SourceEpisodesCap:]...)
			res.Trimmed = append(res.Trimmed, memLabel(*p))
			if i < len(prov) {
				prov[i].changed = true
			}
		}
	}

	// 4. Decay.
	win := memWindow{recent: recent}
	if len(chron) > 0 {
		win.episodes = true
		win.start, win.dated = state.ParseTime(chron[max(0, len(chron)-PrincipleDecayWindow)].Start())
	}
	kept := out.Principles[:0:0]
	for i, p := range out.Principles {
		pv := memProvenance{changed: true}
		if i < len(prov) {
			pv = prov[i]
		}
		if pv.changed {
			pv = memProvenanceOf(p)
		}
		if win.stale(p, pv) {
			p.Confidence = memRound(p.Confidence - PrincipleDecayStep)
			res.Decayed = append(res.Decayed, memLabel(p))
			if p.Confidence < PrincipleFloor {
				res.Removed = append(res.Removed, memLabel(p))
				continue
			}
		}
		kept = append(kept, p)
	}
	out.Principles = kept

	// 5. Cap.
	res.Dropped = append(res.Dropped, memCapPrinciples(&out, PrinciplesCap)...)
	return out, res
}

// memShape is the shape a principles file's entries are written in, which
// a new entry follows, as a confirmation writes an entry's own fields: a
// file the original OODA loop keeps gets entries its readers know, and no
// key of this program's (id, occurrences, last_confirmed_at,
// last_confirmed_episode) it has never had.
type memShape struct {
	kind memShapeKind
	// weekYear spells weeks as the original's week_year ("2026-W14")
	// rather than as an episode id ("EP-2026-W14").
	weekYear bool
}

type memShapeKind int

const (
	// memOwnShape is this program's {id: "P-1", text, kind, confidence,
	// source_episodes, occurrences, created_at, last_confirmed_at,
	// last_confirmed_episode}.
	memOwnShape memShapeKind = iota
	// memEvolveShape is evolve's {text, confidence, source_episodes:
	// [week_year], created_at, last_confirmed, kind, cluster_size}.
	memEvolveShape
	// memDesignShape is the state design's {id: "P001", principle, source,
	// source_ids, confidence, created_at, last_validated,
	// validation_count, invalidation_count, active}.
	memDesignShape
)

// memFileShape is the shape of the file's newest entry (the last one, as
// the file is appended to), by the keys it has as read: the state
// design's principle names its text, and only this program's shape always
// has an id beside its text. A file without entries is this program's.
// Weeks are spelled as the newest week the entry's sources name, else as
// that shape's documentation spells them.
func memFileShape(ps []state.Principle) memShape {
	if len(ps) == 0 {
		return memShape{}
	}
	b, err := json.Marshal(ps[len(ps)-1])
	var keys map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &keys) != nil {
		return memShape{}
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	var sh memShape
	var list string
	switch {
	case has("principle") && !has("text"):
		sh, list = memShape{kind: memDesignShape}, "source_ids"
	case !has("id"):
		sh, list = memShape{kind: memEvolveShape, weekYear: true}, "source_episodes"
	default:
		return memShape{}
	}
	var sources []string
	if json.Unmarshal(keys[list], &sources) == nil {
		for i := len(sources) - 1; i >= 0; i-- {
			if _, ok := state.CanonicalWeek(sources[i]); ok {
				sh.weekYear = !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(sources[i])), "EP-")
				break
			}
		}
	}
	return sh
}

// entry is the new entry p (this program's fields, sources as canonical
// episode ids) in the shape sh; cluster is a candidate's cluster size,
// which evolve's shape records. In the original's shapes the sources are
// cut to their newest SourceEpisodesCap here, since the later cut would
// add last_confirmed_episode; the entry keeps no occurrences, since such
// an entry counts its evidence by its weeks.
func (sh memShape) entry(p state.Principle, cluster int) state.Principle {
	if sh.kind == memOwnShape {
		return p
	}
	weeks := p.SourceEpisodes[max(0, len(p.SourceEpisodes)-SourceEpisodesCap):]
	spelled := make([]string, 0, len(weeks))
	for _, w := range weeks {
		if sh.weekYear {
			w = strings.TrimPrefix(w, "EP-")
		}
		spelled = append(spelled, w)
	}
	var v any
	switch sh.kind {
	case memEvolveShape:
		e := struct {
			Text           string   `json:"text"`
			Confidence     float64  `json:"confidence"`
			SourceEpisodes []string `json:"source_episodes"`
			CreatedAt      string   `json:"created_at"`
			LastConfirmed  string   `json:"last_confirmed"`
			Kind           string   `json:"kind,omitempty"`
			ClusterSize    int      `json:"cluster_size,omitempty"`
		}{p.Text, p.Confidence, spelled, p.CreatedAt, p.LastConfirmedAt, p.Kind, 0}
		if p.Kind == "candidate" {
			e.ClusterSize = cluster
		}
		v = e
	default:
		v = struct {
			ID                string   `json:"id"`
			Principle         string   `json:"principle"`
			Source            string   `json:"source"`
			SourceIDs         []string `json:"source_ids"`
			Confidence        float64  `json:"confidence"`
			CreatedAt         string   `json:"created_at"`
			LastValidated     string   `json:"last_validated"`
			ValidationCount   int      `json:"validation_count"`
			InvalidationCount int      `json:"invalidation_count"`
			Active            bool     `json:"active"`
			Kind              string   `json:"kind,omitempty"`
		}{p.ID, p.Text, "episode", spelled, p.Confidence, p.CreatedAt, p.LastConfirmedAt, 0, 0, true, p.Kind}
	}
	// Decoded as the file would hold it, the entry is written back in
	// exactly that shape until a later change (see state.Principle).
	// Text is written as is (no \u003c for "<"), as every state file is.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var out state.Principle
	if enc.Encode(v) != nil || json.Unmarshal(buf.Bytes(), &out) != nil {
		return p
	}
	return out
}

// memCapPrinciples keeps at most keep entries and returns the ids dropped:
// lowest confidence first; among equals candidates before principles, then
// the newest entry, so established principles stay.
func memCapPrinciples(out *state.Principles, keep int) []string {
	excess := len(out.Principles) - keep
	if excess <= 0 {
		return nil
	}
	idx := make([]int, len(out.Principles))
	for i := range idx {
		idx[i] = i
	}
	all := out.Principles
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := all[idx[a]], all[idx[b]]
		if pa.Confidence != pb.Confidence {
			return pa.Confidence < pb.Confidence
		}
		if (pa.Kind == "candidate") != (pb.Kind == "candidate") {
			return pa.Kind == "candidate"
		}
		return idx[a] > idx[b]
	})
	drop := map[int]bool{}
	var dropped []string
	for _, i := range idx[:excess] {
		drop[i] = true
		dropped = append(dropped, memLabel(all[i]))
	}
	kept := make([]state.Principle, 0, keep)
	for i, p := range all {
		if !drop[i] {
			kept = append(kept, p)
		}
	}
	out.Principles = kept
	return dropped
}

// memChronological orders episodes by their week's start (ties: file
// order), which is what "most recent" means for lessons and the decay
// window. An episode that names no week cannot be a principle's source
// and is left out. weeks holds each one's week (state.Episode.Week).
func memChronological(eps []state.Episode) (chron []state.Episode, weeks []string) {
	type dated struct {
		i           int
		week, start string
	}
	keep := make([]dated, 0, len(eps))
	for i, ep := range eps {
		if w := ep.Week(); w != "" {
			keep = append(keep, dated{i, w, ep.Start()})
		}
	}
	sort.SliceStable(keep, func(i, j int) bool { return keep[i].start < keep[j].start })
	chron = make([]state.Episode, 0, len(keep))
	weeks = make([]string, 0, len(keep))
	for _, k := range keep {
		chron = append(chron, eps[k.i])
		weeks = append(weeks, k.week)
	}
	return chron, weeks
}

// memWindow is the decay window: the PrincipleDecayWindow most recent
// episodes, and the day the oldest of them starts.
type memWindow struct {
	recent   map[string]bool
	episodes bool // any episode at all
	start    time.Time
	dated    bool // start is known
}

// stale says whether the entry was not confirmed in the window, and so
// decays; pv is its provenance (memProvenanceOf). Evidence is the newest
// week among its sources or, in the original project's shapes, the time of
// its last confirmation (a manual entry's creation when it has none): a
// confirmation on or after the window's first day is recent. A manual
// entry without any evidence is stale, as in the original; any other entry
// without evidence never decays, since there is no trail to fade. Without
// any episode nothing decays: a lost or reset episodes file must not erase
// the principles.
func (w memWindow) stale(p state.Principle, pv memProvenance) bool {
	if !w.episodes {
		return false
	}
	last := pv.last
	if last != "" && w.recent[last] {
		return false
	}
	at, dated := pv.at, pv.dated
	if !dated && p.Manual() {
		at, dated = state.ParseTime(p.CreatedAt)
	}
	if dated && (!w.dated || !at.Before(w.start)) {
		return false
	}
	return last != "" || dated || p.Manual()
}

// memProvenance is what an entry's fields say of its evidence: its weeks
// (state.Principle.WeekSources), the newest episode that supports it
// (memLastConfirmed) and its last dated confirmation
// (state.Principle.ConfirmedAt). changed marks an entry changed since.
type memProvenance struct {
	weeks   []string
	last    string
	at      time.Time
	dated   bool
	changed bool
}

func memProvenanceOf(p state.Principle) memProvenance {
	pv := memProvenance{weeks: p.WeekSources()}
	pv.last = memLastConfirmedFrom(p, pv.weeks)
	pv.at, pv.dated = p.ConfirmedAt()
	return pv
}

// memWeekEndedBy says whether ep's week was over at t.
func memWeekEndedBy(ep state.Episode, t time.Time) bool {
	start, ok := state.ParseTime(ep.Start())
	return ok && !start.AddDate(0, 0, 7).After(t)
}

// memSourcesFrom are the episodes an entry already counts, by canonical
// id (weeks, its state.Principle.WeekSources) and as written.
func memSourcesFrom(p state.Principle, weeks []string) map[string]bool {
	out := memSet(weeks)
	for _, s := range p.SourceEpisodes {
		out[s] = true
	}
	if p.LastConfirmedEp != "" {
		out[p.LastConfirmedEp] = true
	}
	return out
}

// memLabel names an entry in a PrincipleResult: its id, or for an entry of
// the original project's shape that has none, the start of its text.
func memLabel(p state.Principle) string {
	if p.ID != "" {
		return p.ID
	}
	t := []rune(p.Text)
	if len(t) > 40 {
		return strconv.Quote(string(t[:40]) + "…")
	}
	return strconv.Quote(string(t))
}

// memLessons lists each episode's distinct lessons in chronological order.
func memLessons(chron []state.Episode, toks memTokenCache) []memLesson {
	var out []memLesson
	for ei, ep := range chron {
		first := len(out)
		// An episode holds a handful of lessons, compared with one
		// another; one holding more is looked up through a set, so a
		// planted file cannot make this quadratic.
		var seen map[string]bool
		if len(ep.Lessons) > 16 {
			seen = map[string]bool{}
		}
		for _, l := range ep.Lessons {
			l = strings.TrimSpace(l)
			if l == "" {
				continue
			}
			if seen != nil {
				if seen[l] {
					continue
				}
				seen[l] = true
			} else if slices.ContainsFunc(out[first:], func(x memLesson) bool { return x.text == l }) {
				continue
			}
			tokens, set, tid := toks.get3(l)
			out = append(out, memLesson{ep: ei, text: l, tid: tid, tokens: tokens, set: set})
		}
	}
	return out
}

// memTokenCache holds the tokens of the texts one extraction compares, by
// text, each with a number in the order first seen (tid): the same lesson
// recurs week after week, and each principle is compared with every
// lesson. What it returns is shared and only read.
type memTokenCache map[string]memTokenized

type memTokenized struct {
	tokens []string
	set    map[string]bool
	tid    int
}

func (c memTokenCache) get(text string) ([]string, map[string]bool) {
	tokens, set, _ := c.get3(text)
	return tokens, set
}

func (c memTokenCache) get3(text string) ([]string, map[string]bool, int) {
	t, ok := c[text]
	if !ok {
		toks := memTokens(text)
		t = memTokenized{toks, memSet(toks), len(c)}
		c[text] = t
	}
	return t.tokens, t.set, t.tid
}

// memMostFrequent is the cluster's most frequent lesson text; ties go to
// the most recent, as for a principle's wording.
func memMostFrequent(lessons []memLesson, members []int) string {
	count := map[string]int{}
	for _, li := range members {
		count[lessons[li].text]++
	}
	best, bestN := "", 0
	for _, li := range members {
		t := lessons[li].text
		if count[t] >= bestN {
			best, bestN = t, count[t]
		}
	}
	return best
}

// memLastConfirmed is the newest episode that supports the entry, as a
// canonical id (state.Principle.WeekSources); an entry whose sources name
// no week falls back on the greatest of them as written.
func memLastConfirmed(p state.Principle) string {
	return memLastConfirmedFrom(p, p.WeekSources())
}

// memLastConfirmedFrom is memLastConfirmed of p, whose WeekSources are
// weeks.
func memLastConfirmedFrom(p state.Principle, weeks []string) string {
	last := ""
	for _, s := range weeks {
		if s > last {
			last = s
		}
	}
	if last != "" {
		return last
	}
	last = p.LastConfirmedEp
	for _, s := range p.SourceEpisodes {
		if s > last {
			last = s
		}
	}
	return last
}

// memPrincipleIDPattern matches this program's ids (P-12) and the state
// design's (P012).
var memPrincipleIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^P(-?)([0-9]{1,9})$`) })

// memNextPrincipleID returns a generator of ids continuing the numbering
// after the highest id of either spelling, in the state design's spelling
// (P013) when the file uses only that one, else as P-13, so two entries
// never share a number.
func memNextPrincipleID(ps []state.Principle) func() string {
	n, dash, plain := 0, false, false
	for _, p := range ps {
		m := memPrincipleIDPattern().FindStringSubmatch(p.ID)
		if m == nil {
			continue
		}
		if m[1] == "-" {
			dash = true
		} else {
			plain = true
		}
		if v, err := strconv.Atoi(m[2]); err == nil && v > n {
			n = v
		}
	}
	format := "P-%d"
	if plain && !dash {
		format = "P%03d"
	}
	return func() string {
		n++
		return fmt.Sprintf(format, n)
	}
}

// memLazyNextID is memNextPrincipleID(ps), worked out when the first id
// is asked for: most extractions create no entry.
func memLazyNextID(ps []state.Principle) func() string {
	var next func() string
	return func() string {
		if next == nil {
			next = memNextPrincipleID(ps)
		}
		return next()
	}
}

// memLazyShape is memFileShape(ps), worked out when the first new entry
// needs it.
func memLazyShape(ps []state.Principle) func() memShape {
	var sh *memShape
	return func() memShape {
		if sh == nil {
			v := memFileShape(ps)
			sh = &v
		}
		return *sh
	}
}

func memThreshold(cfg *config.Config) float64 {
	if cfg == nil || cfg.Memory.PrincipleSimilarityThreshold <= 0 {
		return memDefaultThreshold
	}
	return cfg.Memory.PrincipleSimilarityThreshold
}

func memMinOccurrences(cfg *config.Config) int {
	if cfg == nil || cfg.Memory.PrincipleMinOccurrences <= 0 {
		return memDefaultMinOccurrences
	}
	return cfg.Memory.PrincipleMinOccurrences
}

// ContrarianInput is what the contrarian check (6-C4) reads.
type ContrarianInput struct {
	// Cycle is this cycle's number.
	Cycle int
	// Config supplies contrarian_check_interval, the domains in config
	// order and the season mode's disabled domains.
	Config *config.Config
	// Log is the decision log including this cycle's entry.
	Log []state.DecisionEntry
}

// ContrarianCheck runs every contrarian_check_interval cycles: when one
// domain won at least 5 of the last 7 decisions (skips excluded), the
// active domain selected least in the log (ties: config order) gets a
// contrarian intervention of +1.0 for 3 cycles, so the loop tests its
// assumption that the winner deserves every turn. It returns nil and why
// when there is nothing to do.
func ContrarianCheck(in ContrarianInput) (*state.Intervention, string) {
	interval := memDefaultInterval
	if in.Config != nil && in.Config.Memory.ContrarianCheckInterval > 0 {
		interval = in.Config.Memory.ContrarianCheckInterval
	}
	if in.Cycle < 1 || in.Cycle%interval != 0 {
		return nil, fmt.Sprintf("not a contrarian cycle (every %d cycles)", interval)
	}
	window := 0
	wins := map[string]int{}
	selected := map[string]int{}
	dom, domN := "", 0
	for e, inWindow := range ContrarianDecisions(in.Log, in.Cycle) {
		selected[e.SelectedDomain]++
		if !inWindow {
			continue
		}
		window++
		wins[e.SelectedDomain]++
		if n := wins[e.SelectedDomain]; n > domN {
			dom, domN = e.SelectedDomain, n
		}
	}
	if domN < ContrarianWins {
		return nil, fmt.Sprintf("no domain won %d of the last %d decisions (most: %d)", ContrarianWins, ContrarianWindow, domN)
	}
	var disabled []string
	if in.Config != nil {
		if _, mode, on := in.Config.SeasonModes.Active(); on {
			disabled = mode.DisabledDomains
		}
	}
	least, leastN := "", math.MaxInt
	if in.Config != nil {
		for _, d := range in.Config.Domains {
			if d.Name == dom || !d.Scoreable() || !d.IsEnabled() || memContains(disabled, d.Name) {
				continue
			}
			if n := selected[d.Name]; n < leastN {
				least, leastN = d.Name, n
			}
		}
	}
	if least == "" {
		return nil, fmt.Sprintf("%s won %d of the last %d decisions but no other active domain exists", dom, domN, window)
	}
	iv := &state.Intervention{Domain: least, Delta: ContrarianDelta, Type: "contrarian",
		Reason: fmt.Sprintf("Contrarian check at cycle %d: %s won %d of the last %d decisions; %s selected least (%d)",
			in.Cycle, dom, domN, window, least, leastN),
		CreatedAtCycle: in.Cycle, ExpiresAfterCycles: ContrarianCycles}
	// The original's contrarian interventions name the domain they lean
	// against; its readers show it.
	if b, err := json.Marshal(dom); err == nil {
		iv.Extra = state.Extra{"dominant_domain": b}
	}
	return iv, iv.Reason
}

// ContrarianDecisions yields, in order, the entries of log that chose a
// domain by cycle (the contrarian check's decisions, 6-C4), each with
// whether it is among the last ContrarianWindow of them (the check's
// window). It walks the log itself: an entry is a large value, and a list
// of copies cost more than the check.
func ContrarianDecisions(log []state.DecisionEntry, cycle int) iter.Seq2[*state.DecisionEntry, bool] {
	decided := func(e *state.DecisionEntry) bool {
		return !e.IsSkip() && e.SelectedDomain != "" && e.Cycle <= cycle
	}
	return func(yield func(*state.DecisionEntry, bool) bool) {
		n := 0
		for i := range log {
			if decided(&log[i]) {
				n++
			}
		}
		before := max(0, n-ContrarianWindow)
		for i := range log {
			e := &log[i]
			if !decided(e) {
				continue
			}
			inWindow := before == 0
			if !inWindow {
				before--
			}
			if !yield(e, inWindow) {
				return
			}
		}
	}
}

// memTokens are a text's significant tokens in order: lower-cased, split
// at anything that is not a letter or a digit, stop words dropped.
func memTokens(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if !memStopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func memSet(toks []string) map[string]bool {
	set := make(map[string]bool, len(toks))
	for _, t := range toks {
		set[t] = true
	}
	return set
}

// memJaccard is |a ∩ b| / |a ∪ b|; an empty set is similar to nothing, so
// a lesson of stop words alone never becomes a principle.
func memJaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// memRound keeps confidences at 4 places so repeated ±0.05 steps do not
// drift (0.15 − 0.05 must be 0.1, not just below the floor).
func memRound(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// memNum renders a score at up to 3 places without trailing zeros.
func memNum(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
}

func memContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// memCloneSlice copies a slice keeping nil and empty apart, because they
// marshal differently (null and []).
func memCloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func memClonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func memCloneExtra(e state.Extra) state.Extra {
	if e == nil {
		return nil
	}
	out := make(state.Extra, len(e))
	for k, v := range e {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// memCloneEpisode deep-copies an episode so the caller's value is never
// shared with the result.
func memCloneEpisode(ep state.Episode) state.Episode {
	ep.CycleRange = memCloneSlice(ep.CycleRange)
	if ep.DomainsSelected != nil {
		m := make(map[string]int, len(ep.DomainsSelected))
		for k, v := range ep.DomainsSelected {
			m[k] = v
		}
		ep.DomainsSelected = m
	}
	if ep.ConfidenceSnapshot != nil {
		m := make(map[string]float64, len(ep.ConfidenceSnapshot))
		for k, v := range ep.ConfidenceSnapshot {
			m[k] = v
		}
		ep.ConfidenceSnapshot = m
	}
	ep.KeyDecisions = memCloneSlice(ep.KeyDecisions)
	ep.Lessons = memCloneSlice(ep.Lessons)
	ep.PatternsDetected = memCloneSlice(ep.PatternsDetected)
	ep.Extra = memCloneExtra(ep.Extra)
	return ep
}

func memCloneEpisodes(e state.Episodes) state.Episodes {
	out := e
	out.Extra = memCloneExtra(e.Extra)
	out.Episodes = make([]state.Episode, 0, len(e.Episodes)+1)
	for _, ep := range e.Episodes {
		out.Episodes = append(out.Episodes, memCloneEpisode(ep))
	}
	return out
}

func memClonePrinciples(p state.Principles) state.Principles {
	out := p
	out.Extra = memCloneExtra(p.Extra)
	out.Principles = make([]state.Principle, 0, len(p.Principles)+ClusterTop)
	for _, pr := range p.Principles {
		pr.SourceEpisodes = memCloneSlice(pr.SourceEpisodes)
		pr.Extra = memCloneExtra(pr.Extra)
		out.Principles = append(out.Principles, pr)
	}
	return out
}
