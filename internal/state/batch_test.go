package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ooda-loop/ooda/internal/perfstat"
)

// inode is the inode number and modification time of p (a symlink itself).
func inode(t *testing.T, p string) (uint64, int64) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime().UnixNano()
}

// countsSince is what the perfstat counters moved by since before.
func countsSince(before perfstat.Counts) perfstat.Counts {
	now := perfstat.Snapshot()
	return perfstat.Counts{
		DurableWrites: now.DurableWrites - before.DurableWrites,
		Appends:       now.Appends - before.Appends,
		FileSyncs:     now.FileSyncs - before.FileSyncs,
		DirSyncs:      now.DirSyncs - before.DirSyncs,
	}
}

// A file whose bytes are already on disk is not rewritten: same inode,
// same modification time, no durable write counted — alone or in a batch
// — while a changed file is replaced as always.
func TestWrite_IdenticalFileIsNotRewritten(t *testing.T) {
	s := New(t.TempDir())
	memos := Memos{SchemaVersion: "1.1.0", History: []Memo{{Cycle: 3, Type: "crash_recovery", Message: "m"}}}
	if err := s.SaveMemos(memos); err != nil {
		t.Fatal(err)
	}
	p := s.EvolvePath(MemosFile)
	ino, mtime := inode(t, p)

	before := perfstat.Snapshot()
	if err := s.SaveMemos(memos); err != nil {
		t.Fatal(err)
	}
	if i, m := inode(t, p); i != ino || m != mtime {
		t.Fatalf("an identical write replaced the file: inode %d→%d, mtime %d→%d", ino, i, mtime, m)
	}
	if c := countsSince(before); c.DurableWrites != 0 || c.FileSyncs != 1 || c.DirSyncs != 1 {
		t.Fatalf("an identical write counted %+v, want no durable write, and the file and its directory synced", c)
	}

	b := s.Batch()
	if err := b.Store().SaveMemos(memos); err != nil {
		t.Fatal(err)
	}
	if err := b.Store().SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if i, m := inode(t, p); i != ino || m != mtime {
		t.Fatalf("an identical write in a batch replaced the file: inode %d→%d, mtime %d→%d", ino, i, mtime, m)
	}
	if !strings.Contains(readString(t, s.EvolvePath(GoalsFile)), `"schema_version": "1.0.0"`) {
		t.Fatal("the batch's other file was not written")
	}

	memos.History[0].Message = "changed"
	if err := s.SaveMemos(memos); err != nil {
		t.Fatal(err)
	}
	if i, _ := inode(t, p); i == ino || !strings.Contains(readString(t, p), `"changed"`) {
		t.Fatalf("a changed file was not replaced (inode %d, %s)", i, readString(t, p))
	}
}

// Only a file that a rewrite would leave exactly as it is may be skipped:
// a symlink at the name (even to identical bytes inside the project) is
// replaced by a file of its own and its target left alone, and a file of
// other permissions or with a second link is rewritten.
func TestWrite_IdenticalBytesOfAnotherShapeAreRewritten(t *testing.T) {
	s := New(t.TempDir())
	if err := s.SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	want := readString(t, s.EvolvePath(GoalsFile))

	target := filepath.Join(s.Root, "agent", "state", "goals-copy.json")
	writeFile(t, target, want)
	tino, tmtime := inode(t, target)
	if err := os.Remove(s.EvolvePath(GoalsFile)); err != nil {
		t.Fatal(err)
	}
	symlink(t, "../goals-copy.json", s.EvolvePath(GoalsFile))
	if err := s.SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(s.EvolvePath(GoalsFile)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the symlink was kept: %v, %v", fi, err)
	}
	if i, m := inode(t, target); i != tino || m != tmtime {
		t.Fatal("the symlink's target was touched")
	}

	p := s.EvolvePath(GoalsFile)
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v kept; a rewrite makes it 0644", fi.Mode().Perm())
	}

	if err := os.Link(p, target+".link"); err != nil {
		t.Fatal(err)
	}
	ino, _ := inode(t, p)
	if err := s.SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if i, _ := inode(t, p); i == ino {
		t.Fatal("a file with a second link was kept; a rewrite gives it an inode of its own")
	}
	if got := readString(t, p); got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
}

// A batch stages its writes: nothing is on disk before Commit, a file
// written twice is written once with the last bytes, and Commit syncs
// each file and then each directory once, counting each.
func TestBatch_StagesUntilCommitAndSyncsEachDirectoryOnce(t *testing.T) {
	s := New(t.TempDir())
	b := s.Batch()
	bs := b.Store()
	for _, err := range []error{
		bs.SaveGoals(Goals{SchemaVersion: "1.0.0"}),
		bs.SaveMemos(Memos{SchemaVersion: "1.1.0"}),
		bs.SaveMetrics(Metrics{}),
		bs.SaveOutcomes(Outcomes{}),
		bs.SaveLens("api", NewLens("api", testNow)),
		bs.SaveMemos(Memos{SchemaVersion: "1.1.0", LastMemo: []byte(`"last"`)}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(s.EvolveDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a staged write reached the disk before Commit: %v", err)
	}
	before := perfstat.Snapshot()
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if c := countsSince(before); c.DurableWrites != 5 || c.FileSyncs != 5 || c.DirSyncs != 2 {
		t.Fatalf("counted %+v, want 5 durable writes, 5 file fsyncs and 2 directory fsyncs (evolve/ and api/)", c)
	}
	if got := readString(t, s.EvolvePath(MemosFile)); !strings.Contains(got, `"last_memo": "last"`) {
		t.Fatalf("memos.json is not the last staged version:\n%s", got)
	}
	want := []string{"agent/state/api/lens.json", "agent/state/evolve/goals.json", "agent/state/evolve/memos.json",
		"agent/state/evolve/metrics.json", "agent/state/evolve/outcomes.json"}
	if got := s.Written(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Written = %v, want %v", got, want)
	}
	if leftovers := tempFilesIn(t, s.EvolveDir); len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}

	// A batch never committed writes nothing.
	s.Batch().Store().SaveCascades(Cascades{})
	if s.Exists(CascadesFile) {
		t.Fatal("an uncommitted batch wrote its file")
	}
}

// A file of the batch that cannot be written does not stop the others;
// the error names it, and it leaves no temporary file behind.
func TestBatch_AFailedFileIsNamedAndTheOthersWritten(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(filepath.Join(s.EvolvePath(MetricsFile), "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := s.Batch()
	b.Store().SaveMemos(Memos{SchemaVersion: "1.1.0"})
	b.Store().SaveMetrics(Metrics{})
	b.Store().SaveOutcomes(Outcomes{})
	err := b.Commit()
	var be *BatchError
	if !errors.As(err, &be) || len(be.Files) != 1 || be.Files[0].Path != s.EvolvePath(MetricsFile) ||
		!strings.Contains(err.Error(), "rename "+s.EvolvePath(MetricsFile)) {
		t.Fatalf("Commit = %v, want one failed file, metrics.json", err)
	}
	if !s.Exists(MemosFile) || !s.Exists(OutcomesFile) {
		t.Fatal("the other files of the batch were not written")
	}
	if got := s.Written(); len(got) != 2 {
		t.Fatalf("Written = %v: the failed file must not be listed", got)
	}
	if leftovers := tempFilesIn(t, s.EvolveDir); len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

// A directory whose fsync fails leaves each of its files not durable:
// every one of them is named, and only those.
func TestBatch_DirectorySyncFailureNamesItsFiles(t *testing.T) {
	s := New(t.TempDir())
	if err := s.SaveGoals(Goals{SchemaVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	evolve, err := s.rel(s.EvolveDir)
	if err != nil {
		t.Fatal(err)
	}
	dirSyncHook = func(dir string) error {
		if dir == evolve {
			return syscall.EIO
		}
		return nil
	}
	t.Cleanup(func() { dirSyncHook = nil })

	b := s.Batch()
	b.Store().SaveMemos(Memos{SchemaVersion: "1.1.0"})
	b.Store().SaveGoals(Goals{SchemaVersion: "1.0.0"}) // identical: not rewritten, and still not known durable
	b.Store().SaveLens("api", NewLens("api", testNow))
	err = b.Commit()
	var be *BatchError
	if !errors.As(err, &be) || len(be.Files) != 2 {
		t.Fatalf("Commit = %v, want memos.json and goals.json named", err)
	}
	for i, name := range []string{MemosFile, GoalsFile} {
		fe := be.Files[i]
		if fe.Path != s.EvolvePath(name) || !errors.Is(fe.Err, syscall.EIO) || !strings.Contains(fe.Error(), "sync dir of "+s.EvolvePath(name)) {
			t.Errorf("file %d: %s: %v", i, fe.Path, fe.Err)
		}
	}
	if strings.Contains(err.Error(), "lens.json") {
		t.Errorf("the lens, in another directory, was reported: %v", err)
	}
}

// tempFilesIn lists the atomic writes' temporary files in dir.
func tempFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range dirNamesOf(t, dir) {
		if isTempName(n) {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkDurableWriteFloor is the least one durable file costs on this
// disk: write a small file, fsync it, rename it into place, fsync the
// directory. A cycle cannot be faster than its durable writes times this.
func BenchmarkDurableWriteFloor(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f.json")
	data := []byte(`{"cycle_count": 1}` + "\n")
	for b.Loop() {
		if err := WriteFileAtomic(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStep6Files writes eight small evolve files that change every
// time, one by one as single writes and as one batch.
func BenchmarkStep6Files(b *testing.B) {
	names := []string{MemosFile, ConfidenceFile, CostLedgerFile, MetricsFile, OutcomesFile, GoalsFile, CascadesFile, ReflectionsFile}
	for _, mode := range []string{"single", "batch"} {
		b.Run(mode, func(b *testing.B) {
			s := New(b.TempDir())
			n := 0
			for b.Loop() {
				n++
				w := s
				var batch *Batch
				if mode == "batch" {
					batch = s.Batch()
					w = batch.Store()
				}
				for _, name := range names {
					if err := w.RestoreEvolveFile(name, []byte(`{"n": `+strings.Repeat("1", n%7+1)+"}\n")); err != nil {
						b.Fatal(err)
					}
				}
				if batch != nil {
					if err := batch.Commit(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
