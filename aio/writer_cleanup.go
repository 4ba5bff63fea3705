//go:build unix

package aio

import (
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"time"
	"weak"

	"github.com/go-asyncio/asyncio"
)

// STREAM-11, the writer a server gives its handler. CPython 3.12+ closes
// the transport when a StreamWriter is garbage collected unclosed, and
// since the handler's frame holds the writer, a handler that returns
// without closing it (and without storing it anywhere) closes its
// connection as it returns. Here:
//
//   - while the handler runs, its protocol holds the writer, so the
//     collector cannot take it early (a handler that only reads no longer
//     uses its writer, and Go's liveness analysis would let it go);
//   - when the handler returns the protocol lets go, and a cleanup
//     (runtime.AddCleanup) closes the connection once the writer is
//     collected; a writer kept elsewhere keeps its connection open;
//   - a writer OpenConnection returned gets the same cleanup (the user
//     holds it, not the loop);
//   - a writer a task waits on (WaitClosed, Drain) is kept for the wait
//     (runtime.KeepAlive), so the collector never closes the connection
//     its caller is waiting on;
//   - a closed Server with connections whose handler returned runs one
//     collection (runtime.GC) before WaitClosed waits and when such a
//     handler returns, so WaitClosed does not depend on when the
//     collector would have run by itself; until such a connection is
//     lost, the loop expects the cleanup's close as outside work
//     (Loop.ExpectExternal), so a loop on virtual time waits for it
//     instead of reporting a deadlock.

// handlerWriter is a server connection protocol's hold on its writer.
type handlerWriter struct {
	w        *StreamWriter // set while the handler runs
	released bool          // the handler has returned
	// collecting, set when collectReleased runs a collection for the
	// connection, releases the loop's expectation (Loop.ExpectExternal)
	// of the cleanup's close, which arrives from the runtime's cleanup
	// goroutine: until the connection is lost, a loop on virtual time
	// waits for it rather than report a deadlock.
	collecting func()
}

// connectionGone ends the expectation of a collection's close, if any.
func (h *handlerWriter) connectionGone() {
	if h.collecting != nil {
		h.collecting()
		h.collecting = nil
	}
}

// holdWriter keeps w for the handler and registers the cleanup that
// closes the connection once w is collected. The cleanup's argument is a
// weak pointer, so it does not keep the protocol (which reaches w while
// the handler runs) alive.
func (p *streamProtocol) holdWriter(w *StreamWriter) {
	p.handler.w = w
	closeWhenCollected(w, p)
}

// closeWhenCollected registers the cleanup that closes p's connection
// once w is collected unclosed: a server handler's writer, and the
// writer OpenConnection returns (CPython's StreamWriter.__del__).
func closeWhenCollected(w *StreamWriter, p *streamProtocol) {
	cw := collectedWriter{p: weak.Make(p)}
	switch w.reader {
	case nil:
	case p.reader:
		cw.protocolsReader = true // p keeps it: no weak pointer of its own (W9)
	default:
		cw.reader = weak.Make(w.reader)
	}
	runtime.AddCleanup(w, writerCollected, cw)
}

// collectedWriter is what a writer's cleanup keeps of it, for the close
// and for the warning that names it as its String did (CPython warns
// f"unclosed {self!r}": the transport and the reader). Weak pointers, so
// it keeps neither the protocol nor the reader alive; a reader that only
// the writer held is gone with it, and the warning leaves it out.
type collectedWriter struct {
	p      weak.Pointer[streamProtocol]
	reader weak.Pointer[StreamReader] // the zero pointer for a writer without one
	// protocolsReader: the writer's reader is the protocol's, which the
	// protocol keeps as long as it lives.
	protocolsReader bool
}

// handlerWriter is the writer the handler receives.
func (p *streamProtocol) handlerWriter() *StreamWriter { return p.handler.w }

// releaseWriter runs when the handler's task is done: the writer is now
// only the user's.
func (p *streamProtocol) releaseWriter() {
	p.handler.w = nil
	p.handler.released = true
	if s := serverOf(p.transport); s != nil {
		s.scheduleCollect()
	}
}

// writerCollected runs on the runtime's cleanup goroutine after the
// handler's writer was collected: the loop closes the connection, if
// that has not happened yet (a closed loop has closed it already), and
// in debug mode warns as CPython's StreamWriter.__del__ does, after the
// close: "unclosed <StreamWriter transport=<... closing> reader=<...>>".
func writerCollected(cw collectedWriter) {
	p := cw.p.Value()
	if p == nil {
		return // the connection is gone, and its transport with it
	}
	p.loop.CallSoonThreadsafe(func() {
		tr := p.transport
		if tr == nil || tr.IsClosing() {
			return
		}
		tr.Close()
		if p.loop.Debug() {
			w := &StreamWriter{transport: tr, reader: cw.reader.Value()}
			if cw.protocolsReader {
				w.reader = p.reader
			}
			slog.Warn(fmt.Sprintf("unclosed %v", w))
		}
	})
}

// serverOf returns the server that accepted tr's connection, if any.
func serverOf(tr Transport) *Server {
	switch tr := tr.(type) {
	case *socketTransport:
		return tr.server
	case *tlsTransport:
		return tr.raw.socket().server
	}
	return nil
}

// released reports whether view, one of s's connections, is a stream
// whose handler returned while the connection is still open.
func released(view Transport) bool {
	sp, ok := view.Protocol().(*streamProtocol)
	return ok && sp.handler.released && !view.IsClosing()
}

// scheduleCollect runs collectReleased once in the next iteration (many
// handlers returning in one iteration get one collection).
func (s *Server) scheduleCollect() {
	if s.collectPending || s.listeners != nil || len(s.waiters) == 0 {
		return
	}
	s.collectPending = true
	s.loop.CallSoon(func() {
		s.collectPending = false
		s.collectReleased()
	})
}

// collectReleased runs a collection if s is closed, someone waits in
// WaitClosed, and a connection's handler has returned: the writers
// nobody holds are collected and their cleanups close the connections.
func (s *Server) collectReleased() {
	if s.listeners != nil || len(s.waiters) == 0 {
		return
	}
	collect := false
	for _, view := range s.clients {
		if released(view) {
			if sp := view.Protocol().(*streamProtocol); sp.handler.collecting == nil {
				sp.handler.collecting = s.loop.ExpectExternal()
			}
			collect = true
		}
	}
	if collect {
		runtime.GC()
	}
}

// waitClosedReportDelay is how long WaitClosed waits, in debug mode,
// before it names the connections it is waiting for.
const waitClosedReportDelay = time.Second

// reportWaiting schedules, in debug mode, the report naming the
// connections WaitClosed still waits for after waitClosedReportDelay;
// the returned function cancels it.
func (s *Server) reportWaiting() func() {
	if !s.loop.Debug() {
		return func() {}
	}
	h := s.loop.CallLater(waitClosedReportDelay, func() {
		if s.woken {
			return
		}
		s.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: s.waitingFor()})
	})
	return h.Cancel
}

// waitingFor describes what WaitClosed waits for: the server still
// listening, and each connection with its peer and its handler's state.
func (s *Server) waitingFor() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: WaitClosed is still waiting", s)
	if s.listeners != nil {
		b.WriteString(" for Close")
	}
	fmt.Fprintf(&b, " for %d connection(s)", len(s.clients))
	var lines []string
	for _, view := range s.snapshotClients() {
		line := fmt.Sprintf("\n  peer %v: ", view.ExtraInfo("peername"))
		sp, ok := view.Protocol().(*streamProtocol)
		switch {
		case !ok:
			line += fmt.Sprintf("protocol %T", view.Protocol())
		case sp.handler.released:
			line += "handler returned; its writer is held elsewhere, still open"
		case sp.task != nil:
			line += fmt.Sprintf("handler %s still running", sp.task.Name())
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, ""))
	return b.String()
}
