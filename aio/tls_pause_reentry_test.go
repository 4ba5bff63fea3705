//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/go-asyncio/asyncio"
)

// pauseWriterProto writes from PauseWriting, as a protocol that queues a
// marker (or closes) when the transport pushes back may.
type pauseWriterProto struct {
	BaseProtocol
	tr     Transport
	paused int
}

func (p *pauseWriterProto) ConnectionMade(tr Transport) { p.tr = tr }
func (p *pauseWriterProto) PauseWriting() {
	p.paused++
	_ = p.tr.Write([]byte("x"))
}
func (p *pauseWriterProto) ResumeWriting() {}

// countingProto starts with reading paused and counts what arrives.
type countingProto struct {
	BaseProtocol
	tr   Transport
	made *asyncio.Future[Transport]
	got  int
	last byte
	want int
	done *asyncio.Future[struct{}]
}

func (p *countingProto) ConnectionMade(tr Transport) {
	p.tr = tr
	tr.PauseReading()
	_ = p.made.SetResult(tr)
}
func (p *countingProto) DataReceived(b []byte) {
	p.got += len(b)
	p.last = b[len(b)-1]
	if p.got >= p.want && !p.done.Done() {
		_ = p.done.SetResult(struct{}{})
	}
}

// A TLS transport's PauseWriting comes while crypto/tls holds its write
// lock; a protocol that writes from it (asyncio allows it: pause_writing
// is a plain callback) must not wait on that lock for ever. The pause is
// delivered as the write that caused it returns, still inside that
// write, and the protocol's own write goes out after it.
func TestTLSPauseWritingMayWrite(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	runVirtual(t, func(at *asyncio.T) error {
		const n = 32 << 20 // more than the kernel's buffers take
		sp := &countingProto{made: asyncio.NewFuture[Transport](at), want: n + 1, done: asyncio.NewFuture[struct{}](at)}
		srv, err := CreateServer(at, func() Protocol { return sp }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		defer srv.Close()
		cp := &pauseWriterProto{}
		tr, _, err := CreateConnection(at, func() Protocol { return cp }, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, WithTLS(clientCfg))
		if err != nil {
			return err
		}
		defer tr.Close()
		if _, err := sp.made.Await(at); err != nil {
			return err
		}
		if err := tr.SetWriteBufferLimits(64<<10, -1); err != nil {
			return err
		}
		if err := tr.Write(bytes.Repeat([]byte("a"), n)); err != nil {
			return err
		}
		if cp.paused != 1 {
			t.Errorf("PauseWriting calls during the write: %d, want 1", cp.paused)
		}
		sp.tr.ResumeReading()
		if _, err := sp.done.Await(at); err != nil {
			return err
		}
		if sp.got != n+1 || sp.last != 'x' {
			t.Errorf("the server got %d bytes ending %q, want %d ending with the marker", sp.got, sp.last, n+1)
		}
		return nil
	})
}

// panickyFlowProto panics in both flow control callbacks.
type panickyFlowProto struct{ BaseProtocol }

func (p *panickyFlowProto) PauseWriting()  { panic("pause boom") }
func (p *panickyFlowProto) ResumeWriting() { panic("resume boom") }

// A panic in the application's PauseWriting or ResumeWriting over TLS is
// the exception handler's, with the TLS transport and the application's
// protocol (asyncio's SSLProtocol reports 'protocol.pause_writing()
// failed' with its app transport); the Write that caused the pause
// returns normally and every byte still arrives.
func TestTLSFlowControlPanicIsReportedWithTheTLSTransport(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	type report struct {
		msg   string
		err   string
		trOK  bool
		proOK bool
	}
	var reports []report
	runVirtual(t, func(at *asyncio.T) error {
		const n = 32 << 20 // more than the kernel's buffers take
		sp := &countingProto{made: asyncio.NewFuture[Transport](at), want: n, done: asyncio.NewFuture[struct{}](at)}
		srv, err := CreateServer(at, func() Protocol { return sp }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		defer srv.Close()
		cp := &panickyFlowProto{}
		tr, _, err := CreateConnection(at, func() Protocol { return cp }, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, WithTLS(clientCfg))
		if err != nil {
			return err
		}
		defer tr.Close()
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			var pe *asyncio.PanicError
			if !errors.As(ctx.Err, &pe) {
				// Not a callback's panic: the watchdog's report that
				// encrypting 32 MiB held the loop on a loaded machine.
				t.Logf("exception handler: %s", ctx.Message)
				return
			}
			reports = append(reports, report{ctx.Message, fmt.Sprint(pe.Value), ctx.Transport == tr, ctx.Protocol == Protocol(cp)})
		})
		if _, err := sp.made.Await(at); err != nil {
			return err
		}
		if err := tr.Write(bytes.Repeat([]byte("a"), n)); err != nil {
			return err
		}
		sp.tr.ResumeReading()
		if _, err := sp.done.Await(at); err != nil {
			return err
		}
		for tr.WriteBufferSize() > 0 {
			if err := asyncio.Sleep(at, time.Millisecond); err != nil {
				return err
			}
		}
		return asyncio.Sleep(at, 0)
	})
	want := []report{
		{"protocol.pause_writing() failed", "pause boom", true, true},
		{"protocol.resume_writing() failed", "resume boom", true, true},
	}
	if diff := cmp.Diff(want, reports, cmp.AllowUnexported(report{})); diff != "" {
		t.Errorf("exception handler calls (-want +got):\n%s", diff)
	}
}
