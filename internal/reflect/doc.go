// Package reflect is Step 5 of the cycle and the memory half of Step 6:
// skill gaps, memos, action extraction, the adaptive lens, the
// self-critique, and the memory cascade (weekly episodes, principles).
//
// Every function here is pure: it takes the cycle's facts and the state it
// changes as values and returns the new state with what it did, so the
// rules are tested without a filesystem and the engine persists the result.
package reflect
