//go:build unix

package aio

// Servers across the loops of an asyncio.LoopGroup (issue 18). Two ways
// to spread connections:
//
//   - GroupReusePort: one listening socket per loop, all bound to the same
//     address with SO_REUSEPORT; the kernel spreads connections over them
//     (Linux balances by a hash of the connection; other systems may not
//     balance at all).
//   - GroupRoundRobin, GroupLeastConns: the main/sub reactor. The calling
//     loop alone listens and accepts; each accepted socket is handed to a
//     worker loop (every loop of the group) through that loop's
//     CallSoonThreadsafe, in turn or to the loop with the fewest
//     connections. Works for any listener, Unix sockets included.
//
// Either way a connection, its transport and its protocol (or stream
// handler task) live on one loop for life. The factory (or stream
// callback) runs on the loop of the connection, so it must be safe to
// call from any loop of the group (it is called on one loop at a time per
// connection, but on several loops in parallel).

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// GroupMode chooses how a GroupServer spreads connections over loops.
type GroupMode int

const (
	// GroupReusePort listens on every loop (SO_REUSEPORT); TCP only.
	GroupReusePort GroupMode = iota
	// GroupRoundRobin accepts on the calling loop and hands connections
	// to the group's loops in turn.
	GroupRoundRobin
	// GroupLeastConns accepts on the calling loop and hands each
	// connection to the loop with the fewest open connections.
	GroupLeastConns
)

// GroupServer is a server whose connections are spread over the loops of
// a LoopGroup. Its methods must be called from a task on the loop that
// created it; they reach the other loops with cross-loop calls.
type GroupServer struct {
	owner    *asyncio.Loop
	mode     GroupMode
	servers  []*Server // by loop index: listening (reuse port) or workers
	acceptor *Server   // main/sub modes
	workers  []*groupWorker
	next     int // round robin
}

// groupWorker is one worker loop's side of a main/sub server.
type groupWorker struct {
	srv    *Server
	loop   *asyncio.Loop
	active atomic.Int64 // connections open or on their way (least-conns)

	mu      sync.Mutex
	dead    bool         // the worker's loop closed
	pending map[int]bool // sockets handed over, not yet adopted
}

// runOn runs fn on loop l: directly when l is t's loop, else as a
// cross-loop call awaited by t.
func runOn[V any](t *asyncio.T, l *asyncio.Loop, fn func(*asyncio.T) (V, error)) (V, error) {
	if l == t.Loop() {
		return fn(t)
	}
	return asyncio.CallOn(t, l, fn)
}

// CreateGroupServer is CreateServer over every loop of g, spread by mode.
// The caller's task t must run on a loop (in g or not) that stays up while
// the server serves: with GroupRoundRobin and GroupLeastConns it is the
// acceptor. factory runs on the loop of each connection. It returns an
// error naming the loop whose listener failed (every listener already
// made is closed again) and a *ValueError error for an unknown mode or a
// nil group or factory.
func CreateGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, factory func() Protocol, host string, port int, opts ...Option) (*GroupServer, error) {
	opts = via("CreateGroupServer", opts) // errors name this call; it accepts what its server call does
	if factory == nil {
		return nil, &asyncio.ValueError{Msg: "CreateGroupServer: nil protocol factory"}
	}
	return createGroupServer(t, g, mode, func(*asyncio.Loop) func() Protocol { return factory },
		func(rt *asyncio.T, f func() Protocol, port int, extra ...Option) (*Server, error) {
			return CreateServer(rt, f, host, port, append(append([]Option(nil), opts...), extra...)...)
		}, port, opts)
}

// CreateUnixGroupServer is CreateUnixServer with the main/sub modes
// (GroupRoundRobin, GroupLeastConns): the calling loop listens on path and
// hands connections to the loops of g. GroupReusePort is refused with an
// error: SO_REUSEPORT does not apply to Unix sockets.
func CreateUnixGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, factory func() Protocol, path string, opts ...Option) (*GroupServer, error) {
	opts = via("CreateUnixGroupServer", opts) // errors name this call; it accepts what its server call does
	if factory == nil {
		return nil, &asyncio.ValueError{Msg: "CreateUnixGroupServer: nil protocol factory"}
	}
	if mode == GroupReusePort {
		return nil, &asyncio.ValueError{Msg: "CreateUnixGroupServer: GroupReusePort does not apply to Unix sockets (use GroupRoundRobin or GroupLeastConns)"}
	}
	return createGroupServer(t, g, mode, func(*asyncio.Loop) func() Protocol { return factory },
		func(rt *asyncio.T, f func() Protocol, _ int, extra ...Option) (*Server, error) {
			return CreateUnixServer(rt, f, path, append(append([]Option(nil), opts...), extra...)...)
		}, 0, opts)
}

// StartGroupServer is StartServer over every loop of g (see
// CreateGroupServer): cb runs as a task on the loop of each connection.
func StartGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, cb func(t *asyncio.T, r *StreamReader, w *StreamWriter) error, host string, port int, opts ...Option) (*GroupServer, error) {
	opts = via("StartGroupServer", opts) // errors name this call; it accepts what its server call does
	mk, err := streamFactories("StartGroupServer", cb, opts)
	if err != nil {
		return nil, err
	}
	return createGroupServer(t, g, mode, mk,
		func(rt *asyncio.T, f func() Protocol, port int, extra ...Option) (*Server, error) {
			return CreateServer(rt, f, host, port, append(append([]Option(nil), opts...), extra...)...)
		}, port, opts)
}

// StartUnixGroupServer is StartUnixServer over the loops of g, main/sub
// modes only (see CreateUnixGroupServer).
func StartUnixGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, cb func(t *asyncio.T, r *StreamReader, w *StreamWriter) error, path string, opts ...Option) (*GroupServer, error) {
	opts = via("StartUnixGroupServer", opts) // errors name this call; it accepts what its server call does
	if mode == GroupReusePort {
		return nil, &asyncio.ValueError{Msg: "StartUnixGroupServer: GroupReusePort does not apply to Unix sockets (use GroupRoundRobin or GroupLeastConns)"}
	}
	mk, err := streamFactories("StartUnixGroupServer", cb, opts)
	if err != nil {
		return nil, err
	}
	return createGroupServer(t, g, mode, mk,
		func(rt *asyncio.T, f func() Protocol, _ int, extra ...Option) (*Server, error) {
			return CreateUnixServer(rt, f, path, append(append([]Option(nil), opts...), extra...)...)
		}, 0, opts)
}

// streamFactories makes, for each loop, start_server's protocol factory.
func streamFactories(call string, cb func(*asyncio.T, *StreamReader, *StreamWriter) error, opts []Option) (func(*asyncio.Loop) func() Protocol, error) {
	if cb == nil {
		return nil, errNilClientCallback(call)
	}
	o, err := buildOptions("", opts)
	if err != nil {
		return nil, err
	}
	if o.limit <= 0 {
		return nil, errBadLimit()
	}
	return func(l *asyncio.Loop) func() Protocol {
		return func() Protocol { return newStreamProtocol(l, NewStreamReader(l, o.limit), cb) }
	}, nil
}

type createFunc func(rt *asyncio.T, factory func() Protocol, port int, extra ...Option) (*Server, error)

func createGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, mk func(*asyncio.Loop) func() Protocol, create createFunc, port int, opts []Option) (*GroupServer, error) {
	if g == nil {
		return nil, &asyncio.ValueError{Msg: "group server: nil LoopGroup"}
	}
	if mode != GroupReusePort && mode != GroupRoundRobin && mode != GroupLeastConns {
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf("group server: unknown mode %d", mode)}
	}
	o, err := buildOptions("", opts)
	if err != nil {
		return nil, err
	}
	gs := &GroupServer{owner: t.Loop(), mode: mode}
	loops := g.Loops()
	if mode == GroupReusePort {
		// The first listener picks the port (port 0); the others bind it.
		order := append([]int(nil), indexes(len(loops))...)
		if own := g.Index(t.Loop()); own > 0 {
			order[0], order[own] = own, 0
		}
		gs.servers = make([]*Server, len(loops))
		for k, i := range order {
			l := loops[i]
			s, err := runOn(t, l, func(rt *asyncio.T) (*Server, error) {
				return create(rt, mk(l), port, WithReusePort())
			})
			if err != nil {
				gs.closeAll(t)
				return nil, fmt.Errorf("group server: the listener of loop %d: %w", i, err)
			}
			gs.servers[i] = s
			if k == 0 {
				if a, ok := s.Addr().(*net.TCPAddr); ok {
					port = a.Port
				}
			}
		}
		return gs, nil
	}
	// Main/sub: a worker server (no listener) on every loop, then the
	// acceptor on the calling loop.
	for _, l := range loops {
		f := mk(l)
		w, err := runOn(t, l, func(rt *asyncio.T) (*groupWorker, error) {
			s := newServer(l, "", f, o)
			s.listeners = []*listener{} // open, listening nowhere
			w := &groupWorker{srv: s, loop: l, pending: map[int]bool{}}
			s.onActive = func(d int) {
				if d < 0 {
					w.active.Add(-1)
				}
			}
			l.OnClose(w.closed)
			return w, nil
		})
		if err != nil {
			gs.closeAll(t)
			return nil, fmt.Errorf("group server: the worker of loop %d: %w", g.Index(l), err)
		}
		gs.workers = append(gs.workers, w)
		gs.servers = append(gs.servers, w.srv)
	}
	acc, err := create(t, func() Protocol { return nil }, port, WithDeferredServing())
	if err != nil {
		gs.closeAll(t)
		return nil, fmt.Errorf("group server: the acceptor: %w", err)
	}
	for _, w := range gs.workers {
		w.srv.network = acc.network
	}
	acc.handoff = gs.handoff
	gs.acceptor = acc
	if !o.deferServing {
		acc.StartServing()
		if err := asyncio.Sleep(t, 0); err != nil {
			gs.closeAll(t)
			return nil, err
		}
	}
	return gs, nil
}

func indexes(n int) []int {
	is := make([]int, n)
	for i := range is {
		is[i] = i
	}
	return is
}

// handoff gives an accepted socket to a worker loop (on the acceptor's
// loop). A worker whose loop is closed is skipped; with none left the
// socket is closed.
func (gs *GroupServer) handoff(nfd int) {
	n := len(gs.workers)
	start := gs.pick()
	for k := 0; k < n; k++ {
		w := gs.workers[(start+k)%n]
		if w.give(gs.owner, nfd) {
			return
		}
	}
	unix.Close(nfd)
}

// pick chooses the first worker to try.
func (gs *GroupServer) pick() int {
	if gs.mode == GroupLeastConns {
		best := 0
		for i, w := range gs.workers {
			if w.active.Load() < gs.workers[best].active.Load() {
				best = i
			}
		}
		return best
	}
	i := gs.next
	gs.next = (gs.next + 1) % len(gs.workers)
	return i
}

// give hands nfd to w's loop; false when that loop is closed.
func (w *groupWorker) give(from *asyncio.Loop, nfd int) bool {
	w.active.Add(1)
	if w.loop == from {
		w.adopt(nfd)
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dead {
		w.active.Add(-1)
		return false
	}
	w.pending[nfd] = true
	if _, err := w.loop.CallSoonThreadsafe(func() {
		w.mu.Lock()
		delete(w.pending, nfd)
		w.mu.Unlock()
		w.adopt(nfd)
	}); err != nil {
		delete(w.pending, nfd)
		w.active.Add(-1)
		return false
	}
	return true
}

// adopt makes nfd a connection of w's server, on w's loop.
func (w *groupWorker) adopt(nfd int) {
	if w.srv.listeners == nil { // the server is closed
		unix.Close(nfd)
		w.active.Add(-1)
		return
	}
	before := w.srv.activeCount
	w.srv.acceptConnection(nfd)
	if w.srv.activeCount == before { // the factory failed: nfd is closed
		w.active.Add(-1)
	}
}

// closed runs when w's loop closes: sockets handed over and not adopted
// are closed.
func (w *groupWorker) closed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dead = true
	for fd := range w.pending {
		unix.Close(fd)
	}
	w.pending = nil
}

// Addr returns the server's listening address (the first loop's, or the
// acceptor's).
func (gs *GroupServer) Addr() net.Addr {
	if gs.acceptor != nil {
		return gs.acceptor.Addr()
	}
	for _, s := range gs.servers {
		if s != nil {
			return s.Addr()
		}
	}
	return nil
}

// Servers returns the per-loop servers, by loop index (for reuse port,
// each with its listener; for main/sub, the workers, which listen
// nowhere).
func (gs *GroupServer) Servers() []*Server { return append([]*Server(nil), gs.servers...) }

// eachServer runs fn on every server's loop, in parallel, and joins the
// errors.
func (gs *GroupServer) eachServer(t *asyncio.T, fn func(rt *asyncio.T, s *Server) error) error {
	var futs []*asyncio.Future[struct{}]
	var errs []error
	for _, s := range gs.servers {
		if s == nil {
			continue
		}
		if s.loop == t.Loop() {
			errs = append(errs, fn(t, s))
			continue
		}
		f, err := asyncio.SubmitTo(t, s.loop, func(rt *asyncio.T) (struct{}, error) { return struct{}{}, fn(rt, s) })
		if err != nil {
			errs = append(errs, err)
			continue
		}
		futs = append(futs, f)
	}
	for _, f := range futs {
		_, err := f.Await(t)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// closeAll closes whatever was created, ignoring errors (a failed create).
func (gs *GroupServer) closeAll(t *asyncio.T) {
	if gs.acceptor != nil {
		gs.acceptor.Close()
	}
	_ = gs.eachServer(t, func(_ *asyncio.T, s *Server) error { s.Close(); return nil })
}

// Close stops listening on every loop (asyncio's Server.close, for the
// whole group): the acceptor, or every loop's listener, is closed;
// connections stay open (CloseClients). t must run on the loop that
// created the server; Close waits for every loop to have closed its part.
func (gs *GroupServer) Close(t *asyncio.T) error {
	if gs.acceptor != nil {
		gs.acceptor.Close()
	}
	return gs.eachServer(t, func(_ *asyncio.T, s *Server) error { s.Close(); return nil })
}

// CloseClients closes every connection of the server on every loop.
func (gs *GroupServer) CloseClients(t *asyncio.T) error {
	return gs.eachServer(t, func(_ *asyncio.T, s *Server) error { s.CloseClients(); return nil })
}

// WaitClosed waits until the server is closed on every loop and every
// connection is gone (asyncio's wait_closed, for the whole group).
func (gs *GroupServer) WaitClosed(t *asyncio.T) error {
	if gs.acceptor != nil {
		if err := gs.acceptor.WaitClosed(t); err != nil {
			return err
		}
	}
	return gs.eachServer(t, func(rt *asyncio.T, s *Server) error { return s.WaitClosed(rt) })
}

// ActiveConnections returns the number of open connections on each loop
// (by loop index), read on each loop.
func (gs *GroupServer) ActiveConnections(t *asyncio.T) ([]int, error) {
	counts := make([]int, len(gs.servers))
	var mu sync.Mutex
	err := gs.eachServer(t, func(_ *asyncio.T, s *Server) error {
		for i, x := range gs.servers {
			if x == s {
				mu.Lock()
				counts[i] = s.activeCount
				mu.Unlock()
			}
		}
		return nil
	})
	return counts, err
}
