package reflect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// psKeys is an entry's keys in the order its encoding writes them, and
// the entry decoded.
func psKeys(t *testing.T, p state.Principle) ([]string, map[string]any) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return keys, m
}

// psRoundTrip writes the principles as the store does and reads them back.
func psRoundTrip(t *testing.T, ps state.Principles) state.Principles {
	t.Helper()
	b, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	var out state.Principles
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const psLesson = "backlog selected 3+ times in a row while tests were stale"

var psNow = time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)

// A new principle in a file of evolve's shape is written in that shape,
// weeks spelled as the file spells them, and none of this program's keys;
// it is not created twice, is read back as the same principle, and a
// later episode confirms it in the same spelling.
func TestPrincipleShape_NewEntryInEvolvesShape(t *testing.T) {
	ps := memCTPrinciples(t, `{"schema_version": "1.0.0", "principles": [
	  {"text": "run the health scan before any implementation cycle", "confidence": 0.6,
	   "source_episodes": ["2026-W12", "2026-W13"], "created_at": "2026-03-30T09:00:00Z",
	   "last_confirmed": "2026-04-06T09:00:00Z"}]}`)
	eps := state.Episodes{Episodes: []state.Episode{memTEpisode(2026, 14, psLesson), memTEpisode(2026, 15, psLesson)}}
	got, res := ExtractPrinciples(eps, ps, PrincipleInput{Now: psNow, Config: memTCfg()})
	if len(got.Principles) != 2 || len(res.Created) != 1 {
		t.Fatalf("want one new principle: %s (%+v)", memTJSON(t, got), res)
	}
	keys, m := psKeys(t, got.Principles[1])
	if strings.Join(keys, ",") != "text,confidence,source_episodes,created_at,last_confirmed" {
		t.Errorf("new entry's keys = %v, want evolve's text,confidence,source_episodes,created_at,last_confirmed", keys)
	}
	if src, _ := json.Marshal(m["source_episodes"]); string(src) != `["2026-W14","2026-W15"]` {
		t.Errorf("source_episodes = %s, want the file's week_year spelling", src)
	}
	if m["text"] != psLesson || m["confidence"] != 0.3 || m["created_at"] != "2026-04-14T09:00:00Z" || m["last_confirmed"] != "2026-04-14T09:00:00Z" {
		t.Errorf("new entry = %v", m)
	}
	if !strings.Contains(res.Created[0], "backlog selected") {
		t.Errorf("created %q: an entry without an id is named by its text", res.Created[0])
	}

	// Written and read back, later cycles neither add it again nor
	// confirm it with the episodes it came from.
	again := psRoundTrip(t, got)
	for range 3 {
		again, res = ExtractPrinciples(eps, psRoundTrip(t, again), PrincipleInput{Now: psNow.Add(time.Hour), Config: memTCfg()})
	}
	if len(again.Principles) != 2 || len(res.Created)+len(res.Confirmed) != 0 {
		t.Fatalf("re-run changed principles: %s (%+v)", memTJSON(t, again), res)
	}
	a, _ := json.Marshal(again.Principles[1])
	b, _ := json.Marshal(got.Principles[1])
	if !bytes.Equal(a, b) {
		t.Errorf("entry rewritten on a re-run:\n%s\n%s", a, b)
	}

	// A new week with the lesson confirms it, in the file's spelling.
	eps.Episodes = append(eps.Episodes, memTEpisode(2026, 16, psLesson))
	conf, res := ExtractPrinciples(eps, psRoundTrip(t, again), PrincipleInput{Now: psNow.AddDate(0, 0, 7), Config: memTCfg()})
	if len(conf.Principles) != 2 || len(res.Confirmed) != 1 {
		t.Fatalf("W16 did not confirm: %s (%+v)", memTJSON(t, conf), res)
	}
	_, m = psKeys(t, conf.Principles[1])
	if src, _ := json.Marshal(m["source_episodes"]); string(src) != `["2026-W14","2026-W15","2026-W16"]` || m["confidence"] != 0.4 {
		t.Errorf("after W16: %v", m)
	}
}

// In a file of the state design's shape a new entry is {id: "PNNN",
// principle, source, source_ids, ...}, numbered after the file's ids,
// with the episode ids spelled as the file's source_ids spell them.
func TestPrincipleShape_NewEntryInTheStateDesignsShape(t *testing.T) {
	ps := memCTPrinciples(t, `{"schema_version": "1.0.0", "principles": [
	  {"id": "P007", "principle": "Service health should run at least once per 12 hours.", "source": "episode",
	   "source_ids": ["EP-2026-W12", "EP-2026-W13"], "confidence": 0.8, "category": "scheduling",
	   "created_at": "2026-03-30T00:00:00Z", "last_validated": "2026-04-06T00:00:00Z",
	   "validation_count": 5, "invalidation_count": 0, "active": true}]}`)
	eps := state.Episodes{Episodes: []state.Episode{memTEpisode(2026, 14, psLesson), memTEpisode(2026, 15, psLesson)}}
	got, res := ExtractPrinciples(eps, ps, PrincipleInput{Now: psNow, Config: memTCfg()})
	if len(got.Principles) != 2 || len(res.Created) != 1 || res.Created[0] != "P008" {
		t.Fatalf("want P008: %s (%+v)", memTJSON(t, got), res)
	}
	keys, m := psKeys(t, got.Principles[1])
	if strings.Join(keys, ",") != "id,principle,source,source_ids,confidence,created_at,last_validated,validation_count,invalidation_count,active" {
		t.Errorf("new entry's keys = %v, want the state design's", keys)
	}
	if src, _ := json.Marshal(m["source_ids"]); string(src) != `["EP-2026-W14","EP-2026-W15"]` || m["principle"] != psLesson ||
		m["source"] != "episode" || m["active"] != true || m["last_validated"] != "2026-04-14T09:00:00Z" {
		t.Errorf("new entry = %v", m)
	}
	// Read back it is the same principle: not created again.
	again, res := ExtractPrinciples(eps, psRoundTrip(t, got), PrincipleInput{Now: psNow.Add(time.Hour), Config: memTCfg()})
	if len(again.Principles) != 2 || len(res.Created) != 0 || again.Principles[1].Text != psLesson {
		t.Fatalf("re-run: %s (%+v)", memTJSON(t, again), res)
	}
}

// A cluster-fallback candidate in a file of evolve's shape is evolve's
// candidate: kind "candidate" and cluster_size.
func TestPrincipleShape_CandidateInEvolvesShape(t *testing.T) {
	ps := memCTPrinciples(t, `{"principles": [
	  {"text": "a manual rule about deploy freezes", "confidence": 0.5, "kind": "manual",
	   "created_at": "2026-04-01T09:00:00Z", "last_confirmed": "2026-04-08T09:00:00Z"}]}`)
	// Twelve lessons, none recurring as a whole, two of which start alike.
	var eps state.Episodes
	lessons := [][]string{
		{"uptime alerts cluster around deploys on fridays", "alpha one", "beta two", "gamma three"},
		{"uptime alerts cluster near deploys every night", "delta four", "epsilon five", "zeta six"},
		{"eta seven", "theta eight", "iota nine", "kappa ten"},
	}
	for i, l := range lessons {
		eps.Episodes = append(eps.Episodes, memTEpisode(2026, 13+i, l...))
	}
	got, res := ExtractPrinciples(eps, ps, PrincipleInput{Now: psNow, Config: memTCfg()})
	if len(res.Candidates) != 1 || len(got.Principles) != 2 {
		t.Fatalf("want one candidate: %s (%+v)", memTJSON(t, got), res)
	}
	keys, m := psKeys(t, got.Principles[1])
	if strings.Join(keys, ",") != "text,confidence,source_episodes,created_at,last_confirmed,kind,cluster_size" {
		t.Errorf("candidate's keys = %v, want evolve's", keys)
	}
	if src, _ := json.Marshal(m["source_episodes"]); string(src) != `["2026-W13","2026-W14"]` || m["kind"] != "candidate" ||
		m["cluster_size"] != 2.0 || m["confidence"] != 0.15 {
		t.Errorf("candidate = %v", m)
	}
}

// A file of this program's shape (and an empty one) keeps getting entries
// in it: the shape follows the file, nothing else.
func TestPrincipleShape_OwnShapeUnchanged(t *testing.T) {
	eps := state.Episodes{Episodes: []state.Episode{memTEpisode(2026, 14, psLesson), memTEpisode(2026, 15, psLesson)}}
	for _, doc := range []string{`{"principles": []}`, `{"principles": [{"id": "P-3", "text": "keep it small", "confidence": 0.5,
	  "source_episodes": ["EP-2026-W15"], "occurrences": 1, "created_at": "2026-04-13T09:00:00Z",
	  "last_confirmed_at": "2026-04-13T09:00:00Z", "last_confirmed_episode": "EP-2026-W15"}]}`} {
		got, res := ExtractPrinciples(eps, memCTPrinciples(t, doc), PrincipleInput{Now: psNow, Config: memTCfg()})
		if len(res.Created) != 1 {
			t.Fatalf("%s: %+v", doc, res)
		}
		p := got.Principles[len(got.Principles)-1]
		keys, m := psKeys(t, p)
		if strings.Join(keys, ",") != "id,text,confidence,source_episodes,occurrences,created_at,last_confirmed_at,last_confirmed_episode" ||
			m["id"] != res.Created[0] {
			t.Errorf("%s: new entry %v (%v)", doc, keys, m)
		}
		if src, _ := json.Marshal(m["source_episodes"]); string(src) != `["EP-2026-W14","EP-2026-W15"]` {
			t.Errorf("source_episodes = %s", src)
		}
	}
}
