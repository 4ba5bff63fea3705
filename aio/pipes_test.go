//go:build unix

package aio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Pipe transports (pipes.go) on real pipes, a FIFO and (pipes_linux_test)
// a pty; every test ends with clean.

// osPipe returns an os.Pipe; the test closes what the transports do not
// take over.
func osPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// A read pipe delivers what is written, then at EOF EOFReceived and
// ConnectionLost(nil), and closes the file it took over.
func TestPipes_ReadPipeDataThenEOF(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := newStreamRecorder(at, "read", &log)
		tr, _, err := ConnectReadPipe(at, func() Protocol { return p }, r)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("pipe info is the file: %v", tr.ExtraInfo("pipe") == r))
		w.Write([]byte("hello"))
		w.Close()
		if _, err := p.lost.Await(at); err != nil {
			return err
		}
		_, err = r.Stat()
		log = append(log, fmt.Sprintf("file closed: %v", err != nil))
		return nil
	})
	expectLog(t, []string{"read:made", "pipe info is the file: true", "read:data hello", "read:eof", "read:lost <nil>", "file closed: true"}, log)
}

// PauseReading stops DataReceived until ResumeReading, as on a socket.
func TestPipes_PauseAndResumeReading(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	defer w.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := newStreamRecorder(at, "read", &log)
		got := asyncio.NewFuture[struct{}](at)
		p.onData = func(p *streamRecorder, d []byte) {
			p.add("data " + string(d))
			if !got.Done() {
				got.SetResult(struct{}{})
			}
		}
		tr, _, err := ConnectReadPipe(at, func() Protocol { return p }, r)
		if err != nil {
			return err
		}
		tr.PauseReading()
		log = append(log, fmt.Sprintf("reading: %v, watched: %v", tr.IsReading(), watchingRead(at.Loop(), int(r.Fd()))))
		w.Write([]byte("held"))
		for range 3 { // iterations in which the data would have come
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		log = append(log, "resume")
		tr.ResumeReading()
		if _, err := got.Await(at); err != nil {
			return err
		}
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
	expectLog(t, []string{"read:made", "reading: false, watched: false", "resume", "read:data held", "read:lost <nil>"}, log)
}

// A write pipe buffers what the pipe does not take and pauses the
// protocol above the high water mark; the reader gets every byte, in
// order; a StreamWriter over it (NewStreamWriter) drains.
func TestPipes_WritePipeFlowControl(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i % 251)
	}
	runNet(t, func(at *asyncio.T) error {
		reader := NewStreamReader(at, DefaultStreamLimit)
		if _, _, err := ConnectReadPipe(at, func() Protocol { return NewStreamReaderProtocol(reader) }, r); err != nil {
			return err
		}
		proto := NewStreamReaderProtocol(NewStreamReader(at, DefaultStreamLimit))
		tr, _, err := ConnectWritePipe(at, func() Protocol { return proto }, w)
		if err != nil {
			return err
		}
		sw := NewStreamWriter(tr, proto, nil)
		sw.Write(data)
		log = append(log, fmt.Sprintf("buffered beyond the pipe: %v, paused: %v", tr.WriteBufferSize() > 0, proto.(*streamProtocol).paused))
		drained := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, sw.Drain(t) })
		got, err := reader.ReadExactly(at, len(data))
		if err != nil {
			return err
		}
		if _, err := drained.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("read back: %v; buffer %d", bytes.Equal(got, data), tr.WriteBufferSize()))
		sw.Close()
		if err := sw.WaitClosed(at); err != nil {
			return err
		}
		end, err := reader.Read(at, -1)
		log = append(log, fmt.Sprintf("then EOF: %q %v", end, err))
		return nil
	})
	expectLog(t, []string{"buffered beyond the pipe: true, paused: true", "read back: true; buffer 0", `then EOF: "" <nil>`}, log)
}

// When the reader goes away, a write pipe closes: with data still
// buffered, ConnectionLost gets EPIPE (asyncio's BrokenPipeError), else
// nil; later writes are dropped.
func TestPipes_WritePipeReaderGone(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, size := range []int{1 << 20, 0} {
			r, w := osPipe(t)
			p := newStreamRecorder(at, fmt.Sprint(size), &log)
			tr, _, err := ConnectWritePipe(at, func() Protocol { return p }, w)
			if err != nil {
				return err
			}
			tr.Write(make([]byte, size))
			r.Close()
			if _, err := p.lost.Await(at); err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("write after: %v, closing: %v", tr.Write([]byte("x")), tr.IsClosing()))
		}
		return nil
	})
	expectLog(t, []string{
		"1048576:made", "1048576:pause writing", "1048576:lost syscall=write EPIPE", "write after: <nil>, closing: true",
		"0:made", "0:lost <nil>", "write after: <nil>, closing: true",
	}, log)
}

// What a pipe transport cannot drive, and misuse, fail with clear errors.
func TestPipes_BadInput(t *testing.T) {
	clean(t)
	var log []string
	regular, err := os.Create(filepath.Join(t.TempDir(), "regular"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	r, w := osPipe(t)
	runNet(t, func(at *asyncio.T) error {
		f := func() Protocol { return newStreamRecorder(at, "p", &log) }
		_, _, err := ConnectReadPipe(at, f, regular)
		log = append(log, "read a regular file: "+describe(err))
		_, _, err = ConnectWritePipe(at, f, regular)
		log = append(log, "write a regular file: "+describe(err))
		_, _, err = ConnectReadPipe(at, f, nil)
		log = append(log, "nil file: "+describe(err))
		_, _, err = ConnectWritePipe(at, nil, w)
		log = append(log, "nil factory: "+describe(err))
		tr, p, err := ConnectReadPipe(at, f, r)
		if err != nil {
			return err
		}
		log = append(log, "write on a read pipe: "+describe(tr.(Transport).Write([]byte("x"))))
		tr.Close()
		_, err = p.(*streamRecorder).lost.Await(at)
		return err
	})
	w.Close()
	expectLog(t, []string{
		"read a regular file: ValueError Pipe transport is for pipes/sockets only.",
		"write a regular file: ValueError Pipe transport is only for pipes, sockets and character devices",
		"nil file: ValueError ConnectReadPipe: nil file",
		"nil factory: ValueError ConnectWritePipe: nil protocol factory",
		"p:made",
		"write on a read pipe: RuntimeError a read pipe transport is not writable",
		"p:lost <nil>",
	}, log)
}

// A FIFO works in both directions, as a pipe does.
func TestPipes_FIFO(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR opens without waiting for the other side (Linux and BSD).
	rf, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	runNet(t, func(at *asyncio.T) error {
		rp := newStreamRecorder(at, "r", &log)
		got := asyncio.NewFuture[struct{}](at)
		rp.onData = func(p *streamRecorder, d []byte) { p.add("data " + string(d)); got.SetResult(struct{}{}) }
		rt, _, err := ConnectReadPipe(at, func() Protocol { return rp }, rf)
		if err != nil {
			return err
		}
		wp := newStreamRecorder(at, "w", &log)
		wt, _, err := ConnectWritePipe(at, func() Protocol { return wp }, wf)
		if err != nil {
			return err
		}
		wt.Write([]byte("through the fifo"))
		if _, err := got.Await(at); err != nil {
			return err
		}
		wt.Close()
		rt.Close()
		if _, err := wp.lost.Await(at); err != nil {
			return err
		}
		_, err = rp.lost.Await(at)
		return err
	})
	expectLog(t, []string{"r:made", "w:made", "r:data through the fifo", "w:lost <nil>", "r:lost <nil>"}, log)
}

// A loop that closes with pipe transports still open closes their files.
func TestPipes_LoopCloseClosesPipes(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var rfd, wfd int
	runNet(t, func(at *asyncio.T) error {
		var log []string
		if _, _, err := ConnectReadPipe(at, func() Protocol { return newStreamRecorder(at, "r", &log) }, r); err != nil {
			return err
		}
		if _, _, err := ConnectWritePipe(at, func() Protocol { return newStreamRecorder(at, "w", &log) }, w); err != nil {
			return err
		}
		rfd, wfd = int(r.Fd()), int(w.Fd())
		return nil
	})
	for _, fd := range []int{rfd, wfd} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != syscall.EBADF {
			t.Errorf("fd %d still open after the loop closed (%v)", fd, err)
		}
	}
}

// panickyReader panics on its first chunk and records the rest.
type panickyReader struct {
	BaseProtocol
	chunks []string
	lost   *asyncio.Future[error]
}

func (p *panickyReader) DataReceived(b []byte) {
	p.chunks = append(p.chunks, string(b))
	if len(p.chunks) == 1 {
		panic("first chunk")
	}
}

func (p *panickyReader) ConnectionLost(err error) { _ = p.lost.SetResult(err) }

// A panic in a read pipe's DataReceived is reported, named after the
// protocol's method, and the pipe goes on reading, as asyncio's read pipe
// does (it calls data_received from its reader callback unguarded); it
// used to be a fatal error that closed the pipe and lost the rest.
func TestPipes_ReadPipeDataReceivedPanicKeepsReading(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var reports []string
	runNet(t, func(at *asyncio.T) error {
		reported := asyncio.NewFuture[struct{}](at)
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
			reports = append(reports, c.Message+": "+fmt.Sprint(c.Err))
			_ = reported.SetResult(struct{}{})
		})
		p := &panickyReader{lost: asyncio.NewFuture[error](at)}
		if _, _, err := ConnectReadPipe(at, func() Protocol { return p }, r); err != nil {
			return err
		}
		w.Write([]byte("a"))
		if _, err := reported.Await(at); err != nil {
			return err
		}
		w.Write([]byte("b"))
		w.Close()
		lostErr, err := p.lost.Await(at)
		if err != nil {
			return err
		}
		if fmt.Sprint(p.chunks) != "[a b]" || lostErr != nil {
			t.Errorf("chunks %q, lost with %v; want [a b], nil", p.chunks, lostErr)
		}
		return nil
	})
	want := "Exception in callback github.com/go-asyncio/asyncio/aio.(*panickyReader).DataReceived: asyncio: panic: first chunk"
	if len(reports) != 1 || reports[0] != want {
		t.Errorf("reports %q, want [%q]", reports, want)
	}
}

// A write that fails at once (the reader closed its end before the write
// pipe's watch saw it) closes the pipe with the error: ConnectionLost
// gets EPIPE, so Drain reports the lost connection and WaitClosed the
// EPIPE, as CPython 3.13 does (recorded). The failing write used to count
// the connection as lost before closing it, which made the close return
// early: ConnectionLost never ran and Drain returned nil.
func TestWritePipe_ImmediateWriteErrorReachesConnectionLost(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		proto := NewStreamReaderProtocol(NewStreamReader(at, DefaultStreamLimit))
		tr, _, err := ConnectWritePipe(at, func() Protocol { return proto }, w)
		if err != nil {
			return err
		}
		sw := NewStreamWriter(tr, proto, nil)
		r.Close() // in the same step: the loop has not polled the hang-up
		_ = sw.Write([]byte("to nobody"))
		log = append(log, "drain: "+describe(sw.Drain(at)))
		log = append(log, "wait closed: "+describe(sw.WaitClosed(at)))
		return nil
	})
	expectLog(t, []string{"drain: ECONNRESET", "wait closed: syscall=write EPIPE"}, log)
}
