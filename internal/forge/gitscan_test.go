package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func noteText(notes []CursorNote) string {
	var s []string
	for _, n := range notes {
		s = append(s, n.Text)
	}
	return strings.Join(s, "\n")
}

// fileCursor is a CursorStore on a plain file, as the state package keeps
// it, so that a new *Git stands for a new process.
type fileCursor struct{ path string }

func (f fileCursor) Name() string { return filepath.Base(f.path) }

func (f fileCursor) Load() ([]byte, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (f fileCursor) Save(b []byte) error { return os.WriteFile(f.path, b, 0o644) }

// everything is the whole classification: every PR branch, not only the
// five newest merged and closed ones Status keeps.
func everything(t *testing.T, g *Git) ([]gitPR, Status) {
	t.Helper()
	ctx := context.Background()
	st, err := g.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := g.view(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prs, err := g.classify(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	return prs, st
}

// sameAsFullScan checks that a provider reading from its cursor (or its
// memory) classifies every branch exactly as one that reads the whole
// history.
func sameAsFullScan(t *testing.T, step string, r repo, g *Git) {
	t.Helper()
	wantPRs, wantSt := everything(t, newGit(t, r.dir, "auto/"))
	gotPRs, gotSt := everything(t, g)
	if !reflect.DeepEqual(gotPRs, wantPRs) {
		t.Fatalf("%s: classification differs from a full scan\n got %+v\nwant %+v", step, gotPRs, wantPRs)
	}
	if !reflect.DeepEqual(gotSt, wantSt) {
		t.Fatalf("%s: Status differs from a full scan\n got %+v\nwant %+v", step, gotSt, wantSt)
	}
}

// squashCommitAt makes a squash merge as MergeSquash does, at a fixed time.
func (r repo) squashCommitAt(when time.Time, branch, subject, trailers string) string {
	r.t.Helper()
	r.gitAt(when, "merge", "-q", "--squash", branch)
	r.gitAt(when, "commit", "-q", "--allow-empty", "-m", subject, "-m", trailers)
	return r.git("rev-parse", "HEAD")
}

// The cursor must never change what a cycle sees: after every kind of
// change a history goes through — squash merges, fast-forward and merge
// commit merges, a revert and a second merge, deleted and closed
// branches, a merge by the tip alone (Ooda-Head), part of a branch merged,
// a force-pushed default branch and a remote-tracking default appearing —
// a provider that reads only what changed (kept in memory, or reloaded
// from its cursor as a new process does) classifies every branch exactly
// as one that reads the whole history.
func TestGitCursorEqualsFullScan(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	cursor := fileCursor{filepath.Join(t.TempDir(), "forge_cursor.json")}
	long := newGit(t, r.dir, "auto/")
	long.UseCursorStore(cursor)
	n := 0
	check := func(step string) {
		t.Helper()
		// A process of its own, starting from the cursor on disk.
		fresh := newGit(t, r.dir, "auto/")
		fresh.UseCursorStore(cursor)
		sameAsFullScan(t, step+" (new process)", r, fresh)
		if err := fresh.SaveCursor(); err != nil {
			t.Fatal(err)
		}
		if notes := noteText(fresh.TakeNotes()); notes != "" && !strings.Contains(step, "force") && !strings.Contains(step, "remote") {
			t.Errorf("%s: unexpected notes %q", step, notes)
		}
		// One process living through every step.
		sameAsFullScan(t, step+" (same process)", r, long)
		n++
	}
	tick := 0
	next := func() time.Time { tick++; return at(tick) }

	r.commit(next(), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/one")
	r.commit(next(), "one: first", "one.txt", "1\n")
	oneTip := r.commit(next(), "one: second", "one.txt", "1\n2\n")
	r.git("checkout", "-q", "main")
	r.git("checkout", "-q", "-b", "auto/two")
	r.commit(next(), "two: change", "two.txt", "x\n")
	r.git("checkout", "-q", "main")
	check("open branches")

	firstSquash := r.squashCommitAt(next(), "auto/one", "one: second (branch auto/one)", "Ooda-Branch: auto/one")
	check("squash merge")

	r.git("checkout", "-q", "-b", "auto/ff")
	r.commit(next(), "ff: change", "ff.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--ff-only", "auto/ff")
	r.git("checkout", "-q", "-b", "auto/mc")
	r.commit(next(), "mc: change", "mc.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.commit(next(), "main moves on", "main.txt", "1\n")
	r.gitAt(next(), "merge", "-q", "--no-ff", "-m", "Merge branch 'auto/mc'", "auto/mc")
	check("fast-forward and merge commit")

	r.gitAt(next(), "revert", "--no-edit", firstSquash)
	check("revert of the squash merge")

	r.git("checkout", "-q", "auto/one")
	r.commit(next(), "one: third", "one.txt", "1\n2\n3\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(next(), "auto/one", "one: third (branch auto/one)", "Ooda-Branch: auto/one")
	check("merged again")
	beforeForcePush := r.git("rev-parse", "HEAD")

	r.git("branch", "-q", "-D", "auto/one")
	r.git("update-ref", ClosedRefPrefix+"auto/two", r.git("rev-parse", "auto/two"))
	check("deleted and closed")

	r.git("checkout", "-q", "auto/two")
	r.commit(next(), "two: more", "two.txt", "y\n")
	r.git("checkout", "-q", "main")
	check("closed branch moved on")

	// A name that had to be masked: only the tip names the branch.
	r.git("checkout", "-q", "-b", "auto/tip")
	tipTip := r.commit(next(), "tip: change", "tip.txt", "x\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(next(), "auto/tip", "tip: change (branch auto/t***)", "Ooda-Branch: auto/t***\n"+HeadTrailer+": "+tipTip)
	check("merged by tip")

	// Part of a branch merged: the branch's own commits, and so its
	// creation time, change without its tip moving.
	r.git("checkout", "-q", "-b", "auto/part")
	partBase := r.commit(next(), "part: base", "part.txt", "1\n")
	r.commit(next(), "part: rest", "part.txt", "1\n2\n")
	r.git("checkout", "-q", "main")
	check("part branch")
	r.gitAt(next(), "merge", "-q", "--no-ff", "-m", "Merge part of auto/part", partBase)
	check("part of a branch merged")

	for i := 0; i < 5; i++ {
		r.commit(next(), fmt.Sprintf("plain %d", i), "plain.txt", fmt.Sprint(i))
	}
	check("plain commits")

	// A force push: the default branch loses the commits since the
	// second merge of auto/one, among them what the cursor recorded.
	r.git("reset", "-q", "--hard", beforeForcePush)
	r.commit(next(), "rewritten", "rw.txt", "x\n")
	check("force-pushed default branch")

	r.git("update-ref", "refs/remotes/origin/main", r.git("rev-parse", "HEAD~1"))
	check("remote-tracking default appears")
	r.commit(next(), "after remote", "ar.txt", "x\n")
	r.git("update-ref", "refs/remotes/origin/main", r.git("rev-parse", "HEAD"))
	check("both defaults move")

	if n != 14 || oneTip == "" {
		t.Fatalf("ran %d steps", n)
	}
}

// A cursor is written by ooda but lives where skills and merged PRs can
// write too. Whatever it holds, it is used only when every part of it is
// well formed and describes this repository's history; otherwise the
// provider says so and reads the history again, and the result is the
// same as a full scan's.
func TestGitCursorHostile(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/one")
	r.commit(at(1), "one", "one.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(at(2), "auto/one", "one (branch auto/one)", "Ooda-Branch: auto/one")
	r.commit(at(3), "after", "a.txt", "1\n")

	good := filepath.Join(t.TempDir(), "good.json")
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(fileCursor{good})
	if _, err := g.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.SaveCursor(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	otherRepo := strings.Repeat("ab", 20)
	cases := []struct{ name, content, note string }{
		{"not JSON", "{", "unexpected EOF"},
		{"two values", string(raw) + "{}", "more than one JSON value"},
		{"wrong type", edit(func(m map[string]any) { m["default_tips"] = "main" }), "default_tips"},
		{"unknown key", edit(func(m map[string]any) { m["extra"] = 1 }), "unknown field"},
		{"other version", edit(func(m map[string]any) { m["version"] = 2 }), "version"},
		{"tip not a SHA", edit(func(m map[string]any) {
			m["default_tips"] = []any{map[string]any{"ref": "refs/heads/main", "sha": "HEAD~1"}}
		}), "default_tips[0].sha"},
		{"tip an option", edit(func(m map[string]any) {
			m["default_tips"] = []any{map[string]any{"ref": "--output=/tmp/x", "sha": otherRepo}}
		}), "default_tips[0].ref"},
		{"branch not a branch name", edit(func(m map[string]any) {
			m["squash_by_branch"] = map[string]any{"auto/x..y": map[string]any{"sha": otherRepo, "at": 1, "subject": "s"}}
		}), "is not a branch name"},
		{"squash SHA not a SHA", edit(func(m map[string]any) {
			m["squash_by_branch"] = map[string]any{"auto/x": map[string]any{"sha": "-x", "at": 1, "subject": "s"}}
		}), `squash_by_branch["auto/x"].sha`},
		{"floor too wide", edit(func(m map[string]any) {
			var f []any
			for i := 0; i <= maxFloor; i++ {
				f = append(f, otherRepo)
			}
			m["unread_below"] = f
		}), "unread_below"},
		{"via out of range", edit(func(m map[string]any) {
			m["branches"] = map[string]any{"auto/x": map[string]any{"tip": otherRepo, "via": 5, "merge_sha": "", "merged_at": 0,
				"title": "", "created": 0, "own": []any{}, "own_complete": true, "closed_sha": "", "closed_at": 0}}
		}), `branches["auto/x"].via`},
		{"another repository", edit(func(m map[string]any) {
			m["default_tips"] = []any{map[string]any{"ref": "refs/heads/main", "sha": otherRepo}}
		}), "no longer in its history"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "forge_cursor.json")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			g := newGit(t, r.dir, "auto/")
			g.UseCursorStore(fileCursor{path})
			sameAsFullScan(t, c.name, r, g)
			notes := noteText(g.TakeNotes())
			if !strings.Contains(notes, c.note) || !strings.Contains(notes, "forge_cursor.json") {
				t.Errorf("notes = %q, want the file and %q", notes, c.note)
			}
			// The next save replaces it with a good one.
			if err := g.SaveCursor(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) == c.content {
				t.Error("the unusable cursor was kept")
			}
		})
	}
}

// A lying cursor that claims a recorded tip is not an ancestor of the
// default branch any more is what a force push looks like: the default
// branch is read again, and a merge made after the cursor is still
// found.
func TestGitCursorForcePushKeepsMerges(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	old := r.commit(at(1), "old", "o.txt", "1\n")
	path := filepath.Join(t.TempDir(), "forge_cursor.json")
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(fileCursor{path})
	if _, err := g.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.SaveCursor(); err != nil {
		t.Fatal(err)
	}
	r.git("reset", "-q", "--hard", "HEAD~1")
	r.git("checkout", "-q", "-b", "auto/new")
	r.commit(at(2), "new", "n.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(at(3), "auto/new", "new (branch auto/new)", "Ooda-Branch: auto/new")
	r.git("branch", "-q", "-D", "auto/new")
	fresh := newGit(t, r.dir, "auto/")
	fresh.UseCursorStore(fileCursor{path})
	sameAsFullScan(t, "after the force push", r, fresh)
	if notes := noteText(fresh.TakeNotes()); !strings.Contains(notes, "no longer in its history") {
		t.Errorf("notes = %q", notes)
	}
	st, err := fresh.Status(context.Background())
	if err != nil || len(st.Merged) != 1 || st.Merged[0].HeadRef != "auto/new" || old == "" {
		t.Fatalf("merged = %+v, %v", st.Merged, err)
	}
}

// What the history told before is not read again: with a cursor, a new
// process reads only the commits made since. A history whose oldest
// commit can no longer be read proves it — a whole scan fails on it.
func TestGitCursorReadsOnlyNewCommits(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	root := r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/one")
	r.commit(at(1), "one", "one.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(at(2), "auto/one", "one (branch auto/one)", "Ooda-Branch: auto/one")
	r.git("branch", "-q", "-D", "auto/one")
	for i := 0; i < 3; i++ {
		r.commit(at(3+i), fmt.Sprintf("c%d", i), "c.txt", fmt.Sprint(i))
	}
	path := filepath.Join(t.TempDir(), "forge_cursor.json")
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(fileCursor{path})
	want, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SaveCursor(); err != nil {
		t.Fatal(err)
	}
	r.commit(at(10), "new", "n.txt", "1\n")
	// Lose the root commit's object.
	obj := filepath.Join(r.dir, ".git", "objects", root[:2], root[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if _, err := newGit(t, r.dir, "auto/").Status(context.Background()); err == nil {
		t.Fatal("a whole scan read a history with a missing commit: the test proves nothing")
	}
	fresh := newGit(t, r.dir, "auto/")
	fresh.UseCursorStore(fileCursor{path})
	got, err := fresh.Status(context.Background())
	if err != nil {
		t.Fatalf("with the cursor, the old history was read: %v", err)
	}
	if !reflect.DeepEqual(got, want) || len(got.Merged) != 1 {
		t.Errorf("status = %+v, want %+v", got, want)
	}
}

// Without a usable cursor a long history is read in bounded parts: the
// newest commits first, then one more part each cycle, until every squash
// merge is known and the result is a full scan's.
func TestGitCursorBoundedFallbackCompletes(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/old")
	r.commit(at(1), "old", "old.txt", "1\n")
	r.git("checkout", "-q", "main")
	r.squashCommitAt(at(2), "auto/old", "old (branch auto/old)", "Ooda-Branch: auto/old")
	// A side line merged later, so the unread part has two ends.
	r.git("checkout", "-q", "-b", "side", "HEAD~1")
	for i := 0; i < 4; i++ {
		r.commit(at(3+i), fmt.Sprintf("side %d", i), "side.txt", fmt.Sprint(i))
	}
	r.git("checkout", "-q", "main")
	for i := 0; i < 6; i++ {
		r.commit(at(10+i), fmt.Sprintf("main %d", i), "m.txt", fmt.Sprint(i))
	}
	r.gitAt(at(20), "merge", "-q", "--no-ff", "-m", "merge side", "side")
	path := filepath.Join(t.TempDir(), "forge_cursor.json")
	cycle := func() (*Git, Status) {
		g := newGit(t, r.dir, "auto/")
		g.fallback = 3
		g.UseCursorStore(fileCursor{path})
		st, err := g.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := g.SaveCursor(); err != nil {
			t.Fatal(err)
		}
		return g, st
	}
	g, st := cycle()
	if len(st.Merged) != 0 {
		t.Fatalf("the first bounded read found %+v: the history is too short to test it", st.Merged)
	}
	if notes := noteText(g.TakeNotes()); !strings.Contains(notes, "newest 3 commits") {
		t.Errorf("notes = %q", notes)
	}
	unread := func() bool {
		b, _ := os.ReadFile(path)
		return !strings.Contains(string(b), `"unread_below":[]`)
	}
	cycles := 1
	for ; cycles < 10 && unread(); cycles++ {
		g, st = cycle()
	}
	if unread() || cycles < 3 {
		t.Fatalf("after %d cycles the history is still not read whole, or was read too fast for bounded parts", cycles)
	}
	sameAsFullScan(t, "after the backfill", r, g)
	if len(st.Merged) != 1 || st.Merged[0].HeadRef != "auto/old" {
		t.Fatalf("merged = %+v", st.Merged)
	}
}

// Between Observe and the check after the skill, nothing is read again
// when nothing changed, and a branch the skill pushed is seen.
func TestGitOpenPRsAfterTheSkill(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "main")
	r.commit(at(0), "initial", "README", "x\n")
	g := newGit(t, r.dir, "auto/")
	g.UseCursorStore(fileCursor{filepath.Join(t.TempDir(), "c.json")})
	ctx := context.Background()
	if _, err := g.Status(ctx); err != nil {
		t.Fatal(err)
	}
	r.git("checkout", "-q", "-b", "auto/new")
	r.commit(at(1), "new", "n.txt", "1\n")
	r.git("checkout", "-q", "main")
	open, err := g.OpenPRs(ctx)
	if err != nil || len(open) != 1 || open[0].HeadRef != "auto/new" {
		t.Fatalf("open = %+v, %v", open, err)
	}
}
