// Package session holds the rules of an `ooda run` session (SPEC-NOTES
// §8, seeds 002 and 003): the cycle-history ledger lines, oscillation
// quarantine, the findings that remain to be done with their stagnation
// deferral, and the termination judge.
//
// Everything here is pure: it reads and changes a state.Session record
// and values passed in, with `now` as a value, and does no I/O. The
// record is loaded and saved, and the ledger appended, through
// internal/state; processes (the engine's cycle, the completion command,
// the judge command) are run by the caller, which passes their outcomes.
// Per-cycle work depends on the number of targets and findings, never on
// the length of the session: the record keeps what the rules need
// (per-target last result and transition count, findings with their
// counters, the judge's streaks) and its lists are bounded
// (state.MaxDetermineLog, state.MaxResolvedFindings,
// state.MaxSessionFindings, state.MaxSessionTargets), so the ledger is
// never read back.
//
// # A session, in order
//
// Start (once):
//
//	p := session.ParamsFrom(cfg.Session)
//	// new session:
//	id, err := store.NewSessionID(now)      // or --session NAME, checked by state.CheckSessionID
//	snap, _ := store.Load()                 // plus the domain state files
//	rec := session.New(id, now, maxCycles, session.CollectFindings(snap, domainStates)) // maxCycles 0 with --forever
//	// or resume: rec, found, warns, err := store.LoadSession(id); session.Resume(&rec, now, maxCycles)
//	// --unquarantine TARGET: session.Unquarantine(&rec, target)
//	store.SaveSession(rec)
//
// Each cycle:
//
//  1. opts.Quarantined = session.Quarantined(rec), then engine.RunCycle.
//     Only a cycle that was recorded (it selected and ran a domain, or
//     was skipped because only quarantined work remained) goes on to
//     the steps below; a cycle skipped for another reason (too soon,
//     locked) or that failed is not an iteration.
//  2. Read the state after the cycle: goals.json, action_queue.json,
//     skill_gaps.json and the domain state files.
//  3. rd := session.Record(&rec, p, session.CycleOutcome{Cycle, Domain
//     (the executed winner, "" for none), ResultType, Quality, Idle
//     (skipped because only quarantined work remained), IdleTarget
//     (session.IdleTarget(res.Decision)), Goals:
//     session.GoalReadings(goalsBefore, goalsAfter, metricErrs)}, now);
//     then store.AppendCycleHistory(rd.Lines) and print rd.Warnings
//     and each of rd.Quarantined.
//  4. fs := session.CollectFindings(snapAfter, domainStates).
//  5. Condition B's outside parts, when configured: run
//     session.completion_command (a CommandOutcome), and when
//     session.completion is set and a judge is configured, ask
//     session.CompletionRequest(cfg.Session.Completion, rec, fs, goals)
//     and read the answer with session.ParseCompletion.
//  6. v := session.Judge(&rec, p, session.JudgeInput{Cycle, Findings: fs,
//     Goals, Command, Judge}, now); print v.ResultLine().
//  7. If v.Ends(untilDone): session.Finish(&rec, v.StopReason, now). On
//     HALT or a signal: session.Finish(&rec, session.StoppedHalted or
//     session.StoppedSignal, now).
//  8. store.SaveSession(rec) — after every cycle, so a crash loses at
//     most the cycle in flight.
//
// `ooda status` shows the latest session: store.LatestSession(), then
// rec.Iteration, rec.Quarantined, session.Deferred(rec) and
// session.LastJudgment(rec).
//
// A verdict's StopReason is a success only for done_completed and
// done_no_work (Verdict.Success, IsSuccess); stopped_stagnation,
// stopped_no_progress, stopped_max_iterations, halted and signal never
// are, and a session that ended with one has status "stopped".
package session
