//go:build !linux

package relay

import (
	"encoding/binary"
	"net/netip"
)

// checkPeerSupport reports whether same-user peer authentication works here: only on Linux,
// where the kernel's socket tables name each socket's owner without cgo.
func checkPeerSupport() error { return errPeerUnsupported }

func peerUID(netip.AddrPort, netip.AddrPort) (int, error) { return 0, errPeerUnsupported }

func putNative(b []byte, v uint32) { binary.NativeEndian.PutUint32(b, v) }
