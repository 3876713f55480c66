package gitrepo

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tmpSlots are temporary files made ready, while Step 6 writes and syncs
// the state files, for the new files of the state commit built after
// them — its loose objects and its locks: on some file systems creating a
// file costs many times what writing, linking or renaming one does, and
// they are all of a commit's new files. They live in <gitDir>/ooda/tmp, which git never
// reads; each is renamed to its object's name once written, as git
// renames its own temporary object files. Those a commit does not use go
// back to the directory's pool ("free-*"), empty, for the next commit to
// claim (by renaming it to a name of its own, which only one process can
// do) instead of making new ones.
type tmpSlots struct {
	mu    sync.Mutex
	dir   string
	files []*os.File
	names []string
	ready chan struct{}
	// fanned is closed once the fan-out directories are made.
	fanned chan struct{}
}

// maxFreeSlots bounds the pool: more free files than a commit takes are
// removed.
const maxFreeSlots = 64

// slotsDir is where the slots of gitDir are.
func slotsDir(gitDir string) string { return filepath.Join(gitDir, "ooda", "tmp") }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fanOutPerCommit bounds the object fan-out directories (objects/00 to
// objects/ff) one commit makes ahead.
const fanOutPerCommit = 32

// makeSlots starts making n slots ready in gitDir, claimed from the pool
// first; take and release wait for it to be done. Then, on its own and
// with fanOut (for loose objects), it makes some of the object
// directories' fan-out subdirectories that do not exist yet, which a
// young repository lacks and a commit would otherwise make on its way.
func makeSlots(gitDir string, n int, fanOut bool) *tmpSlots {
	s := &tmpSlots{dir: slotsDir(gitDir), ready: make(chan struct{}), fanned: make(chan struct{})}
	go func() {
		defer close(s.fanned)
		<-s.ready
		if fanOut {
			makeFanOut(filepath.Join(gitDir, "objects"), fanOutPerCommit)
		}
	}()
	go func() {
		defer close(s.ready)
		if err := os.MkdirAll(s.dir, 0o777); err != nil {
			return
		}
		me := "own-" + randomHex(6) + "-"
		if entries, err := os.ReadDir(s.dir); err == nil {
			for _, e := range entries {
				if len(s.files) >= n {
					break
				}
				if !strings.HasPrefix(e.Name(), "free-") {
					continue
				}
				name := filepath.Join(s.dir, me+randomHex(4))
				if os.Rename(filepath.Join(s.dir, e.Name()), name) != nil {
					continue // another process claimed it first
				}
				if f := claim(name); f != nil {
					s.add(f, name)
				}
			}
		}
		for len(s.files) < n {
			name := filepath.Join(s.dir, me+randomHex(4))
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
			if err != nil {
				return
			}
			s.add(f, name)
		}
	}()
	return s
}

// makeFanOut makes up to max of the missing fan-out directories of
// objects, as git makes one when it first writes an object there.
func makeFanOut(objects string, max int) {
	entries, err := os.ReadDir(objects)
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	for i := 0; i < 256 && max > 0; i++ {
		name := hex.EncodeToString([]byte{byte(i)})
		if have[name] {
			continue
		}
		if err := os.Mkdir(filepath.Join(objects, name), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return
		}
		max--
	}
}

// claim opens a file taken from the pool for writing, empty, when it is
// what the pool holds: a regular file of this user, with no other name
// (writing to it must not change any other file). Anything else is
// removed and nil returned.
func claim(name string) *os.File {
	f, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		os.Remove(name)
		return nil
	}
	fi, err := f.Stat()
	st, ok := fileSys(fi, err)
	if !ok || !fi.Mode().IsRegular() || st.nlink != 1 || int(st.uid) != os.Geteuid() || (fi.Size() > 0 && f.Truncate(0) != nil) {
		f.Close()
		os.Remove(name)
		return nil
	}
	return f
}

func (s *tmpSlots) add(f *os.File, name string) {
	s.mu.Lock()
	s.files, s.names = append(s.files, f), append(s.names, name)
	s.mu.Unlock()
}

// lockFile is the package's lockFile taking the lock with a slot when
// one is left: the slot, given git's mode for a new file, is linked to
// <name>.lock — which fails, as creating it exclusively does, when the
// lock exists — then its own name removed. Linking a file costs a
// fraction of creating one. Where links cannot be made, the lock is
// created.
func (s *tmpSlots) lockFile(name string) (*refLock, error) {
	mode, ok := lockMode()
	f, slot, taken := s.take()
	if !ok || !taken {
		if taken {
			s.giveBack(f, slot)
		}
		return lockFile(name)
	}
	lock := name + ".lock"
	err := f.Chmod(mode)
	if err == nil {
		err = os.Link(slot, lock)
	}
	switch {
	case err == nil:
		os.Remove(slot)
		return &refLock{path: lock, f: f, pool: s.dir}, nil
	case errors.Is(err, fs.ErrExist):
		s.giveBack(f, slot)
		return nil, errNotPlain
	}
	s.giveBack(f, slot)
	return lockFile(name)
}

// lockMode is the mode git gives a lock file it creates: 0666 less the
// process's umask, as /proc tells it (setting it to read it would change
// it for every goroutine).
var lockMode = sync.OnceValues(func() (os.FileMode, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			u, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				return 0, false
			}
			return os.FileMode(0o666 &^ u), true
		}
	}
	return 0, false
})

// giveBack returns a slot taken but not used.
func (s *tmpSlots) giveBack(f *os.File, name string) {
	s.add(f, name)
}

// take hands out one slot: its open file and its name; ok is false when
// none is left (the caller then makes its own temporary file).
func (s *tmpSlots) take() (*os.File, string, bool) {
	if s == nil {
		return nil, "", false
	}
	<-s.ready
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		return nil, "", false
	}
	f, name := s.files[0], s.names[0]
	s.files, s.names = s.files[1:], s.names[1:]
	return f, name, true
}

// release puts the slots not taken back in the pool, empty, once
// everything makeSlots started is done.
func (s *tmpSlots) release() {
	if s == nil {
		return
	}
	<-s.ready
	<-s.fanned
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.files {
		f.Close()
		if os.Rename(s.names[i], filepath.Join(s.dir, "free-"+randomHex(6))) != nil {
			os.Remove(s.names[i])
		}
	}
	s.files, s.names = nil, nil
}

// removeStaleSlots removes the slots a killed process held, once older
// than any commit could take (staleIndexAge) — removed, not put back in
// the pool: a process only stopped may still write to one — what the
// pool holds beyond maxFreeSlots, and a few buried files left over
// (graves.go).
func removeStaleSlots(gitDir string) {
	// And the cache's temporary files a killed process left.
	left, _ := filepath.Glob(filepath.Join(gitDir, "ooda", "prep-cache.*.tmp"))
	for _, f := range left {
		if fi, err := os.Lstat(f); err == nil && time.Since(fi.ModTime()) > staleIndexAge {
			os.Remove(f)
		}
	}
	dir := slotsDir(gitDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	reapLeftGraves(dir, entries, reapAtPrepare)
	free := 0
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "free-"):
			if free++; free > maxFreeSlots {
				os.Remove(name)
			}
		case strings.HasPrefix(e.Name(), "own-"):
			// Claiming renames the file, which sets its change time.
			if st, ok := fileSys(os.Lstat(name)); ok && time.Since(time.Unix(0, st.ctime)) > staleIndexAge {
				os.Remove(name)
			}
		}
	}
}
