package session

import (
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Stop reasons of a session (SPEC-NOTES §8). Only the two done_* reasons
// are a success; every stopped_* reason, halted and signal say the session
// ended without reaching its goal.
const (
	DoneCompleted        = "done_completed"
	DoneNoWork           = "done_no_work"
	StoppedStagnation    = "stopped_stagnation"
	StoppedNoProgress    = "stopped_no_progress"
	StoppedMaxIterations = "stopped_max_iterations"
	StoppedHalted        = "halted"
	StoppedSignal        = "signal"
)

// IsSuccess reports whether a stop reason is a success: done_completed or
// done_no_work. Stagnation, no progress, the limit, HALT and a signal are
// never one.
func IsSuccess(stopReason string) bool {
	return stopReason == DoneCompleted || stopReason == DoneNoWork
}

// The defaults of config.session's windows.
const (
	DefaultOscillationThreshold = 3
	DefaultStagnationWindow     = 3
	DefaultRegressionWindow     = 3
)

// Params are the session rules' thresholds.
type Params struct {
	// OscillationThreshold is the number of improved→fail transitions of
	// one target that quarantine it (seed 002).
	OscillationThreshold int
	// StagnationWindow is the number of consecutive iterations a finding
	// may stay present and unresolved before it is deferred (seed 003).
	StagnationWindow int
	// RegressionWindow is the number of consecutive iterations with net
	// progress ≤ 0 that stop the session (condition E).
	RegressionWindow int
}

// ParamsFrom reads config.session; a value below 1 takes its default.
func ParamsFrom(c config.Session) Params {
	p := Params{OscillationThreshold: c.OscillationThreshold, StagnationWindow: c.StagnationWindow, RegressionWindow: c.RegressionWindow}
	return p.withDefaults()
}

func (p Params) withDefaults() Params {
	if p.OscillationThreshold < 1 {
		p.OscillationThreshold = DefaultOscillationThreshold
	}
	if p.StagnationWindow < 1 {
		p.StagnationWindow = DefaultStagnationWindow
	}
	if p.RegressionWindow < 1 {
		p.RegressionWindow = DefaultRegressionWindow
	}
	return p
}

// New is the record of a session starting at now. maxIterations is the
// iteration limit (condition A), 0 for none. baseline is what remains to
// be done before the first cycle (CollectFindings of the state at the
// start): those findings are not new in the first iteration, so a
// session that starts with a backlog does not begin with negative net
// progress.
func New(id string, now time.Time, maxIterations int, baseline []Finding) state.Session {
	rec := state.Session{
		ID:            id,
		StartedAt:     state.FormatTime(now),
		UpdatedAt:     state.FormatTime(now),
		Status:        state.SessionRunning,
		MaxIterations: max(0, maxIterations),
		Quarantined:   []string{},
		Findings:      map[string]state.SessionFinding{},
		DetermineLog:  []state.DetermineEntry{},
		Targets:       map[string]state.SessionTarget{},
	}
	for _, f := range capFindings(baseline) {
		rec.Findings[f.ID] = state.SessionFinding{Kind: f.Kind, Summary: f.Summary, Status: state.FindingOpen}
	}
	return rec
}

// Resume makes a session that ended (or was left running by a process
// that died) run again: `ooda run --session NAME`. Its quarantine,
// findings and counters are kept; maxIterations replaces the limit (0:
// none).
func Resume(rec *state.Session, now time.Time, maxIterations int) {
	rec.Status = state.SessionRunning
	rec.StopReason = ""
	rec.EndedAt = ""
	rec.MaxIterations = max(0, maxIterations)
	rec.UpdatedAt = state.FormatTime(now)
}

// Finish records how a session ended: "done" for a success, "stopped"
// for anything else, so that a stopped session is never read as done.
func Finish(rec *state.Session, stopReason string, now time.Time) {
	rec.StopReason = stopReason
	rec.Status = state.SessionStopped
	if IsSuccess(stopReason) {
		rec.Status = state.SessionDone
	}
	rec.EndedAt = state.FormatTime(now)
	rec.UpdatedAt = rec.EndedAt
}
