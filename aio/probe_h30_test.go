//go:build unix

package aio

// Probes of h30 (tests/ports p97-p110).

import (
	"errors"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
)

type h30PanickyProto struct {
	BaseSubprocessProtocol
	exited *asyncio.Future[struct{}]
}

func (p *h30PanickyProto) PipeDataReceived(int, []byte) { panic(errors.New("parser bug")) }
func (p *h30PanickyProto) ConnectionLost(error)         { _ = p.exited.SetResult(struct{}{}) }

type h30PanickyPipe struct {
	BaseProtocol
	lost *asyncio.Future[struct{}]
}

func (p *h30PanickyPipe) DataReceived([]byte)      { panic(errors.New("pipe bug")) }
func (p *h30PanickyPipe) ConnectionLost(err error) { _ = p.lost.SetResult(struct{}{}) }

// asyncio runs a subprocess protocol's pipe_data_received through
// call_soon, and a read pipe's data_received from its reader's handle: an
// exception escaping either reaches the exception handler with the handle
// in the context ("Exception in callback ...", tests/ports p108). The
// reports here had no Handle.
func TestH30_ProtocolCallbackPanicReportNamesAHandle(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		var got []asyncio.ExceptionContext
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) { got = append(got, ctx) })
		proto := &h30PanickyProto{exited: asyncio.NewFuture[struct{}](at)}
		tr, _, err := SubprocessExec(at, func() SubprocessProtocol { return proto }, "sh", []string{"-c", "echo hi"}, WithStdin(Inherit))
		if err != nil {
			return err
		}
		if _, err := proto.exited.Await(at); err != nil {
			return err
		}
		tr.Close()

		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		lost := asyncio.NewFuture[struct{}](at)
		ptr, _, err := ConnectReadPipe(at, func() Protocol { return &h30PanickyPipe{lost: lost} }, r)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte("x")); err != nil {
			return err
		}
		w.Close()
		if _, err := lost.Await(at); err != nil {
			return err
		}
		ptr.Close()
		if len(got) != 2 {
			t.Fatalf("%d reports, want 2", len(got))
		}
		for i, ctx := range got {
			if ctx.Handle == nil {
				t.Errorf("report %d (%s): no handle", i, ctx.Message)
			}
		}
		return nil
	})
}

// CPython 3.13's StreamReaderProtocol reports a failed client_connected_cb
// with {'message', 'exception', 'transport'} and no 'task' (tests/ports
// p109 prints sorted(ctx)); the report here also named the handler's task.
func TestH30_FailedClientCallbackReportHasNoTask(t *testing.T) {
	clean(t)
	var got []asyncio.ExceptionContext
	runVirtual(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) { got = append(got, ctx) })
		sim := WithNetwork(NewSimNetwork(at, 1).Host("local"))
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			return errors.New("cb failed")
		}, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), sim)
		if err != nil {
			return err
		}
		if _, err := r.Read(at, -1); err != nil {
			return err
		}
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if len(got) != 1 {
		t.Fatalf("%d reports, want 1", len(got))
	}
	if ctx := got[0]; ctx.Message != "Unhandled exception in client_connected_cb" || ctx.Err == nil || ctx.Transport == nil || ctx.Task != nil {
		t.Errorf("report %q err %v transport %v task %v; want asyncio's message, the error, the transport, no task", ctx.Message, ctx.Err, ctx.Transport, ctx.Task)
	}
}
