package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/secret"
)

// outsideSecret is the content of a file beside the project. No file under
// the project may ever hold it, and it must never change.
const outsideSecret = "outside-secret-4b1d9e07c3"

// hostileProject returns a directory holding a secret file (outer/secret.txt)
// and an empty project directory beside it (outer/proj).
func hostileProject(t *testing.T) (outer, root, secretPath string) {
	t.Helper()
	outer = t.TempDir()
	root = filepath.Join(outer, "proj")
	secretPath = filepath.Join(outer, "secret.txt")
	writeFile(t, secretPath, outsideSecret)
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "evolve"), 0o755); err != nil {
		t.Fatal(err)
	}
	return outer, root, secretPath
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// assertOutsideUntouched checks that the secret file still holds its bytes
// and that nothing but the project and the secret exists beside them.
func assertOutsideUntouched(t *testing.T, outer string, extra ...string) {
	t.Helper()
	if got := readString(t, filepath.Join(outer, "secret.txt")); got != outsideSecret {
		t.Errorf("the file outside the project became %q", got)
	}
	ents, err := os.ReadDir(outer)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "proj" && e.Name() != "secret.txt" && !slices.Contains(extra, e.Name()) {
			t.Errorf("%s was created outside the project", filepath.Join(outer, e.Name()))
		}
	}
}

// assertNoFileHolds walks the project without following symlinks and fails
// for every regular file that contains needle.
func assertNoFileHolds(t *testing.T, root, needle string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			t.Errorf("%s holds %q", p, needle)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// noHang runs fn in a goroutine and fails if it has not returned after a
// generous delay: a read that blocks on a pipe would otherwise hang the
// whole test binary. It asserts nothing about speed.
func noHang(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not return: it blocked", what)
	}
}

func refusal[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("err = %v (%T), want %T", err, err, target)
	}
	if !IsRefused(err) {
		t.Fatalf("IsRefused(%v) = false", err)
	}
	return target
}

// A memos.json that is a symlink to a file outside the project is not
// read: its bytes are copied nowhere, the cycle continues from the empty
// default, and the next save replaces the link, never the target.
func TestSymlinkOut_EvolveFileIsNeitherReadNorCopiedNorWrittenThrough(t *testing.T) {
	for _, target := range []string{"absolute", "relative"} {
		t.Run(target, func(t *testing.T) {
			outer, root, secretPath := hostileProject(t)
			s := New(root)
			link := s.EvolvePath(MemosFile)
			if target == "absolute" {
				symlink(t, secretPath, link)
			} else {
				symlink(t, "../../../../secret.txt", link)
			}
			writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 3}`)

			snap, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != MemosFile {
				t.Fatalf("corrupt = %+v, want memos.json", snap.Corrupt)
			}
			out := refusal[*OutsideError](t, snap.Corrupt[0].Err)
			if out.Path != link {
				t.Fatalf("refusal names %s, want %s", out.Path, link)
			}
			if snap.State.CycleCount != 3 {
				t.Fatalf("state.json did not load: %+v", snap.State)
			}
			dst, err := s.Quarantine(snap.Corrupt[0], testNow)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(dst); err != nil || fi.Mode().Type() != fs.ModeSymlink {
				t.Fatalf("the link was not moved aside to %s: %v %v", dst, fi, err)
			}
			if err := s.Reset(MemosFile); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("memos.json after the reset: %v %v", fi, err)
			}
			assertNoFileHolds(t, root, outsideSecret)
			assertOutsideUntouched(t, outer)
		})
	}
}

// Every writer replaces a symlink at its file's name; none writes through
// it to the file outside the project.
func TestSymlinkOut_WritesReplaceTheLink(t *testing.T) {
	writers := []struct {
		rel   string
		write func(s *Store) error
	}{
		{"agent/state/evolve/state.json", func(s *Store) error { return s.SaveState(State{CycleCount: 1}) }},
		{"agent/state/evolve/cost_ledger.json", func(s *Store) error { return s.SaveCostLedger(NewCostLedger(testNow)) }},
		{"agent/state/a/lens.json", func(s *Store) error { return s.SaveLens("a", NewLens("a", testNow)) }},
		{"agent/state/a/lens_changelog.json", func(s *Store) error { return s.SaveLensChangelog("a", LensChangelog{Domain: "a"}) }},
		{"agent/state/a/rotation_cursor.json", func(s *Store) error { return s.SaveRotationCursor("a", RotationCursor{Cursor: 1}) }},
		{"agent/state/evolve/runs/1-probe.log", func(s *Store) error { return s.SaveRunLog(1, "/probe", []byte("out")) }},
		{"agent/state/evolve/runs/1-a.lens.json", func(s *Store) error {
			_, err := s.WriteActiveLens(1, "a", NewLens("a", testNow))
			return err
		}},
		{"agent/safety/HALT", func(s *Store) error { return s.WriteHalt("agent/safety/HALT", "stop", testNow) }},
		{"agent/state/evolve/CHANGELOG.md", func(s *Store) error { return s.PrependChangelog("## Cycle #1 — x\n") }},
		{"agent/state/evolve/cycle_log.jsonl", func(s *Store) error { return s.AppendCycleLog(map[string]int{"cycle_id": 1}) }},
		{"agent/state/evolve/goals.json", func(s *Store) error { return s.RestoreEvolveFile(GoalsFile, []byte(`{"goals": []}`)) }},
	}
	for _, w := range writers {
		t.Run(filepath.Base(w.rel), func(t *testing.T) {
			outer, root, secretPath := hostileProject(t)
			s := New(root)
			link := filepath.Join(root, w.rel)
			symlink(t, secretPath, link)
			if err := w.write(s); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file after the write: %v %v", w.rel, fi, err)
			}
			assertNoFileHolds(t, root, outsideSecret)
			assertOutsideUntouched(t, outer)
		})
	}
}

// Reads of every other kind refuse a symlink out of the project and never
// return the outside bytes.
func TestSymlinkOut_ReadsAreRefused(t *testing.T) {
	outer, root, secretPath := hostileProject(t)
	s := New(root)
	for _, rel := range []string{
		"agent/state/a.json", "agent/state/a/lens.json", "agent/state/a/lens_changelog.json",
		"agent/state/a/rotation_cursor.json", "agent/state/external/x.json", "agent/state/context.json",
		"agent/state/evolve/runs/1-probe.report.json", "agent/state/evolve/checkpoints.json",
		"agent/state/evolve/CHANGELOG.md", "agent/safety/HALT",
	} {
		symlink(t, secretPath, filepath.Join(root, rel))
	}
	_, err := s.ReadDomainState("agent/state/a.json")
	refusal[*OutsideError](t, err)
	_, _, err = s.ReadLens("a")
	refusal[*OutsideError](t, err)
	_, err = s.ReadLensChangelog("a")
	refusal[*OutsideError](t, err)
	_, err = s.ReadRotationCursor("a")
	refusal[*OutsideError](t, err)
	_, _, err = s.ReadActiveContext("agent/state/context.json")
	refusal[*OutsideError](t, err)
	b, err := s.ReadReport(1, "/probe")
	refusal[*OutsideError](t, err)
	if b != nil {
		t.Fatalf("report bytes returned: %q", b)
	}
	_, err = s.RawEvolveFile(CheckpointsFile)
	refusal[*OutsideError](t, err)
	_, err = s.ChangelogEntries()
	refusal[*OutsideError](t, err)
	sigs, errs := s.ReadExternalSignals()
	if len(sigs) != 0 || len(errs) != 1 || !IsRefused(errs[0]) {
		t.Fatalf("external signals = %v, errors %v", sigs, errs)
	}
	halted, reason := s.HaltExists("agent/safety/HALT")
	if !halted || strings.Contains(reason, outsideSecret) {
		t.Fatalf("HALT through a link out: %v %q", halted, reason)
	}
	assertOutsideUntouched(t, outer)
}

// A state directory that is itself a symlink out of the project is refused
// as a whole: Load, the lock and the saves all fail with an error naming
// it, and nothing is written in the directory it points to.
func TestSymlinkOut_EvolveDirectoryIsRefused(t *testing.T) {
	outer, root, _ := hostileProject(t)
	elsewhere := filepath.Join(outer, "elsewhere")
	writeFile(t, filepath.Join(elsewhere, StateFile), `{"cycle_count": 7}`)
	s := New(root)
	if err := os.Remove(s.EvolveDir); err != nil {
		t.Fatal(err)
	}
	symlink(t, elsewhere, s.EvolveDir)

	_, err := s.Load()
	out := refusal[*OutsideError](t, err)
	if out.Path != s.EvolveDir {
		t.Fatalf("Load's error names %s, want %s", out.Path, s.EvolveDir)
	}
	_, _, err = s.AcquireLock(testNow, lockTimeout)
	refusal[*OutsideError](t, err)
	err = s.SaveState(State{CycleCount: 8})
	refusal[*OutsideError](t, err)
	err = s.AppendCycleLog(map[string]int{"cycle_id": 8})
	refusal[*OutsideError](t, err)

	if got := dirNamesOf(t, elsewhere); !slices.Equal(got, []string{StateFile}) {
		t.Fatalf("the directory outside holds %v", got)
	}
	if got := readString(t, filepath.Join(elsewhere, StateFile)); got != `{"cycle_count": 7}` {
		t.Fatalf("state.json outside became %q", got)
	}
	assertOutsideUntouched(t, outer, "elsewhere")
}

func dirNamesOf(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Paths from the configuration that leave the project — by "..", as an
// absolute path, or through a symlinked directory — are refused for
// reading, writing, removing and handing to another process.
func TestPathOutsideProject_Refused(t *testing.T) {
	outer, root, secretPath := hostileProject(t)
	s := New(root)
	symlink(t, outer, filepath.Join(root, "up"))

	for _, rel := range []string{"../secret.txt", secretPath, "up/secret.txt", "agent/../../secret.txt"} {
		if _, err := s.ReadDomainState(rel); !IsRefused(err) {
			t.Errorf("ReadDomainState(%q) = %v, want a refusal", rel, err)
		}
		if _, _, err := s.ReadActiveContext(rel); !IsRefused(err) {
			t.Errorf("ReadActiveContext(%q) = %v, want a refusal", rel, err)
		}
		if _, err := s.Resolve(rel); !IsRefused(err) {
			t.Errorf("Resolve(%q) = %v, want a refusal", rel, err)
		}
		if err := s.WriteHalt(rel, "stop", testNow); !IsRefused(err) {
			t.Errorf("WriteHalt(%q) = %v, want a refusal", rel, err)
		}
		if _, err := s.RemoveHalt(rel); !IsRefused(err) {
			t.Errorf("RemoveHalt(%q) = %v, want a refusal", rel, err)
		}
	}
	for _, rel := range []string{"../HALT", "up/HALT"} {
		if err := s.WriteHalt(rel, "stop", testNow); !IsRefused(err) {
			t.Errorf("WriteHalt(%q) = %v, want a refusal", rel, err)
		}
	}
	// Inside the project, relative or absolute, a path resolves.
	for _, rel := range []string{"agent/state/a.json", filepath.Join(root, "agent/state/a.json")} {
		if p, err := s.Resolve(rel); err != nil || p != filepath.Join(root, "agent/state/a.json") {
			t.Errorf("Resolve(%q) = %q, %v", rel, p, err)
		}
	}
	assertOutsideUntouched(t, outer)
}

// A project reached through a symlink may be named by its resolved path.
func TestPathInsideProject_ThroughTheRootsRealPath(t *testing.T) {
	outer := t.TempDir()
	real := filepath.Join(outer, "real")
	writeFile(t, filepath.Join(real, "agent/state/a.json"), `{"status": "ok"}`)
	symlink(t, real, filepath.Join(outer, "link"))
	s := New(filepath.Join(outer, "link"))
	ds, err := s.ReadDomainState(filepath.Join(real, "agent/state/a.json"))
	if err != nil || ds.Status != "ok" {
		t.Fatalf("ReadDomainState by the real path = %+v, %v", ds, err)
	}
}

// A domain or skill name that is not a plain name never reaches a path.
func TestNames_NotPlainAreRefused(t *testing.T) {
	outer, root, _ := hostileProject(t)
	s := New(root)
	for _, d := range []string{"../../../escaped", "a/b", ".hidden", `a\b`, "a..b", "x\x00y", "", ".."} {
		checks := map[string]error{
			"SaveLens":           s.SaveLens(d, NewLens(d, testNow)),
			"SaveLensChangelog":  s.SaveLensChangelog(d, LensChangelog{}),
			"SaveRotationCursor": s.SaveRotationCursor(d, RotationCursor{}),
		}
		_, checks["InitLens"] = s.InitLens(d, testNow)
		_, _, checks["ReadLens"] = s.ReadLens(d)
		_, checks["ReadRotationCursor"] = s.ReadRotationCursor(d)
		_, checks["ReadLensChangelog"] = s.ReadLensChangelog(d)
		_, checks["WriteActiveLens"] = s.WriteActiveLens(1, d, Lens{})
		for name, err := range checks {
			var ne *NameError
			if !errors.As(err, &ne) || ne.Kind != "domain" {
				t.Errorf("%s(%q) = %v, want a *NameError", name, d, err)
			}
		}
	}
	for _, sk := range []string{"../x", "/a/b", "//x", ".x", "/.x"} {
		var ne *NameError
		if err := s.SaveRunLog(1, sk, []byte("x")); !errors.As(err, &ne) {
			t.Errorf("SaveRunLog(%q) = %v, want a *NameError", sk, err)
		}
		if _, err := s.ReadReport(1, sk); !errors.As(err, &ne) {
			t.Errorf("ReadReport(%q) = %v, want a *NameError", sk, err)
		}
		if err := s.PrepareRunsDir(1, sk); !errors.As(err, &ne) {
			t.Errorf("PrepareRunsDir(%q) = %v, want a *NameError", sk, err)
		}
	}
	// The usual spellings pass.
	if err := s.SaveRunLog(1, "/scan-health", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveLens("service_health", NewLens("service_health", testNow)); err != nil {
		t.Fatal(err)
	}
	if got := dirNamesOf(t, filepath.Join(root, "agent", "state")); !slices.Equal(got, []string{"evolve", "service_health"}) {
		t.Fatalf("agent/state holds %v", got)
	}
	assertOutsideUntouched(t, outer)
}

// A state file or report that is /dev/zero — through a symlink, or a
// device inside the project — is refused without reading: reading it
// whole would exhaust memory.
func TestDevZero_RefusedWithoutReading(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, root, _ := hostileProject(t)
	s := New(root)
	symlink(t, "/dev/zero", s.ReportPath(4, "/probe"))
	symlink(t, "/dev/zero", s.EvolvePath(GoalsFile))
	symlink(t, "/dev/zero", s.EvolvePath(CostLedgerFile))
	noHang(t, "reading a report linked to /dev/zero", func() {
		_, err := s.ReadReport(4, "/probe")
		if !IsRefused(err) {
			t.Errorf("ReadReport = %v, want a refusal", err)
		}
	})
	noHang(t, "loading with evolve files linked to /dev/zero", func() {
		snap, err := s.Load()
		var cl *CorruptLedgerError
		if !errors.As(err, &cl) || !IsRefused(cl.Err) {
			t.Errorf("Load = %v, want a *CorruptLedgerError holding a refusal", err)
		}
		if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != GoalsFile || !IsRefused(snap.Corrupt[0].Err) {
			t.Errorf("corrupt = %+v", snap.Corrupt)
		}
	})

	// The device itself, inside a project rooted at /dev.
	dev := New("/dev")
	noHang(t, "reading /dev/zero as a state file", func() {
		_, err := dev.ReadDomainState("zero")
		nr := refusal[*NotRegularError](t, err)
		if nr.Mode&fs.ModeCharDevice == 0 || !strings.Contains(err.Error(), "character device") {
			t.Errorf("refusal = %v", err)
		}
	})
}

// A named pipe in place of a state file, a report, the cycle log or the
// lock is refused at once: a read would wait for a writer forever while
// holding the cycle lock.
func TestFIFO_NeverBlocks(t *testing.T) {
	_, root, _ := hostileProject(t)
	s := New(root)
	mkfifo(t, s.EvolvePath(ActionQueueFile))
	mkfifo(t, filepath.Join(root, "agent/state/a.json"))
	mkfifo(t, s.ReportPath(2, "/probe"))
	mkfifo(t, s.EvolvePath(CycleLogFile))

	var snap *Snapshot
	noHang(t, "Load", func() {
		var err error
		snap, err = s.Load()
		if err != nil {
			t.Error(err)
		}
	})
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != ActionQueueFile {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
	nr := refusal[*NotRegularError](t, snap.Corrupt[0].Err)
	if nr.Path != s.EvolvePath(ActionQueueFile) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Fatalf("refusal = %+v", nr)
	}
	noHang(t, "Quarantine and Reset", func() {
		dst, err := s.Quarantine(snap.Corrupt[0], testNow)
		if err != nil {
			t.Error(err)
			return
		}
		if fi, err := os.Lstat(dst); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
			t.Errorf("the pipe was not moved aside to %s: %v", dst, err)
		}
		if err := s.Reset(ActionQueueFile); err != nil {
			t.Error(err)
		}
	})
	noHang(t, "ReadDomainState", func() {
		_, err := s.ReadDomainState("agent/state/a.json")
		refusal[*NotRegularError](t, err)
	})
	noHang(t, "ReadReport", func() {
		_, err := s.ReadReport(2, "/probe")
		refusal[*NotRegularError](t, err)
	})
	noHang(t, "AppendCycleLog", func() {
		if err := s.AppendCycleLog(map[string]int{"cycle_id": 2}); err != nil {
			t.Error(err)
		}
	})
	if fi, err := os.Lstat(s.EvolvePath(CycleLogFile)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the cycle log is still not a regular file: %v %v", fi, err)
	}
	if got := readString(t, s.EvolvePath(CycleLogFile)); got != "{\"cycle_id\":2}\n" {
		t.Fatalf("cycle log = %q", got)
	}
	mkfifo(t, s.LockPath())
	noHang(t, "AcquireLock", func() {
		l, _, err := s.AcquireLock(testNow, lockTimeout)
		var locked *ErrLocked
		if !errors.As(err, &locked) {
			l.Release()
			t.Errorf("AcquireLock over a fresh pipe = %v, want *ErrLocked", err)
		}
	})
}

// A lock that is a symlink to /dev/zero is judged without reading it.
func TestLock_SymlinkToDevZeroIsNotRead(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, root, _ := hostileProject(t)
	s := New(root)
	symlink(t, "/dev/zero", s.LockPath())
	noHang(t, "AcquireLock", func() {
		// A zero timeout makes the unreadable lock stale at once.
		l, stale, err := s.AcquireLock(testNow, 0)
		if err != nil {
			t.Errorf("AcquireLock = %v", err)
			return
		}
		if stale == nil || stale.Why != "unreadable" {
			t.Errorf("stale = %+v, want unreadable", stale)
		}
		if fi, err := os.Lstat(s.LockPath()); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("lock after acquisition: %v %v", fi, err)
		}
		if err := l.Release(); err != nil {
			t.Error(err)
		}
	})
}

// A 17 MiB state file is over the 16 MiB default: it is refused before a
// byte is read, moved aside (never copied), and the cycle continues. A
// ledger that size still fails closed.
func TestTooLarge_RefusedAndMovedNotCopied(t *testing.T) {
	_, root, _ := hostileProject(t)
	s := New(root)
	big := bytes.Repeat([]byte(" "), 17<<20)
	big[0] = '{'
	big[len(big)-1] = '}'
	if err := os.WriteFile(s.EvolvePath(MemosFile), big, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.EvolvePath(MemosFile))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Corrupt) != 1 {
		t.Fatalf("corrupt = %+v", snap.Corrupt)
	}
	tl := refusal[*TooLargeError](t, snap.Corrupt[0].Err)
	if tl.Limit != 16<<20 || tl.Path != s.EvolvePath(MemosFile) || !strings.Contains(tl.Error(), "16 MiB") {
		t.Fatalf("refusal = %v", tl)
	}
	dst, err := s.Quarantine(snap.Corrupt[0], testNow)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(dst)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("%s is not the original file moved: %v", dst, err)
	}
	if err := s.Reset(MemosFile); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if fi, err := d.Info(); err == nil && fi.Size() >= 17<<20 {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Fatalf("%d files of 17 MiB in the project, want the one moved aside", n)
	}

	// The ledger fails closed; its quarantine moves it too.
	if err := os.WriteFile(s.EvolvePath(CostLedgerFile), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load()
	var cl *CorruptLedgerError
	if !errors.As(err, &cl) {
		t.Fatalf("Load = %v, want *CorruptLedgerError", err)
	}
	refusal[*TooLargeError](t, cl.Err)
	if dst, err := s.QuarantineLedger(testNow); err != nil || dst != s.EvolvePath("cost_ledger.json.corrupt") {
		t.Fatalf("QuarantineLedger = %s, %v", dst, err)
	}

	// MaxRead is the store's limit for every read.
	s.MaxRead = 1024
	writeFile(t, s.ReportPath(1, "/probe"), `{"summary": "`+strings.Repeat("x", 2000)+`"}`)
	_, err = s.ReadReport(1, "/probe")
	if tl := refusal[*TooLargeError](t, err); tl.Limit != 1024 {
		t.Fatalf("limit = %d", tl.Limit)
	}
	writeFile(t, s.ReportPath(2, "/probe"), `{"summary": "ok"}`)
	if b, err := s.ReadReport(2, "/probe"); err != nil || string(b) != `{"summary": "ok"}` {
		t.Fatalf("a report under the limit: %q, %v", b, err)
	}
}

// A CHANGELOG.md that must not be read is moved aside and a new one
// started: the cycle's record is never lost to it.
func TestChangelog_RefusedFileIsMovedAside(t *testing.T) {
	outer, root, secretPath := hostileProject(t)
	s := New(root)
	symlink(t, secretPath, s.EvolvePath(ChangelogFile))
	if err := s.PrependChangelog("## Cycle #9 — probe\n"); err != nil {
		t.Fatal(err)
	}
	entries, err := s.ChangelogEntries()
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0], "## Cycle #9") {
		t.Fatalf("entries = %q, %v", entries, err)
	}
	assertNoFileHolds(t, root, outsideSecret)
	assertOutsideUntouched(t, outer)
}

// writeKilledHelper is a process killed by SIGKILL in the middle of an
// atomic write, after its temporary file is written and before the rename,
// the way a kill or a power cut leaves one behind.
func writeKilledHelper() int {
	beforeRenameHook = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	err := New(os.Getenv("OODA_PROJECT")).SaveRunLog(1, "/probe", []byte("partial output"))
	fmt.Println("NOT KILLED:", err)
	return 3
}

func TestRemoveTempFiles(t *testing.T) {
	outer, root, secretPath := hostileProject(t)
	s := New(root)

	// A real write killed between creating and renaming its temporary file.
	cmd := helperCommand(t, "write-killed", "OODA_PROJECT="+root)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed: %v\n%s", err, out)
	}
	runs := filepath.Join(s.EvolveDir, "runs")
	var killed []string
	for _, n := range dirNamesOf(t, runs) {
		killed = append(killed, filepath.Join("agent/state/evolve/runs", n))
	}
	if len(killed) != 1 || !isTempName(filepath.Base(killed[0])) {
		t.Fatalf("the killed write left %v", killed)
	}

	leftovers := []string{
		"agent/state/" + tempName("a.json"),
		"agent/state/a/" + tempName("lens.json"),
		"agent/state/evolve/" + tempName("state.json"),
		"agent/state/evolve/proposed-skills/" + tempName("gap.md"),
	}
	for _, rel := range leftovers {
		writeFile(t, filepath.Join(root, rel), "partial")
	}
	link := "agent/state/evolve/" + tempName("memos.json")
	symlink(t, secretPath, filepath.Join(root, link))
	kept := []string{
		"agent/state/evolve/state.json.tmp-1",           // no leading dot
		"agent/state/evolve/.state.json.tmp-x1",         // not digits
		"agent/state/evolve/.state.json.tmp-",           // no number
		"agent/state/evolve/.tmp-12",                    // no name
		"agent/state/evolve/.lock",                      // the lock
		"agent/state/evolve/" + tempName(".lock"),       // the lock's renewal, in flight
		"agent/state/evolve/memos.json",                 // a state file
		"agent/state/evolve/runs/deep/.x.json.tmp-5",    // too deep
		"agent/state/evolve/.notes.tmp-3/keep.json",     // inside a directory of that name
		"agent/other/.state.json.tmp-5",                 // not under agent/state
		"agent/state/evolve/" + tempName("a") + ".json", // suffix after the number
	}
	for _, rel := range kept {
		writeFile(t, filepath.Join(root, rel), "keep")
	}

	removed, err := s.RemoveTempFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]string{}, killed...), leftovers...), link)
	slices.Sort(want)
	slices.Sort(removed)
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %v\nwant    %v", removed, want)
	}
	for _, rel := range want {
		if _, err := os.Lstat(filepath.Join(root, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists", rel)
		}
	}
	for _, rel := range kept {
		if got := readString(t, filepath.Join(root, rel)); got != "keep" {
			t.Errorf("%s became %q", rel, got)
		}
	}
	assertOutsideUntouched(t, outer)
}

func TestWriteProposal_Capped(t *testing.T) {
	s := New(t.TempDir())
	for i := 0; i < ProposalsMax; i++ {
		if wrote, err := s.WriteProposal(fmt.Sprintf("gap_%d", i), "text"); !wrote || err != nil {
			t.Fatalf("proposal %d: %v %v", i, wrote, err)
		}
	}
	wrote, err := s.WriteProposal("gap_new", "text")
	if wrote || !errors.Is(err, ErrProposalsFull) || !strings.Contains(err.Error(), "gap_new.md") {
		t.Fatalf("proposal beyond the cap: %v %v", wrote, err)
	}
	if n := len(dirNamesOf(t, filepath.Join(s.EvolveDir, "proposed-skills"))); n != ProposalsMax {
		t.Fatalf("%d proposals, want %d", n, ProposalsMax)
	}
	// An existing proposal is still recognised as written.
	if wrote, err := s.WriteProposal("gap_3", "text"); wrote || err != nil {
		t.Fatalf("existing proposal: %v %v", wrote, err)
	}
}

// A secret echoed into any text the store writes reaches no file.
func TestRedaction_NoSecretInAnyWrittenFile(t *testing.T) {
	const token = "ghp_redactionprobe0123456789abcdef"
	secret.Register(token)
	root := t.TempDir()
	s := New(root)
	msg := "leaked " + token + " here"
	steps := map[string]error{
		"action_queue": s.SaveActionQueue(ActionQueue{Pending: []Action{{ID: "a1", Title: msg}}}),
		"state":        s.SaveState(State{DecisionLog: []DecisionEntry{{Cycle: 1, Reason: msg}}}),
		"memos":        s.SaveMemos(Memos{History: []Memo{{Message: msg}}}),
		"cycle_log":    s.AppendCycleLog(map[string]string{"summary": msg}),
		"changelog":    s.PrependChangelog("## Cycle #1 — " + msg + "\n"),
		"halt":         s.WriteHalt("agent/safety/HALT", msg, testNow),
		"run_log":      s.SaveRunLog(1, "/probe", []byte(msg)),
		"lens":         s.SaveLens("a", Lens{Domain: "a", FocusItems: []LensItem{{Item: msg}}}),
		"checkpoints":  s.SaveCheckpoints(Checkpoints{Checkpoints: []Checkpoint{{Cycle: 1, Reason: msg}}}),
		"restore":      s.RestoreEvolveFile(GoalsFile, []byte(`{"goals": [{"id": "`+msg+`"}]}`)),
	}
	_, steps["proposal"] = s.WriteProposal("gap", msg)
	_, steps["active_lens"] = s.WriteActiveLens(1, "a", Lens{Domain: "a", DiscoveredSignals: []LensItem{{Item: msg}}})
	for name, err := range steps {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// A corrupt file holding the token is set aside redacted too.
	writeFile(t, s.EvolvePath(OutcomesFile), `{"entries": [`+msg)
	snap, err := s.Load()
	if err != nil || len(snap.Corrupt) != 1 {
		t.Fatalf("load: %v %+v", err, snap.Corrupt)
	}
	if _, err := s.Quarantine(snap.Corrupt[0], testNow); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.EvolvePath(OutcomesFile)); err != nil {
		t.Fatal(err)
	}
	assertNoFileHolds(t, root, token)
	if got := readString(t, s.EvolvePath(ActionQueueFile)); !strings.Contains(got, "leaked *** here") {
		t.Fatalf("action queue: %s", got)
	}
}

// A negative cycle_count would number the next cycle below the recorded
// ones; Load resumes after the highest cycle any file recorded.
func TestBadValues_NegativeCycleCount(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": -4, "decision_log": [{"cycle": 15}, {"cycle": 16}]}`)
	writeFile(t, s.EvolvePath(OutcomesFile), `{"entries": [{"cycle_id": 17, "result_type": "x"}]}`)
	writeFile(t, s.EvolvePath(CostLedgerFile), `{"date": "2026-01-06", "entries": [{"cycle_id": 18, "estimated_usd": 0.5}], "total_estimated_usd": 0.5}`)
	writeFile(t, s.EvolvePath(CheckpointsFile), `{"checkpoints": [{"cycle": 12}]}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.State.CycleCount != 18 {
		t.Fatalf("cycle_count = %d, want 18", snap.State.CycleCount)
	}
	assertWarning(t, snap, "agent/state/evolve/state.json: /cycle_count: -4 is negative; using 18")

	// With nothing recorded, the count starts over at 0.
	s2 := New(t.TempDir())
	writeFile(t, s2.EvolvePath(StateFile), `{"cycle_count": -1}`)
	snap, err = s2.Load()
	if err != nil || snap.State.CycleCount != 0 {
		t.Fatalf("cycle_count = %d, %v", snap.State.CycleCount, err)
	}
}

func assertWarning(t *testing.T, snap *Snapshot, prefix string) {
	t.Helper()
	for _, w := range snap.Warnings {
		if strings.HasPrefix(w, prefix) {
			return
		}
	}
	t.Fatalf("no warning starting %q in %q", prefix, snap.Warnings)
}

// A negative total would let cycles run past the daily cap; an absurd
// entry would overflow the sum to +Inf, which no file can hold.
func TestBadValues_CostLedger(t *testing.T) {
	cases := []struct {
		name, doc string
		total     float64
		warn      string
	}{
		{"negative total", `{"entries": [{"cycle_id": 1, "estimated_usd": 2.5}, {"cycle_id": 2, "estimated_usd": 1.5}], "total_estimated_usd": -1e300}`,
			4, "agent/state/evolve/cost_ledger.json: /total_estimated_usd: -1e+300 is not a total (negative or not finite); using 4"},
		{"total below its entries", `{"entries": [{"cycle_id": 1, "estimated_usd": 2.5}], "total_estimated_usd": 0}`,
			2.5, "agent/state/evolve/cost_ledger.json: /total_estimated_usd: 0 is less than the sum of its entries; using 2.5"},
		{"negative entry", `{"entries": [{"cycle_id": 1, "estimated_usd": -7}, {"cycle_id": 2, "estimated_usd": 1}], "total_estimated_usd": 1}`,
			1, "agent/state/evolve/cost_ledger.json: /entries/0/estimated_usd: -7 is not a cost (negative or not finite); counted as 0"},
		{"entries that overflow", `{"entries": [{"cycle_id": 1, "estimated_usd": 1e308}, {"cycle_id": 2, "estimated_usd": 1e308}], "total_estimated_usd": 1e308}`,
			2e9, "agent/state/evolve/cost_ledger.json: /entries/1/estimated_usd: 1e+308 is out of range (above 1e+09); counted as 1e+09"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t.TempDir())
			writeFile(t, s.EvolvePath(CostLedgerFile), tc.doc)
			snap, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			l := snap.CostLedger
			if l.TotalEstimatedUSD != tc.total {
				t.Errorf("total = %v, want %v", l.TotalEstimatedUSD, tc.total)
			}
			sum := 0.0
			for _, e := range l.Entries {
				sum += e.EstimatedUSD
			}
			if math.IsInf(sum+l.TotalEstimatedUSD, 0) || l.TotalEstimatedUSD < sum-0.005 {
				t.Errorf("entries sum to %v against a total of %v", sum, l.TotalEstimatedUSD)
			}
			assertWarning(t, snap, tc.warn)
			if err := s.SaveCostLedger(*l); err != nil {
				t.Fatalf("the ledger as read cannot be written back: %v", err)
			}
		})
	}
}

// Numbers no real state holds are clamped, with a warning naming the file
// and the field, so that sums and products stay finite and every file can
// be written back.
func TestBadValues_AbsurdNumbersClamped(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(MemosFile), `{"score_adjustments": {"a/b": 1e308, "c": 0.5}, "interventions": [{"domain": "a", "delta": -1e308}]}`)
	writeFile(t, s.EvolvePath(ConfidenceFile), `{"domains": {"a": {"score": 1e300}}}`)
	writeFile(t, s.EvolvePath(GoalsFile), `{"goals": [{"id": "g", "progress": 1e308}]}`)
	writeFile(t, s.EvolvePath(MetricsFile), `{"cost": {"total_estimated_usd": 1.7e308}}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"agent/state/evolve/memos.json: /score_adjustments/a~1b: 1e+308 is out of range",
		"agent/state/evolve/memos.json: /interventions/0/delta: -1e+308 is out of range",
		"agent/state/evolve/confidence.json: /domains/a/score: 1e+300 is out of range",
		"agent/state/evolve/goals.json: /goals/0/progress: 1e+308 is out of range",
		"agent/state/evolve/metrics.json: /cost/total_estimated_usd: 1.7e+308 is out of range",
	} {
		assertWarning(t, snap, w)
	}
	if v := snap.Memos.ScoreAdjustments["c"]; v != 0.5 {
		t.Fatalf("an ordinary value changed: %v", v)
	}
	total := snap.Memos.ScoreAdjustments["a/b"] + snap.Memos.Interventions[0].Delta + *snap.Goals.Goals[0].Progress + snap.Metrics.Cost.TotalEstimatedUSD*2
	if math.IsInf(total, 0) || math.IsNaN(total) {
		t.Fatalf("sum of clamped values = %v", total)
	}
	if err := s.SaveMetrics(snap.Metrics); err != nil {
		t.Fatal(err)
	}
}

// Two values for one key: the last is used, as before, and a warning says
// which key.
func TestBadValues_DuplicateKeysWarned(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(StateFile), `{"cycle_count": 3, "decision_log": [{"cycle": 3, "cycle": 4}], "cycle_count": 5}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.State.CycleCount != 5 || snap.State.DecisionLog[0].Cycle != 4 {
		t.Fatalf("state = %+v", snap.State)
	}
	assertWarning(t, snap, "agent/state/evolve/state.json: /decision_log/0/cycle: the key appears more than once")
	assertWarning(t, snap, "agent/state/evolve/state.json: /cycle_count: the key appears more than once")
}
