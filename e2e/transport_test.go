package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestManyCommandsAtOnceThroughTheExtension: many clients' commands in flight at once on one
// real tab each get their own answer; the real extension then sends the
// answers that come together in batch frames, which the relay takes apart.
func TestManyCommandsAtOnceThroughTheExtension(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tab := e.share(t, e.site.URL("/?client=many-at-once"))
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	const clients, each, rounds = 8, 12, 5
	var wg sync.WaitGroup
	errs := make(chan error, clients*each*rounds)
	for i := 0; i < clients; i++ {
		c := e.dialCDP(t, ctx)
		sid := attachPage(t, ctx, c, tab.TargetID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				var inner sync.WaitGroup
				for k := 0; k < each; k++ {
					inner.Add(1)
					go func() {
						defer inner.Done()
						var res struct {
							Result struct{ Value float64 } `json:"result"`
						}
						want := i*10_000 + r*100 + k
						if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("%d", want), "returnByValue": true}, &res); err != nil {
							errs <- fmt.Errorf("client %d command %d: %w", i, want, err)
							return
						}
						if int(res.Result.Value) != want {
							errs <- fmt.Errorf("client %d: command %d got the answer %v", i, want, res.Result.Value)
						}
					}()
				}
				inner.Wait()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !e.relayLogged("the extension sends batch frames", nil) {
		t.Errorf("%d commands at once were answered in no batch frame", clients*each)
	}
}
