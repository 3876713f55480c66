//go:build !linux

package forge

import "io/fs"

// fileIdentity is not known here: the refs are always read by git.
func fileIdentity(fs.FileInfo) (string, bool) { return "", false }
