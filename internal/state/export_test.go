package state

import (
	"os/exec"
	"testing"
	"time"
)

// helperCycle runs one real cycle of the project at root at now. The
// engine imports this package, so only the external tests can set it.
var helperCycle func(root string, now time.Time) error

// SetHelperCycle sets what the "cycle-killed-in-batch" helper runs.
func SetHelperCycle(f func(root string, now time.Time) error) { helperCycle = f }

// HelperCommand is helperCommand for the external tests.
func HelperCommand(t *testing.T, role string, extraEnv ...string) *exec.Cmd {
	return helperCommand(t, role, extraEnv...)
}
