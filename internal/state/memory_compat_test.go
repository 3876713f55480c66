package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// memCompatPrinciples holds one entry of each shape the original project
// writes to principles.json — evolve's extracted and manual entries, and
// the state design's — with what a hand edit adds: an unknown key, a null,
// a number spelled 0.50, keys in an unusual order.
const memCompatPrinciples = `{
  "schema_version": "1.0.0",
  "principles": [
    {"text": "service_health dominated under logarithmic staleness", "confidence": 0.50,
     "source_episodes": ["2026-W15", "2026-W16"], "created_at": "2026-04-20T10:00:00Z",
     "last_confirmed": "2026-04-20T10:00:00Z", "note": null},
    {"kind": "manual", "text": "Never auto-merge on Fridays", "confidence": 0.5,
     "created_at": "2026-01-05T08:00:00Z", "last_confirmed": "2026-01-05T08:00:00Z"},
    {"id": "P001", "principle": "Service health should run at least once per 12 hours.", "source": "episode",
     "source_ids": ["EP-2026-W03", "EP-2026-W04", "gap-7"], "confidence": 0.8, "category": "scheduling",
     "created_at": "2026-02-03T00:00:00Z", "last_validated": "2026-03-15T00:00:00Z",
     "validation_count": 5, "invalidation_count": 0, "active": true}
  ],
  "owner": {"team": "platform"}
}`

// memCompatEpisodes holds an episode of the original's older shape (a
// week_year and no id) next to a current one.
const memCompatEpisodes = `{
  "schema_version": "1.0.0",
  "episodes": [
    {"week_year": "2026-W15", "summary": "old shape", "lessons": ["ux was neglected"], "total_cycles": 4, "mood": null},
    {"id": "EP-2026-W16", "week_start": "2026-04-13", "week_end": "2026-04-19", "summary": "current shape", "total_cycles": 7}
  ]
}`

// memCompatEntries are the compacted entries of a memory file's array.
func memCompatEntries(t *testing.T, b []byte, key string) [][]byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(doc[key], &raw); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	out := make([][]byte, len(raw))
	for i, r := range raw {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r); err != nil {
			t.Fatal(err)
		}
		out[i] = buf.Bytes()
	}
	return out
}

func memCompatStore(t *testing.T, principles, episodes string) (*Store, *Snapshot) {
	t.Helper()
	root := t.TempDir()
	s := New(root)
	writeFile(t, s.EvolvePath(PrinciplesFile), principles)
	writeFile(t, s.EvolvePath(EpisodesFile), episodes)
	snap := &Snapshot{}
	s.LoadMemory(snap)
	if len(snap.Corrupt) > 0 {
		t.Fatalf("corrupt: %+v", snap.Corrupt)
	}
	return s, snap
}

// Rewriting the memory files keeps every entry of the original's shapes
// byte for byte: no empty id, text or source list is added, no key moves,
// 0.50 stays 0.50 and null stays null; the file's unknown keys stay.
func TestCompatMemory_EntriesRewrittenByteForByte(t *testing.T) {
	s, snap := memCompatStore(t, memCompatPrinciples, memCompatEpisodes)
	if err := s.SavePrinciples(snap.Principles); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEpisodes(snap.Episodes); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ file, key, orig string }{
		{PrinciplesFile, "principles", memCompatPrinciples},
		{EpisodesFile, "episodes", memCompatEpisodes},
	} {
		got := []byte(readString(t, s.EvolvePath(f.file)))
		want := memCompatEntries(t, []byte(f.orig), f.key)
		have := memCompatEntries(t, got, f.key)
		if len(have) != len(want) {
			t.Fatalf("%s: %d entries, want %d:\n%s", f.file, len(have), len(want), got)
		}
		for i := range want {
			if !bytes.Equal(have[i], want[i]) {
				t.Errorf("%s entry %d rewritten:\nwant %s\ngot  %s", f.file, i, want[i], have[i])
			}
		}
	}
	if got := readString(t, s.EvolvePath(PrinciplesFile)); !strings.Contains(got, `"team": "platform"`) {
		t.Errorf("unknown top-level key lost:\n%s", got)
	}
}

// An entry that changed keeps its keys in place and gains only the keys
// whose value changed; the entries around it stay as they were.
func TestCompatMemory_ChangedEntryKeepsItsShape(t *testing.T) {
	s, snap := memCompatStore(t, memCompatPrinciples, memCompatEpisodes)
	snap.Principles.Principles[1].Confidence = 0.45
	if err := s.SavePrinciples(snap.Principles); err != nil {
		t.Fatal(err)
	}
	got := memCompatEntries(t, []byte(readString(t, s.EvolvePath(PrinciplesFile))), "principles")
	want := memCompatEntries(t, []byte(memCompatPrinciples), "principles")
	wantChanged := `{"kind":"manual","text":"Never auto-merge on Fridays","confidence":0.45,"created_at":"2026-01-05T08:00:00Z","last_confirmed":"2026-01-05T08:00:00Z"}`
	if string(got[1]) != wantChanged {
		t.Errorf("changed entry:\nwant %s\ngot  %s", wantChanged, got[1])
	}
	for _, i := range []int{0, 2} {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("entry %d rewritten:\nwant %s\ngot  %s", i, want[i], got[i])
		}
	}
}

// The original's shapes are read as they mean: the state design's
// principle is the text, week-year and episode-id sources are the same
// weeks, last_confirmed and last_validated date a confirmation.
func TestCompatMemory_PrincipleShapesRead(t *testing.T) {
	_, snap := memCompatStore(t, memCompatPrinciples, memCompatEpisodes)
	ps := snap.Principles.Principles
	if ps[2].Text != "Service health should run at least once per 12 hours." || ps[2].ID != "P001" {
		t.Errorf("state design entry read as %+v", ps[2])
	}
	if got := strings.Join(ps[0].WeekSources(), ","); got != "EP-2026-W15,EP-2026-W16" {
		t.Errorf("week-year sources read as %s", got)
	}
	if got := strings.Join(ps[2].WeekSources(), ","); got != "EP-2026-W03,EP-2026-W04" {
		t.Errorf("source_ids read as %s", got)
	}
	if at, ok := ps[0].ConfirmedAt(); !ok || !at.Equal(time.Date(2026, 4, 20, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("last_confirmed read as %v %v", at, ok)
	}
	if at, ok := ps[2].ConfirmedAt(); !ok || !at.Equal(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("last_validated read as %v %v", at, ok)
	}
	if !ps[1].Manual() || ps[0].Manual() {
		t.Errorf("manual: %v %v", ps[1].Manual(), ps[0].Manual())
	}
}

// A confirmation is written in the fields the entry's own shape carries,
// so the original project reads it after a switch back.
func TestCompatMemory_ConfirmationInTheEntrysShape(t *testing.T) {
	s, snap := memCompatStore(t, memCompatPrinciples, memCompatEpisodes)
	now := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)
	ps := snap.Principles.Principles
	ps[0].RecordConfirmation("EP-2026-W17", now)
	ps[2].RecordConfirmation("EP-2026-W17", now)
	if err := s.SavePrinciples(snap.Principles); err != nil {
		t.Fatal(err)
	}
	b := []byte(readString(t, s.EvolvePath(PrinciplesFile)))
	var doc struct {
		Principles []map[string]any `json:"principles"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	evolve, design := doc.Principles[0], doc.Principles[2]
	if got := evolve["source_episodes"]; !jsonEqual(got, []any{"2026-W15", "2026-W16", "2026-W17"}) {
		t.Errorf("source_episodes %v: the new week must be spelled as the list spells it", got)
	}
	if evolve["last_confirmed"] != "2026-04-27T09:00:00Z" || evolve["note"] != nil {
		t.Errorf("evolve entry %v", evolve)
	}
	// No key of ooda's own shape is added to the original's entries: the
	// week and the instant are in the entry's own fields.
	for _, e := range []map[string]any{evolve, design} {
		for _, k := range []string{"occurrences", "last_confirmed_at", "last_confirmed_episode"} {
			if _, ok := e[k]; ok {
				t.Errorf("%s added to %v", k, e)
			}
		}
	}
	if got := design["source_ids"]; !jsonEqual(got, []any{"EP-2026-W03", "EP-2026-W04", "gap-7", "EP-2026-W17"}) {
		t.Errorf("source_ids %v: the week goes in the entry's own list, spelled as it spells weeks", got)
	}
	if _, ok := design["source_episodes"]; ok {
		t.Errorf("source_episodes added next to source_ids: %v", design)
	}
	if _, ok := evolve["id"]; ok {
		t.Errorf("an empty id was added: %v", evolve)
	}
	if design["last_validated"] != "2026-04-27T09:00:00Z" || design["validation_count"] != 6.0 || design["principle"] == nil {
		t.Errorf("state design entry %v", design)
	}
	if _, ok := design["text"]; ok {
		t.Errorf("text added next to principle: %v", design)
	}
	// The kept manual entry was not touched.
	want := memCompatEntries(t, []byte(memCompatPrinciples), "principles")[1]
	if got := memCompatEntries(t, b, "principles")[1]; !bytes.Equal(got, want) {
		t.Errorf("untouched entry rewritten: %s", got)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// An episode of the older shape stands for the week its week_year names.
func TestCompatMemory_EpisodeWeekYear(t *testing.T) {
	_, snap := memCompatStore(t, memCompatPrinciples, memCompatEpisodes)
	eps := snap.Episodes.Episodes
	if eps[0].Week() != "EP-2026-W15" || eps[0].Start() != "2026-04-06" || eps[0].ID != "" {
		t.Errorf("week_year episode: week %q start %q id %q", eps[0].Week(), eps[0].Start(), eps[0].ID)
	}
	if eps[1].Week() != "EP-2026-W16" || eps[1].Start() != "2026-04-13" {
		t.Errorf("current episode: week %q start %q", eps[1].Week(), eps[1].Start())
	}
	for in, want := range map[string]string{
		"2026-W15": "EP-2026-W15", "EP-2026-W05": "EP-2026-W05", "2026-W5": "EP-2026-W05",
		"2026-W53": "EP-2026-W53", "2025-W53": "", "2026-W00": "", "W15": "", "EP-2026-W15x": "",
	} {
		if got, _ := CanonicalWeek(in); got != want {
			t.Errorf("CanonicalWeek(%q) = %q, want %q", in, got, want)
		}
	}
	// ISO years differ from calendar years around New Year.
	if m, _ := WeekMonday("2027-W01"); m.Format("2006-01-02") != "2027-01-04" {
		t.Errorf("2027-W01 starts %v", m)
	}
	if m, _ := WeekMonday("2026-W01"); m.Format("2006-01-02") != "2025-12-29" {
		t.Errorf("2026-W01 starts %v", m)
	}
}

// The principles-extraction fixture of the original project is read and
// written back without a byte of its entries changed.
func TestCompatMemory_OriginalFixtureRoundTrip(t *testing.T) {
	root := projectFromFixture(t, "principles-extraction")
	s := New(root)
	orig := []byte(readString(t, filepath.Join(root, "agent", "state", "evolve", EpisodesFile)))
	snap := &Snapshot{}
	s.LoadMemory(snap)
	if err := s.SaveEpisodes(snap.Episodes); err != nil {
		t.Fatal(err)
	}
	want := memCompatEntries(t, orig, "episodes")
	got := memCompatEntries(t, []byte(readString(t, s.EvolvePath(EpisodesFile))), "episodes")
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("episode %d rewritten:\nwant %s\ngot  %s", i, want[i], got[i])
		}
	}
}

// canonicalWeekByPattern is CanonicalWeek as the pattern alone reads a
// week: the oracle of its fast path for the spelling ooda writes.
func canonicalWeekByPattern(s string) (string, bool) {
	m := weekPattern().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	y, _ := strconv.Atoi(m[1])
	w, _ := strconv.Atoi(m[2])
	if w < 1 || w > isoWeeksIn(y) {
		return "", false
	}
	return fmt.Sprintf("EP-%04d-W%02d", y, w), true
}

// CanonicalWeek reads every week id as the pattern does: each year's
// weeks 0 to 99 (53 only in a long year), in every spelling the pattern
// takes or nearly takes.
func TestCanonicalWeekSameAsThePattern(t *testing.T) {
	for _, y := range []int{0, 1, 1999, 2004, 2015, 2020, 2021, 2026, 9999} {
		for w := 0; w < 100; w++ {
			for _, f := range []string{"EP-%04d-W%02d", "ep-%04d-w%02d", "EP-%04d-W%d", "%04d-W%02d", " EP-%04d-W%02d", "EP-%04d-W%02d ", "EP-%04d_W%02d", "EP-%04d-W%02dx", "EP-%04d-W-%d"} {
				s := fmt.Sprintf(f, y, w)
				gc, gok := CanonicalWeek(s)
				wc, wok := canonicalWeekByPattern(s)
				if gc != wc || gok != wok {
					t.Errorf("CanonicalWeek(%q) = %q, %v; the pattern reads %q, %v", s, gc, gok, wc, wok)
				}
			}
		}
	}
	for _, s := range []string{"", "EP-20x6-W15", "EP-2026-W1x", "EP-２０２６-W15", "EP-2026-W١٥", "EP-+026-W15", "EP-2026-W-1"} {
		gc, gok := CanonicalWeek(s)
		wc, wok := canonicalWeekByPattern(s)
		if gc != wc || gok != wok {
			t.Errorf("CanonicalWeek(%q) = %q, %v; the pattern reads %q, %v", s, gc, gok, wc, wok)
		}
	}
}
