//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
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

// A connection reset while it waited in the listener's backlog (the
// handshake done, the server not yet accepting) vanished on the
// simulated network: SimConn.Reset closed the server's end, and the
// server never heard of it. On Linux accept still returns a connection
// reset in the accept queue, and its first read fails with ECONNRESET, so
// asyncio's server makes a protocol that sees ConnectionMade, then
// ConnectionLost with ConnectionResetError: checked here on a real
// loopback socket (the client resets with SO_LINGER 0 before the server
// accepts) and on the network (Reset at the instant the client's ACK
// queues the connection).
func TestH21_ResetInBacklogIsStillAccepted(tt *testing.T) {
	clean(tt)
	serverSide := func(t *asyncio.T, log *[]string, host string, opts ...Option) (*Server, *asyncio.Future[error], error) {
		p := newStreamRecorder(t, "server", log)
		srv, err := CreateServer(t, func() Protocol { return p }, host, 0, opts...)
		return srv, p.lost, err
	}
	var real, sim []string
	runVirtual(tt, func(t *asyncio.T) error {
		l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.Bind(l, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(l)
			return err
		}
		if err := unix.Listen(l, 5); err != nil {
			unix.Close(l)
			return err
		}
		sa, _ := unix.Getsockname(l)
		c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			unix.Close(l)
			return err
		}
		err = unix.Connect(c, sa) // blocking: done when it returns, queued at the server
		unix.SetsockoptLinger(c, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
		unix.Close(c) // the RST reaches the queued connection before the close returns
		if err != nil {
			unix.Close(l)
			return err
		}
		srv, lost, err := serverSide(t, &real, "", WithSocket(l))
		if err != nil {
			unix.Close(l)
			return err
		}
		defer srv.Close()
		_, err = asyncio.WaitFor(t, time.Second, lost)
		return err
	})
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		srv, lost, err := serverSide(t, &sim, "127.0.0.1", WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		var clientLog []string
		cp := newStreamRecorder(t, "client", &clientLog)
		if _, _, err := CreateConnection(t, func() Protocol { return cp }, "server", serverPort(srv), WithNetwork(c)); err != nil {
			return err
		}
		// Connected one round trip in; the ACK reaches the server a
		// latency later, queueing the connection, and this runs right
		// after it, before the loop polls the listener.
		n.At(t.Loop().Time()+time.Millisecond, func() { n.Conns()[0].Reset() })
		if _, err := asyncio.WaitFor(t, time.Second, lost); err != nil {
			return fmt.Errorf("the server never saw the reset connection: %v\n%s", err, strings.Join(n.Trace(), "\n"))
		}
		cerr, err := asyncio.WaitFor(t, time.Second, cp.lost)
		if err != nil {
			return err
		}
		if !errors.Is(cerr, syscall.ECONNRESET) {
			return fmt.Errorf("the client lost its connection with %v, want ECONNRESET", cerr)
		}
		trace := strings.Join(n.Trace(), "\n")
		if i, j := strings.Index(trace, "conn 1 reset"), strings.Index(trace, "conn 1 accepted"); i < 0 || j < i {
			return fmt.Errorf("want the reset before the accept:\n%s", trace)
		}
		return nil
	})
	// Reset in the backlog, and the server closes without accepting it:
	// the listener's close takes the queued end (clean checks no
	// descriptor is left).
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		var log []string
		srv, _, err := serverSide(t, &log, "", WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		if _, w, err := OpenConnection(t, "server", serverPort(srv), WithNetwork(c)); err != nil {
			return err
		} else {
			defer w.Close()
		}
		n.At(t.Loop().Time()+time.Millisecond, func() {
			n.Conns()[0].Reset()
			srv.Close()
		})
		if err := srv.WaitClosed(t); err != nil {
			return err
		}
		if len(log) != 0 {
			return fmt.Errorf("the server closed before accepting, yet its protocol saw %v", log)
		}
		return nil
	})
	want := []string{"server:made", "server:lost syscall=recv ECONNRESET"}
	if !slices.Equal(real, want) {
		tt.Fatalf("real sockets: %v, want %v (the test's premise)", real, want)
	}
	if !slices.Equal(sim, real) {
		tt.Fatalf("simulated network: %v, real sockets: %v", sim, real)
	}
}

// A server binding, on a real host, the port an outgoing connection of
// that host uses as its local port fails with EADDRINUSE (the connected
// socket has no SO_REUSEADDR, so the bind conflicts even with the
// server's reuse_address). On the simulated network the server got it:
// two sockets of the host with one port, and the connection's client
// address became the server's address too. (Checked on loopback: a server
// on the local port of a connection to another local server.)
func TestH21_ListenOnAConnectionsPortIsInUse(tt *testing.T) {
	clean(tt)
	scenario := func(t *asyncio.T, host string, opts ...Option) (string, error) {
		srv, err := StartServer(t, echoLines(""), host, 0, opts...)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, host, serverPort(srv), opts...)
		if err != nil {
			return "", err
		}
		defer w.Close()
		port := w.ExtraInfo("sockname").(*net.TCPAddr).Port
		s2, err := StartServer(t, echoLines(""), host, port, opts...)
		if err == nil {
			s2.Close()
		}
		return describe(err), nil
	}
	runVirtual(tt, func(t *asyncio.T) error {
		real, err := scenario(t, "127.0.0.1")
		if err != nil {
			return err
		}
		if real != "syscall=bind EADDRINUSE" {
			return fmt.Errorf("real sockets: %s, want EADDRINUSE (the test's premise)", real)
		}
		n := NewSimNetwork(t, 1)
		sim, err := scenario(t, "127.0.0.1", WithNetwork(n.Host("box")))
		if err != nil {
			return err
		}
		if sim != real {
			return fmt.Errorf("simulated network: %s, real sockets: %s", sim, real)
		}
		return nil
	})
}
