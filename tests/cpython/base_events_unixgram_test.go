//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_base_events.py,
// BaseEventLoopWithSelectorTests' Unix datagram endpoints
// (create_datagram_endpoint with family=socket.AF_UNIX):
// aio.CreateUnixDatagramEndpoint.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

func TestBaseEvents_test_create_datagram_endpoint_sock_unix(t *testing.T) {
	// family=AF_UNIX without addresses: an unbound Unix datagram socket.
	run(t, func(tk *asyncio.T) error {
		proto := newBaseDatagramProto(tk)
		tr, _, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, "", "")
		if err != nil {
			return err
		}
		sa, err := unix.Getsockname(tr.ExtraInfo("socket").(int))
		_, isUnix := sa.(*unix.SockaddrUnix)
		check(t, err == nil && isUnix, "transport._sock.family == AF_UNIX: ", sa, err)
		tr.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_existing_sock_unix(t *testing.T) {
	// A socket file left by a socket that was bound and closed: the
	// endpoint binds the path all the same (asyncio removes the stale
	// file first).
	dir, err := os.MkdirTemp("", "cpy") // short: sockaddr_un's limit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sock")
	fd := rawSocket(t, unix.AF_UNIX, unix.SOCK_DGRAM)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	unix.Close(fd)
	run(t, func(tk *asyncio.T) error {
		proto := newBaseDatagramProto(tk)
		tr, _, err := aio.CreateUnixDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, path, "")
		if err != nil {
			return err
		}
		tr.Close()
		_, err = proto.done.Await(tk)
		return err
	})
}
