package gitrepo

import (
	"io/fs"
	"syscall"
)

// statOf is what the native state commit needs of a file beyond
// FileInfo: the device and inode (a file renamed over has a new one), the
// owner (git reads only a repository its user owns) and the change time,
// which nothing but the kernel sets.
func statOf(fi fs.FileInfo) (fileStat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	return fileStat{
		dev: uint64(st.Dev), ino: uint64(st.Ino), uid: st.Uid, mode: st.Mode, size: st.Size, nlink: uint64(st.Nlink),
		mtime: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec), ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
	}, true
}
