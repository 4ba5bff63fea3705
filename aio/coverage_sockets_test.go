package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// SockAccept suspends until a connection arrives (asyncio's
// loop.sock_accept), and reports a socket that cannot accept as an
// *os.SyscallError "accept".
func TestSockAcceptWaitsAndFails(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		ln, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
		if err != nil {
			return err
		}
		defer unix.Close(ln)
		unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		_, _, err = SockAccept(at, ln) // not listening yet
		var se *os.SyscallError
		log = append(log, fmt.Sprintf("not listening: %v %v", errors.As(err, &se) && se.Syscall == "accept", errors.Is(err, syscall.EINVAL)))
		if err := unix.Listen(ln, 1); err != nil {
			return err
		}
		accepted := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			log = append(log, "accepting")
			nfd, _, err := SockAccept(t, ln)
			log = append(log, "accepted")
			return nfd, err
		})
		asyncio.Sleep(at, 0)
		cl, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
		if err != nil {
			return err
		}
		defer unix.Close(cl)
		sa, _ := unix.Getsockname(ln)
		log = append(log, "connecting")
		if err := SockConnect(at, cl, sa); err != nil {
			return err
		}
		nfd, err := accepted.Await(at)
		if err != nil {
			return err
		}
		peer, _ := unix.Getpeername(nfd)
		own, _ := unix.Getsockname(cl)
		log = append(log, fmt.Sprintf("accepted the client: %v", sockaddrToAddr(peer, "tcp").String() == sockaddrToAddr(own, "tcp").String()))
		unix.Close(nfd)
		return nil
	})
	want := []string{"not listening: true true", "accepting", "connecting", "accepted", "accepted the client: true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// SockSendall suspends while the send buffer is full and returns once
// every byte is written (asyncio's loop.sock_sendall); a peer that is gone
// makes it fail with an *os.SyscallError "send" (EPIPE, no SIGPIPE).
func TestSockSendallWaitsAndFails(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		const size = 1 << 20
		reader := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			total := 0
			for total < size {
				b, err := SockRecv(t, fds[1], 64<<10)
				if err != nil {
					return total, err
				}
				total += len(b)
			}
			return total, nil
		})
		err = SockSendall(at, fds[0], make([]byte, size))
		log = append(log, fmt.Sprintf("sendall: %v, reader still running: %v", err, !reader.Done()))
		n, err := asyncio.WaitFor(at, time.Minute, reader)
		log = append(log, fmt.Sprintf("reader got %d %v", n, err))
		unix.Close(fds[1])
		err = SockSendall(at, fds[0], []byte("x"))
		var se *os.SyscallError
		log = append(log, fmt.Sprintf("peer gone: %v %v", errors.As(err, &se) && se.Syscall == "send", errors.Is(err, syscall.EPIPE)))
		return nil
	})
	want := []string{"sendall: <nil>, reader still running: true", fmt.Sprintf("reader got %d <nil>", 1<<20), "peer gone: true true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}
