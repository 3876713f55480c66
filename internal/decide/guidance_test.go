package decide

import (
	"strings"
	"testing"
)

func TestStep3A0_CriticalAlertOverride(t *testing.T) {
	mk := func() Input {
		// "big" would win any scoring pass; the critical domains are neither
		// stale nor fallback, and b's confidence is far below the threshold.
		in := newInput(2, dom("a", 1, 0.5), dom("b", 3, 0.5), dom("big", 5, 168))
		in.Memo["big"] = 50
		in.Confidence["b"] = 0.1
		return in
	}
	t.Run("highest weight among critical", func(t *testing.T) {
		in := withAlert(withAlert(mk(), "a", "critical"), "b", "critical")
		d := Decide(in)
		wantWinner(t, d, "b")
		if d.Guidance != GuidanceCriticalAlert {
			t.Errorf("Guidance = %q, want critical_alert", d.Guidance)
		}
		if d.Scored || len(d.Options) != 0 {
			t.Errorf("Scored = %t, %d options: scoring must be skipped", d.Scored, len(d.Options))
		}
		// Fires are fought even at low confidence: no gate, no fallback.
		if d.Gated || d.SkipReason != "" {
			t.Errorf("Gated = %t, skip %q", d.Gated, d.SkipReason)
		}
		if !d.ScoreVerified {
			t.Error("a critical-alert decision has nothing to verify and must read as verified")
		}
		w := d.Winner
		exact(t, "winner confidence", w.Confidence, 0.1)
		exact(t, "winner weight", w.Weight, 3)
		if w.Skill != "/b" || w.Hours == nil || *w.Hours != 0.5 {
			t.Errorf("winner skill %q hours %v", w.Skill, w.Hours)
		}
		wantReason(t, *w, "critical alert")
		if !strings.Contains(strings.Join(d.Notes, "\n"), "3-A0: critical alert in b") {
			t.Errorf("notes %q", d.Notes)
		}
	})
	t.Run("weight tie goes to config order", func(t *testing.T) {
		in := newInput(2, dom("x", 2, 1), dom("y", 2, 1))
		in.Domains = []Domain{in.Domains[1], in.Domains[0]}
		d := Decide(withAlert(withAlert(in, "x", "critical"), "y", "critical"))
		wantWinner(t, d, "x")
	})
	t.Run("warning is not critical", func(t *testing.T) {
		d := Decide(withAlert(mk(), "b", "warning"))
		if d.Guidance != "" || !d.Scored {
			t.Fatalf("a warning must not shortcut scoring: guidance %q", d.Guidance)
		}
		wantWinner(t, d, "big")
	})
	t.Run("a domain the level filter removed cannot fire", func(t *testing.T) {
		in := newInput(0, dom("kept", 2, 24), dom("dropped", 1, 24))
		d := Decide(withAlert(in, "dropped", "critical"))
		if d.Guidance != "" {
			t.Fatalf("Guidance = %q for a filtered-out domain", d.Guidance)
		}
		wantWinner(t, d, "kept")
	})
	t.Run("a season-disabled domain cannot fire", func(t *testing.T) {
		in := mk()
		in.Config.SeasonModes.Enabled = true
		in.Config.SeasonModes.Modes["default"] = seasonDisabling("b")
		d := Decide(withAlert(in, "b", "critical"))
		wantWinner(t, d, "big")
	})
}

func TestStep3A0_CriticalAlertQuarantined(t *testing.T) {
	// SPEC-NOTES §8: a quarantined domain is excluded from Decide; 3-A0's
	// critical-alert shortcut must not hand it the cycle either.
	in := newInput(2, dom("flappy", 2, 1), dom("steady", 1, 24))
	in.Quarantined = map[string]bool{"flappy": true}
	d := Decide(withAlert(in, "flappy", "critical"))
	wantWinner(t, d, "steady")
}

func TestStep3A0_StablePattern(t *testing.T) {
	ran := func(domain string) LogEntry {
		return LogEntry{Domain: domain, Action: "execute", HadOutput: yes()}
	}
	mk := func() Input {
		// a has won three times running; scoring would pick b (staler).
		in := newInput(2, dom("a", 1, 1), dom("b", 1, 48), dom("c", 0.5, 24))
		in.Confidence["a"] = 0.8
		in.Log = []LogEntry{ran("b"), ran("a"), ran("a"), ran("a")}
		return in
	}
	t.Run("fires", func(t *testing.T) {
		d := Decide(mk())
		wantWinner(t, d, "a")
		if d.Guidance != GuidanceStablePattern || d.Scored || len(d.Options) != 0 || d.Gated {
			t.Fatalf("guidance %q scored %t options %d gated %t", d.Guidance, d.Scored, len(d.Options), d.Gated)
		}
		if !d.ScoreVerified {
			t.Error("ScoreVerified = false")
		}
		wantReason(t, *d.Winner, "won the last 3 cycles with confidence 0.80")
	})
	t.Run("own alert does not block", func(t *testing.T) {
		in := mk()
		in.Domains[0].Fallback = true
		wantGuidance(t, Decide(withAlert(in, "a", "warning")), GuidanceStablePattern, "a")
	})
	t.Run("non-fallback warning elsewhere is no urgent signal", func(t *testing.T) {
		// 3-B gives health_alert only to fallback domains, so this alert
		// produces no signal and the shortcut stands.
		wantGuidance(t, Decide(withAlert(mk(), "b", "warning")), GuidanceStablePattern, "a")
	})

	blocked := map[string]func(*Input){
		"confidence below 0.8": func(in *Input) { in.Confidence["a"] = 0.79 },
		"only two wins":        func(in *Input) { in.Log = []LogEntry{ran("b"), ran("b"), ran("a"), ran("a")} },
		"a shorter log":        func(in *Input) { in.Log = []LogEntry{ran("a"), ran("a")} },
		"one of the three was a skip": func(in *Input) {
			in.Log[2] = LogEntry{Domain: "a", Action: "skip"}
		},
		"one of the three was itself a shortcut, not won by scoring": func(in *Input) {
			in.Log[3].Guidance = GuidanceStablePattern
		},
		"one of the three was a critical-alert override": func(in *Input) {
			in.Log[1].Guidance = GuidanceCriticalAlert
		},
		"one of the three was observe-only": func(in *Input) {
			in.Log[3] = LogEntry{Domain: "a", Action: "observe_only", HadOutput: no()}
		},
		"fallback domain elsewhere with an alert": func(in *Input) {
			in.Domains[1].Fallback = true
			in.Domains[1].Alerts = []Alert{{Severity: "warning"}}
		},
		"stale-after-change elsewhere": func(in *Input) {
			in.StaleAfterChange = map[string]bool{"c": true}
		},
		"queue pressure on implementation": func(in *Input) {
			in.Config.ProgressiveComplex.CurrentLevel = 3
			in.Config.Implementation.Enabled = true
			in.Impl = Impl{PendingCount: 6, ActionablePending: 6}
		},
		"threshold above the confidence": func(in *Input) {
			in.Confidence["a"] = 0.85
			in.Config.Safety.ConfidenceThreshold = 0.9
		},
		"in cooldown": func(in *Input) { in.Domains[0].MinIntervalHours = f64(2) },
		"quarantined": func(in *Input) { in.Quarantined = map[string]bool{"a": true} },
		"filtered out by the level": func(in *Input) {
			in.Config.ProgressiveComplex.CurrentLevel = 0
			in.Domains[1].Weight = 3
		},
	}
	for name, mut := range blocked {
		t.Run("not when "+name, func(t *testing.T) {
			in := mk()
			mut(&in)
			d := Decide(in)
			if d.Guidance != "" {
				t.Fatalf("Guidance = %q, want a full scoring pass", d.Guidance)
			}
			if !d.Scored {
				t.Fatal("Scored = false")
			}
		})
	}
}

func wantGuidance(t testing.TB, d Decision, guidance, name string) {
	t.Helper()
	if d.Guidance != guidance {
		t.Fatalf("Guidance = %q, want %q\n%s", d.Guidance, guidance, render(d))
	}
	wantWinner(t, d, name)
}
