//go:build linux

package prefault

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE (include/uapi/asm-generic/mman-common.h).
const madvHugepage = 14

// The kernel's transparent huge page setting and size.
const (
	thpEnabledFile = "/sys/kernel/mm/transparent_hugepage/enabled"
	thpSizeFile    = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
)

// heapAheadDone makes HeapAhead act once in a process: after a first
// large cycle the heap has grown already, and `ooda run` cycles again in
// the same process.
var heapAheadDone atomic.Bool

// HeapAhead prepares the heap for a command about to allocate about n
// bytes more (n is clamped to HeapAheadMax; below HeapAheadMin it does
// nothing), the first time it is called in a process. On a virtual
// machine every fresh 4 KiB page the heap grows into costs a fault and
// more (docs/benchmarks.md, ninth round): a cycle of 1,000 domains
// allocates about 8 MiB, all of it fresh, since a cycle never collects
// garbage. So the heap is grown by n at once, by one block of n bytes
// that the kernel is advised to back with huge pages and asked to map
// now; the block is then dropped and collected, and the runtime hands
// its memory out again, lowest addresses first, to the allocations that
// follow. It does nothing when the kernel gives no huge pages to advised
// memory (the setting "never", or no transparent huge pages at all),
// when OODA_PREFAULT=0, or where the calls are missing.
func HeapAhead(n int) {
	if n < HeapAheadMin || !heapAheadDone.CompareAndSwap(false, true) {
		return
	}
	if v, _ := syscall.Getenv(EnvVar); v == "0" {
		return
	}
	var buf [64]byte
	if !hugePagesAdvisable(readSmall(thpEnabledFile, buf[:])) {
		return
	}
	huge, ok := parseDecimal(readSmall(thpSizeFile, buf[:]))
	if !ok {
		return
	}
	n = min(n, HeapAheadMax)
	block := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	r := hugeInterior(region{start, start + uintptr(n)}, huge)
	if r.end <= r.start || !advise(r, madvHugepage) {
		// Never touched, the block costs address space only; the next
		// collection, if any, frees it.
		return
	}
	populate(r, madvPopulateWrite)
	runtime.KeepAlive(block) // the last use: the collection below frees it
	runtime.GC()
}

// advise gives r the madvise advice; it reports whether the kernel took it.
func advise(r region, advice uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, advice)
	return errno == 0
}

// readSmall reads the start of a small file (a /sys setting) into buf;
// nil when it cannot be read.
func readSmall(path string, buf []byte) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	if err != nil || n <= 0 {
		return nil
	}
	return buf[:n]
}
