//go:build linux

package prefault

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// rssKiB is the Rss line of /proc/self/smaps for the mapping that starts
// at addr: how much of it is mapped in this process's page tables.
func rssKiB(t *testing.T, addr uintptr) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	head := []byte(fmt.Sprintf("%08x-", addr))
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		if !bytes.HasPrefix(l, head) {
			continue
		}
		for _, l := range lines[i+1:] {
			if v, ok := bytes.CutPrefix(l, []byte("Rss:")); ok {
				n, err := strconv.Atoi(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))))
				if err != nil {
					t.Fatalf("Rss line %q: %v", l, err)
				}
				return n
			}
		}
	}
	t.Fatalf("no mapping at %x in /proc/self/smaps", addr)
	return 0
}

// populate maps a file's pages and an anonymous mapping's pages that
// nothing has touched yet, in one call each.
func TestPopulateMapsUntouchedPages(t *testing.T) {
	const size = 256 << 10
	f := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(f, bytes.Repeat([]byte("ooda"), size/4), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	file, err := syscall.Mmap(int(fd.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(file)
	// The anonymous pages between two inaccessible ones, so the kernel
	// does not merge them with a neighbouring mapping of the runtime's.
	guarded, err := syscall.Mmap(-1, 0, size+2*pageSize, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(guarded)
	anon := guarded[pageSize : pageSize+size]
	if err := syscall.Mprotect(anon, syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string
		b      []byte
		advice uintptr
	}{{"file", file, madvPopulateRead}, {"anonymous", anon, madvPopulateWrite}} {
		addr := uintptr(unsafe.Pointer(&c.b[0]))
		if n := rssKiB(t, addr); n != 0 {
			t.Fatalf("%s: %d KiB mapped before", c.name, n)
		}
		if !populate(region{addr, addr + size}, c.advice) {
			t.Skipf("%s: the kernel has no MADV_POPULATE (Linux 5.14)", c.name)
		}
		if n := rssKiB(t, addr); n != size>>10 {
			t.Errorf("%s: %d KiB mapped after, want %d", c.name, n, size>>10)
		}
	}
	if populate(region{}, madvPopulateRead) {
		t.Error("an empty region was populated")
	}
}

// This test process's own initialisation mapped the executable's code and
// read-only data whole, and the heap range it planned: the test looks
// before populating anything itself.
func TestInitPopulatedTheExecutable(t *testing.T) {
	if v, _ := syscall.Getenv(EnvVar); v == "0" {
		t.Skip(EnvVar + "=0")
	}
	probe, err := syscall.Mmap(-1, 0, pageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(probe)
	if !populate(region{uintptr(unsafe.Pointer(&probe[0])), uintptr(unsafe.Pointer(&probe[0])) + pageSize}, madvPopulateWrite) {
		t.Skip("the kernel has no MADV_POPULATE (Linux 5.14)")
	}
	var buf [16 << 10]byte
	maps := parseMaps(readInto("/proc/self/maps", buf[:]))
	read, write := plan(maps, uintptr(unsafe.Pointer(unsafe.StringData(rodataAnchor))), uintptr(unsafe.Pointer(anchor)), HeapBytes)
	if len(read) < 2 || write.end <= write.start {
		t.Fatalf("planned read %x, write %x from %d mappings", read, write, len(maps))
	}
	for _, r := range read {
		if n, want := rssKiB(t, r.start), int((r.end-r.start)>>10); n != want {
			t.Errorf("mapping %x: %d KiB of %d mapped", r.start, n, want)
		}
	}
}
