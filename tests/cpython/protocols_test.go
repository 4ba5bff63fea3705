//go:build unix

package cpython

import (
	"errors"
	"testing"

	"github.com/go-asyncio/asyncio/aio"
)

// test_protocols.py: asyncio's protocol base classes have callbacks that
// do nothing and return None. aio's Base* types are what a protocol
// embeds for the same defaults; what CPython's `hasattr(p, '__dict__')`
// checks (__slots__ = ()) is Python's, and a Go struct of no fields is the
// counterpart. An optional callback (pause_writing/resume_writing) that a
// base class defines as a no-op is, in Go, an interface the protocol may
// implement (aio.WriteFlowControl): the base types leave it out, which the
// transports treat as the no-op.

// noPanic calls each fn and fails the test if one panics.
func noPanic(t *testing.T, what string, fns ...func()) {
	t.Helper()
	for i, fn := range fns {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: callback %d panicked: %v", what, i, r)
				}
			}()
			fn()
		}()
	}
}

func TestProtocols_test_base_protocol(t *testing.T) {
	var p aio.Protocol = aio.BaseProtocol{}
	noPanic(t, "BaseProtocol", func() { p.ConnectionMade(nil) }, func() { p.ConnectionLost(errors.New("f")) })
	_, flow := p.(aio.WriteFlowControl)
	check(t, !flow, "BaseProtocol has no pause/resume_writing of its own (the transport's default: nothing)")
}

func TestProtocols_test_protocol(t *testing.T) {
	var p aio.Protocol = aio.BaseProtocol{}
	noPanic(t, "Protocol",
		func() { p.ConnectionMade(nil) },
		func() { p.ConnectionLost(errors.New("f")) },
		func() { p.DataReceived([]byte("f")) })
	// eof_received() returns None: the transport closes itself.
	eq(t, p.EOFReceived(), false, "EOFReceived")
	// pause_writing/resume_writing: FlowControl is the base that records
	// them (asyncio's FlowControlMixin), and they return nothing.
	fc := &aio.FlowControl{}
	noPanic(t, "FlowControl", fc.PauseWriting, fc.ResumeWriting)
	check(t, !fc.Paused(), "resumed")
}

func TestProtocols_test_datagram_protocol(t *testing.T) {
	var dp aio.DatagramProtocol = aio.BaseDatagramProtocol{}
	noPanic(t, "DatagramProtocol",
		func() { dp.ConnectionMade(nil) },
		func() { dp.ConnectionLost(errors.New("f")) },
		func() { dp.ErrorReceived(errors.New("f")) },
		func() { dp.DatagramReceived([]byte("f"), nil) })
}

func TestProtocols_test_subprocess_protocol(t *testing.T) {
	var sp aio.SubprocessProtocol = aio.BaseSubprocessProtocol{}
	noPanic(t, "SubprocessProtocol",
		func() { sp.ConnectionMade(nil) },
		func() { sp.ConnectionLost(errors.New("f")) },
		func() { sp.PipeDataReceived(1, []byte("f")) },
		func() { sp.PipeConnectionLost(1, errors.New("f")) },
		sp.ProcessExited)
}
