//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A server on the simulated network reports its host's one address as
// Addr, whatever it was bound to ("", a loopback or wildcard address,
// the host's name): the address the server is reached by from the other
// hosts, so that code that listens on 127.0.0.1 and gives srv.Addr() to
// its clients runs unchanged when they are on other hosts
// (examples/fanout does). A real server reports the address it was bound
// to (0.0.0.0 for "", 127.0.0.1 for "127.0.0.1"), which on the network
// would name each client's own host. The connections' addresses are a
// real host's: one end's sockname is the other's peername, and a host's
// connection to itself through a loopback or wildcard name has loopback
// addresses (the source 127.0.0.1 for any 127.x destination, as Linux
// picks it).
func TestSimServerAddrIsTheHosts(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(at *asyncio.T) error {
		n := NewSimNetwork(at, 1)
		box, other := n.Host("box"), n.Host("other")
		for _, bind := range []string{"", "127.0.0.1", "0.0.0.0", "::1", "localhost", "box", "10.0.0.1"} {
			ends := asyncio.NewQueue[[2]string](0)
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				ends.PutNowait([2]string{fmt.Sprint(w.ExtraInfo("sockname")), fmt.Sprint(w.ExtraInfo("peername"))})
				w.Close()
				return nil
			}, bind, 0, WithNetwork(box))
			if err != nil {
				return err
			}
			port := serverPort(srv)
			if got, want := srv.Addr().String(), fmt.Sprintf("10.0.0.1:%d", port); got != want {
				tt.Errorf("bound to %q: Addr %s, want %s", bind, got, want)
			}
			for _, c := range []struct {
				from       *SimHost
				host       string
				serverSide string // the server end's sockname
			}{
				{other, srv.Addr().(*net.TCPAddr).IP.String(), "10.0.0.1"},
				{other, "box", "10.0.0.1"},
				{box, "box", "10.0.0.1"},
				{box, "127.0.0.1", "127.0.0.1"},
				{box, "127.0.0.9", "127.0.0.9"},
				{box, "0.0.0.0", "127.0.0.1"},
				{box, "localhost", "127.0.0.1"},
				{box, "::1", "::1"},
			} {
				_, w, err := OpenConnection(at, c.host, port, WithNetwork(c.from))
				if err != nil {
					tt.Errorf("bound to %q: %s dialling %s: %v", bind, c.from.Name(), c.host, err)
					continue
				}
				e, err := ends.Get(at)
				if err != nil {
					return err
				}
				sock, peer := fmt.Sprint(w.ExtraInfo("sockname")), fmt.Sprint(w.ExtraInfo("peername"))
				if want := net.JoinHostPort(c.serverSide, fmt.Sprint(port)); e[0] != want || peer != e[0] || sock != e[1] {
					tt.Errorf("bound to %q: %s dialling %s: client %s -> %s, server %s <- %s; want the server end at %s",
						bind, c.from.Name(), c.host, sock, peer, e[0], e[1], want)
				}
				w.Close()
			}
			srv.Close()
		}
		return nil
	})
}
