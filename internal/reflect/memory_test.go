package reflect

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	stdreflect "reflect"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

var memTUpdate = flag.Bool("update-memory", false, "rewrite testdata/memory golden files")

// memTFixture is the original project's principles-extraction fixture.
const memTFixture = "../../../shared/compat/ooda-loop/fixtures/principles-extraction/agent/state/evolve"

func memTCfg(names ...string) *config.Config {
	c := config.Default()
	for i, n := range names {
		c.Domains = append(c.Domains, config.Domain{Name: n, Index: i, Weight: 1})
	}
	return c
}

func memTJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func memTRead[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func memTFixtureFiles(t *testing.T) (state.Episodes, state.Principles) {
	t.Helper()
	if _, err := os.Stat(memTFixture); err != nil {
		t.Skipf("compat fixture not available: %v", err)
	}
	return memTRead[state.Episodes](t, filepath.Join(memTFixture, "episodes.json")),
		memTRead[state.Principles](t, filepath.Join(memTFixture, "principles.json"))
}

// memTUnchanged fails when a value differs from the JSON taken before the
// call: the memory functions must never write through their inputs.
func memTUnchanged(t *testing.T, what, before string, after any) {
	t.Helper()
	if got := memTJSON(t, after); got != before {
		t.Fatalf("%s was mutated:\nbefore %s\nafter  %s", what, before, got)
	}
}

func memTPrinciple(t *testing.T, ps state.Principles, id string) state.Principle {
	t.Helper()
	for _, p := range ps.Principles {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no principle %s in %s", id, memTJSON(t, ps))
	return state.Principle{}
}

// memTEpisode is a minimal episode carrying lessons, for the principle tests.
func memTEpisode(year, week int, lessons ...string) state.Episode {
	// The Monday of ISO week 1 is the Monday on or before January 4th.
	jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday())+6)%7)+7*(week-1))
	return state.Episode{ID: fmt.Sprintf("EP-%04d-W%02d", year, week), WeekStart: monday.Format("2006-01-02"),
		WeekEnd: monday.AddDate(0, 0, 6).Format("2006-01-02"), Lessons: lessons}
}

func TestStep6C4_ISOWeekIDs(t *testing.T) {
	cases := []struct {
		now              time.Time
		id, start, end   string
		year, isoWeekNum int
	}{
		// 2026 starts on a Thursday, so it has 53 ISO weeks; its last week
		// runs into 2027 and still belongs to ISO year 2026.
		{time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC), "EP-2026-W53", "2026-12-28", "2027-01-03", 2026, 53},
		{time.Date(2027, 1, 10, 23, 59, 59, 0, time.UTC), "EP-2026-W53", "2026-12-28", "2027-01-03", 2026, 53},
		{time.Date(2027, 1, 11, 0, 0, 0, 0, time.UTC), "EP-2027-W01", "2027-01-04", "2027-01-10", 2027, 1},
		{time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC), "EP-2026-W52", "2026-12-21", "2026-12-27", 2026, 52},
		// 2025-12-29 (a Monday) begins ISO week 2026-W01.
		{time.Date(2026, 1, 7, 0, 0, 0, 0, time.UTC), "EP-2026-W01", "2025-12-29", "2026-01-04", 2026, 1},
		{time.Date(2026, 4, 13, 8, 0, 0, 0, time.UTC), "EP-2026-W15", "2026-04-06", "2026-04-12", 2026, 15},
		// A Monday morning east of UTC is still Sunday in UTC: the week
		// before that Sunday's week is the completed one.
		{time.Date(2026, 4, 13, 8, 0, 0, 0, time.FixedZone("UTC+14", 14*3600)), "EP-2026-W14", "2026-03-30", "2026-04-05", 2026, 14},
	}
	for _, c := range cases {
		start, end := memPreviousWeek(c.now)
		y, w := start.ISOWeek()
		if got := memEpisodeID(start); got != c.id || y != c.year || w != c.isoWeekNum {
			t.Errorf("%s: id %s (ISO %d-%d), want %s", c.now, got, y, w, c.id)
		}
		if start.Format("2006-01-02") != c.start || end.AddDate(0, 0, -1).Format("2006-01-02") != c.end {
			t.Errorf("%s: week %s..%s, want %s..%s", c.now, start, end, c.start, c.end)
		}
	}
}

func TestStep6C4_OneEpisodePerCompletedWeek(t *testing.T) {
	cfg := memTCfg("api", "docs", "backlog")
	domains := []string{"api", "api", "docs", "backlog", "api"}
	// Four weeks with cycles around New Year (2026-W52, 2026-W53 across the
	// calendar boundary, 2027-W01, 2027-W03) and one without (2027-W02);
	// the clock is called every hour, several times an hour, cycle or not.
	begin := time.Date(2026, 12, 21, 0, 0, 0, 0, time.UTC)
	stop := time.Date(2027, 1, 26, 12, 0, 0, 0, time.UTC)
	idle := func(t time.Time) bool { y, w := t.ISOWeek(); return y == 2027 && w == 2 }
	var (
		eps     state.Episodes
		records []CycleRecord
		written []string
		want    = map[string][]int{} // episode id -> cycles of its week
		cycle   int
		calls   int
	)
	for now := begin; now.Before(stop); now = now.Add(time.Hour) {
		// A cycle every 5 hours (so at midnight on Monday 2027-01-04, the
		// first instant of W01), plus the last second of W53.
		var at []time.Time
		if now.Hour()%5 == 0 && !idle(now) {
			at = append(at, now)
		}
		if now.Equal(time.Date(2027, 1, 3, 23, 0, 0, 0, time.UTC)) {
			at = append(at, time.Date(2027, 1, 3, 23, 59, 59, 0, time.UTC))
		}
		for _, ts := range at {
			cycle++
			records = append(records, CycleRecord{Cycle: cycle, Timestamp: ts, Domain: domains[cycle%len(domains)],
				Score: float64(cycle % 17), ResultType: "observe"})
			y, w := ts.ISOWeek()
			id := fmt.Sprintf("EP-%04d-W%02d", y, w)
			want[id] = append(want[id], cycle)
		}
		for range 3 {
			calls++
			before := memTJSON(t, eps)
			next, ep := WriteEpisode(EpisodeInput{Now: now, Config: cfg, Episodes: eps, Log: records})
			memTUnchanged(t, "episodes", before, eps)
			if ep != nil {
				written = append(written, ep.ID)
				// Written during the week after its own.
				if s, _ := memPreviousWeek(now); ep.WeekStart != s.Format("2006-01-02") {
					t.Fatalf("%s written at %s", ep.ID, now)
				}
			}
			eps = next
		}
	}
	wantIDs := []string{"EP-2026-W52", "EP-2026-W53", "EP-2027-W01", "EP-2027-W03"}
	if strings.Join(written, ",") != strings.Join(wantIDs, ",") {
		t.Fatalf("written %v over %d calls, want %v", written, calls, wantIDs)
	}
	if len(eps.Episodes) != len(wantIDs) {
		t.Fatalf("%d episodes, want %d", len(eps.Episodes), len(wantIDs))
	}
	for i, ep := range eps.Episodes {
		cycles := want[ep.ID]
		if ep.ID != wantIDs[i] || ep.TotalCycles != len(cycles) || ep.CycleRange[0] != cycles[0] || ep.CycleRange[1] != cycles[len(cycles)-1] {
			t.Errorf("episode %d = %s, %d cycles %v; want %s, %d cycles %d..%d",
				i, ep.ID, ep.TotalCycles, ep.CycleRange, wantIDs[i], len(cycles), cycles[0], cycles[len(cycles)-1])
		}
		n := 0
		for _, v := range ep.DomainsSelected {
			n += v
		}
		if n != ep.TotalCycles {
			t.Errorf("%s: %d selections for %d cycles", ep.ID, n, ep.TotalCycles)
		}
	}
	w53 := eps.Episodes[1]
	if w53.WeekStart != "2026-12-28" || w53.WeekEnd != "2027-01-03" {
		t.Errorf("W53 spans %s..%s", w53.WeekStart, w53.WeekEnd)
	}
	// The last second of Sunday belongs to W53, the first of Monday to W01.
	if last, first := want["EP-2026-W53"], want["EP-2027-W01"]; w53.CycleRange[1] != last[len(last)-1] || eps.Episodes[2].CycleRange[0] != first[0] {
		t.Errorf("boundary cycles misplaced: W53 %v, W01 %v", w53.CycleRange, eps.Episodes[2].CycleRange)
	}
	if _, ok := want["EP-2027-W02"]; ok {
		t.Fatal("test setup: W02 should be idle")
	}
}

func TestStep6C4_OnlyTheMostRecentCompletedWeek(t *testing.T) {
	// Cycles in 2026-W15, then no call until 2026-W17: W16 is the most
	// recently completed week and had no cycles, so nothing is written,
	// and W15 is never summarised late.
	rec := []CycleRecord{{Cycle: 1, Timestamp: time.Date(2026, 4, 8, 10, 0, 0, 0, time.UTC), Domain: "api"}}
	eps, ep := WriteEpisode(EpisodeInput{Now: time.Date(2026, 4, 22, 10, 0, 0, 0, time.UTC), Log: rec})
	if ep != nil || len(eps.Episodes) != 0 {
		t.Fatalf("wrote %v", memTJSON(t, eps))
	}
	// During W16 it is written; an existing id is never rewritten.
	eps, ep = WriteEpisode(EpisodeInput{Now: time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC), Log: rec})
	if ep == nil || ep.ID != "EP-2026-W15" {
		t.Fatalf("got %v", ep)
	}
	rec = append(rec, CycleRecord{Cycle: 2, Timestamp: time.Date(2026, 4, 9, 10, 0, 0, 0, time.UTC), Domain: "docs"})
	again, ep := WriteEpisode(EpisodeInput{Now: time.Date(2026, 4, 19, 0, 0, 0, 0, time.UTC), Episodes: eps, Log: rec})
	if ep != nil || memTJSON(t, again) != memTJSON(t, eps) {
		t.Fatalf("rewrote %v", memTJSON(t, again))
	}
}

func TestStep6C4_EpisodeContent(t *testing.T) {
	at := func(day, hour int) time.Time { return time.Date(2026, 4, day, hour, 0, 0, 0, time.UTC) }
	pr := func(n int) *int { return &n }
	// Week 2026-W15 is Monday 6 April to Sunday 12 April.
	log := []CycleRecord{
		{Cycle: 40, Timestamp: at(5, 23), Domain: "docs", Score: 99, ResultType: "pr_created"}, // previous week
		{Cycle: 41, Timestamp: at(6, 1), Domain: "api", Score: 12.5, ResultType: "futile"},
		{Cycle: 42, Timestamp: at(6, 5), Domain: "api", Score: 11.25, ResultType: "futile"},
		{Cycle: 43, Timestamp: at(6, 9), Skip: true, Reason: "min score", ResultType: ""},
		{Cycle: 44, Timestamp: at(7, 9), Domain: "api", Score: 13.1234, ResultType: "futile"},
		{Cycle: 45, Timestamp: at(8, 9), Domain: "docs", Score: 9, ResultType: "pr_created", PRNumber: pr(7)},
		{Cycle: 46, Timestamp: at(9, 9), Domain: "api", Score: 12.5, ResultType: "pr_merged_held"},
		{Cycle: 47, Timestamp: at(10, 9), Domain: "api", Score: 8, ResultType: "pr_merged"},
		{Cycle: 48, Timestamp: at(11, 9), Domain: "backlog", Score: 7, ResultType: "pr_rejected"},
		{Cycle: 49, Timestamp: at(12, 23), Domain: "api", Score: 6, ResultType: "action_extracted"},
		{Cycle: 50, Timestamp: at(13, 0), Domain: "docs", Score: 50, ResultType: "pr_created"}, // next week
	}
	refl := []state.Reflection{
		{Timestamp: "2026-04-05T23:00:00Z", Lesson: "Too early to count."},
		{Timestamp: "2026-04-06T01:00:00Z", Lesson: "When api yields nothing, lower its priority until its state changes."},
		{Timestamp: "2026-04-06T05:00:00Z", Lesson: "When api yields nothing twice running, skip it for 3 cycles."},
		{Timestamp: "2026-04-07T09:00:00Z", Lesson: "When api yields nothing twice running, skip it for 3 cycles."},
		{Timestamp: "2026-04-08T09:00:00Z", Lesson: ""},
		{Timestamp: "not a time", Lesson: "Unplaceable."},
		{Timestamp: "2026-04-11T09:00:00Z", Lesson: "When a backlog change is rejected, study the review before opening another."},
		{Timestamp: "2026-04-13T00:00:00Z", Lesson: "Too late to count."},
	}
	existing := state.Episodes{Episodes: []state.Episode{
		memTEpisode(2026, 13, "older"), memTEpisode(2026, 12, "oldest"), memTEpisode(2026, 14, "old"),
	}}
	cfg := memTCfg("api", "docs", "backlog")
	cfg.Memory.EpisodeRetentionWeeks = 3
	in := EpisodeInput{Now: time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC), Config: cfg, Episodes: existing, Log: log,
		Reflections: refl, Confidence: map[string]float64{"api": 0.8, "docs": 0.7}, GapsFound: 2, ContrarianChecks: 1}
	before := memTJSON(t, in)
	eps, ep := WriteEpisode(in)
	memTUnchanged(t, "input", before, in)
	if ep == nil {
		t.Fatal("no episode")
	}
	// Retention 3: the oldest week (W12, second in file order) goes; file
	// order is otherwise kept.
	var ids []string
	for _, e := range eps.Episodes {
		ids = append(ids, e.ID)
	}
	if got := strings.Join(ids, ","); got != "EP-2026-W13,EP-2026-W14,EP-2026-W15" {
		t.Errorf("kept %s", got)
	}
	// The returned episode is a copy, not an alias of the stored one.
	ep.Lessons[0] = "changed"
	ep.DomainsSelected["api"] = 100
	in.Confidence["api"] = 0
	got := memTJSON(t, eps.Episodes[2])
	golden := filepath.Join("testdata", "memory", "episode-w15.golden.json")
	if *memTUpdate {
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got+"\n" != string(want) {
		t.Errorf("episode differs from %s:\n%s", golden, got)
	}
}

func TestStep6C4_EpisodePatternsAndSkips(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 4, 7, h, 0, 0, 0, time.UTC) }
	now := time.Date(2026, 4, 13, 1, 0, 0, 0, time.UTC)
	// Futile, skip, futile, futile: the skip neither breaks nor extends the
	// streak; 3 of 5 selections (60 %) is a monopoly.
	log := []CycleRecord{
		{Cycle: 1, Timestamp: at(1), Domain: "a", ResultType: "futile"},
		{Cycle: 2, Timestamp: at(2), Skip: true},
		{Cycle: 3, Timestamp: at(3), Domain: "b", ResultType: "futile"},
		{Cycle: 4, Timestamp: at(4), Domain: "a", ResultType: "futile"},
		{Cycle: 5, Timestamp: at(5), Domain: "a", ResultType: "observe"},
		{Cycle: 6, Timestamp: at(6), Domain: "c", ResultType: "futile"},
	}
	_, ep := WriteEpisode(EpisodeInput{Now: now, Log: log})
	if got := strings.Join(ep.PatternsDetected, ","); got != "a monopoly,futile streak" {
		t.Errorf("patterns %q", got)
	}
	if ep.TotalCycles != 6 || len(ep.KeyDecisions) != 3 {
		t.Errorf("cycles %d, key decisions %v", ep.TotalCycles, ep.KeyDecisions)
	}
	// Below 60 % and an interrupted streak: no pattern.
	log[4].Domain, log[3].ResultType = "b", "observe"
	_, ep = WriteEpisode(EpisodeInput{Now: now, Log: log})
	if len(ep.PatternsDetected) != 0 || ep.PatternsDetected == nil {
		t.Errorf("patterns %#v", ep.PatternsDetected)
	}
	// A week of skips is still a week with cycles.
	_, ep = WriteEpisode(EpisodeInput{Now: now, Log: []CycleRecord{{Cycle: 9, Timestamp: at(9), Skip: true}}})
	if ep == nil || ep.Summary != "EP-2026-W15: 1 cycle (#9), all skipped; PRs 0 created, 0 merged, 0 rejected." {
		t.Errorf("skip week: %+v", ep)
	}
	b, _ := json.Marshal(ep)
	for _, key := range []string{`"key_decisions":[]`, `"lessons":[]`, `"domains_selected":{}`, `"patterns_detected":[]`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("%s missing in %s", key, b)
		}
	}
}

func TestStep6C4_CycleRecordsMergeOutcomesAndLog(t *testing.T) {
	sc := func(v float64) *float64 { return &v }
	pr := func(n int) *int { return &n }
	log := []state.DecisionEntry{
		{Cycle: 3, Timestamp: "2026-04-08T10:00:00Z", SelectedDomain: "api", Score: sc(4.5), ResultType: "pr_created", PRNumber: pr(9)},
		{Cycle: 4, Timestamp: "2026-04-08T11:00:00Z", Action: "skip", Reason: "idle"},
	}
	outs := []state.Outcome{
		{CycleID: 2, Timestamp: "2026-04-08T09:00:00Z", Domain: "docs", ResultType: "futile"},
		{CycleID: 3, Timestamp: "2026-04-08T10:00:00Z", Domain: "api", ResultType: "pr_merged", PRNumber: pr(9)},
	}
	before := memTJSON(t, []any{log, outs})
	got := CycleRecords(log, outs)
	memTUnchanged(t, "inputs", before, []any{log, outs})
	if len(got) != 3 || got[0].Cycle != 2 || got[1].Cycle != 3 || got[2].Cycle != 4 {
		t.Fatalf("records %+v", got)
	}
	if got[1].ResultType != "pr_merged" || got[1].Score != 4.5 || *got[1].PRNumber != 9 || got[1].PRNumber == log[0].PRNumber {
		t.Errorf("merged record %+v", got[1])
	}
	if !got[2].Skip || got[2].Reason != "idle" || got[0].Domain != "docs" || got[0].Timestamp.IsZero() {
		t.Errorf("records %+v", got)
	}
}

func TestStep6C4_PrinciplesFromTheFixture(t *testing.T) {
	eps, ps := memTFixtureFiles(t)
	in := PrincipleInput{Now: time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC), Config: memTCfg()}
	before := memTJSON(t, []any{eps, ps})
	got, res := ExtractPrinciples(eps, ps, in)
	memTUnchanged(t, "fixture", before, []any{eps, ps})
	if len(got.Principles) != 1 {
		t.Fatalf("want exactly one principle, got %s", memTJSON(t, got))
	}
	p := got.Principles[0]
	if p.ID != "P-1" || p.Kind != "" || p.Confidence != 0.3 || p.Text != "service_health dominated under logarithmic staleness" ||
		strings.Join(p.SourceEpisodes, ",") != "EP-2026-W15,EP-2026-W16" || p.Occurrences != 2 ||
		p.LastConfirmedEp != "EP-2026-W16" || p.CreatedAt != "2026-04-27T09:00:00Z" {
		t.Errorf("principle %s", memTJSON(t, p))
	}
	if strings.Join(res.Created, ",") != "P-1" || res.Lessons != 14 || len(res.Candidates)+len(res.Confirmed)+len(res.Decayed) != 0 {
		t.Errorf("result %+v", res)
	}
	// Every later cycle re-runs extraction: nothing is added, nothing is
	// confirmed again by the same episodes, nothing decays.
	first := memTJSON(t, got)
	for i := range 5 {
		in.Now = in.Now.Add(time.Hour)
		again, res := ExtractPrinciples(eps, got, in)
		if memTJSON(t, again) != first {
			t.Fatalf("call %d changed principles:\n%s", i+2, memTJSON(t, again))
		}
		if !stdreflect.DeepEqual(res, PrincipleResult{Lessons: 14}) {
			t.Fatalf("call %d did %+v", i+2, res)
		}
		got = again
	}
}

func TestStep6C4_ConfirmationAndDecay(t *testing.T) {
	eps, ps := memTFixtureFiles(t)
	in := PrincipleInput{Now: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC), Config: memTCfg()}
	ps, _ = ExtractPrinciples(eps, ps, in)

	// A new episode repeating the lesson confirms it once (+0.1), however
	// many of its lessons match and however many cycles run.
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 18,
		"service_health dominated scoring again under logarithmic staleness",
		"logarithmic staleness: service_health dominated"))
	for i := range 3 {
		var res PrincipleResult
		ps, res = ExtractPrinciples(eps, ps, in)
		p := memTPrinciple(t, ps, "P-1")
		if p.Confidence != 0.4 || strings.Join(p.SourceEpisodes, ",") != "EP-2026-W15,EP-2026-W16,EP-2026-W18" ||
			p.LastConfirmedEp != "EP-2026-W18" || p.Occurrences != 3 {
			t.Fatalf("call %d: %s", i, memTJSON(t, p))
		}
		if (i == 0) != (strings.Join(res.Confirmed, ",") == "P-1") || len(res.Created) != 0 {
			t.Fatalf("call %d: %+v", i, res)
		}
	}

	// A hand-written principle (no provenance) is confirmed by the newest
	// matching episode only; confirmation caps at 1.0.
	ps.Principles = append(ps.Principles, state.Principle{ID: "P-7", Text: "Keep pull requests small", Confidence: 1.0})
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 19, "keep pull requests small and focused"))
	ps, res := ExtractPrinciples(eps, ps, in)
	if p := memTPrinciple(t, ps, "P-7"); p.Confidence != 1.0 || p.LastConfirmedEp != "EP-2026-W19" || strings.Join(res.Confirmed, ",") != "P-7" {
		t.Fatalf("P-7 %s, %+v", memTJSON(t, p), res)
	}
	// One with no provenance at all never decays: there is no evidence
	// trail to fade.
	ps.Principles = append(ps.Principles, state.Principle{ID: "P-8", Text: "Document every flag", Confidence: 0.5})

	// Ten episodes without the lesson: P-1 (last confirmed W18) falls out
	// of the window and loses 0.05 per call; it survives at 0.1 and goes
	// below it.
	for w := 20; w < 30; w++ {
		eps.Episodes = append(eps.Episodes, memTEpisode(2026, w, fmt.Sprintf("quirk%d", w)))
	}
	want := []float64{0.35, 0.3, 0.25, 0.2, 0.15, 0.1}
	for i, c := range want {
		ps, res = ExtractPrinciples(eps, ps, in)
		if p := memTPrinciple(t, ps, "P-1"); p.Confidence != c {
			t.Fatalf("call %d: P-1 at %v, want %v", i, p.Confidence, c)
		}
		if !stdreflect.DeepEqual(res.Decayed, []string{"P-1", "P-7"}) {
			t.Fatalf("call %d: decayed %v", i, res.Decayed)
		}
	}
	ps, res = ExtractPrinciples(eps, ps, in)
	if len(ps.Principles) != 2 || strings.Join(res.Removed, ",") != "P-1" {
		t.Fatalf("after decay: %s, %+v", memTJSON(t, ps), res)
	}
	if p := memTPrinciple(t, ps, "P-8"); p.Confidence != 0.5 {
		t.Errorf("hand-written principle decayed: %v", p.Confidence)
	}
	// The old evidence is outside the window: the principle is not reborn.
	again, res := ExtractPrinciples(eps, ps, in)
	if len(again.Principles) != 2 || len(res.Created) != 0 {
		t.Fatalf("reborn: %s", memTJSON(t, again))
	}
	// Fresh evidence brings it back with a new id.
	eps.Episodes = append(eps.Episodes,
		memTEpisode(2026, 30, "service_health dominated under logarithmic staleness"),
		memTEpisode(2026, 31, "service_health dominated under logarithmic staleness"))
	again, res = ExtractPrinciples(eps, ps, in)
	if strings.Join(res.Created, ",") != "P-9" {
		t.Fatalf("created %v in %s", res.Created, memTJSON(t, again))
	}
	if p := memTPrinciple(t, again, "P-9"); strings.Join(p.SourceEpisodes, ",") != "EP-2026-W15,EP-2026-W16,EP-2026-W18,EP-2026-W30,EP-2026-W31" {
		t.Errorf("sources %v", p.SourceEpisodes)
	}
}

func TestStep6C4_PrincipleCap(t *testing.T) {
	var ps state.Principles
	for i := 1; i <= 52; i++ {
		c := 0.5
		if i == 10 || i == 20 {
			c = 0.2
		}
		ps.Principles = append(ps.Principles, state.Principle{ID: fmt.Sprintf("P-%d", i), Text: fmt.Sprintf("rule %d", i), Confidence: c})
	}
	got, res := ExtractPrinciples(state.Episodes{}, ps, PrincipleInput{Now: time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)})
	if len(got.Principles) != PrinciplesCap || strings.Join(res.Dropped, ",") != "P-20,P-10" {
		t.Fatalf("%d principles, dropped %v", len(got.Principles), res.Dropped)
	}
}

func TestStep6C4_ClusterFallbackCandidates(t *testing.T) {
	eps := memTRead[state.Episodes](t, filepath.Join("testdata", "memory", "cluster-episodes.json"))
	in := PrincipleInput{Now: time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC), Config: memTCfg()}

	// Fewer than 10 lessons: no fallback.
	few := state.Episodes{Episodes: eps.Episodes[:2]}
	if got, res := ExtractPrinciples(few, state.Principles{}, in); len(got.Principles) != 0 || res.Lessons != 8 {
		t.Fatalf("fallback under 10 lessons: %s", memTJSON(t, got))
	}

	// 12 lessons, none recurring at the similarity threshold: the three
	// largest first-three-token clusters (3, 2 and 2 lessons; the fourth
	// 2-lesson cluster appears later) each propose their latest lesson.
	before := memTJSON(t, eps)
	ps, res := ExtractPrinciples(eps, state.Principles{}, in)
	memTUnchanged(t, "episodes", before, eps)
	want := []string{
		"When backlog yields nothing after a refactor, rescan its state file.",
		"When api fails, check the credentials before anything else.",
		"Wait for the open docs review to settle first.",
	}
	if len(ps.Principles) != 3 || len(res.Created) != 0 || strings.Join(res.Candidates, ",") != "P-1,P-2,P-3" || res.Lessons != 12 {
		t.Fatalf("%s\n%+v", memTJSON(t, ps), res)
	}
	for i, p := range ps.Principles {
		if p.Kind != "candidate" || p.Confidence != 0.15 || p.Text != want[i] {
			t.Errorf("candidate %d: %s", i, memTJSON(t, p))
		}
	}
	if p := ps.Principles[0]; p.Occurrences != 3 || strings.Join(p.SourceEpisodes, ",") != "EP-2026-W10,EP-2026-W11,EP-2026-W12" {
		t.Errorf("sources %s", memTJSON(t, p))
	}
	// Running again adds nothing: each candidate already exists.
	again, res := ExtractPrinciples(eps, ps, in)
	if memTJSON(t, again) != memTJSON(t, ps) || len(res.Candidates) != 0 {
		t.Fatalf("second call: %+v", res)
	}

	// A new episode repeating a candidate's lesson confirms it into a
	// principle; as a principle came out, no new candidates are proposed.
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 13, "When api fails, check the credentials before anything else runs."))
	ps, res = ExtractPrinciples(eps, ps, in)
	p := memTPrinciple(t, ps, "P-2")
	if p.Kind != "" || p.Confidence != 0.3 || strings.Join(res.Promoted, ",") != "P-2" || len(res.Candidates) != 0 || len(ps.Principles) != 3 {
		t.Fatalf("promotion: %s\n%+v", memTJSON(t, ps), res)
	}

	// With min occurrences 3 the fixture's pair does not make a principle,
	// and the fallback proposes it as a candidate instead.
	if fx, _ := os.Stat(memTFixture); fx != nil {
		feps, fps := memTFixtureFiles(t)
		cfg := memTCfg()
		cfg.Memory.PrincipleMinOccurrences = 3
		got, res := ExtractPrinciples(feps, fps, PrincipleInput{Now: in.Now, Config: cfg})
		if len(got.Principles) != 1 || got.Principles[0].Kind != "candidate" ||
			got.Principles[0].Text != "service_health dominated under logarithmic staleness" || len(res.Created) != 0 {
			t.Errorf("min occurrences 3: %s", memTJSON(t, got))
		}
	}
}

func TestStep6C4_ContrarianCheck(t *testing.T) {
	cfg := memTCfg("api", "docs", "backlog", "ux", "paused")
	cfg.Domains[4].Status = "paused"
	entry := func(c int, d string) state.DecisionEntry {
		return state.DecisionEntry{Cycle: c, SelectedDomain: d, Action: "execute"}
	}
	// Cycles 1-3 spread out; then api wins 5 of the last 7 decisions, with
	// a skip in between that does not count as a decision.
	var log []state.DecisionEntry
	for i, d := range []string{"docs", "ux", "docs", "api", "backlog", "api", "api", "docs", "api"} {
		log = append(log, entry(i+1, d))
	}
	log = append(log, state.DecisionEntry{Cycle: 10, Action: "skip", Reason: "min score"}, entry(11, "api"))
	check := func(cycle int, log []state.DecisionEntry) (*state.Intervention, string) {
		before := memTJSON(t, log)
		iv, why := ContrarianCheck(ContrarianInput{Cycle: cycle, Config: cfg, Log: log})
		memTUnchanged(t, "log", before, log)
		return iv, why
	}

	upTo := func(c int) []state.DecisionEntry {
		var out []state.DecisionEntry
		for _, e := range log {
			if e.Cycle <= c {
				out = append(out, e)
			}
		}
		return out
	}
	// At cycle 10 the last 7 decisions (cycles 3-9) hold api 4 times: no.
	if iv, why := check(10, upTo(10)); iv != nil || !strings.Contains(why, "no domain won 5") {
		t.Fatalf("cycle 10: %v %q", iv, why)
	}
	// Cycles 9 and 11 are not contrarian cycles, whatever the log says.
	for _, c := range []int{9, 11} {
		if iv, why := check(c, upTo(11)); iv != nil || !strings.Contains(why, "every 10 cycles") {
			t.Fatalf("cycle %d: %v %q", c, iv, why)
		}
	}
	// Add api at 12..20 (20 has a full window): api wins; backlog was
	// selected least among the active domains (once; "paused" is inactive).
	for c := 12; c <= 20; c++ {
		log = append(log, entry(c, "api"))
	}
	iv, why := check(20, log)
	want := state.Intervention{Domain: "backlog", Delta: 1.0, Type: "contrarian", CreatedAtCycle: 20, ExpiresAfterCycles: 3,
		Reason: "Contrarian check at cycle 20: api won 7 of the last 7 decisions; backlog selected least (1)",
		Extra:  state.Extra{"dominant_domain": json.RawMessage(`"api"`)}}
	if iv == nil || !stdreflect.DeepEqual(*iv, want) || why != want.Reason {
		t.Fatalf("cycle 20: %+v %q", iv, why)
	}
	// Ties go to config order: docs and ux never selected, docs first.
	var flat []state.DecisionEntry
	for c := 1; c <= 10; c++ {
		d := "api"
		if c == 4 {
			d = "backlog"
		}
		flat = append(flat, entry(c, d))
	}
	if iv, _ := check(10, flat); iv == nil || iv.Domain != "docs" || iv.CreatedAtCycle != 10 {
		t.Fatalf("tie: %+v", iv)
	}
	// The interval comes from the config.
	cfg.Memory.ContrarianCheckInterval = 4
	if iv, _ := check(8, flat[:8]); iv == nil || iv.CreatedAtCycle != 8 {
		t.Fatalf("interval 4: %+v", iv)
	}
	cfg.Memory.ContrarianCheckInterval = 10
	// With a single active domain there is no one to boost.
	solo := memTCfg("api")
	if iv, why := ContrarianCheck(ContrarianInput{Cycle: 10, Config: solo, Log: flat}); iv != nil || !strings.Contains(why, "no other active domain") {
		t.Fatalf("solo: %v %q", iv, why)
	}
}

// A principle confirmed every week keeps only its newest
// SourceEpisodesCap source episodes, while occurrences goes on counting; an
// episode cut from the list cannot confirm it a second time.
func TestStep6C4_SourceEpisodesAreCapped(t *testing.T) {
	const lesson = "When backlog yields nothing, rescan its state file."
	var eps state.Episodes
	var ids []string
	for w := 1; w <= 60; w++ {
		year, week := 2024, w
		if w > 52 {
			year, week = 2025, w-52
		}
		ep := memTEpisode(year, week, lesson)
		eps.Episodes = append(eps.Episodes, ep)
		ids = append(ids, ep.ID)
	}
	ps := state.Principles{Principles: []state.Principle{{ID: "P-1", Text: lesson, Confidence: 0.9, SourceEpisodes: ids, Occurrences: 60}}}
	fresh := memTEpisode(2025, 9, lesson)
	eps.Episodes = append(eps.Episodes, fresh)
	in := PrincipleInput{Now: time.Date(2025, 3, 5, 9, 0, 0, 0, time.UTC), Config: memTCfg()}

	got, res := ExtractPrinciples(eps, ps, in)
	p := memTPrinciple(t, got, "P-1")
	if len(p.SourceEpisodes) != SourceEpisodesCap || p.SourceEpisodes[SourceEpisodesCap-1] != fresh.ID || p.SourceEpisodes[0] != ids[60-SourceEpisodesCap+1] {
		t.Fatalf("source_episodes (%d) = %v", len(p.SourceEpisodes), p.SourceEpisodes)
	}
	if p.Occurrences != 61 || strings.Join(res.Confirmed, ",") != "P-1" || strings.Join(res.Trimmed, ",") != "P-1" {
		t.Fatalf("occurrences %d, result %+v", p.Occurrences, res)
	}
	again, res := ExtractPrinciples(eps, got, in)
	if p := memTPrinciple(t, again, "P-1"); p.Occurrences != 61 || len(p.SourceEpisodes) != SourceEpisodesCap || len(res.Confirmed) != 0 || len(res.Trimmed) != 0 {
		t.Fatalf("an episode cut from the list confirmed again: %s, %+v", memTJSON(t, p), res)
	}
}

// 6-C4: the contrarian check's decisions are the entries that chose a
// domain by this cycle (not skips, not later cycles), its window the last
// seven of them, in log order; stopping early stops the walk.
func TestStep6C4_ContrarianDecisions(t *testing.T) {
	var log []state.DecisionEntry
	for c := 1; c <= 12; c++ {
		e := state.DecisionEntry{Cycle: c, SelectedDomain: fmt.Sprintf("d%d", c)}
		if c == 4 {
			e.SelectedDomain = "" // observe-only: no domain chosen
		}
		log = append(log, e)
	}
	var got []string
	for e, in := range ContrarianDecisions(log, 10) {
		got = append(got, fmt.Sprintf("%s:%v", e.SelectedDomain, in))
	}
	if ContrarianWindow != 7 {
		t.Fatalf("ContrarianWindow is %d; the case assumes 7", ContrarianWindow)
	}
	want := []string{"d1:false", "d2:false", "d3:true", "d5:true", "d6:true", "d7:true", "d8:true", "d9:true", "d10:true"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("decisions %v\nwant      %v", got, want)
	}
	n := 0
	for range ContrarianDecisions(log, 10) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("the walk went on after the loop stopped: %d", n)
	}
}
