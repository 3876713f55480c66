package cli

import (
	"syscall"
	"unsafe"
)

// isTerminalFd reports whether fd is a terminal: a TCGETS ioctl succeeds
// only on a tty (a character device such as /dev/null is not one).
func isTerminalFd(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
