package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
)

// Freeing a file's data blocks is what makes replacing or removing a
// file slow on many file systems (a quarter of a millisecond a file on
// ext4 mounted with discard, against a hundredth for a rename to a new
// name): every state commit replaces the branch's ref and the index, and
// a fold removes sixteen pack files. So the file about to go is first
// given a second name among the slots (<gitDir>/ooda/tmp/old-*) — a link
// for a file replaced, a rename for one removed — and the replacement or
// removal then frees nothing. What git sees is exactly what it saw
// before: git never reads ooda/tmp, and the names it reads change as
// they did. The buried files are removed afterwards, off the commit's
// path (reapGraves), and those a killed process left by the next
// Prepare, a few at a time while the cycle syncs its files.

// gravePrefix starts the names of buried files in the slots' directory.
const gravePrefix = "old-"

// reapAtPrepare is how many buried files one Prepare removes: the usual
// commit buries two and removes them itself; this only drains what a
// process killed, or ended before its removals ran, left.
const reapAtPrepare = 4

// buryLink gives name a second name in the slots' directory pool, so that
// renaming another file over it frees nothing; "" when it cannot (no such
// file, no pool, links not supported): the rename then frees it as
// before.
func buryLink(pool, name string) string {
	if pool == "" {
		return ""
	}
	grave := filepath.Join(pool, gravePrefix+randomHex(6))
	if os.Link(name, grave) != nil {
		return ""
	}
	return grave
}

// buryMove moves name into the slots' directory pool in place of
// removing it; where it cannot (another file system, no pool), it is
// removed. It returns the buried name, "" when it was removed instead.
func buryMove(pool, name string) string {
	if pool != "" {
		grave := filepath.Join(pool, gravePrefix+randomHex(6))
		if os.Rename(name, grave) == nil {
			return grave
		}
	}
	os.Remove(name)
	return ""
}

// reapGraves removes buried files. It runs beside what the process does
// next (printing the cycle's card), and a file it has not removed when
// the process ends is left for the next Prepare. Tests replace it to see
// what was buried.
var reapGraves = func(graves []string) {
	go func() {
		for _, g := range graves {
			os.Remove(g)
		}
	}()
}

// reapLeftGraves removes up to max buried files of the slots' directory
// dir, whatever their age: a buried file is never written or read, by
// this process or another, so removing it — or removing it twice — only
// frees what nothing uses.
func reapLeftGraves(dir string, entries []os.DirEntry, max int) {
	for _, e := range entries {
		if max <= 0 {
			return
		}
		if strings.HasPrefix(e.Name(), gravePrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
			max--
		}
	}
}
