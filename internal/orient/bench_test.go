package orient

import (
	"fmt"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// benchOrientInput is a project of n domains, each with a confidence on
// file, one memo adjustment and one intervention.
func benchOrientInput(n int) Input {
	cfg := config.Default()
	cfg.Implementation.Enabled = true
	in := Input{Now: time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), Config: cfg, Confidence: state.Confidence{Scores: map[string]float64{}}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%d", i)
		cfg.Domains = append(cfg.Domains, config.Domain{Name: name, Index: i, Weight: 1})
		in.Domains = append(in.Domains, name)
		in.Confidence.Scores[name] = 0.5 + float64(i%5)/10
	}
	in.Memos.ScoreAdjustments = map[string]float64{"d1": 1, "gone": 2}
	in.Memos.Interventions = []state.Intervention{{Domain: "d2", Delta: -1}}
	return in
}

func benchmarkOrient(b *testing.B, n int) {
	in := benchOrientInput(n)
	b.ReportAllocs()
	for b.Loop() {
		if o := Orient(in); len(o.Confidence) != n+1 {
			b.Fatalf("%d confidences, want %d", len(o.Confidence), n+1)
		}
	}
}

func BenchmarkOrient8(b *testing.B)    { benchmarkOrient(b, 8) }
func BenchmarkOrient1000(b *testing.B) { benchmarkOrient(b, 1000) }

func BenchmarkRecallReflections1000(b *testing.B) {
	var cands []string
	for i := 0; i < 1000; i++ {
		cands = append(cands, fmt.Sprintf("d%d", i))
	}
	rs := []state.Reflection{{Domain: "d3", Lesson: "x", Verdict: "miss"}, {Domain: "zz", Lesson: "y", Verdict: "hit"}}
	b.ReportAllocs()
	for b.Loop() {
		RecallReflections(rs, cands, 3)
	}
}

// BenchmarkOrient1000Memos is Orient of 1,000 domains each with a memo
// adjustment, as a project whose every domain lost a tie has them.
func BenchmarkOrient1000Memos(b *testing.B) {
	in := benchOrientInput(1000)
	for i := range 1000 {
		in.Memos.ScoreAdjustments[fmt.Sprintf("d%d", i)] = 0.5
	}
	b.ReportAllocs()
	for b.Loop() {
		if o := Orient(in); len(o.Memo) != 1000 {
			b.Fatalf("%d memo adjustments, want 1000", len(o.Memo))
		}
	}
}
