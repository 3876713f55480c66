package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cacheRepo is a repository whose prepared commits of paths have their
// answers remembered: a first Prepare asked git, a second did not. home
// and xdg are $HOME and $XDG_CONFIG_HOME.
func cacheRepo(t *testing.T, paths []string, before func(dir, home, xdg string)) (dir, home, xdg string, ran func() []string) {
	t.Helper()
	settleNow(t)
	ran = gitTrace(t)
	dir, _ = setup(t)
	home, xdg = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	os.MkdirAll(filepath.Join(dir, "s", "d"), 0o755)
	if before != nil {
		before(dir, home, xdg)
	}
	nativePrep(t, dir, paths).Release()
	ran()
	nativePrep(t, dir, paths).Release()
	if r := ran(); len(r) > 0 {
		t.Fatalf("the second Prepare ran git: %q", r)
	}
	return dir, home, xdg, ran
}

func write(t *testing.T, name, body string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(name), 0o755)
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// What ooda remembers of git's answers is not used once a file they come
// from changes, or the environment git runs in: each of them changed,
// the next Prepare asks git again and has its new answer.
func TestPrepCacheNotReusedWhenAnInputChanges(t *testing.T) {
	paths := []string{"s/state.json", "s/d/lens.json"}
	ignored := func(q string) func(*testing.T, *Prep) {
		return func(t *testing.T, p *Prep) {
			if ig, err := p.IgnoredPaths(t.Context(), paths); err != nil || !ig[q] {
				t.Errorf("%s not ignored: %v %v", q, ig, err)
			}
		}
	}
	notPlain := func(q string) func(*testing.T, *Prep) {
		return func(t *testing.T, p *Prep) {
			if p.base != nil && p.base.plain[q] {
				t.Errorf("%s still plain", q)
			}
		}
	}
	named := func(name string) func(*testing.T, *Prep) {
		return func(t *testing.T, p *Prep) {
			if p.base == nil || p.base.native.cfg.ident.userName != name {
				t.Errorf("user.name is not %q", name)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		before func(dir, home, xdg string)
		change func(t *testing.T, dir, home, xdg string)
		asks   string // the git command that must run again
		check  func(*testing.T, *Prep)
	}{
		{name: ".gitignore", change: func(t *testing.T, dir, home, xdg string) { write(t, filepath.Join(dir, ".gitignore"), "state.json\n") },
			asks: "check-ignore", check: ignored("s/state.json")},
		{name: "a directory's .gitignore", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(dir, "s/d/.gitignore"), "lens.json\n")
		},
			asks: "check-ignore", check: ignored("s/d/lens.json")},
		{name: "info/exclude", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(dir, ".git/info/exclude"), "state.json\n")
		}, asks: "check-ignore", check: ignored("s/state.json")},
		{name: "core.excludesFile", before: func(dir, home, xdg string) {
			exec.Command("git", "-C", dir, "config", "core.excludesFile", "~/ignores").Run()
		}, change: func(t *testing.T, dir, home, xdg string) { write(t, filepath.Join(home, "ignores"), "lens.json\n") },
			asks: "check-ignore", check: ignored("s/d/lens.json")},
		{name: "XDG ignore", change: func(t *testing.T, dir, home, xdg string) { write(t, filepath.Join(xdg, "git", "ignore"), "*.json\n") },
			asks: "check-ignore", check: ignored("s/state.json")},
		{name: ".gitattributes", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(dir, ".gitattributes"), "*.json text\n")
		},
			asks: "check-attr", check: notPlain("s/state.json")},
		{name: "a directory's .gitattributes", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(dir, "s/d/.gitattributes"), "lens.json eol=crlf\n")
		}, asks: "check-attr", check: notPlain("s/d/lens.json")},
		{name: "info/attributes", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(dir, ".git/info/attributes"), "*.json filter=x\n")
		}, asks: "check-attr", check: notPlain("s/state.json")},
		{name: "core.attributesFile", before: func(dir, home, xdg string) {
			exec.Command("git", "-C", dir, "config", "core.attributesFile", filepath.Join(home, "attrs")).Run()
		}, change: func(t *testing.T, dir, home, xdg string) { write(t, filepath.Join(home, "attrs"), "*.json ident\n") },
			asks: "check-attr", check: notPlain("s/state.json")},
		{name: "XDG attributes", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(xdg, "git", "attributes"), "*.json working-tree-encoding=UTF-16\n")
		}, asks: "check-attr", check: notPlain("s/d/lens.json")},
		{name: ".git/config", change: func(t *testing.T, dir, home, xdg string) { gitIn(t, dir, "config", "user.name", "Repo Name") },
			asks: "config", check: named("Repo Name")},
		{name: "~/.gitconfig", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Home Name\n")
		}, asks: "config", check: named("Home Name")},
		{name: "XDG config", change: func(t *testing.T, dir, home, xdg string) {
			write(t, filepath.Join(xdg, "git", "config"), "[user]\n\tname = Xdg Name\n")
		}, asks: "config", check: named("Xdg Name")},
		{name: "HOME", change: func(t *testing.T, dir, home, xdg string) {
			other := t.TempDir()
			write(t, filepath.Join(other, ".gitconfig"), "[user]\n\tname = Other Home\n")
			t.Setenv("HOME", other)
		}, asks: "config", check: named("Other Home")},
		{name: "XDG_CONFIG_HOME", change: func(t *testing.T, dir, home, xdg string) {
			other := t.TempDir()
			write(t, filepath.Join(other, "git", "config"), "[user]\n\tname = Other Xdg\n")
			t.Setenv("XDG_CONFIG_HOME", other)
		}, asks: "config", check: named("Other Xdg")},
		{name: "git's environment", change: func(t *testing.T, dir, home, xdg string) {
			t.Setenv("GIT_CONFIG_NOSYSTEM", "0")
		}, asks: "config"},
		{name: "the git binary", change: func(t *testing.T, dir, home, xdg string) {
			bin, err := exec.LookPath("git")
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(bin, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("# another git\n")
			f.Close()
		}, asks: "config"},
		{name: "a malformed cache", change: func(t *testing.T, dir, home, xdg string) {
			write(t, prepCacheFile(filepath.Join(dir, ".git")), `{"version":1,"key":`)
		}, asks: "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, home, xdg, ran := cacheRepo(t, paths, tc.before)
			tc.change(t, dir, home, xdg)
			p := nativePrep(t, dir, paths)
			defer p.Release()
			if tc.check != nil {
				tc.check(t, p)
			}
			if r := ran(); !slices.Contains(r, tc.asks) {
				t.Errorf("git %s did not run again: %q", tc.asks, r)
			}
		})
	}
}

// An ignored path that the index tracks is not ignored, as for git
// check-ignore: told from the index itself, which changes with every
// commit, while the ignore rules stay remembered.
func TestPrepCacheTrackedFromTheIndex(t *testing.T) {
	paths := []string{"s/state.json"}
	dir, _, _, ran := cacheRepo(t, paths, func(dir, home, xdg string) {
		write(t, filepath.Join(dir, "s/state.json"), "{}\n")
		gitIn(t, dir, "add", "s/state.json")
		write(t, filepath.Join(dir, ".gitignore"), "s/\n")
		gitIn(t, dir, "add", ".gitignore")
		gitIn(t, dir, "commit", "-q", "-m", "tracked, then ignored")
	})
	p := nativePrep(t, dir, paths)
	p.Release()
	if ig, _ := p.IgnoredPaths(t.Context(), paths); ig["s/state.json"] {
		t.Error("a tracked file is ignored")
	}
	gitIn(t, dir, "rm", "-q", "--cached", "s/state.json")
	ran()
	p = nativePrep(t, dir, paths)
	p.Release()
	if ig, _ := p.IgnoredPaths(t.Context(), paths); !ig["s/state.json"] {
		t.Error("an untracked ignored file is not ignored")
	}
	if r := ran(); len(r) > 0 {
		t.Errorf("ran git: %q", r)
	}
	want := gitIn(t, dir, "check-ignore", "-v", "--", "s/state.json")
	if !strings.Contains(want, "s/state.json") {
		t.Errorf("git disagrees: %q", want)
	}
}

// Answers are not remembered from files that changed too recently for
// their fingerprint to be sure (within the file system clock's tick of
// a later change), nor from a configuration that includes other files:
// git is asked again each time.
func TestPrepCacheNotWrittenWhenUnsure(t *testing.T) {
	paths := []string{"s/state.json"}
	t.Run("recent files", func(t *testing.T) {
		ran := gitTrace(t)
		dir, _ := setup(t)
		old := settleMargin
		settleMargin = time.Hour
		defer func() { settleMargin = old }()
		for range 2 {
			nativePrep(t, dir, paths).Release()
			if r := ran(); !slices.Contains(r, "config") {
				t.Errorf("git config did not run: %q", r)
			}
		}
		if _, err := os.Stat(prepCacheFile(filepath.Join(dir, ".git"))); err == nil {
			t.Error("a cache was written")
		}
	})
	t.Run("include", func(t *testing.T) {
		settleNow(t)
		ran := gitTrace(t)
		dir, _ := setup(t)
		inc := filepath.Join(t.TempDir(), "inc")
		write(t, inc, "[user]\n\tname = Included\n")
		gitIn(t, dir, "config", "include.path", inc)
		for range 2 {
			p := nativePrep(t, dir, paths)
			p.Release()
			if r := ran(); !slices.Contains(r, "config") || !slices.Contains(r, "check-ignore") {
				t.Errorf("git was not asked: %q", r)
			}
			if p.base.native.cfg.ident.userName != "Included" {
				t.Errorf("user.name %q", p.base.native.cfg.ident.userName)
			}
		}
	})
}
