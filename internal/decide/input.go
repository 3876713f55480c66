package decide

import (
	"time"

	"github.com/ooda-loop/ooda/internal/config"
)

// Input is everything Decide reads. The engine assembles it from the
// observation (Step 1) and the orientation (Step 2).
type Input struct {
	Now    time.Time
	Config *config.Config
	// Domains are the observed domains in config order, with season-mode
	// weights already applied; domains Step 1 skipped are absent.
	Domains []Domain
	// Confidence is the raw confidence per domain (initial already applied).
	Confidence map[string]float64
	// Memo is the combined 2-D memo adjustment per domain (one-shot score
	// adjustments plus active interventions).
	Memo map[string]float64
	// Goals are goals.json's goals.
	Goals []Goal
	// Log is the decision log, oldest first.
	Log []LogEntry
	// DomainExecutions and TotalSkillExecutions are metrics.json counters.
	DomainExecutions     map[string]int
	TotalSkillExecutions int
	// Impl is the action-queue view for the implementation virtual domain.
	Impl Impl
	// SignalBonuses are the active season mode's signal_bonuses.
	SignalBonuses map[string]float64
	// StaleAfterChange lists domains with a merged PR that have not run for
	// signals.stale_after_change_hours (needs forge data; empty without one).
	StaleAfterChange map[string]bool
	// Quarantined domains are excluded from winning (session oscillation).
	Quarantined map[string]bool
	// Lean is the direction recalled lessons push each domain (2-F): +1
	// after a hit, −1 after a miss. It breaks ties within LessonMargin.
	Lean map[string]int
	// History is each domain's recorded cycles, oldest first (the
	// outcomes Orient annotated this cycle): what the learned yield of
	// adaptive scoring reads. Nil when adaptive scoring is off.
	History map[string][]Past
}

// Past is one recorded cycle of a domain, as adaptive scoring reads it.
type Past struct {
	// Quality is the cycle's quality_multiplier, as annotated so far (a
	// PR's cycle moves from 0.5 to 0.8 once merged, 0 once rejected).
	Quality   float64
	HadOutput bool
}

// Domain is one observed domain.
type Domain struct {
	Name             string
	Index            int
	Weight           float64 // effective weight after season overrides
	Hours            float64 // hours since last run (hours_if_never_run when never)
	NeverRun         bool
	Alerts           []Alert
	Fallback         bool
	MissionAlignment float64
	Phase            string // observe, detect, strategize, execute, support ...
	MinIntervalHours *float64
	GoalContribution *float64 // a configured override of 3-C
	PrimarySkill     string
}

// Alert is a domain alert; only its severity matters to Decide.
type Alert struct {
	Severity string
	Message  string
}

// HasUrgent reports a warning or critical alert: an "active alert" in the
// specification's sense.
func (d Domain) HasUrgent() bool {
	for _, a := range d.Alerts {
		if a.Severity == "warning" || a.Severity == "critical" {
			return true
		}
	}
	return false
}

// HasCritical reports a critical alert.
func (d Domain) HasCritical() bool {
	for _, a := range d.Alerts {
		if a.Severity == "critical" {
			return true
		}
	}
	return false
}

// Goal is the part of a goal Decide reads.
type Goal struct {
	ID             string
	Title          string
	Status         string
	Progress       float64
	RelatedDomains []string
	Domain         string
	Quarantined    bool
}

// LogEntry is the part of a decision-log entry Decide reads.
type LogEntry struct {
	Cycle           int
	Domain          string
	Action          string // "", execute, skip, observe_only, blocked
	HadOutput       *bool
	SelectedByAlert bool
	// Guidance is the 3-A0 shortcut that chose the entry's domain
	// (critical_alert, stable_pattern), "" when scoring did.
	Guidance string
}

// Executed reports whether the entry's skill actually ran: skips, blocked
// skills and observe-only cycles selected a domain without running it.
func (e LogEntry) Executed() bool {
	switch e.Action {
	case "skip", "observe_only", "blocked":
		return false
	}
	return e.Domain != ""
}

// Impl is the action-queue view of 1-A for the implementation domain.
type Impl struct {
	PendingCount       int
	ActionablePending  int // pending items not blocked
	OldestPendingHours float64
	HighestRice        float64
	OpenDraftPRs       int
}
