//go:build unix

package aio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A TLS Close waits for the peer to end its side, as asyncio's SSL
// protocol does in its shutdown: over a 10 ms link the client's
// close_notify reaches the server at +10 ms, the server's transport
// closes at that EOF, and its FIN ends the client's wait at +20 ms. The
// same program under CPython 3.13 logs the same order (client closes,
// server reads EOF, client's wait_closed returns). The client's
// WaitClosed returned at once. A peer that does not end its side (here
// the connection stalls, so the close_notify never reaches it) holds the
// client until the shutdown timeout, whose error ConnectionLost gets.
func TestTLSCloseWaitsForThePeersEnd(t *testing.T) {
	clean(t)
	srvCfg, cliCfg := testTLSConfigs(t)
	cliCfg.ServerName = "localhost"
	for _, stalled := range []bool{false, true} {
		var log []string
		runVirtual(t, func(at *asyncio.T) error {
			start := at.Loop().Time()
			add := func(f string, a ...any) {
				log = append(log, fmt.Sprintf("%v %s", at.Loop().Time()-start, fmt.Sprintf(f, a...)))
			}
			n := NewSimNetwork(at, 1)
			n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond})
			srv, err := StartServer(at, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer w.Close()
				data, err := r.Read(st, -1)
				add("server read %q to EOF (%v)", data, err)
				return nil
			}, "server", 443, WithNetwork(n.Host("server")), WithTLS(srvCfg))
			if err != nil {
				return err
			}
			defer srv.Close()
			_, w, err := OpenConnection(at, "server", 443, WithNetwork(n.Host("client")), WithTLS(cliCfg), WithTLSShutdownTimeout(time.Second))
			if err != nil {
				return err
			}
			w.Write([]byte("hi"))
			if err := w.Drain(at); err != nil {
				return err
			}
			start = at.Loop().Time()
			add("client closes")
			if stalled {
				n.Conns()[0].Stall()
			}
			w.Close()
			werr := w.WaitClosed(at)
			add("client wait_closed: timeout %v, other error %v", errors.Is(werr, asyncio.ErrTimeout), werr != nil && !errors.Is(werr, asyncio.ErrTimeout))
			if stalled {
				n.Conns()[0].Resume()
			}
			return nil
		})
		want := []string{"0s client closes", `10ms server read "hi" to EOF (<nil>)`, "20ms client wait_closed: timeout false, other error false"}
		if stalled {
			want = []string{"0s client closes", "1s client wait_closed: timeout true, other error false"}
		}
		t.Run(fmt.Sprintf("stalled %v", stalled), func(t *testing.T) { expectLog(t, want, log) })
	}
}

// While the application has paused reading, the peer's end is held with
// its data: the server here pauses after the first bytes, the client
// closes 100 ms later, and the close_notify reaches the server's
// application (EOF, then the transport's close, which ends the client's
// wait) only once the server resumes reading, as CPython 3.13 orders the
// same program (the server's resume, its EOF, the client's wait_closed
// returning). A regression test: it held when written (the raw
// transport's reading is paused with the application's).
func TestTLSPausedReadingHoldsThePeersEnd(t *testing.T) {
	clean(t)
	srvCfg, cliCfg := testTLSConfigs(t)
	cliCfg.ServerName = "localhost"
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		var closedAt time.Duration
		add := func(f string, a ...any) {
			log = append(log, fmt.Sprintf("+%v %s", at.Loop().Time()-closedAt, fmt.Sprintf(f, a...)))
		}
		n := NewSimNetwork(at, 1)
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(at, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := r.ReadExactly(st, 2); err != nil {
				return err
			}
			w.Transport().PauseReading()
			if err := asyncio.Sleep(st, 300*time.Millisecond); err != nil {
				return err
			}
			add("server resumes")
			w.Transport().ResumeReading()
			rest, err := r.Read(st, -1)
			add("server read %q to EOF (%v)", rest, err)
			return nil
		}, "server", 443, WithNetwork(n.Host("server")), WithTLS(srvCfg))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(at, "server", 443, WithNetwork(n.Host("client")), WithTLS(cliCfg))
		if err != nil {
			return err
		}
		w.Write([]byte("hi"))
		if err := asyncio.Sleep(at, 100*time.Millisecond); err != nil {
			return err
		}
		closedAt = at.Loop().Time()
		add("client closes")
		w.Close()
		add("client wait_closed (%v)", w.WaitClosed(at))
		return nil
	})
	// The server paused at +10 ms after the client's write went out (its
	// bytes took 10 ms), so it resumes 300 ms later: 210 ms after the
	// client's close.
	want := []string{"+0s client closes", "+210ms server resumes", `+210ms server read "" to EOF (<nil>)`, "+220ms client wait_closed (<nil>)"}
	expectLog(t, want, log)
}
