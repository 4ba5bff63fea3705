//go:build unix

package aio

import (
	"net"

	"github.com/go-asyncio/asyncio"
)

// What subclassing asyncio.Protocol gives a Python port: every callback
// has a do-nothing default, so a protocol writes only the ones it needs.
// Embed one of these bases in a struct and define the rest; a method the
// struct defines itself replaces the base's.

// BaseProtocol is asyncio.Protocol's defaults for a Protocol: every
// callback does nothing and EOFReceived returns false (the transport
// closes itself). Embed it and define the callbacks you need:
//
//	type counter struct {
//		aio.BaseProtocol
//		n int
//	}
//
//	func (c *counter) DataReceived(b []byte) { c.n += len(b) }
//
// It does not implement WriteFlowControl (embed FlowControl for that).
type BaseProtocol struct{}

// ConnectionMade does nothing.
func (BaseProtocol) ConnectionMade(Transport) {}

// DataReceived does nothing.
func (BaseProtocol) DataReceived([]byte) {}

// EOFReceived returns false: the transport closes itself.
func (BaseProtocol) EOFReceived() bool { return false }

// ConnectionLost does nothing.
func (BaseProtocol) ConnectionLost(error) {}

var _ Protocol = BaseProtocol{}

// BaseDatagramProtocol is asyncio.DatagramProtocol's defaults for a
// DatagramProtocol: every callback does nothing. Embed it and define the
// callbacks you need (usually DatagramReceived).
type BaseDatagramProtocol struct{}

// ConnectionMade does nothing.
func (BaseDatagramProtocol) ConnectionMade(DatagramTransport) {}

// DatagramReceived does nothing.
func (BaseDatagramProtocol) DatagramReceived([]byte, net.Addr) {}

// ErrorReceived does nothing.
func (BaseDatagramProtocol) ErrorReceived(error) {}

// ConnectionLost does nothing.
func (BaseDatagramProtocol) ConnectionLost(error) {}

var _ DatagramProtocol = BaseDatagramProtocol{}

// BaseSubprocessProtocol is asyncio.SubprocessProtocol's defaults for a
// SubprocessProtocol: every callback does nothing. Embed it and define
// the callbacks you need (PipeDataReceived and ProcessExited, say).
type BaseSubprocessProtocol struct{}

// ConnectionMade does nothing.
func (BaseSubprocessProtocol) ConnectionMade(SubprocessTransport) {}

// PipeDataReceived does nothing.
func (BaseSubprocessProtocol) PipeDataReceived(int, []byte) {}

// PipeConnectionLost does nothing.
func (BaseSubprocessProtocol) PipeConnectionLost(int, error) {}

// ProcessExited does nothing.
func (BaseSubprocessProtocol) ProcessExited() {}

// ConnectionLost does nothing.
func (BaseSubprocessProtocol) ConnectionLost(error) {}

var _ SubprocessProtocol = BaseSubprocessProtocol{}

// FlowControl is asyncio's FlowControlMixin as an embeddable Protocol:
// BaseProtocol's defaults plus the write pause state the transport sets
// through WriteFlowControl, and Drain, which waits while writing is
// paused. Embedded in a protocol for ConnectWritePipe (or any
// transport), it is what a Python port of a connect_write_pipe program
// needs, without a StreamReaderProtocol over a reader nobody reads:
//
//	type pipeOut struct{ aio.FlowControl }
//
//	p := &pipeOut{}
//	tr, _, err := aio.ConnectWritePipe(t, func() aio.Protocol { return p }, os.Stdout)
//	...
//	tr.Write(data)
//	err = p.Drain(t)
//
// A protocol that defines its own ConnectionLost must call
// FlowControl.ConnectionLost from it (Python's super()), or a Drain
// waiting when the connection is lost keeps waiting. The zero value is
// ready to use; its methods must be called on the loop.
type FlowControl struct {
	BaseProtocol
	paused  bool
	lost    bool
	waiters []*asyncio.Future[struct{}]
}

// PauseWriting records that the transport's buffer is above its high
// water mark: Drain waits from now on.
func (f *FlowControl) PauseWriting() { f.paused = true }

// ResumeWriting records that the buffer drained to the low water mark and
// wakes every waiting Drain.
func (f *FlowControl) ResumeWriting() {
	f.paused = false
	f.wake(nil)
}

// ConnectionLost records the loss and wakes every waiting Drain, with err
// (nil for a clean close: the Drain returns nil).
func (f *FlowControl) ConnectionLost(err error) {
	f.lost = true
	f.wake(err)
}

// Paused reports whether writing is paused (the buffer is above the high
// water mark).
func (f *FlowControl) Paused() bool { return f.paused }

// Drain is FlowControlMixin._drain_helper (STREAM-9): after the
// connection is lost it returns an error matching syscall.ECONNRESET
// ("Connection lost"); when writing is not paused it returns nil at once;
// otherwise it suspends t until ResumeWriting (nil) or ConnectionLost
// (its error), or until t is cancelled.
func (f *FlowControl) Drain(t *asyncio.T) error {
	if f.lost {
		return errConnectionLost
	}
	if !f.paused {
		return nil
	}
	w := asyncio.NewFuture[struct{}](t)
	f.waiters = append(f.waiters, w)
	_, err := w.Await(t)
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	return err
}

func (f *FlowControl) wake(err error) {
	ws := f.waiters
	f.waiters = nil
	for _, w := range ws {
		switch {
		case w.Done():
		case err == nil:
			w.SetResult(struct{}{})
		default:
			w.SetException(err)
		}
	}
}

var (
	_ Protocol         = (*FlowControl)(nil)
	_ WriteFlowControl = (*FlowControl)(nil)
)
