//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// This file holds asyncio's loop.sock_sendfile and loop.sendfile
// (base_events.py, selector_events.py, unix_events.py of CPython 3.13):
// SockSendfile sends a file over a stream socket, Sendfile over a
// transport. Both try the sendfile(2) system call first where the
// platform has it for sockets (sendfile_linux.go), and fall back to
// reading the file on the loop's default executor and writing what was
// read.

// sendfileFallbackReadBufferSize is asyncio's
// constants.SENDFILE_FALLBACK_READBUFFER_SIZE: the block SockSendfile's
// fallback reads at once.
const sendfileFallbackReadBufferSize = 256 * 1024

// sendfileTransportBlockSize is the block Sendfile's fallback reads and
// writes at once (asyncio's _sendfile_fallback: 16384).
const sendfileTransportBlockSize = 16 * 1024

// SendfileNotAvailableError is asyncio.SendfileNotAvailableError: the
// sendfile(2) system call cannot send this file over this socket (the
// platform has none for sockets, the file is not a regular file, the call
// failed before sending anything). SockSendfile and Sendfile return it
// when fallback is false; with fallback true they read and write the file
// instead. As in asyncio, where it is a RuntimeError subclass, it matches
// asyncio.ErrRuntime (errors.Is) and is a *asyncio.RuntimeError for
// errors.As (and so for Except[*asyncio.RuntimeError]). Err, when set, is
// the system call's error.
type SendfileNotAvailableError struct {
	asyncio.RuntimeError
}

// As makes the error a *asyncio.RuntimeError for errors.As, which the
// embedded value alone is not.
func (e *SendfileNotAvailableError) As(target any) bool {
	if p, ok := target.(**asyncio.RuntimeError); ok {
		*p = &e.RuntimeError
		return true
	}
	return false
}

func errSendfileNotAvailable(msg string, err error) *SendfileNotAvailableError {
	return &SendfileNotAvailableError{asyncio.RuntimeError{Msg: msg, Err: err}}
}

// errSendfileConnClosed is asyncio's ConnectionError("Connection is
// closed by peer") of a transport lost while Sendfile waits on it;
// errSendfileDrainClosed is the fallback's ConnectionError("Connection
// closed by peer") for a transport found closing between two blocks.
// Both match syscall.ECONNRESET, the package's spelling of a connection
// error without an errno.
var (
	errSendfileConnClosed  error = &osLikeError{msg: "Connection is closed by peer", errs: []error{syscall.ECONNRESET}}
	errSendfileDrainClosed error = &osLikeError{msg: "Connection closed by peer", errs: []error{syscall.ECONNRESET}}
)

// checkSendfileParams is asyncio's _check_sendfile_params, on arguments
// that were already checked to be ints. count 0 is asyncio's None (to the
// end of the file); a negative count is asyncio's "must be a positive
// integer", the one case of it Go's int64 lets through.
func checkSendfileParams(f *os.File, offset, count int64) error {
	if f == nil {
		return &asyncio.ValueError{Msg: "file must be an open *os.File (got nil)"}
	}
	if _, err := f.Stat(); errors.Is(err, os.ErrClosed) {
		// asyncio's file.fileno() on a closed file; not a file sendfile(2)
		// cannot send, for the fallback to try.
		return &asyncio.ValueError{Msg: "I/O operation on closed file"}
	}
	if count < 0 {
		return &asyncio.ValueError{Msg: fmt.Sprintf("count must be a positive integer (got %d)", count)}
	}
	if offset < 0 {
		return &asyncio.ValueError{Msg: fmt.Sprintf("offset must be a non-negative integer (got %d)", offset)}
	}
	return nil
}

// checkStreamSocket is the SOCK_STREAM check of _check_sendfile_params:
// fd must be a stream socket (a pipe or a file is not a socket, and is
// refused the same way).
func checkStreamSocket(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil && err != unix.ENOTSOCK {
		return os.NewSyscallError("getsockopt", err)
	}
	if err != nil || typ != unix.SOCK_STREAM {
		return &asyncio.ValueError{Msg: "only SOCK_STREAM type sockets are supported"}
	}
	return nil
}

// SockSendfile sends the file f over the non-blocking stream socket fd,
// suspending t while the socket's send buffer is full, and returns the
// number of bytes sent (asyncio's loop.sock_sendfile).
//
// offset is where in the file to start; count how many bytes to send at
// most, 0 meaning to the end of the file. count 0 is asyncio's
// count=None, Go's zero value for "not given": asyncio refuses count=0
// ("must be a positive integer"), but sending nothing has no use, and a
// separate option for None would make every call longer. A negative
// count or offset, a nil or closed f, or an fd that is not a stream socket is a
// *asyncio.ValueError with asyncio's message, returned before anything is
// done; in debug mode a blocking fd is one too.
//
// Where the platform has sendfile(2) for sockets (Linux) it is used
// first: the data goes from the file to the socket in the kernel, the
// file's position is not used, and afterwards it is set to offset plus
// the bytes sent (when any were). When sendfile(2) cannot serve this pair
// (another platform, a file it cannot map, a first call that fails) the
// error is a *SendfileNotAvailableError; with fallback true SockSendfile
// then reads the file in blocks of 256 KiB on the loop's default executor
// (asyncio.ToThread) and sends them as SockSendall does, with fallback
// false it returns that error. As in asyncio, the fallback seeks to
// offset only when offset is not 0: with offset 0 it sends from the
// file's current position, and leaves the position at the bytes sent.
// Only regular files are sent natively: fstat's size is how much is sent
// when count is 0, so a pipe sends nothing, as in asyncio.
//
// On an error the bytes sent so far are returned with it, and the file
// position says the same (offset plus them). If t is cancelled, the wait
// ends at once, the position is updated likewise and the count is
// returned with the cancellation; unlike asyncio, whose fallback counts a
// block only once it is sent whole, a block cut short counts for the
// bytes of it the socket took.
func SockSendfile(t *asyncio.T, fd int, f *os.File, offset, count int64, fallback bool) (int64, error) {
	if err := checkNonBlocking(t, fd, "SockSendfile"); err != nil {
		return 0, err
	}
	if err := checkSendfileParams(f, offset, count); err != nil {
		return 0, err
	}
	if err := checkStreamSocket(fd); err != nil {
		return 0, err
	}
	n, err := sockSendfileNative(fd, f, offset, count, func() error { return waitIO(t, fd, true) })
	var na *SendfileNotAvailableError
	if err == nil || !errors.As(err, &na) {
		return n, err
	}
	if !fallback {
		return 0, err
	}
	return sockSendfileFallback(t, fd, f, offset, count)
}

// sockSendfileNative is asyncio's _sock_sendfile_native and
// _sock_sendfile_native_impl: sendfile(2) from offset until count bytes
// (0: the file's size at the start) are sent or the file ends, calling
// wait for the socket to be writable after each call that sent something
// or would block. A first call that fails is a
// *SendfileNotAvailableError; an ENOTCONN after a wait (the connection
// was closed meanwhile) becomes asyncio's ConnectionError "socket is not
// connected", which still matches syscall.ENOTCONN. The file position is
// offset plus what was sent when anything was, whatever the outcome.
func sockSendfileNative(fd int, f *os.File, offset, count int64, wait func() error) (total int64, err error) {
	if !haveSendfile {
		return 0, errSendfileNotAvailable("os.sendfile() is not available", nil)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, errSendfileNotAvailable("not a regular file", err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, errSendfileNotAvailable("not a regular file", err)
	}
	blocksize := count
	if blocksize == 0 {
		blocksize = st.Size()
	}
	if blocksize == 0 {
		return 0, nil // empty file
	}
	defer func() {
		if total > 0 {
			if _, serr := f.Seek(offset+total, io.SeekStart); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	waited := false
	for {
		if count > 0 {
			blocksize = count - total
			if blocksize <= 0 {
				return total, nil
			}
		}
		blocksize = min(blocksize, 1<<30) // asyncio's 32-bit bound; the kernel sends less anyway
		var sent int
		var serr error
		off := offset + total
		if cerr := rc.Control(func(ffd uintptr) { sent, serr = sendfileSyscall(fd, int(ffd), &off, int(blocksize)) }); cerr != nil {
			serr = cerr
		}
		switch {
		case serr == nil && sent == 0:
			return total, nil // EOF
		case serr == nil:
			total += int64(sent)
		case serr == unix.EINTR || isWouldBlock(serr):
		default:
			err := error(os.NewSyscallError("sendfile", serr))
			if waited && serr == unix.ENOTCONN {
				err = &osLikeError{msg: "socket is not connected", errs: []error{syscall.ENOTCONN, err}}
			}
			if total == 0 {
				return 0, errSendfileNotAvailable("os.sendfile call failed", err)
			}
			return total, err
		}
		if err := wait(); err != nil {
			return total, err
		}
		waited = true
	}
}

// fileBlocks reads a file in blocks for the fallbacks, on the loop's
// default executor. It reads at explicit positions (ReadAt) when the file
// has them, so that a read still running on its goroutine after a
// cancellation cannot move the position the caller sets.
type fileBlocks struct {
	f        *os.File
	pos      int64
	seekable bool
}

// newFileBlocks seeks to offset unless it is 0 (asyncio's "if offset:
// file.seek(offset)"), and starts reading at the file's position.
func newFileBlocks(f *os.File, offset int64) (*fileBlocks, error) {
	if offset != 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, err
		}
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	return &fileBlocks{f: f, pos: pos, seekable: err == nil}, nil
}

// read fills a new buffer of size bytes as far as the file goes; 0 at
// the end of the file.
func (r *fileBlocks) read(t *asyncio.T, size int) ([]byte, error) {
	buf := make([]byte, size) // not reused: a cancelled read may still write to it
	f, pos, seekable := r.f, r.pos, r.seekable
	n, err := asyncio.ToThread(t, func(context.Context) (int, error) {
		var n int
		var err error
		if seekable {
			n, err = f.ReadAt(buf, pos)
		} else {
			n, err = f.Read(buf)
		}
		if err == io.EOF {
			err = nil
		}
		return n, err
	})
	if err != nil {
		return nil, err
	}
	r.pos += int64(n)
	return buf[:n], nil
}

// next reads the fallbacks' next block: at most max bytes, and no more
// than count (0: no limit) less the total already sent. It is empty once
// count is reached or at the end of the file.
func (r *fileBlocks) next(t *asyncio.T, count, total int64, max int) ([]byte, error) {
	size := int64(max)
	if count > 0 {
		if size = min(count-total, size); size <= 0 {
			return nil, nil
		}
	}
	return r.read(t, int(size))
}

// setFilePos is the fallbacks' final "file.seek(offset + total_sent)", done
// only when something was sent.
func setFilePos(f *os.File, offset, total int64, err *error) {
	if total <= 0 {
		return
	}
	if _, serr := f.Seek(offset+total, io.SeekStart); serr != nil && *err == nil {
		*err = serr
	}
}

// sockSendfileFallback is asyncio's _sock_sendfile_fallback: blocks of
// at most 256 KiB read on the executor and sent as SockSendall sends,
// counted as the socket takes them.
func sockSendfileFallback(t *asyncio.T, fd int, f *os.File, offset, count int64) (total int64, err error) {
	r, err := newFileBlocks(f, offset)
	if err != nil {
		return 0, err
	}
	defer func() { setFilePos(f, offset, total, &err) }()
	for {
		data, err := r.next(t, count, total, sendfileFallbackReadBufferSize)
		if err != nil || len(data) == 0 {
			return total, err
		}
		n, err := sockSendall(t, fd, data)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// Sendfile sends the file f over the transport tr and returns the number
// of bytes sent (asyncio's loop.sendfile). offset, count (0: to the end
// of the file) and fallback are as for SockSendfile, and so are the
// argument errors, returned before the transport is touched.
//
// A closing transport is a *asyncio.RuntimeError "Transport is closing".
// Over a socket transport (TCP or Unix, without TLS) it tries
// sendfile(2): reading is paused, the write buffer is flushed first (a
// Write meanwhile is a *asyncio.RuntimeError "unable to write; sendfile
// is in progress"), the file goes straight to the socket, and reading is
// resumed if it was on. A TLS transport, and a socket transport where
// sendfile(2) is not available (with fallback true), get the fallback:
// the transport's protocol is swapped for one that pauses reading and
// follows the write flow control, the file is read in 16 KiB blocks on
// the executor and written with Write (each waits while the protocol is
// paused for writing, so the buffer stays near the high water mark), and
// at the end the original protocol is put back, reading resumed if it was
// on and ResumeWriting called if it was paused. With fallback false and no
// native path it is a *asyncio.RuntimeError "fallback is disabled and
// native sendfile is not supported for transport ..."; the native path's
// own refusal is then the *SendfileNotAvailableError. Another transport
// (a pipe, one not of this package) is a *asyncio.RuntimeError
// "sendfile is not supported for transport ...".
//
// On an error, or if t is cancelled, the bytes sent so far are returned
// with it and the file position is offset plus them; the transport keeps
// its protocol, its reading state, and can be written to again.
func Sendfile(t *asyncio.T, tr Transport, f *os.File, offset, count int64, fallback bool) (int64, error) {
	if tr == nil {
		return 0, &asyncio.ValueError{Msg: "transport must not be nil"}
	}
	if tr.IsClosing() {
		return 0, runtimeErrorf("Transport is closing")
	}
	ft, ok := tr.(sendfileTransport)
	if !ok {
		return 0, runtimeErrorf("sendfile is not supported for transport %s", transportRepr(tr))
	}
	if err := checkSendfileParams(f, offset, count); err != nil {
		return 0, err
	}
	if st, ok := tr.(*socketTransport); ok {
		n, err := st.sendfileNative(t, f, offset, count)
		var na *SendfileNotAvailableError
		if err == nil || !errors.As(err, &na) {
			return n, err
		}
		if !fallback {
			return 0, err
		}
	}
	if !fallback {
		return 0, runtimeErrorf("fallback is disabled and native sendfile is not supported for transport %s", transportRepr(tr))
	}
	return sendfileFallback(t, ft, f, offset, count)
}

// transportRepr is asyncio's {transport!r} in a message: the transport's
// String if it has one, else its type.
func transportRepr(tr Transport) string {
	if s, ok := tr.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("<%T>", tr)
}

// sendfileTransport is a transport Sendfile can write a file to: the
// socket and TLS transports (asyncio's _FlowControlMixin transports with
// _sendfile_compatible set).
type sendfileTransport interface {
	Transport
	// writingPaused is asyncio's _protocol_paused.
	writingPaused() bool
}

func (tr *socketTransport) writingPaused() bool { return tr.protocolPaused }
func (tr *tlsTransport) writingPaused() bool    { return tr.raw.socket().protocolPaused }

// sendfileState is a socket transport's sendfile in progress (asyncio's
// _empty_waiter, and the sendfile's write interest): while it is set,
// Write is refused; the transport tells it when its buffer empties or its
// write fails (bufferDone) and when the connection is lost (lost).
type sendfileState struct {
	waiter    *asyncio.Future[struct{}] // the wait in progress, if any
	waitEmpty bool                      // waiter waits for the buffer to empty
	lostErr   error                     // set once the connection is lost
}

// notifySendfile is called by writeReady when the buffer emptied (err
// nil) or a write failed.
func (tr *socketTransport) notifySendfile(err error) {
	s := tr.sendfile
	if s == nil || !s.waitEmpty || s.waiter == nil || s.waiter.Done() {
		return
	}
	if err != nil {
		s.waiter.SetException(err)
	} else {
		s.waiter.SetResult(struct{}{})
	}
}

// sendfileLost is called when the connection is lost: the fd is closed
// after it, and has no interest registered any more.
func (tr *socketTransport) sendfileLost() {
	s := tr.sendfile
	if s == nil {
		return
	}
	s.lostErr = errSendfileConnClosed
	if s.waiter != nil && !s.waiter.Done() {
		s.waiter.SetException(errSendfileConnClosed)
	}
}

// sendfileNative is asyncio's selector _sendfile_native: pause reading,
// wait for the write buffer to empty, sendfile(2) on the socket, resume
// reading. Unlike asyncio, the wait for the empty buffer is undone like
// the rest when t is cancelled during it, and the transport's loss ends
// the transfer at once (asyncio's would wait for ever).
func (tr *socketTransport) sendfileNative(t *asyncio.T, f *os.File, offset, count int64) (int64, error) {
	if tr.sendfile != nil {
		return 0, runtimeErrorf("Empty waiter is already set")
	}
	if !haveSendfile {
		return 0, errSendfileNotAvailable("os.sendfile() is not available", nil)
	}
	l := t.Loop()
	s := &sendfileState{}
	resume := tr.IsReading()
	tr.PauseReading()
	tr.sendfile = s
	defer func() {
		tr.sendfile = nil
		if resume {
			tr.ResumeReading()
		}
	}()
	if tr.wbuf.len() > 0 {
		s.waiter, s.waitEmpty = asyncio.NewFuture[struct{}](l), true
		_, err := s.waiter.Await(t)
		s.waiter, s.waitEmpty = nil, false
		if err != nil {
			return 0, err
		}
	}
	if s.lostErr != nil {
		return 0, s.lostErr
	}
	wait := func() error {
		if s.lostErr != nil {
			return s.lostErr
		}
		w := asyncio.NewFuture[struct{}](l)
		if err := l.AddWriter(tr.fd, func() {
			l.RemoveWriter(tr.fd)
			if !w.Done() {
				w.SetResult(struct{}{})
			}
		}); err != nil {
			return err
		}
		s.waiter = w
		_, err := w.Await(t)
		s.waiter = nil
		if err != nil && s.lostErr == nil {
			l.RemoveWriter(tr.fd) // cancelled: the fd is still open
		}
		return err
	}
	return sockSendfileNative(tr.fd, f, offset, count, wait)
}

// sendfileFallbackProtocol is asyncio's _SendfileFallbackProtocol: the
// transport's protocol while Sendfile's fallback writes, which keeps
// reading paused and turns the write flow control into a future to wait
// on.
type sendfileFallbackProtocol struct {
	tr                  sendfileTransport
	loop                *asyncio.Loop
	proto               Protocol
	shouldResumeReading bool
	shouldResumeWriting bool
	writeReady          *asyncio.Future[struct{}]
}

func newSendfileFallbackProtocol(l *asyncio.Loop, tr sendfileTransport) *sendfileFallbackProtocol {
	p := &sendfileFallbackProtocol{tr: tr, loop: l, proto: tr.Protocol(), shouldResumeReading: tr.IsReading(), shouldResumeWriting: tr.writingPaused()}
	tr.PauseReading()
	tr.SetProtocol(p)
	if p.shouldResumeWriting {
		p.writeReady = asyncio.NewFuture[struct{}](l)
	}
	return p
}

// drain waits until the transport takes more (asyncio's drain).
func (p *sendfileFallbackProtocol) drain(t *asyncio.T) error {
	if p.tr.IsClosing() {
		return errSendfileDrainClosed
	}
	if p.writeReady == nil {
		return nil
	}
	_, err := p.writeReady.Await(t)
	return err
}

func (p *sendfileFallbackProtocol) ConnectionMade(Transport) {
	panic(runtimeErrorf("Invalid state: connection should have been established already."))
}

func (p *sendfileFallbackProtocol) ConnectionLost(err error) {
	if w := p.writeReady; w != nil && !w.Done() {
		if err == nil {
			w.SetException(errSendfileConnClosed)
		} else {
			w.SetException(err)
		}
	}
	p.proto.ConnectionLost(err)
}

func (p *sendfileFallbackProtocol) PauseWriting() {
	if p.writeReady != nil {
		return
	}
	p.writeReady = asyncio.NewFuture[struct{}](p.loop)
}

func (p *sendfileFallbackProtocol) ResumeWriting() {
	if p.writeReady == nil {
		return
	}
	if !p.writeReady.Done() {
		p.writeReady.SetResult(struct{}{})
	}
	p.writeReady = nil
}

func (p *sendfileFallbackProtocol) DataReceived([]byte) {
	panic(runtimeErrorf("Invalid state: reading should be paused"))
}

func (p *sendfileFallbackProtocol) EOFReceived() bool {
	panic(runtimeErrorf("Invalid state: reading should be paused"))
}

// restore puts the original protocol back (asyncio's restore).
func (p *sendfileFallbackProtocol) restore() {
	p.tr.SetProtocol(p.proto)
	if p.shouldResumeReading {
		p.tr.ResumeReading()
	}
	if w := p.writeReady; w != nil {
		// Nothing waits on it any more; an error set on it by
		// ConnectionLost was the transfer's, not to be reported again.
		if w.Done() {
			_ = w.Err()
		}
		w.Cancel()
	}
	if p.shouldResumeWriting {
		if w, ok := p.proto.(WriteFlowControl); ok {
			w.ResumeWriting()
		}
	}
}

// sendfileFallback is asyncio's _sendfile_fallback: 16 KiB blocks read
// on the executor and written to the transport, each after drain.
func sendfileFallback(t *asyncio.T, tr sendfileTransport, f *os.File, offset, count int64) (total int64, err error) {
	r, err := newFileBlocks(f, offset)
	if err != nil {
		return 0, err
	}
	p := newSendfileFallbackProtocol(t.Loop(), tr)
	defer p.restore()
	defer func() { setFilePos(f, offset, total, &err) }()
	for {
		data, err := r.next(t, count, total, sendfileTransportBlockSize)
		if err != nil || len(data) == 0 {
			return total, err
		}
		if err := p.drain(t); err != nil {
			return total, err
		}
		if err := tr.Write(data); err != nil {
			return total, err
		}
		total += int64(len(data))
	}
}
