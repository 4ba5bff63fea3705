//go:build unix

package aio

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

// TestProbeStreams_DrainRaisesWhenThePeerCloses is CPython 3.13's
// test_streams.test_drain_raises (bpo-25441): a client that writes and
// drains in a loop to a peer that accepted and closed must not loop for
// ever: drain() raises ConnectionResetError, ConnectionAbortedError or
// BrokenPipeError, and nothing reaches the exception handler.
func TestProbeStreams_DrainRaisesWhenThePeerCloses(t *testing.T) {
	clean(t)
	var msgs []string
	var got error
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msgs = append(msgs, ctx.Message)
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		got = asyncio.Timeout(at, edgeGuard, func(*asyncio.TimeoutScope) error {
			for {
				w.Write([]byte("foo\n"))
				if err := w.Drain(at); err != nil {
					return err
				}
			}
		})
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if !isReset(got) {
		t.Errorf("drain loop ended with %s; want ECONNRESET or EPIPE", describe(got))
	}
	if len(msgs) != 0 {
		t.Errorf("exception handler called: %v", msgs)
	}
}
