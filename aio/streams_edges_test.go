//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// edgeGuard is a hang guard only: no test waits on it to synchronise.
const edgeGuard = 10 * time.Second

// yieldUntil yields to the loop (letting it poll its sockets) until cond
// holds; edgeGuard bounds it so that a bug shows as a failure, not a hang.
func yieldUntil(at *asyncio.T, cond func() bool) error {
	return asyncio.Timeout(at, edgeGuard, func(*asyncio.TimeoutScope) error {
		for !cond() {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestStreamEdge_StartTLSResumesAPausedReader: CPython 3.13's
// loop.start_tls pauses the transport, swaps in the SSL protocol and
// schedules transport.resume_reading(), so StreamWriter.start_tls works
// even when the StreamReader had paused reading (its buffer past twice
// the limit). Run with PYENV_VERSION=3.13.0:
//
//	async def h(r, w):
//	    w.write(b'x'*100); await w.drain()
//	    await w.start_tls(sctx)
//	    w.write(b'secret'); await w.drain(); await r.read(); w.close()
//	srv = await asyncio.start_server(h, '127.0.0.1', 0)
//	r, w = await asyncio.open_connection('127.0.0.1', port, limit=16)
//	while len(r._buffer) < 100: await asyncio.sleep(0)
//	print('paused', r._paused, 'transport reading', w.transport.is_reading())
//	await asyncio.wait_for(w.start_tls(cctx, server_hostname='localhost'), 5)
//	print('tls ok')
//	print(await r.readexactly(100) == b'x'*100)
//	print(await r.readexactly(6))
//
// prints "paused True transport reading False", "tls ok", "True",
// "b'secret'".
func TestStreamEdge_StartTLSResumesAPausedReader(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, "handler: "+ctx.Message)
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Write(bytes.Repeat([]byte("x"), 100))
			if err := w.StartTLS(t, serverCfg, ""); err != nil {
				return nil // the client gave up: reported by the client side
			}
			w.Write([]byte("secret"))
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithStreamLimit(16))
		if err != nil {
			return err
		}
		if err := yieldUntil(at, func() bool { return len(r.buf) >= 100 }); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("paused %v transport reading %v", r.paused, w.Transport().IsReading()))
		_, err = asyncio.WaitForFunc(at, 5*time.Second, func(t *asyncio.T) (struct{}, error) {
			return struct{}{}, w.StartTLS(t, clientCfg, "localhost")
		})
		if err != nil {
			log = append(log, "start_tls: "+describe(err))
		} else {
			log = append(log, "tls ok")
			b, err := r.ReadExactly(at, 100)
			log = append(log, fmt.Sprintf("%v %v", bytes.Equal(b, bytes.Repeat([]byte("x"), 100)), err))
			b, err = r.ReadExactly(at, 6)
			log = append(log, fmt.Sprintf("%s %v", b, err))
		}
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"paused true transport reading false", "tls ok", "true <nil>", "secret <nil>"}, log)
}

// edgeShow formats a read's outcome as the Python snippets print it:
// the bytes, or the error's type and details.
func edgeShow(b []byte, err error) string {
	var ire *IncompleteReadError
	var ve *asyncio.ValueError
	var loe *LimitOverrunError
	switch {
	case err == nil:
		return fmt.Sprintf("%q", b)
	case errors.As(err, &ire):
		exp := "None"
		if ire.Expected >= 0 {
			exp = fmt.Sprint(ire.Expected)
		}
		return fmt.Sprintf("IncompleteReadError partial=%q expected=%s", ire.Partial, exp)
	case errors.As(err, &ve):
		return "ValueError " + ve.Msg
	case errors.As(err, &loe):
		return fmt.Sprintf("LimitOverrunError %q consumed=%d", loe.Msg, loe.Consumed)
	}
	return describe(err)
}

// TestStreamEdge_ReaderErrorsAndEOFAndLimits: the order of checks and the
// error details of StreamReader, as CPython 3.13 gives them
// (PYENV_VERSION=3.13.0):
//
//	r = asyncio.StreamReader(limit=8)
//	r.feed_data(b'data'); r.set_exception(ValueError('stored'))
//	r.read(0), r.read(-1), r.readexactly(0), r.readline(), r.readuntil(b'a')
//	                            # ValueError stored (the stored error first)
//	r.readexactly(-1)           # ValueError readexactly size can not be less than zero
//	r.readuntil(b'')            # ValueError Separator should be at least one-byte string
//	r.at_eof(), len(r._buffer)  # False 4
//	r = asyncio.StreamReader(limit=8); r.feed_eof()
//	r.read(0), r.read(-1), r.read(-1), r.read(5), r.readexactly(0), r.readline()  # b''
//	r.readexactly(1)            # IncompleteReadError partial=b'' expected=1
//	r.readuntil(b'\r\n')        # IncompleteReadError partial=b'' expected=None
//	r = asyncio.StreamReader(limit=8); r.feed_data(b'0123456789\r')
//	r.readuntil(b'\r\n')   # LimitOverrunError 'Separator is not found, and chunk exceed the limit' consumed=10; 11 bytes stay
//	r.readexactly(10)      # b'0123456789'
//	r.feed_data(b'\nab'); r.readuntil(b'\r\n')           # b'\r\n'
//	r.feed_data(b'012345678\r\n'); r.readuntil(b'\r\n')  # LimitOverrunError 'Separator is found, but chunk is longer than limit' consumed=11; 13 stay
//	r.readline()           # ValueError Separator is found, but chunk is longer than limit; buffer b''
//	r.feed_data(b'0123456789'); r.readline()  # ValueError Separator is not found, and chunk exceed the limit; buffer b''
//	r.feed_data(b'x\n'); r.readline()         # b'x\n'
//	r.feed_data(b'abcdefgh|XYZ'); r.readuntil((b'|XYZ', b'Q'))  # b'abcdefgh|XYZ'
//	r.feed_eof(); r.readuntil(b'\n')          # IncompleteReadError partial=b'' expected=None
func TestStreamEdge_ReaderErrorsAndEOFAndLimits(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		add := func(name string, b []byte, err error) { log = append(log, name+": "+edgeShow(b, err)) }
		r := NewStreamReader(at, 8)
		r.FeedData([]byte("data"))
		r.SetException(&asyncio.ValueError{Msg: "stored"})
		b, err := r.Read(at, 0)
		add("exc read0", b, err)
		b, err = r.Read(at, -1)
		add("exc read-1", b, err)
		b, err = r.ReadExactly(at, 0)
		add("exc readexactly0", b, err)
		b, err = r.ReadExactly(at, -1)
		add("exc readexactly-1", b, err)
		b, err = r.ReadUntil(at, []byte{})
		add("exc readuntil empty", b, err)
		b, err = r.ReadLine(at)
		add("exc readline", b, err)
		b, err = r.ReadUntil(at, []byte("a"))
		add("exc readuntil", b, err)
		log = append(log, fmt.Sprintf("exc at_eof %v %d", r.AtEOF(), len(r.buf)))

		r = NewStreamReader(at, 8)
		r.FeedEOF()
		for _, c := range []struct {
			name string
			fn   func() ([]byte, error)
		}{
			{"eof read0", func() ([]byte, error) { return r.Read(at, 0) }},
			{"eof read-1", func() ([]byte, error) { return r.Read(at, -1) }},
			{"eof read-1 again", func() ([]byte, error) { return r.Read(at, -1) }},
			{"eof read5", func() ([]byte, error) { return r.Read(at, 5) }},
			{"eof readexactly0", func() ([]byte, error) { return r.ReadExactly(at, 0) }},
			{"eof readexactly1", func() ([]byte, error) { return r.ReadExactly(at, 1) }},
			{"eof readuntil", func() ([]byte, error) { return r.ReadUntil(at, []byte("\r\n")) }},
			{"eof readline", func() ([]byte, error) { return r.ReadLine(at) }},
		} {
			b, err := c.fn()
			add(c.name, b, err)
		}

		r = NewStreamReader(at, 8)
		crlf := []byte("\r\n")
		r.FeedData([]byte("0123456789\r"))
		b, err = r.ReadUntil(at, crlf)
		add(fmt.Sprint("lim ", len(r.buf)), b, err)
		b, err = r.ReadExactly(at, 10)
		add("lim", b, err)
		r.FeedData([]byte("\nab"))
		b, err = r.ReadUntil(at, crlf)
		add("lim", b, err)
		r.FeedData([]byte("012345678\r\n"))
		b, err = r.ReadUntil(at, crlf)
		add(fmt.Sprint("lim ", len(r.buf)), b, err)
		b, err = r.ReadLine(at)
		add(fmt.Sprintf("lim %q", r.buf), b, err)
		r.FeedData([]byte("0123456789"))
		b, err = r.ReadLine(at)
		add(fmt.Sprintf("lim %q", r.buf), b, err)
		r.FeedData([]byte("x\n"))
		b, err = r.ReadLine(at)
		add("lim", b, err)
		r.FeedData([]byte("abcdefgh|XYZ"))
		b, err = r.ReadUntil(at, []byte("|XYZ"), []byte("Q"))
		add("lim multi", b, err)
		r.FeedEOF()
		b, err = r.ReadUntil(at, []byte("\n"))
		add("lim", b, err)
		return nil
	})
	want := []string{
		"exc read0: ValueError stored",
		"exc read-1: ValueError stored",
		"exc readexactly0: ValueError stored",
		"exc readexactly-1: ValueError readexactly size can not be less than zero",
		"exc readuntil empty: ValueError Separator should be at least one-byte string",
		"exc readline: ValueError stored",
		"exc readuntil: ValueError stored",
		"exc at_eof false 4",
		`eof read0: ""`,
		`eof read-1: ""`,
		`eof read-1 again: ""`,
		`eof read5: ""`,
		`eof readexactly0: ""`,
		`eof readexactly1: IncompleteReadError partial="" expected=1`,
		`eof readuntil: IncompleteReadError partial="" expected=None`,
		`eof readline: ""`,
		`lim 11: LimitOverrunError "Separator is not found, and chunk exceed the limit" consumed=10`,
		`lim: "0123456789"`,
		`lim: "\r\n"`,
		`lim 13: LimitOverrunError "Separator is found, but chunk is longer than limit" consumed=11`,
		`lim "": ValueError Separator is found, but chunk is longer than limit`,
		`lim "": ValueError Separator is not found, and chunk exceed the limit`,
		`lim: "x\n"`,
		`lim multi: "abcdefgh|XYZ"`,
		`lim: IncompleteReadError partial="" expected=None`,
	}
	expectLog(t, want, log)
}

// chunkServer starts a server whose handler writes chunks[i] once
// release(i) is called, then closes; it returns the server and release.
func chunkServer(at *asyncio.T, chunks ...string) (*Server, func(i int), error) {
	gates := make([]*asyncio.Future[struct{}], len(chunks))
	for i := range gates {
		gates[i] = asyncio.NewFuture[struct{}](at)
	}
	srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		for i, c := range chunks {
			if _, err := gates[i].Await(t); err != nil {
				return err
			}
			w.Write([]byte(c))
		}
		return nil
	}, "127.0.0.1", 0)
	return srv, func(i int) { gates[i].SetResult(struct{}{}) }, err
}

// TestStreamEdge_ReadUntilSeparatorSplitAcrossReads: a separator split
// across reads is found once its last byte arrives, and a ReadUntil
// cancelled while part of the separator is buffered loses nothing: the
// next ReadUntil returns the whole chunk. CPython 3.13's readuntil keeps
// the buffer on cancellation (_wait_for_data is the only await; nothing
// is consumed before the match), e.g.
//
//	t = asyncio.create_task(r.readuntil(b'--boundary--'))  # b'rest--bou' buffered
//	t.cancel()  # then b'nd', b'ary--tail' arrive
//	await r.readuntil(b'--boundary--')  # b'rest--boundary--'
//	await r.read()                      # b'tail'
func TestStreamEdge_ReadUntilSeparatorSplitAcrossReads(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, release, err := chunkServer(at, "ab\r", "\nrest--bou", "nd", "ary--tail")
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		defer w.Close()
		crlf := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, []byte("\r\n")) })
		release(0)
		if err := yieldUntil(at, func() bool { return len(r.buf) == 3 }); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("half a separator: done=%v", crlf.Done()))
		release(1)
		b, err := crlf.Await(at)
		log = append(log, fmt.Sprintf("crlf %q %v, buffered %q", b, err, r.buf))

		sep := []byte("--boundary--")
		cancelled := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, sep) })
		if err := yieldUntil(at, func() bool { return r.waiter != nil }); err != nil {
			return err
		}
		cancelled.Cancel()
		_, err = cancelled.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v buffered %q waiter=%v", asyncio.IsCancelled(err), r.buf, r.waiter != nil))
		release(2)
		if err := yieldUntil(at, func() bool { return len(r.buf) == 11 }); err != nil {
			return err
		}
		release(3)
		b, err = r.ReadUntil(at, sep)
		log = append(log, fmt.Sprintf("boundary %q %v", b, err))
		b, err = r.Read(at, -1)
		log = append(log, fmt.Sprintf("rest %q %v", b, err))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"half a separator: done=false",
		`crlf "ab\r\n" <nil>, buffered "rest--bou"`,
		`cancelled=true buffered "rest--bou" waiter=false`,
		`boundary "rest--boundary--" <nil>`,
		`rest "tail" <nil>`,
	}
	expectLog(t, want, log)
}

// TestStreamEdge_ReadExactlyPastTwiceTheLimit: a ReadExactly of more than
// twice the limit does not deadlock on the reading it paused: asyncio's
// _wait_for_data resumes a paused transport ("This is essential for
// readexactly(n) for case when n > self._limit", streams.py), over a real
// socket.
func TestStreamEdge_ReadExactlyPastTwiceTheLimit(t *testing.T) {
	clean(t)
	var got []byte
	runNet(t, func(at *asyncio.T) error {
		payload := strings.Repeat("0123456789", 1000)
		srv, release, err := chunkServer(at, payload)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithStreamLimit(16))
		if err != nil {
			return err
		}
		defer w.Close()
		release(0)
		got, err = asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, len(payload)) })
		if err != nil {
			return err
		}
		if string(got) != payload {
			return fmt.Errorf("got %d bytes, not the payload", len(got))
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
}

// TestStreamEdge_WaitClosedCancelled: CPython 3.13 awaits the protocol's
// one _closed future in wait_closed, so cancelling a wait_closed cancels
// that future and every later wait_closed raises CancelledError:
//
//	t = asyncio.create_task(w.wait_closed()); await asyncio.sleep(0)
//	t.cancel(); await t            # CancelledError
//	w.close(); await w.wait_closed()  # CancelledError
func TestStreamEdge_WaitClosedCancelled(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		wc := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, w.WaitClosed(t) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		wc.Cancel()
		_, err = wc.Await(at)
		log = append(log, "wc1 "+describe(err))
		w.Close()
		err = w.WaitClosed(at)
		log = append(log, "wc2 "+describe(err))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"wc1 cancelled", "wc2 cancelled"}, log)
}

// TestStreamEdge_WriteAfterCloseWithBufferedDataIsSent: CPython 3.13's
// _SelectorSocketTransport.close only counts the connection lost when the
// buffer is empty, so a write after close() while data is still buffered
// is appended and sent before the socket closes:
//
//	w.write(b'a'*(4<<20))    # SO_SNDBUF 4096: mostly buffered
//	w.close(); w.write(b'TAIL'); ev.set()
//	# the peer's read(): 4194308 bytes ending in b'TAIL'
func TestStreamEdge_WriteAfterCloseWithBufferedDataIsSent(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		ev := asyncio.NewFuture[struct{}](at)
		got := asyncio.NewFuture[[]byte](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := ev.Await(t); err != nil {
				return err
			}
			b, err := r.Read(t, -1)
			got.SetResult(b)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		unix.SetsockoptInt(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		w.Write(make([]byte, 2<<20))
		log = append(log, fmt.Sprintf("buffered %v", w.Transport().WriteBufferSize() > 0))
		w.Close()
		log = append(log, fmt.Sprintf("write after close: %v", w.Write([]byte("TAIL"))))
		ev.SetResult(struct{}{})
		b, err := got.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("peer got %d %q", len(b), b[max(0, len(b)-4):]))
		log = append(log, "wait_closed "+describe(w.WaitClosed(at)))
		log = append(log, fmt.Sprintf("write after lost: %v", w.Write([]byte("late"))))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"buffered true", "write after close: <nil>", `peer got 2097156 "TAIL"`, "wait_closed <nil>", "write after lost: <nil>"}
	expectLog(t, want, log)
}

// edgePanicProto is a recording protocol that panics in the callback
// named by what ("made", "data", "eof"); "keep" keeps the transport open
// at EOF.
type edgePanicProto struct {
	*streamRecorder
	what    string
	gotData *asyncio.Future[struct{}]
	gotEOF  *asyncio.Future[struct{}]
}

func (p *edgePanicProto) ConnectionMade(tr Transport) {
	p.streamRecorder.ConnectionMade(tr)
	if p.what == "made" {
		panic("boom made")
	}
}

func (p *edgePanicProto) DataReceived(d []byte) {
	p.add("data " + string(d))
	if !p.gotData.Done() {
		p.gotData.SetResult(struct{}{})
	}
	if p.what == "data" {
		panic("boom data")
	}
}

func (p *edgePanicProto) EOFReceived() bool {
	p.add("eof")
	if !p.gotEOF.Done() {
		p.gotEOF.SetResult(struct{}{})
	}
	if p.what == "eof" {
		panic("boom eof")
	}
	return p.what == "keep"
}

// TestStreamEdge_ProtocolCallbackPanics: the loop survives a protocol
// callback that fails. CPython 3.13 (PYENV_VERSION=3.13.0, a server
// protocol raising ValueError in the named callback, the client writing
// b'hello', and write_eof() for eof/keep):
//
//	--- data: handler: Fatal error: protocol.data_received() call failed.
//	    server lost ValueError('boom data'); client eof, client lost None
//	--- eof:  handler: Fatal error: protocol.eof_received() call failed.
//	    server lost ValueError('boom eof'); client eof, client lost None
//	--- keep (eof_received returns True): the server can still write:
//	    server lost None; client data b'after eof', client eof, client lost None
//	--- made: handler: Exception in callback P.connection_made()
//	    the transport stays open (is_closing() False) and still delivers
//	    server data b'hello'; on close: server eof, server lost None
func TestStreamEdge_ProtocolCallbackPanics(t *testing.T) {
	clean(t)
	for _, what := range []string{"data", "eof", "keep", "made"} {
		t.Run(what, func(t *testing.T) {
			var slog, clog, hlog []string
			runNet(t, func(at *asyncio.T) error {
				l := at.Loop()
				l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
					msg := ctx.Message
					if strings.HasPrefix(msg, "Exception in callback") {
						msg = "Exception in callback"
					}
					var pe *asyncio.PanicError
					hlog = append(hlog, fmt.Sprintf("%s: panic=%v", msg, errors.As(ctx.Err, &pe)))
				})
				var sp *edgePanicProto
				srv, err := CreateServer(at, func() Protocol {
					sp = &edgePanicProto{streamRecorder: newStreamRecorder(l, "server", &slog), what: what,
						gotData: asyncio.NewFuture[struct{}](l), gotEOF: asyncio.NewFuture[struct{}](l)}
					return sp
				}, "127.0.0.1", 0)
				if err != nil {
					return err
				}
				tr, p, err := CreateConnection(at, func() Protocol { return newStreamRecorder(l, "client", &clog) }, "127.0.0.1", serverPort(srv))
				if err != nil {
					return err
				}
				cp := p.(*streamRecorder)
				tr.Write([]byte("hello"))
				switch what {
				case "eof", "keep":
					tr.WriteEOF()
				}
				if err := yieldUntil(at, func() bool { return sp != nil }); err != nil {
					return err
				}
				switch what {
				case "keep":
					if _, err := sp.gotEOF.Await(at); err != nil {
						return err
					}
					sp.tr.Write([]byte("after eof"))
					sp.tr.Close()
				case "made":
					if _, err := sp.gotData.Await(at); err != nil {
						return err
					}
					slog = append(slog, fmt.Sprintf("server closing %v", sp.tr.IsClosing()))
					tr.Close()
				}
				if _, err := asyncio.WaitFor(at, edgeGuard, cp.lost); err != nil {
					return err
				}
				if _, err := asyncio.WaitFor(at, edgeGuard, sp.lost); err != nil {
					return err
				}
				srv.Close()
				return srv.WaitClosed(at)
			})
			var want struct{ s, c, h []string }
			switch what {
			case "data":
				want.s = []string{"server:made", "server:data hello", "server:lost asyncio: panic: boom data"}
				want.c = []string{"client:made", "client:eof", "client:lost <nil>"}
				want.h = []string{"Fatal error: protocol.data_received() call failed.: panic=true"}
			case "eof":
				want.s = []string{"server:made", "server:data hello", "server:eof", "server:lost asyncio: panic: boom eof"}
				want.c = []string{"client:made", "client:eof", "client:lost <nil>"}
				want.h = []string{"Fatal error: protocol.eof_received() call failed.: panic=true"}
			case "keep":
				want.s = []string{"server:made", "server:data hello", "server:eof", "server:lost <nil>"}
				want.c = []string{"client:made", "client:data after eof", "client:eof", "client:lost <nil>"}
			case "made":
				want.s = []string{"server:made", "server:data hello", "server closing false", "server:eof", "server:lost <nil>"}
				want.c = []string{"client:made", "client:lost <nil>"}
				want.h = []string{"Exception in callback: panic=true"}
			}
			expectLog(t, want.s, slog)
			expectLog(t, want.c, clog)
			expectLog(t, want.h, hlog)
		})
	}
}

// TestStreamEdge_HandlerPanicIsReportedAndClosed: a StartServer handler
// that panics is a failed client_connected_cb (StartServer's doc: "If cb
// fails, the exception handler gets "Unhandled exception in
// client_connected_cb" and the connection is closed"). CPython 3.13, a
// handler raising ValueError('handler boom'):
//
//	handler: Unhandled exception in client_connected_cb ValueError('handler boom')
//	client read b'' True
func TestStreamEdge_HandlerPanicIsReportedAndClosed(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			var pe *asyncio.PanicError
			log = append(log, fmt.Sprintf("handler: %s panic=%v", ctx.Message, errors.As(ctx.Err, &pe)))
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			panic("handler boom")
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		b, err := asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.Read(t, -1) })
		log = append(log, fmt.Sprintf("client read %q %v %v", b, err, r.AtEOF()))
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"handler: Unhandled exception in client_connected_cb panic=true", `client read "" <nil> true`}, log)
}

// TestStreamEdge_CloseAndAbortClientsGiveHandlersEOF: Server.close does
// not cancel the handlers; close_clients() and abort_clients() end their
// connections, and a handler waiting in read() gets EOF (abort is
// _force_close(None): connection_lost(None), feed_eof). CPython 3.13:
//
//	srv.close(); srv.close_clients()   # handler: ('read', b'', True, None); client read b''
//	srv.close(); srv.abort_clients()   # handler: ('read', b'', True, None); client read b''
func TestStreamEdge_CloseAndAbortClientsGiveHandlersEOF(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, how := range []string{"close_clients", "abort_clients"} {
			res := asyncio.NewFuture[string](at)
			started := asyncio.NewFuture[struct{}](at)
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				started.SetResult(struct{}{})
				b, err := r.Read(t, 10)
				if err != nil {
					res.SetResult("exc " + describe(err))
					return err
				}
				res.SetResult(fmt.Sprintf("read %q %v %v", b, r.AtEOF(), r.Err()))
				return nil
			}, "127.0.0.1", 0)
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			if _, err := started.Await(at); err != nil {
				return err
			}
			srv.Close()
			if how == "close_clients" {
				srv.CloseClients()
			} else {
				srv.AbortClients()
			}
			s, err := asyncio.WaitFor(at, edgeGuard, res)
			if err != nil {
				return err
			}
			log = append(log, how+" "+s)
			b, err := r.Read(at, -1)
			log = append(log, fmt.Sprintf("%s client read %q %v", how, b, err))
			w.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	want := []string{
		`close_clients read "" true <nil>`, `close_clients client read "" <nil>`,
		`abort_clients read "" true <nil>`, `abort_clients client read "" <nil>`,
	}
	expectLog(t, want, log)
}

// TestStreamEdge_UnixPathInUse: CPython 3.13's create_unix_server removes
// a socket file already at the path, even one a live server listens on,
// and binds; a path that is not a socket is left alone and the bind fails
// with EADDRINUSE. Closing the newer server removes its file; the older
// one, whose file is gone, removes nothing (cleanup_socket checks the
// inode):
//
//	s1 = await asyncio.start_unix_server(cb1, path)
//	s2 = await asyncio.start_unix_server(cb2, path)  # 'second server ok'
//	# a client connects to s2 (reads b'2'); s2.close(): file gone; s1.close(): file gone
//	open(path, 'w').write('x'); await asyncio.start_unix_server(cb, path)
//	# OSError [Errno 98] Address '...' is already in use; the file still holds 'x'
func TestStreamEdge_UnixPathInUse(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "s")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		serve := func(tag string) func(*asyncio.T, *StreamReader, *StreamWriter) error {
			return func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				w.Write([]byte(tag))
				w.Close()
				return nil
			}
		}
		s1, err := StartUnixServer(at, serve("1"), path)
		if err != nil {
			return err
		}
		s2, err := StartUnixServer(at, serve("2"), path)
		if err != nil {
			log = append(log, "second server: "+describe(err))
		} else {
			log = append(log, "second server ok")
			r, w, err := OpenUnixConnection(at, path)
			if err != nil {
				return err
			}
			b, err := r.Read(at, -1)
			log = append(log, fmt.Sprintf("connected to %q %v", b, err))
			w.Close()
			s2.Close()
			if err := s2.WaitClosed(at); err != nil {
				return err
			}
			_, serr := os.Stat(path)
			log = append(log, fmt.Sprintf("file after s2 close %v", serr == nil))
		}
		s1.Close()
		if err := s1.WaitClosed(at); err != nil {
			return err
		}
		_, serr := os.Stat(path)
		log = append(log, fmt.Sprintf("file after s1 close %v", serr == nil))
		//asynciovet:ignore blockingcall a tiny file in the test's temporary directory
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			return err
		}
		s3, err := StartUnixServer(at, serve("3"), path)
		if err == nil {
			s3.Close()
			if err := s3.WaitClosed(at); err != nil {
				return err
			}
		}
		log = append(log, fmt.Sprintf("regular file: EADDRINUSE=%v", errors.Is(err, syscall.EADDRINUSE)))
		//asynciovet:ignore blockingcall a tiny file in the test's temporary directory
		b, _ := os.ReadFile(path)
		log = append(log, fmt.Sprintf("regular file still there %q", b))
		return nil
	})
	want := []string{"second server ok", `connected to "2" <nil>`, "file after s2 close false", "file after s1 close false",
		"regular file: EADDRINUSE=true", `regular file still there "x"`}
	expectLog(t, want, log)
}

// TestStreamEdge_DrainCancelledAndDrainOnClosing: a cancelled drain()
// leaves no waiter behind (_drain_helper removes it in finally); a drain()
// on a closing transport that still flushes its buffer waits for the flush
// and returns None (resume_writing comes before connection_lost in
// _write_ready); one after the connection is lost (wait_closed returned)
// raises ConnectionResetError('Connection lost'). CPython 3.13 (SO_SNDBUF 4096, 8 MiB written, the peer reading
// only on ev):
//
//	d = asyncio.create_task(w.drain()); await asyncio.sleep(0); d.cancel()
//	# drain cancelled, waiters 0
//	w.close(); d = asyncio.create_task(w.drain()); await asyncio.sleep(0)
//	# drain pending on closing True
//	ev.set()  # drain closing -> None
//	await w.wait_closed()  # drain after close -> ConnectionResetError Connection lost
func TestStreamEdge_DrainCancelledAndDrainOnClosing(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		ev := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := ev.Await(t); err != nil {
				return err
			}
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		unix.SetsockoptInt(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		w.Write(make([]byte, 2<<20))
		drain := func() *asyncio.Task[struct{}] {
			return asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, w.Drain(t) })
		}
		d := drain()
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		d.Cancel()
		_, err = d.Await(at)
		log = append(log, fmt.Sprintf("drain cancelled=%v, waiters %d", asyncio.IsCancelled(err), len(w.protocol.(*streamProtocol).drainWaiters)))
		w.Close()
		d = drain()
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("drain pending on closing %v", !d.Done()))
		ev.SetResult(struct{}{})
		_, err = asyncio.WaitFor(at, edgeGuard, d)
		log = append(log, "drain closing -> "+describe(err))
		// The drain above returns once the buffer is below the low-water
		// mark, which may be before the last bytes are sent and
		// connection_lost runs (in CPython too): wait for the loss, then
		// drain again.
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		err = w.Drain(at)
		log = append(log, fmt.Sprintf("drain after close -> %v", err))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"drain cancelled=true, waiters 0", "drain pending on closing true", "drain closing -> <nil>",
		"drain after close -> Connection lost: connection reset by peer"}
	expectLog(t, want, log)
}

// TestStreamEdge_PeerResetThenWriteDrainWaitClosed: after the peer resets
// the connection, the read raises the reset, a write is dropped, drain()
// raises the reader's stored exception (the same object) and wait_closed()
// raises it too. CPython 3.13 (the server aborts with SO_LINGER 0):
//
//	read ConnectionResetError [Errno 104] Connection reset by peer
//	write None
//	drain ConnectionResetError [Errno 104] Connection reset by peer True
//	wait_closed ConnectionResetError [Errno 104] Connection reset by peer
//	closing True
func TestStreamEdge_PeerResetThenWriteDrainWaitClosed(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		goAbort := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if _, err := goAbort.Await(t); err != nil {
				return err
			}
			unix.SetsockoptLinger(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		goAbort.SetResult(struct{}{})
		_, err = asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 10) })
		log = append(log, "read "+describe(err))
		log = append(log, fmt.Sprintf("write %v", w.Write([]byte("x"))))
		err = w.Drain(at)
		log = append(log, fmt.Sprintf("drain %s same=%v", describe(err), err == r.Err()))
		log = append(log, "wait_closed "+describe(w.WaitClosed(at)))
		log = append(log, fmt.Sprintf("closing %v", w.IsClosing()))
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"read syscall=recv ECONNRESET", "write <nil>", "drain syscall=recv ECONNRESET same=true",
		"wait_closed syscall=recv ECONNRESET", "closing true"}
	expectLog(t, want, log)
}

// TestStreamEdge_WriterEOFCloseAbort: StreamWriter's half-close and close
// calls are idempotent, writes after write_eof() fail, and wait_closed()
// after abort() returns. CPython 3.13:
//
//	w.write(b'hi'); w.can_write_eof(), w.write_eof(), w.write_eof()  # True None None
//	w.write(b'x')      # RuntimeError Cannot call write() after write_eof()
//	w.writelines([])   # RuntimeError Cannot call writelines() after write_eof()
//	await r.read()     # b'got hi'
//	w.close(); w.close(); w.write_eof()  # None
//	# a second connection: w.transport.abort(); w.is_closing() True
//	await w.wait_closed()  # None; await r.read() b'', r.at_eof() True
func TestStreamEdge_WriterEOFCloseAbort(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			b, err := r.Read(t, -1)
			w.Write(append([]byte("got "), b...))
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Write([]byte("hi"))
		log = append(log, fmt.Sprintf("write_eof %v %v %v", w.CanWriteEOF(), w.WriteEOF(), w.WriteEOF()))
		log = append(log, "write after eof "+describe(w.Write([]byte("x"))))
		log = append(log, "writelines after eof "+describe(w.WriteLines()))
		b, err := r.Read(at, -1)
		log = append(log, fmt.Sprintf("read %q %v", b, err))
		w.Close()
		w.Close()
		log = append(log, fmt.Sprintf("write_eof after close %v", w.WriteEOF()))
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		r, w, err = OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Transport().Abort()
		log = append(log, fmt.Sprintf("abort closing %v", w.IsClosing()))
		log = append(log, "wait_closed after abort "+describe(w.WaitClosed(at)))
		b, err = r.Read(at, -1)
		log = append(log, fmt.Sprintf("read after abort %q %v %v", b, err, r.AtEOF()))
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"write_eof true <nil> <nil>",
		"write after eof RuntimeError Cannot call write() after write_eof()",
		"writelines after eof RuntimeError Cannot call writelines() after write_eof()",
		`read "got hi" <nil>`,
		"write_eof after close <nil>",
		"abort closing true",
		"wait_closed after abort <nil>",
		`read after abort "" <nil> true`,
	}
	expectLog(t, want, log)
}

// TestStreamEdge_WaterMarksAndReadingState: set_write_buffer_limits
// pauses at once when the buffer is past the new high mark and never
// resumes by itself; bad marks raise and keep the old ones; a write the
// socket takes whole never pauses, even with high=0; pause/resume_reading
// are idempotent and do nothing once the transport is closing. CPython
// 3.13 (SO_SNDBUF 4096, the peer not reading):
//
//	tr.set_write_buffer_limits(0, 0); tr.write(b'x')  # after tiny write [] 0
//	tr.set_write_buffer_limits(1<<30); tr.write(b'a'*(8<<20)); n = ...size()  # buffered True []
//	tr.set_write_buffer_limits(high=n-1)  # ['pause']
//	tr.set_write_buffer_limits(high=n*2)  # ['pause'] (no resume)
//	tr.set_write_buffer_limits(1, 2)      # ValueError high (1) must be >= low (2) must be >= 0; marks kept
//	tr.pause_reading() x2; is_reading() False; tr.resume_reading() x2; is_reading() True
//	tr.pause_reading(); tr.abort(); tr.resume_reading(); is_reading() False, is_closing() True
func TestStreamEdge_WaterMarksAndReadingState(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		ev := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := ev.Await(t); err != nil {
				return err
			}
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, p, err := CreateConnection(at, func() Protocol { return newStreamRecorder(l, "c", &log) }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		fd := tr.ExtraInfo("socket").(int)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		if err := tr.SetWriteBufferLimits(0, 0); err != nil {
			return err
		}
		tr.Write([]byte("x"))
		log = append(log, fmt.Sprintf("after tiny write %d", tr.WriteBufferSize()))
		if err := tr.SetWriteBufferLimits(1<<30, -1); err != nil {
			return err
		}
		tr.Write(make([]byte, 8<<20))
		n := tr.WriteBufferSize()
		log = append(log, fmt.Sprintf("buffered %v", n > 0))
		log = append(log, fmt.Sprintf("lower: %v", tr.SetWriteBufferLimits(n-1, -1)))
		if h, lo := tr.WriteBufferLimits(); h != n-1 || lo != (n-1)/4 {
			log = append(log, fmt.Sprintf("marks %d %d", h, lo))
		}
		log = append(log, fmt.Sprintf("raise: %v", tr.SetWriteBufferLimits(2*n, -1)))
		err = tr.SetWriteBufferLimits(1, 2)
		h, lo := tr.WriteBufferLimits()
		log = append(log, fmt.Sprintf("bad: %s kept=%v", describe(err), h == 2*n && lo == n/2))
		tr.PauseReading()
		tr.PauseReading()
		log = append(log, fmt.Sprintf("reading %v watched %v", tr.IsReading(), watchingRead(l, fd)))
		tr.ResumeReading()
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("reading %v watched %v", tr.IsReading(), watchingRead(l, fd)))
		tr.PauseReading()
		tr.Abort()
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("after abort reading %v closing %v watched %v", tr.IsReading(), tr.IsClosing(), watchingRead(l, fd)))
		tr.PauseReading()
		tr.ResumeReading()
		if _, err := p.(*streamRecorder).lost.Await(at); err != nil {
			return err
		}
		ev.SetResult(struct{}{})
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"c:made",
		"after tiny write 0",
		"buffered true",
		"c:pause writing",
		"lower: <nil>",
		"raise: <nil>",
		"bad: ValueError high (1) must be >= low (2) must be >= 0 kept=true",
		"reading false watched false",
		"reading true watched true",
		"after abort reading false closing true watched false",
		"c:lost <nil>",
	}
	expectLog(t, want, log)
}

// TestStreamEdge_TLSEOFReceivedKeepOpenHasNoEffect: over TLS a protocol
// cannot keep a connection open past the peer's close_notify. CPython
// 3.13's SSLProtocol._call_eof_received logs "returning true from
// eof_received() has no effect when using ssl" and _start_shutdown()
// follows, so connection_lost comes without the application closing
// anything (the Protocol doc here: "return true to keep the transport
// open for writing"; the TLS transport documents no exception, and
// README's "Where Go differs" has none). Run with PYENV_VERSION=3.13.0:
//
//	class P(asyncio.Protocol):
//	    def eof_received(s): print(s.name, 'eof'); return True
//	srv = await loop.create_server(lambda: P('server'), '127.0.0.1', 0, ssl=sctx)
//	tr, cp = await loop.create_connection(lambda: P('client'), ..., ssl=cctx, server_hostname='localhost')
//	tr.write(b'hello'); ...; tr.close()
//	await server.eof
//	print('server closing right after eof', server.tr.is_closing())  # True
//	print('server lost', await asyncio.wait_for(server.lost, 5))      # None
func TestStreamEdge_TLSEOFReceivedKeepOpenHasNoEffect(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		gotData := asyncio.NewFuture[struct{}](l)
		server := newStreamRecorder(l, "server", &log)
		server.keepOpen = true
		server.onData = func(p *streamRecorder, d []byte) {
			p.add("data " + string(d))
			gotData.SetResult(struct{}{})
		}
		srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		client := newStreamRecorder(l, "client", new([]string))
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		tr.Write([]byte("hello"))
		if _, err := asyncio.WaitFor(at, edgeGuard, gotData); err != nil {
			return err
		}
		tr.Close()
		if err := yieldUntil(at, func() bool { return len(log) > 0 && log[len(log)-1] == "server:eof" }); err != nil {
			return err
		}
		if _, err := asyncio.WaitFor(at, 5*time.Second, server.lost); err != nil {
			log = append(log, fmt.Sprintf("server lost: %s (closing=%v)", describe(err), server.tr.IsClosing()))
			server.tr.Close() // clean up what the test waited for
			if err := yieldUntil(at, func() bool { return strings.HasPrefix(log[len(log)-1], "server:lost") }); err != nil {
				return err
			}
		}
		if _, err := asyncio.WaitFor(at, edgeGuard, client.lost); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"server:made", "server:data hello", "server:eof", "server:lost <nil>"}, log)
}

// TestStreamEdge_CancelAfterWakeupKeepsTheData: a read whose waiter was
// already resolved with data when the task is cancelled loses nothing.
// CPython 3.13:
//
//	t = asyncio.create_task(r.read(5)); await asyncio.sleep(0)
//	r.feed_data(b'abc'); t.cancel()
//	await t   # CancelledError; r._buffer == b'abc'
//
// A Read(-1) cancelled after it took a block: CPython drops the block
// (t = asyncio.create_task(r.read(-1)) with b'abc' buffered, cancelled:
// CancelledError, buffer empty); here it goes back to the buffer, and the
// next read gets it. So does a Read(-1) that fails on an error set on
// the stream (then every read returns that error, as in CPython).
func TestStreamEdge_CancelAfterWakeupKeepsTheData(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		rt := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 5) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.FeedData([]byte("abc"))
		rt.Cancel()
		b, err := rt.Await(at)
		if !asyncio.IsCancelled(err) || string(r.buf) != "abc" {
			t.Errorf("cancelled read after wakeup: %q %v, buffered %q; want the cancellation and abc kept", b, err, r.buf)
		}

		r = NewStreamReader(at, DefaultStreamLimit)
		r.FeedData([]byte("abc"))
		var got []byte
		rt = asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) {
			b, err := r.Read(t, -1)
			got = b
			return b, err
		})
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		rt.Cancel()
		_, err = rt.Await(at)
		if !asyncio.IsCancelled(err) || got != nil || string(r.buf) != "abc" {
			t.Errorf("Read(-1) cancelled: returned %q, %v, buffered %q; want nothing, the cancellation, abc buffered", got, err, r.buf)
		}
		r.FeedData([]byte("def"))
		r.FeedEOF()
		if b, err := r.Read(at, -1); string(b) != "abcdef" || err != nil {
			t.Errorf("Read(-1) after the cancelled one: %q, %v; want abcdef", b, err)
		}

		r = NewStreamReader(at, DefaultStreamLimit)
		r.FeedData([]byte("abc"))
		rt = asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, -1) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.SetException(errors.New("broken"))
		b, err = rt.Await(at)
		if err == nil || err.Error() != "broken" || b != nil || string(r.buf) != "abc" {
			t.Errorf("Read(-1) failing: %q, %v, buffered %q; want nothing, broken, abc buffered", b, err, r.buf)
		}
		return nil
	})
}

// TestStreamEdge_UnixStaleSocketFile: a socket file nobody listens on any
// more (left by a server kept with cleanup_socket=False) refuses
// connections, and a new server on that path removes it and binds.
// CPython 3.13:
//
//	s1 = await asyncio.start_unix_server(cb, path, cleanup_socket=False)
//	s1.close(); await s1.wait_closed()      # the file stays
//	await asyncio.open_unix_connection(path)  # ConnectionRefusedError
//	s2 = await asyncio.start_unix_server(cb, path)  # binds; a client reads b'2'
func TestStreamEdge_UnixStaleSocketFile(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "s")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		cb := func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Write([]byte("2"))
			w.Close()
			return nil
		}
		s1, err := StartUnixServer(at, cb, path, WithKeepSocketFile())
		if err != nil {
			return err
		}
		s1.Close()
		if err := s1.WaitClosed(at); err != nil {
			return err
		}
		_, serr := os.Stat(path)
		log = append(log, fmt.Sprintf("stale file %v", serr == nil))
		_, _, err = OpenUnixConnection(at, path)
		log = append(log, fmt.Sprintf("connect to stale: refused=%v", errors.Is(err, syscall.ECONNREFUSED)))
		s2, err := StartUnixServer(at, cb, path)
		if err != nil {
			return err
		}
		r, w, err := OpenUnixConnection(at, path)
		if err != nil {
			return err
		}
		b, err := r.Read(at, -1)
		log = append(log, fmt.Sprintf("read %q %v", b, err))
		w.Close()
		s2.Close()
		return s2.WaitClosed(at)
	})
	expectLog(t, []string{"stale file true", "connect to stale: refused=true", `read "2" <nil>`}, log)
}
