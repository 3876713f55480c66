package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// foldAt is how many small packs make foldPacks write them as one: each
// state commit adds a pack, and every pack is one more place git (and
// readPacked) looks for an object.
const foldAt = 8

// maxFoldObjects is the most objects a pack may hold to be folded: a
// state commit's pack holds a dozen or so, a fold of foldAt of them
// more than this, so that an object is copied once or twice, not again
// at every fold. Larger packs are left to git's gc (autoPackLimit).
const maxFoldObjects = 64

// maxFoldPack bounds the bytes of a pack folded.
const maxFoldPack = 32 << 20

// autoPackLimit is git's default gc.autoPackLimit: past it `git gc
// --auto` (which reads the setting itself) repacks everything.
const autoPackLimit = 50

// foldPacks keeps ooda's packs of objects few: once foldAt small packs
// ooda wrote (packMarks) whose every entry is whole (no delta) and that
// nothing else describes (no .keep, .promisor, .bitmap or .mtimes) are
// there, it writes their objects as one pack, entries copied as they
// are, and removes them — the new pack in place before any old one goes,
// so that every object is in a pack at every instant. Past autoPackLimit
// packs it asks `git gc --auto`, as git does after a commit. It also
// removes the marks of packs that are gone (git gc repacked them), and a
// pack of ooda's left without its index by a process killed in the
// middle. Failures change nothing: the packs stay as they are.
func (r *Repo) foldPacks(ctx context.Context, objects string) {
	dir := filepath.Join(objects, "pack")
	marks := packMarks(objects)
	if marks == "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	names := map[string]bool{}
	packs := 0
	for _, e := range entries {
		names[e.Name()] = true
	}
	for _, e := range entries {
		// As git's gc counts them: a kept pack is not repacked.
		if base, ok := strings.CutSuffix(e.Name(), ".idx"); ok && isPackName(base) && !names[base+".keep"] {
			packs++
		}
	}
	marked, _ := os.ReadDir(marks)
	var small []string
	for _, e := range marked {
		base, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !isPackName(base) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if !names[base+".idx"] {
			// Gone (repacked by git), or never put in place (a writer
			// killed between its renames): once old enough not to be a
			// writer at work, the pack it may have left and the mark go.
			if time.Since(fi.ModTime()) > staleIndexAge {
				if names[base+".pack"] {
					os.Remove(filepath.Join(dir, base+".pack"))
				}
				os.Remove(filepath.Join(marks, e.Name()))
			}
			continue
		}
		if !names[base+".pack"] || names[base+".keep"] || names[base+".promisor"] || names[base+".bitmap"] || names[base+".mtimes"] {
			continue
		}
		if n := (fi.Size() - (8 + 256*4) - 2*sha1.Size) / (sha1.Size + 8); n > 0 && n <= maxFoldObjects {
			small = append(small, base)
		}
	}
	if len(small) >= foldAt {
		slices.Sort(small)
		if folded := foldInto(dir, marks, small); folded > 1 {
			packs -= folded - 1
		}
	}
	if packs > autoPackLimit {
		_, _ = r.Run(ctx, "gc", "--auto", "--quiet")
	}
}

// foldInto writes the objects of the packs bases (names in dir without
// the extension) that it can read whole as one pack in dir, then removes
// them and their marks; it returns how many packs it folded.
func foldInto(dir, marks string, bases []string) int {
	type read struct {
		es   []wholeEntry
		pack []byte
	}
	var packs []read
	var folded []string
	size := 12
	for _, base := range bases {
		es, pack, ok := readWholePack(filepath.Join(dir, base))
		if !ok {
			continue
		}
		folded = append(folded, base)
		packs = append(packs, read{es, pack})
		size += len(pack)
	}
	var body bytes.Buffer
	body.Grow(size)
	body.Write(packHeader(0))
	var out []packedEntry
	seen := map[string]bool{}
	for _, p := range packs {
		es, pack := p.es, p.pack
		for _, e := range es {
			if seen[string(e.oid)] {
				continue
			}
			seen[string(e.oid)] = true
			off := body.Len()
			body.Write(pack[e.off:e.end])
			out = append(out, packedEntry{oid: e.oid, off: uint32(off), crc: e.crc})
		}
	}
	if len(folded) < 2 || body.Len() > maxPackBytes-sha1.Size {
		return 0
	}
	b := body.Bytes()
	binary.BigEndian.PutUint32(b[8:], uint32(len(out)))
	name, err := writePack(dir, marks, b, out, nil)
	if err != nil {
		return 0
	}
	// Moved out of git's sight rather than removed: removing sixteen
	// files would free their blocks on the commit's path (graves.go).
	pool := slotsDir(filepath.Dir(filepath.Dir(marks)))
	var graves []string
	gone := func(name string) {
		if _, err := os.Lstat(name); err != nil {
			return
		}
		if g := buryMove(pool, name); g != "" {
			graves = append(graves, g)
		}
	}
	for _, base := range folded {
		path := filepath.Join(dir, base)
		if path == name {
			continue // the same objects, written to the same name
		}
		// The index first: git then no longer looks in the pack. The
		// mark last: until then a pack left without its index is known
		// to be ooda's, to remove.
		gone(path + ".idx")
		gone(path + ".rev")
		gone(path + ".pack")
		os.Remove(filepath.Join(marks, base+".idx"))
	}
	if len(graves) > 0 {
		reapGraves(graves)
	}
	return len(folded)
}

// wholeEntry is an entry of a pack read by readWholePack.
type wholeEntry struct {
	oid      []byte
	off, end uint32
	crc      uint32
}

// readWholePack reads base.pack and base.idx when every check holds: the
// index's checksum, its record of the pack's, the pack's header and
// number of objects, each entry's CRC-32 — what git checks of an entry it
// copies into a new pack as it is — and no entry a delta (which could
// not be copied as it is).
func readWholePack(base string) ([]wholeEntry, []byte, bool) {
	idxBytes, ok := readRegular(base+".idx", maxReadIdx)
	if !ok {
		return nil, nil, false
	}
	ix := parsePackIdx(idxBytes)
	if ix == nil {
		return nil, nil, false
	}
	pack, ok := readRegular(base+".pack", maxFoldPack)
	if !ok || len(pack) < 12+sha1.Size {
		return nil, nil, false
	}
	body, sum := pack[:len(pack)-sha1.Size], pack[len(pack)-sha1.Size:]
	if !bytes.Equal(idxBytes[len(idxBytes)-2*sha1.Size:len(idxBytes)-sha1.Size], sum) {
		return nil, nil, false
	}
	if !bytes.Equal(body[:8], []byte("PACK\x00\x00\x00\x02")) || int(binary.BigEndian.Uint32(body[8:])) != ix.n {
		return nil, nil, false
	}
	sorted := slices.Clone(ix.offsets)
	slices.Sort(sorted)
	crcs := idxBytes[8+256*4+ix.n*sha1.Size:]
	es := make([]wholeEntry, ix.n)
	for i, off := range ix.offsets {
		j, _ := slices.BinarySearch(sorted, off)
		end := uint32(len(body))
		if j+1 < len(sorted) {
			end = sorted[j+1]
		}
		if off < 12 || end <= off || int(end) > len(body) || (j == 0 && off != 12) {
			return nil, nil, false
		}
		data := body[off:end]
		if _, _, _, ok := parseEntryHeader(data); !ok {
			return nil, nil, false
		}
		crc := binary.BigEndian.Uint32(crcs[i*4:])
		if crc32.ChecksumIEEE(data) != crc {
			return nil, nil, false
		}
		es[i] = wholeEntry{oid: ix.names[i*sha1.Size : (i+1)*sha1.Size], off: off, end: end, crc: crc}
	}
	return es, pack, true
}
