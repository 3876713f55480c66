package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// commitPrefix starts the subject of every state commit; a push sends
// only commits whose subject starts with it (gitrepo.PushUpstream).
const commitPrefix = "evolve: cycle #"

// commitState is Step 6-D: when the project is a git repository and
// git.commit_state is on, commit exactly the state files this cycle wrote
// or changed — the evolve files, lenses, and the state file of each domain
// whose skill ran — by explicit path (never `git add -A`), then, with
// git.push on, push to the current branch's upstream and nowhere else.
// Every step prints what it did or why it did not. Nothing here can fail
// the cycle: every problem is a warning.
func (c *cycle) commitState(ctx context.Context, f record.Facts, resultType string, pc *pendingCommit) {
	if !c.cfg.CommitState() {
		return
	}
	var (
		repo  *gitrepo.Repo
		head  gitrepo.Head
		ok    bool
		err   error
		prep  *gitrepo.Prep
		files []string
	)
	if pc != nil {
		<-pc.done
		defer pc.prep.Release()
		// A HALT file that appeared since is reported as when it is
		// there from the start.
		if halted, _ := c.store.HaltExists(c.cfg.Safety.HaltFile); pc.prep.OK && (!halted || c.res.HaltCreated) {
			prep, files = pc.prep, pc.domain
			repo, head, ok = prep.Repo, prep.Head, true
			repo.HaltFile = c.repoHalt()
		}
	}
	if prep == nil {
		// Opening the repository reads HEAD with the same git process.
		repo, head, ok, err = gitrepo.OpenHead(ctx, c.store.Root, c.opts.Runner, c.repoHalt())
	}
	if !ok {
		if halted, _ := c.store.HaltExists(c.cfg.Safety.HaltFile); halted && !c.res.HaltCreated {
			c.printf("[WARN] State not committed: %v.", gitrepo.ErrHalted)
		} else if err != nil && repo != nil {
			c.printf("[WARN] State not committed: %v", err)
		}
		return
	}
	repo.MaxOutput = c.cfg.Safety.MaxReadBytes()
	stateRel := filepath.Join("agent", "state", "evolve", state.StateFile)
	// One git process answers for every path: state.json first, whose
	// being ignored means the loop's history never reaches git.
	candidates := append([]string{stateRel}, c.store.Written()...)
	if prep == nil {
		files = c.changedDomainStateFiles(ctx, repo)
	}
	files = c.withoutSecrets(files)
	candidates = dedupePaths(append(candidates, files...))
	var ignored map[string]bool
	if prep != nil {
		ignored, err = prep.IgnoredPaths(ctx, candidates)
	} else {
		ignored, err = repo.IgnoredPaths(ctx, candidates)
	}
	if err != nil {
		c.printf("[WARN] State not committed: %v", err)
		return
	}
	if ignored[stateRel] {
		c.printf("[WARN] ==> %s is ignored by git: the loop's history is NOT being committed. Remove agent/state/ from .gitignore (keep only the lock and the HALT file there), or set git.commit_state to false in %s to silence this. <==", stateRel, c.configName())
		return
	}
	if head.Detached() {
		// A commit on a detached HEAD belongs to no branch: the next
		// checkout leaves it behind, unseen.
		c.printf("[WARN] State not committed: HEAD is detached in %s, and a commit there would belong to no branch. The state files stay changed on disk; check out a branch and the next cycle commits what it writes (or commit agent/state/ yourself).", c.store.Root)
		return
	}
	if why, busy := repo.InProgress(ctx); busy {
		c.printf("[WARN] State not committed: %s in %s. The state files stay changed on disk; finish it and the next cycle commits what it writes.", why, c.store.Root)
		return
	}
	var paths []string
	written := c.store.Written()
	for _, p := range candidates {
		// state.json is a candidate only when this cycle wrote it.
		if !ignored[p] && (p != stateRel || slices.Contains(written, stateRel)) {
			paths = append(paths, p)
		}
	}
	domain := f.Domain
	if domain == "" {
		domain = "none"
	}
	msg := fmt.Sprintf("%s%d -- %s (%s)", commitPrefix, f.Cycle, domain, resultType)
	var commit *gitrepo.Commit
	if prep != nil {
		commit, err = prep.Commit(ctx, msg, paths)
	} else {
		commit, err = repo.CommitOn(ctx, head, msg, paths)
	}
	if err != nil {
		if gitrepo.IdentityUnknown(err) {
			c.printf("[WARN] State not committed: %s in %s.", gitrepo.IdentityHelp, c.configName())
			return
		}
		c.printf("[WARN] State not committed: %v", err)
		return
	}
	if commit == nil {
		return
	}
	c.printf("[Record] Committed %s on branch %s: %s", commit.Short(), commit.Branch, msg)
	c.printf("[Record]   %d %s: %s", len(commit.Files), commitPlural(len(commit.Files), "file", "files"), fileList(commit.Files))
	if commit.IndexErr != nil {
		c.printf("[WARN] The index was not updated to commit %s (%s): `git status` shows its files as changed until `git reset -q -- %s`.", commit.Short(), gitFailure(commit.IndexErr), strings.Join(commit.Files, " "))
	}
	c.res.Committed = true
	if !c.cfg.PushState() {
		c.printf("[Record] Not pushed: git.push is false in %s (set it to true to push state commits to the branch's upstream).", c.configName())
		return
	}
	const interrupted = "[Record] Not pushed: the cycle was interrupted; the next cycle pushes this commit (or run `git push`)."
	if c.ctx.Err() != nil {
		// The operator asked ooda to stop; a push may wait on the network.
		c.printf(interrupted)
		return
	}
	// The cycle's own context, not ctx: a signal that arrives while a
	// push waits on the network still stops it.
	push, err := repo.PushUpstream(c.ctx, c.ownCommit)
	var np *gitrepo.NoPushError
	switch {
	case err != nil && c.ctx.Err() != nil:
		c.printf(interrupted)
	case errors.As(err, &np):
		c.printf("[Record] Not pushed: %s.", np.Why)
	case err != nil:
		var ge *gitrepo.Error
		if errors.As(err, &ge) && strings.Contains(ge.Output, "[rejected]") {
			// Retrying cannot help: the branch must take in the remote's
			// commits first, which is the user's call.
			c.printf("[WARN] Push to %s rejected (%s): %s has commits that branch %s lacks. The commit stays local; bring them in (`git pull --rebase`), then `git push`.", push.Upstream, gitFailure(err), push.Upstream, push.Branch)
			return
		}
		c.printf("[WARN] Push to %s failed (%s); the commit stays local and the next cycle pushes it again, or run `git push`.", push.Upstream, gitFailure(err))
	default:
		c.printf("[Record] Pushed %d %s (up to %s) to %s, the upstream of branch %s.", push.Commits, commitPlural(push.Commits, "commit", "commits"), commit.Short(), push.Upstream, push.Branch)
		c.res.Pushed = true
	}
}

// pendingCommit is the part of Step 6-D that reads only (where HEAD is,
// which paths git ignores, what the commit is built from), started before
// Step 6 writes its files and running while they are synced: only what
// needs the files' bytes is left for after state.json.
type pendingCommit struct {
	done chan struct{}
	prep *gitrepo.Prep
	// domain is changedDomainStateFiles.
	domain []string
}

// prepareCommit starts the pendingCommit of this cycle's state commit;
// nil when git.commit_state is off. Every path Step 6 may yet write is
// asked about, so that the commit normally needs no other check-ignore.
func (c *cycle) prepareCommit(ctx context.Context) *pendingCommit {
	if !c.cfg.CommitState() {
		return nil
	}
	files := c.domainStateCandidates()
	paths := append([]string{filepath.Join("agent", "state", "evolve", state.StateFile)}, c.store.Written()...)
	for _, name := range []string{state.CycleLogFile, state.CycleLogAnnotationsFile} {
		if rel, err := filepath.Rel(c.store.Root, c.store.EvolvePath(name)); err == nil {
			paths = append(paths, rel)
		}
	}
	for _, f := range files {
		paths = append(paths, f.rel)
	}
	paths = dedupePaths(paths)
	// What the other domains' cycles commit: asked only along with a
	// path git must be asked about anyway, so that each later cycle finds
	// git's answer remembered (gitrepo.PrepareAhead).
	var ahead []string
	if entries, err := os.ReadDir(c.store.EvolveDir); err == nil {
		for _, e := range entries {
			// The state files, not what is set aside or half written.
			if n := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(n, ".") && !strings.Contains(n, ".corrupt") && !strings.Contains(n, "tmp") &&
				(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".md")) {
				if rel, err := filepath.Rel(c.store.Root, filepath.Join(c.store.EvolveDir, e.Name())); err == nil {
					ahead = append(ahead, rel)
				}
			}
		}
	}
	for _, dc := range c.cfg.Domains {
		if rel, err := filepath.Rel(c.store.Root, c.store.LensPath(dc.Name)); err == nil && !strings.HasPrefix(rel, "..") {
			ahead = append(ahead, rel)
		}
		if dc.StateFile == "" {
			continue
		}
		if abs, err := c.store.Resolve(dc.StateFile); err == nil {
			if rel, err := filepath.Rel(c.store.Root, abs); err == nil && !strings.HasPrefix(rel, "..") {
				ahead = append(ahead, rel)
			}
		}
	}
	pc := &pendingCommit{done: make(chan struct{})}
	root, runner, halt, max := c.store.Root, c.opts.Runner, c.repoHalt(), c.cfg.Safety.MaxReadBytes()
	go func() {
		defer close(pc.done)
		pc.prep = gitrepo.PrepareAhead(ctx, root, runner, halt, max, paths, ahead)
		if pc.prep.OK {
			pc.domain = trackedOrChanged(ctx, pc.prep.Tracked, files)
		}
	}()
	return pc
}

// wait waits for the pendingCommit to end, if there is one, and lets go
// of what it holds for a commit that is then not made.
func (pc *pendingCommit) wait() {
	if pc != nil {
		<-pc.done
		pc.prep.Release()
	}
}

// domainFile is the state file of a domain whose skill ran this cycle, and
// whether the run changed it.
type domainFile struct {
	rel     string
	changed bool
}

// changedDomainStateFiles are the state files of the domains whose skill
// ran this cycle that the loop has to commit: those the run changed (the
// bytes differ from what Observe read), and those git does not track yet
// (written by an earlier cycle that did not commit them). A tracked file
// the run left as it was is not the cycle's to commit, even when it
// differs from HEAD: that difference is someone else's edit.
func (c *cycle) changedDomainStateFiles(ctx context.Context, repo *gitrepo.Repo) []string {
	return trackedOrChanged(ctx, repo.Tracked, c.domainStateCandidates())
}

// trackedOrChanged are the files changed, or not tracked by git.
func trackedOrChanged(ctx context.Context, tracked func(context.Context, string) bool, files []domainFile) []string {
	var out []string
	for _, f := range files {
		if f.changed || !tracked(ctx, f.rel) {
			out = append(out, f.rel)
		}
	}
	return out
}

// domainStateCandidates are the state files of the domains whose skill ran
// this cycle, that are regular files in the project.
func (c *cycle) domainStateCandidates() []domainFile {
	if c.snap == nil {
		return nil
	}
	ranAt := state.FormatTime(c.now)
	var out []domainFile
	for _, dc := range c.cfg.Domains {
		if dc.StateFile == "" || c.snap.State.DomainLastRun[dc.Name] != ranAt {
			continue
		}
		abs, err := c.store.Resolve(dc.StateFile)
		if err != nil {
			continue // refused: out of the project (act.go warned already)
		}
		rel, err := filepath.Rel(c.store.Root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if fi, err := os.Lstat(abs); err != nil || !fi.Mode().IsRegular() {
			continue // a skill that wrote no file, or a symlink: nothing to commit
		}
		out = append(out, domainFile{rel: rel, changed: c.domainStateChanged(dc.Name, dc.StateFile)})
	}
	return out
}

// domainStateChanged reports whether a domain's state file differs from
// what Observe read at the start of the cycle; a file Observe did not
// read (missing, unreadable, not observed) counts as changed once it
// exists.
func (c *cycle) domainStateChanged(domain, rel string) bool {
	var before []byte
	if c.obs != nil {
		for _, d := range c.obs.Domains {
			if d.Config.Name == domain && d.State.Found {
				before = d.State.Bytes
			}
		}
	}
	if before == nil {
		return true
	}
	after, err := c.store.ReadDomainState(rel)
	if err != nil || !after.Found {
		return !errors.Is(err, fs.ErrNotExist)
	}
	return string(after.Bytes) != string(before)
}

// gitFailure is a failed git command's error on one line: git's exit
// code and what it printed, lines joined with "; ", without git's
// "hint:" paragraphs.
func gitFailure(err error) string {
	var ge *gitrepo.Error
	if !errors.As(err, &ge) {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(ge.Output, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !strings.HasPrefix(l, "hint:") {
			lines = append(lines, l)
		}
	}
	return fmt.Sprintf("git %s exited %d: %s", ge.Args[0], ge.Code, strings.Join(lines, "; "))
}

// configName is the configuration file as messages name it: relative to
// the project when inside it.
func (c *cycle) configName() string {
	p := c.opts.ConfigPath
	if p == "" {
		return "config.json"
	}
	if rel, err := filepath.Rel(c.store.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// fileList writes committed paths compactly but exactly, grouping the
// files of one directory: "agent/state/evolve/{CHANGELOG.md, state.json},
// agent/state/tests.json".
func fileList(files []string) string {
	byDir := map[string][]string{}
	var dirs []string
	for _, f := range files {
		d, name := path.Split(filepath.ToSlash(f))
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], name)
	}
	sort.Strings(dirs)
	parts := make([]string, 0, len(dirs))
	for _, d := range dirs {
		names := byDir[d]
		sort.Strings(names)
		if len(names) == 1 {
			parts = append(parts, d+names[0])
			continue
		}
		parts = append(parts, d+"{"+strings.Join(names, ", ")+"}")
	}
	return strings.Join(parts, ", ")
}

func commitPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func dedupePaths(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// ownCommit says whether a commit is the loop's own, which 6-D may push:
// a state commit, or one this cycle made (an auto-merge's squash commit
// on a plain-git forge, an automatic rollback's revert).
func (c *cycle) ownCommit(sha, subject string) bool {
	return strings.HasPrefix(subject, commitPrefix) || slices.Contains(c.ownCommits, sha)
}

// withoutSecrets is files (domain state files a skill wrote) less those
// that hold a known secret's value or cannot be read to tell: ooda masks
// every file it writes, and commits no file of a skill's that would put a
// credential in git's history (and, with git.push, on the remote).
func (c *cycle) withoutSecrets(files []string) []string {
	kept := files[:0:0]
	for _, f := range files {
		held, err := c.store.HoldsSecret(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			kept = append(kept, f) // removed: its removal holds nothing
		case err != nil:
			c.printf("[WARN] %s not committed: it could not be read to check it for secrets (%v).", f, err)
		case held:
			c.printf("[WARN] %s not committed: it holds the value of a secret (an environment variable ooda treats as a credential, or one a notification names). The skill wrote it there; once it is masked or gone, the next cycle that runs that skill commits the file.", f)
		default:
			kept = append(kept, f)
		}
	}
	return kept
}
