package present

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// recordedProject writes a project whose newest entry executed
// test_coverage with PR outcomes, an intervention created in its cycle
// and a lens change of another domain, and returns its config and store.
func recordedProject(t *testing.T, entryExtra string) (*config.Config, *state.Store, string) {
	t.Helper()
	files := map[string]string{
		"agent/state/evolve/state.json":           entryState("{" + executed + `, "pr_outcomes": [{"pr": 3, "domain": "test_coverage", "outcome": "merged", "confidence_delta": 0.1}]` + entryExtra + "}"),
		"agent/state/evolve/confidence.json":      `{"test_coverage": 0.82, "backlog": 0.5}`,
		"agent/state/evolve/memos.json":           `{"interventions": [{"domain": "backlog", "delta": 1.5, "type": "starvation", "created_at_cycle": 9, "expires_after_cycles": 3}]}`,
		"agent/state/backlog/lens_changelog.json": `{"entries": [{"cycle": 9, "item": "queue age", "change_type": "added", "after": 0.3, "delta": 0.3, "reason": "varies"}]}`,
		"agent/state/evolve/cost_ledger.json":     `{"date": "2026-03-02", "entries": [{"cycle_id": 8, "estimated_usd": 0.5}, {"cycle_id": 9, "estimated_usd": 0.02}], "total_estimated_usd": 0.52}`,
	}
	_, dir := cardProject(t, files)
	cfg, err := config.LoadProject(filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, state.New(dir), dir
}

// The values handed over are the ones shown, and their files are not
// read: with state.json, confidence.json, memos.json and cost_ledger.json
// gone, the card is the one the files gave, and a value changed in memory
// shows.
func TestCycleCardTakesRecordedValues(t *testing.T) {
	cfg, st, dir := recordedProject(t, "")
	want := BuildCard(cfg, st)
	rec := recordedOf(t, st)
	if rec.Entry == nil || rec.Confidence == nil || rec.Memos == nil || rec.CostLedger == nil {
		t.Fatalf("recorded values missing: %+v", rec)
	}
	for _, f := range []string{state.StateFile, state.ConfidenceFile, state.MemosFile, state.CostLedgerFile} {
		if err := os.Remove(filepath.Join(dir, "agent", "state", "evolve", f)); err != nil {
			t.Fatal(err)
		}
	}
	got := BuildCardFrom(cfg, st, rec)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("card from the recorded values:\n%+v\n%q\nwant the files' card:\n%+v\n%q", got.Card, got.Corrupt, want.Card, want.Corrupt)
	}
	if len(got.Card.Learn) != 2 || !strings.Contains(got.Card.Learn[0].Text, "0.72 → 0.82") || !strings.Contains(got.Card.Learn[1].Text, "queue age") {
		t.Errorf("LEARN = %+v, want the PR outcome (from the confidence) and the lens change", got.Card.Learn)
	}
	if c := got.Card.Cost; c.TodayUSD == nil || *c.TodayUSD != 0.52 {
		t.Errorf("COST = %+v, want the ledger's day", c)
	}
	e := *rec.Entry
	e.OrientSummary = "held in memory"
	rec.Entry = &e
	if got := BuildCardFrom(cfg, st, rec); got.Card == nil || got.Card.Orient == nil || *got.Card.Orient != "held in memory" {
		t.Errorf("the recorded entry is not the one shown: %+v", got.Card)
	}
	// The files gone and nothing handed over: the card is that of an
	// empty state, as before.
	if got := BuildCardFrom(cfg, st, Recorded{}); got.Card != nil {
		t.Errorf("card without state.json: %+v", got.Card)
	}
}

// A value the file would not give back as it is — a number state.Load
// clamps, a text a known secret masks — makes the card read that file:
// the card is the files' (the clamped number, the masked text), whatever
// the memory held.
func TestCycleCardRecordedFallsBackToTheFile(t *testing.T) {
	const token = "tok-card-recorded-7f3a9c"
	secret.Register(token)
	cases := []struct {
		name  string
		extra string // the file's entry
		edit  func(r *Recorded)
		want  string // in the rendered card
	}{
		{"entry score clamped", `, "score": 1e300`, func(r *Recorded) { v := 1e300; r.Entry.Score = &v }, "(score 1000000000000000.0)"},
		{"entry text masked", `, "orient_summary": "saw ***"`, func(r *Recorded) { r.Entry.OrientSummary = "saw " + token }, "saw ***"},
		{"summary masked", `, "summary": "found ***"`, func(r *Recorded) {
			r.Entry.Extra["summary"] = []byte(`"found ` + token + `"`)
		}, "found ***"},
		{"confidence clamped", "", func(r *Recorded) { r.Confidence.Scores["test_coverage"] = 1e300 }, "0.72 → 0.82"},
		{"intervention masked", "", func(r *Recorded) { r.Memos.Interventions[0].Type = token }, ""},
		{"intervention clamped", "", func(r *Recorded) { r.Memos.Interventions[0].Delta = -1e300 }, ""},
		{"cost clamped", "", func(r *Recorded) { r.CostLedger.Entries[0].EstimatedUSD = 2e9 }, "$0.52 today"},
		{"negative cost", "", func(r *Recorded) { r.CostLedger.Entries[0].EstimatedUSD = -0.5 }, "$0.52 today"},
		{"total below its costs", "", func(r *Recorded) { r.CostLedger.TotalEstimatedUSD = 0.01 }, "$0.52 today"},
		{"total out of range", "", func(r *Recorded) { r.CostLedger.TotalEstimatedUSD = 3e9 }, "$0.52 today"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, st, _ := recordedProject(t, tc.extra)
			want := BuildCard(cfg, st)
			rec := recordedOf(t, st)
			e, c, m, l := *rec.Entry, *rec.Confidence, *rec.Memos, *rec.CostLedger
			c.Scores = maps.Clone(c.Scores)
			m.Interventions = append([]state.Intervention(nil), m.Interventions...)
			l.Entries = append([]state.CostEntry(nil), l.Entries...)
			e.Extra = state.Extra{}
			for k, v := range rec.Entry.Extra {
				e.Extra[k] = v
			}
			rec.Entry, rec.Confidence, rec.Memos, rec.CostLedger = &e, &c, &m, &l
			tc.edit(&rec)
			if u, uc, um, ul := rec.usable(); u != nil && uc != nil && um != nil && ul != nil {
				t.Fatalf("every recorded value taken: %+v", rec)
			}
			got := BuildCardFrom(cfg, st, rec)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("card:\n%+v\nwant the files' card:\n%+v", got.Card, want.Card)
			}
			if out := RenderCard(got.Card, Style{}, false); !strings.Contains(out, tc.want) || strings.Contains(out, token) {
				t.Errorf("card:\n%s\nwant %q, and never the secret", out, tc.want)
			}
		})
	}
}
