//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// simSocknameHosts are the hosts a server of the simulated host "box"
// (10.0.0.1) may bind to, and the address it reports for each, as
// getsockname reports a real server's (asyncio's Server.sockets,
// aio's Addr): the loopback or wildcard address named, 0.0.0.0 for ""
// (CreateServer's "" listens on 0.0.0.0), 127.0.0.1 for "localhost", and
// the host's own address for its name or address.
var simSocknameHosts = []struct{ host, want string }{
	{"", "0.0.0.0"},
	{"127.0.0.1", "127.0.0.1"},
	{"127.0.0.5", "127.0.0.5"},
	{"0.0.0.0", "0.0.0.0"},
	{"::1", "::1"},
	{"::", "::"},
	{"localhost", "127.0.0.1"},
	{"box", "10.0.0.1"},
	{"10.0.0.1", "10.0.0.1"},
}

// A server on the simulated network reports the address it was bound
// to, as a real one does; it reported the host's 10.0.0.x for each. The
// server still serves the host's one address: another host reaches it,
// and the accepted connection's sockname is the address the client
// reached, as a real wildcard server's is.
func TestSimServerSockname(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		box, client := n.Host("box"), n.Host("client")
		for i, c := range simSocknameHosts {
			port := 80 + i
			got := asyncio.NewFuture[string](t)
			srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				got.SetResult(fmt.Sprint(w.ExtraInfo("sockname")))
				w.Close()
				return nil
			}, c.host, port, WithNetwork(box))
			if err != nil {
				return fmt.Errorf("host %q: %v", c.host, err)
			}
			want := net.JoinHostPort(c.want, fmt.Sprint(port))
			if a := srv.Addr().String(); a != want {
				tt.Errorf("host %q: Addr %s, want %s", c.host, a, want)
			}
			if as := fmt.Sprint(srv.Addrs()); as != "["+want+"]" {
				tt.Errorf("host %q: Addrs %s, want [%s]", c.host, as, want)
			}
			_, w, err := OpenConnection(t, "box", port, WithNetwork(client))
			if err != nil {
				return fmt.Errorf("host %q: dial from another host: %v", c.host, err)
			}
			w.Close()
			s, err := got.Await(t)
			if err != nil {
				return err
			}
			if s != fmt.Sprintf("10.0.0.1:%d", port) {
				tt.Errorf("host %q: accepted connection's sockname %s, want 10.0.0.1:%d", c.host, s, port)
			}
			srv.Close()
		}
		return nil
	})
}

// The addresses simSocknameHosts expects are what real servers report
// for the same hosts (those a real host has: not the simulated host's
// name and address, nor "localhost", whose addresses the system's
// resolver decides).
func TestSimServerSocknameMatchesReal(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		for _, c := range simSocknameHosts {
			switch c.host {
			case "box", "10.0.0.1", "localhost":
				continue
			}
			srv, err := StartServer(at, func(*asyncio.T, *StreamReader, *StreamWriter) error { return nil }, c.host, 0)
			if err != nil {
				if ip := net.ParseIP(c.host); ip != nil && ip.To4() == nil {
					t.Logf("host %q: %v (no IPv6 here)", c.host, err)
					continue
				}
				return fmt.Errorf("host %q: %v", c.host, err)
			}
			var got []string
			for _, a := range srv.Addrs() {
				got = append(got, a.(*net.TCPAddr).IP.String())
			}
			srv.Close()
			if fmt.Sprint(got) != "["+c.want+"]" {
				t.Errorf("real server on %q reports %v, the simulated one %s", c.host, got, c.want)
			}
		}
		return nil
	})
}
