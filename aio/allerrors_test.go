//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A connect whose attempts all fail with different errors reads as
// asyncio's OSError: "Multiple exceptions: " and the attempts' texts
// joined with ", " (base_events.py create_connection), and still
// unwraps to each attempt's error.
func TestCreateConnectionMultipleExceptionsText(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "two.test", port,
			fakeResolver("127.0.0.1", "127.0.0.2"), WithHappyEyeballsDelay(0))
		want := fmt.Sprintf("Multiple exceptions: connect to 127.0.0.1:%d: connect: connection refused, connect to 127.0.0.2:%d: connect: connection refused", port, port)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("errors.Is(%v, ECONNREFUSED) = false", err)
		}
		return nil
	})
}

// hostsResolver resolves each name to its addresses (WithResolver), and
// a name it does not have to a *net.DNSError.
type hostsResolver map[string][]string

func (r hostsResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// An attempt whose binds to every local address of its family fail
// counts each bind's error, as asyncio's _connect_sock keeps each: two
// local addresses that are not this host's give two errors, joined under
// "Multiple exceptions" (only the last one was kept).
func TestCreateConnectionEveryBindErrorCounts(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		r := hostsResolver{"one.test": {"127.0.0.1"}, "local.test": {"198.51.100.1", "198.51.100.2"}}
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "one.test", port,
			WithResolver(r), WithLocalAddr("local.test", 0), WithHappyEyeballsDelay(0))
		want := fmt.Sprintf("Multiple exceptions: "+
			"connect to 127.0.0.1:%d: error while attempting to bind on address 198.51.100.1:0: bind: cannot assign requested address, "+
			"connect to 127.0.0.1:%d: error while attempting to bind on address 198.51.100.2:0: bind: cannot assign requested address", port, port)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Errorf("errors.Is(%v, EADDRNOTAVAIL) = false", err)
		}
		return nil
	})
}
