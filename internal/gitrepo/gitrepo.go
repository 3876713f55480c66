// Package gitrepo runs the user's own git binary (their configuration and
// hooks) on the project through the process runner. It is what Step 6-D
// uses to commit exactly the state files a cycle wrote. Only the commands
// that talk to a remote see ooda's credentials (docs/forge.md).
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
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
	// HaltFile, when set, is the HALT file: a git command (a commit whose
	// hook sleeps, a push that hangs) is stopped within proc's poll
	// interval of it appearing, and none is started while it exists. The
	// command then fails with ErrHalted.
	HaltFile string
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
	out, err := repo.Run(ctx, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		return nil, false
	}
	return repo, true
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
	limit := r.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	out := &CappedBuffer{Max: limit}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	env := append(gitEnv(args), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	res := r.Runner.Run(ctx, proc.Spec{Argv: append([]string{"git", "-C", r.Dir}, args...), Dir: r.Dir, Env: env, Timeout: timeout, Output: out, Stdin: stdin, KillGrace: 2 * time.Second, Light: true, HaltFile: r.HaltFile})
	if res.Halted {
		return out.String(), fmt.Errorf("git %s: %w", strings.Join(args, " "), ErrHalted)
	}
	if res.StartErr != nil {
		return "", fmt.Errorf("git: %w", res.StartErr)
	}
	if out.Exceeded() {
		return "", fmt.Errorf("git %s: %w (safety.max_read_mib)", strings.Join(args, " "), out.Err())
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

// Ignored reports whether path (relative to the repository) is ignored.
func (r *Repo) Ignored(ctx context.Context, path string) bool {
	_, err := r.Run(ctx, "check-ignore", "-q", "--", path)
	return err == nil
}

// Busy reports an operation in progress (merge, rebase, cherry-pick) or a
// detached HEAD: no commit should be made then.
func (r *Repo) Busy(ctx context.Context) (string, bool) {
	if _, err := r.Run(ctx, "symbolic-ref", "-q", "HEAD"); err != nil {
		return "HEAD is detached", true
	}
	gitDir, err := r.Run(ctx, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", false
	}
	gitDir = strings.TrimSpace(gitDir)
	for _, op := range []struct{ file, what string }{
		{"MERGE_HEAD", "a merge"}, {"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase"},
		{"CHERRY_PICK_HEAD", "a cherry-pick"}, {"REVERT_HEAD", "a revert"},
	} {
		if _, err := os.Stat(gitDir + "/" + op.file); err == nil {
			return op.what + " is in progress", true
		}
	}
	return "", false
}

// CommitPaths stages exactly paths and commits only them, whatever else is
// staged: a user's own staged work is never swept into the commit. It
// reports committed false when none of the paths changed.
func (r *Repo) CommitPaths(ctx context.Context, msg string, paths []string) (bool, error) {
	if len(paths) == 0 {
		return false, nil
	}
	if _, err := r.Run(ctx, append([]string{"add", "--"}, paths...)...); err != nil {
		return false, err
	}
	out, err := r.Run(ctx, append([]string{"diff", "--cached", "--name-only", "--"}, paths...)...)
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(out) == "" {
		return false, nil
	}
	if _, err := r.Run(ctx, append([]string{"commit", "--quiet", "-m", msg, "--only", "--"}, paths...)...); err != nil {
		return false, err
	}
	return true, nil
}

// HasRemote reports whether the repository has any remote.
func (r *Repo) HasRemote(ctx context.Context) bool {
	out, err := r.Run(ctx, "remote")
	return err == nil && strings.TrimSpace(out) != ""
}

// Push pushes the current branch to its upstream, or to origin under the
// same name when it has none.
func (r *Repo) Push(ctx context.Context) error {
	if _, err := r.Run(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"); err == nil {
		_, err := r.Run(ctx, "push", "--quiet")
		return err
	}
	_, err := r.Run(ctx, "push", "--quiet", "origin", "HEAD")
	return err
}
