package decide

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// exampleConfig is the original project's example configuration, as its
// users have it: no scoring.adaptive block.
const exampleConfig = "../../../shared/compat/ooda-loop/config.example.json"

// past is one recorded cycle of a domain.
func past(quality float64, output bool) Past { return Past{Quality: quality, HadOutput: output} }

// futile is n recorded cycles that produced nothing.
func futile(n int) []Past {
	out := make([]Past, n)
	for i := range out {
		out[i] = past(0, false)
	}
	return out
}

// produced is n recorded cycles with output of the given quality.
func produced(n int, quality float64) []Past {
	out := make([]Past, n)
	for i := range out {
		out[i] = past(quality, true)
	}
	return out
}

// mixed is a history whose learned terms are worked out by hand below:
// value (0.2 + 0.5 + 0 + 0.8) / 4 = 0.375, yield (1 + 2) / (3 + 2) = 0.6.
var mixed = []Past{past(0.5, true), past(0, false), past(0.8, true)}

const (
	mixedValue = 0.375
	mixedYield = 0.6
)

// withAdaptive is newInput with adaptive scoring set to a.
func withAdaptive(a config.Adaptive, level int, ds ...Domain) Input {
	in := newInput(level, ds...)
	in.Config.Scoring.Adaptive = a
	return in
}

func TestAdaptive_LearnPriors(t *testing.T) {
	for _, h := range [][]Past{nil, {}} {
		l := Learn(h, 10)
		if l.Cycles != 0 {
			t.Errorf("Learn(%v).Cycles = %d, want 0", h, l.Cycles)
		}
		// A domain never recorded is worth an extracted action (0.2) and
		// has an even chance of output: staleness is left as it is.
		exact(t, "prior value", l.Value, 0.2)
		exact(t, "prior yield", l.Yield, 0.5)
		exact(t, "prior yield factor", l.YieldFactor(), 1)
	}
}

func TestAdaptive_LearnMixedHistory(t *testing.T) {
	l := Learn(mixed, 10)
	if l.Cycles != 3 {
		t.Errorf("Cycles = %d, want 3", l.Cycles)
	}
	exact(t, "value", l.Value, mixedValue)
	exact(t, "yield", l.Yield, mixedYield)
	exact(t, "yield factor", l.YieldFactor(), 1.2)

	// One cycle is not a verdict: the prior still weighs as much as it.
	one := Learn([]Past{past(1, true)}, 10)
	exact(t, "one merged cycle: value", one.Value, 0.6)
	exact(t, "one merged cycle: yield", one.Yield, 2.0/3)
	none := Learn(futile(1), 10)
	exact(t, "one futile cycle: value", none.Value, 0.1)
	exact(t, "one futile cycle: yield", none.Yield, 1.0/3)
}

func TestAdaptive_LearnWindow(t *testing.T) {
	// Five old productive cycles, then ten futile ones: the window of ten
	// sees only the futile ones, so an old success does not keep a
	// domain that stopped producing in favour.
	h := append(produced(5, 1), futile(10)...)
	l := Learn(h, 10)
	if l.Cycles != 10 {
		t.Errorf("window 10: Cycles = %d, want 10", l.Cycles)
	}
	exact(t, "window 10: value", l.Value, 0.2/11)
	exact(t, "window 10: yield", l.Yield, 1.0/12)

	all := Learn(h, 0)
	if all.Cycles != 15 {
		t.Errorf("window 0: Cycles = %d, want 15", all.Cycles)
	}
	exact(t, "window 0: value", all.Value, (0.2+5)/16)
	exact(t, "window 0: yield", all.Yield, 6.0/17)

	wide := Learn(h, 40)
	if wide != all {
		t.Errorf("a window wider than the history = %+v, want all of it %+v", wide, all)
	}
	// The window is the last cycles, not the first.
	last := Learn(h, 11)
	exact(t, "window 11: value", last.Value, (0.2+1)/12)
	exact(t, "window 11: yield", last.Yield, 2.0/13)
	if len(h) != 15 || !h[0].HadOutput {
		t.Errorf("Learn changed its input: %v", h)
	}
}

func TestAdaptive_YieldFactorBounds(t *testing.T) {
	for _, c := range []struct {
		yield, want float64
	}{
		{0, 0.2}, {0.05, 0.2}, {0.1, 0.2}, {0.3, 0.6}, {0.5, 1}, {0.75, 1.5}, {1, 2}, {5, 2},
	} {
		exact(t, fmt.Sprintf("YieldFactor(yield %g)", c.yield), Learned{Yield: c.yield}.YieldFactor(), c.want)
	}
	// Ten futile cycles learn a yield of 1/12, which alone would cut
	// staleness to a sixth: the floor keeps a fifth.
	exact(t, "ten futile cycles", Learn(futile(10), 10).YieldFactor(), 0.2)
	for n := 0; n <= 200; n++ {
		for _, h := range [][]Past{futile(n), produced(n, 1)} {
			f := Learn(h, 0).YieldFactor()
			if f < 0.2 || f > 2 {
				t.Fatalf("YieldFactor of %d cycles (output %t) = %g, outside [0.2, 2]", n, n > 0 && h[0].HadOutput, f)
			}
		}
	}
}

func TestAdaptive_ValueWeight(t *testing.T) {
	in := withAdaptive(config.Adaptive{Enabled: true, ValueWeight: 4}, 2, dom("a", 1, 24), dom("b", 1, 24))
	in.History = map[string][]Past{"a": mixed}
	d := Decide(in)
	a, b := option(t, d, "a"), option(t, d, "b")
	exact(t, "a value", a.Value, 4*mixedValue)
	exact(t, "b value (no history: the prior)", b.Value, 4*0.2)
	for _, o := range []Option{a, b} {
		// The learned value is the only term that changes.
		exact(t, o.Domain+" staleness", o.Staleness, logStaleness(1, 24))
		exact(t, o.Domain+" goal", o.Goal, defGoal)
		exact(t, o.Domain+" raw_score", o.RawScore, sumTerms(o)+o.Value)
		exact(t, o.Domain+" score", o.Score, o.RawScore)
	}
	exact(t, "a over b", a.RawScore-b.RawScore, 4*(mixedValue-0.2))
	wantWinner(t, d, "a")

	in.Config.Scoring.Adaptive.ValueWeight = 0
	for _, o := range Decide(in).Options {
		exact(t, "value_weight 0: "+o.Domain+" value", o.Value, 0)
	}
}

func TestAdaptive_YieldStaleness(t *testing.T) {
	full := logStaleness(1, 24)
	mk := func(h []Past, alerts ...Alert) Option {
		a := dom("a", 1, 24)
		a.Alerts = alerts
		in := withAdaptive(config.Adaptive{Enabled: true, YieldStaleness: true}, 2, a, dom("b", 1, 24))
		in.History = map[string][]Past{"a": h, "b": produced(3, 1)}
		o := option(t, Decide(in), "a")
		exact(t, "raw_score", o.RawScore, sumTerms(o)+o.Value)
		return o
	}
	// Three futile cycles: yield 1/5, factor 0.4.
	exact(t, "futile", mk(futile(3)).Staleness, 0.4*full)
	exact(t, "mixed", mk(mixed).Staleness, 1.2*full)
	// Three productive cycles: yield 4/5, factor 1.6.
	exact(t, "productive", mk(produced(3, 0.3)).Staleness, 1.6*full)
	exact(t, "no history", mk(nil).Staleness, full)
	// An active alert is work by definition: the learned yield does not
	// hold it back.
	exact(t, "warning alert exempts", mk(futile(3), Alert{Severity: "warning"}).Staleness, full)
	exact(t, "info alert does not exempt", mk(futile(3), Alert{Severity: "info"}).Staleness, 0.4*full)

	t.Run("stacks with the dry dampener", func(t *testing.T) {
		a := dom("a", 1, 24)
		a.Phase = "execute"
		in := withAdaptive(config.Adaptive{Enabled: true, YieldStaleness: true}, 2, a, dom("b", 1, 24))
		in.Log = []LogEntry{{Domain: "a", Action: "execute", HadOutput: no()}}
		in.History = map[string][]Past{"a": futile(3)}
		exact(t, "a", option(t, Decide(in), "a").Staleness, 0.3*0.4*full)
	})
	t.Run("off without yield_staleness", func(t *testing.T) {
		in := withAdaptive(config.Adaptive{Enabled: true, ValueWeight: 1}, 2, dom("a", 1, 24))
		in.History = map[string][]Past{"a": futile(3)}
		exact(t, "a", option(t, Decide(in), "a").Staleness, full)
	})
}

func TestAdaptive_MissionFocus(t *testing.T) {
	full := logStaleness(1, 24)
	mk := func(a config.Adaptive, mission string, align float64, h []Past, alerts ...Alert) Option {
		d := dom("a", 1, 24)
		d.MissionAlignment, d.Alerts = align, alerts
		in := withAdaptive(a, 2, d, dom("b", 1, 24))
		in.Config.Mission = mission
		in.History = map[string][]Past{"a": h}
		return option(t, Decide(in), "a")
	}
	focus := config.Adaptive{Enabled: true, MissionFocus: true}
	exact(t, "on mission", mk(focus, "Ship v2", 1, nil).Staleness, full)
	exact(t, "alignment 0.6", mk(focus, "Ship v2", 0.6, nil).Staleness, 0.6*full)
	// Below off_mission_threshold the alignment replaces the seed's 0.2
	// dampener; the two are not stacked (0.1 × 0.2).
	exact(t, "alignment 0.1", mk(focus, "Ship v2", 0.1, nil).Staleness, 0.1*full)
	exact(t, "alignment 0", mk(focus, "Ship v2", 0, nil).Staleness, 0)
	exact(t, "no mission", mk(focus, "", 0.1, nil).Staleness, full)
	exact(t, "blank mission", mk(focus, "  ", 0.1, nil).Staleness, full)
	exact(t, "warning alert exempts", mk(focus, "Ship v2", 0.1, nil, Alert{Severity: "warning"}).Staleness, full)
	exact(t, "info alert does not exempt", mk(focus, "Ship v2", 0.1, nil, Alert{Severity: "info"}).Staleness, 0.1*full)

	// Without mission_focus the seed's dampener still applies.
	exact(t, "adaptive without mission_focus", mk(config.Adaptive{Enabled: true}, "Ship v2", 0.1, nil).Staleness, 0.2*full)
	exact(t, "adaptive without mission_focus, aligned", mk(config.Adaptive{Enabled: true}, "Ship v2", 0.6, nil).Staleness, full)

	both := config.Adaptive{Enabled: true, MissionFocus: true, YieldStaleness: true}
	exact(t, "with yield_staleness", mk(both, "Ship v2", 0.5, futile(3)).Staleness, 0.5*0.4*full)
}

func TestAdaptive_GoalPull(t *testing.T) {
	const w = 2.0
	names := []string{"api", "web", "docs", "billing", "zz"}
	goals := []Goal{
		{ID: "g1", Status: "active", Progress: 0.25, Domain: "api"},
		{ID: "g2", Status: "active", Progress: 0.6, RelatedDomains: []string{"api", "web"}},
		// Names no domain: the keyword fallback relates it to docs.
		{ID: "g3", Title: "Write the docs", Status: "active", Progress: 0.1},
		// None of these is an unmet active goal.
		{ID: "g4", Status: "completed", Progress: 0, Domain: "billing"},
		{ID: "g5", Status: "active", Progress: 0, Domain: "billing", Quarantined: true},
		{ID: "g6", Status: "active", Progress: 1, Domain: "billing"},
		{ID: "g7", Status: "active", Progress: 1.5, RelatedDomains: []string{"billing"}},
		{ID: "g8", Status: "paused", Progress: 0, Domain: "billing"},
	}
	build := func(a config.Adaptive) Decision {
		var ds []Domain
		for _, n := range names {
			ds = append(ds, dom(n, 1, 24))
		}
		in := withAdaptive(a, 2, ds...)
		in.Goals = goals
		return Decide(in)
	}
	d := build(config.Adaptive{Enabled: true, GoalPullWeight: w})
	want := map[string]float64{
		"api":     w * (1 - 0.25), // the least advanced of g1 and g2
		"web":     w * (1 - 0.6),
		"docs":    w * (1 - 0.1),
		"billing": 0,
		"zz":      0, // no goal concerns it: nothing, where 3-C gives 0.5
	}
	for n, v := range want {
		o := option(t, d, n)
		exact(t, n+" goal", o.Goal, v)
		exact(t, n+" raw_score", o.RawScore, sumTerms(o)+o.Value)
	}
	wantWinner(t, d, "docs")

	// The same goals under 3-C (goal_pull_weight 0), for contrast: every
	// domain keeps its seed goal term.
	seed := build(config.Adaptive{Enabled: true})
	for n, v := range map[string]float64{"api": 0.5 * 0.75 * 0.3, "web": 0.5 * 0.4 * 0.3, "docs": 0.5 * 0.9 * 0.3, "billing": 0, "zz": defGoal} {
		exact(t, "goal_pull_weight 0: "+n+" goal", option(t, seed, n).Goal, v)
	}

	t.Run("negative progress pulls fully", func(t *testing.T) {
		in := withAdaptive(config.Adaptive{Enabled: true, GoalPullWeight: w}, 2, dom("api", 1, 24))
		in.Goals = []Goal{{ID: "g", Status: "active", Progress: -3, Domain: "api"}}
		exact(t, "api goal", option(t, Decide(in), "api").Goal, w)
	})
	t.Run("keyword fallback only for goals naming no domain", func(t *testing.T) {
		in := withAdaptive(config.Adaptive{Enabled: true, GoalPullWeight: w}, 2, dom("docs", 1, 24), dom("web", 1, 24))
		in.Goals = []Goal{{ID: "docs_site", Title: "Publish the docs", Status: "active", Progress: 0, Domain: "web"}}
		d := Decide(in)
		exact(t, "docs goal", option(t, d, "docs").Goal, 0)
		exact(t, "web goal", option(t, d, "web").Goal, w)
	})
}

func TestAdaptive_ImplementationGetsValueAndPull(t *testing.T) {
	a := config.Adaptive{Enabled: true, ValueWeight: 3, GoalPullWeight: 2}
	in := withAdaptive(a, 3, dom("api", 1, 24))
	in.Config.Implementation.Enabled = true
	in.Impl = Impl{PendingCount: 2, ActionablePending: 2, OldestPendingHours: 5, HighestRice: 3}
	in.Goals = []Goal{{ID: "mvp", Status: "active", Progress: 0.5, Domain: ImplementationDomain}}
	in.History = map[string][]Past{ImplementationDomain: mixed}
	d := Decide(in)
	o := option(t, d, ImplementationDomain)
	if !o.Virtual {
		t.Fatalf("%s is not the virtual domain", o.Domain)
	}
	exact(t, "value", o.Value, 3*mixedValue)
	exact(t, "goal", o.Goal, 2*0.5)
	exact(t, "raw_score", o.RawScore, sumTerms(o)+o.Value)
	// The goal concerns only the virtual domain.
	exact(t, "api goal", option(t, d, "api").Goal, 0)

	in.Config.Scoring.Adaptive = config.Adaptive{}
	seed := option(t, Decide(in), ImplementationDomain)
	exact(t, "off: value", seed.Value, 0)
	exact(t, "off: goal", seed.Goal, 0.5*0.5*0.3)
}

// richInput is an input in which every adaptive term would move a score:
// a mission with an off-mission domain, a dry domain, goals, an alert,
// an implementation queue and a recorded history for every domain.
func richInput(cfg *config.Config) Input {
	ds := []Domain{dom("health", 2, 8), dom("coverage", 0.5, 24), dom("backlog", 1, 4), dom("market", 0.3, 48)}
	ds[0].MissionAlignment, ds[1].MissionAlignment, ds[2].MissionAlignment, ds[3].MissionAlignment = 0.7, 0.4, 1, 0
	ds[1].Alerts = []Alert{{Severity: "warning"}}
	ds[2].Phase = "strategize"
	in := newInput(3, ds...)
	if cfg != nil {
		// A loaded config with richInput's domains in place of its own.
		cfg.Domains = in.Config.Domains
		cfg.ProgressiveComplex.CurrentLevel = 3
		in.Config = cfg
	}
	in.Config.Mission = "Ship v1"
	in.Config.Implementation.Enabled = true
	in.Impl = Impl{PendingCount: 1, ActionablePending: 1, OldestPendingHours: 3, HighestRice: 2}
	in.Goals = []Goal{
		{ID: "ship_v1", Status: "active", Progress: 0.3, Domain: "backlog"},
		{ID: "coverage_80", Title: "Coverage at 80", Status: "active", Progress: 0.5},
	}
	in.Log = []LogEntry{
		{Cycle: 1, Domain: "health", Action: "execute", HadOutput: no()},
		{Cycle: 2, Domain: "backlog", Action: "execute", HadOutput: yes()},
		{Cycle: 3, Domain: "market", Action: "execute", HadOutput: yes()},
	}
	in.DomainExecutions = map[string]int{"health": 1, "backlog": 1, "market": 1}
	in.TotalSkillExecutions = 3
	return in
}

// someHistory is a recorded history for richInput's domains.
func someHistory() map[string][]Past {
	return map[string][]Past{
		"health":             futile(4),
		"backlog":            produced(3, 0.5),
		"market":             mixed,
		ImplementationDomain: produced(2, 0.8),
	}
}

func TestAdaptive_OffIsTheSeed(t *testing.T) {
	seed := Decide(richInput(nil))
	everything := config.Adaptive{ValueWeight: 20, YieldStaleness: true, MissionFocus: true, GoalPullWeight: 15, Window: 3}

	for _, c := range []struct {
		what string
		a    config.Adaptive
	}{
		{"block absent", config.Adaptive{}},
		{"block at its defaults", config.Default().Scoring.Adaptive},
		{"enabled false, every term set", everything},
	} {
		t.Run(c.what, func(t *testing.T) {
			in := richInput(nil)
			in.Config.Scoring.Adaptive = c.a
			in.History = someHistory()
			if got := Decide(in); !reflect.DeepEqual(got, seed) {
				t.Fatalf("with history:\n%s\nwant the seed's:\n%s", render(got), render(seed))
			}
		})
	}

	// The same input with the terms on decides otherwise: the history
	// above is one the comparison could see.
	on := everything
	on.Enabled = true
	in := richInput(nil)
	in.Config.Scoring.Adaptive = on
	in.History = someHistory()
	if got := Decide(in); winner(got) == winner(seed) {
		t.Fatalf("adaptive scoring picks the seed's winner %q on this input; the comparison above proves nothing\n%s", winner(seed), render(got))
	}
}

// TestAdaptive_OffIsTheSeedFromJSON reads scoring.adaptive the way a
// project does: an OODA-loop config without the block, and the same
// config with the block present but disabled, both decide as the seed.
func TestAdaptive_OffIsTheSeedFromJSON(t *testing.T) {
	raw, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Skipf("fixture %s not available: %v", exampleConfig, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	scoring, _ := doc["scoring"].(map[string]any)
	if scoring == nil {
		scoring = map[string]any{}
		doc["scoring"] = scoring
	}
	if _, ok := scoring["adaptive"]; ok {
		t.Fatalf("%s has a scoring.adaptive block; the test needs a config without one", exampleConfig)
	}
	parse := func(block map[string]any) *config.Config {
		t.Helper()
		if block == nil {
			delete(scoring, "adaptive")
		} else {
			scoring["adaptive"] = block
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "config.json")
		cfg, err := config.Parse(file, b)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	decideWith := func(cfg *config.Config, history bool) Decision {
		in := richInput(cfg)
		if history {
			in.History = someHistory()
		}
		return Decide(in)
	}
	seed := decideWith(parse(nil), false)
	all := map[string]any{"value_weight": 20, "yield_staleness": true, "mission_focus": true, "goal_pull_weight": 15, "window": 3}

	absent := parse(nil)
	if absent.Scoring.Adaptive.On() {
		t.Fatal("an OODA-loop config without scoring.adaptive turns adaptive scoring on")
	}
	if got := decideWith(absent, true); !reflect.DeepEqual(got, seed) {
		t.Errorf("block absent, with history:\n%s\nwant:\n%s", render(got), render(seed))
	}
	disabled := map[string]any{"enabled": false}
	for k, v := range all {
		disabled[k] = v
	}
	off := parse(disabled)
	if off.Scoring.Adaptive.ValueWeight != 20 || !off.Scoring.Adaptive.YieldStaleness || off.Scoring.Adaptive.Window != 3 {
		t.Fatalf("scoring.adaptive not read: %+v", off.Scoring.Adaptive)
	}
	if got := decideWith(off, true); !reflect.DeepEqual(got, seed) {
		t.Errorf("enabled false, with history:\n%s\nwant:\n%s", render(got), render(seed))
	}
	enabled := map[string]any{"enabled": true}
	for k, v := range all {
		enabled[k] = v
	}
	if got := decideWith(parse(enabled), true); reflect.DeepEqual(got, seed) {
		t.Error("enabled true decides exactly as the seed: the comparisons above prove nothing")
	}
}

// TestAdaptive_UnmodifiedOODALoopConfig decides on the original project's
// example configuration exactly as given: a recorded history changes
// nothing.
func TestAdaptive_UnmodifiedOODALoopConfig(t *testing.T) {
	base := seasonInput(t, exampleConfig)
	if base.Config.Scoring.Adaptive.On() {
		t.Fatal("the original project's example config turns adaptive scoring on")
	}
	base.Goals = []Goal{{ID: "g", Title: "Grow test coverage", Status: "active", Progress: 0.2}}
	hist := map[string][]Past{}
	for i, d := range base.Domains {
		if i%2 == 0 {
			hist[d.Name] = futile(5)
		} else {
			hist[d.Name] = produced(5, 0.8)
		}
	}
	if len(hist) == 0 {
		t.Fatalf("%s declares no domain", exampleConfig)
	}
	seed := Decide(base)
	in := base
	in.History = hist
	if got := Decide(in); !reflect.DeepEqual(got, seed) {
		t.Fatalf("with history:\n%s\nwant the seed's:\n%s", render(got), render(seed))
	}

	// The same config with adaptive scoring on reads that history.
	cfg := *base.Config
	cfg.Scoring.Adaptive = config.InitAdaptive()
	in.Config = &cfg
	if got := Decide(in); reflect.DeepEqual(got, seed) {
		t.Fatal("adaptive scoring on decides exactly as the seed: the comparison above proves nothing")
	}
}

// TestAdaptive_LearnsFromHistory is the point of adaptive scoring: a heavy
// domain that was stale but found nothing in its recent cycles keeps
// winning under the seed's score, which aims by time alone; with the
// terms `ooda init` writes, the domain whose cycles produced wins.
func TestAdaptive_LearnsFromHistory(t *testing.T) {
	dash := dom("dashboards", 2, 8) // ran two cycles ago, found nothing
	backlog := dom("backlog", 1, 4) // ran last cycle, produced
	backlog.Phase = "strategize"
	mk := func(a config.Adaptive) Input {
		in := withAdaptive(a, 2, dash, backlog)
		var log []LogEntry
		hist := map[string][]Past{}
		for c := 1; c <= 10; c++ {
			if c%2 == 1 {
				log = append(log, LogEntry{Cycle: c, Domain: "dashboards", Action: "execute", HadOutput: no()})
				hist["dashboards"] = append(hist["dashboards"], past(0, false))
			} else {
				log = append(log, LogEntry{Cycle: c, Domain: "backlog", Action: "execute", HadOutput: yes()})
				hist["backlog"] = append(hist["backlog"], past(0.5, true))
			}
		}
		in.Log = log
		in.DomainExecutions = map[string]int{"dashboards": 5, "backlog": 5}
		in.TotalSkillExecutions = 10
		if a.On() {
			in.History = hist
		}
		return in
	}
	seed := Decide(mk(config.Adaptive{}))
	wantWinner(t, seed, "dashboards")
	d := Decide(mk(config.InitAdaptive()))
	wantWinner(t, d, "backlog")
	if !d.ScoreVerified {
		t.Errorf("score not verified: %s", d.Mismatch)
	}
	dOpt, bOpt := option(t, d, "dashboards"), option(t, d, "backlog")
	if !(dOpt.Staleness < option(t, seed, "dashboards").Staleness && bOpt.Staleness > option(t, seed, "backlog").Staleness) {
		t.Errorf("learned yield did not move staleness: dashboards %.4f → %.4f, backlog %.4f → %.4f",
			option(t, seed, "dashboards").Staleness, dOpt.Staleness, option(t, seed, "backlog").Staleness, bOpt.Staleness)
	}
	if !(bOpt.Value > dOpt.Value) {
		t.Errorf("learned value: backlog %.4f, dashboards %.4f; want backlog higher", bOpt.Value, dOpt.Value)
	}
}

// A hand-edited outcomes.json may hold any number as a cycle's quality:
// the learned value stays a mean of fractions, so no score becomes
// infinite (a decision log holding one could not be written as JSON).
func TestAdaptive_LearnBoundsAHostileQuality(t *testing.T) {
	l := Learn([]Past{{Quality: 1e308}, {Quality: 1e308}, {Quality: -5}}, 10)
	if want := (0.2 + 1 + 1 + 0) / 4; l.Value != want {
		t.Fatalf("value %v, want %v", l.Value, want)
	}
}
