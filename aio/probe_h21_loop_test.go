//go:build linux

package aio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// SimNetwork's methods "must be called on the loop", but nothing said so
// when they were not: a task of another loop (or any goroutine) calling
// Partition, Heal, SetLink, Host, Conns, a SimConn's Reset or Stall, ...
// while the network's loop ran changed its maps under it, a data race
// that at best scrambles a seed's run and at worst kills the process
// ("concurrent map writes"). The loop's own methods panic with a
// *RuntimeError in that case; the network's do now too, before anything
// changes.
func TestH21_SimNetworkOffItsLoopPanics(tt *testing.T) {
	clean(tt)
	type world struct {
		n    *SimNetwork
		c, s *SimHost
		conn *SimConn
	}
	worldc := make(chan world, 1)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
			n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
			srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
			if err != nil {
				return struct{}{}, err
			}
			defer srv.Close()
			_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
			if err != nil {
				return struct{}{}, err
			}
			defer w.Close()
			worldc <- world{n, c, s, n.Conns()[0]}
			// The loop runs, waiting for the other goroutine (outside work).
			if _, _, err := asyncio.Recv(t, (<-chan struct{})(release)); err != nil {
				return struct{}{}, err
			}
			// Nothing changed.
			conn := n.Conns()[0]
			if n.partitioned(c, s) || conn.stalled || conn.done || len(n.hosts) != 2 || n.link(c, s).Latency != time.Millisecond || n.closed {
				return struct{}{}, fmt.Errorf("calls off the loop changed the network:\n%s", strings.Join(n.Trace(), "\n"))
			}
			return struct{}{}, nil
		}, asyncio.WithVirtualTime())
		done <- err
	}()
	w := <-worldc
	for name, call := range map[string]func(){
		"SimNetwork.Host":           func() { w.n.Host("third") },
		"SimNetwork.SetLink":        func() { w.n.SetLink(w.c, w.s, LinkConfig{}) },
		"SimNetwork.SetDefaultLink": func() { w.n.SetDefaultLink(LinkConfig{}) },
		"SimNetwork.Partition":      func() { w.n.Partition(w.c, w.s) },
		"SimNetwork.Heal":           func() { w.n.Heal(w.c, w.s) },
		"SimNetwork.Conns":          func() { w.n.Conns() },
		"SimNetwork.ConnOf":         func() { w.n.ConnOf(w.conn.Client()) },
		"SimNetwork.Close":          func() { w.n.Close() },
		"SimConn.Reset":             func() { w.conn.Reset() },
		"SimConn.Stall":             func() { w.conn.Stall() },
		"SimConn.StallFor":          func() { w.conn.StallFor(time.Second) },
		"SimConn.Resume":            func() { w.conn.Resume() },
	} {
		func() {
			defer func() {
				re, ok := recover().(*asyncio.RuntimeError)
				if !ok || !strings.HasPrefix(re.Msg, name+" called from a goroutine that is not running the network's loop") {
					tt.Errorf("%s off the loop: recovered %v, want a *RuntimeError naming it", name, re)
				}
			}()
			call()
		}()
	}
	close(release)
	if err := <-done; err != nil {
		tt.Fatal(err)
	}
}
