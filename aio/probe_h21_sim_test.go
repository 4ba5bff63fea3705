//go:build linux

package aio

import (
	"errors"
	"fmt"
	"math"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// SimConn.Reset on a connection whose client closed its socket while the
// server keeps its side open (a half-closed connection, still one of the
// network's) wrote its reset byte into the client's old descriptor
// number: by then the number may belong to anything else the process
// opened, which got a stray zero byte (here a socket of the test's own;
// as easily the next simulated connection's client end, whose server
// then read a byte nobody sent). A middlebox's RST reaches the sockets
// of the connection only: a closed one is not there to hear it, no other
// socket sees anything, and the server's side is reset (its next write
// fails).
func TestH21_ResetAfterClientClosedWritesNoStrayByte(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		serverErr := asyncio.NewFuture[error](t)
		hold := asyncio.NewFuture[struct{}](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := r.Read(t, -1); err != nil { // to the client's EOF; our side stays open
				serverErr.SetResult(err)
				return nil
			}
			if _, err := hold.Await(t); err != nil {
				return err
			}
			w.Write([]byte("late")) // the reset shows to a write, as on TCP
			serverErr.SetResult(w.Drain(t))
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
		if conn == nil {
			return fmt.Errorf("no connection")
		}
		old := conn.cfd
		w.Close()
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil { // closed, and the EOF delivered
			return err
		}
		if len(n.Conns()) != 1 {
			return fmt.Errorf("connections %d, want the half-closed one", len(n.Conns()))
		}
		// The client's old descriptor number now names another socket.
		other := socketpair(tt, unix.SOCK_STREAM)
		defer unix.Close(other[0])
		defer unix.Close(other[1])
		if other[0] != old { // the lowest free number is usually old already
			if err := unix.Dup3(other[0], old, unix.O_CLOEXEC); err != nil {
				return err
			}
			defer unix.Close(old)
		}
		conn.Reset()
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return err
		}
		hold.SetResult(struct{}{})
		if readable(other[1]) {
			return fmt.Errorf("Reset wrote into descriptor %d, which the client closed and another socket now has", old)
		}
		got, err := asyncio.WaitFor(t, time.Second, serverErr)
		if err != nil {
			return err
		}
		if !errors.Is(got, syscall.ECONNRESET) && !errors.Is(got, syscall.EPIPE) {
			return fmt.Errorf("the server's write after the reset: %v, want ECONNRESET (or EPIPE, see README)", got)
		}
		if len(n.Conns()) != 0 {
			return fmt.Errorf("the reset connection is still open")
		}
		return nil
	})
}

// ConnOf took the first connection with the address in the order of a
// map's iteration, which Go randomises: when two hosts each connect to
// themselves through "localhost", both connections' client ends are
// 127.0.0.1 and the host's first port, as on two real hosts, and ConnOf
// returned one or the other from one call to the next, so a test that
// resets "the connection of this address" reset a different one from run
// to run with the same seed. It returns the oldest such connection now,
// every time.
func TestH21_ConnOfSameAddressOnTwoHostsIsDeterministic(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		var addrs []net.Addr
		for _, name := range []string{"a", "b"} {
			h := n.Host(name)
			srv, err := StartServer(t, echoLines(""), "localhost", 80, WithNetwork(h))
			if err != nil {
				return err
			}
			defer srv.Close()
			_, w, err := OpenConnection(t, "localhost", 80, WithNetwork(h))
			if err != nil {
				return err
			}
			defer w.Close()
			addrs = append(addrs, w.ExtraInfo("sockname").(net.Addr))
		}
		if addrs[0].String() != addrs[1].String() {
			return fmt.Errorf("client addresses %v and %v: the scenario needs them equal", addrs[0], addrs[1])
		}
		for range 50 {
			c := n.ConnOf(addrs[1])
			if c == nil {
				return fmt.Errorf("ConnOf(%v) = nil", addrs[1])
			}
			if c.ID() != 1 {
				return fmt.Errorf("ConnOf(%v) = connection %d, want the oldest with that address (1), every time", addrs[1], c.ID())
			}
		}
		return nil
	})
}

// SearchSeeds(math.MaxUint64, 1, f) panicked that the seeds "go past the
// largest uint64", though the one seed it names is the largest uint64, a
// seed like any other (a test that draws its first seed at random hits
// it); and a range ending at the largest uint64 could not be searched.
// Only a range whose last seed would be past it is a *ValueError now.
func TestH21_SearchSeedsUpToTheLargestSeed(t *testing.T) {
	var ran []uint64
	seed, err := SearchSeeds(math.MaxUint64-1, 2, func(s uint64) error {
		ran = append(ran, s)
		if s == math.MaxUint64 {
			return errors.New("boom")
		}
		return nil
	})
	if seed != math.MaxUint64 || err == nil || fmt.Sprint(ran) != fmt.Sprint([]uint64{math.MaxUint64 - 1, math.MaxUint64}) {
		t.Fatalf("SearchSeeds(max-1, 2) = %d, %v after seeds %v; want the last seed's failure", seed, err, ran)
	}
	func() {
		defer func() {
			if _, ok := recover().(*asyncio.ValueError); !ok {
				t.Errorf("SearchSeeds(max, 2): want a *ValueError (the second seed is past the largest uint64)")
			}
		}()
		SearchSeeds(math.MaxUint64, 2, func(uint64) error { return nil })
	}()
}
