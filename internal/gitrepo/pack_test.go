package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/proc"
)

// packObjects are objects of every kind a state commit writes, and sizes
// on both sides of maxStoredObject and of the entry header's size steps.
func packObjects(t *testing.T) []packObject {
	t.Helper()
	var objs []packObject
	add := func(typ string, body []byte) []byte {
		raw := hashObject(sha1.New, typ, body)
		objs = append(objs, packObject{oid: hex.EncodeToString(raw), typ: typ, body: body})
		return raw
	}
	empty := add("blob", nil)
	small := add("blob", []byte("{\"n\": 1}\n"))
	add("blob", bytes.Repeat([]byte("x"), 15))
	add("blob", bytes.Repeat([]byte("y"), 16))
	large := add("blob", bytes.Repeat([]byte("{\"entry\": \"a line that repeats\"}\n"), 4000))
	add("blob", bytes.Repeat([]byte("z"), maxStoredObject))
	var tree []byte
	for _, e := range []struct {
		name string
		oid  []byte
	}{{"a.json", small}, {"empty", empty}, {"large.json", large}} {
		tree = append(append(append(tree, "100644 "+e.name...), 0), e.oid...)
	}
	root := add("tree", tree)
	add("commit", []byte("tree "+hex.EncodeToString(root)+"\nauthor t <t@example.invalid> 1700000000 +0000\ncommitter t <t@example.invalid> 1700000000 +0000\n\nstate\n"))
	return objs
}

// The pack and index a commit's objects are written as are what git
// itself reads and writes: `git index-pack` of the pack makes the same
// index byte for byte, `git verify-pack` and fsck accept them, git reads
// every object as it was given, and so does ReadLoose.
func TestPackIsWhatGitIndexPackWrites(t *testing.T) {
	dir, git := setup(t)
	objects := filepath.Join(dir, ".git", "objects")
	objs := packObjects(t)
	w := newPackWriter(objects, nil)
	for _, o := range objs {
		if err := w.write(o.oid, o.typ, o.body); err != nil {
			t.Fatal(err)
		}
		// A second write of the same object adds nothing.
		if err := w.write(o.oid, o.typ, o.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("indexes: %v", idx)
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	ours, _ := os.ReadFile(idx[0])
	theirs := filepath.Join(t.TempDir(), "git.idx")
	git("index-pack", "-o", theirs, pack)
	if b, _ := os.ReadFile(theirs); !bytes.Equal(b, ours) {
		t.Errorf("the index differs from git index-pack's (%d bytes, git's %d)", len(ours), len(b))
	}
	if got := git("verify-pack", "-s", idx[0]); !strings.Contains(got, "non delta: "+strconv.Itoa(len(objs))+" objects") {
		t.Errorf("verify-pack: %q", got)
	}
	git("fsck", "--strict")
	if m := modeOf(t, pack); m != 0o444 {
		t.Errorf("pack mode %v", m)
	}
	for _, o := range objs {
		cmd := exec.Command("git", "-C", dir, "cat-file", o.typ, o.oid)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, o.body) {
			t.Errorf("git cat-file %s %s: %d bytes, %v", o.typ, o.oid, len(out), err)
		}
		typ, body, ok := ReadLoose(objects, o.oid, 1<<20)
		if !ok || typ != o.typ || !bytes.Equal(body, o.body) {
			t.Errorf("ReadLoose %s: %q %d bytes %v", o.oid, typ, len(body), ok)
		}
		// Over the limit asked, it is not read.
		if len(o.body) > 0 {
			if _, _, ok := ReadLoose(objects, o.oid, int64(len(o.body)-1)); ok {
				t.Errorf("ReadLoose %s read %d bytes over a limit of %d", o.oid, len(o.body), len(o.body)-1)
			}
		}
	}
}

// What ReadLoose cannot be sure of in a pack is git's to read: an entry
// that is a delta (git reads it), and an entry whose bytes were damaged
// (then no longer the object).
func TestReadLooseLeavesDeltasAndDamageToGit(t *testing.T) {
	dir, git := setup(t)
	objects := filepath.Join(dir, ".git", "objects")
	base := bytes.Repeat([]byte("0123456789"), 10)
	target := append(bytes.Clone(base), "and more\n"...)
	baseOID := hashObject(sha1.New, "blob", base)
	targetOID := hex.EncodeToString(hashObject(sha1.New, "blob", target))
	// A delta of target on base: the sizes, a copy of the whole base,
	// an insert of the rest.
	delta := []byte{byte(len(base)), byte(len(target)), 0x80 | 0x10, byte(len(base)), byte(len(target) - len(base))}
	delta = append(delta, target[len(base):]...)
	var body bytes.Buffer
	body.Write(packHeader(2))
	var z *zlib.Writer
	appendPackEntry(&body, "blob", base, &z)
	body.WriteByte(7<<4 | byte(len(delta)&0x0f) | 0x80) // a REF_DELTA
	body.WriteByte(byte(len(delta) >> 4))
	body.Write(baseOID)
	zw := zlib.NewWriter(&body)
	zw.Write(delta)
	zw.Close()
	sum := sha1.Sum(body.Bytes())
	cmd := exec.Command("git", "-C", dir, "index-pack", "--stdin")
	cmd.Stdin = bytes.NewReader(append(body.Bytes(), sum[:]...))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	if got := git("cat-file", "blob", targetOID); got != strings.TrimSpace(string(target)) {
		t.Fatalf("git reads the delta as %q", got)
	}
	// A pack git wrote is git's to read, whole entries and deltas.
	for _, oid := range []string{hex.EncodeToString(baseOID), targetOID} {
		if _, _, ok := ReadLoose(objects, oid, 1<<20); ok {
			t.Errorf("ReadLoose read %s from git's pack", oid)
		}
	}
	// Marked as ooda's, its whole entry is read, its delta still not.
	idx, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	marks := packMarks(objects)
	os.MkdirAll(marks, 0o755)
	if len(idx) != 1 || os.Link(idx[0], filepath.Join(marks, filepath.Base(idx[0]))) != nil {
		t.Fatalf("cannot mark %v", idx)
	}
	if _, body, ok := ReadLoose(objects, hex.EncodeToString(baseOID), 1<<20); !ok || !bytes.Equal(body, base) {
		t.Errorf("the whole entry: %q, %v", body, ok)
	}
	if typ, _, ok := ReadLoose(objects, targetOID, 1<<20); ok {
		t.Errorf("ReadLoose read a delta entry as a %s", typ)
	}

	// A pack of ooda's, one byte of a blob changed after it was written.
	blob := []byte("{\"state\": \"as written\"}\n")
	oid := hex.EncodeToString(hashObject(sha1.New, "blob", blob))
	w := newPackWriter(objects, nil)
	w.write(oid, "blob", blob)
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ReadLoose(objects, oid, 1<<20); !ok {
		t.Fatal("the blob is not read before the damage")
	}
	packs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.pack"))
	for _, p := range packs {
		b, _ := os.ReadFile(p)
		if i := bytes.Index(b, []byte("as written")); i >= 0 {
			b[i] = 'A'
			os.Chmod(p, 0o644)
			os.WriteFile(p, b, 0o644)
		}
	}
	if _, body, ok := ReadLoose(objects, oid, 1<<20); ok {
		t.Errorf("ReadLoose read a damaged entry: %q", body)
	}
}

// packFiles are the pack-* files of dir's repository.
func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	f, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
	return f
}

// Every state commit writes a pack; once foldAt small ones are there
// they become one, every object still in a pack at every step; a pack
// kept by a .keep file, and the packs git wrote, are left as they are. git reads every object of
// the history (fsck, rev-list --objects), ooda reads HEAD's, and git gc
// repacks the result.
func TestFoldPacksKeepsEveryObject(t *testing.T) {
	settleNow(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	objects := filepath.Join(dir, ".git", "objects")
	kept := []byte("kept\n")
	keptOID := hex.EncodeToString(hashObject(sha1.New, "blob", kept))
	w := newPackWriter(objects, nil)
	w.write(keptOID, "blob", kept)
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	keep := strings.TrimSuffix(packFiles(t, dir)[0], filepath.Ext(packFiles(t, dir)[0]))
	os.WriteFile(keep+".keep", nil, 0o644)
	// And a small pack of git's: the setup's commit.
	git("repack", "-d", "-q")
	gits, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	n0 := len(packFiles(t, dir))
	paths := []string{"s/state.json", "s/d/lens.json"}
	os.MkdirAll(filepath.Join(dir, "s", "d"), 0o755)
	for i := range foldAt + 1 {
		p := nativePrep(t, dir, paths)
		for _, q := range paths {
			os.WriteFile(filepath.Join(dir, q), []byte(q+strconv.Itoa(i)+"\n"), 0o644)
		}
		want := indexTree(t, dir, paths)
		c, err := p.Commit(context.Background(), "evolve: cycle #"+strconv.Itoa(i+1)+" -- d (x)", paths)
		if err != nil || c == nil || c.IndexErr != nil {
			t.Fatalf("commit %d: %+v, %v", i, c, err)
		}
		if got := git("rev-parse", "HEAD^{tree}"); got != want {
			t.Errorf("commit %d: tree %s, want %s", i, got, want)
		}
		git("fsck", "--strict", "--no-dangling")
		n := len(packFiles(t, dir))
		switch {
		case i < foldAt-1 && n != n0+2*(i+1):
			t.Errorf("after commit %d: %d pack files, want %d", i, n, n0+2*(i+1))
		case i == foldAt-1 && n != n0+2:
			t.Errorf("after commit %d (the fold): %d pack files: %v", i, n, packFiles(t, dir))
		}
	}
	if _, err := os.Stat(keep + ".pack"); err != nil {
		t.Errorf("the kept pack was folded: %v", err)
	}
	for _, g := range gits {
		if _, err := os.Stat(g); err != nil {
			t.Errorf("a pack of git's was folded: %v", err)
		}
	}
	if missing := git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)"); strings.Count(missing, "\n")+1 < 3*(foldAt+1) {
		t.Errorf("only %d objects", strings.Count(missing, "\n")+1)
	}
	cmd := exec.Command("sh", "-c", "git rev-list --objects --all | cut -d' ' -f1 | git cat-file --batch-check")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "missing") {
		t.Errorf("rev-list | cat-file: %v\n%s", err, out)
	}
	head := git("rev-parse", "HEAD")
	if typ, _, ok := ReadLoose(objects, head, 1<<20); !ok || typ != "commit" {
		t.Errorf("ReadLoose HEAD: %q %v", typ, ok)
	}
	git("gc", "-q")
	git("fsck", "--strict", "--no-dangling")
	if n := git("rev-list", "--count", "HEAD"); n != strconv.Itoa(foldAt+2) {
		t.Errorf("%s commits after gc", n)
	}
}

// commitLoopEnv names the repository a child process of
// TestPackedCommitsSurviveSIGKILL commits to until it is killed.
const commitLoopEnv = "OODA_GITREPO_COMMIT_LOOP"

// State commits killed by SIGKILL at any instant — while a pack or its
// index is written or renamed, while packs are folded and the old ones
// removed, while the branch moves — leave a repository git accepts:
// fsck --strict finds nothing wrong and every object of the history is
// there. A child process commits (and folds) in a loop; it is killed at
// random moments, the repository checked, and the loop started again on
// what it left (its lock files removed, as after any killed git).
func TestPackedCommitsSurviveSIGKILL(t *testing.T) {
	if dir := os.Getenv(commitLoopEnv); dir != "" {
		commitLoop(dir)
		return
	}
	dir, git := setup(t)
	settleIndex(t, dir)
	rounds := 12
	for r := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPackedCommitsSurviveSIGKILL$", "-test.count=1")
		cmd.Env = append(os.Environ(), commitLoopEnv+"="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				cmd.Process.Kill()
				cmd.Wait()
			}
		}
		t.Cleanup(stop) // before the directory is removed, on a failure
		// Let it make a few commits first, then kill it somewhere.
		waitForCommits(t, git, r*3+2)
		stop()
		git("fsck", "--strict")
		check := exec.Command("sh", "-c", "git rev-list --objects --all | cut -d' ' -f1 | git cat-file --batch-check")
		check.Dir = dir
		if b, err := check.CombinedOutput(); err != nil || strings.Contains(string(b), "missing") {
			t.Fatalf("round %d: rev-list | cat-file: %v\n%s", r, err, b)
		}
		for _, lock := range []string{"index.lock", "HEAD.lock", filepath.Join("refs", "heads", "main.lock")} {
			os.Remove(filepath.Join(dir, ".git", lock))
		}
		git("reset", "-q")
	}
	if n, _ := strconv.Atoi(git("rev-list", "--count", "HEAD")); n < 2*rounds {
		t.Errorf("%d commits in %d rounds", n, rounds)
	}
	if packs := len(packFiles(t, dir)); packs > 2*(foldAt+2) {
		t.Errorf("%d pack files after the rounds", packs)
	}
}

// waitForCommits waits until HEAD's history holds more than n commits,
// then a random moment more.
func waitForCommits(t *testing.T, git func(...string) string, n int) {
	t.Helper()
	for range 5000 {
		if c, _ := strconv.Atoi(git("rev-list", "--count", "HEAD")); c > n {
			time.Sleep(time.Duration(rand.IntN(20000)) * time.Microsecond)
			return
		}
	}
	t.Fatalf("fewer than %d commits", n)
}

// commitLoop makes state commits in dir until the process is killed —
// or its parent is gone, or a minute has passed: a test that failed
// before killing it must not leave it running.
func commitLoop(dir string) {
	settleMargin = -time.Hour
	paths := []string{"s/state.json", "s/log.jsonl", "s/d/lens.json"}
	os.MkdirAll(filepath.Join(dir, "s", "d"), 0o755)
	parent, until := os.Getppid(), time.Now().Add(time.Minute)
	for i := 0; os.Getppid() == parent && time.Now().Before(until); i++ {
		p := Prepare(context.Background(), dir, nil, "", 0, paths)
		for _, q := range paths {
			os.WriteFile(filepath.Join(dir, q), []byte(q+strconv.Itoa(i)+strings.Repeat("x", i%300)+"\n"), 0o644)
		}
		if p.OK {
			p.Commit(context.Background(), "evolve: cycle #"+strconv.Itoa(i)+" -- d (x)", paths)
		}
	}
}

// A pack ooda began but never put in place (killed after its mark and
// its .pack, before its .idx) is removed with its mark once old enough
// not to be a writer at work; a recent one is left alone, as is a pack
// of git's without an index.
func TestFoldPacksRemovesWhatAKilledWriterLeft(t *testing.T) {
	dir, git := setup(t)
	objects := filepath.Join(dir, ".git", "objects")
	marks := packMarks(objects)
	os.MkdirAll(marks, 0o755)
	old := time.Now().Add(-2 * staleIndexAge)
	for i, name := range []string{"pack-" + strings.Repeat("a", 40), "pack-" + strings.Repeat("b", 40)} {
		os.WriteFile(filepath.Join(objects, "pack", name+".pack"), []byte("PACK"), 0o444)
		os.WriteFile(filepath.Join(marks, name+".idx"), []byte("idx"), 0o444)
		if i == 0 {
			os.Chtimes(filepath.Join(marks, name+".idx"), old, old)
		}
	}
	theirs := filepath.Join(objects, "pack", "pack-"+strings.Repeat("c", 40)+".pack")
	os.WriteFile(theirs, []byte("PACK"), 0o444)
	os.Chtimes(theirs, old, old)
	(&Repo{Dir: dir}).foldPacks(context.Background(), objects)
	for name, want := range map[string]bool{
		filepath.Join(objects, "pack", "pack-"+strings.Repeat("a", 40)+".pack"): false,
		filepath.Join(marks, "pack-"+strings.Repeat("a", 40)+".idx"):            false,
		filepath.Join(objects, "pack", "pack-"+strings.Repeat("b", 40)+".pack"): true,
		filepath.Join(marks, "pack-"+strings.Repeat("b", 40)+".idx"):            true,
		theirs: true,
	} {
		if _, err := os.Stat(name); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", name, err == nil, want)
		}
	}
	git("status", "--porcelain")
}

// When the pack cannot be put in place (here objects/pack is not a
// directory), the commit's objects are written loose, as before packs,
// and the commit is made.
func TestPackWriterFallsBackToLooseObjects(t *testing.T) {
	settleNow(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	paths := []string{"s/state.json"}
	p := nativePrep(t, dir, paths)
	if !p.base.pack {
		t.Fatal("not a packed commit")
	}
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	os.RemoveAll(packDir)
	os.WriteFile(packDir, nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "s"), 0o755)
	os.WriteFile(filepath.Join(dir, "s/state.json"), []byte("{}\n"), 0o644)
	want := indexTree(t, dir, paths)
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- d (x)", paths)
	if err != nil || c == nil {
		t.Fatalf("commit: %+v, %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "objects", c.SHA[:2], c.SHA[2:])); err != nil {
		t.Errorf("the commit is not a loose object: %v", err)
	}
	os.Remove(packDir)
	os.Mkdir(packDir, 0o755)
	if got := git("rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("tree %s, want %s", got, want)
	}
	git("fsck", "--strict", "--no-dangling")
}

// Past autoPackLimit packs (here packs ooda does not fold: not its own),
// the commit asks `git gc --auto`, which repacks them as git's own limit
// says; below it, git is not asked.
func TestFoldPacksAsksGitGCPastItsPackLimit(t *testing.T) {
	dir, git := setup(t)
	git("config", "gc.autoDetach", "false")
	objects := filepath.Join(dir, ".git", "objects")
	ran := gitTrace(t)
	for i := range autoPackLimit + 1 {
		body := []byte("blob " + strconv.Itoa(i) + "\n")
		oid := hashObject(sha1.New, "blob", body)
		var pack bytes.Buffer
		pack.Write(packHeader(1))
		var z *zlib.Writer
		appendPackEntry(&pack, "blob", body, &z)
		e := packedEntry{oid: oid, off: 12, crc: crc32.ChecksumIEEE(pack.Bytes()[12:])}
		if _, err := writePack(filepath.Join(objects, "pack"), "", pack.Bytes(), []packedEntry{e}, nil); err != nil {
			t.Fatal(err)
		}
		if i == autoPackLimit-1 {
			ran()
			(&Repo{Dir: dir, Runner: proc.Exec{}}).foldPacks(context.Background(), objects)
			if r := ran(); len(r) > 0 {
				t.Errorf("at %d packs git ran: %q", i+1, r)
			}
		}
	}
	ran()
	(&Repo{Dir: dir, Runner: proc.Exec{}}).foldPacks(context.Background(), objects)
	if r := ran(); len(r) != 1 || r[0] != "gc" {
		t.Errorf("past the limit git ran %q", r)
	}
	if idx, _ := filepath.Glob(filepath.Join(objects, "pack", "*.idx")); len(idx) > 1 {
		t.Errorf("%d packs after git gc --auto", len(idx))
	}
	git("fsck", "--strict")
}
