package decide

import (
	"fmt"
	"math"
	"testing"
)

// terms are the expected 3-A terms of one option.
type terms struct {
	staleness, alert, mission, goal, conf, memo, balance float64
}

func (w terms) sum() float64 {
	return w.staleness + w.alert + w.mission + w.goal + w.conf + w.memo + w.balance
}

// wantTerms checks every term, the raw sum and the floored score.
func wantTerms(t testing.TB, o Option, w terms) {
	t.Helper()
	exact(t, o.Domain+" staleness", o.Staleness, w.staleness)
	exact(t, o.Domain+" alert", o.Alert, w.alert)
	exact(t, o.Domain+" mission", o.Mission, w.mission)
	exact(t, o.Domain+" goal", o.Goal, w.goal)
	exact(t, o.Domain+" confidence_term", o.ConfidenceTerm, w.conf)
	exact(t, o.Domain+" memo", o.Memo, w.memo)
	exact(t, o.Domain+" balance", o.Balance, w.balance)
	exact(t, o.Domain+" raw_score", o.RawScore, w.sum())
	exact(t, o.Domain+" score", o.Score, math.Max(w.sum(), 0))
}

func TestStep3A_StalenessLogarithmic(t *testing.T) {
	// The seed's reference values at weight 1, printed to 2 places. 168h is
	// 37.6120 (10·ln 43); the seed prints 37.62, so that row is compared
	// within 0.01 while the formula itself is held to 1e-9 below.
	refs := []struct{ hours, want float64 }{
		{1, 2.23}, {4, 6.93}, {12, 13.86}, {24, 19.46}, {168, 37.62},
	}
	for _, r := range refs {
		got := Staleness("logarithmic", 1, r.hours)
		near(t, fmt.Sprintf("staleness(%gh)", r.hours), got, r.want, 0.01)
		exact(t, fmt.Sprintf("staleness(%gh) formula", r.hours), got, logStaleness(1, r.hours))
	}
	exact(t, "168h at 4 places", math.Round(Staleness("logarithmic", 1, 168)*1e4)/1e4, 37.612)
	exact(t, "0h", Staleness("logarithmic", 1, 0), 0)
	// Linear in weight: the curve only bends in hours.
	exact(t, "weight 2.5", Staleness("logarithmic", 2.5, 24), 2.5*logStaleness(1, 24))
	// Logarithmic is the default: an unset or unknown curve is not linear.
	exact(t, "empty curve", Staleness("", 2, 168), logStaleness(2, 168))

	// Through Decide, the default config uses the logarithmic curve.
	in := newInput(2, dom("a", 2, 24), dom("b", 0.5, 168))
	d := Decide(in)
	exact(t, "a staleness", option(t, d, "a").Staleness, logStaleness(2, 24))
	exact(t, "b staleness", option(t, d, "b").Staleness, logStaleness(0.5, 168))
}

func TestStep3A_StalenessLinear(t *testing.T) {
	exact(t, "linear 168h × 2", Staleness("linear", 2, 168), 336)
	exact(t, "linear 0h", Staleness("linear", 3, 0), 0)
	exact(t, "linear 1.5h × 0.4", Staleness("linear", 0.4, 1.5), 0.6)

	in := newInput(2, dom("a", 2, 24), dom("b", 0.5, 168))
	in.Config.Scoring.StalenessCurve = "linear"
	d := Decide(in)
	// Under linear b's 168h beats a's heavier weight (84 vs 48); under the
	// logarithmic default a wins (39 vs 19).
	wantWinner(t, d, "b")
	wantTerms(t, option(t, d, "a"), terms{staleness: 48, goal: defGoal, conf: defConf, balance: 2.5})
	wantTerms(t, option(t, d, "b"), terms{staleness: 84, goal: defGoal, conf: defConf, balance: 2.5})
	in.Config.Scoring.StalenessCurve = "logarithmic"
	wantWinner(t, Decide(in), "a")
}

func TestStep3A_Cooldown(t *testing.T) {
	mk := func(hours float64) Input {
		a := dom("a", 3, hours)
		a.MinIntervalHours = f64(6)
		in := newInput(2, a, dom("b", 0.5, 2))
		in.Memo["a"] = 100 // even a huge memo cannot lift a cooling domain
		return in
	}
	d := Decide(mk(2))
	a := option(t, d, "a")
	if a.Excluded != ExcludedCooldown {
		t.Fatalf("a.Excluded = %q, want cooldown", a.Excluded)
	}
	// The row still reports the confidence term, but nothing enters the sum.
	for what, v := range map[string]float64{"staleness": a.Staleness, "alert": a.Alert, "mission": a.Mission,
		"goal": a.Goal, "memo": a.Memo, "balance": a.Balance, "raw_score": a.RawScore, "score": a.Score} {
		exact(t, "a "+what, v, 0)
	}
	exact(t, "a confidence term (reported)", a.ConfidenceTerm, defConf)
	wantReason(t, a, "cooldown: 2.00h < 6h minimum")
	wantReason(t, a, "excluded: cooldown")
	wantWinner(t, d, "b")
	// N counts the cooling domain: b's bonus is 5 × 1/2, not 5 × 1/1.
	exact(t, "b balance", option(t, d, "b").Balance, 2.5)

	// The bound is strict: at exactly min_interval_hours the domain is back.
	d = Decide(mk(6))
	if a := option(t, d, "a"); a.Excluded != "" {
		t.Fatalf("at 6h a.Excluded = %q, want none", a.Excluded)
	}
	wantWinner(t, d, "a")

	// A cooling domain alone: nothing can win.
	only := dom("a", 3, 1)
	only.MinIntervalHours = f64(6)
	in := newInput(2, only)
	in.Memo["a"] = 100
	wantSkip(t, Decide(in), ReasonBelowMinimum)
}

func TestStep3A_DryDomainDampener(t *testing.T) {
	executed := func(domain string, out bool) LogEntry {
		return LogEntry{Domain: domain, Action: "execute", HadOutput: boolp(out)}
	}
	cases := []struct {
		name   string
		phase  string
		log    []LogEntry
		alerts []Alert
		factor float64
	}{
		{"execute phase dry", "execute", []LogEntry{executed("a", false)}, nil, 0.3},
		{"strategize phase dry", "strategize", []LogEntry{executed("a", false)}, nil, 0.3},
		{"observe phase dry", "observe", []LogEntry{executed("a", false)}, nil, 0.6},
		{"detect phase dry", "detect", []LogEntry{executed("a", false)}, nil, 0.6},
		{"unknown phase dry", "", []LogEntry{executed("a", false)}, nil, 0.6},
		{"legacy entry without action", "execute", []LogEntry{{Domain: "a", HadOutput: no()}}, nil, 0.3},
		{"had output", "execute", []LogEntry{executed("a", true)}, nil, 1},
		{"had_output unknown", "execute", []LogEntry{{Domain: "a", Action: "execute"}}, nil, 1},
		{"never ran", "execute", []LogEntry{executed("c", false)}, nil, 1},
		{"older dry run, latest had output", "execute", []LogEntry{executed("a", false), executed("b", true), executed("a", true)}, nil, 1},
		{"older output, latest dry", "execute", []LogEntry{executed("a", true), executed("b", true), executed("a", false)}, nil, 0.3},
		// Entries that selected a without running it do not count as its last run.
		{"later skip ignored", "execute", []LogEntry{executed("a", false), {Domain: "a", Action: "skip", HadOutput: yes()}}, nil, 0.3},
		{"later observe_only ignored", "execute", []LogEntry{executed("a", true), {Domain: "a", Action: "observe_only", HadOutput: no()}}, nil, 1},
		{"later blocked ignored", "strategize", []LogEntry{executed("a", false), {Domain: "a", Action: "blocked", HadOutput: yes()}}, nil, 0.3},
		{"warning alert exempts", "execute", []LogEntry{executed("a", false)}, []Alert{{Severity: "warning"}}, 1},
		{"info alert does not exempt", "execute", []LogEntry{executed("a", false)}, []Alert{{Severity: "info"}}, 0.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := dom("a", 1.5, 24)
			a.Phase, a.Alerts = c.phase, c.alerts
			in := newInput(2, a, dom("b", 1, 24))
			in.Log = c.log
			d := Decide(in)
			exact(t, "a staleness", option(t, d, "a").Staleness, c.factor*logStaleness(1.5, 24))
			exact(t, "b staleness", option(t, d, "b").Staleness, logStaleness(1, 24))
		})
	}
	t.Run("configured factors", func(t *testing.T) {
		work, mon := dom("work", 1, 24), dom("mon", 1, 24)
		work.Phase, mon.Phase = "execute", "observe"
		in := newInput(2, work, mon)
		in.Config.Scoring.DryDomainDampen, in.Config.Scoring.MonitorDryDampen = 0.1, 0.9
		in.Log = []LogEntry{executed("work", false), executed("mon", false)}
		d := Decide(in)
		exact(t, "work", option(t, d, "work").Staleness, 0.1*logStaleness(1, 24))
		exact(t, "mon", option(t, d, "mon").Staleness, 0.9*logStaleness(1, 24))
	})
}

func boolp(v bool) *bool { return &v }

func TestStep3A_OffMissionDampener(t *testing.T) {
	mk := func(mission string, align float64, alerts ...Alert) Option {
		a := dom("a", 1, 24)
		a.MissionAlignment, a.Alerts = align, alerts
		in := newInput(2, a, dom("b", 1, 24))
		in.Config.Mission = mission
		return option(t, Decide(in), "a")
	}
	full := logStaleness(1, 24)
	exact(t, "off-mission", mk("Ship v2", 0.1).Staleness, 0.2*full)
	exact(t, "alignment 0", mk("Ship v2", 0).Staleness, 0.2*full)
	exact(t, "at the threshold", mk("Ship v2", 0.2).Staleness, full)
	exact(t, "on mission", mk("Ship v2", 0.9).Staleness, full)
	exact(t, "no mission", mk("", 0).Staleness, full)
	exact(t, "blank mission", mk("   ", 0).Staleness, full)
	exact(t, "warning alert exempts", mk("Ship v2", 0, Alert{Severity: "warning"}).Staleness, full)
	exact(t, "info alert does not exempt", mk("Ship v2", 0, Alert{Severity: "info"}).Staleness, 0.2*full)

	t.Run("stacks with the dry dampener", func(t *testing.T) {
		a := dom("a", 1, 24)
		a.Phase = "execute"
		in := newInput(2, a, dom("b", 1, 24))
		in.Config.Mission = "Ship v2"
		in.Config.Scoring.OffMissionThreshold, in.Config.Scoring.OffMissionDampen = 0.5, 0.25
		in.Log = []LogEntry{{Domain: "a", Action: "execute", HadOutput: no()}}
		exact(t, "a", option(t, Decide(in), "a").Staleness, 0.3*0.25*full)
	})
}

func TestStep3A_AlertRecencyDampener(t *testing.T) {
	mk := func(hours float64, severity string) Decision {
		a := dom("a", 1, hours)
		a.Fallback = true
		a.Alerts = []Alert{{Severity: severity}}
		return Decide(newInput(2, a, dom("b", 1, 24)))
	}
	for _, c := range []struct{ hours, want float64 }{
		{0, 0}, {1, 1.25}, {2, 2.5}, {3, 3.75}, {4, 5}, {10, 5}, {168, 5},
	} {
		d := mk(c.hours, "warning")
		a := option(t, d, "a")
		exact(t, fmt.Sprintf("alert at %gh", c.hours), a.Alert, c.want)
		if a.SelectedByAlert != (c.want > 0) {
			t.Errorf("at %gh SelectedByAlert = %t", c.hours, a.SelectedByAlert)
		}
	}
	// A configured cooldown stretches the ramp.
	a := dom("a", 1, 2)
	a.Fallback, a.Alerts = true, []Alert{{Severity: "warning"}}
	in := newInput(2, a, dom("b", 1, 24))
	in.Config.Signals.AlertCooldownHours = 8
	exact(t, "cooldown 8h at 2h", option(t, Decide(in), "a").Alert, 1.25)
	// A zero cooldown disables the dampener rather than dividing by zero.
	in.Config.Signals.AlertCooldownHours = 0
	exact(t, "cooldown 0", option(t, Decide(in), "a").Alert, 5)

	// A critical alert is never dampened away: at 0h, where a warning is worth
	// nothing, the critical domain still wins (through 3-A0).
	d := mk(0, "critical")
	wantWinner(t, d, "a")
	if d.Guidance != GuidanceCriticalAlert {
		t.Errorf("Guidance = %q, want critical_alert", d.Guidance)
	}
}

func TestStep3A_ConsecutiveAlertCap(t *testing.T) {
	byAlert := func(domain string, alert bool) LogEntry {
		return LogEntry{Domain: domain, Action: "execute", HadOutput: yes(), SelectedByAlert: alert}
	}
	mk := func(capN int, log ...LogEntry) Option {
		a := dom("a", 1, 24)
		a.Fallback, a.Alerts = true, []Alert{{Severity: "warning"}}
		in := newInput(2, a, dom("b", 1, 24))
		in.Config.Signals.MaxConsecutiveAlertCycles = capN
		in.Log = log
		return option(t, Decide(in), "a")
	}
	three := []LogEntry{byAlert("a", true), byAlert("a", true), byAlert("a", true)}

	o := mk(3, three...)
	exact(t, "capped alert", o.Alert, 0)
	if o.SelectedByAlert {
		t.Error("a capped alert must not mark the option as alert-selected")
	}
	wantReason(t, o, "alert auto-acknowledged after 3 consecutive alert-driven cycles")

	exact(t, "two alert cycles", mk(3, three[1:]...).Alert, 5)
	exact(t, "one not by alert", mk(3, byAlert("a", true), byAlert("a", false), byAlert("a", true)).Alert, 5)
	exact(t, "another domain between", mk(3, byAlert("a", true), byAlert("b", true), byAlert("a", true)).Alert, 5)
	exact(t, "older run does not count", mk(3, byAlert("a", true), byAlert("a", true), byAlert("a", true), byAlert("b", false)).Alert, 5)
	exact(t, "cap 2", mk(2, byAlert("b", false), byAlert("a", true), byAlert("a", true)).Alert, 0)
	exact(t, "cap 0 disables", mk(0, three...).Alert, 5)
}

func TestStep3A_BalancePenalty(t *testing.T) {
	t.Run("seed example", func(t *testing.T) {
		// 5 domains; a ran 50% of the time (expected 20%): −5 × 0.3 = −1.5.
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24), dom("c", 1, 24), dom("d", 1, 24), dom("e", 1, 24))
		in.DomainExecutions = map[string]int{"a": 50, "b": 20, "c": 20, "d": 10}
		in.TotalSkillExecutions = 100
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Balance, -1.5)
		exact(t, "b at its share", option(t, d, "b").Balance, 0)
		exact(t, "d under share", option(t, d, "d").Balance, 0.5)
		exact(t, "e never ran", option(t, d, "e").Balance, 1)
		// The bonus and the penalty decide the rank among equally stale domains.
		wantOrder(t, d, "e", "d", "b", "c", "a")
	})
	t.Run("floor at -10", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24), dom("c", 1, 24), dom("d", 1, 24), dom("e", 1, 24))
		in.Config.Scoring.BalanceWeight = 20
		in.DomainExecutions = map[string]int{"a": 100}
		in.TotalSkillExecutions = 100
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Balance, -10) // −20 × 0.8 = −16, floored
		exact(t, "b", option(t, d, "b").Balance, 4)
	})
	t.Run("no executions yet", func(t *testing.T) {
		// total 0 is read as 1, so every share is 0 and every domain gets B/N.
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24), dom("c", 1, 24))
		d := Decide(in)
		for _, n := range []string{"a", "b", "c"} {
			exact(t, n, option(t, d, n).Balance, 5.0/3)
		}
	})
	t.Run("N counts cooldown domains but not implementation", func(t *testing.T) {
		cool := dom("cool", 1, 1)
		cool.MinIntervalHours = f64(12)
		in := newInput(3, dom("a", 1, 24), cool, dom("b", 1, 24), dom("c", 1, 24))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 2, ActionablePending: 2}
		in.DomainExecutions = map[string]int{"a": 6, "b": 2, ImplementationDomain: 2}
		in.TotalSkillExecutions = 10
		d := Decide(in)
		// N = 4 (a, cool, b, c): a's share 0.6 − 0.25.
		exact(t, "a", option(t, d, "a").Balance, -5*(0.6-0.25))
		exact(t, "b", option(t, d, "b").Balance, -5*(0.2-0.25))
		exact(t, "c", option(t, d, "c").Balance, 1.25)
		exact(t, "implementation has no balance term", option(t, d, ImplementationDomain).Balance, 0)
	})
	t.Run("level filter sets N", func(t *testing.T) {
		in := newInput(1, dom("a", 2, 24), dom("b", 1, 24), dom("c", 0.5, 24))
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Balance, 2.5) // N = 2, not 3
	})
	t.Run("disabled", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24))
		in.Config.Scoring.BalanceEnabled = false
		in.DomainExecutions = map[string]int{"a": 10}
		in.TotalSkillExecutions = 10
		d := Decide(in)
		exact(t, "a", option(t, d, "a").Balance, 0)
		exact(t, "b", option(t, d, "b").Balance, 0)
	})
}

func TestStep3A_MissionTerm(t *testing.T) {
	mk := func(mission string, weight, align float64) Option {
		a := dom("a", 1, 24)
		a.MissionAlignment = align
		in := newInput(2, a, dom("b", 1, 24))
		in.Config.Mission = mission
		if weight >= 0 {
			in.Config.Scoring.MissionWeight = weight
		}
		return option(t, Decide(in), "a")
	}
	o := mk("Ship v2", -1, 0.5)
	wantTerms(t, o, terms{staleness: logStaleness(1, 24), mission: 3, goal: defGoal, conf: defConf, balance: 2.5})
	exact(t, "alignment 1", mk("Ship v2", -1, 1).Mission, 6)
	exact(t, "mission weight 10", mk("Ship v2", 10, 0.4).Mission, 4)
	exact(t, "alignment 0", mk("Ship v2", -1, 0).Mission, 0)
	exact(t, "no mission", mk("", -1, 0.9).Mission, 0)
	exact(t, "blank mission", mk(" \t", -1, 0.9).Mission, 0)

	// The term pulls an aligned domain past a staler, off-mission one.
	// aligned: 10·ln 10 + 6 = 29.03; stale: 10·ln 13 + 1.8 = 27.45 (0.3 is
	// above the off-mission threshold, so no dampener is involved).
	aligned, stale := dom("aligned", 1, 36), dom("stale", 1, 48)
	aligned.MissionAlignment, stale.MissionAlignment = 1, 0.3
	in := newInput(2, stale, aligned)
	in.Config.Mission = "Ship v2"
	wantWinner(t, Decide(in), "aligned")
	in.Config.Mission = ""
	wantWinner(t, Decide(in), "stale")
}

func TestStep3A_FloorAtZero(t *testing.T) {
	in := newInput(2, dom("a", 1, 24), dom("b", 1, 24))
	in.Memo["a"] = -50
	d := Decide(in)
	a := option(t, d, "a")
	raw := logStaleness(1, 24) + defGoal + defConf + 2.5 - 50
	wantTerms(t, a, terms{staleness: logStaleness(1, 24), goal: defGoal, conf: defConf, memo: -50, balance: 2.5})
	exact(t, "raw kept", a.RawScore, raw)
	if a.Score != 0 || a.RawScore >= 0 {
		t.Fatalf("score %v raw %v, want 0 and a negative raw score", a.Score, a.RawScore)
	}
	wantOrder(t, d, "b", "a")
}

func TestStep3A_TieBreak(t *testing.T) {
	// At 0h staleness is 0 whatever the weight, so scores tie exactly; the
	// balance term is off so executions do not move the scores.
	mk := func(ds ...Domain) Input {
		in := newInput(2, ds...)
		in.Config.Scoring.BalanceEnabled = false
		for _, d := range ds {
			in.Memo[d.Name] = 1
		}
		return in
	}
	t.Run("fewer executions", func(t *testing.T) {
		in := mk(dom("a", 3, 0), dom("b", 1, 0))
		in.DomainExecutions = map[string]int{"a": 5, "b": 2}
		in.TotalSkillExecutions = 7
		d := Decide(in)
		wantWinner(t, d, "b")
		wantOrder(t, d, "b", "a")
		wantReason(t, option(t, d, "a"), "tied with b and lost the tie-break (more executions)")
	})
	t.Run("then higher weight", func(t *testing.T) {
		in := mk(dom("a", 1, 0), dom("b", 2, 0))
		in.DomainExecutions = map[string]int{"a": 3, "b": 3}
		d := Decide(in)
		wantWinner(t, d, "b")
		wantReason(t, option(t, d, "a"), "lost the tie-break (lower weight)")
	})
	t.Run("then config order", func(t *testing.T) {
		in := mk(dom("a", 1, 0), dom("b", 1, 0), dom("c", 1, 0))
		// Present them out of config order: the index decides, not the slice.
		in.Domains = []Domain{in.Domains[2], in.Domains[1], in.Domains[0]}
		d := Decide(in)
		wantWinner(t, d, "a")
		wantOrder(t, d, "a", "b", "c")
		wantReason(t, option(t, d, "c"), "lost the tie-break (later in config.domains)")
	})
	t.Run("differences below 1e-9 are ties", func(t *testing.T) {
		in := mk(dom("a", 1, 0), dom("b", 1, 0))
		in.Memo["a"] = 1 - 1e-12
		in.DomainExecutions = map[string]int{"a": 0, "b": 1}
		wantWinner(t, Decide(in), "a")
	})
	t.Run("a real score difference beats the tie-break", func(t *testing.T) {
		in := mk(dom("a", 1, 0), dom("b", 1, 0))
		in.Memo["b"] = 1.001
		in.DomainExecutions = map[string]int{"a": 0, "b": 9}
		d := Decide(in)
		wantWinner(t, d, "b")
		wantReason(t, option(t, d, "a"), "lower score than b")
	})
}
