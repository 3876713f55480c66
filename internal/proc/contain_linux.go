package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A run is contained twice on Linux, because a process group is not enough:
// a descendant that calls setsid or setpgid leaves the group, and one whose
// parent exits is reparented, so neither kill(-pgid) nor the ppid chain
// finds it.
//
//   - A cgroup v2 directory of its own, when this process may create one
//     below its own cgroup (root, or a delegated cgroup such as a systemd
//     unit with Delegate=yes). The child is cloned straight into it
//     (CLONE_INTO_CGROUP), so every descendant is a member from birth,
//     whatever it does to its session or group, and the cgroup can be
//     killed as a whole (cgroup.kill).
//   - Otherwise, this process becomes a child subreaper: a descendant whose
//     parent exits is reparented to it instead of to init, so an orphan
//     stays findable in /proc. Descendants are recognised by ancestry,
//     session and group, and by being such an orphan (see tree.members).
//
// Either way the tree is also scanned when the run is stopped, so a process
// that slipped out of the cgroup but not out of the tree is still found.

// trackPoll is how often a run without a cgroup records its descendants, so
// that one whose ancestry is later broken can still be recognised.
const trackPoll = time.Second

// minKillWait is the shortest wait for SIGKILL to take effect before a
// process is reported as a survivor: on a loaded machine a killed process
// may not be scheduled to exit at once, and a short kill grace should not
// turn that into a false report.
const minKillWait = time.Second

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// subreaper is set, once per process, by the first run without a cgroup.
// It is process-wide, so what is reaped is limited to processes identified
// as members of the run that reaps them.
var subreaper struct {
	once sync.Once
	on   atomic.Bool
}

func enableSubreaper() {
	subreaper.once.Do(func() {
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		subreaper.on.Store(errno == 0)
	})
}

// runs are the runs in progress. An orphan reparented to this process says
// nothing about which run it came from; it is attributed only to a run that
// has had no other run beside it since it started.
var runs = struct {
	sync.Mutex
	active map[*runState]struct{}
}{active: map[*runState]struct{}{}}

type runState struct{ overlapped bool }

func registerRun() *runState {
	r := &runState{}
	runs.Lock()
	defer runs.Unlock()
	if len(runs.active) > 0 {
		r.overlapped = true
		for o := range runs.active {
			o.overlapped = true
		}
	}
	runs.active[r] = struct{}{}
	return r
}

// exclusive reports whether no other run has been in progress at any time
// since r started.
func (r *runState) exclusive() bool {
	runs.Lock()
	defer runs.Unlock()
	return !r.overlapped
}

func (r *runState) done() {
	runs.Lock()
	defer runs.Unlock()
	delete(runs.active, r)
}

// containment is everything one run needs to find and stop the processes
// it started.
type containment struct {
	run  *runState
	cg   *cgroup // nil when the run has no cgroup
	tree tree
	pgid int
}

func newContainment(useCgroup, subreap bool) *containment {
	c := &containment{run: registerRun(), tree: tree{self: os.Getpid(), known: map[int]uint64{}}}
	if useCgroup {
		c.cg = newCgroup()
	}
	if c.cg == nil && subreap {
		enableSubreaper()
	}
	return c
}

// start builds and starts the command, in the run's cgroup if it has one.
// If that start fails, it is tried once more without the cgroup: clone3
// may be missing, or moving a process into the cgroup may be refused even
// though creating it was not. Either way nothing has run: an exec failure
// happens before the program runs.
func (c *containment) start(build func(*syscall.SysProcAttr) *exec.Cmd) (*exec.Cmd, error) {
	cmd, err := retryTextBusy(func() (*exec.Cmd, error) { return c.startOnce(build) })
	if err != nil && c.cg != nil && !errors.Is(err, syscall.ETXTBSY) {
		c.cg.close()
		c.cg.remove()
		c.cg = nil
		var retryErr error
		cmd, retryErr = retryTextBusy(func() (*exec.Cmd, error) { return c.startOnce(build) })
		if retryErr == nil {
			// The cgroup was the trouble. The child has only just
			// started: it has had no time to leave orphans behind.
			enableSubreaper()
			disableCgroups(fmt.Errorf("starting a process in a cgroup: %w", err))
		}
		err = retryErr
	}
	if c.cg != nil {
		c.cg.close()
	}
	return cmd, err
}

func (c *containment) startOnce(build func(*syscall.SysProcAttr) *exec.Cmd) (*exec.Cmd, error) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if c.cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, c.cg.fd
	}
	cmd := build(attr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	c.pgid, c.tree.root = pid, pid
	// Nothing waits for the child yet, so even if it has exited it is
	// still there to be read.
	if p, ok := readStat(pid); ok {
		c.tree.rootStart = p.start
	}
	return cmd, nil
}

// trackEvery is the interval at which track is to be called; 0 for none.
// A cgroup records members by itself.
func (c *containment) trackEvery() time.Duration {
	if c.cg != nil {
		return 0
	}
	return trackPoll
}

// track records the run's current descendants.
func (c *containment) track() { c.scan() }

// scan returns the run's members found in /proc, live or zombie, and
// records them; false when /proc cannot be read.
func (c *containment) scan() (map[int]pinfo, bool) {
	procs, err := scanProcs()
	if err != nil {
		return nil, false
	}
	return c.tree.members(procs, subreaper.on.Load() && c.run.exclusive()), true
}

// signal sends sig to the group, to every process in the cgroup and to
// every member found in /proc. Errors mean the process is already gone.
func (c *containment) signal(sig syscall.Signal) {
	// Scanned first: a process the signal kills reparents its children,
	// and those found only as its children must be known before that.
	m, ok := c.scan()
	signalGroup(c.pgid, sig)
	if c.cg != nil {
		c.cg.signal(sig)
	}
	if ok {
		for pid, p := range m {
			if p.live() {
				_ = syscall.Kill(pid, sig)
			}
		}
	}
}

// kill sends SIGKILL to everything signal reaches.
func (c *containment) kill() {
	if c.cg != nil {
		c.cg.kill()
	}
	c.signal(syscall.SIGKILL)
}

// alive reports whether any member still runs.
func (c *containment) alive() bool {
	if c.cg != nil && c.cg.populated() {
		return true
	}
	m, ok := c.scan()
	if !ok {
		return groupAlive(c.pgid)
	}
	for _, p := range m {
		if p.live() {
			return true
		}
	}
	return false
}

// live returns the members that still run, in pid order.
func (c *containment) live() []int {
	var pids []int
	if c.cg != nil {
		pids = c.cg.procs()
	}
	if m, ok := c.scan(); ok {
		for pid, p := range m {
			if p.live() {
				pids = append(pids, pid)
			}
		}
	}
	slices.Sort(pids)
	return slices.Compact(pids)
}

// finish ends the run once its direct child has been waited for. After a
// stop it makes sure that no member still runs, killing again what is
// left, for at most grace (at least minKillWait); it returns the members
// that outlived that. After
// a normal exit, processes the run left behind are left alone: they are
// only moved out of the run's cgroup, so that it can be removed.
func (c *containment) finish(stopped bool, grace time.Duration) []int {
	defer c.run.done()
	var survivors []int
	if stopped && c.pgid != 0 {
		deadline := time.Now().Add(max(grace, minKillWait))
		for {
			live := c.live()
			if len(live) == 0 {
				break
			}
			if !time.Now().Before(deadline) {
				survivors = live
				break
			}
			c.kill()
			time.Sleep(groupPoll)
		}
		c.reap()
	}
	if c.cg != nil {
		// Most runs leave nothing behind: one rmdir, which the kernel
		// refuses while a process or a cgroup is left inside, ends them
		// without reading the cgroup first.
		if stopped || syscall.Rmdir(c.cg.dir) != nil {
			if !stopped {
				c.cg.evict()
			}
			c.cg.remove()
		}
	}
	return survivors
}

// reap collects the zombies of members that were reparented to this
// process. Only those: a process-wide reaper must not take the exit status
// of a child something else waits for.
func (c *containment) reap() {
	if !subreaper.on.Load() {
		return
	}
	m, ok := c.scan()
	if !ok {
		return
	}
	for pid, p := range m {
		if p.ppid == c.tree.self && !p.live() && pid != c.pgid {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// tree recognises a run's descendants in /proc.
type tree struct {
	root      int    // the direct child
	rootStart uint64 // its start time; 0 when unknown
	self      int    // this process
	// known are the members seen so far, pid to start time: they stay
	// members after their parent exits and they are reparented.
	known map[int]uint64
}

// members returns the processes in procs that belong to the run, and adds
// them to t.known. A process that started before the run's direct child
// never does. Otherwise a process belongs to the run if it is
//
//   - the direct child, or a member seen before (same pid and start time);
//   - a child of a member;
//   - in a session or process group whose id is a member's pid: setsid and
//     setpgid make the caller's pid the new id, so whatever a member starts
//     in a session or group of its own belongs to the run, even once the
//     member that created it has exited;
//   - when orphans is set, a child of this process: with this process a
//     subreaper, an orphan is reparented to it. The caller sets orphans only
//     while this run is the only one in progress, and every process this
//     program starts goes through Exec, so such a child can only be an
//     orphan from this run.
func (t *tree) members(procs []pinfo, orphans bool) map[int]pinfo {
	m := map[int]pinfo{}
	if t.root == 0 {
		return m
	}
	// A session or group id marks a process as the run's only if the pid
	// it names is, or was, a member. A known pid now used by a different
	// process has been freed and reused, and with it the id.
	ids := map[int]bool{t.root: true}
	for pid := range t.known {
		ids[pid] = true
	}
	for _, p := range procs {
		if s, ok := t.known[p.pid]; ok && s != p.start || p.pid == t.root && p.start != t.rootStart {
			delete(ids, p.pid)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, p := range procs {
			if _, ok := m[p.pid]; ok || p.pid == t.self || p.start < t.rootStart {
				continue
			}
			s, seen := t.known[p.pid]
			_, childOfMember := m[p.ppid]
			if p.pid == t.root && p.start == t.rootStart ||
				seen && s == p.start ||
				childOfMember ||
				ids[p.sid] || ids[p.pgrp] ||
				orphans && t.rootStart > 0 && p.ppid == t.self {
				m[p.pid] = p
				ids[p.pid] = true
				changed = true
			}
		}
	}
	for pid, p := range m {
		t.known[pid] = p.start
	}
	return m
}

// cgroups holds what this process knows about creating run cgroups.
var cgroups struct {
	once sync.Once
	seq  atomic.Uint64
	mu   sync.Mutex
	base string // this process's own cgroup directory
	off  error  // why run cgroups are not used; nil while they are
}

func cgroupBase() (string, error) {
	cgroups.once.Do(func() {
		base, err := ownCgroupDir()
		if err == nil {
			removeStaleCgroups(base)
		}
		cgroups.mu.Lock()
		cgroups.base, cgroups.off = base, err
		cgroups.mu.Unlock()
	})
	cgroups.mu.Lock()
	defer cgroups.mu.Unlock()
	return cgroups.base, cgroups.off
}

// disableCgroups stops later runs from trying to use a cgroup.
func disableCgroups(err error) {
	cgroups.mu.Lock()
	defer cgroups.mu.Unlock()
	if cgroups.off == nil {
		cgroups.off = err
	}
}

// ownCgroupDir finds the directory of this process's cgroup in a mounted
// cgroup v2 hierarchy: the "0::" line of /proc/self/cgroup, under a cgroup2
// mount whose root contains it (the mount may be /sys/fs/cgroup or, on a
// hybrid system, /sys/fs/cgroup/unified).
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	own, found := "", false
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			own, found = rest, true
			break
		}
	}
	if !found || !strings.HasPrefix(own, "/") {
		return "", errors.New("/proc/self/cgroup: this process is in no cgroup v2 hierarchy")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 1 || qf[0] != "cgroup2" {
			continue
		}
		rel, ok := cgroupWithin(own, unescapeMount(pf[3]))
		if !ok {
			continue
		}
		dir := filepath.Join(unescapeMount(pf[4]), rel)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("/proc/self/mountinfo: no cgroup2 mount shows this process's cgroup %s", own)
}

// cgroupWithin returns own relative to root, a mount's root in the
// hierarchy, when own is at or below it.
func cgroupWithin(own, root string) (string, bool) {
	rel, ok := "", false
	switch {
	case root == "/":
		rel, ok = strings.TrimPrefix(own, "/"), true
	case own == root:
		rel, ok = "", true
	default:
		rel, ok = strings.CutPrefix(own, root+"/")
	}
	if !ok || slices.Contains(strings.Split(rel, "/"), "..") {
		return "", false
	}
	return rel, true
}

// unescapeMount undoes the octal escapes (\040 for a space) of a
// /proc/self/mountinfo field.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupOwner returns the pid in the name of a run cgroup this program
// creates, ooda-<pid>-<sequence>.
func cgroupOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ooda-")
	if !ok {
		return 0, false
	}
	pidPart, seq, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(pidPart)
	return pid, err == nil && pid > 0
}

// removeStaleCgroups removes the empty run cgroups of processes that are
// gone (a crash leaves them behind; one named with this process's pid
// belonged to an earlier process with the same pid). rmdir refuses a cgroup
// that still has processes, so a running skill's is never touched.
func removeStaleCgroups(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, ok := cgroupOwner(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		if pid == self || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			g := &cgroup{dir: filepath.Join(base, e.Name()), parent: base, fd: -1}
			g.remove()
		}
	}
}

// cgroup is one run's cgroup directory.
type cgroup struct {
	dir, parent string
	fd          int // open on dir until the child has started; -1 after
}

// newCgroup creates a cgroup for one run, or returns nil when run cgroups
// cannot be used here; the first failure turns them off for good.
func newCgroup() *cgroup {
	base, err := cgroupBase()
	if err != nil {
		return nil
	}
	var dir string
	for range 10 {
		dir = filepath.Join(base, fmt.Sprintf("ooda-%d-%d", os.Getpid(), cgroups.seq.Add(1)))
		if err = os.Mkdir(dir, 0o755); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		disableCgroups(err)
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = syscall.Rmdir(dir)
		disableCgroups(&fs.PathError{Op: "open", Path: dir, Err: err})
		return nil
	}
	return &cgroup{dir: dir, parent: base, fd: fd}
}

func (g *cgroup) close() {
	if g.fd >= 0 {
		_ = syscall.Close(g.fd)
		g.fd = -1
	}
}

// dirs returns the cgroup and every cgroup below it (a skill that runs this
// program creates its own), deepest first, the order rmdir needs.
func (g *cgroup) dirs() []string {
	var dirs []string
	_ = filepath.WalkDir(g.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	slices.Reverse(dirs)
	return dirs
}

// procs returns every process in the cgroup and below it. Zombies are not
// members of a cgroup.
func (g *cgroup) procs() []int {
	var pids []int
	for _, d := range g.dirs() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for f := range bytes.FieldsSeq(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// populated reports whether a process runs in the cgroup or below it. If
// the cgroup is gone nothing does; if it cannot be read, something may.
func (g *cgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.events"))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0"
		}
	}
	return true
}

func (g *cgroup) signal(sig syscall.Signal) {
	for _, pid := range g.procs() {
		_ = syscall.Kill(pid, sig)
	}
}

// kill kills everything in the cgroup and below: at once with cgroup.kill
// (Linux 5.14), which no fork can race, else one process at a time.
func (g *cgroup) kill() {
	if os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	g.signal(syscall.SIGKILL)
}

// evict moves whatever is still in the cgroup to the parent, this
// process's own cgroup, so that the run's cgroup can be removed.
func (g *cgroup) evict() {
	for range 10 {
		pids := g.procs()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = os.WriteFile(filepath.Join(g.parent, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
		}
	}
}

// remove removes the cgroup and those below it. A cgroup whose last
// process has just exited can be busy for a moment longer; one that still
// has processes stays, and removeStaleCgroups takes it once it is empty
// and this process is gone.
func (g *cgroup) remove() {
	for range 20 {
		busy := false
		for _, d := range g.dirs() {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				busy = true
			}
		}
		if !busy || g.populated() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// prepareContainment does the once-per-process part of containing a run:
// finding where run cgroups go (Prepare).
func prepareContainment() { _, _ = cgroupBase() }
