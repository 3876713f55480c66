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

// terminalColumns is the width of the terminal on fd, 0 when fd is not
// one or does not say.
func terminalColumns(fd uintptr) int {
	var ws struct{ row, col, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.col)
}
