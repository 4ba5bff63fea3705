//go:build unix

package aio

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Protocol is asyncio.Protocol: the callbacks a stream transport calls on
// the loop. ConnectionMade is called once, first; DataReceived for each
// chunk read; EOFReceived when the peer half-closes (return true to keep
// the transport open for writing, false to close it); ConnectionLost once,
// last, with nil for a clean close or the error that ended the connection.
// A protocol that also implements WriteFlowControl is told when the
// transport's write buffer crosses the water marks.
type Protocol interface {
	ConnectionMade(tr Transport)
	DataReceived(data []byte)
	EOFReceived() bool
	ConnectionLost(err error)
}

// BufferedProtocol is asyncio.BufferedProtocol: a Protocol that gives the
// transport the buffer to read into, so that received data is not copied
// on its way to the protocol. A socket transport (TCP or Unix, from
// CreateConnection, CreateServer, CreateUnixConnection, ...) and a TLS
// transport recognise it, also after SetProtocol, and then call, for
// every read:
//   - GetBuffer(sizeHint): the buffer to fill. sizeHint is a recommended
//     minimum size, -1 when any size will do (a socket transport always
//     passes -1; a TLS transport passes the most it reads at once, and
//     asks only once it has decrypted plaintext to copy in, which it
//     copies into as many buffers as it takes). An
//     empty buffer is an error: the transport reports it and closes, as
//     a panic in GetBuffer does ("Fatal error: protocol.get_buffer() call
//     failed.");
//   - BufferUpdated(nbytes): the first nbytes of that buffer are new data.
//     A panic is reported and closes the transport ("Fatal error:
//     protocol.buffer_updated() call failed.").
//
// The buffer belongs to the protocol; the transport does not keep it
// after the read. The calls follow asyncio's state machine: ConnectionMade,
// then GetBuffer and BufferUpdated any number of times (a GetBuffer may be
// followed by no BufferUpdated when the read finds nothing), then maybe
// EOFReceived, then ConnectionLost. DataReceived is never called by the
// transports that read into buffers; the others (pipes, subprocess pipes)
// call it, as their asyncio counterparts call data_received. Embed
// BaseProtocol to get a DataReceived that does nothing.
type BufferedProtocol interface {
	Protocol
	GetBuffer(sizeHint int) []byte
	BufferUpdated(nbytes int)
}

// getProtocolBuffer calls p.GetBuffer(sizeHint): a panic, or an empty
// buffer, comes back as the error the transport reports.
func getProtocolBuffer(p BufferedProtocol, sizeHint int) (buf []byte, err error) {
	if err = callProtocol(func() { buf = p.GetBuffer(sizeHint) }); err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		return nil, runtimeErrorf("get_buffer() returned an empty buffer")
	}
	return buf, nil
}

// WriteFlowControl is the optional part of asyncio.BaseProtocol:
// PauseWriting is called when the transport's write buffer grows above
// the high water mark, ResumeWriting when it drains to the low water mark
// or below (STREAM-8).
type WriteFlowControl interface {
	PauseWriting()
	ResumeWriting()
}

// BaseTransport is asyncio.BaseTransport: what every transport of a
// Protocol has. Its methods must be called on the loop (from a task or a
// callback).
type BaseTransport interface {
	// Close closes the transport (asyncio's close): reading stops at once,
	// buffered data is still flushed, then ConnectionLost(nil) is called
	// on the loop. Calling it again has no effect.
	Close()
	// IsClosing reports whether the transport is closing or closed.
	IsClosing() bool
	// ExtraInfo returns "peername", "sockname" (net.Addr), "socket"
	// (the fd, int), "sslcontext" (*tls.Config, TLS only), "ssl_object"
	// (*tls.Conn, TLS only), "peercert" (*x509.Certificate, TLS only,
	// once verified: see PeerCert), "pipe" (the *os.File of a pipe
	// transport), or nil (asyncio's get_extra_info).
	ExtraInfo(name string) any
	// SetProtocol replaces the protocol that receives the following
	// callbacks (asyncio's set_protocol).
	SetProtocol(p Protocol)
	// Protocol returns the current protocol (asyncio's get_protocol).
	Protocol() Protocol
}

// ReadTransport is asyncio.ReadTransport: the receiving side of a
// transport (ConnectReadPipe returns one).
type ReadTransport interface {
	BaseTransport
	// PauseReading stops DataReceived calls until ResumeReading.
	PauseReading()
	// ResumeReading undoes PauseReading.
	ResumeReading()
	// IsReading reports whether the transport is receiving (not paused,
	// not closing).
	IsReading() bool
}

// WriteTransport is asyncio.WriteTransport: the sending side of a
// transport (ConnectWritePipe returns one).
type WriteTransport interface {
	BaseTransport
	// Write queues data: it is sent at once as far as the socket accepts
	// it, the rest is buffered (asyncio's write). It never blocks. After
	// the connection is lost writes are dropped (a warning is logged after
	// 5 of them); after WriteEOF it returns a *RuntimeError.
	Write(data []byte) error
	// WriteLines writes each chunk in turn (asyncio's writelines).
	WriteLines(chunks ...[]byte) error
	// WriteEOF half-closes: shuts down the write side once the buffer is
	// flushed (asyncio's write_eof).
	WriteEOF() error
	// CanWriteEOF reports whether WriteEOF is supported (false over TLS).
	CanWriteEOF() bool
	// Abort closes at once, discarding buffered data; ConnectionLost(nil)
	// follows on the loop.
	Abort()
	// WriteBufferSize returns the number of buffered bytes.
	WriteBufferSize() int
	// SetWriteBufferLimits sets the high and low water marks (STREAM-8).
	// -1 stands for asyncio's None: high defaults to 64 KiB (or 4*low when
	// low is given), low to high/4. Marks that break high >= low >= 0,
	// any other negative value among them, are a *ValueError with
	// asyncio's message, and leave the marks as they were.
	SetWriteBufferLimits(high, low int) error
	// WriteBufferLimits returns the water marks, in the order
	// SetWriteBufferLimits takes them.
	WriteBufferLimits() (high, low int)
}

// Transport is asyncio.Transport: a bidirectional stream connection driven
// by the loop, both a ReadTransport and a WriteTransport. Pipe transports
// are Transports too, so that any Protocol can use them; the side a pipe
// does not have fails (Write on a read pipe returns a *RuntimeError) or
// does nothing (PauseReading on a write pipe).
type Transport interface {
	ReadTransport
	WriteTransport
}

const (
	defaultHighWater = 64 * 1024
	// logThresholdForConnLostWrites is asyncio's
	// LOG_THRESHOLD_FOR_CONNLOST_WRITES.
	logThresholdForConnLostWrites = 5
)

// defaultMark is the spelling of asyncio's None in SetWriteBufferLimits.
const defaultMark = -1

// computeWriteLimits is asyncio's _set_write_buffer_limits (STREAM-8);
// defaultMark (-1) is asyncio's None. Another negative value goes through
// as asyncio takes it, to fail the check with asyncio's message: low
// defaults to high // 4 (Python's floor division, for a negative high).
func computeWriteLimits(high, low int) (int, int, error) {
	if high == defaultMark {
		if low == defaultMark {
			high = defaultHighWater
		} else {
			high = 4 * low
		}
	}
	if low == defaultMark {
		low = high / 4
		if high < 0 && high%4 != 0 {
			low--
		}
	}
	if !(high >= low && low >= 0) {
		return 0, 0, &asyncio.ValueError{Msg: fmt.Sprintf("high (%d) must be >= low (%d) must be >= 0", high, low)}
	}
	return high, low, nil
}

// flowControl is the write-side bookkeeping shared by the transports:
// water marks and the protocol's paused state (asyncio's
// _FlowControlMixin).
type flowControl struct {
	loop           *asyncio.Loop
	high, low      int
	protocolPaused bool
	// transport is the transport whose buffer this is, for the
	// exception handler's context (asyncio's "transport" key).
	transport any
}

func newFlowControl(l *asyncio.Loop) flowControl {
	return flowControl{loop: l, high: defaultHighWater, low: defaultHighWater / 4}
}

// WriteBufferLimits returns the water marks (high, low).
func (fc *flowControl) WriteBufferLimits() (high, low int) { return fc.high, fc.low }

func (fc *flowControl) maybePause(size int, p any) {
	if size <= fc.high || fc.protocolPaused {
		return
	}
	fc.protocolPaused = true
	if w, ok := p.(WriteFlowControl); ok {
		fc.callSafely("protocol.pause_writing() failed", p, w.PauseWriting)
	}
}

func (fc *flowControl) maybeResume(size int, p any) {
	if !fc.protocolPaused || size > fc.low {
		return
	}
	fc.protocolPaused = false
	if w, ok := p.(WriteFlowControl); ok {
		fc.callSafely("protocol.resume_writing() failed", p, w.ResumeWriting)
	}
}

// callSafely runs fn, a flow control callback of p, reporting a panic to
// the exception handler with the transport and the protocol, as asyncio.
func (fc *flowControl) callSafely(msg string, p any, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			fc.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: newPanicError(r), Transport: fc.transport, Protocol: p})
		}
	}()
	fn()
}

// callProtocol runs a protocol callback, turning a panic into an error.
func callProtocol(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	fn()
	return nil
}

// newProtocol calls a protocol factory for call: a panic comes back as a
// *PanicError and a nil protocol as a *ValueError, so that the caller can
// release what it made for the connection (its socket) and return the
// error instead of dying with it.
func newProtocol[P any](call string, factory func() P) (P, error) {
	var p P
	if err := callProtocol(func() { p = factory() }); err != nil {
		return p, err
	}
	if any(p) == nil {
		return p, &asyncio.ValueError{Msg: call + ": the protocol factory returned nil"}
	}
	return p, nil
}

// errNilFactory is the *ValueError for a nil protocol factory, returned
// before call creates anything.
func errNilFactory(call string) *asyncio.ValueError {
	return &asyncio.ValueError{Msg: call + ": nil protocol factory"}
}

// errNilClientCallback is the *ValueError for a nil client_connected_cb
// of a stream server, returned before call listens.
func errNilClientCallback(call string) *asyncio.ValueError {
	return &asyncio.ValueError{Msg: call + ": nil client callback"}
}

// writeEach is asyncio's writelines over write.
func writeEach(write func([]byte) error, chunks [][]byte) error {
	for _, c := range chunks {
		if err := write(c); err != nil {
			return err
		}
	}
	return nil
}

// maxRead is how much a socket or read-pipe transport reads per readiness
// event, and the largest datagram a datagram transport receives whole
// (asyncio's max_size, the same in _SelectorSocketTransport,
// _SelectorDatagramTransport and _UnixReadPipeTransport).
const maxRead = 256 * 1024

// readBufPool holds the buffers transports read into: the data is copied
// out at once (the protocol may keep it), so a buffer is only taken for
// the length of one read. Connections hold none between reads: an idle
// one costs nothing, and the process holds about one buffer per thread
// reading at the time, whatever the number of connections.
var readBufPool = sync.Pool{New: func() any { b := make([]byte, maxRead); return &b }}

// fdTransport is the part of asyncio's _SelectorTransport that the stream
// and the datagram transport share: the fd, its extra info, write flow
// control, and the teardown (Close, Abort, a fatal error, then
// ConnectionLost once and the fd closed after it). The concrete transport
// embeds it and tells it, through side, what it buffers and how its
// protocol is told of the loss.
type fdTransport struct {
	flowControl
	fd    int
	extra extraInfo
	side  fdSide
	// file, when set, owns fd (a pipe handed over as an *os.File): the
	// teardown closes it rather than the bare fd, which the file would
	// otherwise close a second time.
	file *os.File

	// connLost is asyncio's _conn_lost: > 0 once ConnectionLost is
	// scheduled; writes dropped after that count on.
	connLost int
	// The flags share a word (a socket transport fits a 256-byte size
	// class, W9).
	closing  bool
	fdClosed bool
	// ownFD: the package made fd (a dial, an accept) and has not handed
	// it out (ExtraInfo("socket")), so no one else can have a copy or
	// have set SO_LINGER on it, and closeFD may close it with a raw
	// system call (rawClose).
	ownFD bool
	// disown unregisters releaseAtLoopClose (Loop.OnClose).
	disown func() bool
}

// extraInfo holds what ExtraInfo gives beyond the protocol's own: the
// keys every transport of a kind has, as fields (a map per connection
// cost an allocation of about 300 bytes, W9).
type extraInfo struct {
	socket   bool     // "socket" is the fd
	sockname net.Addr // "sockname"
	peername net.Addr // "peername"
	pipe     *os.File // "pipe", when not nil
}

// fdSide is what the shared teardown needs of the concrete transport.
type fdSide interface {
	// buffered returns the bytes waiting to be sent (asyncio's
	// get_write_buffer_size); 0 means nothing to flush.
	buffered() int
	// dropBuffer discards them (abort).
	dropBuffer()
	// protocolOf returns the protocol, for write flow control.
	protocolOf() any
	// connectionLost tells the protocol (asyncio's
	// _call_connection_lost, before the socket is closed).
	connectionLost(err error)
}

// initFDTransport sets up b, which owns fd from now on: if the loop closes
// first, fd is closed with it.
func (b *fdTransport) init(l *asyncio.Loop, fd int, side fdSide, extra extraInfo) {
	*b = fdTransport{flowControl: newFlowControl(l), fd: fd, side: side, extra: extra}
	b.transport = side
	b.disown = l.OnClose(b.releaseAtLoopClose)
}

// releaseAtLoopClose closes the socket of a transport still open when its
// loop closes (asyncio leaves that to the transport's finalizer). The
// protocol is not called: the loop can no longer run anything.
func (b *fdTransport) releaseAtLoopClose() {
	b.closing = true
	b.connLost++
	b.side.dropBuffer()
	if !b.fdClosed {
		b.fdClosed = true
		if b.file != nil {
			b.file.Close()
		} else {
			unix.Close(b.fd)
		}
	}
}

// ExtraInfo returns the named piece of extra information, or nil. Once
// the descriptor is closed "socket" is -1, as asyncio's TransportSocket
// then says fileno() == -1: the number may already be another file's.
func (b *fdTransport) ExtraInfo(name string) any {
	switch name {
	case "socket":
		if !b.extra.socket {
			return nil
		}
		if b.fdClosed {
			return -1
		}
		b.ownFD = false // the caller may dup it, or set SO_LINGER
		return b.fd
	case "sockname":
		return anyAddr(b.extra.sockname)
	case "peername":
		return anyAddr(b.extra.peername)
	case "pipe":
		if b.extra.pipe != nil {
			return b.extra.pipe
		}
	}
	return nil
}

// anyAddr is a as an any: nil, not a nil net.Addr, when there is none.
func anyAddr(a net.Addr) any {
	if a == nil {
		return nil
	}
	return a
}

// IsClosing reports whether Close or Abort was called, or the connection
// was lost.
func (b *fdTransport) IsClosing() bool { return b.closing }

// WriteBufferSize returns the number of buffered bytes.
func (b *fdTransport) WriteBufferSize() int { return b.side.buffered() }

// SetWriteBufferLimits sets the water marks; past the new high one the
// protocol is paused at once (asyncio's set_write_buffer_limits).
func (b *fdTransport) SetWriteBufferLimits(high, low int) error {
	h, lo, err := computeWriteLimits(high, low)
	if err != nil {
		return err
	}
	b.high, b.low = h, lo
	b.maybePause(b.side.buffered(), b.side.protocolOf())
	return nil
}

// Close stops reading at once; ConnectionLost(nil) follows once the
// buffer is flushed (by the writer, when it empties it).
func (b *fdTransport) Close() {
	if b.closing {
		return
	}
	b.closing = true
	b.loop.RemoveReader(b.fd)
	if b.side.buffered() == 0 {
		b.loop.RemoveWriter(b.fd)
		b.connectionLostSoon(nil)
	}
}

// Abort closes at once, dropping the buffer.
func (b *fdTransport) Abort() { b.forceClose(nil) }

// fatalError reports err to the exception handler unless it came from
// the operating system, and closes at once. The report names the
// transport, as asyncio's _fatal_error ("transport": self).
func (b *fdTransport) fatalError(err error, msg string) {
	if !isOSError(err) {
		b.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: err, Transport: b.side, Protocol: b.side.protocolOf()})
	}
	b.forceClose(err)
}

// forceClose is asyncio's _force_close.
func (b *fdTransport) forceClose(err error) {
	if b.connLost > 0 {
		return
	}
	b.stopIO()
	b.connectionLostSoon(err)
}

// abortNow is Abort with the teardown run at once rather than in the
// next iteration: the protocol's ConnectionLost(nil), then the fd
// closed. For a failed TLS handshake, whose error the caller returns
// now: asyncio's SSLProtocol closes the socket (_call_connection_lost)
// before the awaiting caller resumes with the error.
func (b *fdTransport) abortNow() {
	if b.connLost > 0 {
		return
	}
	b.stopIO()
	b.connLost++
	b.callConnectionLost(nil)
}

// stopIO drops the write buffer and stops reading: the transport is
// closing.
func (b *fdTransport) stopIO() {
	if b.side.buffered() > 0 {
		b.side.dropBuffer()
		b.loop.RemoveWriter(b.fd)
	}
	if !b.closing {
		b.closing = true
		b.loop.RemoveReader(b.fd)
	}
}

// connectionLostSoon schedules the protocol's ConnectionLost, once.
func (b *fdTransport) connectionLostSoon(err error) {
	b.connLost++
	b.loop.CallSoon(func() { b.callConnectionLost(err) })
}

// connectionLostNow calls the protocol's ConnectionLost at once: from the
// write callback that emptied the buffer of a closing transport, as
// asyncio's _write_ready calls _call_connection_lost directly (what the
// protocol's ResumeWriting scheduled then runs after ConnectionLost).
func (b *fdTransport) connectionLostNow(err error) {
	b.connLost++
	b.callConnectionLost(err)
}

func (b *fdTransport) callConnectionLost(err error) {
	defer b.closeFD() // also when the protocol panics
	b.side.connectionLost(err)
}

func (b *fdTransport) closeFD() {
	if b.fdClosed {
		return
	}
	b.fdClosed = true
	b.disown()
	b.loop.RemoveReader(b.fd)
	b.loop.RemoveWriter(b.fd)
	if b.file != nil {
		b.file.Close()
		return
	}
	if b.ownFD {
		rawClose(b.fd)
		return
	}
	unix.Close(b.fd)
}

// droppedWrite reports whether a write must be dropped because the
// connection is lost, and warns once enough were (asyncio logs op
// "raised exception." from the fifth such write on).
func (b *fdTransport) droppedWrite(op string) bool {
	if b.connLost == 0 {
		return false
	}
	if b.connLost >= logThresholdForConnLostWrites {
		slog.Warn(op + " raised exception.")
	}
	b.connLost++
	return true
}

// socketTransport is asyncio's _SelectorSocketTransport over a
// non-blocking stream socket (TCP or Unix).
type socketTransport struct {
	fdTransport
	protocol          Protocol
	server            *Server
	wbuf              sendBuffer // unsent data; write interest exists iff non-empty
	maxBuffer         int        // WithMaxWriteBuffer; 0: no limit
	eof               bool       // WriteEOF was called
	readingPaused     bool
	protocolConnected bool
	sendfile          *sendfileState // a Sendfile in progress (sendfile.go)
	clientSeq         uint64         // its server's count of it (Server.attach), for the accept order
}

var _ Transport = (*socketTransport)(nil)

// newSocketTransport wraps the connected non-blocking socket fd. As in
// asyncio, ConnectionMade, the registration of the reader and the waiter
// are scheduled with CallSoon, in that order.
func newSocketTransport(l *asyncio.Loop, fd int, network string, p Protocol, server *Server, waiter *asyncio.Future[struct{}]) *socketTransport {
	return newSocketTransportTo(l, fd, network, nil, p, server, waiter)
}

// newSocketTransportTo is newSocketTransport with the peer's address when
// the caller knows it (the literal address a client connected to), which
// saves the getpeername.
func newSocketTransportTo(l *asyncio.Loop, fd int, network string, peer net.Addr, p Protocol, server *Server, waiter *asyncio.Future[struct{}]) *socketTransport {
	tr := &socketTransport{protocol: p, server: server, protocolConnected: true}
	if peer == nil {
		peer = peerAddr(fd, network)
	}
	tr.fdTransport.init(l, fd, tr, extraInfo{socket: true, sockname: localAddr(fd, network), peername: peer})
	if network == "tcp" {
		// asyncio's _set_nodelay for TCP transports.
		rawSetNoDelay(fd)
	}
	if server != nil {
		server.attach(tr)
	}
	l.CallSoon(func() { tr.protocol.ConnectionMade(tr) })
	l.CallSoon(func() {
		if tr.IsReading() {
			tr.addReader()
		}
	})
	if waiter != nil {
		l.CallSoon(func() {
			if !waiter.Done() {
				waiter.SetResult(struct{}{})
			}
		})
	}
	return tr
}

func (tr *socketTransport) buffered() int   { return tr.wbuf.len() }
func (tr *socketTransport) dropBuffer()     { tr.wbuf.reset() }
func (tr *socketTransport) protocolOf() any { return tr.protocol }

func (tr *socketTransport) connectionLost(err error) {
	defer func() { // also when the protocol panics
		if tr.server != nil {
			tr.server.detach(tr)
			tr.server = nil
		}
	}()
	tr.sendfileLost()
	if tr.protocolConnected {
		tr.protocolConnected = false
		tr.protocol.ConnectionLost(err)
	}
}

func (tr *socketTransport) addReader() {
	if err := tr.loop.AddReader(tr.fd, tr.readReady); err != nil {
		tr.fatalError(err, "Fatal error: cannot watch the socket")
	}
}

// SetProtocol replaces the protocol.
func (tr *socketTransport) SetProtocol(p Protocol) {
	tr.protocol = p
	tr.protocolConnected = true
}

// Protocol returns the protocol.
func (tr *socketTransport) Protocol() Protocol { return tr.protocol }

// IsReading reports whether reading is neither paused nor stopped.
func (tr *socketTransport) IsReading() bool { return !tr.readingPaused && !tr.closing }

// CanWriteEOF is true: a socket can shut down its write side.
func (tr *socketTransport) CanWriteEOF() bool { return true }

// PauseReading stops reading (asyncio's pause_reading); no effect while
// closing or already paused.
func (tr *socketTransport) PauseReading() {
	if tr.closing || tr.readingPaused {
		return
	}
	tr.readingPaused = true
	tr.loop.RemoveReader(tr.fd)
}

// ResumeReading undoes PauseReading.
func (tr *socketTransport) ResumeReading() {
	if tr.closing || !tr.readingPaused {
		return
	}
	tr.readingPaused = false
	tr.addReader()
}

func (tr *socketTransport) readReady() {
	if tr.connLost > 0 {
		return
	}
	if p, ok := tr.protocol.(BufferedProtocol); ok {
		tr.readIntoProtocol(p)
		return
	}
	bp := readBufPool.Get().(*[]byte)
	n, err := readFD(tr.fd, *bp)
	var data []byte
	if n > 0 {
		data = append([]byte(nil), (*bp)[:n]...)
	}
	readBufPool.Put(bp)
	if err == unix.EINTR || isWouldBlock(err) {
		return
	}
	if err != nil {
		tr.fatalError(os.NewSyscallError("recv", err), "Fatal read error on socket transport")
		return
	}
	if n == 0 {
		tr.readEOF()
		return
	}
	if perr := callProtocol(func() { deliverData(tr.protocol, data) }); perr != nil {
		tr.fatalError(perr, "Fatal error: protocol.data_received() call failed.")
	}
}

// readIntoProtocol is readReady for a BufferedProtocol (asyncio's
// _read_ready__get_buffer): the data goes straight into the protocol's
// buffer.
func (tr *socketTransport) readIntoProtocol(p BufferedProtocol) {
	buf, err := getProtocolBuffer(p, -1)
	if err != nil {
		tr.fatalError(err, "Fatal error: protocol.get_buffer() call failed.")
		return
	}
	n, err := readFD(tr.fd, buf)
	if err == unix.EINTR || isWouldBlock(err) {
		return
	}
	if err != nil {
		tr.fatalError(os.NewSyscallError("recv", err), "Fatal read error on socket transport")
		return
	}
	if n == 0 {
		tr.readEOF()
		return
	}
	if perr := callProtocol(func() { p.BufferUpdated(n) }); perr != nil {
		tr.fatalError(perr, "Fatal error: protocol.buffer_updated() call failed.")
	}
}

func (tr *socketTransport) readEOF() {
	var keepOpen bool
	if perr := callProtocol(func() { keepOpen = tr.protocol.EOFReceived() }); perr != nil {
		tr.fatalError(perr, "Fatal error: protocol.eof_received() call failed.")
		return
	}
	if keepOpen {
		// Half-closed: stop reading, keep writing (asyncio removes the
		// reader without marking reading paused).
		tr.loop.RemoveReader(tr.fd)
	} else {
		tr.Close()
	}
}

// Write sends data, buffering what the socket does not take now. With
// WithMaxWriteBuffer, data that would take the buffer past the limit is
// refused whole with ErrWriteBufferFull.
func (tr *socketTransport) Write(data []byte) error {
	if tr.eof {
		return runtimeErrorf("Cannot call write() after write_eof()")
	}
	if tr.sendfile != nil {
		return runtimeErrorf("unable to write; sendfile is in progress")
	}
	if len(data) == 0 || tr.droppedWrite("socket.send()") {
		return nil
	}
	if tr.maxBuffer > 0 && tr.wbuf.len() > 0 && tr.wbuf.len()+len(data) > tr.maxBuffer {
		return errWriteBufferFull(tr.wbuf.len(), len(data), tr.maxBuffer)
	}
	if tr.wbuf.len() == 0 {
		n, err := sendFD(tr.fd, data)
		switch {
		case err == nil:
			data = data[n:]
			if len(data) == 0 {
				return nil
			}
			if tr.maxBuffer > 0 && len(data) > tr.maxBuffer {
				// The socket took a prefix: what was sent is sent, so the
				// rest is buffered even past the limit (a stream cannot
				// take back half a write).
				break
			}
		case isWouldBlock(err) || err == unix.EINTR:
			if tr.maxBuffer > 0 && len(data) > tr.maxBuffer {
				return errWriteBufferFull(0, len(data), tr.maxBuffer)
			}
		default:
			tr.fatalError(os.NewSyscallError("send", err), "Fatal write error on socket transport")
			return nil
		}
		if err := tr.loop.AddWriter(tr.fd, tr.writeReady); err != nil {
			tr.fatalError(err, "Fatal error: cannot watch the socket")
			return nil
		}
	}
	tr.wbuf.push(data)
	tr.maybePause(tr.wbuf.len(), tr.protocol)
	return nil
}

// WriteLines writes each chunk in turn. After WriteEOF it fails, even
// with no chunks, naming writelines() as asyncio's does.
func (tr *socketTransport) WriteLines(chunks ...[]byte) error {
	if tr.eof {
		return runtimeErrorf("Cannot call writelines() after write_eof()")
	}
	if tr.sendfile != nil {
		return runtimeErrorf("unable to writelines; sendfile is in progress")
	}
	return writeEach(tr.Write, chunks)
}

func (tr *socketTransport) writeReady() {
	if tr.connLost > 0 || tr.wbuf.len() == 0 {
		tr.loop.RemoveWriter(tr.fd)
		return
	}
	_, err := tr.wbuf.send(tr.fd)
	if isWouldBlock(err) || err == unix.EINTR {
		return
	}
	if err != nil {
		tr.loop.RemoveWriter(tr.fd)
		tr.wbuf.reset()
		werr := os.NewSyscallError("send", err)
		tr.notifySendfile(werr)
		tr.fatalError(werr, "Fatal write error on socket transport")
		return
	}
	tr.maybeResume(tr.wbuf.len(), tr.protocol)
	if tr.wbuf.len() > 0 {
		return
	}
	tr.loop.RemoveWriter(tr.fd)
	tr.notifySendfile(nil)
	if tr.closing {
		tr.connectionLostNow(nil)
	} else if tr.eof {
		unix.Shutdown(tr.fd, unix.SHUT_WR)
		simShutWrite(tr.loop, tr.fd)
	}
}

// WriteEOF shuts the write side down once the buffer is flushed.
func (tr *socketTransport) WriteEOF() error {
	if tr.closing || tr.eof {
		return nil
	}
	tr.eof = true
	if tr.wbuf.len() == 0 {
		unix.Shutdown(tr.fd, unix.SHUT_WR)
		simShutWrite(tr.loop, tr.fd)
	}
	return nil
}

// String describes the transport for messages.
func (tr *socketTransport) String() string { return tr.describe("socketTransport") }

// describe is a transport's String: "<kind fd=7 open>", or closing.
func (b *fdTransport) describe(kind string) string {
	state := "open"
	if b.closing {
		state = "closing"
	}
	return fmt.Sprintf("<%s fd=%d %s>", kind, b.fd, state)
}

// String describes the transport for messages (a StreamReader's String
// shows it; fmt printed its fields).
func (tr *readPipeTransport) String() string { return tr.describe("readPipeTransport") }

// String describes the transport for messages.
func (tr *writePipeTransport) String() string { return tr.describe("writePipeTransport") }

// String describes the transport for messages.
func (tr *datagramTransport) String() string { return tr.describe("datagramTransport") }

// dialOne connects a new non-blocking stream socket to sa; on failure the
// socket is closed, and so it is if the loop closes during the connect
// (the deferred close runs while Close unwinds t).
func dialOne(t *asyncio.T, family int, sa unix.Sockaddr) (int, error) {
	return dialOneFrom(t, family, sa, nil)
}

// dialOneFrom is dialOne binding the socket to local first (nil: no
// bind). A failed connect after failed binds returns them all, as an
// attemptErrors (see bindLocal).
func dialOneFrom(t *asyncio.T, family int, sa unix.Sockaddr, local *localBind) (int, error) {
	fd, err := newSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	connected := false
	defer func() {
		// fd is not a named result: `return -1, err` must not change
		// what this closes (a cancelled connect leaked its socket so).
		if !connected {
			unix.Close(fd)
		}
	}()
	var bindFailed []error
	if local != nil {
		failed, err := bindLocal(fd, family, local)
		if err != nil {
			return -1, err
		}
		bindFailed = failed
	}
	if err := sockConnect(t, fd, sa); err != nil {
		if len(bindFailed) > 0 && !asyncio.IsCancelled(err) {
			// The binds that failed before one succeeded count too.
			return -1, attemptErrors(append(bindFailed, err))
		}
		return -1, err
	}
	connected = true
	return fd, nil
}

// makeConnection is asyncio's _create_connection_transport: it wraps the
// connected fd in a transport (TLS if opts ask for it) and waits until the
// protocol's ConnectionMade has run (and, for TLS, the handshake is done).
// peer, when not nil, is the address fd is connected to. fd is the
// connection's from the call on: it is closed if the factory fails.
// owned says the package made fd (a dial, not the caller's WithSocket or
// ConnectAcceptedSocket), so the transport may close it with a raw system
// call until it hands it out (fdTransport.ownFD).
func makeConnection(t *asyncio.T, call string, fd int, owned bool, network string, factory func() Protocol, o *options, serverHostname string, peer net.Addr) (Transport, Protocol, error) {
	l := t.Loop()
	p, err := newProtocol(call, factory)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	if o.tls != nil {
		// An accepted socket is the server's end of the TLS connection.
		tr, err := newTLSTransportDialled(t, fd, network, p, o, serverHostname, o.tlsServerSide)
		if err != nil {
			return nil, nil, err
		}
		return tr, p, nil
	}
	waiter := asyncio.NewFuture[struct{}](l)
	tr := newSocketTransportTo(l, fd, network, peer, p, nil, waiter)
	tr.ownFD = owned
	tr.maxBuffer = o.maxWriteBuffer
	if _, err := waiter.Await(t); err != nil {
		tr.Close()
		return nil, nil, err
	}
	return tr, p, nil
}

// CreateConnection opens a TCP connection to host:port and returns its
// transport and protocol (asyncio's loop.create_connection). host is
// resolved on a goroutine (see resolve.go; WithResolver); when it has
// several addresses they are tried with happy eyeballs (RFC 8305): a new
// attempt starts every 250 ms (WithHappyEyeballsDelay) or as soon as the
// previous one fails, and the first to connect wins. WithTLS wraps the
// connection in TLS; WithSocket uses a socket already connected. When
// every attempt fails, the error is the one attempt's, or "Multiple
// exceptions: ..." unwrapping to each, or with WithAllErrors an
// *asyncio.ExceptionGroup of each (asyncio's all_errors=True). host ""
// is asyncio's host=None: the loopback addresses (::1, then 127.0.0.1),
// and with port 0 (None) a *ValueError. A nil
// factory or a port outside 0-65535 is a *ValueError before anything is
// done; a factory that panics
// or returns nil gets the socket closed, and the call returns its
// *PanicError or a *ValueError.
func CreateConnection(t *asyncio.T, factory func() Protocol, host string, port int, opts ...Option) (Transport, Protocol, error) {
	if factory == nil {
		return nil, nil, errNilFactory("CreateConnection")
	}
	if err := checkPort(port); err != nil {
		return nil, nil, err
	}
	o, err := buildOptions("CreateConnection", opts)
	if err != nil {
		return nil, nil, err
	}
	return createConnection(t, factory, host, port, o)
}

// createConnection is CreateConnection once its arguments and options
// are checked (OpenConnection comes in here with its own options, built
// once).
func createConnection(t *asyncio.T, factory func() Protocol, host string, port int, o *options) (Transport, Protocol, error) {
	if o.sock >= 0 {
		if host != "" || port != 0 {
			return nil, nil, errSockAndAddress("host/port")
		}
		if o.tlsNeedsServerName() {
			// Before the socket is touched (asyncio's check, as for host="").
			return nil, nil, &asyncio.ValueError{Msg: "You must set server_hostname when using ssl without a host"}
		}
		network, err := adoptStreamSocket(o.sock, false)
		if err != nil {
			return nil, nil, err
		}
		return makeConnection(t, "CreateConnection", o.sock, false, network, factory, o, host, nil)
	}
	dial := host
	if host == "" {
		// asyncio's host=None: with port=None too it is an error, else
		// getaddrinfo(None, port) gives the loopback addresses.
		if port == 0 {
			return nil, nil, &asyncio.ValueError{Msg: "host and port was not specified and no sock specified"}
		}
		if o.tlsNeedsServerName() {
			return nil, nil, &asyncio.ValueError{Msg: "You must set server_hostname when using ssl without a host"}
		}
		dial = "localhost" // on a simulated network: the calling host's loopback
	}
	if host == "" && o.simHost == nil {
		local, err := resolveLocal(t, o)
		if err != nil {
			return nil, nil, err
		}
		loopback, _ := byFamily("", []net.IP{net.IPv6loopback, net.IPv4(127, 0, 0, 1)}, o.family) // (never empty)
		fd, err := connectAnyFrom(t, loopback, port, "", o.happyEyeballsDelay, local, o.allErrors)
		if err != nil {
			return nil, nil, err
		}
		return makeConnection(t, "CreateConnection", fd, true, "tcp", factory, o, host, nil)
	}
	fd, err := dialHost(t, dial, port, o)
	if err != nil {
		return nil, nil, err
	}
	var peer net.Addr
	if o.simHost == nil { // a simulated connection's peer is looked up (sim.go)
		peer = literalPeer(host, port)
	}
	return makeConnection(t, "CreateConnection", fd, true, "tcp", factory, o, host, peer)
}

// literalPeer is the address a connection to the literal IP host:port
// reaches, as getpeername would decode it (the resolver connects to a
// literal and nothing else), or nil for a name, which may resolve to
// several addresses, and for a scoped IPv6 literal, which ParseIP
// refuses.
func literalPeer(host string, port int) net.Addr {
	ip := net.ParseIP(host)
	if ip == nil {
		return nil
	}
	sa, _ := sockaddrFor(ip, port)
	return sockaddrToAddr(sa, "tcp")
}

// errSockAndAddress is asyncio's ValueError for sock= given with an
// address.
func errSockAndAddress(what string) *asyncio.ValueError {
	return &asyncio.ValueError{Msg: what + " and sock can not be specified at the same time"}
}

// ConnectAcceptedSocket wraps fd, a connected stream socket (TCP or
// Unix) that was accepted outside this package, in a transport for the
// protocol factory returns, and returns both once ConnectionMade has
// been called (asyncio's loop.connect_accepted_socket). It is how a
// server that accepts by itself (another loop of a LoopGroup, a listener
// handed over by a supervisor, SockAccept) gives a connection to a
// Protocol. With WithTLS, fd is the server's end: the TLS handshake with
// the peer (cfg holds the certificate) completes before the call returns,
// bounded by WithTLSHandshakeTimeout. It takes WithTLS,
// WithTLSHandshakeTimeout, WithTLSShutdownTimeout and WithMaxWriteBuffer.
//
// fd is made non-blocking and belongs to the transport from then on,
// which closes it; if the call fails after checking its arguments (the
// factory panics or returns nil, the handshake fails) fd is closed too. A
// nil factory, an fd that is not a stream socket ("A Stream Socket was
// expected"), an option the call does not take, and a WithTLS config
// with no certificate (no Certificates, GetCertificate or
// GetConfigForClient) are a *ValueError, and leave fd as it was.
func ConnectAcceptedSocket(t *asyncio.T, factory func() Protocol, fd int, opts ...Option) (Transport, Protocol, error) {
	if factory == nil {
		return nil, nil, errNilFactory("ConnectAcceptedSocket")
	}
	o, err := buildOptions("ConnectAcceptedSocket", opts)
	if err != nil {
		return nil, nil, err
	}
	network, err := adoptStreamSocket(fd, false)
	if err != nil {
		return nil, nil, err
	}
	return makeConnection(t, "ConnectAcceptedSocket", fd, false, network, factory, o, "", nil)
}

// adoptStreamSocket checks that fd (WithSocket's) is a stream socket,
// makes it non-blocking and returns its network: "unix" or "tcp".
func adoptStreamSocket(fd int, unixOnly bool) (string, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_STREAM {
		return "", &asyncio.ValueError{Msg: fmt.Sprintf("A Stream Socket was expected, got fd %d", fd)}
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return "", os.NewSyscallError("getsockname", err)
	}
	network := "tcp"
	if _, ok := sa.(*unix.SockaddrUnix); ok {
		network = "unix"
	}
	if unixOnly && network != "unix" {
		// Checked before the socket is touched: nothing changes.
		return "", &asyncio.ValueError{Msg: fmt.Sprintf("A UNIX Domain Stream Socket was expected, got fd %d", fd)}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return "", os.NewSyscallError("fcntl", err)
	}
	return network, nil
}

// CreateUnixConnection connects to the Unix stream socket at path
// (asyncio's loop.create_unix_connection). With WithTLS the config must
// name the server (ServerName) or skip verification (InsecureSkipVerify):
// otherwise it is a *ValueError before a socket is made.
func CreateUnixConnection(t *asyncio.T, factory func() Protocol, path string, opts ...Option) (Transport, Protocol, error) {
	if factory == nil {
		return nil, nil, errNilFactory("CreateUnixConnection")
	}
	o, err := buildOptions("CreateUnixConnection", opts)
	if err != nil {
		return nil, nil, err
	}
	if o.tlsNeedsServerName() {
		// asyncio's check, before a socket is made or touched.
		return nil, nil, &asyncio.ValueError{Msg: "you have to pass server_hostname when using ssl: the tls.Config has no ServerName"}
	}
	if o.sock >= 0 {
		if path != "" {
			return nil, nil, errSockAndAddress("path")
		}
		network, err := adoptStreamSocket(o.sock, true)
		if err != nil {
			return nil, nil, err
		}
		return makeConnection(t, "CreateUnixConnection", o.sock, false, network, factory, o, "", nil)
	}
	sa, err := unixSockaddr(path)
	if err != nil {
		return nil, nil, err
	}
	fd, err := dialOne(t, unix.AF_UNIX, sa)
	if err != nil {
		return nil, nil, err
	}
	return makeConnection(t, "CreateUnixConnection", fd, true, "unix", factory, o, "", nil)
}
