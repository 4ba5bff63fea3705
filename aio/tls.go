//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TLS is crypto/tls running over a carrier transport (a socket transport,
// or for TLS inside TLS another TLS transport: see tlsCarrier): the raw
// transport's protocol is a transportConn, a net.Conn whose Read suspends
// the task reading (the handshake task, then the transport's reader task)
// and whose Write only appends to the raw transport's write buffer. Since
// Write never suspends, tls.Conn never holds its output lock across a
// suspension, so application writes from any task or callback cannot
// block the loop on a tls.Conn mutex.

// defaultTLSHandshakeTimeout is asyncio's SSL_HANDSHAKE_TIMEOUT.
const defaultTLSHandshakeTimeout = 60 * time.Second

// defaultTLSShutdownTimeout is asyncio's SSL_SHUTDOWN_TIMEOUT.
const defaultTLSShutdownTimeout = 30 * time.Second

type tlsConfig struct {
	cfg              *tls.Config
	handshakeTimeout time.Duration
	shutdownTimeout  time.Duration
}

// tlsCarrier is what the TLS layer needs of the transport its records
// travel on. Two of the package's transports are carriers, and no other:
//
//   - *socketTransport, a stream socket (the common case, and the hot one:
//     a record costs one interface call more than a direct call);
//   - *tlsTransport, so that StartTLS works over a TLS connection (TLS
//     inside TLS, as asyncio's start_tls over an SSL transport): its
//     plaintext is a reliable ordered byte stream, it calls its protocol
//     from its reader task and loop callbacks only, and it forwards flow
//     control, pausing and the teardown to the socket below.
//
// Pipe and subprocess transports are not connections (asyncio's start_tls
// refuses them too: they are not _FlowControlMixin socket transports with
// the SSL upgrade), datagram transports carry no byte stream, and a
// Transport implemented outside the package gives no guarantee of when
// it calls its protocol or how it tears down, which the layer relies on.
type tlsCarrier interface {
	Transport
	loopOf() *asyncio.Loop
	// carry writes one record of the layer above, or drops it and
	// reports false once the carrier is closing. It never refuses for
	// the buffer limit: the layer above checked the whole write against
	// the socket's (see bufferLimit and wireSize), and a record dropped
	// half way would break its stream for good. One call, closing check
	// included: it is the socket path's per-record cost.
	carry(p []byte) bool
	// lostScheduled reports whether the socket's ConnectionLost is due
	// (asyncio's _conn_lost > 0).
	lostScheduled() bool
	// abortNow is Abort with the socket closed before it returns.
	abortNow()
	// forceClose aborts with err for the protocol's ConnectionLost.
	forceClose(err error)
	// bufferLimit returns the socket's buffered bytes and its
	// WithMaxWriteBuffer limit (0: none).
	bufferLimit() (held, max int)
	// wireSize bounds the bytes n bytes written to the carrier become on
	// the socket.
	wireSize(n int) int
	// socket returns the socket transport at the bottom (its server's
	// client bookkeeping, its write flow control).
	socket() *socketTransport
}

var (
	_ tlsCarrier = (*socketTransport)(nil)
	_ tlsCarrier = (*tlsTransport)(nil)
)

func (tr *socketTransport) loopOf() *asyncio.Loop        { return tr.loop }
func (tr *socketTransport) lostScheduled() bool          { return tr.connLost > 0 }
func (tr *socketTransport) bufferLimit() (held, max int) { return tr.wbuf.len(), tr.maxBuffer }
func (tr *socketTransport) wireSize(n int) int           { return n }
func (tr *socketTransport) socket() *socketTransport     { return tr }
func (tr *tlsTransport) loopOf() *asyncio.Loop           { return tr.raw.loopOf() }
func (tr *tlsTransport) lostScheduled() bool             { return tr.raw.lostScheduled() }
func (tr *tlsTransport) bufferLimit() (held, max int)    { return tr.raw.bufferLimit() }
func (tr *tlsTransport) socket() *socketTransport        { return tr.raw.socket() }

// wireSize of a TLS carrier: crypto/tls's dynamic record sizing starts
// a connection with records of about 1.1 KiB, and each record of the
// layer above may be split in two, so a record's overhead per 512 bytes
// bounds it.
func (tr *tlsTransport) wireSize(n int) int {
	return tr.raw.wireSize(n + (n/512+1)*tlsRecordOverhead)
}

// carry encrypts a record of the TLS layer above into this one; dropped
// once the connection is closing, as Write drops.
func (tr *tlsTransport) carry(p []byte) bool {
	if tr.IsClosing() || tr.tc.lost {
		return false
	}
	tr.sent += int64(len(p))
	_ = tr.tc.writeRecords(tr.conn, p) // a failure is the connection's loss, reported there
	return true
}

// carry sends a record, or buffers it; false once the socket is closing.
func (tr *socketTransport) carry(p []byte) bool {
	if tr.closing {
		return false
	}
	tr.Write(p)
	return true
}

// abortNow aborts the connection, the socket closed before it returns;
// this transport's protocol (a TLS layer above) hears of it once the
// reader task has ended.
func (tr *tlsTransport) abortNow() {
	tr.closing, tr.aborted = true, true
	tr.raw.abortNow()
}

// forceClose aborts the connection; its protocol's ConnectionLost gets
// err (a shutdown timeout of the layer above), passed up from the socket.
func (tr *tlsTransport) forceClose(err error) {
	tr.closing = true
	tr.raw.forceClose(err)
}

// transportConn adapts a carrier transport to net.Conn for crypto/tls;
// it is also the carrier's protocol.
type transportConn struct {
	raw     tlsCarrier
	in      []byte
	eof     bool
	lost    bool
	lostErr error
	failErr error // reads fail with it (handshake timeout)
	waiter  *asyncio.Future[struct{}]
	reader  *asyncio.T // the task whose Read may suspend
	// writing counts the tls.Conn.Write calls in progress over this
	// carrier; pausePending is a PauseWriting held back meanwhile.
	writing      int
	pausePending bool
	owner        *tlsTransport
	// failedApp is the application protocol of a StartTLS whose
	// handshake failed: it was connected over the raw transport, so it
	// is told of the loss (ConnectionLost(failedErr)) once the raw
	// transport is gone, as asyncio's SSLProtocol tells it.
	failedApp Protocol
	failedErr error
}

func (c *transportConn) wake() {
	if c.waiter != nil && !c.waiter.Done() {
		c.waiter.SetResult(struct{}{})
	}
}

func (c *transportConn) Read(p []byte) (int, error) {
	for len(c.in) == 0 && !c.eof && !c.lost && c.failErr == nil {
		l := c.raw.loopOf()
		c.waiter = asyncio.NewFuture[struct{}](l)
		_, err := c.waiter.Await(c.reader)
		c.waiter = nil
		if err != nil {
			return 0, err
		}
	}
	if c.failErr != nil {
		return 0, c.failErr
	}
	if len(c.in) > 0 {
		n := copy(p, c.in)
		c.in = c.in[n:]
		return n, nil
	}
	if c.lost && c.lostErr != nil {
		return 0, c.lostErr
	}
	return 0, io.EOF
}

func (c *transportConn) Write(p []byte) (int, error) {
	if !c.lost && c.raw.carry(p) { // sent or copied into the write buffer; never retained
		return len(p), nil
	}
	if c.lostErr != nil {
		return 0, c.lostErr
	}
	return 0, net.ErrClosed
}

func (c *transportConn) Close() error { c.raw.Close(); return nil }
func (c *transportConn) LocalAddr() net.Addr {
	a, _ := c.raw.ExtraInfo("sockname").(net.Addr)
	return a
}
func (c *transportConn) RemoteAddr() net.Addr {
	a, _ := c.raw.ExtraInfo("peername").(net.Addr)
	return a
}
func (c *transportConn) SetDeadline(time.Time) error      { return nil }
func (c *transportConn) SetReadDeadline(time.Time) error  { return nil }
func (c *transportConn) SetWriteDeadline(time.Time) error { return nil }

// Protocol side (the raw transport calls these).
func (c *transportConn) ConnectionMade(Transport) {}
func (c *transportConn) DataReceived(d []byte) {
	c.in = append(c.in, d...)
	c.wake()
}
func (c *transportConn) EOFReceived() bool {
	c.eof = true
	c.wake()
	return true // the TLS transport decides when to close
}
func (c *transportConn) ConnectionLost(err error) {
	c.lost, c.lostErr = true, err
	c.wake()
	if c.owner != nil {
		if c.owner.shutdownTimer != nil {
			c.owner.shutdownTimer.Cancel()
			c.owner.shutdownTimer = nil
		}
		c.owner.maybeDeliverLost()
	}
	c.deliverFailed()
}

// deliverFailed tells a failed StartTLS's application protocol that the
// connection is lost, once.
func (c *transportConn) deliverFailed() {
	if app := c.failedApp; app != nil {
		c.failedApp = nil
		app.ConnectionLost(c.failedErr)
	}
}
func (c *transportConn) PauseWriting() {
	if c.writing > 0 {
		// Inside tls.Conn.Write, which holds its write lock: an
		// application that writes (or closes) from PauseWriting would
		// wait on that lock for ever. It hears of the pause as that
		// Write returns, still inside its own Write call (asyncio calls
		// pause_writing from write too).
		c.pausePending = true
		return
	}
	c.pauseApp()
}

func (c *transportConn) pauseApp() {
	if c.owner != nil {
		if w, ok := c.owner.app.(WriteFlowControl); ok {
			c.callApp("protocol.pause_writing() failed", w.PauseWriting)
		}
	}
}

// callApp runs one of the application protocol's flow control callbacks;
// a panic in it is the exception handler's, with the TLS transport and
// the application's protocol, as asyncio's SSLProtocol reports it, and
// does not reach the write or the socket callback that caused it.
func (c *transportConn) callApp(msg string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.raw.loopOf().CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: newPanicError(r), Transport: c.owner, Protocol: c.owner.app})
		}
	}()
	fn()
}

// writeRecords runs conn.Write(p) with the pause of the carrier below
// held back until it returns (see PauseWriting).
func (c *transportConn) writeRecords(conn *tls.Conn, p []byte) error {
	c.writing++
	_, err := conn.Write(p)
	c.writing--
	if c.writing == 0 && c.pausePending {
		c.pausePending = false
		c.pauseApp()
	}
	return err
}
func (c *transportConn) ResumeWriting() {
	if c.owner != nil {
		if w, ok := c.owner.app.(WriteFlowControl); ok {
			c.callApp("protocol.resume_writing() failed", w.ResumeWriting)
		}
	}
}

// tlsTransport is the application's Transport over TLS (asyncio's
// _SSLProtocolTransport).
type tlsTransport struct {
	raw        tlsCarrier
	tc         *transportConn
	conn       *tls.Conn
	app        Protocol
	cfg        *tls.Config // as given, for ExtraInfo("sslcontext")
	closing    bool
	readPaused bool
	resume     *asyncio.Future[struct{}]
	readerDone bool
	delivered  bool
	fatalErr   error
	connLost   int
	// aborted: Abort was called; nothing more reaches the application
	// (asyncio's _abort leaves the WRAPPED state, and _do_read returns).
	aborted bool
	// shutdownTimeout bounds the shutdown Close begins (asyncio's
	// ssl_shutdown_timeout); shutdownTimer aborts it then.
	shutdownTimeout time.Duration
	shutdownTimer   *asyncio.TimerHandle
	// peerEnded: the reader met the end of the peer's side (its
	// close_notify or EOF). awaitingPeer: Close sent close_notify before
	// that and waits for it, as asyncio's SSL protocol does in its
	// SHUTDOWN state; the reader then closes the raw connection.
	peerEnded    bool
	awaitingPeer bool
	// readerCancel is the CancelledError that ended the reader task's
	// reading, which the task returns (readLoop).
	readerCancel error
	// maxBuffer is the socket's WithMaxWriteBuffer limit, fixed before
	// the handshake: Write asks the carrier for the buffered bytes only
	// when there is a limit.
	maxBuffer int
	// sent counts the application bytes written into conn (Write and
	// carry), for writeCost: crypto/tls's small early records end once
	// 128 KiB have gone out.
	sent int64
}

var _ Transport = (*tlsTransport)(nil)

// handshake runs the TLS handshake in t over a raw transport whose
// protocol is tc, bounded by timeout.
func tlsHandshake(t *asyncio.T, tc *transportConn, conn *tls.Conn, timeout time.Duration) error {
	tc.reader = t
	var timer *asyncio.TimerHandle
	if timeout > 0 {
		timer = t.Loop().CallLater(timeout, func() {
			tc.failErr = ErrTLSHandshakeTimeout
			tc.wake()
		})
	}
	err := conn.Handshake()
	if timer != nil {
		timer.Cancel()
	}
	if err == nil && tc.failErr != nil {
		err = tc.failErr
	}
	if (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && (tc.eof || tc.lost) && tc.failErr == nil {
		// The peer closed the connection mid-handshake: asyncio's
		// ConnectionResetError, not crypto/tls's bare io.EOF.
		err = errTLSHandshakeEOF
	}
	return err
}

// startTLSOn upgrades raw to TLS in t: it makes a transportConn raw's
// protocol, runs the handshake, then gives app the TLS transport
// (ConnectionMade) and starts the reader task. If the handshake fails,
// raw is aborted, its fd closed before this returns (but for a
// cancellation, whose teardown runs in the next iteration); without
// callMade (StartTLS: app was already connected, over raw) app then gets
// ConnectionLost with the handshake's error (nil if the handshake was
// cancelled: the connection was closed here), in a later iteration.
func startTLSOn(t *asyncio.T, raw tlsCarrier, app Protocol, tcfg *tlsConfig, serverSide bool, serverHostname string, callMade bool) (*tlsTransport, error) {
	cfg := tcfg.cfg
	tc := &transportConn{raw: raw}
	raw.SetProtocol(tc)
	// As loop.start_tls: the handshake reads whatever the old protocol
	// had paused (a StreamReader past its limit pauses reading).
	raw.ResumeReading()
	var conn *tls.Conn
	if serverSide {
		conn = tls.Server(tc, cfg)
	} else {
		if cfg.ServerName == "" && serverHostname != "" && !cfg.InsecureSkipVerify {
			cfg = cfg.Clone()
			cfg.ServerName = serverHostname
		}
		conn = tls.Client(tc, cfg)
	}
	if err := tlsHandshake(t, tc, conn, tcfg.handshakeTimeout); err != nil {
		if !callMade {
			// asyncio's SSLProtocol calls the application's
			// connection_lost for a failed start_tls (it leaves it out
			// after a timeout or a cancellation, so that a stream's
			// wait_closed and read hang: here they end too), in a
			// later iteration than the failure.
			tc.failedApp, tc.failedErr = app, err
			if asyncio.IsCancelled(err) {
				tc.failedErr = nil
			}
		}
		if asyncio.IsCancelled(err) {
			// As loop.start_tls's transport.close() on a cancellation:
			// the teardown runs in the next iteration.
			raw.Abort()
		} else {
			// As asyncio's SSLProtocol._fatal_error (a failed or timed
			// out handshake): the socket is closed before the caller
			// resumes with the error; the application hears of it
			// after (deliverFailed, scheduled).
			failed := tc.failedApp
			tc.failedApp = nil
			raw.abortNow()
			tc.failedApp = failed
		}
		if tc.lost {
			// Lost before the handshake gave up, or just now: the
			// application's ConnectionLost is still to come.
			t.Loop().CallSoon(tc.deliverFailed)
		}
		return nil, err
	}
	// "sslcontext" is the config given (asyncio's), not the copy that
	// carries the server name.
	_, maxBuffer := raw.bufferLimit()
	tr := &tlsTransport{raw: raw, tc: tc, conn: conn, app: app, cfg: tcfg.cfg, shutdownTimeout: tcfg.shutdownTimeout, maxBuffer: maxBuffer}
	tc.owner = tr
	if sock := raw.socket(); sock.server != nil {
		sock.server.clients[sock] = tr
	}
	if callMade {
		if perr := callProtocol(func() { app.ConnectionMade(tr) }); perr != nil {
			// As asyncio's fatal error: reported now, the connection
			// aborted (a server stops counting it), and the application
			// gets ConnectionLost with the panic once the raw side is gone.
			tr.fatal(t, "Fatal error: protocol.connection_made() call failed.", perr)
			tr.finishReader() // no reader task will run
			return nil, perr
		}
	}
	return tr, nil
}

// newTLSTransportDialled starts TLS on fd, connected by the caller (a
// client, or for ConnectAcceptedSocket the server's end), and returns once
// the handshake is done.
func newTLSTransportDialled(t *asyncio.T, fd int, network string, app Protocol, o *options, serverHostname string, serverSide bool) (*tlsTransport, error) {
	waiter := asyncio.NewFuture[struct{}](t.Loop())
	tc0 := &transportConn{}
	raw := newSocketTransport(t.Loop(), fd, network, tc0, nil, waiter)
	raw.maxBuffer = o.maxWriteBuffer
	tc0.raw = raw
	if _, err := waiter.Await(t); err != nil {
		raw.Abort()
		return nil, err
	}
	tr, err := startTLSOn(t, raw, app, o.tls, serverSide, serverHostname, true)
	if err != nil {
		return nil, err
	}
	asyncio.CreateTask(t, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, tr.readLoop(rt) })
	return tr, nil
}

func newTLSTransportServer(l *asyncio.Loop, fd int, network string, app Protocol, s *Server) {
	tc0 := &transportConn{}
	raw := newSocketTransport(l, fd, network, tc0, s, nil)
	raw.maxBuffer = s.opts.maxWriteBuffer
	tc0.raw = raw
	asyncio.CreateTask(l, func(t *asyncio.T) (struct{}, error) {
		tr, err := startTLSOn(t, raw, app, s.opts.tls, true, "", true)
		if err != nil {
			// The handshake failed: the connection is aborted. A
			// cancellation (the loop's shutdown) ends the task cancelled.
			if asyncio.IsCancelled(err) {
				return struct{}{}, err
			}
			return struct{}{}, nil
		}
		return struct{}{}, tr.readLoop(t)
	})
}

// readLoop runs in the transport's reader task: it decrypts and delivers
// data to the application until EOF or the connection is lost, then
// arranges ConnectionLost.
//
// It returns the CancelledError that ended it, if one did, so that the
// reader task ends cancelled rather than swallow the cancellation (the
// loop's shutdown cancels it: Runner.Close, LoopGroup.Close).
func (tr *tlsTransport) readLoop(t *asyncio.T) error {
	tr.tc.reader = t
	// tls.Conn.Read returns at most one record's plaintext, 16 KiB by the
	// protocol (RFC 8446 5.1, RFC 5246 6.2.1): a larger buffer would only
	// be memory every open connection holds for its whole life.
	buf := make([]byte, tlsRecordMax)
	for {
		if !tr.waitWhilePaused(t) {
			tr.finishReader()
			return tr.readerCancel
		}
		n, err := tr.conn.Read(buf)
		if tr.awaitingPeer {
			// Shutting down: what the peer still sends is read and
			// dropped until its side ends (asyncio's unwrap).
			if err == nil {
				continue
			}
			tr.readEnded(t, err)
			break
		}
		if n > 0 {
			// PauseReading may have come while Read waited for the
			// record (from another task or callback): as asyncio's SSL
			// protocol, nothing reaches the application while it is
			// paused, so the plaintext waits for ResumeReading.
			if !tr.waitWhilePaused(t) {
				tr.finishReader()
				return tr.readerCancel
			}
			if !tr.deliver(t, buf[:n]) {
				break
			}
		}
		if err == nil {
			continue
		}
		tr.readEnded(t, err)
		break
	}
	tr.finishReader()
	return tr.readerCancel
}

// deliver hands plaintext to the application protocol of the time: to
// DataReceived (a copy), or to a BufferedProtocol's buffers. It reports
// whether readLoop goes on.
func (tr *tlsTransport) deliver(t *asyncio.T, data []byte) bool {
	if tr.stopped() {
		return false
	}
	if _, ok := tr.app.(BufferedProtocol); ok {
		return tr.readIntoProtocol(t, data)
	}
	data = append([]byte(nil), data...)
	if perr := callProtocol(func() { deliverData(tr.app, data) }); perr != nil {
		return tr.fatal(t, "Fatal error: protocol.data_received() call failed.", perr)
	}
	return true
}

// fatal reports err, raised by the application's protocol, and aborts
// the connection (asyncio's _fatal_error); the application gets
// ConnectionLost with err once the raw side is gone. It returns false,
// for readLoop's callers: the reading is over.
func (tr *tlsTransport) fatal(t *asyncio.T, msg string, err error) bool {
	t.Loop().CallExceptionHandler(asyncio.ExceptionContext{Message: msg, Err: err, Transport: tr, Protocol: tr.app})
	tr.fatalErr = err
	tr.raw.Abort()
	return false
}

// readEnded handles the error that ends readLoop: EOF, the connection
// lost, the reader task cancelled, or a TLS protocol error.
func (tr *tlsTransport) readEnded(t *asyncio.T, err error) {
	if asyncio.IsCancelled(err) {
		tr.readerCancel = err
	}
	switch {
	case asyncio.IsCancelled(err) || tr.tc.lost:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		tr.peerEnded = true
		if tr.awaitingPeer {
			// The shutdown Close began is over: the peer ended its side.
			tr.raw.Close()
			return
		}
		keepOpen := false
		if perr := callProtocol(func() { keepOpen = tr.app.EOFReceived() }); perr != nil {
			t.Loop().CallExceptionHandler(asyncio.ExceptionContext{Message: "Fatal error: protocol.eof_received() call failed.", Err: perr, Transport: tr, Protocol: tr.app})
		}
		// As asyncio's SSL protocol: a TLS connection cannot stay
		// half-open, so EOF always starts the shutdown.
		// A TLS layer above (StartTLS over this transport) always says
		// keep open, and its own session ends on its own EOF.
		if _, above := tr.app.(*transportConn); keepOpen && !above {
			slog.Warn("returning true from eof_received() has no effect when using ssl")
		}
		tr.Close()
	default: // a TLS protocol error
		tr.fatalErr = err
		tr.raw.Abort()
	}
}

// tlsRecordMax is the most plaintext one TLS record carries (RFC 8446
// 5.1): the size hint a BufferedProtocol gets from a TLS transport.
const tlsRecordMax = 16 * 1024

// stopped reports whether the application aborted the connection, or a
// fatal error did: the plaintext still buffered is dropped, as asyncio's
// SSL protocol drops it once out of the WRAPPED state.
func (tr *tlsTransport) stopped() bool { return tr.aborted || tr.fatalErr != nil }

// readIntoProtocol delivers plaintext to a BufferedProtocol (asyncio's
// SSLProtocol._do_read__buffered): GetBuffer, the data copied in,
// BufferUpdated, again until it is all delivered. The buffer is asked
// for only once the plaintext is there and filled at once, as asyncio's
// SSL protocol does: a buffer taken before a wait for the peer would be
// held across it, and filled for the protocol of that time, even after
// SetProtocol. Between buffers it stops while the application has paused
// reading, and hands the rest to DataReceived if the protocol was
// replaced by a plain one. It reports whether readLoop goes on.
func (tr *tlsTransport) readIntoProtocol(t *asyncio.T, data []byte) bool {
	for len(data) > 0 {
		if tr.stopped() {
			return false
		}
		if !tr.waitWhilePaused(t) {
			return false
		}
		bp, ok := tr.app.(BufferedProtocol)
		if !ok {
			return tr.deliver(t, data)
		}
		abuf, err := getProtocolBuffer(bp, tlsRecordMax)
		if err != nil {
			return tr.fatal(t, "Fatal error on SSL protocol", err)
		}
		n := copy(abuf, data)
		data = data[n:]
		if perr := callProtocol(func() { bp.BufferUpdated(n) }); perr != nil {
			return tr.fatal(t, "Fatal error on SSL protocol", perr)
		}
	}
	return true
}

// waitWhilePaused suspends the reader task t while the application has
// paused reading and the connection is not lost; false if t was
// cancelled meanwhile.
func (tr *tlsTransport) waitWhilePaused(t *asyncio.T) bool {
	for tr.readPaused && !tr.tc.lost && !tr.awaitingPeer {
		tr.resume = asyncio.NewFuture[struct{}](t.Loop())
		_, err := tr.resume.Await(t)
		tr.resume = nil
		if err != nil {
			tr.readerCancel = err // the reader task was cancelled
			return false
		}
	}
	return true
}

func (tr *tlsTransport) finishReader() {
	tr.readerDone = true
	tr.maybeDeliverLost()
}

// maybeDeliverLost calls the application's ConnectionLost once the raw
// connection is gone and the reader has delivered everything.
func (tr *tlsTransport) maybeDeliverLost() {
	if !tr.readerDone || !tr.tc.lost || tr.delivered {
		return
	}
	tr.delivered = true
	err := tr.tc.lostErr
	if tr.fatalErr != nil {
		err = tr.fatalErr
	}
	tr.app.ConnectionLost(err)
}

// Close sends close_notify and closes the connection once the peer has
// ended its side too, as asyncio's SSL protocol waits in its shutdown for
// the peer (a peer that ended first, or a reader that stopped, closes it
// at once); what the peer sends meanwhile is dropped. The shutdown
// timeout bounds the wait.
func (tr *tlsTransport) Close() {
	if tr.closing {
		return
	}
	tr.closing = true
	if !tr.tc.lost {
		tr.conn.CloseWrite() // close_notify, queued before the raw close
	}
	if tr.tc.lost || tr.peerEnded || tr.readerDone || tr.stopped() {
		tr.raw.Close()
	} else {
		tr.awaitingPeer = true
		if tr.readPaused {
			// The peer's end must be read, paused or not.
			tr.raw.ResumeReading()
			if tr.resume != nil && !tr.resume.Done() {
				tr.resume.SetResult(struct{}{})
			}
		}
	}
	if !tr.raw.lostScheduled() && tr.shutdownTimeout > 0 {
		// The raw transport closes once the peer has ended its side and
		// taken what is buffered; a peer that does neither would keep it
		// open for ever. As asyncio's ssl_shutdown_timeout: abort it
		// then, and the application's ConnectionLost gets
		// ErrTLSShutdownTimeout.
		tr.shutdownTimer = tr.raw.loopOf().CallLater(tr.shutdownTimeout, func() {
			tr.shutdownTimer = nil
			if !tr.tc.lost {
				tr.raw.forceClose(ErrTLSShutdownTimeout)
			}
		})
	}
}

func (tr *tlsTransport) Abort() {
	tr.closing = true
	tr.aborted = true
	tr.raw.Abort()
}

func (tr *tlsTransport) IsClosing() bool { return tr.closing || tr.raw.IsClosing() }

// ExtraInfo adds asyncio's SSL keys to the raw transport's:
// "sslcontext" (the *tls.Config), "ssl_object" (the *tls.Conn),
// "peercert" (the peer's leaf *x509.Certificate, once verified: see
// PeerCert), "cipher" (a TLSCipher)
// and "compression" (nil: TLS compression is never used, as ssl's
// compression() says None).
func (tr *tlsTransport) ExtraInfo(name string) any {
	switch name {
	case "sslcontext":
		return tr.cfg
	case "ssl_object":
		return tr.conn
	case "cipher":
		return cipherOf(tr.conn.ConnectionState())
	case "compression":
		return nil
	case "peercert":
		// Only a verified certificate, as ssl's getpeercert() gives
		// an empty dict for one it did not validate.
		if cs := tr.conn.ConnectionState(); len(cs.VerifiedChains) > 0 && len(cs.VerifiedChains[0]) > 0 {
			return cs.VerifiedChains[0][0]
		}
		return nil
	}
	return tr.raw.ExtraInfo(name)
}

// String describes the transport for messages: "<tlsTransport
// <socketTransport fd=7 open>>", closing once Close or Abort was called.
func (tr *tlsTransport) String() string {
	if tr.closing {
		return fmt.Sprintf("<tlsTransport closing %v>", tr.raw)
	}
	return fmt.Sprintf("<tlsTransport %v>", tr.raw)
}

// SetProtocol replaces the application protocol.
func (tr *tlsTransport) SetProtocol(p Protocol) { tr.app = p }

// Protocol returns the application protocol.
func (tr *tlsTransport) Protocol() Protocol { return tr.app }

func (tr *tlsTransport) PauseReading() {
	if tr.readPaused {
		return
	}
	tr.readPaused = true
	tr.raw.PauseReading()
}

func (tr *tlsTransport) ResumeReading() {
	if !tr.readPaused {
		return
	}
	tr.readPaused = false
	tr.raw.ResumeReading()
	if tr.resume != nil && !tr.resume.Done() {
		tr.resume.SetResult(struct{}{})
	}
}

func (tr *tlsTransport) IsReading() bool { return !tr.readPaused && !tr.IsClosing() }

func (tr *tlsTransport) Write(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if tr.IsClosing() || tr.tc.lost {
		// asyncio's SSLProtocol._write_appdata: dropped, with a warning
		// from the fifth such write on.
		if tr.connLost >= logThresholdForConnLostWrites {
			slog.Warn("SSL connection is closed")
		}
		tr.connLost++
		return nil
	}
	if tr.maxBuffer > 0 {
		held, max := tr.raw.bufferLimit()
		// Refuse before encrypting: a record tls.Conn could not hand on
		// whole would break the TLS stream for good.
		size := tr.writeCost(len(data))
		if held > 0 && held+size > max || size > max {
			return errWriteBufferFull(held, len(data), max)
		}
	}
	tr.sent += int64(len(data))
	if err := tr.tc.writeRecords(tr.conn, data); err != nil && !errors.Is(err, net.ErrClosed) && !isOSError(err) {
		return err
	}
	return nil
}

// writeCost bounds the bytes a write of n bytes becomes on the socket
// (tlsWireBound), with what a TLS carrier below adds (wireSize).
func (tr *tlsTransport) writeCost(n int) int {
	dynamicOff := tr.cfg != nil && tr.cfg.DynamicRecordSizingDisabled
	return tr.raw.wireSize(tlsWireBound(n, tr.sent, dynamicOff))
}

// tlsRecordOverhead bounds what crypto/tls adds to one record: a 5-byte
// header, a 16-byte explicit IV, a MAC of at most 32 bytes and at most 16
// of padding (TLS 1.2's CBC suites; the AEAD suites add less).
const tlsRecordOverhead = 5 + 16 + 32 + 16

// tlsWireBound bounds the bytes crypto/tls sends for a write of n bytes
// of application data, sent bytes into the connection. Full records
// carry 16 KiB; one more may be split off (TLS 1.0's 1/n-1 split); and
// while a connection has sent less than 128 KiB, crypto/tls's dynamic
// record sizing (Config.DynamicRecordSizingDisabled false) sends records
// of about 1.1 KiB growing by as much per record, at most 15 of them
// below 16 KiB in all. Counting only the full records undercounted a
// connection's first writes by up to a few hundred bytes, so that
// WithMaxWriteBuffer's limit could be passed.
func tlsWireBound(n int, sent int64, dynamicOff bool) int {
	records := n/16384 + 2
	if !dynamicOff && sent < 128<<10 {
		records += 15
	}
	return n + records*tlsRecordOverhead
}

// WriteLines writes each chunk in turn.
func (tr *tlsTransport) WriteLines(chunks ...[]byte) error { return writeEach(tr.Write, chunks) }

// WriteEOF is not supported over TLS, as in asyncio, whose SSL transport
// raises NotImplementedError (a RuntimeError): the error is a
// *RuntimeError that matches errors.ErrUnsupported, Go's spelling of it.
func (tr *tlsTransport) WriteEOF() error {
	return &asyncio.RuntimeError{Msg: "SSL transport does not support write_eof()", Err: errors.ErrUnsupported}
}

// CanWriteEOF is false: TLS has no half-close.
func (tr *tlsTransport) CanWriteEOF() bool { return false }

// The write buffer is the raw transport's (encrypted bytes, as asyncio
// counts them).

// WriteBufferSize returns the raw transport's buffered bytes.
func (tr *tlsTransport) WriteBufferSize() int { return tr.raw.WriteBufferSize() }

// SetWriteBufferLimits sets the raw transport's water marks.
func (tr *tlsTransport) SetWriteBufferLimits(high, low int) error {
	return tr.raw.SetWriteBufferLimits(high, low)
}

// WriteBufferLimits returns the raw transport's water marks (high, low).
func (tr *tlsTransport) WriteBufferLimits() (high, low int) { return tr.raw.WriteBufferLimits() }

// checkServerName refuses a client handshake that could only fail: cfg
// has no ServerName, verifies the server's certificate (InsecureSkipVerify
// is false), and no serverHostname was given, so crypto/tls would refuse
// to start it ("either ServerName or InsecureSkipVerify must be
// specified") once the transport was handed over. A *ValueError, as
// asyncio's "check_hostname requires server_hostname" (ssl.wrap_socket)
// and create_connection's "You must set server_hostname when using ssl
// without a host"; CPython 3.13's start_tls itself does not refuse, but
// handshakes verifying the chain without the host name, which crypto/tls
// does only with verification turned off.
func checkServerName(call string, cfg *tls.Config, serverSide bool, serverHostname string) error {
	if serverSide || cfg == nil || cfg.ServerName != "" || cfg.InsecureSkipVerify || serverHostname != "" {
		return nil
	}
	return &asyncio.ValueError{Msg: call + ": check_hostname requires server_hostname: give a server host name, or a tls.Config with ServerName (or InsecureSkipVerify)"}
}

// StartTLS upgrades an established transport to TLS in t (asyncio's
// loop.start_tls): it returns the new transport, over which p (already
// connected) now talks; the old transport must not be used any more.
// serverSide selects the server handshake. It takes the options
// WithTLSHandshakeTimeout and WithTLSShutdownTimeout (asyncio's
// ssl_handshake_timeout and ssl_shutdown_timeout, defaults 60 s and 30 s);
// any other option, or a bad value, is a *ValueError before the transport
// is touched, and so are a nil cfg, a transport that is neither a socket
// transport nor a TLS one (asyncio's TypeError "is not supported by
// start_tls()": a pipe, subprocess or datagram transport, or a Transport
// implemented outside the package), a client handshake without a server
// name to verify (serverHostname "", cfg.ServerName "" and
// InsecureSkipVerify false) and a nil p, checked in that order.
//
// Over a TLS transport (one from WithTLS, or from an earlier StartTLS) the
// new session's records travel inside the old session, as asyncio's
// start_tls over an SSL transport: Close shuts down the new session, then
// the old one and the socket; Abort aborts them all; p gets ConnectionLost
// once. Write flow control is the socket's buffer (PauseWriting past its
// high-water mark), PauseReading stops reading from the old session, and
// ExtraInfo gives the new session's "sslcontext", "ssl_object", "peercert"
// and "cipher", and the socket's "sockname", "peername" and "socket". A
// failed handshake aborts the whole connection, old session included.
func StartTLS(t *asyncio.T, tr Transport, p Protocol, cfg *tls.Config, serverSide bool, serverHostname string, opts ...Option) (Transport, error) {
	if cfg == nil {
		// asyncio: TypeError "sslcontext is expected to be an instance of
		// ssl.SSLContext", before the transport is touched.
		return nil, &asyncio.ValueError{Msg: "StartTLS: nil *tls.Config"}
	}
	o, err := buildOptions("StartTLS", opts)
	if err != nil {
		return nil, err
	}
	var raw tlsCarrier
	switch c := tr.(type) {
	case *socketTransport:
		if c != nil {
			raw = c
		}
	case *tlsTransport:
		if c != nil {
			raw = c
		}
	}
	if raw == nil {
		// asyncio: TypeError "transport ... is not supported by
		// start_tls()", checked before anything else but the context.
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf("StartTLS: transport %T is not supported (neither a socket nor a TLS transport)", tr)}
	}
	if err := checkServerName("StartTLS", cfg, serverSide, serverHostname); err != nil {
		return nil, err
	}
	if p == nil {
		// The protocol the TLS transport delivers to: a nil one would only
		// fail with the first data, after the handshake.
		return nil, &asyncio.ValueError{Msg: "StartTLS: nil protocol"}
	}
	if raw.IsClosing() {
		return nil, os.NewSyscallError("start_tls", errors.New("transport is closing"))
	}
	tcfg := &tlsConfig{cfg: cfg, handshakeTimeout: defaultTLSHandshakeTimeout, shutdownTimeout: defaultTLSShutdownTimeout}
	if d := o.tlsHandshakeTimeout; d != nil {
		tcfg.handshakeTimeout = *d
	}
	if d := o.tlsShutdownTimeout; d != nil {
		tcfg.shutdownTimeout = *d
	}
	ntr, err := startTLSOn(t, raw, p, tcfg, serverSide, serverHostname, false)
	if err != nil {
		return nil, err
	}
	asyncio.CreateTask(t, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, ntr.readLoop(rt) })
	return ntr, nil
}
