//go:build linux

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// The Zone of an IPv6 *net.UDPAddr was dropped: a link-local address
// went to the system without its scope id, so CreateDatagramEndpoint
// bound or connected to fe80::...%eth0 failed with EINVAL, SendTo to one
// had the same error, and DatagramReceived's sender had no Zone, so an
// echo to it failed too. CPython 3.13 keeps the scope id in the address
// 4-tuple: create_datagram_endpoint(local_addr=('fe80::...%eth0', 0))
// works, and datagram_received's addr ('fe80::...', port, 0, 4) can be
// answered. Here on the loopback interface, which every Linux has: a bind
// to fe80::1%lo reaches the kernel with lo's scope and is refused as an
// address lo does not have (EADDRNOTAVAIL), not as an unscoped link-local
// one (EINVAL); and the conversions both ways keep the zone.
func TestH19_IPv6ZoneIsKept(t *testing.T) {
	clean(t)
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	runNet(t, func(at *asyncio.T) error {
		ll := net.ParseIP("fe80::1")
		_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, &net.UDPAddr{IP: ll, Zone: "lo"}, nil)
		log = append(log, "bind fe80::1%lo: "+describe(err))
		return nil
	})
	sa, _ := addrToSockaddr(&net.UDPAddr{IP: net.ParseIP("fe80::1"), Port: 9, Zone: "lo"})
	log = append(log, fmt.Sprintf("to sockaddr: scope is lo's %v", sa.(*unix.SockaddrInet6).ZoneId == uint32(lo.Index)))
	sa, _ = addrToSockaddr(&net.UDPAddr{IP: net.ParseIP("fe80::1"), Port: 9, Zone: fmt.Sprint(lo.Index)})
	log = append(log, fmt.Sprintf("numeric zone: scope is lo's %v", sa.(*unix.SockaddrInet6).ZoneId == uint32(lo.Index)))
	from := &unix.SockaddrInet6{Port: 9, ZoneId: uint32(lo.Index), Addr: [16]byte{0xfe, 0x80, 15: 1}}
	log = append(log, "sender: "+sockaddrToAddr(from, "udp").String())
	expectLog(t, []string{
		"bind fe80::1%lo: syscall=bind EADDRNOTAVAIL",
		"to sockaddr: scope is lo's true",
		"numeric zone: scope is lo's true",
		"sender: [fe80::1%lo]:9",
	}, log)
}

// A scoped IPv6 literal host ("fe80::1%lo") was not taken for a literal
// (net.ParseIP refuses the zone): it was looked up with the resolver,
// and the zone of the answer dropped, so CreateConnection to a
// link-local address failed with EINVAL ("connect to [fe80::1]:9:
// invalid argument") whatever the network. CPython 3.13's
// create_connection('fe80::1%lo', 9) gets the address with lo's scope id
// from getaddrinfo and fails as the network says: "[Errno 101] Network is
// unreachable" on a Linux whose lo has no link-local route. Now the
// literal is not looked up, and its zone reaches connect.
func TestH19_ScopedLiteralHostKeepsItsZone(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		looked := false
		r := WithResolver(resolverFunc(func(ctx context.Context, host string) ([]net.IPAddr, error) {
			looked = true
			return net.DefaultResolver.LookupIPAddr(ctx, host)
		}))
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "fe80::1%lo", 9, r)
		// The network's answer (ENETUNREACH here) is the system's to
		// give; an unscoped link-local address is EINVAL on every one.
		log = append(log, fmt.Sprintf("looked up %v; failed %v, EINVAL %v, names the zone %v",
			looked, err != nil, errors.Is(err, unix.EINVAL), strings.Contains(fmt.Sprint(err), "connect to [fe80::1%lo]:9: ")))
		return nil
	})
	expectLog(t, []string{
		"looked up false; failed true, EINVAL false, names the zone true",
	}, log)
}

// CreateServer and StartServer on a scoped IPv6 literal host
// ("fe80::1%lo") bound without the zone, which the system refuses for a
// link-local address ("error while attempting to bind on address
// [fe80::1]:0: invalid argument"), so a server could not listen on a
// link-local address at all. CPython 3.13's create_server('fe80::1%lo', 0)
// binds with lo's scope id; lo has no such address, so the bind fails
// with EADDRNOTAVAIL, which asyncio skips as an address the host does
// not have (bpo-30945), leaving no address to listen on.
func TestH19_ServerOnScopedLiteralKeepsItsZone(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		_, err := StartServer(at, closeAtOnce, "fe80::1%lo", 0)
		log = append(log, fmt.Sprintf("EINVAL %v, EADDRNOTAVAIL %v: %v", errors.Is(err, unix.EINVAL), errors.Is(err, unix.EADDRNOTAVAIL), err))
		return nil
	})
	expectLog(t, []string{
		"EINVAL false, EADDRNOTAVAIL true: could not bind on any address out of [[fe80::1%lo]:0]: bind: cannot assign requested address",
	}, log)
}

// WithLocalAddr with a scoped IPv6 literal ("fe80::1%lo") bound the
// client socket without the zone, which the system refuses for a
// link-local address (EINVAL). CPython 3.13's create_connection(...,
// local_addr=('fe80::1%lo', 0)) binds with lo's scope id; lo has no such
// address, so that bind fails with EADDRNOTAVAIL ("[Errno 99] error
// while attempting to bind on address ('fe80::1', 0, 0, 1): [errno 99]
// cannot assign requested address").
func TestH19_LocalAddrScopedLiteralKeepsItsZone(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "::1", 9, WithLocalAddr("fe80::1%lo", 0))
		log = append(log, fmt.Sprintf("EINVAL %v, EADDRNOTAVAIL %v, names the zone %v", errors.Is(err, unix.EINVAL), errors.Is(err, unix.EADDRNOTAVAIL),
			strings.Contains(fmt.Sprint(err), "error while attempting to bind on address [fe80::1%lo]:0: ")))
		return nil
	})
	expectLog(t, []string{"EINVAL false, EADDRNOTAVAIL true, names the zone true"}, log)
}
