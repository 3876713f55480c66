//go:build !linux

package gitrepo

import "io/fs"

// statOf is not known here: every state commit is made by git itself.
func statOf(fs.FileInfo) (fileStat, bool) { return fileStat{}, false }
