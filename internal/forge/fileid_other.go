//go:build !linux

package forge

import "io/fs"

// fileIdentity is not known here: the refs are always read by git.
func fileIdentity(fs.FileInfo) (string, bool) { return "", false }

// ownedByMe is not known here: git decides whether it reads a repository.
func ownedByMe(fs.FileInfo) bool { return false }
