package aio

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeResolver makes every name resolve to ips (in that order) for the
// duration of the test.
func fakeResolver(t *testing.T, ips ...string) {
	t.Helper()
	old := lookupIPAddr
	lookupIPAddr = func(ctx context.Context, host string) ([]net.IPAddr, error) {
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
	t.Cleanup(func() { lookupIPAddr = old })
}

var connectTarget = regexp.MustCompile(`connect to (\S+?):\d+:`)

// attemptOrder lists the addresses a failed connect tried, in the order
// of its joined errors (one per attempt, in attempt order).
func attemptOrder(err error) string {
	var out []string
	for _, m := range connectTarget.FindAllStringSubmatch(fmt.Sprint(err), -1) {
		out = append(out, m[1])
	}
	return fmt.Sprint(out)
}

// Sequential connects (WithHappyEyeballsDelay(0)) try the resolved
// addresses in order, and WithInterleave(true) reorders them to alternate
// families first (asyncio's create_connection: interleave defaults to 1
// only when happy_eyeballs_delay is set, RFC 8305 §4). Every address
// refuses here (nothing listens on the port on any of them), so the
// joined error lists the attempts in order.
func TestResolveInterleaveOrdersSequentialAttempts(t *testing.T) {
	fakeResolver(t, "127.0.0.2", "127.0.0.3", "::1")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		// A listener on 127.0.0.1 only reserves the port; the three
		// addresses tried have no listener on it.
		fd, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		unix.Listen(fd, 1)
		port := localAddr(fd, "tcp").(*net.TCPAddr).Port
		_, _, err = OpenConnection(at, "three.test", port, WithHappyEyeballsDelay(0))
		log = append(log, "sequential: "+attemptOrder(err))
		_, _, err = OpenConnection(at, "three.test", port, WithHappyEyeballsDelay(0), WithInterleave(true))
		log = append(log, "sequential, interleaved: "+attemptOrder(err))
		_, err = DialConn(at, "tcp", net.JoinHostPort("three.test", fmt.Sprint(port)), WithHappyEyeballsDelay(0), WithInterleave(true))
		var oe *net.OpError
		log = append(log, fmt.Sprintf("DialConn sequential, interleaved: %s (OpError %v)", attemptOrder(err), errors.As(err, &oe)))
		return nil
	})
	want := []string{
		"sequential: [127.0.0.2 127.0.0.3 [::1]]",
		"sequential, interleaved: [127.0.0.2 [::1] 127.0.0.3]",
		"DialConn sequential, interleaved: [127.0.0.2 [::1] 127.0.0.3] (OpError true)",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// With happy eyeballs, interleaving is on by default and WithInterleave(false)
// turns it off: the two IPv4 addresses are black holes and only ::1
// accepts, so the connect takes one delay when ::1 is tried second
// (interleaved) and two when it is tried third.
func TestResolveInterleaveWithHappyEyeballs(t *testing.T) {
	fakeResolver(t, "127.0.0.2", "127.0.0.3", "::1")
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { w.Close(); return nil }, "::1", 0)
		if err != nil {
			return err
		}
		port := serverPort(srv)
		defer blackHole(t, at, [4]byte{127, 0, 0, 2}, port)()
		defer blackHole(t, at, [4]byte{127, 0, 0, 3}, port)()
		for _, c := range []struct {
			name string
			opts []NetOption
		}{
			{"default", []NetOption{WithHappyEyeballsDelay(100 * time.Millisecond)}},
			{"not interleaved", []NetOption{WithHappyEyeballsDelay(100 * time.Millisecond), WithInterleave(false)}},
		} {
			start := at.Loop().Time()
			_, w, err := OpenConnection(at, "three.test", port, c.opts...)
			if err != nil {
				return err
			}
			peer := w.GetExtraInfo("peername").(*net.TCPAddr).IP
			log = append(log, fmt.Sprintf("%s: connected to %v after %v", c.name, peer, at.Loop().Time()-start))
			w.Close()
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"default: connected to ::1 after 100ms",
		"not interleaved: connected to ::1 after 200ms",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// blackHole listens on ip:port with a full accept queue, so that a new
// connect to it never completes (the kernel drops its SYN). It returns
// a cleanup.
func blackHole(t *testing.T, at *asyncio.T, ip [4]byte, port int) func() {
	t.Helper()
	ln, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
	if err != nil {
		t.Fatal(err)
	}
	sa := &unix.SockaddrInet4{Addr: ip, Port: port}
	if err := unix.Bind(ln, sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(ln, 0); err != nil { // queue of one
		t.Fatal(err)
	}
	filler, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
	if err != nil {
		t.Fatal(err)
	}
	if err := SockConnect(at, filler, sa); err != nil {
		t.Fatal(err)
	}
	return func() { unix.Close(filler); unix.Close(ln) }
}

// With happy eyeballs, the next address is tried happy_eyeballs_delay
// after an attempt that neither succeeds nor fails (RFC 8305 "Connection
// Attempt Delay"); the first address is a black hole here, the second
// accepts, so the connect takes exactly the delay on the virtual clock
// and reaches the second address.
func TestResolveHappyEyeballsDelayStartsNextAttempt(t *testing.T) {
	fakeResolver(t, "127.0.0.2", "127.0.0.1")
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { w.Close(); return nil }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := serverPort(srv)
		defer blackHole(t, at, [4]byte{127, 0, 0, 2}, port)()
		for _, d := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
			start := at.Loop().Time()
			_, w, err := OpenConnection(at, "two.test", port, WithHappyEyeballsDelay(d))
			if err != nil {
				return err
			}
			peer := w.GetExtraInfo("peername").(*net.TCPAddr).IP
			log = append(log, fmt.Sprintf("delay %v: connected to %v after %v", d, peer, at.Loop().Time()-start))
			w.Close()
		}
		// Sequential: the black hole is waited on with no second attempt.
		start := at.Loop().Time()
		_, err = asyncio.WaitForFunc(at, 5*time.Second, func(t *asyncio.T) (struct{}, error) {
			_, w, err := OpenConnection(t, "two.test", port, WithHappyEyeballsDelay(0))
			if err == nil {
				w.Close()
			}
			return struct{}{}, err
		})
		log = append(log, fmt.Sprintf("sequential: timeout=%v after %v", errors.Is(err, asyncio.ErrTimeout), at.Loop().Time()-start))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"delay 100ms: connected to 127.0.0.1 after 100ms",
		"delay 300ms: connected to 127.0.0.1 after 300ms",
		"sequential: timeout=true after 5s",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// WithBacklog bounds how many connections one readiness event of the
// listening socket accepts (asyncio's _accept_connection loops backlog
// times): with two connections queued (the most a backlog of 1 lets the
// kernel queue), backlog 1 accepts one per loop iteration, the default
// (100) both in one.
func TestServerWithBacklogBoundsAcceptsPerEvent(t *testing.T) {
	perIteration := func(opts ...NetOption) []int {
		var counts []int
		var serverLog []string
		runNet(t, func(at *asyncio.T) error {
			l := at.Loop()
			srv, err := CreateServer(at, func() Protocol { return newLogProtocol(at.Loop(), "server", &serverLog) }, "127.0.0.1", 0, opts...)
			if err != nil {
				return err
			}
			if srv.Loop() != l {
				return errors.New("Server.Loop is not the loop it was created on")
			}
			// Stop watching the listener while two clients connect, so
			// that both wait in the kernel's accept queue.
			l.RemoveReader(srv.Sockets()[0])
			srv.serving = false
			sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: serverPort(srv)}
			var clients []int
			for range 2 {
				fd, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
				if err != nil {
					return err
				}
				clients = append(clients, fd)
				if err := SockConnect(at, fd, sa); err != nil {
					return err
				}
			}
			accepted := 0
			all := asyncio.NewFuture[struct{}](l)
			accept := srv.accept
			srv.accept = func(fd int) (int, unix.Sockaddr, error) {
				nfd, sa, err := accept(fd)
				if err == nil {
					counts[len(counts)-1]++
					if accepted++; accepted == 2 {
						all.SetResult(struct{}{})
					}
				}
				return nfd, sa, err
			}
			// A callback that re-schedules itself marks each iteration.
			var tick func()
			tick = func() {
				if !all.Done() {
					counts = append(counts, 0)
					l.CallSoon(tick)
				}
			}
			tick()
			srv.StartServing()
			if _, err := all.Await(at); err != nil {
				return err
			}
			for _, fd := range clients {
				unix.Close(fd)
			}
			srv.Close()
			return srv.WaitClosed(at)
		})
		var nonzero []int
		for _, c := range counts {
			if c > 0 {
				nonzero = append(nonzero, c)
			}
		}
		return nonzero
	}
	got := fmt.Sprint(perIteration(WithBacklog(1)), perIteration())
	if got != "[1 1] [2]" {
		t.Fatalf("accepts per iteration: backlog 1 and default = %s, want [1 1] [2]", got)
	}
}
