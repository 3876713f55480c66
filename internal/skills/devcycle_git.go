package skills

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// Every git command of the skill goes through gitrepo (the process seam,
// argv only). Values git did not produce itself — branch names built from
// an action, the base commit — are checked (CheckBranchName, ValidSHA)
// and follow "--end-of-options" or "--"; paths follow "--" under
// --literal-pathspecs, so a file named ":(glob)*" is that one file.

// devStatePaths are the engine's own files: the cycle writes them while
// the skill runs, so they do not make the checkout dirty, and an agent's
// change to them is reverted as a protected path's is.
const devStatePaths = "agent/state/*"

// devChange is one changed path of the agent's change against the base.
type devChange struct {
	path       string
	add, del   int
	protection string // the protected pattern it matches, "" for none
}

// openRepo opens the project's repository and checks that the work may
// start: the project is the repository's top level, no merge or rebase is
// under way, and no tracked file outside ooda's state has uncommitted
// changes. The work itself happens in a separate worktree, but a plain-git
// merge and ooda's state commit happen in this checkout, on top of
// whatever it holds: a user's uncommitted work is never built upon.
func (run *devRun) openRepo(ctx context.Context) (*gitrepo.Repo, bool) {
	r := run.r
	g, ok := gitrepo.OpenHalting(ctx, r.ProjectDir, run.runner, r.HaltFile)
	if !ok {
		run.stop("refused", r.ProjectDir+" is not a git repository: dev-cycle works on branches (git init, and commit the project first)", true)
		return nil, false
	}
	g.MaxOutput = run.cfg.Safety.MaxReadBytes()
	top, err := g.Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		run.stop("failed", "git rev-parse --show-toplevel: "+safetext.Error(err), true)
		return nil, false
	}
	if !sameDir(strings.TrimSpace(top), r.ProjectDir) {
		run.stop("refused", fmt.Sprintf("the project %s is not the top level of its git repository (%s): dev-cycle needs the project at the repository's root", r.ProjectDir, strings.TrimSpace(top)), true)
		return nil, false
	}
	if what, busy := g.Busy(ctx); busy {
		run.stop("refused", "the repository is busy ("+what+"): finish or abort it first", true)
		return nil, false
	}
	out, err := g.Run(ctx, "--literal-pathspecs", "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=dirty")
	if err != nil {
		run.stop("failed", "git status: "+safetext.Error(err), true)
		return nil, false
	}
	var dirty []string
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the rename's source follows
		}
		p := e[3:]
		if config.MatchPath(devStatePaths, p) {
			continue
		}
		if len(dirty) < devCycleMaxListed {
			dirty = append(dirty, cleanLine(p, 300))
		}
	}
	if len(dirty) > 0 {
		run.stop("refused", "the working tree has uncommitted changes ("+strings.Join(dirty, ", ")+"): commit or stash them first; dev-cycle never builds on uncommitted work", true)
		return nil, false
	}
	return g, true
}

// sameDir reports whether two paths name one directory.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// baseBranch is the branch pull requests go to — forge.default_branch,
// else the target of origin/HEAD, else main when it exists, else master —
// and its commit, the local branch's when there is one.
func (run *devRun) baseBranch(ctx context.Context, g *gitrepo.Repo) (string, string, bool) {
	name := run.cfg.Forge.DefaultBranch
	if name == "" {
		if out, err := g.Run(ctx, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"); err == nil {
			if b, ok := strings.CutPrefix(strings.TrimSpace(out), "refs/remotes/origin/"); ok && gitrepo.ValidBranchName(b) {
				name = b
			}
		}
	}
	if name == "" {
		name = "master"
		if run.refExists(ctx, g, "refs/heads/main") || run.refExists(ctx, g, "refs/remotes/origin/main") {
			name = "main"
		}
	}
	if err := gitrepo.CheckBranchName(name); err != nil {
		run.stop("refused", "forge.default_branch: "+err.Error(), true)
		return "", "", false
	}
	for _, ref := range []string{"refs/heads/" + name, "refs/remotes/origin/" + name} {
		out, err := g.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
		if sha := strings.TrimSpace(out); err == nil && gitrepo.ValidSHA(sha) {
			return name, sha, true
		}
	}
	run.stop("refused", fmt.Sprintf("the default branch %q has no commit (set forge.default_branch, or commit the project first)", name), true)
	return "", "", false
}

func (run *devRun) refExists(ctx context.Context, g *gitrepo.Repo, ref string) bool {
	_, err := g.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref)
	return err == nil
}

// newBranchName is prefix + the action's id and title as a slug, made
// unique among the local, remote-tracking and closed branches (an earlier
// attempt at the same action keeps its name).
func (run *devRun) newBranchName(ctx context.Context, g *gitrepo.Repo, prefix string, a state.Action) (string, bool) {
	id, title := slug(a.ID, 24), slug(a.Title, 40)
	name := strings.Trim(id+"-"+title, "-")
	if name == "" {
		name = "action"
	}
	for n := 1; n <= 50; n++ {
		b := prefix + name
		if n > 1 {
			b += "-" + strconv.Itoa(n)
		}
		if err := gitrepo.CheckBranchName(b); err != nil {
			run.stop("refused", "the branch name "+b+" is not valid ("+err.Error()+"); check implementation.branch_prefix", true)
			return "", false
		}
		if !run.refExists(ctx, g, "refs/heads/"+b) && !run.refExists(ctx, g, "refs/remotes/origin/"+b) &&
			!run.refExists(ctx, g, forge.ClosedRefPrefix+b) {
			return b, true
		}
	}
	run.stop("refused", "50 branches named "+prefix+name+"… exist already: delete the old attempts", true)
	return "", false
}

// addWorktree creates the branch at the base commit, checked out in a new
// worktree under agent/state/evolve/worktrees/ (inside the project, so
// nothing is written outside it).
func (run *devRun) addWorktree(ctx context.Context, g *gitrepo.Repo, branch, baseSHA string) (string, bool) {
	rel := filepath.Join(devCycleWorktrees, slug(strings.ReplaceAll(branch, "/", "-"), 80))
	wt, err := run.store.Resolve(rel)
	if err != nil {
		run.stop("failed", "the worktree "+rel+": "+safetext.Error(err), true)
		return "", false
	}
	if _, err := os.Lstat(wt); err == nil {
		// Left by a run that was killed: git knows it as a worktree.
		_, _ = g.Run(ctx, "worktree", "remove", "--force", "--", wt)
		_, _ = g.Run(ctx, "worktree", "prune")
		if _, err := os.Lstat(wt); err == nil {
			run.stop("failed", rel+" is in the way of the worktree: remove it", true)
			return "", false
		}
	}
	if !gitrepo.ValidSHA(baseSHA) {
		run.stop("failed", "the base commit "+baseSHA+" is not a commit id", true)
		return "", false
	}
	if _, err := g.Run(ctx, "worktree", "add", "--quiet", "-b", branch, "--", wt, baseSHA); err != nil {
		run.stop("failed", "git worktree add: "+safetext.Error(err), true)
		return "", false
	}
	run.logf("branch %s from %s in worktree %s", branch, baseSHA[:12], rel)
	return wt, true
}

// removeWorktree removes the worktree, and the branch unless it holds the
// proposal. It runs even when the cycle was stopped: its context is not
// the cycle's.
func (run *devRun) removeWorktree(g *gitrepo.Repo, wt, branch string, keepBranch bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clean := *g
	clean.HaltFile = "" // cleaning up is never stopped by the HALT that stopped the work
	if _, err := clean.Run(ctx, "worktree", "remove", "--force", "--", wt); err != nil {
		run.logf("the worktree %s was not removed: %s", wt, safetext.Error(err))
	}
	if !keepBranch {
		if _, err := clean.Run(ctx, "branch", "--quiet", "-D", "--", branch); err != nil {
			run.logf("the branch %s was not deleted: %s", branch, safetext.Error(err))
		} else {
			run.out.Branch = ""
		}
	}
}

// inspect stages everything the agent did (commits of its own included)
// and reads the change against the base commit; changes to protected
// paths (safety.protected_paths, and ooda's state) are reverted. It fills
// the outcome's counts and returns the change that remains.
func (run *devRun) inspect(ctx context.Context, wg *gitrepo.Repo, baseSHA string) ([]devChange, bool) {
	changes, err := run.diff(ctx, wg, baseSHA)
	if err != nil {
		run.stop("failed", "reading the agent's change: "+safetext.Error(err), true)
		return nil, false
	}
	var reverted []string
	for _, c := range changes {
		if c.protection == "" {
			continue
		}
		if err := revertPath(ctx, wg, baseSHA, c.path); err != nil {
			run.stop("failed", "reverting the protected path "+cleanLine(c.path, 300)+": "+safetext.Error(err), true)
			return nil, false
		}
		run.logf("reverted %s: it matches the protected path %s", c.path, c.protection)
		if len(reverted) < devCycleMaxListed {
			reverted = append(reverted, cleanLine(c.path, 300))
		}
	}
	if len(reverted) > 0 {
		run.out.Reverted = reverted
		if changes, err = run.diff(ctx, wg, baseSHA); err != nil {
			run.stop("failed", "reading the agent's change: "+safetext.Error(err), true)
			return nil, false
		}
	}
	run.out.Files, run.out.Lines, run.out.ChangedList = len(changes), 0, nil
	for _, c := range changes {
		run.out.Lines += c.add + c.del
		if len(run.out.ChangedList) < devCycleMaxListed {
			run.out.ChangedList = append(run.out.ChangedList, cleanLine(c.path, 300))
		}
	}
	run.logf("the change: %d file(s), %d line(s)", run.out.Files, run.out.Lines)
	return changes, true
}

// diff stages the worktree and lists the change against base, renames as
// a deletion and an addition (so both paths meet the protected-path
// check), a binary file as 0 lines — as the plain-git forge counts a PR.
func (run *devRun) diff(ctx context.Context, wg *gitrepo.Repo, baseSHA string) ([]devChange, error) {
	if _, err := wg.Run(ctx, "--literal-pathspecs", "add", "--all", "--", "."); err != nil {
		return nil, err
	}
	out, err := wg.Run(ctx, "--literal-pathspecs", "diff", "--cached", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--end-of-options", baseSHA, "--")
	if err != nil {
		return nil, err
	}
	protected := append([]string{devStatePaths}, run.cfg.Safety.ProtectedPaths...)
	var changes []devChange
	for _, rec := range strings.Split(out, "\x00") {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		c := devChange{path: parts[2]}
		c.add, _ = strconv.Atoi(parts[0]) // "-" for a binary file
		c.del, _ = strconv.Atoi(parts[1])
		for _, p := range protected {
			if config.MatchPath(p, c.path) {
				c.protection = p
				break
			}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// revertPath puts one path back as the base commit has it: restored when
// it exists there, removed when the agent created it.
func revertPath(ctx context.Context, wg *gitrepo.Repo, baseSHA, p string) error {
	out, err := wg.Run(ctx, "--literal-pathspecs", "ls-tree", "-z", "--name-only", "--end-of-options", baseSHA, "--", p)
	if err != nil {
		return err
	}
	if strings.TrimRight(out, "\x00") != "" {
		_, err = wg.Run(ctx, "--literal-pathspecs", "checkout", "--quiet", baseSHA, "--", p)
		return err
	}
	if _, err := wg.Run(ctx, "--literal-pathspecs", "rm", "--quiet", "--cached", "-f", "--ignore-unmatch", "--", p); err != nil {
		return err
	}
	full := filepath.Join(wg.Dir, filepath.FromSlash(p))
	if !strings.HasPrefix(full, filepath.Clean(wg.Dir)+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside the worktree", p)
	}
	if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// commit makes the change one commit on the branch, on top of the base
// (commits the agent made itself are folded in), with a message from the
// action that can pass for nothing else: one line of text, and no
// "(branch …)" or trailer the plain-git forge would read as a merge.
func (run *devRun) commit(ctx context.Context, wg *gitrepo.Repo, baseSHA string, a state.Action) bool {
	head, err := wg.Run(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		run.stop("failed", "git rev-parse HEAD in the worktree: "+safetext.Error(err), true)
		return false
	}
	if strings.TrimSpace(head) != baseSHA {
		if _, err := wg.Run(ctx, "reset", "--soft", "--quiet", baseSHA); err != nil {
			run.stop("failed", "folding the agent's commits: "+safetext.Error(err), true)
			return false
		}
	}
	subject := strings.ReplaceAll(run.out.ActionTitle, "(branch ", "(from branch ")
	for _, t := range []string{forge.BranchTrailer, forge.HeadTrailer, "Ooda-"} {
		if strings.HasPrefix(strings.ToLower(subject), strings.ToLower(t)) {
			subject = "Action: " + subject
			break
		}
	}
	msg := fmt.Sprintf("%s\n\nImplements action %s (ooda dev-cycle, cycle %d).\n", subject, run.out.ActionID, run.r.Cycle)
	if len(run.out.Reverted) > 0 {
		msg += "\nChanges to protected paths were left out: " + strings.Join(run.out.Reverted, ", ") + "\n"
	}
	if _, err := wg.RunInput(ctx, []byte(msg), "commit", "--quiet", "--cleanup=whitespace", "-F", "-"); err != nil {
		run.stop("failed", "git commit: "+safetext.Error(err), true)
		return false
	}
	out, err := wg.Run(ctx, "rev-parse", "--verify", "HEAD")
	if sha := strings.TrimSpace(out); err == nil && gitrepo.ValidSHA(sha) {
		run.out.Commit = sha
	}
	run.logf("committed %s", run.out.Commit)
	return true
}
