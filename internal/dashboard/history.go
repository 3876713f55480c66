package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// MaxChartSeries is the most series (domains, goals, skills) one history
// plot draws: one colour each from the palette, a legend that fits. The
// others are named under the plot as left out.
const MaxChartSeries = 8

// MaxSeriesPoints is the most points one series of a history plot draws,
// its most recent: a hand-made episodes.json of a thousand weeks costs a
// page no more than a year of cycles.
const MaxSeriesPoints = ChartCycles

// MaxSkillSeconds is the longest skill_seconds the skill duration plot
// takes (record.MaxSkillSeconds, as the metrics' histogram): a longer one
// would flatten every real duration to the axis.
const MaxSkillSeconds = record.MaxSkillSeconds

// The sources of a history plot's points, as their data-source says.
const (
	srcLog        = "cycle_log"
	srcEpisode    = "episode"
	srcCheckpoint = "checkpoint"
	srcNow        = "now"
	// A goal's week has two points: its progress at the start and at the
	// end of the week.
	srcEpisodeStart = "episode_start"
	srcEpisodeEnd   = "episode_end"
)

// srcRank orders points of one cycle: what was before the cycle ran
// (a checkpoint, a week's start) first, today's value last.
var srcRank = map[string]int{srcEpisodeStart: 0, srcCheckpoint: 1, srcLog: 2, srcEpisode: 3, srcEpisodeEnd: 3, srcNow: 4}

// histPoint is one value of a series of a history plot.
type histPoint struct {
	cycle int
	v     float64
	src   string
	// tip is what the tooltip says of where the value comes from.
	tip string
}

// seriesSet gathers the points of a history plot by series, and counts
// what it could not draw.
type seriesSet struct {
	pts map[string][]histPoint
	// labels are each series' name as a state file spells it.
	labels map[string]string
	// last is the highest cycle a point may have (0: no bound).
	last int
	// outOfRange counts values that are not a number of the plot's range;
	// beyond, points after the last cycle; unplaced, values no cycle
	// could be found for; unreadable, snapshots that are not of the
	// plot's shape.
	outOfRange, beyond, unplaced, unreadable int
}

func newSeriesSet(last int) *seriesSet {
	return &seriesSet{pts: map[string][]histPoint{}, labels: map[string]string{}, last: last}
}

// add adds a point of series key, or counts why it cannot be drawn: a
// value out of [lo, hi] or not finite, a cycle before the first or after
// the last.
func (s *seriesSet) add(key, label string, p histPoint, lo, hi float64) {
	switch {
	case math.IsNaN(p.v) || math.IsInf(p.v, 0) || p.v < lo || p.v > hi:
		s.outOfRange++
		return
	case p.cycle < 1:
		s.unplaced++
		return
	case s.last > 0 && p.cycle > s.last:
		s.beyond++
		return
	}
	if _, ok := s.labels[key]; !ok {
		s.labels[key] = label
	}
	s.pts[key] = append(s.pts[key], p)
}

// bound sorts each series by cycle and keeps its MaxSeriesPoints most
// recent points, and keeps MaxChartSeries series: those of preferred (the
// configuration's domains, goals.json's goals) in its order, then the
// others, the most recently seen first. left are the series left out,
// dropped the points cut from the series kept.
func (s *seriesSet) bound(preferred []string) (kept, left []string, dropped int) {
	for k, ps := range s.pts {
		slices.SortStableFunc(ps, func(a, b histPoint) int {
			if c := cmp.Compare(a.cycle, b.cycle); c != 0 {
				return c
			}
			return cmp.Compare(srcRank[a.src], srcRank[b.src])
		})
		s.pts[k] = ps
	}
	var order []string
	seen := map[string]bool{}
	for _, k := range preferred {
		if len(s.pts[k]) > 0 && !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	var rest []string
	for k := range s.pts {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.SortFunc(rest, func(a, b string) int {
		la, lb := s.pts[a][len(s.pts[a])-1].cycle, s.pts[b][len(s.pts[b])-1].cycle
		if c := cmp.Compare(lb, la); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	order = append(order, rest...)
	if len(order) > MaxChartSeries {
		order, left = order[:MaxChartSeries], order[MaxChartSeries:]
	}
	for _, k := range order {
		if n := len(s.pts[k]); n > MaxSeriesPoints {
			dropped += n - MaxSeriesPoints
			s.pts[k] = s.pts[k][n-MaxSeriesPoints:]
		}
	}
	return order, left, dropped
}

// frame is the x range of the kept series' points.
func (s *seriesSet) frame(kept []string) frame {
	f := frame{x0: math.Inf(1), x1: math.Inf(-1)}
	for _, k := range kept {
		ps := s.pts[k]
		f.x0 = min(f.x0, float64(ps[0].cycle))
		f.x1 = max(f.x1, float64(ps[len(ps)-1].cycle))
	}
	return f
}

// sources are the sources of the kept series' points.
func (s *seriesSet) sources(kept []string) map[string]bool {
	out := map[string]bool{}
	for _, k := range kept {
		for _, p := range s.pts[k] {
			out[p.src] = true
		}
	}
	return out
}

// notes are the sentences saying what a history plot left out, each
// count with its reason.
func (s *seriesSet) notes(what string, left []string, dropped int) string {
	var out []string
	if len(left) > 0 {
		out = append(out, fmt.Sprintf("Left out past %d %s: %s.", MaxChartSeries, what, nameList(s.labels, left)))
	}
	if dropped > 0 {
		out = append(out, fmt.Sprintf("%d older points are left out (the last %d of a series are drawn).", dropped, MaxSeriesPoints))
	}
	if s.outOfRange > 0 {
		out = append(out, fmt.Sprintf("%d values out of the plot's range or not a number are not drawn.", s.outOfRange))
	}
	if s.beyond > 0 {
		out = append(out, fmt.Sprintf("%d values said to be of a cycle after cycle %d, the last, are not drawn.", s.beyond, s.last))
	}
	if s.unplaced > 0 {
		out = append(out, fmt.Sprintf("%d values that no cycle could be found for are not drawn.", s.unplaced))
	}
	if s.unreadable > 0 {
		out = append(out, fmt.Sprintf("%d snapshots that are not a confidence object are not drawn.", s.unreadable))
	}
	return strings.Join(out, " ")
}

// nameList names the first few of keys by their labels, cut and masked,
// and counts the rest.
func nameList(labels map[string]string, keys []string) string {
	const shown = 5
	var names []string
	for i, k := range keys {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(keys)-shown))
			break
		}
		names = append(names, cut(safetext.Text(labels[k]), 40))
	}
	return strings.Join(names, ", ")
}

// cut is s to at most n characters, an ellipsis marking a cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// seriesColors are the kept series' colours: as colorOf colours order
// (the other plots' colours for the same domain) when that gives each its
// own, else the palette in the kept order.
func seriesColors(order, kept []string) map[string]string {
	cols := map[string]string{}
	used := map[string]bool{}
	unique := true
	for _, k := range kept {
		c := colorOf(order, k)
		if used[c] {
			unique = false
		}
		used[c] = true
		cols[k] = c
	}
	if !unique {
		for i, k := range kept {
			cols[k] = palette[i%len(palette)]
		}
	}
	return cols
}

// drawSeries draws the kept series' points (made by markOf) and, with
// join, a line through each series' points.
func (c *chart) drawSeries(f frame, s *seriesSet, kept []string, cols map[string]string, join bool, markOf func(key string, p histPoint, x, y float64, col string) mark) {
	for _, k := range kept {
		var line []string
		for _, p := range s.pts[k] {
			x, y := f.x(float64(p.cycle)), f.y(p.v)
			line = append(line, f1(x)+","+f1(y))
			c.Marks = append(c.Marks, markOf(k, p, x, y, cols[k]))
		}
		if join && len(line) > 1 {
			c.Lines = append(c.Lines, svgPolyline{Points: strings.Join(line, " "), Stroke: cols[k], Class: "series"})
		}
	}
}

// shape is a mark of the source's shape at x, y: a filled circle for a
// cycle's record, a filled square for an episode's end of week, a hollow
// square for a week's start, a hollow circle for a checkpoint, a larger
// outlined circle for today's value.
func shape(src string, x, y float64, col string) mark {
	m := mark{X: f1(x), Y: f1(y), R: "3.5", Fill: col, Class: "point " + strings.ReplaceAll(src, "_", "-"), Source: src}
	switch src {
	case srcEpisode, srcEpisodeEnd, srcEpisodeStart:
		m.R, m.X, m.Y, m.W, m.H = "", f1(x-3.5), f1(y-3.5), "7", "7"
		if src == srcEpisodeStart {
			m.Fill, m.Stroke = "none", col
		}
	case srcCheckpoint:
		m.Fill, m.Stroke = "none", col
	case srcNow:
		m.R = "5"
	}
	return m
}

// lastCycle is the newest cycle the project records: state.json's
// cycle_count, or the log's last cycle when it is further. The history
// plots are drawn against the cycles of the log: without one read, they
// say there is no cycle rather than place a point nowhere.
func (d plotData) lastCycle() int {
	n := d.cycleCount
	if len(d.records) > 0 {
		n = max(n, d.records[len(d.records)-1].cycle)
	}
	return n
}

// weekCycles are the first and last cycle of the week an episode
// summarises: its cycle_range when that holds two cycles in order, else
// the first and last cycle the read log timestamps within its week
// (week_start to week_end); ok is false when neither says.
func weekCycles(ep state.Episode, recs []chartRecord) (first, last int, ok bool) {
	if r := ep.CycleRange; len(r) == 2 && r[0] >= 1 && r[0] <= r[1] {
		return r[0], r[1], true
	}
	start, err := time.Parse(time.DateOnly, ep.Start())
	if err != nil {
		return 0, 0, false
	}
	end := start.AddDate(0, 0, 6)
	if e, err := time.Parse(time.DateOnly, ep.WeekEnd); err == nil && !e.Before(start) {
		end = e
	}
	lo, hi := start.Format(time.DateOnly), end.Format(time.DateOnly)
	for _, r := range recs {
		if _, err := time.Parse(time.DateOnly, r.day); err != nil || r.day < lo || r.day > hi {
			continue
		}
		if !ok {
			first, ok = r.cycle, true
		}
		last = r.cycle
	}
	return first, last, ok
}

// weekName is an episode as a tooltip names it: its week, masked.
func weekName(ep state.Episode) string {
	w := ep.Week()
	if w == "" {
		w = "(no id)"
	}
	return cut(safetext.Text(w), 40)
}

// confidenceChart is each domain's confidence over the cycles, from every
// file that keeps one: the cycle log (the selected domain's, per cycle),
// the weekly episodes' confidence_snapshot (every domain's at the end of
// a week), the checkpoints' copies of confidence.json (before a cycle's
// action), and confidence.json itself (today's).
func confidenceChart(cfg *config.Config, d plotData) chart {
	title := "Confidence per domain"
	if len(d.records) == 0 {
		return chart{ID: "confidence", Title: title, Empty: noCycles}
	}
	last := d.lastCycle()
	s := newSeriesSet(last)
	for _, r := range d.records {
		if r.confidence != nil {
			s.add(r.domain, r.domain, histPoint{r.cycle, *r.confidence, srcLog, "cycle_log.jsonl, when the cycle selected it"}, 0, 1)
		}
	}
	for _, ep := range d.episodes {
		if len(ep.ConfidenceSnapshot) == 0 {
			continue
		}
		_, end, ok := weekCycles(ep, d.records)
		if !ok {
			s.unplaced += len(ep.ConfidenceSnapshot)
			continue
		}
		tip := fmt.Sprintf("episode %s, the end of its week", weekName(ep))
		for _, n := range sortedNames(ep.ConfidenceSnapshot) {
			s.add(n, n, histPoint{end, ep.ConfidenceSnapshot[n], srcEpisode, tip}, 0, 1)
		}
	}
	for _, cp := range d.checkpoints {
		raw := cp.StateSnapshot.Confidence
		if len(raw) == 0 || isJSONNull(raw) {
			continue
		}
		var conf state.Confidence
		if json.Unmarshal(raw, &conf) != nil {
			s.unreadable++
			continue
		}
		tip := fmt.Sprintf("checkpoints.json, before cycle %d's action", cp.Cycle)
		for _, n := range sortedNames(conf.Scores) {
			s.add(n, n, histPoint{cp.Cycle, conf.Scores[n], srcCheckpoint, tip}, 0, 1)
		}
	}
	for _, n := range sortedNames(d.confidence) {
		s.add(n, n, histPoint{last, d.confidence[n], srcNow, "confidence.json, today"}, 0, 1)
	}
	var configured []string
	for _, dm := range cfg.Domains {
		configured = append(configured, dm.Name)
	}
	kept, left, dropped := s.bound(configured)
	if len(kept) == 0 {
		c := chart{ID: "confidence", Title: title, Empty: "no confidence recorded yet"}
		if n := s.notes("domains", left, dropped); n != "" {
			c.Empty += ". " + n
		}
		return c
	}
	f := s.frame(kept)
	f.y0, f.y1 = 0, 1
	c := newChart("confidence", title, "Confidence of each domain, 0 to 1, per cycle: the cycles that selected it, the ends of the weeks, the checkpoints and today", f, ticks(1), num)
	srcs := s.sources(kept)
	c.Note = historyNote(d, "Filled circles: the selected domain's confidence when it was selected")
	if srcs[srcEpisode] {
		c.Note += " Squares: each domain's confidence at the end of a week (episodes.json confidence_snapshot, at the week's last cycle)."
	}
	if srcs[srcCheckpoint] {
		c.Note += " Hollow circles: the copy of confidence.json a checkpoint took before its cycle's action (checkpoints.json)."
	}
	if srcs[srcNow] {
		c.Note += fmt.Sprintf(" Large circles: today's confidence.json, at cycle %d.", last)
	}
	if n := s.notes("domains", left, dropped); n != "" {
		c.Note += " " + n
	}
	c.xLabels(f, fmt.Sprintf("cycle %d", int(f.x0)), fmt.Sprintf("cycle %d", int(f.x1)))
	cols := seriesColors(domainOrder(cfg, kept), kept)
	c.drawSeries(f, s, kept, cols, true, func(k string, p histPoint, x, y float64, col string) mark {
		name := safetext.Text(k)
		m := shape(p.src, x, y, col)
		m.Cycle, m.Domain, m.Value = strconv.Itoa(p.cycle), name, val(p.v)
		m.Tip = fmt.Sprintf("cycle %d, %s: %s (%s)", p.cycle, name, num(p.v), p.tip)
		return m
	})
	var keys, colors []string
	for _, k := range kept {
		keys, colors = append(keys, cut(safetext.Text(k), 20)), append(colors, cols[k])
	}
	c.legend(keys, colors, nil)
	return c
}

func isJSONNull(b json.RawMessage) bool { return strings.TrimSpace(string(b)) == "null" }

// goalSnapshot is one entry of an episode's goal_progress_snapshot.
type goalSnapshot struct {
	id         string
	start, end *float64
}

// goalSnapshots reads an episode's goal_progress_snapshot (an unknown key
// of its entry): each entry with an id is taken, with the progress values
// that are numbers; bad counts the entries and values that are not.
func goalSnapshots(ep state.Episode) (out []goalSnapshot, bad int) {
	raw, ok := ep.Extra["goal_progress_snapshot"]
	if !ok || isJSONNull(raw) {
		return nil, 0
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, 1
	}
	for _, it := range items {
		var m map[string]json.RawMessage
		var g goalSnapshot
		if json.Unmarshal(it, &m) != nil || json.Unmarshal(m["id"], &g.id) != nil || g.id == "" {
			bad++
			continue
		}
		for key, dst := range map[string]**float64{"progress_start": &g.start, "progress_end": &g.end} {
			b, has := m[key]
			if !has || isJSONNull(b) {
				continue
			}
			var v float64
			if json.Unmarshal(b, &v) != nil {
				bad++
				continue
			}
			*dst = &v
		}
		out = append(out, g)
	}
	return out, bad
}

// goalLabel is a goal as the legend names it: its id and title.
func goalLabel(g state.Goal, i int) (key, label string) {
	key, label = g.ID, g.ID
	if key == "" {
		// A goal without an id has no history to join: its own series.
		key, label = fmt.Sprintf("\x00goal %d", i+1), fmt.Sprintf("goal %d", i+1)
	}
	if g.Title != "" {
		label += " " + strings.Join(strings.Fields(g.Title), " ")
	}
	return key, label
}

// goalChart is each goal's progress over the weeks: the start and end of
// every episode's goal_progress_snapshot, then goals.json's progress
// today. A goal with no history is its one point today.
func goalChart(d plotData) chart {
	title := "Goal progress"
	if len(d.records) == 0 {
		return chart{ID: "goals", Title: title, Empty: noCycles}
	}
	last := d.lastCycle()
	s := newSeriesSet(last)
	bad := 0
	status := map[string]string{}
	var preferred []string
	for i, g := range d.goals {
		key, label := goalLabel(g, i)
		preferred = append(preferred, key)
		status[key] = g.Status
		if g.Progress != nil {
			s.add(key, label, histPoint{last, *g.Progress, srcNow, "goals.json, today"}, 0, 1)
		} else {
			s.labels[key] = label
		}
	}
	for _, ep := range d.episodes {
		snaps, b := goalSnapshots(ep)
		bad += b
		if len(snaps) == 0 {
			continue
		}
		first, end, ok := weekCycles(ep, d.records)
		for _, g := range snaps {
			for _, v := range []struct {
				p     *float64
				cycle int
				src   string
				tip   string
			}{
				{g.start, first, srcEpisodeStart, "at the start of its week"},
				{g.end, end, srcEpisodeEnd, "at the end of its week"},
			} {
				switch {
				case v.p == nil:
				case !ok:
					s.unplaced++
				default:
					s.add(g.id, g.id, histPoint{v.cycle, *v.p, v.src, fmt.Sprintf("episode %s, %s", weekName(ep), v.tip)}, 0, 1)
				}
			}
		}
	}
	kept, left, dropped := s.bound(preferred)
	if len(kept) == 0 {
		c := chart{ID: "goals", Title: title, Empty: "no goal progress recorded: goals.json holds no goal with a progress and no episode has a goal_progress_snapshot"}
		if bad > 0 {
			c.Empty += fmt.Sprintf(". %d goal_progress_snapshot entries or values are not a goal's id and progress", bad)
		}
		if n := s.notes("goals", left, dropped); n != "" {
			c.Empty += ". " + n
		}
		return c
	}
	f := s.frame(kept)
	f.y0, f.y1 = 0, 1
	c := newChart("goals", title, "Progress of each goal, 0 to 1, at the start and end of each week the episodes summarise and today", f, ticks(1), num)
	srcs := s.sources(kept)
	if srcs[srcEpisodeStart] || srcs[srcEpisodeEnd] {
		c.Note = "Hollow and filled squares: a goal's progress at the start and at the end of a week (episodes.json goal_progress_snapshot, at the week's first and last cycle). "
	}
	if srcs[srcNow] {
		c.Note += fmt.Sprintf("Large circles: goals.json's progress today, at cycle %d. A goal marked \"today only\" has no history yet.", last)
	}
	if bad > 0 {
		c.Note += fmt.Sprintf(" %d goal_progress_snapshot entries or values are not a goal's id and progress and are not drawn.", bad)
	}
	if n := s.notes("goals", left, dropped); n != "" {
		c.Note += " " + n
	}
	c.Note = strings.TrimSpace(c.Note)
	c.xLabels(f, fmt.Sprintf("cycle %d", int(f.x0)), fmt.Sprintf("cycle %d", int(f.x1)))
	cols := seriesColors(kept, kept)
	c.drawSeries(f, s, kept, cols, true, func(k string, p histPoint, x, y float64, col string) mark {
		name := safetext.Text(s.labels[k])
		m := shape(p.src, x, y, col)
		m.Cycle, m.Goal, m.Value = strconv.Itoa(p.cycle), safetext.Text(strings.TrimPrefix(k, "\x00")), val(p.v)
		m.Tip = fmt.Sprintf("cycle %d, %s: %s (%s)", p.cycle, name, num(p.v), p.tip)
		if st := status[k]; st != "" {
			m.Tip += ", " + safetext.Text(st)
		}
		return m
	})
	var keys, colors []string
	for _, k := range kept {
		label := cut(safetext.Text(s.labels[k]), 20)
		if ps := s.pts[k]; len(ps) == 1 && ps[0].src == srcNow {
			// The id alone: the words must fit the legend's width.
			label = cut(safetext.Text(strings.TrimPrefix(k, "\x00")), 7) + " (today only)"
		}
		keys, colors = append(keys, label), append(colors, cols[k])
	}
	c.legend(keys, colors, nil)
	return c
}

// seconds is a duration on the skill duration plot's axis.
func seconds(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) + " s" }

// skillChart is how long each cycle's skill ran (the log's
// skill_seconds), a point per cycle that ran one, coloured by skill.
func skillChart(d plotData) chart {
	title := "Skill duration per cycle"
	if len(d.records) == 0 {
		return chart{ID: "skills", Title: title, Empty: noCycles}
	}
	s := newSeriesSet(0)
	top := 0.0
	for _, r := range d.records {
		if r.skillSeconds == nil {
			continue
		}
		key := r.skill
		label := key
		if label == "" {
			label = "(no skill named)"
		}
		n := len(s.pts[key])
		s.add(key, label, histPoint{r.cycle, *r.skillSeconds, srcLog, ""}, 0, MaxSkillSeconds)
		if len(s.pts[key]) > n {
			top = max(top, *r.skillSeconds)
		}
	}
	kept, left, dropped := s.bound(nil)
	if len(kept) == 0 {
		c := chart{ID: "skills", Title: title, Empty: "no cycle records skill_seconds: no skill ran in the cycles shown, or they were logged before it was recorded"}
		if n := s.notes("skills", left, dropped); n != "" {
			c.Empty += ". " + n
		}
		return c
	}
	slices.Sort(kept)
	f := cycleRange(d.records)
	f.y0, f.y1 = 0, niceTop(top)
	c := newChart("skills", title, "How long each cycle's skill ran, in seconds, per cycle, coloured by skill", f, ticks(f.y1), seconds)
	c.Note = historyNote(d, "The skill_seconds of each cycle that ran a skill") +
		fmt.Sprintf(" A cycle without it (no skill ran, or logged before it was recorded) has no point; a value over %d seconds (a week) is taken for a broken line and not drawn.", MaxSkillSeconds)
	if n := s.notes("skills", left, dropped); n != "" {
		c.Note += " " + n
	}
	c.xLabels(f, fmt.Sprintf("cycle %d", d.records[0].cycle), fmt.Sprintf("cycle %d", d.records[len(d.records)-1].cycle))
	cols := seriesColors(kept, kept)
	c.drawSeries(f, s, kept, cols, false, func(k string, p histPoint, x, y float64, col string) mark {
		name := safetext.Text(s.labels[k])
		m := shape(p.src, x, y, col)
		m.Cycle, m.Skill, m.Value = strconv.Itoa(p.cycle), safetext.Text(k), val(p.v)
		m.Tip = fmt.Sprintf("cycle %d, %s: %s", p.cycle, name, seconds(p.v))
		return m
	})
	var keys, colors []string
	for _, k := range kept {
		keys, colors = append(keys, cut(safetext.Text(s.labels[k]), 20)), append(colors, cols[k])
	}
	c.legend(keys, colors, nil)
	return c
}
