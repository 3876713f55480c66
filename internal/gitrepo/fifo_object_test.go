package gitrepo

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadLooseNeverBlocksOnANamedPipe: a named pipe planted where a loose
// object or one of ooda's packs should be is refused at once; opening it
// for reading waited for a writer forever.
func TestReadLooseNeverBlocksOnANamedPipe(t *testing.T) {
	objects := t.TempDir()
	oid := "0123456789abcdef0123456789abcdef01234567"
	if err := os.MkdirAll(filepath.Join(objects, oid[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(objects, oid[:2], oid[2:]), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan bool)
	go func() {
		_, _, ok := ReadLoose(objects, oid, 1<<20)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a named pipe was read as an object")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocked on the named pipe")
	}
}
