//go:build unix

package aio

import (
	"net"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// keepAliveOn reads SO_KEEPALIVE of fd.
func keepAliveOn(t *testing.T, fd int) bool {
	t.Helper()
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	if err != nil {
		t.Fatal(err)
	}
	return v != 0
}

// WithKeepAlive (asyncio 3.13's keep_alive=True) sets SO_KEEPALIVE on a
// server's listeners, and so on the connections they accept; without it
// neither has it.
func TestWithKeepAlive(t *testing.T) {
	runNet(t, func(at *asyncio.T) error {
		for _, keep := range []bool{false, true} {
			accepted := asyncio.NewFuture[Transport](at)
			var opts []Option
			if keep {
				opts = append(opts, WithKeepAlive())
			}
			srv, err := CreateServer(at, func() Protocol {
				return &acceptProto{accepted: accepted}
			}, "127.0.0.1", 0, opts...)
			if err != nil {
				return err
			}
			for _, fd := range srv.Sockets() {
				if got := keepAliveOn(t, fd); got != keep {
					t.Errorf("WithKeepAlive %v: listener SO_KEEPALIVE %v", keep, got)
				}
			}
			port := srv.Addr().(*net.TCPAddr).Port
			_, w, err := OpenConnection(at, "127.0.0.1", port)
			if err != nil {
				return err
			}
			tr, err := accepted.Await(at)
			if err != nil {
				return err
			}
			fd, _ := Socket(tr)
			if got := keepAliveOn(t, fd); got != keep {
				t.Errorf("WithKeepAlive %v: accepted connection SO_KEEPALIVE %v", keep, got)
			}
			tr.Close()
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
}

type acceptProto struct {
	BaseProtocol
	accepted *asyncio.Future[Transport]
}

func (p *acceptProto) ConnectionMade(tr Transport) { _ = p.accepted.SetResult(tr) }

// WithKeepAlive with WithSocket sets it on that socket; WithReusePort
// with WithSocket is refused (too late for it: the socket is bound), as
// for a datagram endpoint; a Unix server and the simulated network do
// not take WithKeepAlive.
func TestWithKeepAliveOtherCases(t *testing.T) {
	runNet(t, func(at *asyncio.T) error {
		factory := func() Protocol { return &BaseProtocol{} }
		sock := func() int {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
			return fd
		}
		fd := sock()
		srv, err := CreateServer(at, factory, "", 0, WithSocket(fd), WithKeepAlive())
		if err != nil {
			unix.Close(fd)
			return err
		}
		if !keepAliveOn(t, fd) {
			t.Errorf("WithSocket and WithKeepAlive: SO_KEEPALIVE not set on the socket")
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}

		fd = sock()
		defer unix.Close(fd)
		_, err = CreateServer(at, factory, "", 0, WithSocket(fd), WithReusePort())
		if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, "reuse_port=True") {
			t.Errorf("WithSocket and WithReusePort: %T %v, want a *ValueError naming reuse_port", err, err)
		}
		if err := unix.Listen(fd, 1); err != nil { // untouched: still only bound
			t.Errorf("the refused socket: %v", err)
		}

		_, err = CreateUnixServer(at, factory, t.TempDir()+"/s", WithKeepAlive())
		if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, "does not take the option WithKeepAlive") {
			t.Errorf("CreateUnixServer with WithKeepAlive: %T %v", err, err)
		}
		host := NewSimNetwork(at, 1).Host("a")
		_, err = CreateServer(at, factory, "", 80, WithNetwork(host), WithKeepAlive())
		if ve, ok := err.(*asyncio.ValueError); !ok || !strings.Contains(ve.Msg, "WithKeepAlive is not supported on a simulated network") {
			t.Errorf("WithNetwork and WithKeepAlive: %T %v", err, err)
		}
		return nil
	})
}
