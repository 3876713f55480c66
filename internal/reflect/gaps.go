package reflect

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Gap is one skill gap detected this cycle (5-A).
type Gap struct {
	Name   string
	Type   string
	Detail string
	// Domain is the domain the gap concerns, "" when none.
	Domain string
}

// StarvationWindow is how many recent decisions a domain may go without
// being selected before it counts as starved.
const StarvationWindow = 10

// GapInput is what 5-A reads beyond this cycle's own gaps (execution
// errors and blocked chains, which the engine records as they happen).
type GapInput struct {
	Now    time.Time
	Config *config.Config
	// CycleCount is the number of completed cycles including this one.
	CycleCount int
	// Log is the decision log including this cycle's entry.
	Log   []state.DecisionEntry
	Queue state.ActionQueue
}

// DetectGaps is 5-A sources 2 and 3, every cycle: an active domain not
// selected in the last 10 decisions (once 10 cycles exist), and a pending
// action older than twice action_queue_decay_days.
func DetectGaps(in GapInput) []Gap {
	var out []Gap
	if in.CycleCount >= StarvationWindow && len(in.Log) > 0 {
		recent := in.Log[max(0, len(in.Log)-StarvationWindow):]
		for _, d := range in.Config.Domains {
			if !d.Scoreable() || !d.IsEnabled() {
				continue
			}
			seen := false
			for _, e := range recent {
				if e.SelectedDomain == d.Name {
					seen = true
					break
				}
			}
			if !seen {
				out = append(out, Gap{Name: "domain_starvation_" + d.Name, Type: "coverage_gap",
					Detail: fmt.Sprintf("Domain not executed in %d cycles", StarvationWindow), Domain: d.Name})
			}
		}
	}
	if days := in.Config.Memory.ActionQueueDecayDays; days > 0 {
		limit := 2 * days
		for _, a := range in.Queue.Pending {
			t, ok := state.ParseTime(a.ExtractedAt)
			if !ok {
				continue
			}
			if age := in.Now.Sub(t).Hours() / 24; age > limit {
				out = append(out, Gap{Name: "stale_action_" + a.ID, Type: "action_aging",
					Detail: fmt.Sprintf("Action '%s' pending for %d days", clipTitle(a.Title), int(math.Floor(age))), Domain: a.SourceDomain})
			}
		}
	}
	return out
}

// ProposalThreshold is the gap frequency at which 5-B proposes a skill.
const ProposalThreshold = 3

// Proposal is the text of proposed-skills/<gap>.md (5-B).
func Proposal(g state.Gap, now time.Time) string {
	phase := map[string]string{
		"execution_failure": "support",
		"coverage_gap":      "observe",
		"action_aging":      "execute",
		"chain_gap":         "support",
		"safety_violation":  "support",
		"contract_error":    "support",
		"state_corruption":  "support",
	}[g.Type]
	if phase == "" {
		phase = "observe"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Proposed skill: %s\n\n", g.ProposalName())
	fmt.Fprintf(&b, "Proposed by ooda on %s after the gap was seen %d times (first %s, last %s).\n\n", state.FormatTime(now), g.Frequency, orDash(g.FirstSeenAt()), orDash(lastSeen(g)))
	b.WriteString("## Background\n\n")
	fmt.Fprintf(&b, "Step 5-A records a skill gap when the loop meets something it has no capability for. This one (type `%s`) recurred %d times, so a skill that closes it is likely worth writing.\n\n", orDash(g.Type), g.Frequency)
	b.WriteString("## The gap\n\n")
	fmt.Fprintf(&b, "%s\n\n", orDash(g.Text()))
	b.WriteString("## Suggested OODA phase\n\n")
	fmt.Fprintf(&b, "`%s`\n\n", phase)
	b.WriteString("## Expected inputs and outputs\n\n")
	b.WriteString("- Inputs: `config.json`, the related domain's state file, the OODA_* environment (`docs/skills.md`).\n")
	b.WriteString("- Outputs: the domain's state file (`last_run`, `status`, `alerts`, `metrics`) and a report at `$OODA_REPORT` (`had_output`, `actions`, `summary`).\n\n")
	b.WriteString("Create it with a contract in `skills/<name>/SKILL.md`, wire it under `config.skills`, add it to `safety.skill_allowlist`, then mark the gap resolved in `agent/state/evolve/skill_gaps.json`.\n")
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// GapsKept is how many gaps skill_gaps.json holds, the cap
// state.SkillGaps.Record keeps when it adds one.
const GapsKept = state.GapsKept

// lastSeen is when the gap was last seen: an instant, else a cycle.
func lastSeen(g state.Gap) string {
	if g.LastSeen != "" || g.LastSeenCycle == nil {
		return g.LastSeen
	}
	return fmt.Sprintf("cycle %d", *g.LastSeenCycle)
}

// TrimGaps cuts gaps to GapsKept in one pass, evicting as Record does
// (resolved gaps oldest first, then unresolved oldest first), and returns
// the kept gaps and how many were evicted. A file another tool wrote with
// tens of thousands of gaps would otherwise make Record, which evicts one
// gap per pass, quadratic, and every step that reads the gaps slow.
func TrimGaps(gaps []state.Gap) ([]state.Gap, int) {
	excess := len(gaps) - GapsKept
	if excess <= 0 {
		return gaps, 0
	}
	resolved := 0
	for _, g := range gaps {
		if g.Resolved {
			resolved++
		}
	}
	// dropResolved resolved gaps go first, from the front; then the oldest
	// (front) of what remains.
	dropResolved := min(resolved, excess)
	dropFront := excess - dropResolved
	kept := make([]state.Gap, 0, GapsKept)
	for _, g := range gaps {
		if g.Resolved && dropResolved > 0 {
			dropResolved--
			continue
		}
		kept = append(kept, g)
	}
	return append([]state.Gap(nil), kept[dropFront:]...), excess
}

// clipTitle is an action title as a gap's detail quotes it: queue files
// written before titles were bounded may hold any length.
func clipTitle(t string) string {
	t, _ = ClipText(t, TitleMax)
	return t
}
