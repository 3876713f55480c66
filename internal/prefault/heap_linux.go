//go:build linux

package prefault

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The madvise advice values for transparent huge pages
// (include/uapi/asm-generic/mman-common.h).
const (
	madvHugepage   = 14
	madvNoHugepage = 15
)

// The kernel's transparent huge page settings and size.
const (
	thpDir         = "/sys/kernel/mm/transparent_hugepage/"
	thpEnabledFile = thpDir + "enabled"
	thpSizeFile    = thpDir + "hpage_pmd_size"
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
// garbage. So the heap is grown by n at once, by one block whose whole
// huge pages the kernel is asked to map now, in huge pages; the block is
// then dropped and collected, and the runtime hands its memory out
// again, lowest addresses first, to the allocations that follow.
//
// It does nothing when huge pages would not come (the kernel's setting
// "never", for all sizes or for this one, no transparent huge pages at
// all, GODEBUG=disablethp=1), when OODA_PREFAULT=0, and when GOGC is set
// below the 400 % ooda runs at (cmd/ooda): the runtime would then hand
// the freed block back to the system before the command used it. Where
// the kernel cannot map ahead (Linux before 5.14), the block is only
// advised, and the command's first touches get the huge pages.
func HeapAhead(n int) {
	if n < HeapAheadMin || !heapAheadDone.CompareAndSwap(false, true) {
		return
	}
	if v, _ := syscall.Getenv(EnvVar); v == "0" {
		return
	}
	if !collectorKeepsFreedMemory() || thpDisabledByGodebug() {
		return
	}
	var buf [64]byte
	always, advised := thpSetting(readInto(thpEnabledFile, buf[:]))
	if !always && !advised {
		return
	}
	huge, ok := parseDecimal(readInto(thpSizeFile, buf[:]))
	if !ok || huge == 0 || huge > HeapAheadMax {
		return
	}
	// hugepages-<size>kB/enabled, where the kernel has one (6.8), may turn
	// this size off or on apart from the setting above.
	var path [len(thpDir) + 48]byte
	if always, advised, ok = thpSizeSetting(readInto(sizeEnabledFile(path[:0], huge), buf[:]), always, advised); !ok {
		return
	}
	n = min(n, HeapAheadMax)
	// One huge page more than n, so that its whole huge pages cover n
	// wherever the block starts.
	block := make([]byte, n+int(huge))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	r := hugeInterior(region{start, start + uintptr(len(block))}, huge)
	if r.end <= r.start {
		return
	}
	if !always {
		if !advise(r, madvHugepage) {
			// Never touched, the block costs address space only; the
			// next collection, if any, frees it.
			return
		}
	}
	if populate(r, madvPopulateWrite) {
		heapAheadMapped.Store(true)
	}
	if !always {
		// The huge pages mapped stay; the advice goes, so that in a long
		// `ooda run` session the kernel does not collapse into huge pages
		// again memory the runtime has given back.
		advise(r, madvNoHugepage)
	}
	// The block must stay allocated while it is advised and mapped; after
	// this last use the collection below frees it.
	runtime.KeepAlive(block)
	runtime.GC()
}

// collectorKeepsFreedMemory reports whether GOGC leaves the collector at
// the 400 % ooda sets for itself or above: unset (cmd/ooda then sets
// 400), off, or a number from 400.
func collectorKeepsFreedMemory() bool {
	v, ok := syscall.Getenv("GOGC")
	if !ok || v == "" || v == "off" {
		return true
	}
	p, ok := parseDecimal([]byte(v))
	return ok && p >= 400
}

// thpDisabledByGodebug reports whether GODEBUG asks the runtime to keep
// the heap out of huge pages.
func thpDisabledByGodebug() bool {
	v, _ := syscall.Getenv("GODEBUG")
	return hasSetting([]byte(v), "disablethp=1")
}

// hasSetting reports whether the comma-separated list b holds s.
func hasSetting(b []byte, s string) bool {
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != ',' {
			i++
		}
		if string(b[:i]) == s {
			return true
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return false
}

// sizeEnabledFile appends to dst the path of the per-size setting of
// huge pages of size bytes: thpDir + "hugepages-2048kB/enabled".
func sizeEnabledFile(dst []byte, size uintptr) string {
	dst = append(dst, thpDir+"hugepages-"...)
	dst = appendDecimal(dst, size>>10)
	return string(append(dst, "kB/enabled"...))
}

// appendDecimal appends v in decimal.
func appendDecimal(dst []byte, v uintptr) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, d[i:]...)
}
