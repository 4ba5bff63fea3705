//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Probes of the group servers (h5): least-connections balancing with a
// loop whose protocol factory fails, and hand-offs to loops that go away.

// h5Served opens a connection on path, writes a line and reports whether
// it came back (a loop whose factory failed closes the connection at
// once). The writer is returned open when the line came back.
func h5Served(at *asyncio.T, path string) (bool, *StreamWriter, error) {
	r, w, err := OpenUnixConnection(at, path)
	if err != nil {
		return false, nil, err
	}
	if err := w.Write([]byte("hi\n")); err != nil {
		w.Close()
		return false, nil, nil
	}
	line, err := r.ReadLine(at)
	if err != nil || string(line) != "hi\n" {
		w.Close()
		return false, nil, nil
	}
	return true, w, nil
}

// A loop whose protocol factory fails (panics, or returns nil) keeps zero
// connections; least-connections balancing must not therefore hand it
// every new connection while the healthy loop holds some: a failed
// hand-off counts against the loop until one of its hand-offs succeeds.
func TestH5_LeastConnsFailingFactoryDoesNotStarveTheHealthyLoops(t *testing.T) {
	for _, how := range []string{"panic", "nil"} {
		t.Run(how, func(t *testing.T) {
			clean(t)
			path := filepath.Join(t.TempDir(), "s.sock")
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				for i := 0; i < 2; i++ { // reports of the failures, not printed
					g.Loop(i).SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
				}
				gs, err := CreateUnixGroupServer(at, g, GroupLeastConns, func() Protocol {
					if loopIndexHere(g) == 1 {
						if how == "panic" {
							panic("the factory is broken on loop 1")
						}
						return nil
					}
					return &echoProto{}
				}, path)
				if err != nil {
					return err
				}
				var open []*StreamWriter
				var served []bool
				for k := 0; k < 8; k++ {
					ok, w, err := h5Served(at, path)
					if err != nil {
						return err
					}
					served = append(served, ok)
					if ok {
						open = append(open, w)
					}
				}
				// Loop 0 (healthy) takes the first; loop 1 fails the
				// second, which now counts against it: the ties and the
				// loads alternate from there.
				if got := fmt.Sprint(served); got != "[true false true false true false true false]" {
					t.Errorf("connections served: %s; want every other one served by the healthy loop", got)
				}
				for _, w := range open {
					w.Close()
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				if err := gs.CloseClients(at); err != nil {
					return err
				}
				return gs.WaitClosed(at)
			})
		})
	}
}

// Sockets handed over to worker loops that are not running (the group's
// run is over) and then closed with the group, before they adopt them:
// the sockets are closed (the peers see EOF), not leaked (clean checks
// /proc/self/fd).
func TestH5_SocketsHandedToLoopsThatCloseAreClosed(t *testing.T) {
	clean(t)
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	stopRun := runGroupInBackground(g)
	_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		gs, err := CreateGroupServer(at, g, GroupRoundRobin, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		// The run ends: the loops stay open but nobody runs them.
		if _, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) {
			return struct{}{}, stopRun()
		}).Await(at); err != nil {
			return struct{}{}, err
		}
		var readers []*StreamReader
		var writers []*StreamWriter
		for k := 0; k < 2; k++ { // one for each loop, in turn
			r, w, err := OpenConnection(at, "127.0.0.1", port)
			if err != nil {
				return struct{}{}, err
			}
			readers, writers = append(readers, r), append(writers, w)
		}
		pending := func() (n int) {
			for _, w := range gs.workers {
				w.mu.Lock()
				n += len(w.pending)
				w.mu.Unlock()
			}
			return n
		}
		for pending() < 2 { // the acceptor has handed both over
			if err := asyncio.Sleep(at, 0); err != nil {
				return struct{}{}, err
			}
		}
		if _, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) { return struct{}{}, g.Close() }).Await(at); err != nil {
			return struct{}{}, err
		}
		if n := pending(); n != 0 {
			t.Errorf("%d sockets still listed as handed over once their loops closed", n)
		}
		for k, r := range readers {
			if line, err := groupWithin(at, asyncio.CreateTask(at, func(rt *asyncio.T) ([]byte, error) { return r.ReadLine(rt) })); len(line) != 0 || err != nil {
				t.Errorf("connection %d: read %q, %v; want EOF (its socket closed with the loop)", k, line, err)
			}
			writers[k].Close()
		}
		if err := gs.Close(at); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, gs.WaitClosed(at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Close, CloseClients and WaitClosed while connections keep arriving from
// other goroutines: every connection the server took is closed, WaitClosed
// returns, and nothing is left open (clean); a connection made after
// Close is refused or closed at once.
func TestH5_CloseWhileConnectionsArrive(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin, GroupLeastConns} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 3, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := CreateGroupServer(at, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
				if err != nil {
					return err
				}
				addr := gs.Addr().String()
				stop := make(chan struct{})
				dialed := make(chan int, 2)
				var wg sync.WaitGroup
				for d := 0; d < 2; d++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						n := 0
						for {
							select {
							case <-stop:
								dialed <- n
								return
							default:
							}
							c, err := net.Dial("tcp", addr)
							if err != nil {
								continue // refused once the server is closed
							}
							n++
							// Served (the echo) or closed (EOF, reset): either
							// way the read ends.
							_, _ = c.Write([]byte("x"))
							_, _ = c.Read(make([]byte, 1))
							c.Close()
						}
					}()
				}
				// Let some connections in, then close while they still come.
				for {
					counts, err := gs.ActiveConnections(at)
					if err != nil {
						return err
					}
					if counts[0]+counts[1]+counts[2] > 0 {
						break
					}
					if err := asyncio.Sleep(at, 0); err != nil {
						return err
					}
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				if err := gs.CloseClients(at); err != nil {
					return err
				}
				groupWaitClosedOrHang(t, at, gs, "while connections arrive")
				close(stop)
				if _, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) { wg.Wait(); return struct{}{}, nil }).Await(at); err != nil {
					return err
				}
				//asynciovet:ignore blockingcall both dialers have sent (wg.Wait returned) into a buffered channel
				if n := <-dialed + <-dialed; n == 0 {
					t.Error("no connection was made")
				}
				counts, err := gs.ActiveConnections(at)
				if err != nil || counts[0]+counts[1]+counts[2] != 0 {
					t.Errorf("after WaitClosed: ActiveConnections %v, %v", counts, err)
				}
				return nil
			})
		})
	}
}

// Round robin with the acceptor on a loop other than 0 (loop 1 of 3, a
// RunEach main): the connections still go to loops 0, 1, 2 in turn, the
// acceptor's own loop taking its turn like the others.
func TestH5_RoundRobinOrderWithTheAcceptorOnLoop1(t *testing.T) {
	clean(t)
	g := asyncio.NewLoopGroup(asyncio.WithLoops(3))
	defer g.Close()
	var order []int
	_, err := asyncio.RunEach(g, func(at *asyncio.T, i int) (struct{}, error) {
		if i != 1 {
			return struct{}{}, nil // serves until loop 1's main is done
		}
		gs, err := StartGroupServer(at, g, GroupRoundRobin, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		var writers []*StreamWriter
		for k := 0; k < 6; k++ {
			i, w, err := dialAndEcho(at, port, "")
			if err != nil {
				return struct{}{}, err
			}
			order = append(order, i)
			writers = append(writers, w)
		}
		for _, w := range writers {
			w.Close()
		}
		if err := gs.Close(at); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, gs.WaitClosed(at)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(order); got != "[0 1 2 0 1 2]" {
		t.Errorf("served by loops %s, want [0 1 2 0 1 2]", got)
	}
}

// A group server on a group not made by NewLoopGroup (nil, or the zero
// LoopGroup, which has no loops) is a *ValueError naming the call, before
// anything listens (on the zero group a main/sub server was made, and its
// acceptor divided by zero on the first connection).
func TestH5_GroupServerOnANilOrZeroGroupIsAValueError(t *testing.T) {
	clean(t)
	runVirtual(t, func(at *asyncio.T) error {
		for _, g := range []*asyncio.LoopGroup{nil, {}} {
			for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin, GroupLeastConns} {
				gs, err := CreateGroupServer(at, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
				var ve *asyncio.ValueError
				if gs != nil || !errors.As(err, &ve) || !strings.Contains(err.Error(), "CreateGroupServer: nil or zero LoopGroup") {
					t.Errorf("mode %d on %v: %v, %v; want a *ValueError naming the group", mode, g, gs, err)
					if gs != nil {
						if err := gs.Close(at); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
}
