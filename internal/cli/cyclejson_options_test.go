package cli

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/present"
)

// randomOptions is a score table of every shape: numbers of every
// magnitude and sign, NaN and the infinities now and then, the virtual
// domain, null and set hours and pending counts, excluded options, nil,
// empty and long reasons, and names and reasons with text the direct
// writer leaves to encoding/json (control characters, invalid UTF-8,
// U+2028, quotes, HTML characters).
func randomOptions(r *rand.Rand, n int) []decide.Option {
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 44.40695, -0.99995, 1e-7, -1e-7, 2.5e-6, 1e15, 1e20, 1e21, -1e21, 123456789.123456, 1e-320, math.MaxFloat64}
	strs := []string{"d0", "d1", "lower score than d0 (49.7723 < 49.7732)", "tied with d1 and lost the tie-break (later in config.domains)", "",
		"a&b<c>", "quote\"", "back\\slash", "é", "two\nlines", "tab\there"}
	odd := []string{"bell\x07", "bad\xffutf8", "ls\u2028", "del\x7f", "\x1b[31m"}
	f := func() float64 {
		switch r.IntN(200) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*r.IntN(2))
		}
		return nums[r.IntN(len(nums))]
	}
	s := func() string {
		if r.IntN(100) == 0 {
			return odd[r.IntN(len(odd))]
		}
		return strs[r.IntN(len(strs))]
	}
	var opts []decide.Option
	if n > 0 || r.IntN(2) == 0 {
		opts = make([]decide.Option, 0, n)
	}
	for range n {
		o := decide.Option{Domain: s(), Skill: s(), Weight: f(), Staleness: f(), Alert: f(), Mission: f(), Goal: f(), Confidence: f(),
			ConfidenceTerm: f(), Memo: f(), Balance: f(), RawScore: f(), Score: f(), Virtual: r.IntN(8) == 0}
		if r.IntN(4) > 0 {
			h := f()
			o.Hours = &h
		}
		if r.IntN(4) == 0 {
			p := r.IntN(50)
			o.Pending = &p
		}
		if o.Virtual || r.IntN(10) == 0 {
			o.Queue = f()
		}
		if r.IntN(3) == 0 {
			o.Value = f()
		}
		if r.IntN(4) == 0 {
			o.Excluded = s()
		}
		switch r.IntN(4) {
		case 0:
		case 1:
			o.Reasons = []string{}
		default:
			for range 1 + r.IntN(3) {
				o.Reasons = append(o.Reasons, s())
			}
		}
		opts = append(opts, o)
	}
	return opts
}

// TestCycleDocFromOptionsIsEncodingJSONs writes random score tables the
// way a cycle does — each score written from its option through a reused
// scoreValues — and requires the bytes encoding/json writes of the
// document with every score made by scoreDocOf: written directly when
// every value allows it, by encoding/json otherwise (both paths taken).
func TestCycleDocFromOptionsIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	direct, fallback := 0, 0
	for n := 0; n < 600; n++ {
		res := engineResultFixture()
		dec := *res.Decision
		dec.Options = randomOptions(r, r.IntN(12))
		res.Decision = &dec
		doc := cycleJSON(res, nil)
		if r.IntN(3) == 0 {
			doc.Card = &present.Card{Project: "p", Cycle: 3, Learn: []present.CardLearn{{Kind: "observing", Text: "x"}}}
		}
		want := doc
		want.options = nil
		want.Scores = []scoreDoc{}
		if dec.Options != nil {
			want.Scores = make([]scoreDoc, 0, len(dec.Options))
		}
		for _, o := range dec.Options {
			want.Scores = append(want.Scores, scoreDocOf(o))
		}
		wb, werr := encodeIndented(want)
		gb, gerr := encodeCycleDoc(doc)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(gb, wb) {
			t.Fatalf("document %d:\n got (%v):\n%s\n want (%v):\n%s", n, gerr, gb, werr, wb)
		}
		made := doc.withScores()
		if mb, merr := encodeIndented(made); made.options != nil || (merr == nil) != (werr == nil) || !bytes.Equal(mb, wb) {
			t.Fatalf("document %d: withScores encodes as\n%s\nwant\n%s", n, mb, wb)
		}
		if _, ok := appendCycleDoc(nil, doc); ok {
			direct++
		} else {
			fallback++
		}
	}
	if direct == 0 || fallback == 0 {
		t.Fatalf("%d documents written directly, %d left to encoding/json: both paths must be exercised", direct, fallback)
	}
}

// BenchmarkCycleJSON1000 is the --json document of a cycle of 1,000
// domains, from the engine's result to its bytes.
func BenchmarkCycleJSON1000(b *testing.B) {
	res := engine.Result{Status: engine.StatusCompleted, Cycle: 3, Result: "futile", ResultType: "futile"}
	dec := &decide.Decision{CycleMode: "feature", ScoreVerified: true}
	for i := range 1000 {
		h := 168.0
		o := decide.Option{Domain: "d" + itoa(i), Skill: "/true", Weight: 1, Hours: &h, Staleness: 37.612, Mission: 6, Goal: 0.15, Confidence: 0.7,
			ConfidenceTerm: 0.14, Memo: 0.5, Balance: 0.005, RawScore: 44.407, Score: 44.407,
			Reasons: []string{"tied with d1 and lost the tie-break (later in config.domains)"}}
		dec.Options = append(dec.Options, o)
	}
	dec.Winner = &dec.Options[0]
	res.Decision = dec
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeCycleDoc(cycleJSON(res, nil)); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
