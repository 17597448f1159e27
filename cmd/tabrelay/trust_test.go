package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeTrustSameUser: `tabrelay serve --trust-same-user` lets a client of the same OS user
// list the tabs without the secret; without the flag it gets 401. (relay's TestTrustSameUser
// runs a client as another user.)
func TestServeTrustSameUser(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  int
	}{
		{[]string{"--trust-same-user"}, http.StatusOK},
		{nil, http.StatusUnauthorized},
	} {
		t.Run(strings.Join(append([]string{"serve"}, tc.flags...), " "), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			var out, errOut bytes.Buffer
			args := append([]string{"serve", "--addr", addr, "--home", t.TempDir(), "--log-level", "error"}, tc.flags...)
			go func() { done <- execute(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errOut}) }()
			defer func() {
				cancel()
				<-done
			}()
			if runtime.GOOS != "linux" && len(tc.flags) > 0 {
				if err := <-done; err == nil || !strings.Contains(err.Error(), "needs Linux") {
					t.Errorf("serve --trust-same-user on %s: %v, want a refusal naming Linux", runtime.GOOS, err)
				}
				done <- nil
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				resp, err := http.Get("http://" + addr + "/json/list")
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != tc.want {
						t.Errorf("GET /json/list without the secret = %d, want %d", resp.StatusCode, tc.want)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the server did not answer: %v\n%s", err, errOut.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
