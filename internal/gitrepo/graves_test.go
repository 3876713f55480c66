package gitrepo

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// buriedGraves replaces reapGraves for the test: the buried files are
// recorded, not removed, so that the test sees them.
func buriedGraves(t *testing.T) func() []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	old := reapGraves
	reapGraves = func(graves []string) {
		mu.Lock()
		got = append(got, graves...)
		mu.Unlock()
	}
	t.Cleanup(func() { reapGraves = old })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}

func inode(t *testing.T, name string) uint64 {
	t.Helper()
	st, ok := fileSys(os.Lstat(name))
	if !ok {
		t.Fatalf("stat %s", name)
	}
	return st.ino
}

// A state commit replaces the branch's ref and the index without freeing
// the files they were on its path: each is first linked among the slots
// (freeing a file's blocks costs many times a rename on some file
// systems), the rename over it then frees nothing, and the buried files
// are removed afterwards — what git sees is the commit, sound, with the
// index and ref files it would write, and nothing under its names.
func TestNativeCommitBuriesWhatItReplaces(t *testing.T) {
	settleNow(t)
	graves := buriedGraves(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	gitDir := filepath.Join(dir, ".git")
	paths := []string{"s/state.json", "s/d/lens.json"}
	os.MkdirAll(filepath.Join(dir, "s", "d"), 0o755)
	for i := range 2 {
		p := nativePrep(t, dir, paths)
		for _, q := range paths {
			os.WriteFile(filepath.Join(dir, q), []byte(q+strconv.Itoa(i)+"\n"), 0o644)
		}
		ref, index := filepath.Join(gitDir, "refs", "heads", "main"), filepath.Join(gitDir, "index")
		refIno := inode(t, ref)
		old := map[uint64]string{refIno: "the ref", inode(t, index): "the index"}
		oldRef := git("rev-parse", "HEAD")
		c, err := p.Commit(context.Background(), "evolve: cycle #"+strconv.Itoa(i+1)+" -- d (x)", paths)
		if err != nil || c == nil || c.IndexErr != nil {
			t.Fatalf("commit %d: %+v, %v", i, c, err)
		}
		buried := map[uint64]string{}
		for _, g := range graves() {
			if dir, name := filepath.Split(g); filepath.Clean(dir) != slotsDir(gitDir) || !strings.HasPrefix(name, gravePrefix) {
				t.Errorf("buried outside the slots: %s", g)
			}
			buried[inode(t, g)] = g
		}
		for ino, what := range old {
			if _, ok := buried[ino]; !ok {
				t.Errorf("commit %d: %s's old file was not buried (buried: %v)", i, what, buried)
			}
		}
		if g, ok := buried[refIno]; ok {
			if b, err := os.ReadFile(g); err != nil || strings.TrimSpace(string(b)) != oldRef {
				t.Errorf("the buried ref holds %q (%v), not the old %s", b, err, oldRef)
			}
		}
		if got := git("rev-parse", "HEAD"); got != c.SHA {
			t.Errorf("HEAD %s, commit %s", got, c.SHA)
		}
		git("fsck", "--strict", "--no-dangling")
		if st := git("status", "--porcelain"); st != "" {
			t.Errorf("git status: %q", st)
		}
	}
	// What a process ended before removing is removed by the next
	// Prepares, a few at a time (the second one's Prepare removed the
	// first one's).
	left, _ := filepath.Glob(filepath.Join(slotsDir(gitDir), gravePrefix+"*"))
	if len(left) != 2 {
		t.Fatalf("%d buried files, want the last commit's 2: %v", len(left), left)
	}
	for range 4 {
		os.WriteFile(filepath.Join(slotsDir(gitDir), gravePrefix+randomHex(6)), []byte("x"), 0o644)
	}
	nativePrep(t, dir, paths).Release()
	if left, _ = filepath.Glob(filepath.Join(slotsDir(gitDir), gravePrefix+"*")); len(left) != 6-reapAtPrepare {
		t.Errorf("after a Prepare: %d buried files, want %d", len(left), 6-reapAtPrepare)
	}
	nativePrep(t, dir, paths).Release()
	if left, _ = filepath.Glob(filepath.Join(slotsDir(gitDir), gravePrefix+"*")); len(left) != 0 {
		t.Errorf("after two Prepares: buried files left: %v", left)
	}
}

// Folding packs moves the folded ones out of git's sight, among the
// slots, instead of removing them on the commit's path: after the fold
// git finds every object in the new pack, none of the old names, and the
// old pack files are buried, whole, until removed.
func TestFoldPacksBuriesTheFoldedPacks(t *testing.T) {
	settleNow(t)
	graves := buriedGraves(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	gitDir := filepath.Join(dir, ".git")
	paths := []string{"s/state.json"}
	os.MkdirAll(filepath.Join(dir, "s"), 0o755)
	var before map[uint64]string
	for i := range foldAt {
		p := nativePrep(t, dir, paths)
		os.WriteFile(filepath.Join(dir, paths[0]), []byte(strconv.Itoa(i)+"\n"), 0o644)
		if i == foldAt-1 {
			before = map[uint64]string{}
			for _, f := range packFiles(t, dir) {
				before[inode(t, f)] = filepath.Base(f)
			}
		}
		graves()
		if c, err := p.Commit(context.Background(), "evolve: cycle #"+strconv.Itoa(i+1)+" -- d (x)", paths); err != nil || c == nil {
			t.Fatalf("commit %d: %+v, %v", i, c, err)
		}
	}
	after := map[string]bool{}
	for _, f := range packFiles(t, dir) {
		after[filepath.Base(f)] = true
	}
	if len(after) != 2 {
		t.Fatalf("after the fold: %v", after)
	}
	buried := map[uint64]bool{}
	for _, g := range graves() {
		buried[inode(t, g)] = true
	}
	for ino, name := range before {
		if !after[name] && !buried[ino] {
			t.Errorf("%s was folded but not buried", name)
		}
	}
	if len(buried) < 2*(foldAt-1) {
		t.Errorf("%d files buried, want the %d of the folded packs", len(buried), 2*(foldAt-1))
	}
	marks, _ := os.ReadDir(packMarks(filepath.Join(gitDir, "objects")))
	if len(marks) != 1 {
		t.Errorf("marks left: %d", len(marks))
	}
	git("fsck", "--strict", "--no-dangling")
	if n := git("rev-list", "--count", "HEAD"); n != strconv.Itoa(foldAt+1) {
		t.Errorf("%s commits", n)
	}
}

// Whether the cache changed is told without encoding it: the comparison
// agrees with comparing the JSON documents the two would be written as
// (the way it was told before), for caches differing in each field.
func TestEqualCacheIsEqualJSON(t *testing.T) {
	tr, fa := true, false
	cfg, cfg2 := "core.bare\nfalse", "core.bare\ntrue"
	base := func() *prepCache {
		return &prepCache{Version: 1, Key: "k", Config: &cfg,
			Files: map[string]string{"/a": "1:2", "/b": "-"},
			Paths: map[string]*cachedPath{"s/x": {Type: "n", Ignored: &fa, Plain: &tr}, "s/y": {Type: "d"}}}
	}
	changes := []func(c *prepCache){
		func(c *prepCache) {},
		func(c *prepCache) { c.Version = 2 },
		func(c *prepCache) { c.Key = "other" },
		func(c *prepCache) { c.Config = nil },
		func(c *prepCache) { c.Config = &cfg2 },
		func(c *prepCache) { c2 := cfg; c.Config = &c2 },
		func(c *prepCache) { c.Files["/a"] = "1:3" },
		func(c *prepCache) { c.Files["/c"] = "-" },
		func(c *prepCache) { delete(c.Files, "/b") },
		func(c *prepCache) { c.Files = nil },
		func(c *prepCache) { c.Files = map[string]string{} },
		func(c *prepCache) { c.Paths = nil },
		func(c *prepCache) { c.Paths = map[string]*cachedPath{} },
		func(c *prepCache) { delete(c.Paths, "s/y") },
		func(c *prepCache) { c.Paths["s/z"] = &cachedPath{Type: "n"} },
		func(c *prepCache) { c.Paths["s/y"] = nil },
		func(c *prepCache) { c.Paths["s/x"] = &cachedPath{Type: "d", Ignored: &fa, Plain: &tr} },
		func(c *prepCache) { c.Paths["s/x"] = &cachedPath{Type: "n", Plain: &tr} },
		func(c *prepCache) { c.Paths["s/x"] = &cachedPath{Type: "n", Ignored: &tr, Plain: &tr} },
		func(c *prepCache) { c.Paths["s/x"] = &cachedPath{Type: "n", Ignored: &fa} },
		func(c *prepCache) { f := false; c.Paths["s/x"] = &cachedPath{Type: "n", Ignored: &fa, Plain: &f} },
		func(c *prepCache) {
			x, y := false, true
			c.Paths["s/x"] = &cachedPath{Type: "n", Ignored: &x, Plain: &y}
		},
	}
	for i, a := range changes {
		for j, b := range changes {
			ca, cb := base(), base()
			ca.Files, ca.Paths = maps.Clone(ca.Files), maps.Clone(ca.Paths)
			a(ca)
			b(cb)
			ja, _ := json.Marshal(ca)
			jb, _ := json.Marshal(cb)
			if want := string(ja) == string(jb); equalCache(ca, cb) != want {
				t.Errorf("changes %d and %d: equalCache %v, JSON equal %v\n%s\n%s", i, j, !want, want, ja, jb)
			}
		}
	}
}
