package config

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manyDomainsConfig writes a project of n domains (state files under
// agent/state/, half of them present) and returns its config file.
func manyDomainsConfig(tb testing.TB, n int) (file, root string) {
	tb.Helper()
	root = tb.TempDir()
	domains := map[string]any{}
	for i := 0; i < n; i++ {
		domains[fmt.Sprintf("d%d", i)] = map[string]any{"weight": 1.0, "primary_skill": "/true"}
	}
	cfg := map[string]any{
		"mission": "bench", "domains": domains,
		"skills": map[string]any{"/true": map[string]any{"command": []string{"true"}}},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "evolve"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i += 2 {
		if err := os.WriteFile(filepath.Join(root, "agent", "state", fmt.Sprintf("d%d.json", i)), []byte("{}"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	file = filepath.Join(root, "config.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	return file, root
}

// BenchmarkPathIssues1000 is the path checks of a configuration of 1,000
// domains, which every process that loads the configuration runs.
func BenchmarkPathIssues1000(b *testing.B) {
	file, root := manyDomainsConfig(b, 1000)
	c, err := LoadProject(file, root)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if issues := c.pathIssues(file, root); len(issues) != 0 {
			b.Fatal(issues)
		}
	}
}

// TestPathShortcutsAgreeWithFilepath checks the string shortcuts of the
// path checks against the filepath functions they stand in for, on clean
// absolute paths (the only ones they are given).
func TestPathShortcutsAgreeWithFilepath(t *testing.T) {
	paths := []string{"/", "/a", "/ab", "/a/b", "/a/bc", "/a/b/c", "/abc/d", "/a/b/..x", "/é/ü", "/a/\xff/b"}
	for _, dir := range paths {
		for _, p := range paths {
			rel, err := filepath.Rel(dir, p)
			want := err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
			if got := within(dir, p); got != want {
				t.Errorf("within(%q, %q) = %v, filepath.Rel says %v (%q)", dir, p, got, want, rel)
			}
			if got, gerr := relPath(dir, p); got != rel || (gerr == nil) != (err == nil) {
				t.Errorf("relPath(%q, %q) = %q, %v; filepath.Rel: %q, %v", dir, p, got, gerr, rel, err)
			}
		}
		for _, c := range []string{"x", "x.json", ".git", "é"} {
			if got, want := joinComponent(dir, c), filepath.Join(dir, c); got != want {
				t.Errorf("joinComponent(%q, %q) = %q, filepath.Join: %q", dir, c, got, want)
			}
		}
	}
	for _, p := range []string{"", "/", "//", "a", "/a//b/", "a/b/c", "./a/../b", "/\xff/é//x/", "///x"} {
		want := strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator || r == '/' })
		if got := splitPath(p); !slices.Equal(got, want) {
			t.Errorf("splitPath(%q) = %q, strings.FieldsFunc: %q", p, got, want)
		}
	}
}

// walkTree makes a project of paths of every kind for the lookups'
// tests — symlinks relative, absolute, dangling, in a loop, to a file,
// chained, with ".." after them; directories listed instead of looked up
// name by name (more than listAfter names asked, some missing, some of
// another case, one holding a name that is not ASCII) — and returns the
// paths to resolve.
func walkTree(t *testing.T) (paths []string) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string) {
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(root, p), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		mk(filepath.Dir(p))
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("agent/state/evolve")
	mk("real/dir")
	file("real/dir/f.json")
	for i := 0; i < 20; i += 2 {
		file(fmt.Sprintf("agent/state/d%d.json", i))
	}
	file("agent/state/Upper.json")
	link("../real", "agent/state/rel")
	link(filepath.Join(root, "real"), "agent/state/abs")
	link("nowhere/x", "agent/state/dangling")
	link("loop2", "agent/state/loop1")
	link("loop1", "agent/state/loop2")
	link("../real/dir/f.json", "agent/state/tofile.json")
	link("rel", "agent/state/chain")
	link("/", "agent/state/slash")
	mk("caseless")
	for i := 0; i < 12; i++ {
		file(fmt.Sprintf("caseless/n%d.json", i))
	}
	file("caseless/é.json")

	for i := 0; i < 24; i++ {
		paths = append(paths, filepath.Join(root, "agent", "state", fmt.Sprintf("d%d.json", i)))
	}
	for i := 0; i < 14; i++ {
		paths = append(paths, filepath.Join(root, "caseless", fmt.Sprintf("n%d.json", i)), filepath.Join(root, "caseless", fmt.Sprintf("N%d.JSON", i)))
	}
	for _, p := range []string{"agent/state/upper.json", "agent/state/Upper.json", "agent/state/UPPER.JSON", "agent/state/rel/dir/f.json",
		"agent/state/abs/dir/f.json", "agent/state/rel/dir/missing/x.json", "agent/state/dangling", "agent/state/dangling/y.json",
		"agent/state/loop1", "agent/state/loop1/z.json", "agent/state/tofile.json", "agent/state/tofile.json/under", "agent/state/chain/dir/f.json",
		"agent/state/chain/dir/../dir/f.json", "agent/state/rel/../agent/state/d2.json", "agent/state/slash/tmp", "agent/state/d2.json/x",
		"agent/state/evolve/state.json", "agent/state/missingdir/a/b.json", "agent//state/./d4.json", "agent/state/", "caseless/é.json", "caseless/e.json"} {
		paths = append(paths, filepath.Join(root, p), root+"/"+p)
	}
	return paths
}

// TestLookupsResolveAsTheWalk resolves paths through symlinks of every
// kind — relative, absolute, dangling, in a loop, to a file, chained, with
// ".." after them — and through directories listed instead of looked up
// name by name (more than listAfter names asked, some missing, some of
// another case), with the lookups shared among all paths in several
// orders, and requires what the walk alone gives each path.
func TestLookupsResolveAsTheWalk(t *testing.T) {
	paths := walkTree(t)
	want := map[string]string{}
	for _, p := range paths {
		r, err := (*lookups)(nil).resolvePath(p)
		want[p] = fmt.Sprintf("%q %v", r, err)
	}
	orders := [][]string{paths, slices.Clone(paths), slices.Clone(paths)}
	slices.Reverse(orders[1])
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(orders[2]), func(i, j int) { orders[2][i], orders[2][j] = orders[2][j], orders[2][i] })
	listed := false
	for n, order := range orders {
		l := newLookups()
		for _, p := range order {
			res, err := l.resolvePath(p)
			if got := fmt.Sprintf("%q %v", res, err); got != want[p] {
				t.Errorf("order %d: %s resolved to %s, the walk alone gives %s", n, p, got, want[p])
			}
		}
		for dir, d := range l.dirs {
			if d.names != nil && strings.HasSuffix(dir, filepath.Join("agent", "state")) {
				listed = true
			}
			if strings.HasSuffix(dir, "caseless") && !d.unusable {
				t.Errorf("caseless/ holds a name that is not ASCII: its listing must not be used")
			}
		}
	}
	if !listed {
		t.Error("agent/state/ was never listed: the listing is not exercised")
	}
}

// TestResolveLeafAsTheWalk resolves the paths of walkTree as configured
// paths are (resolveLeaf, its answer not remembered) and as directories
// and the root are (resolvePath, remembered), each path both ways, the
// two mixed in random orders with the lookups shared, each path asked
// up to three times, and requires what the walk alone gives each path
// every time.
func TestResolveLeafAsTheWalk(t *testing.T) {
	paths := walkTree(t)
	want := map[string]string{}
	for _, p := range paths {
		r, err := (*lookups)(nil).resolvePath(p)
		want[p] = fmt.Sprintf("%q %v", r, err)
		if r2, err2 := (*lookups)(nil).resolveLeaf(p, isCleanAbs(p)); fmt.Sprintf("%q %v", r2, err2) != want[p] {
			t.Errorf("%s: resolveLeaf without lookups gives %q %v, the walk %s", p, r2, err2, want[p])
		}
	}
	r := rand.New(rand.NewPCG(5, 8))
	for n := range 40 {
		var order []string
		for range 3 {
			order = append(order, paths...)
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		l := newLookupsFor(len(paths))
		for _, p := range order {
			var res string
			var err error
			if r.IntN(3) == 0 {
				res, err = l.resolvePath(p)
			} else {
				res, err = l.resolveLeaf(p, isCleanAbs(p))
			}
			if got := fmt.Sprintf("%q %v", res, err); got != want[p] {
				t.Fatalf("order %d: %s resolved to %s, the walk alone gives %s", n, p, got, want[p])
			}
		}
	}
}

// TestCleanPathShortcutsAgreeWithFilepath checks isCleanAbs and
// isCleanRel against filepath.Clean and filepath.Join, which they stand
// in for.
func TestCleanPathShortcutsAgreeWithFilepath(t *testing.T) {
	for _, p := range []string{"", "/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/.", "/a/b.json", "/a/.b", "/a/..b", "/a/b..",
		"a", "a/", "a//b", "./a", "a/.", "../a", "a/..", "a/b/c.json", ".a", "..a", "a/...", "a\\b", "/a b/c"} {
		if got, want := isCleanAbs(p), filepath.IsAbs(p) && filepath.Clean(p) == p; got != want {
			t.Errorf("isCleanAbs(%q) = %v, filepath says %v", p, got, want)
		}
		// isCleanRel is what lets resolveIn append p to the root
		// instead of joining them.
		if got, want := isCleanRel(p), p != "" && !filepath.IsAbs(p) && filepath.Join("/r", p) == "/r/"+p; got != want {
			t.Errorf("isCleanRel(%q) = %v, filepath.Join says %v", p, got, want)
		}
	}
}
