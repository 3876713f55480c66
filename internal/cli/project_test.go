package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oodaConfig is a configuration as `ooda init` writes it, as far as the
// project search looks.
const oodaConfig = `{"domains": {}, "schema_version": "1.5.0"}` + "\n"

// mkfile writes content at root/rel, creating the directories.
func mkfile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdir(t *testing.T, root, rel string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// tempRoot is a fresh directory without symlinks in its path, so the
// paths the search returns compare equal to the ones the test builds.
func tempRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustFind(t *testing.T, start string) discovery {
	t.Helper()
	d, err := findProject(start)
	if err != nil {
		t.Fatalf("findProject(%s): %v", start, err)
	}
	return d
}

func TestFindProjectFromASubdirectory(t *testing.T) {
	root := tempRoot(t)
	mkfile(t, root, "config.json", oodaConfig)
	start := mkdir(t, root, "a/b")
	d := mustFind(t, start)
	if !d.Found || d.Dir != root || d.From != filepath.Join("a", "b") {
		t.Fatalf("got %+v, want the project %s found from a/b", d, root)
	}
	if d := mustFind(t, root); !d.Found || d.Dir != root || d.From != "." {
		t.Fatalf("from the project itself: got %+v", d)
	}
}

// A directory holding .git is the top of the search: a project above the
// repository is not the repository's project.
func TestFindProjectStopsAtTheRepositoryRoot(t *testing.T) {
	for _, gitKind := range []string{"directory", "file"} {
		t.Run(gitKind, func(t *testing.T) {
			outer := tempRoot(t)
			mkfile(t, outer, "config.json", oodaConfig)
			repo := mkdir(t, outer, "repo")
			if gitKind == "directory" {
				mkdir(t, repo, ".git")
			} else {
				// A worktree or a submodule has a .git file.
				mkfile(t, repo, ".git", "gitdir: ../.git/worktrees/repo\n")
			}
			start := mkdir(t, repo, "sub")
			d := mustFind(t, start)
			if d.Found || d.Dir != start || d.From != "." {
				t.Fatalf("got %+v, want no project (the search stops at %s)", d, repo)
			}
			// The repository root itself is searched.
			mkfile(t, repo, "config.json", oodaConfig)
			if d := mustFind(t, start); !d.Found || d.Dir != repo {
				t.Fatalf("with a config at the repository root: got %+v, want %s", d, repo)
			}
		})
	}
}

// A config.json that is not a regular file is passed over without being
// opened: a named pipe would block a reader, and a directory or a pipe
// named config.json is not a configuration.
func TestFindProjectPassesOverWhatIsNotARegularFile(t *testing.T) {
	root := tempRoot(t)
	mkfile(t, root, "config.json", oodaConfig)
	cases := map[string]func(p string){
		"directory": func(p string) { mkdir(t, p, "") },
		"fifo": func(p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		},
		"symlink-to-fifo": func(p string) {
			fifo := filepath.Join(filepath.Dir(p), "pipe")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
			if err := os.Symlink(fifo, p); err != nil {
				t.Fatal(err)
			}
		},
		"dangling-symlink": func(p string) {
			if err := os.Symlink("nowhere.json", p); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			start := mkdir(t, root, name)
			mk(filepath.Join(start, "config.json"))
			d := mustFind(t, start)
			if !d.Found || d.Dir != root {
				t.Fatalf("got %+v, want the project %s above it", d, root)
			}
			if name != "dangling-symlink" && (len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], "not a regular file")) {
				t.Errorf("skipped %q, want the %s named as not a regular file", d.Skipped, name)
			}
		})
	}
}

// A config.json that belongs to something else (a JavaScript package's,
// a tool's) does not make a project; the note names it.
func TestFindProjectPassesOverOtherConfigFiles(t *testing.T) {
	root := tempRoot(t)
	mkfile(t, root, "config.json", oodaConfig)
	for name, content := range map[string]string{
		"tool":     `{"name": "webpack", "entry": "./src"}`,
		"array":    `[1, 2, 3]`,
		"notjson":  "port = 8080\n",
		"empty":    "",
		"versions": `{"schema_version": 2}`,
	} {
		t.Run(name, func(t *testing.T) {
			start := mkdir(t, root, name)
			mkfile(t, start, "config.json", content)
			d := mustFind(t, start)
			if !d.Found || d.Dir != root || d.From != name {
				t.Fatalf("got %+v, want the project %s above it", d, root)
			}
			if len(d.Skipped) != 1 || !strings.HasPrefix(d.Skipped[0], filepath.Join(start, "config.json")) {
				t.Errorf("skipped %q, want %s/config.json", d.Skipped, start)
			}
			if note := projectNote(d); !strings.Contains(note, "passed over "+filepath.Join(start, "config.json")) {
				t.Errorf("note %q does not name the config.json passed over", note)
			}
		})
	}
}

// An ooda configuration with a mistake further down still marks its
// project, so the command run from a subdirectory reports the mistake
// instead of "config.json not found".
func TestFindProjectRecognisesABrokenOodaConfig(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":    `{"mission": "x", "domains": {"api": {"weight": 1,,}}}`,
		"truncated": `{"schema_version": "1.5.0", "project": {"name": "app"}, "domains": {"api": {`,
		"handmade":  `{"schema_version": "1.5.0", "project": {"name": "app"}}`,
		"bom":       "\xef\xbb\xbf" + oodaConfig,
	} {
		t.Run(name, func(t *testing.T) {
			root := tempRoot(t)
			mkfile(t, root, "config.json", content)
			if d := mustFind(t, mkdir(t, root, "sub")); !d.Found || d.Dir != root {
				t.Fatalf("got %+v, want the project %s", d, root)
			}
		})
	}
}

// The search follows the physical path, as git's does; a project reached
// through a symlinked directory is named by the path the user is in.
func TestFindProjectThroughSymlinkedParents(t *testing.T) {
	base := tempRoot(t)
	proj := mkdir(t, base, "real/proj")
	mkfile(t, proj, "config.json", oodaConfig)
	mkdir(t, proj, "sub/deeper")
	link := filepath.Join(base, "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	d := mustFind(t, filepath.Join(link, "sub", "deeper"))
	if !d.Found || d.Dir != link || d.From != filepath.Join("sub", "deeper") {
		t.Fatalf("through %s: got %+v, want the project named %s", link, d, link)
	}

	// A symlink inside a project that leads out of it: the real parent
	// is searched, not the directory the link sits in, so the commands
	// and git agree on where the user is.
	other := mkdir(t, base, "elsewhere/dir")
	mkdir(t, base, "elsewhere/.git")
	if err := os.Symlink(other, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	if d := mustFind(t, filepath.Join(proj, "out")); d.Found {
		t.Fatalf("from a symlink out of the project: got %+v, want no project (the real parent holds none)", d)
	}
	// The real parent's project is found instead.
	mkfile(t, base, "elsewhere/config.json", oodaConfig)
	if d := mustFind(t, filepath.Join(proj, "out")); !d.Found || d.Dir != filepath.Join(base, "elsewhere") {
		t.Fatalf("got %+v, want %s/elsewhere", d, base)
	}
}

func TestEnclosingProject(t *testing.T) {
	outer := tempRoot(t)
	mkfile(t, outer, "config.json", oodaConfig)
	sub := mkdir(t, outer, "services/api")
	if got, err := enclosingProject(sub); err != nil || got != outer {
		t.Fatalf("enclosingProject(%s) = %q, %v; want %s", sub, got, err, outer)
	}
	// The project itself is not inside a project.
	mkdir(t, outer, ".git")
	if got, err := enclosingProject(outer); err != nil || got != "" {
		t.Fatalf("enclosingProject(%s) = %q, %v; want none", outer, got, err)
	}
	// A directory init is to create.
	if got, err := enclosingProject(filepath.Join(sub, "new", "dir")); err != nil || got != outer {
		t.Fatalf("for a directory that does not exist: %q, %v; want %s", got, err, outer)
	}
	// A nested repository is a project of its own.
	nested := mkdir(t, outer, "vendor/lib")
	mkdir(t, nested, ".git")
	if got, err := enclosingProject(nested); err != nil || got != "" {
		t.Fatalf("enclosingProject(%s) = %q, %v; want none for a repository root", nested, got, err)
	}
	// A config.json of its own does not hide the project above.
	mkfile(t, sub, "config.json", oodaConfig)
	if got, err := enclosingProject(sub); err != nil || got != outer {
		t.Fatalf("enclosingProject(%s) with its own config = %q, %v; want %s", sub, got, err, outer)
	}
}
