package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The objects of ooda's state commits are in small packs (pack.go); its
// own readers (HEAD's trees for the next commit, the commits the forge
// scan walks) find them there without git. Only what is certain is read:
// an entry that is not a delta, in a pack ooda wrote (packMarks) whose
// .idx is version 2 and small, and whose bytes hash to the object's name.
// Anything else — every pack git wrote among them — is left to git, as a
// packed object always was.

// maxReadIdx bounds the .idx files read: a state commit's pack's, or a
// few dozen of them folded, not a clone's (whose objects git reads).
const maxReadIdx = 1 << 20

// packIdx is one pack's .idx, read.
type packIdx struct {
	pack    string // the .pack file
	n       int
	names   []byte   // n sorted object names, 20 bytes each
	offsets []uint32 // in the order of names
	// ends[i] is where the entry at offsets[i] ends: the next entry's
	// offset, or the start of the pack's checksum.
	ends []uint32
}

// packSet is what a process knows of an object directory's packs, for
// the directory's state it saw (the pack directory's modification time):
// the packs, newest first, each .idx read when first needed — the
// objects ooda reads are its latest commits', in its latest packs.
type packSet struct {
	mu    sync.Mutex
	stamp string
	packs []*packRef
}

// packRef is one pack of a packSet.
type packRef struct {
	base   string // the path without .idx or .pack
	loaded bool
	idx    *packIdx // nil when not readable
	// f is the pack, opened with its index and kept for the reads that
	// follow (a scan reads a commit after another from the same packs)
	// until the set is listed again.
	f *os.File
}

var packSets sync.Map // objects directory -> *packSet

// readPacked reads the object oid (a SHA-1 name) from ooda's packs of
// objects; ok false when it is not in one of the packs it reads, or not
// certain (see above). The packs are listed once and listed again only
// when an object is not found in them: what is found is checked against
// its name, so a list that is out of date can only miss an object, never
// give a wrong one.
func readPacked(objects, oid string, limit int64, newHash func() hash.Hash) (typ string, body []byte, ok bool) {
	if len(oid) != sha1.Size*2 {
		return "", nil, false
	}
	raw, err := hex.DecodeString(oid)
	if err != nil {
		return "", nil, false
	}
	v, _ := packSets.LoadOrStore(objects, &packSet{})
	ps := v.(*packSet)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.stamp == "" {
		if listed, _ := ps.list(objects); !listed {
			return "", nil, false
		}
	}
	typ, body, found, ok := ps.find(raw, limit)
	if !found {
		// Perhaps in a pack written since the list was made.
		if _, changed := ps.list(objects); changed {
			typ, body, found, ok = ps.find(raw, limit)
		}
	}
	if ok && hex.EncodeToString(hashObject(newHash, typ, body)) == oid {
		return typ, body, true
	}
	return "", nil, false
}

// find reads the object raw from the first pack listed that has it.
func (ps *packSet) find(raw []byte, limit int64) (typ string, body []byte, found, ok bool) {
	for _, p := range ps.packs {
		if !p.loaded {
			p.idx, p.f = readPackIdx(p.base)
			p.loaded = true
		}
		ix := p.idx
		if ix == nil {
			continue
		}
		i, found := ix.find(raw)
		if !found {
			continue
		}
		typ, body, ok := ix.read(p.f, i, limit)
		return typ, body, true, ok
	}
	return "", nil, false, false
}

// list lists ooda's packs of objects (those packMarks marks) again
// when the marks changed since they were last listed: listed is false
// when there are none to list, changed when the list is new. The caller
// holds ps.mu.
func (ps *packSet) list(objects string) (listed, changed bool) {
	marks := packMarks(objects)
	if marks == "" {
		return false, false
	}
	fi, err := os.Stat(marks)
	if err != nil {
		return false, false
	}
	st, ok := statOf(fi)
	if !ok {
		return false, false
	}
	stamp := fingerprintOf(st)
	if ps.stamp == stamp {
		return true, false
	}
	entries, err := os.ReadDir(marks)
	if err != nil {
		return false, false
	}
	type cand struct {
		base  string
		mtime int64
	}
	var cands []cand
	for _, e := range entries {
		base, isIdx := strings.CutSuffix(e.Name(), ".idx")
		if !isIdx || !isPackName(base) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxReadIdx {
			continue
		}
		cands = append(cands, cand{base, fi.ModTime().UnixNano()})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.mtime != b.mtime {
			if a.mtime > b.mtime {
				return -1
			}
			return 1
		}
		return strings.Compare(a.base, b.base)
	})
	for _, p := range ps.packs {
		if p.f != nil {
			p.f.Close()
		}
	}
	ps.packs = nil
	for _, c := range cands {
		ps.packs = append(ps.packs, &packRef{base: filepath.Join(objects, "pack", c.base)})
	}
	ps.stamp = stamp
	return true, true
}

// fingerprintOf is a directory's identity and version.
func fingerprintOf(st fileStat) string {
	var b [40]byte
	binary.BigEndian.PutUint64(b[0:], st.dev)
	binary.BigEndian.PutUint64(b[8:], st.ino)
	binary.BigEndian.PutUint64(b[16:], uint64(st.mtime))
	binary.BigEndian.PutUint64(b[24:], uint64(st.ctime))
	binary.BigEndian.PutUint64(b[32:], uint64(st.size))
	return string(b[:])
}

// readPackIdx reads base.idx, a version 2 index without 64-bit offsets,
// and opens base.pack; nil for anything else, or a pack file that is not
// there.
func readPackIdx(base string) (*packIdx, *os.File) {
	b, ok := readRegular(base+".idx", maxReadIdx)
	if !ok {
		return nil, nil
	}
	ix := parsePackIdx(b)
	if ix == nil {
		return nil, nil
	}
	f, err := openRead(base + ".pack")
	if err != nil {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 12+sha1.Size || fi.Size() > maxPackBytes {
		f.Close()
		return nil, nil
	}
	ix.pack = base + ".pack"
	sorted := slices.Clone(ix.offsets)
	slices.Sort(sorted)
	ix.ends = make([]uint32, ix.n)
	packEnd := uint32(fi.Size() - sha1.Size)
	for i, off := range ix.offsets {
		j, _ := slices.BinarySearch(sorted, off)
		end := packEnd
		if j+1 < len(sorted) {
			end = sorted[j+1]
		}
		if off < 12 || end <= off || end > packEnd {
			f.Close()
			return nil, nil
		}
		ix.ends[i] = end
	}
	return ix, f
}

// readRegular reads a regular file of at most limit bytes: one open, one
// fstat, one read (and one more when the file grew).
func readRegular(name string, limit int64) ([]byte, bool) {
	f, err := openRead(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, false
	}
	b := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, b)
	if err != io.ErrUnexpectedEOF || int64(n) != fi.Size() {
		return nil, false // changed while read
	}
	return b[:n], true
}

// parsePackIdx reads a version 2 .idx of SHA-1 names whose offsets all
// fit in 31 bits; nil for any other.
func parsePackIdx(b []byte) *packIdx {
	const head = 8 + 256*4
	if len(b) < head+2*sha1.Size || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	if len(b) != head+n*(sha1.Size+8)+2*sha1.Size {
		return nil // 64-bit offsets, or not an index
	}
	if s := sha1.Sum(b[:len(b)-sha1.Size]); !bytes.Equal(s[:], b[len(b)-sha1.Size:]) {
		return nil
	}
	prev := uint32(0)
	for i := range 256 {
		c := binary.BigEndian.Uint32(b[8+i*4:])
		if c < prev {
			return nil
		}
		prev = c
	}
	ix := &packIdx{n: n, names: b[head : head+n*sha1.Size]}
	for i := 1; i < n; i++ {
		if bytes.Compare(ix.names[(i-1)*sha1.Size:i*sha1.Size], ix.names[i*sha1.Size:(i+1)*sha1.Size]) >= 0 {
			return nil
		}
	}
	offs := b[head+n*(sha1.Size+4):]
	ix.offsets = make([]uint32, n)
	for i := range n {
		o := binary.BigEndian.Uint32(offs[i*4:])
		if o&0x80000000 != 0 {
			return nil
		}
		ix.offsets[i] = o
	}
	return ix
}

// find is the position of the object name raw in the index.
func (ix *packIdx) find(raw []byte) (int, bool) {
	lo, hi := 0, ix.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(ix.names[m*sha1.Size:(m+1)*sha1.Size], raw); {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// read reads from the pack f the entry of the i-th object: its type and
// body, when it is not a delta and holds at most limit bytes.
func (ix *packIdx) read(f *os.File, i int, limit int64) (string, []byte, bool) {
	off, end := ix.offsets[i], ix.ends[i]
	data := make([]byte, end-off)
	if _, err := f.ReadAt(data, int64(off)); err != nil {
		return "", nil, false
	}
	typ, size, n, ok := parseEntryHeader(data)
	// Deflate makes at most 1,032 bytes of one: a larger size is not
	// this entry's.
	if !ok || size > limit || size > 1032*int64(len(data))+64 {
		return "", nil, false
	}
	z, err := openZlib(bytes.NewReader(data[n:]))
	if err != nil {
		return "", nil, false
	}
	defer closeZlib(z)
	body := make([]byte, size)
	if _, err := io.ReadFull(z, body); err != nil {
		return "", nil, false
	}
	var one [1]byte
	if n, _ := z.Read(one[:]); n != 0 {
		return "", nil, false
	}
	return typ, body, true
}

// parseEntryHeader reads a pack entry's type and size; n is the header's
// length. ok is false for a delta or anything malformed.
func parseEntryHeader(data []byte) (typ string, size int64, n int, ok bool) {
	if len(data) == 0 {
		return "", 0, 0, false
	}
	c := data[0]
	switch c >> 4 & 7 {
	case 1:
		typ = "commit"
	case 2:
		typ = "tree"
	case 3:
		typ = "blob"
	case 4:
		typ = "tag"
	default:
		return "", 0, 0, false
	}
	size = int64(c & 0x0f)
	shift := 4
	n = 1
	for c&0x80 != 0 {
		if n >= len(data) || shift > 56 {
			return "", 0, 0, false
		}
		c = data[n]
		n++
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	return typ, size, n, true
}
