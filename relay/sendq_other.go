//go:build !linux

package relay

import "net"

// sendQueueEmpty reports whether a small write to conn is known not to block; off Linux it is
// never known, and every message goes through the connection's writer goroutine.
func sendQueueEmpty(net.Conn) bool { return false }
