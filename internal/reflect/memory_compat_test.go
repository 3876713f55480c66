package reflect

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// memCTPrinciples decodes a principles.json of the original project's
// shapes as the store does.
func memCTPrinciples(t *testing.T, doc string) state.Principles {
	t.Helper()
	var ps state.Principles
	if err := json.Unmarshal([]byte(doc), &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// memCTWeeks is one episode per ISO week of 2026 from..to, each with the
// given lessons.
func memCTWeeks(from, to int, lessons ...string) []state.Episode {
	var out []state.Episode
	for w := from; w <= to; w++ {
		out = append(out, memTEpisode(2026, w, lessons...))
	}
	return out
}

// memCTRun runs extraction once per cycle, n cycles, and returns the last
// principles.
func memCTRun(eps state.Episodes, ps state.Principles, now time.Time, n int) (state.Principles, PrincipleResult) {
	var res PrincipleResult
	for range n {
		ps, res = ExtractPrinciples(eps, ps, PrincipleInput{Now: now, Config: memTCfg()})
	}
	return ps, res
}

// A principle of evolve's shape, sourced from week-year episodes and
// confirmed last week (last_confirmed), is never decayed away, however many
// cycles run; its old weeks no longer in the window do not matter.
func TestCompatPrinciples_ConfirmedLastWeekNeverDecays(t *testing.T) {
	ps := memCTPrinciples(t, `{"principles": [
	  {"text": "backlog was neglected for weeks", "confidence": 0.5, "source_episodes": ["2026-W02", "2026-W03"],
	   "created_at": "2026-01-20T10:00:00Z", "last_confirmed": "2026-04-22T10:00:00Z"}]}`)
	eps := state.Episodes{Episodes: memCTWeeks(4, 16)}
	got, res := memCTRun(eps, ps, time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC), 30)
	if len(got.Principles) != 1 || got.Principles[0].Confidence != 0.5 || len(res.Decayed) != 0 {
		t.Fatalf("decayed after 30 cycles: %s, %+v", memTJSON(t, got), res)
	}
}

// Week-year sources are the episodes of those weeks: a recent one keeps the
// principle from decaying, and the episodes it already counts do not
// confirm it a second time.
func TestCompatPrinciples_WeekYearSourcesAreEpisodes(t *testing.T) {
	const lesson = "service_health dominated under logarithmic staleness"
	ps := memCTPrinciples(t, `{"principles": [
	  {"text": "`+lesson+`", "confidence": 0.3, "source_episodes": ["2026-W15", "2026-W16"],
	   "created_at": "2026-04-20T10:00:00Z"}]}`)
	eps := state.Episodes{Episodes: append(memCTWeeks(7, 14), memCTWeeks(15, 16, lesson)...)}
	got, res := memCTRun(eps, ps, time.Date(2026, 4, 21, 9, 0, 0, 0, time.UTC), 5)
	p := got.Principles[0]
	if p.Confidence != 0.3 || len(res.Confirmed)+len(res.Decayed)+len(res.Created) != 0 {
		t.Fatalf("counted again or decayed: %s, %+v", memTJSON(t, got), res)
	}
}

// last_confirmed dates the original's own confirmations: an episode whose
// week had ended by then was counted already and does not confirm again;
// a later one does, once, written in the entry's own fields.
func TestCompatPrinciples_LastConfirmedIsNotCountedAgain(t *testing.T) {
	const lesson = "service_health dominated under logarithmic staleness"
	ps := memCTPrinciples(t, `{"principles": [
	  {"text": "`+lesson+`", "confidence": 0.4, "source_episodes": ["2026-W15", "2026-W16"],
	   "created_at": "2026-04-20T10:00:00Z", "last_confirmed": "2026-04-27T10:00:00Z"}]}`)
	eps := state.Episodes{Episodes: memCTWeeks(15, 17, lesson)} // W17 ended 2026-04-27 00:00
	now := time.Date(2026, 4, 28, 9, 0, 0, 0, time.UTC)
	got, res := memCTRun(eps, ps, now, 3)
	if got.Principles[0].Confidence != 0.4 || len(res.Confirmed) != 0 {
		t.Fatalf("W17 confirmed a second time: %s, %+v", memTJSON(t, got), res)
	}
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 18, lesson))
	now = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	got, _ = memCTRun(eps, got, now, 3)
	b, _ := json.Marshal(got.Principles[0])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["confidence"] != 0.5 || m["last_confirmed"] != "2026-05-04T09:00:00Z" ||
		fmt.Sprint(m["source_episodes"]) != "[2026-W15 2026-W16 2026-W18]" {
		t.Fatalf("W18 confirmation: %s", b)
	}
}

// Manual principles decay as the original's do: one not confirmed within
// the last 10 episodes loses 0.05 a cycle and goes below 0.1; one seeded or
// confirmed inside the window stays.
func TestCompatPrinciples_ManualDecaysAsTheOriginals(t *testing.T) {
	ps := memCTPrinciples(t, `{"principles": [
	  {"text": "Never auto-merge on Fridays", "confidence": 0.5, "kind": "manual",
	   "created_at": "2026-01-05T08:00:00Z", "last_confirmed": "2026-01-05T08:00:00Z"},
	  {"text": "Prefer small pull requests", "confidence": 0.5, "kind": "manual",
	   "created_at": "2026-04-15T08:00:00Z", "last_confirmed": "2026-04-15T08:00:00Z"},
	  {"text": "Rotate tokens quarterly", "confidence": 0.5, "kind": "manual", "created_at": "2026-04-16T08:00:00Z"}]}`)
	eps := state.Episodes{Episodes: memCTWeeks(4, 16)}
	now := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)
	got, _ := memCTRun(eps, ps, now, 1)
	if c := got.Principles[0].Confidence; c != 0.45 {
		t.Fatalf("stale manual principle at %v after one cycle, want 0.45", c)
	}
	got, _ = memCTRun(eps, got, now, 8)
	if len(got.Principles) != 2 || got.Principles[0].Text != "Prefer small pull requests" ||
		got.Principles[0].Confidence != 0.5 || got.Principles[1].Confidence != 0.5 {
		t.Fatalf("after 9 cycles: %s", memTJSON(t, got))
	}
}

// The state design's shape: principle is the text a lesson is matched
// against, last_validated dates it, a confirmation counts in
// validation_count, and new entries continue its PNNN numbering.
func TestCompatPrinciples_StateDesignShape(t *testing.T) {
	const lesson = "service health should run at least once per 12 hours"
	ps := memCTPrinciples(t, `{"principles": [
	  {"id": "P001", "principle": "Service health should run at least once per 12 hours.", "source": "episode",
	   "source_ids": ["EP-2026-W03", "EP-2026-W04"], "confidence": 0.8, "category": "scheduling",
	   "created_at": "2026-02-03T00:00:00Z", "last_validated": "2026-04-15T00:00:00Z",
	   "validation_count": 5, "invalidation_count": 0, "active": true}]}`)
	eps := state.Episodes{Episodes: append(memCTWeeks(5, 15),
		memTEpisode(2026, 16, lesson, "ux was neglected"), memTEpisode(2026, 17, "ux was neglected"))}
	got, res := memCTRun(eps, ps, time.Date(2026, 4, 28, 9, 0, 0, 0, time.UTC), 3)
	b, _ := json.Marshal(got.Principles[0])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["confidence"] != 0.9 || m["validation_count"] != 6.0 || m["last_validated"] != "2026-04-28T09:00:00Z" || m["text"] != nil {
		t.Fatalf("P001 after confirmation: %s (%+v)", b, res)
	}
	if len(got.Principles) != 2 || got.Principles[1].ID != "P002" {
		t.Fatalf("new principle numbering: %s", memTJSON(t, got))
	}
}

// Without any episode (a new project, or an episodes file set aside as
// corrupt) no principle decays.
func TestCompatPrinciples_NoEpisodesNoDecay(t *testing.T) {
	ps := state.Principles{Principles: []state.Principle{{ID: "P-1", Text: "keep it small", Confidence: 0.3,
		SourceEpisodes: []string{"EP-2026-W10"}, LastConfirmedEp: "EP-2026-W10"}}}
	got, res := memCTRun(state.Episodes{}, ps, time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC), 10)
	if len(got.Principles) != 1 || got.Principles[0].Confidence != 0.3 || len(res.Decayed) != 0 {
		t.Fatalf("decayed without episodes: %s, %+v", memTJSON(t, got), res)
	}
}

// An episode of the original's older shape (week_year, no id) is that
// week's episode: no second one is written for the week, no id is added to
// it, and its lessons count as that week's.
func TestCompatEpisodes_WeekYearEntryIsThatWeek(t *testing.T) {
	var eps state.Episodes
	if err := json.Unmarshal([]byte(`{"episodes": [
	  {"week_year": "2026-W16", "summary": "old shape", "lessons": ["backlog was neglected"]}]}`), &eps); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 4, 22, 9, 0, 0, 0, time.UTC) // in W17
	log := []CycleRecord{{Cycle: 5, Timestamp: time.Date(2026, 4, 15, 9, 0, 0, 0, time.UTC), Domain: "backlog", ResultType: "futile"}}
	got, ep := WriteEpisode(EpisodeInput{Now: now, Episodes: eps, Log: log})
	if ep != nil || len(got.Episodes) != 1 {
		t.Fatalf("a second episode for 2026-W16: %s", memTJSON(t, got))
	}
	if b, _ := json.Marshal(got.Episodes[0]); strings.Contains(string(b), `"id"`) {
		t.Errorf("id added to the old entry: %s", b)
	}
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 17, "backlog was neglected"))
	ps, res := ExtractPrinciples(eps, state.Principles{}, PrincipleInput{Now: now, Config: memTCfg()})
	if strings.Join(res.Created, ",") != "P-1" || strings.Join(ps.Principles[0].SourceEpisodes, ",") != "EP-2026-W16,EP-2026-W17" {
		t.Fatalf("lessons of the week_year episode: %s, %+v", memTJSON(t, ps), res)
	}
}
