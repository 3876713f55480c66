//go:build !race

package state

// raceDetector is false without -race (see race_on_test.go).
const raceDetector = false
