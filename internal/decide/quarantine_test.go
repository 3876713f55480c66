package decide

import "testing"

// SPEC-NOTES §8: when a quarantined domain would have won and nothing else
// can, the cycle is idle with reason quarantined; when nothing would run
// without the quarantine either, the reason is what it would have been.
func TestSeed002_QuarantinedWinnerIdlesTheCycle(t *testing.T) {
	t.Run("others below the minimum", func(t *testing.T) {
		in := newInput(2, dom("flappy", 3, 168), dom("quiet", 0, 1))
		in.Config.Scoring.BalanceEnabled = false
		in.Quarantined = map[string]bool{"flappy": true}
		d := Decide(in)
		wantSkip(t, d, ReasonQuarantined)
		if d.QuarantineBlocked != "flappy" || d.Result != "" {
			t.Fatalf("blocked %q result %q", d.QuarantineBlocked, d.Result)
		}
		wantReason(t, option(t, d, "flappy"), "would have won, but is quarantined")
	})
	t.Run("the rest below the confidence threshold, no fallback", func(t *testing.T) {
		in := newInput(2, dom("flappy", 1, 10), dom("doubtful", 3, 168))
		in.Confidence["doubtful"] = 0.3
		in.Quarantined = map[string]bool{"flappy": true}
		wantSkip(t, Decide(in), ReasonQuarantined)
	})
	t.Run("the quarantined fallback was the way out of the gate", func(t *testing.T) {
		in := newInput(2, dom("doubtful", 3, 168), dom("safe", 1, 10))
		in.Domains[1].Fallback = true
		in.Config.Domains[1].Fallback = true
		in.Confidence["doubtful"] = 0.3
		wantWinner(t, Decide(in), "safe")
		in.Quarantined = map[string]bool{"safe": true}
		wantSkip(t, Decide(in), ReasonQuarantined)
	})
	t.Run("implementation", func(t *testing.T) {
		in := newInput(3, dom("quiet", 0, 1))
		in.Config.Scoring.BalanceEnabled = false
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 10, ActionablePending: 10, HighestRice: 500}
		in.Quarantined = map[string]bool{ImplementationDomain: true}
		d := Decide(in)
		wantSkip(t, d, ReasonQuarantined)
		if d.QuarantineBlocked != ImplementationDomain {
			t.Fatalf("blocked %q", d.QuarantineBlocked)
		}
	})
	t.Run("an empty queue is excluded too", func(t *testing.T) {
		in := newInput(3, dom("a", 1, 10))
		in.Config.Implementation.Enabled = true
		in.Quarantined = map[string]bool{ImplementationDomain: true}
		if o := option(t, Decide(in), ImplementationDomain); o.Excluded != ExcludedQuarantined {
			t.Fatalf("Excluded = %q", o.Excluded)
		}
	})
	t.Run("a critical alert it would have followed", func(t *testing.T) {
		in := newInput(2, dom("flappy", 0, 1), dom("quiet", 0, 1))
		in.Config.Scoring.BalanceEnabled = false
		in.Quarantined = map[string]bool{"flappy": true}
		wantSkip(t, Decide(withAlert(in, "flappy", "critical")), ReasonQuarantined)
	})

	// Not the quarantine's doing: the reason stays.
	t.Run("quarantined below the minimum too", func(t *testing.T) {
		in := newInput(2, dom("flappy", 0, 1), dom("quiet", 0, 1))
		in.Config.Scoring.BalanceEnabled = false
		in.Quarantined = map[string]bool{"flappy": true}
		d := Decide(in)
		wantSkip(t, d, ReasonBelowMinimum)
		if d.QuarantineBlocked != "" {
			t.Fatalf("blocked %q", d.QuarantineBlocked)
		}
	})
	t.Run("quarantined below the confidence threshold too", func(t *testing.T) {
		in := newInput(2, dom("flappy", 3, 168), dom("doubtful", 1, 10))
		in.Confidence["flappy"], in.Confidence["doubtful"] = 0.3, 0.3
		in.Quarantined = map[string]bool{"flappy": true}
		wantSkip(t, Decide(in), ReasonBelowConfidence)
	})
	t.Run("a quarantined goal id is no domain", func(t *testing.T) {
		in := newInput(2, dom("quiet", 0, 1))
		in.Config.Scoring.BalanceEnabled = false
		in.Quarantined = map[string]bool{"g-1": true}
		wantSkip(t, Decide(in), ReasonBelowMinimum)
	})
}

// SPEC-NOTES §8: once every counted goal is met, work in a quarantined
// domain (an alert, pending actions, a productive strategize domain) does
// not keep the session busy.
func TestSeed002_QuarantinedWorkDoesNotBlockGoalsMetIdle(t *testing.T) {
	mk := func() Input {
		in := newInput(3, dom("a", 1, 10), dom("b", 1, 10))
		in.Goals = []Goal{{ID: "g", Status: "active", Progress: 1}}
		return in
	}
	wantSkip(t, Decide(mk()), ReasonGoalsMetIdle)
	cases := map[string]func(*Input){
		"an alert": func(in *Input) { in.Domains[1].Alerts = []Alert{{Severity: "warning"}} },
		"pending actions": func(in *Input) {
			in.Config.Implementation.Enabled = true
			in.Impl = Impl{PendingCount: 2, ActionablePending: 2}
		},
		"a strategize domain that produced output": func(in *Input) {
			in.Domains[1].Phase = "strategize"
			in.Log = []LogEntry{{Domain: "b", Action: "execute", HadOutput: yes()}}
		},
	}
	for name, add := range cases {
		t.Run(name, func(t *testing.T) {
			in := mk()
			add(&in)
			if d := Decide(in); d.SkipReason == ReasonGoalsMetIdle {
				t.Fatalf("unquarantined work must keep the cycle busy; got %s", render(d))
			}
			in.Quarantined = map[string]bool{"b": true, ImplementationDomain: true}
			wantSkip(t, Decide(in), ReasonGoalsMetIdle)
		})
	}
	t.Run("a quarantined goal is not counted", func(t *testing.T) {
		in := mk()
		in.Goals = append(in.Goals, Goal{ID: "g2", Status: "active", Progress: 0.1})
		if d := Decide(in); d.SkipReason == ReasonGoalsMetIdle {
			t.Fatal("an unmet goal must keep the cycle busy")
		}
		in.Goals[1].Quarantined = true
		wantSkip(t, Decide(in), ReasonGoalsMetIdle)
	})
}
