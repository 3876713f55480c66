package forge

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/secret"
)

// ClosedRefPrefix is where a plain-git project records that a branch was
// rejected, git having no notion of a closed pull request:
//
//	git update-ref refs/ooda/closed/<branch> <commit>
//
// marks <branch> closed (usually with the branch's tip as <commit>, whose
// committer date then stands for the closing time, since git records no
// time for a ref update). The branch may be deleted afterwards and is still
// reported closed; `git update-ref -d refs/ooda/closed/<branch>` reopens it.
const ClosedRefPrefix = "refs/ooda/closed/"

// BranchTrailer is the trailer MergeSquash writes into a squash commit so
// the merge can be recognised after the branch's own commits are gone from
// the default branch's history (a squash commit is a new commit).
const BranchTrailer = "Ooda-Branch"

// GitOptions configure NewGit.
type GitOptions struct {
	// Dir is the repository's working tree.
	Dir string
	// DefaultBranch is the branch PRs merge into. Empty means the target of
	// <Remote>/HEAD when the remote has one, else "main" when it exists
	// (locally or on the remote), else "master".
	DefaultBranch string
	// BranchPrefixes select the branches that are PRs, e.g.
	// "auto/scan-health/". With none, the project has no PRs.
	BranchPrefixes []string
	// Remote is the remote whose tracking branches
	// (refs/remotes/<Remote>/<prefix>…) count as PRs too; empty means
	// "origin". A remote that does not exist simply contributes nothing.
	Remote string
	// MaxOutput bounds what one git command may print (safety.max_read_mib):
	// a command that prints more fails instead of filling memory. Zero
	// means gitrepo.DefaultMaxOutput.
	MaxOutput int64
}

// Git is the Forge of a project without a hosting service: a pull request
// is a branch under one of the branch prefixes, found among the local
// branches and the remote-tracking branches of one remote.
//
// A branch is merged when its tip is reachable from the default branch
// (a fast-forward or merge-commit merge) or when a commit on the default
// branch names it with "(branch <name>)" or an Ooda-Branch trailer, or
// names its tip in an Ooda-Head trailer (a squash merge, as MergeSquash
// makes). Merged wins over closed: history, not a marker, says what is on
// the default branch. A branch with no commit of its own is therefore
// merged, as there is nothing to review.
// A branch under ClosedRefPrefix is closed; every other one is open.
//
// The provider never fetches: it sees the remote as of the last fetch.
type Git struct {
	dir           string
	bin           string
	defaultBranch string
	prefixes      []string
	remote        string
	maxOutput     int64
	runner        proc.Runner

	// mu guards what the provider remembers of the history: mem, read
	// in this process or loaded from store, and what is still to save.
	mu     sync.Mutex
	mem    *scanMemo
	store  CursorStore
	loaded bool
	// dirty: mem holds something the store does not; lag counts the
	// commits read since the last save.
	dirty    bool
	lag      int
	notes    []CursorNote
	fallback int // scanFallbackCommits when 0
	// lastView is the last reading of the refs, with the fingerprint of
	// the ref storage it was read from; nil when it has none.
	lastView *viewAt
	// readings counts the readings of the refs, for the tests that show
	// when one is skipped.
	readings int
}

var _ Forge = (*Git)(nil)

// NewGit checks opts and finds the git binary. The repository itself is
// read by each call, so a repository that changes between cycles (a new
// remote, a renamed default branch) is seen as it is.
func NewGit(opts GitOptions) (*Git, error) {
	if opts.Dir == "" {
		return nil, errors.New("git forge: no repository directory")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("git forge: %w", err)
	}
	remote := opts.Remote
	if remote == "" {
		remote = "origin"
	}
	// A remote name is one ref component, as `git remote add` requires.
	if strings.Contains(remote, "/") || !gitrepo.ValidBranchName(remote) {
		return nil, fmt.Errorf("git forge: invalid remote name %q", opts.Remote)
	}
	if opts.DefaultBranch != "" {
		if err := gitrepo.CheckBranchName(opts.DefaultBranch); err != nil {
			return nil, fmt.Errorf("git forge: invalid default branch: %w", err)
		}
	}
	var prefixes []string
	for _, p := range opts.BranchPrefixes {
		if p == "" || strings.HasPrefix(p, "refs/") || !gitrepo.ValidBranchName(strings.TrimSuffix(p, "/")) {
			return nil, fmt.Errorf("git forge: invalid branch prefix %q", p)
		}
		prefixes = append(prefixes, p)
	}
	maxOutput := opts.MaxOutput
	if maxOutput <= 0 {
		maxOutput = gitrepo.DefaultMaxOutput
	}
	bin, err := proc.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git forge: %w", err)
	}
	return &Git{dir: dir, bin: bin, defaultBranch: opts.DefaultBranch, prefixes: prefixes, remote: remote,
		maxOutput: maxOutput, runner: proc.Exec{}}, nil
}

// Name identifies the provider in logs.
func (g *Git) Name() string { return "git" }

// BranchNumber is the PR number of a branch: FNV-1a (32 bit) of the branch
// name, modulo 1,000,000, plus 1. It depends on the name alone, so it is
// the same in every clone and on every run, and it stays within six
// digits. Two of the few branches a project has colliding is negligible
// (about n²/2,000,000 for n branches); should it happen, the branch whose
// name sorts first answers to the number.
func BranchNumber(branch string) int {
	h := fnv.New32a()
	h.Write([]byte(branch))
	return int(h.Sum32()%1_000_000) + 1
}

// gitView is one reading of the refs that matter.
type gitView struct {
	// remoteName is the remote whose tracking branches were read.
	remoteName string
	defName    string
	primary    string   // the default branch's ref: local if it exists, else remote-tracking
	defaults   []string // every existing ref of the default branch, primary first
	local      map[string]string
	remote     map[string]string
	closed     map[string]string
}

func (g *Git) view(ctx context.Context) (*gitView, error) {
	// Taken before the refs are read: a ref that changes in between makes
	// the next fingerprint differ, so a reading is only ever reused for
	// the storage it was read from or an older one.
	fp, fpOK := g.refsFingerprint()
	v, err := g.readView(ctx)
	g.mu.Lock()
	g.lastView = nil
	if err == nil && fpOK {
		g.lastView = &viewAt{view: v, fingerprint: fp}
	}
	g.mu.Unlock()
	return v, err
}

// viewAt is a view and the fingerprint of the ref storage it was read
// from.
type viewAt struct {
	view        *gitView
	fingerprint string
}

func (g *Git) readView(ctx context.Context) (*gitView, error) {
	// One listing holds every ref that matters and, through %(symref),
	// where <remote>/HEAD points: the default branch is found without a
	// second git process (remoteHead). It is read from the ref files
	// when they can be read exactly as git would list them
	// (listRefsLocal), else from one `git for-each-ref`.
	g.mu.Lock()
	g.readings++
	g.mu.Unlock()
	patterns := []string{"refs/heads", "refs/remotes/" + g.remote, strings.TrimSuffix(ClosedRefPrefix, "/")}
	out, ok := listRefsLocal(g.dir, g.bin, patterns, g.maxOutput)
	if !ok {
		var err error
		out, err = g.run(ctx, append([]string{"for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"}, patterns...)...)
		if err != nil {
			return nil, err
		}
	}
	v := &gitView{remoteName: g.remote, local: map[string]string{}, remote: map[string]string{}, closed: map[string]string{}}
	refs := refListing{symrefs: map[string]string{}, listed: map[string]bool{}}
	remotePrefix := "refs/remotes/" + g.remote + "/"
	for _, line := range strings.Split(out, "\n") {
		ref, rest, ok := strings.Cut(line, "\x00")
		sha, target, _ := strings.Cut(rest, "\x00")
		// git lists only refs whose names it accepts, but "refs/heads/-x"
		// is one of them: every name and id is checked before it can
		// reach an argv or a log line.
		if !ok || !gitrepo.ValidSHA(sha) || gitrepo.CheckRefName(ref) != nil {
			continue
		}
		refs.listed[ref] = true
		if target != "" {
			refs.symrefs[ref] = target
		}
		switch {
		case strings.HasPrefix(ref, "refs/heads/"):
			if name := strings.TrimPrefix(ref, "refs/heads/"); gitrepo.ValidBranchName(name) {
				v.local[name] = sha
			}
		case strings.HasPrefix(ref, remotePrefix):
			if name := strings.TrimPrefix(ref, remotePrefix); gitrepo.ValidBranchName(name) {
				v.remote[name] = sha
			}
		case strings.HasPrefix(ref, ClosedRefPrefix):
			if name := strings.TrimPrefix(ref, ClosedRefPrefix); gitrepo.ValidBranchName(name) {
				v.closed[name] = sha
			}
		}
	}
	v.defName = g.defaultBranch
	if v.defName == "" {
		v.defName = g.detectDefault(ctx, v, refs)
	}
	if _, ok := v.local[v.defName]; ok {
		v.defaults = append(v.defaults, "refs/heads/"+v.defName)
	}
	if _, ok := v.remote[v.defName]; ok {
		v.defaults = append(v.defaults, remotePrefix+v.defName)
	}
	if len(v.defaults) == 0 {
		return nil, fmt.Errorf("git forge: default branch %q not found in %s", v.defName, g.dir)
	}
	v.primary = v.defaults[0]
	return v, nil
}

// refListing is what one for-each-ref listed: every ref, and the target
// of each symbolic one.
type refListing struct {
	symrefs map[string]string
	listed  map[string]bool
}

func (g *Git) detectDefault(ctx context.Context, v *gitView, refs refListing) string {
	prefix := "refs/remotes/" + g.remote + "/"
	if target, ok := g.remoteHead(ctx, prefix+"HEAD", refs); ok {
		if name, ok := strings.CutPrefix(target, prefix); ok && gitrepo.ValidBranchName(name) {
			return name
		}
	}
	_, local := v.local["main"]
	_, remote := v.remote["main"]
	if local || remote {
		return "main"
	}
	return "master"
}

// maxSymrefDepth is how many symbolic refs git follows before it gives up
// (SYMREF_MAXDEPTH).
const maxSymrefDepth = 5

// remoteHead answers what `git symbolic-ref --quiet <head>` would print:
// the ref that head finally points to, following symbolic refs, and false
// when head is no symbolic ref. The listing answers it without a process
// when head and every ref on its way are in it; git is asked only when
// they are not: a symbolic ref whose target does not exist (the remote's
// default branch was deleted by a prune) is missing from any listing, yet
// git still names its target.
func (g *Git) remoteHead(ctx context.Context, head string, refs refListing) (string, bool) {
	switch {
	case refs.listed[head]:
		ref := head
		for range maxSymrefDepth {
			target, sym := refs.symrefs[ref]
			if !sym {
				if ref == head {
					// A ref, but not a symbolic one.
					return "", false
				}
				return ref, true
			}
			if !refs.listed[target] {
				// Outside the listing, or dangling: only git can tell.
				return g.symbolicRef(ctx, head)
			}
			ref = target
		}
		return g.symbolicRef(ctx, head)
	case g.certainlyAbsent(head):
		return "", false
	}
	return g.symbolicRef(ctx, head)
}

func (g *Git) symbolicRef(ctx context.Context, ref string) (string, bool) {
	out, err := g.run(ctx, "symbolic-ref", "--quiet", ref)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(out), true
}

// certainlyAbsent reports whether ref certainly does not exist in the
// repository, not even as a symbolic ref to nothing, which no listing
// shows. It is sure only in the common layout: the working tree's own
// .git directory, a repository git itself would accept there (so that git
// does not look further up), with loose and packed refs — and a
// symbolic ref is always a loose file, never packed. Anything else (a
// linked worktree, a reftable repository, a .git file, a project inside
// a larger repository) is left to git.
func (g *Git) certainlyAbsent(ref string) bool {
	gitDir, ok := g.plainGitDir()
	if !ok {
		return false
	}
	_, err := os.Lstat(filepath.Join(gitDir, filepath.FromSlash(ref)))
	return errors.Is(err, fs.ErrNotExist)
}

// plainGitDir returns the working tree's .git directory when git itself
// reads the refs from there, as loose files and packed-refs.
func (g *Git) plainGitDir() (string, bool) {
	gitDir := filepath.Join(g.dir, ".git")
	if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
		return "", false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(gitDir, d)); err != nil || !fi.IsDir() {
			return "", false
		}
	}
	if !validHeadFile(filepath.Join(gitDir, "HEAD")) {
		return "", false
	}
	for _, other := range []string{"commondir", "reftable"} {
		if _, err := os.Lstat(filepath.Join(gitDir, other)); !errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
	}
	return gitDir, true
}

// refsFingerprint describes every file and directory that holds the refs
// a view reads (packed-refs and the loose refs under refs/heads, the
// remote's tracking refs and the closing markers): name, inode, size,
// mode, modification and change times. git replaces a ref by renaming a
// new file over it, so a ref that changed has a new inode and new times
// and its directory new times; a new or deleted ref changes the names.
// false when the repository is not laid out as plainGitDir requires, a
// ref is a symbolic link, or anything cannot be read: the refs are then
// read by git. (What no file of the ref storage shows, an object a ref
// names appearing or vanishing, is not seen: a view lists a ref only if
// its commit exists.)
func (g *Git) refsFingerprint() (string, bool) {
	gitDir, ok := g.plainGitDir()
	if !ok {
		return "", false
	}
	var b strings.Builder
	add := func(rel string, fi fs.FileInfo) bool {
		id, ok := fileIdentity(fi)
		if !ok || fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
		fmt.Fprintf(&b, "%q %s %d %o %d\n", rel, id, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return true
	}
	switch fi, err := os.Lstat(filepath.Join(gitDir, "packed-refs")); {
	case errors.Is(err, fs.ErrNotExist):
		b.WriteString("packed-refs absent\n")
	case err != nil || !add("packed-refs", fi):
		return "", false
	}
	for _, top := range []string{"refs/heads", "refs/remotes/" + g.remote, strings.TrimSuffix(ClosedRefPrefix, "/")} {
		root := filepath.Join(gitDir, filepath.FromSlash(top))
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(&b, "%q absent\n", top)
			continue
		}
		failed := false
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(gitDir, p)
			if err != nil || !add(filepath.ToSlash(rel), fi) {
				failed = true
				return filepath.SkipAll
			}
			return nil
		})
		if err != nil || failed {
			return "", false
		}
	}
	return b.String(), true
}

// validHeadFile reports whether a HEAD file is one git accepts when it
// looks for a repository (validate_headref): "ref: refs/…" or a commit id.
// A symbolic link, which git also accepts, is left to git.
func validHeadFile(path string) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	// As validate_headref reads it: "ref:" at the very start, then blanks.
	head := string(buf[:n])
	if target, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(target, " \t\n\r"), "refs/")
	}
	return gitrepo.ValidSHA(strings.TrimRight(head, " \t\n\r"))
}

func (g *Git) underPrefix(branch string) bool {
	for _, p := range g.prefixes {
		if strings.HasPrefix(branch, p) {
			return true
		}
	}
	return false
}

// gitPR is a classified branch and where its commits are.
type gitPR struct {
	PR
	tip string // "" for a deleted branch known only from its squash commit
}

// branchMention is compiled on first use: most processes never read a
// commit message, and every process would pay for it at start.
var branchMention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(branch ([^\s()]+)\)`) })

// classify reads every PR branch and decides its state. What the history
// told before (the memo, or the cursor of the previous process) is reused:
// only the commits the default branch gained are read, and only the
// branches those commits, or a new tip, can have changed are read again.
func (g *Git) classify(ctx context.Context, v *gitView) ([]gitPR, error) {
	if len(g.prefixes) == 0 {
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m, d, err := g.refresh(ctx, v)
	if err != nil {
		return nil, err
	}
	squashed, squashedTips := m.byName, m.byTip
	names := map[string]bool{}
	for _, refs := range []map[string]string{v.local, v.remote, v.closed} {
		for n := range refs {
			if n != v.defName && g.underPrefix(n) {
				names[n] = true
			}
		}
	}
	for n := range squashed {
		if n != v.defName && g.underPrefix(n) {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)

	var prs []gitPR
	branches := map[string]branchMemo{}
	for _, name := range sorted {
		tip := v.local[name]
		if tip == "" {
			tip = v.remote[name]
		}
		if tip == "" {
			tip = v.closed[name]
		}
		p := gitPR{PR: PR{Number: BranchNumber(name), HeadRef: name, State: StateOpen}, tip: tip}
		if tip == "" {
			// Deleted after its squash merge: only the squash commit is
			// left, and it does not say when the branch was started.
			sq := squashed[name]
			p.State, p.Merged, p.Closed, p.MergeSHA = StateMerged, sq.at, sq.at, sq.sha
			p.Title = strings.TrimSpace(strings.TrimSuffix(sq.subject, "(branch "+name+")"))
			prs = append(prs, p)
			continue
		}
		bm, known := m.branches[name]
		if !known || !bm.reusable(tip, d) {
			bm = branchMemo{tip: tip, via: -1}
			own, err := g.describe(ctx, v, &p)
			if err != nil {
				return nil, err
			}
			bm.title, bm.created = p.Title, p.Created
			bm.own, bm.ownOK = own, len(own) <= maxOwnCached
			if !bm.ownOK {
				bm.own = nil
			}
			via, err := g.mergedInto(ctx, v, &p)
			if err != nil {
				return nil, err
			}
			if via >= 0 {
				bm.via, bm.mergeSHA, bm.mergedAt = via, p.MergeSHA, p.Merged
			}
			if known {
				// The closing marker's time depends on its commit alone.
				bm.closedSHA, bm.closedAt = m.branches[name].closedSHA, m.branches[name].closedAt
			}
		} else {
			p.Title, p.Created = bm.title, bm.created
			if bm.via >= 0 {
				p.State, p.Merged, p.Closed, p.MergeSHA = StateMerged, bm.mergedAt, bm.mergedAt, bm.mergeSHA
			}
		}
		merged := bm.via >= 0
		sq, ok := squashed[name]
		if !ok {
			// A squash commit that could not name this branch (its name
			// holds a secret or a control) names the tip it merged. Only the very tip:
			// a branch built on top of it has unmerged work.
			sq, ok = squashedTips[p.tip]
		}
		closedSHA := v.closed[name]
		switch {
		case merged:
		case ok:
			p.State, p.Merged, p.Closed, p.MergeSHA = StateMerged, sq.at, sq.at, sq.sha
		case closedSHA != "":
			p.State = StateClosed
			if bm.closedSHA != closedSHA {
				at, err := g.commitTime(ctx, closedSHA)
				if err != nil {
					return nil, err
				}
				bm.closedSHA, bm.closedAt = closedSHA, at
			}
			p.Closed = bm.closedAt
		}
		branches[name] = bm
		prs = append(prs, p)
	}
	if !sameBranches(m.branches, branches) {
		g.dirty = true
	}
	m.branches = branches
	return prs, nil
}

func sameBranches(a, b map[string]branchMemo) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.tip != y.tip || x.via != y.via || x.mergeSHA != y.mergeSHA || !x.mergedAt.Equal(y.mergedAt) ||
			x.title != y.title || !x.created.Equal(y.created) || x.ownOK != y.ownOK || !slices.Equal(x.own, y.own) ||
			x.closedSHA != y.closedSHA || !x.closedAt.Equal(y.closedAt) {
			return false
		}
	}
	return true
}

// describe sets the title (the tip's subject) and the creation time (the
// author date of the oldest commit on the branch that is not on the
// default branch; the tip's, when there is none), and returns those
// commits, on which the description depends.
func (g *Git) describe(ctx context.Context, v *gitView, p *gitPR) ([]string, error) {
	const format = "--format=%H%x1f%at%x1f%ct%x1f%s%x1e"
	out, err := g.run(ctx, "log", format, "--end-of-options", v.primary+".."+p.tip, "--")
	if err != nil {
		return nil, err
	}
	commits := parseRecords(out, 4)
	own := make([]string, 0, len(commits))
	for _, c := range commits {
		own = append(own, c[0])
	}
	if len(commits) == 0 {
		if out, err = g.run(ctx, "log", "-1", format, "--end-of-options", p.tip, "--"); err != nil {
			return nil, err
		}
		if commits = parseRecords(out, 4); len(commits) == 0 {
			return nil, fmt.Errorf("git forge: cannot read commit %s of %s", p.tip, p.HeadRef)
		}
	}
	p.Title = commits[0][3]
	p.Created = unixTime(commits[len(commits)-1][1])
	return own, nil
}

// mergedInto reports the index of the first default ref the tip is
// reachable from (-1 for none) and, if there is one, sets when and by
// which commit it got there: the merge commit that has the tip as a second
// parent, or, for a fast-forward, the tip itself (its committer date then
// approximates the merge time).
func (g *Git) mergedInto(ctx context.Context, v *gitView, p *gitPR) (int, error) {
	for i, d := range v.defaults {
		_, err := g.run(ctx, "merge-base", "--is-ancestor", "--end-of-options", p.tip, d)
		if exitCode(err) == 1 {
			continue
		}
		if err != nil {
			return -1, err
		}
		out, err := g.run(ctx, "rev-list", "--ancestry-path", "--parents", "--end-of-options", p.tip+".."+d, "--")
		if err != nil {
			return -1, err
		}
		mergeSHA := p.tip
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			// Listed newest first, so the last match is the first merge.
			if len(f) > 2 && containsString(f[2:], p.tip) {
				mergeSHA = f[0]
			}
		}
		at, err := g.commitTime(ctx, mergeSHA)
		if err != nil {
			return -1, err
		}
		p.State, p.Merged, p.Closed, p.MergeSHA = StateMerged, at, at, mergeSHA
		return i, nil
	}
	return -1, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (g *Git) commitTime(ctx context.Context, rev string) (time.Time, error) {
	out, err := g.run(ctx, "log", "-1", "--format=%ct", "--end-of-options", rev, "--")
	if err != nil {
		return time.Time{}, err
	}
	return unixTime(strings.TrimSpace(out)), nil
}

// parseRecords splits \x1e-terminated records of n \x1f-separated fields.
func parseRecords(out string, n int) [][]string {
	var recs [][]string
	for _, rec := range strings.Split(out, "\x1e") {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x1f", n)
		if len(f) == n {
			recs = append(recs, f)
		}
	}
	return recs
}

func unixTime(s string) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// Status lists the PR branches: open ones newest first, the 5 most
// recently merged and closed ones. A plain-git project has no issues.
func (g *Git) Status(ctx context.Context) (Status, error) {
	v, err := g.view(ctx)
	if err != nil {
		return Status{}, err
	}
	return g.statusOf(ctx, v)
}

func (g *Git) statusOf(ctx context.Context, v *gitView) (Status, error) {
	prs, err := g.classify(ctx, v)
	if err != nil {
		return Status{}, err
	}
	st := Status{Open: []PR{}, Merged: []PR{}, Closed: []PR{}, Issues: []Issue{}}
	for _, p := range prs {
		switch p.State {
		case StateOpen:
			st.Open = append(st.Open, p.PR)
		case StateMerged:
			st.Merged = append(st.Merged, p.PR)
		case StateClosed:
			st.Closed = append(st.Closed, p.PR)
		}
	}
	sort.SliceStable(st.Open, func(i, j int) bool { return st.Open[i].Created.After(st.Open[j].Created) })
	st.Merged = newest(st.Merged, func(p PR) time.Time { return p.Merged })
	st.Closed = newest(st.Closed, func(p PR) time.Time { return p.Closed })
	return st, nil
}

// OpenPRs lists the open PR branches, newest first, as Status does. What
// the history told an earlier call in this process is reused: only new
// tips and new commits on the default branch are read. When not one file
// of the ref storage changed since the last reading of the refs (a skill
// that pushed no branch), that reading is reused too, and no git process
// starts at all (refsFingerprint).
func (g *Git) OpenPRs(ctx context.Context) ([]PR, error) {
	v := g.unchangedView()
	if v == nil {
		var err error
		if v, err = g.view(ctx); err != nil {
			return nil, err
		}
	}
	st, err := g.statusOf(ctx, v)
	if err != nil {
		return nil, err
	}
	return st.Open, nil
}

// unchangedView returns the last view read when the ref storage is
// exactly as it was then, nil otherwise.
func (g *Git) unchangedView() *gitView {
	g.mu.Lock()
	last := g.lastView
	g.mu.Unlock()
	if last == nil {
		return nil
	}
	if fp, ok := g.refsFingerprint(); ok && fp == last.fingerprint {
		return last.view
	}
	return nil
}

// find classifies the branches and returns the one with this number.
func (g *Git) find(ctx context.Context, number int) (*gitView, gitPR, error) {
	v, err := g.view(ctx)
	if err != nil {
		return nil, gitPR{}, err
	}
	prs, err := g.classify(ctx, v)
	if err != nil {
		return nil, gitPR{}, err
	}
	for _, p := range prs {
		if p.Number == number {
			return v, p, nil
		}
	}
	return nil, gitPR{}, fmt.Errorf("git forge: PR #%d: %w", number, ErrNotFound)
}

// Facts reads a branch's change against the default branch from
// `git diff --numstat <default>...<branch>`: the change since the branch
// left the default branch, as a pull request shows it. Renames are listed
// as a deletion and an addition, so both paths meet the protected-path
// check; a binary file is changed with 0 lines. A merged branch is
// compared with the default branch as it was before its merge commit or
// squash commit; one merged by fast-forward has no such commit and shows
// no change.
func (g *Git) Facts(ctx context.Context, number int) (Facts, error) {
	v, p, err := g.find(ctx, number)
	if err != nil {
		return Facts{}, err
	}
	args := []string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--end-of-options"}
	switch {
	case p.tip != "" && p.State == StateMerged && p.MergeSHA != p.tip:
		// Against the default branch as it was before the merge, which
		// now contains the branch.
		args = append(args, p.MergeSHA+"^1..."+p.tip)
	case p.tip != "":
		args = append(args, v.primary+"..."+p.tip)
	default:
		args = append(args, p.MergeSHA+"^", p.MergeSHA)
	}
	out, err := g.run(ctx, append(args, "--")...)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{Number: p.Number, State: p.State, HeadRef: p.HeadRef, HeadSHA: p.tip, Files: []string{}}
	for _, rec := range strings.Split(out, "\x00") {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		add, _ := strconv.Atoi(parts[0]) // "-" for a binary file
		del, _ := strconv.Atoi(parts[1])
		f.Additions += add
		f.Deletions += del
		f.Files = append(f.Files, parts[2])
	}
	f.ChangedFiles = len(f.Files)
	return f, nil
}

// MergeSquash squash-merges an open branch into the default branch of the
// working tree, as one commit with one parent:
//
//	<branch tip subject> (branch <name>)
//
//	Ooda-Branch: <name>
//
// The subject is made one line without control characters, and known
// secrets are masked in it and in the name. A name that had to be altered
// so is no name of any branch, so the commit then also carries
// "Ooda-Head: <tip>", by which the branch is recognised instead.
//
// The working tree must be on the local default branch with nothing staged
// (modified and untracked files are left alone; git refuses the merge if it
// would overwrite one). A failed merge is undone. The commit is local:
// publishing it is the caller's decision.
func (g *Git) MergeSquash(ctx context.Context, number int, headSHA string) error {
	v, p, err := g.find(ctx, number)
	if err != nil {
		return err
	}
	if headSHA != "" && !gitrepo.ValidSHA(headSHA) {
		return fmt.Errorf("git forge: PR #%d: head %q is not a commit SHA", number, headSHA)
	}
	if headSHA != "" && p.tip != headSHA {
		return fmt.Errorf("git forge: PR #%d (%s) is at %s, not %s: %w", number, p.HeadRef, p.tip, headSHA, ErrHeadMoved)
	}
	if p.State != StateOpen {
		return fmt.Errorf("git forge: PR #%d (%s) is %s, not open", number, p.HeadRef, p.State)
	}
	head, err := g.run(ctx, "symbolic-ref", "--quiet", "HEAD")
	if err != nil || strings.TrimSpace(head) != "refs/heads/"+v.defName {
		return fmt.Errorf("git forge: %s is not on the default branch %q; not merging PR #%d", g.dir, v.defName, number)
	}
	// Only the index must be clean: the squash commit is made from it. A
	// modified working file (the engine's own state files change during a
	// cycle) is left alone, and git refuses the merge itself if the branch
	// would overwrite one.
	if _, err := g.run(ctx, "diff", "--cached", "--quiet"); err != nil {
		if exitCode(err) == 1 {
			return fmt.Errorf("git forge: %s has staged changes; not merging PR #%d", g.dir, number)
		}
		return err
	}
	// merge.ff=only in a user's config would make git refuse --squash.
	if _, err := g.run(ctx, "-c", "merge.ff=true", "merge", "--squash", "--no-stat", "--end-of-options", p.tip); err != nil {
		return g.undoMerge(ctx, fmt.Errorf("git forge: squash-merging PR #%d (%s): %w", number, p.HeadRef, err))
	}
	_, err = g.run(ctx, "diff", "--cached", "--quiet")
	switch {
	case err == nil:
		return g.undoMerge(ctx, fmt.Errorf("git forge: PR #%d (%s) changes nothing on %s", number, p.HeadRef, v.defName))
	case exitCode(err) != 1:
		return g.undoMerge(ctx, err)
	}
	// The subject and the branch name are the skill's text: the commit is
	// ooda's, may be pushed, and is shown by `git log` on terminals, so it
	// gets no secret and no control character from them (docs/forge.md).
	branch, exact := messageBranch(p.HeadRef)
	title := commitLine(p.Title)
	if title == "" {
		title = branch
	}
	trailers := BranchTrailer + ": " + branch
	if !exact {
		// The masked name finds no branch again; the merged tip does.
		trailers += "\n" + HeadTrailer + ": " + p.tip
	}
	// --cleanup=whitespace keeps a subject that starts with '#', which the
	// default cleanup would drop as a comment.
	if _, err := g.run(ctx, "commit", "--cleanup=whitespace",
		"-m", title+" (branch "+branch+")", "-m", trailers); err != nil {
		return g.undoMerge(ctx, fmt.Errorf("git forge: committing the squash of PR #%d: %w", number, err))
	}
	return nil
}

// undoMerge returns the clean tree MergeSquash started from.
func (g *Git) undoMerge(ctx context.Context, cause error) error {
	// A cancelled ctx must not leave the tree half-merged.
	if _, err := g.run(context.WithoutCancel(ctx), "reset", "--merge"); err != nil {
		return fmt.Errorf("%w (and undoing it failed: %v)", cause, err)
	}
	return cause
}

// Reverted reports whether a commit on the default branch since the merge
// is a revert (subject `Revert "…`) that names the branch, the merge
// commit (by a 7+ digit prefix, as "This reverts commit …" does) or quotes
// the merge commit's subject. A PR lacking its branch, merge time or merge
// commit is looked up by number first.
func (g *Git) Reverted(ctx context.Context, pr PR) (bool, error) {
	var v *gitView
	// The caller's PR may come from anywhere: only a valid branch name and
	// commit id are used as given, else the PR is looked up by number.
	if !gitrepo.ValidBranchName(pr.HeadRef) || pr.Merged.IsZero() || !gitrepo.ValidSHA(pr.MergeSHA) {
		var p gitPR
		var err error
		if v, p, err = g.find(ctx, pr.Number); err != nil {
			return false, err
		}
		if p.State != StateMerged {
			return false, nil
		}
		pr = p.PR
	} else {
		var err error
		if v, err = g.view(ctx); err != nil {
			return false, err
		}
	}
	subject := ""
	if out, err := g.run(ctx, "log", "-1", "--format=%s", "--end-of-options", pr.MergeSHA, "--"); err == nil {
		subject = strings.TrimSpace(out)
	}
	args := []string{"log", "--fixed-strings", "--grep=Revert", "--since=@" + strconv.FormatInt(pr.Merged.Unix(), 10),
		"--format=%H%x1f%B%x1e", "--end-of-options"}
	args = append(args, v.defaults...)
	out, err := g.run(ctx, append(args, "--")...)
	if err != nil {
		return false, err
	}
	for _, rec := range parseRecords(out, 2) {
		msg := rec[1]
		if !strings.HasPrefix(msg, `Revert "`) {
			continue
		}
		if mentionsBranch(msg, pr.HeadRef) || mentionsSHA(msg, pr.MergeSHA) ||
			subject != "" && strings.HasPrefix(msg, `Revert "`+subject+`"`) {
			return true, nil
		}
	}
	return false, nil
}

// mentionsBranch finds the branch name as a whole word, so auto/x is not
// found in auto/x-2. A '.' ends the name when punctuation follows, since a
// ref name cannot end with one.
func mentionsBranch(msg, name string) bool {
	if name == "" {
		return false
	}
	inName := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./", c) >= 0
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		before := start == 0 || !inName(msg[start-1])
		after := end == len(msg) || !inName(msg[end]) ||
			msg[end] == '.' && (end+1 == len(msg) || !inName(msg[end+1]))
		if before && after {
			return true
		}
		i = start + 1
	}
}

// gitError is a git command that failed; it quotes git's own complaint.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	s := "git " + strings.Join(e.args, " ") + ": " + e.err.Error()
	if e.stderr != "" {
		s += ": " + e.stderr
	}
	return s
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of a failed git command, 0 for nil and -1
// when git did not run to completion.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// run runs git in the repository and returns its standard output.
func (g *Git) run(ctx context.Context, args ...string) (string, error) {
	// log.showSignature would mix gpg output into parsed log output.
	argv := append([]string{g.bin, "-c", "log.showSignature=false", "-C", g.dir}, args...)
	stdout := &gitrepo.CappedBuffer{Max: g.maxOutput}
	stderr := &gitrepo.CappedBuffer{Max: maxStderr}
	// Through the one process seam: its own group, stopped with ctx.
	res := g.runner.Run(ctx, proc.Spec{Argv: argv, Dir: g.dir, Env: gitEnv(), Output: stdout, Stderr: stderr,
		OutputWait: 5 * time.Second, KillGrace: 2 * time.Second, Light: true})
	if stdout.Exceeded() && ctx.Err() == nil {
		return "", &gitError{args: args, code: -1, err: fmt.Errorf("%w (safety.max_read_mib)", stdout.Err())}
	}
	if res.OK() {
		return stdout.String(), nil
	}
	var err error
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case res.StartErr != nil:
		err = res.StartErr
	default:
		err = fmt.Errorf("exit status %d", res.ExitCode)
	}
	code := res.ExitCode
	if ctx.Err() != nil || res.StartErr != nil {
		code = -1
	}
	return stdout.String(), &gitError{args: args, code: code, stderr: clip(stderr.String()), err: err}
}

// gitEnv is the caller's environment without ooda's credentials and
// without the variables that would point git at another repository than
// Dir (as set inside a git hook), with prompts off (a cycle has no one to
// answer them) and without the optional index lock, so a status does not
// get in a user's way. The provider never talks to a remote, and what git
// starts on its own (hooks, core.fsmonitor, a merge driver) comes from a
// repository that skills and merged pull requests can write, so nothing it
// runs needs or gets the credentials (docs/forge.md).
func gitEnv() []string {
	var env []string
	for _, kv := range secret.ChildEnv(os.Environ(), nil, false) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_NAMESPACE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}
