//go:build unix

package aio

// Hostile probe h29 of the sock_* calls: cancelled while waiting, or
// after the socket's readiness woke them but before they resumed, they
// have taken nothing from the kernel: the data (the datagram, the
// connection) is still there for the next call.

import (
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

func TestH29_SockCallsCancelledTakeNothing(t *testing.T) {
	type call struct {
		name string
		typ  int
		recv func(at *asyncio.T, fd int) (string, error)
	}
	calls := []call{
		{"SockRecv", unix.SOCK_STREAM, func(at *asyncio.T, fd int) (string, error) {
			b, err := SockRecv(at, fd, 16)
			return string(b), err
		}},
		{"SockRecvInto", unix.SOCK_STREAM, func(at *asyncio.T, fd int) (string, error) {
			b := make([]byte, 16)
			n, err := SockRecvInto(at, fd, b)
			return string(b[:n]), err
		}},
		{"SockRecvFrom", unix.SOCK_DGRAM, func(at *asyncio.T, fd int) (string, error) {
			b, _, err := SockRecvFrom(at, fd, 16)
			return string(b), err
		}},
	}
	// The readiness callback runs in the iteration after the write, and
	// the woken task's step in the one after that: cancelled after one
	// yield it is still waiting; after two it was woken, not resumed.
	for _, c := range calls {
		for _, yields := range []int{0, 1, 2} {
			t.Run(c.name+"/"+[]string{"waiting", "readable", "woken"}[yields], func(t *testing.T) {
				runVirtual(t, func(at *asyncio.T) error {
					fds := socketpair(t, c.typ)
					defer unix.Close(fds[0])
					defer unix.Close(fds[1])
					task := asyncio.CreateTask(at, func(x *asyncio.T) (string, error) { return c.recv(x, fds[0]) })
					if err := asyncio.Sleep(at, 0); err != nil { // the call waits
						return err
					}
					if yields > 0 {
						if _, err := unix.Write(fds[1], []byte("hello")); err != nil {
							return err
						}
					}
					for range yields {
						if err := asyncio.Sleep(at, 0); err != nil {
							return err
						}
					}
					waiting := ioWaiterOf(ioWait{at.Loop(), fds[0], false}) != nil
					if waiting != (yields < 2) {
						t.Fatalf("after %d yields the readiness callback has run: %v (the probe's phases are off)", yields, !waiting)
					}
					reached := task.Cancel()
					got, err := task.Await(at)
					if !reached || !asyncio.IsCancelled(err) || got != "" {
						t.Fatalf("cancelled call: %q, %v (Cancel %v); want nothing and the cancellation", got, err, reached)
					}
					if yields > 0 && !readable(fds[0]) {
						t.Fatal("the data is gone from the socket")
					}
					if yields == 0 {
						if _, err := unix.Write(fds[1], []byte("hello")); err != nil {
							return err
						}
					}
					if got, err := c.recv(at, fds[0]); got != "hello" || err != nil {
						t.Fatalf("next call: %q, %v; want hello", got, err)
					}
					return nil
				})
			})
		}
	}
}
