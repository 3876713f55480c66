package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// LockInfo is the content of agent/state/evolve/.lock.
type LockInfo struct {
	PID       int    `json:"pid"`
	Host      string `json:"host"`
	StartedAt string `json:"started_at"`
}

// ErrLocked reports a live lock held by another cycle (0-B).
type ErrLocked struct {
	Holder LockInfo
	Age    time.Duration
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
}

// Lock is a held cycle lock; Release removes it.
type Lock struct {
	path string
	info LockInfo
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Release removes the lock file if it is still ours. It is safe to call
// more than once.
func (l *Lock) Release() error {
	if l == nil || l.path == "" {
		return nil
	}
	b, err := os.ReadFile(l.path)
	if err == nil {
		var cur LockInfo
		if json.Unmarshal(b, &cur) == nil && (cur.PID != l.info.PID || cur.Host != l.info.Host || cur.StartedAt != l.info.StartedAt) {
			l.path = ""
			return nil // someone else's lock now: never delete it
		}
	}
	err = os.Remove(l.path)
	l.path = ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}

// AcquireLock takes the cycle lock with O_CREATE|O_EXCL so that two
// processes can never both hold it. A lock older than timeout, or held by a
// dead PID on this host, is stale: it is removed (and reported) and the
// acquisition retried once. A live lock returns *ErrLocked.
func AcquireLock(path string, now time.Time, timeout time.Duration) (*Lock, *StaleLock, error) {
	host, _ := os.Hostname()
	info := LockInfo{PID: os.Getpid(), Host: host, StartedAt: FormatTime(now)}
	data, _ := json.Marshal(info)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	var stale *StaleLock
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(data)
			serr := f.Sync()
			cerr := f.Close()
			if werr != nil || serr != nil || cerr != nil {
				_ = os.Remove(path)
				return nil, nil, fmt.Errorf("lock: write %s: %v", path, errors.Join(werr, serr, cerr))
			}
			return &Lock{path: path, info: info}, stale, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("lock: %w", err)
		}
		holder, age, why := inspectLock(path, now, timeout, host)
		if why == "" {
			return nil, nil, &ErrLocked{Holder: holder, Age: age}
		}
		// Remove the stale lock only if it is still the same file we judged:
		// rename it aside first so a concurrent recoverer cannot delete a
		// fresh lock taken in between.
		aside := path + ".stale-" + strconv.Itoa(os.Getpid())
		if err := os.Rename(path, aside); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, nil, fmt.Errorf("lock: remove stale %s: %w", path, err)
		}
		b, _ := os.ReadFile(aside)
		var moved LockInfo
		if json.Unmarshal(b, &moved) == nil && moved != holder && why != "unreadable" {
			// We moved a lock that was taken after we inspected: put it back.
			_ = os.Rename(aside, path)
			return nil, nil, &ErrLocked{Holder: moved, Age: 0}
		}
		_ = os.Remove(aside)
		stale = &StaleLock{Holder: holder, Age: age, Why: why}
	}
	return nil, nil, &ErrLocked{}
}

// ReadLock returns the current lock holder, if any.
func ReadLock(path string) (LockInfo, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return LockInfo{}, false
	}
	var li LockInfo
	_ = json.Unmarshal(b, &li)
	return li, true
}

func inspectLock(path string, now time.Time, timeout time.Duration, host string) (LockInfo, time.Duration, string) {
	b, err := os.ReadFile(path)
	var li LockInfo
	if err != nil || json.Unmarshal(b, &li) != nil {
		// A lock we cannot read is judged by its file age: a crash between
		// create and write leaves an empty file behind.
		st, serr := os.Stat(path)
		if serr != nil {
			return li, 0, ""
		}
		age := now.Sub(st.ModTime())
		if age >= timeout || len(b) == 0 && time.Since(st.ModTime()) > 5*time.Second {
			return li, age, "unreadable"
		}
		return li, age, ""
	}
	var age time.Duration
	if t, ok := ParseTime(li.StartedAt); ok {
		age = now.Sub(t)
	} else if st, err := os.Stat(path); err == nil {
		age = now.Sub(st.ModTime())
	}
	if age >= timeout {
		return li, age, "timeout"
	}
	if li.Host == host && li.PID > 0 && !pidAlive(li.PID) {
		return li, age, "dead_pid"
	}
	return li, age, ""
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
