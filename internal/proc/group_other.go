//go:build !linux

package proc

// hasLiveMember cannot tell zombies from live processes without /proc, so it
// treats the group as alive; stopping then waits out the kill grace.
func hasLiveMember(pgid int) bool { return true }

// GroupStart cannot identify a process without /proc; a group is then
// never stopped by a recoverer.
func GroupStart(pgid int) (uint64, bool) { return 0, false }
