package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/ooda-loop/ooda/internal/foldnames"
)

// ErrOutsideProject is wrapped by the errors of ResolveInProject and
// ReadProjectFile that refuse a path for leaving the project.
var ErrOutsideProject = errors.New("outside the project")

// ErrNotRegular is wrapped by the errors of ReadProjectFile for a path that
// is not a regular file (a directory, a named pipe, a device, a socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the errors of ReadProjectFile for a file larger
// than the read limit.
var ErrTooLarge = errors.New("larger than the read limit")

// maxLinks bounds the symlinks followed while resolving one path, as the
// kernel does, so a symlink loop is an error rather than a hang.
const maxLinks = 255

// ResolveInProject returns the absolute path that p names once every
// symlink of its existing part is followed; a relative p is relative to
// root, and the part that does not exist yet is resolved lexically. It
// fails, wrapping ErrOutsideProject, unless the result lies strictly inside
// root (itself resolved the same way): a configured path must never lead
// ooda, or a skill it hands the path to, out of the project, whether by
// "..", by an absolute path or through a symlink.
func ResolveInProject(root, p string) (string, error) {
	r, err := resolveIn(root, p)
	return r.real, err
}

// resolved is a configured path resolved by resolveIn: real is the path
// with every symlink followed, full the path as written made absolute and
// cleaned, and absRoot and realRoot the project root as given and with its
// own symlinks followed. A rule about where a path may point (reserved.go)
// looks at both forms.
type resolved struct {
	real, full, absRoot, realRoot string
	// fsys is the lookups the resolution was made with, for the checks
	// that resolve more paths (reserved.go).
	fsys *lookups
}

// resolveIn is ResolveInProject, also returning what it resolved against.
func resolveIn(root, p string) (resolved, error) { return (*lookups)(nil).resolveIn(root, p) }

// resolveIn is the function resolveIn with l's lookups.
func (l *lookups) resolveIn(root, p string) (resolved, error) {
	if p == "" {
		return resolved{}, errors.New("the path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return resolved{}, fmt.Errorf("%q contains a NUL byte", p)
	}
	absRoot, realRoot, err := l.rootOf(root)
	if err != nil {
		return resolved{}, err
	}
	full := p
	// fullClean is isCleanAbs(full), known without a look at full when
	// full is a clean root and a clean p joined.
	fullClean := false
	if !filepath.IsAbs(p) {
		// filepath.Join cleans, exactly as the state store does when it
		// turns a configured path into the one it opens. A clean p (every
		// default state file) is only appended.
		if isCleanRel(p) && l.rootClean(absRoot) && absRoot != "/" {
			full, fullClean = absRoot+"/"+p, true
		} else {
			full = filepath.Join(absRoot, p)
		}
	}
	if !fullClean {
		fullClean = isCleanAbs(full)
	}
	// resolvePath gets full uncleaned: "link/.." is the parent of the
	// link's target, not the directory holding the link.
	real, err := l.resolveLeaf(full, fullClean)
	if err != nil {
		return resolved{}, fmt.Errorf("%q: %w", p, err)
	}
	if real == realRoot {
		return resolved{}, fmt.Errorf("%q is the project root itself, not a file in it", p)
	}
	clean := full
	if !fullClean {
		clean = filepath.Clean(full)
	}
	if within(realRoot, real) {
		return resolved{real: real, full: clean, absRoot: absRoot, realRoot: realRoot, fsys: l}, nil
	}
	if within(absRoot, clean) || within(realRoot, clean) {
		return resolved{}, fmt.Errorf("%q leads %w %s through a symlink (it resolves to %s)", p, ErrOutsideProject, realRoot, real)
	}
	return resolved{}, fmt.Errorf("%q is %w %s (it names %s)", p, ErrOutsideProject, realRoot, real)
}

// rootOf is the project root made absolute and with its symlinks
// followed, as resolveIn needs it for every configured path: the last
// root asked is remembered.
func (l *lookups) rootOf(root string) (absRoot, realRoot string, err error) {
	if l != nil && l.root.set && l.root.arg == root {
		return l.root.abs, l.root.real, l.root.err
	}
	absRoot, err = filepath.Abs(root)
	if err == nil {
		if realRoot, err = l.resolvePath(absRoot); err != nil {
			err = fmt.Errorf("project root %s: %w", absRoot, err)
		}
	}
	if l != nil {
		l.root = rootLookup{arg: root, abs: absRoot, real: realRoot, err: err, set: true}
	}
	return absRoot, realRoot, err
}

// rootLookup is rootOf's answer for arg.
type rootLookup struct {
	arg, abs, real string
	err            error
	set            bool
	// clean is isCleanAbs(abs), once asked (cleanSet).
	clean, cleanSet bool
}

// rootClean is isCleanAbs(absRoot) for the absRoot rootOf returned last,
// remembered: every configured path asks it of the same root.
func (l *lookups) rootClean(absRoot string) bool {
	if l == nil || !l.root.set || l.root.abs != absRoot {
		return isCleanAbs(absRoot)
	}
	if !l.root.cleanSet {
		l.root.clean, l.root.cleanSet = isCleanAbs(absRoot), true
	}
	return l.root.clean
}

// isCleanRel reports whether p is a relative path that filepath.Clean
// leaves as it is, on a system whose only separator is '/': not empty,
// no empty, "." or ".." component, no trailing separator.
func isCleanRel(p string) bool {
	if filepath.Separator != '/' || p == "" || p[0] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// within reports whether p lies strictly below dir; both are clean and absolute.
func within(dir, p string) bool {
	if runtime.GOOS != "windows" {
		// Clean and absolute, p is below dir exactly when dir and a
		// separator begin it: no filepath.Rel, which cleans both again,
		// for each of a thousand domains' paths and each rule.
		if len(p) <= len(dir) || !strings.HasPrefix(p, dir) {
			return false
		}
		return p[len(dir)] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator))
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// lookups remembers the file system lookups of one check of a
// configuration, so that its paths, which share most of their directories
// (a thousand domains' state files under agent/state/, each checked
// against .git and agent/state/evolve/), cost one lstat per directory
// instead of one per directory per path per rule. A check sees the file
// system as it was at its first look, which is all a check made before
// the files are used could see anyway (a directory's listing may be taken
// a little ahead of the check, while the configuration is decoded: see
// concurrent.go). A nil *lookups remembers nothing.
type lookups struct {
	lstat    map[string]fileLookup
	stat     map[string]fileLookup
	readlink map[string]linkLookup
	// resolved is each path resolved, by the path as given: the root,
	// .git and agent/state/evolve are resolved for every configured path.
	resolved map[string]linkLookup
	// joined is resolveUnder's joins.
	joined map[[2]string]string
	// dirs is what a directory's listing says of the names in it (see
	// absent), by the directory's path.
	dirs map[string]*dirNames
	// under are resolveUnder's latest answers.
	under     [2]underLookup
	nextUnder int
	// root is rootOf's latest answer.
	root rootLookup
	// pre, when not nil, is a listing taken ahead of the lookups: the
	// listing of a directory it is the listing of (listing.of).
	pre *listing
}

// listAfter is how many names of one directory are looked up one by one
// before the directory is listed instead: a configuration's state files
// share agent/state/, and a lookup of a name that does not exist costs,
// the first time, about what listing a dozen entries does.
const listAfter = 8

// maxListed bounds a directory's listing: one holding more entries is
// looked up name by name.
const maxListed = 1 << 16

// dirNames is a directory's listing, for answering "no such file"
// without a lookup: the names, ASCII-lowercased. A listing is used only
// when every name in it is ASCII, and only for ASCII names: on a file
// system that ignores case, or folds Unicode, a name that is not listed
// as written may still be found, and lowercasing ASCII is the only
// folding every such file system agrees with.
type dirNames struct {
	asked int
	names map[string]bool
	// unusable says the listing failed or cannot be used.
	unusable bool
}

type fileLookup struct {
	fi  fs.FileInfo
	err error
}

type linkLookup struct {
	target string
	// missing says (for a resolved path) that the walk met a component
	// that does not exist.
	missing bool
	err     error
}

func newLookups() *lookups { return newLookupsFor(0) }

// newLookupsFor is newLookups for about n paths, its maps sized for them
// (but resolved's: see resolveLeaf).
func newLookupsFor(n int) *lookups {
	return &lookups{lstat: make(map[string]fileLookup, n+16), stat: map[string]fileLookup{}, readlink: map[string]linkLookup{},
		resolved: make(map[string]linkLookup, 16), joined: map[[2]string]string{}, dirs: map[string]*dirNames{}}
}

func (l *lookups) Lstat(p string) (fs.FileInfo, error) {
	if l == nil {
		return os.Lstat(p)
	}
	r, ok := l.lstat[p]
	if !ok {
		if l.absent(p) {
			// As os.Lstat says it: nothing reads more than that it is
			// missing.
			r.err = &fs.PathError{Op: "lstat", Path: p, Err: syscall.ENOENT}
		} else {
			r.fi, r.err = os.Lstat(p)
		}
		l.lstat[p] = r
	}
	return r.fi, r.err
}

// absent reports whether the listing of p's directory shows that p does
// not exist; false when it cannot tell (not listed yet, or a listing that
// cannot be used), and p is then looked up. p is clean and absolute.
func (l *lookups) absent(p string) bool {
	i := strings.LastIndexByte(p, filepath.Separator)
	if i < 0 || !foldnames.ASCII(p[i+1:]) {
		return false
	}
	dir, name := p[:i], p[i+1:]
	if dir == "" {
		dir = string(filepath.Separator)
	}
	d := l.dirs[dir]
	if d == nil {
		d = &dirNames{}
		l.dirs[dir] = d
	}
	if d.unusable {
		return false
	}
	if d.names == nil {
		if d.asked++; d.asked < listAfter {
			return false
		}
		if names, ok := l.pre.of(l.lstat[dir].fi); ok {
			d.names = names
		} else {
			d.names, d.unusable = listNames(dir)
		}
		if d.unusable {
			return false
		}
	}
	return !d.names[foldnames.Lower(name)]
}

// listNames lists dir for dirNames: the ASCII-lowercased names, or
// unusable when the listing fails, is too long or holds a name that is
// not ASCII. dir is opened only as a directory and without blocking: the
// lookups of names in it failing tells nothing of what it is, and a named
// pipe put in its place would otherwise hang the open, and every process
// that loads the configuration with it.
func listNames(dir string) (names map[string]bool, unusable bool) {
	f, err := openDir(dir)
	if err != nil {
		return nil, true
	}
	defer f.Close()
	return foldnames.Read(f, maxListed)
}

// openDir opens dir for listing: a directory, or an error at once for
// anything else.
func openDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

func (l *lookups) Stat(p string) (fs.FileInfo, error) {
	if l == nil {
		return os.Stat(p)
	}
	// What an lstat saw of a path that is not a symlink is what a stat
	// sees, and a path whose lstat failed cannot be stat'ed either: a
	// domain's state file, looked at when it was resolved, costs no
	// second look when it is compared with the config file.
	if r, ok := l.lstat[p]; ok && (r.err != nil || r.fi.Mode()&fs.ModeSymlink == 0) {
		return r.fi, r.err
	}
	r, ok := l.stat[p]
	if !ok {
		r.fi, r.err = os.Stat(p)
		l.stat[p] = r
	}
	return r.fi, r.err
}

func (l *lookups) Readlink(p string) (string, error) {
	if l == nil {
		return os.Readlink(p)
	}
	r, ok := l.readlink[p]
	if !ok {
		r.target, r.err = os.Readlink(p)
		l.readlink[p] = r
	}
	return r.target, r.err
}

// resolvePath follows the symlinks of the existing part of the absolute
// path p, component by component as the kernel does (so "link/.." is the
// parent of the link's target), and appends the part that does not exist
// lexically. Unlike filepath.EvalSymlinks it accepts a dangling symlink:
// its target is where a write through it would land, so that target is
// what must be checked.
func resolvePath(p string) (string, error) { return (*lookups)(nil).resolvePath(p) }

// resolveUnder is resolvePath(filepath.Join(root, dir)), the join itself
// remembered: the same two directories (.git and agent/state/evolve) of
// the same root are resolved for every configured path.
func (l *lookups) resolveUnder(root, dir string) (string, error) {
	if l == nil {
		return resolvePath(filepath.Join(root, dir))
	}
	// The last root and directory asked, answered without hashing them:
	// every configured path asks the same two of the same root.
	for i := range l.under {
		if u := &l.under[i]; u.root == root && u.dir == dir && u.set {
			return u.target, u.err
		}
	}
	key := [2]string{root, dir}
	p, ok := l.joined[key]
	if !ok {
		p = filepath.Join(root, dir)
		l.joined[key] = p
	}
	target, err := l.resolvePath(p)
	l.under[l.nextUnder] = underLookup{root: root, dir: dir, target: target, err: err, set: true}
	l.nextUnder = (l.nextUnder + 1) % len(l.under)
	return target, err
}

// underLookup is one resolveUnder answer, remembered by its arguments.
type underLookup struct {
	root, dir, target string
	err               error
	set               bool
}

// resolvePath is the function resolvePath with l's lookups, the answer
// remembered.
func (l *lookups) resolvePath(p string) (string, error) {
	if l == nil {
		return walkPath(l, p)
	}
	r, ok := l.resolved[p]
	if !ok {
		r.target, r.missing, r.err = l.walkClean(p, false)
		l.resolved[p] = r
	}
	return r.target, r.err
}

// resolveLeaf is resolvePath for a configured path, whose answer
// is not remembered: each domain's state file is resolved once, and
// remembering a thousand answers no one asks again cost more than
// making them. Asked again, the answer is the same, made from what the
// walk remembers (the directory's resolution, each lstat and readlink).
func (l *lookups) resolveLeaf(p string, clean bool) (string, error) {
	if l == nil {
		return walkPath(l, p)
	}
	if r, ok := l.resolved[p]; ok {
		return r.target, r.err
	}
	target, _, err := l.walkClean(p, clean)
	return target, err
}

// walkClean is walkPath(l, p), and whether the walk met a component that
// does not exist (the rest then joined as written). A clean p — every
// configured path relative to the root is joined to it, which cleans it
// — is resolved from its directory's resolution, remembered for the
// other paths in that directory: walkPath walks the directory's
// components first, exactly as it walks them for the directory alone,
// then looks at the last one. Only when that last one is a symlink is p
// walked whole.
// clean says that p is known to be isCleanAbs (false: not known, it is
// looked at).
func (l *lookups) walkClean(p string, clean bool) (target string, missing bool, err error) {
	dir, base := filepath.Split(p)
	if base == "" || base == "." || base == ".." || !(clean || isCleanAbs(p)) || len(dir) <= 1 {
		return l.walkWhole(p)
	}
	dir = dir[:len(dir)-1]
	// The directory of a clean path is clean: its resolution, walked
	// once, is remembered for the other paths in it.
	rd, ok := l.resolved[dir]
	if !ok {
		rd.target, rd.missing, rd.err = l.walkClean(dir, true)
		l.resolved[dir] = rd
	}
	if rd.err != nil {
		return "", false, rd.err
	}
	next := p // the directory has no symlink: p itself, not a copy
	if rd.target != dir {
		next = joinComponent(rd.target, base)
	}
	if rd.missing {
		// walkPath stopped at a missing component on the way; it joins
		// the rest as written.
		return next, true, nil
	}
	fi, err := l.Lstat(next)
	switch {
	case err != nil && notThere(err):
		return next, true, nil
	case err != nil:
		return "", false, err
	case fi.Mode()&fs.ModeSymlink == 0:
		return next, false, nil
	}
	return l.walkWhole(p)
}

// notThere is errors.Is(err, fs.ErrNotExist) || errors.Is(err,
// syscall.ENOTDIR) — the lookup failed because the path does not exist —
// answered without unwrapping for the *fs.PathError of an errno that
// Lstat returns: for a thousand state files that do not exist yet, the
// unwrapping was a tenth of resolving them.
func notThere(err error) bool {
	if pe, ok := err.(*fs.PathError); ok {
		if e, ok := pe.Err.(syscall.Errno); ok {
			return e == syscall.ENOENT || e == syscall.ENOTDIR
		}
	}
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// isCleanAbs reports whether p is an absolute path that filepath.Clean
// leaves as it is, on a system whose only separator is '/' (elsewhere it
// says no, and the path is walked whole): no empty, "." or ".."
// component and no trailing separator, but for the root itself.
func isCleanAbs(p string) bool {
	if filepath.Separator != '/' || len(p) == 0 || p[0] != '/' {
		return false
	}
	return p == "/" || isCleanRel(p[1:])
}

// walkWhole is walkPath(l, p), and whether it met a missing component.
func (l *lookups) walkWhole(p string) (string, bool, error) {
	missing := false
	target, err := walkPathMissing(l, p, &missing)
	return target, missing, err
}

// walkPath is resolvePath's walk, with l's lookups.
func walkPath(l *lookups, p string) (string, error) {
	return walkPathMissing(l, p, nil)
}

// walkPathMissing is walkPath, setting *missing (when not nil) if the walk
// stopped at a component that does not exist.
func walkPathMissing(l *lookups, p string, missing *bool) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	rest := splitPath(p[len(vol):])
	links := 0
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := joinComponent(resolved, c)
		fi, err := l.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				if missing != nil {
					*missing = true
				}
				return filepath.Join(append([]string{next}, rest[i+1:]...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := l.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			resolved = tv + string(filepath.Separator)
			target = target[len(tv):]
		}
		rest = append(splitPath(target), rest[i+1:]...)
		i = -1
	}
	return resolved, nil
}

// joinComponent is filepath.Join(dir, c) for a clean absolute dir and one
// component c that is neither "", "." nor "..", and holds no separator:
// the result is clean as it is, and cleaning it again for every component
// of every configured path was most of walkPath's time.
func joinComponent(dir, c string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + c
	}
	return dir + string(filepath.Separator) + c
}

// splitPath returns the non-empty components of p, split at '/' and the
// OS separator (strings.FieldsFunc with that test, in one allocation).
func splitPath(p string) []string {
	isSep := func(c byte) bool { return c == '/' || c == filepath.Separator }
	n := 0
	for i := 0; i < len(p); i++ {
		if !isSep(p[i]) && (i == 0 || isSep(p[i-1])) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	start := -1
	for i := 0; i <= len(p); i++ {
		switch {
		case i < len(p) && !isSep(p[i]):
			if start < 0 {
				start = i
			}
		case start >= 0:
			out = append(out, p[start:i])
			start = -1
		}
	}
	return out
}

// ReadProjectFile reads the file p (relative to root, or absolute) for
// ooda: only when it resolves inside the project (ResolveInProject), only
// when it is a regular file, and only up to limit bytes. A named pipe is
// refused without blocking and a device or an oversized file without being
// read, so a hostile path cannot hang ooda or exhaust its memory. Errors
// name p, wrap fs.ErrNotExist when the file does not exist, and wrap
// ErrOutsideProject, ErrNotRegular or ErrTooLarge for the refusals.
func ReadProjectFile(root, p string, limit int64) ([]byte, error) {
	real, err := ResolveInProject(root, p)
	if err != nil {
		return nil, err
	}
	// real has no symlink left; O_NOFOLLOW keeps a symlink put in its place
	// since from being followed.
	b, err := readRegular(real, syscall.O_NOFOLLOW, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}

// ReadRegular reads path if it is a regular file of at most limit bytes,
// anywhere (not only inside a project): the configuration file itself,
// before the project is known. Errors wrap ErrNotRegular or ErrTooLarge.
func ReadRegular(path string, limit int64) ([]byte, error) { return readRegular(path, 0, limit) }

// readRegular opens path without blocking (a named pipe with no writer
// would otherwise block the open itself), refuses anything but a regular
// file, and reads at most limit bytes. Errors do not name the file.
func readRegular(path string, flags int, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w (a symlink)", ErrNotRegular)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, FileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes, %w of %s", fi.Size(), ErrTooLarge, SizeString(limit))
	}
	// The file may grow between the stat and the read. The buffer starts
	// at the size the stat gave (a thousand domains' configuration would
	// otherwise be copied a dozen times as it grows from 512 bytes).
	most := limit + 1
	b := make([]byte, 0, min(fi.Size()+1, most))
	for int64(len(b)) < most {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(int64(cap(b))+512, most)-int64(len(b))))
		}
		n, err := f.Read(b[len(b) : len(b)+int(min(int64(cap(b)), most)-int64(len(b)))])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w of %s", ErrTooLarge, SizeString(limit))
	}
	return b, nil
}

// FileKind names what a file that is not a regular file is, for messages
// that refuse it ("a named pipe", "a directory"…).
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "type " + m.Type().String()
}

// SizeString names a size limit in messages: whole MiB when it is one, else
// bytes.
func SizeString(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// DomainNameRule describes the names a domain may have; domain names become
// directory and file names under agent/state/, so they are plain names.
const DomainNameRule = `a domain name must be 1 to 64 letters, digits, "_", "-" or ".", start with a letter or a digit, and not contain ".."`

// ValidDomainName returns an error (DomainNameRule) unless name is a plain
// domain name: it is used as a path component (agent/state/<name>.json,
// agent/state/<name>/lens.json), so "..", "/" and the like would leave the
// state directory. The names of the directories ooda itself uses under
// agent/state/ (ReservedDomainNames) are refused too.
func ValidDomainName(name string) error {
	if !plainName(name) || strings.Contains(name, "..") {
		return errors.New(DomainNameRule)
	}
	if r := reservedDomainName(name); r != "" {
		return fmt.Errorf("domain name %q is reserved: ooda keeps its own files in agent/state/%s/ (reserved names: %s)", name, r, strings.Join(reservedStateDirs, ", "))
	}
	return nil
}

// Pointer renders unescaped tokens as a JSON Pointer ("/domains/a~1b" for
// the tokens "domains", "a/b"), the form every configuration error uses.
func Pointer(tokens ...string) string { return pointer(tokens) }
