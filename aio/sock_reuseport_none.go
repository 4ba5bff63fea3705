//go:build solaris || illumos

package aio

import "github.com/go-asyncio/asyncio"

// setReusePort fails where golang.org/x/sys/unix has no SO_REUSEPORT,
// with asyncio's message for a socket module without it.
func setReusePort(fd int) error {
	return &asyncio.ValueError{Msg: "reuse_port not supported by socket module"}
}
