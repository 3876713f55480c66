package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/perfstat"
)

// The lock is read only while the system that wrote it is up, so taking,
// updating and renewing it syncs nothing and counts as no durable write,
// yet each change still replaces the whole record atomically and leaves
// no temporary file behind. Not parallel: the counters are the process's.
func TestLock_WritesWithoutSyncing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent", "state", "evolve")
	p := filepath.Join(dir, ".lock")
	start := time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)
	before := perfstat.Snapshot()
	l, _, err := AcquireLock(p, start, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.SetSkillGroup(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := l.Renew(start.Add(time.Duration(i) * time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	after := perfstat.Snapshot()
	if d := after.FileSyncs - before.FileSyncs; d != 0 {
		t.Errorf("taking and updating the lock fsynced %d files, want none", d)
	}
	if d := after.DirSyncs - before.DirSyncs; d != 0 {
		t.Errorf("taking and updating the lock fsynced %d directories, want none", d)
	}
	if d := after.DurableWrites - before.DurableWrites; d != 0 {
		t.Errorf("the lock counted as %d durable writes, want none", d)
	}
	li, ok := ReadLock(p)
	if !ok || li.PID != os.Getpid() || li.SkillPGID != os.Getpid() || li.RenewedAt != "2026-04-14T09:03:00Z" || li.StartedAt != "2026-04-14T09:00:00Z" {
		t.Fatalf("lock after updates = %+v (read %v)", li, ok)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != ".lock" {
			t.Errorf("left behind in the lock's directory: %s", e.Name())
		}
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != 0o644 || !fi.Mode().IsRegular() {
		t.Errorf("lock file mode = %v, %v; want a regular 0644 file", fi.Mode(), err)
	}
}
