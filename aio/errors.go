//go:build unix

package aio

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"syscall"

	"github.com/go-asyncio/asyncio"
)

// Every error type and sentinel of the package. Argument errors and
// state errors are the core's *asyncio.ValueError and
// *asyncio.RuntimeError; system call failures are *os.SyscallError
// wrapping a syscall.Errno, so errors.Is(err, syscall.ECONNREFUSED) works.

// IncompleteReadError is asyncio.IncompleteReadError: EOF came before the
// requested bytes or separator. Partial holds what was read; Expected is
// the requested size, or -1 for "undefined" (ReadUntil). It matches
// io.ErrUnexpectedEOF (asyncio's is an EOFError).
type IncompleteReadError struct {
	Partial  []byte
	Expected int
}

// Error implements the error interface.
func (e *IncompleteReadError) Error() string {
	exp := "undefined"
	if e.Expected >= 0 {
		exp = fmt.Sprint(e.Expected)
	}
	return fmt.Sprintf("%d bytes read on a total of %s expected bytes", len(e.Partial), exp)
}

// Is reports that an IncompleteReadError matches io.ErrUnexpectedEOF.
func (e *IncompleteReadError) Is(target error) bool { return target == io.ErrUnexpectedEOF }

// LimitOverrunError is asyncio.LimitOverrunError: the separator was not
// found within the limit. Consumed is how many bytes to consume to get
// past the problem (STREAM-6). The data stays in the buffer.
type LimitOverrunError struct {
	Msg      string
	Consumed int
}

// Error implements the error interface.
func (e *LimitOverrunError) Error() string { return e.Msg }

// ErrTLSHandshakeTimeout is returned when a TLS handshake takes longer
// than the handshake timeout (asyncio's ConnectionAbortedError "SSL
// handshake is taking longer than ... seconds"): it matches
// syscall.ECONNABORTED too, the README's spelling of
// ConnectionAbortedError.
var ErrTLSHandshakeTimeout error = &osLikeError{msg: "asyncio: SSL handshake is taking longer than the handshake timeout: aborting the connection", errs: []error{syscall.ECONNABORTED}}

// ErrTLSShutdownTimeout is what a TLS connection is lost with when its
// shutdown, begun by Close, has not ended within the shutdown timeout
// (WithTLSShutdownTimeout, 30 s by default): the peer did not take the
// buffered data and close_notify in time, and the connection was
// aborted (asyncio's TimeoutError "SSL shutdown timed out", given to
// connection_lost). It matches asyncio.ErrTimeout and syscall.ETIMEDOUT.
var ErrTLSShutdownTimeout error = &osLikeError{msg: "asyncio: SSL shutdown timed out", errs: []error{asyncio.ErrTimeout, syscall.ETIMEDOUT}}

// errTLSHandshakeEOF is asyncio's ConnectionResetError for a peer that
// closes the connection during the TLS handshake (SSLProtocol.eof_received
// in DO_HANDSHAKE); crypto/tls reports it as io.EOF.
var errTLSHandshakeEOF error = &osLikeError{msg: "asyncio: SSL handshake failed: the peer closed the connection", errs: []error{syscall.ECONNRESET}}

// osLikeError is an error of the package that stands for an OSError
// subclass asyncio raises without an errno (ConnectionAbortedError,
// ConnectionResetError, TimeoutError): errors.Is matches the errno (and
// sentinels) of errs, errors.As finds the syscall.Errno.
type osLikeError struct {
	msg  string
	errs []error
}

func (e *osLikeError) Error() string   { return e.msg }
func (e *osLikeError) Unwrap() []error { return e.errs }

// ErrLoopNotRunning is matched (errors.Is) by the error a Conn call from
// a goroutine other than the loop's returns while the loop is not running:
// nothing would serve it.
var ErrLoopNotRunning = errors.New("the loop is not running")

// ErrWriteBufferFull is matched (errors.Is) by the error a transport's
// Write returns when the data would take its buffer past the limit set
// with WithMaxWriteBuffer; nothing was written.
var ErrWriteBufferFull = errors.New("write buffer full")

// ErrSimNetworkClosed is matched (errors.Is) by the error a simulated
// network's calls return once it is closed (SimNetwork.Close, or its loop
// closed); a dial still waiting then fails with it too.
var ErrSimNetworkClosed = errors.New("aio: the simulated network is closed")

// ErrSimNetworkLoop is matched (errors.Is) by the error a call returns
// when a simulated network is used from a loop other than the one it was
// made for.
var ErrSimNetworkLoop = errors.New("aio: the simulated network belongs to another loop")

// errWriteBufferFull says how full, and what to do.
func errWriteBufferFull(held, size, limit int) error {
	return fmt.Errorf("aio: %w: %d bytes buffered + %d would exceed the limit of %d (the peer is not reading fast enough; Drain waits for room)", ErrWriteBufferFull, held, size, limit)
}

// lineLimitError is ReadLine's ValueError carrying the LimitOverrunError
// it came from (STREAM-7): asyncio raises ValueError from the
// LimitOverrunError, and Go callers may want either.
type lineLimitError struct {
	asyncio.ValueError
	overrun *LimitOverrunError
}

func (e *lineLimitError) Unwrap() error { return e.overrun }

// As makes the error a *asyncio.ValueError for errors.As (and so for
// Except[*asyncio.ValueError], asyncio's except ValueError), which the
// embedded value alone is not.
func (e *lineLimitError) As(target any) bool {
	if p, ok := target.(**asyncio.ValueError); ok {
		*p = &e.ValueError
		return true
	}
	return false
}

// errConnectionLost is Drain's ConnectionResetError("Connection lost").
//
//lint:ignore ST1005 asyncio's own message (streams.py: ConnectionResetError('Connection lost')), kept word for word
var errConnectionLost = fmt.Errorf("Connection lost: %w", syscall.ECONNRESET)

func runtimeErrorf(format string, args ...any) *asyncio.RuntimeError {
	return &asyncio.RuntimeError{Msg: fmt.Sprintf(format, args...)}
}

func newPanicError(v any) *asyncio.PanicError {
	return &asyncio.PanicError{Value: v, Stack: debug.Stack()}
}

// isOSError reports whether err came from the operating system (asyncio
// does not report those to the exception handler, only logs them in
// debug mode).
func isOSError(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno)
}
