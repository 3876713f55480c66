package state

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOInPlaceOfAgentStateNeverBlocks: a named pipe planted where
// agent/state (or agent/state/evolve) should be is refused at once by the
// reads that hold agent/state open and by the lock; opening it as
// os.Root does waited for a writer forever.
func TestFIFOInPlaceOfAgentStateNeverBlocks(t *testing.T) {
	for _, planted := range []string{filepath.Join("agent", "state"), filepath.Join("agent", "state", "evolve")} {
		t.Run(planted, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, planted)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(root, planted), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			s := New(root)
			done := make(chan struct{})
			go func() {
				defer close(done)
				release := s.HoldRoot()
				s.Load()
				release()
				if l, _, err := s.AcquireLock(time.Now(), time.Hour); err == nil {
					l.Release()
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("blocked on the named pipe")
			}
		})
	}
}
