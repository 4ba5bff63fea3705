//go:build unix

package aio

import (
	"net"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// CreateDatagramEndpoint with WithSocket (asyncio's sock=) refuses a
// stream socket and the arguments that would modify the socket, naming
// them, before the socket is touched: it stays blocking and open.
func TestCreateDatagramEndpointSocketErrors(t *testing.T) {
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		factory := func() DatagramProtocol { return &BaseDatagramProtocol{} }
		udp, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		if err != nil {
			return struct{}{}, err
		}
		defer unix.Close(udp)
		stream, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return struct{}{}, err
		}
		defer unix.Close(stream)
		local := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		for _, c := range []struct {
			fd     int
			local  *net.UDPAddr
			opts   []Option
			prefix string
		}{
			{stream, nil, nil, "A datagram socket was expected, got fd "},
			{udp, local, nil, "socket modifier keyword arguments can not be used when sock is specified. (local_addr=127.0.0.1:0)"},
			{udp, nil, []Option{WithReusePort(), WithAllowBroadcast()}, "socket modifier keyword arguments can not be used when sock is specified. (reuse_port=True, allow_broadcast=True)"},
		} {
			_, _, err := CreateDatagramEndpoint(tk, factory, c.local, nil, append(c.opts, WithSocket(c.fd))...)
			ve, ok := err.(*asyncio.ValueError)
			if !ok || !strings.HasPrefix(ve.Msg, c.prefix) {
				t.Errorf("got %v, want a ValueError %q", err, c.prefix)
			}
			flags, err := unix.FcntlInt(uintptr(c.fd), unix.F_GETFL, 0)
			if err != nil || flags&unix.O_NONBLOCK != 0 {
				t.Errorf("fd %d was touched: flags %#x, %v", c.fd, flags, err)
			}
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
