//go:build linux

package aio

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Server.CloseClients and AbortClients closed the connections in the
// order of a map's iteration, which Go randomises: on a simulated network
// with jitter the connections' EOFs (or resets) then drew their delays
// from the seeded source in a different order from run to run, so the
// same seed gave a different trace, and the clients saw their ends in a
// different order. (asyncio's close_clients walks a WeakSet, whose order
// no program relies on; here the connections close in the order they
// were accepted, so a seed's run repeats exactly.)
func TestH21_CloseClientsIsReproducible(tt *testing.T) {
	for _, abort := range []bool{false, true} {
		tt.Run(fmt.Sprintf("abort=%v", abort), func(tt *testing.T) {
			clean(tt)
			run := func() (trace, ends []string) {
				runVirtual(tt, func(t *asyncio.T) error {
					n, c, s := simPair(t, 7, LinkConfig{Latency: time.Millisecond, Jitter: 5 * time.Millisecond})
					accepted := 0
					srv, err := CreateServer(t, func() Protocol { accepted++; return &BaseProtocol{} }, "", 80, WithNetwork(s))
					if err != nil {
						return err
					}
					defer srv.Close()
					const clients = 8
					lost := make([]*asyncio.Future[struct{}], clients)
					for i := range clients {
						lost[i] = asyncio.NewFuture[struct{}](t)
						p := &endRecorder{name: fmt.Sprint("client ", i), ends: &ends, lost: lost[i], loop: t.Loop()}
						if _, _, err := CreateConnection(t, func() Protocol { return p }, "server", 80, WithNetwork(c)); err != nil {
							return err
						}
						// Accepted one by one, so the accept order is the dial order.
						if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
							return err
						}
					}
					if accepted != clients {
						return fmt.Errorf("accepted %d of %d", accepted, clients)
					}
					if abort {
						srv.AbortClients()
					} else {
						srv.CloseClients()
					}
					for _, f := range lost {
						if _, err := asyncio.WaitFor(t, time.Second, f); err != nil {
							return err
						}
					}
					trace = n.Trace()
					return nil
				})
				return trace, ends
			}
			trace1, ends1 := run()
			for range 3 {
				trace2, ends2 := run()
				if !slices.Equal(trace1, trace2) {
					tt.Fatalf("the same seed gave two traces:\n%s\n----\n%s", strings.Join(trace1, "\n"), strings.Join(trace2, "\n"))
				}
				if !slices.Equal(ends1, ends2) {
					tt.Fatalf("the same seed ended the clients in two orders:\n%v\n%v", ends1, ends2)
				}
			}
		})
	}
}

// endRecorder notes when its connection ends, at the loop's time.
type endRecorder struct {
	BaseProtocol
	name string
	ends *[]string
	lost *asyncio.Future[struct{}]
	loop *asyncio.Loop
}

func (p *endRecorder) ConnectionLost(err error) {
	*p.ends = append(*p.ends, fmt.Sprintf("%v %s: %s", p.loop.Time(), p.name, describe(err)))
	p.lost.SetResult(struct{}{})
}
