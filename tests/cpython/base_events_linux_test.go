//go:build linux

package cpython

import (
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

func TestBaseEvents_test_create_server_stream_bittype(t *testing.T) {
	// A socket made with SOCK_STREAM|SOCK_NONBLOCK is a stream socket
	// (CPython skips where socket.SOCK_NONBLOCK is missing: Linux only).
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.CreateServer(tk, func() aio.Protocol { return aio.BaseProtocol{} }, "", 0, aio.WithSocket(fd))
		if err != nil {
			unix.Close(fd)
			return err
		}
		srv.Close()
		return srv.WaitClosed(tk)
	})
}
