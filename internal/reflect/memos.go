package reflect

import (
	"fmt"
	"slices"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// MemoHistoryMax caps memos.json history (5-C).
const MemoHistoryMax = 10

// PROutcome is a PR merge or rejection Orient saw this cycle.
type PROutcome struct {
	PR      int
	Domain  string
	Outcome string // merged or rejected
}

// MemoInput is what 5-C reads.
type MemoInput struct {
	Now    time.Time
	Config *config.Config
	// Cycle is this cycle's number; CycleCount the completed cycles
	// including it.
	Cycle, CycleCount int
	// Log is the decision log including this cycle's entry.
	Log        []state.DecisionEntry
	PROutcomes []PROutcome
	// LevelExcluded are the domains progressive_complexity.current_level
	// leaves out this cycle: no memo can make them run, so none is written
	// for them, and they are no alternative that a monopoly breaker or a
	// consecutive-selection bonus could turn to.
	LevelExcluded []string
}

// MemoResult lists what 5-C wrote.
type MemoResult struct {
	Adjustments   map[string]float64
	Interventions []state.Intervention
	Notes         []string
}

// WriteMemos is 5-C, applied after this cycle's memos were consumed: the
// consecutive-selection one-shots (2 in a row: others +0.5; 3: others
// +1.0), the PR-outcome one-shots (merged −0.3, rejected +0.5), and the
// starvation and monopoly-breaker interventions with the single-domain
// guard.
func WriteMemos(m state.Memos, in MemoInput) (state.Memos, MemoResult) {
	cfg := in.Config
	out := MemoResult{Adjustments: map[string]float64{}}
	adj := map[string]float64{}
	for k, v := range m.ScoreAdjustments {
		adj[k] = v
	}
	m.ScoreAdjustments = adj
	m.Interventions = append([]state.Intervention(nil), m.Interventions...)
	m.History = append([]state.Memo(nil), m.History...)
	ts := state.FormatTime(in.Now)
	add := func(domain string, delta float64, typ, msg string) {
		adj[domain] += delta
		out.Adjustments[domain] += delta
		m.History = append(m.History, state.Memo{Timestamp: ts, Cycle: in.Cycle, Domain: domain, Type: typ, Message: msg})
	}
	var active []string
	for _, d := range cfg.Domains {
		if d.Scoreable() && d.IsEnabled() && !slices.Contains(in.LevelExcluded, d.Name) {
			active = append(active, d.Name)
		}
	}

	dom, run := runAtEnd(in.Log)
	if dom != "" && run >= 2 {
		bonus := 0.5
		if run >= 3 {
			bonus = 1.0
		}
		for _, d := range active {
			if d != dom {
				add(d, bonus, "consecutive_domain", fmt.Sprintf("%s selected %d cycles in a row: %s +%.1f", dom, run, d, bonus))
			}
		}
	}
	for _, o := range in.PROutcomes {
		switch o.Outcome {
		case "merged":
			add(o.Domain, -0.3, "pr_merged", fmt.Sprintf("PR #%d merged: %s -0.3 (focus elsewhere)", o.PR, o.Domain))
		case "rejected":
			add(o.Domain, 0.5, "pr_rejected", fmt.Sprintf("PR #%d rejected: %s +0.5 (retry needed)", o.PR, o.Domain))
		}
	}

	has := func(domain, typ string) bool {
		for _, iv := range m.Interventions {
			if iv.Domain == domain && iv.Type == typ {
				return true
			}
		}
		return false
	}
	// Starvation: no execution in the last 10 completed cycles
	// [cycle_count-9 .. cycle_count].
	if in.CycleCount >= StarvationWindow {
		// Known once, not per domain: with many domains, each starving,
		// a scan of the interventions per domain is quadratic.
		ran := map[string]bool{}
		for _, e := range in.Log {
			if e.Cycle > in.CycleCount-StarvationWindow {
				ran[e.SelectedDomain] = true
			}
		}
		starving := map[string]bool{}
		for _, iv := range m.Interventions {
			if iv.Type == "starvation" {
				starving[iv.Domain] = true
			}
		}
		for _, d := range active {
			if !ran[d] && !starving[d] {
				starving[d] = true
				m.Interventions = append(m.Interventions, state.Intervention{Domain: d, Delta: 1.0, Type: "starvation",
					Reason: "No executions in last 10 cycles", CreatedAtCycle: in.CycleCount, ExpiresAfterCycles: 3})
				out.Interventions = append(out.Interventions, m.Interventions[len(m.Interventions)-1])
				out.Notes = append(out.Notes, fmt.Sprintf("[Reflect] Starvation intervention: %s boosted +1.0 for 3 cycles.", d))
			}
		}
	}
	// Monopoly breaker, with the single-domain guard: with one domain there
	// is nothing to rotate to.
	activeOrDegraded := len(active)
	if dom != "" && run >= 2 && activeOrDegraded >= 2 && !has(dom, "monopoly_breaker") {
		iv := state.Intervention{Domain: dom, Delta: -10.0, Type: "monopoly_breaker",
			Reason: fmt.Sprintf("Selected %d consecutive cycles", run), CreatedAtCycle: in.CycleCount, ExpiresAfterCycles: 1}
		m.Interventions = append(m.Interventions, iv)
		out.Interventions = append(out.Interventions, iv)
		out.Notes = append(out.Notes, fmt.Sprintf("[Reflect] Monopoly-breaker intervention: %s penalized -10.0 for 1 cycle.", dom))
	}
	if len(m.History) > MemoHistoryMax {
		m.History = m.History[len(m.History)-MemoHistoryMax:]
	}
	return m, out
}

// CountDownInterventions is 6-C for interventions. A cycle whose Decide
// ran the scoring pass (3-A) applied every intervention's delta: each is
// counted (applied_count + 1) and decremented, and the expired ones are
// removed. A cycle that did not score (implicit guidance, no scoreable
// domain) applied none, so it leaves them as they were: a −10 monopoly
// breaker used up on such a cycle would never have broken anything. The
// list is always a copy.
func CountDownInterventions(ivs []state.Intervention, applied bool) []state.Intervention {
	out := make([]state.Intervention, 0, len(ivs))
	for _, iv := range ivs {
		if applied {
			iv.AppliedCount++
			iv.ExpiresAfterCycles--
			if iv.ExpiresAfterCycles <= 0 {
				continue
			}
		}
		out = append(out, iv)
	}
	return out
}

// runAtEnd is the same-domain run length at the end of the log (entries
// that selected no domain are passed over).
func runAtEnd(log []state.DecisionEntry) (string, int) {
	dom, n := "", 0
	for i := len(log) - 1; i >= 0; i-- {
		d := log[i].SelectedDomain
		if d == "" {
			continue
		}
		if dom == "" {
			dom = d
		}
		if d != dom {
			break
		}
		n++
	}
	return dom, n
}
