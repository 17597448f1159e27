package proof

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestFixedVector(t *testing.T) {
	v := TestVector()
	s, p := Secret(v.Secret), Pairing(v.Code)
	for _, c := range []struct{ name, got, want string }{
		{"server proof", s.ServerProof(v.ClientNonce, v.ServerNonce, v.Addr), v.ServerProof},
		{"credential", s.Credential(v.ClientNonce, v.ServerNonce), v.Credential},
		{"pairing server proof [::1]", p.ServerProof(v.ClientNonce, v.ServerNonce, v.Addr6), v.PairServerProof6},
		{"pairing credential", p.Credential(v.ClientNonce, v.ServerNonce), v.PairCredential},
		{"pairing code id", PairingCodeID(v.Code), v.PairingID},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
		}
	}
}

func TestServerProof(t *testing.T) {
	v := TestVector()
	s := Secret(v.Secret)
	proof := s.ServerProof(v.ClientNonce, v.ServerNonce, v.Addr)
	for _, c := range []struct {
		name                 string
		key                  Key
		nc, ns, addr, proofv string
		ok                   bool
	}{
		{"right", s, v.ClientNonce, v.ServerNonce, v.Addr, proof, true},
		{"other secret", Secret(v.Secret + "x"), v.ClientNonce, v.ServerNonce, v.Addr, proof, false},
		{"pairing key, same bytes", Pairing(v.Secret), v.ClientNonce, v.ServerNonce, v.Addr, proof, false},
		{"other client nonce", s, v.ClientNonce + "0", v.ServerNonce, v.Addr, proof, false},
		{"other server nonce", s, v.ClientNonce, "1700000001.ffeeddccbbaa99887766554433221100", v.Addr, proof, false},
		{"relayed from [::1]", s, v.ClientNonce, v.ServerNonce, v.Addr6, proof, false},
		{"other port", s, v.ClientNonce, v.ServerNonce, "127.0.0.1:18793", proof, false},
		{"upper-case hex", s, v.ClientNonce, v.ServerNonce, v.Addr, strings.ToUpper(proof), false},
		{"empty", s, v.ClientNonce, v.ServerNonce, v.Addr, "", false},
		{"the client credential's MAC", s, v.ClientNonce, v.ServerNonce, v.Addr, v.Credential[len(v.Credential)-64:], false},
	} {
		if got := c.key.CheckServerProof(c.nc, c.ns, c.addr, c.proofv); got != c.ok {
			t.Errorf("%s: CheckServerProof = %v, want %v", c.name, got, c.ok)
		}
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := Secret(TestVector().Secret)
	nc := NewClientNonce()
	ns := NewServerNonce(now)
	good := s.Credential(nc, ns)
	exp, _ := ServerNonceExpiry(ns)
	far := "9999999999." + strings.Repeat("a", 32)
	tamper := func(cred string, i int) string { // flips one character, keeping the form
		b := []byte(cred)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		key  Key
		cred string
		at   time.Time
		want error
	}{
		{"fresh", s, good, now, nil},
		{"just before expiry", s, good, exp.Add(-time.Second), nil},
		{"at expiry", s, good, exp, ErrExpired},
		{"replayed after expiry", s, good, exp.Add(time.Hour), ErrExpired},
		{"expiry beyond any TTL", s, s.Credential(nc, far), now, ErrExpired},
		{"other secret", Secret(TestVector().Secret + "x"), good, now, ErrBadMAC},
		{"pairing key", Pairing(TestVector().Secret), good, now, ErrBadMAC},
		{"secret credential used for pairing", Pairing(TestVector().Code), good, now, ErrBadMAC},
		{"tampered MAC", s, tamper(good, len(good)-1), now, ErrBadMAC},
		{"tampered client nonce", s, tamper(good, len(good)-66), now, ErrBadMAC},
		{"tampered server nonce", s, tamper(good, len(CredentialPrefix)+12), now, ErrBadMAC},
		{"plain secret", s, TestVector().Secret, now, ErrMalformed},
		{"empty", s, "", now, ErrMalformed},
		{"prefix only", s, CredentialPrefix, now, ErrMalformed},
		{"missing MAC", s, strings.TrimSuffix(good, good[len(good)-65:]), now, ErrMalformed},
		{"extra field", s, good + ".00", now, ErrMalformed},
		{"upper-case MAC", s, good[:len(good)-64] + strings.ToUpper(good[len(good)-64:]), now, ErrMalformed},
	} {
		err := c.key.Verify(c.cred, c.at)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestParseCredential(t *testing.T) {
	p, err := ParseCredential(TestVector().Credential)
	if err != nil {
		t.Fatal(err)
	}
	if p.ServerNonce != TestVector().ServerNonce || p.ClientNonce != TestVector().ClientNonce || p.Expiry.Unix() != 1700000000 {
		t.Errorf("ParseCredential = %+v", p)
	}
	for _, bad := range []string{
		"tr1.",
		"tr2." + strings.TrimPrefix(TestVector().Credential, "tr1."),
		"tr1.x.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff." + strings.Repeat("0", 64),
		"tr1.1700000000.ffee.00112233445566778899aabbccddeeff." + strings.Repeat("0", 64),
		"tr1.1700000000.ffeeddccbbaa99887766554433221100.short." + strings.Repeat("0", 64),
		"tr1.1700000000.ffeeddccbbaa99887766554433221100.0011223344556677889!aabbccddeeff." + strings.Repeat("0", 64),
		"tr1.-1.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff." + strings.Repeat("0", 64),
		"tr1.1700000000.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff." + strings.Repeat("0", 63),
		"tr1.99999999999999999999.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff." + strings.Repeat("0", 64),
	} {
		if _, err := ParseCredential(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseCredential(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestCheckClientNonce(t *testing.T) {
	for _, c := range []struct {
		nc string
		ok bool
	}{
		{NewClientNonce(), true},
		{strings.Repeat("a", 16), true},
		{strings.Repeat("A_-9", 16), true},
		{strings.Repeat("a", 15), false},
		{strings.Repeat("a", 65), false},
		{strings.Repeat("a", 16) + ".", false},
		{strings.Repeat("a", 16) + "|", false},
		{"", false},
	} {
		if err := CheckClientNonce(c.nc); (err == nil) != c.ok {
			t.Errorf("CheckClientNonce(%q) = %v, want ok=%v", c.nc, err, c.ok)
		}
	}
}

func TestCanonicalAddr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"127.0.0.1:18792", "127.0.0.1:18792"},
		{"[::1]:18792", "[::1]:18792"},
		{"[0:0:0:0:0:0:0:1]:80", "[::1]:80"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80"},
		{"localhost:80", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:0", ""},
		{"127.0.0.1:x", ""},
		{"[fe80::1%lo]:80", ""},
	} {
		got, err := CanonicalAddr(c.in)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("CanonicalAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if got := Addr(net.ParseIP("::ffff:127.0.0.1"), 1); got != "127.0.0.1:1" {
		t.Errorf("Addr of an IPv4-mapped address = %q", got)
	}
}

func FuzzParseCredential(f *testing.F) {
	f.Add(TestVector().Credential)
	f.Add(TestVector().PairCredential)
	f.Add("tr1.")
	f.Add("tr1.1.2.3.4")
	f.Add(TestVector().Secret)
	s := Secret(TestVector().Secret)
	now := time.Unix(1_699_999_990, 0)
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseCredential(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseCredential(%q) error %v is not ErrMalformed", in, err)
			}
			return
		}
		// A parsed credential is rebuilt exactly from its fields.
		if re := CredentialPrefix + p.ServerNonce + "." + p.ClientNonce + "." + p.MAC; re != in {
			t.Fatalf("ParseCredential(%q) = %+v, which rebuilds as %q", in, p, re)
		}
		// Only the real credential verifies.
		if err := s.Verify(in, now); err == nil && in != TestVector().Credential {
			t.Fatalf("Verify accepted %q", in)
		}
	})
}
