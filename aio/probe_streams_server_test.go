//go:build unix

package aio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TestProbeStreams_ServerCloseWaitClosedServeForever: 3.12.1+'s
// Server.wait_closed waits for close and for every connection, in either
// order; close is idempotent; serve_forever on a closed server, or twice,
// is a RuntimeError; close cancels a running serve_forever. CPython 3.13
// (PYENV_VERSION=3.13.0; h reads once and closes its writer):
//
//	srv = await asyncio.start_server(h, "127.0.0.1", 0)     # serving=True
//	wc = create_task(srv.wait_closed()); await sleep(0.01)  # not done
//	r, w = await asyncio.open_connection(...); await sleep(0.01)
//	srv.close(); srv.close()   # serving=False sockets=()
//	await sleep(0.01)          # wc not done: a connection is open
//	await srv.serve_forever()  # RuntimeError server ... is closed
//	w.write(b"hi"); await w.drain(); await wc   # the handler read b'hi'
//	await r.read()             # b''; await srv.wait_closed() returns at once
//	srv2 = ...; sf = create_task(srv2.serve_forever()); await sleep(0)
//	await srv2.serve_forever() # RuntimeError ... already being awaited on serve_forever()
//	srv2.close(); await sf     # CancelledError, sf.cancelled() True
func TestProbeStreams_ServerCloseWaitClosedServeForever(t *testing.T) {
	clean(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		h := func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			log = append(log, "handler start")
			d, err := r.Read(t, 10)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("handler read %s eof=%s", pyBytes(d), pyBool(r.AtEOF())))
			return nil
		}
		srv, err := StartServer(at, h, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		log = append(log, "serving="+pyBool(srv.IsServing()))
		wc := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.WaitClosed(t) })
		if err := asyncio.Sleep(at, 10*time.Millisecond); err != nil {
			return err
		}
		log = append(log, "wait_closed before close done="+pyBool(wc.Done()))
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(at, 10*time.Millisecond); err != nil {
			return err
		}
		srv.Close()
		srv.Close()
		log = append(log, fmt.Sprintf("after close serving=%s sockets=%v", pyBool(srv.IsServing()), srv.Sockets()))
		if err := asyncio.Sleep(at, 10*time.Millisecond); err != nil {
			return err
		}
		log = append(log, "wait_closed with a connection done="+pyBool(wc.Done()))
		err = srv.ServeForever(at)
		log = append(log, "serve_forever: "+strings.ReplaceAll(describe(err), srv.String(), "SRV"))
		w.Write([]byte("hi"))
		if err := w.Drain(at); err != nil {
			return err
		}
		if _, err := asyncio.WaitFor(at, edgeGuard, wc); err != nil {
			return err
		}
		log = append(log, "wait_closed done")
		b, err := r.Read(at, -1)
		log = append(log, fmt.Sprintf("client read %s %v", pyBytes(b), err))
		if err := srv.WaitClosed(at); err != nil {
			return err
		}
		log = append(log, "wait_closed again")
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}

		srv2, err := StartServer(at, h, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		sf := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv2.ServeForever(t) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		err = srv2.ServeForever(at)
		log = append(log, "serve_forever twice: "+strings.ReplaceAll(describe(err), srv2.String(), "SRV"))
		srv2.Close()
		_, err = sf.Await(at)
		log = append(log, fmt.Sprintf("serve_forever %s task.cancelled=%s", describe(err), pyBool(sf.Cancelled())))
		return nil
	})
	expectLog(t, []string{
		"serving=True",
		"wait_closed before close done=False",
		"handler start",
		"after close serving=False sockets=[]",
		"wait_closed with a connection done=False",
		"serve_forever: RuntimeError server SRV is closed",
		"handler read b'hi' eof=False",
		"wait_closed done",
		"client read b'' <nil>",
		"wait_closed again",
		"serve_forever twice: RuntimeError server SRV is already being awaited on serve_forever()",
		"serve_forever cancelled task.cancelled=True",
	}, log)
}

// TestProbeStreams_HandlerCancelled: a client_connected_cb that ends
// cancelled (it raised CancelledError itself, or cancelled its own task)
// closes its connection and is not reported; one whose timeout expired
// failed with TimeoutError and is reported. CPython 3.13
// (PYENV_VERSION=3.13.0):
//
//	async def h(r, w): raise asyncio.CancelledError()
//	async def h(r, w): asyncio.current_task().cancel(); await asyncio.sleep(0)
//	async def h(r, w):
//	    async with asyncio.timeout(0.001): await r.read()
//	# the client's read(): b'', at_eof() True each time; the exception
//	# handler hears only of the third: 'Unhandled exception in client_connected_cb'
func TestProbeStreams_HandlerCancelled(t *testing.T) {
	clean(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		var msgs []string
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) { msgs = append(msgs, ctx.Message) })
		for _, how := range []string{"raise CancelledError", "cancel self", "timeout"} {
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				switch how {
				case "raise CancelledError":
					return &asyncio.CancelledError{}
				case "cancel self":
					t.Cancel()
					return asyncio.Sleep(t, 0)
				}
				return asyncio.Timeout(t, time.Millisecond, func(*asyncio.TimeoutScope) error {
					_, err := r.Read(t, -1)
					return err
				})
			}, "127.0.0.1", 0)
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			d, err := asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.Read(t, -1) })
			log = append(log, fmt.Sprintf("%s client read %s %v %s msgs %v", how, pyBytes(d), err, pyBool(r.AtEOF()), msgs))
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"raise CancelledError client read b'' <nil> True msgs []",
		"cancel self client read b'' <nil> True msgs []",
		"timeout client read b'' <nil> True msgs [Unhandled exception in client_connected_cb]",
	}, log)
}
