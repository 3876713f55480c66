//go:build !race

package reflect

// raceDetector is true under -race (race_on_test.go).
const raceDetector = false
