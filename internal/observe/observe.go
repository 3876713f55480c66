// Package observe is Step 1 of the cycle: it reads the world (domain state
// files, lenses, the action queue, external signals, the active context and
// the cost ledger) into an Observation. It makes no decisions and writes
// nothing: work that needs a write (lens pre-init, a new or reset cost
// ledger) is returned for the engine to persist outside a dry run.
package observe

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// Domain is one scoreable domain as observed this cycle.
type Domain struct {
	// Config is the domain's entry in the configuration observed
	// (Input.Config's Domains), shared with it, not copied: a thousand
	// domains' copies were most of what an observation allocated. Like
	// the rest of the configuration, it is only read.
	Config   *config.Domain
	Weight   float64 // effective weight after season overrides
	State    state.DomainState
	StateErr error
	Hours    float64
	NeverRun bool
	Phase    string
}

// Skipped is a configured domain that Step 1 did not observe, and why.
type Skipped struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// Impl is the action-queue view of 1-A.
type Impl struct {
	PendingCount       int
	ActionablePending  int
	OldestPendingHours float64
	HighestRice        float64
}

// Observation is the in-memory result of Step 1 (1-D); it is never written.
type Observation struct {
	Now        time.Time
	SeasonMode string // "" when season modes are off
	Season     config.SeasonMode
	Domains    []Domain
	Skipped    []Skipped
	// LensInit lists domains whose lens file does not exist yet.
	LensInit []string
	// ActiveContext is the opaque stakeholder blob, nil when none.
	ActiveContext     json.RawMessage
	ActiveContextPath string
	RefreshDue        bool
	External          []state.ExternalSignal
	Impl              Impl
	// Ledger is today's cost ledger after the daily reset; LedgerNew and
	// LedgerReset say whether it must be written.
	Ledger      state.CostLedger
	LedgerNew   bool
	LedgerReset bool
	AnyCritical bool
	Warnings    []string
}

// Input is what Observe reads beyond the files.
type Input struct {
	Now    time.Time
	Config *config.Config
	Store  *state.Store
	Snap   *state.Snapshot
	// PhaseOf returns a skill contract's ooda_phase ("" when unknown).
	PhaseOf func(skill string) string
}

// Observe runs 1-A, 1-C and 1-D.
func Observe(in Input) *Observation {
	cfg, now := in.Config, in.Now
	o := &Observation{Now: now}
	// A state file and a lens per domain, and the active context: one
	// open of the root for all.
	defer in.Store.HoldRoot()()
	name, mode, seasonOn := cfg.SeasonModes.Active()
	disabled := map[string]bool{}
	if seasonOn {
		o.SeasonMode, o.Season = name, mode
		for _, d := range mode.DisabledDomains {
			disabled[d] = true
		}
	}

	// Active context pre-load.
	if p := cfg.ActiveContext.Path; p != nil && *p != "" {
		blob, mtime, err := in.Store.ReadActiveContext(*p)
		if err != nil {
			o.Warnings = append(o.Warnings, fmt.Sprintf("[Observe] active_context not loadable: %v. Proceeding without context.", err))
		} else {
			o.ActiveContext, o.ActiveContextPath = blob, in.Store.Path(*p)
			if rs := cfg.ActiveContext.RefreshSkill; rs != nil && *rs != "" {
				if now.Sub(mtime).Hours() >= cfg.ActiveContext.RefreshIntervalHours {
					o.RefreshDue = true
				}
			}
		}
	}

	// The domains observed, and their files: each domain's state file and
	// lens are read first, all of them (Store.ReadEach shares the reads
	// among goroutines), then taken in configuration order.
	observed := make([]int, 0, len(cfg.Domains)) // indexes into cfg.Domains
	for i, dc := range cfg.Domains {
		switch {
		case disabled[dc.Name]:
			o.Skipped = append(o.Skipped, Skipped{dc.Name, "disabled by season mode '" + name + "'"})
			continue
		case dc.EffectiveStatus() == "disabled":
			o.Skipped = append(o.Skipped, Skipped{dc.Name, "disabled"})
			continue
		case dc.EffectiveStatus() == "available":
			o.Skipped = append(o.Skipped, Skipped{dc.Name, "not yet configured"})
			continue
		case !dc.Scoreable():
			o.Skipped = append(o.Skipped, Skipped{dc.Name, "status " + dc.EffectiveStatus()})
			continue
		case !dc.IsEnabled():
			o.Skipped = append(o.Skipped, Skipped{dc.Name, "enabled is false"})
			continue
		}
		observed = append(observed, i)
	}
	if len(observed) > 0 {
		o.Domains = make([]Domain, len(observed))
	}
	type lensRead struct {
		found bool
		err   error
	}
	lenses := make([]lensRead, len(observed))
	in.Store.ReadEach(len(observed), func(i int) {
		d, dc := &o.Domains[i], &cfg.Domains[observed[i]]
		d.State, d.StateErr = in.Store.ReadDomainState(dc.StateFile)
		// A lens that is missing is created before any skill reads it
		// (1-A pre-init); a corrupt one is reported and left alone.
		lenses[i].found, lenses[i].err = in.Store.LensState(dc.Name)
	})
	for i, at := range observed {
		d := &o.Domains[i]
		d.Config = &cfg.Domains[at]
		dc := d.Config
		d.Weight = dc.Weight
		if w, ok := mode.WeightOverrides[dc.Name]; seasonOn && ok {
			d.Weight = w
		}
		ds, err := d.State, d.StateErr
		for _, w := range ds.Warnings {
			o.Warnings = append(o.Warnings, "[WARN] "+w+" (written by "+dc.PrimarySkill+"; format: docs/state.md, \"Domain state files\")")
		}
		var last time.Time
		if t, ok := ds.LastRunTime(); ok {
			last = t
		}
		recorded := false
		if rec, ok := in.Snap.State.DomainLastRun[dc.Name]; ok {
			if t, ok := parseTime(rec); ok && t.After(last) {
				last, recorded = t, true
			}
		}
		if last.IsZero() {
			d.NeverRun, d.Hours = true, cfg.Scoring.HoursIfNeverRun
		} else {
			d.Hours = math.Max(0, now.Sub(last).Hours())
		}
		if err != nil {
			o.Warnings = append(o.Warnings, unreadableWarning(*dc, err, recorded, last, now, cfg.Scoring.HoursIfNeverRun))
		}
		for _, a := range ds.Alerts {
			if a.Severity == "critical" {
				o.AnyCritical = true
			}
		}
		d.Phase = dc.OODAPhase
		if d.Phase == "" && in.PhaseOf != nil {
			d.Phase = in.PhaseOf(dc.PrimarySkill)
		}
		if d.Phase == "" {
			d.Phase = "observe"
		}
		if err := lenses[i].err; err != nil {
			o.Warnings = append(o.Warnings, fmt.Sprintf("[Observe] %v; proceeding without lens", err))
		} else if !lenses[i].found {
			o.LensInit = append(o.LensInit, dc.Name)
		}
	}

	// Action queue for the implementation domain.
	q := in.Snap.ActionQueue
	o.Impl.PendingCount = len(q.Pending)
	for _, a := range q.Pending {
		if a.Status != "blocked" {
			o.Impl.ActionablePending++
		}
		if r := a.Rice(); r > o.Impl.HighestRice {
			o.Impl.HighestRice = r
		}
		if t, ok := parseTime(a.ExtractedAt); ok {
			if h := now.Sub(t).Hours(); h > o.Impl.OldestPendingHours {
				o.Impl.OldestPendingHours = h
			}
		}
	}

	// Cost ledger: create when missing, reset on a new UTC day.
	if in.Snap.CostLedger == nil {
		o.Ledger, o.LedgerNew = state.NewCostLedger(now), true
	} else {
		o.Ledger = *in.Snap.CostLedger
		o.LedgerReset = o.Ledger.ResetIfNewDay(now)
		if o.Ledger.DateInFuture(now) {
			o.Warnings = append(o.Warnings, fmt.Sprintf("[WARN] cost_ledger.json: date %q is after today (%s UTC): the clock went back or the file was edited; the ledger is kept, and its spend counts against today's cap.",
				o.Ledger.Date, now.UTC().Format("2006-01-02")))
		}
	}

	ext, errs := in.Store.ReadExternalSignals()
	o.External = ext
	for _, e := range errs {
		o.Warnings = append(o.Warnings, "[Observe] "+e.Error())
	}
	return o
}

// parseTime is state.ParseTime, which tries each of its layouts before it
// gives up on an empty string; no layout parses one.
func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	return state.ParseTime(s)
}

// unreadableWarning says what an unreadable domain state file costs: the
// hours the score uses come from the same rule as for a readable file
// (the later of the file's last_run and the engine's own record,
// state.json domain_last_run), so the message says which one it was
// rather than promising a "never run" the score does not use.
func unreadableWarning(dc config.Domain, err error, recorded bool, last, now time.Time, neverHours float64) string {
	fix := fmt.Sprintf("fix or delete %s; %s rewrites it when it runs", dc.StateFile, dc.PrimarySkill)
	if state.IsRefused(err) {
		fix = "move it aside or replace it with a regular file inside the project; " + dc.PrimarySkill + " rewrites it when it runs"
	}
	if !recorded {
		return fmt.Sprintf("[Observe] %s: state file unreadable (%v); treating as never run (%g h, scoring.hours_if_never_run): %s", dc.Name, err, neverHours, fix)
	}
	// A run recorded later than now (a cycle run with --now ahead of the
	// clock) scores as just run; the message says how far ahead it is
	// rather than "0.0 h ago".
	when := fmt.Sprintf("%.1f h ago", now.Sub(last).Hours())
	if last.After(now) {
		when = fmt.Sprintf("%.1f h from now", last.Sub(now).Hours())
	}
	return fmt.Sprintf("[Observe] %s: state file unreadable (%v); hours since last run taken from the engine's record (state.json domain_last_run %s, %s): %s",
		dc.Name, err, state.FormatTime(last), when, fix)
}

// AnyCriticalAlert reports whether any configured domain's state file has a
// critical alert; 0-D uses it before Step 1 runs, and counts every domain
// whatever its status, since a fire is a fire.
func AnyCriticalAlert(cfg *config.Config, st *state.Store) bool {
	defer st.HoldRoot()()
	for _, dc := range cfg.Domains {
		ds, err := st.ReadDomainState(dc.StateFile)
		if err != nil {
			continue
		}
		for _, a := range ds.Alerts {
			if a.Severity == "critical" {
				return true
			}
		}
	}
	return false
}
