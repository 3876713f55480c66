//go:build !linux

package cli

import (
	"syscall"
	"unsafe"
)

// isTerminalFd reports whether fd is a terminal (TIOCGETA on the BSDs and
// macOS).
func isTerminalFd(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGETA, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
