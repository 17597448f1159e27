package relay

import (
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"strings"
)

// websocketGUID is the constant RFC 6455 appends to a client's key to compute its accept value.
const websocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// placeholderKey is a valid Sec-WebSocket-Key (16 zero bytes) handed to the WebSocket library in
// place of a key it would refuse (see lenientKey).
const placeholderKey = "AAAAAAAAAAAAAAAAAAAAAA=="

// secWebSocketAccept is the Sec-WebSocket-Accept value a client computes for key.
func secWebSocketAccept(key string) string {
	h := sha1.Sum([]byte(key + websocketGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// lenientKey makes the handshake accept what Chrome's DevTools server accepts: any non-empty
// Sec-WebSocket-Key. RFC 6455 asks for 16 base64-encoded bytes, and the WebSocket library
// refuses anything else with 400; go-rod sends "nil" (Chrome answers it). For such a key it
// returns a copy of r carrying a valid placeholder key and the Sec-WebSocket-Accept value the
// client computes for the key it sent (to be written in place of the library's); otherwise r as
// it is and "". A missing key or several keys stay the library's to refuse (Chrome refuses an
// empty key too).
func lenientKey(r *http.Request) (*http.Request, string) {
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return r, ""
	}
	key := strings.TrimSpace(keys[0])
	if key == "" {
		return r, ""
	}
	if b, err := base64.StdEncoding.DecodeString(key); err == nil && len(b) == 16 {
		return r, ""
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Sec-WebSocket-Key", placeholderKey)
	return r2, secWebSocketAccept(key)
}
