package act

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/proc"
)

// What the cycle prints of a failed skill's output: its last lines, so the
// reason is on the screen, not only in its run log.
const (
	// FailureTailLines is how many lines are printed at most.
	FailureTailLines = 10
	// FailureTailBytes bounds those lines together; a longer line keeps
	// its end, where the error usually is.
	FailureTailBytes = 2000
)

// LastLines returns the last n lines of out that are not blank, oldest
// first, at most max bytes together: older lines go first, and a single
// line longer than max keeps its last bytes (cut at a character
// boundary). A line overwritten with carriage returns (a progress bar)
// keeps what a terminal showed last. Lines are returned as written: the
// caller escapes them for display.
func LastLines(out []byte, n, max int) []string {
	if n <= 0 || max <= 0 {
		return nil
	}
	var rev []string
	used := 0
	for rest := out; len(rest) > 0 && len(rev) < n && used < max; {
		i := bytes.LastIndexByte(rest, '\n')
		line := rest[i+1:]
		if i < 0 {
			rest = nil
		} else {
			rest = rest[:i]
		}
		line = bytes.TrimRight(line, "\r")
		if j := bytes.LastIndexByte(line, '\r'); j >= 0 {
			line = line[j+1:]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if room := max - used; len(line) > room {
			line = line[len(line)-room:]
			for len(line) > 0 && !utf8.RuneStart(line[0]) {
				line = line[1:]
			}
		}
		used += len(line)
		rev = append(rev, string(line))
	}
	lines := make([]string, len(rev))
	for i, l := range rev {
		lines[len(rev)-1-i] = l
	}
	return lines
}

// startHint says what to do about a skill that could not be started, for
// the errors people make: a path that does not exist, a script whose #!
// interpreter does not, a script without the execute bit or without a #!
// line. program is the path that was run (relative ones to dir). "" for
// anything else.
func startHint(err error, program, dir string) string {
	switch {
	case errors.Is(err, proc.ErrNotFound):
		return "no such program in PATH: give its path (relative to the project root) or install it"
	case errors.Is(err, fs.ErrNotExist):
		if !filepath.IsAbs(program) {
			program = filepath.Join(dir, program)
		}
		if _, serr := os.Stat(program); serr == nil {
			return "the interpreter its #! line names does not exist: check the script's first line"
		}
		return "no such file: the path is relative to the project root"
	case errors.Is(err, fs.ErrPermission):
		return "not executable: chmod +x it, or run it through its interpreter, e.g. [\"/bin/sh\", \"script.sh\"]"
	case errors.Is(err, syscall.ENOEXEC):
		return "not a program: add a #! line, or run it through its interpreter, e.g. [\"/bin/sh\", \"script.sh\"]"
	}
	return ""
}
