//go:build linux

package prefault

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// heapForChildEnv runs TestHeapForChild in a process of its own, in the
// mode it names: HeapFor acts once per process.
const heapForChildEnv = "PREFAULT_HEAPFOR_CHILD"

// HeapFor maps, from where the next allocations go, the bytes asked, once
// a process; not with OODA_PREFAULT=0, not for nothing, not after
// HeapAhead mapped its block.
func TestHeapFor(t *testing.T) {
	for _, mode := range []string{"on", "off", "zero", "ahead"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHeapForChild$", "-test.v", "-test.count=1")
			// One P: each P allocates small spans from a cache of pages of
			// its own, so with two the next allocation may come from the
			// other's, wherever that lies.
			cmd.Env = append(os.Environ(), heapForChildEnv+"="+mode, "GOGC=400", "GOMAXPROCS=1", EnvVar+"=1")
			if mode == "off" {
				cmd.Env = append(cmd.Env, EnvVar+"=0")
			}
			out, err := cmd.CombinedOutput()
			if strings.Contains(string(out), "--- SKIP") {
				t.Skipf("%s", out)
			}
			if err != nil || !strings.Contains(string(out), "--- PASS: TestHeapForChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}

// heapForFiller and heapForNext hold, on the heap, what the child
// allocates before and after HeapFor.
var heapForFiller, heapForNext [][]byte

// TestHeapForChild is TestHeapFor's child process.
func TestHeapForChild(t *testing.T) {
	mode := os.Getenv(heapForChildEnv)
	if mode == "" {
		t.Skip("run by TestHeapFor in a process of its own")
	}
	// Whether this kernel maps ahead at all (Linux 5.14), asked apart
	// from the code under test.
	probe := make([]byte, 2*pageSize)
	p := (uintptr(unsafe.Pointer(unsafe.SliceData(probe))) + pageSize - 1) &^ (pageSize - 1)
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, pageSize, madvPopulateWrite); errno != 0 {
		t.Skipf("madvise(MADV_POPULATE_WRITE): %v", errno)
	}
	// Past what the package's initialisation mapped (2 MiB of heap), so
	// that what follows is fresh memory; in pieces of the probe's size,
	// so that the space a chunk's end leaves over is too small for the
	// probe or for what follows, which go where the heap ends.
	for range (3 << 20) / probeBytes {
		heapForFiller = append(heapForFiller, make([]byte, probeBytes))
	}
	n := 1 << 20
	switch mode {
	case "zero":
		n = 0
	case "ahead":
		heapAheadMapped.Store(true)
	}
	HeapFor(n)
	r := heapForMapped
	// The next allocations go where the probe said, the lowest free
	// address: inside the range mapped (unless the chunk ended first),
	// every page of it in memory before it is touched; elsewhere, none.
	var in, all int
	var outside []uintptr
	for range 6 {
		b := make([]byte, probeBytes)
		heapForNext = append(heapForNext, b)
		a := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		i, n := resident(t, region{a, a + probeBytes})
		in, all = in+i, all+n
		if a < r.start || a+probeBytes > r.end {
			outside = append(outside, a)
		}
	}
	if mode != "on" {
		if r != (region{}) || in != 0 {
			t.Fatalf("%s: mapped %#x–%#x; %d of the next %d pages in memory", mode, r.start, r.end, in, all)
		}
		return
	}
	if r.end <= r.start || r.end-r.start > uintptr(n) || r.start&(pageSize-1) != 0 {
		t.Fatalf("mapped %#x–%#x for %d bytes", r.start, r.end, n)
	}
	// Past the filler, nothing of the range was in memory before.
	if rin, rall := resident(t, r); rin != rall {
		t.Errorf("%d of the %d pages mapped are in memory, want all", rin, rall)
	}
	if r.end-r.start >= 8*probeBytes {
		if len(outside) > 0 {
			t.Errorf("allocations went to %#x, outside the range mapped, %#x–%#x", outside, r.start, r.end)
		}
		if in != all {
			t.Errorf("%d of the next %d pages are in memory, want all", in, all)
		}
	}
	// A second call, the next cycle of an `ooda run` session, maps
	// nothing more.
	heapForMapped = region{}
	HeapFor(n)
	if heapForMapped != (region{}) {
		t.Errorf("a second call mapped %#x–%#x", heapForMapped.start, heapForMapped.end)
	}
}

// resident counts the pages of r that are in memory (mincore), and all
// of them.
func resident(t *testing.T, r region) (in, all int) {
	t.Helper()
	vec := make([]byte, (r.end-r.start+pageSize-1)/pageSize)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, r.start, r.end-r.start, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// heapForRegion starts at the probe's page, covers n bytes at most, and
// never leaves the chunk the probe ends in.
func TestHeapForRegion(t *testing.T) {
	const chunk = heapChunk
	for _, c := range []struct {
		name  string
		start uintptr
		n     int
		want  region
	}{
		{"inside a chunk", 5*chunk + 0x1010, 1 << 20, region{5*chunk + 0x1000, 5*chunk + 0x1000 + 1<<20}},
		{"cut at the chunk's end", 6*chunk - 0x20000, 1 << 20, region{6*chunk - 0x20000, 6 * chunk}},
		{"the probe across the end", 6*chunk - 0x2000, 4 << 20, region{6*chunk - 0x2000, 7*chunk - 0x2000}},
		{"more than a chunk", 5 * chunk, 64 << 20, region{5 * chunk, 6 * chunk}},
		{"nothing", 5 * chunk, 0, region{5 * chunk, 5 * chunk}},
	} {
		if got := heapForRegion(c.start, c.n); got != c.want {
			t.Errorf("%s: %#x–%#x, want %#x–%#x", c.name, got.start, got.end, c.want.start, c.want.end)
		}
	}
}
