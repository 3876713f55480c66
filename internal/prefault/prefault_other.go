//go:build !linux

package prefault

// Elsewhere than Linux nothing is populated: the calls are Linux's.
