package relay

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

//go:generate go run ./devtools/gen.go

// devtoolsFiles holds the protocol description /json/protocol serves: Chromium's own protocol
// files (the devtools-protocol npm package, BSD-3-Clause, see devtools/LICENSE and
// devtools/VERSION) merged as Chrome serves them, gzip-compressed (160 KB for 1.6 MB).
// chrome.debugger gives no access to the browser's own description, so it may be a little older
// or newer than the browser's.
//
//go:embed devtools/protocol.json.gz devtools/LICENSE devtools/VERSION
var devtoolsFiles embed.FS

const protocolFile = "devtools/protocol.json.gz"

// jsonProtocol serves /json/protocol like Chrome (application/json, the whole description),
// compressed when the client accepts gzip.
func (s *Server) jsonProtocol(c echo.Context) error {
	gz, err := devtoolsFiles.ReadFile(protocolFile)
	if err != nil {
		return fmt.Errorf("tabrelay: the embedded protocol description: %w", err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/json; charset=UTF-8")
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if acceptsGzip(c.Request()) {
		h.Set(echo.HeaderContentEncoding, "gzip")
		return c.Blob(http.StatusOK, "application/json; charset=UTF-8", gz)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("tabrelay: the embedded protocol description: %w", err)
	}
	defer zr.Close()
	c.Response().WriteHeader(http.StatusOK)
	_, err = io.Copy(c.Response(), zr)
	return err
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip (and does not refuse it
// with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values(echo.HeaderAcceptEncoding) {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") {
				q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
				return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
			}
		}
	}
	return false
}
