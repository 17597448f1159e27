package relay_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/relay"
)

// peerHelperEnv makes the test binary, run as TestPeerHelperProcess, ask the relay at its value
// for /json/list with nothing but a Host header and print the status code.
const peerHelperEnv = "TABRELAY_PEER_HELPER_ADDR"

// TestPeerHelperProcess is not a test: it is the client another process (possibly as another OS
// user) runs for TestTrustSameUser.
func TestPeerHelperProcess(t *testing.T) {
	addr := os.Getenv(peerHelperEnv)
	if addr == "" {
		return
	}
	code, err := bareGet(addr, "/json/list")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(code)
	os.Exit(0)
}

// bareGet sends GET path with a Host header and no other, as the simplest client does, and
// returns the status code.
func bareGet(addr, path string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// runPeerHelper runs the test binary as a separate client process, as the OS user cred (nil:
// this process's user), and returns the status code it got for /json/list.
func runPeerHelper(t *testing.T, addr string, cred *syscall.Credential) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		// the test binary sits in go's private build directory: copy it where the other user
		// may run it
		dir, err := os.MkdirTemp("", "tabrelay-peer-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(dir, "peer.test")
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestPeerHelperProcess$")
	cmd.Env = append(os.Environ(), peerHelperEnv+"="+addr)
	cmd.Dir = os.TempDir()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper client: %v: %s", err, out)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper client printed %q", out)
	}
	return code
}

// TestTrustSameUser: with TrustSameUser, a loopback client of the server's own OS user needs
// no secret, another user's gets 401, and anything with a browser's marks keeps the usual
// rules; without it, everyone needs the secret.
func TestTrustSameUser(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := relay.NewServer(relay.Options{Addr: "127.0.0.1:0", TrustSameUser: true})
		if err == nil {
			t.Fatal("TrustSameUser accepted on a system without /proc/net/tcp")
		}
		return
	}
	trusting := newEnvWith(t, func(o *relay.Options) { o.TrustSameUser = true })
	trusting.share(tabA, "https://example.com/")
	plain := newEnv(t, relay.HubOptions{})
	plain.share(tabA, "https://example.com/")

	t.Run("bare client, same process", func(t *testing.T) {
		for _, path := range []string{"/json/list", "/json"} {
			if code, err := bareGet(trusting.srv.Addr(), path); err != nil || code != http.StatusOK {
				t.Errorf("trusting %s without secret = %d %v, want 200", path, code, err)
			}
			if code, err := bareGet(plain.srv.Addr(), path); err != nil || code != http.StatusUnauthorized {
				t.Errorf("default %s without secret = %d %v, want 401", path, code, err)
			}
		}
		// past authentication, an /api route that does not exist here
		if code, err := bareGet(trusting.srv.Addr(), "/api/nothing"); err != nil || code != http.StatusNotFound {
			t.Errorf("trusting /api/nothing without secret = %d %v, want 404", code, err)
		}
	})
	t.Run("browser marks keep the rules", func(t *testing.T) {
		for _, tc := range []struct {
			header, value string
			want          int
		}{
			{"Sec-Fetch-Site", "none", http.StatusUnauthorized},    // a typed address, an extension's fetch
			{"Sec-Fetch-Site", "cross-site", http.StatusForbidden}, // a web page
			{"Sec-Fetch-Dest", "empty", http.StatusUnauthorized},   // a browser's, whatever else it sends
			{"Origin", "chrome-extension://" + config.DefaultExtensionID, http.StatusUnauthorized},
			{"Origin", "https://evil.example", http.StatusForbidden},
			{"Sec-Fetch-Mode", "cors", http.StatusOK}, // Node's fetch (undici) sends this alone
		} {
			req, _ := http.NewRequest(http.MethodGet, "http://"+trusting.srv.Addr()+"/json/list", nil)
			req.Header.Set(tc.header, tc.value)
			if code, body := do(t, req); code != tc.want {
				t.Errorf("%s: %s = %d %s, want %d", tc.header, tc.value, code, body, tc.want)
			}
		}
	})
	t.Run("a wrong secret is still wrong", func(t *testing.T) {
		if code, _ := trusting.get("/json/list", bearer("not-the-secret")); code != http.StatusUnauthorized {
			t.Errorf("wrong secret = %d, want 401", code)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, "ws://"+trusting.srv.Addr()+"/cdp", nil)
		if err != nil {
			t.Fatalf("/cdp without secret: %v (%v)", err, resp)
		}
		defer conn.CloseNow()
		if err := conn.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Browser.getVersion"}`)); err != nil {
			t.Fatal(err)
		}
		if _, msg, err := conn.Read(ctx); err != nil || !strings.Contains(string(msg), `"product"`) {
			t.Errorf("Browser.getVersion over a trusted peer's socket: %s %v", msg, err)
		}
		code, body := trusting.get("/json/list", nil)
		if code != 200 || strings.Contains(body, trusting.srv.Token()) {
			t.Errorf("/json/list for a trusted peer = %d %s: it must not hand out the secret", code, body)
		}
	})
	t.Run("another process of the same user", func(t *testing.T) {
		if code := runPeerHelper(t, trusting.srv.Addr(), nil); code != http.StatusOK {
			t.Errorf("same-user process: %d, want 200", code)
		}
	})
	t.Run("another user", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to run a client as another user (the test setup runs as root)")
		}
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("no user nobody to run the other user's client as: %v", err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
		if code := runPeerHelper(t, trusting.srv.Addr(), cred); code != http.StatusUnauthorized {
			t.Errorf("client running as nobody: %d, want 401", code)
		}
	})
}
