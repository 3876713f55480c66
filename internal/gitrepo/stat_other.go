//go:build !linux

package gitrepo

import (
	"io/fs"
	"os"
)

// statOf is not known here: every state commit is made by git itself.
func statOf(fs.FileInfo) (fileStat, bool) { return fileStat{}, false }

// openRead is os.Open.
func openRead(name string) (*os.File, error) { return os.Open(name) }
