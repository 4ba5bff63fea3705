//go:build linux

package aio

import (
	"net"
	"reflect"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// getsockname and getpeername decode IPv4, IPv6 and Unix addresses
// themselves (no SO_PROTOCOL probe, no second system call) and agree with
// x/sys/unix on every family, but for an unnamed Unix socket (here the
// client's own address): "" as asyncio's, where x/sys/unix says "@".
func TestRawSockaddrAgreesWithXSys(t *testing.T) {
	for _, c := range []struct{ network, addr string }{
		{"tcp4", "127.0.0.1:0"},
		{"tcp6", "[::1]:0"},
		{"unix", "@aio-rawsockaddr-test"},
	} {
		ln, err := net.Listen(c.network, c.addr)
		if err != nil {
			t.Logf("%s: %v (skipping this family)", c.network, err)
			continue
		}
		conn, err := net.Dial(c.network, ln.Addr().String())
		if err != nil {
			ln.Close()
			t.Fatalf("%s dial: %v", c.network, err)
		}
		raw, err := conn.(interface {
			SyscallConn() (syscall.RawConn, error)
		}).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		_ = raw.Control(func(fd uintptr) {
			for _, f := range []struct {
				name      string
				ours, ref func(int) (unix.Sockaddr, error)
			}{{"getsockname", getsockname, unix.Getsockname}, {"getpeername", getpeername, unix.Getpeername}} {
				got, err1 := f.ours(int(fd))
				want, err2 := f.ref(int(fd))
				if c.network == "unix" && f.name == "getsockname" && reflect.DeepEqual(want, &unix.SockaddrUnix{Name: "@"}) {
					want = &unix.SockaddrUnix{} // unnamed
				}
				if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: got %#v (%v), x/sys/unix %#v (%v)", c.network, f.name, got, err1, want, err2)
				}
			}
		})
		conn.Close()
		ln.Close()
	}
	if _, err := getsockname(-1); err != unix.EBADF {
		t.Errorf("getsockname(-1) = %v, want EBADF", err)
	}
}
