package proc

import (
	"bytes"
	"os"
	"strconv"
)

// pinfo is what /proc/<pid>/stat says about one process.
type pinfo struct {
	pid, ppid, pgrp, sid int
	// start is the start time in clock ticks since boot: with pid it
	// identifies a process, since a pid alone can be reused.
	start uint64
	state byte
}

// live reports whether the process still runs. A zombie holds no resources
// and cannot be signalled further; it only waits for its reaper.
func (p pinfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// parseStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp session
// ...". comm may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(stat []byte) (pinfo, bool) {
	open := bytes.IndexByte(stat, '(')
	end := bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return pinfo{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(stat[:open])))
	if err != nil {
		return pinfo{}, false
	}
	// After the command: state(0) ppid(1) pgrp(2) session(3) ... starttime
	// is field 22 of the whole line, i.e. index 19 here.
	f := bytes.Fields(stat[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return pinfo{}, false
	}
	p := pinfo{pid: pid, state: f[0][0]}
	var e1, e2, e3, e4 error
	p.ppid, e1 = strconv.Atoi(string(f[1]))
	p.pgrp, e2 = strconv.Atoi(string(f[2]))
	p.sid, e3 = strconv.Atoi(string(f[3]))
	p.start, e4 = strconv.ParseUint(string(f[19]), 10, 64)
	if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
		return pinfo{}, false
	}
	return p, true
}

// readStat reads one process's stat; false when it is gone.
func readStat(pid int) (pinfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return pinfo{}, false
	}
	return parseStat(b)
}

// scanProcs reads the stat of every process. Processes that exit while the
// scan runs are simply missing from it.
func scanProcs() ([]pinfo, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	procs := make([]pinfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// hasLiveMember scans /proc for a process of group pgid that is not a
// zombie. When /proc cannot be read it assumes there is one, which only
// costs the rest of the kill grace.
func hasLiveMember(pgid int) bool {
	procs, err := scanProcs()
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.pgrp == pgid && p.live() {
			return true
		}
	}
	return false
}

// GroupStart returns the start time (clock ticks since boot) of the
// process pgid, the leader of its group: with the number it identifies the
// group, since a number alone can be reused.
func GroupStart(pgid int) (uint64, bool) {
	if pgid <= 0 {
		return 0, false
	}
	p, ok := readStat(pgid)
	if !ok {
		return 0, false
	}
	return p.start, true
}
