package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

func run(t *testing.T, sc *Scenario, o Options) Result {
	t.Helper()
	r, err := Run(context.Background(), sc, o)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	return r
}

func parse(t *testing.T, doc string) *Scenario {
	t.Helper()
	sc, err := Parse([]byte(doc), "test.json")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func val(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// Both strategies' results on the built-in scenarios are pinned, and the
// adaptive ones beat the original engine's published table: any
// change to the seed's scoring, to the engine's handling of a cycle, or to
// the adaptive terms shows here as a changed figure or winner
// (OODA_UPDATE_GOLDEN=1 rewrites the file after a deliberate change).
func TestSim_Golden(t *testing.T) {
	var all []Result
	for _, st := range []string{StrategySpec, StrategyAdaptive} {
		for _, name := range Builtins() {
			for _, n := range []int{12, 20} {
				sc, _ := Builtin(name)
				all = append(all, run(t, sc, Options{Cycles: n, Strategy: st}))
			}
		}
	}
	for _, r := range all {
		if r.Strategy != StrategyAdaptive {
			continue
		}
		// The done-when of the simulation benchmark: with the strategy
		// `ooda init` writes, every cell of the original engine's
		// published table is beaten, at 12 and at 20 cycles.
		if f := Published[r.Scenario][r.Cycles]; !r.Beats(f) {
			t.Errorf("%s at %d cycles: loop value %.3f, futile %.1f %%, mission hit %.1f %%, goal %.1f %% does not beat %+v (winners %v)",
				r.Scenario, r.Cycles, r.LoopValue, val(r.FutileRatePct), val(r.MissionHitRatePct), val(r.GoalProgressPct), f, r.Winners)
		}
	}
	got, _ := json.MarshalIndent(all, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "builtin-results.json")
	if os.Getenv("OODA_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("results differ from %s (OODA_UPDATE_GOLDEN=1 rewrites it):\n%s", path, got)
	}
}

// The seed's scoring, run through the simulator, reproduces the original
// engine's published figures where its rules and ours are the same: the
// library scenario exactly, at both lengths.
func TestSim_SpecReproducesTheOriginalOnTheLibrary(t *testing.T) {
	sc, _ := Builtin("B_library")
	for _, n := range []int{12, 20} {
		r := run(t, sc, Options{Cycles: n, Strategy: StrategySpec})
		f := Published["B_library"][n]
		got := Figures{r.LoopValue, val(r.FutileRatePct), val(r.MissionHitRatePct), val(r.GoalProgressPct)}
		if got != f {
			t.Errorf("%d cycles: %+v, published %+v", n, got, f)
		}
	}
}

// The environment's response (docs/sim.md): an on-mission execute domain's
// pull request is merged after its cycle and the merge both advances the
// goal and is back-annotated (0.5 → 0.8, the last one by the Orient-only
// pass); once the goal is met and the domain has gone dry, the idle gate
// skips the cycles.
func TestSim_MergesAdvanceTheGoalAndTheIdleGateSkips(t *testing.T) {
	sc := parse(t, `{"name": "solo", "mission": "ship",
		"domains": {"build": {"weight": 1, "mission_alignment": 1, "kind": "execute"}},
		"goal": {"id": "ship", "domain": "build", "target_cycles": 3},
		"work": {"build": {"until": 4}}}`)
	r := run(t, sc, Options{Cycles: 6, Strategy: StrategySpec, Keep: true})
	defer os.RemoveAll(r.Project)
	want := []string{"build", "build", "build", "build", Idle, Idle}
	if fmt.Sprint(r.Winners) != fmt.Sprint(want) {
		t.Fatalf("winners %v, want %v", r.Winners, want)
	}
	if r.SkippedIdle != 2 || val(r.GoalProgressPct) != 100 {
		t.Errorf("skipped_idle %d, goal %v", r.SkippedIdle, val(r.GoalProgressPct))
	}
	// Four cycles ran: three merged PRs (0.8 each) and one futile.
	if r.LoopValue != 0.6 || val(r.FutileRatePct) != 25 {
		t.Errorf("loop value %v futile %v", r.LoopValue, val(r.FutileRatePct))
	}
	snap, err := state.New(r.Project).Load()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, o := range snap.Outcomes.Entries {
		types = append(types, o.ResultType)
	}
	// The third PR was merged after the third cycle: the fourth cycle's
	// own Orient annotated it, as a forge would show it.
	// The idle cycles are recorded as observe-only cycles.
	if got := strings.Join(types, " "); got != "pr_merged pr_merged pr_merged futile observe observe" {
		t.Errorf("outcomes %s", got)
	}
}

// The simulated human rejects an off-mission domain's pull request: the
// cycle's quality falls to 0 once Orient reads the rejection, it is no
// mission hit, and it does not advance a goal. The rejection also costs
// the domain confidence (2-B: 0.7 → 0.5), below the threshold, so the
// next cycle is skipped, which the engine records as an observe-only
// cycle (0.1).
func TestSim_OffMissionPullRequestsAreRejected(t *testing.T) {
	sc := parse(t, `{"name": "side", "mission": "core",
		"domains": {"side": {"weight": 1, "mission_alignment": 0.2, "kind": "execute"}},
		"goal": {"id": "g", "domain": "side", "target_cycles": 2},
		"work": {"side": true}}`)
	r := run(t, sc, Options{Cycles: 2, Strategy: StrategySpec})
	if fmt.Sprint(r.Winners) != "[side "+Skip+"]" {
		t.Fatalf("winners %v", r.Winners)
	}
	if r.LoopValue != 0.05 || val(r.GoalProgressPct) != 0 || r.MissionHitRatePct != nil || val(r.FutileRatePct) != 0 {
		t.Errorf("loop value %v goal %v mission hit %v futile %v", r.LoopValue, val(r.GoalProgressPct), val(r.MissionHitRatePct), val(r.FutileRatePct))
	}
}

// Work rules and alerts reach the engine as a skill's state file would
// carry them: a critical alert makes its domain win at once (3-A0), and a
// domain without work that cycle is futile.
func TestSim_AlertsAndWorkReachTheEngine(t *testing.T) {
	sc := parse(t, `{"name": "alerts", "mission": "m",
		"domains": {"big": {"weight": 3, "mission_alignment": 1, "kind": "strategize"},
		            "small": {"weight": 0.1, "mission_alignment": 1, "kind": "observe"}},
		"work": {"big": true, "small": {"cycles": [2]}},
		"alerts": {"small": [{"cycle": 2, "severity": "critical"}]}}`)
	r := run(t, sc, Options{Cycles: 3, Strategy: StrategySpec})
	if r.Winners[1] != "small" {
		t.Errorf("winners %v: the critical alert of cycle 2 did not win", r.Winners)
	}
	if val(r.FutileRatePct) != 0 || val(r.MissionHitRatePct) != 100 {
		t.Errorf("%+v", r)
	}
	// A scenario without a goal has no goal progress.
	if r.GoalProgressPct != nil {
		t.Errorf("goal %v", *r.GoalProgressPct)
	}
}

// --no-mission runs the project without its mission: the engine's score
// has no mission term, so an off-mission heavy domain wins.
func TestSim_NoMission(t *testing.T) {
	sc := parse(t, `{"name": "nm", "mission": "m",
		"domains": {"heavy": {"weight": 2, "mission_alignment": 0, "kind": "observe"},
		            "core": {"weight": 1, "mission_alignment": 1, "kind": "observe"}},
		"work": {"heavy": true, "core": true}}`)
	with := run(t, sc, Options{Cycles: 1, Strategy: StrategySpec})
	without := run(t, sc, Options{Cycles: 1, Strategy: StrategySpec, NoMission: true})
	if with.Winners[0] != "core" || without.Winners[0] != "heavy" {
		t.Errorf("with mission %v, without %v", with.Winners, without.Winners)
	}
	cfg := Config(sc, StrategySpec, true)
	if _, ok := cfg["mission"]; ok {
		t.Error("the config has a mission")
	}
}

// The improvement is general: on scenarios the decision logic was never
// tuned on, the adaptive strategy's mean mission-hit rate and goal
// progress are higher than the seed's, its loop value no lower. OODA_SIM_UNSEEN=N runs N
// scenarios instead of 6 (docs/benchmarks.md's figures use 40 at 12 and at
// 20 cycles); OODA_SIM_SEED picks another set.
func TestSim_UnseenScenarios(t *testing.T) {
	n, cycles, seed := 6, 20, uint64(3)
	if v, err := strconv.Atoi(os.Getenv("OODA_SIM_UNSEEN")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("OODA_SIM_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	if v, err := strconv.ParseUint(os.Getenv("OODA_SIM_SEED"), 10, 64); err == nil {
		seed = v
	}
	r := rand.New(rand.NewPCG(seed, 7))
	var sum [2][4]float64
	for i := 0; i < n; i++ {
		sc := genScenario(r, i)
		for k, st := range []string{StrategySpec, StrategyAdaptive} {
			res := run(t, sc, Options{Cycles: cycles, Strategy: st})
			for j, v := range []float64{res.LoopValue, val(res.FutileRatePct), max(val(res.MissionHitRatePct), 0), max(val(res.GoalProgressPct), 0)} {
				sum[k][j] += v / float64(n)
			}
		}
	}
	t.Logf("%d unseen scenarios, %d cycles (seed %d): spec loop value %.3f futile %.1f %% mission hit %.1f %% goal %.1f %%; adaptive %.3f, %.1f %%, %.1f %%, %.1f %%",
		n, cycles, seed, sum[0][0], sum[0][1], sum[0][2], sum[0][3], sum[1][0], sum[1][1], sum[1][2], sum[1][3])
	if sum[1][0] < sum[0][0] || sum[1][2] <= sum[0][2] || sum[1][3] <= sum[0][3] {
		t.Errorf("adaptive is not better than the seed on unseen scenarios: spec %v, adaptive %v", sum[0], sum[1])
	}
}

// A scenario in which nothing ever has work trips the engine's saturation
// breaker, which creates the HALT file: the run goes on to its last cycle,
// each halted cycle a cycle that ran and did nothing.
func TestSim_HaltedByABreaker(t *testing.T) {
	sc := parse(t, `{"name": "dry", "mission": "m",
		"domains": {"scan": {"weight": 1, "mission_alignment": 1, "kind": "observe"}}}`)
	r := run(t, sc, Options{Cycles: 20, Strategy: StrategySpec})
	if r.Halted == 0 || r.Winners[len(r.Winners)-1] != Halted || len(r.Winners) != 20 {
		t.Fatalf("halted %d, winners %v", r.Halted, r.Winners)
	}
	// Every halted cycle ran and is futile; the skips before the breaker
	// are recorded as observe-only cycles (0.1), the rest futile.
	if val(r.FutileRatePct) < 100*float64(r.Halted)/20 || r.LoopValue > 0.05 {
		t.Errorf("futile %v loop value %v", val(r.FutileRatePct), r.LoopValue)
	}
}
