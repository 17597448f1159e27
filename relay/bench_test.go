package relay_test

import (
	"sync"
	"testing"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// BenchmarkForward measures small commands through the relay with 10 clients (simulated
// extension, real WebSockets). `task bench` reports the same with a direct reference.
func BenchmarkForward(b *testing.B) {
	t := &testing.T{}
	e := newEnv(t, relay.HubOptions{})
	defer e.srv.Close()
	e.share(tabA, "https://a.example/")
	var clients []*cdpclient.Client
	var sids []string
	for i := 0; i < 10; i++ {
		c := e.client("/cdp")
		clients = append(clients, c)
		sids = append(sids, attach(t, c, tabA))
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/(10*8) + 1
	for i, c := range clients {
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(c *cdpclient.Client, sid string) {
				defer wg.Done()
				for j := 0; j < per; j++ {
					if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
						b.Error(err)
						return
					}
				}
			}(c, sids[i])
		}
	}
	wg.Wait()
}
