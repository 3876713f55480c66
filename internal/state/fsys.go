package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/foldnames"
	"github.com/ooda-loop/ooda/internal/perfstat"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Every file the Store reads or writes is reached through an os.Root
// opened on the project root: the kernel resolves each path component
// relative to a directory descriptor, and a component that leads outside
// the project — "..", an absolute path, or a symlink whose target is
// outside (or absolute) — is refused. Skills, merged pull requests and
// other tools write under agent/state/ too, so a symlink planted there
// must never make ooda read a secret into a state file or write through
// to a file elsewhere (docs/security.md).

// DefaultMaxRead is the read limit of a Store whose MaxRead is unset: the
// default of safety.max_read_mib.
const DefaultMaxRead int64 = config.DefaultMaxReadMiB << 20

// haltReadLimit bounds the HALT file's reason, which is printed and sent
// in notifications; the switch itself is the file's presence.
const haltReadLimit = 64 << 10

// TooLargeError is a file larger than the read limit. It is not read at
// all, so a huge file (or one that never ends) cannot exhaust memory.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the read limit of %s (safety.max_read_mib); not read", e.Path, config.SizeString(e.Limit))
}

// NotRegularError is a path that is not a regular file (a named pipe, a
// device, a socket, a directory). It is not read: a pipe can block forever
// and a device can return endless bytes.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s); not read", e.Path, config.FileKind(e.Mode))
}

// OutsideError is a path that leads outside the project: outside the root
// as written, or through a symlink whose target is outside the project or
// absolute. Nothing is read from or written through it.
type OutsideError struct {
	Path string
	Err  error
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s: outside the project, or reached through a symlink that leads out of it or is absolute (%v); refused", e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *OutsideError) Unwrap() error { return e.Err }

// NameError is a domain or skill name that is not a plain name and so
// cannot name a file or directory under agent/state/.
type NameError struct {
	Kind string // "domain" or "skill"
	Name string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("%s name %q is not a plain name (it must not be empty, start with '.', or contain '/', '\\', '..' or NUL); refused", e.Kind, e.Name)
}

// IsRefused reports whether err is a refusal of this package — a file too
// large, not regular, outside the project, JSON nested deeper than
// MaxJSONDepth, or a name that is not plain — rather than an I/O failure
// or a decode error. A refused report or state
// file is a warning and a skill gap; the cycle goes on without it.
func IsRefused(err error) bool {
	var tl *TooLargeError
	var nr *NotRegularError
	var out *OutsideError
	var ne *NameError
	var de *DepthError
	return errors.As(err, &tl) || errors.As(err, &nr) || errors.As(err, &out) || errors.As(err, &ne) || errors.As(err, &de)
}

// CheckName refuses a domain or skill name that could address anything but
// one entry of its directory. A skill's single leading "/" ("/scan-health")
// is part of the usual spelling and is allowed.
func CheckName(kind, name string) error {
	n := name
	if kind == "skill" {
		n = strings.TrimPrefix(n, "/")
	}
	if n == "" || strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/\\\x00") || strings.Contains(n, "..") {
		return &NameError{Kind: kind, Name: name}
	}
	return nil
}

// errEscapes is os.Root's (unexported) error for a path that escapes the
// root, obtained once by asking a Root for an absolute path.
var errEscapes = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Lstat(string(filepath.Separator) + "x")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
})

func isEscape(err error) bool {
	if err == nil {
		return false
	}
	if e := errEscapes(); e != nil && errors.Is(err, e) {
		return true
	}
	return strings.Contains(err.Error(), "path escapes from parent")
}

// fsErr rewrites an error of an os.Root method so that it names the file
// by display (the path the caller knows), keeping errors.Is working, and
// turns an escape into an *OutsideError.
func fsErr(op, display string, err error) error {
	if err == nil {
		return nil
	}
	var out *OutsideError
	if errors.As(err, &out) {
		return err
	}
	inner := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	if isEscape(inner) {
		return &OutsideError{Path: display, Err: inner}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		inner = le.Err
		if isEscape(inner) {
			return &OutsideError{Path: display, Err: inner}
		}
	}
	return &fs.PathError{Op: op, Path: display, Err: inner}
}

// readIn reads name under r: only a regular file, at most limit bytes. The
// open is non-blocking so that a named pipe without a writer cannot hang
// the reader, and the type is checked on the open descriptor so nothing
// can be swapped in between.
func readIn(r *os.Root, name, display string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fsErr("open", display, err)
	}
	defer f.Close()
	return readOpened(f, display, limit)
}

// readOpened is readIn's reading of the file it opened.
func readOpened(f *os.File, display string, limit int64) ([]byte, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fsErr("stat", display, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, &NotRegularError{Path: display, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, fi, &TooLargeError{Path: display, Limit: limit}
	}
	b, err := readSized(f, fi.Size(), limit)
	if err != nil {
		return nil, fi, fsErr("read", display, err)
	}
	if int64(len(b)) > limit {
		return nil, fi, &TooLargeError{Path: display, Limit: limit}
	}
	return b, fi, nil
}

// readSized reads f, a regular file of size bytes when it was stat'ed,
// up to limit+1 bytes (one more than allowed, to see a file that grew
// past the limit). The buffer is sized once, and a read that returns
// fewer bytes than asked once size bytes are in ends the reading: the
// file ended where its stat said (io.ReadAll would grow its buffer from
// 512 bytes and ask once more, to be told so).
func readSized(f io.Reader, size, limit int64) ([]byte, error) {
	max := limit + 1
	b := make([]byte, 0, min(size+1, max))
	for int64(len(b)) < max {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(int64(cap(b))+512, max)-int64(len(b))))
		}
		want := min(int64(cap(b)), max) - int64(len(b))
		n, err := f.Read(b[len(b) : len(b)+int(want)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if int64(n) < want && int64(len(b)) == size {
			return b, nil
		}
	}
	return b, nil
}

// isTempName says whether name is one writeAtomicIn gives its temporary
// files: "." + the target's name + ".tmp-" + a decimal number (the
// pattern ^\..+\.tmp-[0-9]+$). Matched by hand: the sweep asks it of
// every hidden name of a state directory at every cycle start.
func isTempName(name string) bool {
	if len(name) == 0 || name[0] != '.' {
		return false
	}
	// The digits after the matched ".tmp-" cannot hold another, so it is
	// the last one; the target's name is at least a byte.
	i := strings.LastIndex(name, ".tmp-")
	if i < 2 || i+5 == len(name) {
		return false
	}
	for _, c := range []byte(name[i+5:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// beforeRenameHook, when set (by tests), runs between writing an atomic
// write's temporary file and renaming it: where a killed process leaves
// the temporary file behind.
var beforeRenameHook func()

// tempName is a fresh temporary name for an atomic write of base.
func tempName(base string) string {
	return "." + base + ".tmp-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
}

// writeAtomicIn replaces name under r with data: a temporary file in the
// same directory, fsynced, renamed over the target, then the directory
// fsynced. The rename replaces a symlink at name itself; nothing is ever
// written through one.
func writeAtomicIn(r *os.Root, name, display string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Dir(name), filepath.Base(name)
	if dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", display, fsErr("mkdir", display, err))
		}
	}
	var f *os.File
	var tmp string
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, tempName(base))
		f, err = r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return fmt.Errorf("write %s: %w", display, fsErr("create", display, err))
		}
	}
	defer func() {
		if err != nil {
			_ = r.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", display, err)
	}
	if err = f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", display, err)
	}
	perfstat.FileSync()
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", display, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", display, err)
	}
	if beforeRenameHook != nil {
		beforeRenameHook()
	}
	if err = r.Rename(tmp, name); err != nil {
		return fmt.Errorf("rename %s: %w", display, fsErr("rename", display, err))
	}
	perfstat.DurableWrite()
	return syncDirIn(r, dir, display)
}

func syncDirIn(r *os.Root, dir, display string) error {
	d, err := r.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir of %s: %w", display, fsErr("open", display, err))
	}
	defer d.Close()
	perfstat.DirSync()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir of %s: %w", display, err)
	}
	return nil
}

// appendIn appends line and a newline to name under r with one write(2) on
// an O_APPEND descriptor, then fsyncs. Only a regular file is appended to:
// the open does not block on a named pipe, and a device or pipe is refused.
func appendIn(r *os.Root, name, display string, line []byte) error {
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("append %s: %w", display, fsErr("mkdir", display, err))
		}
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		// A non-blocking open for writing of a pipe nobody reads fails
		// with ENXIO instead of waiting for a reader; a directory fails
		// with EISDIR. Either is a file of the wrong type, set aside by
		// the caller.
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) {
			if fi, serr := r.Stat(name); serr == nil && !fi.Mode().IsRegular() {
				return &NotRegularError{Path: display, Mode: fi.Mode()}
			}
		}
		return fmt.Errorf("append %s: %w", display, fsErr("open", display, err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", display, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return &NotRegularError{Path: display, Mode: fi.Mode()}
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(buf, line...)
	buf = append(buf, '\n')
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", display, err)
	}
	perfstat.Append()
	perfstat.FileSync()
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", display, err)
	}
	return f.Close()
}

// maxRead is the store's read limit.
func (s *Store) maxRead() int64 {
	if s.MaxRead > 0 {
		return s.MaxRead
	}
	return DefaultMaxRead
}

func (s *Store) rootDir() string {
	if s.Root == "" {
		return "."
	}
	return s.Root
}

// rel returns p relative to the project root, refusing a path that is not
// under it as written. Symlinks are judged later, by os.Root.
func (s *Store) rel(p string) (string, error) {
	root := s.rootDir()
	// The usual case, a clean path under a clean root, as filepath.Rel
	// would answer it: without its copies (a thousand domains' files
	// are named each cycle).
	if len(p) > len(root)+1 && p[len(root)] == filepath.Separator && strings.HasPrefix(p, root) &&
		filepath.IsAbs(root) && filepath.Clean(root) == root && filepath.Clean(p) == p {
		return p[len(root)+1:], nil
	}
	if filepath.IsAbs(p) != filepath.IsAbs(root) {
		ar, err1 := filepath.Abs(root)
		ap, err2 := filepath.Abs(p)
		if err := errors.Join(err1, err2); err != nil {
			return "", &OutsideError{Path: p, Err: err}
		}
		root, p = ar, ap
	}
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		// An absolute path may name the project by its resolved location
		// (the root itself reached through a symlink, as /tmp is on some
		// systems).
		if real, rerr := filepath.EvalSymlinks(root); rerr == nil && filepath.IsAbs(p) && real != root {
			if r, err := filepath.Rel(real, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return r, nil
			}
		}
		return "", &OutsideError{Path: p, Err: fmt.Errorf("not under the project root %s", s.rootDir())}
	}
	return r, nil
}

// display names a project file in messages: relative to the root.
func (s *Store) display(p string) string {
	if r, err := s.rel(p); err == nil {
		return r
	}
	return p
}

// openRoot opens the project root; create makes it first when missing (a
// write to a project that has no directory yet).
func (s *Store) openRoot(create bool) (*os.Root, error) {
	r, err := os.OpenRoot(s.rootDir())
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(s.rootDir(), 0o755); err != nil {
			return nil, err
		}
		r, err = os.OpenRoot(s.rootDir())
	}
	return r, err
}

// readJSONBytes is readJSONFile for a caller that needs only the bytes:
// with the root held, a regular file under agent/state/ is read without
// an *os.File (beneathDir.readBytes), into buf when it fits (the result
// then shares buf's memory); everything else, every error but a missing
// file included, is readJSONFile's.
func (s *Store) readJSONBytes(p string, buf []byte) ([]byte, error) {
	if h := s.held(); h != nil && h.state != nil {
		if rel, err := s.rel(p); err == nil {
			if sub, ok := strings.CutPrefix(rel, stateDirPrefix); ok {
				if ok, b, err := h.beneath.readBytes(sub, p, s.maxRead(), buf); ok {
					if err == nil {
						err = checkDepth(p, b)
						if err != nil {
							b = nil
						}
					}
					return b, err
				}
			}
		}
	}
	b, _, err := s.readJSONFile(p)
	return b, err
}

// directReadsOff, set by the tests, makes heldAbsent and readLensBytes
// take the general path (readFileLimit, readJSONBytes) every time: the
// reads they shortcut, kept as their oracle.
var directReadsOff bool

// heldAbsent says whether rel, a clean relative path of a file directly
// in agent/state/ (a domain's state file by default), is missing by the
// held root's listing (heldRoot.absent): what readFileLimit finds first
// for such a file, without making the absolute path it would turn back
// into rel, nor the error the caller would only drop. Observe asks it of
// every domain each cycle, and a domain that never wrote its state file
// has none. False when it cannot tell: the file is then read as always.
func (s *Store) heldAbsent(rel string) bool {
	if directReadsOff || filepath.IsAbs(rel) || filepath.Clean(rel) != rel {
		return false
	}
	// rel is clean and under agent/state/, so s.Path(rel) joined to the
	// root is turned back into rel by s.rel, and readFileLimit asks the
	// listing about this same name.
	sub, ok := strings.CutPrefix(rel, stateDirPrefix)
	if !ok {
		return false
	}
	h := s.held()
	return h != nil && h.state != nil && h.absent(sub)
}

// readLensBytes is readJSONBytes(s.LensPath(domain), buf) for domain, a
// name CheckName accepted: with agent/state/ held, the lens is opened as
// <domain>/lens.json under it directly (what readJSONBytes opens, after
// building the absolute path and turning it back into a relative one),
// and its path is made only for an error that names it.
func (s *Store) readLensBytes(domain string, buf []byte) ([]byte, error) {
	if h := s.held(); h != nil && h.state != nil && !directReadsOff {
		// A plain name: one path element, no separator, no dot-dot.
		if ok, b, err := h.beneath.readBytesIn(domain, "lens.json", "", s.maxRead(), buf); ok {
			if err != nil {
				if pe, isPath := err.(*fs.PathError); isPath {
					pe.Path = s.LensPath(domain)
				}
				return nil, err
			}
			if checkDepth("", b) != nil {
				return nil, checkDepth(s.LensPath(domain), b)
			}
			return b, nil
		}
	}
	return s.readJSONBytes(s.LensPath(domain), buf)
}

// readHeldDomainFile is readJSONFile(path()) for path() the file name
// in the directory of domain (a name CheckName accepted) under
// agent/state/, with agent/state/ held: the file is opened under the
// held directory directly, as readFileLimit opens it after turning the
// absolute path back into a relative one, and the path is made only
// once the file is found. missing says the file does not exist; ok is
// false when the held directory cannot settle the read (readJSONFile
// must then make it).
func (s *Store) readHeldDomainFile(domain, name string, path func() string) (ok, missing bool, b []byte, err error) {
	h := s.held()
	if h == nil || h.state == nil || directReadsOff {
		return false, false, nil, nil
	}
	ok, fd, err := h.beneath.openIn(domain, name, os.O_RDONLY|syscall.O_NONBLOCK)
	if !ok {
		return false, false, nil, nil
	}
	if err != nil {
		return true, true, nil, nil
	}
	p := path()
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	b, _, err = readOpened(f, p, s.maxRead())
	if err == nil {
		if err = checkDepth(p, b); err != nil {
			b = nil
		}
	}
	return true, false, b, err
}

// readFile reads the project file at p (absolute, or relative to the
// working directory like s.Root) within the read limit.
func (s *Store) readFile(p string) ([]byte, fs.FileInfo, error) {
	return s.readFileLimit(p, s.maxRead())
}

func (s *Store) readFileLimit(p string, limit int64) ([]byte, fs.FileInfo, error) {
	rel, err := s.rel(p)
	if err != nil {
		return nil, nil, err
	}
	if h := s.held(); h != nil {
		if h.state != nil {
			if sub, ok := strings.CutPrefix(rel, stateDirPrefix); ok {
				if h.absent(sub) {
					// As fsErr words os.Root's error for a missing file.
					return nil, nil, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
				}
				if ok, b, fi, err := h.beneath.read(sub, p, limit); ok {
					return b, fi, err
				}
				b, fi, err := readIn(h.state, sub, p, limit)
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					return b, fi, err
				}
				// Anything else (a symlink that leads out of
				// agent/state, a refusal) is decided by the project
				// root, as without a hold, so that every error and
				// every symlink inside the project stay the same.
			}
		}
		return readIn(h.root, rel, p, limit)
	}
	r, err := s.openRoot(false)
	if err != nil {
		return nil, nil, fsErr("open", p, err)
	}
	defer r.Close()
	return readIn(r, rel, p, limit)
}

// stateDirPrefix is agent/state/ relative to the project root.
var stateDirPrefix = filepath.Join("agent", "state") + string(filepath.Separator)

// heldRoot is a project root held open by HoldRoot, with agent/state/
// opened under it (nil when it could not be).
type heldRoot struct {
	root, state *os.Root
	// beneath is agent/state/ for the reads that need no os.Root (see
	// beneathDir).
	beneath beneathDir
	holds   int

	// listing is agent/state/'s listing (see absent).
	listing struct {
		sync.Mutex
		asked    int
		names    map[string]bool
		unusable bool
	}
}

// listAfter is how many files directly in agent/state/ a hold reads one
// by one before it lists the directory instead: a domain's state file
// (agent/state/<domain>.json by default) often does not exist, and the
// first lookup of a name that is not there costs, on a directory of a
// thousand entries, what listing a dozen of them does.
const listAfter = 8

// maxListed bounds the listing: a larger agent/state/ is looked up name
// by name.
const maxListed = 1 << 16

// absent reports whether name, a file directly in agent/state/, is
// missing by the directory's listing, made once per hold after the
// first few such reads; false when the listing cannot tell, and the file
// is then opened. The listing is used only for an ASCII name and when
// every name listed is ASCII, compared without regard to ASCII case: on
// a file system that ignores case or folds Unicode, a name not listed as
// written may still be found, and lowercasing ASCII is the only folding
// all of them agree with. Like a read made at the time of the listing,
// it does not see a file created during the hold; the holds are the
// reading loops of one step.
func (h *heldRoot) absent(name string) bool {
	if strings.IndexByte(name, filepath.Separator) >= 0 || !foldnames.ASCII(name) {
		return false
	}
	l := &h.listing
	l.Lock()
	defer l.Unlock()
	if l.unusable {
		return false
	}
	if l.names == nil {
		if l.asked++; l.asked < listAfter {
			return false
		}
		l.names, l.unusable = listNames(h.state)
		if l.unusable {
			return false
		}
	}
	return !l.names[foldnames.Lower(name)]
}

// listNames lists r's directory for absent: the ASCII-lowercased names,
// or unusable when the listing fails, is too long or holds a name that
// is not ASCII.
func listNames(r *os.Root) (names map[string]bool, unusable bool) {
	d, err := r.Open(".")
	if err != nil {
		return nil, true
	}
	defer d.Close()
	return foldnames.Read(d, maxListed)
}

// openSubRoot is r.OpenRoot(rel) that never blocks. os.Root opens a
// directory beneath it without O_DIRECTORY, so a named pipe planted where
// the directory should be made the open wait for a writer forever (`ooda
// status` hung on an agent/state that was a FIFO). The path is opened
// first as a directory only, without blocking: anything else is refused
// at once.
func openSubRoot(r *os.Root, rel string) (*os.Root, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f.Close()
	return r.OpenRoot(rel)
}

// holds are the roots held open, by store.
var holds struct {
	sync.Mutex
	m map[*Store]*heldRoot
}

// HoldRoot keeps the project root open, and agent/state/ under it, until
// release is called, so that a run of reads — a file or two per domain —
// does not open the root and walk agent/state/ again for each file: a
// thousand domains' lenses cost a thousand opens of the lens, not four
// thousand of the directories on the way to it. Every read stays
// contained in the project exactly as without a hold (a read that
// agent/state/ alone cannot settle is made from the project root).
// Writes are not affected. Holds nest. Do not hold the root while a
// skill runs: the skill may move directories, and what it leaves is read
// from the paths as they are then.
func (s *Store) HoldRoot() (release func()) {
	holds.Lock()
	defer holds.Unlock()
	if h := holds.m[s]; h != nil {
		h.holds++
		return s.releaseRoot
	}
	r, err := os.OpenRoot(s.rootDir())
	if err != nil {
		// Each read opens the root itself, and reports the error.
		return func() {}
	}
	h := &heldRoot{root: r, holds: 1}
	if sr, err := openSubRoot(r, filepath.Join("agent", "state")); err == nil {
		h.state = sr
		h.beneath = openBeneathDir(sr)
	}
	if holds.m == nil {
		holds.m = map[*Store]*heldRoot{}
	}
	holds.m[s] = h
	return s.releaseRoot
}

func (s *Store) releaseRoot() {
	holds.Lock()
	defer holds.Unlock()
	h := holds.m[s]
	if h == nil {
		return
	}
	if h.holds--; h.holds > 0 {
		return
	}
	delete(holds.m, s)
	h.beneath.close()
	if h.state != nil {
		h.state.Close()
	}
	h.root.Close()
}

// held returns the store's held root, or nil.
func (s *Store) held() *heldRoot {
	holds.Lock()
	defer holds.Unlock()
	return holds.m[s]
}

// readRoot is the root a lookup reads through: the held one, or one
// opened for it (done closes it).
func (s *Store) readRoot() (r *os.Root, done func(), err error) {
	if h := s.held(); h != nil {
		return h.root, func() {}, nil
	}
	r, err = s.openRoot(false)
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// ReadEach calls read(i) for every i < n with the root held (HoldRoot),
// and returns when every call has returned. Reading a file per domain is
// mostly system calls, which another core can make meanwhile: when n is
// large, the calls are shared among a few goroutines (at most
// GOMAXPROCS), so read must be safe to call concurrently — it only reads
// (the Store's reads are), and keeps what it read at its own index, for
// the caller to use in order once ReadEach returns. A panic in read is
// raised again in the caller.
func (s *Store) ReadEach(n int, read func(i int)) {
	defer s.HoldRoot()()
	eachParallel(n, read)
}

// Sharing a loop of file system calls among goroutines: below
// parallelMin items one goroutine does them all (a project of a few
// domains starts no goroutine), and each goroutine takes parallelChunk
// items at a time.
const (
	parallelMin   = 64
	parallelChunk = 16
	parallelMax   = 4
)

// eachParallel calls fn(i) for every i < n, on up to parallelMax
// goroutines (never more than GOMAXPROCS), and returns when all calls
// have; a panic in fn is raised again here, once all have stopped.
func eachParallel(n int, fn func(i int)) { eachShared(n, parallelMin, parallelChunk, fn) }

// eachShared is eachParallel below least items done by one goroutine,
// and chunk items taken at a time.
func eachShared(n, least, chunk int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), parallelMax, (n+chunk-1)/chunk)
	if n < least || workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	if sharedHook != nil {
		sharedHook(workers)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var panicked atomic.Pointer[any]
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				panicked.CompareAndSwap(nil, &r)
			}
		}()
		for {
			start := int(next.Add(int64(chunk))) - chunk
			if start >= n || panicked.Load() != nil {
				return
			}
			for i := start; i < min(start+chunk, n); i++ {
				fn(i)
			}
		}
	}
	// The caller is one of the workers: it would only wait otherwise.
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
}

// sharedHook, when set (by tests), is told how many goroutines an
// eachShared that shares its items runs.
var sharedHook func(workers int)

// WriteProjectFile writes data to path (relative to the project root, or
// absolute inside it) atomically, contained in the project — a symlink
// or a path leading out of it is refused — with the known secrets masked.
// It is how a built-in skill writes its domain state file and its report,
// as the engine writes its own files.
func (s *Store) WriteProjectFile(path string, data []byte) error {
	return s.writeFile(s.Path(path), data)
}

// writeFile replaces the project file at p atomically with data, after
// replacing the value of every known secret with "***": whatever a skill,
// a judge or a forge echoed into the text, no credential reaches a file
// that may be committed. A file that already holds exactly those bytes
// is left in place (and synced); in a batch (Store.Batch) the write waits
// for Commit.
func (s *Store) writeFile(p string, data []byte) error {
	rel, err := s.rel(p)
	if err != nil {
		return err
	}
	return s.writeStaged(rel, p, data)
}

// appendFile appends one redacted line to the project file at p.
func (s *Store) appendFile(p string, line []byte) error {
	rel, err := s.rel(p)
	if err != nil {
		return err
	}
	r, err := s.openRoot(true)
	if err != nil {
		return fmt.Errorf("append %s: %w", p, err)
	}
	defer r.Close()
	return appendIn(r, rel, p, secret.RedactBytes(line))
}

// lstat is os.Lstat within the project.
func (s *Store) lstat(p string) (fs.FileInfo, error) {
	rel, err := s.rel(p)
	if err != nil {
		return nil, err
	}
	r, done, err := s.readRoot()
	if err != nil {
		return nil, fsErr("lstat", p, err)
	}
	defer done()
	fi, err := r.Lstat(rel)
	return fi, fsErr("lstat", p, err)
}

// remove is os.Remove within the project; a symlink is removed itself.
func (s *Store) remove(p string) error {
	rel, err := s.rel(p)
	if err != nil {
		return err
	}
	r, err := s.openRoot(false)
	if err != nil {
		return fsErr("remove", p, err)
	}
	defer r.Close()
	return fsErr("remove", p, r.Remove(rel))
}

// mkdirAll is os.MkdirAll within the project.
func (s *Store) mkdirAll(p string) error {
	rel, err := s.rel(p)
	if err != nil {
		return err
	}
	r, err := s.openRoot(true)
	if err != nil {
		return fsErr("mkdir", p, err)
	}
	defer r.Close()
	return fsErr("mkdir", p, r.MkdirAll(rel, 0o755))
}

// readDir lists a project directory without following a symlink out.
func (s *Store) readDir(p string) ([]fs.DirEntry, error) {
	r, done, err := s.readRoot()
	if err != nil {
		if _, rerr := s.rel(p); rerr != nil {
			return nil, rerr
		}
		return nil, fsErr("open", p, err)
	}
	defer done()
	return s.readDirIn(r, p)
}

// openDirChecked opens the directory p through the project root r, and
// refuses anything else than a directory there.
func (s *Store) openDirChecked(r *os.Root, p string) (*os.File, error) {
	rel, err := s.rel(p)
	if err != nil {
		return nil, err
	}
	d, err := openDirIn(r, rel)
	if err != nil {
		return nil, fsErr("open", p, err)
	}
	fi, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, fsErr("stat", p, err)
	}
	if !fi.IsDir() {
		d.Close()
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: syscall.ENOTDIR}
	}
	return d, nil
}

// readDirIn is readDir through the project root r.
func (s *Store) readDirIn(r *os.Root, p string) ([]fs.DirEntry, error) {
	d, err := s.openDirChecked(r, p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	return ents, fsErr("readdir", p, err)
}

// readDirTypesIn is readDirIn for a caller that needs each entry's name
// and type only. A directory opened through an os.Root lists its entries
// with an lstat each (the *os.File cannot look them up lazily); this one
// takes the type the directory listing itself gives, as os.ReadDir does,
// from a second descriptor of the same directory — an lstat, made
// relative to that descriptor, only where the file system gives no type.
// The entries' Info must not be used: it would look the entry up by its
// path.
func (s *Store) readDirTypesIn(r *os.Root, p string) ([]fs.DirEntry, error) {
	d, err := s.openDirChecked(r, p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	dup, err := dupFile(d)
	if err != nil {
		ents, err := d.ReadDir(-1)
		return ents, fsErr("readdir", p, err)
	}
	defer dup.Close()
	ents, err := dup.ReadDir(-1)
	return ents, fsErr("readdir", p, err)
}

// dupFile is a second *os.File of f's descriptor, made by dup(2) and
// not through an os.Root.
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(ufd uintptr) {
		// Under ForkLock, as os opens its files: no process started
		// meanwhile inherits the descriptor.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		fd, derr = syscall.Dup(int(ufd))
		if derr == nil {
			syscall.CloseOnExec(fd)
		}
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// movable reports whether a refused path can be set aside: the refusal is
// about the file itself (its size, its type, or a symlink at its own name),
// not about a directory on the way to it.
func (s *Store) movable(p string, refusal error) bool {
	var tl *TooLargeError
	var nr *NotRegularError
	var out *OutsideError
	switch {
	case errors.As(refusal, &tl), errors.As(refusal, &nr), isDepth(refusal):
		return true
	case errors.As(refusal, &out):
		fi, err := s.lstat(p)
		return err == nil && fi.Mode().Type() == fs.ModeSymlink
	}
	return false
}

// Resolve returns the path of a project file named in the configuration
// (relative to the root, or absolute inside it), refusing with an
// *OutsideError a path outside the project as written or reached through
// a symlink that leads out. Use it for a path handed to another process
// ($OODA_STATE_FILE, the HALT file watched while a skill runs). A missing
// file is not an error.
func (s *Store) Resolve(rel string) (string, error) {
	p := s.Path(rel)
	r, err := s.rel(p)
	if err != nil {
		return "", err
	}
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		return "", fsErr("open", p, err)
	}
	defer root.Close()
	if _, err := root.Stat(r); err != nil && isEscape(err) {
		return "", fsErr("stat", p, err)
	}
	return p, nil
}

// openDirIn opens name under r for listing. O_NONBLOCK changes nothing
// for a directory, and spares the open the round of fcntl calls that
// would try to make it pollable; a named pipe put in its place cannot
// block the open either.
func openDirIn(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// RemoveTempFiles deletes the temporary files (".<name>.tmp-<digits>")
// that an atomic write leaves when its process is killed between creating
// and renaming them, in agent/state/, each directory directly under it,
// and agent/state/evolve/runs and proposed-skills. Only names of exactly
// that shape are touched (not the lock's, which its holder's heartbeat
// rewrites), only regular files and symlinks (a symlink is
// removed itself, never followed), and no directory outside the project is
// entered. Call it while holding the cycle lock, so no write of this
// project is in flight. It returns the removed paths, relative to the root.
//
// It runs every cycle over a directory per domain, so each directory is
// listed once, through agent/state/ opened once, and the directories
// under it by name only: only a name of the temporary shape costs a look
// at its type.
func (s *Store) RemoveTempFiles() ([]string, error) { return s.removeTempFiles(true) }

// RemoveTempFilesOutsideDomains is RemoveTempFiles without the domains'
// directories: agent/state/ itself and evolve/ (with runs/ and
// proposed-skills/). Only a cycle writes a domain's directory (its lens
// and lens changelog), so a temporary file can be left there only by a
// cycle killed while it held the lock — which the next cycle finds as a
// stale lock, or as a state.json still saying a cycle is in progress, and
// then calls RemoveTempFiles. Listing a
// directory per domain is most of the cleanup's cost with many domains.
func (s *Store) RemoveTempFilesOutsideDomains() ([]string, error) { return s.removeTempFiles(false) }

func (s *Store) removeTempFiles(domains bool) ([]string, error) {
	stateDir := filepath.Join(s.rootDir(), "agent", "state")
	r, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fsErr("open", stateDir, err)
	}
	defer r.Close()
	// The listing of agent/state/ itself is readDir's, errors and all,
	// but for the look at each entry's type (see readDirTypesIn).
	ents, err := s.readDirTypesIn(r, stateDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	sr, err := openSubRoot(r, filepath.Join("agent", "state"))
	if err != nil {
		return nil, fsErr("open", stateDir, err)
	}
	defer sr.Close()
	beneath := openBeneathDir(sr)
	defer beneath.close()
	// dirResult is what the cleanup of one directory removed and met.
	type dirResult struct {
		removed []string
		errs    []error
	}
	// removeTemps removes the temporary files among names, the entries
	// of the directory sub of agent/state/ (dir on disk), into res.
	removeTemps := func(res *dirResult, sub, dir string, names []string) {
		for _, name := range names {
			if !isTempName(name) {
				continue
			}
			// The lock's own renewal may be writing one right now, from
			// the heartbeat of the cycle that holds it.
			if strings.HasPrefix(name, "."+LockFile+".tmp-") {
				continue
			}
			p := filepath.Join(dir, name)
			in := filepath.Join(sub, name)
			fi, err := sr.Lstat(in)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					res.errs = append(res.errs, fsErr("lstat", p, err))
				}
				continue
			}
			if t := fi.Mode().Type(); t != 0 && t != fs.ModeSymlink {
				continue
			}
			if err := sr.Remove(in); err != nil {
				if err = fsErr("remove", p, err); !errors.Is(err, fs.ErrNotExist) {
					res.errs = append(res.errs, err)
				}
				continue
			}
			res.removed = append(res.removed, s.display(p))
		}
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	var top dirResult
	removeTemps(&top, ".", stateDir, names)
	// listDir removes the temporary files of the directory entry e into
	// res.
	listDir := func(e fs.DirEntry, res *dirResult) {
		// A symlinked directory is not entered: its files are someone
		// else's, and a link out of the project is refused anyway.
		if !e.IsDir() || (!domains && e.Name() != filepath.Base(s.EvolveDir)) {
			return
		}
		dir := filepath.Join(stateDir, e.Name())
		buf := direntBufs.Get().(*[]byte)
		ok, entries, err := beneath.names(e.Name(), *buf)
		direntBufs.Put(buf)
		if ok {
			// Gone since the listing: nothing to remove, as below.
			if err == nil {
				slices.Sort(entries)
				removeTemps(res, e.Name(), dir, entries)
			}
			return
		}
		d, err := openDirIn(sr, e.Name())
		if err != nil {
			if err = fsErr("open", dir, err); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				res.errs = append(res.errs, err)
			}
			return
		}
		entries, err = d.Readdirnames(-1)
		d.Close()
		if err != nil {
			if err = fsErr("readdir", dir, err); !errors.Is(err, syscall.ENOTDIR) {
				res.errs = append(res.errs, err)
			}
			return
		}
		slices.Sort(entries)
		removeTemps(res, e.Name(), dir, entries)
	}
	var results []dirResult
	if domains {
		// A directory per domain: listed on a few goroutines, each
		// one's findings kept at its index, so that they are reported
		// in the same order as by one.
		results = make([]dirResult, len(ents))
		eachParallel(len(ents), func(i int) { listDir(ents[i], &results[i]) })
	} else {
		// Only agent/state/evolve/ is entered: the one entry of that
		// name, not a thousand domains' entries handed to goroutines
		// to be passed over.
		for _, e := range ents {
			if e.Name() == filepath.Base(s.EvolveDir) {
				var res dirResult
				listDir(e, &res)
				results = append(results, res)
			}
		}
	}
	removed, errs := top.removed, top.errs
	for _, res := range results {
		removed = append(removed, res.removed...)
		errs = append(errs, res.errs...)
	}
	// runs/ holds a file or two for each of the last hundred cycles: read
	// for names and types only, it costs no lstat per entry.
	for _, dir := range []string{filepath.Join(s.EvolveDir, "runs"), filepath.Join(s.EvolveDir, "proposed-skills")} {
		ents, err := s.readDirTypesIn(r, dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range ents {
			if !isTempName(e.Name()) {
				continue
			}
			if strings.HasPrefix(e.Name(), "."+LockFile+".tmp-") {
				continue
			}
			if t := e.Type(); t != 0 && t != fs.ModeSymlink {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if err := s.remove(p); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			removed = append(removed, s.display(p))
		}
	}
	return removed, errors.Join(errs...)
}

// Reading beneath agent/state/ in one system call. os.Root opens
// agent/state/d/lens.json component by component (the directory, the
// file, then the directory closed again) and makes each descriptor an
// *os.File it tries to register with the poller; a cycle does that for
// each of a thousand domains' lenses and lens changelogs. Linux (5.6 and
// later) has openat2, which with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS
// opens the same file in one call when no symlink is on the way, and
// refuses otherwise. Two of its answers are taken: the file, opened with
// no symlink followed and nothing outside the directory reached — the
// file os.Root would have opened — and "no such file", which os.Root
// would have given too, walking the same real directories. Every other
// answer (a symlink on the way, a file that is a directory, an error),
// and every system without openat2, is left to os.Root, which decides
// it as it always did.

const (
	resolveNoSymlinks = 0x04 // RESOLVE_NO_SYMLINKS (linux/openat2.h)
	resolveBeneath    = 0x08 // RESOLVE_BENEATH
)

// openat2Trap is openat2's system call number; 0 where it is not used:
// any system but Linux, and the architectures whose number is not the
// common one (MIPS numbers its calls from 4000, 5000 or 6000).
var openat2Trap = func() uintptr {
	if runtime.GOOS != "linux" {
		return 0
	}
	switch runtime.GOARCH {
	case "386", "amd64", "arm", "arm64", "loong64", "ppc64", "ppc64le", "riscv64", "s390x":
		return 437
	}
	return 0
}()

// openat2Off is set once the kernel refuses openat2 itself (a kernel
// older than 5.6, or a seccomp filter that forbids the call): every read
// takes os.Root's path from then on.
var openat2Off atomic.Bool

// openHow is the kernel's struct open_how.
type openHow struct{ flags, mode, resolve uint64 }

// beneathDir is a directory opened for openat2; its zero value opens
// nothing, and every read through it is left to os.Root.
type beneathDir struct {
	f  *os.File
	rc syscall.RawConn
}

// openBeneathDir opens r's own directory for openat2, or returns the
// zero beneathDir when openat2 is not used.
func openBeneathDir(r *os.Root) beneathDir {
	if openat2Trap == 0 || openat2Off.Load() {
		return beneathDir{}
	}
	f, err := r.Open(".")
	if err != nil {
		return beneathDir{}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return beneathDir{}
	}
	return beneathDir{f: f, rc: rc}
}

func (d beneathDir) close() {
	if d.f != nil {
		d.f.Close()
	}
}

// open opens name, a clean relative path, under d with flags, following
// no symlink: a descriptor, or syscall.ENOENT. ok is false when openat2
// cannot settle it and os.Root must.
func (d beneathDir) open(name string, flags int) (ok bool, fd int, err error) {
	return d.openIn(name, "", flags)
}

// openIn is open of dir/file, or of dir alone when file is "": the
// name is put together in the call's own buffer, not in a string made
// for the call.
func (d beneathDir) openIn(dir, file string, flags int) (ok bool, fd int, err error) {
	if d.rc == nil || openat2Off.Load() {
		return false, -1, nil
	}
	// A NUL cannot be passed in a path (syscall.BytePtrFromString
	// refuses it): os.Root decides.
	if strings.IndexByte(dir, 0) >= 0 || strings.IndexByte(file, 0) >= 0 {
		return false, -1, nil
	}
	c := openCalls.Get().(*openCall)
	defer openCalls.Put(c)
	c.path = append(c.path[:0], dir...)
	if file != "" {
		c.path = append(c.path, filepath.Separator)
		c.path = append(c.path, file...)
	}
	c.path = append(c.path, 0)
	c.how = openHow{flags: uint64(flags | syscall.O_CLOEXEC | syscall.O_NOFOLLOW), resolve: resolveBeneath | resolveNoSymlinks}
	c.r1, c.errno = 0, 0
	if cerr := d.rc.Control(c.call); cerr != nil {
		return false, -1, nil
	}
	switch c.errno {
	case 0:
		return true, int(c.r1), nil
	case syscall.ENOENT:
		return true, -1, syscall.ENOENT
	case syscall.ENOSYS, syscall.EPERM, syscall.EINVAL, syscall.E2BIG:
		// The call itself is refused, whatever the path.
		openat2Off.Store(true)
	}
	return false, -1, nil
}

// openCall is one openat2 call: its NUL-terminated path, its open_how,
// its results, and the function RawConn.Control runs, made once. A
// cycle makes the call for every domain's lens and lens changelog: kept
// in a pool, the call allocates nothing (a closure, the path and the
// open_how for each would reach the heap through Control).
type openCall struct {
	path  []byte
	how   openHow
	r1    uintptr
	errno syscall.Errno
	call  func(dfd uintptr)
}

var openCalls = sync.Pool{New: func() any {
	c := &openCall{path: make([]byte, 0, 64)}
	c.call = func(dfd uintptr) {
		c.r1, _, c.errno = syscall.Syscall6(openat2Trap, dfd, uintptr(unsafe.Pointer(&c.path[0])), uintptr(unsafe.Pointer(&c.how)), unsafe.Sizeof(c.how), 0, 0)
	}
	return c
}}

// read is readIn of name under d (display names it in errors); ok is
// false when os.Root must read it.
func (d beneathDir) read(name, display string, limit int64) (ok bool, b []byte, fi fs.FileInfo, err error) {
	ok, fd, err := d.open(name, os.O_RDONLY|syscall.O_NONBLOCK)
	if !ok {
		return false, nil, nil, nil
	}
	if err != nil {
		// As fsErr words os.Root's error for a missing file.
		return true, nil, nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	f := os.NewFile(uintptr(fd), display)
	defer f.Close()
	b, fi, err = readOpened(f, display, limit)
	return true, b, fi, err
}

// readBytes is read for a caller that needs only the bytes of a
// regular file within limit: no *os.File, only the four system calls
// (open, fstat, read, close). ok is false — and read or os.Root must
// decide, with their errors — for anything else: a file that is not
// regular or is larger than limit, and any error but a missing file.
func (d beneathDir) readBytes(name, display string, limit int64, buf []byte) (ok bool, b []byte, err error) {
	return d.readBytesIn(name, "", display, limit, buf)
}

// readBytesIn is readBytes of dir/file (openIn).
func (d beneathDir) readBytesIn(dir, file, display string, limit int64, buf []byte) (ok bool, b []byte, err error) {
	ok, fd, err := d.openIn(dir, file, os.O_RDONLY|syscall.O_NONBLOCK)
	if !ok || err != nil {
		if err != nil {
			err = &fs.PathError{Op: "open", Path: display, Err: err}
		}
		return ok, nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > limit {
		return false, nil, nil
	}
	size := st.Size
	if b = buf[:0]; int64(cap(b)) < size+1 {
		b = make([]byte, 0, size+1)
	}
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = slices.Grow(b, 512)
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err != nil {
			return false, nil, nil
		}
		if n == 0 {
			return true, b, nil
		}
		b = b[:len(b)+n]
		if int64(len(b)) == size && len(b) < cap(b) {
			// As readSized: a read that ends where the stat said the
			// file does, with room left, is the whole file.
			return true, b, nil
		}
	}
	// Grown past the limit since the stat: read decides.
	return false, nil, nil
}

// direntBufs are buffers for beneathDir.names, one per goroutine listing.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

// names lists the directory name under d (the names only, as
// Readdirnames, in no particular order), or returns syscall.ENOENT; ok is
// false when os.Root must list it (a symlink on the way, not a
// directory, an error while listing).
func (d beneathDir) names(name string, buf []byte) (ok bool, names []string, err error) {
	ok, fd, err := d.open(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
	if !ok || err != nil {
		return ok, nil, err
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil {
			return false, nil, nil
		}
		if n <= 0 {
			return true, names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}
