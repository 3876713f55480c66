package gitrepo

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
)

// Prep is what a state commit can learn before the files it commits are
// written: where HEAD is, which candidate paths git ignores, and what the
// commit needs to be built without an index (the configuration, the
// attributes of the paths, HEAD's trees along them). Every git process it
// runs only reads, so it runs while the cycle writes and syncs its files,
// and what is left after them is the part that needs the files' bytes.
// Where that is certain, it learns all this without git (prepareNative).
type Prep struct {
	// Repo is the repository, nil when the directory is in none (or git
	// is not installed); Head is where HEAD was; OK is false when either
	// could not be read, Err says why (ErrHalted among others).
	Repo *Repo
	Head Head
	OK   bool
	Err  error

	ignored   map[string]bool
	asked     map[string]bool
	ignoreErr error
	// index is the user's index as Prepare read it, when ooda reads it
	// itself (prepareNative); nil otherwise.
	index *gitIndex
	// base is what building the commit from the files needs; nil when it
	// must be built with a private index (commitOnce).
	base *fastBase
}

// Prepare reads, for a state commit of some of paths (relative to dir) on
// the current branch, everything that does not depend on the paths'
// bytes. Its git processes stop when haltFile appears, as Repo.HaltFile.
func Prepare(ctx context.Context, dir string, r proc.Runner, haltFile string, maxOutput int64, paths []string) *Prep {
	return PrepareAhead(ctx, dir, r, haltFile, maxOutput, paths, nil)
}

// PrepareAhead is Prepare that also learns about ahead: paths later
// state commits are likely to hold (the files of the domains that did not
// run this cycle). When git must be asked about some of paths anyway, it
// is asked about those too, in the same process, so that what ooda
// remembers of git's answers (prepCache) covers them before they are
// committed. Nothing is asked for them alone.
func PrepareAhead(ctx context.Context, dir string, r proc.Runner, haltFile string, maxOutput int64, paths, ahead []string) *Prep {
	if r == nil {
		r = proc.Exec{}
	}
	p := &Prep{}
	repo := &Repo{Dir: dir, Runner: r, HaltFile: haltFile, MaxOutput: maxOutput}
	if np := prepareNative(ctx, repo, paths, ahead); np != nil {
		return np
	}
	repo.gitDir, repo.prefix, repo.top = "", "", ""
	// One process for the layout, the object directory and HEAD. It fails
	// on an unborn branch, where OpenHead asks again in its own way.
	out, err := repo.runStdout(ctx, nil, nil, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--show-prefix",
		"--git-path", "objects", "HEAD", "--symbolic-full-name", "HEAD", "--")
	var objects string
	lines := strings.Split(strings.TrimPrefix(out, "true\n"), "\n")
	if err == nil && strings.HasPrefix(out, "true\n") && len(lines) >= 5 && repo.setLayout(lines[0]+"\n"+lines[1]) == nil {
		if h, herr := parseHead(lines[3:]); herr == nil {
			p.Repo, p.Head, p.OK = repo, h, true
			objects = lines[2]
			if !filepath.IsAbs(objects) {
				objects = filepath.Join(dir, objects)
			}
		}
	}
	if !p.OK {
		if errors.Is(err, ErrHalted) {
			p.Err = err
			return p
		}
		p.Repo, p.Head, p.OK, p.Err = OpenHead(ctx, dir, r, haltFile)
		if p.Repo != nil {
			p.Repo.MaxOutput = maxOutput
		}
	}
	if !p.OK {
		return p
	}
	repo = p.Repo
	removeStaleIndexes(repo.gitDir)
	// One after the other: the runner need not be safe for concurrent
	// use, and these wait beside the writes, not before them.
	p.asked = map[string]bool{}
	for _, q := range paths {
		p.asked[q] = true
	}
	p.ignored, p.ignoreErr = repo.IgnoredPaths(ctx, paths)
	if p.ignoreErr != nil || p.Head.SHA == "" || p.Head.Detached() {
		return p
	}
	cfg, err := repo.readConfig(ctx)
	if err != nil || !cfg.fastOK() {
		return p
	}
	plain, err := repo.plainPaths(ctx, paths)
	if err != nil {
		return p
	}
	trees, err := repo.headTrees(ctx, p.Head.SHA, paths, objects, cfg)
	if err != nil || trees == nil {
		return p
	}
	p.base = &fastBase{head: p.Head, objects: objects, cfg: cfg, plain: plain, trees: trees}
	return p
}

// IgnoredPaths is Repo.IgnoredPaths answered from what Prepare asked,
// asking git only about the paths it did not.
func (p *Prep) IgnoredPaths(ctx context.Context, paths []string) (map[string]bool, error) {
	if p.ignoreErr != nil {
		return p.Repo.IgnoredPaths(ctx, paths)
	}
	out := map[string]bool{}
	var rest []string
	for _, q := range paths {
		if !p.asked[q] {
			rest = append(rest, q)
		} else if p.ignored[q] {
			out[q] = true
		}
	}
	if len(rest) > 0 {
		more, err := p.Repo.IgnoredPaths(ctx, rest)
		if err != nil {
			return nil, err
		}
		for q := range more {
			out[q] = true
		}
	}
	return out, nil
}

// Tracked is Repo.Tracked, answered from the index Prepare read when it
// read it itself.
func (p *Prep) Tracked(ctx context.Context, path string) bool {
	if p.index != nil {
		if top, ok := p.Repo.topPath(path); ok && !p.index.underGitlink(top) {
			return p.index.tracked(top)
		}
	}
	return p.Repo.Tracked(ctx, path)
}

// Commit is Repo.CommitOn on p.Head, built from the files without an
// index when Prepare found nothing that needs one (a filter or line-ending
// conversion, a configuration it does not follow, a path that is not a
// regular file), and with the private index otherwise. Either way the
// branch moves only from p.Head, and if it moved meanwhile the commit is
// built again, on top, with the private index. A prepared native commit
// also writes the commit object, moves the branch and updates the index
// itself where git's plumbing would do exactly that (commitFast).
func (p *Prep) Commit(ctx context.Context, msg string, paths []string) (*Commit, error) {
	r := p.Repo
	if len(paths) == 0 {
		return nil, nil
	}
	if p.base == nil {
		return r.CommitOn(ctx, p.Head, msg, paths)
	}
	c, err := r.commitFast(ctx, p.base, msg, paths)
	p.Release()
	var moved *refMovedError
	switch {
	case errors.Is(err, errNotPlain):
		return r.CommitOn(ctx, p.Head, msg, paths)
	case errors.As(err, &moved):
		return r.CommitOn(ctx, moved.now, msg, paths)
	}
	return c, err
}

// Release lets go of what p holds for a commit (the temporary files made
// ahead for its objects): for a commit that is not made, or is made.
// It may be called more than once.
func (p *Prep) Release() {
	if p != nil && p.base != nil {
		p.base.slots.release()
	}
}

// topPath is rel (relative to Repo.Dir) from the top of the repository,
// with slashes; ok is false for a path that is not plainly inside Dir.
func (r *Repo) topPath(rel string) (string, bool) {
	s := filepath.ToSlash(rel)
	if s == "" || strings.HasPrefix(s, "/") || path.Clean(s) != s || s == ".." || strings.HasPrefix(s, "../") {
		return "", false
	}
	return r.prefix + s, true
}

// staleIndexAge is how old a private index must be to be a leftover: far
// beyond any git command's time limit.
const staleIndexAge = time.Hour

// removeStaleIndexes removes the private indexes (and their locks) that a
// commit killed in the middle left in gitDir. A younger one may be another
// project's commit in the same repository, at work. The age is measured
// on the real clock, not the cycle's (which --now may set years away):
// it is compared with a modification time the file system wrote.
func removeStaleIndexes(gitDir string) {
	removeStaleSlots(gitDir)
	left, _ := filepath.Glob(filepath.Join(gitDir, "ooda-index-*"))
	for _, f := range left {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleIndexAge {
			os.Remove(f)
		}
	}
}
