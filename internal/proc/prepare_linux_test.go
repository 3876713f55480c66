package proc

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestPrepareThenContainedRun starts the warm-up and a contained run at
// the same moment, as the cycle does: the run must still get a cgroup of
// its own, whichever of the two finds the cgroup hierarchy first.
func TestPrepareThenContainedRun(t *testing.T) {
	requireRunCgroups(t)
	for i := range 3 {
		Prepare()
		dir := t.TempDir()
		argv0 := script(t, dir, fmt.Sprintf("cat /proc/self/cgroup > %s/cgroup\n", dir))
		if r := (Exec{}).Run(context.Background(), Spec{Argv: []string{argv0}, Env: testEnv, Timeout: time.Minute}); !r.OK() {
			t.Fatalf("run %d after Prepare: %+v", i, r)
		}
		runCgroupDir(t, dir) // fails unless it ran in a run cgroup of this process
	}
}
