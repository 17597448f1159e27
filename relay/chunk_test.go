package relay_test

import (
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
	ext := e.replaceExt(&relaytest.Options{ChunkSize: 4096})
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
