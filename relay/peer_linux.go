package relay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
)

// checkPeerSupport reports whether same-user peer authentication works here: it does on Linux.
func checkPeerSupport() error { return nil }

// peerUID returns the OS user id owning the client end of the loopback connection from peer to
// the server at srv, read from the kernel's socket tables.
func peerUID(srv, peer netip.AddrPort) (int, error) {
	var all []tcpEntry
	for _, p := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // no IPv6
			}
			return 0, fmt.Errorf("read the socket table %s: %w", p, err)
		}
		all = append(all, parseTCPTable(string(b))...)
	}
	uid, ok := ownerOf(all, srv, peer)
	if !ok {
		return 0, fmt.Errorf("no socket at %s connected to %s in this network namespace's socket tables", peer, srv)
	}
	return uid, nil
}

// putNative writes v into b in this machine's byte order, as /proc/net/tcp prints words.
func putNative(b []byte, v uint32) { binary.NativeEndian.PutUint32(b, v) }
