package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

// tempFilesProject writes a project of 150 domain directories with the
// temporary files of killed writes in some of them, in agent/state/ and
// in evolve/, beside names that only look like them (a directory, a name
// without the leading dot or the digits, the lock's own) and a symlinked
// directory whose files are not the project's to clean.
func tempFilesProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 150; i++ {
		d := fmt.Sprintf("agent/state/d%03d", i)
		write(d + "/lens.json")
		switch i % 11 {
		case 0:
			write(d + fmt.Sprintf("/.lens.json.tmp-%d", 1000+i))
			write(d + "/.lens_changelog.json.tmp-7")
		case 3:
			write(d + "/lens.json.tmp-5")
			write(d + "/.lens.json.tmp-x5")
		case 5:
			if err := os.MkdirAll(filepath.Join(root, d, ".keep.tmp-3"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("agent/state/.d001.json.tmp-99")
	write("agent/state/evolve/.state.json.tmp-123456")
	write("agent/state/evolve/." + state.LockFile + ".tmp-5")
	write("outside/.x.json.tmp-1")
	if err := os.Symlink("../../outside", filepath.Join(root, "agent", "state", "linked")); err != nil {
		t.Fatal(err)
	}
	return root
}

// treeOf lists every path under root.
func treeOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRemoveTempFilesManyDirectoriesAsOneGoroutine cleans two copies of a
// project of more domain directories than one goroutine lists alone, one
// with the directories shared among goroutines and one with a single
// goroutine, and requires the same files removed, reported in the same
// order, and the same files left: every temporary file of a killed write
// gone, and nothing else.
func TestRemoveTempFilesManyDirectoriesAsOneGoroutine(t *testing.T) {
	clean := func(procs int) ([]string, []string) {
		root := tempFilesProject(t)
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		removed, err := state.New(root).RemoveTempFiles()
		if err != nil {
			t.Fatal(err)
		}
		return removed, treeOf(t, root)
	}
	// The order a single pass reports them in: agent/state/ in its
	// directory's order, then each directory in that order, its names
	// sorted; then evolve/runs and proposed-skills (none here).
	want := func() []string {
		root := tempFilesProject(t)
		isTemp := regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)
		temp := func(dir, name string) bool {
			fi, err := os.Lstat(filepath.Join(dir, name))
			return err == nil && fi.Mode().IsRegular() && isTemp.MatchString(name) && !strings.HasPrefix(name, "."+state.LockFile+".tmp-")
		}
		stateDir := filepath.Join(root, "agent", "state")
		f, err := os.Open(stateDir)
		if err != nil {
			t.Fatal(err)
		}
		top, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range top {
			if temp(stateDir, n) {
				out = append(out, filepath.Join("agent", "state", n))
			}
		}
		for _, n := range top {
			if fi, err := os.Lstat(filepath.Join(stateDir, n)); err != nil || !fi.IsDir() {
				continue
			}
			ents, err := os.ReadDir(filepath.Join(stateDir, n))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if temp(filepath.Join(stateDir, n), e.Name()) {
					out = append(out, filepath.Join("agent", "state", n, e.Name()))
				}
			}
		}
		return out
	}()
	oneRemoved, oneTree := clean(1)
	if !slices.Equal(oneRemoved, want) {
		t.Errorf("removed, one goroutine:\n%q\nwant, in the order of the directories:\n%q", oneRemoved, want)
	}
	manyRemoved, manyTree := clean(4)
	if !slices.Equal(oneRemoved, manyRemoved) {
		t.Errorf("removed, one goroutine:\n%q\nseveral:\n%q", oneRemoved, manyRemoved)
	}
	if !slices.Equal(oneTree, manyTree) {
		t.Errorf("left, one goroutine:\n%q\nseveral:\n%q", oneTree, manyTree)
	}
	if len(manyRemoved) != 2*14+2 {
		t.Errorf("removed %d files, want the 30 temporary files of killed writes: %q", len(manyRemoved), manyRemoved)
	}
	for _, p := range manyTree {
		base := filepath.Base(p)
		if strings.HasPrefix(base, ".") && strings.Contains(base, ".tmp-") && !strings.HasPrefix(p, "outside") &&
			base != ".lens.json.tmp-x5" && base != ".keep.tmp-3" && base != "."+state.LockFile+".tmp-5" {
			t.Errorf("%s was left", p)
		}
	}
	for _, keep := range []string{"outside/.x.json.tmp-1", "agent/state/evolve/." + state.LockFile + ".tmp-5", "agent/state/d003/lens.json.tmp-5", "agent/state/d005/.keep.tmp-3"} {
		if !slices.Contains(manyTree, keep) {
			t.Errorf("%s was removed", keep)
		}
	}
}
