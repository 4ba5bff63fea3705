//go:build unix

package aio

import (
	"errors"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// familyEcho answers each datagram with its upper case.
type familyEcho struct {
	BaseDatagramProtocol
	tr DatagramTransport
}

func (e *familyEcho) ConnectionMade(tr DatagramTransport) { e.tr = tr }
func (e *familyEcho) DatagramReceived(data []byte, from net.Addr) {
	up := make([]byte, len(data))
	for i, b := range data {
		up[i] = b &^ 0x20
	}
	e.tr.SendTo(up, from)
}

// familyReply keeps the first datagram it receives.
type familyReply struct {
	BaseDatagramProtocol
	got *asyncio.Future[string]
}

func (r *familyReply) DatagramReceived(data []byte, from net.Addr) {
	if !r.got.Done() {
		r.got.SetResult(string(data) + " from " + from.String())
	}
}

// CreateDatagramEndpoint with WithFamily and neither address makes an
// unbound endpoint of that family, as asyncio's
// create_datagram_endpoint(family=AF_INET) does (CPython 3.13: sockname
// ('0.0.0.0', 0), no peername; its sendto binds it, and the answer comes
// back); with an address of the other family it fails as getaddrinfo
// does ("Address family for hostname not supported"), and without a
// family it is still ValueError "unexpected address family". WithFamily
// was refused for datagram endpoints: an unbound one needed WithSocket.
func TestCreateDatagramEndpointWithFamily(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			family   int
			server   string
			sockname string
		}{{unix.AF_INET, "127.0.0.1", "0.0.0.0:0"}, {unix.AF_INET6, "::1", "[::]:0"}} {
			st, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &familyEcho{} }, &net.UDPAddr{IP: net.ParseIP(c.server)}, nil)
			if err != nil {
				return err
			}
			server := st.ExtraInfo("sockname").(*net.UDPAddr)
			reply := &familyReply{got: asyncio.NewFuture[string](at)}
			tr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return reply }, nil, nil, WithFamily(c.family))
			if err != nil {
				st.Close()
				return err
			}
			if got := tr.ExtraInfo("sockname").(*net.UDPAddr).String(); got != c.sockname {
				t.Errorf("family %d: sockname %s, want %s (unbound)", c.family, got, c.sockname)
			}
			if p := tr.ExtraInfo("peername"); p != nil {
				t.Errorf("family %d: peername %v, want none", c.family, p)
			}
			if err := tr.SendTo([]byte("hi"), server); err != nil {
				t.Errorf("family %d: SendTo: %v", c.family, err)
			} else if got, err := reply.got.Await(at); err != nil || got != "HI from "+server.String() {
				t.Errorf("family %d: got %q, %v; want the echo from %s", c.family, got, err, server)
			}
			tr.Close()
			st.Close()
		}
		factory := func() DatagramProtocol { return &familyReply{got: asyncio.NewFuture[string](at)} }
		var ve *asyncio.ValueError
		if _, _, err := CreateDatagramEndpoint(at, factory, nil, nil); !errors.As(err, &ve) || ve.Msg != "unexpected address family" {
			t.Errorf("no address and no family: %v, want ValueError(unexpected address family)", err)
		}
		if _, _, err := CreateDatagramEndpoint(at, factory, nil, nil, WithFamily(unix.AF_UNSPEC)); !errors.As(err, &ve) || ve.Msg != "unexpected address family" {
			t.Errorf("no address and AF_UNSPEC: %v, want ValueError(unexpected address family)", err)
		}
		lo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
		for name, addrs := range map[string][2]*net.UDPAddr{"local": {lo, nil}, "remote": {nil, lo}} {
			_, _, err := CreateDatagramEndpoint(at, factory, addrs[0], addrs[1], WithFamily(unix.AF_INET6))
			var de *net.DNSError
			if !errors.As(err, &de) || de.Err != "Address family for hostname not supported" {
				t.Errorf("an IPv4 %s address with AF_INET6: %v, want getaddrinfo's error", name, err)
			}
		}
		return nil
	})
}
