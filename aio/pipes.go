//go:build unix

package aio

import (
	"errors"
	"log/slog"
	"os"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Pipe transports (asyncio's _UnixReadPipeTransport and
// _UnixWritePipeTransport, behind loop.connect_read_pipe and
// connect_write_pipe): a Protocol over one direction of a pipe-like file
// descriptor (a pipe, a FIFO, a pty or other character device, a stream
// socket). They share fdTransport's teardown and write flow control with
// the socket transports; what differs is the reading (a read pipe reports
// EOF and is done), the writing (a write pipe has nothing to half-close:
// WriteEOF closes it) and how a write pipe learns that its reader has
// gone (a readable write end, which is the hang-up, as in asyncio).

// maxPipeWrite bounds one write to a pipe.
const maxPipeWrite = 256 * 1024

// pipeMode checks that fd is something a pipe transport can drive
// (asyncio's fstat check) and returns whether it is a socket and whether a
// FIFO.
func pipeMode(fd int, write bool) (isSocket, isFIFO bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, false, os.NewSyscallError("fstat", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return false, true, nil
	case unix.S_IFSOCK:
		return true, false, nil
	case unix.S_IFCHR:
		return false, false, nil
	}
	if write {
		return false, false, &asyncio.ValueError{Msg: "Pipe transport is only for pipes, sockets and character devices"}
	}
	return false, false, &asyncio.ValueError{Msg: "Pipe transport is for pipes/sockets only."}
}

// fileFD returns the descriptor of f without os.File.Fd's side effect of
// putting it in blocking mode.
func fileFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// readPipeTransport is asyncio's _UnixReadPipeTransport.
type readPipeTransport struct {
	fdTransport
	protocol Protocol
	paused   bool
	// raw: fd is a pipe the package made itself, non-blocking for good, so
	// reads may be raw system calls (see rawRead).
	raw bool
}

var _ Transport = (*readPipeTransport)(nil)

// newReadPipeTransport wraps the read end fd (made non-blocking here).
// As in asyncio, ConnectionMade, the registration of the reader and the
// waiter are scheduled with CallSoon, in that order.
func newReadPipeTransport(l *asyncio.Loop, fd int, file *os.File, p Protocol, waiter *asyncio.Future[struct{}]) (*readPipeTransport, error) {
	if _, _, err := pipeMode(fd, false); err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	tr := &readPipeTransport{protocol: p}
	tr.fdTransport.init(l, fd, tr, extraInfo{})
	if file != nil {
		tr.file = file
		tr.extra.pipe = file
	}
	l.CallSoon(func() { tr.protocol.ConnectionMade(tr) })
	l.CallSoon(func() {
		if tr.IsReading() {
			tr.addReader()
		}
	})
	if waiter != nil {
		l.CallSoon(func() { setDone(waiter) })
	}
	return tr, nil
}

// setDone completes a waiter unless it is done already (cancelled).
func setDone(w *asyncio.Future[struct{}]) {
	if !w.Done() {
		w.SetResult(struct{}{})
	}
}

func (tr *readPipeTransport) buffered() int   { return 0 }
func (tr *readPipeTransport) dropBuffer()     {}
func (tr *readPipeTransport) protocolOf() any { return tr.protocol }
func (tr *readPipeTransport) connectionLost(err error) {
	tr.protocol.ConnectionLost(err)
}

func (tr *readPipeTransport) addReader() {
	if err := tr.loop.AddReader(tr.fd, tr.readReady); err != nil {
		tr.fatalError(err, "Fatal error: cannot watch the pipe")
	}
}

// fatalError reports err unless it is EIO, which a pty gives when its
// other side closes (asyncio's read pipe reports every other OSError),
// and closes at once.
func (tr *readPipeTransport) fatalError(err error, msg string) {
	if !errors.Is(err, syscall.EIO) {
		tr.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: err, Transport: tr, Protocol: tr.protocol})
	}
	tr.forceClose(err)
}

func (tr *readPipeTransport) read(p []byte) (int, error) {
	if tr.raw {
		return rawRead(tr.fd, p)
	}
	return unix.Read(tr.fd, p)
}

// readReady reads what the pipe holds: data goes to DataReceived; EOF
// makes the transport close (EOFReceived, then ConnectionLost(nil), on
// the loop; EOFReceived's result does not matter for a pipe).
func (tr *readPipeTransport) readReady() {
	if tr.connLost == 0 {
		tr.readOnce()
	}
}

// readOnce is one read. It returns the bytes it delivered and whether
// there may be more (data was delivered, or the read was interrupted).
func (tr *readPipeTransport) readOnce() (int, bool) {
	bp := readBufPool.Get().(*[]byte)
	n, err := tr.read(*bp)
	var data []byte
	if n > 0 {
		data = append([]byte(nil), (*bp)[:n]...)
	}
	readBufPool.Put(bp)
	switch {
	case err == unix.EINTR:
		return 0, true
	case isWouldBlock(err):
	case err != nil:
		tr.fatalError(os.NewSyscallError("read", err), "Fatal read error on pipe transport")
	case n == 0:
		tr.readEOF()
	default:
		if perr := callProtocol(func() { deliverData(tr.protocol, data) }); perr != nil {
			// asyncio's read pipe calls data_received from its reader
			// callback unguarded: the loop reports the exception and the
			// pipe goes on reading (a socket's is a fatal error instead).
			tr.loop.CallExceptionHandler(asyncio.ExceptionContext{
				Message: "Exception in callback " + methodName(tr.protocol, "DataReceived"),
				Err:     perr,
				Handle:  &asyncio.Handle{}, // asyncio's context has the reader's handle
			})
		}
		return n, true
	}
	return 0, false
}

func (tr *readPipeTransport) readEOF() {
	tr.closing = true
	tr.loop.RemoveReader(tr.fd)
	tr.loop.CallSoon(func() { tr.protocol.EOFReceived() })
	tr.connectionLostSoon(nil)
}

// drain reads what the pipe holds now, and its EOF if every writer is
// gone: a subprocess transport calls it when the child exits, so that the
// output the child wrote before exiting comes before ProcessExited. It
// reads no more than the pipe held when called, then once more (for the
// EOF): a writer that goes on writing (a grandchild in the background)
// cannot keep it, and the loop, for longer; what it writes later comes
// through the reader callback, one read at a time, as asyncio's
// _read_ready reads. A paused or closing transport is left alone.
func (tr *readPipeTransport) drain() {
	held := pipeHeld(tr.fd)
	for tr.IsReading() && tr.connLost == 0 {
		n, more := tr.readOnce()
		if !more || held <= 0 {
			return // EOF, nothing there, an error, or the read after what was held
		}
		held -= n
	}
}

// SetProtocol replaces the protocol.
func (tr *readPipeTransport) SetProtocol(p Protocol) { tr.protocol = p }

// Protocol returns the protocol.
func (tr *readPipeTransport) Protocol() Protocol { return tr.protocol }

// IsReading reports whether reading is neither paused nor stopped.
func (tr *readPipeTransport) IsReading() bool { return !tr.paused && !tr.closing }

// PauseReading stops reading (asyncio's pause_reading).
func (tr *readPipeTransport) PauseReading() {
	if !tr.IsReading() {
		return
	}
	tr.paused = true
	tr.loop.RemoveReader(tr.fd)
}

// ResumeReading undoes PauseReading.
func (tr *readPipeTransport) ResumeReading() {
	if tr.closing || !tr.paused {
		return
	}
	tr.paused = false
	tr.addReader()
}

// errNotWritable is what the write side of a read pipe returns.
func errNotWritable() error { return runtimeErrorf("a read pipe transport is not writable") }

// Write fails: a read pipe has no write side.
func (tr *readPipeTransport) Write([]byte) error { return errNotWritable() }

// WriteLines fails: a read pipe has no write side.
func (tr *readPipeTransport) WriteLines(...[]byte) error { return errNotWritable() }

// WriteEOF fails: a read pipe has no write side.
func (tr *readPipeTransport) WriteEOF() error { return errNotWritable() }

// CanWriteEOF is false.
func (tr *readPipeTransport) CanWriteEOF() bool { return false }

// SetWriteBufferLimits fails: a read pipe has no write side.
func (tr *readPipeTransport) SetWriteBufferLimits(int, int) error { return errNotWritable() }

// writePipeTransport is asyncio's _UnixWritePipeTransport.
type writePipeTransport struct {
	fdTransport
	protocol Protocol
	wbuf     []byte // unsent data; write interest exists iff non-empty
	// borrowed: wbuf is (the rest of) a caller's slice taken by send
	// without a copy; unborrow copies it.
	borrowed bool
	// dropped counts the writes dropped while closing, before
	// ConnectionLost is scheduled: asyncio counts them in _conn_lost, but
	// here connLost > 0 means that ConnectionLost is scheduled, which the
	// flush and the hang-up check, so they are counted apart.
	dropped int
}

var _ Transport = (*writePipeTransport)(nil)

// newWritePipeTransport wraps the write end fd (made non-blocking here).
// For a FIFO or a socket it also watches fd for reading, which reports
// the reader's hang-up (asyncio does the same).
func newWritePipeTransport(l *asyncio.Loop, fd int, file *os.File, p Protocol, waiter *asyncio.Future[struct{}]) (*writePipeTransport, error) {
	isSocket, isFIFO, err := pipeMode(fd, true)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	tr := &writePipeTransport{protocol: p}
	tr.fdTransport.init(l, fd, tr, extraInfo{})
	if file != nil {
		tr.file = file
		tr.extra.pipe = file
	}
	l.CallSoon(func() { tr.protocol.ConnectionMade(tr) })
	if isSocket || isFIFO {
		l.CallSoon(func() {
			if tr.closing {
				return
			}
			if err := l.AddReader(fd, tr.readReady); err != nil {
				tr.fatalError(err, "Fatal error: cannot watch the pipe")
			}
		})
	}
	if waiter != nil {
		l.CallSoon(func() { setDone(waiter) })
	}
	return tr, nil
}

func (tr *writePipeTransport) buffered() int { return len(tr.wbuf) }
func (tr *writePipeTransport) dropBuffer()   { tr.wbuf, tr.borrowed = nil, false }

// unborrow copies what is left of a slice send took without a copy: its
// owner is about to get it back.
func (tr *writePipeTransport) unborrow() {
	if tr.borrowed {
		tr.wbuf, tr.borrowed = append([]byte(nil), tr.wbuf...), false
	}
}
func (tr *writePipeTransport) protocolOf() any { return tr.protocol }
func (tr *writePipeTransport) connectionLost(err error) {
	tr.protocol.ConnectionLost(err)
}

// errBrokenPipe is asyncio's BrokenPipeError for a reader that went away
// with data still buffered.
var errBrokenPipe = os.NewSyscallError("write", syscall.EPIPE)

// readReady means the reader has gone (a write end is never readable
// otherwise).
func (tr *writePipeTransport) readReady() {
	if tr.connLost > 0 {
		return
	}
	if len(tr.wbuf) > 0 {
		tr.forceClose(errBrokenPipe)
	} else {
		tr.forceClose(nil)
	}
}

// peerGone reports whether the reader has closed its end, without waiting
// (a subprocess transport asks when the child exits).
func (tr *writePipeTransport) peerGone() bool {
	fds := []unix.PollFd{{Fd: int32(tr.fd), Events: 0}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}

func (tr *writePipeTransport) write(p []byte) (int, error) {
	// A pipe takes 64 KiB at a time (by default): offering it more only
	// costs (the race detector checks the whole buffer on every call).
	p = p[:min(len(p), maxPipeWrite)]
	for {
		n, err := unix.Write(tr.fd, p)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

// Write sends data, buffering what the pipe does not take now. After the
// pipe is closed, closing, or lost, writes are dropped (a warning is
// logged from the fifth on), as in asyncio.
func (tr *writePipeTransport) Write(data []byte) error { return tr.send(data, false) }

// send is Write; with owned, data is the caller's to leave alone until it
// is written (Communicate's input, which the caller cannot touch while
// Communicate runs): into an empty buffer it is then taken without a copy.
func (tr *writePipeTransport) send(data []byte, owned bool) error {
	if len(data) == 0 {
		return nil
	}
	if tr.connLost > 0 || tr.closing {
		if tr.connLost+tr.dropped >= logThresholdForConnLostWrites {
			slog.Warn("pipe closed by peer or os.write(pipe, data) raised exception.")
		}
		if tr.connLost > 0 {
			tr.connLost++
		} else {
			tr.dropped++ // the buffer still flushes, then ConnectionLost
		}
		return nil
	}
	if len(tr.wbuf) == 0 {
		n, err := tr.write(data)
		switch {
		case err == nil:
			data = data[n:]
			if len(data) == 0 {
				return nil
			}
		case isWouldBlock(err):
		default:
			tr.fatalError(os.NewSyscallError("write", err), "Fatal write error on pipe transport")
			return nil
		}
		if err := tr.loop.AddWriter(tr.fd, tr.writeReady); err != nil {
			tr.fatalError(err, "Fatal error: cannot watch the pipe")
			return nil
		}
	}
	if owned && len(tr.wbuf) == 0 {
		// Capped: a later append reallocates instead of writing past it.
		tr.wbuf, tr.borrowed = data[:len(data):len(data)], true
	} else {
		tr.wbuf = append(tr.wbuf, data...)
		tr.borrowed = false // append copied it (len == cap)
	}
	tr.maybePause(len(tr.wbuf), tr.protocol)
	return nil
}

// WriteLines writes each chunk in turn.
func (tr *writePipeTransport) WriteLines(chunks ...[]byte) error { return writeEach(tr.Write, chunks) }

func (tr *writePipeTransport) writeReady() {
	if len(tr.wbuf) == 0 {
		tr.loop.RemoveWriter(tr.fd)
		return
	}
	n, err := tr.write(tr.wbuf)
	if isWouldBlock(err) {
		return
	}
	if err != nil {
		tr.dropBuffer()
		tr.loop.RemoveWriter(tr.fd)
		tr.fatalError(os.NewSyscallError("write", err), "Fatal write error on pipe transport")
		return
	}
	tr.wbuf = tr.wbuf[n:]
	if len(tr.wbuf) > 0 {
		return
	}
	tr.wbuf, tr.borrowed = nil, false
	tr.loop.RemoveWriter(tr.fd)
	tr.maybeResume(0, tr.protocol) // may write more
	if tr.closing && len(tr.wbuf) == 0 && tr.connLost == 0 {
		tr.loop.RemoveReader(tr.fd)
		tr.connectionLostNow(nil)
	}
}

// WriteEOF closes the pipe once the buffer is flushed: a pipe has no half
// close (asyncio's write_eof).
func (tr *writePipeTransport) WriteEOF() error {
	tr.Close()
	return nil
}

// CanWriteEOF is true.
func (tr *writePipeTransport) CanWriteEOF() bool { return true }

// SetProtocol replaces the protocol.
func (tr *writePipeTransport) SetProtocol(p Protocol) { tr.protocol = p }

// Protocol returns the protocol.
func (tr *writePipeTransport) Protocol() Protocol { return tr.protocol }

// PauseReading does nothing: a write pipe does not read.
func (tr *writePipeTransport) PauseReading() {}

// ResumeReading does nothing: a write pipe does not read.
func (tr *writePipeTransport) ResumeReading() {}

// IsReading is false: a write pipe does not read.
func (tr *writePipeTransport) IsReading() bool { return false }

// connectPipe is connect_read_pipe / connect_write_pipe: the transport
// made by mk with the factory's protocol, once ConnectionMade has run.
func connectPipe[Tr BaseTransport](t *asyncio.T, factory func() Protocol, f *os.File, what string,
	mk func(l *asyncio.Loop, fd int, f *os.File, p Protocol, w *asyncio.Future[struct{}]) (Tr, error)) (Tr, Protocol, error) {
	var zero Tr
	if factory == nil {
		return zero, nil, &asyncio.ValueError{Msg: what + ": nil protocol factory"}
	}
	if f == nil {
		return zero, nil, &asyncio.ValueError{Msg: what + ": nil file"}
	}
	fd, err := fileFD(f)
	if err != nil {
		// A closed f (internal/poll's bare "use of closed file", which
		// matches nothing): asyncio's ValueError "I/O operation on
		// closed file", from pipe.fileno().
		return zero, nil, &asyncio.ValueError{Msg: what + ": " + f.Name() + " is closed"}
	}
	l := t.Loop()
	p, err := newProtocol(what, factory)
	if err != nil {
		return zero, nil, err // f is not taken over yet: still the caller's
	}
	waiter := asyncio.NewFuture[struct{}](l)
	tr, err := mk(l, fd, f, p, waiter)
	if err != nil {
		return zero, nil, err
	}
	if _, err := waiter.Await(t); err != nil {
		tr.Close()
		return zero, nil, err
	}
	return tr, p, nil
}

// ConnectReadPipe drives the read end of a pipe-like file with a protocol
// (asyncio's loop.connect_read_pipe): os.Pipe's reader, a FIFO, a pty, a
// character device or a stream socket. The transport takes f over: f is
// made non-blocking (which affects every holder of the same open file, a
// terminal's too, as in asyncio) and closed after ConnectionLost. The
// protocol gets ConnectionMade, DataReceived for each chunk, and at EOF
// EOFReceived then ConnectionLost(nil); PauseReading and ResumeReading
// give the same flow control as a socket's. A nil factory or f, a closed
// f, or a file of another kind (a regular file), is a *ValueError.
func ConnectReadPipe(t *asyncio.T, factory func() Protocol, f *os.File) (ReadTransport, Protocol, error) {
	return connectPipe(t, factory, f, "ConnectReadPipe", func(l *asyncio.Loop, fd int, f *os.File, p Protocol, w *asyncio.Future[struct{}]) (ReadTransport, error) {
		tr, err := newReadPipeTransport(l, fd, f, p, w)
		if err != nil {
			return nil, err
		}
		return tr, nil
	})
}

// ConnectWritePipe drives the write end of a pipe-like file with a
// protocol (asyncio's loop.connect_write_pipe). Writes never block: what
// the pipe does not take is buffered, with the socket transports' water
// marks (a protocol implementing WriteFlowControl is paused and resumed;
// a StreamWriter's Drain waits). When the reader goes away the transport
// closes, with ConnectionLost(err) where err matches syscall.EPIPE if data
// was still buffered (asyncio's BrokenPipeError). WriteEOF and Close close
// the pipe once the buffer is flushed. Ownership and errors as for
// ConnectReadPipe.
func ConnectWritePipe(t *asyncio.T, factory func() Protocol, f *os.File) (WriteTransport, Protocol, error) {
	return connectPipe(t, factory, f, "ConnectWritePipe", func(l *asyncio.Loop, fd int, f *os.File, p Protocol, w *asyncio.Future[struct{}]) (WriteTransport, error) {
		tr, err := newWritePipeTransport(l, fd, f, p, w)
		if err != nil {
			return nil, err
		}
		return tr, nil
	})
}
