//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-asyncio/asyncio"
)

// reuseAddrOf reports SO_REUSEADDR of each listening socket of s.
func reuseAddrOf(s *Server) []int {
	var got []int
	for _, fd := range s.Sockets() {
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR)
		if err != nil {
			v = -1
		}
		got = append(got, v)
	}
	return got
}

// WithReuseAddress is asyncio's reuse_address=: set by default (asyncio's
// default on Unix), left clear with false, and then a server restarted on
// its port while its last connection lingers in TIME_WAIT (the server
// closed first) cannot bind, where the default one can.
func TestWithReuseAddress(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, opts := range [][]Option{nil, {WithReuseAddress(true)}, {WithReuseAddress(false)}} {
			s, err := StartServer(at, closeAtOnce, "127.0.0.1", 0, opts...)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprint("SO_REUSEADDR ", reuseAddrOf(s)))
			s.Close()
			if err := s.WaitClosed(at); err != nil {
				return err
			}
		}
		// A port whose server side is in TIME_WAIT: the handler closes
		// first, the client reads the EOF and closes too.
		first, err := StartServer(at, closeAtOnce, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := serverPort(first)
		r, w, err := OpenConnection(at, "127.0.0.1", port)
		if err != nil {
			return err
		}
		if _, err := r.Read(at, 10); err != nil {
			return err
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		first.Close()
		if err := first.WaitClosed(at); err != nil {
			return err
		}
		_, err = StartServer(at, closeAtOnce, "127.0.0.1", port, WithReuseAddress(false))
		log = append(log, fmt.Sprintf("restart without SO_REUSEADDR: EADDRINUSE=%v", errors.Is(err, unix.EADDRINUSE)))
		again, err := StartServer(at, closeAtOnce, "127.0.0.1", port)
		if err != nil {
			return err
		}
		log = append(log, "restart with it: bound")
		again.Close()
		return again.WaitClosed(at)
	})
	expectLog(t, []string{
		"SO_REUSEADDR [1]",
		"SO_REUSEADDR [1]",
		"SO_REUSEADDR [0]",
		"restart without SO_REUSEADDR: EADDRINUSE=true",
		"restart with it: bound",
	}, log)
}

// WithReuseAddress is refused where it cannot act, before anything is
// done: with WithSocket (bound already, as asyncio refuses reuse_port
// there), false on a simulated network (no TIME_WAIT), and by a call
// that takes no such option (asyncio 3.13 refuses reuse_address=True for
// a datagram endpoint).
func TestWithReuseAddressRefused(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		_, err = CreateServer(at, func() Protocol { return &BaseProtocol{} }, "", 0, WithSocket(fd), WithReuseAddress(false))
		log = append(log, "WithSocket: "+describe(err))
		if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 0 {
			log = append(log, "WithSocket: the socket was made to listen")
		}
		_, _, err = CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil, WithReuseAddress(true))
		log = append(log, "datagram: "+describe(err))
		n := NewSimNetwork(at, 1)
		defer n.Close()
		h := n.Host("server")
		_, err = StartServer(at, closeAtOnce, h.IP().String(), 80, WithNetwork(h), WithReuseAddress(false))
		log = append(log, "sim false: "+describe(err))
		s, err := StartServer(at, closeAtOnce, h.IP().String(), 80, WithNetwork(h), WithReuseAddress(true))
		if err != nil {
			return err
		}
		log = append(log, "sim true: serving")
		s.Close()
		return s.WaitClosed(at)
	})
	expectLog(t, []string{
		"WithSocket: ValueError socket modifier keyword arguments can not be used when sock is specified. (reuse_address=False)",
		"datagram: ValueError CreateDatagramEndpoint does not take the option WithReuseAddress (it applies to CreateServer, StartServer, CreateGroupServer, StartGroupServer, StartHTTPServer)",
		"sim false: ValueError StartServer: WithReuseAddress(false) is not supported on a simulated network (WithNetwork), which has no TIME_WAIT",
		"sim true: serving",
	}, log)
}
