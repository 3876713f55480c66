package decide

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// dumpDecision writes every field of a decision, pointers followed and the
// winner named by its row, so that two decisions compare as text (NaN
// included, which reflect.DeepEqual never finds equal).
func dumpDecision(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode=%q skip=%q result=%q gated=%v guidance=%q scored=%v verified=%v mismatch=%q blocked=%q\nnotes=%q\n",
		d.CycleMode, d.SkipReason, d.Result, d.Gated, d.Guidance, d.Scored, d.ScoreVerified, d.Mismatch, d.QuarantineBlocked, d.Notes)
	row := -1
	for i := range d.Options {
		if d.Winner == &d.Options[i] {
			row = i
		}
	}
	switch {
	case d.Winner == nil:
		b.WriteString("winner=none\n")
	case row >= 0:
		fmt.Fprintf(&b, "winner=row %d\n", row)
	default:
		b.WriteString("winner=outside the table: " + dumpOption(*d.Winner) + "\n")
	}
	for _, o := range d.Options {
		b.WriteString(dumpOption(o) + "\n")
	}
	return b.String()
}

func dumpOption(o Option) string {
	h, p := "nil", "nil"
	if o.Hours != nil {
		h = fmt.Sprint(*o.Hours)
	}
	if o.Pending != nil {
		p = fmt.Sprint(*o.Pending)
	}
	o.Hours, o.Pending = nil, nil
	return fmt.Sprintf("%+v hours=%s pending=%s", o, h, p)
}

// randomInput is a project of up to n domains drawn from r: equal and
// unequal weights (now and then a NaN or an infinite one), alerts,
// fallbacks, cooldowns, goals relating by domain, by related_domains and by
// keyword, a decision log, memos, quarantines, lessons, a mission, the
// implementation domain and season modes.
func randomInput(r *rand.Rand, n int) Input {
	names := []string{"api", "test_coverage", "docs", "Test-Coverage", "ui", "sec", "perf", "deps", "implementation", "ops"}
	ds := make([]Domain, 0, n)
	weights := []float64{1, 1, 1, 0.5, 2, 1.5, 0}
	for i := 0; i < n; i++ {
		name := names[i%len(names)]
		if i >= len(names) {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		w := weights[r.IntN(len(weights))]
		switch r.IntN(60) {
		case 0:
			w = math.NaN()
		case 1:
			w = math.Inf(1)
		}
		h := float64(r.IntN(200))
		if r.IntN(40) == 0 {
			h = math.Inf(1)
		}
		d := dom(name, w, h)
		d.Phase = []string{"observe", "detect", "strategize", "execute", "support"}[r.IntN(5)]
		d.Fallback = r.IntN(5) == 0
		d.MissionAlignment = float64(r.IntN(5)) / 4
		switch r.IntN(8) {
		case 0:
			d.Alerts = []Alert{{Severity: "warning"}}
		case 1:
			d.Alerts = []Alert{{Severity: "critical"}}
		case 2:
			d.Alerts = []Alert{{Severity: "info"}}
		}
		if r.IntN(6) == 0 {
			d.MinIntervalHours = f64(float64(r.IntN(100)))
		}
		if r.IntN(10) == 0 {
			d.GoalContribution = f64(float64(r.IntN(3)) / 2)
		}
		ds = append(ds, d)
	}
	in := newInput(r.IntN(4), ds...)
	if r.IntN(2) == 0 {
		in.Config.Mission = "Ship it"
	}
	in.Config.Implementation.Enabled = r.IntN(2) == 0
	in.Config.GoalCompletionIdle = r.IntN(3) == 0
	if r.IntN(4) == 0 {
		in.Config.Scoring.StalenessCurve = "linear"
	}
	in.Config.Scoring.BalanceEnabled = r.IntN(2) == 0
	in.Config.Safety.ConfidenceThreshold = []float64{0.3, 0.6, 0.9}[r.IntN(3)]
	if r.IntN(3) == 0 {
		pc := &in.Config.ProgressiveComplex
		pc.Levels = map[string]config.Level{"0": {Domains: json.RawMessage(fmt.Sprint(r.IntN(4)))}, "1": {Domains: json.RawMessage(fmt.Sprint(r.IntN(6)))}}
	}
	if r.IntN(4) == 0 && n > 0 {
		in.Config.SeasonModes.Enabled = true
		in.Config.SeasonModes.Modes = map[string]config.SeasonMode{"default": seasonDisabling(ds[r.IntN(len(ds))].Name)}
	}
	in.Impl = Impl{PendingCount: r.IntN(3), ActionablePending: r.IntN(2), OldestPendingHours: float64(r.IntN(50)), HighestRice: float64(r.IntN(300))}
	for _, d := range ds {
		if r.IntN(5) > 0 {
			in.Confidence[d.Name] = float64(r.IntN(11)) / 10
		}
		if r.IntN(4) == 0 {
			in.Memo[d.Name] = float64(r.IntN(5)) - 2
		}
		in.DomainExecutions[d.Name] = r.IntN(5)
		in.TotalSkillExecutions += in.DomainExecutions[d.Name]
		if r.IntN(8) == 0 {
			if in.Quarantined == nil {
				in.Quarantined = map[string]bool{}
			}
			in.Quarantined[d.Name] = true
		}
		if r.IntN(6) == 0 {
			if in.Lean == nil {
				in.Lean = map[string]int{}
			}
			in.Lean[d.Name] = r.IntN(3) - 1
		}
	}
	for g := r.IntN(5); g > 0; g-- {
		goal := Goal{ID: fmt.Sprintf("goal-%d", g), Status: []string{"active", "active", "completed", "paused"}[r.IntN(4)], Progress: float64(r.IntN(12)) / 10, Quarantined: r.IntN(10) == 0}
		switch {
		case n == 0:
		case r.IntN(3) == 0:
			goal.Domain = ds[r.IntN(n)].Name
		case r.IntN(2) == 0:
			goal.RelatedDomains = []string{ds[r.IntN(n)].Name, ImplementationDomain}
		default:
			goal.Title = []string{"Keep TEST coverage high", "Faster API", "", "docs-first"}[r.IntN(4)]
			if r.IntN(2) == 0 {
				goal.ID = "improve_" + ds[r.IntN(n)].Name
			}
		}
		in.Goals = append(in.Goals, goal)
	}
	for c := r.IntN(8); c > 0 && n > 0; c-- {
		in.Log = append(in.Log, LogEntry{Cycle: c, Domain: ds[r.IntN(n)].Name, Action: []string{"execute", "skip", ""}[r.IntN(3)],
			HadOutput: []*bool{nil, yes(), no()}[r.IntN(3)], SelectedByAlert: r.IntN(3) == 0})
	}
	return in
}

// TestDecideMatchesLegacy compares every field of the decision with the
// computation as it was before the per-domain work was cut (legacyDecide),
// over random projects and the benchmark's large ones.
func TestDecideMatchesLegacy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 4))
	check := func(name string, in Input) {
		t.Helper()
		domains := fmt.Sprintf("%+v", in.Domains)
		got := dumpDecision(Decide(in))
		if after := fmt.Sprintf("%+v", in.Domains); after != domains {
			t.Fatalf("%s: Decide changed its input's domains\nbefore: %s\nafter:  %s", name, domains, after)
		}
		want := dumpDecision(legacyDecide(in))
		if got != want {
			t.Fatalf("%s: the decision differs from the legacy computation\n got: %s\nwant: %s", name, got, want)
		}
	}
	for i := 0; i < 3000; i++ {
		check(fmt.Sprintf("random #%d", i), randomInput(r, r.IntN(45)))
	}
	check("bench 8", benchInput(8))
	check("bench 1000", benchInput(1000))
	check("bench 1000, equal weights", benchInputEqual(1000))
}

// TestByWeightFallsBack shows both ways byWeight takes: weights already in
// order give back the same indexes, and a NaN anywhere sends even an
// in-order list through the full sort; either way the order is
// sort.SliceStable's.
func TestByWeightFallsBack(t *testing.T) {
	ordered := []Domain{dom("a", 2, 1), dom("b", 1, 1), dom("c", 1, 1)}
	keep := []int{0, 1, 2}
	if got := byWeight(ordered, keep); &got[0] != &keep[0] {
		t.Fatal("weights already in order were sorted again")
	}
	withNaN := []Domain{dom("a", 2, 1), dom("b", math.NaN(), 1), dom("c", 1, 1)}
	if got := byWeight(withNaN, keep); &got[0] == &keep[0] {
		t.Fatal("a NaN weight did not take the full sort")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		ds := make([]Domain, r.IntN(70))
		var keep []int
		for j := range ds {
			w := float64(r.IntN(4))
			if r.IntN(15) == 0 {
				w = math.NaN()
			}
			ds[j] = dom(fmt.Sprint(j), w, 0)
			if r.IntN(5) > 0 {
				keep = append(keep, j)
			}
		}
		var want []Domain
		for _, j := range keep {
			want = append(want, ds[j])
		}
		legacySortByWeight(want)
		var got []Domain
		for _, j := range byWeight(ds, append([]int(nil), keep...)) {
			got = append(got, ds[j])
		}
		if fmt.Sprint(names(got)) != fmt.Sprint(names(want)) {
			t.Fatalf("case %d: order %v, want %v", i, names(got), names(want))
		}
	}
}

// TestPermute checks the in-place permutation against a copy.
func TestPermute(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for i := 0; i < 300; i++ {
		xs := make([]int, r.IntN(50))
		for j := range xs {
			xs[j] = 100 + j
		}
		idx := r.Perm(len(xs))
		want := make([]int, len(xs))
		for j, k := range idx {
			want[j] = xs[k]
		}
		permute(xs, idx)
		if fmt.Sprint(xs) != fmt.Sprint(want) {
			t.Fatalf("permute gave %v, want %v", xs, want)
		}
	}
}

func names(ds []Domain) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// TestFixed4MatchesFmt checks the score formatting of the losers' reasons
// against fmt's %.4f, and that infinities and NaN are left to fmt.
func TestFixed4MatchesFmt(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.00005, 0.00015, 0.99995, 12.34565, 1e21, 1e-7, -3.14159, math.MaxFloat64, math.SmallestNonzeroFloat64}
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 20000; i++ {
		vals = append(vals, (r.Float64()-0.3)*math.Pow(10, float64(r.IntN(12)-4)))
	}
	for _, v := range vals {
		got, ok := fixed4(nil, v)
		if want := fmt.Sprintf("%.4f", v); !ok || string(got) != want {
			t.Fatalf("fixed4(%v) = %q, %v; fmt gives %q", v, got, ok, want)
		}
	}
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if _, ok := fixed4(nil, v); ok {
			t.Fatalf("fixed4(%v) claimed a result; fmt must format it", v)
		}
	}
}
