package relay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// TestChunkedMessagesFromExtension: the extension splits large messages into chunk frames
// (wire.ChunkPrefix) with other messages between the pieces; the relay puts each back together
// (multi-byte characters included) and delivers it whole, the small ones in between on time; a
// malformed chunk frame is ignored.
func TestChunkedMessagesFromExtension(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.ext.Close()
	e.waitFor("the first extension to be gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
	ext, err := relaytest.Dial(ctx(t), e.srv.Addr(), e.srv.Token(), &relaytest.Options{ChunkSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	e.ext = ext
	e.waitFor("extension connected", func() bool { return e.srv.Hub().ExtensionConnected() })
	e.share(tabA, "https://a.example/")
	e.share(tabB, "https://b.example/")
	c := e.client("/cdp")
	sa, sb := attach(t, c, tabA), attach(t, c, tabB)
	big := strings.Repeat("é😀x", 100_000) // 700 kB of UTF-8: 171 chunk frames
	type answer struct {
		value string
		err   error
	}
	bigDone := make(chan answer, 1)
	go func() {
		var r struct {
			Result struct{ Value string } `json:"result"`
		}
		err := c.Call(ctx(t), sa, "Runtime.evaluate", map[string]string{"expression": big}, &r)
		bigDone <- answer{r.Result.Value, err}
	}()
	for i := 0; i < 20; i++ { // small commands on another tab meanwhile
		if err := evaluate(c, sb, "small"); err != nil {
			t.Fatal(err)
		}
	}
	if a := <-bigDone; a.err != nil || a.value != "evaluated:"+big {
		t.Fatalf("the large answer: %v (%d bytes, want %d)", a.err, len(a.value), len("evaluated:"+big))
	}
	for _, bad := range []string{"#chunk 7\nno state", "#chunk  end\nno stream", "#chunk 8 later\nbad state", "#chunk 9 end"} {
		if err := ext.SendRaw([]byte(bad)); err != nil {
			t.Fatal(err)
		}
	}
	if err := evaluate(c, sa, "after"); err != nil {
		t.Fatalf("after malformed chunk frames: %v", err)
	}
	if n := strings.Count(e.logs.String(), "malformed chunk frame"); n != 4 {
		t.Errorf("%d malformed chunk frames logged, want 4", n)
	}
}

// TestBatchFrames: with an extension that takes batch frames (hello "batch": true) the relay
// joins the commands queued for it into JSON arrays, and it takes arrays of messages from the
// extension, each handled; a malformed batch is ignored.
func TestBatchFrames(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.ext.Close()
	e.waitFor("the first extension to be gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
	ext, err := relaytest.Dial(ctx(t), e.srv.Addr(), e.srv.Token(), &relaytest.Options{Batch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	e.ext = ext
	e.waitFor("extension connected", func() bool { return e.srv.Hub().ExtensionConnected() })
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sa := attach(t, c, tabA)
	// many commands at once: while one is written the others queue and go together
	errs := make(chan error, 200)
	for i := 0; i < cap(errs); i++ {
		go func() { errs <- evaluate(c, sa, fmt.Sprint(i)) }()
	}
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if ext.Batches() == 0 {
		t.Error("200 commands at once and not one batch frame to the extension")
	}
	// from the extension: two events in one frame, in order
	w1 := c.Expect(sa, "Page.frameNavigated", nil)
	w2 := c.Expect(sa, "Page.loadEventFired", nil)
	if err := c.Call(ctx(t), sa, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	batch := `[{"type":"event","targetId":"` + tabA + `","method":"Page.frameNavigated","params":{"frame":{"id":"F"}}},` +
		` {"type":"event","targetId":"` + tabA + `","method":"Page.loadEventFired","params":{"timestamp":1}}]`
	if err := ext.SendRaw([]byte(batch)); err != nil {
		t.Fatal(err)
	}
	if _, err := w1.Wait(ctx(t)); err != nil {
		t.Fatalf("first event of the batch: %v", err)
	}
	if _, err := w2.Wait(ctx(t)); err != nil {
		t.Fatalf("second event of the batch: %v", err)
	}
	if err := ext.SendRaw([]byte(`[{"type":"ping"},`)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the malformed batch to be logged", func() bool { return strings.Contains(e.logs.String(), "malformed batch frame") })
	if err := evaluate(c, sa, "after"); err != nil {
		t.Fatalf("after a malformed batch: %v", err)
	}
}
