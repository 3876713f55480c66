//go:build race

package state

// raceDetector is true under -race: the byte-for-byte oracle tests, which
// run on one goroutine and whose subject is output rather than
// concurrency, then check a sample of their inputs (ten times slower under
// the detector, the whole set alone took most of CI's budget).
const raceDetector = true
