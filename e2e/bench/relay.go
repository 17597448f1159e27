package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// relayProc is a `tabrelay serve` process started for the benchmark.
type relayProc struct {
	cmd   *exec.Cmd
	addr  string
	token string
	home  string
}

// moduleRoot finds the repository root (where go.mod is).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the benchmarks from inside the tabrelay repository")
	}
	return filepath.Dir(gomod), nil
}

// buildTabrelay builds the binary once per run.
var buildOnce = sync.OnceValues(func() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tabrelay-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tabrelay")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tabrelay")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build tabrelay: %w", err)
	}
	return bin, nil
})

// runningAt finds the address in `tabrelay serve`'s first lines.
var runningAt = regexp.MustCompile(`is running at http://(\S+)`)

// startRelay starts `tabrelay serve` on a free port with a fresh home and waits until it prints
// its address.
func startRelay(env ...string) (*relayProc, error) {
	bin, err := buildOnce()
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "tabrelay-bench-home-")
	if err != nil {
		return nil, fmt.Errorf("make a home for tabrelay: %w", err)
	}
	level := "warn"
	if l := os.Getenv("BENCH_LOG_LEVEL"); l != "" {
		level = l // debug: the action service logs where each action's time goes
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--home", home, "--log-level", level)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("tabrelay serve: %w", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start tabrelay serve: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if m := runningAt.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	p := &relayProc{cmd: cmd, addr: addr, home: home}
	if addr == "" {
		p.stop()
		return nil, errors.New("tabrelay serve did not print its address")
	}
	tok, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("read tabrelay's token: %w", err)
	}
	p.token = strings.TrimSpace(string(tok))
	return p, nil
}

// cdpURL is the relay's browser-level endpoint, the secret in its query.
func (p *relayProc) cdpURL() string { return "ws://" + p.addr + "/cdp?token=" + p.token }

// stop interrupts the process (killing it after 5 s) and removes its home.
func (p *relayProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
	}
	os.RemoveAll(p.home)
}

// api sends one request to the process's HTTP API (path like "/api/act?tab=…") with its token,
// body (when not nil) as JSON, and decodes the JSON answer into out (when not nil). Any status
// other than 2xx is an error quoting the answer: the benchmarks only time requests that did
// their work.
func (p *relayProc) api(ctx context.Context, method, path string, body, out any) error {
	status, b, err := p.apiStatus(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %.500s", method, path, status, bytes.TrimSpace(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode the answer: %w: %.300s", method, path, err, b)
		}
	}
	return nil
}

// apiStatus sends one request as api does and returns the answer's status and body, whatever
// the status.
func (p *relayProc) apiStatus(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("%s %s: encode the body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+p.addr+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// rssKiB reads a process's resident memory.
func rssKiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read memory of pid %d: %w (resident memory is measured on Linux only)", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			v, err := strconv.ParseFloat(f[0], 64)
			return v, err
		}
	}
	return 0, errors.New("no VmRSS line")
}

// directProc is the relay group's reference: the simulated extension's CDP behaviour served
// directly, in a process of its own like the relay (and like Chrome's own endpoint), so that
// both paths pay the same cost of waking another process.
type directProc struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string
}

// startDirect runs this benchmark binary again with -serve-direct and reads the URL it prints.
func startDirect() (*directProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the benchmark binary: %w", err)
	}
	cmd := exec.Command(self, "-serve-direct")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the direct reference: %w", err)
	}
	d := &directProc{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("the direct reference did not print its URL: %w", err)
	}
	d.url = strings.TrimSpace(line)
	return d, nil
}

// stop closes the reference's stdin, which ends it.
func (d *directProc) stop() {
	_ = d.stdin.Close()
	_ = d.cmd.Wait()
}

// serveDirectReference is the -serve-direct mode: it prints the reference's WebSocket URL and
// serves until stdin closes.
func serveDirectReference() error {
	d, err := relaytest.StartDirect()
	if err != nil {
		return fmt.Errorf("serve the direct reference: %w", err)
	}
	defer d.Close()
	fmt.Println(d.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// benchTab is the simulated extension's shared tab.
const benchTab = "BENCHTAB000000000000000000000000"

// runRelay measures the relay hop with a simulated extension against a direct connection.
func runRelay(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rp, err := startRelay()
	if err != nil {
		return err
	}
	defer rp.stop()
	ext, err := relaytest.Dial(ctx, rp.addr, rp.token, nil)
	if err != nil {
		return err
	}
	defer ext.Close()
	if err := ext.Share(benchTab, "https://bench.example/", "bench"); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond)
	idle, err := rssKiB(rp.cmd.Process.Pid)
	if err != nil {
		return err
	}
	direct, err := startDirect()
	if err != nil {
		return err
	}
	defer direct.stop()

	dialRelay := func() (*cdpclient.Client, string, error) {
		c, err := cdpclient.Dial(ctx, rp.cdpURL(), nil)
		if err != nil {
			return nil, "", err
		}
		var a struct {
			SessionID string `json:"sessionId"`
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			err = c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": benchTab, "flatten": true}, &a)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // the tab is being announced
		}
		return c, a.SessionID, err
	}
	dialDirect := func() (*cdpclient.Client, string, error) {
		c, err := cdpclient.Dial(ctx, direct.url, nil)
		return c, "", err
	}

	// 1. round-trip latency of a small command, and how often the serving process's threads
	// slept meanwhile
	latency := func(dial func() (*cdpclient.Client, string, error), pid int, sleeps *float64) ([]time.Duration, error) {
		c, sid, err := dial()
		if err != nil {
			return nil, err
		}
		defer c.Close()
		params := map[string]string{"expression": "1"}
		for i := 0; i < cfg.reps/10; i++ { // warm-up
			if err := c.Call(ctx, sid, "Runtime.evaluate", params, nil); err != nil {
				return nil, err
			}
		}
		d := make([]time.Duration, 0, cfg.reps)
		s0 := threadSleeps(pid)
		for i := 0; i < cfg.reps; i++ {
			t0 := time.Now()
			if err := c.Call(ctx, sid, "Runtime.evaluate", params, nil); err != nil {
				return nil, err
			}
			d = append(d, time.Since(t0))
		}
		*sleeps = float64(threadSleeps(pid)-s0) / float64(cfg.reps)
		return d, nil
	}
	var rSleeps, dSleeps float64
	dr, err := latency(dialRelay, rp.cmd.Process.Pid, &rSleeps)
	if err != nil {
		return fmt.Errorf("latency through the relay: %w", err)
	}
	dd, err := latency(dialDirect, direct.cmd.Process.Pid, &dSleeps)
	if err != nil {
		return fmt.Errorf("latency direct: %w", err)
	}
	rMed, rP99 := stats(dr)
	dMed, dP99 := stats(dd)
	r.add(Figure{Group: "relay", Name: "round trip Runtime.evaluate, median", Unit: "µs", Value: rMed, Reference: dMed, RefName: "direct"})
	r.add(Figure{Group: "relay", Name: "round trip Runtime.evaluate, p99", Unit: "µs", Value: rP99, Reference: dP99, RefName: "direct"})
	added := rMed - dMed
	r.add(Figure{Group: "relay", Name: "relay hop added at the median", Unit: "µs", Value: added, Target: "≤ 50 µs", Met: met(added <= 50)})
	// the hop is two more socket crossings between processes (to the extension and back); the
	// direct round trip is two such crossings and a small server's work: what crossing costs here
	r.add(Figure{Group: "relay", Name: "relay hop against two socket crossings", Unit: "µs", Value: added, Reference: dMed, RefName: "direct round trip (two crossings)"})
	// two messages cross the relay per command, each read by a thread that slept: 2 is the least
	r.add(Figure{Group: "relay", Name: "thread sleeps per command, relay process", Unit: "", Value: rSleeps, Reference: dSleeps, RefName: "direct (one message in, one out)"})

	// 2. forwarded messages per second with 1 and 10 clients
	dur := 3 * time.Second
	if cfg.short {
		dur = 700 * time.Millisecond
	}
	throughput := func(dial func() (*cdpclient.Client, string, error), clients int) (float64, error) {
		var done atomic.Int64
		var wg sync.WaitGroup
		errc := make(chan error, clients)
		stop := time.Now().Add(dur)
		conns := make([]*cdpclient.Client, clients)
		sids := make([]string, clients)
		for i := range conns {
			c, sid, err := dial()
			if err != nil {
				return 0, err
			}
			defer c.Close()
			conns[i], sids[i] = c, sid
		}
		start := time.Now()
		for i := 0; i < clients; i++ {
			for w := 0; w < 32; w++ { // commands in flight per client
				wg.Add(1)
				go func(c *cdpclient.Client, sid string) {
					defer wg.Done()
					for time.Now().Before(stop) {
						if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
							errc <- err
							return
						}
						done.Add(1)
					}
				}(conns[i], sids[i])
			}
		}
		wg.Wait()
		select {
		case err := <-errc:
			return 0, err
		default:
		}
		// each command is two forwarded messages: the request and its answer
		return 2 * float64(done.Load()) / time.Since(start).Seconds(), nil
	}
	for _, n := range []int{1, 10} {
		tr, err := throughput(dialRelay, n)
		if err != nil {
			return fmt.Errorf("throughput through the relay with %d clients: %w", n, err)
		}
		td, err := throughput(dialDirect, n)
		if err != nil {
			return fmt.Errorf("throughput direct with %d clients: %w", n, err)
		}
		f := Figure{Group: "relay", Name: fmt.Sprintf("forwarded messages/s, %d client(s)", n), Unit: "msg/s", Value: tr, Reference: td, RefName: "direct"}
		f.Target, f.Met = "≥ 50,000 msg/s", met(tr >= 50000)
		r.add(f)
	}

	// 3. event fan-out to 10 clients (reference: the same events to 1 client)
	events := 2000
	if cfg.short {
		events = 300
	}
	fanout := func(clients int) (float64, error) {
		var got atomic.Int64
		all := make(chan struct{})
		var once sync.Once
		want := int64(events * clients)
		for i := 0; i < clients; i++ {
			c, sid, err := dialRelay()
			if err != nil {
				return 0, err
			}
			defer c.Close()
			if err := c.Call(ctx, sid, "Page.enable", nil, nil); err != nil {
				return 0, err
			}
			c.Subscribe(func(ev cdpclient.Event) {
				if ev.Method == "Page.domContentEventFired" && got.Add(1) == want {
					once.Do(func() { close(all) })
				}
			})
		}
		start := time.Now()
		for i := 0; i < events; i++ {
			// a Page event every Page.enable'd session gets (lifecycle events need
			// Page.setLifecycleEventsEnabled, per session, as in Chrome)
			if err := ext.Event(benchTab, "", "Page.domContentEventFired", map[string]any{"timestamp": i}); err != nil {
				return 0, err
			}
		}
		select {
		case <-all:
		case <-time.After(time.Minute):
			return 0, fmt.Errorf("only %d of %d events arrived", got.Load(), want)
		}
		return float64(want) / time.Since(start).Seconds(), nil
	}
	f10, err := fanout(10)
	if err != nil {
		return fmt.Errorf("fan-out: %w", err)
	}
	f1, err := fanout(1)
	if err != nil {
		return fmt.Errorf("fan-out: %w", err)
	}
	r.add(Figure{Group: "relay", Name: "events delivered/s, fan-out to 10 clients", Unit: "ev/s", Value: f10, Reference: f1, RefName: "1 client"})

	// 4. one 5 MB message
	big := func(dial func() (*cdpclient.Client, string, error)) ([]time.Duration, error) {
		c, sid, err := dial()
		if err != nil {
			return nil, err
		}
		defer c.Close()
		n := 20
		if cfg.short {
			n = 5
		}
		var d []time.Duration
		for i := 0; i < n+2; i++ {
			var res struct {
				Data string `json:"data"`
			}
			t0 := time.Now()
			if err := c.Call(ctx, sid, "Page.captureScreenshot", map[string]int{"quality": 5 * 1024}, &res); err != nil {
				return nil, err
			}
			if len(res.Data) != 5<<20 {
				return nil, fmt.Errorf("got %d bytes, want 5 MiB", len(res.Data))
			}
			if i >= 2 {
				d = append(d, time.Since(t0))
			}
		}
		return d, nil
	}
	br, err := big(dialRelay)
	if err != nil {
		return fmt.Errorf("5 MB through the relay: %w", err)
	}
	bd, err := big(dialDirect)
	if err != nil {
		return fmt.Errorf("5 MB direct: %w", err)
	}
	bMed, _ := stats(br)
	bdMed, _ := stats(bd)
	r.add(Figure{Group: "relay", Name: "one 5 MB answer, median", Unit: "ms", Value: bMed / 1000, Reference: bdMed / 1000, RefName: "direct"})

	// 5. resident memory idle (measured at the start) and with 100 connected clients
	var conns []*cdpclient.Client
	for i := 0; i < 100; i++ {
		c, sid, err := dialRelay()
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		conns = append(conns, c)
		if err := c.Call(ctx, sid, "Runtime.enable", nil, nil); err != nil {
			return err
		}
	}
	time.Sleep(200 * time.Millisecond)
	busy, err := rssKiB(rp.cmd.Process.Pid)
	for _, c := range conns {
		c.Close()
	}
	if err != nil {
		return err
	}
	r.add(Figure{Group: "relay", Name: "relay resident memory, idle", Unit: "MiB", Value: idle / 1024})
	r.add(Figure{Group: "relay", Name: "relay resident memory, 100 clients attached", Unit: "MiB", Value: busy / 1024, Reference: idle / 1024, RefName: "idle"})
	return nil
}
