package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ooda-loop/ooda/internal/proc"
)

// Head is where HEAD is: the branch a commit would go on, and its tip.
type Head struct {
	// Ref is the branch HEAD is on ("refs/heads/main"); "" when HEAD is
	// detached.
	Ref string
	// SHA is the commit HEAD points to; "" on an unborn branch (a
	// repository without commits).
	SHA string
}

// Detached reports a HEAD on no branch.
func (h Head) Detached() bool { return h.Ref == "" }

// Branch is the branch's short name ("main").
func (h Head) Branch() string { return strings.TrimPrefix(h.Ref, "refs/heads/") }

// OpenHead is OpenHalting that reads HEAD too, with the same git process
// wherever HEAD resolves: a state commit needs both, and a process costs
// more than the two lines. ok is false when dir is not in a working tree,
// or when reading HEAD failed (err says why).
func OpenHead(ctx context.Context, dir string, r proc.Runner, haltFile string) (repo *Repo, head Head, ok bool, err error) {
	if r == nil {
		r = proc.Exec{}
	}
	repo = &Repo{Dir: dir, Runner: r, HaltFile: haltFile}
	out, err := repo.runStdout(ctx, nil, nil, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--show-prefix",
		"HEAD", "--symbolic-full-name", "HEAD", "--")
	if err == nil && strings.HasPrefix(out, "true\n") {
		lines := strings.Split(strings.TrimPrefix(out, "true\n"), "\n")
		if len(lines) >= 4 && repo.setLayout(lines[0]+"\n"+lines[1]) == nil {
			if h, herr := parseHead(lines[2:]); herr == nil {
				return repo, h, true, nil
			}
		}
	}
	if errors.Is(err, ErrHalted) {
		return nil, Head{}, false, err
	}
	if !strings.HasPrefix(out, "true\n") {
		return nil, Head{}, false, nil // no working tree (git printed nothing)
	}
	// HEAD does not resolve (an unborn branch), or this is no working
	// tree: ask separately.
	repo, ok = OpenHalting(ctx, dir, r, haltFile)
	if !ok {
		return nil, Head{}, false, nil
	}
	head, err = repo.Head(ctx)
	if err != nil {
		return repo, Head{}, false, err
	}
	return repo, head, true, nil
}

// parseHead reads the lines of `git rev-parse HEAD --symbolic-full-name
// HEAD`: the commit, then the branch ("HEAD" when detached).
func parseHead(lines []string) (Head, error) {
	if len(lines) < 2 || !ValidSHA(lines[0]) {
		return Head{}, fmt.Errorf("git rev-parse HEAD printed %q", strings.Join(lines, "\n"))
	}
	h := Head{SHA: lines[0]}
	if ref := lines[1]; ref != "HEAD" && ref != "--" {
		h.Ref = ref
	}
	return h, nil
}

// Head reads HEAD in one git process (two on an unborn branch).
func (r *Repo) Head(ctx context.Context) (Head, error) {
	// The final "--" keeps a file named HEAD from making the name
	// ambiguous.
	out, err := r.runStdout(ctx, nil, nil, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--")
	if err == nil {
		return parseHead(strings.Split(strings.TrimSpace(out), "\n"))
	}
	if errors.Is(err, ErrHalted) {
		return Head{}, err
	}
	// HEAD does not resolve: an unborn branch, whose name symbolic-ref
	// still knows.
	ref, serr := r.runStdout(ctx, nil, nil, "symbolic-ref", "-q", "HEAD")
	if serr != nil || strings.TrimSpace(ref) == "" {
		return Head{}, err
	}
	return Head{Ref: strings.TrimSpace(ref)}, nil
}

// Ignored reports whether path (relative to the repository) is ignored.
func (r *Repo) Ignored(ctx context.Context, path string) bool {
	ig, err := r.IgnoredPaths(ctx, []string{path})
	return err == nil && ig[path]
}

// IgnoredPaths returns which of paths (relative to Repo.Dir) git ignores,
// asking one `git check-ignore` for all of them. As for `git add`, a
// tracked file is never ignored.
func (r *Repo) IgnoredPaths(ctx context.Context, paths []string) (map[string]bool, error) {
	return r.ignoredPaths(ctx, paths, false)
}

// ignoredPaths is IgnoredPaths; with noIndex, by the ignore rules alone,
// tracked or not (`check-ignore --no-index`).
func (r *Repo) ignoredPaths(ctx context.Context, paths []string, noIndex bool) (map[string]bool, error) {
	ignored := map[string]bool{}
	if len(paths) == 0 {
		return ignored, nil
	}
	// check-ignore parses its paths as pathspecs but refuses
	// GIT_LITERAL_PATHSPECS; "./" keeps a name starting with ":" from
	// being read as pathspec magic. git prints each ignored path as given.
	in := make([]string, len(paths))
	for i, p := range paths {
		in[i] = "./" + p
	}
	args := []string{"check-ignore", "--stdin", "-z"}
	if noIndex {
		args = []string{"check-ignore", "--no-index", "--stdin", "-z"}
	}
	out, err := r.runStdout(ctx, nulList(in), nil, args...)
	var ge *Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return ignored, nil // exit 1: none is ignored
	}
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			ignored[strings.TrimPrefix(p, "./")] = true
		}
	}
	return ignored, nil
}

// Busy reports an operation in progress (merge, rebase, cherry-pick) or a
// detached HEAD: no commit should be made then.
func (r *Repo) Busy(ctx context.Context) (string, bool) {
	if _, err := r.Run(ctx, "symbolic-ref", "-q", "HEAD"); err != nil {
		return "HEAD is detached", true
	}
	return r.InProgress(ctx)
}

// InProgress reports a merge, rebase, cherry-pick or revert in progress,
// from the files git keeps in its directory while one is.
func (r *Repo) InProgress(ctx context.Context) (string, bool) {
	gitDir, err := r.GitDir(ctx)
	if err != nil {
		return "", false
	}
	for _, op := range []struct{ file, what string }{
		{"MERGE_HEAD", "a merge"}, {"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase"},
		{"CHERRY_PICK_HEAD", "a cherry-pick"}, {"REVERT_HEAD", "a revert"},
	} {
		if _, err := os.Stat(filepath.Join(gitDir, op.file)); err == nil {
			return op.what + " is in progress", true
		}
	}
	return "", false
}

// Commit is a commit of state files: what Step 6-D prints it made.
type Commit struct {
	// SHA is the commit's full object name.
	SHA string
	// Branch is the branch it was made on ("main"); "" for a detached
	// HEAD, on which Step 6-D never commits.
	Branch string
	// Files are the paths the commit changed, relative to Repo.Dir, as git
	// lists them.
	Files []string
	// IndexErr, when not nil, says why the index was not brought up to
	// the commit for Files: the commit is made, but `git status` shows
	// those files as changed back until `git reset -q -- <files>`.
	IndexErr error
}

// Short is the commit's name abbreviated to 7 digits, as people quote it.
func (c Commit) Short() string { return shortSHA(c.SHA) }

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// CommitPaths commits exactly paths and only them, whatever else is
// staged: a user's own staged work is never swept into the commit. It
// reports committed false when none of the paths changed.
func (r *Repo) CommitPaths(ctx context.Context, msg string, paths []string) (bool, error) {
	c, err := r.CommitFiles(ctx, msg, paths)
	return c != nil, err
}

// CommitFiles is CommitPaths returning the commit made: its SHA, branch and
// the files it changed; nil when none of the paths changed. Paths are
// relative to Repo.Dir; one that does not exist is committed as deleted.
func (r *Repo) CommitFiles(ctx context.Context, msg string, paths []string) (*Commit, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	head, err := r.Head(ctx)
	if err != nil {
		return nil, err
	}
	return r.CommitOn(ctx, head, msg, paths)
}

// maxRefRaces is how often CommitOn starts again because the branch
// moved while it was building its commit.
const maxRefRaces = 3

// CommitOn is CommitFiles on head, as Head read it. The commit is built
// in a private index (GIT_INDEX_FILE, in the git directory) seeded from
// head: the user's index and working tree are not read for it, so their
// staged work stays out, and no hook runs (docs/security.md). The branch
// moves only if it is still at head.SHA (`git update-ref <ref> <new>
// <old>`); if something else moved it meanwhile, the commit is built again
// on top of that, so no one's commit is lost. Afterwards the index entries
// of the committed paths, and only those, are set to what was committed,
// as `git commit --only` does, so that `git status` shows them clean.
func (r *Repo) CommitOn(ctx context.Context, head Head, msg string, paths []string) (*Commit, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	for race := 0; ; race++ {
		c, err := r.commitOnce(ctx, head, msg, paths)
		var moved *refMovedError
		if errors.As(err, &moved) && race < maxRefRaces {
			head = moved.now
			continue
		}
		if moved != nil {
			return nil, moved.err
		}
		return c, err
	}
}

// refMovedError is an update-ref refused because HEAD is no longer
// where the commit was built from.
type refMovedError struct {
	now Head
	err error
}

func (e *refMovedError) Error() string { return e.err.Error() }

// change is one path of a commit, from `git diff-tree --raw`: its new mode
// and object, and its path from the top of the repository.
type change struct {
	mode, oid, path string
	deleted         bool
}

func (r *Repo) commitOnce(ctx context.Context, head Head, msg string, paths []string) (*Commit, error) {
	gitDir, err := r.GitDir(ctx)
	if err != nil {
		return nil, err
	}
	index, cleanup, err := privateIndex(gitDir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// The private index is ooda's alone: whatever the repository sets up
	// for the user's index (an fsmonitor command, a split or untracked
	// cache) has no business with it.
	priv := func(stdin []byte, args ...string) (string, error) {
		return r.runStdout(ctx, stdin, []string{"GIT_INDEX_FILE=" + index},
			append([]string{"-c", "core.fsmonitor=false", "-c", "core.splitIndex=false", "-c", "core.untrackedCache=false"}, args...)...)
	}
	if head.SHA != "" {
		if !ValidSHA(head.SHA) {
			return nil, fmt.Errorf("HEAD %q is not a commit SHA", head.SHA)
		}
		if _, err := priv(nil, "read-tree", head.SHA); err != nil {
			return nil, err
		}
	}
	// Paths on stdin are taken as they are: a name with a newline, a
	// leading dash or a pathspec's magic is that one file. The blobs are
	// hashed as `git add` would (.gitattributes filters included). The
	// cycle log only grows and is stored whole each cycle; zlib's fastest
	// level keeps that from growing the cycle's time as fast, and the
	// next `git gc` packs these objects with its own compression anyway.
	if _, err := priv(nulList(paths), "-c", "core.looseCompression=1", "update-index", "--add", "--remove", "--replace", "-z", "--stdin"); err != nil {
		return nil, err
	}
	out, err := priv(nil, "write-tree")
	if err != nil {
		return nil, err
	}
	tree := strings.TrimSpace(out)
	if !ValidSHA(tree) {
		return nil, fmt.Errorf("git write-tree printed %q", out)
	}
	base := head.SHA
	if base == "" {
		base = emptyTree(tree)
	}
	out, err = r.runStdout(ctx, nil, nil, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", base, tree)
	if err != nil {
		return nil, err
	}
	changes, err := parseRawDiff(out)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return nil, nil
	}
	args := []string{"commit-tree", "-m", msg}
	// commit-tree leaves commit.gpgSign to its caller; a user who signs
	// every commit gets signed state commits, as with `git commit`.
	if sign, err := r.runStdout(ctx, nil, nil, "config", "--bool", "--get", "commit.gpgSign"); err == nil && strings.TrimSpace(sign) == "true" {
		args = append(args, "-S")
	} else if errors.Is(err, ErrHalted) {
		return nil, err
	}
	if head.SHA != "" {
		args = append(args, "-p", head.SHA)
	}
	out, err = r.runStdout(ctx, nil, nil, append(args, tree)...)
	if err != nil {
		return nil, err
	}
	sha := strings.TrimSpace(out)
	if !ValidSHA(sha) {
		return nil, fmt.Errorf("git commit-tree printed %q", out)
	}
	if err := r.moveRef(ctx, head, sha, msg); err != nil {
		return nil, err
	}
	c := &Commit{SHA: sha, Branch: head.Branch()}
	// diff-tree names paths from the top of the repository; Files are
	// relative to Repo.Dir, like the paths asked for.
	for _, ch := range changes {
		c.Files = append(c.Files, strings.TrimPrefix(ch.path, r.prefix))
	}
	c.IndexErr = r.stageCommitted(ctx, changes)
	r.autoGC(ctx, gitDir)
	return c, nil
}

// moveRef points head's branch (HEAD itself when detached) at sha if it
// still is at head.SHA — created only if it still does not exist on an
// unborn branch — and logs the move as `git commit` does.
func (r *Repo) moveRef(ctx context.Context, head Head, sha, msg string) error {
	subject, _, _ := strings.Cut(msg, "\n")
	reflog := "commit: " + subject
	old := head.SHA
	if old == "" {
		reflog = "commit (initial): " + subject
		old = strings.Repeat("0", len(sha))
	}
	args := []string{"update-ref", "-m", reflog}
	ref := head.Ref
	if ref == "" {
		args = append(args, "--no-deref")
		ref = "HEAD"
	}
	_, err := r.runStdout(ctx, nil, nil, append(args, "--end-of-options", ref, sha, old)...)
	if err == nil || errors.Is(err, ErrHalted) {
		return err
	}
	if now, herr := r.Head(ctx); herr == nil && now != head {
		if now.Detached() && !head.Detached() {
			return fmt.Errorf("HEAD became detached while the state commit was made: %w", err)
		}
		return &refMovedError{now: now, err: err}
	}
	return err
}

// stageCommitted sets the user's index entries of the committed paths to
// what the commit holds, leaving every other entry — the user's staged
// work — as it was.
func (r *Repo) stageCommitted(ctx context.Context, changes []change) error {
	var in []byte
	for _, ch := range changes {
		if ch.deleted {
			in = fmt.Appendf(in, "0 %s\t%s\x00", strings.Repeat("0", len(ch.oid)), ch.path)
			continue
		}
		in = fmt.Appendf(in, "%s %s\t%s\x00", ch.mode, ch.oid, ch.path)
	}
	_, err := r.runStdout(ctx, in, nil, "update-index", "-z", "--index-info")
	return err
}

// looseObjectsPerDir is how many loose objects in objects/17 make
// `git gc --auto` worth asking: git's own test, for the default gc.auto
// of 6,700 ((6700+255)/256).
const looseObjectsPerDir = 27

// autoGC does what `git commit` does after committing: `git gc --auto`
// packs loose objects once there are many, so that a long-lived loop's
// thousands of state commits do not slow git down. git counts the
// objects in one of the 256 fan-out directories; so does this, without a
// process, and asks git (which honours gc.auto) only past its default.
func (r *Repo) autoGC(ctx context.Context, gitDir string) {
	objects := filepath.Join(commonDir(gitDir), "objects", "17")
	entries, err := os.ReadDir(objects)
	if err != nil || len(entries) <= looseObjectsPerDir {
		return
	}
	_, _ = r.Run(ctx, "gc", "--auto", "--quiet")
}

// commonDir is the directory holding the objects of gitDir, which for a
// linked worktree is the main repository's git directory.
func commonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	d := strings.TrimSpace(string(b))
	if !filepath.IsAbs(d) {
		d = filepath.Join(gitDir, d)
	}
	return d
}

// privateIndex returns the name of a new index file in gitDir, not yet
// created (git refuses an empty file as an index), and the function that
// removes it and its lock.
func privateIndex(gitDir string) (string, func(), error) {
	f, err := os.CreateTemp(gitDir, "ooda-index-")
	if err != nil {
		return "", nil, fmt.Errorf("private index for the state commit: %w", err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return name, func() {
		os.Remove(name)
		os.Remove(name + ".lock")
	}, nil
}

// emptyTree is the name of the empty tree in the object format of oid
// (SHA-1 or SHA-256); git knows it without storing it.
func emptyTree(oid string) string {
	if len(oid) == 64 {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}

// parseRawDiff reads `git diff-tree -r -z --raw` output:
// ":oldmode newmode oldoid newoid status\0path\0" per path.
func parseRawDiff(out string) ([]change, error) {
	var changes []change
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 || !strings.HasPrefix(fields[i], ":") {
			return nil, fmt.Errorf("git diff-tree printed %q", fields[i])
		}
		ch := change{mode: meta[1], oid: meta[3], path: fields[i+1], deleted: meta[4] == "D"}
		if !ValidSHA(ch.oid) {
			return nil, fmt.Errorf("git diff-tree printed %q", fields[i])
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// nulList is paths as `--stdin -z` reads them.
func nulList(paths []string) []byte {
	var b []byte
	for _, p := range paths {
		b = append(append(b, p...), 0)
	}
	return b
}
