package record

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// appendOutcomeOracle is AppendOutcome as it was: the kept entries
// appended to a new list, then the newest size copied to another.
func appendOutcomeOracle(os state.Outcomes, o state.Outcome, size int) state.Outcomes {
	if size <= 0 {
		size = 200
	}
	kept := make([]state.Outcome, 0, len(os.Entries)+1)
	for _, e := range os.Entries {
		if e.CycleID != o.CycleID {
			kept = append(kept, e)
		}
	}
	os.Entries = append(kept, o)
	if len(os.Entries) > size {
		os.Entries = append([]state.Outcome(nil), os.Entries[len(os.Entries)-size:]...)
	}
	return os
}

// appendDecisionOracle is AppendDecision as it was.
func appendDecisionOracle(log []state.DecisionEntry, e state.DecisionEntry, size int) []state.DecisionEntry {
	if size <= 0 {
		size = 20
	}
	log = append(log, e)
	if len(log) > size {
		log = append([]state.DecisionEntry(nil), log[len(log)-size:]...)
	}
	return log
}

// Both lists come out as the versions that copied them twice made them,
// for lists shorter than, as long as and longer than their cap, with the
// cycle recorded already among them (a crashed cycle run again), at every
// cap including none; and the new outcome list shares nothing with the
// one given, which is left as it was.
func TestAppendMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 3000; i++ {
		size := []int{0, -1, 1, 2, 5, 20, 200}[rng.Intn(7)]
		n := rng.Intn(230)
		var os state.Outcomes
		var log []state.DecisionEntry
		for c := 0; c < n; c++ {
			id := c + 1
			if rng.Intn(20) == 0 {
				id = rng.Intn(n + 2)
			}
			os.Entries = append(os.Entries, state.Outcome{CycleID: id, Domain: "d"})
			log = append(log, state.DecisionEntry{Cycle: id})
		}
		if rng.Intn(4) == 0 {
			// Room left past the end, which an append could write into.
			os.Entries = append(make([]state.Outcome, 0, len(os.Entries)+8), os.Entries...)
			log = append(make([]state.DecisionEntry, 0, len(log)+8), log...)
		}
		o := state.Outcome{CycleID: n + 1, Domain: "new"}
		if n > 0 && rng.Intn(3) == 0 {
			o.CycleID = os.Entries[rng.Intn(n)].CycleID
		}
		before := append([]state.Outcome(nil), os.Entries...)
		got, want := AppendOutcome(os, o, size), appendOutcomeOracle(os, o, size)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("AppendOutcome(%d entries, cycle %d, %d) = %d entries, the oracle %d", n, o.CycleID, size, len(got.Entries), len(want.Entries))
		}
		if len(os.Entries) != len(before) || len(before) > 0 && !reflect.DeepEqual(os.Entries, before) {
			t.Fatal("AppendOutcome changed the list it was given")
		}
		if len(got.Entries) > 0 && cap(os.Entries) > 0 && &got.Entries[:1][0] == &os.Entries[:1][0] {
			t.Fatal("AppendOutcome returned the list it was given")
		}
		e := state.DecisionEntry{Cycle: n + 1, Action: "execute"}
		gotLog := AppendDecision(append([]state.DecisionEntry(nil), log...), e, size)
		wantLog := appendDecisionOracle(append([]state.DecisionEntry(nil), log...), e, size)
		if !reflect.DeepEqual(gotLog, wantLog) {
			t.Fatalf("AppendDecision(%d entries, %d) = %d entries, the oracle %d", n, size, len(gotLog), len(wantLog))
		}
	}
}

// A full outcome buffer and decision log take one list each, not two.
func TestAppendAllocatesOnce(t *testing.T) {
	var os state.Outcomes
	var log []state.DecisionEntry
	for c := 1; c <= 200; c++ {
		os.Entries = append(os.Entries, state.Outcome{CycleID: c})
	}
	for c := 1; c <= 20; c++ {
		log = append(log, state.DecisionEntry{Cycle: c})
	}
	if a := testing.AllocsPerRun(20, func() { _ = AppendOutcome(os, state.Outcome{CycleID: 201}, 200) }); a != 1 {
		t.Fatalf("AppendOutcome: %v allocations", a)
	}
	if a := testing.AllocsPerRun(20, func() { _ = AppendDecision(log, state.DecisionEntry{Cycle: 21}, 20) }); a != 1 {
		t.Fatalf("AppendDecision: %v allocations", a)
	}
}

// BenchmarkAppendFull is a cycle of a project whose outcome buffer and
// decision log are full: the newest entry in, the oldest out.
func BenchmarkAppendFull(b *testing.B) {
	var os state.Outcomes
	var log []state.DecisionEntry
	for c := 1; c <= 200; c++ {
		os.Entries = append(os.Entries, state.Outcome{CycleID: c, Domain: "d0", ResultType: "futile"})
	}
	for c := 181; c <= 200; c++ {
		log = append(log, state.DecisionEntry{Cycle: c, Action: "execute", SelectedDomain: "d0"})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = AppendOutcome(os, state.Outcome{CycleID: 201}, 200)
		_ = AppendDecision(log, state.DecisionEntry{Cycle: 201}, 20)
	}
}
