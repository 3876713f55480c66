package gitrepo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A state commit's objects — its blobs, trees and commit — are written as
// one pack (objects/pack/pack-<checksum>.pack and its version 2 .idx), not
// as a dozen loose objects: on common file systems creating a file costs
// many times what writing one does, and a pack is two files whatever the
// commit holds, with no fan-out directory to make. The pack is what `git
// pack-objects` writes for the same objects without deltas, in git's
// order of renames (the .pack, then the .idx that makes git see it), all
// before the branch moves: a crash leaves at worst a pack nothing refers
// to. Nothing is synced, the guarantee the loose objects gave: git's
// default syncs no loose object (it would sync a pack of its own), and a
// core.fsync setting leaves the whole commit to git. The packs a loop
// writes are folded together as they accumulate (foldPacks), so that a
// long-lived loop keeps few of them; git's gc --auto repacks them like
// any other.

// objectWriter stores a commit's objects: loose (looseWriter) or in one
// pack (packWriter). flush makes every object written visible to git.
type objectWriter interface {
	write(oid, typ string, body []byte) error
	flush() error
}

// flush does nothing: each loose object is in place once written.
func (w *looseWriter) flush() error { return nil }

// packWriter gathers the objects of one commit and writes them as a pack
// on flush. It is for SHA-1 repositories only (a SHA-256 one's packs
// carry SHA-256 checksums, which this does not write).
type packWriter struct {
	objects string
	slots   *tmpSlots
	objs    []packObject
	seen    map[string]bool
	flushed int // objects already in a pack
}

type packObject struct {
	oid, typ string
	body     []byte
}

func newPackWriter(objects string, slots *tmpSlots) *packWriter {
	return &packWriter{objects: objects, slots: slots, seen: map[string]bool{}}
}

func (w *packWriter) write(oid, typ string, body []byte) error {
	if len(oid) != sha1.Size*2 {
		return fmt.Errorf("write object %s: not a SHA-1 name", oid)
	}
	if w.seen[oid] {
		return nil // one entry per object
	}
	w.seen[oid] = true
	w.objs = append(w.objs, packObject{oid: oid, typ: typ, body: body})
	return nil
}

// flush writes the objects not yet flushed as one pack. When the pack
// cannot be written, they are written as loose objects instead, as
// before packs: the commit does not fail for want of objects/pack.
func (w *packWriter) flush() error {
	objs := w.objs[w.flushed:]
	if len(objs) == 0 {
		return nil
	}
	w.flushed = len(w.objs)
	entries := make([]packedEntry, 0, len(objs))
	var pack bytes.Buffer
	size := 12
	for _, o := range objs {
		// The body, its entry's header and its zlib framing.
		size += len(o.body) + 16 + 5*(len(o.body)/0xffff+1)
	}
	pack.Grow(min(size, maxStoredObject*4))
	pack.Write(packHeader(len(objs)))
	var z *zlib.Writer
	for _, o := range objs {
		raw, err := hex.DecodeString(o.oid)
		if err != nil {
			return fmt.Errorf("write object %s: %w", o.oid, err)
		}
		start := pack.Len()
		appendPackEntry(&pack, o.typ, o.body, &z)
		entries = append(entries, packedEntry{oid: raw, off: uint32(start), crc: crc32.ChecksumIEEE(pack.Bytes()[start:])})
	}
	if z != nil {
		zlibWriters.Put(z)
	}
	if _, err := writePack(filepath.Join(w.objects, "pack"), packMarks(w.objects), pack.Bytes(), entries, w.slots); err != nil {
		lw := newLooseWriter(w.objects, w.slots)
		for _, o := range objs {
			if err := lw.write(o.oid, o.typ, o.body); err != nil {
				return err
			}
		}
	}
	return nil
}

// packedEntry is one object in a pack: its name, where its entry (the
// type and size header and the zlib stream) starts, and the entry's
// CRC-32, as the .idx records them.
type packedEntry struct {
	oid []byte
	off uint32
	crc uint32
}

// packHeader is a version 2 pack's header for n objects.
func packHeader(n int) []byte {
	h := []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x00")
	binary.BigEndian.PutUint32(h[8:], uint32(n))
	return h
}

// packTypes are the pack entry types of the objects ooda writes.
var packTypes = map[string]byte{"commit": 1, "tree": 2, "blob": 3, "tag": 4}

// appendPackEntry appends the pack entry of a typ object holding body:
// the type and size header, then the body's zlib stream — stored blocks
// up to maxStoredObject, as for loose objects, compressed beyond it.
func appendPackEntry(buf *bytes.Buffer, typ string, body []byte, z **zlib.Writer) {
	size := len(body)
	c := packTypes[typ]<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
	if len(body) <= maxStoredObject {
		appendStoredZlib(buf, "", body)
		return
	}
	if *z == nil {
		if pooled, ok := zlibWriters.Get().(*zlib.Writer); ok {
			*z = pooled
		} else {
			*z, _ = zlib.NewWriterLevel(nil, zlib.BestSpeed)
		}
	}
	(*z).Reset(buf)
	(*z).Write(body)
	(*z).Close()
}

// packIndex is the version 2 .idx of a pack whose checksum is sum and
// whose entries (in any order) are entries.
func packIndex(entries []packedEntry, sum []byte) []byte {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(entries[a].oid, entries[b].oid) })
	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range entries {
		fan[e.oid[0]]++
	}
	var n uint32
	var b4 [4]byte
	for i := range fan {
		n += fan[i]
		binary.BigEndian.PutUint32(b4[:], n)
		idx.Write(b4[:])
	}
	for _, i := range order {
		idx.Write(entries[i].oid)
	}
	for _, i := range order {
		binary.BigEndian.PutUint32(b4[:], entries[i].crc)
		idx.Write(b4[:])
	}
	for _, i := range order {
		binary.BigEndian.PutUint32(b4[:], entries[i].off)
		idx.Write(b4[:])
	}
	idx.Write(sum)
	s := sha1.Sum(idx.Bytes())
	idx.Write(s[:])
	return idx.Bytes()
}

// maxPackBytes bounds a pack ooda writes: its .idx holds 31-bit offsets
// only.
const maxPackBytes = 1<<31 - 1

// writePack completes the pack whose header and entries are body, adds
// its checksum, and puts it and its index in dir as git would: each
// written to a temporary file, the pack renamed to its name first, the
// .idx last. Before either is renamed, the index is also linked into
// marks (packMarks), which says the pack is ooda's: its own readers read
// only such packs, and fold only those. It returns the pack's name
// without its extension.
func writePack(dir, marks string, body []byte, entries []packedEntry, slots *tmpSlots) (string, error) {
	if len(body)+sha1.Size > maxPackBytes {
		return "", errors.New("pack too large")
	}
	sum := sha1.Sum(body)
	idx := packIndex(entries, sum[:])
	base := "pack-" + hex.EncodeToString(sum[:])
	name := filepath.Join(dir, base)
	packTmp, err := writeTmp(dir, [][]byte{body, sum[:]}, slots)
	if err != nil {
		return "", err
	}
	idxTmp, err := writeTmp(dir, [][]byte{idx}, slots)
	if err != nil {
		os.Remove(packTmp)
		return "", err
	}
	if marks != "" {
		mark := filepath.Join(marks, base+".idx")
		err := os.Link(idxTmp, mark)
		if errors.Is(err, fs.ErrNotExist) {
			if os.MkdirAll(marks, 0o777) == nil {
				err = os.Link(idxTmp, mark)
			}
		}
		// Without a mark (a file system without links) the pack is
		// git's alone to read and repack.
		_ = err
	}
	err = os.Rename(packTmp, name+".pack")
	if err == nil {
		err = os.Rename(idxTmp, name+".idx")
		if err != nil {
			os.Remove(name + ".pack")
		}
	}
	if err != nil {
		os.Remove(packTmp)
		os.Remove(idxTmp)
		if marks != "" {
			os.Remove(filepath.Join(marks, base+".idx"))
		}
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}

// packMarks is where the marks of ooda's packs in objects are: the
// objects directory's repository's ooda/packs; "" for an object
// directory elsewhere (whose packs ooda then neither reads nor folds).
func packMarks(objects string) string {
	if filepath.Base(objects) != "objects" {
		return ""
	}
	return filepath.Join(filepath.Dir(objects), "ooda", "packs")
}

// writeTmp writes parts to a new temporary file — a slot when there is
// one, else tmp_pack_* in dir, as git names its own — read-only as git
// makes its packs, and returns its name.
func writeTmp(dir string, parts [][]byte, slots *tmpSlots) (string, error) {
	f, tmp, ok := slots.take()
	if ok {
		if err := f.Chmod(0o444); err != nil {
			f.Close()
			os.Remove(tmp)
			ok = false
		}
	}
	if !ok {
		var err error
		f, tmp, err = createTmp(dir, "tmp_pack_")
		if errors.Is(err, fs.ErrNotExist) {
			if merr := os.Mkdir(dir, 0o777); merr == nil || errors.Is(merr, fs.ErrExist) {
				f, tmp, err = createTmp(dir, "tmp_pack_")
			}
		}
		if err != nil {
			return "", err
		}
	}
	var err error
	for _, p := range parts {
		if _, err = f.Write(p); err != nil {
			break
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// createTmp creates a new read-only file prefix<random> in dir.
func createTmp(dir, prefix string) (*os.File, string, error) {
	for range 10 {
		tmp := filepath.Join(dir, prefix+randomHex(6))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("no temporary name free in %s", dir)
}

// isPackName reports a pack's base name as git names them:
// pack-<40 hex digits> (SHA-1 repositories only).
func isPackName(base string) bool {
	h, ok := strings.CutPrefix(base, "pack-")
	return ok && len(h) == sha1.Size*2 && ValidSHA(h) && strings.ToLower(h) == h
}
