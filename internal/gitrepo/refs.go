package gitrepo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxRefFile bounds a loose ref or HEAD read without git: either is one
// line.
const maxRefFile = 4096

// readSmall reads a regular file (not a symbolic link) of at most limit
// bytes; fs.ErrNotExist when there is none, errNotPlain when it is
// something else.
func readSmall(name string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, errNotPlain
	}
	b, err := os.ReadFile(name)
	if err != nil || int64(len(b)) > limit {
		return nil, errNotPlain
	}
	return b, nil
}

// headBranch is the branch HEAD names in gitDir — "ref: refs/heads/<name>"
// on one line — and nothing else: a detached HEAD, a HEAD that is a
// symbolic link or names something other than a branch is errNotPlain.
func headBranch(gitDir string) (string, error) {
	b, err := readSmall(filepath.Join(gitDir, "HEAD"), maxRefFile)
	if err != nil {
		return "", errNotPlain
	}
	ref, ok := strings.CutPrefix(string(b), "ref: ")
	ref, nl := strings.CutSuffix(ref, "\n")
	if !ok || !nl || !strings.HasPrefix(ref, "refs/heads/") || CheckRefName(ref) != nil || strings.ContainsAny(ref, "\n\r") {
		return "", errNotPlain
	}
	return ref, nil
}

// readRef is the object a branch points to in gitDir's files: its loose
// ref, else its line in packed-refs. fs.ErrNotExist when neither has it
// (an unborn branch); errNotPlain for anything git might read otherwise (a
// symbolic ref, a malformed file).
func readRef(gitDir, ref string) (string, error) {
	b, err := readSmall(filepath.Join(gitDir, filepath.FromSlash(ref)), maxRefFile)
	if err == nil {
		sha, ok := strings.CutSuffix(string(b), "\n")
		if !ok || !ValidSHA(sha) || strings.ToLower(sha) != sha {
			return "", errNotPlain
		}
		return sha, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return packedRef(gitDir, ref)
}

// maxPackedRefs bounds the packed-refs file read without git.
const maxPackedRefs = 64 << 20

// packedRef is ref's line in gitDir/packed-refs: "<oid> <ref>".
func packedRef(gitDir, ref string) (string, error) {
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fs.ErrNotExist
	}
	if err != nil {
		return "", errNotPlain
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPackedRefs {
		return "", errNotPlain
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxPackedRefs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "^") {
			continue
		}
		sha, name, ok := strings.Cut(line, " ")
		if ok && name == ref {
			if !ValidSHA(sha) || strings.ToLower(sha) != sha {
				return "", errNotPlain
			}
			return sha, nil
		}
	}
	if sc.Err() != nil {
		return "", errNotPlain
	}
	return "", fs.ErrNotExist
}

// reflogMsg is the message as git keeps it in a reflog
// (copy_reflog_msg): runs of white space made one space, none at either
// end. ok is false for a control character, which git's rules for white
// space may not treat as this does.
func reflogMsg(msg string) (string, bool) {
	var b strings.Builder
	space := true
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return "", false
		}
		if c == ' ' || c == '\t' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " "), true
}

// refLock is a "<name>.lock" file created as git creates its locks: it
// exists only while one writer holds it.
type refLock struct {
	path string
	f    *os.File
	// renamed is set once the lock became the file: from then on the
	// name is free for the next writer, whose lock release must not
	// remove.
	renamed bool
	// pool, when not "", is the slots' directory the lock's file came
	// from (tmpSlots.lockFile): released, an empty lock goes back there
	// for a later commit instead of being removed — renamed away, which
	// frees the lock's name as removing it does.
	pool string
}

// lockFile creates name.lock; errNotPlain when it exists (another git at
// work, which git waits for: the update is then git's).
func lockFile(name string) (*refLock, error) {
	l := &refLock{path: name + ".lock"}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, errNotPlain
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	l.f = f
	return l, nil
}

// release removes the lock without committing it; after commit it does
// nothing.
func (l *refLock) release() {
	if l.renamed {
		return
	}
	empty := false
	if l.f != nil {
		if fi, err := l.f.Stat(); err == nil && fi.Size() == 0 {
			empty = true
		}
		l.f.Close()
		l.f = nil
	}
	if l.pool != "" && empty && os.Rename(l.path, filepath.Join(l.pool, "free-"+randomHex(6))) == nil {
		return
	}
	os.Remove(l.path)
}

// commit renames the lock over the file it locks. A lock taken from the
// slots first buries the file it replaces (graves.go), so that the
// rename frees nothing on the commit's path.
func (l *refLock) commit() error {
	if l.f != nil {
		if err := l.f.Close(); err != nil {
			l.f = nil
			return err
		}
		l.f = nil
	}
	target := strings.TrimSuffix(l.path, ".lock")
	grave := buryLink(l.pool, target)
	if err := os.Rename(l.path, target); err != nil {
		if grave != "" {
			os.Remove(grave)
		}
		return err
	}
	l.renamed = true
	if grave != "" {
		reapGraves([]string{grave})
	}
	return nil
}

// refUpdate is what moving a branch needs beyond the commit: the gitDir's
// settings and the identity its reflog lines carry.
type refUpdate struct {
	gitDir    string
	logAll    string // core.logAllRefUpdates: "", "true", "false", "always"
	committer string // the reflog's identity and date, as the commit's
	// slots, when not nil, provide the lock files (tmpSlots.lockFile).
	slots *tmpSlots
}

// moveBranch moves ref from old to sha with git's files protocol, as
// `git update-ref -m <msg> <ref> <sha> <old>` does with HEAD on ref: lock
// ref (its .lock created exclusively), check that it still points to
// old (loose or packed), write the new value into the lock, lock HEAD and
// check it still names ref, append the reflog lines of ref and HEAD, and
// rename the lock into place. Nothing is synced, as git does not by
// default. errNotPlain, with every lock released and nothing changed,
// says to leave the move to git (a lock held by another git, HEAD no
// longer on ref, a file git might read otherwise); a *refMovedError that
// ref is no longer at old.
func (u refUpdate) moveBranch(ref, old, sha, msg string) error {
	logMsg, ok := reflogMsg(msg)
	if !ok {
		return errNotPlain
	}
	refFile := filepath.Join(u.gitDir, filepath.FromSlash(ref))
	lock, err := u.slots.lockFile(refFile)
	if err != nil {
		return err
	}
	defer lock.release()
	now, err := readRef(u.gitDir, ref)
	if err != nil {
		return errNotPlain
	}
	if now != old {
		return &refMovedError{now: Head{Ref: ref, SHA: now}, err: fmt.Errorf("cannot lock ref '%s': is at %s but expected %s", ref, now, old)}
	}
	if _, err := lock.f.WriteString(sha + "\n"); err != nil {
		return fmt.Errorf("write %s: %w", lock.path, err)
	}
	head, err := u.slots.lockFile(filepath.Join(u.gitDir, "HEAD"))
	if err != nil {
		return err
	}
	defer head.release()
	if cur, err := headBranch(u.gitDir); err != nil || cur != ref {
		return errNotPlain
	}
	line := fmt.Sprintf("%s %s %s", old, sha, u.committer)
	if logMsg != "" {
		line += "\t" + logMsg
	}
	line += "\n"
	if err := u.appendLog(ref, line); err != nil {
		return err
	}
	if err := lock.commit(); err != nil {
		return fmt.Errorf("move %s: %w", ref, err)
	}
	// The branch has moved: HEAD's reflog is a record of it, whose
	// failure git reports but does not undo.
	_ = u.appendLog("HEAD", line)
	return nil
}

// appendLog appends line to the reflog of ref when git would: always
// with core.logAllRefUpdates=always, to a branch's or HEAD's by default
// in a repository with a working tree, else only to a reflog that exists.
func (u refUpdate) appendLog(ref, line string) error {
	name := filepath.Join(u.gitDir, "logs", filepath.FromSlash(ref))
	create := u.logAll == "always" || (u.logAll != "false" && (ref == "HEAD" || strings.HasPrefix(ref, "refs/heads/")))
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			return fmt.Errorf("reflog of %s: %w", ref, err)
		}
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(name, flags, 0o666)
	if !create && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reflog of %s: %w", ref, err)
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reflog of %s: %w", ref, err)
	}
	return nil
}
