//go:build linux

package aio

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A connected datagram endpoint whose datagrams meet a closed port: the
// ICMP errors a real socket gets go in one slot (sk_err), which the next
// send reports (failing, its datagram not sent) or else the loop's next
// read. Three datagrams sent at once to a closed loopback port give
// ErrorReceived from sendto (the second send), then from recvfrom (the
// third's), and a fourth later one from recvfrom: three errors for four
// datagrams. The simulated network reported each ICMP on its own, from
// recvfrom: four errors, none from a send, and every send succeeded.
func TestH21_DatagramICMPErrorsShareOneSlot(tt *testing.T) {
	clean(tt)
	scenario := func(t *asyncio.T, log *[]string, port int, opts ...Option) error {
		p := newDatagramRecorder(t, "udp", log)
		tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return p }, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, opts...)
		if err != nil {
			return err
		}
		defer tr.Close()
		for _, d := range []string{"a", "b", "c"} {
			tr.SendTo([]byte(d), nil)
		}
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return err
		}
		tr.SendTo([]byte("d"), nil)
		return asyncio.Sleep(t, 10*time.Millisecond)
	}
	var real, sim []string
	runVirtual(tt, func(t *asyncio.T) error {
		if err := scenario(t, &real, closedUDPPort(tt)); err != nil {
			return err
		}
		n := NewSimNetwork(t, 1)
		return scenario(t, &sim, 9, WithNetwork(n.Host("box")))
	})
	want := []string{"udp:made", "udp:error syscall=sendto ECONNREFUSED", "udp:error syscall=recvfrom ECONNREFUSED", "udp:error syscall=recvfrom ECONNREFUSED", "udp:lost <nil>"}
	if !slices.Equal(real, want) {
		tt.Fatalf("real sockets: %v, want %v (the test's premise)", real, want)
	}
	if !slices.Equal(sim, real) {
		tt.Fatalf("simulated network: %v, real sockets: %v", sim, real)
	}
}
