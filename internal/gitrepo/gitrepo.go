// Package gitrepo runs the user's own git binary (their configuration and
// hooks) on the project through the process runner. It is what Step 6-D
// uses to commit exactly the state files a cycle wrote, with git's
// plumbing in a private index, so that neither the user's staged work nor
// a commit hook is involved (docs/security.md); where it is certain to
// write exactly what that plumbing would (native.go), it writes the
// objects, the branch and the index entries itself. Only the commands
// that talk to a remote see ooda's credentials (docs/forge.md).
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Repo is a git working tree.
type Repo struct {
	Dir    string
	Runner proc.Runner
	// Timeout bounds one git command (a push over a slow network); default 2 minutes.
	Timeout time.Duration
	// MaxOutput bounds what one git command may print (safety.max_read_mib);
	// a command that prints more fails instead of filling memory. Zero
	// means DefaultMaxOutput.
	MaxOutput int64
	// HaltFile, when set, is the HALT file: a git command (a clean filter
	// that sleeps, a push that hangs) is stopped within proc's poll
	// interval of it appearing, and none is started while it exists. The
	// command then fails with ErrHalted.
	HaltFile string

	// gitDir is the repository's absolute git directory (the worktree's
	// own for a linked worktree), "" until known; prefix is Dir's path in
	// the repository ("svc/", "" at the top).
	gitDir, prefix string
	// top is the working tree's top directory (its real path) when ooda
	// found the repository from its files, "" otherwise.
	top string
}

// ErrHalted is the error of a git command stopped, or not started,
// because Repo.HaltFile exists.
var ErrHalted = errors.New("stopped: the HALT file exists")

// DefaultMaxOutput is the default of Repo.MaxOutput, the default of
// safety.max_read_mib.
const DefaultMaxOutput = 16 << 20

// Open returns the repository containing dir, or ok false when dir is not
// inside a git working tree (or git is not installed).
func Open(ctx context.Context, dir string, r proc.Runner) (*Repo, bool) {
	return OpenHalting(ctx, dir, r, "")
}

// OpenHalting is Open for a repository whose git commands, the check
// that opens it included, stop when haltFile appears (Repo.HaltFile).
func OpenHalting(ctx context.Context, dir string, r proc.Runner, haltFile string) (*Repo, bool) {
	if r == nil {
		r = proc.Exec{}
	}
	repo := &Repo{Dir: dir, Runner: r, HaltFile: haltFile}
	// The git directory and the prefix come with the same process: the
	// commit of Step 6-D needs them, and a process costs more than a line.
	out, err := repo.runStdout(ctx, nil, nil, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--show-prefix")
	if err != nil || !strings.HasPrefix(out, "true\n") {
		return nil, false
	}
	if repo.setLayout(strings.TrimPrefix(out, "true\n")) != nil {
		return nil, false
	}
	return repo, true
}

// GitDir is the repository's absolute git directory (for a linked
// worktree, the worktree's own).
func (r *Repo) GitDir(ctx context.Context) (string, error) {
	if r.gitDir != "" {
		return r.gitDir, nil
	}
	out, err := r.runStdout(ctx, nil, nil, "rev-parse", "--absolute-git-dir", "--show-prefix")
	if err != nil {
		return "", err
	}
	return r.gitDir, r.setLayout(out)
}

// setLayout takes the git directory and the prefix from the lines of
// `git rev-parse --absolute-git-dir --show-prefix`.
func (r *Repo) setLayout(out string) error {
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !filepath.IsAbs(lines[0]) {
		return fmt.Errorf("git rev-parse --absolute-git-dir --show-prefix printed %q", out)
	}
	r.gitDir, r.prefix = lines[0], lines[1]
	return nil
}

// Error is a failed git command, with what git printed.
type Error struct {
	Args   []string
	Code   int
	Output string
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Output)
	if len(msg) > 2000 {
		msg = msg[len(msg)-2000:]
	}
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.Code, msg)
}

// Run runs git with args in the repository and returns its output.
func (r *Repo) Run(ctx context.Context, args ...string) (string, error) {
	return r.RunInput(ctx, nil, args...)
}

// RunInput runs git with stdin. Callers put "--end-of-options" (or "--")
// before any revision or ref they did not get from git itself, and check
// it first (ValidSHA, CheckBranchName).
func (r *Repo) RunInput(ctx context.Context, stdin []byte, args ...string) (string, error) {
	return r.run(ctx, stdin, nil, args)
}

// runPaths runs a git command whose pathspecs are literal paths
// (GIT_LITERAL_PATHSPECS): a state file named "*.json" or ":(glob)x" is
// that one file, never a pattern that sweeps in others.
func (r *Repo) runPaths(ctx context.Context, args ...string) (string, error) {
	return r.run(ctx, nil, []string{"GIT_LITERAL_PATHSPECS=1"}, args)
}

func (r *Repo) run(ctx context.Context, stdin []byte, extraEnv, args []string) (string, error) {
	return r.runSplit(ctx, stdin, extraEnv, args, nil)
}

// runStdout is run for a command whose standard output is parsed: what
// git prints on stderr (a warning) stays out of it, and is in the
// *Error's Output when the command fails.
func (r *Repo) runStdout(ctx context.Context, stdin []byte, extraEnv []string, args ...string) (string, error) {
	stderr := &CappedBuffer{Max: r.maxOutput()}
	out, err := r.runSplit(ctx, stdin, extraEnv, args, stderr)
	var ge *Error
	if errors.As(err, &ge) {
		ge.Output = strings.TrimSpace(stderr.String() + "\n" + ge.Output)
	}
	return out, err
}

func (r *Repo) maxOutput() int64 {
	if r.MaxOutput <= 0 {
		return DefaultMaxOutput
	}
	return r.MaxOutput
}

func (r *Repo) runSplit(ctx context.Context, stdin []byte, extraEnv, args []string, stderr *CappedBuffer) (string, error) {
	out := &CappedBuffer{Max: r.maxOutput()}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	env := append(append(gitEnv(args), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), extraEnv...)
	spec := proc.Spec{Argv: append([]string{"git", "-C", r.Dir}, args...), Dir: r.Dir, Env: env, Timeout: timeout, Output: out, Stdin: stdin, KillGrace: 2 * time.Second, Light: true, HaltFile: r.HaltFile}
	if stderr != nil {
		spec.Stderr = stderr
	}
	res := r.Runner.Run(ctx, spec)
	if res.Halted {
		return out.String(), fmt.Errorf("git %s: %w", strings.Join(args, " "), ErrHalted)
	}
	if res.StartErr != nil {
		return "", fmt.Errorf("git: %w", res.StartErr)
	}
	if out.Exceeded() {
		return "", fmt.Errorf("git %s: %w (safety.max_read_mib)", strings.Join(args, " "), out.Err())
	}
	if stderr != nil && stderr.Exceeded() {
		return "", fmt.Errorf("git %s: %w (safety.max_read_mib)", strings.Join(args, " "), stderr.Err())
	}
	if !res.OK() {
		return out.String(), &Error{Args: args, Code: res.ExitCode, Output: out.String()}
	}
	return out.String(), nil
}

// networkCommands are the git commands that talk to a remote and may
// need ooda's credentials there: a credential helper such as
// `gh auth git-credential` reads GH_TOKEN from git's environment.
var networkCommands = map[string]bool{"push": true, "fetch": true, "pull": true, "ls-remote": true}

// gitEnv is the environment git runs with for args. Everything git may start
// on its own — hooks, core.fsmonitor, a diff or merge driver, an editor —
// comes from the repository, which skills and merged pull requests can
// write, so ooda's credentials are removed (secret.ChildEnv) except for a
// command that talks to a remote (docs/forge.md): what that command starts
// (a pre-push hook, a credential helper) sees them.
func gitEnv(args []string) []string {
	if networkCommands[subcommand(args)] {
		return os.Environ()
	}
	return secret.ChildEnv(os.Environ(), nil, false)
}

// subcommand is the git command args run ("commit" for
// `-c a=b commit -m x`): the first argument after git's own options, ""
// when there is none.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" ||
			a == "--config-env" || a == "--super-prefix":
			i++ // the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// ResolveCommit checks that sha is a full object name (ValidSHA) of a
// commit in the repository and returns it as git spells it.
func (r *Repo) ResolveCommit(ctx context.Context, sha string) (string, error) {
	if !ValidSHA(sha) {
		return "", fmt.Errorf("%q is not a commit SHA (40 or 64 hexadecimal digits)", sha)
	}
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", sha+"^{commit}")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			return "", fmt.Errorf("commit %s is not in the repository", sha)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// ErrOutputLimit is wrapped by the error of a command that printed more
// than its limit.
var ErrOutputLimit = errors.New("output exceeds the size limit")

// CappedBuffer collects a command's output up to Max bytes and drops the
// rest, remembering that it did: a command (or a server) that prints
// without end must not exhaust memory. It is safe for concurrent writes.
type CappedBuffer struct {
	// Max is the most bytes kept.
	Max int64

	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

// Write keeps what fits under Max. Past it, Write returns an error, on
// which the process runner stops writing and drains the rest.
func (c *CappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.Max - int64(c.buf.Len())
	if int64(len(p)) > room {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		c.over = true
		return len(p), c.errLocked()
	}
	c.buf.Write(p)
	return len(p), nil
}

// Exceeded reports whether more than Max bytes were written.
func (c *CappedBuffer) Exceeded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

// Err is the error describing the overflow, naming the limit; nil when
// there was none.
func (c *CappedBuffer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.over {
		return nil
	}
	return c.errLocked()
}

func (c *CappedBuffer) errLocked() error {
	return fmt.Errorf("%w of %s", ErrOutputLimit, SizeText(c.Max))
}

// String is what was kept.
func (c *CappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Bytes is a copy of what was kept.
func (c *CappedBuffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// SizeText writes a byte count as people configure it: "16 MiB", "512 KiB",
// else in bytes.
func SizeText(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Tracked reports whether path (relative to the repository) is in the
// index: false for a file git has never been told about.
func (r *Repo) Tracked(ctx context.Context, path string) bool {
	_, err := r.runPaths(ctx, "ls-files", "--error-unmatch", "--", path)
	return err == nil
}

// HasRemote reports whether the repository has any remote.
func (r *Repo) HasRemote(ctx context.Context) bool {
	out, err := r.Run(ctx, "remote")
	return err == nil && strings.TrimSpace(out) != ""
}

// Upstream is where the current branch pushes: its upstream, as
// branch.<name>.remote and branch.<name>.merge configure it.
type Upstream struct {
	// Branch is the current branch ("main").
	Branch string
	// Remote is the upstream's remote ("origin"), Ref its branch there
	// ("refs/heads/main").
	Remote, Ref string
}

// RemoteBranch is the upstream's branch name on the remote ("main").
func (u Upstream) RemoteBranch() string { return strings.TrimPrefix(u.Ref, "refs/heads/") }

// String is the upstream as git prints it: "origin/main".
func (u Upstream) String() string { return u.Remote + "/" + u.RemoteBranch() }

// NoPushError says why PushUpstream pushed nothing, in words a user can
// act on; it is not a failure of git.
type NoPushError struct{ Why string }

func (e *NoPushError) Error() string { return e.Why }

// Upstream returns the current branch's upstream. A *NoPushError explains
// why there is none to push to: a detached HEAD, a branch without an
// upstream, an upstream that is a local branch.
func (r *Repo) Upstream(ctx context.Context) (Upstream, error) {
	branch, err := r.Run(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	branch = strings.TrimSpace(branch)
	if err != nil || branch == "" {
		return Upstream{}, &NoPushError{Why: "HEAD is detached (no branch, so no upstream)"}
	}
	u := Upstream{Branch: branch}
	remote, _ := r.Run(ctx, "config", "--get", "branch."+branch+".remote")
	merge, _ := r.Run(ctx, "config", "--get", "branch."+branch+".merge")
	u.Remote, u.Ref = strings.TrimSpace(remote), strings.TrimSpace(merge)
	switch {
	case u.Remote == "" || u.Ref == "":
		remotes, _ := r.Run(ctx, "remote")
		names := strings.Fields(remotes)
		if len(names) == 0 {
			return u, &NoPushError{Why: fmt.Sprintf("branch %s has no upstream (the repository has no remote)", branch)}
		}
		name := names[0]
		for _, n := range names {
			if n == "origin" {
				name = n
			}
		}
		return u, &NoPushError{Why: fmt.Sprintf("branch %s has no upstream (set one with `git push -u %s %s`, or `git branch --set-upstream-to=%s/<branch>`)", branch, name, branch, name)}
	case u.Remote == ".":
		return u, &NoPushError{Why: fmt.Sprintf("the upstream of branch %s is the local branch %s, not a remote", branch, u.RemoteBranch())}
	case strings.HasPrefix(u.Remote, "-"):
		return u, &NoPushError{Why: fmt.Sprintf("branch.%s.remote %q is not a remote name", branch, u.Remote)}
	case !strings.HasPrefix(u.Ref, "refs/heads/") || CheckRefName(u.Ref) != nil:
		return u, &NoPushError{Why: fmt.Sprintf("branch.%s.merge %q is not a branch", branch, u.Ref)}
	}
	return u, nil
}

// Push is what PushUpstream pushed.
type Push struct {
	Upstream
	// SHA is the commit pushed; Commits how many commits that sent.
	SHA     string
	Commits int
}

// PushUpstream pushes the current branch to its upstream and nowhere
// else: never another branch, never tags, never submodules, never by
// force, and whatever push.default, remote.pushDefault or a remote's push
// refspec say. It pushes only when every commit the upstream lacks
// (upstream..HEAD) is one of ours (owned, given its SHA and subject line): the
// user's own unpushed commits are theirs to push. A *NoPushError says why
// nothing was pushed when that was not git failing.
func (r *Repo) PushUpstream(ctx context.Context, owned func(sha, subject string) bool) (Push, error) {
	u, err := r.Upstream(ctx)
	if err != nil {
		return Push{Upstream: u}, err
	}
	p := Push{Upstream: u}
	head, err := r.Run(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return p, err
	}
	p.SHA = strings.TrimSpace(head)
	// The remote-tracking branch is what the remote had at the last fetch
	// or push; without it there is no telling what a push would send.
	tracking, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--symbolic-full-name", "@{upstream}")
	tracking = strings.TrimSpace(tracking)
	if err != nil || tracking == "" {
		return p, &NoPushError{Why: fmt.Sprintf("the upstream %s of branch %s has not been fetched (run `git fetch %s`)", u, u.Branch, u.Remote)}
	}
	log, err := r.Run(ctx, "log", "--format=%H %s", tracking+".."+p.SHA, "--")
	if err != nil {
		return p, err
	}
	var theirs int
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		p.Commits++
		sha, subject, _ := strings.Cut(line, " ")
		if owned == nil || !owned(sha, subject) {
			theirs++
		}
	}
	if theirs > 0 {
		return p, &NoPushError{Why: fmt.Sprintf("branch %s has %d commit(s) of your own that %s does not have, and only the loop's own commits are pushed for you; `git push` sends them all", u.Branch, theirs, u)}
	}
	if p.Commits == 0 {
		return p, nil
	}
	// An explicit SHA:ref refspec: exactly the commits checked above, to
	// exactly the upstream's branch. No leading "+", so never forced.
	_, err = r.Run(ctx, "push", "--quiet", "--no-follow-tags", "--recurse-submodules=no", u.Remote, p.SHA+":"+u.Ref)
	return p, err
}

// IdentityUnknown reports whether err is git refusing to commit because it
// has no author or committer identity: neither user.name and user.email
// (nor author.*, committer.*, GIT_AUTHOR_*, GIT_COMMITTER_*) are set and
// it could not make an address up. git says so in a dozen lines meant for
// a terminal; the caller says it in one (IdentityHelp).
func IdentityUnknown(err error) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	return strings.Contains(ge.Output, "identity unknown") || strings.Contains(ge.Output, "Please tell me who you are")
}

// IdentityHelp is what to do when git has no identity to commit with.
const IdentityHelp = `git has no identity to commit with: set one with git config user.name "Your Name" and git config user.email "you@example.com" (add --global for every repository), or set git.commit_state to false`

// CheckIdentity asks git for the author and committer identities a commit
// would carry (git var), and returns an error satisfying IdentityUnknown
// when it has none.
func (r *Repo) CheckIdentity(ctx context.Context) error {
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := r.Run(ctx, "var", v); err != nil {
			return err
		}
	}
	return nil
}
