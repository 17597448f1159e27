package relay

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/internal/proof"
)

// authBodyLimit bounds the bodies of the /auth routes (a few nonces).
const authBodyLimit = 4 << 10

// maxPairCodes bounds the pairing codes outstanding at once; making one more drops the oldest.
const maxPairCodes = 16

// pairCodes are the one-time pairing codes a server gave out, by id (proof.PairingCodeID).
type pairCodes struct {
	mu    sync.Mutex
	codes map[string]pairCode
}

type pairCode struct {
	code    string
	expires time.Time
}

// add stores a new code and returns it with its expiry.
func (p *pairCodes) add(now time.Time) (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.codes == nil {
		p.codes = map[string]pairCode{}
	}
	for id, c := range p.codes {
		if !now.Before(c.expires) {
			delete(p.codes, id)
		}
	}
	for len(p.codes) >= maxPairCodes {
		oldest := ""
		for id, c := range p.codes {
			if oldest == "" || c.expires.Before(p.codes[oldest].expires) {
				oldest = id
			}
		}
		delete(p.codes, oldest)
	}
	code := proof.NewPairingCode()
	exp := now.Add(proof.PairCodeTTL)
	p.codes[proof.PairingCodeID(code)] = pairCode{code: code, expires: exp}
	return code, exp
}

// get returns the live code with this id.
func (p *pairCodes) get(id string, now time.Time) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.codes[id]
	if !ok || !now.Before(c.expires) {
		return "", false
	}
	return c.code, true
}

// take removes the code with this id, reporting whether it was still there (single use).
func (p *pairCodes) take(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.codes[id]
	delete(p.codes, id)
	return ok
}

// NewPairingCode makes a one-time pairing code, valid for proof.PairCodeTTL, that the options
// page exchanges for the secret (POST /auth/pair) after this server proved it knows the code.
func (s *Server) NewPairingCode() (code string, expires time.Time) {
	return s.pairing.add(time.Now())
}

// decodeAuthBody decodes a small JSON body, refusing anything larger than authBodyLimit.
func decodeAuthBody(c echo.Context, v any) error {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, authBodyLimit)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "tabrelay: the body is too large")
		}
		return echo.NewHTTPError(http.StatusBadRequest, "tabrelay: the body must be JSON: "+err.Error())
	}
	return nil
}

// authChallenge answers POST /auth/challenge: a server nonce and the proof of the secret (or of
// the pairing code named by "pairing"), bound to the address the client connected to. It needs
// no authentication and gives nothing usable to a caller that does not know the key.
func (s *Server) authChallenge(c echo.Context) error {
	var req proof.ChallengeRequest
	if err := decodeAuthBody(c, &req); err != nil {
		return err
	}
	if err := proof.CheckClientNonce(req.ClientNonce); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "tabrelay: "+err.Error())
	}
	now := time.Now()
	key := proof.Secret(s.Token())
	if req.Pairing != "" {
		code, ok := s.pairing.get(req.Pairing, now)
		if !ok {
			return echo.NewHTTPError(http.StatusNotFound, "tabrelay: this pairing code is unknown, used or expired; run `tabrelay pair` for a new pairing link")
		}
		key = proof.Pairing(code)
	}
	local, _ := c.Request().Context().Value(http.LocalAddrContextKey).(net.Addr)
	ans, err := key.Answer(req.ClientNonce, local, now)
	if err != nil {
		return echo.NewHTTPError(http.StatusInternalServerError, "tabrelay: "+err.Error())
	}
	return c.JSON(http.StatusOK, ans)
}

// authPair answers POST /auth/pair: the secret, for a credential made with a live pairing code
// (after the client checked this server's proof of the code). The code is then used up.
func (s *Server) authPair(c echo.Context) error {
	var req proof.PairRequest
	if err := decodeAuthBody(c, &req); err != nil {
		return err
	}
	code, ok := s.pairing.get(req.Pairing, time.Now())
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "tabrelay: this pairing code is unknown, used or expired; run `tabrelay pair` for a new pairing link")
	}
	if err := proof.Pairing(code).Verify(req.Credential, time.Now()); err != nil {
		s.log.Warn().Err(err).Msg("refused a pairing attempt with a wrong credential")
		return s.refuseWrongCredential(c, "tabrelay: the pairing credential is not valid: "+err.Error())
	}
	if !s.pairing.take(req.Pairing) {
		return echo.NewHTTPError(http.StatusNotFound, "tabrelay: this pairing code was used meanwhile; run `tabrelay pair` for a new pairing link")
	}
	s.log.Info().Msg("paired a browser with a one-time pairing code")
	return c.JSON(http.StatusOK, proof.PairAnswer{Token: s.Token()})
}

// authPairCode answers POST /auth/pair-code (authenticated): a new one-time pairing code, for
// `tabrelay pair`.
func (s *Server) authPairCode(c echo.Context) error {
	code, exp := s.NewPairingCode()
	return c.JSON(http.StatusOK, proof.PairCodeAnswer{Code: code, Expires: exp})
}

// Accepts reports whether tok opens this server's authenticated endpoints: the secret, or a live
// credential made with it (what authenticate checks, without the throttle). The impostor tests
// try everything an impostor received with it.
func (s *Server) Accepts(tok string) bool { return s.checkSecret(tok) }

// checkSecret reports whether tok is the secret or a live credential derived from it.
func (s *Server) checkSecret(tok string) bool {
	if proof.IsCredential(tok) {
		return proof.Secret(s.Token()).Verify(tok, time.Now()) == nil
	}
	return s.opts.Secret.Check(tok)
}
