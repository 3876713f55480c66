package config

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ooda-loop/ooda/internal/foldnames"
)

// Loading a large configuration on two cores. A configuration of a
// thousand domains costs every process milliseconds of work that does not
// depend on the rest: the walk for unknown keys reads only the bytes, and
// the listing of agent/state/ (which answers "no such file" for the
// domains' state files, see lookups.absent) only the directory. Both are
// done by one goroutine while the configuration is decoded, and the path
// checks wait for them only where they need them. The results are exactly
// the sequential load's: the key walk is the same function of the same
// bytes, and the listing is used only when it is of the very directory the
// path checks would list (the same device and inode as the lstat the walk
// made of it), else that directory is listed as before.

// concurrentLoadBytes is the size from which a configuration with a
// remembered verdict is loaded concurrently; a small one costs less than
// starting a goroutine saves. A variable so that the tests can load every
// configuration both ways.
var concurrentLoadBytes = 16 << 10

// parseKnownConcurrently is parseProject for raw that a remembered verdict
// found valid (so that decoding it is safe before the key walk has looked
// at it): the key walk and the listing of the default state directory run
// in a goroutine while raw is decoded and its paths checked. ok is false
// when the key walk cannot take raw (parseProject then loads it in order,
// validating it against the schema for its warnings, as it would have).
func parseKnownConcurrently(file string, raw []byte, root string) (*Config, bool, error) {
	pre := &listing{done: make(chan struct{})}
	if abs, aerr := filepath.Abs(root); aerr == nil {
		pre.dir = filepath.Join(abs, "agent", "state")
	}
	var issues []Issue
	var walked bool
	keysDone := make(chan struct{})
	go func() {
		// The listing first: the path checks need it before the end,
		// the warnings only at the end.
		pre.read()
		issues, walked = unknownKeyIssuesRaw(raw)
		close(keysDone)
	}()
	c, decErr := decodeConfig(integralNumbers(raw))
	var checkErr error
	if decErr == nil {
		c.applyDomainDefaults()
		checkErr = c.checkWith(file, root, pre)
	}
	<-keysDone
	if !walked {
		return nil, false, nil
	}
	warnings := issueWarnings(file, issues)
	switch {
	case decErr != nil:
		return nil, true, withWarnings(decodeError(file, decErr), warnings)
	case checkErr != nil:
		return nil, true, withWarnings(checkErr, warnings)
	}
	c.Warnings = warnings
	return c, true, nil
}

// listing is a directory's listing taken ahead of the path checks (see
// lookups.absent), or the attempt: done is closed once it is taken.
type listing struct {
	done chan struct{}
	// dir is the directory listed, as it was opened.
	dir string
	// fi is the directory listed, as its open file says: a listing is
	// used for a directory only when it is this one.
	fi       fs.FileInfo
	names    map[string]bool
	unusable bool
}

// read lists l.dir and closes l.done. The directory is opened without
// blocking and only as a directory: it is not known yet to be one (a
// named pipe put there must not hang the load).
func (l *listing) read() {
	defer close(l.done)
	l.unusable = true
	if l.dir == "" {
		return
	}
	f, err := openDir(l.dir)
	if err != nil {
		return
	}
	defer f.Close()
	if l.fi, err = f.Stat(); err != nil || !l.fi.IsDir() {
		return
	}
	l.names, l.unusable = foldnames.Read(f, maxListed)
}

// of returns the listing's names when it is the listing of the directory
// whose lstat (made by the walk that resolved it) is fi; false otherwise,
// and the directory is listed anew.
func (l *listing) of(fi fs.FileInfo) (map[string]bool, bool) {
	if l == nil || fi == nil || !fi.IsDir() {
		return nil, false
	}
	<-l.done
	if l.unusable || l.fi == nil || !os.SameFile(l.fi, fi) {
		return nil, false
	}
	return l.names, true
}
