package decide

import "testing"

func TestStep3A2_ImplementationScoring(t *testing.T) {
	mk := func() Input {
		in := newInput(3, dom("a", 1, 24))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 4, ActionablePending: 4, OldestPendingHours: 10, HighestRice: 250, OpenDraftPRs: 1}
		return in
	}
	t.Run("formula", func(t *testing.T) {
		in := mk()
		in.Memo[ImplementationDomain] = 0.7
		in.Confidence[ImplementationDomain] = 0.9
		o := option(t, Decide(in), ImplementationDomain)
		// 4×2 + 10×0.1 + 250×0.01 − 3 = 8.5
		exact(t, "queue", o.Queue, 8.5)
		exact(t, "staleness", o.Staleness, 0)
		exact(t, "balance", o.Balance, 0)
		exact(t, "alert", o.Alert, 0)
		exact(t, "mission", o.Mission, 0)
		exact(t, "goal", o.Goal, defGoal)
		exact(t, "confidence", o.Confidence, 0.9)
		exact(t, "confidence term", o.ConfidenceTerm, 0.18)
		exact(t, "memo", o.Memo, 0.7)
		exact(t, "raw", o.RawScore, 8.5+defGoal+0.18+0.7)
		exact(t, "score", o.Score, 8.5+defGoal+0.18+0.7)
		if !o.Virtual || o.Hours != nil || o.Pending == nil || *o.Pending != 4 {
			t.Errorf("virtual %t hours %v pending %v", o.Virtual, o.Hours, o.Pending)
		}
		exact(t, "weight", o.Weight, 1.5)
		if o.Skill != "/dev-cycle" {
			t.Errorf("skill %q", o.Skill)
		}
	})
	t.Run("no open draft, no penalty", func(t *testing.T) {
		in := mk()
		in.Impl.OpenDraftPRs = 0
		exact(t, "queue", option(t, Decide(in), ImplementationDomain).Queue, 11.5)
	})
	t.Run("configured multipliers", func(t *testing.T) {
		in := mk()
		in.Config.Scoring.ImplementationFormula.PendingMultiplier = 1
		in.Config.Scoring.ImplementationFormula.AgeMultiplier = 0.5
		in.Config.Scoring.ImplementationFormula.RiceMultiplier = 0.1
		in.Config.Scoring.ImplementationFormula.OpenPRPenalty = -10
		exact(t, "queue", option(t, Decide(in), ImplementationDomain).Queue, 4+5+25-10)
	})
	t.Run("mission alignment defaults to 1.0", func(t *testing.T) {
		in := mk()
		in.Config.Mission = "Ship v2"
		exact(t, "mission", option(t, Decide(in), ImplementationDomain).Mission, 6)
		in.Config.Implementation.MissionAlignment = f64(0.25)
		exact(t, "mission 0.25", option(t, Decide(in), ImplementationDomain).Mission, 1.5)
	})
	t.Run("pending 0 scores 0", func(t *testing.T) {
		in := mk()
		in.Impl = Impl{OldestPendingHours: 500, HighestRice: 10000}
		in.Memo[ImplementationDomain] = 20
		in.Config.Mission = "Ship v2"
		o := option(t, Decide(in), ImplementationDomain)
		exact(t, "score", o.Score, 0)
		exact(t, "raw", o.RawScore, 0)
		exact(t, "queue", o.Queue, 0)
		if *o.Pending != 0 {
			t.Errorf("pending %d", *o.Pending)
		}
		wantReason(t, o, "no pending actions")
	})
	t.Run("goal contribution by keyword", func(t *testing.T) {
		in := mk()
		in.Goals = []Goal{{ID: "g1", Title: "Finish the implementation backlog", Status: "active", Progress: 0.8}}
		exact(t, "goal", option(t, Decide(in), ImplementationDomain).Goal, 0.5*0.2*0.3)
	})
	t.Run("sorts after real domains on a full tie", func(t *testing.T) {
		in := mk()
		if o := option(t, Decide(in), ImplementationDomain); o.Index != len(in.Config.Domains) {
			t.Errorf("implementation index %d, want %d", o.Index, len(in.Config.Domains))
		}
	})
	t.Run("wins", func(t *testing.T) {
		in := mk()
		in.Impl.PendingCount, in.Impl.HighestRice = 12, 900
		wantWinner(t, Decide(in), ImplementationDomain)
	})
}

func TestStep3B_UrgentSignals(t *testing.T) {
	alerted := func(fallback bool, severity string) Decision {
		a := dom("a", 1, 24)
		a.Fallback = fallback
		a.Alerts = []Alert{{Severity: "info"}, {Severity: severity}}
		return Decide(newInput(2, a, dom("b", 1, 24)))
	}
	t.Run("health_alert", func(t *testing.T) {
		exact(t, "fallback warning", option(t, alerted(true, "warning"), "a").Alert, 5)
		exact(t, "fallback info", option(t, alerted(true, "info"), "a").Alert, 0)
		exact(t, "non-fallback warning", option(t, alerted(false, "warning"), "a").Alert, 0)
		exact(t, "other domain", option(t, alerted(true, "warning"), "b").Alert, 0)
		// Several alerts on one domain are one signal, not one bonus each.
		a := dom("a", 1, 24)
		a.Fallback = true
		a.Alerts = []Alert{{Severity: "warning"}, {Severity: "warning"}}
		exact(t, "two warnings", option(t, Decide(newInput(2, a, dom("b", 1, 24))), "a").Alert, 5)
	})
	t.Run("stale_after_change", func(t *testing.T) {
		a := dom("a", 1, 24)
		in := newInput(2, a, dom("b", 1, 24))
		in.StaleAfterChange = map[string]bool{"a": true}
		exact(t, "a", option(t, Decide(in), "a").Alert, 2)
		// Signals stack, and the recency dampener applies to the stack.
		in.Domains[0].Fallback = true
		in.Domains[0].Alerts = []Alert{{Severity: "warning"}}
		exact(t, "stacked", option(t, Decide(in), "a").Alert, 7)
		in.Domains[0].Hours = 1
		exact(t, "stacked at 1h", option(t, Decide(in), "a").Alert, 7*0.25)
	})

	impl := func(mut func(*Input)) Option {
		in := newInput(3, dom("a", 1, 24))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 1, ActionablePending: 1, OldestPendingHours: 1}
		mut(&in)
		return option(t, Decide(in), ImplementationDomain)
	}
	t.Run("queue_pressure", func(t *testing.T) {
		exact(t, "at threshold", impl(func(in *Input) { in.Impl.PendingCount = 5 }).Alert, 3)
		exact(t, "below", impl(func(in *Input) { in.Impl.PendingCount = 4 }).Alert, 0)
		exact(t, "threshold 0 disables", impl(func(in *Input) {
			in.Impl.PendingCount = 50
			in.Config.Signals.QueuePressureThreshold = 0
		}).Alert, 0)
		o := impl(func(in *Input) { in.Impl.PendingCount = 5 })
		if !o.SelectedByAlert {
			t.Error("a signal on implementation must mark it alert-selected")
		}
	})
	t.Run("queue_age", func(t *testing.T) {
		exact(t, "older", impl(func(in *Input) { in.Impl.OldestPendingHours = 48.5 }).Alert, 2)
		exact(t, "exactly 48h", impl(func(in *Input) { in.Impl.OldestPendingHours = 48 }).Alert, 0)
		exact(t, "configured 12h", impl(func(in *Input) {
			in.Impl.OldestPendingHours = 13
			in.Config.Signals.QueueAgeHours = 12
		}).Alert, 2)
	})
	t.Run("observe_loop_escape", func(t *testing.T) {
		others := []LogEntry{{Domain: "a"}, {Domain: "a"}, {Domain: "a"}}
		exact(t, "three others", impl(func(in *Input) { in.Log = others }).Alert, 5)
		exact(t, "implementation among the last three", impl(func(in *Input) {
			in.Log = []LogEntry{{Domain: "a"}, {Domain: "a"}, {Domain: ImplementationDomain}, {Domain: "a"}, {Domain: "a"}}
		}).Alert, 0)
		exact(t, "only two cycles", impl(func(in *Input) { in.Log = others[:2] }).Alert, 0)
		exact(t, "configured bonus", impl(func(in *Input) {
			in.Log = others
			in.Config.Implementation.ObserveLoopEscapeBonus = 9
		}).Alert, 9)
	})
	t.Run("all three stack", func(t *testing.T) {
		o := impl(func(in *Input) {
			in.Impl = Impl{PendingCount: 6, ActionablePending: 6, OldestPendingHours: 72}
			in.Log = []LogEntry{{Domain: "a"}, {Domain: "a"}, {Domain: "a"}}
		})
		exact(t, "alert", o.Alert, 3+2+5)
		exact(t, "score", o.Score, 6*2+72*0.1+10+defGoal+defConf)
	})
	t.Run("implementation signals need implementation enabled", func(t *testing.T) {
		in := newInput(3, dom("a", 1, 24))
		in.Impl = Impl{PendingCount: 9, ActionablePending: 9, OldestPendingHours: 99}
		in.Log = []LogEntry{{Domain: "a"}, {Domain: "a"}, {Domain: "a"}}
		d := Decide(in)
		if hasOption(d, ImplementationDomain) {
			t.Fatal("implementation scored while disabled")
		}
		exact(t, "a alert", option(t, d, "a").Alert, 0)
	})
	t.Run("season signal_bonuses override", func(t *testing.T) {
		a := dom("a", 1, 24)
		a.Fallback, a.Alerts = true, []Alert{{Severity: "warning"}}
		in := newInput(3, a)
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 5, ActionablePending: 5}
		in.StaleAfterChange = map[string]bool{"a": true}
		in.SignalBonuses = map[string]float64{"health_alert_bonus": 10, "queue_pressure_bonus": 1, "stale_after_change_bonus": 0.5, "unknown_bonus": 99}
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Alert, 10.5)
		exact(t, "implementation", option(t, d, ImplementationDomain).Alert, 1)
		// The override is per cycle: the config itself is untouched.
		exact(t, "config health_alert_bonus", in.Config.Signals.HealthAlertBonus, 5)
		in.SignalBonuses = map[string]float64{"queue_age_bonus": 7}
		in.Impl.OldestPendingHours = 50
		exact(t, "queue_age override", option(t, Decide(in), ImplementationDomain).Alert, 3+7)
	})
}

func TestStep3C_GoalContribution(t *testing.T) {
	goalTerm := func(override *float64, goals ...Goal) float64 {
		tc := dom("test_coverage", 1, 24)
		tc.GoalContribution = override
		in := newInput(2, tc, dom("backlog", 1, 24))
		in.Goals = goals
		return option(t, Decide(in), "test_coverage").Goal
	}
	const w = 0.3
	active := func(progress float64) Goal {
		return Goal{ID: "g", Title: "Grow revenue", Status: "active", Progress: progress, RelatedDomains: []string{"test_coverage"}}
	}
	exact(t, "no goals", goalTerm(nil), 0.5*w)
	exact(t, "related_domains", goalTerm(nil, active(0.4)), 0.5*0.6*w)
	exact(t, "goal.domain", goalTerm(nil, Goal{ID: "g", Status: "active", Progress: 0.2, Domain: "test_coverage"}), 0.5*0.8*w)
	exact(t, "keyword in title", goalTerm(nil, Goal{ID: "g1", Title: "Keep test coverage >= 80%", Status: "active", Progress: 0.5}), 0.25*w)
	exact(t, "keyword in id", goalTerm(nil, Goal{ID: "raise-test-coverage", Title: "Quality", Status: "active", Progress: 0.9}), 0.05*w)
	exact(t, "keyword case-insensitive", goalTerm(nil, Goal{ID: "g", Title: "TEST_COVERAGE to 90", Status: "active", Progress: 0}), 0.5*w)
	exact(t, "unrelated", goalTerm(nil, Goal{ID: "g", Title: "Cut the backlog", Status: "active", Progress: 0}), 0.5*w)
	// An explicit relation is authoritative: no keyword fallback then.
	exact(t, "explicit elsewhere", goalTerm(nil, Goal{ID: "g", Title: "test coverage", Status: "active", Progress: 0.1, RelatedDomains: []string{"backlog"}}), 0.5*w)
	exact(t, "explicit domain elsewhere", goalTerm(nil, Goal{ID: "test_coverage", Status: "active", Progress: 0.1, Domain: "backlog"}), 0.5*w)
	exact(t, "lowest progress of several", goalTerm(nil, active(0.9), active(0.3), active(0.6)), 0.5*0.7*w)
	exact(t, "complete", goalTerm(nil, active(1)), 0)
	exact(t, "progress above 1 clamps", goalTerm(nil, active(1.4)), 0)
	exact(t, "negative progress clamps", goalTerm(nil, active(-0.5)), 0.5*w)
	exact(t, "override", goalTerm(f64(0.9), active(0.1)), 0.9*w)
	exact(t, "override 0", goalTerm(f64(0), active(0.1)), 0)

	for _, status := range []string{"proposed", "achieved", "paused"} {
		g := active(0)
		g.Status = status
		exact(t, "status "+status+" ignored", goalTerm(nil, g), 0.5*w)
	}
	q := active(0)
	q.Quarantined = true
	exact(t, "quarantined ignored", goalTerm(nil, q), 0.5*w)
	exact(t, "quarantined ignored among others", goalTerm(nil, q, active(0.6)), 0.5*0.4*w)

	t.Run("goal_weight", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24))
		in.Config.Scoring.GoalWeight = 2
		in.Goals = []Goal{{ID: "g", Status: "active", Progress: 0.5, Domain: "a"}}
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Goal, 0.5)
		exact(t, "b", option(t, d, "b").Goal, 1)
	})
}
