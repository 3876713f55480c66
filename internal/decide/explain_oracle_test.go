package decide

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// explainLosersOracle is explainLosers as first written, each tie's
// reason made anew for every option that lost one: kept as the oracle of
// the one that makes each of the three reasons once.
func (d *Decision) explainLosersOracle(wi int) {
	w := d.Options[wi]
	for i := range d.Options {
		if i == wi {
			continue
		}
		o := &d.Options[i]
		switch {
		case o.Excluded == ExcludedLevel:
		case o.Excluded != "":
			o.Reasons = append(o.Reasons, "excluded: "+o.Excluded)
		case d.Gated && i < wi:
			o.Reasons = append(o.Reasons, fmt.Sprintf("confidence %.2f below threshold: passed over by the confidence gate", o.Confidence))
		case o.Score > w.Score:
			o.Reasons = append(o.Reasons, fmt.Sprintf("scored higher, but recalled lessons favour %s within %.1f points", w.Domain, LessonMargin))
		case round9(o.Score) == round9(w.Score):
			why := "later in config.domains"
			switch {
			case w.Executions != o.Executions:
				why = "more executions"
			case w.Weight != o.Weight:
				why = "lower weight"
			}
			o.Reasons = append(o.Reasons, "tied with "+w.Domain+" and lost the tie-break ("+why+")")
		default:
			o.Reasons = append(o.Reasons, fmt.Sprintf("lower score than %s (%.4f < %.4f)", w.Domain, o.Score, w.Score))
		}
	}
}

// TestExplainLosersIsTheOracle explains random score tables — ties of
// every kind (executions, weight, order) and near-ties, scores above the
// winner's, NaN and infinite scores, excluded and level-excluded
// options, options with reasons already, gated decisions, winners
// anywhere — and requires explainLosersOracle's reasons, and that an
// append to one option's reasons changes no other option's.
func TestExplainLosersIsTheOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	scores := []float64{44.407, 44.407, 44.4070000001, 12.5, 0, -3.25, 1e9, math.Inf(1), math.Inf(-1), math.NaN()}
	for n := range 3000 {
		opts := make([]Option, 1+r.IntN(9))
		for i := range opts {
			o := &opts[i]
			o.Domain = fmt.Sprintf("d%d", r.IntN(4))
			o.Score = scores[r.IntN(len(scores))]
			o.Confidence = float64(r.IntN(100)) / 100
			o.Executions = r.IntN(3)
			o.Weight = float64(1 + r.IntN(2))
			switch r.IntN(10) {
			case 0:
				o.Excluded = ExcludedLevel
				o.Reasons = []string{"needs level 3"}
			case 1:
				o.Excluded = "quarantined"
			}
			if r.IntN(6) == 0 {
				o.Reasons = append(o.Reasons, "an earlier reason")
			}
		}
		wi := r.IntN(len(opts))
		gated := r.IntN(4) == 0
		clone := func() *Decision {
			d := &Decision{Gated: gated, Options: make([]Option, len(opts))}
			for i, o := range opts {
				o.Reasons = append([]string(nil), o.Reasons...)
				d.Options[i] = o
			}
			return d
		}
		got, want := clone(), clone()
		got.explainLosers(wi)
		want.explainLosersOracle(wi)
		for i := range want.Options {
			if g, w := got.Options[i].Reasons, want.Options[i].Reasons; !reflect.DeepEqual(g, w) && (len(g) != 0 || len(w) != 0) {
				t.Fatalf("table %d, winner %d, option %d: reasons %q, want %q", n, wi, i, g, w)
			}
		}
		// Each option's reasons are its own.
		for i := range got.Options {
			got.Options[i].Reasons = append(got.Options[i].Reasons, "later")
		}
		for i := range got.Options {
			if rs := got.Options[i].Reasons; len(rs) == 0 || rs[len(rs)-1] != "later" || !reflect.DeepEqual(rs[:len(rs)-1], want.Options[i].Reasons) && len(rs) > 1 {
				t.Fatalf("table %d: option %d's reasons changed by another's append: %q", n, i, rs)
			}
		}
	}
}

// BenchmarkExplainLosers1000 is the reasons of a table of 1,000 options
// that all tie with the winner but for a few, as on a project whose
// domains have not run yet.
func BenchmarkExplainLosers1000(b *testing.B) {
	opts := make([]Option, 1000)
	for i := range opts {
		opts[i] = Option{Domain: fmt.Sprintf("d%d", i), Score: 44.407, Weight: 1}
		if i%100 == 99 {
			opts[i].Score = 12.25
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		d := &Decision{Options: append([]Option(nil), opts...)}
		d.explainLosers(0)
	}
}
