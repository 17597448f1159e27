package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// repeatPages are the saved real-world pages of the repeat figure (testdata/pages, where their
// sources and licences are listed); -short takes the first repeatShortPages of them.
var repeatPages = []string{"wikipedia.html", "v8-blog.html", "mozilla-2.html", "wikipedia-3.html", "wikipedia-4.html",
	"ietf-1.html", "gitlab-blog.html", "mozilla-1.html"}

const repeatShortPages = 3

// repeatBig is the fixture page of the repeat figure's large case.
const repeatBig = "/gen.html?n=20000"

// repeatSide is one side's repeat snapshots of one page: their times in ms and the last text.
type repeatSide struct {
	ms   []float64
	text string
}

// runRepeat measures the snapshot the agent takes after almost every step: a repeat snapshot of
// a page left unchanged, asked through tabrelay's HTTP door (GET /api/snapshot, timed from this
// client: HTTP, the relay process, the extension, chrome.debugger and back), against
// Playwright's repeat page.ariaSnapshot({mode:'ai'}) on the same tab over Chrome's own endpoint,
// in the same run. Per page and round each side takes an untimed first snapshot (Playwright's
// on a new connection) and then timed repeats; the sides take turns going first, page by page
// and round by round. A page's ratio is the median of our repeats over the median of
// Playwright's; the figures are the median and 90th percentile of the ratios over the saved
// real-world pages, the 20,000-element page on its own, and the size of the outlines.
func runRepeat(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	pages, rounds, reps := repeatPages, 2, 5
	big := true
	if cfg.short {
		pages, rounds, reps, big = repeatPages[:repeatShortPages], 1, 3, false
	}
	saved, err := serveDir(filepath.Join(root, "e2e", "bench", "testdata", "pages"))
	if err != nil {
		return err
	}
	defer saved.Close()
	s, err := startReal(ctx, "/index.html")
	if err != nil {
		return err
	}
	defer s.close()
	own := "http://" + hostOf(s.b.ControlURL)
	base := "http://" + saved.Addr().String() + "/"

	var ratios []float64
	var oursTok, pwTok float64
	for i, p := range pages {
		ours, pw, err := repeatPage(ctx, s, own, base+p, i, rounds, reps)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		ratio := median(ours.ms) / median(pw.ms)
		ratios = append(ratios, ratio)
		ot, pt := float64(len(ours.text))/4, float64(len(pw.text))/4
		oursTok += ot
		pwTok += pt
		r.add(Figure{Group: "snapshot", Name: "repeat via /api/snapshot, " + p, Unit: "ms", Value: median(ours.ms), Reference: median(pw.ms), RefName: "Playwright repeat ariaSnapshot"})
	}
	r.add(Figure{Group: "snapshot", Name: fmt.Sprintf("repeat via /api/snapshot, %d real pages: median ratio", len(pages)), Unit: "×", Value: median(ratios), Target: "≤ 0.5×", Met: met(median(ratios) <= 0.5)})
	r.add(Figure{Group: "snapshot", Name: fmt.Sprintf("repeat via /api/snapshot, %d real pages: p90 ratio", len(pages)), Unit: "×", Value: p90(ratios), Target: "≤ 0.8×", Met: met(p90(ratios) <= 0.8)})
	r.add(Figure{Group: "snapshot", Name: fmt.Sprintf("repeat via /api/snapshot, %d real pages: size", len(pages)), Unit: "tokens", Value: oursTok, Reference: pwTok, RefName: "Playwright AI snapshot", Target: "≤ 0.7×", Met: met(oursTok <= 0.7*pwTok)})
	if big {
		ours, pw, err := repeatPage(ctx, s, own, s.site.URL(repeatBig), len(pages), rounds, 2)
		if err != nil {
			return fmt.Errorf("%s: %w", repeatBig, err)
		}
		o, p := median(ours.ms), median(pw.ms)
		r.add(Figure{Group: "snapshot", Name: "repeat via /api/snapshot, " + repeatBig, Unit: "ms", Value: o, Reference: p, RefName: "Playwright repeat ariaSnapshot", Target: "≤ 0.5×", Met: met(o <= 0.5*p)})
	}
	return nil
}

// repeatPage shares pageURL in a new tab and measures both sides' repeat snapshots of it (see
// runRepeat); i, the page's place in the run, decides which side goes first in each round.
func repeatPage(ctx context.Context, s *realSetup, ownEndpoint, pageURL string, i, rounds, reps int) (ours, pw repeatSide, err error) {
	tab, err := s.b.ShareURL(ctx, pageURL)
	if err != nil {
		return ours, pw, fmt.Errorf("share: %w", err)
	}
	defer s.b.CloseTab(context.WithoutCancel(ctx), tab)
	path := "/api/snapshot?tab=" + url.QueryEscape(tab.TargetID)
	oursRound := func() error {
		for k := 0; k <= reps; k++ {
			t0 := time.Now()
			status, body, err := s.rp.apiStatus(ctx, "GET", path, nil)
			took := time.Since(t0)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("GET %s: HTTP %d: %.300s", path, status, body)
			}
			if k > 0 { // the first is the round's warm-up
				ours.ms = append(ours.ms, float64(took.Microseconds())/1000)
			}
			ours.text = string(body)
		}
		return nil
	}
	pwRound := func() error {
		ms, text, err := ariaSnapshot(ctx, ownEndpoint, tab.URL, reps+1)
		if err != nil {
			return fmt.Errorf("the Playwright ariaSnapshot: %w", err)
		}
		pw.ms, pw.text = append(pw.ms, ms[1:]...), text // its first is its warm-up
		return nil
	}
	for round := range rounds {
		sides := []func() error{oursRound, pwRound}
		if (i+round)%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			time.Sleep(settle)
			if err := side(); err != nil {
				return ours, pw, err
			}
		}
	}
	if len(ours.ms) == 0 || len(pw.ms) == 0 {
		return ours, pw, errors.New("no repeat snapshot was timed")
	}
	return ours, pw, nil
}

// p90 returns the 90th percentile of v (nearest rank; 0 when empty).
func p90(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[max(int(math.Ceil(0.9*float64(len(s))))-1, 0)]
}

// savedServer serves a directory of saved pages on a loopback port.
type savedServer struct {
	ln  net.Listener
	srv *http.Server
}

// serveDir serves dir's files on a free loopback port until Close.
func serveDir(dir string) (*savedServer, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("the saved pages: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the saved pages: %w", err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &savedServer{ln: ln, srv: srv}, nil
}

// Addr is the server's address.
func (s *savedServer) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server.
func (s *savedServer) Close() error { return s.srv.Close() }
