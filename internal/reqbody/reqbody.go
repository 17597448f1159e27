// Package reqbody reads HTTP request bodies within a size limit. The relay caps every route's
// body (413 before a byte is read when Content-Length is over the cap, an error from Read once
// a body without one goes over it); the handlers read and decode through Read and JSON, which
// turn either case into a *TooLargeError, so no route can be made to buffer more than its
// limit and every caller answers 413 with the same words.
package reqbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Default is the body limit of a route that declares none: actions, goals, skills and
// recordings are kilobytes.
const Default int64 = 1 << 20

// ErrEmpty is returned by JSON for a request without a body.
var ErrEmpty = errors.New("the request has no body")

// TooLargeError reports a request body over its route's limit.
type TooLargeError struct {
	// Limit is the most the route accepts, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the request body is larger than %s, the most this route accepts", Size(e.Limit))
}

// Size spells a byte count for people: "1 MiB", "64 KiB", "1500 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads r's whole body, refusing one over limit bytes (or over the cap the server put on
// the body, whichever is smaller) with a *TooLargeError. A declared Content-Length over limit
// is refused before anything is read.
func Read(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, &TooLargeError{Limit: min(mbe.Limit, limit)}
	case err != nil:
		return nil, fmt.Errorf("reading the request body: %w", err)
	case int64(len(b)) > limit:
		return nil, &TooLargeError{Limit: limit}
	}
	return b, nil
}

// JSON reads r's body (within limit, as Read) and decodes it as one JSON value into v. A body
// that is empty or only white space gives ErrEmpty and leaves v as it was.
func JSON(r *http.Request, limit int64, v any) error {
	b, err := Read(r, limit)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return ErrEmpty
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// Status is the HTTP status for an error of Read or JSON: 413 for a body over the limit, else
// 400.
func Status(err error) int {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
