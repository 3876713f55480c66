package forge

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// Every Observe lists the refs that matter with `git for-each-ref`. When
// the repository keeps its refs as files (loose refs and packed-refs, the
// layout inspectLocal accepts), the same listing is read from those files
// here, and no process starts. The reading is exact or it is not used: a
// ref git would list differently from one version to another (one whose
// object is missing, a symbolic ref to nothing), a name or a content that
// is not plainly what git writes, a symbolic link, a file over its bound
// — any of these leaves the listing to git.

// maxLooseRef bounds a loose ref file: a ref is one line.
const maxLooseRef = 4096

// maxLooseRefs bounds the loose ref files read; a repository with more
// is listed by git.
const maxLooseRefs = 10000

// sha1Hex is the length of a SHA-1 object name; a repository with
// another object format has an extension and is left to git.
const sha1Hex = 40

// looseRef is one ref file's content: a commit id or a symbolic ref.
type looseRef struct{ sha, target string }

// listRefsLocal returns what
//
//	git for-each-ref --format=%(refname)%00%(objectname)%00%(symref) <patterns>
//
// prints in dir's repository (git being the program bin), read from the
// ref files; false when that is not certain. Each pattern is a ref path ("refs/heads"), matching itself
// and the refs below it.
func listRefsLocal(dir, bin string, patterns []string, maxPacked int64) (string, bool) {
	if _, set := envMap(gitEnv())["GIT_REF_PARANOIA"]; set {
		return "", false
	}
	answer, local := inspectLocal(dir, bin)
	if answer != localFound {
		return "", false
	}
	gitDir := local.gitDir
	if _, err := os.Lstat(filepath.Join(gitDir, "reftable")); !absent(err) {
		return "", false
	}
	// Loose refs first, then packed-refs: `git pack-refs` writes a ref
	// into packed-refs before it removes its file, so a ref being packed
	// meanwhile is seen in one or the other.
	loose := map[string]looseRef{}
	budget := maxLooseRefs
	for _, p := range patterns {
		if gitrepo.CheckRefName(p) != nil || !strings.HasPrefix(p, "refs/") {
			return "", false
		}
		fi, err := os.Lstat(filepath.Join(gitDir, filepath.FromSlash(p)))
		switch {
		case absent(err):
			continue
		case err != nil || !fi.IsDir():
			// A ref named as the pattern itself, or a link: left to git.
			return "", false
		}
		if !readLooseDir(gitDir, p, loose, &budget) {
			return "", false
		}
	}
	packed, ok := readPackedRefs(gitDir, maxPacked)
	if !ok {
		return "", false
	}
	within := func(name string) bool {
		for _, p := range patterns {
			if name == p || strings.HasPrefix(name, p+"/") {
				return true
			}
		}
		return false
	}
	names := map[string]bool{}
	for n := range loose {
		names[n] = true
	}
	for n := range packed {
		if within(n) {
			if slices.Contains(patterns, n) {
				// A ref named as the pattern itself.
				return "", false
			}
			names[n] = true
		}
	}
	objects := objectStore{dir: filepath.Join(gitDir, "objects")}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, name := range sorted {
		sha, target := "", ""
		ref := name
		for depth := 0; ; depth++ {
			l, isLoose := loose[ref]
			if !isLoose {
				sha = packed[ref]
				break
			}
			if l.target == "" {
				sha = l.sha
				break
			}
			if depth == maxSymrefDepth || !within(l.target) {
				return "", false
			}
			ref, target = l.target, l.target
		}
		// A symbolic ref to nothing, or a ref to an object that is not
		// there: git versions list them differently.
		if sha == "" || !objects.has(sha) {
			return "", false
		}
		b.WriteString(name + "\x00" + sha + "\x00" + target + "\n")
	}
	return b.String(), true
}

// readLooseDir reads the loose refs below rel, a directory of gitDir,
// into refs; false for anything git might read otherwise.
func readLooseDir(gitDir, rel string, refs map[string]looseRef, budget *int) bool {
	entries, err := os.ReadDir(filepath.Join(gitDir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := e.Name()
		// git passes over these itself (loose_fill_ref_dir).
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".lock") {
			continue
		}
		ref := rel + "/" + name
		switch {
		case e.Type().IsDir():
			if !readLooseDir(gitDir, ref, refs, budget) {
				return false
			}
		case e.Type().IsRegular():
			if *budget--; *budget < 0 || gitrepo.CheckRefName(ref) != nil {
				return false
			}
			l, ok := readLooseRef(filepath.Join(gitDir, filepath.FromSlash(ref)))
			if !ok {
				return false
			}
			refs[ref] = l
		default:
			// A symbolic link (git follows it), a FIFO, a device.
			return false
		}
	}
	return true
}

// readLooseRef reads a loose ref as git writes it: a lowercase object id,
// or "ref: " and a ref name, and a newline.
func readLooseRef(path string) (looseRef, bool) {
	b, ok := readBounded(path, maxLooseRef)
	if !ok {
		return looseRef{}, false
	}
	s := strings.TrimRight(string(b), " \t\n\r")
	if target, ok := strings.CutPrefix(s, "ref:"); ok {
		target = strings.TrimLeft(target, " \t\n\r")
		if !strings.HasPrefix(target, "refs/") || gitrepo.CheckRefName(target) != nil {
			return looseRef{}, false
		}
		return looseRef{target: target}, true
	}
	if !lowerHex(s, sha1Hex) {
		return looseRef{}, false
	}
	return looseRef{sha: s}, true
}

// readPackedRefs reads packed-refs: an optional "# pack-refs with:"
// header, then "<id> <name>" lines, each possibly followed by its peeled
// "^<id>" line. Anything else, or a name twice, is left to git.
func readPackedRefs(gitDir string, limit int64) (map[string]string, bool) {
	path := filepath.Join(gitDir, "packed-refs")
	refs := map[string]string{}
	fi, err := os.Lstat(path)
	if absent(err) {
		return refs, true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, ok := readBounded(path, limit)
	if !ok {
		return nil, false
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, false
	}
	lines := bytes.Split(data, []byte{'\n'})
	lines = lines[:len(lines)-1]
	if len(lines) > 0 && bytes.HasPrefix(lines[0], []byte("# pack-refs with:")) {
		lines = lines[1:]
	}
	afterRef := false
	for _, l := range lines {
		line := string(l)
		if peeled, ok := strings.CutPrefix(line, "^"); ok {
			if !afterRef || !lowerHex(peeled, sha1Hex) {
				return nil, false
			}
			afterRef = false
			continue
		}
		sha, name, ok := strings.Cut(line, " ")
		if !ok || !lowerHex(sha, sha1Hex) || gitrepo.CheckRefName(name) != nil {
			return nil, false
		}
		if _, dup := refs[name]; dup {
			return nil, false
		}
		refs[name] = sha
		afterRef = true
	}
	return refs, true
}

func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// objectStore answers whether an object is in a repository's own object
// directory, loose or in a pack, as far as it can tell: false when it is
// not found there (it may still be in an alternate, which is left to
// git).
type objectStore struct {
	dir   string
	packs []string // the pack indexes, read on first need
	read  bool
	found map[string]bool
}

func (o *objectStore) has(sha string) bool {
	if o.found[sha] {
		return true
	}
	if o.lookup(sha) {
		if o.found == nil {
			o.found = map[string]bool{}
		}
		o.found[sha] = true
		return true
	}
	return false
}

func (o *objectStore) lookup(sha string) bool {
	if fi, err := os.Lstat(filepath.Join(o.dir, sha[:2], sha[2:])); err == nil && fi.Mode().IsRegular() {
		return true
	}
	if !o.read {
		o.read = true
		entries, err := os.ReadDir(filepath.Join(o.dir, "pack"))
		if err != nil {
			return false
		}
		type pack struct {
			idx   string
			mtime int64
		}
		var found []pack
		for _, e := range entries {
			base, ok := strings.CutSuffix(e.Name(), ".idx")
			if !ok || !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			// git uses an index only beside its pack.
			if fi, err := os.Lstat(filepath.Join(o.dir, "pack", base+".pack")); err == nil && fi.Mode().IsRegular() {
				found = append(found, pack{filepath.Join(o.dir, "pack", e.Name()), info.ModTime().UnixNano()})
			}
		}
		// Newest first: the commit looked for is most often the state
		// commit of the cycle before, in the newest pack, and each index
		// asked costs an open and a read.
		slices.SortFunc(found, func(a, b pack) int {
			if a.mtime != b.mtime {
				return cmp.Compare(b.mtime, a.mtime)
			}
			return strings.Compare(a.idx, b.idx)
		})
		for _, p := range found {
			o.packs = append(o.packs, p.idx)
		}
	}
	id, err := hex.DecodeString(sha)
	if err != nil {
		return false
	}
	for _, idx := range o.packs {
		if packIndexHas(idx, id) {
			return true
		}
	}
	return false
}

// packIndexHas looks an object up in a version 2 pack index: a fan-out
// table of 256 counts, then the sorted object names. Any other file, or
// one whose size does not fit its count, finds nothing.
func packIndexHas(path string, id []byte) bool {
	fd, err := openNoBlock(path)
	if err != nil {
		return false
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 8+256*4)
	if _, err := fd.ReadAt(head, 0); err != nil || string(head[:8]) != "\xfftOc\x00\x00\x00\x02" {
		return false
	}
	fanout := func(i int) uint32 { return binary.BigEndian.Uint32(head[8+4*i:]) }
	n := int64(fanout(255))
	// Names, CRCs and 4-byte offsets, then the two checksums; large
	// offsets may follow the 4-byte ones.
	if min := int64(len(head)) + n*(20+4+4) + 2*20; fi.Size() < min || fi.Size() > min+n*8 {
		return false
	}
	lo, hi := int64(0), int64(fanout(int(id[0])))
	if id[0] > 0 {
		lo = int64(fanout(int(id[0]) - 1))
	}
	if lo > hi || hi > n {
		return false
	}
	name := make([]byte, 20)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := fd.ReadAt(name, int64(len(head))+mid*20); err != nil {
			return false
		}
		switch c := bytes.Compare(name, id); {
		case c == 0:
			return true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}
