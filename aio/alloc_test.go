//go:build unix

package aio

import (
	"net"
	"reflect"
	"testing"
	"unsafe"
)

// ipAddr makes a connection's address and its IP in one allocation (two
// per connection fewer on W9), with an IP of its own of the input's
// length: appending to it cannot reach the input, and an IPv4 address
// has 4 bytes, as net gives it.
func TestIPAddrIsOneAllocation(t *testing.T) {
	v4 := []byte{127, 0, 0, 1}
	v6 := net.ParseIP("fe80::1").To16()
	for _, c := range []struct {
		ip      []byte
		network string
		want    net.Addr
	}{
		{v4, "tcp", &net.TCPAddr{IP: net.IP{127, 0, 0, 1}, Port: 80}},
		{v6, "tcp", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 80}},
		{v4, "udp", &net.UDPAddr{IP: net.IP{127, 0, 0, 1}, Port: 80}},
	} {
		got := ipAddr(c.ip, 80, c.network)
		if !reflect.DeepEqual(got, c.want) || got.String() != c.want.String() {
			t.Errorf("ipAddr(%v, 80, %q) = %#v, want %#v", c.ip, c.network, got, c.want)
		}
		var ip net.IP
		switch a := got.(type) {
		case *net.TCPAddr:
			ip = a.IP
		case *net.UDPAddr:
			ip = a.IP
		}
		if cap(ip) != len(c.ip) {
			t.Errorf("ipAddr(%v): IP capacity %d, want %d (an append must not write into the address)", c.ip, cap(ip), len(c.ip))
		}
		ip[0]++
		if c.ip[0] == ip[0] {
			t.Errorf("ipAddr(%v): the IP shares the input's bytes", c.ip)
		}
		if n := testing.AllocsPerRun(100, func() { ipAddr(c.ip, 80, c.network) }); n != 1 {
			t.Errorf("ipAddr(%v, %q): %v allocations, want 1", c.ip, c.network, n)
		}
	}
}

// A socket transport is allocated for every connection: it stays within
// the 256-byte size class (W9 pays for every byte a request allocates;
// the vectored-send scratch space is made only when needed for that).
func TestSocketTransportFitsTheSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(socketTransport{}); n > 256 {
		t.Errorf("socketTransport is %d bytes, want at most 256 (the next size class is 288)", n)
	}
}
