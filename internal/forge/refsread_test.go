package forge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var viewPatterns = []string{"refs/heads", "refs/remotes/origin", "refs/ooda/closed"}

// forEachRef is git's own listing, as readView asks for it.
func forEachRef(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"}, viewPatterns...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git for-each-ref: %v", err)
	}
	return string(out)
}

// refsRepo is a repository with local, remote-tracking and closed refs,
// a symbolic origin/HEAD and an annotated tag.
func refsRepo(t *testing.T) repo {
	t.Helper()
	r := newRepo(t, "main")
	first := r.commit(at(0), "initial", "README", "x\n")
	r.git("checkout", "-q", "-b", "auto/a")
	second := r.commit(at(1), "a", "a.txt", "a\n")
	r.git("checkout", "-q", "main")
	r.git("branch", "auto/b", first)
	r.git("branch", "auto/deep/er", second)
	r.git("update-ref", "refs/remotes/origin/main", first)
	r.git("update-ref", "refs/remotes/origin/auto/r", second)
	r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	r.git("update-ref", ClosedRefPrefix+"auto/b", first)
	r.git("update-ref", "refs/remotes/originx/main", first)
	r.gitAt(at(2), "tag", "-a", "-m", "v1", "v1", second)
	r.git("update-ref", "refs/remotes/origin/tagged", r.git("rev-parse", "v1"))
	return r
}

// The ref files are read as git lists them, in every layout git writes:
// loose, packed (with peeled lines), both with loose refs overriding
// packed ones, deleted refs, chains of symbolic refs, packed objects, and
// the files git itself passes over.
func TestListRefsLocalAsGit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(r repo)
	}{
		{"loose", func(repo) {}},
		{"packed", func(r repo) { r.git("pack-refs", "--all") }},
		{"packed, then moved and added loose", func(r repo) {
			r.git("pack-refs", "--all")
			r.git("update-ref", "refs/heads/auto/b", "auto/a")
			r.git("update-ref", "refs/remotes/origin/new", "main")
		}},
		{"deleted, packed and loose", func(r repo) {
			r.git("pack-refs", "--all")
			r.git("branch", "-q", "-D", "auto/deep/er")
			r.git("update-ref", "refs/heads/loose", "main")
			r.git("update-ref", "-d", "refs/heads/loose")
			r.git("update-ref", "-d", ClosedRefPrefix+"auto/b")
		}},
		{"a chain of symbolic refs", func(r repo) {
			r.git("symbolic-ref", "refs/remotes/origin/alias", "refs/remotes/origin/main")
			r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/alias")
			r.git("pack-refs", "--all")
		}},
		{"a symbolic ref to a local branch", func(r repo) {
			r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/auto/a")
		}},
		{"objects packed", func(r repo) {
			r.git("gc", "-q")
			r.git("update-ref", "refs/heads/old", "main")
		}},
		{"files git passes over", func(r repo) {
			sha := r.git("rev-parse", "main")
			r.write(".git/refs/heads/.hidden", "garbage\n")
			r.write(".git/refs/heads/auto/x.lock", sha+"\n")
			r.write(".git/refs/remotes/origin/.tmp", "not a ref")
		}},
		{"no remote, no closed refs", func(r repo) {
			r.git("update-ref", "-d", ClosedRefPrefix+"auto/b")
			for _, ref := range []string{"HEAD", "main", "auto/r"} {
				r.git("update-ref", "--no-deref", "-d", "refs/remotes/origin/"+ref)
			}
			if err := os.RemoveAll(filepath.Join(r.dir, ".git", "refs", "remotes")); err != nil {
				r.t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := refsRepo(t)
			c.change(r)
			got, ok := listRefsLocal(r.dir, lookGit(), viewPatterns, 1<<20)
			if !ok {
				t.Fatal("left to git")
			}
			if want := forEachRef(t, r.dir); got != want {
				t.Errorf("read\n%s\ngit lists\n%s", strings.ReplaceAll(got, "\x00", " "), strings.ReplaceAll(want, "\x00", " "))
			}
			g := newGit(t, r.dir, "auto/")
			calls := gitCalls(g)
			if _, err := g.view(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(*calls) != 0 {
				t.Errorf("reading the refs started %v", *calls)
			}
		})
	}
}

// Whatever git might list otherwise, or whatever is not plainly a ref
// file, leaves the listing to git: each of these read naively would give
// a wrong or version-dependent listing, follow a link out of the
// repository, hang on a FIFO or read without a bound.
func TestListRefsLocalLeavesToGit(t *testing.T) {
	t.Parallel()
	sha := func(r repo) string { return r.git("rev-parse", "main") }
	for _, c := range []struct {
		name   string
		change func(r repo)
	}{
		{"a ref to a missing object", func(r repo) {
			r.write(".git/refs/heads/auto/missing", "0123456789012345678901234567890123456789\n")
		}},
		{"a symbolic ref to nothing", func(r repo) {
			r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/gone")
		}},
		{"a symbolic ref out of the listing", func(r repo) {
			r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/tags/v1")
		}},
		{"a symbolic ref out of the repository", func(r repo) {
			r.write(".git/refs/remotes/origin/HEAD", "ref: refs/../../../../etc/passwd\n")
		}},
		{"a symbolic ref to itself", func(r repo) {
			r.write(".git/refs/remotes/origin/HEAD", "ref: refs/remotes/origin/HEAD\n")
		}},
		{"garbage", func(r repo) { r.write(".git/refs/heads/auto/g", "garbage\n") }},
		{"an empty file", func(r repo) { r.write(".git/refs/heads/auto/e", "") }},
		{"an id in capitals", func(r repo) { r.write(".git/refs/heads/auto/u", strings.ToUpper(sha(r))+"\n") }},
		{"an id and more", func(r repo) { r.write(".git/refs/heads/auto/m", sha(r)+" trailing\n") }},
		{"a name git refuses", func(r repo) { r.write(".git/refs/heads/auto/a..b", sha(r)+"\n") }},
		{"a name with a space", func(r repo) { r.write(".git/refs/heads/auto/a b", sha(r)+"\n") }},
		{"a ref file over the bound", func(r repo) {
			r.write(".git/refs/heads/auto/big", sha(r)+"\n"+strings.Repeat(" ", maxLooseRef))
		}},
		{"a symbolic link", func(r repo) {
			if err := os.Symlink(filepath.Join(r.dir, ".git", "refs", "heads", "main"), filepath.Join(r.dir, ".git", "refs", "heads", "auto", "link")); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"a linked directory", func(r repo) {
			outside := r.t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "x"), []byte(sha(r)+"\n"), 0o644); err != nil {
				r.t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(r.dir, ".git", "refs", "heads", "auto", "dir")); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"a FIFO", func(r repo) {
			if err := syscall.Mkfifo(filepath.Join(r.dir, ".git", "refs", "heads", "auto", "fifo"), 0o644); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"a FIFO as packed-refs", func(r repo) {
			if err := syscall.Mkfifo(filepath.Join(r.dir, ".git", "packed-refs"), 0o644); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"packed-refs over the bound", func(r repo) {
			r.git("pack-refs", "--all")
			f, err := os.OpenFile(filepath.Join(r.dir, ".git", "packed-refs"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				r.t.Fatal(err)
			}
			defer f.Close()
			id := sha(r)
			for i := 0; i < 30000; i++ {
				f.WriteString(id + " refs/tags/pad" + strconv.Itoa(i) + "\n")
			}
		}},
		{"packed-refs with a line git does not write", func(r repo) {
			r.git("pack-refs", "--all")
			f, err := os.OpenFile(filepath.Join(r.dir, ".git", "packed-refs"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				r.t.Fatal(err)
			}
			defer f.Close()
			f.WriteString("# a comment\n")
		}},
		{"packed-refs without its last newline", func(r repo) {
			r.git("pack-refs", "--all")
			p := filepath.Join(r.dir, ".git", "packed-refs")
			b, err := os.ReadFile(p)
			if err != nil {
				r.t.Fatal(err)
			}
			if err := os.WriteFile(p, b[:len(b)-1], 0o644); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"a reftable directory", func(r repo) {
			if err := os.Mkdir(filepath.Join(r.dir, ".git", "reftable"), 0o755); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"a ref named as the listed directory", func(r repo) {
			r.git("update-ref", "-d", ClosedRefPrefix+"auto/b")
			if err := os.RemoveAll(filepath.Join(r.dir, ".git", "refs", "ooda")); err != nil {
				r.t.Fatal(err)
			}
			r.write(".git/refs/ooda/closed", sha(r)+"\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := refsRepo(t)
			c.change(r)
			if got, ok := listRefsLocal(r.dir, lookGit(), viewPatterns, 1<<20); ok {
				t.Fatalf("read from the files:\n%s", strings.ReplaceAll(got, "\x00", " "))
			}
			g, err := NewGit(GitOptions{Dir: r.dir, BranchPrefixes: []string{"auto/"}, MaxOutput: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			calls := gitCalls(g)
			// git may refuse the repository, or wait on the FIFO until the
			// time allowed has passed: only the fallback matters here.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, _ = g.view(ctx)
			if !slices.Contains(*calls, "for-each-ref") {
				t.Errorf("the refs were not listed by git: %v", *calls)
			}
		})
	}
}

// GIT_REF_PARANOIA changes which refs git lists: it is git's to follow.
func TestListRefsLocalLeavesRefParanoiaToGit(t *testing.T) {
	r := refsRepo(t)
	if _, ok := listRefsLocal(r.dir, lookGit(), viewPatterns, 1<<20); !ok {
		t.Fatal("a plain repository left to git")
	}
	t.Setenv("GIT_REF_PARANOIA", "0")
	if _, ok := listRefsLocal(r.dir, lookGit(), viewPatterns, 1<<20); ok {
		t.Error("read from the files with GIT_REF_PARANOIA set")
	}
}

// The pack indexes are asked newest first (the commit a cycle looks for
// is most often in the pack the last state commit wrote); an index
// without its pack is not asked at all.
func TestObjectStoreAsksTheNewestPackFirst(t *testing.T) {
	dir := t.TempDir()
	packDir := filepath.Join(dir, "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range []string{"pack-b", "pack-c", "pack-a", "pack-lone"} {
		for _, ext := range []string{".idx", ".pack"} {
			if name == "pack-lone" && ext == ".pack" {
				continue
			}
			p := filepath.Join(packDir, name+ext)
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, base, base.Add(time.Duration(i)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := objectStore{dir: dir}
	if o.lookup(strings.Repeat("ab", 20)) {
		t.Fatal("found an object in files that are no pack")
	}
	var got []string
	for _, p := range o.packs {
		got = append(got, filepath.Base(p))
	}
	if want := []string{"pack-a.idx", "pack-c.idx", "pack-b.idx"}; !slices.Equal(got, want) {
		t.Errorf("indexes asked in the order %v, want %v", got, want)
	}
}
