//go:build linux

package aio

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// SockAccept of a peer bound to an abstract Unix name returns the whole
// name, with Go's "@" for the leading NUL (CPython's sock_accept:
// b'\x00name'), as the package's getpeername and net's Conn.RemoteAddr
// have it; a NUL inside the name is part of it, as in asyncio and in the
// package's other addresses (it was cut there by x/sys/unix's accept:
// "@ab", the name of another socket). An unnamed peer's name is "".
func TestSockAcceptAbstractPeerName(t *testing.T) {
	clean(t)
	base := fmt.Sprintf("h15-accept-%d", os.Getpid())
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		ln, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(ln)
		if err := unix.Bind(ln, &unix.SockaddrUnix{Name: "@" + base + "-server"}); err != nil {
			return err
		}
		if err := unix.Listen(ln, 4); err != nil {
			return err
		}
		for _, bind := range []string{"", "@" + base, "@" + base + "\x00x", "@" + base + "\x00"} {
			cl, err := NewSocket("unix")
			if err != nil {
				return err
			}
			if bind != "" {
				if err := unix.Bind(cl, &unix.SockaddrUnix{Name: bind}); err != nil {
					unix.Close(cl)
					return fmt.Errorf("bind %q: %w", bind, err)
				}
			}
			if err := SockConnect(at, cl, &net.UnixAddr{Name: "@" + base + "-server", Net: "unix"}); err != nil {
				unix.Close(cl)
				return err
			}
			nfd, peer, err := SockAccept(at, ln)
			if err != nil {
				unix.Close(cl)
				return err
			}
			log = append(log, fmt.Sprintf("bound %q: peer %q, getpeername %q", bind, peer.(*net.UnixAddr).Name, peerAddr(nfd, "unix").(*net.UnixAddr).Name))
			unix.Close(nfd)
			unix.Close(cl)
		}
		return nil
	})
	var want []string
	for _, name := range []string{"", "@" + base, "@" + base + "\x00x", "@" + base + "\x00"} {
		want = append(want, fmt.Sprintf("bound %q: peer %q, getpeername %q", name, name, name))
	}
	expectLog(t, want, log)
}

// A Unix server's accepted connections have the same peer names
// (getpeername, not accept's address).
func TestUnixServerAbstractPeerName(t *testing.T) {
	clean(t)
	base := fmt.Sprintf("h15-server-%d", os.Getpid())
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		got := asyncio.NewQueue[string](0)
		srv, err := StartUnixServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			got.PutNowait(w.ExtraInfo("peername").(*net.UnixAddr).Name)
			w.Close()
			return nil
		}, "@"+base+"-server")
		if err != nil {
			return err
		}
		defer srv.Close()
		for _, bind := range []string{"@" + base, "@" + base + "\x00x"} {
			cl, err := NewSocket("unix")
			if err != nil {
				return err
			}
			defer unix.Close(cl)
			if err := unix.Bind(cl, &unix.SockaddrUnix{Name: bind}); err != nil {
				return err
			}
			if err := SockConnect(at, cl, srv.Addr()); err != nil {
				return err
			}
			name, err := got.Get(at)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("bound %q: peername %q", bind, name))
		}
		return nil
	})
	expectLog(t, []string{
		fmt.Sprintf("bound %q: peername %q", "@"+base, "@"+base),
		fmt.Sprintf("bound %q: peername %q", "@"+base+"\x00x", "@"+base+"\x00x"),
	}, log)
}
