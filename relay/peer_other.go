//go:build !linux

package relay

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// checkPeerSupport reports whether same-user peer authentication works here: only on Linux,
// where the kernel's socket tables name each socket's owner without cgo.
// errPeerUnsupported says the OS does not tell tabrelay who owns a connection's other end.
var errPeerUnsupported = errors.New("--trust-same-user needs Linux: tabrelay reads the owner of a connection's peer socket from /proc/net/tcp and /proc/net/tcp6, which this system does not have")

func checkPeerSupport() error { return errPeerUnsupported }

func peerUID(netip.AddrPort, netip.AddrPort) (int, error) { return 0, errPeerUnsupported }

func putNative(b []byte, v uint32) { binary.NativeEndian.PutUint32(b, v) }
