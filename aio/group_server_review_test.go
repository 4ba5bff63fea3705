//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/go-asyncio/asyncio"
)

// Group servers misused or interrupted: cancelled calls, calls from the
// wrong loop, loops that closed, options that cannot apply.

// groupGuard is how long a test waits for what must happen at once before it
// calls it a hang (a bound for failures, never a wait for success).
const groupGuard = 10 * time.Second

// groupWithin awaits aw for at most groupGuard (aw is shielded: a hung aw that
// would not end when cancelled does not hang the test).
func groupWithin[V any](at *asyncio.T, aw asyncio.AwaitableOf[V]) (V, error) {
	return asyncio.WaitFor(at, groupGuard, asyncio.Shield(aw))
}

// groupWaitClosedOrHang runs gs.WaitClosed, failing the test if it does not
// return within groupGuard.
func groupWaitClosedOrHang(t *testing.T, at *asyncio.T, gs *GroupServer, what string) {
	t.Helper()
	_, err := groupWithin(at, asyncio.CreateTask(at, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, gs.WaitClosed(rt) }))
	if err != nil {
		t.Errorf("%s: WaitClosed: %v", what, err)
	}
}

// groupBlockLoop keeps l busy (its goroutine blocked in a callback) until the
// returned function is called: work handed to l meanwhile waits.
func groupBlockLoop(t *testing.T, l *asyncio.Loop) (release func()) {
	t.Helper()
	ch := make(chan struct{})
	//asynciovet:ignore blockingcall blocking the loop is the point: work handed to it must wait
	if _, err := l.CallSoonThreadsafe(func() { <-ch }); err != nil {
		t.Fatal(err)
	}
	return func() { close(ch) }
}

// A Close whose task is cancelled while the other loops have not yet
// closed their part: they close it anyway (asyncio's close is not
// interruptible), so WaitClosed returns.
func TestGroupServer_CancelledCloseStillClosesEveryLoop(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 3, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := CreateGroupServer(at, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
				if err != nil {
					return err
				}
				release := groupBlockLoop(t, g.Loop(1))
				closing := asyncio.CreateTask(at, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, gs.Close(rt) })
				if err := asyncio.Sleep(at, 0); err != nil { // Close has asked every loop
					release()
					return err
				}
				closing.Cancel()
				_, err = closing.Await(at)
				release()
				if !asyncio.IsCancelled(err) {
					t.Errorf("cancelled Close returned %v, want the cancellation", err)
				}
				groupWaitClosedOrHang(t, at, gs, "after a cancelled Close")
				return nil
			})
		})
	}
}

// A WaitClosed that is cancelled while connections stay open on other
// loops returns at once (WaitFor's timeout works on it).
func TestGroupServer_CancelledWaitClosedReturnsAtOnce(t *testing.T) {
	clean(t)
	onGroup(t, 3, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartGroupServer(at, g, GroupRoundRobin, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		var writers []*StreamWriter
		for k := 0; k < 3; k++ { // one connection on each loop
			_, w, err := dialAndEcho(at, port, "")
			if err != nil {
				return err
			}
			writers = append(writers, w)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		waiting := asyncio.CreateTask(at, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, gs.WaitClosed(rt) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		waiting.Cancel()
		_, err = groupWithin[struct{}](at, waiting)
		if !asyncio.IsCancelled(err) || errors.Is(err, asyncio.ErrTimeout) {
			t.Errorf("cancelled WaitClosed returned %v, want the cancellation at once", err)
		}
		if err := gs.CloseClients(at); err != nil {
			return err
		}
		for _, w := range writers {
			w.Close()
		}
		groupWaitClosedOrHang(t, at, gs, "after CloseClients")
		return nil
	})
}

// The methods of a group server, called from a task on another loop
// than the one that made it, return a *RuntimeError naming the mistake
// and change nothing (the acceptor's state is its loop's alone).
func TestGroupServer_MethodsRefusedOffTheOwnerLoop(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := StartGroupServer(at, g, mode, echoOn(g), "127.0.0.1", 0)
				if err != nil {
					return err
				}
				port := gs.Addr().(*net.TCPAddr).Port
				calls := map[string]func(rt *asyncio.T) error{
					"Close":        gs.Close,
					"CloseClients": gs.CloseClients,
					"WaitClosed":   gs.WaitClosed,
					"StartServing": gs.StartServing,
					"ActiveConnections": func(rt *asyncio.T) error {
						_, err := gs.ActiveConnections(rt)
						return err
					},
				}
				for name, call := range calls {
					_, err := asyncio.CallOn(at, g.Loop(1), func(rt *asyncio.T) (struct{}, error) { return struct{}{}, call(rt) })
					var re *asyncio.RuntimeError
					if !errors.As(err, &re) || !strings.Contains(err.Error(), "GroupServer."+name+" called on loop 1") ||
						!strings.Contains(err.Error(), "the loop that created it (loop 0)") {
						t.Errorf("%s from loop 1: %v, want a *RuntimeError naming the owner loop", name, err)
					}
				}
				// Nothing changed: the server still serves, and closes.
				_, w, err := dialAndEcho(at, port, "")
				if err != nil {
					return fmt.Errorf("after the refused calls: %w", err)
				}
				w.Close()
				if err := gs.Close(at); err != nil {
					return err
				}
				groupWaitClosedOrHang(t, at, gs, "after the refused calls")
				return nil
			})
		})
	}
}

// WithDeferredServing: nothing is accepted until StartServing (asyncio's
// start_serving=False, then start_serving()).
func TestGroupServer_StartServingAfterDeferredServing(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin, GroupLeastConns} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := StartGroupServer(at, g, mode, echoOn(g), "127.0.0.1", 0, WithDeferredServing())
				if err != nil {
					return err
				}
				port := gs.Addr().(*net.TCPAddr).Port
				if _, _, err := OpenConnection(at, "127.0.0.1", port); !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("before StartServing: %v, want the connection refused", err)
				}
				if err := gs.StartServing(at); err != nil {
					return err
				}
				if err := gs.StartServing(at); err != nil { // idempotent
					return err
				}
				seen := map[int]bool{}
				var writers []*StreamWriter
				for k := 0; k < 8 && len(seen) < 2; k++ {
					i, w, err := dialAndEcho(at, port, "")
					if err != nil {
						return fmt.Errorf("after StartServing: %w", err)
					}
					seen[i] = true
					writers = append(writers, w)
				}
				if mode != GroupReusePort && len(seen) != 2 {
					t.Errorf("served by loops %v, want both", seen)
				}
				for _, w := range writers {
					w.Close()
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				groupWaitClosedOrHang(t, at, gs, "after Close")
				return nil
			})
		})
	}
}

// What the per-loop servers would refuse one by one (or that cannot
// apply to a group) is refused before anything is made, with an error
// naming the mistake.
func TestGroupServer_RefusedBeforeAnythingIsMade(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		made := 0
		testHookGroupPartMade = func(int, *Server) { made++ }
		defer func() { testHookGroupPartMade = nil }()
		factory := func() Protocol { return &echoProto{} }
		for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
			_, err := CreateGroupServer(at, g, mode, factory, "127.0.0.1", 70000)
			if !errors.Is(err, asyncio.ErrValue) || err.Error() != "asyncio: port must be 0-65535, got 70000" {
				t.Errorf("mode %d, port 70000: %v", mode, err)
			}
		}
		// One socket cannot be a listener per loop; the caller's socket
		// is left as it was.
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0) // SOCK_CLOEXEC is Linux's
		if err != nil {
			return err
		}
		syscall.CloseOnExec(fd)
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		_, err = CreateGroupServer(at, g, GroupReusePort, factory, "", 0, WithSocket(fd))
		if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "CreateGroupServer: GroupReusePort makes a listening socket per loop, WithSocket gives one") {
			t.Errorf("reuse port with WithSocket: %v", err)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			t.Errorf("the caller's socket was closed: %v", err)
		}
		// A simulated network has no SO_REUSEPORT.
		n := NewSimNetwork(at, 1)
		_, err = StartGroupServer(at, g, GroupReusePort, echoOn(g), "srv", 0, WithNetwork(n.Host("srv")))
		if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "StartGroupServer: GroupReusePort is not supported on a simulated network") {
			t.Errorf("reuse port on a simulated network: %v", err)
		}
		// A nil t, and a t used from a goroutine that does not run it.
		func() {
			defer func() {
				r := recover()
				if err, ok := r.(error); !ok || !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), "CreateGroupServer: nil *asyncio.T") {
					t.Errorf("nil t: %v, want a *ValueError panic naming the call", r)
				}
			}()
			//asynciovet:ignore droppedcancel the call panics on the nil t: there is no error to return
			_, _ = CreateGroupServer(nil, g, GroupRoundRobin, factory, "127.0.0.1", 0)
		}()
		for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
			done := make(chan error, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						done <- fmt.Errorf("panic: %v", r)
					}
				}()
				//asynciovet:ignore foreigngoroutine the misuse under test: the call must refuse it
				_, err := CreateGroupServer(at, g, mode, factory, "127.0.0.1", 0)
				done <- err
			}()
			var got error
			_, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) { got = <-done; return struct{}{}, nil }).Await(at)
			if err != nil {
				return err
			}
			var re *asyncio.RuntimeError
			if !errors.As(got, &re) || !strings.Contains(got.Error(), "CreateGroupServer: t is not the running task of its loop") {
				t.Errorf("mode %d from a plain goroutine: %v, want a *RuntimeError", mode, got)
			}
		}
		if made != 0 {
			t.Errorf("%d per-loop parts made by refused calls", made)
		}
		return nil
	})
}

// The group closes under a server whose acceptor runs on a loop outside
// it: the acceptor stops listening (nothing would serve again), and
// Close, CloseClients, WaitClosed and ActiveConnections find nothing
// left on the closed loops instead of failing.
func TestGroupServer_ClosedLoopsHaveNothingLeft(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin, GroupLeastConns} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
			defer g.Close()
			stopRun := runGroupInBackground(g)
			_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
				gs, err := CreateGroupServer(at, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
				if err != nil {
					return struct{}{}, err
				}
				addr := gs.Addr().String()
				// Addr, Addrs and Sockets may be read from any goroutine,
				// also while the loops close (-race checks they touch no
				// loop's state). Sockets loses the sockets of each loop
				// as it closes (TestGroupServerSocketsLeaveOutClosedLoops).
				nsockets := len(gs.Sockets())
				reading, read := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(read)
					for {
						select {
						case <-reading:
							return
						default:
							if gs.Addr() == nil || len(gs.Addrs()) != 1 || len(gs.Sockets()) > nsockets {
								t.Errorf("while the loops close: Addr %v, Addrs %v, Sockets %v", gs.Addr(), gs.Addrs(), gs.Sockets())
								return
							}
						}
					}
				}()
				_, err = asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) {
					if err := stopRun(); err != nil {
						return struct{}{}, err
					}
					return struct{}{}, g.Close()
				}).Await(at)
				close(reading)
				//asynciovet:ignore blockingcall the reader returns as soon as reading is closed
				<-read
				if err != nil {
					return struct{}{}, err
				}
				// Main/sub: the acceptor takes one more connection, has
				// no loop to give it to, closes it and stops listening.
				dial := func() error {
					_, err := asyncio.RunInExecutor(at, func(context.Context) (struct{}, error) {
						c, err := net.Dial("tcp", addr)
						if err != nil {
							return struct{}{}, err
						}
						defer c.Close()
						_, err = c.Read(make([]byte, 1))
						return struct{}{}, err
					}).Await(at)
					return err
				}
				first := dial()
				groupWaitClosedOrHang(t, at, gs, "without Close")
				if err := dial(); !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("a connection once every loop is closed: %v (the first: %v), want it refused", err, first)
				}
				counts, err := gs.ActiveConnections(at)
				if err != nil || len(counts) != 2 || counts[0]+counts[1] != 0 {
					t.Errorf("ActiveConnections: %v, %v", counts, err)
				}
				for name, call := range map[string]func(*asyncio.T) error{"Close": gs.Close, "CloseClients": gs.CloseClients, "WaitClosed": gs.WaitClosed} {
					if err := call(at); err != nil {
						t.Errorf("%s: %v, want nil (the loops are closed: nothing is left)", name, err)
					}
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// groupTwoAddrs resolves every name to 127.0.0.1 and 127.0.0.2.
type groupTwoAddrs struct{}

func (groupTwoAddrs) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}, {IP: net.IPv4(127, 0, 0, 2)}}, nil
}

// Reuse port on a host with two addresses and port 0: every loop listens
// on the same port on both (not the first loop on a port of its own for
// the second address).
func TestGroupServer_ReusePortOnePortForEveryAddress(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := CreateGroupServer(at, g, GroupReusePort, func() Protocol { return &echoProto{} }, "two", 0, WithResolver(groupTwoAddrs{}))
		if err != nil {
			return err
		}
		port := gs.Addr().(*net.TCPAddr).Port
		for i, s := range gs.Servers() {
			addrs, err := asyncio.CallFuncOn(at, s.Loop(), func() ([]net.Addr, error) { return s.Addrs(), nil })
			if s.Loop() == at.Loop() {
				addrs, err = s.Addrs(), nil
			}
			if err != nil {
				return err
			}
			if len(addrs) != 2 {
				t.Errorf("loop %d listens on %v, want two addresses", i, addrs)
			}
			for _, a := range addrs {
				if a.(*net.TCPAddr).Port != port {
					t.Errorf("loop %d listens on %v, want port %d everywhere", i, addrs, port)
				}
			}
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		return gs.WaitClosed(at)
	})
}

// A creation cancelled just as another loop has made its part: that part
// arrives after the creation gave up, and is closed (not left listening,
// or serving, on its loop).
func TestGroupServer_CancelledCreateLeavesNothingOnTheLoops(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				var creating *asyncio.Task[*GroupServer]
				var late *Server
				testHookGroupPartMade = func(i int, s *Server) {
					if i == 1 { // on loop 1: the creation is cancelled before this part is back
						late = s
						_, _ = g.Loop(0).CallSoonThreadsafe(func() { creating.Cancel() })
					}
				}
				defer func() { testHookGroupPartMade = nil }()
				creating = asyncio.CreateTask(at, func(rt *asyncio.T) (*GroupServer, error) {
					return CreateGroupServer(rt, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
				})
				gs, err := creating.Await(at)
				if !asyncio.IsCancelled(err) || gs != nil {
					t.Fatalf("cancelled creation: %v, %v", gs, err)
				}
				if late == nil {
					t.Fatal("loop 1 made nothing")
				}
				_, err = asyncio.CallOn(at, g.Loop(1), func(rt *asyncio.T) (struct{}, error) {
					return groupWithin(rt, asyncio.CreateTask(rt, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, late.WaitClosed(rt) }))
				})
				if err != nil {
					t.Errorf("loop 1's part of the cancelled server: %v (still open: %v)", err, late)
				}
				return nil
			})
		})
	}
}

// A closed main/sub server is not kept alive by its loops (each worker's
// close hook is let go with it): its factory can be collected while the
// loops run on.
func TestGroupServer_ClosedServerIsNotKeptByItsLoops(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		wp, err := groupClosedServerFactory(at, g)
		if err != nil {
			return err
		}
		runtime.GC()
		runtime.GC()
		if wp.Value() != nil {
			t.Error("the closed server's factory is still reachable (a loop keeps its worker)")
		}
		return nil
	})
}

// groupClosedServerFactory makes and closes a round robin server whose factory
// holds an object, and returns a weak pointer to that object.
//
//go:noinline
func groupClosedServerFactory(at *asyncio.T, g *asyncio.LoopGroup) (weak.Pointer[[64]byte], error) {
	held := new([64]byte)
	wp := weak.Make(held)
	gs, err := CreateGroupServer(at, g, GroupRoundRobin, func() Protocol { _ = held[0]; return &echoProto{} }, "127.0.0.1", 0)
	if err != nil {
		return wp, err
	}
	if err := gs.Close(at); err != nil {
		return wp, err
	}
	return wp, gs.WaitClosed(at)
}

// A group nobody runs cannot serve: making a server on it from a task of
// another loop is a *RuntimeError naming the idle loop, before anything
// is made (each part is made by a cross-loop call, which waited for
// ever).
func TestGroupServer_RefusedOnAGroupNotRunning(t *testing.T) {
	clean(t)
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	made := 0
	testHookGroupPartMade = func(int, *Server) { made++ }
	defer func() { testHookGroupPartMade = nil }()
	runVirtual(t, func(at *asyncio.T) error {
		for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin, GroupLeastConns} {
			_, err := CreateGroupServer(at, g, mode, func() Protocol { return &echoProto{} }, "127.0.0.1", 0)
			var re *asyncio.RuntimeError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "CreateGroupServer: loop 0 of the group is not running") {
				t.Errorf("mode %d: %v, want a *RuntimeError naming loop 0", mode, err)
			}
		}
		return nil
	})
	if made != 0 {
		t.Errorf("%d per-loop parts made by refused calls", made)
	}
}

// ServeForever as asyncio's serve_forever, for the whole group: it
// starts a deferred server, serves until its task is cancelled, then
// closes the server on every loop, waits for the connections and
// returns the cancellation; IsServing follows.
func TestGroupServer_ServeForeverUntilCancelled(t *testing.T) {
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := StartGroupServer(at, g, mode, echoOn(g), "127.0.0.1", 0, WithDeferredServing())
				if err != nil {
					return err
				}
				port := gs.Addr().(*net.TCPAddr).Port
				if gs.IsServing() {
					t.Errorf("IsServing before ServeForever of a deferred server")
				}
				serve := asyncio.CreateTask(at, func(st *asyncio.T) (struct{}, error) { return struct{}{}, gs.ServeForever(st) })
				// Until it serves: StartServing reaches the other loops
				// by cross-loop calls.
				for !gs.IsServing() && !serve.Done() {
					if err := asyncio.Sleep(at, 0); err != nil {
						return err
					}
				}
				if !gs.IsServing() {
					t.Errorf("not serving under ServeForever")
				}
				if err := gs.ServeForever(at); !errors.Is(err, asyncio.ErrRuntime) {
					t.Errorf("a second ServeForever: %v, want a *RuntimeError", err)
				}
				_, w, err := dialAndEcho(at, port, "")
				if err != nil {
					return fmt.Errorf("under ServeForever: %w", err)
				}
				w.Close()
				serve.Cancel()
				if _, err := serve.Await(at); !asyncio.IsCancelled(err) {
					t.Errorf("ServeForever's task: %v, want cancelled", err)
				}
				if gs.IsServing() {
					t.Errorf("IsServing after ServeForever ended")
				}
				if _, _, err := OpenConnection(at, "127.0.0.1", port); !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("after ServeForever: %v, want the connection refused", err)
				}
				if err := gs.ServeForever(at); !errors.Is(err, asyncio.ErrRuntime) {
					t.Errorf("ServeForever on a closed server: %v, want a *RuntimeError", err)
				}
				return nil
			})
		})
	}
}

// Close from another task ends ServeForever with a cancellation, as
// asyncio's close cancels serve_forever; the serving task itself was not
// cancelled.
func TestGroupServer_CloseEndsServeForever(t *testing.T) {
	clean(t)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		gs, err := StartGroupServer(at, g, GroupLeastConns, echoOn(g), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		var cancelling int
		serve := asyncio.CreateTask(at, func(st *asyncio.T) (struct{}, error) {
			err := gs.ServeForever(st)
			cancelling = st.Cancelling()
			return struct{}{}, err
		})
		for gs.forever == nil && !serve.Done() {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		if _, err := serve.Await(at); !asyncio.IsCancelled(err) || cancelling != 0 {
			t.Errorf("ServeForever after Close: %v (task cancelling %d), want a cancellation of the wait only", err, cancelling)
		}
		groupWaitClosedOrHang(t, at, gs, "after ServeForever")
		return nil
	})
}

// AbortClients aborts the connections on every loop (asyncio 3.13's
// abort_clients): what each server transport still buffers is dropped,
// so a client that was not reading gets less than the server wrote
// (CloseClients would flush it all), then EOF; WaitClosed returns.
func TestGroupServer_AbortClientsDropsWhatEveryLoopBuffers(t *testing.T) {
	const big = 24 << 20 // more than loopback's socket buffers hold
	for _, mode := range []GroupMode{GroupReusePort, GroupRoundRobin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			clean(t)
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				gs, err := StartGroupServer(at, g, mode, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
					if err := w.Write([]byte{byte('0' + g.Index(st.Loop()))}); err != nil {
						return err
					}
					if err := w.Write(make([]byte, big)); err != nil { // buffered, not drained
						return err
					}
					// Until the abort, which ends the read however it ends it.
					if _, err := r.Read(st, -1); asyncio.IsCancelled(err) {
						return err
					}
					return nil
				}, "127.0.0.1", 0)
				if err != nil {
					return err
				}
				port := gs.Addr().(*net.TCPAddr).Port
				var readers []*StreamReader
				var writers []*StreamWriter
				seen := map[byte]bool{}
				for k := 0; k < 4; k++ {
					r, w, err := OpenConnection(at, "127.0.0.1", port)
					if err != nil {
						return err
					}
					b, err := r.ReadExactly(at, 1) // the serving loop's index
					if err != nil {
						return err
					}
					seen[b[0]] = true
					readers, writers = append(readers, r), append(writers, w)
				}
				if mode == GroupRoundRobin && len(seen) != 2 {
					t.Errorf("served by loops %v, want both", seen)
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				if err := gs.AbortClients(at); err != nil {
					return err
				}
				for i, r := range readers {
					rest, err := r.Read(at, -1)
					if (err != nil && !errors.Is(err, syscall.ECONNRESET)) || len(rest) >= big {
						t.Errorf("client %d after AbortClients: %d bytes of %d, %v: want the rest dropped", i, len(rest), big, err)
					}
					writers[i].Close()
				}
				groupWaitClosedOrHang(t, at, gs, "after AbortClients")
				return nil
			})
		})
	}
}

// runGroupInBackground runs every loop of g on a goroutine of its own
// (RunEach, each main waiting) and returns once every main has started;
// stopRun ends the mains and returns RunEach's error. The loops stay open.
func runGroupInBackground(g *asyncio.LoopGroup) (stopRun func() error) {
	stop := make(chan struct{})
	ran := make(chan error, 1)
	started := make(chan struct{}, g.Len())
	go func() {
		_, err := asyncio.RunEach(g, func(at *asyncio.T, i int) (struct{}, error) {
			//asynciovet:ignore blockingcall buffered with room for every main: it never blocks
			started <- struct{}{}
			fut := asyncio.NewFuture[struct{}](at)
			go func() {
				<-stop
				_, _ = at.Loop().CallSoonThreadsafe(func() { _ = fut.SetResult(struct{}{}) })
			}()
			_, err := fut.Await(at)
			return struct{}{}, err
		})
		ran <- err
	}()
	for range g.Len() {
		<-started
	}
	return func() error {
		close(stop)
		return <-ran
	}
}
