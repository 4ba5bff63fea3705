//go:build linux

package aio

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A datagram to the broadcast address 255.255.255.255 from a socket
// without SO_BROADCAST fails with EACCES on a real host, which asyncio's
// transport hands to ErrorReceived (PermissionError); on the simulated
// network, where WithAllowBroadcast is refused, it went nowhere without
// a word, as to an address nobody has, so a program whose broadcast is
// refused for real passed its test; and an endpoint connected to it
// failed with ENETUNREACH where connect fails with EACCES. The network
// refuses both as the kernel does now.
func TestH21_BroadcastWithoutSOBroadcastIsEACCES(tt *testing.T) {
	clean(tt)
	scenario := func(t *asyncio.T, log *[]string, opts ...Option) error {
		p := newDatagramRecorder(t, "udp", log)
		tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return p }, &net.UDPAddr{IP: net.IPv4zero, Port: 0}, nil, opts...)
		if err != nil {
			return err
		}
		defer tr.Close()
		if err := tr.SendTo([]byte("anyone?"), &net.UDPAddr{IP: net.IPv4bcast, Port: 9}); err != nil {
			*log = append(*log, "SendTo "+describe(err))
		}
		if _, err := asyncio.WaitFor(t, time.Second, p.got); err != nil {
			*log = append(*log, "nothing: "+describe(err))
		}
		// Connected to it: connect fails the same way.
		_, _, err = CreateDatagramEndpoint(t, func() DatagramProtocol { return newDatagramRecorder(t, "connected", log) }, nil, &net.UDPAddr{IP: net.IPv4bcast, Port: 9}, opts...)
		*log = append(*log, "connect "+describe(err))
		return nil
	}
	var real, sim []string
	runVirtual(tt, func(t *asyncio.T) error {
		if err := scenario(t, &real); err != nil {
			return err
		}
		n := NewSimNetwork(t, 1)
		return scenario(t, &sim, WithNetwork(n.Host("box")))
	})
	if want := []string{"udp:made", "udp:error syscall=sendto EACCES", "connect syscall=connect EACCES", "udp:lost <nil>"}; !slices.Equal(real, want) {
		tt.Fatalf("real sockets: %v, want %v (the test's premise)", real, want)
	}
	if !slices.Equal(sim, real) {
		tt.Fatalf("simulated network: %v, real sockets: %v", sim, real)
	}
}

// SendTo a port-0 address fails on a real host with EINVAL (udp_sendmsg
// refuses destination port 0), which asyncio's transport hands to
// ErrorReceived; on the simulated network the datagram was lost without a
// word, as to a port nobody listens on.
func TestH21_DatagramToPortZeroIsEINVAL(tt *testing.T) {
	clean(tt)
	scenario := func(t *asyncio.T, log *[]string, opts ...Option) error {
		p := newDatagramRecorder(t, "udp", log)
		tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return p }, &net.UDPAddr{IP: net.IPv4zero}, nil, opts...)
		if err != nil {
			return err
		}
		defer tr.Close()
		if err := tr.SendTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 0}); err != nil {
			*log = append(*log, "SendTo "+describe(err))
		}
		if _, err := asyncio.WaitFor(t, time.Second, p.got); err != nil {
			*log = append(*log, "nothing: "+describe(err))
		}
		return nil
	}
	var real, sim []string
	runVirtual(tt, func(t *asyncio.T) error {
		if err := scenario(t, &real); err != nil {
			return err
		}
		n := NewSimNetwork(t, 1)
		return scenario(t, &sim, WithNetwork(n.Host("box")))
	})
	if want := []string{"udp:made", "udp:error syscall=sendto EINVAL", "udp:lost <nil>"}; !slices.Equal(real, want) {
		tt.Fatalf("real sockets: %v, want %v (the test's premise)", real, want)
	}
	if !slices.Equal(sim, real) {
		tt.Fatalf("simulated network: %v, real sockets: %v", sim, real)
	}
}
