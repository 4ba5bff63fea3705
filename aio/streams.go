//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/go-asyncio/asyncio"
)

// DefaultStreamLimit is asyncio's _DEFAULT_LIMIT: the stream reader's
// buffer limit, 64 KiB (STREAM-1).
const DefaultStreamLimit = 64 * 1024

// StreamReader is asyncio.StreamReader: a buffer fed by a protocol and
// read by one task at a time. Its methods must be called on the loop.
// Make it with NewStreamReader: the zero StreamReader has no loop and no
// limit, and its reads, feeds and SetException panic with a
// *asyncio.ValueError that says so.
type StreamReader struct {
	loop      *asyncio.Loop
	limit     int
	buf       []byte
	eof       bool
	waiter    *asyncio.Future[struct{}]
	exception error
	transport Transport
	paused    bool
}

// NewStreamReader returns a reader on owner's loop with the given limit
// (asyncio's StreamReader(limit=...); DefaultStreamLimit is asyncio's
// default). A limit <= 0 is a programming error: it panics with a
// *asyncio.ValueError "Limit cannot be <= 0" (STREAM-1), as the core's
// constructors do.
func NewStreamReader(owner asyncio.LoopOwner, limit int) *StreamReader {
	if limit <= 0 {
		panic(errBadLimit())
	}
	return &StreamReader{loop: asyncio.LoopOf(owner), limit: limit}
}

// errBadLimit is asyncio's ValueError for a limit <= 0 (STREAM-1).
func errBadLimit() *asyncio.ValueError { return &asyncio.ValueError{Msg: "Limit cannot be <= 0"} }

// String is asyncio's StreamReader repr: "<StreamReader 4 bytes eof
// limit=123 waiter=<Future pending> exception=... transport=...
// paused>", each part only when it applies.
func (r *StreamReader) String() string {
	info := []string{"StreamReader"}
	if len(r.buf) > 0 {
		info = append(info, fmt.Sprintf("%d bytes", len(r.buf)))
	}
	if r.eof {
		info = append(info, "eof")
	}
	if r.limit != DefaultStreamLimit {
		info = append(info, fmt.Sprintf("limit=%d", r.limit))
	}
	if r.waiter != nil {
		info = append(info, fmt.Sprintf("waiter=%v", r.waiter))
	}
	if r.exception != nil {
		info = append(info, fmt.Sprintf("exception=%v", r.exception))
	}
	if r.transport != nil {
		info = append(info, fmt.Sprintf("transport=%v", r.transport))
	}
	if r.paused {
		info = append(info, "paused")
	}
	return "<" + strings.Join(info, " ") + ">"
}

// Err returns the stored error, if any (asyncio's exception()).
func (r *StreamReader) Err() error { return r.exception }

// SetException stores err; the next read returns it, and a waiting read
// is woken with it (asyncio's set_exception). A nil err is a programming
// error: it panics with a *asyncio.ValueError before anything changes
// (asyncio's waiter.set_exception(None) raises TypeError after it has
// let go of the waiting read, which then waits for ever).
func (r *StreamReader) SetException(err error) {
	r.checkMade("StreamReader.SetException")
	if err == nil {
		panic(&asyncio.ValueError{Msg: "StreamReader.SetException: nil error"})
	}
	r.exception = err
	if w := r.waiter; w != nil {
		r.waiter = nil
		if !w.Done() {
			w.SetException(err)
		}
	}
}

func (r *StreamReader) wakeupWaiter() {
	if w := r.waiter; w != nil {
		r.waiter = nil
		if !w.Done() {
			w.SetResult(struct{}{})
		}
	}
}

func (r *StreamReader) setTransport(tr Transport) { r.transport = tr }

func (r *StreamReader) maybeResumeTransport() {
	if r.paused && len(r.buf) <= r.limit {
		r.paused = false
		r.transport.ResumeReading()
	}
}

// FeedEOF records EOF and wakes the waiting read (asyncio's feed_eof).
func (r *StreamReader) FeedEOF() {
	r.checkMade("StreamReader.FeedEOF")
	r.eof = true
	r.wakeupWaiter()
}

// checkMade panics with a *asyncio.ValueError naming op when r was not
// made by NewStreamReader (the zero StreamReader has no loop and a limit
// of 0, so that a read until EOF would return at once, taking nothing).
func (r *StreamReader) checkMade(op string) {
	if r.loop == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero StreamReader (make it with NewStreamReader(owner, limit))"})
	}
}

// errFeedAfterEOF is FeedData's panic after FeedEOF, where asyncio
// asserts: a *asyncio.RuntimeError, so that a recover can match it with
// errors.Is(err, asyncio.ErrRuntime).
func errFeedAfterEOF() *asyncio.RuntimeError {
	return &asyncio.RuntimeError{Msg: "feed_data after feed_eof"}
}

// AtEOF reports whether EOF was fed and the buffer is empty (asyncio's
// at_eof).
func (r *StreamReader) AtEOF() bool { return r.eof && len(r.buf) == 0 }

// FeedData appends data and wakes the waiting read; past twice the limit
// the transport's reading is paused (STREAM-2). Feeding after EOF panics
// with a *asyncio.RuntimeError "feed_data after feed_eof", where asyncio
// asserts.
func (r *StreamReader) FeedData(data []byte) {
	r.checkMade("StreamReader.FeedData")
	if r.eof {
		panic(errFeedAfterEOF())
	}
	if len(data) == 0 {
		return
	}
	r.feed(append([]byte(nil), data...))
}

// feed appends data, which the reader may keep (the transports pass
// fresh slices): into an empty buffer it is adopted without a copy.
func (r *StreamReader) feed(data []byte) {
	if r.eof {
		panic(errFeedAfterEOF())
	}
	if len(data) == 0 {
		return
	}
	if len(r.buf) == 0 {
		r.buf = data
	} else {
		r.buf = append(r.buf, data...)
	}
	r.wakeupWaiter()
	if r.transport != nil && !r.paused && r.pastTwiceTheLimit() {
		r.transport.PauseReading()
		r.paused = true
	}
}

// pastTwiceTheLimit is asyncio's len(buffer) > 2 * limit, the mark past
// which the transport is paused, written so that a limit past half of
// math.MaxInt (math.MaxInt: no limit) does not overflow into a negative
// mark that every byte would pass.
func (r *StreamReader) pastTwiceTheLimit() bool {
	return len(r.buf) > r.limit && len(r.buf)-r.limit > r.limit
}

// waitForData is asyncio's _wait_for_data (STREAM-3).
func (r *StreamReader) waitForData(t *asyncio.T, name string) error {
	if r.waiter != nil {
		return runtimeErrorf("%s() called while another coroutine is already waiting for incoming data", name)
	}
	if r.paused {
		r.paused = false
		r.transport.ResumeReading()
	}
	w := asyncio.NewFuture[struct{}](r.loop)
	r.waiter = w
	_, err := w.Await(t)
	if r.waiter == w {
		r.waiter = nil
	}
	return err
}

// unread puts blocks taken by a failed read back at the front of the
// buffer, pausing the transport as feed would.
func (r *StreamReader) unread(blocks [][]byte) {
	if len(blocks) == 0 {
		return
	}
	r.buf = append(bytes.Join(blocks, nil), r.buf...)
	if r.transport != nil && !r.paused && r.pastTwiceTheLimit() {
		r.transport.PauseReading()
		r.paused = true
	}
}

func (r *StreamReader) take(n int) []byte {
	var data []byte
	if n == len(r.buf) {
		data, r.buf = r.buf, nil // the whole buffer: hand it over, no copy
	} else {
		data = append([]byte(nil), r.buf[:n]...)
		r.buf = r.buf[n:]
	}
	r.maybeResumeTransport()
	return data
}

// Read returns up to n bytes (asyncio's read, STREAM-4): n == 0 returns
// an empty slice; n < 0 reads until EOF; n > 0 waits for at least one
// byte or EOF. At EOF with an empty buffer it returns an empty slice and
// no error. A read until EOF that fails (t cancelled, or an error set on
// the stream) consumes nothing: the blocks it took go back to the front
// of the buffer, where asyncio's read(-1) drops them.
func (r *StreamReader) Read(t *asyncio.T, n int) ([]byte, error) {
	r.checkMade("StreamReader.Read")
	if r.exception != nil {
		return nil, r.exception
	}
	if n == 0 {
		return []byte{}, nil
	}
	if n < 0 {
		// As asyncio: collect the blocks, join them once at EOF (growing
		// one slice instead would copy it over and over).
		var blocks [][]byte
		size := 0
		for {
			block, err := r.Read(t, r.limit)
			if err != nil {
				r.unread(blocks)
				return nil, err
			}
			if len(block) == 0 {
				if len(blocks) == 1 {
					return blocks[0], nil
				}
				out := make([]byte, 0, size)
				for _, b := range blocks {
					out = append(out, b...)
				}
				return out, nil
			}
			blocks = append(blocks, block)
			size += len(block)
		}
	}
	if len(r.buf) == 0 && !r.eof {
		if err := r.waitForData(t, "read"); err != nil {
			return nil, err
		}
	}
	return r.take(min(n, len(r.buf))), nil
}

// ReadExactly returns exactly n bytes (asyncio's readexactly, STREAM-5).
// At EOF first it returns an *IncompleteReadError with the buffered bytes
// and clears the buffer. If t is cancelled while waiting, nothing is
// consumed: the bytes already received stay in the buffer.
func (r *StreamReader) ReadExactly(t *asyncio.T, n int) ([]byte, error) {
	r.checkMade("StreamReader.ReadExactly")
	if n < 0 {
		return nil, &asyncio.ValueError{Msg: "readexactly size can not be less than zero"}
	}
	if r.exception != nil {
		return nil, r.exception
	}
	if n == 0 {
		return []byte{}, nil
	}
	for len(r.buf) < n {
		if r.eof {
			partial := append([]byte{}, r.buf...)
			r.buf = nil
			return nil, &IncompleteReadError{Partial: partial, Expected: n}
		}
		if err := r.waitForData(t, "readexactly"); err != nil {
			return nil, err
		}
	}
	return r.take(n), nil
}

// ReadUntil reads up to and including a separator (asyncio's readuntil,
// STREAM-6). Since 3.13 several separators may be given: the match that
// ends first wins (a shorter chunk), whichever separator it is; of two
// that end at the same place the shorter separator is the match, as
// asyncio tries them shortest first, and it is that match's start the
// limit is checked against. Errors:
// *ValueError for no separator or an empty one; *LimitOverrunError when no
// separator is within the limit (the data stays buffered); an
// *IncompleteReadError (Expected -1) with the whole buffer, which is
// cleared, at EOF first.
func (r *StreamReader) ReadUntil(t *asyncio.T, seps ...[]byte) ([]byte, error) {
	r.checkMade("StreamReader.ReadUntil")
	if len(seps) == 0 {
		return nil, &asyncio.ValueError{Msg: "Separator should contain at least one element"}
	}
	if len(seps) > 1 {
		// asyncio's sorted(separator, key=len): the first (shortest) of
		// the matches that end together wins.
		seps = slices.Clone(seps)
		slices.SortStableFunc(seps, func(a, b []byte) int { return len(a) - len(b) })
	}
	minSep, maxSep := len(seps[0]), len(seps[len(seps)-1])
	if minSep == 0 {
		return nil, &asyncio.ValueError{Msg: "Separator should be at least one-byte string"}
	}
	if r.exception != nil {
		return nil, r.exception
	}
	offset := 0
	matchStart, matchEnd := -1, -1
	for {
		buflen := len(r.buf)
		// Enough data for the shortest separator to fit past offset?
		if buflen-offset >= minSep {
			for _, sep := range seps {
				if i := bytes.Index(r.buf[offset:], sep); i >= 0 {
					if end := offset + i + len(sep); matchEnd < 0 || end < matchEnd {
						matchStart, matchEnd = offset+i, end
					}
				}
			}
			if matchEnd >= 0 {
				break
			}
			// The longest separator may straddle what comes next.
			offset = max(0, buflen+1-maxSep)
			if offset > r.limit {
				return nil, &LimitOverrunError{Msg: "Separator is not found, and chunk exceed the limit", Consumed: offset}
			}
		}
		// A complete match may be buffered even at EOF: look first.
		if r.eof {
			chunk := append([]byte{}, r.buf...)
			r.buf = nil
			return nil, &IncompleteReadError{Partial: chunk, Expected: -1}
		}
		if err := r.waitForData(t, "readuntil"); err != nil {
			return nil, err
		}
	}
	if matchStart > r.limit {
		return nil, &LimitOverrunError{Msg: "Separator is found, but chunk is longer than limit", Consumed: matchStart}
	}
	return r.take(matchEnd), nil
}

// ReadLine reads one line including "\n" (asyncio's readline, STREAM-7).
// At EOF it returns the partial last line (empty at EOF). A line longer
// than the limit is dropped from the buffer (through its "\n" if that is
// buffered, else the whole buffer) and a *ValueError is returned that
// also unwraps to the *LimitOverrunError; the stream stays usable.
func (r *StreamReader) ReadLine(t *asyncio.T) ([]byte, error) {
	r.checkMade("StreamReader.ReadLine")
	line, err := r.ReadUntil(t, []byte{'\n'})
	switch e := err.(type) {
	case nil:
		return line, nil
	case *IncompleteReadError:
		return e.Partial, nil
	case *LimitOverrunError:
		if e.Consumed < len(r.buf) && r.buf[e.Consumed] == '\n' {
			r.buf = r.buf[e.Consumed+1:]
		} else {
			r.buf = nil
		}
		r.maybeResumeTransport()
		return nil, &lineLimitError{ValueError: asyncio.ValueError{Msg: e.Msg}, overrun: e}
	}
	return nil, err
}

// streamProtocol is asyncio's StreamReaderProtocol with its
// FlowControlMixin: it feeds the reader, tracks write pause state for
// Drain, and on a server runs the client-connected callback as a task.
type streamProtocol struct {
	flowControlMixin
	reader      *StreamReader
	transport   Transport
	overTLS     bool
	onConnected func(t *asyncio.T, r *StreamReader, w *StreamWriter) error
	task        *asyncio.Task[struct{}]
	closed      *asyncio.Future[struct{}]
	handler     handlerWriter // STREAM-11 (writer_cleanup.go)
	// handlerDone, when set (a group server's worker, least-conns),
	// hears how onConnected ended: failed when it returned an error or
	// panicked, not when it returned nil; not called when it was
	// cancelled. It is called before the transport is closed for a
	// failure, so the failure is counted before the connection is gone.
	handlerDone func(failed bool)
}

func newStreamProtocol(l *asyncio.Loop, r *StreamReader, cb func(*asyncio.T, *StreamReader, *StreamWriter) error) *streamProtocol {
	return &streamProtocol{flowControlMixin: flowControlMixin{loop: l}, reader: r, onConnected: cb, closed: asyncio.NewFuture[struct{}](l)}
}

func (p *streamProtocol) closeWaiter() *asyncio.Future[struct{}] { return p.closed }

func (p *streamProtocol) ConnectionMade(tr Transport) {
	p.transport = tr
	_, p.overTLS = tr.(*tlsTransport)
	p.reader.setTransport(tr)
	if p.onConnected == nil {
		return
	}
	w := &StreamWriter{transport: tr, protocol: p, reader: p.reader, loop: p.loop}
	r := p.reader
	cb := p.onConnected
	p.holdWriter(w) // STREAM-11: held until cb returns (writer_cleanup.go)
	p.task = asyncio.CreateTask(p.loop, func(t *asyncio.T) (struct{}, error) { return struct{}{}, cb(t, r, p.handlerWriter()) })
	p.task.AddDoneCallback(func() {
		p.releaseWriter()
		if p.task.Cancelled() {
			tr.Close()
			return
		}
		err := p.task.Err()
		if p.handlerDone != nil {
			p.handlerDone(err != nil)
		}
		if err != nil {
			// asyncio's context has the message, the exception and the
			// transport, no task (its handler runs in the context
			// connection_made had, not the handler task's).
			p.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "Unhandled exception in client_connected_cb", Err: err, Transport: tr})
			tr.Close()
		}
	})
}

func (p *streamProtocol) replaceTransport(tr Transport) {
	p.transport = tr
	_, p.overTLS = tr.(*tlsTransport)
	p.reader.setTransport(tr)
}

// DataReceived feeds the reader a copy of data: whoever calls it (a
// protocol of the user's forwarding what it unwrapped into a scratch
// buffer) may reuse the slice once it returns, as asyncio's feed_data
// copies a bytearray it is given. The package's transports, which hand
// over a fresh slice, call receiveOwned instead (deliverData).
//
// After ConnectionLost the protocol has let go of its reader, as
// asyncio's StreamReaderProtocol drops it: data and EOF that still
// arrive (a caller driving the protocol out of order) are ignored, not
// fed to a reader that has seen its end.
func (p *streamProtocol) DataReceived(data []byte) {
	if !p.connLost {
		p.reader.FeedData(data)
	}
}

// receiveOwned feeds the reader data, which it may keep without a copy.
func (p *streamProtocol) receiveOwned(data []byte) {
	if !p.connLost {
		p.reader.feed(data)
	}
}

// ownedDataReceiver is a protocol of the package that may keep the slice
// it is given: see deliverData.
type ownedDataReceiver interface{ receiveOwned(data []byte) }

// deliverData is how the package's transports call DataReceived with a
// slice they allocated for the call and never touch again: a protocol of
// the package that can keep it takes it without a copy.
func deliverData(p Protocol, data []byte) {
	if o, ok := p.(ownedDataReceiver); ok {
		o.receiveOwned(data)
		return
	}
	p.DataReceived(data)
}

func (p *streamProtocol) EOFReceived() bool {
	if !p.connLost {
		p.reader.FeedEOF()
	}
	// Over TLS, half-closed connections are not supported.
	return !p.overTLS
}

func (p *streamProtocol) ConnectionLost(err error) {
	p.handler.connectionGone()
	if p.connLost {
		return // asyncio: the reader is gone after the first
	}
	if err == nil {
		p.reader.FeedEOF()
	} else {
		p.reader.SetException(err)
	}
	if !p.closed.Done() {
		if err == nil {
			p.closed.SetResult(struct{}{})
		} else {
			p.closed.SetException(err)
			_ = p.closed.Err() // WaitClosed is optional: mark the error retrieved
		}
	}
	p.flowControlMixin.lost(err)
}

// flowControlMixin is asyncio's FlowControlMixin: the write pause state
// a protocol keeps for StreamWriter.Drain. The stream protocol and the
// subprocess's embed it.
type flowControlMixin struct {
	loop         *asyncio.Loop
	paused       bool
	drainWaiters []*asyncio.Future[struct{}]
	connLost     bool
}

// PauseWriting is called by the transport above the high water mark.
func (p *flowControlMixin) PauseWriting() { p.paused = true }

// ResumeWriting is called by the transport at the low water mark: it
// wakes Drain.
func (p *flowControlMixin) ResumeWriting() {
	p.paused = false
	ws := p.drainWaiters
	p.drainWaiters = nil
	for _, w := range ws {
		if !w.Done() {
			w.SetResult(struct{}{})
		}
	}
}

// lost is FlowControlMixin.connection_lost: it wakes Drain.
func (p *flowControlMixin) lost(err error) {
	p.connLost = true
	if !p.paused {
		return
	}
	ws := p.drainWaiters
	p.drainWaiters = nil
	for _, w := range ws {
		if w.Done() {
			continue
		}
		if err == nil {
			w.SetResult(struct{}{})
		} else {
			w.SetException(err)
		}
	}
}

// drainHelper is FlowControlMixin._drain_helper (STREAM-9).
func (p *flowControlMixin) drainHelper(t *asyncio.T) error {
	if p.connLost {
		return errConnectionLost
	}
	if !p.paused {
		return nil
	}
	w := asyncio.NewFuture[struct{}](p.loop)
	p.drainWaiters = append(p.drainWaiters, w)
	_, err := w.Await(t)
	for i, x := range p.drainWaiters {
		if x == w {
			p.drainWaiters = append(p.drainWaiters[:i], p.drainWaiters[i+1:]...)
			break
		}
	}
	return err
}

// writerProtocol is what a StreamWriter needs of the protocol under it:
// Drain's flow control and WaitClosed's future. The stream protocol of a
// connection and a subprocess's protocol (for its stdin) provide it.
type writerProtocol interface {
	drainHelper(t *asyncio.T) error
	closeWaiter() *asyncio.Future[struct{}]
}

// NewStreamReaderProtocol returns asyncio's StreamReaderProtocol over r:
// a Protocol that feeds r what its transport receives, and gives a
// StreamWriter made with NewStreamWriter its flow control. With
// ConnectReadPipe it reads a pipe (os.Stdin, say) as a stream. A nil r
// panics with a *ValueError.
func NewStreamReaderProtocol(r *StreamReader) Protocol {
	if r == nil {
		panic(&asyncio.ValueError{Msg: "NewStreamReaderProtocol: nil reader"})
	}
	return newStreamProtocol(r.loop, r, nil)
}

// NewStreamWriter returns a StreamWriter over tr (asyncio's
// StreamWriter(transport, protocol, reader, loop)): p must be tr's
// protocol made by NewStreamReaderProtocol, which gives Drain its flow
// control; r, which may be nil, is the reader whose error Drain reports
// first. With ConnectWritePipe it writes a pipe as a stream. Another
// protocol, or a nil tr, panics with a *ValueError. As every StreamWriter
// in asyncio 3.13 (StreamWriter.__del__), and as OpenConnection's, a
// writer that is collected unclosed closes its transport (in debug mode
// it warns "unclosed <StreamWriter ...>"): keep it while you use it.
func NewStreamWriter(tr WriteTransport, p Protocol, r *StreamReader) *StreamWriter {
	sp, ok := p.(*streamProtocol)
	if !ok {
		panic(&asyncio.ValueError{Msg: "NewStreamWriter: the protocol must come from NewStreamReaderProtocol"})
	}
	full, ok := tr.(Transport)
	if !ok {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("NewStreamWriter: not a transport of this package: %T", tr)})
	}
	if sp.transport == nil {
		sp.transport = full
	}
	w := &StreamWriter{loop: sp.loop, transport: full, protocol: sp, reader: r}
	closeWhenCollected(w, sp) // CPython's StreamWriter.__del__, as OpenConnection's writer
	return w
}

// StreamWriter is asyncio.StreamWriter: the write side of a stream
// connection. Its methods must be called on the loop. The zero
// StreamWriter has no transport: its methods (but String) panic with a
// *asyncio.ValueError that says so; OpenConnection, StartServer and
// NewStreamWriter make one.
type StreamWriter struct {
	loop      *asyncio.Loop
	transport Transport
	protocol  writerProtocol
	reader    *StreamReader
}

// checkMade panics with a *asyncio.ValueError naming op when w was not
// made by this package (the zero StreamWriter has no transport).
func (w *StreamWriter) checkMade(op string) {
	if w.transport == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero StreamWriter (get one from OpenConnection, StartServer or NewStreamWriter)"})
	}
}

// String is asyncio's StreamWriter repr: "<StreamWriter
// transport=<socketTransport fd=7 open> reader=<StreamReader ...>>", the
// reader only when there is one.
func (w *StreamWriter) String() string {
	s := fmt.Sprintf("<StreamWriter transport=%v", w.transport)
	if w.reader != nil {
		s += fmt.Sprintf(" reader=%v", w.reader)
	}
	return s + ">"
}

// Transport returns the underlying transport (asyncio's transport).
func (w *StreamWriter) Transport() Transport {
	w.checkMade("StreamWriter.Transport")
	return w.transport
}

// Write writes data without blocking (asyncio's write); call Drain to
// respect flow control.
func (w *StreamWriter) Write(data []byte) error {
	w.checkMade("StreamWriter.Write")
	return w.transport.Write(data)
}

// WriteLines writes each chunk (asyncio's writelines).
func (w *StreamWriter) WriteLines(chunks ...[]byte) error {
	w.checkMade("StreamWriter.WriteLines")
	return w.transport.WriteLines(chunks...)
}

// WriteEOF half-closes the connection (asyncio's write_eof).
func (w *StreamWriter) WriteEOF() error {
	w.checkMade("StreamWriter.WriteEOF")
	return w.transport.WriteEOF()
}

// CanWriteEOF reports whether WriteEOF is supported (false over TLS).
func (w *StreamWriter) CanWriteEOF() bool {
	w.checkMade("StreamWriter.CanWriteEOF")
	return w.transport.CanWriteEOF()
}

// Close closes the transport (asyncio's close); IsClosing is true at once
// (STREAM-10).
func (w *StreamWriter) Close() {
	w.checkMade("StreamWriter.Close")
	w.transport.Close()
}

// IsClosing reports whether the transport is closing.
func (w *StreamWriter) IsClosing() bool {
	w.checkMade("StreamWriter.IsClosing")
	return w.transport.IsClosing()
}

// ExtraInfo is the transport's ExtraInfo (asyncio's get_extra_info).
func (w *StreamWriter) ExtraInfo(name string) any {
	w.checkMade("StreamWriter.ExtraInfo")
	return w.transport.ExtraInfo(name)
}

// WaitClosed waits until the connection is lost and returns the error it
// was lost with, nil for a clean close (asyncio's wait_closed, STREAM-10).
func (w *StreamWriter) WaitClosed(t *asyncio.T) error {
	w.checkMade("StreamWriter.WaitClosed")
	_, err := w.protocol.closeWaiter().Await(t)
	// A collected writer closes its connection (STREAM-11): w must stay
	// reachable while its caller waits on it, even if nothing else holds it.
	runtime.KeepAlive(w)
	return err
}

// Drain waits until the transport's write buffer is at or below the low
// water mark (asyncio's drain, STREAM-9): the reader's stored error is
// returned first; a closing transport gets one yield so ConnectionLost can
// run; a lost connection returns an error matching syscall.ECONNRESET
// ("Connection lost") or the error the connection was lost with.
func (w *StreamWriter) Drain(t *asyncio.T) error {
	w.checkMade("StreamWriter.Drain")
	if w.reader != nil {
		if err := w.reader.Err(); err != nil {
			return err
		}
	}
	if w.transport.IsClosing() {
		if err := asyncio.Sleep(t, 0); err != nil {
			return err
		}
	}
	err := w.protocol.drainHelper(t)
	runtime.KeepAlive(w) // as in WaitClosed: not collected while it drains
	return err
}

// StartTLS upgrades the connection to TLS (asyncio's
// StreamWriter.start_tls): a writer of a StartServer connection does the
// server handshake, others the client handshake. Data already buffered
// in the reader stays there. It takes StartTLS's options
// (WithTLSHandshakeTimeout, WithTLSShutdownTimeout), checked before
// anything is done, as is a client's server name (see StartTLS).
func (w *StreamWriter) StartTLS(t *asyncio.T, cfg *tls.Config, serverHostname string, opts ...Option) error {
	w.checkMade("StreamWriter.StartTLS")
	sp, ok := w.protocol.(*streamProtocol)
	if !ok {
		return runtimeErrorf("start_tls() is only for stream connections, not for a pipe")
	}
	if _, err := buildOptions("StartTLS", opts); err != nil {
		return err
	}
	serverSide := sp.onConnected != nil
	if err := checkServerName("StartTLS", cfg, serverSide, serverHostname); err != nil {
		return err // before Drain, as the options
	}
	if err := w.Drain(t); err != nil {
		return err
	}
	ntr, err := StartTLS(t, w.transport, sp, cfg, serverSide, serverHostname, opts...)
	if err != nil {
		return err
	}
	w.transport = ntr
	sp.replaceTransport(ntr)
	return nil
}

// openStream is asyncio.open_connection's body: a reader, a protocol
// that feeds it, and connect (CreateConnection or CreateUnixConnection)
// with that protocol's factory.
func openStream(t *asyncio.T, call string, opts []Option, connect func(factory func() Protocol) (Transport, Protocol, error)) (*StreamReader, *StreamWriter, error) {
	o, err := buildOptions(call, opts)
	if err != nil {
		return nil, nil, err
	}
	return openStreamWith(t, o, connect)
}

// openStreamWith is openStream with its options built.
func openStreamWith(t *asyncio.T, o *options, connect func(factory func() Protocol) (Transport, Protocol, error)) (*StreamReader, *StreamWriter, error) {
	r := NewStreamReader(t, o.limit)
	p := newStreamProtocol(t.Loop(), r, nil)
	tr, _, err := connect(func() Protocol { return p })
	if err != nil {
		return nil, nil, err
	}
	w := &StreamWriter{loop: t.Loop(), transport: tr, protocol: p, reader: r}
	closeWhenCollected(w, p) // STREAM-11 (writer_cleanup.go)
	return r, w, nil
}

// OpenConnection connects to host:port and returns a (reader, writer)
// pair (asyncio.open_connection). A writer that is collected unclosed
// closes the connection (STREAM-11: in debug mode it warns "unclosed
// <StreamWriter ...>"): keep the writer while you use the reader. Options: WithStreamLimit and those of
// CreateConnection.
func OpenConnection(t *asyncio.T, host string, port int, opts ...Option) (*StreamReader, *StreamWriter, error) {
	// The options are built once, for both calls (CreateConnection's
	// check of them with the via mark finds what this one found).
	o, err := buildOptions("OpenConnection", opts)
	if err != nil {
		return nil, nil, err
	}
	return openStreamWith(t, o, func(f func() Protocol) (Transport, Protocol, error) {
		if err := checkPort(port); err != nil {
			return nil, nil, err
		}
		return createConnection(t, f, host, port, o)
	})
}

// OpenUnixConnection connects to the Unix socket path
// (asyncio.open_unix_connection).
func OpenUnixConnection(t *asyncio.T, path string, opts ...Option) (*StreamReader, *StreamWriter, error) {
	return openStream(t, "OpenUnixConnection", opts, func(f func() Protocol) (Transport, Protocol, error) {
		return CreateUnixConnection(t, f, path, via("OpenUnixConnection", opts)...)
	})
}

// startStreamServer is asyncio.start_server's body: create (CreateServer
// or CreateUnixServer) with a factory whose protocols run cb for each
// connection.
func startStreamServer(t *asyncio.T, cb func(*asyncio.T, *StreamReader, *StreamWriter) error, call string, opts []Option, create func(factory func() Protocol) (*Server, error)) (*Server, error) {
	if cb == nil {
		return nil, errNilClientCallback(call)
	}
	o, err := buildOptions(call, opts)
	if err != nil {
		return nil, err
	}
	l := t.Loop()
	return create(func() Protocol { return newStreamProtocol(l, NewStreamReader(l, o.limit), cb) })
}

// StartServer listens on host:port and runs cb as a new task for each
// connection with its (reader, writer) pair (asyncio.start_server). If cb
// fails, the exception handler gets "Unhandled exception in
// client_connected_cb" and the connection is closed; if it is cancelled
// the connection is closed too (STREAM-11). If cb returns and nothing
// else holds its writer, the connection is closed once the writer is
// collected, as CPython 3.12+ closes it when the writer is dropped; so a
// handler that never closes its writer does not keep Server.WaitClosed
// waiting (WaitClosed runs a collection for such connections). A writer
// kept elsewhere (in a map of subscribers, say) keeps its connection
// open. A nil cb is a *ValueError, before anything listens. Options:
// WithStreamLimit and those of CreateServer.
func StartServer(t *asyncio.T, cb func(t *asyncio.T, r *StreamReader, w *StreamWriter) error, host string, port int, opts ...Option) (*Server, error) {
	return startStreamServer(t, cb, "StartServer", opts, func(f func() Protocol) (*Server, error) {
		return CreateServer(t, f, host, port, via("StartServer", opts)...)
	})
}

// StartUnixServer is StartServer on the Unix socket path
// (asyncio.start_unix_server).
func StartUnixServer(t *asyncio.T, cb func(t *asyncio.T, r *StreamReader, w *StreamWriter) error, path string, opts ...Option) (*Server, error) {
	return startStreamServer(t, cb, "StartUnixServer", opts, func(f func() Protocol) (*Server, error) {
		return CreateUnixServer(t, f, path, via("StartUnixServer", opts)...)
	})
}
