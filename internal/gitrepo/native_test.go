package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitTrace puts a git first in PATH that records every command it runs
// (then runs the real git), and returns the function that says which
// subcommands ran since it was last called. The native state commit runs
// with proc.Exec, whose processes only a real program in PATH can watch.
func gitTrace(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		var ran []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			f := strings.Fields(l)
			for i := 0; i < len(f); i++ {
				if f[i] == "-C" || f[i] == "-c" {
					i++
					continue
				}
				ran = append(ran, f[i])
				break
			}
		}
		return ran
	}
}

// unsetenv removes k from the environment for the test.
func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // restores the old value at the end
	os.Unsetenv(k)
}

// settleNow lets every file's fingerprint stand at once, as if it had not
// changed for long: the tests change files within the file system's
// clock tick on purpose, and change their size too.
func settleNow(t *testing.T) {
	t.Helper()
	old := settleMargin
	settleMargin = -time.Hour
	t.Cleanup(func() { settleMargin = old })
}

// envMap is the environment git gets, as the native commit reads it.
func envMap() map[string]string {
	m := map[string]string{}
	for _, kv := range localGitEnv() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// The commit object ooda writes is the one `git commit-tree -p HEAD -m
// <msg> <tree>` writes with the same environment and configuration: the
// same object name, for identities from the environment, from user.*,
// from author.*/committer.* over user.*, with the crud git trims, in
// UTF-8, with a raw date in the environment or the clock's.
func TestNativeCommitObjectIsCommitTrees(t *testing.T) {
	dir, git := setup(t)
	tree := git("rev-parse", "HEAD^{tree}")
	head := git("rev-parse", "HEAD")
	cases := []struct {
		name  string
		env   map[string]string
		unset []string
		cfg   [][2]string
		msg   string
	}{
		{name: "environment", msg: "evolve: cycle #1 -- d (x)"},
		{name: "raw dates", env: map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +0130", "GIT_COMMITTER_DATE": "@1700000123 -0845"}, msg: "evolve: cycle #2 -- d (x)\n"},
		{name: "user config", unset: []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"},
			cfg: [][2]string{{"user.name", "Ann Example"}, {"user.email", "ann@example.invalid"}}, msg: "two\nlines"},
		{name: "author and committer config", unset: []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"},
			cfg: [][2]string{{"user.name", "U"}, {"user.email", "u@example.invalid"}, {"author.name", "Au Thor"}, {"committer.email", "c@example.invalid"}}, msg: "m"},
		{name: "crud and unicode", env: map[string]string{"GIT_AUTHOR_NAME": " .José <Ñ>\"; ", "GIT_COMMITTER_EMAIL": "<c@x.invalid>.", "GIT_AUTHOR_DATE": "@0000000017 +0000"},
			msg: "évolve: ü ☃"},
		{name: "utf-8 encoding named", cfg: [][2]string{{"i18n.commitEncoding", "UTF-8"}}, msg: "m"},
		{name: "TZ", env: map[string]string{"TZ": "America/St_Johns"}, msg: "m"},
		{name: "TZ path", env: map[string]string{"TZ": ":/usr/share/zoneinfo/Asia/Kathmandu"}, msg: "m"},
		{name: "empty TZ", env: map[string]string{"TZ": ""}, msg: "m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tz := strings.TrimPrefix(tc.env["TZ"], ":"); tz != "" {
				if !filepath.IsAbs(tz) {
					tz = filepath.Join("/usr/share/zoneinfo", tz)
				}
				if _, err := os.Stat(tz); err != nil {
					t.Skipf("no time zone data: %v", err)
				}
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			for _, k := range tc.unset {
				unsetenv(t, k)
			}
			for _, kv := range tc.cfg {
				git("config", kv[0], kv[1])
				defer git("config", "--unset", kv[0])
			}
			cfgOut, err := exec.Command("git", "-C", dir, "config", "-z", "--get-regexp", nativeConfigPattern).Output()
			if err != nil {
				t.Fatal(err)
			}
			cfg := parseConfig(string(cfgOut))
			for try := 0; ; try++ {
				before := time.Now()
				out, err := exec.Command("git", "-C", dir, "commit-tree", "-p", head, "-m", tc.msg, tree).Output()
				if err != nil {
					t.Fatal(err)
				}
				want := strings.TrimSpace(string(out))
				now := time.Now()
				// git dates by time(2), which the kernel may keep a tick
				// behind the clock Go reads.
				if before.Add(-20*time.Millisecond).Unix() != now.Unix() && try < 20 {
					continue // a second began in between: ask again
				}
				a, aok := gitIdent(authorWho, envMap(), cfg.ident, now)
				c, cok := gitIdent(committerWho, envMap(), cfg.ident, now)
				body, ok := commitObject(tree, head, a, c, tc.msg)
				if !aok || !cok || !ok {
					t.Fatalf("not made natively: %v %v %v (%q %q)", aok, cok, ok, a, c)
				}
				if got := hex.EncodeToString(hashObject(sha1.New, "commit", body)); got != want {
					t.Errorf("commit %s, git's %s:\n%s\ngit's:\n%s", got, want, body, git("cat-file", "-p", want))
				}
				break
			}
		})
	}
}

// What git would write otherwise, or refuse, is left to git: a date in
// another format, a TZ variable, a made-up identity, a name of crud only,
// a commit encoding, a message git would convert or refuse.
func TestNativeCommitObjectLeavesTheRestToGit(t *testing.T) {
	setup(t)
	cfg := identConfig{userName: "U", userEmail: "u@example.invalid"}
	now := time.Now()
	for name, c := range map[string]struct {
		env map[string]string
		cfg identConfig
		msg string
	}{
		"date format":     {env: map[string]string{"GIT_AUTHOR_DATE": "2023-01-01T00:00:00"}, cfg: cfg, msg: "m"},
		"date offset":     {env: map[string]string{"GIT_AUTHOR_DATE": "@17 +01:00"}, cfg: cfg, msg: "m"},
		"TZ rule":         {env: map[string]string{"TZ": "EST5EDT,M3.2.0,M11.1.0"}, cfg: cfg, msg: "m"},
		"TZDIR":           {env: map[string]string{"TZ": "Europe/Paris", "TZDIR": "/elsewhere"}, cfg: cfg, msg: "m"},
		"no name":         {env: map[string]string{}, cfg: identConfig{userEmail: "u@example.invalid"}, msg: "m"},
		"no address":      {env: map[string]string{}, cfg: identConfig{userName: "U"}, msg: "m"},
		"crud name":       {env: map[string]string{"GIT_AUTHOR_NAME": ".,;"}, cfg: cfg, msg: "m"},
		"empty name":      {env: map[string]string{"GIT_AUTHOR_NAME": ""}, cfg: cfg, msg: "m"},
		"encoding":        {env: map[string]string{}, cfg: identConfig{userName: "U", userEmail: "u@x", other: "i18n.commitencoding"}, msg: "m"},
		"latin-1 message": {env: map[string]string{}, cfg: cfg, msg: "caf\xe9"},
		"noncharacter":    {env: map[string]string{}, cfg: cfg, msg: "x\uFFFE"},
		"NUL":             {env: map[string]string{}, cfg: cfg, msg: "a\x00b"},
	} {
		env := map[string]string{}
		for k, v := range c.env {
			env[k] = v
		}
		a, aok := gitIdent(authorWho, env, c.cfg, now)
		cm, cok := gitIdent(committerWho, env, c.cfg, now)
		_, ok := commitObject(strings.Repeat("1", 40), strings.Repeat("2", 40), a, cm, c.msg)
		if aok && cok && ok {
			t.Errorf("%s: made natively (%q, %q)", name, a, cm)
		}
	}
	var m map[string]string
	if _, ok := gitIdent(authorWho, m, identConfig{userName: "U", userEmail: "u@x", other: "user.name"}, now); ok {
		t.Error("a name without a value is git's to refuse")
	}
}

// modeOf is a file's permission bits.
func modeOf(t *testing.T, name string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// twin copies dir's repository (working tree and .git) to a new
// directory, so that git and ooda can make the same change side by side.
func twin(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "twin")
	if out, err := exec.Command("cp", "-a", dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newCommitOn makes a commit object on HEAD (as git would) and returns it.
func newCommitOn(t *testing.T, dir, msg string) string {
	t.Helper()
	return gitIn(t, dir, "commit-tree", "-p", "HEAD", "-m", msg, "HEAD^{tree}")
}

// Moving the branch itself writes what `git update-ref -m <msg> <branch>
// <new> <old>` writes: the ref, and the same line in the branch's and
// HEAD's reflogs; from a loose ref or a packed one; with reflogs the
// repository may not keep.
func TestNativeMoveBranchIsUpdateRef(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prep   func(dir string)
		logAll string
	}{
		{name: "loose ref"},
		{name: "packed ref", prep: func(dir string) { gitIn(t, dir, "pack-refs", "--all") }},
		{name: "no reflogs kept", prep: func(dir string) {
			gitIn(t, dir, "config", "core.logAllRefUpdates", "false")
			os.RemoveAll(filepath.Join(dir, ".git", "logs"))
		}, logAll: "false"},
		{name: "reflogs of every ref", prep: func(dir string) {
			gitIn(t, dir, "config", "core.logAllRefUpdates", "always")
		}, logAll: "always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := setup(t)
			t.Setenv("GIT_COMMITTER_DATE", "@1700000000 +0200")
			t.Setenv("GIT_AUTHOR_DATE", "@1700000000 +0200")
			if tc.prep != nil {
				tc.prep(dir)
			}
			old := gitIn(t, dir, "rev-parse", "HEAD")
			other := twin(t, dir)
			msg := "commit: evolve: cycle #1 -- d  (x)"
			sha := newCommitOn(t, dir, "evolve")
			if got := newCommitOn(t, other, "evolve"); got != sha {
				t.Fatalf("twins differ: %s %s", got, sha)
			}
			gitIn(t, other, "update-ref", "-m", msg, "refs/heads/main", sha, old)
			committer, ok := gitIdent(committerWho, envMap(), identConfig{}, time.Now())
			if !ok {
				t.Fatal("no identity")
			}
			slots := makeSlots(filepath.Join(dir, ".git"), 2, true)
			defer slots.release()
			u := refUpdate{gitDir: filepath.Join(dir, ".git"), logAll: tc.logAll, committer: committer, slots: slots}
			if err := u.moveBranch("refs/heads/main", old, sha, msg); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := slots.take(); ok {
				t.Error("the locks were not made from the slots")
			}
			for _, f := range []string{"refs/heads/main", "packed-refs", "logs/HEAD", "logs/refs/heads/main", "HEAD"} {
				a, aerr := os.ReadFile(filepath.Join(dir, ".git", f))
				b, berr := os.ReadFile(filepath.Join(other, ".git", f))
				if !bytes.Equal(a, b) || (aerr == nil) != (berr == nil) {
					t.Errorf("%s:\n%q (%v)\ngit's:\n%q (%v)", f, a, aerr, b, berr)
				}
				if aerr == nil && berr == nil && modeOf(t, filepath.Join(dir, ".git", f)) != modeOf(t, filepath.Join(other, ".git", f)) {
					t.Errorf("%s: mode %v, git's %v", f, modeOf(t, filepath.Join(dir, ".git", f)), modeOf(t, filepath.Join(other, ".git", f)))
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".git", "*.lock")); len(left) > 0 {
				t.Errorf("locks left: %v", left)
			}
			gitIn(t, dir, "fsck", "--strict")
			if tc.logAll != "false" {
				if got := gitIn(t, dir, "reflog", "-1", "--format=%gs"); got != "commit: evolve: cycle #1 -- d (x)" {
					t.Errorf("reflog: %q", got)
				}
			}
		})
	}
}

// A branch that is no longer where the commit was built from is not
// moved (compare and swap): the error says where it is now. A lock
// another git holds — on the branch or on HEAD — leaves the move to git,
// the other's lock in place and nothing changed.
func TestNativeMoveBranchComparesAndSwaps(t *testing.T) {
	dir, git := setup(t)
	gd := filepath.Join(dir, ".git")
	old := git("rev-parse", "HEAD")
	sha := newCommitOn(t, dir, "state")
	slots := makeSlots(gd, 8, true)
	defer slots.release()
	u := refUpdate{gitDir: gd, committer: "t <t@example.invalid> 1 +0000", slots: slots}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	git("add", "b.txt")
	git("commit", "-q", "-m", "the user's")
	theirs := git("rev-parse", "HEAD")
	logBefore, _ := os.ReadFile(filepath.Join(gd, "logs", "HEAD"))
	err := u.moveBranch("refs/heads/main", old, sha, "commit: state")
	var moved *refMovedError
	if !errors.As(err, &moved) || moved.now.SHA != theirs || moved.now.Ref != "refs/heads/main" {
		t.Fatalf("moved from under: %v", err)
	}
	if git("rev-parse", "HEAD") != theirs {
		t.Error("the branch moved")
	}
	for _, lock := range []string{"refs/heads/main.lock", "HEAD.lock"} {
		if err := os.WriteFile(filepath.Join(gd, lock), []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := u.moveBranch("refs/heads/main", theirs, sha, "commit: state"); !errors.Is(err, errNotPlain) {
			t.Errorf("%s held: %v", lock, err)
		}
		if b, err := os.ReadFile(filepath.Join(gd, lock)); err != nil || string(b) != "theirs" {
			t.Errorf("%s: %q %v", lock, b, err)
		}
		os.Remove(filepath.Join(gd, lock))
		if git("rev-parse", "HEAD") != theirs {
			t.Errorf("%s held: the branch moved", lock)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(gd, "refs", "heads", "*.lock")); len(left) > 0 {
		t.Errorf("locks left: %v", left)
	}
	if logAfter, _ := os.ReadFile(filepath.Join(gd, "logs", "HEAD")); !bytes.Equal(logBefore, logAfter) {
		t.Error("the reflog changed")
	}
	// HEAD on another branch now: not this move's to make.
	git("checkout", "-q", "-b", "other")
	if err := u.moveBranch("refs/heads/main", theirs, sha, "commit: state"); !errors.Is(err, errNotPlain) {
		t.Errorf("HEAD elsewhere: %v", err)
	}
	if git("rev-parse", "main") != theirs {
		t.Error("main moved")
	}
}

// settleIndex makes every file of the working tree older than the index
// (git refreshes their entries), so that no entry is racily clean, as
// in a repository whose files were not all written this very second.
func settleIndex(t *testing.T, dir string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !strings.Contains(p, string(filepath.Separator)+".git") {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	gitIn(t, dir, "update-index", "-q", "--really-refresh")
}

// nativePrep is Prepare with git started as in production (proc.Exec),
// failing the test unless the native path took it.
func nativePrep(t *testing.T, dir string, paths []string) *Prep {
	t.Helper()
	p := Prepare(context.Background(), dir, nil, "", 0, paths)
	if !p.OK || p.Err != nil {
		t.Fatalf("Prepare: ok %v, %v", p.OK, p.Err)
	}
	if p.Repo.top == "" || p.base == nil || p.base.native == nil {
		t.Fatalf("not prepared natively: top %q base %v", p.Repo.top, p.base)
	}
	return p
}

// The whole state commit without a git process once what it asks git is
// remembered: the tree `git add` makes, the commit git's plumbing makes,
// the branch, reflog and index git's would be; the repository sound, git
// status clean, nothing staged, no temporary file left.
func TestNativeStateCommitRunsNoGit(t *testing.T) {
	settleNow(t)
	ran := gitTrace(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	paths := []string{"s/state.json", "s/log.jsonl", "s/d/lens.json"}
	ctx := context.Background()
	for i := range 3 {
		p := nativePrep(t, dir, paths)
		os.MkdirAll(filepath.Join(dir, "s", "d"), 0o755)
		for _, q := range paths {
			os.WriteFile(filepath.Join(dir, q), []byte(strings.Repeat("x", i+1)+"\n"), 0o644)
		}
		want := indexTree(t, dir, paths)
		ran()
		c, err := p.Commit(ctx, "evolve: cycle #"+strconv.Itoa(i+1)+" -- d (x)", paths)
		if err != nil || c == nil || c.IndexErr != nil {
			t.Fatalf("commit %d: %+v, %v", i, c, err)
		}
		if r := ran(); len(r) > 0 {
			t.Errorf("commit %d ran git: %q", i, r)
		}
		if got := git("rev-parse", "HEAD^{tree}"); got != want {
			t.Errorf("commit %d: tree %s, want %s", i, got, want)
		}
		if got := git("rev-parse", "HEAD"); got != c.SHA {
			t.Errorf("HEAD %s, commit %s", got, c.SHA)
		}
		// The commit's objects are one pack, read-only as git makes its
		// packs, and nothing of it is loose.
		if _, err := os.Stat(filepath.Join(dir, ".git", "objects", c.SHA[:2], c.SHA[2:])); err == nil {
			t.Errorf("commit %d is a loose object", i)
		}
		packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
		if len(packs) != 2*(i+1) {
			t.Errorf("after commit %d: %d pack files", i, len(packs))
		}
		for _, f := range packs {
			if m := modeOf(t, f); m != 0o444 {
				t.Errorf("%s's mode is %v, not git's 0444", f, m)
			}
		}
	}
	// A fourth Prepare asks git nothing: everything is remembered.
	ran()
	p := nativePrep(t, dir, paths)
	if r := ran(); len(r) > 0 {
		t.Errorf("a prepared commit with nothing new to learn ran git: %q", r)
	}
	p.Release()
	git("fsck", "--strict", "--no-dangling")
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("git status: %q", st)
	}
	if st := git("diff", "--cached", "--name-only"); st != "" {
		t.Errorf("staged: %q", st)
	}
	if log := git("log", "-g", "-3", "--format=%gs", "HEAD"); log != "commit: evolve: cycle #3 -- d (x)\ncommit: evolve: cycle #2 -- d (x)\ncommit: evolve: cycle #1 -- d (x)" {
		t.Errorf("HEAD's reflog: %q", log)
	}
	if n := git("rev-list", "--count", "HEAD"); n != "4" {
		t.Errorf("%s commits", n)
	}
	// What the commits did not use is back in the pool, empty.
	pool, _ := os.ReadDir(slotsDir(filepath.Join(dir, ".git")))
	for _, e := range pool {
		fi, err := e.Info()
		if !strings.HasPrefix(e.Name(), "free-") || err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Errorf("left in the pool: %s (%v)", e.Name(), fi)
		}
	}
	if len(pool) > maxFreeSlots {
		t.Errorf("%d files in the pool", len(pool))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "tmp_*")); len(left) > 0 {
		t.Errorf("temporary objects left: %v", left)
	}
}

// The index ooda writes is byte for byte the one `git update-index -z
// --index-info` writes for the same entries: entries without stat data,
// the cache tree invalidated along the paths, a version 3 index written
// as 2, the resolve-undo record kept, the checksum.
func TestNativeIndexIsUpdateIndexs(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(dir string)
	}{
		{name: "cache tree", prep: func(dir string) {}},
		{name: "no cache tree", prep: func(dir string) {
			ls := gitIn(t, dir, "ls-tree", "-r", "-z", "HEAD")
			os.Remove(filepath.Join(dir, ".git", "index"))
			cmd := exec.Command("git", "-C", dir, "update-index", "-z", "--index-info")
			cmd.Stdin = strings.NewReader(ls)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}},
		{name: "version 3", prep: func(dir string) { gitIn(t, dir, "update-index", "--index-version", "3") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, git := setup(t)
			for _, f := range []string{"s/a.json", "s/b.json", "s/d/c.json", "z.txt"} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644)
			}
			// Files older than the index: no entry is racily clean.
			past := time.Now().Add(-time.Hour)
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && !strings.Contains(p, ".git") {
					os.Chtimes(p, past, past)
				}
				return nil
			})
			git("add", ".")
			git("commit", "-q", "-m", "files")
			git("write-tree")
			tc.prep(dir)
			other := twin(t, dir)
			nb := gitIn(t, dir, "hash-object", "-w", "z.txt")
			in := "100755 " + nb + "\ts/a.json\x00" + "0 " + strings.Repeat("0", 40) + "\ts/b.json\x00" + "100644 " + nb + "\ts/new/n.json\x00"
			cmd := exec.Command("git", "-C", other, "update-index", "-z", "--index-info")
			cmd.Stdin = strings.NewReader(in)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index: %v %s", err, out)
			}
			r := &Repo{Dir: dir, gitDir: filepath.Join(dir, ".git"), top: dir}
			changes := []change{{mode: "100755", oid: nb, path: "s/a.json"}, {mode: "0", oid: strings.Repeat("0", 40), path: "s/b.json", deleted: true},
				{mode: "100644", oid: nb, path: "s/new/n.json"}}
			slots := makeSlots(filepath.Join(dir, ".git"), 2, true)
			defer slots.release()
			if err := r.stageNative(changes, sha1.New, slots); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			b, _ := os.ReadFile(filepath.Join(other, ".git", "index"))
			if am, bm := modeOf(t, filepath.Join(dir, ".git", "index")), modeOf(t, filepath.Join(other, ".git", "index")); am != bm {
				t.Errorf("index mode %v, git's %v", am, bm)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("index differs from git's:\n%s\ngit's:\n%s", gitIn(t, dir, "ls-files", "-s", "--debug"), gitIn(t, other, "ls-files", "-s", "--debug"))
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
				t.Error("index.lock left")
			}
		})
	}
}

// An index git updates in its own way, or that another git holds, is
// left to git: nothing is written.
func TestNativeIndexLeavesTheRestToGit(t *testing.T) {
	for name, prep := range map[string]func(t *testing.T, dir string){
		"locked": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "index.lock"), []byte("theirs"), 0o644)
		},
		"untracked cache": func(t *testing.T, dir string) {
			gitIn(t, dir, "update-index", "--untracked-cache")
			gitIn(t, dir, "status", "--porcelain")
		},
		"split index":   func(t *testing.T, dir string) { gitIn(t, dir, "update-index", "--split-index") },
		"version 4":     func(t *testing.T, dir string) { gitIn(t, dir, "update-index", "--index-version", "4") },
		"skip-worktree": func(t *testing.T, dir string) { gitIn(t, dir, "update-index", "--skip-worktree", "a.txt") },
		"intent to add": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "n.txt"), []byte("n\n"), 0o644)
			gitIn(t, dir, "add", "-N", "n.txt")
		},
		"racily clean": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "r.txt"), []byte("r\n"), 0o644)
			gitIn(t, dir, "add", "r.txt")
			// The index, and so the entry, as new as the file.
			fi, _ := os.Stat(filepath.Join(dir, ".git", "index"))
			os.Chtimes(filepath.Join(dir, "r.txt"), fi.ModTime(), fi.ModTime())
			os.Chtimes(filepath.Join(dir, ".git", "index"), fi.ModTime(), fi.ModTime())
			ix, err := readIndex(filepath.Join(dir, ".git", "index"), sha1.New)
			if err != nil {
				t.Skip("index not plain here")
			}
			i, _ := ix.find("r.txt")
			if ix.entries[i].mtimeSec() < ix.mtime {
				t.Skip("the entry is not racy here")
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, git := setup(t)
			prep(t, dir)
			before, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			lockBefore, _ := os.ReadFile(filepath.Join(dir, ".git", "index.lock"))
			r := &Repo{Dir: dir, gitDir: filepath.Join(dir, ".git"), top: dir}
			oid := git("rev-parse", "HEAD:a.txt")
			slots := makeSlots(filepath.Join(dir, ".git"), 1, true)
			defer slots.release()
			if err := r.stageNative([]change{{mode: "100644", oid: oid, path: "s/x.json"}}, sha1.New, slots); !errors.Is(err, errNotPlain) {
				t.Fatalf("stageNative: %v", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			lockAfter, _ := os.ReadFile(filepath.Join(dir, ".git", "index.lock"))
			if !bytes.Equal(before, after) || !bytes.Equal(lockBefore, lockAfter) {
				t.Error("the index or its lock changed")
			}
		})
	}
}

// Prepare finds the repository as git does, or leaves it to git: the git
// directory and prefix of `git rev-parse` from the top, a subdirectory or
// a path through a symbolic link; git's answer for a linked worktree, a
// separate work tree, a bare repository on the way, an environment that
// moves the repository.
func TestNativeDiscoveryAgreesWithGit(t *testing.T) {
	dir, git := setup(t)
	os.MkdirAll(filepath.Join(dir, "svc", "x"), 0o755)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(filepath.Join(dir, "svc"), link)
	for _, d := range []string{dir, filepath.Join(dir, "svc", "x"), filepath.Join(link, "x")} {
		top, gd, prefix, ok := discover(d)
		want := strings.Split(gitIn(t, d, "rev-parse", "--absolute-git-dir", "--show-prefix", "--show-toplevel"), "\n")
		if len(want) == 2 {
			want = []string{want[0], "", want[1]}
		}
		if !ok || gd != want[0] || prefix != want[1] || top != want[2] {
			t.Errorf("%s: %q %q %q %v, git: %q", d, gd, prefix, top, ok, want)
		}
	}
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", wt)
	if _, _, _, ok := discover(wt); ok {
		t.Error("a linked worktree was found without git")
	}
	if _, _, _, ok := discover(filepath.Join(dir, ".git")); ok {
		t.Error("a git directory was taken for a working tree")
	}
	bare := t.TempDir()
	gitIn(t, bare, "init", "-q", "--bare")
	os.MkdirAll(filepath.Join(bare, "w"), 0o755)
	if _, _, _, ok := discover(filepath.Join(bare, "w")); ok {
		t.Error("a directory in a bare repository was taken for a working tree")
	}
	for name, set := range map[string]func(){
		"GIT_DIR":        func() { t.Setenv("GIT_DIR", filepath.Join(dir, ".git")) },
		"GIT_INDEX_FILE": func() { t.Setenv("GIT_INDEX_FILE", filepath.Join(dir, "idx")) },
		"core.worktree":  func() { git("config", "core.worktree", dir) },
		"core.bare":      func() { git("config", "core.bare", "true") },
		"extension":      func() { git("config", "extensions.preciousObjects", "true") },
	} {
		t.Run(name, func(t *testing.T) {
			set()
			defer func() {
				for _, k := range []string{"core.worktree", "core.bare", "extensions.preciousObjects"} {
					exec.Command("git", "-C", dir, "config", "--unset", k).Run()
				}
			}()
			p := Prepare(context.Background(), dir, nil, "", 0, []string{"state.json"})
			if p.Repo != nil && p.Repo.top != "" {
				t.Errorf("prepared natively")
			}
		})
	}
}

// The user commits after the state commit was prepared: the branch moved
// from where it was built, so the native move refuses, and the commit is
// built again on top of the user's (with git), which stays.
func TestNativeStateCommitAfterTheBranchMoved(t *testing.T) {
	dir, git := setup(t)
	settleIndex(t, dir)
	p := nativePrep(t, dir, []string{"state.json"})
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	git("add", "mine.txt")
	git("commit", "-q", "-m", "the user's commit")
	theirs := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"state.json"})
	if err != nil || c == nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	if parent := git("rev-parse", "HEAD^"); parent != theirs || git("rev-parse", "HEAD") != c.SHA {
		t.Errorf("HEAD^ = %s, want the user's commit %s", parent, theirs)
	}
	if files := git("ls-tree", "--name-only", "HEAD"); files != "a.txt\nmine.txt\nstate.json" {
		t.Errorf("HEAD's tree: %q", files)
	}
	git("fsck", "--strict")
}

// State commits made while the user commits with git, at the same time
// and over and over: no commit of either is lost, every move of the
// branch is in its reflog, and the repository stays sound.
func TestNativeStateCommitRacesGitCommit(t *testing.T) {
	settleNow(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	const rounds = 12
	done := make(chan []string)
	go func() {
		var made []string
		for i := range rounds {
			os.WriteFile(filepath.Join(dir, "user.txt"), []byte(strconv.Itoa(i)+"\n"), 0o644)
			msg := "user " + strconv.Itoa(i)
			if exec.Command("git", "-C", dir, "add", "user.txt").Run() == nil &&
				exec.Command("git", "-C", dir, "commit", "-q", "-m", msg, "--", "user.txt").Run() == nil {
				made = append(made, msg)
			}
		}
		done <- made
	}()
	var ours []string
	for i := range rounds {
		p := Prepare(context.Background(), dir, nil, "", 0, []string{"s/state.json"})
		if !p.OK {
			t.Fatalf("Prepare %d: %v", i, p.Err)
		}
		os.MkdirAll(filepath.Join(dir, "s"), 0o755)
		os.WriteFile(filepath.Join(dir, "s/state.json"), []byte(strconv.Itoa(i)+"\n"), 0o644)
		c, err := p.Commit(context.Background(), "evolve: cycle #"+strconv.Itoa(i+1)+" -- x (y)", []string{"s/state.json"})
		if err != nil {
			// Only git's refusal to wait longer for a lock the other
			// holds; the branch is then as the other left it.
			if !strings.Contains(err.Error(), "lock") {
				t.Fatalf("commit %d: %v", i, err)
			}
			continue
		}
		if c != nil {
			ours = append(ours, c.SHA)
		}
	}
	theirs := <-done
	if len(ours) == 0 || len(theirs) == 0 {
		t.Fatalf("%d state commits, %d of the user's", len(ours), len(theirs))
	}
	subjects := git("log", "--format=%s", "main")
	for _, m := range theirs {
		if !strings.Contains(subjects, m+"\n") {
			t.Errorf("the user's %q was lost", m)
		}
	}
	for _, sha := range ours {
		if err := exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", sha, "main").Run(); err != nil {
			t.Errorf("state commit %s was lost", sha)
		}
	}
	n, _ := strconv.Atoi(git("rev-list", "--count", "main"))
	if logs := strings.Count(git("reflog", "show", "--format=%H", "main"), "\n") + 1; logs != n {
		t.Errorf("%d reflog entries for %d commits", logs, n)
	}
	git("fsck", "--strict")
}

// Hooks git would run are git's to run: with a reference-transaction
// hook the branch is moved by `git update-ref`, with a post-index-change
// hook the index is updated by `git update-index`; each hook sees its
// event, and the commit is the same.
func TestNativeStateCommitLeavesHookedStepsToGit(t *testing.T) {
	for hook, cmd := range map[string]string{"reference-transaction": "update-ref", "post-index-change": "update-index"} {
		t.Run(hook, func(t *testing.T) {
			settleNow(t)
			ran := gitTrace(t)
			dir, git := setup(t)
			settleIndex(t, dir)
			mark := filepath.Join(t.TempDir(), "ran")
			write(t, filepath.Join(dir, ".git", "hooks", hook), "#!/bin/sh\ncat >/dev/null\necho ran >> '"+mark+"'\n")
			os.Chmod(filepath.Join(dir, ".git", "hooks", hook), 0o755)
			p := nativePrep(t, dir, []string{"state.json"})
			os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o644)
			ran()
			c, err := p.Commit(context.Background(), "evolve: cycle #1 -- x (y)", []string{"state.json"})
			if err != nil || c == nil || c.IndexErr != nil {
				t.Fatalf("commit %+v, %v", c, err)
			}
			if r := ran(); !slices.Equal(r, []string{cmd}) {
				t.Errorf("ran %q, want only %s", r, cmd)
			}
			if _, err := os.Stat(mark); err != nil {
				t.Errorf("the %s hook did not run", hook)
			}
			if st := git("status", "--porcelain"); st != "" {
				t.Errorf("git status: %q", st)
			}
		})
	}
}

// A file planted in the pool of temporary files — a symbolic link, a
// second name of another file — is never written through: the other
// file stays as it was, and the object is written all the same.
func TestSlotsNeverWriteThroughAPlantedFile(t *testing.T) {
	dir, _ := setup(t)
	gd := filepath.Join(dir, ".git")
	linked, named := filepath.Join(t.TempDir(), "linked"), filepath.Join(t.TempDir(), "named")
	write(t, linked, "precious\n")
	write(t, named, "precious\n")
	os.MkdirAll(slotsDir(gd), 0o755)
	os.Symlink(linked, filepath.Join(slotsDir(gd), "free-link"))
	os.Link(named, filepath.Join(slotsDir(gd), "free-hardlink"))
	s := makeSlots(gd, 4, true)
	lw := newLooseWriter(filepath.Join(gd, "objects"), s)
	body := []byte("hello\n")
	oid := hex.EncodeToString(hashObject(sha1.New, "blob", body))
	if err := lw.write(oid, "blob", body); err != nil {
		t.Fatal(err)
	}
	s.release()
	for _, victim := range []string{linked, named} {
		if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
			t.Errorf("%s now holds %q", victim, b)
		}
	}
	if got := gitIn(t, dir, "cat-file", "-p", oid); got != "hello" {
		t.Errorf("object %s holds %q", oid, got)
	}
}
