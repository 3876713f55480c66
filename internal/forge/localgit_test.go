package forge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/perfstat"
)

// gitAnswers is what git itself says of dir: whether it is inside a
// working tree, and its origin's URL, as Select asks them.
func gitAnswers(t *testing.T, dir string) (bool, string) {
	t.Helper()
	ctx := context.Background()
	return gitOutput(ctx, dir, "rev-parse", "--is-inside-work-tree") == "true",
		gitOutput(ctx, dir, "remote", "get-url", "origin")
}

// isolatedGitEnv points git's global and system configuration at files
// of the test's own, and returns the global file.
func isolatedGitEnv(t *testing.T) (home, system string) {
	t.Helper()
	home = t.TempDir()
	system = filepath.Join(t.TempDir(), "gitconfig")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_SYSTEM", system)
	for _, k := range []string{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CEILING_DIRECTORIES"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home, system
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Where the files answer, they answer as git does: a working tree or
// none, and the same origin, whichever configuration file names it and
// however it is written.
func TestInspectLocalAnswersAsGit(t *testing.T) {
	home, system := isolatedGitEnv(t)
	newRepo := func(t *testing.T) string {
		dir := t.TempDir()
		repo{t: t, dir: dir}.git("init", "-q", "-b", "main")
		return dir
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) string
		want  localAnswer
	}{
		{"a plain repository", newRepo, localFound},
		{"an origin on GitHub", func(t *testing.T) string {
			dir := newRepo(t)
			repo{t: t, dir: dir}.git("remote", "add", "origin", "git@github.com:acme/app.git")
			return dir
		}, localFound},
		{"other settings in the system, XDG and global files", func(t *testing.T) string {
			writeFile(t, system, "[credential \"https://example.com\"]\n\thelper = store\n[remote \"upstream\"]\n\turl = x\n")
			writeFile(t, filepath.Join(home, ".config", "git", "config"), "[core]\n\tbare = no\n\trepositoryformatversion = 0\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = \"A \\\"quoted\\\" name\" ; comment\n")
			dir := newRepo(t)
			repo{t: t, dir: dir}.git("remote", "add", "origin", "git@github.com:acme/app.git")
			return dir
		}, localFound},
		{"an origin rewritten by url.insteadOf, the longest first", func(t *testing.T) string {
			writeFile(t, system, "[url \"https://gitlab.example.com/\"]\n\tinsteadOf = https://example.com/\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[url \"git@github.com:acme/\"]\n\tinsteadOf = https://example.com/acme/\n\tpushInsteadOf = https://example.com/\n[url \"https://github.com/other/\"]\n\tinsteadOf = https://example.com/acme/\n")
			dir := newRepo(t)
			repo{t: t, dir: dir}.git("remote", "add", "origin", "https://example.com/acme/app.git")
			return dir
		}, localFound},
		{"a rewrite that does not apply", func(t *testing.T) string {
			writeFile(t, filepath.Join(home, ".gitconfig"), "[url \"git@github.com:\"]\n\tinsteadOf = gh:\n")
			dir := newRepo(t)
			repo{t: t, dir: dir}.git("remote", "add", "origin", "https://gitlab.example.com/acme/app.git")
			return dir
		}, localFound},
		{"two URLs", func(t *testing.T) string {
			dir := newRepo(t)
			r := repo{t: t, dir: dir}
			r.git("remote", "add", "origin", "git@github.com:acme/first.git")
			r.git("config", "--add", "remote.origin.url", "git@github.com:acme/second.git")
			return dir
		}, localFound},
		{"an origin quoted, commented, continued and dotted", func(t *testing.T) string {
			dir := newRepo(t)
			f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteString("[remote.ORIGIN] URL = \"  git@github.com:acme/\\\nquoted.git\" ; a comment\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
			return dir
		}, localFound},
		{"another remote only", func(t *testing.T) string {
			dir := newRepo(t)
			repo{t: t, dir: dir}.git("remote", "add", "Origin", "git@github.com:acme/other.git")
			return dir
		}, localFound},
		{"a global file that is /dev/null", func(t *testing.T) string {
			t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
			return newRepo(t)
		}, localFound},
		{"no system file", func(t *testing.T) string {
			writeFile(t, system, "[url \"git@github.com:\"]\n\tinsteadOf = https://example.com/\n")
			t.Setenv("GIT_CONFIG_NOSYSTEM", "true")
			return newRepo(t)
		}, localFound},
		{"a .git file naming the repository", func(t *testing.T) string {
			dir := t.TempDir()
			sep := filepath.Join(t.TempDir(), "sep.git")
			repo{t: t, dir: dir}.git("init", "-q", "-b", "main", "--separate-git-dir", sep)
			repo{t: t, dir: dir}.git("remote", "add", "origin", "https://github.com/acme/sep.git")
			return dir
		}, localFound},
		{"a symbolic link to the working tree", func(t *testing.T) string {
			dir := newRepo(t)
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(dir, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, localFound},
		{"no repository", func(t *testing.T) string { return t.TempDir() }, localNone},
		{"no repository, and a ceiling", func(t *testing.T) string {
			dir := t.TempDir()
			t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
			return dir
		}, localNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []string{system, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config")} {
				os.Remove(f)
			}
			dir := c.setup(t)
			answer, local := inspectLocal(dir, lookGit())
			if answer != c.want {
				t.Fatalf("answer %d, want %d", answer, c.want)
			}
			isRepo, origin := gitAnswers(t, dir)
			if isRepo != (answer == localFound) {
				t.Errorf("git says inside a working tree: %v; the files say %d", isRepo, answer)
			}
			if answer == localFound && local.origin != origin {
				t.Errorf("origin %q, git says %q", local.origin, origin)
			}
		})
	}
}

// Whatever the files alone cannot settle is left to git, which is then
// asked, and Select chooses as git's answers say. Each case would make a
// reading of the files alone answer wrongly.
func TestInspectLocalLeavesToGit(t *testing.T) {
	home, system := isolatedGitEnv(t)
	newRepo := func(t *testing.T) repo {
		r := repo{t: t, dir: t.TempDir()}
		r.git("init", "-q", "-b", "main")
		return r
	}
	appendConfig := func(t *testing.T, r repo, text string) {
		f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"a rewrite to anything (an empty insteadOf)", func(t *testing.T) string {
			writeFile(t, system, "[url \"git@github.com:acme/\"]\n\tinsteadOf = \"\"\n")
			r := newRepo(t)
			r.git("remote", "add", "origin", "app.git")
			return r.dir
		}},
		{"a key without a value, which git refuses", func(t *testing.T) string {
			r := newRepo(t)
			r.git("remote", "add", "origin", "git@github.com:acme/app.git")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[url \"git@github.com:acme/\"]\n\tpushInsteadOf\n")
			return r.dir
		}},
		{"an origin in the global file only", func(t *testing.T) string {
			writeFile(t, filepath.Join(home, ".gitconfig"), "[remote \"origin\"]\n\turl = https://github.com/acme/global.git\n")
			return newRepo(t).dir
		}},
		{"origins in the global and the repository's file", func(t *testing.T) string {
			writeFile(t, filepath.Join(home, ".gitconfig"), "[remote \"origin\"]\n\turl = https://github.com/acme/global.git\n")
			r := newRepo(t)
			r.git("remote", "add", "origin", "https://gitlab.example.com/acme/app.git")
			return r.dir
		}},
		{"an include in the repository's file", func(t *testing.T) string {
			inc := filepath.Join(t.TempDir(), "inc")
			writeFile(t, inc, "[remote \"origin\"]\n\turl = git@github.com:acme/included.git\n")
			r := newRepo(t)
			appendConfig(t, r, "[include]\n\tpath = "+inc+"\n")
			return r.dir
		}},
		{"a conditional include in the global file", func(t *testing.T) string {
			inc := filepath.Join(t.TempDir(), "inc")
			writeFile(t, inc, "[core]\n\tbare = true\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir:/\"]\n\tpath = "+inc+"\n")
			return newRepo(t).dir
		}},
		{"core.bare", func(t *testing.T) string {
			r := newRepo(t)
			r.git("config", "core.bare", "true")
			return r.dir
		}},
		{"core.worktree elsewhere", func(t *testing.T) string {
			r := newRepo(t)
			r.git("config", "core.worktree", t.TempDir())
			return r.dir
		}},
		{"a repository format git does not know", func(t *testing.T) string {
			r := newRepo(t)
			r.git("config", "core.repositoryformatversion", "9")
			return r.dir
		}},
		{"an extension", func(t *testing.T) string {
			r := newRepo(t)
			r.git("config", "core.repositoryformatversion", "1")
			r.git("config", "extensions.noSuchExtension", "true")
			return r.dir
		}},
		{"a configuration git refuses", func(t *testing.T) string {
			r := newRepo(t)
			r.git("remote", "add", "origin", "git@github.com:acme/app.git")
			appendConfig(t, r, "[broken\n")
			return r.dir
		}},
		{"an origin without a URL", func(t *testing.T) string {
			r := newRepo(t)
			appendConfig(t, r, "[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
			return r.dir
		}},
		{"an origin in .git/remotes", func(t *testing.T) string {
			r := newRepo(t)
			writeFile(t, filepath.Join(r.dir, ".git", "remotes", "origin"), "URL: git@github.com:acme/old.git\n")
			return r.dir
		}},
		{"a subdirectory of a working tree", func(t *testing.T) string {
			r := newRepo(t)
			sub := filepath.Join(r.dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			return sub
		}},
		{"an empty .git directory inside a working tree", func(t *testing.T) string {
			r := newRepo(t)
			sub := filepath.Join(r.dir, "sub")
			if err := os.MkdirAll(filepath.Join(sub, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			return sub
		}},
		{"a linked worktree", func(t *testing.T) string {
			r := newRepo(t)
			r.commit(at(0), "initial", "README", "x\n")
			wt := filepath.Join(t.TempDir(), "wt")
			r.git("worktree", "add", "-q", wt)
			return wt
		}},
		{"a .git that is a symbolic link", func(t *testing.T) string {
			r := newRepo(t)
			dir := t.TempDir()
			if err := os.Symlink(filepath.Join(r.dir, ".git"), filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
		{"a bare repository", func(t *testing.T) string {
			dir := t.TempDir()
			repo{t: t, dir: dir}.git("init", "-q", "--bare")
			return dir
		}},
		{"a configuration file over the bound", func(t *testing.T) string {
			r := newRepo(t)
			appendConfig(t, r, "[remote \"origin\"]\n\turl = git@github.com:acme/app.git\n"+strings.Repeat("# padding\n", maxConfigFile/10+1))
			return r.dir
		}},
		{"command-line configuration", func(t *testing.T) string {
			t.Setenv("GIT_CONFIG_PARAMETERS", "'core.bare'='true'")
			return newRepo(t).dir
		}},
		{"a relative global file", func(t *testing.T) string {
			t.Setenv("GIT_CONFIG_GLOBAL", "relative/config")
			return newRepo(t).dir
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []string{system, filepath.Join(home, ".gitconfig")} {
				os.Remove(f)
			}
			dir := c.setup(t)
			if answer, _ := inspectLocal(dir, lookGit()); answer != localUnknown {
				t.Errorf("answered %d from the files", answer)
			}
			isRepo, origin := gitAnswers(t, dir)
			cfg := config.Default()
			f, err := Select(context.Background(), cfg, dir)
			want := "none"
			switch {
			case strings.Contains(origin, "github.com"):
				want = "github"
			case isRepo:
				want = "git"
			}
			got := "none"
			if f != nil {
				got, _, _ = strings.Cut(f.Name(), " ")
			}
			if err != nil || got != want {
				t.Errorf("Select chose %s (%v); git's answers (%v, %q) say %s", got, err, isRepo, origin, want)
			}
		})
	}
}

// A FIFO in place of the repository's configuration is not opened to
// wait for a writer: the cycle does not hang on it, and git is left to
// deal with it.
func TestInspectLocalDoesNotBlockOnAFIFO(t *testing.T) {
	isolatedGitEnv(t)
	r := repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	cfg := filepath.Join(r.dir, ".git", "config")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan localAnswer, 1)
	go func() {
		a, _ := inspectLocal(r.dir, lookGit())
		done <- a
	}()
	select {
	case a := <-done:
		if a != localUnknown {
			t.Errorf("answered %d from a FIFO", a)
		}
	case <-time.After(time.Minute):
		t.Fatal("inspectLocal blocked on a FIFO")
	}
}

// A repository owned by another user is git's to accept or refuse
// (safe.directory).
func TestInspectLocalLeavesAnotherOwnersRepositoryToGit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	isolatedGitEnv(t)
	r := repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	if answer, _ := inspectLocal(r.dir, lookGit()); answer != localFound {
		t.Fatalf("own repository: answer %d", answer)
	}
	if err := os.Lchown(filepath.Join(r.dir, ".git"), 12345, 12345); err != nil {
		t.Fatal(err)
	}
	if answer, _ := inspectLocal(r.dir, lookGit()); answer != localUnknown {
		t.Errorf("another user's repository: answer %d", answer)
	}
	if isRepo, _ := gitAnswers(t, r.dir); isRepo {
		t.Error("git accepted another user's repository: the case proves nothing")
	}
}

// Select in a plain repository, or outside any, starts no process; with
// no git to ask, the files are not taken as an answer either.
func TestSelectStartsNoGitInAPlainRepository(t *testing.T) {
	isolatedGitEnv(t)
	r := repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.git("remote", "add", "origin", "https://gitlab.example.com/acme/app.git")
	cfg := config.Default()
	for dir, want := range map[string]string{r.dir: "git", t.TempDir(): "none"} {
		before := perfstat.Snapshot().Processes
		f, err := Select(context.Background(), cfg, dir)
		got := "none"
		if f != nil {
			got = f.Name()
		}
		if err != nil || got != want {
			t.Errorf("%s: Select chose %s (%v), want %s", dir, got, err, want)
		}
		if n := perfstat.Snapshot().Processes - before; n != 0 {
			t.Errorf("%s: Select started %d processes", dir, n)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if answer, _ := inspectLocal(r.dir, lookGit()); answer != localUnknown {
		t.Errorf("without git: answer %d, want the question left to git", answer)
	}
}
