package relay

import (
	"net/netip"
	"testing"
)

// tcpSample is a /proc/net/tcp as Linux writes it on a little-endian machine: a listener on
// 127.0.0.1:9333 (uid 0) and a connection to it from 127.0.0.1:41000 (uid 65534).
const tcpSample = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2475 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 19466 1 000000003638b3a3 100 0 0 10 0
   1: 0100007F:A028 0100007F:2475 01 00000000:00000000 00:00000000 00000000 65534        0 181261 1 000000009929d01b 20 4 30 10 -1
   2: 0100007F:2475 0100007F:A028 01 00000000:00000000 00:00000000 00000000     0        0 181262 1 000000006f656466 20 4 30 10 -1
garbage line
`

// tcp6Sample: a connection from [::1]:41001 (uid 1000) to [::1]:9333, and one from
// 127.0.0.1:41002 through a dual-stack socket (IPv4-mapped, uid 1001).
const tcp6Sample = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:A029 00000000000000000000000001000000:2475 01 00000000:00000000 00:00000000 00000000  1000        0 5 1 0 20 4 30 10 -1
   1: 0000000000000000FFFF00000100007F:A02A 0000000000000000FFFF00000100007F:2475 01 00000000:00000000 00:00000000 00000000  1001        0 6 1 0 20 4 30 10 -1
`

func TestParseTCPTable(t *testing.T) {
	entries := append(parseTCPTable(tcpSample), parseTCPTable(tcp6Sample)...)
	if len(entries) != 5 {
		t.Fatalf("parsed %d entries, want 5: %+v", len(entries), entries)
	}
	srv4 := netip.MustParseAddrPort("127.0.0.1:9333")
	srv6 := netip.MustParseAddrPort("[::1]:9333")
	for _, tc := range []struct {
		srv, peer netip.AddrPort
		uid       int
		found     bool
	}{
		{srv4, netip.MustParseAddrPort("127.0.0.1:41000"), 65534, true},
		{netip.MustParseAddrPort("[::ffff:127.0.0.1]:9333"), netip.MustParseAddrPort("[::ffff:127.0.0.1]:41000"), 65534, true},
		{srv6, netip.MustParseAddrPort("[::1]:41001"), 1000, true},
		{srv4, netip.MustParseAddrPort("127.0.0.1:41002"), 1001, true},
		{srv4, netip.MustParseAddrPort("127.0.0.1:9333"), 0, false}, // the server's own socket is not a peer
		{srv4, netip.MustParseAddrPort("127.0.0.1:41009"), 0, false},
		{srv6, netip.MustParseAddrPort("127.0.0.1:41000"), 0, false},
	} {
		uid, ok := ownerOf(entries, tc.srv, tc.peer)
		if ok != tc.found || uid != tc.uid {
			t.Errorf("owner of %s → %s = %d, %v; want %d, %v", tc.peer, tc.srv, uid, ok, tc.uid, tc.found)
		}
	}
}

func FuzzParseTCPTable(f *testing.F) {
	f.Add(tcpSample)
	f.Add(tcp6Sample)
	f.Add("h\n 0: 0100007F:zz 0100007F:2475 01 a b c 12345678901234")
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range parseTCPTable(text) {
			if e.uid < 0 {
				t.Fatalf("negative uid from %q", text)
			}
		}
	})
}
