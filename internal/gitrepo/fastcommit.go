package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
}

// gitConfig is the part of the repository's configuration that decides
// how a file becomes a blob and how objects are written.
type gitConfig struct {
	sign, fileMode bool
	sha256         bool
	// refTable is a repository whose refs are not files (reftable).
	refTable bool
	// other names a setting commitFast does not follow; "" when none.
	other string
}

// configPattern selects, in one `git config --get-regexp`, every setting
// that bears on building a state commit from the files: commit signing;
// how a file's mode and bytes are taken (filemode, autocrlf, symlinks,
// ignorecase); and how objects are written (object format, shared
// permissions, fsync).
const configPattern = `^(commit\.gpgsign|core\.(filemode|autocrlf|symlinks|ignorecase|sharedrepository|fsync|fsyncobjectfiles|fsyncmethod|createobject)|extensions\.(objectformat|compatobjectformat|refstorage))$`

// readConfig reads configPattern's settings; the last value of a key wins,
// as for git.
func (r *Repo) readConfig(ctx context.Context) (gitConfig, error) {
	c := gitConfig{fileMode: true}
	out, err := r.runStdout(ctx, nil, nil, "config", "-z", "--get-regexp", configPattern)
	var ge *Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return c, nil // none is set
	}
	if err != nil {
		return c, err
	}
	for _, kv := range strings.Split(out, "\x00") {
		if kv == "" {
			continue
		}
		key, val, hasVal := strings.Cut(kv, "\n")
		b, isBool := gitBool(val, hasVal)
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
		default:
			c.other = key
		}
	}
	return c, nil
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

// ReadLoose reads the loose object oid from objects (a repository's
// object directory) without a git process. ok is false for anything it
// cannot be sure of: an id that is not a lowercase SHA-1 or SHA-256, an
// object that is not loose (packed, or not there), one over limit bytes,
// or one whose bytes do not hash to its name. The hash follows the id's
// length, as the repository's object format does.
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
	f, err := os.Open(filepath.Join(objects, oid[:2], oid[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return "", nil, false
	}
	defer z.Close()
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
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, errNotPlain
	}
	defer root.Close()
	rel = filepath.FromSlash(rel)
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		fi, err := root.Lstat(filepath.Join(parts[:i]...))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if err != nil || !fi.IsDir() {
			return nil, nil, errNotPlain
		}
	}
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPlainFile {
		return nil, nil, errNotPlain
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, errNotPlain
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlainFile+1))
	if err != nil || len(data) > maxPlainFile {
		return nil, nil, errNotPlain
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
// the object directory as git writes loose objects (a temporary file
// linked into place), all of them before the branch moves: a crash leaves
// at worst objects nothing refers to, which `git gc` prunes. errNotPlain
// says to build the commit with the private index instead.
func (r *Repo) commitFast(ctx context.Context, base *fastBase, msg string, paths []string) (*Commit, error) {
	newHash := sha1.New
	if base.cfg.sha256 {
		newHash = sha256.New
	}
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
		fi, data, err := readPlain(r.Dir, rel)
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
	tree, err := r.writeTrees(base, newHash, changes)
	if err != nil {
		return nil, err
	}
	args := []string{"commit-tree", "-m", msg}
	if base.cfg.sign {
		args = append(args, "-S")
	}
	out, err := r.runStdout(ctx, nil, nil, append(args, "-p", base.head.SHA, tree)...)
	if err != nil {
		return nil, err
	}
	sha := strings.TrimSpace(out)
	if !ValidSHA(sha) {
		return nil, fmt.Errorf("git commit-tree printed %q", out)
	}
	if err := r.moveRef(ctx, base.head, sha, msg); err != nil {
		return nil, err
	}
	c := &Commit{SHA: sha, Branch: base.head.Branch()}
	plain := make([]change, len(changes))
	for i, ch := range changes {
		c.Files = append(c.Files, strings.TrimPrefix(ch.path, r.prefix))
		plain[i] = ch.change
	}
	c.IndexErr = r.stageCommitted(ctx, plain)
	r.autoGC(ctx, r.gitDir)
	return c, nil
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
func (r *Repo) writeTrees(base *fastBase, newHash func() hash.Hash, changes []fastChange) (string, error) {
	for _, ch := range changes {
		if !ch.deleted {
			if err := writeLoose(base.objects, ch.oid, "blob", ch.data); err != nil {
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
		if err := writeLoose(base.objects, hex.EncodeToString(oid), "tree", body); err != nil {
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

// writeLoose stores a loose object as git does: zlib-compressed header
// and body in a temporary file of the object's fan-out directory, linked
// (or renamed) to its name. An object already there is left as it is.
func writeLoose(objects, oid, typ string, body []byte) error {
	dir := filepath.Join(objects, oid[:2])
	name := filepath.Join(dir, oid[2:])
	if _, err := os.Lstat(name); err == nil {
		return nil
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("write object %s: %w", oid, err)
	}
	var tmp string
	var f *os.File
	for range 10 {
		var rnd [6]byte
		rand.Read(rnd[:])
		tmp = filepath.Join(dir, "tmp_obj_"+hex.EncodeToString(rnd[:]))
		var err error
		if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write object %s: %w", oid, err)
		}
	}
	if f == nil {
		return fmt.Errorf("write object %s: no temporary name free in %s", oid, dir)
	}
	defer os.Remove(tmp)
	// The fastest level, as core.looseCompression=1 for the private
	// index's blobs: `git gc` packs these objects with its own anyway.
	z, _ := zlib.NewWriterLevel(f, zlib.BestSpeed)
	fmt.Fprintf(z, "%s %d\x00", typ, len(body))
	_, err := z.Write(body)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write object %s: %w", oid, err)
	}
	if err := os.Link(tmp, name); err != nil && !errors.Is(err, fs.ErrExist) {
		if rerr := os.Rename(tmp, name); rerr != nil {
			return fmt.Errorf("write object %s: %w", oid, rerr)
		}
	}
	return nil
}
