//go:build linux

package aio

import (
	"fmt"
	"net"
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
