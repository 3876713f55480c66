//go:build !linux

package prefault

// Elsewhere than Linux nothing is populated: the calls are Linux's.

// HeapAhead does nothing elsewhere than Linux (see the Linux version).
func HeapAhead(n int) {}

// HeapFor does nothing elsewhere than Linux (see the Linux version).
func HeapFor(n int) {}
