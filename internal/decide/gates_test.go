package decide

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestStep3D_ScoreTableRank(t *testing.T) {
	for name, c := range map[string]struct {
		in    Input
		n     int
		order []string
	}{
		"mixed":          {mixedInput(), 5, []string{"service_health", "test_coverage", "docs", "backlog", "security"}},
		"implementation": {implementationInput(), 3, []string{ImplementationDomain, "service_health", "test_coverage"}},
	} {
		t.Run(name, func(t *testing.T) {
			d := Decide(c.in)
			wantOrder(t, d, c.order...)
			for i, o := range d.Options {
				exact(t, o.Domain+" raw = sum of terms", o.RawScore, sumTermsIfScored(o))
				exact(t, o.Domain+" score = max(raw, 0)", o.Score, math.Max(o.RawScore, 0))
				if i > 0 && round9(d.Options[i-1].Score) < round9(o.Score) {
					t.Errorf("rank %d (%s %.4f) above a higher score (%s %.4f)", i, d.Options[i-1].Domain, d.Options[i-1].Score, o.Domain, o.Score)
				}
			}
			if !strings.Contains(strings.Join(d.Notes, "\n"), fmt.Sprintf("3-D: scored %d option(s)", c.n)) {
				t.Errorf("notes %q", d.Notes)
			}
		})
	}
}

// sumTermsIfScored is the sum an option's score was built from: a cooling
// domain and an empty queue report terms that never entered the sum.
func sumTermsIfScored(o Option) float64 {
	if o.Excluded == ExcludedCooldown || (o.Virtual && *o.Pending == 0) {
		return 0
	}
	return sumTerms(o)
}

func TestStep3E_MinScoreSkip(t *testing.T) {
	t.Run("below 0.5", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 0), dom("b", 2, 0))
		in.Config.Scoring.BalanceEnabled = false
		d := Decide(in)
		wantSkip(t, d, ReasonBelowMinimum)
		if !d.Scored || len(d.Options) != 2 {
			t.Fatalf("Scored %t, %d options: the table is still reported", d.Scored, len(d.Options))
		}
		exact(t, "a score", option(t, d, "a").Score, defGoal+defConf)
		for _, o := range d.Options {
			wantReason(t, o, "all scores below 0.5")
		}
	})
	exactly := func(memo float64) Decision {
		in := newInput(2, dom("a", 1, 0))
		in.Config.Scoring.BalanceEnabled = false
		in.Config.Scoring.GoalWeight, in.Config.Scoring.ConfidenceWeight = 0, 0
		in.Memo["a"] = memo
		return Decide(in)
	}
	t.Run("exactly 0.5 runs", func(t *testing.T) { wantWinner(t, exactly(0.5), "a") })
	t.Run("just under skips", func(t *testing.T) { wantSkip(t, exactly(0.4999), ReasonBelowMinimum) })
	t.Run("negative raw scores skip", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 24), dom("b", 1, 24))
		in.Memo["a"], in.Memo["b"] = -100, -100
		wantSkip(t, Decide(in), ReasonBelowMinimum)
	})
	t.Run("an excluded top score does not count", func(t *testing.T) {
		in := newInput(2, dom("a", 3, 168), dom("b", 1, 0))
		in.Config.Scoring.BalanceEnabled = false
		in.Quarantined = map[string]bool{"a": true}
		d := Decide(in)
		// b alone is below the minimum; a would have won, so the skip is
		// the quarantine's (SPEC-NOTES §8).
		wantSkip(t, d, ReasonQuarantined)
		if option(t, d, "a").Score < 10 {
			t.Error("the quarantined domain is still scored in the table")
		}
	})
}

// idleInput meets every condition of 3-E2: one active goal at 100 %, no
// warning or critical alert, nothing actionable, and the work domain came
// back empty last time.
func idleInput() Input {
	work, mon := dom("backlog", 1, 24), dom("health", 1, 24)
	work.Phase, mon.Phase = "strategize", "observe"
	mon.Alerts = []Alert{{Severity: "info"}}
	in := newInput(2, work, mon)
	in.Goals = []Goal{
		{ID: "g1", Title: "Ship", Status: "active", Progress: 1, RelatedDomains: []string{"backlog"}},
		{ID: "g0", Title: "Old", Status: "proposed", Progress: 0},
	}
	in.Impl = Impl{PendingCount: 2, ActionablePending: 0} // both blocked
	in.Log = []LogEntry{
		{Domain: "health", Action: "execute", HadOutput: yes()},
		{Domain: "backlog", Action: "execute", HadOutput: no()},
	}
	return in
}

func TestStep3E2_GoalCompletionIdle(t *testing.T) {
	d := Decide(idleInput())
	wantSkip(t, d, ReasonGoalsMetIdle)
	if d.Result != "observe_only" || !d.Scored || len(d.Options) != 2 {
		t.Fatalf("result %q scored %t options %d", d.Result, d.Scored, len(d.Options))
	}
	for _, o := range d.Options {
		wantReason(t, o, "goals met and nothing actionable")
	}

	still := map[string]func(*Input){
		"several goals all met": func(in *Input) {
			in.Goals = append(in.Goals, Goal{ID: "g2", Status: "active", Progress: 1.2})
		},
		"a quarantined goal is not counted": func(in *Input) {
			in.Goals = append(in.Goals, Goal{ID: "g3", Status: "active", Progress: 0.1, Quarantined: true})
		},
		"a monitor that had output is not work": func(in *Input) {
			in.Log = append(in.Log, LogEntry{Domain: "health", Action: "execute", HadOutput: yes()})
		},
		"a skip entry is not a run": func(in *Input) {
			in.Log = append(in.Log, LogEntry{Domain: "backlog", Action: "skip", HadOutput: yes()})
		},
	}
	for name, mut := range still {
		t.Run("idle: "+name, func(t *testing.T) {
			in := idleInput()
			mut(&in)
			wantSkip(t, Decide(in), ReasonGoalsMetIdle)
		})
	}

	negated := map[string]func(*Input){
		"goal_completion_idle off": func(in *Input) { in.Config.GoalCompletionIdle = false },
		"no goals":                 func(in *Input) { in.Goals = nil },
		"no active goal":           func(in *Input) { in.Goals[0].Status = "achieved" },
		"an active goal below 1.0": func(in *Input) {
			in.Goals = append(in.Goals, Goal{ID: "g2", Status: "active", Progress: 0.99})
		},
		"every active goal quarantined": func(in *Input) { in.Goals[0].Quarantined = true },
		"a warning alert":               func(in *Input) { in.Domains[1].Alerts = []Alert{{Severity: "warning"}} },
		"a warning alert on a domain the level filter dropped": func(in *Input) {
			in.Config.ProgressiveComplex.CurrentLevel = 0
			in.Domains[0].Weight = 2
			in.Domains[1].Alerts = []Alert{{Severity: "warning"}}
		},
		"an actionable pending action": func(in *Input) { in.Impl.ActionablePending = 1 },
		"a work domain had output": func(in *Input) {
			in.Log = append(in.Log, LogEntry{Domain: "backlog", Action: "execute", HadOutput: yes()})
		},
		"an execute-phase domain had output": func(in *Input) {
			in.Domains[1].Phase = "execute"
		},
	}
	for name, mut := range negated {
		t.Run("not idle: "+name, func(t *testing.T) {
			in := idleInput()
			mut(&in)
			d := Decide(in)
			if d.SkipReason == ReasonGoalsMetIdle || d.Winner == nil {
				t.Fatalf("winner %q skip %q, want a winner", winner(d), d.SkipReason)
			}
		})
	}
	t.Run("3-E runs first", func(t *testing.T) {
		in := idleInput()
		in.Memo["backlog"], in.Memo["health"] = -100, -100
		wantSkip(t, Decide(in), ReasonBelowMinimum)
	})
}

func TestStep3F_ConfidenceGate(t *testing.T) {
	// a > b > c by score (weights 3, 2, 1 at 24h).
	mk := func(ca, cb, cc float64) Input {
		in := newInput(2, dom("a", 3, 24), dom("b", 2, 24), dom("c", 1, 24))
		in.Confidence = map[string]float64{"a": ca, "b": cb, "c": cc}
		return in
	}
	t.Run("confident top score is not gated", func(t *testing.T) {
		d := Decide(mk(0.6, 0.1, 0.1)) // at the threshold counts as meeting it
		wantWinner(t, d, "a")
		if d.Gated {
			t.Error("Gated = true")
		}
	})
	t.Run("next candidate at or above the threshold", func(t *testing.T) {
		d := Decide(mk(0.5, 0.55, 0.65))
		wantWinner(t, d, "c")
		wantOrder(t, d, "a", "b", "c")
		if !d.Gated || !d.ScoreVerified {
			t.Fatalf("Gated %t verified %t", d.Gated, d.ScoreVerified)
		}
		wantReason(t, option(t, d, "a"), "top score but confidence 0.50 < threshold 0.60")
		wantReason(t, option(t, d, "b"), "confidence 0.55 below threshold")
		if !strings.Contains(strings.Join(d.Notes, "\n"), "3-F: confidence-gated to c (primary skill only)") {
			t.Errorf("notes %q", d.Notes)
		}
	})
	t.Run("candidates in score order, not config order", func(t *testing.T) {
		d := Decide(mk(0.5, 0.9, 0.95))
		wantWinner(t, d, "b")
	})
	t.Run("an excluded candidate is passed over", func(t *testing.T) {
		in := mk(0.5, 0.9, 0.7)
		in.Quarantined = map[string]bool{"b": true}
		wantWinner(t, Decide(in), "c")
	})
	t.Run("configured threshold", func(t *testing.T) {
		in := mk(0.75, 0.85, 0.1)
		in.Config.Safety.ConfidenceThreshold = 0.8
		wantWinner(t, Decide(in), "b")
	})
	t.Run("fallback when no candidate meets the threshold", func(t *testing.T) {
		in := mk(0.3, 0.3, 0.3)
		in.Domains[2].Fallback = true
		d := Decide(in)
		wantWinner(t, d, "c")
		if !d.Gated {
			t.Error("Gated = false")
		}
		wantReason(t, *d.Winner, "fallback domain: no candidate meets the confidence threshold")
	})
	t.Run("the top scorer may be the fallback", func(t *testing.T) {
		in := mk(0.3, 0.3, 0.3)
		in.Domains[0].Fallback = true
		d := Decide(in)
		wantWinner(t, d, "a")
		if !d.Gated {
			t.Error("Gated = false")
		}
	})
	t.Run("a cooling fallback cannot run", func(t *testing.T) {
		in := mk(0.3, 0.3, 0.3)
		in.Domains[2].Fallback = true
		in.Domains[2].MinIntervalHours = f64(48)
		wantSkip(t, Decide(in), ReasonBelowConfidence)
	})
	t.Run("no fallback", func(t *testing.T) {
		d := Decide(mk(0.3, 0.3, 0.3))
		wantSkip(t, d, ReasonBelowConfidence)
		if d.Gated {
			t.Error("Gated = true on a skip")
		}
		for _, o := range d.Options {
			wantReason(t, o, "below the confidence threshold and no fallback domain")
		}
	})
	t.Run("implementation is a candidate", func(t *testing.T) {
		in := newInput(3, dom("a", 3, 168))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 2, ActionablePending: 2}
		in.Confidence = map[string]float64{"a": 0.2, ImplementationDomain: 0.9}
		d := Decide(in)
		wantWinner(t, d, ImplementationDomain)
		if !d.Gated || !d.ScoreVerified {
			t.Errorf("gated %t verified %t", d.Gated, d.ScoreVerified)
		}
	})
}

func TestStep3F_FallbackInConfigOrder(t *testing.T) {
	// Two fallback domains, neither confident: the seed takes "the first
	// domain where config.domains[name].fallback == true", i.e. config order,
	// not weight order.
	first, second := dom("first", 1, 24), dom("second", 2, 24)
	first.Fallback, second.Fallback = true, true
	in := newInput(2, first, second, dom("top", 3, 24))
	in.Confidence = map[string]float64{"first": 0.3, "second": 0.3, "top": 0.3}
	d := Decide(in)
	wantWinner(t, d, "first")
	wantOrder(t, d, "top", "second", "first")
	if !d.Gated {
		t.Error("Gated = false")
	}
}

func TestStep3J_ScoreVerification(t *testing.T) {
	verified := func(t *testing.T, d Decision) {
		t.Helper()
		if d.Winner == nil {
			t.Fatalf("no winner (skip %q)", d.SkipReason)
		}
		if !d.ScoreVerified || d.Mismatch != "" {
			t.Fatalf("ScoreVerified %t mismatch %q", d.ScoreVerified, d.Mismatch)
		}
	}
	t.Run("normal", func(t *testing.T) { verified(t, Decide(mixedInput())) })
	t.Run("linear curve", func(t *testing.T) {
		in := mixedInput()
		in.Config.Scoring.StalenessCurve = "linear"
		verified(t, Decide(in))
	})
	t.Run("gated", func(t *testing.T) {
		in := newInput(2, dom("a", 3, 24), dom("b", 1, 24))
		in.Confidence["a"] = 0.2
		d := Decide(in)
		wantWinner(t, d, "b")
		verified(t, d)
	})
	t.Run("implementation", func(t *testing.T) {
		in := newInput(3, dom("a", 0.1, 1))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 8, ActionablePending: 8, OldestPendingHours: 60, HighestRice: 300, OpenDraftPRs: 1}
		d := Decide(in)
		wantWinner(t, d, ImplementationDomain)
		verified(t, d)
	})
	t.Run("a skip verifies nothing", func(t *testing.T) {
		in := newInput(2, dom("a", 1, 24))
		in.Memo["a"] = -100
		if d := Decide(in); d.ScoreVerified {
			t.Error("ScoreVerified = true without a winner")
		}
	})
	t.Run("verification does not move the winner's score", func(t *testing.T) {
		in := mixedInput()
		d := Decide(in)
		again := Decide(in)
		exact(t, "winner score", d.Winner.Score, again.Winner.Score)
		exact(t, "winner raw", d.Winner.RawScore, sumTerms(*d.Winner))
	})
}

func TestQuarantineExclusion(t *testing.T) {
	in := newInput(2, dom("flappy", 3, 168), dom("steady", 1, 24))
	in.Quarantined = map[string]bool{"flappy": true}
	d := Decide(in)
	f := option(t, d, "flappy")
	if f.Excluded != ExcludedQuarantined {
		t.Fatalf("Excluded = %q, want quarantined", f.Excluded)
	}
	// Still scored in full, so the table shows what it would have been.
	exact(t, "flappy score", f.Score, logStaleness(3, 168)+defGoal+defConf+2.5)
	wantOrder(t, d, "flappy", "steady")
	wantWinner(t, d, "steady")
	wantReason(t, f, "excluded: quarantined")

	t.Run("alone", func(t *testing.T) {
		// SPEC-NOTES §8: it would have won and nothing else can, so the
		// quarantine is why the cycle idles.
		in := newInput(2, dom("flappy", 3, 168))
		in.Quarantined = map[string]bool{"flappy": true}
		wantSkip(t, Decide(in), ReasonQuarantined)
	})
	t.Run("implementation", func(t *testing.T) {
		in := newInput(3, dom("a", 1, 2))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 10, ActionablePending: 10, HighestRice: 500}
		in.Quarantined = map[string]bool{ImplementationDomain: true}
		d := Decide(in)
		if o := option(t, d, ImplementationDomain); o.Excluded != ExcludedQuarantined {
			t.Fatalf("Excluded = %q", o.Excluded)
		}
		wantWinner(t, d, "a")
	})
}

// Every row that did not win says why it lost: the score table is the
// audit trail of the decision.
func TestEveryLoserHasAReason(t *testing.T) {
	for name, in := range map[string]Input{
		"mixed":          mixedInput(),
		"implementation": implementationInput(),
		"gated":          gatedInput(),
	} {
		t.Run(name, func(t *testing.T) {
			d := Decide(in)
			for _, o := range d.Options {
				if d.Winner != nil && o.Domain == d.Winner.Domain {
					wantReason(t, o, "selected")
					continue
				}
				if !lossExplained(o) {
					t.Errorf("%s lost without a reason: %q", o.Domain, o.Reasons)
				}
			}
		})
	}
	t.Run("gated past an auto-acknowledged alert", func(t *testing.T) {
		// b ranks above the gated winner c and is below the threshold, but it
		// already carries the auto-acknowledge note; it still needs a reason
		// for losing.
		b := dom("b", 2, 24)
		b.Fallback, b.Alerts = true, []Alert{{Severity: "warning"}}
		in := newInput(2, dom("a", 3, 24), b, dom("c", 1, 24))
		in.Confidence = map[string]float64{"a": 0.5, "b": 0.5, "c": 0.7}
		in.Log = []LogEntry{{Domain: "b", SelectedByAlert: true}, {Domain: "b", SelectedByAlert: true}, {Domain: "b", SelectedByAlert: true}}
		d := Decide(in)
		wantWinner(t, d, "c")
		wantOrder(t, d, "a", "b", "c")
		if o := option(t, d, "b"); !lossExplained(o) {
			t.Errorf("b, passed over by the confidence gate, does not say why it lost: %q", o.Reasons)
		}
	})
}

func lossExplained(o Option) bool {
	for _, sub := range []string{"lower score than", "lost the tie-break", "below threshold", "excluded:", "< threshold"} {
		if hasReason(o, sub) {
			return true
		}
	}
	return false
}

func TestStep3F_EmptyQueueIsNoCandidate(t *testing.T) {
	// 3-A2 scores an empty queue 0: there is nothing to implement. When the
	// gate looks past an unconfident top scorer it must not hand the cycle
	// to that empty implementation domain (confidence.initial 0.7) ahead of
	// the fallback domain.
	a := dom("a", 2, 24)
	a.Fallback = true
	in := newInput(3, a, dom("b", 1, 24))
	in.Config.Implementation.Enabled = true
	in.Confidence = map[string]float64{"a": 0.3, "b": 0.3}
	d := Decide(in)
	wantWinner(t, d, "a")
	if !d.Gated {
		t.Error("Gated = false")
	}
}
