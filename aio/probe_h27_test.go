//go:build unix

package aio

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Probes of the group servers (h27).

// A group server whose loops all closed (the owner runs outside the
// group) accepts nothing: IsServing must say so, as a single loop's
// server stops serving when its loop closes. It stayed true until Close.
func TestH27_IsServingFalseOnceNoLoopListens(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
			stopRun := runGroupInBackground(g)
			_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
				gs, err := StartGroupServer(at, g, mode, echoOn(g), "127.0.0.1", 0)
				if err != nil {
					return struct{}{}, err
				}
				port := gs.Addr().(*net.TCPAddr).Port
				if !gs.IsServing() {
					t.Errorf("IsServing false while every loop serves")
				}
				_, w, err := dialAndEcho(at, port, "")
				if err != nil {
					return struct{}{}, err
				}
				if _, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) {
					if err := stopRun(); err != nil {
						return struct{}{}, err
					}
					return struct{}{}, g.Close()
				}).Await(at); err != nil {
					return struct{}{}, err
				}
				if mode != GroupReusePort {
					// The acceptor still listens until a connection
					// finds no loop to take it: then it stops.
					if _, w2, err := dialAndEcho(at, port, ""); err == nil {
						t.Errorf("a connection was served after every loop of the group closed")
						w2.Close()
					} else if w2 != nil {
						w2.Close()
					}
					if err := settle(at); err != nil {
						return struct{}{}, err
					}
				}
				if _, _, err := dialAndEcho(at, port, ""); err == nil {
					t.Errorf("a connection was served after every loop of the group closed")
				}
				if gs.IsServing() {
					t.Errorf("IsServing is true once nothing listens on any loop (a server whose loop closed is not serving)")
				}
				w.Close()
				if err := gs.Close(at); err != nil {
					return struct{}{}, err
				}
				groupWaitClosedOrHang(t, at, gs, "x")
				return struct{}{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Sockets leaves out the listening sockets of the loops that closed (as
// IsServing counts them out): their descriptor numbers may name other
// files by now. It listed every socket made until Close.
func TestGroupServerSocketsLeaveOutClosedLoops(t *testing.T) {
	clean(t)
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	stopRun := runGroupInBackground(g)
	_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		gs, err := StartGroupServer(at, g, GroupReusePort, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		before := gs.Sockets()
		if len(before) != 2 {
			t.Errorf("Sockets() = %v while both loops listen, want one per loop", before)
		}
		if _, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) {
			if err := stopRun(); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, g.Close()
		}).Await(at); err != nil {
			return struct{}{}, err
		}
		if after := gs.Sockets(); len(after) != 0 {
			t.Errorf("Sockets() = %v once every loop of the group closed (its listeners with it), want none", after)
		}
		if err := gs.Close(at); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
