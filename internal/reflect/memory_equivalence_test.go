package reflect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// eqPair is the same project twice: one side runs the real functions, the
// other the plain ones of memory_reference_test.go. Every cycle reads its
// inputs back from its own files, so what one side wrote is what it reads
// next.
type eqPair struct {
	t          *testing.T
	real, plan *state.Store
}

func newEqPair(t *testing.T) *eqPair {
	return &eqPair{t: t, real: state.New(t.TempDir()), plan: state.New(t.TempDir())}
}

// write puts the same bytes at rel on both sides.
func (p *eqPair) write(rel string, b []byte) {
	p.t.Helper()
	for _, st := range []*state.Store{p.real, p.plan} {
		path := filepath.Join(st.Root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
}

// same fails unless both sides hold the same bytes at every rel (or both
// have no file there).
func (p *eqPair) same(when string, rels ...string) {
	p.t.Helper()
	for _, rel := range rels {
		a, aerr := os.ReadFile(filepath.Join(p.real.Root, rel))
		b, berr := os.ReadFile(filepath.Join(p.plan.Root, rel))
		if (aerr == nil) != (berr == nil) || !bytes.Equal(a, b) {
			p.t.Fatalf("%s: %s differs:\nreal (%v):\n%s\nplain (%v):\n%s", when, rel, aerr, a, berr, b)
		}
	}
}

// eqLessons are lessons that recur word for word, recur reworded (similar
// at the default threshold, or only at a lower one), share their first
// words (the cluster fallback), or are blank.
var eqLessons = []string{
	"When d0 yields nothing twice running, skip it for 3 cycles.",
	"When d0 yields nothing twice running, skip it for 4 cycles.",
	"when D0 yields nothing, skip it",
	"Tests were stale while backlog was selected 3 times in a row.",
	"backlog selected 3+ times in a row while tests were stale",
	"Lint failures block merges: run lint before opening a PR.",
	"Lint failures slow reviews down.",
	"Lint failures are cheap to fix early.",
	"Deploys on Friday failed twice.",
	"the a an",
	"   ",
	"",
}

// eqEpisode is one episode as a file could hold it: this program's shape,
// the original's (week_year, no id), or one without week_start.
func eqEpisode(r *rand.Rand, week int, lessons []string) map[string]any {
	monday := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*(week-1))
	ep := map[string]any{"lessons": lessons, "created_at": state.FormatTime(monday.AddDate(0, 0, 7))}
	switch r.IntN(6) {
	case 0:
		ep["week_year"] = fmt.Sprintf("2026-W%02d", week)
	case 1:
		ep["id"] = fmt.Sprintf("EP-2026-W%02d", week)
	default:
		ep["id"] = fmt.Sprintf("EP-2026-W%02d", week)
		ep["week_start"] = monday.Format("2006-01-02")
	}
	return ep
}

// eqPrinciples are entries of every shape extraction meets: its own, the
// original's evolve shape (no id, week_year sources, last_confirmed), the
// state design's (source_ids, last_validated, validation_count), a manual
// one and one without provenance.
var eqPrinciples = `{"schema_version": "1.0.0", "principles": [
  {"id": "P-3", "text": "Lint failures block merges: run lint first.", "confidence": 0.3, "source_episodes": ["EP-2026-W01"], "occurrences": 1, "created_at": "2026-01-12T00:00:00Z", "last_confirmed_at": "2026-01-12T00:00:00Z", "last_confirmed_episode": "EP-2026-W01"},
  {"text": "Deploys on Friday failed twice.", "confidence": 0.5, "source_episodes": ["2026-W01"], "created_at": "2026-01-12T00:00:00Z", "last_confirmed": "2026-01-12T00:00:00Z"},
  {"id": "P004", "principle": "tests were stale while backlog selected", "source": "episode", "source_ids": ["2026-W02"], "confidence": 0.4, "created_at": "2026-01-19T00:00:00Z", "last_validated": "2026-01-19T00:00:00Z", "validation_count": 1, "invalidation_count": 0, "active": true},
  {"text": "Keep PRs small.", "kind": "manual", "confidence": 0.6, "created_at": "2026-01-01T00:00:00Z"},
  {"text": "when d0 yields nothing skip it", "confidence": 0.2},
  {"id": "P-9", "text": "Keep the changelog short.", "confidence": 0.9, "source_episodes": [` + eqManyWeeks + `], "occurrences": 61, "created_at": "2024-01-08T00:00:00Z", "last_confirmed_episode": "EP-2020-W01"}
]}
`

// eqManyWeeks are 61 source_episodes, more than an entry keeps
// (SourceEpisodesCap): a week of 2026 first, then 60 weeks of 2025 and
// 2024, newest first. Cutting the list to its last entries removes its
// newest week, which is recent in the first weeks of 2026, so the cut
// entry's decay differs from the uncut one's.
var eqManyWeeks = func() string {
	ws := []string{`"EP-2026-W03"`}
	for i := range 60 {
		ws = append(ws, fmt.Sprintf("%q", fmt.Sprintf("EP-%d-W%02d", 2025-i/50, 50-i%50)))
	}
	return strings.Join(ws, ", ")
}()

// TestExtractPrinciplesMatchesPlain runs the memory cascade's principle
// half for many cycles over episodes and principles of every shape, one
// project through ExtractPrinciples and its twin through the plain
// version, and compares what each wrote byte for byte after every cycle:
// deriving an episode's week, a text's tokens and an entry's provenance
// once must change nothing, whether the cycle creates, confirms, promotes,
// decays, trims or leaves every entry alone.
func TestExtractPrinciplesMatchesPlain(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 13))
			cfg := &config.Config{}
			if seed%2 == 1 {
				cfg.Memory.PrincipleSimilarityThreshold = 0.3
				cfg.Memory.PrincipleMinOccurrences = 3
			}
			p := newEqPair(t)
			epsRel := filepath.Join("agent", "state", "evolve", state.EpisodesFile)
			psRel := filepath.Join("agent", "state", "evolve", state.PrinciplesFile)
			if seed%3 != 2 {
				p.write(psRel, []byte(eqPrinciples))
			}
			var episodes []map[string]any
			week, changed, quiet := 0, 0, 0
			var kinds [7]int
			for cycle := 1; cycle <= 120; cycle++ {
				now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).Add(time.Duration(cycle) * 7 * time.Hour)
				// A week's episode, now and then: the cycles between find
				// the same episodes and decide again.
				if r.IntN(5) == 0 && week < 52 {
					week++
					var ls []string
					for range r.IntN(4) {
						ls = append(ls, eqLessons[r.IntN(len(eqLessons))])
					}
					if r.IntN(3) == 0 && len(ls) > 0 {
						ls = append(ls, " "+ls[0]+" ") // the same lesson twice
					}
					episodes = append(episodes, eqEpisode(r, week, ls))
					if r.IntN(4) == 0 && len(episodes) > 1 {
						// Out of file order: chronology is by week.
						n := len(episodes)
						episodes[n-1], episodes[n-2] = episodes[n-2], episodes[n-1]
					}
					b, err := json.Marshal(map[string]any{"schema_version": "1.0.0", "episodes": episodes})
					if err != nil {
						t.Fatal(err)
					}
					p.write(epsRel, b)
				}
				if r.IntN(40) == 0 || cycle == 40 {
					// Someone seeds the file by hand again.
					p.write(psRel, []byte(eqPrinciples))
				}
				when := fmt.Sprintf("cycle %d", cycle)
				var results [2]PrincipleResult
				for i, st := range []*state.Store{p.real, p.plan} {
					snap, err := st.LoadFiles(state.EpisodesFile, state.PrinciplesFile)
					if err != nil || len(snap.Corrupt) > 0 {
						t.Fatalf("%s: load: %v %v", when, err, snap.Corrupt)
					}
					extract := ExtractPrinciples
					if st == p.plan {
						extract = refExtractPrinciples
					}
					ps, res := extract(snap.Episodes, snap.Principles, PrincipleInput{Now: now, Config: cfg})
					results[i] = res
					if i == 0 {
						kinds[0] += len(res.Created)
						kinds[1] += len(res.Confirmed)
						kinds[2] += len(res.Promoted)
						kinds[3] += len(res.Candidates)
						kinds[4] += len(res.Decayed)
						kinds[5] += len(res.Removed)
						kinds[6] += len(res.Trimmed)
					}
					if n := len(res.Created) + len(res.Promoted) + len(res.Confirmed) + len(res.Candidates) + len(res.Decayed) + len(res.Removed) + len(res.Dropped) + len(res.Trimmed); n > 0 {
						if i == 0 {
							changed++
						}
						if err := st.SavePrinciples(ps); err != nil {
							t.Fatal(err)
						}
					} else if i == 0 {
						quiet++
					}
				}
				if !reflect.DeepEqual(results[0], results[1]) {
					t.Fatalf("%s: results differ:\nreal  %+v\nplain %+v", when, results[0], results[1])
				}
				p.same(when, psRel, epsRel)
			}
			// Both kinds of cycle were compared.
			t.Logf("created, confirmed, promoted, candidates, decayed, removed, trimmed: %v", kinds)
			if changed == 0 || quiet == 0 {
				t.Fatalf("%d cycles changed the principles and %d did not: the run compared too little", changed, quiet)
			}
		})
	}
}

// TestUpdateLensMatchesPlain runs 5-E for many cycles, one project
// through UpdateLens and its twin through the plain version that decodes
// every evidence entry, and compares the lens and its changelog byte for
// byte after every cycle. The domain state moves (metrics that vary and
// settle, alerts that come and go, a state file that is missing), and the
// evidence holds entries that are no observation (the original's, a
// damaged one): reading back only the evidence the window needs must find
// the same observations.
func TestUpdateLensMatchesPlain(t *testing.T) {
	const d = "api"
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 5))
			p := newEqPair(t)
			dsRel := filepath.Join("agent", "state", d, "state.json")
			lensRel := filepath.Join("agent", "state", d, "lens.json")
			clRel := filepath.Join("agent", "state", d, "lens_changelog.json")
			latency, errors := 100.0, 1.0
			var co [][]string
			changes := 0
			for cycle := 1; cycle <= 90; cycle++ {
				now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(cycle) * time.Hour)
				// This cycle's domain state.
				switch r.IntN(10) {
				case 0:
					for _, st := range []*state.Store{p.real, p.plan} {
						_ = os.Remove(filepath.Join(st.Root, dsRel))
					}
				default:
					if r.IntN(3) == 0 {
						latency += float64(r.IntN(400)) - 150
					}
					errors = float64(r.IntN(3))
					metrics := map[string]any{"latency_ms": latency}
					if r.IntN(4) != 0 {
						metrics["errors"] = errors
					}
					if r.IntN(8) == 0 {
						metrics = map[string]any{}
					}
					var alerts []any
					if latency > 250 || r.IntN(6) == 0 {
						alerts = append(alerts, map[string]any{"id": "slow", "severity": []string{"warning", "critical"}[r.IntN(2)]})
					}
					if r.IntN(5) == 0 {
						alerts = append(alerts, map[string]any{"id": "fyi", "severity": "info"})
					}
					b, err := json.Marshal(map[string]any{"metrics": metrics, "alerts": alerts})
					if err != nil {
						t.Fatal(err)
					}
					p.write(dsRel, b)
				}
				var set []string
				if r.IntN(2) == 0 {
					set = append(set, d)
				}
				if r.IntN(2) == 0 {
					set = append(set, "db")
				}
				co = append(co, set)
				if r.IntN(12) == 0 && cycle > 1 {
					// Evidence that is no observation, in both lenses.
					p.lensEvidence(lensRel, r)
				}

				when := fmt.Sprintf("cycle %d", cycle)
				var results [2]LensResult
				for i, st := range []*state.Store{p.real, p.plan} {
					ds, err := st.ReadDomainState(dsRel)
					if err != nil {
						t.Fatal(err)
					}
					lens, found, err := st.ReadLens(d)
					if err != nil {
						t.Fatalf("%s: %v", when, err)
					}
					if !found {
						lens = state.NewLens(d, now)
					}
					cl, err := st.ReadLensChangelog(d)
					if err != nil {
						t.Fatal(err)
					}
					update := UpdateLens
					if st == p.plan {
						update = refUpdateLens
					}
					nl, ncl, res := update(lens, cl, LensInput{Cycle: cycle, Now: now, Domain: d, State: ds, CoAlerts: co})
					results[i] = res
					if err := st.SaveLens(d, nl); err != nil {
						t.Fatal(err)
					}
					if len(res.Changes) > 0 {
						if err := st.SaveLensChangelog(d, ncl); err != nil {
							t.Fatal(err)
						}
					}
				}
				if !reflect.DeepEqual(results[0], results[1]) {
					t.Fatalf("%s: results differ:\nreal  %+v\nplain %+v", when, results[0], results[1])
				}
				changes += len(results[0].Changes)
				p.same(when, lensRel, clRel)
			}
			if changes == 0 {
				t.Fatal("the lens never changed: the run compared too little")
			}
		})
	}
}

// lensEvidence appends to both lenses' evidence an entry that reads as no
// observation: the original project's (no metrics), metrics that are
// null or not an object, or one that is not an object at all.
func (p *eqPair) lensEvidence(rel string, r *rand.Rand) {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.real.Root, rel))
	if err != nil {
		p.t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		p.t.Fatal(err)
	}
	var ev []json.RawMessage
	if err := json.Unmarshal(doc["evidence"], &ev); err != nil {
		p.t.Fatal(err)
	}
	entry := []string{
		`{"timestamp": "2026-03-01T00:00:00Z", "observation": "written by hand"}`,
		`{"cycle": 7, "metrics": null, "alerts": ["x"]}`,
		`{"cycle": 7, "metrics": [1, 2], "alerts": []}`,
		`{"cycle": "seven", "metrics": {"latency_ms": "fast", "errors": 2}, "alerts": ["warning:slow"]}`,
		`"a note"`,
	}[r.IntN(5)]
	ev = append(ev, json.RawMessage(entry))
	if doc["evidence"], err = json.Marshal(ev); err != nil {
		p.t.Fatal(err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(rel, []byte(strings.TrimSpace(string(out))))
}
