//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeTransport records reading pauses (Transport for StreamReader tests).
type fakeTransport struct {
	Transport
	log *[]string
}

func (f *fakeTransport) PauseReading() { *f.log = append(*f.log, "pause") }

func (f *fakeTransport) ResumeReading() { *f.log = append(*f.log, "resume") }

// A limit <= 0 is asyncio's ValueError "Limit cannot be <= 0"
// (STREAM-1): NewStreamReader, a constructor, panics with it (a
// programming error, the core's constructor rule); OpenConnection and
// StartServer, given it as an option, return it. The default limit is
// asyncio's 64 KiB.
func TestSTREAM1_LimitValidation(t *testing.T) {
	l := asyncio.NewTestLoop()
	defer l.Close()
	var log []string
	for _, limit := range []int{0, -1} {
		func() {
			defer func() {
				log = append(log, fmt.Sprintf("NewStreamReader(%d) panics: %s", limit, describe(recover().(error))))
			}()
			NewStreamReader(l, limit)
		}()
	}
	log = append(log, fmt.Sprintf("default limit %d", NewStreamReader(l, DefaultStreamLimit).limit))
	runVirtual(t, func(at *asyncio.T) error {
		_, _, err := OpenConnection(at, "127.0.0.1", 1, WithStreamLimit(0))
		log = append(log, "OpenConnection: "+describe(err))
		_, err = StartServer(at, closeAtOnce, "127.0.0.1", 0, WithStreamLimit(0))
		log = append(log, "StartServer: "+describe(err))
		return nil
	})
	want := []string{
		"NewStreamReader(0) panics: ValueError Limit cannot be <= 0",
		"NewStreamReader(-1) panics: ValueError Limit cannot be <= 0",
		"default limit 65536",
		"OpenConnection: ValueError Limit cannot be <= 0",
		"StartServer: ValueError Limit cannot be <= 0",
	}
	expectLog(t, want, log)
}

// STREAM-2: past twice the limit the transport is paused; reading down to
// the limit resumes it.
func TestSTREAM2_ReaderPausesTransport(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 10)
		r.setTransport(&fakeTransport{log: &log})
		r.FeedData(make([]byte, 20))
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		r.FeedData(make([]byte, 1))
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		r.Read(at, 5)
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		r.Read(at, 6)
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		return nil
	})
	want := []string{"buffered=20", "pause", "buffered=21", "buffered=16", "resume", "buffered=10"}
	expectLog(t, want, log)
}

// FeedData copies: the caller may reuse its slice (asyncio's bytes are
// immutable); data handed out by a read is the caller's to keep.
func TestSTREAM2_FeedDataCopies(t *testing.T) {
	var got []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 100)
		buf := []byte("abc")
		r.FeedData(buf)
		copy(buf, "xyz")
		r.FeedData(buf)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ := r.Read(at, 3)
		got = append(got, string(b))
		copy(b, "!!!")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b2, _ := r.Read(at, 3)
		got = append(got, string(b2))
		return nil
	})
	if d := cmp.Diff([]string{"abc", "xyz"}, got); d != "" {
		t.Fatal(d)
	}
}

// A second read while one waits is a RuntimeError naming the method
// (asyncio's _wait_for_data, STREAM-3).
func TestSTREAM3_SecondReaderIsRuntimeError(t *testing.T) {
	var got error
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 100)
		first := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 10) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		_, got = r.ReadLine(at)
		r.FeedData([]byte("x"))
		_, err := first.Await(at)
		return err
	})
	if got == nil || got.Error() != "readuntil() called while another coroutine is already waiting for incoming data" {
		t.Fatalf("second read: %v", got)
	}
}

// SetException wakes the waiting read with the error, and every later
// read returns it (STREAM-3).
func TestSTREAM3_StoredExceptionRaisedByNextRead(t *testing.T) {
	boom := errors.New("boom")
	var got []error
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 10)
		waiting := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 1) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		r.SetException(boom)
		_, err := waiting.Await(at)
		got = append(got, err)
		_, err = r.ReadLine(at)
		got = append(got, err)
		return nil
	})
	if len(got) != 2 || got[0] != boom || got[1] != boom {
		t.Fatalf("got %v", got)
	}
}

// Read(0) is empty, Read(n) returns what is buffered up to n or waits
// for data, Read(-1) reads to EOF, and at EOF Read returns empty and no
// error (STREAM-4).
func TestSTREAM4_ReadSemantics(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 4)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ := r.Read(at, 0)
		log = append(log, fmt.Sprintf("n=0:%q", b))
		r.FeedData([]byte("abcdef"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ = r.Read(at, 2)
		log = append(log, fmt.Sprintf("n=2:%q", b))
		waiter := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 100) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ = waiter.Await(at)
		log = append(log, fmt.Sprintf("n=100:%q", b))
		r.FeedData([]byte("0123456789"))
		r.FeedEOF()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ = r.Read(at, -1)
		log = append(log, fmt.Sprintf("n=-1:%q", b))
		b, err := r.Read(at, 5)
		log = append(log, fmt.Sprintf("eof:%q %v %v", b, err, r.AtEOF()))
		return nil
	})
	want := []string{`n=0:""`, `n=2:"ab"`, `n=100:"cdef"`, `n=-1:"0123456789"`, `eof:"" <nil> true`}
	expectLog(t, want, log)
}

// ReadExactly at EOF returns an IncompleteReadError with what was
// buffered (an io.ErrUnexpectedEOF) and clears the buffer; n < 0 is a
// ValueError (STREAM-5).
func TestSTREAM5_ReadExactlyIncomplete(t *testing.T) {
	var got error
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 100)
		r.FeedData([]byte("abc"))
		r.FeedEOF()
		_, got = r.ReadExactly(at, 5)
		if !r.AtEOF() {
			return errors.New("buffer not cleared")
		}
		if _, err := r.ReadExactly(at, -1); !errors.Is(err, asyncio.ErrValue) {
			return fmt.Errorf("n<0: %v", err)
		}
		return nil
	})
	var ie *IncompleteReadError
	if !errors.As(got, &ie) || string(ie.Partial) != "abc" || ie.Expected != 5 ||
		got.Error() != "3 bytes read on a total of 5 expected bytes" || !errors.Is(got, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", got)
	}
}

// A cancelled ReadExactly loses nothing: what it saw stays buffered.
func TestSTREAM5_CancelledReadExactlyKeepsBytes(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 100)
		reader := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 10) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		r.FeedData([]byte("abc"))
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0) // the reader wakes, sees 3 < 10 bytes, waits again
		reader.Cancel()
		_, err := reader.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v buffered=%q", asyncio.IsCancelled(err), r.buf))
		r.FeedData([]byte("defghij"))
		b, err := r.ReadExactly(at, 10)
		log = append(log, fmt.Sprintf("%q %v", b, err))
		return nil
	})
	want := []string{`cancelled=true buffered="abc"`, `"abcdefghij" <nil>`}
	expectLog(t, want, log)
}

// ReadUntil's errors: an empty separator is a ValueError, a separator
// not found or found beyond the limit is a LimitOverrunError that leaves
// the data buffered, EOF first an IncompleteReadError (STREAM-6).
func TestSTREAM6_ReadUntilLimits(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 10)
		_, err := r.ReadUntil(at, nil)
		log = append(log, err.Error())
		r.FeedData([]byte("0123456789abcdef")) // 16 bytes, no separator
		_, err = r.ReadUntil(at, []byte("\n"))
		var lo *LimitOverrunError
		errors.As(err, &lo)
		log = append(log, fmt.Sprintf("%s consumed=%d buffered=%d", lo.Msg, lo.Consumed, len(r.buf)))
		r.buf = nil
		r.FeedData([]byte("0123456789abc\nrest"))
		_, err = r.ReadUntil(at, []byte("\n"))
		errors.As(err, &lo)
		log = append(log, fmt.Sprintf("%s consumed=%d", lo.Msg, lo.Consumed))
		r.buf = nil
		r.FeedData([]byte("ab||cd"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ := r.ReadUntil(at, []byte("||"))
		log = append(log, string(b))
		r.FeedEOF()
		_, err = r.ReadUntil(at, []byte("||"))
		log = append(log, err.Error())
		return nil
	})
	want := []string{
		"asyncio: Separator should be at least one-byte string",
		"Separator is not found, and chunk exceed the limit consumed=16 buffered=16",
		"Separator is found, but chunk is longer than limit consumed=13",
		"ab||",
		"2 bytes read on a total of undefined expected bytes",
	}
	expectLog(t, want, log)
}

// Since 3.13 ReadUntil takes several separators (gh-81322): the match
// that ends first wins, even against a longer separator that starts
// earlier; the limit check looks at where that match starts; the scan
// offset never goes below 0 when the longest separator is longer than the
// buffer; no separator at all is a ValueError.
func TestSTREAM6_ReadUntilSeveralSeparators(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		_, err := r.ReadUntil(at)
		log = append(log, err.Error())
		r.FeedData([]byte("line 1\nline 2\r"))
		for range 2 {
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
			b, _ := r.ReadUntil(at, []byte("\r"), []byte("\n"))
			log = append(log, fmt.Sprintf("%q", b))
		}
		r.FeedData([]byte("ABCDEFG"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b, _ := r.ReadUntil(at, []byte("DEF"), []byte("BCDE"))
		log = append(log, fmt.Sprintf("%q rest=%q", b, r.buf))
		r.buf = nil
		r.FeedData([]byte("data"))
		go1 := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, []byte("A"), []byte("long sep")) })
		at.Loop().CallSoon(func() { r.FeedData([]byte("Z")) })
		at.Loop().CallSoon(func() { r.FeedData([]byte("Aaaa")) })
		b, err = go1.Await(at)
		log = append(log, fmt.Sprintf("%q %v rest=%q", b, err, r.buf))
		r = NewStreamReader(at, 3)
		r.FeedData([]byte("some dataA"))
		_, err = r.ReadUntil(at, []byte("A"), []byte("ome dataA"))
		var lo *LimitOverrunError
		errors.As(err, &lo)
		log = append(log, fmt.Sprintf("%s consumed=%d buffered=%q", lo.Msg, lo.Consumed, r.buf))
		return nil
	})
	want := []string{
		"asyncio: Separator should contain at least one element",
		`"line 1\n"`,
		`"line 2\r"`,
		`"ABCDE" rest="FG"`,
		`"dataZA" <nil> rest="aaa"`,
		`Separator is found, but chunk is longer than limit consumed=9 buffered="some dataA"`,
	}
	expectLog(t, want, log)
}

// Of several separators whose matches end at the same place, the
// shortest is the match, whatever order they were given in (asyncio
// sorts them by length); the limit is checked against its start. The
// results are CPython 3.13's.
func TestSTREAM6_ReadUntilTieGoesToTheShortestSeparator(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			limit int
			data  string
			seps  []string
		}{
			{1, "a\r\n", []string{"\r\n", "\n"}},
			{1, "xab", []string{"ab", "b"}},
			{1, "xab", []string{"b", "ab"}},
			{100, "a\r\nb", []string{"\r\n", "\n"}},
			{2, "xyab", []string{"yab", "ab", "b"}},
		} {
			r := NewStreamReader(at, c.limit)
			r.FeedData([]byte(c.data))
			var seps [][]byte
			for _, s := range c.seps {
				seps = append(seps, []byte(s))
			}
			b, err := r.ReadUntil(at, seps...)
			var lo *LimitOverrunError
			if errors.As(err, &lo) {
				log = append(log, fmt.Sprintf("LimitOverrunError(%q, consumed=%d)", lo.Msg, lo.Consumed))
			} else {
				log = append(log, fmt.Sprintf("%q %v", b, err))
			}
		}
		return nil
	})
	expectLog(t, []string{
		`LimitOverrunError("Separator is found, but chunk is longer than limit", consumed=2)`,
		`LimitOverrunError("Separator is found, but chunk is longer than limit", consumed=2)`,
		`LimitOverrunError("Separator is found, but chunk is longer than limit", consumed=2)`,
		`"a\r\n" <nil>`,
		`LimitOverrunError("Separator is found, but chunk is longer than limit", consumed=3)`,
	}, log)
}

// StreamReader's String is asyncio's repr: the buffered byte count, eof,
// a limit other than the default, the waiter, the exception, the
// transport and the pause, each only when it applies.
func TestSTREAM2_ReaderRepr(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		log = append(log, r.String())
		log = append(log, NewStreamReader(at, 123).String())
		r.FeedData([]byte("data"))
		log = append(log, r.String())
		r.FeedEOF()
		log = append(log, r.String())
		r = NewStreamReader(at, DefaultStreamLimit)
		reader := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 10) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		log = append(log, r.String())
		r.FeedData([]byte("x"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		reader.Await(at)
		log = append(log, r.String())
		r.SetException(errors.New("boom"))
		log = append(log, r.String())
		return nil
	})
	want := []string{
		"<StreamReader>",
		"<StreamReader limit=123>",
		"<StreamReader 4 bytes>",
		"<StreamReader 4 bytes eof>",
		"<StreamReader waiter=<Future pending>>",
		"<StreamReader>",
		"<StreamReader exception=boom>",
	}
	expectLog(t, want, log)
}

// An oversized line is dropped and reported; the stream stays usable.
func TestSTREAM7_OversizedLineStreamStaysUsable(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 10)
		r.FeedData([]byte("this line is too long\nnext\n"))
		_, err := r.ReadLine(at)
		var lo *LimitOverrunError
		var ve *asyncio.ValueError
		log = append(log, fmt.Sprintf("%v value=%v overrun=%v", err, errors.Is(err, asyncio.ErrValue), errors.As(err, &lo)))
		if !errors.As(err, &ve) || ve.Msg != "Separator is found, but chunk is longer than limit" {
			t.Errorf("errors.As(%v, *asyncio.ValueError): %v", err, ve)
		}
		caught := false
		_ = asyncio.ExceptStar(err, asyncio.Except[*asyncio.ValueError](func(*asyncio.ExceptionGroup) error { caught = true; return nil }))
		if !caught {
			t.Error("except* ValueError did not take the line-limit error")
		}
		line, err := r.ReadLine(at)
		log = append(log, fmt.Sprintf("%q %v", line, err))
		r.FeedData([]byte("0123456789abcdef")) // no newline buffered: all dropped
		_, err = r.ReadLine(at)
		log = append(log, fmt.Sprintf("%v buffered=%d", err, len(r.buf)))
		r.FeedData([]byte("ok\nlast"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		line, _ = r.ReadLine(at)
		log = append(log, string(line))
		r.FeedEOF()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		line, _ = r.ReadLine(at)
		log = append(log, string(line))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		line, _ = r.ReadLine(at)
		log = append(log, fmt.Sprintf("%q", line))
		return nil
	})
	want := []string{
		"asyncio: Separator is found, but chunk is longer than limit value=true overrun=true",
		`"next\n" <nil>`,
		"asyncio: Separator is not found, and chunk exceed the limit buffered=0",
		"ok\n",
		"last",
		`""`,
	}
	expectLog(t, want, log)
}

// STREAM-9/10: after Close, IsClosing is true at once; Drain yields once
// so ConnectionLost runs, then reports "Connection lost".
func TestSTREAM9_DrainAfterClose(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, -1)
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("drain open: %v", w.Drain(at)))
		w.Close()
		log = append(log, fmt.Sprintf("closing=%v", w.IsClosing()))
		err = w.Drain(at)
		log = append(log, fmt.Sprintf("drain closed: %v reset=%v", err, errors.Is(err, syscall.ECONNRESET)))
		log = append(log, fmt.Sprintf("wait_closed: %v", w.WaitClosed(at)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"drain open: <nil>", "closing=true", "drain closed: Connection lost: connection reset by peer reset=true", "wait_closed: <nil>"}
	expectLog(t, want, log)
}

// A Drain waiting on a paused transport is woken when the connection is
// lost (asyncio's FlowControlMixin.connection_lost): with nil when the
// transport was aborted locally, with the error when the peer reset the
// connection; a Drain after the loss fails at once (STREAM-9).
func TestSTREAM9_ConnectionLostWakesPendingDrain(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		reset := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			// Never reads; on request, aborts with unread data, which
			// makes the kernel send a reset.
			if _, err := reset.Await(t); err != nil {
				return err
			}
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		for _, how := range []string{"local abort", "peer reset"} {
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			unix.SetsockoptInt(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
			w.Write(make([]byte, 8<<20))
			drain := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, w.Drain(t) })
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%s: drain pending=%v", how, !drain.Done()))
			if how == "local abort" {
				w.Transport().Abort()
			} else {
				reset.SetResult(struct{}{})
			}
			_, err = asyncio.WaitFor(at, 10*time.Second, drain)
			switch {
			case err == nil:
				log = append(log, how+": drain returned nil")
			case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
				log = append(log, how+": drain returned the reset")
			default:
				log = append(log, fmt.Sprintf("%s: drain returned %v", how, err))
			}
			err = w.Drain(at)
			log = append(log, fmt.Sprintf("%s: later drain fails=%v", how, err != nil))
			w.Close()
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"local abort: drain pending=true",
		"local abort: drain returned nil",
		"local abort: later drain fails=true",
		"peer reset: drain pending=true",
		"peer reset: drain returned the reset",
		"peer reset: later drain fails=true",
	}
	expectLog(t, want, log)
}

// A failing client_connected_cb is reported and its connection closed
// (STREAM-11).
func TestSTREAM11_ClientConnectedCallbackFailure(t *testing.T) {
	var msgs []string
	var eof bool
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msgs = append(msgs, ctx.Message+": "+ctx.Err.Error())
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			return errors.New("handler failed")
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		b, err := r.Read(at, -1)
		eof = len(b) == 0 && err == nil && r.AtEOF()
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if !eof {
		t.Fatal("connection not closed by the server")
	}
	if d := cmp.Diff([]string{"Unhandled exception in client_connected_cb: handler failed"}, msgs); d != "" {
		t.Fatal(d)
	}
}

// A line echo over StartServer and OpenConnection, ended by WriteEOF.
func TestStreamEcho(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for {
				line, err := r.ReadLine(t)
				if err != nil || len(line) == 0 {
					return err
				}
				w.Write(bytes.ToUpper(line))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		for _, s := range []string{"hello\n", "world\n"} {
			w.Write([]byte(s))
			line, err := r.ReadLine(at)
			if err != nil {
				return err
			}
			log = append(log, string(line))
		}
		w.WriteEOF()
		rest, err := r.Read(at, -1)
		if err != nil {
			return err
		}
		log = append(log, "rest:"+string(rest))
		if !r.AtEOF() {
			return errors.New("not at EOF")
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	if d := cmp.Diff([]string{"HELLO\n", "WORLD\n", "rest:"}, log); d != "" {
		t.Fatal(d)
	}
	_ = io.EOF
}

// StartUnixServer and OpenUnixConnection make a stream over a Unix
// socket.
func TestUnixStreamEcho(t *testing.T) {
	path := filepath.Join(t.TempDir(), "echo.sock")
	var got string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartUnixServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			w.Write(append([]byte("unix:"), line...))
			w.Close()
			return nil
		}, path)
		if err != nil {
			return err
		}
		r, w, err := OpenUnixConnection(at, path)
		if err != nil {
			return err
		}
		w.Write([]byte("hi\n"))
		b, err := r.Read(at, -1)
		got = string(b)
		w.Close()
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	if got != "unix:hi\n" {
		t.Fatalf("got %q", got)
	}
}

// StreamWriter.WriteLines writes the chunks in order, as one stream
// (asyncio's writelines), over TCP and over TLS.
func TestStreamWriterWriteLines(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name         string
			server, dial []Option
		}{{"tcp", nil, nil}, {"tls", []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}}} {
			done := asyncio.NewFuture[struct{}](at.Loop())
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer done.SetResult(struct{}{})
				defer w.Close()
				for {
					line, err := r.ReadLine(t)
					if err != nil || len(line) == 0 {
						return err
					}
					log = append(log, fmt.Sprintf("%s %q", c.name, line))
				}
			}, "127.0.0.1", 0, c.server...)
			if err != nil {
				return err
			}
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), c.dial...)
			if err != nil {
				return err
			}
			if err := w.WriteLines([]byte("ab"), []byte("c\nd"), nil, []byte("\n")); err != nil {
				return err
			}
			if err := w.Drain(at); err != nil {
				return err
			}
			w.Close()
			if _, err := done.Await(at); err != nil {
				return err
			}
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	want := []string{`tcp "abc\n"`, `tcp "d\n"`, `tls "abc\n"`, `tls "d\n"`}
	expectLog(t, want, log)
}

// FuzzStreamReader feeds data to a StreamReader in chunks the script
// chooses, with yields and sleeps between them, while another task reads
// it with the reads the script chooses (Read, ReadExactly, ReadUntil,
// ReadLine, with small limits so that overruns happen). Whatever the
// interleaving, every byte comes out once and in order: each read returns
// exactly the bytes it took off the front of the stream (ReadLine's
// over-long lines are dropped, the one documented loss), and after EOF
// nothing is left.
func FuzzStreamReader(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), []byte{8, 3, 0, 1, 2, 3, 4, 5})
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), []byte{40, 7, 2, 13, 10, 3, 2, 200})
	f.Add(bytes.Repeat([]byte("0123456789"), 50), []byte{2, 255, 4, 4, 4, 1, 9})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, data, script []byte) {
		if len(data) > 1<<12 || len(script) > 1<<9 { // keep each run short
			return
		}
		at := func(i int) byte {
			if len(script) == 0 {
				return byte(i * 37)
			}
			return script[i%len(script)]
		}
		limit := 1 + int(at(0))%64
		l := asyncio.NewTestLoop()
		defer l.Close()
		r := NewStreamReader(l, limit)
		fed := 0
		feeder := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
			for i := 1; fed < len(data); i++ {
				n := 1 + int(at(i))%23
				if at(i)&0x80 != 0 {
					n = 1 + int(at(i+1))*int(at(i+2))
				}
				n = min(n, len(data)-fed)
				r.FeedData(data[fed : fed+n])
				fed += n
				switch at(i) % 3 {
				case 1:
					//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
					asyncio.Sleep(t, 0)
				case 2:
					//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
					asyncio.Sleep(t, time.Millisecond)
				}
			}
			r.FeedEOF()
			return 0, nil
		})
		pos := 0 // bytes taken off the front of the stream so far
		check := func(op string, out []byte, dropped bool) error {
			now := fed - len(r.buf)
			if now < pos {
				return fmt.Errorf("%s: the stream went back from %d to %d", op, pos, now)
			}
			if !dropped && !bytes.Equal(out, data[pos:now]) {
				return fmt.Errorf("%s returned %q but took %q off the stream", op, out, data[pos:now])
			}
			pos = now
			return nil
		}
		reader := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
			for i := 0; !r.AtEOF(); i++ {
				b := at(1000 + i)
				if i > 4*(len(data)+len(script))+100 {
					b = 0 // enough: read the rest
				}
				switch b % 5 {
				case 0:
					n := int(at(2000+i))%(2*limit) - 1 // -1 (to EOF), 0, 1...
					if i > 4*(len(data)+len(script))+100 {
						n = -1
					}
					out, err := r.Read(t, n)
					if err != nil {
						return 0, fmt.Errorf("Read(%d): %v", n, err)
					}
					if err := check(fmt.Sprintf("Read(%d)", n), out, false); err != nil {
						return 0, err
					}
					if n > 0 && (len(out) > n || len(out) == 0 && !r.AtEOF()) {
						return 0, fmt.Errorf("Read(%d) returned %d bytes", n, len(out))
					}
				case 1:
					n := int(at(2000+i)) % (limit + 3)
					out, err := r.ReadExactly(t, n)
					var ie *IncompleteReadError
					switch {
					case err == nil:
						if len(out) != n {
							return 0, fmt.Errorf("ReadExactly(%d) returned %d bytes", n, len(out))
						}
						if err := check("ReadExactly", out, false); err != nil {
							return 0, err
						}
					case errors.As(err, &ie):
						if err := check("ReadExactly (incomplete)", ie.Partial, false); err != nil {
							return 0, err
						}
					default:
						return 0, fmt.Errorf("ReadExactly(%d): %v", n, err)
					}
				case 2, 3:
					sep := []byte{at(2000 + i)}
					if b%5 == 3 {
						sep = []byte("\r\n")
					}
					out, err := r.ReadUntil(t, sep)
					var ie *IncompleteReadError
					var le *LimitOverrunError
					switch {
					case err == nil:
						if !bytes.HasSuffix(out, sep) || bytes.Index(out, sep) != len(out)-len(sep) {
							return 0, fmt.Errorf("ReadUntil(%q) returned %q", sep, out)
						}
						if err := check("ReadUntil", out, false); err != nil {
							return 0, err
						}
					case errors.As(err, &ie):
						if err := check("ReadUntil (incomplete)", ie.Partial, false); err != nil {
							return 0, err
						}
					case errors.As(err, &le):
						check("ReadUntil (overrun)", nil, false) // nothing taken
						out, err := r.Read(t, max(le.Consumed, 1))
						if err != nil {
							return 0, fmt.Errorf("Read after an overrun: %v", err)
						}
						if err := check("Read after an overrun", out, false); err != nil {
							return 0, err
						}
					default:
						return 0, fmt.Errorf("ReadUntil(%q): %v", sep, err)
					}
				case 4:
					out, err := r.ReadLine(t)
					var le *LimitOverrunError
					switch {
					case err == nil:
						if len(out) > 0 && out[len(out)-1] != '\n' && !r.AtEOF() {
							return 0, fmt.Errorf("ReadLine returned %q before EOF", out)
						}
						if err := check("ReadLine", out, false); err != nil {
							return 0, err
						}
					case errors.As(err, &le):
						if err := check("ReadLine (line too long, dropped)", nil, true); err != nil {
							return 0, err
						}
					default:
						return 0, fmt.Errorf("ReadLine: %v", err)
					}
				}
			}
			return 0, nil
		})
		if err := l.RunUntilComplete(reader); err != nil {
			t.Fatal(err)
		}
		if !feeder.Done() || pos != len(data) || len(r.buf) != 0 {
			t.Fatalf("after EOF: feeder done %v, %d of %d bytes taken, %d left", feeder.Done(), pos, len(data), len(r.buf))
		}
	})
}
