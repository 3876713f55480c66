//go:build linux

package prefault

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// heapChunk is the unit in which the Go runtime maps its heap (its
// pallocChunkBytes, 4 MiB on every platform): it grows the heap by whole
// chunks, each mapped read-write at once, inside arenas reserved for the
// heap alone.
const heapChunk = 4 << 20

// probeBytes is the size of the probe HeapFor allocates: above the
// runtime's largest small-object size (32 KiB), so that the probe gets
// pages of its own, where the page allocator places every new span —
// the lowest free address — rather than a slot in a span begun earlier.
const probeBytes = 32<<10 + 1

// heapForDone makes HeapFor act once in a process: in an `ooda run`
// session the later cycles allocate from memory the collector freed,
// which is mapped already.
var heapForDone atomic.Bool

// heapAheadMapped is set once HeapAhead has mapped its block: the heap a
// command then allocates from is that block, mapped already.
var heapAheadMapped atomic.Bool

// heapForMapped is the range HeapFor mapped, for the tests.
var heapForMapped region

// heapProbe holds HeapFor's probe while its address is read, so that the
// compiler places it on the heap, not on the stack.
var heapProbe []byte

// HeapFor maps, with one madvise call, the n bytes of heap the
// allocations about to come will land on, the first time it is called
// in a process. The start of package initialisation maps the first
// 2 MiB of the heap (HeapBytes), but only as far as the end of the
// runtime's first 4 MiB chunk, and where the heap starts in that chunk
// is random; a cycle whose state is large allocates past it, one fresh
// page at a time (docs/benchmarks.md, eleventh round). A caller that
// knows how much it is about to allocate calls HeapFor with that.
//
// It allocates a probe of its own pages, which the page allocator places
// at the lowest free address of the heap — where the next spans go, in a
// process that has collected no garbage — and maps from the probe
// upward, at most n bytes and never past the end of the chunk the probe
// is in: the runtime mapped that whole chunk for the heap, so nothing
// else is touched. What lies past the chunk is mapped by the runtime
// later, and is faulted in page by page as before.
//
// It does nothing when n is not positive, after HeapAhead has mapped its
// block, when OODA_PREFAULT=0, or on Linux before 5.14 (the kernel
// refuses the advice).
func HeapFor(n int) {
	if n <= 0 || heapAheadMapped.Load() || !heapForDone.CompareAndSwap(false, true) {
		return
	}
	if v, _ := syscall.Getenv(EnvVar); v == "0" {
		return
	}
	heapProbe = make([]byte, probeBytes)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(heapProbe)))
	heapProbe = nil
	if r := heapForRegion(start, n); populate(r, madvPopulateWrite) {
		heapForMapped = r
	}
}

// heapForRegion is the range HeapFor maps for a probe at start: from the
// probe's page, n bytes (at most a chunk), cut at the end of the chunk
// the probe ends in.
func heapForRegion(start uintptr, n int) region {
	n = min(n, heapChunk)
	first := start &^ (pageSize - 1)
	chunkEnd := (start + probeBytes + heapChunk - 1) &^ (heapChunk - 1)
	end := first + uintptr(n)
	if end < first || end > chunkEnd { // wrapped, or past the chunk
		end = chunkEnd
	}
	return region{first, end}
}
