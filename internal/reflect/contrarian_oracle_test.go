package reflect

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	stdreflect "reflect"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// contrarianCheckOracle is ContrarianCheck as it was, with the decisions
// copied into a list of their own, kept word for word as its oracle.
func contrarianCheckOracle(in ContrarianInput) (*state.Intervention, string) {
	interval := memDefaultInterval
	if in.Config != nil && in.Config.Memory.ContrarianCheckInterval > 0 {
		interval = in.Config.Memory.ContrarianCheckInterval
	}
	if in.Cycle < 1 || in.Cycle%interval != 0 {
		return nil, fmt.Sprintf("not a contrarian cycle (every %d cycles)", interval)
	}
	var decisions []state.DecisionEntry
	for _, e := range in.Log {
		if !e.IsSkip() && e.SelectedDomain != "" && e.Cycle <= in.Cycle {
			decisions = append(decisions, e)
		}
	}
	window := decisions[max(0, len(decisions)-ContrarianWindow):]
	wins := map[string]int{}
	dom, domN := "", 0
	for _, e := range window {
		wins[e.SelectedDomain]++
		if n := wins[e.SelectedDomain]; n > domN {
			dom, domN = e.SelectedDomain, n
		}
	}
	if domN < ContrarianWins {
		return nil, fmt.Sprintf("no domain won %d of the last %d decisions (most: %d)", ContrarianWins, ContrarianWindow, domN)
	}
	selected := map[string]int{}
	for _, e := range decisions {
		selected[e.SelectedDomain]++
	}
	var disabled []string
	if in.Config != nil {
		if _, mode, on := in.Config.SeasonModes.Active(); on {
			disabled = mode.DisabledDomains
		}
	}
	least, leastN := "", math.MaxInt
	if in.Config != nil {
		for _, d := range in.Config.Domains {
			if d.Name == dom || !d.Scoreable() || !d.IsEnabled() || memContains(disabled, d.Name) {
				continue
			}
			if n := selected[d.Name]; n < leastN {
				least, leastN = d.Name, n
			}
		}
	}
	if least == "" {
		return nil, fmt.Sprintf("%s won %d of the last %d decisions but no other active domain exists", dom, domN, len(window))
	}
	iv := &state.Intervention{Domain: least, Delta: ContrarianDelta, Type: "contrarian",
		Reason: fmt.Sprintf("Contrarian check at cycle %d: %s won %d of the last %d decisions; %s selected least (%d)",
			in.Cycle, dom, domN, len(window), least, leastN),
		CreatedAtCycle: in.Cycle, ExpiresAfterCycles: ContrarianCycles}
	// The original's contrarian interventions name the domain they lean
	// against; its readers show it.
	if b, err := json.Marshal(dom); err == nil {
		iv.Extra = state.Extra{"dominant_domain": b}
	}
	return iv, iv.Reason
}

// The check decides as the version that copied the decisions did, on
// random logs: skips, entries without a domain, entries of later cycles,
// logs shorter and longer than the window, ties, paused domains, every
// cycle around the interval.
func TestContrarianCheckMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	names := []string{"a", "b", "c", "d", "e"}
	hits := 0
	for i := 0; i < 20000; i++ {
		cfg := memTCfg(names[:1+rng.Intn(len(names))]...)
		if rng.Intn(4) == 0 {
			cfg.Domains[rng.Intn(len(cfg.Domains))].Status = "paused"
		}
		if rng.Intn(5) == 0 {
			cfg.Memory.ContrarianCheckInterval = 1 + rng.Intn(4)
		}
		var log []state.DecisionEntry
		for c, n := 1, rng.Intn(40); c <= n; c++ {
			e := state.DecisionEntry{Cycle: c, Action: "execute", SelectedDomain: names[rng.Intn(2+rng.Intn(len(names)-1))]}
			switch rng.Intn(10) {
			case 0:
				e.Action = "skip"
			case 1:
				e.SelectedDomain = ""
			case 2:
				e.Cycle += 50
			}
			if rng.Intn(3) > 0 {
				e.SelectedDomain = "a"
			}
			log = append(log, e)
		}
		in := ContrarianInput{Cycle: []int{10, 20, 30, 40, rng.Intn(45)}[rng.Intn(5)], Config: cfg, Log: log}
		if rng.Intn(30) == 0 {
			in.Config = nil
		}
		giv, gwhy := ContrarianCheck(in)
		wiv, wwhy := contrarianCheckOracle(in)
		if gwhy != wwhy || !stdreflect.DeepEqual(giv, wiv) {
			t.Fatalf("cycle %d, %d entries: %+v %q; the oracle %+v %q", in.Cycle, len(log), giv, gwhy, wiv, wwhy)
		}
		if giv != nil {
			hits++
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d checks made an intervention", hits)
	}
}

// The check copies no entry of the log: it allocates the same whatever
// the log's length.
func TestContrarianCheckAllocationsFlat(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts vary at random under -race (sync.Pool drops items)")
	}
	cfg := memTCfg("a", "b", "c")
	allocs := func(n int) float64 {
		var log []state.DecisionEntry
		for c := 1; c <= n; c++ {
			log = append(log, state.DecisionEntry{Cycle: c, Action: "execute", SelectedDomain: "a"})
		}
		return testing.AllocsPerRun(20, func() { ContrarianCheck(ContrarianInput{Cycle: 40, Config: cfg, Log: log}) })
	}
	if short, long := allocs(8), allocs(40); long > short {
		t.Fatalf("%v allocations for 8 entries, %v for 40", short, long)
	}
}

// BenchmarkContrarianCheck is the check at cycle 2,000 of a project
// whose twenty-entry decision log one domain won throughout.
func BenchmarkContrarianCheck(b *testing.B) {
	cfg := memTCfg("d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7")
	var log []state.DecisionEntry
	for c := 1981; c <= 2000; c++ {
		log = append(log, state.DecisionEntry{Cycle: c, Action: "execute", SelectedDomain: "d0"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if iv, _ := ContrarianCheck(ContrarianInput{Cycle: 2000, Config: cfg, Log: log}); iv == nil {
			b.Fatal("no intervention")
		}
	}
}
