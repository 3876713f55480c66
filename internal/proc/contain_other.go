//go:build !linux

package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// containment is the process group alone: without /proc or cgroups a
// process that leaves the group cannot be found, so it is not stopped.
type containment struct{ pgid int }

func newContainment(bool, bool) *containment { return &containment{} }

func (c *containment) start(build func(*syscall.SysProcAttr) *exec.Cmd) (*exec.Cmd, error) {
	cmd, err := retryTextBusy(func() (*exec.Cmd, error) {
		cmd := build(&syscall.SysProcAttr{Setpgid: true})
		return cmd, cmd.Start()
	})
	if err != nil {
		return nil, err
	}
	c.pgid = cmd.Process.Pid
	return cmd, nil
}

func (c *containment) trackEvery() time.Duration { return 0 }

func (c *containment) track() {}

func (c *containment) signal(sig syscall.Signal) { signalGroup(c.pgid, sig) }

func (c *containment) kill() { signalGroup(c.pgid, syscall.SIGKILL) }

func (c *containment) alive() bool { return groupAlive(c.pgid) }

// finish finds no survivors: what left the group is out of sight.
func (c *containment) finish(stopped bool, grace time.Duration) []int { return nil }

// prepareContainment has nothing to prepare without cgroups.
func prepareContainment() {}
