package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree records every entry under dir: a file's content, a symlink's
// target, or the kind of anything else. Nothing is opened but regular
// files, so a named pipe or a device is recorded without being read.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[rel] = "symlink to " + target
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if fi.Size() > 1<<20 {
				got[rel] = "large file"
				break
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[rel] = "file " + string(b)
		default:
			got[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// refusesGitignore runs `ooda init` in dir and asserts that it exits 2
// with an error naming dir's .gitignore and saying why (want), and that
// nothing in dir changed.
func refusesGitignore(t *testing.T, dir, want string) {
	t.Helper()
	before := tree(t, dir)
	code, stdout, stderr := run(t, dir, "init", "--yes")
	if code != ExitUsage {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	prefix := "ooda: " + filepath.Join(dir, ".gitignore") + ": "
	if !strings.HasPrefix(stderr, prefix) || !strings.Contains(stderr, want) || !strings.Contains(stderr, "ooda init changed nothing") {
		t.Errorf("stderr %q, want %q…%q", stderr, prefix, want)
	}
	after := tree(t, dir)
	if len(after) != len(before) {
		t.Errorf("init wrote in the project: before %v, after %v", before, after)
	}
	for name, was := range before {
		if after[name] != was {
			t.Errorf("%s changed: %q, then %q", name, was, after[name])
		}
	}
}

// A .gitignore that is a symlink to /dev/zero used to be read until
// memory ran out.
func TestInitRefusesGitignoreSymlinkedToDevZero(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	refusesGitignore(t, dir, "is a symlink to /dev/zero, and git does not read a .gitignore through a symlink")
}

// A .gitignore that is a named pipe with no writer used to hang init
// forever in the open.
func TestInitRefusesGitignoreThatIsANamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	refusesGitignore(t, dir, "not a regular file (a named pipe)")
}

// A .gitignore that is a device is refused without being read.
func TestInitRefusesGitignoreThatIsADevice(t *testing.T) {
	dir := t.TempDir()
	// 1:5 is /dev/zero's device number on Linux.
	if err := syscall.Mknod(filepath.Join(dir, ".gitignore"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
		t.Skipf("mknod needs privileges: %v", err)
	}
	// Opening it may be refused too (a nodev mount): either way, not read.
	code, stdout, stderr := run(t, dir, "init", "--yes")
	if code != ExitUsage || !strings.HasPrefix(stderr, "ooda: "+filepath.Join(dir, ".gitignore")+": ") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "config.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("init wrote config.json: %v", err)
	}
}

// A .gitignore that is a symlink out of the project used to have the
// outside file's bytes copied into the project's new .gitignore.
func TestInitRefusesGitignoreSymlinkedOutOfTheProject(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secretBytes = "ghp_initOutsideSecret0123456789\n"
	target := filepath.Join(outside, "t")
	if err := os.WriteFile(target, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/t", filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	refusesGitignore(t, dir, "is a symlink to ../outside/t")
	if b, _ := os.ReadFile(target); string(b) != secretBytes {
		t.Errorf("the outside file changed: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("init wrote outside the project: %v", entries)
	}
}

// A symlink that stays inside the project is refused as well: git does
// not read a .gitignore through a symlink, so entries written through it
// would ignore nothing, and the file it names is not init's to change.
func TestInitRefusesGitignoreSymlinkedInsideTheProject(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ignore-list"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ignore-list", filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	refusesGitignore(t, dir, "is a symlink to ignore-list")
}

// A .gitignore over the read limit is refused without being read.
func TestInitRefusesOversizedGitignore(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is what is refused, before any byte is read.
	if err := f.Truncate(16<<20 + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	refusesGitignore(t, dir, "16777217 bytes, larger than the read limit of 16 MiB")
}

func TestInitRefusesGitignoreThatIsADirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".gitignore"), 0o755); err != nil {
		t.Fatal(err)
	}
	refusesGitignore(t, dir, "not a regular file (a directory)")
}

// A regular .gitignore gets the missing entries appended after its own
// lines, once.
func TestInitAppendsToARegularGitignore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".gitignore")
	if err := os.WriteFile(p, []byte("build/\n/agent/safety/HALT"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	want := "build/\n/agent/safety/HALT\n# ooda: the cycle lock, the skill run logs and the HALT switch are local, never committed\nagent/state/evolve/.lock\nagent/state/evolve/runs/\n"
	if b, _ := os.ReadFile(p); string(b) != want {
		t.Errorf(".gitignore = %q, want %q", b, want)
	}
	code, stdout, stderr := run(t, dir, "init", "--yes", "--force")
	if code != 0 || strings.Contains(stdout, "Added to .gitignore") {
		t.Fatalf("second init: exit %d: %s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(p); string(b) != want {
		t.Errorf("second init changed .gitignore: %q", b)
	}
}

// config.json is replaced, never written through: a symlink out of the
// project at its name, to an existing file (with --force) or to one that
// does not exist yet, leaves the outside untouched.
func TestInitDoesNotWriteThroughASymlinkedConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool
		args   []string
	}{
		{"existing target, --force", true, []string{"--force"}},
		{"dangling", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			target := filepath.Join(outside, "config.json")
			if tc.exists {
				if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := filepath.Join(dir, "config.json")
			if err := os.Symlink(target, cfg); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, dir, append([]string{"init", "--yes"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, stdout, stderr)
			}
			fi, err := os.Lstat(cfg)
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("config.json is not a regular file now: %v %v", fi, err)
			}
			b, err := os.ReadFile(target)
			switch {
			case tc.exists && string(b) != "{}\n":
				t.Errorf("the outside file was written: %q", b)
			case !tc.exists && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("init created the outside file: %q %v", b, err)
			}
		})
	}
}

// An existing state.json is never written, even when it is a symlink out
// of the project; init neither reads it nor writes through it.
func TestInitLeavesASymlinkedStateFileAlone(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "passwd")
	if err := os.WriteFile(target, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evolve := filepath.Join(dir, "agent", "state", "evolve")
	if err := os.MkdirAll(evolve, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(evolve, "state.json")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, dir, "init", "--yes"); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(target); !bytes.Equal(b, []byte("root:x:0:0\n")) {
		t.Errorf("the outside file changed: %q", b)
	}
}

// agent/safety, the HALT file's directory, leading out of the project is
// refused before anything is written, like agent/ itself.
func TestInitRefusesSymlinkedHaltDirectoryOutsideTheProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "agent", "safety")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "init", "--yes")
	if code != ExitUsage || !strings.Contains(stderr, filepath.Join(dir, "agent", "safety")+" is a symlink to "+outside+", outside the project") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	for _, name := range []string{"config.json", ".gitignore"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("init wrote %s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("init wrote outside the project: %v", entries)
	}
}
