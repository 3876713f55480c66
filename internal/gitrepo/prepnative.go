package gitrepo

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// discover finds the repository holding dir from its files, as git's
// setup_git_directory does, in the one layout where that is certain: a
// ".git" directory in dir or above it (the first one going up), on the
// same file system, owned — with the directory holding it — by this
// process's user, with objects/ and refs/ and a HEAD on a branch, and not
// a linked worktree's. Anything else (a .git file, a bare repository on
// the way, a mount point, another owner) is ok false: git finds it.
// top is the working tree's real path, prefix dir's path in it ("svc/",
// "" at the top), as `git rev-parse --show-prefix` prints it.
func discover(dir string) (top, gitDir, prefix string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", "", "", false
	}
	start, ok := statOf(fi)
	if !ok {
		return "", "", "", false
	}
	for d := real; ; {
		if filepath.Base(d) == ".git" {
			return "", "", "", false // inside a git directory: no working tree
		}
		g := filepath.Join(d, ".git")
		gfi, err := os.Lstat(g)
		if err == nil {
			dfi, derr := os.Lstat(d)
			if !gfi.IsDir() || derr != nil || !ownedByMe(gfi) || !ownedByMe(dfi) || !plainGitDir(g) {
				return "", "", "", false
			}
			rel, err := filepath.Rel(d, real)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return "", "", "", false
			}
			if rel == "." {
				rel = ""
			} else {
				rel = filepath.ToSlash(rel) + "/"
			}
			return d, g, rel, true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", "", false
		}
		// A directory git could take for a bare repository.
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); !errors.Is(err, fs.ErrNotExist) {
			return "", "", "", false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", "", false
		}
		pfi, err := os.Stat(parent)
		if err != nil {
			return "", "", "", false
		}
		if ps, ok := statOf(pfi); !ok || ps.dev != start.dev {
			return "", "", "", false // git stops at a file system's boundary
		}
		d = parent
	}
}

// ownedByMe reports a file owned by this process's effective user, which
// is what git asks of a repository (and its working tree) it reads
// without safe.directory.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := statOf(fi)
	return ok && int(st.uid) == os.Geteuid()
}

// plainGitDir reports a git directory git takes as one (objects/ and
// refs/ directories, a HEAD naming a branch) that is a main repository's,
// not a linked worktree's (which has a commondir file).
func plainGitDir(g string) bool {
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(g, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	if _, err := os.Lstat(filepath.Join(g, "commondir")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, err := headBranch(g)
	return err == nil
}

// nativeCommit is what the native state commit needs beyond fastBase:
// git's environment and configuration, and where git looks for hooks.
type nativeCommit struct {
	env map[string]string
	cfg gitConfig
	// hooks is the hooks directory ("" when it cannot be told).
	hooks string
}

// hook reports whether git would look at a hook called name: it exists
// (executable or not), or the hooks directory is not known. Such a step
// is left to git, which runs the hook.
func (n *nativeCommit) hook(name string) bool {
	if n.hooks == "" {
		return true
	}
	_, err := os.Lstat(filepath.Join(n.hooks, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// hooksDir is where git looks for hooks: core.hooksPath (relative to the
// top of the working tree, "~/" the home directory), else
// <gitDir>/hooks; "" for a value git would expand otherwise.
func hooksDir(cfg gitConfig, env map[string]string, top, gitDir string) string {
	if !cfg.set["core.hookspath"] {
		return filepath.Join(gitDir, "hooks")
	}
	return configPath(cfg.hooksPath, env, top)
}

// configPath is a path-valued setting as git's interpolate_path reads
// it: absolute, "~/…" in $HOME, or relative to base; "" for one ooda
// does not expand as git would ("~user/…", "%(prefix)/…") or when base
// is "".
func configPath(v string, env map[string]string, base string) string {
	switch {
	case v == "":
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if env["HOME"] == "" {
			return ""
		}
		return filepath.Join(env["HOME"], strings.TrimPrefix(v, "~"))
	case strings.HasPrefix(v, "~") || strings.HasPrefix(v, "%("):
		return ""
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	case base == "":
		return ""
	}
	return filepath.Join(base, v)
}

// xdgFile is $XDG_CONFIG_HOME/git/<name>, or ~/.config/git/<name>.
func xdgFile(env map[string]string, name string) string {
	if x := env["XDG_CONFIG_HOME"]; x != "" {
		return filepath.Join(x, "git", name)
	}
	return filepath.Join(env["HOME"], ".config", "git", name)
}

// systemFiles are the places a git installation reads a system-wide file
// (gitconfig, gitattributes) from: /etc for a git installed in /usr, its
// prefix's etc/ otherwise. Both are watched.
func systemFiles(bin, name string) []string {
	files := []string{filepath.Join("/etc", name)}
	if prefix := filepath.Dir(filepath.Dir(bin)); prefix != "/usr" && prefix != "/" {
		files = append(files, filepath.Join(prefix, "etc", name))
	}
	return files
}

// settleMargin is how long ago a file must have last changed for its
// fingerprint to stand for its content: a change within the same tick of
// the file system's clock could otherwise keep it. A file system whose
// times have no nanoseconds (a coarse clock) gets three seconds.
var settleMargin = time.Second

// prepCache remembers, in <gitDir>/ooda/prep-cache.json, git's answers
// to the questions a state commit asks before it writes its files —
// the configuration it follows, which paths the ignore rules match and
// which carry attributes — with the fingerprint of every file those
// answers come from and of git's environment. An answer is reused only
// while all of them are unchanged; a cache that does not read back as
// written is ignored.
type prepCache struct {
	Version int                    `json:"version"`
	Key     string                 `json:"key"`
	Files   map[string]string      `json:"files"`
	Config  *string                `json:"config,omitempty"`
	Paths   map[string]*cachedPath `json:"paths,omitempty"`
}

// cachedPath is what git answered for one path (from the top of the
// repository) when it was of type Type: whether the ignore rules match it
// (tracked or not) and whether it carries none of plainAttrs.
type cachedPath struct {
	Type    string `json:"type"`
	Ignored *bool  `json:"ignored,omitempty"`
	Plain   *bool  `json:"plain,omitempty"`
}

// maxCachedPaths bounds the paths the cache remembers: past it, it starts
// again from the paths of the current commit.
const maxCachedPaths = 4096

// prepCacheVersion is the cache's format.
const prepCacheVersion = 1

func prepCacheFile(gitDir string) string {
	return filepath.Join(gitDir, "ooda", "prep-cache.json")
}

// maxPrepCache bounds the cache file read back.
const maxPrepCache = 4 << 20

// prepRun is one Prepare's view of the cache: the fingerprints taken
// before any git process ran, the answers still valid, and the new cache.
type prepRun struct {
	gitDir string
	now    time.Time
	fps    map[string]string
	fresh  map[string]bool // settled (see settleMargin) at now, asked only of files the old cache does not hold
	// types are the paths' types (pathType) as first seen, before any
	// git process ran.
	types map[string]string
	old   *prepCache // nil when missing, malformed or stale
	next  *prepCache
	// use says answers may be read from and written to the cache: the
	// configuration they depend on is itself known unchanged.
	use bool
}

// fp is name's fingerprint, taken once per Prepare.
func (pr *prepRun) fp(name string) string {
	if v, ok := pr.fps[name]; ok {
		return v
	}
	v := fingerprint(name)
	pr.fps[name] = v
	return v
}

// isFresh reports whether name, fingerprinted, had settled at now. It is
// asked only of a file the old cache does not hold (keep): one it holds
// is known unchanged, and its two more stats a cycle are saved. Asked
// after the fingerprint was taken, it can only be more cautious: a file
// changed since has a change time later than now.
func (pr *prepRun) isFresh(name string) bool {
	if v, ok := pr.fresh[name]; ok {
		return v
	}
	v := pr.fp(name) != "?" && settled(name, pr.now)
	pr.fresh[name] = v
	return v
}

// pathType is the package's pathType of the path top (from the top of
// the working tree wt), taken once: the answers read from the cache are
// all checked against the same view of the tree. Once git has been asked
// (forget), it is taken again.
func (pr *prepRun) pathType(wt, top string) string {
	if v, ok := pr.types[top]; ok {
		return v
	}
	v := pathType(filepath.Join(wt, filepath.FromSlash(top)))
	pr.types[top] = v
	return v
}

// forget drops the path types taken so far: git has read the tree since.
func (pr *prepRun) forget() {
	clear(pr.types)
}

// settled reports a file (or a missing one) that last changed longer
// than settleMargin before now.
func settled(name string, now time.Time) bool {
	newest := int64(0)
	for _, stat := range []func(string) (fs.FileInfo, error){os.Lstat, os.Stat} {
		fi, err := stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false
		}
		st, ok := statOf(fi)
		if !ok {
			return false
		}
		margin := settleMargin
		if st.mtime%1e9 == 0 && st.ctime%1e9 == 0 {
			margin = max(margin, 3*time.Second)
		}
		newest = max(newest, st.mtime+margin.Nanoseconds(), st.ctime+margin.Nanoseconds())
	}
	return newest < now.UnixNano()
}

// loadPrepRun reads the cache of gitDir for key and checks every
// fingerprint it holds.
func loadPrepRun(gitDir, key string) *prepRun {
	pr := &prepRun{gitDir: gitDir, now: time.Now(), fps: map[string]string{}, fresh: map[string]bool{},
		types: map[string]string{}}
	pr.next = &prepCache{Version: prepCacheVersion, Key: key, Files: map[string]string{}, Paths: map[string]*cachedPath{}}
	b, err := readSmall(prepCacheFile(gitDir), maxPrepCache)
	if err != nil {
		return pr
	}
	var c prepCache
	if json.Unmarshal(b, &c) != nil || c.Version != prepCacheVersion || c.Key != key || c.Files == nil || (c.Config == nil && len(c.Paths) > 0) {
		return pr
	}
	for name, want := range c.Files {
		if !filepath.IsAbs(name) || want == "?" || pr.fp(name) != want {
			return pr
		}
	}
	for top, cp := range c.Paths {
		if cp == nil || !validTop(top) {
			return pr
		}
	}
	pr.old = &c
	return pr
}

// validTop reports a clean path from the top of a repository.
func validTop(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../")
}

// known reports whether every one of files was in the old cache (and so
// is unchanged since).
func (pr *prepRun) known(files []string) bool {
	if pr.old == nil {
		return false
	}
	for _, f := range files {
		if _, ok := pr.old.Files[f]; !ok {
			return false
		}
	}
	return true
}

// keep records files as inputs of what the new cache holds; false when
// one changed too recently to be trusted, or cannot be told.
func (pr *prepRun) keep(files []string) bool {
	for _, f := range files {
		if pr.fp(f) == "?" || !pr.known([]string{f}) && !pr.isFresh(f) {
			return false
		}
	}
	for _, f := range files {
		pr.next.Files[f] = pr.fp(f)
	}
	return true
}

// save writes the new cache when it holds anything, and when none of its
// files changed while git was reading them; atomically (a temporary
// file renamed into place), unsynced: it is only a cache.
func (pr *prepRun) save() {
	if !pr.use || (pr.next.Config == nil && len(pr.next.Paths) == 0) {
		return
	}
	if pr.old != nil && equalCache(pr.old, pr.next) {
		return
	}
	for f, want := range pr.next.Files {
		if fingerprint(f) != want {
			return
		}
	}
	b, err := json.Marshal(pr.next)
	if err != nil {
		return
	}
	dir := filepath.Dir(prepCacheFile(pr.gitDir))
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, "prep-cache."+hex.EncodeToString(rnd[:])+".tmp")
	if err := os.WriteFile(tmp, b, 0o666); err != nil {
		os.Remove(tmp)
		return
	}
	if os.Rename(tmp, prepCacheFile(pr.gitDir)) != nil {
		os.Remove(tmp)
	}
}

// equalCache reports two caches that would be written as the same JSON
// document, without encoding them: a cache unchanged since the last
// cycle, the usual case, is neither encoded nor written.
func equalCache(a, b *prepCache) bool {
	if a.Version != b.Version || a.Key != b.Key || (a.Config == nil) != (b.Config == nil) ||
		(a.Config != nil && *a.Config != *b.Config) || (a.Files == nil) != (b.Files == nil) ||
		len(a.Files) != len(b.Files) || len(a.Paths) != len(b.Paths) {
		return false
	}
	for k, v := range a.Files {
		if w, ok := b.Files[k]; !ok || w != v {
			return false
		}
	}
	sameBool := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	for k, v := range a.Paths {
		w, ok := b.Paths[k]
		if !ok || (v == nil) != (w == nil) {
			return false
		}
		if v != nil && (v.Type != w.Type || !sameBool(v.Ignored, w.Ignored) || !sameBool(v.Plain, w.Plain)) {
			return false
		}
	}
	return true
}

// pathType is what a path is in the working tree, as far as the ignore
// rules tell kinds apart: "d" a directory, "n" anything else (a file, a
// link, nothing: a pattern ending in "/" matches none of them), "?" when
// it cannot be told.
func pathType(name string) string {
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "n"
	case err != nil:
		return "?"
	case fi.IsDir():
		return "d"
	}
	return "n"
}

// dirsOf are the directories from the top of the repository down to the
// one holding top ("" is the top).
func dirsOf(top string) []string {
	dirs := []string{""}
	for i := 0; i < len(top); i++ {
		if top[i] == '/' {
			dirs = append(dirs, top[:i])
		}
	}
	return dirs
}

// inTop is the file name in directory d (from the top) of the working
// tree top.
func inTop(top, d, name string) string {
	return filepath.Join(top, filepath.FromSlash(d), name)
}

// prepareNative is Prepare without git processes where their answers are
// certain: the repository and HEAD from the files (discover, headBranch,
// readRef), the configuration, ignore rules and attributes from
// prepCache while their files are unchanged (git answers, once, what is
// not cached), whether a path is tracked from the index. nil when any of
// it is uncertain: Prepare then asks git as it always did.
func prepareNative(ctx context.Context, repo *Repo, paths, ahead []string) *Prep {
	ng := repo.nativeGit()
	if ng == nil {
		return nil
	}
	top, gitDir, prefix, ok := discover(repo.Dir)
	if !ok {
		return nil
	}
	ref, err := headBranch(gitDir)
	if err != nil {
		return nil
	}
	sha, err := readRef(gitDir, ref)
	if err != nil {
		return nil // an unborn branch among others: git says
	}
	home := ng.env["HOME"]
	pr := loadPrepRun(gitDir, ng.key)
	cfgFiles := append(systemFiles(ng.bin, "gitconfig"), xdgFile(ng.env, "config"), filepath.Join(home, ".gitconfig"),
		filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"))
	for _, f := range cfgFiles {
		pr.fp(f)
	}
	var cfgOut string
	if pr.old != nil && pr.old.Config != nil && pr.known(cfgFiles) {
		cfgOut, pr.use = *pr.old.Config, true
		// Every answer of the old cache stands: all its files are
		// unchanged.
		for f, v := range pr.old.Files {
			pr.next.Files[f] = v
		}
		if len(pr.old.Paths) < maxCachedPaths {
			for t, cp := range pr.old.Paths {
				c := *cp
				pr.next.Paths[t] = &c
			}
		}
	} else {
		out, origins, err := readNativeConfig(ctx, repo, top)
		if err != nil {
			return nil
		}
		cfgOut = out
		if home != "" && !hasInclude(cfgFiles) && subset(origins, cfgFiles) && pr.keep(cfgFiles) {
			pr.use = true
		}
	}
	if pr.use {
		pr.next.Config = &cfgOut
	} else {
		pr.old = nil // answers that rest on a configuration not known unchanged
	}
	cfg := parseConfig(cfgOut)
	if cfg.nativeOther != "" || (len(sha) == 64) != cfg.sha256 {
		return nil
	}
	repo.gitDir, repo.prefix, repo.top = gitDir, prefix, top
	p := &Prep{Repo: repo, Head: Head{Ref: ref, SHA: sha}, OK: true}
	removeStaleIndexes(gitDir)
	p.asked = map[string]bool{}
	for _, q := range paths {
		p.asked[q] = true
	}
	newHash := sha1.New
	if cfg.sha256 {
		newHash = sha256.New
	}
	if ix, err := readIndex(filepath.Join(gitDir, "index"), newHash); err == nil {
		p.index = ix
	}
	tops := map[string]string{}
	for _, q := range paths {
		t, ok := repo.topPath(q)
		if !ok || (p.index != nil && p.index.underGitlink(t)) {
			tops = nil
			break
		}
		tops[q] = t
	}
	var later []string
	for _, q := range ahead {
		t, ok := repo.topPath(q)
		if _, dup := tops[q]; ok && !dup && tops != nil && p.index != nil && !p.index.underGitlink(t) {
			tops[q] = t
			later = append(later, q)
		}
	}
	if !pr.use || p.index == nil || tops == nil {
		pr.use = pr.use && p.index != nil && tops != nil
		p.ignored, p.ignoreErr = repo.IgnoredPaths(ctx, paths)
	} else {
		p.ignored, p.ignoreErr = nativeIgnored(ctx, repo, pr, cfg, ng, p.index, paths, later, tops)
	}
	defer pr.save()
	if p.ignoreErr != nil || !cfg.fastOK() {
		return p
	}
	plain, err := nativePlain(ctx, repo, pr, cfg, ng, p.index, paths, later, tops)
	if err != nil {
		return p
	}
	objects := filepath.Join(gitDir, "objects")
	trees, err := repo.headTrees(ctx, sha, paths, objects, cfg)
	if err != nil || trees == nil {
		return p
	}
	p.base = &fastBase{head: p.Head, objects: objects, cfg: cfg, plain: plain, trees: trees,
		native: &nativeCommit{env: ng.env, cfg: cfg, hooks: hooksDir(cfg, ng.env, top, gitDir)},
		pack:   !cfg.sha256}
	if p.base.pack {
		// The pack and its .idx, and the locks of the branch, HEAD and
		// the index.
		p.base.slots = makeSlots(gitDir, 2+3, false)
	} else {
		// At most a blob per path, a tree per directory, the commit, and
		// the locks.
		p.base.slots = makeSlots(gitDir, len(paths)+len(trees)+1+3, true)
	}
	return p
}

// readNativeConfig asks git for nativeConfigPattern's settings with their
// origins; origins are the files they came from ("" for one that is not a
// file: the command line, a blob).
func readNativeConfig(ctx context.Context, repo *Repo, top string) (string, []string, error) {
	out, err := repo.runStdout(ctx, nil, nil, "config", "-z", "--show-origin", "--get-regexp", nativeConfigPattern)
	var ge *Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var kvs, origins []string
	items := strings.Split(out, "\x00")
	for i := 0; i+1 < len(items); i += 2 {
		origin, ok := strings.CutPrefix(items[i], "file:")
		switch {
		case !ok:
			origin = ""
		case !filepath.IsAbs(origin):
			// git reads the repository's files from the top of the
			// working tree.
			origin = filepath.Join(top, origin)
		}
		origins = append(origins, origin)
		kvs = append(kvs, items[i+1])
	}
	if len(items)%2 != 1 || items[len(items)-1] != "" {
		return "", nil, errNotPlain
	}
	return strings.Join(kvs, "\x00") + "\x00", origins, nil
}

// hasInclude reports a configuration file that may include another
// (include.path, includeIf): its answers are not cached.
func hasInclude(files []string) bool {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || bytes.Contains(bytes.ToLower(b), []byte("include")) {
			return true
		}
	}
	return false
}

// subset reports whether every one of names is among set.
func subset(names, set []string) bool {
	for _, n := range names {
		found := false
		for _, s := range set {
			if n != "" && filepath.Clean(n) == s {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// nativeIgnored is IgnoredPaths from the cached ignore rules and the
// index: a path is ignored when the rules match it and the index does not
// track it, as `git check-ignore` decides. The rules of paths not cached
// are asked of one `git check-ignore --no-index`.
func nativeIgnored(ctx context.Context, repo *Repo, pr *prepRun, cfg gitConfig, ng *nativeGit, ix *gitIndex, paths, later []string, tops map[string]string) (map[string]bool, error) {
	excludes := xdgFile(ng.env, "ignore")
	if cfg.set["core.excludesfile"] {
		excludes = configPath(cfg.excludesFile, ng.env, "")
	}
	global := []string{filepath.Join(pr.gitDir, "info", "exclude"), excludes}
	// The same for every path of a directory: made once per directory.
	made := map[string][]string{}
	inputs := func(top string) []string {
		dir, _ := splitTop(top)
		if files, ok := made[dir]; ok {
			return files
		}
		files := append([]string(nil), global...)
		for _, d := range dirsOf(top) {
			files = append(files, inTop(repo.top, d, ".gitignore"))
		}
		made[dir] = files
		return files
	}
	rules := map[string]bool{}
	var missing, missingLater []string
	for i, q := range append(append([]string(nil), paths...), later...) {
		t := tops[q]
		typ := pr.pathType(repo.top, t)
		files := inputs(t)
		if excludes != "" && pr.old != nil && pr.known(files) {
			if cp := pr.old.Paths[t]; cp != nil && cp.Type == typ && cp.Ignored != nil {
				rules[q] = *cp.Ignored
				pr.remember(t, typ, files, cp.Ignored, nil)
				continue
			}
		}
		if i >= len(paths) {
			if excludes != "" {
				missingLater = append(missingLater, q)
			}
			continue
		}
		missing = append(missing, q)
	}
	if len(missing) > 0 {
		missing = append(missing, missingLater...)
		for _, q := range missing {
			for _, f := range inputs(tops[q]) {
				pr.fp(f)
			}
		}
		more, err := repo.ignoredPaths(ctx, missing, true)
		pr.forget()
		if err != nil {
			return nil, err
		}
		for _, q := range missing {
			rules[q] = more[q]
			if excludes != "" {
				v := more[q]
				t := tops[q]
				pr.remember(t, pathType(filepath.Join(repo.top, filepath.FromSlash(t))), inputs(t), &v, nil)
			}
		}
	}
	out := map[string]bool{}
	for _, q := range paths {
		if rules[q] && !ix.tracked(tops[q]) {
			out[q] = true
		}
	}
	return out, nil
}

// nativePlain is plainPaths from the cache, asking one `git check-attr`
// about the paths not cached. A path whose directories' .gitattributes
// git would read from the index (missing from the working tree but
// tracked) is always asked.
func nativePlain(ctx context.Context, repo *Repo, pr *prepRun, cfg gitConfig, ng *nativeGit, ix *gitIndex, paths, later []string, tops map[string]string) (map[string]bool, error) {
	attrs := xdgFile(ng.env, "attributes")
	if cfg.set["core.attributesfile"] {
		attrs = configPath(cfg.attributesFile, ng.env, "")
	}
	global := append(systemFiles(ng.bin, "gitattributes"), filepath.Join(pr.gitDir, "info", "attributes"), attrs)
	cacheable := attrs != "" && cfg.attrOther == "" && ix != nil && tops != nil
	// The same for every path of a directory: made once per directory.
	type made struct {
		files []string
		ok    bool
	}
	byDir := map[string]made{}
	inputs := func(top string) ([]string, bool) {
		dir, _ := splitTop(top)
		if m, ok := byDir[dir]; ok {
			return m.files, m.ok
		}
		files := append([]string(nil), global...)
		ok := true
		for _, d := range dirsOf(top) {
			f := inTop(repo.top, d, ".gitattributes")
			files = append(files, f)
			if pr.fp(f) == "-" && ix.tracked(path.Join(d, ".gitattributes")) {
				ok = false
			}
		}
		byDir[dir] = made{files, ok}
		return files, ok
	}
	plain := map[string]bool{}
	var missing, missingLater []string
	for i, q := range append(append([]string(nil), paths...), later...) {
		if cacheable && pr.old != nil {
			t := tops[q]
			files, ok := inputs(t)
			typ := pr.pathType(repo.top, t)
			if cp := pr.old.Paths[t]; ok && cp != nil && cp.Type == typ && cp.Plain != nil && pr.known(files) {
				plain[q] = *cp.Plain
				pr.remember(t, typ, files, nil, cp.Plain)
				continue
			}
		}
		if i >= len(paths) {
			if cacheable {
				missingLater = append(missingLater, q)
			}
			continue
		}
		missing = append(missing, q)
	}
	if len(missing) > 0 {
		missing = append(missing, missingLater...)
	}
	if cacheable {
		for _, q := range missing {
			files, _ := inputs(tops[q])
			for _, f := range files {
				pr.fp(f)
			}
		}
	}
	if len(missing) > 0 {
		more, err := repo.plainPaths(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, q := range missing {
			plain[q] = more[q]
			if !cacheable {
				continue
			}
			t := tops[q]
			if files, ok := inputs(t); ok {
				v := more[q]
				pr.remember(t, pathType(filepath.Join(repo.top, filepath.FromSlash(t))), files, nil, &v)
			}
		}
	}
	return plain, nil
}

// remember puts one answer about top into the new cache, with the files
// it depends on; nothing when one of them cannot be trusted yet.
func (pr *prepRun) remember(top, typ string, files []string, ignored, plain *bool) {
	if !pr.use || typ == "?" || !pr.keep(files) {
		return
	}
	cp := pr.next.Paths[top]
	if cp == nil || cp.Type != typ {
		cp = &cachedPath{Type: typ}
		pr.next.Paths[top] = cp
	}
	if ignored != nil {
		cp.Ignored = ignored
	}
	if plain != nil {
		cp.Plain = plain
	}
}
