//go:build linux

package prefault

import (
	"syscall"
	"unsafe"
)

// The madvise advice values of Linux 5.14 (include/uapi/asm-generic/mman-common.h).
const (
	madvPopulateRead  = 22
	madvPopulateWrite = 23
)

// anchor is the first heap object this package allocates: the heap grows
// upward from about there.
var anchor *[16]byte

// rodataAnchor is a string constant, whose bytes are in the executable's
// read-only data.
const rodataAnchor = "ooda prefault"

func init() {
	if v, _ := syscall.Getenv(EnvVar); v == "0" {
		return
	}
	anchor = new([16]byte)
	var buf [16 << 10]byte
	maps := parseMaps(readInto("/proc/self/maps", buf[:]))
	read, write := plan(maps, uintptr(unsafe.Pointer(unsafe.StringData(rodataAnchor))), uintptr(unsafe.Pointer(anchor)), HeapBytes)
	for _, r := range read {
		populate(r, madvPopulateRead)
	}
	populate(write, madvPopulateWrite)
}

// readInto reads the file at path into buf, as much as fits (a single
// read takes a /sys setting whole; /proc/self/maps takes several); nil
// when nothing could be read.
func readInto(path string, buf []byte) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	if n == 0 {
		return nil
	}
	return buf[:n]
}

// populate maps r's pages with one madvise call. It reports whether the
// kernel did; an older kernel answers EINVAL, and nothing is lost.
func populate(r region, advice uintptr) bool {
	return r.end > r.start && advise(r, advice)
}

// advise gives r the madvise advice; it reports whether the kernel took it.
func advise(r region, advice uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, advice)
	return errno == 0
}
