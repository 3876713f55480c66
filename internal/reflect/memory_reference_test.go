package reflect

// The plain versions of ExtractPrinciples and UpdateLens: every
// episode's week, every text's tokens and every entry's provenance
// derived at each use, every evidence entry decoded.
// memory_equivalence_test.go holds the real ones to these.

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/ooda-loop/ooda/internal/state"
)

func refExtractPrinciples(eps state.Episodes, ps state.Principles, in PrincipleInput) (state.Principles, PrincipleResult) {
	out := memClonePrinciples(ps)
	var res PrincipleResult
	thr, minOcc := memThreshold(in.Config), memMinOccurrences(in.Config)
	now := state.FormatTime(in.Now)

	chron := refChronological(eps.Episodes)
	lessons := refLessons(chron)
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
	for _, ep := range chron[max(0, len(chron)-PrincipleDecayWindow):] {
		recent[ep.Week()] = true
	}
	nextID := memNextPrincipleID(out.Principles)
	shape := memFileShape(ps.Principles)

	// 1. Confirmation. covered marks lessons an entry already stands for,
	// so they do not also seed a duplicate principle.
	covered := make([]bool, len(lessons))
	for pi := range out.Principles {
		p := &out.Principles[pi]
		pset := memSet(memTokens(p.Text))
		var matching []int // chronological episode indexes
		for li, l := range lessons {
			if memJaccard(l.set, pset) < thr {
				continue
			}
			covered[li] = true
			if len(matching) == 0 || matching[len(matching)-1] != l.ep {
				matching = append(matching, l.ep)
			}
		}
		last := memLastConfirmed(*p)
		sources := refSources(*p)
		// The original project dates a confirmation (last_confirmed,
		// last_validated) instead of naming the episode: a week that had
		// ended by then was already counted.
		seenAt, dated := p.ConfirmedAt()
		var fresh []int
		for _, ei := range matching {
			id := chron[ei].Week()
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
		for _, ei := range fresh {
			p.Confidence = memRound(math.Min(1, p.Confidence+PrincipleConfirmStep))
			p.RecordConfirmation(chron[ei].Week(), in.Now)
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
			id := chron[lessons[li].ep].Week()
			if !memContains(epIDs, id) {
				epIDs = append(epIDs, id)
			}
		}
		newest := epIDs[len(epIDs)-1]
		if len(epIDs) < minOcc || !recent[newest] {
			continue
		}
		text := lessons[g.members[len(g.members)-1]].text
		p := shape.entry(state.Principle{ID: nextID(), Text: text, Confidence: PrincipleConfidence,
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
			tset := memSet(memTokens(text))
			exists := false
			for _, p := range out.Principles {
				if p.Text == text || memJaccard(tset, memSet(memTokens(p.Text))) >= thr {
					exists = true
					break
				}
			}
			var epIDs []string
			for _, li := range c.members {
				id := chron[lessons[li].ep].Week()
				if !memContains(epIDs, id) {
					epIDs = append(epIDs, id)
				}
			}
			newest := epIDs[len(epIDs)-1]
			if exists || !recent[newest] {
				continue
			}
			p := shape.entry(state.Principle{ID: nextID(), Text: text, Kind: "candidate",
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
		}
	}

	// 4. Decay.
	win := memWindow{recent: recent}
	if len(chron) > 0 {
		win.episodes = true
		win.start, win.dated = state.ParseTime(chron[max(0, len(chron)-PrincipleDecayWindow)].Start())
	}
	kept := out.Principles[:0:0]
	for _, p := range out.Principles {
		if win.refStale(p) {
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

func refChronological(eps []state.Episode) []state.Episode {
	out := make([]state.Episode, 0, len(eps))
	for _, ep := range eps {
		if ep.Week() != "" {
			out = append(out, ep)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start() < out[j].Start() })
	return out
}

func (w memWindow) refStale(p state.Principle) bool {
	if !w.episodes {
		return false
	}
	last := memLastConfirmed(p)
	if last != "" && w.recent[last] {
		return false
	}
	at, dated := p.ConfirmedAt()
	if !dated && p.Manual() {
		at, dated = state.ParseTime(p.CreatedAt)
	}
	if dated && (!w.dated || !at.Before(w.start)) {
		return false
	}
	return last != "" || dated || p.Manual()
}

func refSources(p state.Principle) map[string]bool {
	out := memSet(p.WeekSources())
	for _, s := range p.SourceEpisodes {
		out[s] = true
	}
	if p.LastConfirmedEp != "" {
		out[p.LastConfirmedEp] = true
	}
	return out
}

func refLessons(chron []state.Episode) []memLesson {
	var out []memLesson
	for ei, ep := range chron {
		seen := map[string]bool{}
		for _, l := range ep.Lessons {
			l = strings.TrimSpace(l)
			if l == "" || seen[l] {
				continue
			}
			seen[l] = true
			toks := memTokens(l)
			out = append(out, memLesson{ep: ei, text: l, tokens: toks, set: memSet(toks)})
		}
	}
	return out
}

func refUpdateLens(l state.Lens, cl state.LensChangelog, in LensInput) (state.Lens, state.LensChangelog, LensResult) {
	u := &lensUpdate{lens: lensClone(l), domain: in.Domain, cycle: in.Cycle, ts: state.FormatTime(in.Now)}
	if u.domain == "" {
		u.domain = l.Domain
	}
	// A zero lens is a missing one: initialise it the way 1-A does.
	if u.lens.SchemaVersion == "" {
		u.lens.SchemaVersion = "1.0.0"
	}
	if u.lens.Domain == "" {
		u.lens.Domain = u.domain
	}

	cur, observed := lensCurrent(in.State)
	cur.cycle = in.Cycle
	var obs []lensObs
	for _, raw := range u.lens.Evidence {
		if o, ok := lensReadObs(raw); ok {
			obs = append(obs, o)
		}
	}
	if observed {
		obs = append(obs, cur)
	}
	if len(obs) > LensWindow {
		obs = obs[len(obs)-LensWindow:]
	}

	if observed {
		u.focusRules(obs)
		u.thresholdRules(obs)
	}
	u.signalRules(in.CoAlerts)
	u.deprecateWeak()
	u.enforceItemCap()

	u.res.Observation = lensObservationText(observed, cur, in.State, u.res)
	tags, _ := lensAlertTags(in.State.Alerts)
	ev := lensEvidence{
		Timestamp: u.ts, Cycle: in.Cycle, Source: LensSource, Observation: u.res.Observation,
		Alerts: tags, ItemsAdded: u.res.ItemsAdded, ConfidenceChanges: u.res.ConfidenceChanges,
	}
	if observed {
		// An empty object, not an absent key: an observation without
		// metrics still tells the threshold rule whether an alert fired.
		m := cur.metrics
		if m == nil {
			m = map[string]float64{}
		}
		ev.Metrics, _ = json.Marshal(m)
	}
	b, _ := json.Marshal(ev)
	u.lens.Evidence = lensTail(append(u.lens.Evidence, json.RawMessage(b)), LensEvidenceCap)
	u.lens.LastUpdated = u.ts

	out := lensCloneChangelog(cl)
	if out.Domain == "" {
		out.Domain = u.domain
	}
	if out.SchemaVersion == "" {
		out.SchemaVersion = "1.0.0"
	}
	out.Entries = lensTail(append(out.Entries, u.res.Changes...), LensChangelogCap)
	return u.lens, out, u.res
}
