package reflect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// BenchmarkExtractPrinciplesYear is the principle half of the memory
// cascade as every cycle of a project a year old runs it: 52 weekly
// episodes whose lessons recur, a principle they all confirmed, and a
// cycle that changes nothing.
func BenchmarkExtractPrinciplesYear(b *testing.B) {
	var eps state.Episodes
	for w := 1; w <= 52; w++ {
		monday := time.Date(2025, 12, 29, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*(w-1))
		ls := []string{"When d0 yields nothing twice running, skip it for 3 cycles."}
		if w%4 == 0 {
			ls = append(ls, fmt.Sprintf("When d%d yields nothing, lower its priority until its state changes.", w%8))
		}
		eps.Episodes = append(eps.Episodes, state.Episode{ID: fmt.Sprintf("EP-2026-W%02d", w), WeekStart: monday.Format("2006-01-02"), Lessons: ls})
	}
	now := time.Date(2026, 12, 30, 7, 0, 0, 0, time.UTC)
	ps, _ := ExtractPrinciples(eps, state.Principles{}, PrincipleInput{Now: now})
	for range 3 {
		ps, _ = ExtractPrinciples(eps, ps, PrincipleInput{Now: now})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, r := ExtractPrinciples(eps, ps, PrincipleInput{Now: now}); len(r.Created)+len(r.Confirmed)+len(r.Decayed) > 0 {
			b.Fatalf("the cycle changed the principles: %+v", r)
		}
	}
}

// BenchmarkUpdateLensFull is 5-E on a lens whose evidence is full
// (LensEvidenceCap observations), as every cycle of a domain run for a
// while meets it.
func BenchmarkUpdateLensFull(b *testing.B) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	l := state.NewLens("api", now)
	var cl state.LensChangelog
	for c := 1; c <= LensEvidenceCap; c++ {
		ds := state.DomainState{Found: true, Metrics: map[string]float64{"latency_ms": float64(100 + 37*(c%5)), "errors": float64(c % 3)}}
		l, cl, _ = UpdateLens(l, cl, LensInput{Cycle: c, Now: now.Add(time.Duration(c) * time.Hour), Domain: "api", State: ds})
	}
	// As the file holds it.
	raw, err := json.Marshal(l)
	if err != nil {
		b.Fatal(err)
	}
	l = state.Lens{}
	if err := json.Unmarshal(raw, &l); err != nil {
		b.Fatal(err)
	}
	ds := state.DomainState{Found: true, Metrics: map[string]float64{"latency_ms": 120, "errors": 1}}
	b.ReportAllocs()
	for b.Loop() {
		UpdateLens(l, cl, LensInput{Cycle: 21, Now: now.Add(21 * time.Hour), Domain: "api", State: ds})
	}
}
