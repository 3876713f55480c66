package session

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/state"
)

// gaps are findings of kind gap with the given keys.
func gaps(keys ...string) []Finding {
	var out []Finding
	for _, k := range keys {
		out = append(out, Finding{ID: "gap:" + k, Kind: FindingGap, Summary: "gap " + k})
	}
	return out
}

// judgeRun judges one iteration per findings list and returns the
// verdicts.
func judgeRun(rec *state.Session, p Params, lists ...[]Finding) []Verdict {
	var vs []Verdict
	for _, fs := range lists {
		vs = append(vs, Judge(rec, p, JudgeInput{Cycle: rec.Iteration + 1, Findings: fs}, t0.Add(time.Duration(rec.Iteration)*time.Hour)))
	}
	return vs
}

func wantVerdict(t *testing.T, v Verdict, result, stop string) {
	t.Helper()
	if v.Result != result || v.StopReason != stop {
		t.Fatalf("verdict %s/%q (%s), want %s/%q", v.Result, v.StopReason, v.Reason, result, stop)
	}
}

// Seed 003 step 2: a finding present and unresolved for 3 consecutive
// iterations is deferred, no longer remaining work, and never new again.
func TestSeed003_StagnationDefersAFindingAfterThreeIterations(t *testing.T) {
	rec := New("s", t0, 0, gaps("stuck"))
	p := Params{StagnationWindow: 3, RegressionWindow: 100}
	vs := judgeRun(&rec, p,
		gaps("stuck", "w1"),       // 1: w1 new
		gaps("stuck", "w2"),       // 2: w1 resolved, w2 new
		gaps("stuck", "w3"),       // 3: stuck deferred
		gaps("stuck", "w4"),       // 4: still deferred, not new
		gaps("w5"),                // 5: stuck gone: resolved
		gaps("stuck", "w5", "w6"), // 6: stuck back after resolution: new
	)
	for _, v := range vs {
		wantVerdict(t, v, ResultContinue, "")
	}
	e3, e4, e5, e6 := vs[2].Entry, vs[3].Entry, vs[4].Entry, vs[5].Entry
	if !e3.StagnationDetected || e3.DeferredNow != 1 || e3.DeferredCount != 1 || e3.Remaining != 1 || vs[2].Deferred[0] != "gap:stuck" {
		t.Fatalf("iteration 3: %+v", e3)
	}
	if e4.StagnationDetected || e4.New != 1 || e4.Resolved != 1 || e4.DeferredCount != 1 || e4.Remaining != 1 {
		t.Fatalf("iteration 4 (deferred finding present again is not new): %+v", e4)
	}
	if e5.Resolved != 2 || e5.New != 1 || e5.DeferredCount != 0 {
		t.Fatalf("iteration 5 (the deferred finding resolved): %+v", e5)
	}
	if e6.New != 2 || rec.Findings["gap:stuck"].Status != state.FindingOpen || rec.Findings["gap:stuck"].FirstSeen != 6 {
		t.Fatalf("iteration 6 (back after resolution): %+v, %+v", e6, rec.Findings["gap:stuck"])
	}
	if !strings.Contains(vs[2].Reason, "1 deferred") {
		t.Fatalf("continue reason does not say what was deferred: %s", vs[2].Reason)
	}
}

// Seed 003 step 3: net progress = resolved − new.
func TestSeed003_NetProgressIsResolvedMinusNew(t *testing.T) {
	rec := New("s", t0, 0, gaps("a", "b", "c"))
	vs := judgeRun(&rec, Params{RegressionWindow: 100}, gaps("c", "d"))
	e := vs[0].Entry
	if e.Resolved != 2 || e.New != 1 || e.NetProgress != 1 || rec.LastNetProgress != 1 || rec.NoProgressStreak != 0 {
		t.Fatalf("entry %+v, record net %d streak %d", e, rec.LastNetProgress, rec.NoProgressStreak)
	}
	// The baseline is not new in the first iteration.
	fresh := New("s", t0, 0, gaps("a", "b"))
	if e := judgeRun(&fresh, defaults(), gaps("a", "b"))[0].Entry; e.New != 0 || e.NetProgress != 0 {
		t.Fatalf("baseline counted as new: %+v", e)
	}
}

func TestSeed003_ConditionB_AllGoalsMet(t *testing.T) {
	rec := New("s", t0, 0, gaps("x"))
	goals := state.Goals{Goals: []state.Goal{{ID: "a", Status: "active", Progress: fp(1)}, {ID: "b", Status: "completed", Progress: fp(1)}, {ID: "c", Status: "proposed"}}}
	v := Judge(&rec, defaults(), JudgeInput{Cycle: 1, Findings: gaps("x"), Goals: goals}, t0)
	wantVerdict(t, v, ResultDone, DoneCompleted)
	if !v.Success() || !strings.Contains(v.Reason, "2 goal(s)") {
		t.Fatalf("verdict %+v", v)
	}
	// One goal short, or no goal at all: not met.
	goals.Goals[0].Progress = fp(0.99)
	if met, _ := GoalsMet(rec, goals); met {
		t.Fatal("a goal at 0.99 is met")
	}
	if met, _ := GoalsMet(rec, state.Goals{}); met {
		t.Fatal("no goal at all is met")
	}
}

func TestSeed003_ConditionB_CompletionCommand(t *testing.T) {
	for _, c := range []struct {
		out  CommandOutcome
		done bool
	}{{CommandOutcome{ExitCode: 0}, true}, {CommandOutcome{ExitCode: 1}, false}, {CommandOutcome{Err: "timed out after 1m0s"}, false}} {
		rec := New("s", t0, 0, gaps("x"))
		out := c.out
		v := Judge(&rec, Params{RegressionWindow: 100}, JudgeInput{Findings: gaps("x"), Command: &out}, t0)
		if (v.StopReason == DoneCompleted) != c.done {
			t.Errorf("command %+v: verdict %s %q", c.out, v.Result, v.StopReason)
		}
	}
}

func TestSeed003_ConditionB_JudgeDoneAndUncertain(t *testing.T) {
	ask := func(answer string, source string) JudgeAnswer {
		return ParseCompletion(judge.Response{Answer: json.RawMessage(answer), Source: source})
	}
	for _, c := range []struct {
		answer, source string
		done           bool
	}{
		{`{"done": true, "reason": "coverage is 92%"}`, judge.SourceJudge, true},
		{`{"done": true}`, judge.SourceJudge, true},
		{`{"done": false, "reason": "2 endpoints untested"}`, judge.SourceJudge, false},
		{`{"done": "true", "reason": "yes"}`, judge.SourceJudge, false},
		{`{"done": true, "uncertain": true}`, judge.SourceJudge, false},
		{`"done"`, judge.SourceJudge, false},
		{`{"done": true, "reason": "x"}`, judge.SourceDefault, false},
	} {
		a := ask(c.answer, c.source)
		rec := New("s", t0, 0, gaps("x"))
		v := Judge(&rec, Params{RegressionWindow: 100}, JudgeInput{Findings: gaps("x"), Judge: &a}, t0)
		if (v.StopReason == DoneCompleted) != c.done || a.Done != c.done {
			t.Errorf("answer %s from %s: %+v, verdict %q", c.answer, c.source, a, v.StopReason)
		}
		if c.done && !strings.Contains(v.Reason, "judge") {
			t.Errorf("reason does not say the judge decided: %s", v.Reason)
		}
	}
	req := CompletionRequest("coverage above 90%", New("s", t0, 0, nil), gaps("x"), state.Goals{})
	var def map[string]any
	b, _ := json.Marshal(req.Default)
	if req.Kind != judge.KindCompletion || json.Unmarshal(b, &def) != nil || def["done"] != false || req.Facts["condition"] != "coverage above 90%" {
		t.Fatalf("request %+v", req)
	}
}

// D: the last remaining work was deferred in this iteration: a stop, not
// a success.
func TestSeed003_ConditionD_AllRemainingDeferredIsStagnation(t *testing.T) {
	rec := New("s", t0, 0, gaps("a", "b"))
	vs := judgeRun(&rec, defaults(), gaps("a", "b"), gaps("a", "b"), gaps("a", "b"))
	wantVerdict(t, vs[0], ResultContinue, "")
	wantVerdict(t, vs[1], ResultContinue, "")
	// Iteration 3: E holds too (net 0 three times); D comes first.
	wantVerdict(t, vs[2], ResultDone, StoppedStagnation)
	if vs[2].Success() || !vs[2].Entry.StagnationDetected || vs[2].Entry.DeferredCount != 2 {
		t.Fatalf("stagnation verdict %+v", vs[2])
	}
	if d := Deferred(rec); len(d) != 2 || d[0] != "gap:a" {
		t.Fatalf("Deferred = %v", d)
	}
	if e, ok := LastJudgment(rec); !ok || e.StopReason != StoppedStagnation {
		t.Fatalf("LastJudgment = %+v, %v", e, ok)
	}
	Finish(&rec, vs[2].StopReason, t0)
	if rec.Status != state.SessionStopped || rec.StopReason != StoppedStagnation {
		t.Fatalf("finished stagnation: status %s", rec.Status)
	}
}

// C: nothing remains, nothing deferred now, and the last iteration did
// not regress.
func TestSeed003_ConditionC_NoRemainingWork(t *testing.T) {
	rec := New("s", t0, 0, nil)
	wantVerdict(t, judgeRun(&rec, defaults(), nil)[0], ResultDone, DoneNoWork)
	Finish(&rec, DoneNoWork, t0)
	if rec.Status != state.SessionDone {
		t.Fatalf("status %s", rec.Status)
	}
	// After a regression (net −2), an empty list is not yet done.
	rec = New("s", t0, 0, nil)
	vs := judgeRun(&rec, defaults(), gaps("a", "b"), nil, nil)
	wantVerdict(t, vs[0], ResultContinue, "")
	wantVerdict(t, vs[1], ResultContinue, "")
	wantVerdict(t, vs[2], ResultDone, DoneNoWork)
	// Deferred findings still present are not remaining work.
	rec = New("s", t0, 0, gaps("a"))
	vs = judgeRun(&rec, Params{RegressionWindow: 100}, gaps("a", "b"), gaps("a"), gaps("a"), gaps("a"))
	wantVerdict(t, vs[2], ResultDone, StoppedStagnation)
	wantVerdict(t, vs[3], ResultDone, DoneNoWork)
	if !strings.Contains(vs[3].Reason, "1 deferred") {
		t.Fatalf("reason does not mention the deferred finding: %s", vs[3].Reason)
	}
}

// E: net progress ≤ 0 for 3 consecutive iterations while work remains.
func TestSeed003_ConditionE_NoNetProgress(t *testing.T) {
	rec := New("s", t0, 0, gaps("w0"))
	vs := judgeRun(&rec, defaults(), gaps("w1"), gaps("w2"), gaps("w3"))
	wantVerdict(t, vs[0], ResultContinue, "")
	wantVerdict(t, vs[1], ResultContinue, "")
	wantVerdict(t, vs[2], ResultDone, StoppedNoProgress)
	if vs[2].Success() || rec.NoProgressStreak != 3 {
		t.Fatalf("no-progress verdict %+v, streak %d", vs[2], rec.NoProgressStreak)
	}
	// A positive iteration resets the streak.
	rec = New("s", t0, 0, gaps("w0", "x"))
	vs = judgeRun(&rec, defaults(), gaps("w1", "x"), gaps("w2"), gaps("w3", "y"), gaps("w4", "y"))
	for i, v := range vs {
		if v.StopReason == StoppedNoProgress {
			t.Fatalf("iteration %d stopped for no progress after a positive one: %+v", i+1, v.Entry)
		}
	}
}

// A: the iteration limit.
func TestSeed003_ConditionA_IterationLimit(t *testing.T) {
	rec := New("s", t0, 2, gaps("w0"))
	vs := judgeRun(&rec, defaults(), gaps("w1"), gaps("w2"))
	wantVerdict(t, vs[0], ResultContinue, "")
	wantVerdict(t, vs[1], ResultDone, StoppedMaxIterations)
	if vs[1].Success() || !vs[1].LimitReached || !vs[1].Ends(false) {
		t.Fatalf("limit verdict %+v", vs[1])
	}
	// No limit (--forever): never A.
	rec = New("s", t0, 0, gaps("w0"))
	for _, v := range judgeRun(&rec, Params{RegressionWindow: 1000}, gaps("w1"), gaps("w2"), gaps("w3")) {
		wantVerdict(t, v, ResultContinue, "")
	}
}

// The order: a success is recognised before a limit (B before A), B
// before D, D before E.
func TestSeed003_ConditionOrder(t *testing.T) {
	goals := state.Goals{Goals: []state.Goal{{ID: "g", Status: "active", Progress: fp(1)}}}
	rec := New("s", t0, 1, gaps("w0"))
	v := Judge(&rec, defaults(), JudgeInput{Findings: gaps("w1"), Goals: goals}, t0)
	wantVerdict(t, v, ResultDone, DoneCompleted)
	if !v.LimitReached || !v.Ends(false) || !v.Success() {
		t.Fatalf("B at the limit: %+v", v)
	}
	rec = New("s", t0, 0, gaps("a"))
	judgeRun(&rec, defaults(), gaps("a"), gaps("a"))
	v = Judge(&rec, defaults(), JudgeInput{Findings: gaps("a"), Goals: goals}, t0)
	wantVerdict(t, v, ResultDone, DoneCompleted)
}

func TestSeed003_DetermineLogAndResultLines(t *testing.T) {
	rec := New("s", t0, 0, gaps("a", "b"))
	vs := judgeRun(&rec, defaults(), gaps("b", "c"), nil)
	if len(rec.DetermineLog) != 2 {
		t.Fatalf("determine_log: %d entries", len(rec.DetermineLog))
	}
	e := rec.DetermineLog[0]
	if e.Iteration != 1 || e.Cycle != 1 || e.Result != "continue" || e.NetProgress != 0 || e.Resolved != 1 || e.New != 1 || e.Reason == "" || e.Timestamp == "" {
		t.Fatalf("entry %+v", e)
	}
	if got := vs[0].ResultLine(); got != "RESULT: continue (net progress +0 (1 resolved, 1 new); 2 finding(s) remain, 0 deferred)" {
		t.Fatalf("continue line: %s", got)
	}
	if got := vs[1].ResultLine(); got != "RESULT: done (done_no_work: no remaining actionable work after 2 iteration(s))" {
		t.Fatalf("done line: %s", got)
	}
	// Without --until-done a done verdict is recorded, not obeyed.
	if vs[1].Ends(false) || !vs[1].Ends(true) || vs[0].Ends(true) {
		t.Fatal("Ends")
	}
}

// A 500-iteration session with churning findings keeps
// its record bounded: the file after 500 iterations is no larger than
// after 250 (give or take the digits of bigger numbers).
func TestSession500IterationsKeepsTheRecordBounded(t *testing.T) {
	store := state.New(t.TempDir())
	rec := New("long", t0, 0, nil)
	p := Params{RegressionWindow: 1 << 20, StagnationWindow: 3}
	var size250 int64
	for i := 1; i <= 500; i++ {
		now := t0.Add(time.Duration(i) * time.Hour)
		types := []string{"action_extracted", "error", "observe"}
		r := Record(&rec, p, CycleOutcome{Cycle: i, Domain: fmt.Sprintf("d%d", i%20), ResultType: types[i%3],
			Goals: []GoalReading{{ID: "g", Progress: fp(float64(i%7) / 7)}}}, now)
		if err := store.AppendCycleHistory(r.Lines); err != nil {
			t.Fatal(err)
		}
		var fs []Finding
		for k := range 30 {
			fs = append(fs, Finding{ID: fmt.Sprintf("gap:%d", (i*7+k)%5000), Kind: FindingGap, Summary: "s"})
		}
		fs = append(fs, gaps("forever")...)
		Judge(&rec, p, JudgeInput{Cycle: i, Findings: fs}, now)
		if i%50 == 0 {
			if err := store.SaveSession(rec); err != nil {
				t.Fatal(err)
			}
		}
		if i == 250 {
			size250 = fileSize(t, store.SessionPath("long"))
		}
	}
	size500 := fileSize(t, store.SessionPath("long"))
	if size500 > size250*11/10 {
		t.Fatalf("record grew from %d bytes at 250 iterations to %d at 500", size250, size500)
	}
	open, resolved := 0, 0
	for _, f := range rec.Findings {
		if f.Status == state.FindingResolved {
			resolved++
		} else {
			open++
		}
	}
	if len(rec.DetermineLog) != state.MaxDetermineLog || resolved > state.MaxResolvedFindings || open > 31 || len(rec.Targets) > state.MaxSessionTargets {
		t.Fatalf("record: %d log entries, %d resolved, %d open, %d targets", len(rec.DetermineLog), resolved, open, len(rec.Targets))
	}
	if rec.Findings["gap:forever"].Status != state.FindingDeferred || rec.Iteration != 500 {
		t.Fatalf("forever finding %+v, iteration %d", rec.Findings["gap:forever"], rec.Iteration)
	}
	back, _, warns, err := store.LoadSession("long")
	if err != nil || len(warns) != 0 || back.Iteration != 500 {
		t.Fatalf("reload: iteration %d, warns %v, err %v", back.Iteration, warns, err)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A goal not yet met is work the session has left, though no finding
// names it: with no finding left, an unmet goal keeps C (done_no_work) and
// D from declaring the session over; goal progress counts in net
// progress, so a session that moves its goal each iteration goes on, one
// whose goal is stuck stops with no progress (never a success), and one
// that reaches it completes.
func TestSeed003_UnmetGoalsAreWorkAndTheirProgressIsProgress(t *testing.T) {
	goal := func(p float64) state.Goals {
		return state.Goals{Goals: []state.Goal{{ID: "g", Status: "active", Progress: &p}}}
	}
	rec := New("s", t0, 0, nil)
	p := defaults()
	step := func(progress float64, improved, regressed int) Verdict {
		return Judge(&rec, p, JudgeInput{Cycle: rec.Iteration + 1, Goals: goal(progress), GoalsImproved: improved, GoalsRegressed: regressed}, t0)
	}
	// Moving toward the goal, nothing else to do: continue each time.
	for i, pr := range []float64{0.2, 0.4, 0.6, 0.8} {
		v := step(pr, 1, 0)
		wantVerdict(t, v, ResultContinue, "")
		if v.Entry.NetProgress != 1 || !strings.Contains(v.Reason, "1 goal(s) not met") {
			t.Fatalf("iteration %d: %+v", i+1, v)
		}
	}
	// Stuck below it: no progress for 3 iterations stops, not a success.
	var v Verdict
	for range 3 {
		v = step(0.8, 0, 0)
	}
	wantVerdict(t, v, ResultDone, StoppedNoProgress)
	if v.Success() {
		t.Fatal("a stuck goal was reported as success")
	}
	// Reaching it completes the session.
	rec = New("s", t0, 0, nil)
	wantVerdict(t, step(0.5, 1, 0), ResultContinue, "")
	wantVerdict(t, step(1.0, 1, 0), ResultDone, DoneCompleted)
	// A quarantined goal is not work left: with nothing else, no work.
	rec = New("s", t0, 0, nil)
	rec.Quarantined = []string{"g"}
	wantVerdict(t, step(0.3, 0, 0), ResultDone, DoneNoWork)
}

// GoalMoves counts a cycle's goal lines by their result, domains aside.
func TestGoalMovesCountsGoalLinesOnly(t *testing.T) {
	lines := []state.LedgerLine{
		{Target: "api", Kind: state.KindDomain, Result: state.ResultImproved},
		{Target: "g1", Kind: state.KindGoal, Result: state.ResultImproved},
		{Target: "g2", Kind: state.KindGoal, Result: state.ResultFail},
		{Target: "g3", Kind: state.KindGoal, Result: state.ResultImproved},
		{Target: "g4", Kind: state.KindGoal, Result: state.ResultUnchanged},
	}
	if up, down := GoalMoves(lines); up != 2 || down != 1 {
		t.Fatalf("GoalMoves = %d, %d", up, down)
	}
}
