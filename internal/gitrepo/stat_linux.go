package gitrepo

import (
	"io/fs"
	"os"
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

// openRead opens a regular file for reading as os.Open does, without
// registering it with the runtime's poller — which a regular file never
// needs, and which costs os.Open several system calls more: the readers
// of a pack's objects open a file per pack.
func openRead(name string) (*os.File, error) {
	// O_NONBLOCK: a named pipe planted where an object or a pack should
	// be is read as empty (and refused) instead of waited on forever; a
	// regular file reads the same either way.
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
