package snapshot

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestTmpProf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/gen.html?n="+os.Getenv("N"))
	frames, _ := tab.Frames(ctx)
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		ev, err := tab.inWorld(ctx, &frames[0], `__tabrelay.walk(document, {boxes: true})`, true)
		t.Logf("walk + transfer: %v %v", time.Since(t0), err)
		t0 = time.Now()
		decodeWalk(ev.Result.Value)
		t.Logf("decode: %v", time.Since(t0))
	}
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		s, _ := tab.Snapshot(ctx, Options{})
		t.Logf("snapshot: %v (%d bytes)", time.Since(t0), len(s.Text))
	}
}
