package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ForgeCursorFile is the plain-git forge's scan cursor under
// agent/state/evolve/: how far it has read the default branch and what
// that history told (docs/forge.md). It is a cache: deleting it costs one
// bounded re-read. It is committed with the state all the same, so that a
// fresh clone (a CI job, a CronJob) starts from it instead of re-reading
// the history, and so that a cycle leaves `git status` clean.
const ForgeCursorFile = "forge_cursor.json"

// ForgeCursor is the cursor file of one project. The forge owns its
// content and checks it; the store only reads it within the read limit,
// never through a symlink, and replaces it atomically.
type ForgeCursor struct{ s *Store }

// ForgeCursor returns the project's forge cursor file.
func (s *Store) ForgeCursor() ForgeCursor { return ForgeCursor{s} }

// Name is the cursor's path relative to the project root, for messages.
func (c ForgeCursor) Name() string {
	p := c.s.EvolvePath(ForgeCursorFile)
	if rel, err := filepath.Rel(c.s.Root, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

// Load returns the cursor's bytes, or nil when there is none. A symlink
// is refused rather than followed: the cursor is only ever written by
// ooda, as a regular file.
func (c ForgeCursor) Load() ([]byte, error) {
	p := c.s.EvolvePath(ForgeCursorFile)
	fi, err := c.s.lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: a symlink; not read", c.Name())
	}
	b, _, err := c.s.readFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Save replaces the cursor atomically; the cycle's state commit takes it.
func (c ForgeCursor) Save(data []byte) error {
	p := c.s.EvolvePath(ForgeCursorFile)
	if err := c.s.writeFile(p, data); err != nil {
		return err
	}
	c.s.written[p] = true
	return nil
}
