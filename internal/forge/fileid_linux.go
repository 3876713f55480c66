package forge

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// fileIdentity is what refsFingerprint needs beyond FileInfo: the inode
// (a renamed-over file has a new one) and the change time.
func fileIdentity(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d %d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec), true
}

// ownedByMe reports whether a file is owned by this process's effective
// user, which is what git requires of a repository before it reads it
// (unless safe.directory says otherwise).
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
