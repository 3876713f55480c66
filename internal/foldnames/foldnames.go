// Package foldnames lists a directory's names folded to lower case, so
// that "no such file" can be answered from one listing instead of one
// lookup per name — safely on a case-insensitive file system too, since a
// name is known absent only when no entry folds to it. A listing holding
// a name that is not ASCII is unusable: folding beyond ASCII is the file
// system's own business.
package foldnames

import (
	"io"
	"os"
	"strings"
)

// Read lists the open directory d: the ASCII-lowercased names, or
// unusable when the listing fails, holds more than max names or a name
// that is not ASCII (callers then look names up one by one).
func Read(d *os.File, max int) (names map[string]bool, unusable bool) {
	for {
		batch, err := d.Readdirnames(1024)
		if names == nil {
			// Sized by the first batch: a thousand domains' directories
			// are listed without rehashing the map as it grows.
			names = make(map[string]bool, len(batch))
		}
		for _, n := range batch {
			if !ASCII(n) {
				return nil, true
			}
			names[Lower(n)] = true
		}
		if err == io.EOF {
			return names, false
		}
		if err != nil || len(names) > max {
			return nil, true
		}
	}
}

// ASCII reports whether s is all ASCII.
func ASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Lower is strings.ToLower for an ASCII s, without copying an s that has
// no upper-case letter.
func Lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
