// Package artifact is the artifact axis: it measures the thing the loop
// builds, not the loop's own activity, and says when that measurement has
// stopped improving.
//
// A loop that grades only its own process (a PR was opened, a test passed)
// can score well while the product stays broken. A domain that declares a
// quality_rubric therefore has its artifact graded on every cycle that
// changed it (5-G): each rubric dimension is captured by its method, scored
// deterministically against its numeric targets where it has them and by
// the judge otherwise, and aggregated into an artifact score, a weakest
// dimension and a leap target. A capture that fails is recorded as null
// with a skill gap; it is never replaced by a made-up 0 or 1, and it is
// never counted in the aggregate.
//
// The rubric is written by a human and may not be changed by the loop: its
// hash is recorded on first use and a later mismatch is a HALT (Integrity).
// A gameplay_metrics harness is held to the same rule: it must sit under a
// protected path and match the hash the rubric declares for it.
//
// Over the history of scored cycles, Plan (2-G) detects a plateau and
// chooses the cycle mode: an ordinary feature cycle, a leap that overhauls
// the leap target, one from-scratch rewrite when leaps on that dimension
// keep failing, and finally a HALT for a human. Gate (3-K) defers a leap
// that would breach the cost or per-day caps, VerifyLeap (4-C2) decides
// whether a leap is kept or reverted, and CapGoal (2-C) keeps a goal tied
// to a rubric from being reported above what the artifact supports.
//
// Everything here works on plain values: the engine runs the processes
// (through the Capture interface), reads and writes the state files, and
// maps outcome entries to Entry. Every rule is therefore testable without
// running a cycle.
package artifact
