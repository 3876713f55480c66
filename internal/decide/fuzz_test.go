package decide

import (
	"math"
	"testing"
)

// clampF maps any fuzzed float, NaN and infinities included, into [lo, hi].
func clampF(v, lo, hi float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return lo
	}
	return math.Min(math.Max(v, lo), hi)
}

func FuzzDecide(f *testing.F) {
	f.Add(1.0, 2.0, 0.5, 24.0, 168.0, 3.0, 0.7, 0.5, 0.9, 0.0, uint8(2), uint32(0))
	f.Add(2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.1, 0.1, 0.1, -20.0, uint8(3), uint32(0xffff))
	f.Add(0.3, 5.0, 1.0, 1.0, 4.0, 1000.0, 0.61, 0.59, 0.6, 3.0, uint8(0), uint32(0x1234))
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, uint8(1), uint32(0x8421))
	f.Fuzz(func(t *testing.T, w1, w2, w3, h1, h2, h3, c1, c2, c3, memo float64, level uint8, bits uint32) {
		bit := func(i uint) bool { return bits&(1<<i) != 0 }
		ws, hs, cs := []float64{w1, w2, w3}, []float64{h1, h2, h3}, []float64{c1, c2, c3}
		names := []string{"a", "b", "c"}
		var ds []Domain
		for i, n := range names {
			d := dom(n, clampF(math.Abs(ws[i]), 0, 10), clampF(math.Abs(hs[i]), 0, 1e5))
			u := uint(i * 6)
			d.Fallback = bit(u)
			if bit(u + 1) {
				d.Alerts = append(d.Alerts, Alert{Severity: "warning"})
			}
			if bit(u + 2) {
				d.Alerts = append(d.Alerts, Alert{Severity: "critical"})
			}
			if bit(u + 3) {
				d.MinIntervalHours = f64(12)
			}
			if bit(u + 4) {
				d.Phase = "execute"
			}
			d.MissionAlignment = clampF(cs[(i+1)%3], 0, 1)
			ds = append(ds, d)
		}
		in := newInput(int(level%4), ds...)
		for i, n := range names {
			in.Confidence[n] = clampF(cs[i], 0, 1)
			if bit(uint(i*6 + 5)) {
				if in.Quarantined == nil {
					in.Quarantined = map[string]bool{}
				}
				in.Quarantined[n] = true
			}
		}
		in.Memo["a"] = clampF(memo, -100, 100)
		if bit(18) {
			in.Config.Mission = "fuzz"
		}
		if bit(19) {
			in.Config.Implementation.Enabled = true
			p := int(bits>>24) % 12
			in.Impl = Impl{PendingCount: p, ActionablePending: p / 2, OldestPendingHours: clampF(math.Abs(h3), 0, 1e4), HighestRice: clampF(math.Abs(memo)*10, 0, 1e4), OpenDraftPRs: int(bits>>28) % 2}
		}
		if bit(20) {
			in.Config.Scoring.StalenessCurve = "linear"
		}
		if bit(21) {
			in.Goals = []Goal{{ID: "g", Title: "a goal for b", Status: "active", Progress: clampF(c2, 0, 1), RelatedDomains: []string{"a"}}}
		}
		if bit(22) {
			in.Log = []LogEntry{{Domain: "a", HadOutput: no()}, {Domain: "a", SelectedByAlert: true}, {Domain: "a", SelectedByAlert: true}, {Domain: "a", SelectedByAlert: true}}
		}
		in.DomainExecutions = map[string]int{"a": int(bits>>8) % 7, "b": int(bits>>12) % 5}
		in.TotalSkillExecutions = in.DomainExecutions["a"] + in.DomainExecutions["b"] + int(bits>>16)%3

		d := Decide(in)

		for _, o := range d.Options {
			if math.IsNaN(o.Score) || o.Score < 0 {
				t.Fatalf("%s score %v", o.Domain, o.Score)
			}
			if o.Score != math.Max(o.RawScore, 0) {
				t.Fatalf("%s score %v from raw %v", o.Domain, o.Score, o.RawScore)
			}
		}
		if (d.Winner == nil) == (d.SkipReason == "") {
			t.Fatalf("winner %q with skip %q", winner(d), d.SkipReason)
		}
		if d.SkipReason == ReasonQuarantined {
			// The quarantine is why nothing runs: without it, the
			// quarantined domain it names would have won.
			free := in
			free.Quarantined = nil
			if !in.Quarantined[d.QuarantineBlocked] || winner(Decide(free)) != d.QuarantineBlocked {
				t.Fatalf("skip quarantined, blocked %q, which would not have won", d.QuarantineBlocked)
			}
		}
		if d.Winner == nil {
			return
		}
		if d.Winner.Excluded != "" {
			t.Fatalf("winner %s is excluded (%s)", d.Winner.Domain, d.Winner.Excluded)
		}
		// No path, a 3-A0 shortcut included, hands a quarantined domain the
		// cycle (TestStep3A0_CriticalAlertQuarantined).
		if in.Quarantined[d.Winner.Domain] {
			t.Fatalf("quarantined %s won", d.Winner.Domain)
		}
		if !d.ScoreVerified {
			t.Fatalf("winner %s not verified: %s", d.Winner.Domain, d.Mismatch)
		}
		th := in.Config.Safety.ConfidenceThreshold
		if d.Guidance != GuidanceCriticalAlert && !d.Gated && d.Winner.Confidence < th {
			t.Fatalf("ungated winner %s below threshold", d.Winner.Domain)
		}
		if d.Scored {
			found := false
			for i := range d.Options {
				if &d.Options[i] == d.Winner {
					found = true
				}
			}
			if !found {
				t.Fatal("the winner is not a row of the score table")
			}
			// Only the top score must clear 3-E; a gated pick may be lower.
			if !d.Gated && d.Winner.Score < minScore {
				t.Fatalf("winner %s score %v below the minimum", d.Winner.Domain, d.Winner.Score)
			}
		}
	})
}
