package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/secret"
)

// LockInfo is the content of agent/state/evolve/.lock.
type LockInfo struct {
	PID       int    `json:"pid"`
	Host      string `json:"host"`
	StartedAt string `json:"started_at"`
	// SkillPGID is the process group of the skill running under this lock,
	// if any: a skill orphaned by a killed cycle keeps the lock live.
	SkillPGID int `json:"skill_pgid,omitempty"`
	// SkillStart identifies that group's leader (its start time in clock
	// ticks since boot), so a recoverer never stops a process group that
	// merely reuses the number.
	SkillStart uint64 `json:"skill_start,omitempty"`
	// RenewedAt is the holder's last heartbeat: a lock ages from it, so a
	// cycle that runs long is never judged stale while it is alive.
	RenewedAt string `json:"renewed_at,omitempty"`
}

// ErrLocked reports a live lock held by another cycle (0-B).
type ErrLocked struct {
	Holder LockInfo
	Age    time.Duration
	// Orphaned says the holder's process is gone but the skill it started
	// (Holder.SkillPGID) still runs on this host, which keeps the lock
	// live until it ends or the lock times out.
	Orphaned bool
}

func (e *ErrLocked) Error() string {
	return fmt.Sprintf("another cycle is running (pid %d on %s, lock age %dm)", e.Holder.PID, e.Holder.Host, int(e.Age.Minutes()))
}

// StaleLock describes a lock that was removed because its holder is gone.
type StaleLock struct {
	Holder LockInfo
	Age    time.Duration
	// Why is "timeout" (older than lock_timeout_minutes) or "dead_pid"
	// (the holder's process no longer exists on this host) or "unreadable".
	Why string
	// OrphanPGID is the process group of a skill the crashed holder left
	// running on this host (0 when none is alive). The recoverer stops it:
	// nothing else will ever enforce its timeout.
	OrphanPGID int
}

// lockReadLimit bounds a lock file read: a holder's record is a few
// hundred bytes, and a lock replaced by something huge is unreadable, not
// a reason to exhaust memory.
const lockReadLimit = 64 << 10

// Lock is a held cycle lock; Release removes it. Every operation on the
// lock goes through a descriptor of its directory, so the lock file is
// never reached through a symlink out of that directory.
type Lock struct {
	mu   sync.Mutex
	path string
	dir  *os.Root
	name string
	info LockInfo
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// SetSkillGroup records the running skill's process group in the lock, so
// that if this process dies the lock stays live while the skill runs on.
func (l *Lock) SetSkillGroup(pgid int) error {
	return l.update(func(li *LockInfo) {
		li.SkillPGID = pgid
		li.SkillStart, _ = proc.GroupStart(pgid)
	})
}

// Renew records a heartbeat at now, so the lock does not age while its
// holder is alive.
func (l *Lock) Renew(now time.Time) error {
	return l.update(func(li *LockInfo) { li.RenewedAt = FormatTime(now) })
}

func (l *Lock) update(fn func(*LockInfo)) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		return nil
	}
	unguard, err := guard(l.dir)
	if err != nil {
		return err
	}
	defer unguard()
	cur, ok := readLockIn(l.dir, l.name, l.path)
	if !ok || !l.owns(cur) {
		return fmt.Errorf("lock %s is no longer ours", l.path)
	}
	fn(&l.info)
	b, _ := json.Marshal(l.info)
	return replaceIn(l.dir, l.name, l.path, secret.RedactBytes(b), 0o644)
}

// replaceIn replaces name in dir with data atomically — a temporary file
// renamed over it, so a reader sees the old record or the new one — but
// syncs nothing. A lock is only ever read while the system that wrote it
// is up, where the page cache holds it whatever kills its holder; after a
// power loss no holder survives, and a lock left empty or missing is
// recovered as surely as a full one (an unreadable lock is stale after
// five seconds). Its fsyncs (three per cycle) bought no guarantee.
func replaceIn(dir *os.Root, name, display string, data []byte, perm os.FileMode) (err error) {
	var f *os.File
	var tmp string
	for i := 0; ; i++ {
		tmp = tempName(name)
		f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return fmt.Errorf("write %s: %w", display, fsErr("create", display, err))
		}
	}
	_, werr := f.Write(data)
	merr := f.Chmod(perm)
	cerr := f.Close()
	if err = errors.Join(werr, merr, cerr); err == nil {
		if err = dir.Rename(tmp, name); err != nil {
			err = fsErr("rename", display, err)
		}
	}
	if err != nil {
		_ = dir.Remove(tmp)
		return fmt.Errorf("write %s: %w", display, err)
	}
	return nil
}

// Held reports whether the lock file is still this holder's, and what it
// holds when it is not (a zero LockInfo when it is gone or unreadable).
// Another process may have judged the lock stale — older than
// lock_timeout_minutes by its clock, which --now may set far from this
// one's — and taken it: a holder that writes on after that writes beside
// another cycle. A nil Lock (a dry run holds none) is held.
func (l *Lock) Held() (bool, LockInfo) {
	if l == nil {
		return true, LockInfo{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		return false, LockInfo{}
	}
	cur, ok := readLockIn(l.dir, l.name, l.path)
	return ok && l.owns(cur), cur
}

// owns reports whether cur, a lock file's content, is this holder's: the
// same process on the same host, taken at the same instant.
func (l *Lock) owns(cur LockInfo) bool {
	return cur.PID == l.info.PID && cur.Host == l.info.Host && cur.StartedAt == l.info.StartedAt
}

// Release removes the lock file if it is still ours. It is safe to call
// more than once.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		return nil
	}
	defer l.dir.Close()
	if unguard, err := guard(l.dir); err == nil {
		defer unguard()
	}
	b, _, err := readIn(l.dir, l.name, l.path, lockReadLimit)
	if err == nil {
		var cur LockInfo
		if json.Unmarshal(b, &cur) == nil && !l.owns(cur) {
			l.path = ""
			return nil // someone else's lock now: never delete it
		}
	}
	err = l.dir.Remove(l.name)
	l.path = ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}

// lockJudgedHook, when set (by tests), runs between judging a lock stale
// and moving it aside: the window in which a concurrent recoverer may
// replace it.
var lockJudgedHook func()

// AcquireLock takes the cycle lock with O_CREATE|O_EXCL so that two
// processes can never both hold it. A lock older than timeout, or held by a
// dead PID on this host, is stale: it is removed (and reported) and the
// acquisition retried once. A live lock returns *ErrLocked.
//
// The lock's directory is taken as given (a symlink to it is followed);
// Store.AcquireLock also refuses a state directory that leads out of the
// project.
func AcquireLock(path string, now time.Time, timeout time.Duration) (*Lock, *StaleLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	dir, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	l, stale, err := acquireIn(dir, filepath.Base(path), path, now, timeout)
	if err != nil {
		dir.Close()
	}
	return l, stale, err
}

// AcquireLock takes the project's cycle lock (agent/state/evolve/.lock)
// like the package's AcquireLock, after checking that the evolve directory
// is inside the project: a state directory that is a symlink out of the
// project is an *OutsideError, and no lock is written through it.
func (s *Store) AcquireLock(now time.Time, timeout time.Duration) (*Lock, *StaleLock, error) {
	rel, err := s.rel(s.EvolveDir)
	if err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	r, err := s.openRoot(true)
	if err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	defer r.Close()
	if err := r.MkdirAll(rel, 0o755); err != nil {
		return nil, nil, fmt.Errorf("lock: %w", fsErr("mkdir", s.EvolveDir, err))
	}
	dir, err := openSubRoot(r, rel)
	if err != nil {
		return nil, nil, fmt.Errorf("lock: %w", fsErr("open", s.EvolveDir, err))
	}
	l, stale, err := acquireIn(dir, LockFile, s.LockPath(), now, timeout)
	if err != nil {
		dir.Close()
	}
	return l, stale, err
}

// acquireIn is AcquireLock on the lock name in dir; on success the Lock
// owns dir.
func acquireIn(dir *os.Root, name, path string, now time.Time, timeout time.Duration) (*Lock, *StaleLock, error) {
	host, _ := os.Hostname()
	info := LockInfo{PID: os.Getpid(), Host: host, StartedAt: FormatTime(now)}
	data, _ := json.Marshal(info)
	data = secret.RedactBytes(data)
	// Judging a lock stale and replacing it must be one step: without the
	// guard, a recoverer could delete a lock another process took between
	// the judgment and the removal. The guard is an flock on the directory,
	// released by the kernel if its holder dies, so it never goes stale.
	unguard, err := guard(dir)
	if err != nil {
		return nil, nil, err
	}
	defer unguard()
	var stale *StaleLock
	for attempt := 0; attempt < 2; attempt++ {
		// O_EXCL never follows a symlink: a link planted at the lock's
		// name is an existing lock, judged below, never written through.
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			// Not synced: see replaceIn.
			_, werr := f.Write(data)
			cerr := f.Close()
			if werr != nil || cerr != nil {
				_ = dir.Remove(name)
				return nil, nil, fmt.Errorf("lock: write %s: %v", path, errors.Join(werr, cerr))
			}
			return &Lock{path: path, dir: dir, name: name, info: info}, stale, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("lock: %w", fsErr("create", path, err))
		}
		judged, _, _ := readIn(dir, name, path, lockReadLimit)
		holder, age, why := inspectLock(dir, name, path, now, timeout, host)
		if why == "" {
			orphaned := holder.Host == host && holder.PID > 0 && !pidAlive(holder.PID) && proc.GroupAlive(holder.SkillPGID)
			return nil, nil, &ErrLocked{Holder: holder, Age: age, Orphaned: orphaned}
		}
		if lockJudgedHook != nil {
			lockJudgedHook()
		}
		// Every ooda process changes the lock only under the guard, but a
		// process that does not use it (the original prompt-driven engine
		// sharing the project) might. So move the judged lock aside and
		// check that it is still the bytes that were judged stale before
		// deleting it; otherwise give it back.
		aside := fmt.Sprintf("%s.stale-%d", name, os.Getpid())
		if err := dir.Rename(name, aside); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, nil, fmt.Errorf("lock: remove stale %s: %w", path, fsErr("rename", path, err))
		}
		moved, _, _ := readIn(dir, aside, path, lockReadLimit)
		if string(moved) != string(judged) {
			// Link fails rather than overwrite a lock created since.
			_ = dir.Link(aside, name)
			_ = dir.Remove(aside)
			var li LockInfo
			_ = json.Unmarshal(moved, &li)
			return nil, nil, &ErrLocked{Holder: li}
		}
		_ = dir.Remove(aside)
		stale = &StaleLock{Holder: holder, Age: age, Why: why}
		if holder.Host == host && proc.GroupAlive(holder.SkillPGID) {
			if start, ok := proc.GroupStart(holder.SkillPGID); ok && start == holder.SkillStart {
				stale.OrphanPGID = holder.SkillPGID
			}
		}
	}
	return nil, nil, &ErrLocked{}
}

// ReadLock returns the current lock holder, if any.
func ReadLock(path string) (LockInfo, bool) {
	dir, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return LockInfo{}, false
	}
	defer dir.Close()
	return readLockIn(dir, filepath.Base(path), path)
}

func readLockIn(dir *os.Root, name, path string) (LockInfo, bool) {
	b, _, err := readIn(dir, name, path, lockReadLimit)
	if err != nil {
		return LockInfo{}, false
	}
	var li LockInfo
	_ = json.Unmarshal(b, &li)
	return li, true
}

func inspectLock(dir *os.Root, name, path string, now time.Time, timeout time.Duration, host string) (LockInfo, time.Duration, string) {
	b, _, err := readIn(dir, name, path, lockReadLimit)
	var li LockInfo
	if err != nil || json.Unmarshal(b, &li) != nil {
		// A lock we cannot read is judged by its file age: a crash between
		// create and write leaves an empty file behind. The file time is the
		// real clock's, so it is compared with the real clock, not --now.
		// Lstat: a symlink planted at the lock's name is judged as itself.
		st, serr := dir.Lstat(name)
		if serr != nil {
			return li, 0, ""
		}
		age := time.Since(st.ModTime())
		if age >= timeout || len(b) == 0 && age > 5*time.Second {
			return li, age, "unreadable"
		}
		return li, age, ""
	}
	var age time.Duration
	t, ok := ParseTime(li.StartedAt)
	if ok {
		if r, ok := ParseTime(li.RenewedAt); ok && r.After(t) {
			t = r
		}
	}
	if ok && !t.After(now) {
		age = now.Sub(t)
	} else if st, err := dir.Lstat(name); err == nil {
		// A time in the future (a clock ahead, a --now behind the
		// holder's, or a value written to keep every cycle out) would
		// never age; the file's time does, on the real clock, and a live
		// holder's heartbeat keeps it fresh.
		age = time.Since(st.ModTime())
	}
	if age >= timeout {
		return li, age, "timeout"
	}
	// A dead holder whose skill still runs has not finished its cycle:
	// starting another now would run two skills at once.
	if li.Host == host && li.PID > 0 && !pidAlive(li.PID) && !proc.GroupAlive(li.SkillPGID) {
		return li, age, "dead_pid"
	}
	return li, age, ""
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// guard takes an exclusive flock on the lock's directory for the duration
// of a lock transition (acquire, stale recovery, release). Locking the
// directory itself leaves no extra file in the project.
func guard(dir *os.Root) (func(), error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, fmt.Errorf("lock guard: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock guard: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
