package reqbody

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadAndJSON(t *testing.T) {
	type obj struct {
		Tab string `json:"tab"`
	}
	for _, tc := range []struct {
		name string
		body string
		// chunked hides the length, as a streaming client does
		chunked bool
		// capped puts the server's own cap (http.MaxBytesReader) of 8 bytes on the body
		capped   bool
		wantErr  error // ErrEmpty, or nil
		wantCode int   // Status of the error; 0: no error
		wantTab  string
	}{
		{name: "object", body: `{"tab":"t1"}`, wantTab: "t1"},
		{name: "empty", body: "", wantErr: ErrEmpty, wantCode: http.StatusBadRequest},
		{name: "white space", body: " \n\t", wantErr: ErrEmpty, wantCode: http.StatusBadRequest},
		{name: "bad JSON", body: `{"tab":`, wantCode: http.StatusBadRequest},
		{name: "trailing garbage", body: `{"tab":"t1"} x`, wantCode: http.StatusBadRequest},
		{name: "declared too large", body: strings.Repeat(" ", 65), wantCode: http.StatusRequestEntityTooLarge},
		{name: "streamed too large", body: strings.Repeat(" ", 65), chunked: true, wantCode: http.StatusRequestEntityTooLarge},
		{name: "over the server's cap", body: `{"tab":"t1"}`, chunked: true, capped: true, wantCode: http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if tc.chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(tc.body))
			}
			if tc.capped {
				r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 8)
			}
			var v obj
			err := JSON(r, 64, &v)
			if tc.wantCode == 0 {
				if err != nil || v.Tab != tc.wantTab {
					t.Fatalf("JSON: %v %+v", err, v)
				}
				return
			}
			if err == nil {
				t.Fatalf("JSON accepted %q", tc.body)
			}
			if got := Status(err); got != tc.wantCode {
				t.Errorf("Status(%v) = %d, want %d", err, got, tc.wantCode)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			var tl *TooLargeError
			if errors.As(err, &tl) && tc.capped && tl.Limit != 8 {
				t.Errorf("limit reported %d, want the server's 8", tl.Limit)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 16 << 20: "16 MiB", 64 << 10: "64 KiB", 1500: "1500 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
