//go:build unix

package cpython

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// test_transports.py: the base Transport classes. What has a counterpart
// is the flow control of _FlowControlMixin, which every aio transport
// has; the rest checks the abstract classes themselves (reasons.tsv).

// pausedProto records pause_writing/resume_writing (the test's mocked
// protocol, through asyncio's FlowControlMixin).
type pausedProto struct{ aio.FlowControl }

func TestTransports_test_flowcontrol_mixin_set_write_limits(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd, _, _, closePeer := socketpair(t) // the peer reads nothing: what the socket cannot take stays in the transport
		defer closePeer()
		p := &pausedProto{}
		tr, _, err := aio.ConnectAcceptedSocket(tk, func() aio.Protocol { return p }, fd)
		if err != nil {
			return err
		}
		defer tr.Abort()
		check(t, !p.Paused(), "not paused at first")

		err = tr.SetWriteBufferLimits(0, 1)
		check(t, errors.Is(err, asyncio.ErrValue) && err != nil && regexp.MustCompile(`high.*must be >= low`).MatchString(err.Error()), "high < low: ValueError, got ", err)

		// CPython's transport reports 512 bytes buffered; here the socket
		// takes what it can and the transport keeps the rest.
		noErr(t, tr.SetWriteBufferLimits(1<<30, 128))
		noErr(t, tr.Write(bytes.Repeat([]byte("x"), 8<<20)))
		check(t, tr.WriteBufferSize() > 256, "data buffered in the transport: ", tr.WriteBufferSize())
		check(t, !p.Paused(), "below the high water mark: not paused")
		high, low := tr.WriteBufferLimits()
		eq(t, [2]int{low, high}, [2]int{128, 1 << 30}, "get_write_buffer_limits()")

		// Limits below what is buffered pause the protocol at once.
		noErr(t, tr.SetWriteBufferLimits(256, 128))
		check(t, p.Paused(), "above the new high water mark: paused")
		high, low = tr.WriteBufferLimits()
		eq(t, [2]int{low, high}, [2]int{128, 256}, "get_write_buffer_limits()")
		return nil
	})
}
