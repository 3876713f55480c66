package gitrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ooda-loop/ooda/internal/proc"
)

// The native state commit does, in the ooda process, what the git
// processes of a prepared state commit do — find the repository, write the
// commit object, move the branch, bring the index up to it — whenever it
// can be certain to do exactly what that git would. Everything it is not
// certain of goes to git, as before.

// fileStat is what a file's identity and age are taken from (statOf).
type fileStat struct {
	dev, ino, nlink uint64
	uid, mode       uint32
	size            int64
	mtime, ctime    int64 // nanoseconds since the epoch
}

// fileSys is statOf for the result of a Stat.
func fileSys(fi fs.FileInfo, err error) (fileStat, bool) {
	if err != nil {
		return fileStat{}, false
	}
	return statOf(fi)
}

// nativeGit is the environment the git that proc.Exec starts would see,
// when nothing in it makes that git's work uncertain to repeat.
type nativeGit struct {
	env map[string]string
	// bin is the git binary PATH names.
	bin string
	// key fingerprints everything in the environment and the git binary
	// that can change git's answers: what a cache of them is keyed on.
	key string
}

// nativeGitVars are the GIT_* variables that change nothing a state
// commit reads or writes (identity, prompts, the network); any other one
// (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS, GIT_CEILING_DIRECTORIES,
// …) leaves the work to git.
var nativeGitVars = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_TERMINAL_PROMPT": true, "GIT_ASKPASS": true,
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_PAGER": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true,
}

// nativeGitPrefixes are families of variables read only by git's
// transports.
var nativeGitPrefixes = []string{"GIT_SSL_", "GIT_HTTP_", "GIT_PROXY_", "GIT_CURL_"}

// nativeGit returns the environment of r's git when the work can be done
// without it: r runs git as proc.Exec does (a runner of its own may run
// git elsewhere, another git, or watch each step), on Linux, with no
// variable that redirects or reconfigures git. nil leaves everything to
// git processes.
func (r *Repo) nativeGit() *nativeGit {
	switch r.Runner.(type) {
	case proc.Exec, *proc.Exec:
	default:
		return nil
	}
	if !statKnown() {
		return nil
	}
	env := map[string]string{}
	for _, kv := range localGitEnv() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v // the last one wins, as for exec.Cmd
		}
	}
	var keyParts []string
	for k, v := range env {
		if strings.HasPrefix(k, "GIT_") && !nativeGitVars[k] && !slices.ContainsFunc(nativeGitPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			return nil
		}
		switch {
		case strings.HasPrefix(k, "GIT_"), k == "HOME", k == "XDG_CONFIG_HOME", k == "PATH", k == "TZ", k == "EMAIL":
			keyParts = append(keyParts, k+"="+v)
		}
	}
	bin, ok := gitBinary(env["PATH"])
	if !ok {
		return nil
	}
	slices.Sort(keyParts)
	h := sha256.New()
	for _, p := range keyParts {
		fmt.Fprintf(h, "%q\n", p)
	}
	fmt.Fprintf(h, "git %s %s\n", bin, fingerprint(bin))
	return &nativeGit{env: env, bin: bin, key: hex.EncodeToString(h.Sum(nil))}
}

// statKnown reports whether statOf works on this system.
var statKnown = sync.OnceValue(func() bool {
	fi, err := os.Stat(os.TempDir())
	if err != nil {
		return false
	}
	_, ok := statOf(fi)
	return ok
})

// localGitEnv is the environment runSplit gives a git command that does
// not talk to a remote.
func localGitEnv() []string {
	return append(gitEnv(nil), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}

// gitBinary is the git that PATH names, as proc resolves "git": the
// first executable regular file called git in PATH's directories.
func gitBinary(path string) (string, bool) {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, "git")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// fingerprint is a file's identity and version as the file system tells
// them without reading it: "-" when it does not exist, "?" when it cannot
// be told. A change of its bytes changes its change time (which only the
// kernel sets) if not its size or inode; a symbolic link is followed and
// both ends are in it.
func fingerprint(name string) string {
	lfi, err := os.Lstat(name)
	if os.IsNotExist(err) {
		return "-"
	}
	if err != nil {
		return "?"
	}
	ls, ok := statOf(lfi)
	if !ok {
		return "?"
	}
	s := fmt.Sprintf("%d:%d:%o:%d:%d:%d", ls.dev, ls.ino, ls.mode, ls.size, ls.mtime, ls.ctime)
	if lfi.Mode()&os.ModeSymlink != 0 {
		fi, err := os.Stat(name)
		switch {
		case os.IsNotExist(err):
			s += ">-"
		case err != nil:
			return "?"
		default:
			st, ok := statOf(fi)
			if !ok {
				return "?"
			}
			s += fmt.Sprintf(">%d:%d:%o:%d:%d:%d", st.dev, st.ino, st.mode, st.size, st.mtime, st.ctime)
		}
	}
	return s
}
