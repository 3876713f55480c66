package forge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// A cycle must not read the whole default branch: with a long history that
// one `git log` would be most of the cycle's time, and it would grow with
// every commit. The plain-git provider therefore keeps what it learnt from
// the history (the squash commits, and how each branch was classified) in
// a scanMemo, kept in memory for the process and between processes in the
// cursor file (CursorStore), and reads only the commits the default
// branch gained since: `git log <new tips> --not <scanned tips>`.

// scanFallbackCommits bounds the scan that stands in for a missing or
// unusable cursor, and each step of the backfill that completes it.
const scanFallbackCommits = 2000

// maxFloor bounds the commits a bounded scan leaves to read later: a
// history so branchy that more are needed is left incomplete.
const maxFloor = 256

// maxOwnCached bounds the branch commits kept per branch; a longer
// branch is described again each cycle.
const maxOwnCached = 256

// saveLag is how many scanned commits a cursor may lag behind before it
// is written although nothing it records changed: each cycle's own state
// commit then costs a write only once in that many cycles.
const saveLag = 64

// squashCommit is the newest squash merge of a branch on the default
// branch: after a revert and a new merge, the newer merge is the one that
// stands.
type squashCommit struct {
	sha, subject string
	at           time.Time
}

// branchMemo is a branch's classification as of the memo's tips; it holds
// while the branch's tip and the commits it depends on are unchanged.
type branchMemo struct {
	tip string
	// via is the index in the default refs of the first one the tip is
	// reachable from, -1 for none.
	via      int
	mergeSHA string
	mergedAt time.Time
	title    string
	created  time.Time
	// own are the branch's commits not on the primary default ref; ownOK
	// is false when there were more than maxOwnCached.
	own       []string
	ownOK     bool
	closedSHA string
	closedAt  time.Time
}

// scanMemo is what the provider knows of the default branch's history.
type scanMemo struct {
	// tips are the default refs (primary first) at the last scan.
	tips []refTip
	// byName and byTip are the squash commits found, by branch name and
	// by the merged tip of an Ooda-Head trailer.
	byName, byTip map[string]squashCommit
	// floor lists the commits a bounded scan has not read yet (with their
	// ancestors); empty when the whole history was read.
	floor []string
	// incomplete: a bounded scan stopped for good (a floor too wide), so
	// squash merges older than it are not known.
	incomplete bool
	branches   map[string]branchMemo
}

type refTip struct{ ref, sha string }

// delta is what the default refs gained since the memo's tips.
type delta struct {
	// rebuilt: no memo could be extended; every branch is read afresh.
	rebuilt bool
	// all are the new commits on any default ref, parents every parent
	// of one, primary the new commits on the primary ref.
	all, parents, primary map[string]bool
}

func newMemo() *scanMemo {
	return &scanMemo{byName: map[string]squashCommit{}, byTip: map[string]squashCommit{}, branches: map[string]branchMemo{}}
}

func (m *scanMemo) tipOf(ref string) string {
	for _, t := range m.tips {
		if t.ref == ref {
			return t.sha
		}
	}
	return ""
}

// sameRefs reports whether the memo was made for the same default refs.
func (m *scanMemo) sameRefs(v *gitView) bool {
	if len(m.tips) != len(v.defaults) {
		return false
	}
	for i, d := range v.defaults {
		if m.tips[i].ref != d {
			return false
		}
	}
	return true
}

func currentTips(v *gitView) []refTip {
	var tips []refTip
	for _, d := range v.defaults {
		tips = append(tips, refTip{d, v.tipOf(d)})
	}
	return tips
}

// tipOf is the commit of one of the view's default refs.
func (v *gitView) tipOf(ref string) string {
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return v.local[name]
	}
	return v.remote[strings.TrimPrefix(ref, "refs/remotes/"+v.remoteName+"/")]
}

// squashParse finds in one commit message the branch names and merged
// tips it records as squash-merged: the "(branch X)" suffix, the
// Ooda-Branch trailer and the Ooda-Head trailer. A revert quotes the
// subject it reverts and is none.
func squashParse(msg string) (subject string, names, tips []string) {
	subject, _, _ = strings.Cut(msg, "\n")
	if strings.HasPrefix(subject, `Revert "`) {
		return subject, nil, nil
	}
	// What `git log --fixed-strings --grep` would have kept.
	if !strings.Contains(msg, "(branch ") && !strings.Contains(msg, BranchTrailer+":") && !strings.Contains(msg, HeadTrailer+":") {
		return subject, nil, nil
	}
	for _, m := range branchMention().FindAllStringSubmatch(msg, -1) {
		names = append(names, m[1])
	}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, BranchTrailer+":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
		if tip, ok := strings.CutPrefix(line, HeadTrailer+":"); ok {
			if tip = strings.TrimSpace(tip); gitrepo.ValidSHA(tip) {
				tips = append(tips, tip)
			}
		}
	}
	// A commit message is anyone's text: a name git would not accept as a
	// branch is no branch.
	kept := names[:0]
	for _, n := range names {
		if gitrepo.ValidBranchName(n) {
			kept = append(kept, n)
		}
	}
	return subject, kept, tips
}

// batch merges one `git log` listing (newest first) into the memo's squash
// commits. Within the listing the first sighting of a name stands, as in
// one scan of the whole history; against what the memo already holds the
// later commit time wins, and on a tie newer (the listing of what the
// default branch gained) beats what was there, older (a backfill) does
// not.
type batch struct {
	m        *scanMemo
	newer    bool
	seenName map[string]bool
	seenTip  map[string]bool
	changed  bool
}

func (m *scanMemo) newBatch(newer bool) *batch {
	return &batch{m: m, newer: newer, seenName: map[string]bool{}, seenTip: map[string]bool{}}
}

func (b *batch) add(sha string, at time.Time, msg string) {
	subject, names, tips := squashParse(msg)
	if len(names) == 0 && len(tips) == 0 {
		return
	}
	c := squashCommit{sha: sha, subject: subject, at: at}
	put := func(m map[string]squashCommit, seen map[string]bool, key string) {
		if seen[key] {
			return
		}
		seen[key] = true
		old, ok := m[key]
		if ok && (old.at.After(c.at) || old.at.Equal(c.at) && !b.newer) {
			return
		}
		if !ok || old != c {
			m[key] = c
			b.changed = true
		}
	}
	for _, t := range tips {
		put(b.m.byTip, b.seenTip, t)
	}
	for _, n := range names {
		put(b.m.byName, b.seenName, n)
	}
}

// logRecord is one commit of a listing in logFormat.
type logRecord struct {
	sha     string
	parents []string
	at      time.Time
	msg     string
}

const logFormat = "--format=%H%x1f%P%x1f%ct%x1f%B%x1e"

func parseLog(out string) []logRecord {
	var recs []logRecord
	for _, f := range parseRecords(out, 4) {
		if !gitrepo.ValidSHA(f[0]) {
			continue
		}
		r := logRecord{sha: f[0], at: unixTime(f[2]), msg: f[3]}
		for _, p := range strings.Fields(f[1]) {
			if gitrepo.ValidSHA(p) {
				r.parents = append(r.parents, p)
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// refresh brings the memo up to the view's default refs, reading only what
// they gained, and returns what changed.
func (g *Git) refresh(ctx context.Context, v *gitView) (*scanMemo, delta, error) {
	m := g.mem
	fromStore := false
	if m == nil && g.store != nil && !g.loaded {
		g.loaded = true
		m = g.loadCursor()
		fromStore = m != nil
	}
	cur := currentTips(v)
	if m != nil && !m.sameRefs(v) {
		if fromStore {
			g.note("%s: recorded for %s, the default branch is now %s; read again.", g.store.Name(), refList(m.tips), strings.Join(v.defaults, ", "))
		}
		m = nil
	}
	if m != nil {
		d, ok, err := g.extend(ctx, m, cur)
		if err != nil {
			return nil, delta{}, err
		}
		if ok {
			if fromStore && len(m.floor) > 0 {
				if err := g.backfill(ctx, m); err != nil {
					return nil, delta{}, err
				}
			}
			g.mem = m
			return m, d, nil
		}
		if fromStore {
			g.note("%s: the recorded tip of the default branch is no longer in its history (a force push or a reset?); read again.", g.store.Name())
		}
	}
	m, err := g.rescan(ctx, v, cur)
	if err != nil {
		return nil, delta{}, err
	}
	g.mem = m
	return m, delta{rebuilt: true}, nil
}

// extend reads what the default refs gained since the memo's tips. ok is
// false when a recorded tip is not an ancestor of the ref's commit now.
func (g *Git) extend(ctx context.Context, m *scanMemo, cur []refTip) (delta, bool, error) {
	d := delta{all: map[string]bool{}, parents: map[string]bool{}, primary: map[string]bool{}}
	var moved []int
	for i, t := range cur {
		if m.tips[i].sha != t.sha {
			moved = append(moved, i)
		}
	}
	if len(moved) == 0 {
		return d, true, nil
	}
	if chains, ok := g.linearGain(m, cur, moved); ok {
		// The commits gained are read from git's objects, without a git
		// process: the same records `git log` would have listed.
		b := m.newBatch(true)
		n := 0
		for k, recs := range chains {
			for _, r := range recs {
				d.all[r.sha] = true
				for _, p := range r.parents {
					d.parents[p] = true
				}
				if moved[k] == 0 {
					d.primary[r.sha] = true
				}
				b.add(r.sha, r.at, r.msg)
			}
			n += len(recs)
		}
		if len(cur) == 1 {
			d.primary = d.all
		}
		m.tips = cur
		g.lag += n
		g.dirty = g.dirty || b.changed || g.lag >= saveLag
		return d, true, nil
	}
	for _, i := range moved {
		_, err := g.run(ctx, "merge-base", "--is-ancestor", "--end-of-options", m.tips[i].sha, cur[i].sha)
		switch code := exitCode(err); {
		case code == 0:
		case code == 1 || code == 128:
			// 128: the recorded commit is not in this repository.
			return d, false, nil
		default:
			return d, false, err
		}
	}
	args := []string{"log", logFormat, "--end-of-options"}
	for _, t := range cur {
		args = append(args, t.sha)
	}
	for _, t := range m.tips {
		args = append(args, "^"+t.sha)
	}
	out, err := g.run(ctx, append(args, "--")...)
	if err != nil {
		if exitCode(err) == -1 && ctx.Err() == nil {
			// More than the output limit: read a bounded part instead.
			return d, false, nil
		}
		return d, false, err
	}
	recs := parseLog(out)
	b := m.newBatch(true)
	for _, r := range recs {
		d.all[r.sha] = true
		for _, p := range r.parents {
			d.parents[p] = true
		}
		b.add(r.sha, r.at, r.msg)
	}
	switch {
	case len(cur) == 1:
		d.primary = d.all
	case m.tips[0].sha != cur[0].sha:
		out, err := g.run(ctx, "rev-list", "--end-of-options", cur[0].sha, "^"+m.tips[0].sha, "--")
		if err != nil {
			return d, false, err
		}
		for _, s := range strings.Fields(out) {
			d.primary[s] = true
		}
	}
	m.tips = cur
	g.lag += len(recs)
	g.dirty = g.dirty || b.changed || g.lag >= saveLag
	return d, true, nil
}

// rescan reads the default refs' history afresh: all of it for a caller
// without a cursor store (one command, as before there was a cursor), and
// the newest scanFallbackCommits commits otherwise, leaving the rest to
// the backfill of the next cycles.
func (g *Git) rescan(ctx context.Context, v *gitView, cur []refTip) (*scanMemo, error) {
	m := newMemo()
	m.tips = cur
	limit := g.fallbackLimit()
	if g.store == nil {
		// Only the squash commits are printed: the history may be long.
		args := []string{"log", "--fixed-strings", "--grep=(branch ", "--grep=" + BranchTrailer + ":",
			"--grep=" + HeadTrailer + ":", logFormat, "--end-of-options"}
		args = append(args, v.defaults...)
		out, err := g.run(ctx, append(args, "--")...)
		if err != nil {
			return nil, err
		}
		b := m.newBatch(false)
		for _, r := range parseLog(out) {
			b.add(r.sha, r.at, r.msg)
		}
		return m, nil
	}
	starts := make([]string, 0, len(cur))
	for _, t := range cur {
		starts = append(starts, t.sha)
	}
	if err := g.readBounded(ctx, m, starts, limit); err != nil {
		return nil, err
	}
	g.dirty, g.lag = true, 0
	if len(m.floor) > 0 {
		g.inform("git forge: read the newest %d commits of %s; older squash merges are read over the next cycles (%d commits a cycle).", limit, v.defName, limit)
	}
	return m, nil
}

// backfill reads the next bounded part of the history below the floor.
func (g *Git) backfill(ctx context.Context, m *scanMemo) error {
	if err := g.readBounded(ctx, m, m.floor, g.fallbackLimit()); err != nil {
		return err
	}
	g.dirty = true
	return nil
}

// readBounded reads at most limit commits reachable from starts (newest
// first), older than what the memo holds, and sets the floor to where the
// reading stopped: the starts and parents it did not reach. Every commit
// below is reachable from the floor, so reading from it later misses
// nothing.
func (g *Git) readBounded(ctx context.Context, m *scanMemo, starts []string, limit int) error {
	args := append([]string{"log", "--max-count=" + strconv.Itoa(limit), logFormat, "--end-of-options"}, starts...)
	out, err := g.run(ctx, append(args, "--")...)
	if err != nil {
		return err
	}
	recs := parseLog(out)
	b := m.newBatch(false)
	read := map[string]bool{}
	for _, r := range recs {
		read[r.sha] = true
		b.add(r.sha, r.at, r.msg)
	}
	m.floor = nil
	if len(recs) < limit {
		return nil
	}
	seen := map[string]bool{}
	addFloor := func(s string) {
		if !read[s] && !seen[s] {
			seen[s] = true
			m.floor = append(m.floor, s)
		}
	}
	for _, s := range starts {
		addFloor(s)
	}
	for _, r := range recs {
		for _, p := range r.parents {
			addFloor(p)
		}
	}
	if len(m.floor) > maxFloor {
		m.floor, m.incomplete = nil, true
		g.note("git forge: the history below the newest commits branches into more than %d lines; squash merges older than them are not recognised.", maxFloor)
	}
	return nil
}

func (g *Git) fallbackLimit() int {
	if g.fallback > 0 {
		return g.fallback
	}
	return scanFallbackCommits
}

// reusable reports whether a branch's memo still describes it after the
// delta: same tip, no new commit that could have merged it or taken
// one of its own commits onto the primary ref.
func (b branchMemo) reusable(tip string, d delta) bool {
	if d.rebuilt || b.tip != tip || !b.ownOK || b.via > 0 {
		return false
	}
	for _, s := range b.own {
		if d.primary[s] {
			return false
		}
	}
	if b.via < 0 {
		return !d.all[tip]
	}
	// Merged: a new merge of the same tip may be the first one listed.
	return !d.parents[tip]
}

func refList(tips []refTip) string {
	var s []string
	for _, t := range tips {
		s = append(s, t.ref)
	}
	return strings.Join(s, ", ")
}

// maxLinearWalk bounds the commits linearGain reads from the objects
// before it leaves the reading to git: a cursor is saved at least every
// saveLag commits, so this covers what a loop gains between two saves.
const maxLinearWalk = 2 * saveLag

// maxLooseCommit bounds the size of a commit object linearGain reads.
const maxLooseCommit = 1 << 20

// linearGain reads, without a git process, what each moved default ref
// gained since the memo's tip, when that is the common case of a loop that
// commits its own state: a short line of commits, each with a single
// parent and no squash-merge marker, stored loose (as commit-tree and
// `git commit` write them) or in ooda's own state-commit packs
// (gitrepo.ReadLoose), going down to the recorded
// tip. chains[k] are the commits of moved[k], newest first: exactly what
// `git log <tip> ^<recorded>` lists for it, so walking down to the
// recorded tip also proves it is an ancestor. Anything else — a merge, a
// squash merge, a packed object, a history git would rewrite (replace
// refs, grafts, a shallow clone), a longer line — returns ok false, and
// git reads it as before. Each object is checked against its name, so a
// file that is not what git stored is never believed.
func (g *Git) linearGain(m *scanMemo, cur []refTip, moved []int) (chains [][]logRecord, ok bool) {
	gitDir, plain := g.plainGitDir()
	if !plain || !plainHistory(gitDir) {
		return nil, false
	}
	objects := filepath.Join(gitDir, "objects")
	budget := maxLinearWalk
	for _, i := range moved {
		var recs []logRecord
		for sha := cur[i].sha; sha != m.tips[i].sha; {
			if budget == 0 {
				return nil, false
			}
			budget--
			r, ok := readLooseCommit(objects, sha)
			if !ok || len(r.parents) != 1 {
				return nil, false
			}
			if _, names, tips := squashParse(r.msg); len(names) > 0 || len(tips) > 0 {
				return nil, false
			}
			recs = append(recs, r)
			sha = r.parents[0]
		}
		chains = append(chains, recs)
	}
	return chains, true
}

// plainHistory reports whether git reads the history of the repository in
// gitDir as its commit objects say, with nothing that rewrites parents.
func plainHistory(gitDir string) bool {
	for _, env := range []string{"GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE"} {
		if _, set := os.LookupEnv(env); set {
			return false
		}
	}
	for _, f := range []string{"shallow", filepath.Join("info", "grafts"), filepath.Join("refs", "replace")} {
		if _, err := os.Lstat(filepath.Join(gitDir, f)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	packed, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer packed.Close()
	data, err := io.ReadAll(io.LimitReader(packed, maxLooseCommit+1))
	return err == nil && len(data) <= maxLooseCommit && !bytes.Contains(data, []byte(" refs/replace/"))
}

// readLooseCommit reads the commit sha from its loose object, or from
// ooda's own packs (gitrepo.ReadLoose): its parents
// and its message, as `git log --format=%P%x1f%B` would print them. ok is
// false for anything it cannot be sure of: no loose object, an object
// whose bytes do not hash to its name, not a commit, a header it does not
// know (a message in another encoding).
func readLooseCommit(objects, sha string) (logRecord, bool) {
	typ, body, ok := gitrepo.ReadLoose(objects, sha, maxLooseCommit)
	if !ok || typ != "commit" {
		return logRecord{}, false
	}
	head, msg, ok := strings.Cut(string(body), "\n\n")
	if !ok {
		return logRecord{}, false
	}
	r := logRecord{sha: sha, msg: msg}
	for _, line := range strings.Split(head, "\n") {
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "parent":
			if !gitrepo.ValidSHA(value) || len(value) != len(sha) {
				return logRecord{}, false
			}
			r.parents = append(r.parents, value)
		case "committer":
			// "Name <email> 1700000000 +0000": %ct is the number.
			if fields := strings.Fields(value[strings.LastIndexByte(value, '>')+1:]); len(fields) == 2 {
				r.at = unixTime(fields[0])
			}
		case "tree", "author", "gpgsig", "gpgsig-sha256", "":
			// "": a continuation line of a signature.
		default:
			return logRecord{}, false
		}
	}
	return r, true
}
