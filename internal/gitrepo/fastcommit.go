package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errNotPlain is a commit commitFast cannot build as `git add` would
// without git's index: it is built with the private index instead.
var errNotPlain = errors.New("not a plain commit")

// fastBase is what Prepare read for commitFast.
type fastBase struct {
	head    Head
	objects string // the object directory (git rev-parse --git-path objects)
	cfg     gitConfig
	// plain says which candidate paths git would store byte for byte: no
	// filter, no line-ending conversion, no ident, no encoding.
	plain map[string]bool
	// trees are HEAD's trees along the candidate paths, by directory from
	// the top of the repository ("" is the root).
	trees map[string]*treeState
	// native, when not nil, lets the commit object, the branch and the
	// index be written without git where that is certain to be what git
	// would write (prepareNative).
	native *nativeCommit
	// slots are the temporary files made ahead for the objects; nil
	// when none are.
	slots *tmpSlots
	// pack says the commit's objects go into one pack (pack.go), not
	// loose.
	pack bool
}

// gitConfig is the part of the repository's configuration that decides
// how a file becomes a blob and how objects are written, and for the
// native state commit (nativeConfigPattern) also where the repository
// is, who commits and how the branch and the index are updated.
type gitConfig struct {
	sign, fileMode bool
	sha256         bool
	// refTable is a repository whose refs are not files (reftable).
	refTable bool
	// other names a setting commitFast does not follow; "" when none.
	other string

	// nativeOther names a setting that makes the repository's layout
	// uncertain to the native state commit (a bare repository, a
	// separate work tree, an extension it does not know); indexOther
	// one that makes git update the index in its own way; attrOther one
	// that makes attributes come from elsewhere than files.
	nativeOther, indexOther, attrOther string
	ident                              identConfig
	// logAll is core.logAllRefUpdates: "", "true", "false" or "always".
	logAll string
	// hooksPath, excludesFile and attributesFile are core.hooksPath,
	// core.excludesFile and core.attributesFile; set says which are.
	hooksPath, excludesFile, attributesFile string
	set                                     map[string]bool
}

// configPattern selects, in one `git config --get-regexp`, every setting
// that bears on building a state commit from the files: commit signing;
// how a file's mode and bytes are taken (filemode, autocrlf, symlinks,
// ignorecase); and how objects are written (object format, shared
// permissions, fsync).
const configPattern = `^(commit\.gpgsign|core\.(filemode|autocrlf|symlinks|ignorecase|sharedrepository|fsync|fsyncobjectfiles|fsyncmethod|createobject)|extensions\.(objectformat|compatobjectformat|refstorage))$`

// nativeConfigPattern is configPattern and what the native state commit
// also needs: the repository's layout (bare, worktree, format version,
// extensions), the identity, the reflog and hooks settings, the ignore
// and attributes files, and what changes how git writes the index.
const nativeConfigPattern = `^(commit\.gpgsign|core\.(filemode|autocrlf|symlinks|ignorecase|sharedrepository|fsync|fsyncobjectfiles|fsyncmethod|createobject|bare|worktree|repositoryformatversion|logallrefupdates|hookspath|excludesfile|attributesfile|splitindex|untrackedcache|fsmonitor|ignorestat)|extensions\..*|(user|author|committer)\.(name|email)|user\.useconfigonly|i18n\.commitencoding|index\..*|feature\..*|attr\..*)$`

// readConfig reads configPattern's settings; the last value of a key wins,
// as for git.
func (r *Repo) readConfig(ctx context.Context) (gitConfig, error) {
	out, err := r.runStdout(ctx, nil, nil, "config", "-z", "--get-regexp", configPattern)
	var ge *Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return parseConfig(""), nil // none is set
	}
	if err != nil {
		return gitConfig{fileMode: true}, err
	}
	return parseConfig(out), nil
}

// parseConfig reads the output of `git config -z --get-regexp`: "key\nvalue"
// (or "key" alone, for a key without a value) per NUL-terminated item.
func parseConfig(out string) gitConfig {
	c := gitConfig{fileMode: true, set: map[string]bool{}}
	for _, kv := range strings.Split(out, "\x00") {
		if kv == "" {
			continue
		}
		key, val, hasVal := strings.Cut(kv, "\n")
		c.set[key] = true
		b, isBool := gitBool(val, hasVal)
		if c.ident.set(key, val, hasVal) {
			continue
		}
		switch key {
		case "commit.gpgsign":
			// As `git config --bool` reads it for commitOnce: only a true
			// value signs.
			c.sign = isBool && b
		case "core.filemode":
			if !isBool {
				c.other = key
			}
			c.fileMode = b
		case "core.autocrlf", "core.symlinks", "core.ignorecase":
			if key == "core.symlinks" && isBool && b {
				continue
			}
			if key != "core.symlinks" && isBool && !b {
				continue
			}
			c.other = key
		case "extensions.refstorage":
			c.refTable = strings.ToLower(val) != "files"
		case "extensions.objectformat":
			switch strings.ToLower(val) {
			case "sha1":
				c.sha256 = false
			case "sha256":
				c.sha256 = true
			default:
				c.other = key
			}
		case "extensions.worktreeconfig":
			// config.worktree is among the files read; nothing else moves.
		case "core.bare":
			if !isBool || b {
				c.nativeOther = key
			}
		case "core.repositoryformatversion":
			if val != "0" && val != "1" {
				c.nativeOther = key
			}
		case "core.logallrefupdates":
			switch {
			case hasVal && strings.EqualFold(val, "always"):
				c.logAll = "always"
			case !isBool:
				c.nativeOther = key // git refuses to start
			case b:
				c.logAll = "true"
			default:
				c.logAll = "false"
			}
		case "core.hookspath", "core.excludesfile", "core.attributesfile":
			if !hasVal {
				c.nativeOther = key
			}
			switch key {
			case "core.hookspath":
				c.hooksPath = val
			case "core.excludesfile":
				c.excludesFile = val
			default:
				c.attributesFile = val
			}
		case "core.worktree":
			c.nativeOther = key
		case "core.splitindex", "core.untrackedcache", "core.fsmonitor", "core.ignorestat":
			c.indexOther = key
		default:
			switch {
			case strings.HasPrefix(key, "index."), strings.HasPrefix(key, "feature."):
				c.indexOther = key
			case strings.HasPrefix(key, "attr."):
				c.attrOther = key
			case strings.HasPrefix(key, "extensions.") && key != "extensions.compatobjectformat":
				c.nativeOther = key
			default:
				c.other = key
			}
		}
	}
	if c.refTable {
		c.nativeOther = "extensions.refstorage"
	}
	return c
}

// fastOK reports whether commitFast follows every setting read.
func (c gitConfig) fastOK() bool { return c.other == "" }

// gitBool reads a configuration value as git reads a boolean; ok is false
// for a value that is none.
func gitBool(v string, hasVal bool) (b, ok bool) {
	if !hasVal {
		return true, true // "[core] filemode" alone is true
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n != 0, true
	}
	return false, false
}

// plainAttrs are the attributes that make `git add` store other bytes
// than the file's.
var plainAttrs = []string{"filter", "text", "crlf", "eol", "ident", "working-tree-encoding"}

// plainPaths says, with one `git check-attr`, which paths carry none of
// plainAttrs (or only unset them: "-text" converts nothing).
func (r *Repo) plainPaths(ctx context.Context, paths []string) (map[string]bool, error) {
	plain := map[string]bool{}
	if len(paths) == 0 {
		return plain, nil
	}
	out, err := r.runStdout(ctx, nulList(paths), nil, append([]string{"check-attr", "-z", "--stdin"}, plainAttrs...)...)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		plain[p] = true
	}
	f := strings.Split(out, "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		p, attr, v := f[i], f[i+1], f[i+2]
		if v == "unspecified" || (v == "unset" && attr != "filter" && attr != "eol" && attr != "working-tree-encoding") {
			continue
		}
		if _, asked := plain[p]; !asked {
			return nil, fmt.Errorf("git check-attr printed %q", p)
		}
		plain[p] = false
	}
	return plain, nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode, name string
	oid        []byte
}

// isTree reports an entry that is a directory.
func (e treeEntry) isTree() bool { return e.mode == "40000" }

// key is the entry's name as git sorts it: a directory's with a slash.
func (e treeEntry) key() string {
	if e.isTree() {
		return e.name + "/"
	}
	return e.name
}

// treeState is one of HEAD's trees, or an empty one where HEAD has none.
type treeState struct {
	entries []treeEntry
}

func (t *treeState) find(name string) int {
	for i, e := range t.entries {
		if e.name == name {
			return i
		}
	}
	return -1
}

// headTrees reads HEAD's tree of every directory on the way to paths:
// from loose objects when they are (looseTrees), else with one `git
// cat-file --batch`. It returns nil without an error when one
// of them is not a tree (a file where the path needs a directory) or a
// path's name cannot be asked for on a line.
func (r *Repo) headTrees(ctx context.Context, sha string, paths []string, objects string, cfg gitConfig) (map[string]*treeState, error) {
	if !ValidSHA(sha) {
		return nil, nil
	}
	dirs := []string{""}
	seen := map[string]bool{"": true}
	for _, p := range paths {
		top, ok := r.topPath(p)
		if !ok || strings.ContainsAny(top, "\n\r") {
			return nil, nil
		}
		for d := path.Dir(top); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if trees := r.looseTrees(sha, dirs, objects, cfg); trees != nil {
		return trees, nil
	}
	var in []byte
	for _, d := range dirs {
		in = append(append(append(in, sha...), ':'), d...)
		in = append(in, '\n')
	}
	out, err := r.runStdout(ctx, in, nil, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	trees := map[string]*treeState{}
	rest := []byte(out)
	for _, d := range dirs {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("git cat-file --batch printed %q", out)
		}
		if string(line) == sha+":"+d+" missing" {
			trees[d], rest = &treeState{}, after
			continue
		}
		f := strings.Fields(string(line))
		if len(f) != 3 || !ValidSHA(f[0]) {
			return nil, fmt.Errorf("git cat-file --batch printed %q", line)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(after) {
			return nil, fmt.Errorf("git cat-file --batch printed %q", line)
		}
		body := after[:size]
		rest = after[size+1:]
		if f[1] != "tree" {
			return nil, nil
		}
		t, err := parseTree(body, len(f[0])/2)
		if err != nil {
			return nil, fmt.Errorf("tree %s (%s): %w", f[0], d, err)
		}
		trees[d] = t
	}
	return trees, nil
}

// looseTrees reads HEAD's trees along dirs (parents before children)
// from loose objects, without a process: the previous state commit wrote
// them, and until `git gc` packs them they are files. nil when one is
// not loose (or replace refs could stand for one), for cat-file to read.
func (r *Repo) looseTrees(sha string, dirs []string, objects string, cfg gitConfig) map[string]*treeState {
	if objects == "" || cfg.refTable || r.mayReplace() {
		return nil
	}
	typ, body, _ := ReadLoose(objects, sha, maxLooseTree)
	if typ != "commit" {
		return nil
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	root, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !ValidSHA(string(root)) {
		return nil
	}
	oids := map[string]string{"": string(root)}
	trees := map[string]*treeState{}
	dirs = slices.Clone(dirs)
	slices.SortStableFunc(dirs, func(a, b string) int { return depth(a) - depth(b) })
	for _, d := range dirs {
		oid, ok := oids[d]
		if !ok {
			parent, name := splitTop(d)
			pt := trees[parent]
			if pt == nil {
				return nil
			}
			i := pt.find(name)
			if i < 0 {
				trees[d] = &treeState{}
				continue
			}
			if !pt.entries[i].isTree() {
				return nil
			}
			oid = hex.EncodeToString(pt.entries[i].oid)
		}
		typ, body, _ := ReadLoose(objects, oid, maxLooseTree)
		if typ != "tree" {
			return nil
		}
		t, err := parseTree(body, len(oid)/2)
		if err != nil {
			return nil
		}
		trees[d] = t
	}
	return trees
}

// mayReplace reports replace refs, which git's readers follow: with them
// cat-file reads the trees.
func (r *Repo) mayReplace() bool {
	common := commonDir(r.gitDir)
	if _, err := os.Stat(filepath.Join(common, "refs", "replace")); err == nil {
		return true
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	return err != nil || len(b) > 1<<20 || bytes.Contains(b, []byte(" refs/replace/"))
}

// ReadLoose reads the object oid from objects (a repository's object
// directory) without a git process: a loose object, or one in the small
// packs state commits write (readPacked). ok is false for anything it
// cannot be sure of: an id that is not a lowercase SHA-1 or SHA-256, an
// object that is neither (in another pack, a delta, or not there), one
// over limit bytes, or one whose bytes do not hash to its name. The hash
// follows the id's length, as the repository's object format does.
func ReadLoose(objects, oid string, limit int64) (typ string, body []byte, ok bool) {
	var newHash func() hash.Hash
	switch len(oid) {
	case sha1.Size * 2:
		newHash = sha1.New
	case sha256.Size * 2:
		newHash = sha256.New
	default:
		return "", nil, false
	}
	if !ValidSHA(oid) || strings.ToLower(oid) != oid {
		return "", nil, false
	}
	// State commits' objects are in packs: looked for there first.
	if typ, body, ok := readPacked(objects, oid, limit, newHash); ok {
		return typ, body, true
	}
	f, err := openRead(filepath.Join(objects, oid[:2], oid[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	z, err := openZlib(f)
	if err != nil {
		return "", nil, false
	}
	defer closeZlib(z)
	b, err := io.ReadAll(io.LimitReader(z, limit+64))
	if err != nil {
		return "", nil, false
	}
	head, rest, found := bytes.Cut(b, []byte{0})
	t, size, _ := strings.Cut(string(head), " ")
	if n, err := strconv.Atoi(size); !found || err != nil || n != len(rest) || int64(n) > limit {
		return "", nil, false
	}
	if hex.EncodeToString(hashObject(newHash, t, rest)) != oid {
		return "", nil, false
	}
	return t, rest, true
}

// zlibReaders keeps zlib readers for reuse: each holds a 32 KiB window,
// and a commit reads a loose object per directory along its paths.
var zlibReaders sync.Pool

// openZlib is zlib.NewReader(r), with a reader kept from an earlier read
// when there is one.
func openZlib(r io.Reader) (io.ReadCloser, error) {
	if z, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := z.(zlib.Resetter).Reset(r, nil); err != nil {
			zlibReaders.Put(z)
			return nil, err
		}
		return z, nil
	}
	return zlib.NewReader(r)
}

// closeZlib closes a reader openZlib returned and keeps it for reuse.
func closeZlib(z io.ReadCloser) {
	z.Close()
	zlibReaders.Put(z)
}

// maxLooseTree bounds a tree or commit object looseTrees reads: far more
// than the state directories' trees, little enough to hold.
const maxLooseTree = 64 << 20

// parseTree reads a tree object's entries: "<mode> <name>\0<oid>".
func parseTree(b []byte, oidLen int) (*treeState, error) {
	t := &treeState{}
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || nul+1+oidLen > len(b) {
			return nil, errors.New("malformed entry")
		}
		t.entries = append(t.entries, treeEntry{mode: string(b[:sp]), name: string(b[sp+1 : nul]), oid: slices.Clone(b[nul+1 : nul+1+oidLen])})
		b = b[nul+1+oidLen:]
	}
	return t, nil
}

// canonicalMode reports a tree entry mode git writes itself; a tree with
// another (an old repository's 100664) is rewritten by write-tree, which
// commitFast leaves to it.
func canonicalMode(m string) bool {
	switch m {
	case "100644", "100755", "120000", "40000", "160000":
		return true
	}
	return false
}

// maxPlainFile bounds a file commitFast hashes itself; a larger one (a
// domain state file is the skill's to write) is left to git.
const maxPlainFile = 64 << 20

// readPlain reads the file rel under dir for commitFast: through an
// os.Root on dir, so nothing outside the project is read, and only when
// every directory on the way is a directory and the file a regular file
// of at most maxPlainFile bytes — what `git add` would take as a plain
// file. Anything else is errNotPlain (git then decides, and refuses a path
// beyond a symbolic link), a missing file fs.ErrNotExist.
func readPlain(dir, rel string) (fs.FileInfo, []byte, error) {
	pr, err := openPlain(dir)
	if err != nil {
		return nil, nil, err
	}
	defer pr.close()
	return pr.read(rel)
}

// plainReader is readPlain for several files of one commit: one os.Root,
// each directory on the way checked once, and each directory holding
// files opened once, as a root of its own, so that a file is found by
// its name there rather than by walking its whole path again.
type plainReader struct {
	root *os.Root
	dirs map[string]error // nil: a directory; fs.ErrNotExist; errNotPlain
	subs map[string]*os.Root
}

func openPlain(dir string) (*plainReader, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errNotPlain
	}
	return &plainReader{root: root, dirs: map[string]error{}, subs: map[string]*os.Root{}}, nil
}

func (pr *plainReader) close() {
	for _, s := range pr.subs {
		s.Close()
	}
	pr.root.Close()
}

// sub is the root of the directory d, checked by dir.
func (pr *plainReader) sub(d string) (*os.Root, error) {
	if d == "." || d == "" {
		return pr.root, nil
	}
	if s, ok := pr.subs[d]; ok {
		return s, nil
	}
	// Opened as a directory only, without blocking, first: os.Root's own
	// open of a directory would wait forever on a named pipe put there.
	f, err := pr.root.OpenFile(d, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f.Close()
	s, err := pr.root.OpenRoot(d)
	if err != nil {
		return nil, err
	}
	pr.subs[d] = s
	return s, nil
}

// dir checks that the directory d (relative to the root) and every one
// above it is a directory.
func (pr *plainReader) dir(d string) error {
	if d == "." || d == "" {
		return nil
	}
	if err, ok := pr.dirs[d]; ok {
		return err
	}
	err := pr.dir(filepath.Dir(d))
	if err == nil {
		fi, lerr := pr.root.Lstat(d)
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
			err = lerr
		case lerr != nil || !fi.IsDir():
			err = errNotPlain
		}
	}
	pr.dirs[d] = err
	return err
}

func (pr *plainReader) read(rel string) (fs.FileInfo, []byte, error) {
	rel = filepath.FromSlash(rel)
	if err := pr.dir(filepath.Dir(rel)); err != nil {
		return nil, nil, err
	}
	root, err := pr.sub(filepath.Dir(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, errNotPlain
	}
	name := filepath.Base(rel)
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPlainFile {
		return nil, nil, errNotPlain
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, nil, errNotPlain
	}
	defer f.Close()
	// Sized as the file was, one byte more to see it grew; ReadAll
	// would grow its buffer step by step.
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data) > maxPlainFile {
			return nil, nil, errNotPlain
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, errNotPlain
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	return fi, data, nil
}

// fastChange is one path of a commit made by commitFast.
type fastChange struct {
	change
	data []byte
}

// commitFast makes the commit of paths on base.head the way the private
// index would — the blobs of the files as `git add` stores them (a plain
// file's bytes), HEAD's trees with those entries replaced — but hashes and
// writes the objects itself, so that only commit-tree, update-ref and the
// user's index update run after the files are written. The objects go to
// the object directory as one pack (base.pack: pack.go) or as git writes
// loose objects (a temporary file renamed into place), all of them before
// the branch moves: a crash leaves at worst objects nothing refers to,
// which `git gc` prunes. errNotPlain says to build the commit with the
// private index instead.
func (r *Repo) commitFast(ctx context.Context, base *fastBase, msg string, paths []string) (*Commit, error) {
	newHash := sha1.New
	if base.cfg.sha256 {
		newHash = sha256.New
	}
	pr, err := openPlain(r.Dir)
	if err != nil {
		return nil, err
	}
	defer pr.close()
	var changes []fastChange
	seen := map[string]bool{}
	for _, rel := range paths {
		top, ok := r.topPath(rel)
		if !ok || seen[top] || !base.plain[rel] {
			return nil, errNotPlain
		}
		seen[top] = true
		dir, name := splitTop(top)
		t := base.trees[dir]
		if t == nil {
			return nil, errNotPlain
		}
		var old *treeEntry
		if i := t.find(name); i >= 0 {
			old = &t.entries[i]
			if old.mode != "100644" && old.mode != "100755" {
				return nil, errNotPlain // a link, a directory or a submodule becomes a file
			}
		}
		fi, data, err := pr.read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			if old != nil {
				changes = append(changes, fastChange{change: change{mode: "0", oid: hex.EncodeToString(make([]byte, len(old.oid))), path: top, deleted: true}})
			}
			continue
		}
		if err != nil {
			return nil, errNotPlain
		}
		// As update-index takes a file's mode: its executable bit, unless
		// core.filemode says the file system's cannot be trusted.
		mode := "100644"
		switch {
		case !base.cfg.fileMode && old != nil:
			mode = old.mode
		case base.cfg.fileMode && fi.Mode()&0o100 != 0:
			mode = "100755"
		}
		oid := hashObject(newHash, "blob", data)
		if old != nil && old.mode == mode && bytes.Equal(old.oid, oid) {
			continue
		}
		changes = append(changes, fastChange{change: change{mode: mode, oid: hex.EncodeToString(oid), path: top}, data: data})
	}
	if len(changes) == 0 {
		return nil, nil
	}
	slices.SortFunc(changes, func(a, b fastChange) int { return strings.Compare(a.path, b.path) })
	var ow objectWriter = newLooseWriter(base.objects, base.slots)
	if base.pack {
		ow = newPackWriter(base.objects, base.slots)
	}
	tree, err := r.writeTrees(base, ow, newHash, changes)
	if err != nil {
		return nil, err
	}
	sha, committer, err := r.makeCommit(ctx, base, ow, newHash, tree, msg)
	if err == nil {
		err = ow.flush()
	}
	if err != nil {
		return nil, err
	}
	c := &Commit{SHA: sha, Branch: base.head.Branch()}
	plain := make([]change, len(changes))
	for i, ch := range changes {
		c.Files = append(c.Files, strings.TrimPrefix(ch.path, r.prefix))
		plain[i] = ch.change
	}
	// When the branch and the index are both moved without git, the new
	// index is written into index.lock while the branch moves, and put in
	// place only once it has: the index never names a commit that did not
	// land.
	var staged chan indexResult
	if r.nativeMove(base, committer) && r.nativeIndex(base) {
		staged = make(chan indexResult, 1)
		go func() {
			lock, err := r.writeIndexLock(plain, newHash, base.slots)
			staged <- indexResult{lock, err}
		}()
	}
	if err := r.moveFast(ctx, base, sha, msg, committer); err != nil {
		if staged != nil {
			if s := <-staged; s.lock != nil {
				s.lock.release()
			}
		}
		return nil, err
	}
	if staged != nil {
		s := <-staged
		if s.err == nil {
			c.IndexErr = commitIndexLock(s.lock)
		} else if errors.Is(s.err, errNotPlain) {
			c.IndexErr = r.stageCommitted(ctx, plain)
		} else {
			c.IndexErr = s.err
		}
	} else {
		c.IndexErr = r.stageFast(ctx, base, plain, newHash)
	}
	if base.pack {
		r.foldPacks(ctx, base.objects)
	}
	r.autoGC(ctx, r.gitDir)
	return c, nil
}

// indexResult is an index written into its lock, or why it was not.
type indexResult struct {
	lock *refLock
	err  error
}

// nativeMove reports whether moveFast moves the branch itself.
func (r *Repo) nativeMove(base *fastBase, committer string) bool {
	n := base.native
	return n != nil && committer != "" && !n.hook("reference-transaction")
}

// nativeIndex reports whether stageFast updates the index itself.
func (r *Repo) nativeIndex(base *fastBase) bool {
	n := base.native
	return n != nil && n.cfg.indexOther == "" && !n.hook("post-index-change")
}

// makeCommit writes the commit of tree on base.head: itself when
// base.native allows and git's commit-tree would write exactly that
// (committer is then the committer's identity line, for the reflog),
// else with `git commit-tree`.
func (r *Repo) makeCommit(ctx context.Context, base *fastBase, ow objectWriter, newHash func() hash.Hash, tree, msg string) (sha, committer string, err error) {
	if n := base.native; n != nil && !base.cfg.sign {
		if err := r.stopped(ctx); err != nil {
			return "", "", err
		}
		now := time.Now()
		author, aok := gitIdent(authorWho, n.env, n.cfg.ident, now)
		committer, cok := gitIdent(committerWho, n.env, n.cfg.ident, now)
		if aok && cok {
			if body, ok := commitObject(tree, base.head.SHA, author, committer, msg); ok {
				sha, err := writeCommit(ow, newHash, body)
				return sha, committer, err
			}
		}
	}
	// git must see the trees.
	if err := ow.flush(); err != nil {
		return "", "", err
	}
	args := []string{"commit-tree", "-m", msg}
	if base.cfg.sign {
		args = append(args, "-S")
	}
	out, err := r.runStdout(ctx, nil, nil, append(args, "-p", base.head.SHA, tree)...)
	if err != nil {
		return "", "", err
	}
	sha = strings.TrimSpace(out)
	if !ValidSHA(sha) {
		return "", "", fmt.Errorf("git commit-tree printed %q", out)
	}
	return sha, "", nil
}

// moveFast moves the branch from base.head to sha: itself with git's
// lock protocol when base.native allows, the commit was its own (so the
// reflog's identity is known) and no reference-transaction hook would
// see it; else, and whenever that is uncertain, with `git update-ref`.
func (r *Repo) moveFast(ctx context.Context, base *fastBase, sha, msg, committer string) error {
	if n := base.native; r.nativeMove(base, committer) {
		if err := r.stopped(ctx); err != nil {
			return err
		}
		subject, _, _ := strings.Cut(msg, "\n")
		u := refUpdate{gitDir: r.gitDir, logAll: n.cfg.logAll, committer: committer, slots: base.slots}
		err := u.moveBranch(base.head.Ref, base.head.SHA, sha, "commit: "+subject)
		if !errors.Is(err, errNotPlain) {
			return err
		}
	}
	return r.moveRef(ctx, base.head, sha, msg)
}

// stageFast is stageCommitted on the index file itself when base.native
// allows and nothing would make git update it otherwise (a setting of
// its own, a post-index-change hook); else with `git update-index`.
func (r *Repo) stageFast(ctx context.Context, base *fastBase, changes []change, newHash func() hash.Hash) error {
	if r.nativeIndex(base) {
		err := r.stageNative(changes, newHash, base.slots)
		if !errors.Is(err, errNotPlain) {
			return err
		}
	}
	return r.stageCommitted(ctx, changes)
}

// stopped is the error of a native step that must not start: the
// context is done, or the HALT file exists (as a git process would not
// start then).
func (r *Repo) stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.HaltFile != "" {
		if _, err := os.Lstat(r.HaltFile); err == nil {
			return fmt.Errorf("state commit on %s: %w", r.Dir, ErrHalted)
		}
	}
	return nil
}

// splitTop is a path's directory ("" at the top) and name.
func splitTop(top string) (dir, name string) {
	if i := strings.LastIndexByte(top, '/'); i >= 0 {
		return top[:i], top[i+1:]
	}
	return "", top
}

// writeTrees writes the blobs of changes and every tree above them, the
// deepest first, and returns the root tree's name. A directory left empty
// is dropped from its parent, as write-tree does.
func (r *Repo) writeTrees(base *fastBase, lw objectWriter, newHash func() hash.Hash, changes []fastChange) (string, error) {
	for _, ch := range changes {
		if !ch.deleted {
			if err := lw.write(ch.oid, "blob", ch.data); err != nil {
				return "", err
			}
		}
	}
	byDir := map[string][]fastChange{}
	dirty := map[string]bool{"": true}
	for _, ch := range changes {
		d, _ := splitTop(ch.path)
		byDir[d] = append(byDir[d], ch)
		for ; d != ""; d, _ = splitTop(d) {
			dirty[d] = true
		}
	}
	dirs := make([]string, 0, len(dirty))
	for d := range dirty {
		dirs = append(dirs, d)
	}
	// Deepest first, so that a directory's subtrees are written before it.
	slices.SortFunc(dirs, func(a, b string) int { return depth(b) - depth(a) })
	sub := map[string][]byte{} // a rewritten directory's tree; nil when it is empty now
	for _, d := range dirs {
		t := base.trees[d]
		if t == nil {
			return "", errNotPlain
		}
		entries := slices.Clone(t.entries)
		set := func(e treeEntry, remove bool) {
			i := slices.IndexFunc(entries, func(x treeEntry) bool { return x.name == e.name })
			switch {
			case remove && i >= 0:
				entries = slices.Delete(entries, i, i+1)
			case remove:
			case i >= 0:
				entries[i] = e
			default:
				entries = append(entries, e)
			}
		}
		for _, ch := range byDir[d] {
			_, name := splitTop(ch.path)
			oid, _ := hex.DecodeString(ch.oid)
			set(treeEntry{mode: ch.mode, name: name, oid: oid}, ch.deleted)
		}
		for child, oid := range sub {
			if cd, name := splitTop(child); cd == d && child != "" {
				set(treeEntry{mode: "40000", name: name, oid: oid}, oid == nil)
			}
		}
		for _, e := range entries {
			if !canonicalMode(e.mode) {
				return "", errNotPlain
			}
		}
		if len(entries) == 0 && d != "" {
			sub[d] = nil
			continue
		}
		slices.SortFunc(entries, func(a, b treeEntry) int { return strings.Compare(a.key(), b.key()) })
		var body []byte
		for _, e := range entries {
			body = append(append(append(append(body, e.mode...), ' '), e.name...), 0)
			body = append(body, e.oid...)
		}
		oid := hashObject(newHash, "tree", body)
		if err := lw.write(hex.EncodeToString(oid), "tree", body); err != nil {
			return "", err
		}
		sub[d] = oid
	}
	return hex.EncodeToString(sub[""]), nil
}

// depth is how deep a directory is: -1 for the top, 0 for "agent".
func depth(dir string) int {
	if dir == "" {
		return -1
	}
	return strings.Count(dir, "/")
}

// hashObject is the object name of a typ object holding body.
func hashObject(newHash func() hash.Hash, typ string, body []byte) []byte {
	h := newHash()
	fmt.Fprintf(h, "%s %d\x00", typ, len(body))
	h.Write(body)
	return h.Sum(nil)
}

// looseWriter stores loose objects as git does: the zlib-compressed
// header and body in a temporary file of the object's fan-out directory,
// renamed to its name (what git does where it cannot link, and the same
// bytes under the same name either way). An object already there is left
// as it is. One compressor serves every object of a commit: setting one
// up costs more than compressing a state file.
type looseWriter struct {
	objects string
	buf     bytes.Buffer
	dirs    map[string]bool // fan-out directories known to exist
	// slots, when not nil, are temporary files made ahead (tmpSlots).
	slots *tmpSlots
}

func newLooseWriter(objects string, slots *tmpSlots) *looseWriter {
	return &looseWriter{objects: objects, dirs: map[string]bool{}, slots: slots}
}

// write stores the typ object oid holding body.
func (w *looseWriter) write(oid, typ string, body []byte) error {
	dir := filepath.Join(w.objects, oid[:2])
	name := filepath.Join(dir, oid[2:])
	if _, err := os.Lstat(name); err == nil {
		return nil
	}
	w.buf.Reset()
	head := typ + " " + strconv.Itoa(len(body)) + "\x00"
	if len(head)+len(body) <= maxStoredObject {
		appendStoredZlib(&w.buf, head, body)
	} else {
		z, ok := zlibWriters.Get().(*zlib.Writer)
		if ok {
			z.Reset(&w.buf)
		} else {
			// The fastest level, as core.looseCompression=1 for the
			// private index's blobs: `git gc` packs these objects with
			// its own anyway.
			z, _ = zlib.NewWriterLevel(&w.buf, zlib.BestSpeed)
		}
		z.Write([]byte(head))
		z.Write(body)
		err := z.Close()
		zlibWriters.Put(z)
		if err != nil {
			return fmt.Errorf("write object %s: %w", oid, err)
		}
	}
	if w.fromSlot(dir, name) {
		return nil
	}
	f, tmp, err := w.create(dir)
	if err != nil {
		return fmt.Errorf("write object %s: %w", oid, err)
	}
	_, err = f.Write(w.buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write object %s: %w", oid, err)
	}
	return nil
}

// zlibWriters keeps the compressors of large objects for reuse: each
// costs about a megabyte to set up.
var zlibWriters sync.Pool

// maxStoredObject is the largest object (header included) written as a
// zlib stream of stored, uncompressed deflate blocks. A compressor costs
// about a megabyte of fresh memory to set up — more than writing a state
// file's tens of kilobytes as they are — while the trees, the commit and
// every capped state file stay under this size; `git gc` compresses them
// when it packs them. Git reads any zlib stream. Larger objects (the
// cycle log, which grows with the history) are compressed.
const maxStoredObject = 64 << 10

// appendStoredZlib appends to buf the zlib stream (RFC 1950) of head and
// body, concatenated, in stored deflate blocks (RFC 1951, 3.2.4).
func appendStoredZlib(buf *bytes.Buffer, head string, body []byte) {
	// CMF 0x78: deflate with a 32 KiB window; FLG 0x01: no dictionary,
	// the fastest level, and the check bits that make CMF·256+FLG a
	// multiple of 31.
	buf.Write([]byte{0x78, 0x01})
	data := make([]byte, 0, len(head)+len(body))
	data = append(append(data, head...), body...)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		buf.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		buf.Write(data[:n])
		data = data[n:]
	}
	buf.Write(sum[:])
}

// fromSlot stores the compressed object through a slot made ahead,
// reporting whether it did; on any failure the slot is removed and the
// object is written the ordinary way.
func (w *looseWriter) fromSlot(dir, name string) bool {
	f, tmp, ok := w.slots.take()
	if !ok {
		return false
	}
	// Read-only, as git makes its object files, whatever the slot was.
	err := f.Chmod(0o444)
	if err == nil {
		_, err = f.Write(w.buf.Bytes())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
		if errors.Is(err, fs.ErrNotExist) && !w.dirs[dir] {
			if merr := os.Mkdir(dir, 0o777); merr == nil || errors.Is(merr, fs.ErrExist) {
				w.dirs[dir] = true
				err = os.Rename(tmp, name)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return false
	}
	w.dirs[dir] = true
	return true
}

// create makes a new temporary file in the fan-out directory dir,
// creating the directory when it is missing.
func (w *looseWriter) create(dir string) (*os.File, string, error) {
	for range 10 {
		var rnd [6]byte
		rand.Read(rnd[:])
		tmp := filepath.Join(dir, "tmp_obj_"+hex.EncodeToString(rnd[:]))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		switch {
		case err == nil:
			w.dirs[dir] = true
			return f, tmp, nil
		case errors.Is(err, fs.ErrNotExist) && !w.dirs[dir]:
			if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, "", err
			}
			w.dirs[dir] = true
		case !errors.Is(err, fs.ErrExist):
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("no temporary name free in %s", dir)
}
