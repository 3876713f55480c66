package forge

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Every cycle asks the same two questions before it reads anything of the
// forge — is the project a git working tree, and where does its origin
// remote point — and each answer from git costs a process. The files git
// reads to answer them are read here instead, as git reads them, in the
// common case only: whenever anything could make git answer otherwise
// than that reading (an include, a setting or a layout not followed here,
// a key without a value, a file that is not what it should be), the answer is
// "ask git", and git is asked as before. Every file may be hostile
// (docs/security.md): nothing is followed that git would not follow,
// nothing is read without a bound, and no open waits on a FIFO.

// localAnswer is what the files say of a directory.
type localAnswer int

const (
	// localUnknown: only git can tell.
	localUnknown localAnswer = iota
	// localNone: the directory is certainly in no git repository.
	localNone
	// localFound: the directory is the top of a git working tree.
	localFound
)

// localRepo is what the files of the repository at a working tree's top
// say.
type localRepo struct {
	// gitDir is the repository's git directory, without symbolic links.
	gitDir string
	// origin is what `git remote get-url origin` prints, trimmed; "" when
	// there is no remote origin.
	origin string
}

// maxConfigFile bounds a configuration file read here; git reads a larger
// one itself.
const maxConfigFile = 1 << 20

// maxGitFile is git's own bound on a .git file (read_gitfile_gently).
const maxGitFile = 1 << 20

// inspectLocal answers, from the files, what git (the program bin, found
// in PATH; "" for none) started in dir with gitEnv's environment would
// find: the top of a working tree and its origin, certainly no
// repository, or localUnknown.
func inspectLocal(dir, bin string) (localAnswer, *localRepo) {
	if bin == "" {
		// Without git, every question put to it has no answer.
		return localUnknown, nil
	}
	env := envMap(gitEnv())
	for _, k := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEST_ASSUME_DIFFERENT_OWNER"} {
		if _, set := env[k]; set {
			return localUnknown, nil
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return localUnknown, nil
	}
	// git looks up from the real directory it runs in, not from the path
	// it was given.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return localUnknown, nil
	}
	for d := real; ; {
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		switch {
		case err == nil && d == real:
			return foundAt(real, fi, env, bin)
		case err == nil || !absent(err):
			// Something further up, or something unreadable: only git
			// knows whether it is a repository it would take.
			return localUnknown, nil
		}
		// A directory without HEAD is no bare repository.
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); !absent(err) {
			return localUnknown, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return localNone, nil
		}
		d = parent
	}
}

// foundAt reads the repository whose .git entry is fi, at the top of the
// working tree top.
func foundAt(top string, fi fs.FileInfo, env map[string]string, bin string) (localAnswer, *localRepo) {
	gitDir := filepath.Join(top, ".git")
	owned := []string{top}
	switch {
	case fi.IsDir():
	case fi.Mode().IsRegular():
		// "gitdir: <path>", as a submodule's working tree has.
		target, ok := readGitFile(gitDir)
		if !ok {
			return localUnknown, nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(top, target)
		}
		real, err := filepath.EvalSymlinks(target)
		if err != nil {
			return localUnknown, nil
		}
		owned = append(owned, gitDir)
		gitDir = real
	default:
		return localUnknown, nil
	}
	owned = append(owned, gitDir)
	if !plainRepoDir(gitDir) {
		return localUnknown, nil
	}
	// git refuses a repository another user owns unless safe.directory
	// says otherwise: that is left to git.
	for _, p := range owned {
		st, err := os.Lstat(p)
		if err != nil || !ownedByMe(st) {
			return localUnknown, nil
		}
	}
	origin, ok := readOrigin(gitDir, env, bin)
	if !ok {
		return localUnknown, nil
	}
	return localFound, &localRepo{gitDir: gitDir, origin: origin}
}

// plainRepoDir reports whether gitDir is a repository git takes as one
// (is_git_directory), laid out as this package reads it: objects and refs
// directories, a valid HEAD, and no common directory elsewhere (a linked
// worktree's).
func plainRepoDir(gitDir string) bool {
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Lstat(filepath.Join(gitDir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); !absent(err) {
		return false
	}
	return validHeadFile(filepath.Join(gitDir, "HEAD"))
}

// readGitFile reads a .git file as git does (read_gitfile_gently): the
// path after "gitdir: ", without the line's end.
func readGitFile(path string) (string, bool) {
	b, ok := readBounded(path, maxGitFile)
	if !ok {
		return "", false
	}
	s, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return "", false
	}
	s = strings.TrimRight(s, "\r\n")
	if s == "" || strings.ContainsRune(s, 0) {
		return "", false
	}
	return s, true
}

// readOrigin reads the configuration files git reads, in its order, and
// returns what `git remote get-url origin` prints; false when that is not
// certain from them.
func readOrigin(gitDir string, env map[string]string, bin string) (string, bool) {
	var files []string
	noSystem, ok := envBool(env, "GIT_CONFIG_NOSYSTEM")
	if !ok {
		return "", false
	}
	if !noSystem {
		if p, set := env["GIT_CONFIG_SYSTEM"]; set {
			files = append(files, p)
		} else {
			// The system file's place is built into git; it is known
			// only for git as a distribution installs it.
			if bin != "/usr/bin/git" && bin != "/bin/git" {
				return "", false
			}
			files = append(files, "/etc/gitconfig")
		}
	}
	if p, set := env["GIT_CONFIG_GLOBAL"]; set {
		files = append(files, p)
	} else {
		home, set := env["HOME"]
		if !set || home == "" {
			return "", false
		}
		if xdg := env["XDG_CONFIG_HOME"]; xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		} else {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	files = append(files, filepath.Join(gitDir, "config"))

	var urls []string
	var rewrites urlRewrites
	otherOrigin, sure, inRepo := false, true, false
	visit := func(name, value string, hasValue bool) {
		if !hasValue {
			// A key without a value is a true boolean, and an error for
			// every setting that wants a string: git refuses the whole
			// configuration for one of those.
			sure = false
			return
		}
		section, rest, _ := strings.Cut(name, ".")
		sub, key := "", rest
		if i := strings.LastIndexByte(rest, '.'); i >= 0 {
			sub, key = rest[:i], rest[i+1:]
		}
		switch section {
		case "include", "includeif", "extensions":
			// Another file, or a repository format this reading does
			// not know.
			sure = false
		case "url":
			// url.<base>.insteadOf rewrites a URL that starts with its
			// value; pushInsteadOf only rewrites the URLs git pushes to,
			// which get-url does not print.
			switch {
			case key == "pushinsteadof":
			case key != "insteadof":
			case sub == "" || value == "":
				sure = false
			default:
				rewrites.add(sub, value)
			}
		case "core":
			if sub != "" {
				return
			}
			switch key {
			case "bare":
				sure = sure && boolFalse(value)
			case "worktree":
				sure = false
			case "repositoryformatversion":
				sure = sure && (value == "0" || value == "1")
			}
		case "remote":
			if sub != "origin" {
				return
			}
			if !inRepo {
				// git names only a remote the repository configures,
				// yet lists URLs from every file before the
				// repository's: a reading no version of git need share.
				sure = false
				return
			}
			if key != "url" {
				otherOrigin = true
				return
			}
			if value == "" {
				sure = false
				return
			}
			urls = append(urls, value)
		}
	}
	for i, f := range files {
		inRepo = i == len(files)-1
		if !filepath.IsAbs(f) {
			// Empty, or relative to where git runs: left to git.
			return "", false
		}
		if f == os.DevNull {
			continue
		}
		b, found, ok := readConfigFile(f)
		if !ok {
			return "", false
		}
		if !found {
			continue
		}
		if err := parseGitConfig(b, visit); err != nil || !sure {
			return "", false
		}
	}
	if len(urls) > 0 {
		return strings.TrimSpace(rewrites.apply(urls[0])), true
	}
	if otherOrigin {
		// A remote without a URL: git names it by itself.
		return "", false
	}
	// Remotes git still reads from files of their own.
	for _, old := range []string{"remotes", "branches"} {
		if _, err := os.Lstat(filepath.Join(gitDir, old, "origin")); !absent(err) {
			return "", false
		}
	}
	return "", true
}

// urlRewrites are the url.<base>.insteadOf settings, each base in the
// order git first read it, with its values in order.
type urlRewrites []struct {
	base      string
	insteadOf []string
}

func (r *urlRewrites) add(base, insteadOf string) {
	for i := range *r {
		if (*r)[i].base == base {
			(*r)[i].insteadOf = append((*r)[i].insteadOf, insteadOf)
			return
		}
	}
	*r = append(*r, struct {
		base      string
		insteadOf []string
	}{base, []string{insteadOf}})
}

// apply rewrites url as git's alias_url does: the longest insteadOf value
// it starts with, the first one read among equals, is replaced by its
// base.
func (r urlRewrites) apply(url string) string {
	longest, base := "", ""
	found := false
	for _, rw := range r {
		for _, v := range rw.insteadOf {
			if strings.HasPrefix(url, v) && (!found || len(v) > len(longest)) {
				longest, base, found = v, rw.base, true
			}
		}
	}
	if !found {
		return url
	}
	return base + url[len(longest):]
}

// readConfigFile reads a configuration file, following a symbolic link as
// git does. found is false when there is none; ok is false when it cannot
// be read here (not a regular file, too large, unreadable).
func readConfigFile(path string) (data []byte, found, ok bool) {
	if _, err := os.Stat(path); err != nil {
		return nil, false, absent(err)
	}
	b, ok := readBounded(path, maxConfigFile)
	return b, true, ok
}

// readBounded reads a regular file of at most limit bytes. It is opened
// without blocking, so a FIFO planted in its place cannot stall the
// cycle, and refused unless it is a regular file.
func readBounded(path string, limit int64) ([]byte, bool) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return nil, false
	}
	return b, true
}

// absent reports whether err says a path does not exist, as git takes it:
// no such file, or a component that is not a directory.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// envBool reads an environment variable as git_env_bool does; ok is false
// for a value git would refuse.
func envBool(env map[string]string, key string) (b, ok bool) {
	v, set := env[key]
	if !set {
		return false, true
	}
	switch strings.ToLower(v) {
	case "", "false", "no", "off":
		return false, true
	case "true", "yes", "on":
		return true, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n != 0, err == nil
}

// boolFalse reports whether a configuration value is certainly false.
func boolFalse(v string) bool {
	switch strings.ToLower(v) {
	case "", "false", "no", "off", "0":
		return true
	}
	return false
}

// envMap is an environment as the child that receives it sees it: the
// last entry of a name wins, as os/exec leaves it.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// openNoBlock opens a file for reading without waiting for a writer, as
// opening a FIFO would.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
