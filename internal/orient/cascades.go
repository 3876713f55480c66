package orient

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// CascadeBonus is the one-shot score bonus of 2-B3.
const CascadeBonus = 3.0

// Dependency is one config.domain_dependencies entry.
type Dependency struct {
	DependsOn     []string `json:"depends_on"`
	CascadeEvents []string `json:"cascade_events"`
}

// Dependencies decodes config.domain_dependencies (empty when absent).
func Dependencies(raw json.RawMessage) (map[string]Dependency, error) {
	deps := map[string]Dependency{}
	if len(raw) == 0 || string(raw) == "null" {
		return deps, nil
	}
	if err := json.Unmarshal(raw, &deps); err != nil {
		return nil, fmt.Errorf("domain_dependencies: %w", err)
	}
	return deps, nil
}

// CascadeResult is what applying the pending cascades did.
type CascadeResult struct {
	Cascades state.Cascades
	// Bonus is added to this cycle's memo adjustments.
	Bonus   map[string]float64
	Notes   []string
	Changed bool
}

// ApplyCascades is the Orient half of 2-B3: each pending cascade gives
// each affected domain +3.0 once (bonus_applied_to remembers, so a cascade
// that stays pending never compounds), and a cascade whose affected
// domains have all run since it was created is resolved.
func ApplyCascades(cs state.Cascades, lastRun map[string]time.Time, now time.Time) CascadeResult {
	r := CascadeResult{Cascades: cs, Bonus: map[string]float64{}}
	r.Cascades.Cascades = append([]state.Cascade(nil), cs.Cascades...)
	for i := range r.Cascades.Cascades {
		c := &r.Cascades.Cascades[i]
		if c.Status != "pending" {
			continue
		}
		applied := map[string]bool{}
		for _, d := range c.BonusAppliedTo {
			applied[d] = true
		}
		for _, d := range c.AffectedDomains {
			if applied[d] {
				continue
			}
			r.Bonus[d] += CascadeBonus
			c.BonusAppliedTo = append(append([]string(nil), c.BonusAppliedTo...), d)
			r.Changed = true
			r.Notes = append(r.Notes, fmt.Sprintf("[Orient] Cascade bonus: %s +3.0 (from %s %s)", d, c.SourceDomain, c.EventType))
		}
		created, ok := state.ParseTime(c.CreatedAt)
		if !ok {
			continue
		}
		all := len(c.AffectedDomains) > 0
		for _, d := range c.AffectedDomains {
			if !lastRun[d].After(created) {
				all = false
			}
		}
		if all {
			c.Status, c.ResolvedAt = "resolved", state.FormatTime(now)
			r.Changed = true
			r.Notes = append(r.Notes, fmt.Sprintf("[Orient] Cascade resolved: %s", c.ID))
		}
	}
	// Resolved cascades are history: keep the last 50 of them.
	var resolved []int
	for i, c := range r.Cascades.Cascades {
		if c.Status == "resolved" {
			resolved = append(resolved, i)
		}
	}
	if extra := len(resolved) - 50; extra > 0 {
		drop := map[int]bool{}
		for _, i := range resolved[:extra] {
			drop[i] = true
		}
		kept := r.Cascades.Cascades[:0:0]
		for i, c := range r.Cascades.Cascades {
			if !drop[i] {
				kept = append(kept, c)
			}
		}
		r.Cascades.Cascades, r.Changed = kept, true
	}
	return r
}

// DetectCascades is the detection half of 2-B3, after the source domain
// ran and its state changed: every event it reports (its report's
// vars.events, or an "events" array in its state file) that its
// dependency lists under cascade_events becomes a pending cascade for the
// domains that depend on it.
func DetectCascades(cs state.Cascades, deps map[string]Dependency, source string, events []string, now time.Time) (state.Cascades, []state.Cascade) {
	dep, ok := deps[source]
	if !ok || len(events) == 0 {
		return cs, nil
	}
	want := map[string]bool{}
	for _, e := range dep.CascadeEvents {
		want[e] = true
	}
	var added []state.Cascade
	seq := 0
	day := now.UTC().Format("20060102")
	for _, c := range cs.Cascades {
		var d string
		var n int
		if _, err := fmt.Sscanf(c.ID, "C-%8s-%d", &d, &n); err == nil && d == day && n > seq {
			seq = n
		}
	}
	seen := map[string]bool{}
	sorted := append([]string(nil), events...)
	sort.Strings(sorted)
	for _, e := range sorted {
		if !want[e] || seen[e] {
			continue
		}
		seen[e] = true
		seq++
		c := state.Cascade{ID: fmt.Sprintf("C-%s-%d", day, seq), EventType: e, SourceDomain: source,
			AffectedDomains: append([]string(nil), dep.DependsOn...), Details: fmt.Sprintf("%s reported %s", source, e),
			Status: "pending", CreatedAt: state.FormatTime(now)}
		added = append(added, c)
	}
	if len(added) > 0 {
		cs.Cascades = append(append([]state.Cascade(nil), cs.Cascades...), added...)
	}
	return cs, added
}
