package relay

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// sendQueueEmpty reports whether everything written to conn has left its socket's send queue
// (the peer's receive window is open): a small write then returns without blocking.
func sendQueueEmpty(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		v, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		if err == nil {
			n = v
		}
	}); err != nil {
		return false
	}
	return n == 0
}
