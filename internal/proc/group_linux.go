package proc

import (
	"bytes"
	"os"
	"strconv"
)

// hasLiveMember scans /proc for a process of group pgid that is not a
// zombie. When /proc cannot be read it assumes there is one, which only
// costs the rest of the kill grace.
func hasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		state, pgrp, ok := parseStat(stat)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat extracts the state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...". comm may itself contain spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// GroupStart returns the start time (clock ticks since boot) of the
// process pgid, the leader of its group: with the number it identifies the
// group, since a number alone can be reused.
func GroupStart(pgid int) (uint64, bool) {
	if pgid <= 0 {
		return 0, false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	// After the command: state(0) ppid(1) pgrp(2) ... starttime is field 22
	// of the whole line, i.e. index 19 here.
	if len(fields) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return v, err == nil
}
