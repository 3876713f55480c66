package gitrepo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// gitIndex is the user's index file as far as the native state commit
// reads and writes it: version 2 or 3, every entry at stage 0 without
// extended flags (no intent-to-add, skip-worktree or conflict), and no
// extension but the cache tree (TREE) and the resolve-undo record (REUC).
// Anything else (a split or sparse index, an untracked cache, an
// fsmonitor token, version 4, an index without a checksum) is git's to
// update: parseIndex returns errNotPlain.
type gitIndex struct {
	version  uint32
	hashSize int
	newHash  func() hash.Hash
	entries  []indexEntry
	tree     *cacheTree // nil without a TREE extension
	reuc     []byte     // the REUC extension's data; nil without one
	// mtime is the index file's modification time when it was read, in
	// seconds: what git calls racy is measured against it.
	mtime uint32
}

// indexEntry is one entry as stored, padding included.
type indexEntry struct {
	name string
	raw  []byte
}

func (e indexEntry) mode() uint32                { return binary.BigEndian.Uint32(e.raw[24:]) }
func (e indexEntry) mtimeSec() uint32            { return binary.BigEndian.Uint32(e.raw[8:]) }
func (e indexEntry) statSize() uint32            { return binary.BigEndian.Uint32(e.raw[36:]) }
func (e indexEntry) isGitlink() bool             { return e.mode()&0o170000 == 0o160000 }
func compareEntry(e indexEntry, name string) int { return strings.Compare(e.name, name) }

// maxIndex bounds an index the native state commit reads: past it (a
// very large repository) git updates the index.
const maxIndex = 256 << 20

// readIndex reads and parses the index file name.
func readIndex(name string, newHash func() hash.Hash) (*gitIndex, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errNotPlain
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndex {
		return nil, errNotPlain
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIndex+1))
	if err != nil || len(b) > maxIndex {
		return nil, errNotPlain
	}
	ix, err := parseIndex(b, newHash)
	if err != nil {
		return nil, err
	}
	ix.mtime = uint32(fi.ModTime().Unix())
	return ix, nil
}

// parseIndex reads an index file's bytes.
func parseIndex(b []byte, newHash func() hash.Hash) (*gitIndex, error) {
	hs := newHash().Size()
	if len(b) < 12+hs || string(b[:4]) != "DIRC" {
		return nil, errNotPlain
	}
	body, sum := b[:len(b)-hs], b[len(b)-hs:]
	h := newHash()
	h.Write(body)
	if !bytes.Equal(h.Sum(nil), sum) {
		return nil, errNotPlain // a torn file, or one written without a checksum (index.skipHash)
	}
	ix := &gitIndex{version: binary.BigEndian.Uint32(b[4:]), hashSize: hs, newHash: newHash}
	if ix.version != 2 && ix.version != 3 {
		return nil, errNotPlain
	}
	n := binary.BigEndian.Uint32(b[8:])
	off := 12
	fixed := 40 + hs + 2
	for i := uint32(0); i < n; i++ {
		if off+fixed > len(body) {
			return nil, errNotPlain
		}
		flags := binary.BigEndian.Uint16(body[off+40+hs:])
		if flags&0x7000 != 0 { // extended flags, or a stage other than 0
			return nil, errNotPlain
		}
		start := off + fixed
		nameLen := int(flags & 0xfff)
		if nameLen == 0xfff {
			nul := bytes.IndexByte(body[start:], 0)
			if nul < 0xfff {
				return nil, errNotPlain
			}
			nameLen = nul
		}
		size := (fixed + nameLen + 8) &^ 7
		if off+size > len(body) || start+nameLen > off+size {
			return nil, errNotPlain
		}
		for _, c := range body[start+nameLen : off+size] {
			if c != 0 {
				return nil, errNotPlain
			}
		}
		e := indexEntry{name: string(body[start : start+nameLen]), raw: body[off : off+size]}
		if len(ix.entries) > 0 && ix.entries[len(ix.entries)-1].name >= e.name {
			return nil, errNotPlain // not in git's order
		}
		ix.entries = append(ix.entries, e)
		off += size
	}
	seenTree, seenReuc := false, false
	for off < len(body) {
		if off+8 > len(body) {
			return nil, errNotPlain
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if size < 0 || off+8+size > len(body) {
			return nil, errNotPlain
		}
		data := body[off+8 : off+8+size]
		switch {
		case sig == "TREE" && !seenTree:
			seenTree = true
			t, rest, err := parseCacheTree(data, hs)
			if err != nil || len(rest) != 0 || t.name != "" {
				return nil, errNotPlain
			}
			ix.tree = t
		case sig == "REUC" && !seenReuc:
			seenReuc = true
			ix.reuc = data
		default:
			return nil, errNotPlain
		}
		off += 8 + size
	}
	return ix, nil
}

// find is where name is, or would be, among the entries.
func (ix *gitIndex) find(name string) (int, bool) {
	return slices.BinarySearchFunc(ix.entries, name, compareEntry)
}

// tracked reports whether top (a path from the top of the repository) is
// in the index, as a file or as a directory of entries: what makes `git
// check-ignore` leave a path out.
func (ix *gitIndex) tracked(top string) bool {
	if _, ok := ix.find(top); ok {
		return true
	}
	i, _ := ix.find(top + "/")
	return i < len(ix.entries) && strings.HasPrefix(ix.entries[i].name, top+"/")
}

// underGitlink reports whether top is inside a submodule the index
// records, which git, not ooda, answers for.
func (ix *gitIndex) underGitlink(top string) bool {
	for d := top; ; {
		j := strings.LastIndexByte(d, '/')
		if j < 0 {
			return false
		}
		d = d[:j]
		if i, ok := ix.find(d); ok && ix.entries[i].isGitlink() {
			return true
		}
	}
}

// indexChange is an entry to set to what a commit holds: a file's mode
// and object, or its removal.
type indexChange struct {
	path    string // from the top of the repository
	mode    uint32
	oid     []byte
	deleted bool
}

// apply sets the entries of changes as `git update-index -z --index-info`
// does: an entry with no stat data (git refreshes it when it next looks),
// its cache-tree paths invalidated, and removals removed. top is the
// working tree, where the racily clean check reads. errNotPlain, with ix
// unchanged in part, says git must do it: a path git would refuse or
// that conflicts with a directory, or another entry that git might have
// to mark racily clean when it rewrites the index.
func (ix *gitIndex) apply(top string, changes []indexChange) error {
	touched := map[string]bool{}
	for _, ch := range changes {
		if !safeIndexPath(ch.path) || len(ch.oid) != ix.hashSize {
			return errNotPlain
		}
		touched[ch.path] = true
	}
	for _, e := range ix.entries {
		if !touched[e.name] && ix.mayBeRacilyClean(top, e) {
			return errNotPlain
		}
	}
	for _, ch := range changes {
		i, found := ix.find(ch.path)
		switch {
		case ch.deleted && found:
			ix.entries = slices.Delete(ix.entries, i, i+1)
		case ch.deleted:
		case found:
			ix.entries[i] = ix.newEntry(ch)
		default:
			if ix.dirFileConflict(ch.path) {
				return errNotPlain
			}
			ix.entries = slices.Insert(ix.entries, i, ix.newEntry(ch))
		}
		ix.tree.invalidate(ch.path)
	}
	return nil
}

// safeIndexPath accepts only paths git's verify_path certainly takes:
// plain components, none of them a name git protects (".git" and what
// file systems read as it) or one a Windows file system would change.
func safeIndexPath(p string) bool {
	if p == "" {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		l := strings.ToLower(c)
		if c == "" || c == "." || c == ".." || strings.HasPrefix(l, ".git") || strings.HasPrefix(l, "git~") ||
			strings.ContainsAny(c, "\\:\x00") || strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ") {
			return false
		}
	}
	return true
}

// dirFileConflict reports a new path that would replace a file with a
// directory or a directory with a file.
func (ix *gitIndex) dirFileConflict(p string) bool {
	for d := p; ; {
		j := strings.LastIndexByte(d, '/')
		if j < 0 {
			break
		}
		d = d[:j]
		if _, ok := ix.find(d); ok {
			return true
		}
	}
	i, _ := ix.find(p + "/")
	return i < len(ix.entries) && strings.HasPrefix(ix.entries[i].name, p+"/")
}

// mayBeRacilyClean reports an entry git might mark racily clean
// (ce_smudge_racily_clean_entry) when it writes the index: its recorded
// modification time is not older than the index file's, and the file
// could still match what is recorded. Git then compares the file's
// content, which may need its filters; git is left to do it.
func (ix *gitIndex) mayBeRacilyClean(top string, e indexEntry) bool {
	if e.mtimeSec() < ix.mtime || e.statSize() == 0 {
		return false
	}
	fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(e.name)))
	if err != nil {
		return false
	}
	return uint32(fi.ModTime().Unix()) == e.mtimeSec() && uint32(fi.Size()) == e.statSize()
}

// newEntry is the entry --index-info makes: the mode and object, the
// name, and no stat data.
func (ix *gitIndex) newEntry(ch indexChange) indexEntry {
	fixed := 40 + ix.hashSize + 2
	raw := make([]byte, (fixed+len(ch.path)+8)&^7)
	binary.BigEndian.PutUint32(raw[24:], ch.mode)
	copy(raw[40:], ch.oid)
	binary.BigEndian.PutUint16(raw[40+ix.hashSize:], uint16(min(len(ch.path), 0xfff)))
	copy(raw[fixed:], ch.path)
	return indexEntry{name: ch.path, raw: raw}
}

// bytes is the index file git would write: version 3 written as 2 when
// no entry needs it (as git does), the entries, the cache tree and the
// resolve-undo record, and the checksum.
func (ix *gitIndex) bytes() []byte {
	var b bytes.Buffer
	b.WriteString("DIRC")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(ix.entries)))
	for _, e := range ix.entries {
		b.Write(e.raw)
	}
	if ix.tree != nil {
		var t bytes.Buffer
		ix.tree.write(&t)
		b.WriteString("TREE")
		binary.Write(&b, binary.BigEndian, uint32(t.Len()))
		b.Write(t.Bytes())
	}
	if ix.reuc != nil {
		b.WriteString("REUC")
		binary.Write(&b, binary.BigEndian, uint32(len(ix.reuc)))
		b.Write(ix.reuc)
	}
	h := ix.newHash()
	h.Write(b.Bytes())
	return h.Sum(b.Bytes())
}

// cacheTree is a node of the TREE extension: the tree object of a
// directory of the index, when known (count >= 0), and its subtrees in
// the order stored.
type cacheTree struct {
	name     string
	count    int
	subtrees int
	oid      []byte
	children []*cacheTree
}

// parseCacheTree reads one node and its subtrees: "<name>\0<count>
// <subtrees>\n", the tree's object name when count >= 0, then the
// subtrees.
func parseCacheTree(b []byte, hs int) (*cacheTree, []byte, error) {
	bad := errors.New("malformed cache tree")
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, nil, bad
	}
	t := &cacheTree{name: string(b[:nul])}
	b = b[nul+1:]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, bad
	}
	count, subs, ok := strings.Cut(string(b[:nl]), " ")
	var err1, err2 error
	t.count, err1 = strconv.Atoi(count)
	t.subtrees, err2 = strconv.Atoi(subs)
	if !ok || err1 != nil || err2 != nil || t.count < -1 || t.subtrees < 0 || t.subtrees > len(b) {
		return nil, nil, bad
	}
	b = b[nl+1:]
	if t.count >= 0 {
		if len(b) < hs {
			return nil, nil, bad
		}
		t.oid, b = b[:hs], b[hs:]
	}
	for range t.subtrees {
		c, rest, err := parseCacheTree(b, hs)
		if err != nil {
			return nil, nil, err
		}
		t.children, b = append(t.children, c), rest
	}
	return t, b, nil
}

// invalidate is git's cache_tree_invalidate_path: every directory on the
// way to path loses its tree, and a subtree named as path itself (a
// directory it replaces) is dropped.
func (t *cacheTree) invalidate(path string) {
	if t == nil {
		return
	}
	t.count, t.oid = -1, nil
	first, rest, deeper := strings.Cut(path, "/")
	for i, c := range t.children {
		if c.name != first {
			continue
		}
		if deeper {
			c.invalidate(rest)
		} else {
			t.children = slices.Delete(t.children, i, i+1)
		}
		break
	}
	t.subtrees = len(t.children)
}

// write stores the node and its subtrees as parseCacheTree reads them.
func (t *cacheTree) write(b *bytes.Buffer) {
	fmt.Fprintf(b, "%s\x00%d %d\n", t.name, t.count, len(t.children))
	if t.count >= 0 {
		b.Write(t.oid)
	}
	for _, c := range t.children {
		c.write(b)
	}
}

// stageNative is stageCommitted done on the index file itself, as `git
// update-index -z --index-info` does it: index.lock created exclusively,
// the index read under it, the entries of changes set, the lock renamed
// into place (not synced: git does not sync it by default). errNotPlain,
// with nothing changed, leaves it to git: an index git would update
// otherwise, a lock another git holds, a hook that must see it.
func (r *Repo) stageNative(changes []change, newHash func() hash.Hash, slots *tmpSlots) error {
	lock, err := r.writeIndexLock(changes, newHash, slots)
	if err != nil {
		return err
	}
	return commitIndexLock(lock)
}

// writeIndexLock is stageNative up to the new index written into its
// lock, not yet renamed into place: the caller commits or releases it.
func (r *Repo) writeIndexLock(changes []change, newHash func() hash.Hash, slots *tmpSlots) (*refLock, error) {
	var ics []indexChange
	for _, ch := range changes {
		ic := indexChange{path: ch.path, deleted: ch.deleted}
		if !ch.deleted {
			m, err := strconv.ParseUint(ch.mode, 8, 32)
			if err != nil || (m != 0o100644 && m != 0o100755) {
				return nil, errNotPlain
			}
			ic.mode = uint32(m)
		}
		oid, err := hex.DecodeString(ch.oid)
		if err != nil {
			return nil, errNotPlain
		}
		ic.oid = oid
		ics = append(ics, ic)
	}
	if r.top == "" {
		return nil, errNotPlain
	}
	name := filepath.Join(r.gitDir, "index")
	lock, err := slots.lockFile(name)
	if err != nil {
		return nil, err
	}
	ix, err := readIndex(name, newHash)
	if err == nil {
		err = ix.apply(r.top, ics)
	}
	if err == nil {
		if _, werr := lock.f.Write(ix.bytes()); werr != nil {
			err = fmt.Errorf("write %s: %w", lock.path, werr)
		}
	}
	if err != nil {
		lock.release()
		return nil, err
	}
	return lock, nil
}

// commitIndexLock renames a written index lock into place.
func commitIndexLock(lock *refLock) error {
	defer lock.release()
	if err := lock.commit(); err != nil {
		return fmt.Errorf("update %s: %w", strings.TrimSuffix(lock.path, ".lock"), err)
	}
	return nil
}
