package relay

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
)

// Same-user peer authentication (Options.TrustSameUser). A process running as the server's own
// OS user can read the secret from tabrelay's home anyway, so for it the secret protects
// nothing; clients that cannot carry one (Puppeteer's browserURL, agent-browser --cdp PORT,
// pychrome, a client that sends no headers) then work unmodified. The web browser runs as that
// same user too, which is why a request with any sign of coming from a browser keeps the usual
// rules (see browserProvenance), and why the option is off by default: an app sandboxed as the
// same user (Flatpak, a container sharing the host's network) that cannot read the home could
// reach the browser with it on.

// browserProvenance reports whether a request bears a browser's marks: an Origin header (every
// browser WebSocket and CORS request, extensions included), Sec-Fetch-Site (every request a
// browser makes, typed addresses included) or Sec-Fetch-Dest / Sec-Fetch-User. Node's fetch
// (undici) sends Sec-Fetch-Mode alone, and no browser does: that one does not count.
func browserProvenance(h http.Header) bool {
	for _, k := range []string{"Origin", "Sec-Fetch-Site", "Sec-Fetch-Dest", "Sec-Fetch-User"} {
		if len(h.Values(k)) > 0 {
			return true
		}
	}
	return false
}

// samePeerUser reports whether r comes over loopback TCP from a socket owned by this process's
// OS user (and a reason when it does not, for the log).
func samePeerUser(r *http.Request) (bool, string) {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false, "no local address"
	}
	srv, err := netip.ParseAddrPort(local.String())
	if err != nil {
		return false, "local address " + local.String() + " is not TCP"
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false, "peer address " + r.RemoteAddr + " is not TCP"
	}
	if !peer.Addr().Unmap().IsLoopback() {
		return false, "the peer is not on loopback"
	}
	uid, err := peerUID(srv, peer)
	if err != nil {
		return false, err.Error()
	}
	if uid != os.Getuid() {
		return false, "the peer runs as another user"
	}
	return true, ""
}

// tcpEntry is one socket of the kernel's TCP table.
type tcpEntry struct {
	local, remote netip.AddrPort
	uid           int
}

// parseTCPTable reads a /proc/net/tcp or /proc/net/tcp6 table: per line after the header,
// "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …", addresses in
// hexadecimal, each 32-bit word of the IP in the machine's byte order, the port in big-endian
// digits. Lines it cannot read are skipped.
func parseTCPTable(text string) []tcpEntry {
	var out []tcpEntry
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 {
			continue
		}
		l, err1 := parseProcAddr(f[1])
		rm, err2 := parseProcAddr(f[2])
		uid, err3 := parseDecimal(f[7])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, tcpEntry{local: l, remote: rm, uid: uid})
	}
	return out
}

// parseDecimal parses a non-negative decimal number that fits an int.
func parseDecimal(s string) (int, error) {
	if s == "" || len(s) > 10 {
		return 0, errors.New("not a number")
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or a 32-digit IPv6 address and its port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok || (len(ipHex) != 8 && len(ipHex) != 32) || len(portHex) != 4 {
		return netip.AddrPort{}, errors.New("not an address")
	}
	port, err := parseHex(portHex)
	if err != nil {
		return netip.AddrPort{}, err
	}
	b := make([]byte, len(ipHex)/2)
	for w := 0; w < len(ipHex)/8; w++ {
		v, err := parseHex(ipHex[w*8 : w*8+8])
		if err != nil {
			return netip.AddrPort{}, err
		}
		putNative(b[w*4:w*4+4], uint32(v))
	}
	ip, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// parseHex parses up to 8 hexadecimal digits.
func parseHex(s string) (uint64, error) {
	var n uint64
	for _, c := range s {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = byte(c - '0')
		case c >= 'a' && c <= 'f':
			d = byte(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = byte(c-'A') + 10
		default:
			return 0, errors.New("not hexadecimal")
		}
		n = n<<4 | uint64(d)
	}
	return n, nil
}

// ownerOf finds, in tables, the socket at the other end of a connection to the server at srv
// from peer: the one whose own address is peer and whose remote one is srv. IPv4 addresses
// match their IPv4-mapped IPv6 form (a dual-stack socket).
func ownerOf(tables []tcpEntry, srv, peer netip.AddrPort) (int, bool) {
	same := func(a, b netip.AddrPort) bool {
		return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
	}
	for _, e := range tables {
		if same(e.local, peer) && same(e.remote, srv) {
			return e.uid, true
		}
	}
	return 0, false
}
