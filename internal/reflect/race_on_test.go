//go:build race

package reflect

// raceDetector is true under -race, where sync.Pool drops items at random
// (fmt's and encoding/json's buffers among them): an allocation count is
// then noise, not a property of the code.
const raceDetector = true
