package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

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

// WriteFlowControl is the optional part of asyncio.BaseProtocol:
// PauseWriting is called when the transport's write buffer grows above
// the high water mark, ResumeWriting when it drains to the low water mark
// or below (STREAM-8).
type WriteFlowControl interface {
	PauseWriting()
	ResumeWriting()
}

// Transport is asyncio.Transport: a bidirectional stream connection driven
// by the loop. Its methods must be called on the loop (from a task or a
// callback).
type Transport interface {
	// Close closes the transport (asyncio's close): reading stops at once,
	// buffered data is still flushed, then ConnectionLost(nil) is called
	// on the loop. Calling it again has no effect.
	Close()
	// IsClosing reports whether the transport is closing or closed.
	IsClosing() bool
	// GetExtraInfo returns "peername", "sockname" (net.Addr), "socket"
	// (the fd, int), "ssl_object" (*tls.Conn, TLS only), or nil.
	GetExtraInfo(name string) any
	// SetProtocol / GetProtocol replace or return the protocol.
	SetProtocol(p Protocol)
	GetProtocol() Protocol
	// PauseReading stops DataReceived calls until ResumeReading.
	PauseReading()
	ResumeReading()
	IsReading() bool
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
	CanWriteEOF() bool
	// Abort closes at once, discarding buffered data; ConnectionLost(nil)
	// follows on the loop.
	Abort()
	// GetWriteBufferSize returns the number of buffered bytes.
	GetWriteBufferSize() int
	// SetWriteBufferLimits sets the water marks (STREAM-8); pass
	// UseDefault for asyncio's None.
	SetWriteBufferLimits(high, low int) error
	// GetWriteBufferLimits returns (low, high).
	GetWriteBufferLimits() (low, high int)
}

// UseDefault stands for asyncio's None in SetWriteBufferLimits.
const UseDefault = -1

const (
	defaultHighWater = 64 * 1024
	// maxReadSize is asyncio's max_size for one recv (256 KiB).
	maxReadSize = 256 * 1024
	// logThresholdForConnLostWrites is asyncio's
	// LOG_THRESHOLD_FOR_CONNLOST_WRITES.
	logThresholdForConnLostWrites = 5
)

// computeWriteLimits is asyncio's _set_write_buffer_limits (STREAM-8).
func computeWriteLimits(high, low int) (int, int, error) {
	if high < 0 {
		if low < 0 {
			high = defaultHighWater
		} else {
			high = 4 * low
		}
	}
	if low < 0 {
		low = high / 4
	}
	if !(high >= low && low >= 0) {
		return 0, 0, &asyncio.ValueError{Msg: fmt.Sprintf("high (%d) must be >= low (%d) must be >= 0", high, low)}
	}
	return high, low, nil
}

// isOSError reports whether err came from the operating system (asyncio
// does not report those to the exception handler, only logs them in
// debug mode).
func isOSError(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno)
}

// flowControl is the write-side bookkeeping shared by the transports:
// water marks and the protocol's paused state (asyncio's
// _FlowControlMixin).
type flowControl struct {
	loop           *asyncio.Loop
	high, low      int
	protocolPaused bool
}

func (fc *flowControl) maybePause(size int, p any) {
	if size <= fc.high || fc.protocolPaused {
		return
	}
	fc.protocolPaused = true
	if w, ok := p.(WriteFlowControl); ok {
		fc.callSafely("protocol.pause_writing() failed", w.PauseWriting)
	}
}

func (fc *flowControl) maybeResume(size int, p any) {
	if !fc.protocolPaused || size > fc.low {
		return
	}
	fc.protocolPaused = false
	if w, ok := p.(WriteFlowControl); ok {
		fc.callSafely("protocol.resume_writing() failed", w.ResumeWriting)
	}
}

func (fc *flowControl) callSafely(msg string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			fc.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: newPanicError(r)})
		}
	}()
	fn()
}

// readBufPool holds the buffers transports read into: the data is copied
// out at once (the protocol may keep it), so a buffer per connection would
// only add garbage on short-lived connections.
var readBufPool = sync.Pool{New: func() any { b := make([]byte, 64*1024); return &b }}

// socketTransport is asyncio's _SelectorSocketTransport over a
// non-blocking stream socket (TCP or Unix).
type socketTransport struct {
	flowControl
	fd       int
	protocol Protocol
	server   *Server
	extra    map[string]any

	wbuf              []byte // unsent data; write interest exists iff non-empty
	closing           bool
	eof               bool // WriteEOF was called
	readingPaused     bool
	protocolConnected bool
	connLost          int
	fdClosed          bool
}

var _ Transport = (*socketTransport)(nil)

// newSocketTransport wraps the connected non-blocking socket fd. As in
// asyncio, ConnectionMade, the registration of the reader and the waiter
// are scheduled with CallSoon, in that order.
func newSocketTransport(l *asyncio.Loop, fd int, network string, p Protocol, server *Server, waiter *asyncio.Future[struct{}]) *socketTransport {
	tr := &socketTransport{
		flowControl:       flowControl{loop: l, high: defaultHighWater, low: defaultHighWater / 4},
		fd:                fd,
		protocol:          p,
		server:            server,
		protocolConnected: true,
		extra: map[string]any{
			"socket":   fd,
			"sockname": localAddr(fd, network),
			"peername": peerAddr(fd, network),
		},
	}
	if network == "tcp" {
		// asyncio's _set_nodelay for TCP transports.
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
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

func (tr *socketTransport) addReader() {
	if err := tr.loop.AddReader(tr.fd, tr.readReady); err != nil {
		tr.fatalError(err, "Fatal error: cannot watch the socket")
	}
}

func (tr *socketTransport) GetExtraInfo(name string) any { return tr.extra[name] }
func (tr *socketTransport) SetProtocol(p Protocol) {
	tr.protocol = p
	tr.protocolConnected = true
}
func (tr *socketTransport) GetProtocol() Protocol { return tr.protocol }
func (tr *socketTransport) IsClosing() bool       { return tr.closing }
func (tr *socketTransport) IsReading() bool       { return !tr.readingPaused && !tr.closing }
func (tr *socketTransport) CanWriteEOF() bool     { return true }
func (tr *socketTransport) GetWriteBufferSize() int {
	return len(tr.wbuf)
}
func (tr *socketTransport) GetWriteBufferLimits() (int, int) { return tr.low, tr.high }

func (tr *socketTransport) SetWriteBufferLimits(high, low int) error {
	h, lo, err := computeWriteLimits(high, low)
	if err != nil {
		return err
	}
	tr.high, tr.low = h, lo
	tr.maybePause(len(tr.wbuf), tr.protocol)
	return nil
}

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
	bp := readBufPool.Get().(*[]byte)
	n, err := rawRead(tr.fd, *bp)
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
	if perr := callProtocol(func() { tr.protocol.DataReceived(data) }); perr != nil {
		tr.fatalError(perr, "Fatal error: protocol.data_received() call failed.")
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

func (tr *socketTransport) Write(data []byte) error {
	if tr.eof {
		return runtimeErrorf("Cannot call write() after write_eof()")
	}
	if len(data) == 0 {
		return nil
	}
	if tr.connLost > 0 {
		if tr.connLost >= logThresholdForConnLostWrites {
			slog.Warn("socket.send() raised exception.")
		}
		tr.connLost++
		return nil
	}
	if len(tr.wbuf) == 0 {
		n, err := rawSend(tr.fd, data)
		switch {
		case err == nil:
			data = data[n:]
			if len(data) == 0 {
				return nil
			}
		case isWouldBlock(err):
		default:
			tr.fatalError(os.NewSyscallError("send", err), "Fatal write error on socket transport")
			return nil
		}
		if err := tr.loop.AddWriter(tr.fd, tr.writeReady); err != nil {
			tr.fatalError(err, "Fatal error: cannot watch the socket")
			return nil
		}
	}
	tr.wbuf = append(tr.wbuf, data...)
	tr.maybePause(len(tr.wbuf), tr.protocol)
	return nil
}

func (tr *socketTransport) WriteLines(chunks ...[]byte) error {
	for _, c := range chunks {
		if err := tr.Write(c); err != nil {
			return err
		}
	}
	return nil
}

func (tr *socketTransport) writeReady() {
	if tr.connLost > 0 || len(tr.wbuf) == 0 {
		tr.loop.RemoveWriter(tr.fd)
		return
	}
	n, err := rawSend(tr.fd, tr.wbuf)
	if isWouldBlock(err) {
		return
	}
	if err != nil {
		tr.loop.RemoveWriter(tr.fd)
		tr.wbuf = nil
		tr.fatalError(os.NewSyscallError("send", err), "Fatal write error on socket transport")
		return
	}
	tr.wbuf = tr.wbuf[n:]
	tr.maybeResume(len(tr.wbuf), tr.protocol)
	if len(tr.wbuf) > 0 {
		return
	}
	tr.wbuf = nil
	tr.loop.RemoveWriter(tr.fd)
	if tr.closing {
		tr.callConnectionLostSoon(nil)
	} else if tr.eof {
		unix.Shutdown(tr.fd, unix.SHUT_WR)
	}
}

func (tr *socketTransport) WriteEOF() error {
	if tr.closing || tr.eof {
		return nil
	}
	tr.eof = true
	if len(tr.wbuf) == 0 {
		unix.Shutdown(tr.fd, unix.SHUT_WR)
	}
	return nil
}

func (tr *socketTransport) Close() {
	if tr.closing {
		return
	}
	tr.closing = true
	tr.loop.RemoveReader(tr.fd)
	if len(tr.wbuf) == 0 {
		tr.loop.RemoveWriter(tr.fd)
		tr.callConnectionLostSoon(nil)
	}
}

func (tr *socketTransport) Abort() { tr.forceClose(nil) }

func (tr *socketTransport) fatalError(err error, msg string) {
	if !isOSError(err) {
		tr.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: err})
	}
	tr.forceClose(err)
}

func (tr *socketTransport) forceClose(err error) {
	if tr.connLost > 0 {
		return
	}
	if len(tr.wbuf) > 0 {
		tr.wbuf = nil
		tr.loop.RemoveWriter(tr.fd)
	}
	if !tr.closing {
		tr.closing = true
		tr.loop.RemoveReader(tr.fd)
	}
	tr.connLost++
	tr.loop.CallSoon(func() { tr.callConnectionLost(err) })
}

func (tr *socketTransport) callConnectionLostSoon(err error) {
	tr.connLost++
	tr.loop.CallSoon(func() { tr.callConnectionLost(err) })
}

func (tr *socketTransport) callConnectionLost(err error) {
	defer func() {
		tr.closeFD()
		if tr.server != nil {
			tr.server.detach(tr)
			tr.server = nil
		}
	}()
	if tr.protocolConnected {
		tr.protocolConnected = false
		tr.protocol.ConnectionLost(err)
	}
}

func (tr *socketTransport) closeFD() {
	if tr.fdClosed {
		return
	}
	tr.fdClosed = true
	tr.loop.RemoveReader(tr.fd)
	tr.loop.RemoveWriter(tr.fd)
	unix.Close(tr.fd)
}

// String describes the transport for messages.
func (tr *socketTransport) String() string {
	state := "open"
	if tr.closing {
		state = "closing"
	}
	return fmt.Sprintf("<socketTransport fd=%d %s>", tr.fd, state)
}

// dialOne connects a new non-blocking stream socket to sa; on failure the
// socket is closed.
func dialOne(t *asyncio.T, family int, sa unix.Sockaddr) (int, error) {
	fd, err := NewSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	if err := SockConnect(t, fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// makeConnection is asyncio's _create_connection_transport: it wraps the
// connected fd in a transport (TLS if opts ask for it) and waits until the
// protocol's ConnectionMade has run (and, for TLS, the handshake is done).
func makeConnection(t *asyncio.T, fd int, network string, factory func() Protocol, o *netOptions, serverHostname string) (Transport, Protocol, error) {
	l := t.Loop()
	p := factory()
	waiter := asyncio.NewFuture[struct{}](l)
	if o.tls != nil {
		tr, err := newTLSTransportClient(t, fd, network, p, o, serverHostname)
		if err != nil {
			return nil, nil, err
		}
		return tr, p, nil
	}
	tr := newSocketTransport(l, fd, network, p, nil, waiter)
	if _, err := waiter.Await(t); err != nil {
		tr.Close()
		return nil, nil, err
	}
	return tr, p, nil
}

// CreateConnection opens a TCP connection to host:port and returns its
// transport and protocol (asyncio's loop.create_connection). host is
// resolved on a goroutine (see resolve.go); when it has several addresses
// they are tried with happy eyeballs (RFC 8305): a new attempt starts every
// 250 ms (WithHappyEyeballsDelay) or as soon as the previous one fails, and
// the first to connect wins. WithTLS wraps the connection in TLS.
func CreateConnection(t *asyncio.T, factory func() Protocol, host string, port int, opts ...NetOption) (Transport, Protocol, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, nil, err
	}
	ips, err := resolveHost(t, host)
	if err != nil {
		return nil, nil, err
	}
	if o.interleaves() {
		ips = interleaveFamilies(ips)
	}
	fd, err := connectAny(t, ips, port, o.happyEyeballsDelay)
	if err != nil {
		return nil, nil, err
	}
	return makeConnection(t, fd, "tcp", factory, o, host)
}

// CreateUnixConnection connects to the Unix stream socket at path
// (asyncio's loop.create_unix_connection).
func CreateUnixConnection(t *asyncio.T, factory func() Protocol, path string, opts ...NetOption) (Transport, Protocol, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, nil, err
	}
	fd, err := dialOne(t, unix.AF_UNIX, &unix.SockaddrUnix{Name: path})
	if err != nil {
		return nil, nil, err
	}
	return makeConnection(t, fd, "unix", factory, o, "")
}

// NetOption configures CreateConnection, CreateServer, OpenConnection and
// StartServer.
type NetOption func(*netOptions)

type netOptions struct {
	tls                *tlsConfig
	happyEyeballsDelay time.Duration // <= 0: sequential
	interleave         int           // -1: auto (on with happy eyeballs), 0 off, 1 on
	limit              int
	backlog            int
	reuseAddr          bool
	// tlsHandshakeTimeout is WithTLSHandshakeTimeout's value (0: not
	// given), applied once all options are known, so order does not matter.
	tlsHandshakeTimeout time.Duration
}

// interleaves is asyncio's rule: interleave defaults to 1 when
// happy_eyeballs_delay is set.
func (o *netOptions) interleaves() bool {
	if o.interleave < 0 {
		return o.happyEyeballsDelay > 0
	}
	return o.interleave > 0
}

func buildOptions(opts []NetOption) (*netOptions, error) {
	o := &netOptions{happyEyeballsDelay: defaultHappyEyeballsDelay, interleave: -1, limit: DefaultStreamLimit, backlog: 100, reuseAddr: true}
	for _, f := range opts {
		f(o)
	}
	if o.tlsHandshakeTimeout != 0 {
		if o.tls == nil {
			return nil, &asyncio.ValueError{Msg: "ssl_handshake_timeout is only meaningful with ssl"}
		}
		o.tls.handshakeTimeout = o.tlsHandshakeTimeout
	}
	return o, nil
}

// addrString formats host:port for messages.
func addrString(host string, port int) string {
	return net.JoinHostPort(host, fmt.Sprint(port))
}
