package compat

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
)

// The rest of the original's status reader: the --share Cycle Card and
// the --scorecard KPIs, re-stated from the key names its docs give, and a
// project whose real cycles exercise every read — an alert, a pull
// request merged and held, a failing skill, a report of the wrong shape,
// a skip, a reflection per cycle, a goal with a metric command, a gap a
// human resolved. Each read is checked against what ooda did: its output,
// the skill's own log (ran.txt) and files read independently.

// card is what --share rebuilds from decision_log[-1] and the newest
// cost-ledger entry. A nil pointer is a field the card renders as "—".
type card struct {
	empty     bool // no cycle to share yet
	cycle     int
	timestamp string
	domain    string
	skill     string
	score     *float64 // the scores table's value for the selected domain (state design)
	scoreFlat *float64 // score (evolve 6-A)
	conf      *float64 // confidence_at_decision (state design)
	confFlat  *float64 // confidence (evolve 6-A)
	result    string
	pr        *int
	riskTier  *int
	orient    string
	costCycle *int     // the newest ledger entry's cycle_id
	cost      *float64 // its estimated_usd
	daily     *float64 // total_estimated_usd, when date is the entry's day
	limit     *float64 // config cost.daily_limit_usd
}

// optNum reads a number; null (which the original writes for a value a
// cycle did not have) and anything else are "—".
func optNum(raw json.RawMessage) *float64 {
	var f float64
	if raw == nil || compact(raw) == "null" || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// optInt reads an integer; the card shows anything else as "—".
func optInt(raw json.RawMessage) *int {
	f := optNum(raw)
	if f == nil || *f != math.Trunc(*f) {
		return nil
	}
	n := int(*f)
	return &n
}

func readShare(t *testing.T, dir string) card {
	t.Helper()
	var c card
	st := load(t, dir, evolve+"/state.json")
	log := st.list("decision_log")
	if len(log) == 0 {
		return card{empty: true}
	}
	e := log[len(log)-1]
	if n := optInt(field(e, "cycle")); n != nil {
		c.cycle = *n
	}
	c.timestamp = str(field(e, "timestamp"))
	c.domain = str(field(e, "selected_domain"))
	c.skill = str(field(e, "selected_skill"))
	if c.domain != "" {
		c.score = optNum(field(field(e, "scores"), c.domain))
	}
	c.scoreFlat = optNum(field(e, "score"))
	c.conf = optNum(field(e, "confidence_at_decision"))
	c.confFlat = optNum(field(e, "confidence"))
	c.result = str(field(e, "result"))
	c.pr = optInt(field(e, "pr_number"))
	c.riskTier = optInt(field(e, "risk_tier"))
	c.orient = str(field(e, "orient_summary"))

	ledger := load(t, dir, evolve+"/cost_ledger.json")
	if entries := ledger.list("entries"); len(entries) > 0 {
		last := entries[len(entries)-1]
		c.costCycle = optInt(field(last, "cycle_id"))
		c.cost = optNum(field(last, "estimated_usd"))
		if ts, err := time.Parse(time.RFC3339, str(field(last, "timestamp"))); err == nil &&
			str(ledger.at("date")) == ts.UTC().Format("2006-01-02") {
			c.daily = optNum(ledger.at("total_estimated_usd"))
		}
	}
	c.limit = optNum(load(t, dir, "config.json").at("cost", "daily_limit_usd"))
	return c
}

// scorecard is --scorecard over all recorded cycles. The original's
// scorecard is a script its docs describe in one line per KPI; where a
// line leaves a choice, the comment on the field says which plain
// reading is taken. A nil pointer is the scorecard's "—".
type scorecard struct {
	entries int
	// Loop Value Score: mean quality_multiplier of the outcomes entries.
	lvs *float64
	// Task Completion Rate: "merged and were accepted" — entries whose
	// result_type is pr_merged or pr_merged_held, over all entries.
	completion *float64
	// Futile Cycle Rate: entries whose result_type is futile (6-C9's
	// "ran, changed nothing"), over all entries. An error is its own
	// result_type and is not counted here.
	futile *float64
	// PR Merge Rate: counters.total_prs_merged / total_prs_created.
	mergeRate *float64
	// hold rate, "merged that weren't reverted": pr_merged_held entries
	// over the entries still standing as merged (pr_merged or
	// pr_merged_held); a revert turns an entry into pr_rejected.
	holdRate *float64
	// Action Queue Resolution: counters.actions_resolved / actions_added.
	resolution *float64
	// Cost per Successful Cycle: cost_ledger.json total_estimated_usd
	// over the accepted-value (Task Completion) cycles. The ledger is the
	// only cost file the scorecard names, and it holds one UTC day.
	costPerSuccess *float64
	// Goal Progress: mean progress of goals with status "active".
	goalProgress *float64
	// Gap Resolution: gaps with resolved == true over all gaps.
	gapResolution *float64
	// Verdict, "from the Loop Value Score": the docs name working,
	// partial and stalled but not the cut points; working from 0.5 (a
	// PR's worth per cycle), partial from 0.2 (actionable output),
	// stalled below.
	verdict string
}

func ratio(n, d float64) *float64 {
	if d == 0 {
		return nil
	}
	r := n / d
	return &r
}

func verdictOf(lvs *float64) string {
	switch {
	case lvs == nil:
		return "no outcomes recorded yet."
	case *lvs >= 0.5:
		return "working"
	case *lvs >= 0.2:
		return "partial"
	}
	return "stalled"
}

func readScorecard(t *testing.T, dir string) scorecard {
	t.Helper()
	var s scorecard
	num := func(raw json.RawMessage) float64 {
		f := optNum(raw)
		if f == nil {
			return 0
		}
		return *f
	}
	opt := func(rel string) doc {
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			return doc{t: t, name: rel, raw: json.RawMessage("{}")}
		}
		return load(t, dir, rel)
	}
	outs := opt(evolve + "/outcomes.json").list("entries")
	s.entries = len(outs)
	var quality, completed, futile, merged, held float64
	for _, o := range outs {
		quality += num(field(o, "quality_multiplier"))
		switch str(field(o, "result_type")) {
		case "pr_merged":
			completed++
			merged++
		case "pr_merged_held":
			completed++
			merged++
			held++
		case "futile":
			futile++
		}
	}
	n := float64(len(outs))
	if n > 0 {
		// With no outcomes every KPI is "—".
		s.lvs, s.completion, s.futile, s.holdRate = ratio(quality, n), ratio(completed, n), ratio(futile, n), ratio(held, merged)
		m := opt(evolve + "/metrics.json")
		s.mergeRate = ratio(num(m.at("counters", "total_prs_merged")), num(m.at("counters", "total_prs_created")))
		s.resolution = ratio(num(m.at("counters", "actions_resolved")), num(m.at("counters", "actions_added")))
		s.costPerSuccess = ratio(num(opt(evolve+"/cost_ledger.json").at("total_estimated_usd")), completed)
		var sum, active float64
		for _, g := range opt(evolve + "/goals.json").list("goals") {
			if str(field(g, "status")) == "active" {
				sum += num(field(g, "progress"))
				active++
			}
		}
		s.goalProgress = ratio(sum, active)
		var resolved float64
		gaps := opt(evolve + "/skill_gaps.json").list("gaps")
		for _, g := range gaps {
			if compact(field(g, "resolved")) == "true" {
				resolved++
			}
		}
		s.gapResolution = ratio(resolved, float64(len(gaps)))
	}
	s.verdict = verdictOf(s.lvs)
	return s
}

// ranLine is one line of the skill's ran.txt: what ooda told it
// (OODA_CYCLE, OODA_NOW, OODA_DOMAIN, OODA_SKILL, OODA_CONFIDENCE) and
// what it did.
type ranLine struct {
	cycle                      int
	now                        time.Time
	domain, skill              string
	conf                       float64
	mode, status, score, alert string
	cost, pr                   string
}

func ranLines(t *testing.T, dir string) []ranLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ran.txt"))
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var out []ranLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 11 {
			t.Fatalf("ran.txt line %q", l)
		}
		var r ranLine
		var err1, err2, err3 error
		r.cycle, err1 = strconv.Atoi(f[0])
		r.now, err2 = time.Parse(time.RFC3339, f[1])
		r.conf, err3 = strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("ran.txt line %q: %v %v %v", l, err1, err2, err3)
		}
		r.domain, r.skill, r.mode, r.status, r.score, r.alert, r.cost, r.pr = f[2], f[3], f[5], f[6], f[7], f[8], f[9], f[10]
		out = append(out, r)
	}
	return out
}

// seen is what one real cycle did, from ooda's own output and the skill's
// log: the ground truth the reads are checked against.
type seen struct {
	n         int
	now       time.Time
	ran       *ranLine // nil: no skill ran
	typ       string   // the result type ooda printed
	quality   float64
	selected  string
	score     *float64 // "[Decide] Selected: d (score: X)"
	orient    string
	risk      *int
	lesson    string
	actions   int
	gaps      []string
	moves     int
	annotated map[int][2]string  // cycle → result type, quality
	conf      map[string]float64 // confidences ooda printed, in order
	card      card               // --share read right after the cycle
}

var (
	reRecord    = regexp.MustCompile(`^\[Record\] Cycle #(\d+) recorded: (\S+) \((\w+), quality ([0-9.]+)\)`)
	reSelected  = regexp.MustCompile(`^\[Decide\] Selected: (\S+) \(score: ([0-9.]+)\)`)
	reDecided   = regexp.MustCompile(`^\[Decide\] Confidence: ([0-9.]+)`)
	reMicro     = regexp.MustCompile(`^\[Orient\] (\S+) micro-adjustment .* -> confidence ([0-9.]+)`)
	rePROutcome = regexp.MustCompile(`^\[Orient\] PR #\d+ \w+ -> (\S+) confidence \S+ \([0-9.]+ → ([0-9.]+)\)`)
	reAnnotated = regexp.MustCompile(`^\[Orient\] Outcome back-annotated: cycle #(\d+) PR #\d+ → (\w+) \(([0-9.]+)\)`)
	reRisk      = regexp.MustCompile(`^\[Act\] PR #\d+ .*\(Risk Tier (\d+)`)
	reLesson    = regexp.MustCompile(`^\[Reflect\] Self-critique: \w+\. Lesson: (.*)$`)
	reActions   = regexp.MustCompile(`^\[Reflect\] Actions: (\d+) extracted`)
	reGaps      = regexp.MustCompile(`^\[Reflect\] Gaps: \d+\. (.*)$`)
	reMove      = regexp.MustCompile(`^\[Orient\] Action queue: .* merged \(PR #\d+\)\.$`)
	reCost      = regexp.MustCompile(`(?m)^## Cycle #(\d+) .*\n(?:- .*\n)*?- \*\*Cost\*\*: \+\$([0-9.]+)`)
)

func parseSeen(t *testing.T, now time.Time, out string) seen {
	t.Helper()
	s := seen{now: now, annotated: map[int][2]string{}, conf: map[string]float64{}}
	lastOrient := ""
	for _, l := range strings.Split(out, "\n") {
		f := func(x string) float64 {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return v
		}
		if m := reRecord.FindStringSubmatch(l); m != nil {
			s.n, _ = strconv.Atoi(m[1])
			s.typ, s.quality = m[3], f(m[4])
		}
		if m := reSelected.FindStringSubmatch(l); m != nil {
			v := f(m[2])
			s.selected, s.score = m[1], &v
		}
		if m := reDecided.FindStringSubmatch(l); m != nil && s.selected != "" {
			s.conf[s.selected] = f(m[1])
		}
		if m := reMicro.FindStringSubmatch(l); m != nil {
			s.conf[m[1]] = f(m[2])
		}
		if m := rePROutcome.FindStringSubmatch(l); m != nil {
			s.conf[m[1]] = f(m[2])
		}
		if m := reAnnotated.FindStringSubmatch(l); m != nil {
			c, _ := strconv.Atoi(m[1])
			s.annotated[c] = [2]string{m[2], m[3]}
		}
		if m := reRisk.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			s.risk = &n
		}
		if m := reLesson.FindStringSubmatch(l); m != nil {
			s.lesson = m[1]
		}
		if m := reActions.FindStringSubmatch(l); m != nil {
			s.actions, _ = strconv.Atoi(m[1])
		}
		if m := reGaps.FindStringSubmatch(l); m != nil {
			s.gaps = strings.Split(m[1], ", ")
		}
		if reMove.MatchString(l) {
			s.moves++
		}
		if strings.HasPrefix(l, "[Orient] ") {
			lastOrient = strings.TrimPrefix(l, "[Orient] ")
		}
		if strings.HasPrefix(l, "[Decide] Domain scores:") && s.orient == "" {
			s.orient = lastOrient
		}
	}
	if s.n == 0 {
		t.Fatalf("no [Record] line in the cycle's output:\n%s", out)
	}
	return s
}

// dashboardRun is the project and what each of its cycles did.
type dashboardRun struct {
	dir    string
	cycles []seen
	ran    []ranLine
	cost   map[int]float64 // each cycle's cost, from its CHANGELOG entry
	marked string          // the action the test marked proposed
	closed string          // the gap the test marked resolved
	merged int             // PRs the forge reported merged
}

// dashboardProject runs seven real cycles: a report, an alert, a pull
// request (whose action the test then marks proposed with the PR's
// number, as the original's dev-cycle does), a failing skill while the
// forge reports that PR merged (the test then resolves the gap it
// records, as docs/skills.md tells a human to), a report of the wrong
// shape, a skip (an operator's memo sinks every score), and — 55 hours
// later, so the merge's 48-hour hold is decided — a last alert.
func dashboardProject(t *testing.T) dashboardRun {
	t.Helper()
	dir := fixture(t, "status-dashboard")
	r := dashboardRun{dir: dir}
	plan := []struct {
		at   time.Duration
		mode string
	}{{0, "report"}, {time.Hour, "alert"}, {2 * time.Hour, "pr"}, {3 * time.Hour, "fail"},
		{4 * time.Hour, "badreport"}, {5 * time.Hour, "skip"}, {60 * time.Hour, "alert"}}
	var prLine *ranLine
	for _, p := range plan {
		now := t0.Add(p.at)
		fg := &fakeForge{}
		switch p.mode {
		case "fail":
			// The PR the skill reported, merged half an hour ago on the
			// branch its domain's prefix names.
			if prLine == nil {
				t.Fatal("no skill reported pull request 7")
			}
			prefix := str(load(t, dir, "config.json").at("domains", prLine.domain, "branch_prefix"))
			fg.status = forge.Status{Merged: []forge.PR{{Number: 7, HeadRef: prefix + "retry-wrapper", State: forge.StateMerged,
				Merged: now.Add(-30 * time.Minute)}}}
			r.merged++
		case "skip":
			writeFile(t, filepath.Join(dir, evolve, "memos.json"), []byte(`{"schema_version": "1.1.0", "score_adjustments": `+
				`{"service_health": -100, "test_coverage": -100, "backlog": -100}, "interventions": [], "history": [], "last_memo": null}`))
		}
		writeFile(t, filepath.Join(dir, "behave"), []byte(p.mode))
		before := len(ranLines(t, dir))
		var out string
		if p.mode == "skip" {
			var res engine.Result
			res, out = cycle(t, dir, now, fg)
			if res.Status != engine.StatusSkipped || res.ExitCode() != 0 {
				t.Fatalf("cycle at %s: status %s reason %s, want a skip\n%s", now.Format(time.RFC3339), res.Status, res.Reason, out)
			}
		} else if p.mode == "fail" {
			// The skill fails: recorded, and exit 4 says so.
			var res engine.Result
			res, out = cycle(t, dir, now, fg)
			if res.Status != engine.StatusCompleted || res.ExitCode() != 4 {
				t.Fatalf("cycle at %s: status %s reason %s exit %d, want a failed skill (exit 4)\n%s", now.Format(time.RFC3339), res.Status, res.Reason, res.ExitCode(), out)
			}
		} else {
			_, out = completed(t, dir, now, fg)
		}
		s := parseSeen(t, now, out)
		lines := ranLines(t, dir)
		switch len(lines) - before {
		case 0:
		case 1:
			s.ran = &lines[before]
		default:
			t.Fatalf("cycle %d ran the skill %d times", s.n, len(lines)-before)
		}
		s.card = readShare(t, dir)
		r.cycles = append(r.cycles, s)

		switch p.mode {
		case "pr":
			prLine = s.ran
			r.marked = markProposed(t, dir, s.n)
		case "fail":
			if len(s.gaps) != 1 {
				t.Fatalf("the failing cycle recorded gaps %v, want one", s.gaps)
			}
			r.closed = s.gaps[0]
			resolveGap(t, dir, r.closed)
		}
	}
	r.ran = ranLines(t, dir)
	r.cost = map[int]float64{}
	for _, m := range reCost.FindAllStringSubmatch(string(readFile(t, dir, evolve+"/CHANGELOG.md")), -1) {
		n, _ := strconv.Atoi(m[1])
		r.cost[n], _ = strconv.ParseFloat(m[2], 64)
	}
	if len(r.cost) != len(plan) {
		t.Fatalf("CHANGELOG.md has a cost for %d cycles, want %d", len(r.cost), len(plan))
	}
	return r
}

// markProposed does what the original's dev-cycle does when it opens a
// PR for a queued action: status "proposed" and the PR's number, in place.
func markProposed(t *testing.T, dir string, cycle int) string {
	t.Helper()
	p := filepath.Join(dir, evolve, "action_queue.json")
	var q map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, dir, evolve+"/action_queue.json"), &q); err != nil {
		t.Fatal(err)
	}
	var pending []map[string]json.RawMessage
	if err := json.Unmarshal(q["pending"], &pending); err != nil {
		t.Fatal(err)
	}
	title := fmt.Sprintf(" run %d", cycle)
	for _, a := range pending {
		if strings.HasSuffix(str(a["title"]), title) {
			a["status"], a["pr_number"] = json.RawMessage(`"proposed"`), json.RawMessage(`7`)
			q["pending"], _ = json.Marshal(pending)
			b, _ := json.MarshalIndent(q, "", "  ")
			writeFile(t, p, b)
			return str(a["title"])
		}
	}
	t.Fatalf("no pending action of cycle %d in %s", cycle, compact(q["pending"]))
	return ""
}

// resolveGap marks a gap resolved by hand, as a human does once it is
// dealt with.
func resolveGap(t *testing.T, dir, name string) {
	t.Helper()
	var g map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, dir, evolve+"/skill_gaps.json"), &g); err != nil {
		t.Fatal(err)
	}
	var gaps []map[string]json.RawMessage
	_ = json.Unmarshal(g["gaps"], &gaps)
	for _, e := range gaps {
		if str(e["name"]) == name {
			e["resolved"] = json.RawMessage(`true`)
			g["gaps"], _ = json.Marshal(gaps)
			b, _ := json.MarshalIndent(g, "", "  ")
			writeFile(t, filepath.Join(dir, evolve, "skill_gaps.json"), b)
			return
		}
	}
	t.Fatalf("no gap %s to resolve", name)
}

func within(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func fmtOpt[T any](p *T) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprint(*p)
}

// The Cycle Card after every cycle: its header, DECIDE and ACT from
// decision_log[-1], its COST from the newest ledger entry, each the same
// as what that cycle did.
func TestCompat_StatusShareCardMatchesEachCycle(t *testing.T) {
	r := dashboardProject(t)
	for _, s := range r.cycles {
		t.Run(fmt.Sprintf("cycle%d", s.n), func(t *testing.T) {
			c := s.card
			if c.empty || c.cycle != s.n || c.timestamp != s.now.Format(time.RFC3339) {
				t.Errorf("header: cycle %d at %q; ooda recorded cycle #%d at %s", c.cycle, c.timestamp, s.n, s.now.Format(time.RFC3339))
			}
			wantResult, wantDomain, wantSkill := "skip", "", ""
			var wantConf *float64
			var wantPR *int
			if s.ran != nil {
				wantResult, wantDomain, wantSkill, wantConf = "success", s.ran.domain, s.ran.skill, &s.ran.conf
				if s.ran.mode == "fail" {
					wantResult = "error"
				}
				if n, err := strconv.Atoi(s.ran.pr); err == nil {
					wantPR = &n
				}
			}
			if c.domain != wantDomain || c.skill != wantSkill {
				t.Errorf("DECIDE: %q %q; the skill run was %q %q", c.domain, c.skill, wantDomain, wantSkill)
			}
			if c.result != wantResult {
				t.Errorf("ACT result = %q, want %q (the skill's run: %+v)", c.result, wantResult, s.ran)
			}
			if fmtOpt(c.pr) != fmtOpt(wantPR) {
				t.Errorf("ACT pr_number = %s, the skill reported %s", fmtOpt(c.pr), fmtOpt(wantPR))
			}
			if fmtOpt(c.riskTier) != fmtOpt(s.risk) {
				t.Errorf("ACT risk_tier = %s, ooda printed %s", fmtOpt(c.riskTier), fmtOpt(s.risk))
			}
			if c.orient != s.orient || c.orient == "" {
				t.Errorf("ORIENT = %q, ooda printed %q", c.orient, s.orient)
			}
			// The winner's score: the scores table and the flat score,
			// as ooda printed it (4 places); none on a skip.
			for name, got := range map[string]*float64{"scores[selected_domain]": c.score, "score": c.scoreFlat} {
				switch {
				case (got == nil) != (s.score == nil):
					t.Errorf("DECIDE %s = %s, ooda printed %s", name, fmtOpt(got), fmtOpt(s.score))
				case got != nil && !within(*got, *s.score, 5e-5):
					t.Errorf("DECIDE %s = %v, ooda printed %v", name, *got, *s.score)
				}
			}
			// The confidence the skill was told it ran at (4 places).
			for name, got := range map[string]*float64{"confidence_at_decision": c.conf, "confidence": c.confFlat} {
				switch {
				case (got == nil) != (wantConf == nil):
					t.Errorf("DECIDE %s = %s, the skill ran at %s", name, fmtOpt(got), fmtOpt(wantConf))
				case got != nil && !within(*got, *wantConf, 5e-5):
					t.Errorf("DECIDE %s = %v, the skill ran at OODA_CONFIDENCE %v", name, *got, *wantConf)
				}
			}
			// COST: the newest entry is this cycle's, at what the
			// CHANGELOG says it cost (and the skill's report, when it
			// gave one); the day's total is the day's cycles.
			if c.costCycle == nil || *c.costCycle != s.n || c.cost == nil || !within(*c.cost, r.cost[s.n], 0.005) {
				t.Errorf("COST: newest ledger entry cycle %s $%s; cycle #%d cost $%v", fmtOpt(c.costCycle), fmtOpt(c.cost), s.n, r.cost[s.n])
			}
			if s.ran != nil && s.ran.cost != "-" && s.ran.cost != "null" && c.cost != nil && fmt.Sprint(*c.cost) != s.ran.cost {
				t.Errorf("COST $%v, the skill reported %s", *c.cost, s.ran.cost)
			}
			var day float64
			for _, o := range r.cycles {
				if o.n <= s.n && o.now.Format("2006-01-02") == s.now.Format("2006-01-02") {
					day += r.cost[o.n]
				}
			}
			if c.daily == nil || !within(*c.daily, day, 0.005) {
				t.Errorf("COST today = $%s, the day's cycles cost $%v", fmtOpt(c.daily), day)
			}
			if c.limit == nil || *c.limit != 5 {
				t.Errorf("COST limit = %s", fmtOpt(c.limit))
			}
		})
	}
}

// The dashboard after the seven cycles, half an hour after the last.
func TestCompat_StatusDashboardMatchesTheCycles(t *testing.T) {
	r := dashboardProject(t)
	last := r.cycles[len(r.cycles)-1]
	now := last.now.Add(30 * time.Minute)
	s := readStatus(t, r.dir, now)
	cfg := load(t, r.dir, "config.json")

	t.Run("cycle", func(t *testing.T) {
		if s.cycleCount != last.n || s.totalCycles != len(r.cycles) || s.lastCycle != last.now.Format(time.RFC3339) {
			t.Errorf("Cycle #%d (total_cycles %d), last %q; ooda recorded %d cycles, the last #%d at %s",
				s.cycleCount, s.totalCycles, s.lastCycle, len(r.cycles), last.n, last.now.Format(time.RFC3339))
		}
	})

	t.Run("velocity", func(t *testing.T) {
		// The cycles ooda recorded over the days since the first ran.
		first := r.ran[0]
		if first.cycle != r.cycles[0].n {
			t.Fatalf("the first cycle ran no skill")
		}
		want := float64(len(r.cycles)) / (now.Sub(first.now).Hours() / 24)
		if !s.hasVelocity || !within(s.velocity, want, 1e-9) {
			t.Errorf("Vel = %v/day (shown %v), want %v: %d cycles since %s", s.velocity, s.hasVelocity, want, len(r.cycles), first.now)
		}
	})

	t.Run("rows", func(t *testing.T) {
		var names []string
		for name := range s.rows {
			names = append(names, name)
		}
		if len(names) != 3 {
			t.Fatalf("rows %v, want the 3 configured domains", names)
		}
		trends, symbols := map[string]bool{}, map[string]bool{}
		for name, row := range s.rows {
			// The skill's own account: its runs of the domain, the last
			// one that wrote the state file, the confidences ooda gave it.
			var runs, wrote []ranLine
			for _, l := range r.ran {
				if l.domain == name {
					runs = append(runs, l)
					if l.mode != "fail" {
						wrote = append(wrote, l)
					}
				}
			}
			if len(wrote) == 0 {
				t.Fatalf("%s never ran; the project must run every domain", name)
			}
			w := wrote[len(wrote)-1]
			sym := map[string]string{"healthy": "✓", "degraded": "⚠"}[w.status]
			symbols[sym] = true
			score, _ := strconv.ParseFloat(w.score, 64)
			if row.symbol != sym || !row.hasScore || row.score != score || row.last != ago(now.Sub(w.now)) {
				t.Errorf("%s: %s score %v (%v) last %s; its last run wrote %s %s at %s (%s ago)",
					name, row.symbol, row.score, row.hasScore, row.last, w.status, w.score, w.now, ago(now.Sub(w.now)))
			}
			trend := "→"
			if n := len(runs); n >= 2 {
				switch d := runs[n-1].conf - runs[n-2].conf; {
				case d > 5e-5:
					trend = "↑"
				case d < -5e-5:
					trend = "↓"
				}
			}
			trends[trend] = true
			if row.trend != trend {
				t.Errorf("%s: trend %s; the skill ran at confidences %v", name, row.trend, confs(runs))
			}
			// Conf: the last confidence ooda printed for the domain.
			want, ok := 0.0, false
			for _, c := range r.cycles {
				if v, has := c.conf[name]; has {
					want, ok = v, true
				}
			}
			if !ok || !row.hasConf || !within(row.conf, want, 0.005) {
				t.Errorf("%s: Conf %v (%v); ooda last printed %v (%v)", name, row.conf, row.hasConf, want, ok)
			}
		}
		if !trends["↑"] && !trends["↓"] || !symbols["⚠"] || !symbols["✓"] {
			t.Errorf("trends %v, symbols %v: the project no longer exercises the trend and status reads", trends, symbols)
		}
	})

	t.Run("alerts", func(t *testing.T) {
		want := 0
		latest := map[string]ranLine{}
		for _, l := range r.ran {
			if l.mode != "fail" {
				latest[l.domain] = l
			}
		}
		for _, l := range latest {
			n, _ := strconv.Atoi(l.alert)
			want += n
		}
		if s.alerts != want || want == 0 {
			t.Errorf("Alerts: %d; the skills' last runs wrote %d", s.alerts, want)
		}
	})

	t.Run("actions", func(t *testing.T) {
		extracted, moved := 0, 0
		var oldest time.Time
		for _, c := range r.cycles {
			extracted += c.actions
			moved += c.moves
			if c.actions > 0 && oldest.IsZero() && !strings.HasSuffix(r.marked, fmt.Sprintf(" run %d", c.n)) {
				oldest = c.now
			}
		}
		if moved != 1 {
			t.Fatalf("ooda moved %d actions on the merge, want the one marked proposed (%s)", moved, r.marked)
		}
		// Every action extracted is pending but the one marked proposed,
		// which the merge moved to completed.
		if s.pending != extracted-1 || s.proposed != 0 {
			t.Errorf("Actions: %d pending, %d proposed; ooda extracted %d and resolved %q", s.pending, s.proposed, extracted, r.marked)
		}
		if want := now.Sub(oldest).Hours() / 24; !s.hasOldest || !within(s.oldestDays, want, 1e-9) {
			t.Errorf("Oldest: %vd (%v); the oldest pending action was extracted at %s, %vd ago", s.oldestDays, s.hasOldest, oldest, want)
		}
	})

	t.Run("saturation", func(t *testing.T) {
		// 2-A2 evaluates the cycle before the last: the run of cycles
		// without output (futile or error) that ends there.
		want := 0
		for i := len(r.cycles) - 2; i >= 0 && (r.cycles[i].typ == "futile" || r.cycles[i].typ == "error"); i-- {
			want++
		}
		halt, _ := cfg.num("saturation", "halt_threshold")
		if want == 0 || s.saturation != want || !within(s.saturationPct, float64(want)/halt, 1e-12) {
			t.Errorf("Saturation: %d (%v of the bar); the cycles before the last end in %d without output", s.saturation, s.saturationPct, want)
		}
	})

	t.Run("cost", func(t *testing.T) {
		var day float64
		for _, c := range r.cycles {
			if c.now.Format("2006-01-02") == now.Format("2006-01-02") {
				day += r.cost[c.n]
			}
		}
		limit, _ := cfg.num("cost", "daily_limit_usd")
		hours := float64(now.Hour()) + float64(now.Minute())/60
		if !s.costDateOK || !within(s.costToday, day, 0.005) || s.costLimit != limit || !within(s.costRate, day/hours, 0.005/hours) {
			t.Errorf("Cost: $%v/$%v today (date ok %v) at $%v/h; today's cycles cost $%v, $%v/h", s.costToday, s.costLimit, s.costDateOK, s.costRate, day, day/hours)
		}
	})

	t.Run("orient health", func(t *testing.T) {
		var lessons []string
		var gaps []string
		for _, c := range r.cycles {
			if c.lesson != "" {
				lessons = append(lessons, c.lesson)
			}
			gaps = append(gaps, c.gaps...)
		}
		if s.reflections != len(lessons) || len(lessons) == 0 || s.lastLesson != lessons[len(lessons)-1] {
			t.Errorf("Reflections: %d (last: %q); ooda wrote %d self-critiques, the last %q", s.reflections, s.lastLesson, len(lessons), lessons[len(lessons)-1])
		}
		// Every gap ooda recorded is unaddressed but the one resolved by hand.
		distinct := map[string]bool{}
		for _, g := range gaps {
			distinct[g] = true
		}
		if s.gapsUnaddressed != len(distinct)-1 || s.gapsLoopBreak != 0 {
			t.Errorf("Gaps: %d (%d break); ooda recorded %v, %s resolved by hand", s.gapsUnaddressed, s.gapsLoopBreak, gaps, r.closed)
		}
		if s.lensDomains != 3 {
			t.Errorf("Lens: %d/3", s.lensDomains)
		}
	})
}

func confs(runs []ranLine) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = r.conf
	}
	return out
}

// The scorecard after the seven cycles, each KPI against what the
// cycles did: the result types and qualities ooda printed (with the
// back-annotations it printed later), the PR the skill reported and the
// forge merged, the actions extracted and resolved, the day's costs, the
// goal's metric, the gaps.
func TestCompat_StatusScorecardMatchesTheCycles(t *testing.T) {
	r := dashboardProject(t)
	sc := readScorecard(t, r.dir)

	final := map[int][2]string{}
	for _, c := range r.cycles {
		final[c.n] = [2]string{c.typ, fmt.Sprint(c.quality)}
		for n, a := range c.annotated {
			final[n] = a
		}
	}
	var quality, completedN, futile, merged, held, extracted, moved float64
	for _, a := range final {
		q, _ := strconv.ParseFloat(a[1], 64)
		quality += q
		switch a[0] {
		case "pr_merged":
			completedN++
			merged++
		case "pr_merged_held":
			completedN++
			merged++
			held++
		case "futile":
			futile++
		}
	}
	n := float64(len(final))
	var prs float64
	for _, l := range r.ran {
		if l.pr != "null" {
			prs++
		}
	}
	var day float64
	last := r.cycles[len(r.cycles)-1]
	for _, c := range r.cycles {
		extracted += float64(c.actions)
		moved += float64(c.moves)
		if c.now.Format("2006-01-02") == last.now.Format("2006-01-02") {
			day += r.cost[c.n]
		}
	}
	// The goal's metric counts ran.txt's lines when the last cycle
	// measured it (2-C, before its skill ran).
	before := 0
	for _, l := range r.ran {
		if l.cycle < last.n {
			before++
		}
	}
	var fx struct {
		Goals []struct {
			Target float64 `json:"target"`
		} `json:"goals"`
	}
	if err := json.Unmarshal(readFile(t, "testdata/status-dashboard", evolve+"/goals.json"), &fx); err != nil || len(fx.Goals) != 1 {
		t.Fatalf("the fixture's goal: %v", err)
	}
	goal := float64(before) / fx.Goals[0].Target
	gaps := map[string]bool{}
	for _, c := range r.cycles {
		for _, g := range c.gaps {
			gaps[g] = true
		}
	}

	lvs := quality / n
	if held != 1 || completedN != 1 || futile != 1 {
		t.Fatalf("the project no longer exercises the scorecard: %v held, %v completed, %v futile (%v)", held, completedN, futile, final)
	}
	for _, k := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"Loop Value Score", sc.lvs, lvs},
		{"Task Completion Rate", sc.completion, completedN / n},
		{"Futile Cycle Rate", sc.futile, futile / n},
		{"PR Merge Rate", sc.mergeRate, float64(r.merged) / prs},
		{"hold rate", sc.holdRate, held / merged},
		{"Action Queue Resolution", sc.resolution, moved / extracted},
		{"Cost per Successful Cycle", sc.costPerSuccess, day / completedN},
		{"Goal Progress", sc.goalProgress, goal},
		{"Gap Resolution", sc.gapResolution, 1 / float64(len(gaps))},
	} {
		t.Run(k.name, func(t *testing.T) {
			if k.got == nil || !within(*k.got, k.want, 1e-9) {
				t.Errorf("%s = %s, the cycles give %v", k.name, fmtOpt(k.got), k.want)
			}
		})
	}
	// The counter beside the rate: 6-C5 counts every cycle whose
	// had_output is false, so a skill that failed and a cycle that ran no
	// skill both count, where the rate counts the futile result type.
	t.Run("total_futile_cycles", func(t *testing.T) {
		want := 0
		for _, c := range r.cycles {
			if c.ran == nil || c.ran.mode == "fail" {
				want++
			}
		}
		got, _ := load(t, r.dir, evolve+"/metrics.json").num("counters", "total_futile_cycles")
		if int(got) != want || want != 2 {
			t.Errorf("counters.total_futile_cycles = %v; %d cycles ran no skill or a failing one", got, want)
		}
	})
	t.Run("Verdict", func(t *testing.T) {
		if sc.entries != len(r.cycles) || sc.verdict != verdictOf(&lvs) {
			t.Errorf("Verdict %q over %d outcomes; the cycles give %q over %d", sc.verdict, sc.entries, verdictOf(&lvs), len(r.cycles))
		}
	})
}
