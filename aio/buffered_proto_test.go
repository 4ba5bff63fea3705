//go:build unix

package aio

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// bufferedRecorder is a recording BufferedProtocol: GetBuffer hands out
// a fresh buffer of size bytes (or what getBuffer returns), and each
// BufferUpdated logs the bytes written into it. A DataReceived would be
// logged as "data ...": the transports that read into buffers never call
// it.
type bufferedRecorder struct {
	streamRecorder
	size      int
	buf       []byte
	getBuffer func(hint int) []byte // replaces the default when set
	onUpdated func(n int)           // runs after the logging
}

func newBufferedRecorder(owner asyncio.LoopOwner, name string, log *[]string, size int) *bufferedRecorder {
	return &bufferedRecorder{streamRecorder: *newStreamRecorder(owner, name, log), size: size}
}

func (p *bufferedRecorder) GetBuffer(hint int) []byte {
	p.add(fmt.Sprintf("get %d", hint))
	if p.getBuffer != nil {
		p.buf = p.getBuffer(hint)
	} else {
		p.buf = make([]byte, p.size)
	}
	return p.buf
}

func (p *bufferedRecorder) BufferUpdated(n int) {
	p.add(fmt.Sprintf("updated %q", p.buf[:n]))
	if p.onUpdated != nil {
		p.onUpdated(n)
	}
}

// A socket transport reads into the protocol's buffers (asyncio's
// _read_ready__get_buffer): one GetBuffer(-1) per read, BufferUpdated
// with the bytes read, a last GetBuffer before the EOF, and no
// DataReceived.
func TestBufferedProtocol_SocketReadsIntoTheProtocolsBuffers(t *testing.T) {
	clean(t)
	fds := socketpair(t, unix.SOCK_STREAM)
	t.Cleanup(func() { unix.Close(fds[1]) })
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newBufferedRecorder(at, "c", &log, 4)
		if _, _, err := CreateConnection(at, func() Protocol { return p }, "", 0, WithSocket(fds[0])); err != nil {
			return err
		}
		if _, err := unix.Write(fds[1], []byte("hello world")); err != nil {
			return err
		}
		if err := unix.Shutdown(fds[1], unix.SHUT_WR); err != nil {
			return err
		}
		_, err := p.lost.Await(at)
		return err
	})
	expectLog(t, []string{
		"c:made",
		`c:get -1`, `c:updated "hell"`,
		`c:get -1`, `c:updated "o wo"`,
		`c:get -1`, `c:updated "rld"`,
		`c:get -1`, "c:eof",
		"c:lost <nil>",
	}, log)
}

// The errors of a BufferedProtocol close the transport as asyncio's do:
// an empty buffer and a panic in GetBuffer ("Fatal error:
// protocol.get_buffer() call failed."), a panic in BufferUpdated
// ("Fatal error: protocol.buffer_updated() call failed."), each reported
// to the exception handler and passed to ConnectionLost.
func TestBufferedProtocol_SocketErrorsCloseTheTransport(t *testing.T) {
	cases := []struct {
		name      string
		getBuffer func(int) []byte
		updated   func(int)
		message   string
		err       string
	}{
		{"empty buffer", func(int) []byte { return []byte{} }, nil,
			"Fatal error: protocol.get_buffer() call failed.", "get_buffer() returned an empty buffer"},
		{"nil buffer", func(int) []byte { return nil }, nil,
			"Fatal error: protocol.get_buffer() call failed.", "get_buffer() returned an empty buffer"},
		{"GetBuffer panics", func(int) []byte { panic("no buffer today") }, nil,
			"Fatal error: protocol.get_buffer() call failed.", "no buffer today"},
		{"BufferUpdated panics", nil, func(int) { panic("cannot take it") },
			"Fatal error: protocol.buffer_updated() call failed.", "cannot take it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean(t)
			fds := socketpair(t, unix.SOCK_STREAM)
			t.Cleanup(func() { unix.Close(fds[1]) })
			t.Cleanup(func() { unix.Close(fds[1]) })
			var log, reported []string
			var lostErr error
			runVirtual(t, func(at *asyncio.T) error {
				at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
					reported = append(reported, ctx.Message+" | "+fmt.Sprint(ctx.Err))
				})
				p := newBufferedRecorder(at, "c", &log, 16)
				p.getBuffer, p.onUpdated = c.getBuffer, c.updated
				tr, _, err := CreateConnection(at, func() Protocol { return p }, "", 0, WithSocket(fds[0]))
				if err != nil {
					return err
				}
				if _, err := unix.Write(fds[1], []byte("data")); err != nil {
					return err
				}
				lostErr, err = p.lost.Await(at)
				if !tr.IsClosing() {
					t.Error("the transport is not closing after the error")
				}
				return err
			})
			if len(reported) != 1 || !strings.HasPrefix(reported[0], c.message+" | ") || !strings.Contains(reported[0], c.err) {
				t.Errorf("exception handler got %q; want one %q with %q", reported, c.message, c.err)
			}
			if lostErr == nil || !strings.Contains(lostErr.Error(), c.err) {
				t.Errorf("ConnectionLost(%v); want the error %q", lostErr, c.err)
			}
			if c.getBuffer != nil && (errors.Is(lostErr, asyncio.ErrRuntime) != strings.Contains(c.err, "empty")) {
				t.Errorf("ConnectionLost(%v): an empty buffer is a RuntimeError, a panic is not", lostErr)
			}
			for _, e := range log {
				if strings.HasPrefix(e, "c:data") {
					t.Errorf("DataReceived was called: %q", log)
				}
			}
		})
	}
}

// SetProtocol switches a transport between copied and buffered reads
// from the next read on, both ways (CPython's test_proto_type_switch).
func TestBufferedProtocol_SetProtocolSwitchesTheReadPath(t *testing.T) {
	clean(t)
	fds := socketpair(t, unix.SOCK_STREAM)
	t.Cleanup(func() { unix.Close(fds[1]) })
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		plain := newStreamRecorder(at, "plain", &log)
		buffered := newBufferedRecorder(at, "buf", &log, 64)
		var tr Transport
		plain.onData = func(p *streamRecorder, d []byte) {
			p.add(fmt.Sprintf("data %q", d))
			tr.SetProtocol(buffered)
		}
		buffered.onUpdated = func(int) { tr.SetProtocol(plain) }
		tr, _, err := CreateConnection(at, func() Protocol { return plain }, "", 0, WithSocket(fds[0]))
		if err != nil {
			return err
		}
		for _, s := range []string{"one", "two", "three"} {
			if _, err := unix.Write(fds[1], []byte(s)); err != nil {
				return err
			}
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
			if err := settle(at); err != nil {
				return err
			}
		}
		tr.Close()
		return settle(at)
	})
	expectLog(t, []string{
		"plain:made",
		`plain:data "one"`,
		`buf:get -1`, `buf:updated "two"`,
		`plain:data "three"`,
		"buf:lost <nil>", // "three" switched to buf again
	}, log)
}

// A TLS transport decrypts into the protocol's buffers too, with the
// size hint of one record (16 KiB), and delivers everything the peer
// sent, in order.
func TestBufferedProtocol_TLS(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	want := strings.Repeat("0123456789", 5000) // 50 000 bytes: several records
	var got []byte
	var hints map[int]bool
	var dataCalls int
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Write([]byte(want))
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		var log []string
		p := newBufferedRecorder(at, "c", &log, 1000)
		hints = map[int]bool{}
		p.getBuffer = func(hint int) []byte { hints[hint] = true; return make([]byte, 1000) }
		p.onUpdated = func(n int) { got = append(got, p.buf[:n]...) }
		p.onData = func(*streamRecorder, []byte) { dataCalls++ }
		if _, _, err := CreateConnection(at, func() Protocol { return p }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg)); err != nil {
			return err
		}
		if _, err := p.lost.Await(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	if string(got) != want {
		t.Errorf("received %d bytes, want the %d sent, in order", len(got), len(want))
	}
	if len(hints) != 1 || !hints[tlsRecordMax] {
		t.Errorf("GetBuffer size hints %v, want only %d", hints, tlsRecordMax)
	}
	if dataCalls != 0 {
		t.Errorf("DataReceived called %d times", dataCalls)
	}
}
