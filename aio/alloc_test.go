//go:build unix

package aio

import (
	"net"
	"reflect"
	"testing"
	"unsafe"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
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

// A wait on an fd still pending when its loop closes leaves nothing in
// waitIO's registry: Close unwinds the task (its deferred calls run, the
// code after its await does not), and the registry must not keep the
// loop and the future for the life of the process.
func TestWaitIOPendingAtLoopCloseLeavesNoEntry(t *testing.T) {
	fds := socketpair(t, unix.SOCK_STREAM)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	l := asyncio.NewLoop()
	started := asyncio.NewFuture[struct{}](l)
	//asynciovet:ignore unawaitedtask the loop closes with this task still pending, on purpose
	asyncio.CreateTask(l, func(at *asyncio.T) ([]byte, error) {
		started.SetResult(struct{}{})
		return SockRecv(at, fds[0], 10) // nothing comes
	})
	if err := l.RunUntilComplete(started); err != nil {
		t.Fatal(err)
	}
	// One more iteration: the task is parked in its wait.
	settled := asyncio.NewFuture[struct{}](l)
	l.CallSoon(func() { l.CallSoon(func() { settled.SetResult(struct{}{}) }) })
	if err := l.RunUntilComplete(settled); err != nil {
		t.Fatal(err)
	}
	key := ioWait{l, fds[0], false}
	if ioWaiterOf(key) == nil {
		t.Fatal("the task is not waiting in waitIO (the test's phases are off)")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if f := ioWaiterOf(key); f != nil {
		t.Errorf("after Close the registry still holds the wait's future %v (and its loop)", f)
	}
}
