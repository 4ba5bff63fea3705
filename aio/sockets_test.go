//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// NewSocket makes the socket each network names, non-blocking and
// close-on-exec (asyncio requires non-blocking sockets; close-on-exec is
// what Go's net package gives every socket); an unknown network is a
// net.UnknownNetworkError.
func TestNewSocketNetworks(t *testing.T) {
	var log []string
	for _, network := range []string{"tcp4", "tcp6", "udp4", "udp6", "unix", "unixgram"} {
		fd, err := NewSocket(network)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		sa, _ := unix.Getsockname(fd)
		typ, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		fdfl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		family := map[bool]string{true: "inet4"}[isInet4(sa)] + map[bool]string{true: "inet6"}[isInet6(sa)] + map[bool]string{true: "unix"}[isUnix(sa)]
		log = append(log, fmt.Sprintf("%s: %s stream=%v nonblock=%v cloexec=%v", network, family,
			typ == unix.SOCK_STREAM, fl&unix.O_NONBLOCK != 0, fdfl&unix.FD_CLOEXEC != 0))
		unix.Close(fd)
	}
	_, err := NewSocket("sctp")
	var ue net.UnknownNetworkError
	log = append(log, fmt.Sprintf("sctp: %v", errors.As(err, &ue)))
	want := []string{
		"tcp4: inet4 stream=true nonblock=true cloexec=true",
		"tcp6: inet6 stream=true nonblock=true cloexec=true",
		"udp4: inet4 stream=false nonblock=true cloexec=true",
		"udp6: inet6 stream=false nonblock=true cloexec=true",
		"unix: unix stream=true nonblock=true cloexec=true",
		"unixgram: unix stream=false nonblock=true cloexec=true",
		"sctp: true",
	}
	expectLog(t, want, log)
}

func isInet4(sa unix.Sockaddr) bool { _, ok := sa.(*unix.SockaddrInet4); return ok }
func isInet6(sa unix.Sockaddr) bool { _, ok := sa.(*unix.SockaddrInet6); return ok }
func isUnix(sa unix.Sockaddr) bool  { _, ok := sa.(*unix.SockaddrUnix); return ok }

// The socket coroutines make an echo: SockAccept, SockRecv and
// SockSendall on the server side, SockConnect, SockSendall and
// SockRecvInto on the client side; the accepted peer address is the
// client's.
func TestSockPrimitivesEcho(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		o, _ := buildOptions("CreateServer", nil)
		lfd, err := listenOn(unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}, o)
		if err != nil {
			return err
		}
		defer unix.Close(lfd)
		server := asyncio.CreateTask(at, func(t *asyncio.T) (net.Addr, error) {
			cfd, peer, err := SockAccept(t, lfd)
			if err != nil {
				return nil, err
			}
			defer unix.Close(cfd)
			b, err := SockRecv(t, cfd, 100)
			if err != nil {
				return nil, err
			}
			return peer, SockSendall(t, cfd, append([]byte("echo:"), b...))
		})
		fd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := SockConnect(at, fd, localAddr(lfd, "tcp")); err != nil {
			return err
		}
		if err := SockSendall(at, fd, []byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 100)
		n, err := SockRecvInto(at, fd, buf)
		if err != nil {
			return err
		}
		log = append(log, string(buf[:n]))
		peer, err := server.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("peer %T is the client: %v", peer, peer.String() == localAddr(fd, "tcp").String()))
		return nil
	})
	want := []string{"echo:ping", "peer *net.TCPAddr is the client: true"}
	expectLog(t, want, log)
}

// SockConnect takes the address types of net: a *net.UnixAddr for a
// Unix socket (SockAccept then returns a *net.UnixAddr) and a
// *net.UDPAddr for a datagram socket; another net.Addr, or none, is a
// *net.AddrError.
func TestSockConnectAddressTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		ln, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(ln)
		if err := unix.Bind(ln, &unix.SockaddrUnix{Name: path}); err != nil {
			return err
		}
		unix.Listen(ln, 1)
		cl, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(cl)
		if err := SockConnect(at, cl, &net.UnixAddr{Name: path, Net: "unix"}); err != nil {
			return err
		}
		nfd, peer, err := SockAccept(at, ln)
		if err != nil {
			return err
		}
		unix.Close(nfd)
		log = append(log, fmt.Sprintf("unix: accepted peer %T", peer))

		u, err := NewSocket("udp4")
		if err != nil {
			return err
		}
		defer unix.Close(u)
		port := closedUDPPort(t)
		err = SockConnect(at, u, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		log = append(log, fmt.Sprintf("udp: %v, peer %v", err, peerAddr(u, "udp").(*net.UDPAddr).Port == port))

		var ae *net.AddrError
		for _, addr := range []net.Addr{&net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}, (*net.TCPAddr)(nil), nil} {
			err = SockConnect(at, u, addr)
			log = append(log, fmt.Sprintf("%T: AddrError %v", addr, errors.As(err, &ae)))
		}
		return nil
	})
	want := []string{"unix: accepted peer *net.UnixAddr", "udp: <nil>, peer true", "*net.IPAddr: AddrError true", "*net.TCPAddr: AddrError true", "<nil>: AddrError true"}
	expectLog(t, want, log)
}

// Cancelling a task blocked in SockRecv removes the fd's read interest,
// and the fd can be read again afterwards.
func TestSockRecvCancelRemovesInterest(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		l := at.Loop()
		rd := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return SockRecv(t, fds[0], 10) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprintf("registered=%v", watchingRead(l, fds[0])))
		rd.Cancel()
		_, err := rd.Await(at)
		log = append(log, fmt.Sprintf("%s registered=%v", describe(err), watchingAny(l, fds[0])))
		unix.Write(fds[1], []byte("hi"))
		b, err := SockRecv(at, fds[0], 10)
		log = append(log, fmt.Sprintf("%q %v", b, err))
		return nil
	})
	want := []string{"registered=true", "cancelled registered=false", `"hi" <nil>`}
	expectLog(t, want, log)
}

// SockAccept suspends until a connection arrives (asyncio's
// loop.sock_accept), and reports a socket that cannot accept as an
// *os.SyscallError "accept".
func TestSockAcceptWaitsAndFails(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		ln, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(ln)
		unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		_, _, err = SockAccept(at, ln) // not listening yet
		log = append(log, "not listening: "+describe(err))
		if err := unix.Listen(ln, 1); err != nil {
			return err
		}
		accepted := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			log = append(log, "accepting")
			nfd, _, err := SockAccept(t, ln)
			log = append(log, "accepted")
			return nfd, err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		cl, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(cl)
		log = append(log, "connecting")
		if err := SockConnect(at, cl, localAddr(ln, "tcp")); err != nil {
			return err
		}
		nfd, err := accepted.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("accepted the client: %v", peerAddr(nfd, "tcp").String() == localAddr(cl, "tcp").String()))
		unix.Close(nfd)
		return nil
	})
	want := []string{"not listening: syscall=accept EINVAL", "accepting", "connecting", "accepted", "accepted the client: true"}
	expectLog(t, want, log)
}

// SockSendall suspends while the send buffer is full and returns once
// every byte is written (asyncio's loop.sock_sendall); a peer that is gone
// makes it fail with an *os.SyscallError "send" (EPIPE, no SIGPIPE).
func TestSockSendallWaitsAndFails(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
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
		err := SockSendall(at, fds[0], make([]byte, size))
		log = append(log, fmt.Sprintf("sendall: %v, reader still running: %v", err, !reader.Done()))
		n, err := asyncio.WaitFor(at, time.Minute, reader)
		log = append(log, fmt.Sprintf("reader got %d %v", n, err))
		unix.Close(fds[1])
		err = SockSendall(at, fds[0], []byte("x"))
		log = append(log, "peer gone: "+describe(err))
		return nil
	})
	want := []string{"sendall: <nil>, reader still running: true", fmt.Sprintf("reader got %d <nil>", 1<<20), "peer gone: syscall=send EPIPE"}
	expectLog(t, want, log)
}

// SockSendTo and SockRecvFrom(Into) exchange datagrams with the sender's
// address (asyncio 3.11's sock_sendto, sock_recvfrom, sock_recvfrom_into);
// a receive waits for the datagram, and a bad address is refused.
func TestSockDatagrams(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		a, b := boundUDP(t), boundUDP(t)
		aAddr, bAddr := localAddr(a, "udp"), localAddr(b, "udp")
		recv := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) {
			data, from, err := SockRecvFrom(t, b, 100)
			return fmt.Sprintf("%s from %v", data, from), err
		})
		asyncio.Sleep(at, 0) //asynciovet:ignore droppedcancel a yield so that the receive waits; the task is not cancelled here
		if n, err := SockSendTo(at, a, []byte("ping"), bAddr); n != 4 || err != nil {
			return fmt.Errorf("SockSendTo: %d, %v", n, err)
		}
		got, err := recv.Await(at)
		if want := "ping from " + aAddr.String(); got != want || err != nil {
			return fmt.Errorf("SockRecvFrom: %q, %v; want %q", got, err, want)
		}
		if _, err := SockSendTo(at, b, []byte("pong!"), aAddr); err != nil {
			return err
		}
		buf := make([]byte, 8)
		n, from, err := SockRecvFromInto(at, a, buf[:4])
		if string(buf[:n]) != "pong" || from.String() != bAddr.String() || err != nil {
			return fmt.Errorf("SockRecvFromInto: %q from %v, %v", buf[:n], from, err)
		}
		var ae *net.AddrError
		if _, err := SockSendTo(at, a, []byte("x"), &net.IPAddr{}); !errors.As(err, &ae) {
			return fmt.Errorf("SockSendTo to an *IPAddr: %v, want a *net.AddrError", err)
		}
		return nil
	})
}

// boundUDP is a non-blocking UDP socket bound to 127.0.0.1, closed at the
// end of the test.
func boundUDP(t *testing.T) int {
	fd, err := NewSocket("udp4")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	return fd
}

// In debug mode the sock_* calls refuse a blocking socket with a
// *ValueError (asyncio's debug check): its system call would block the
// loop. Outside debug mode the socket is used as given.
func TestSockDebugRejectsBlockingSocket(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0) // blocking
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	calls := map[string]func(at *asyncio.T) error{
		"SockConnect":      func(at *asyncio.T) error { return SockConnect(at, fd, addr) },
		"SockSendall":      func(at *asyncio.T) error { return SockSendall(at, fd, []byte("x")) },
		"SockRecv":         func(at *asyncio.T) error { _, err := SockRecv(at, fd, 1); return err },
		"SockRecvInto":     func(at *asyncio.T) error { _, err := SockRecvInto(at, fd, nil); return err },
		"SockAccept":       func(at *asyncio.T) error { _, _, err := SockAccept(at, fd); return err },
		"SockRecvFrom":     func(at *asyncio.T) error { _, _, err := SockRecvFrom(at, fd, 1); return err },
		"SockRecvFromInto": func(at *asyncio.T) error { _, _, err := SockRecvFromInto(at, fd, nil); return err },
		"SockSendTo":       func(at *asyncio.T) error { _, err := SockSendTo(at, fd, []byte("x"), addr); return err },
	}
	_, err = asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		for name, call := range calls {
			err := call(at)
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), name+": the socket must be non-blocking") {
				t.Errorf("%s on a blocking socket in debug mode: %v", name, err)
			}
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime(), asyncio.WithDebug())
	if err != nil {
		t.Fatal(err)
	}
	// Not in debug mode: the call goes through (a blocking recv on an
	// unconnected TCP socket fails at once with ENOTCONN).
	runVirtual(t, func(at *asyncio.T) error {
		if _, err := SockRecv(at, fd, 1); !errors.Is(err, unix.ENOTCONN) {
			return fmt.Errorf("SockRecv outside debug mode: %v, want ENOTCONN", err)
		}
		return nil
	})
}

// A SockRecv started right after another one on the same fd was
// cancelled, before the cancelled task ran again, keeps its read
// interest: the cancelled wait removes the fd's callback only if it is
// still its own (CPython's test_sock_client_racing; before the fix the
// second SockRecv never woke).
func TestSockRecvAfterCancelledRecvKeepsInterest(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		first := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return SockRecv(t, fds[0], 10) })
		asyncio.Sleep(at, 0) //asynciovet:ignore droppedcancel a yield so that the first receive waits; the task is not cancelled here
		first.Cancel()
		// The data comes after the cancelled task has unwound.
		at.Loop().CallSoon(func() { unix.Write(fds[1], []byte("hi")) })
		b, err := SockRecv(at, fds[0], 10)
		if string(b) != "hi" || err != nil {
			return fmt.Errorf("second SockRecv: %q %v", b, err)
		}
		if _, err := first.Await(at); !asyncio.IsCancelled(err) {
			return fmt.Errorf("first: %v", err)
		}
		return nil
	})
}
