package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ooda-loop/ooda/internal/safetext"
)

// TestScoreRowIsFmts writes score-table rows with numbers of every sign,
// size and rounding edge, and names of every kind (long, non-ASCII, with
// control characters safetext escapes), and requires appendScoreRow's
// bytes to be those of the format through fmt and safetext.Args; a row
// with a number that is not finite is left to fmt.
func TestScoreRowIsFmts(t *testing.T) {
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 0.005, -0.005, 0.015, 2.675, 1.005, 99.995, -99.995, 12345.678, -1e9, 1e21, 3.14159, 0.1 + 0.2, 1e-9, -1e-9}
	names := []string{"d0", "a-very-long-domain-name-beyond-16", "héllo", "tab\tname", "x\x1b[31m", "", "implementation", "日本語ドメイン"}
	texts := []string{"6628.0", "P:3", "P:12345678", "12.34 (excluded)", "49.77", "", "\n"}
	r := rand.New(rand.NewPCG(7, 8))
	const format = "| %d | %-16s | %6s | %6.2f | %+7.2f | %5.2f | %5.2f | %+6.2f | %8s |"
	for n := 0; n < 5000; n++ {
		f := func() float64 { return nums[r.IntN(len(nums))] * []float64{1, 10, 0.1, 1000}[r.IntN(4)] }
		i, dom, hours, score := r.IntN(2000), names[r.IntN(len(names))], texts[r.IntN(len(texts))], texts[r.IntN(len(texts))]
		vals := []float64{f(), f(), f(), f(), f()}
		if n%100 == 0 {
			vals[r.IntN(5)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
		}
		want := fmt.Sprintf(format+"\n", safetext.Args(i, dom, hours, vals[0], vals[1], vals[2], vals[3], vals[4], score)...)
		got, ok := appendScoreRow(nil, i, dom, hours, vals[0], vals[1], vals[2], vals[3], vals[4], score)
		finite := true
		for _, v := range vals {
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if ok != finite {
			t.Fatalf("%v: written straight %v, want %v", vals, ok, finite)
		}
		if ok && string(got) != want {
			t.Fatalf("row %d:\n got  %q\n want %q", n, got, want)
		}
	}
}

// TestScoreTextIsFmts checks that strconv writes the table's hours and
// score as fmt's %.1f and %.2f do, for numbers of every kind.
func TestScoreTextIsFmts(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0.05, 0.15, 0.25, -0.05, 1.005, 2.675, 6628, 123456789.987, 1e21, 1e-9, -1e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)} {
		for prec, verb := range map[int]string{1: "%.1f", 2: "%.2f"} {
			if got, want := strconv.FormatFloat(v, 'f', prec, 64), fmt.Sprintf(verb, v); got != want {
				t.Errorf("%v: strconv %q, fmt %s %q", v, got, verb, want)
			}
		}
	}
}
