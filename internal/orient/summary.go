package orient

import (
	"fmt"
	"strings"
)

// SummaryFacts are this cycle's facts the 2-E orient summary is composed from.
type SummaryFacts struct {
	Observed int
	Alerts   []string // "domain (severity)"
	Winner   string
	Skip     string
	Guidance string
	Gated    bool
	Prev     string
	// PrevWinner is the domain the previous cycle selected.
	PrevWinner string
}

// Summarize composes the 2-E world-model sentence deterministically from
// facts: what is urgent, what the cycle focuses on, and what changed since
// the previous summary. It never exceeds SummaryMax characters.
func Summarize(f SummaryFacts) string {
	var parts []string
	if len(f.Alerts) > 0 {
		parts = append(parts, fmt.Sprintf("Urgent: %s.", strings.Join(f.Alerts, ", ")))
	} else {
		parts = append(parts, fmt.Sprintf("%d domain(s) observed, no active alerts.", f.Observed))
	}
	switch {
	case f.Winner != "" && f.Guidance != "":
		parts = append(parts, fmt.Sprintf("Focus: %s (%s).", f.Winner, strings.ReplaceAll(f.Guidance, "_", " ")))
	case f.Winner != "" && f.Gated:
		parts = append(parts, fmt.Sprintf("Focus: %s (confidence-gated).", f.Winner))
	case f.Winner != "":
		parts = append(parts, fmt.Sprintf("Focus: %s.", f.Winner))
	case f.Skip != "":
		parts = append(parts, fmt.Sprintf("Nothing to act on (%s).", strings.ReplaceAll(f.Skip, "_", " ")))
	}
	if f.Prev != "" || f.PrevWinner != "" {
		if f.Winner != "" && f.Winner == f.PrevWinner {
			parts = append(parts, "Same focus as last cycle.")
		} else {
			parts = append(parts, "Changed since last cycle.")
		}
	}
	return Truncate(strings.Join(parts, " "), SummaryMax)
}
