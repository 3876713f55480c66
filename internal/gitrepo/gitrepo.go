// Package gitrepo runs the user's own git binary (their configuration,
// credentials and hooks) on the project through the process runner. It is
// what Step 6-D uses to commit exactly the state files a cycle wrote.
package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
)

// Repo is a git working tree.
type Repo struct {
	Dir    string
	Runner proc.Runner
	// Timeout bounds one git command (a push over a slow network); default 2 minutes.
	Timeout time.Duration
}

// Open returns the repository containing dir, or ok false when dir is not
// inside a git working tree (or git is not installed).
func Open(ctx context.Context, dir string, r proc.Runner) (*Repo, bool) {
	if r == nil {
		r = proc.Exec{}
	}
	repo := &Repo{Dir: dir, Runner: r}
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

// RunInput runs git with stdin.
func (r *Repo) RunInput(ctx context.Context, stdin []byte, args ...string) (string, error) {
	var out bytes.Buffer
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	res := r.Runner.Run(ctx, proc.Spec{Argv: append([]string{"git", "-C", r.Dir}, args...), Dir: r.Dir, Env: env, Timeout: timeout, Output: &out, Stdin: stdin, KillGrace: 2 * time.Second})
	if res.StartErr != nil {
		return "", fmt.Errorf("git: %w", res.StartErr)
	}
	if !res.OK() {
		return out.String(), &Error{Args: args, Code: res.ExitCode, Output: out.String()}
	}
	return out.String(), nil
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
