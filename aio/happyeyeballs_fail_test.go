package aio

import (
	"github.com/go-asyncio/asyncio"
	"net"
	"testing"
)

// With happy eyeballs (delay > 0, two or more addresses) and every attempt
// refused, the connect fails with the refusals joined, as asyncio raises
// them; it used to return fd 0 (stdin) and no error.
func TestHappyEyeballsAllRefusedReturnsError(t *testing.T) {
	fakeResolver(t, "127.0.0.2", "127.0.0.3")
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		fd, err := connectAny(at, resolveMust(at), port, defaultHappyEyeballsDelay)
		if err == nil || fd >= 0 {
			t.Errorf("connectAny = fd %d, err %v; want -1 and the joined refusals", fd, err)
		}
		return nil
	})
}

func resolveMust(at *asyncio.T) []net.IP {
	ips, _ := resolveHost(at, "x.test")
	return ips
}
