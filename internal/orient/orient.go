// Package orient is Step 2 of the cycle: pure functions from the
// observation and the project's history to an orientation (confidence per
// domain, memo adjustments, goal progress, the orient summary).
//
// Orient never touches the filesystem, the clock, the network or a
// process: now arrives as a value, and the engine persists what Orient
// decides.
package orient

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Input is what Orient reads.
type Input struct {
	Now        time.Time
	Config     *config.Config
	Confidence state.Confidence
	Memos      state.Memos
	Goals      state.Goals
	Log        []state.DecisionEntry
	// Domains are the names of the domains observed this cycle.
	Domains []string
}

// Orientation is Step 2's result.
type Orientation struct {
	// Confidence is the raw confidence per domain with the initial value
	// applied to domains the file does not know yet (2-B).
	Confidence map[string]float64
	// NewConfidence lists the domains that received the initial value.
	NewConfidence []string
	// Memo is the combined memo adjustment per domain (2-D).
	Memo map[string]float64
	// MemoWarnings name score adjustments for unknown domains; they are
	// discarded when the memos are consumed.
	MemoWarnings []string
	// PrevSummary is the previous cycle's orient summary (≤ 500 chars).
	PrevSummary string
	Notes       []string
}

// SummaryMax is the orient_summary length cap (2-E).
const SummaryMax = 500

// Orient runs the parts of Step 2 the decision needs: 2-B's initial
// confidence, 2-D memo adjustments and interventions, and the prior
// summary of 2-E.
func Orient(in Input) Orientation {
	cfg := in.Config
	// The confidence map is sized for every domain at once, and the
	// configured names are collected only when a memo needs them: at a
	// thousand domains, growing maps was most of Orient's time.
	o := Orientation{Confidence: make(map[string]float64, max(len(in.Confidence.Scores), len(in.Domains)+1)), Memo: map[string]float64{}}
	for d, v := range in.Confidence.Scores {
		o.Confidence[d] = clamp(v, cfg.Confidence.Min, cfg.Confidence.Max)
	}
	initial := func(d string) {
		if _, ok := o.Confidence[d]; !ok {
			o.Confidence[d] = cfg.Confidence.Initial
			o.NewConfidence = append(o.NewConfidence, d)
		}
	}
	for _, d := range in.Domains {
		initial(d)
	}
	if cfg.Implementation.Enabled {
		initial("implementation")
	}
	var known map[string]bool
	if len(in.Memos.ScoreAdjustments) > 0 || len(in.Memos.Interventions) > 0 {
		known = make(map[string]bool, len(cfg.Domains)+1)
		for i := range cfg.Domains {
			known[cfg.Domains[i].Name] = true
		}
		if cfg.Implementation.Enabled {
			known["implementation"] = true
		}
	}
	if known != nil {
		// Sized at once for the most domains the memos can name (each a
		// configured one): a thousand adjustments grew the map through
		// every size on the way.
		o.Memo = make(map[string]float64, min(len(in.Memos.ScoreAdjustments)+len(in.Memos.Interventions), len(known)))
	}
	keys := make([]string, 0, len(in.Memos.ScoreAdjustments))
	for k := range in.Memos.ScoreAdjustments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			o.MemoWarnings = append(o.MemoWarnings, fmt.Sprintf("[WARN] Memo adjustment for unknown domain '%s' -- ignored and cleared.", k))
			continue
		}
		o.Memo[k] += in.Memos.ScoreAdjustments[k]
	}
	for _, iv := range in.Memos.Interventions {
		if known[iv.Domain] {
			o.Memo[iv.Domain] += iv.Delta
		}
	}
	if n := len(in.Log); n > 0 {
		o.PrevSummary = Truncate(in.Log[n-1].OrientSummary, SummaryMax)
	}
	return o
}

// ConsumeMemos applies 6-C's consumption of the one-shot score
// adjustments, which every cycle that reached Step 6 clears. Interventions
// are left as they are: they count down only on a cycle whose scoring
// applied them (reflect.CountDownInterventions).
func ConsumeMemos(m state.Memos) state.Memos {
	m.ScoreAdjustments = map[string]float64{}
	return m
}

// Truncate cuts s to at most n characters (runes), never mid-rune.
func Truncate(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n])
}

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
