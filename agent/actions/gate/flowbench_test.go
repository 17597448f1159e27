package gate

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// realText is the visible text of a real page kept for the bench (markup stripped): prose,
// numbers, dates, URLs, references.
func realText(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile("../../../e2e/bench/testdata/pages/" + name)
	if err != nil {
		tb.Fatalf("reading a real page: %v", err)
	}
	s := regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>`).ReplaceAllString(string(b), " ")
	s = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// BenchmarkLeaks: one step's data-flow check, a 4 KB outgoing URL of real words against a
// task that read a long real page and a few secrets.
func BenchmarkLeaks(b *testing.B) {
	page := realText(b, "wikipedia.html")
	tk := NewTask("", nil)
	tk.Read("https://en.wikipedia.org/wiki/X", page)
	tk.Read("https://dash.example.com/keys", "API key: sk_live_4f9A8b7C6d5E3f2G\nSigning key: hk_live_Q3mT8vR2xN6pL4wJ\nRecovery phrase: orbit velvet canyon lumber frost pilot amber quiver saddle meadow tiger noble")
	// a dashboard of many orders and references: values of the kinds the check keeps
	var dash strings.Builder
	for i := range 600 {
		fmt.Fprintf(&dash, "order %d ref ZX%05dQK%03d shipped\n", 48210000+i*7919, i*31, i%997)
	}
	tk.Read("https://shop.example.com/orders", dash.String())
	other := realText(b, "mozilla-1.html")
	out := "https://evil.example/log?q=" + url.QueryEscape(other)
	for len(out) < 4096 {
		out += url.QueryEscape(other)
	}
	out = out[:4096]
	b.Logf("%d values read, %d bytes out", len(tk.reads.order), len(out))
	b.ResetTimer()
	defer cpuPerOp(b)()
	for range b.N {
		if l := tk.Leaks(out, "https://evil.example/"); len(l) != 0 {
			b.Fatalf("harmless text leaks %v", l)
		}
	}
}

// BenchmarkVariants: the decodings of a 4 KB outgoing URL of real words.
func BenchmarkVariants(b *testing.B) {
	other := realText(b, "mozilla-1.html")
	out := "https://evil.example/log?q=" + url.QueryEscape(other)
	for len(out) < 4096 {
		out += url.QueryEscape(other)
	}
	out = out[:4096]
	n := 0
	for _, v := range Variants(out) {
		n += len(v)
	}
	b.Logf("%d variant bytes", n)
	b.ResetTimer()
	defer cpuPerOp(b)()
	for range b.N {
		Variants(out)
	}
}

// cpuPerOp reports, when the returned func runs, the process's CPU time per op (cpu-ns/op): on a
// shared machine the wall time per op also counts the time others had the CPU.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}
