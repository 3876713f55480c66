//go:build !linux

package gitrepo

import (
	"io/fs"
	"os"
	"syscall"
)

// statOf is not known here: every state commit is made by git itself.
func statOf(fs.FileInfo) (fileStat, bool) { return fileStat{}, false }

// openRead is os.Open without blocking on a named pipe (see the Linux
// version).
func openRead(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
