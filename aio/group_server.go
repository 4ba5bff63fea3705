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
	// connection to the loop with the fewest open connections, ties to
	// the tied loops in turn. A connection that a loop failed to take
	// (its protocol factory panicked or returned nil, and the connection
	// was closed) counts as one of its connections until that loop takes
	// one: a loop whose factory keeps failing gets its share of the
	// connections instead of every one (it would otherwise stay the
	// least loaded for ever). For a stream server (StartGroupServer,
	// StartUnixGroupServer) the handler decides instead: a connection
	// whose handler returned an error or panicked counts as one of its
	// loop's connections until a handler on that loop returns nil.
	GroupLeastConns
)

// GroupServer is a server whose connections are spread over the loops of
// a LoopGroup. Its methods must be called from a task on the loop that
// created it (from anywhere else they return a *RuntimeError and change
// nothing); they reach the other loops with cross-loop calls. A loop of
// the group that is closed has no part left: the methods skip it. The
// zero GroupServer is not one: its methods that take a task return a
// *asyncio.ValueError that says so.
type GroupServer struct {
	owner    *asyncio.Loop
	mode     GroupMode
	servers  []*Server // by loop index: listening (reuse port) or workers
	acceptor *Server   // main/sub modes
	workers  []*groupWorker
	next     int  // round robin
	stopping bool // every worker is gone: the acceptor is being closed
	// On the owner loop: serving until Close (IsServing), closed after
	// it, and the future ServeForever waits on (Close cancels it).
	serving bool
	closed  bool
	forever *asyncio.Future[struct{}]
	// What Addr, Addrs and Sockets report, recorded as each part was made
	// on its loop (so that reading them touches no loop's state), until
	// Close.
	addrs     []net.Addr
	listeners []*groupListening
	shut      atomic.Bool
	// listening counts the parts that listen (every loop's listener, or
	// the acceptor), each until its sockets close, by Close or because
	// its loop closed: with none left the server accepts nothing.
	listening atomic.Int64
}

// groupListening is a part of a group server that listens (a loop's
// listener, or the acceptor): its sockets, and whether they are closed
// (by Close, or because its loop closed), which any goroutine may read.
type groupListening struct {
	fds  []int
	gone atomic.Bool
}

// listen records s, just made on its loop, as a part that listens: its
// sockets count for IsServing and Sockets until they close.
func (gs *GroupServer) listen(s *Server) *groupListening {
	p := &groupListening{fds: s.Sockets()}
	gs.listening.Add(1)
	s.onUnlisten = func() {
		p.gone.Store(true)
		gs.listening.Add(-1)
	}
	return p
}

// groupWorker is one worker loop's side of a main/sub server.
type groupWorker struct {
	srv    *Server
	loop   *asyncio.Loop
	active atomic.Int64 // connections open or on their way (least-conns)
	// failed counts the hand-offs the worker failed since the last one
	// it took (its protocol factory failed; for a stream server, the
	// handler failed, until one returns nil): least-conns counts them as
	// connections, so that a failing loop does not attract every one.
	failed atomic.Int64
	// streams: a stream server's worker, whose handlers report how they
	// ended (handlerDone); its factory always succeeds.
	streams bool
	stop    func() bool // unregisters closed from the loop's OnClose

	mu      sync.Mutex
	dead    bool         // the worker's loop closed
	pending map[int]bool // sockets handed over, not yet adopted
}

// makeGroupPart runs build on loop l for t: directly when l is t's loop, else as
// a cross-loop call awaited by t. If t is cancelled while the call is in
// flight, the call is not: what it makes arrives later and undo runs on
// it, on l, so that a cancelled creation leaves nothing listening.
func makeGroupPart[V any](t *asyncio.T, l *asyncio.Loop, build func(*asyncio.T) (V, error), undo func(V)) (V, error) {
	if l == t.Loop() {
		return build(t)
	}
	f, err := asyncio.SubmitTo(t, l, build)
	if err != nil {
		var zero V
		return zero, err
	}
	v, err := asyncio.Shield[V](f).Await(t)
	if err != nil && asyncio.IsCancelled(err) && t.Cancelling() > 0 {
		f.AddDoneCallback(func() {
			if v, err := f.Result(); err == nil {
				_, _ = l.CallSoonThreadsafe(func() { undo(v) })
			}
		})
	}
	return v, err
}

// testHookGroupPartMade, when set by a test, runs on loop i when that
// loop's part of a group server (its listener, or its worker) is made.
var testHookGroupPartMade func(i int, s *Server)

// checkGroupTask is the check every group server entry makes first, before
// any state changes: t is the running task of its loop, and the caller
// is that task. A nil t panics with a *ValueError, as elsewhere.
func checkGroupTask(t *asyncio.T, call string) error {
	if t == nil {
		panic(&asyncio.ValueError{Msg: call + ": nil *asyncio.T (pass the running task's t, the argument of its function)"})
	}
	if l := t.Loop(); !l.OnLoopGoroutine() || asyncio.CurrentTask(l) != t {
		return &asyncio.RuntimeError{Msg: call + ": t is not the running task of its loop, or the caller is not its goroutine " +
			"(call it from the task itself; a plain goroutine uses RunCoroutineThreadsafe)"}
	}
	return nil
}

// groupLoopLabel names l for messages.
func groupLoopLabel(l *asyncio.Loop) string {
	if n := l.Name(); n != "" {
		return n
	}
	return "an unnamed loop"
}

// CreateGroupServer is CreateServer over every loop of g, spread by mode.
// The caller's task t must run on a loop (in g or not) that stays up while
// the server serves: with GroupRoundRobin and GroupLeastConns it is the
// acceptor. factory runs on the loop of each connection. It returns an
// error naming the loop whose listener failed (every listener already
// made is closed again); before anything is made, a *ValueError for an
// unknown mode, a nil or zero group (not made by asyncio.NewLoopGroup) or a nil
// factory, a port out of range, and
// GroupReusePort with WithSocket (one socket cannot be a listener per
// loop) or WithNetwork (no SO_REUSEPORT there), and a *RuntimeError when
// the caller is not t's running task. A nil t panics with a *ValueError.
// If t is cancelled meanwhile, what was made is closed again (also a
// loop's part that arrives after the cancellation) and the cancellation
// is returned. With WithDeferredServing nothing is accepted until
// GroupServer.StartServing. With port 0 and a host of several addresses
// (GroupReusePort), the first loop picks one port for all of them.
func CreateGroupServer(t *asyncio.T, g *asyncio.LoopGroup, mode GroupMode, factory func() Protocol, host string, port int, opts ...Option) (*GroupServer, error) {
	opts = via("CreateGroupServer", opts) // errors name this call; it accepts what its server call does
	if factory == nil {
		return nil, &asyncio.ValueError{Msg: "CreateGroupServer: nil protocol factory"}
	}
	return createGroupServer(t, "CreateGroupServer", g, mode, false, func(*asyncio.Loop, *groupWorker) func() Protocol { return factory },
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
	return createGroupServer(t, "CreateUnixGroupServer", g, mode, false, func(*asyncio.Loop, *groupWorker) func() Protocol { return factory },
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
	return createGroupServer(t, "StartGroupServer", g, mode, true, mk,
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
	return createGroupServer(t, "StartUnixGroupServer", g, mode, true, mk,
		func(rt *asyncio.T, f func() Protocol, _ int, extra ...Option) (*Server, error) {
			return CreateUnixServer(rt, f, path, append(append([]Option(nil), opts...), extra...)...)
		}, 0, opts)
}

// groupFactories makes the protocol factory of a loop of a group server;
// w is the loop's worker (main/sub modes), nil for a listener of its own
// (GroupReusePort).
type groupFactories func(l *asyncio.Loop, w *groupWorker) func() Protocol

// streamFactories makes, for each loop, start_server's protocol factory;
// the handlers of a worker's connections report to it how they ended.
func streamFactories(call string, cb func(*asyncio.T, *StreamReader, *StreamWriter) error, opts []Option) (groupFactories, error) {
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
	return func(l *asyncio.Loop, w *groupWorker) func() Protocol {
		return func() Protocol {
			p := newStreamProtocol(l, NewStreamReader(l, o.limit), cb)
			if w != nil {
				p.handlerDone = w.handlerDone
			}
			return p
		}
	}, nil
}

type createFunc func(rt *asyncio.T, factory func() Protocol, port int, extra ...Option) (*Server, error)

func createGroupServer(t *asyncio.T, call string, g *asyncio.LoopGroup, mode GroupMode, streams bool, mk groupFactories, create createFunc, port int, opts []Option) (*GroupServer, error) {
	if err := checkGroupTask(t, call); err != nil {
		return nil, err
	}
	if g == nil || g.Len() == 0 {
		// The zero LoopGroup has no loops: nothing would serve (and the
		// acceptor's hand-off divided by zero).
		return nil, &asyncio.ValueError{Msg: call + ": nil or zero LoopGroup (make it with asyncio.NewLoopGroup)"}
	}
	if mode != GroupReusePort && mode != GroupRoundRobin && mode != GroupLeastConns {
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf("group server: unknown mode %d", mode)}
	}
	o, err := buildOptions("", opts)
	if err != nil {
		return nil, err
	}
	// Every part is made on its loop by a cross-loop call: with nobody
	// running the others, the first call would wait for ever.
	if !g.Running() {
		for i, l := range g.Loops() {
			if l != t.Loop() && !l.IsRunning() {
				return nil, &asyncio.RuntimeError{Msg: fmt.Sprintf("%s: loop %d of the group is not running "+
					"(run the group with RunEach or RunGroup, and make the server from one of its mains)", call, i)}
			}
		}
	}
	// What the servers of the loops would refuse one by one, refused
	// before any of them exists.
	if err := checkPort(port); err != nil {
		return nil, err
	}
	if mode == GroupReusePort {
		switch {
		case o.sock >= 0:
			return nil, &asyncio.ValueError{Msg: call + ": GroupReusePort makes a listening socket per loop, WithSocket gives one (use GroupRoundRobin or GroupLeastConns)"}
		case o.simHost != nil:
			return nil, &asyncio.ValueError{Msg: call + ": GroupReusePort is not supported on a simulated network (WithNetwork); use GroupRoundRobin or GroupLeastConns"}
		}
	}
	gs := &GroupServer{owner: t.Loop(), mode: mode}
	loops := g.Loops()
	// fail closes what was made and returns err: t's own cancellation as
	// it is, anything else wrapped by what names the part that failed.
	fail := func(err error, what string, args ...any) (*GroupServer, error) {
		gs.closeAll(t)
		if asyncio.IsCancelled(err) && t.Cancelling() > 0 {
			return nil, err
		}
		return nil, fmt.Errorf("group server: "+what+": %w", append(args, err)...)
	}
	if mode == GroupReusePort {
		// The first listener picks the port (port 0); the others bind it.
		order := append([]int(nil), indexes(len(loops))...)
		if own := g.Index(t.Loop()); own > 0 {
			order[0], order[own] = own, 0
		}
		gs.servers = make([]*Server, len(loops))
		parts := make([]*groupListening, len(loops))
		for k, i := range order {
			l := loops[i]
			pick := k == 0 && port == 0
			p := port
			var addrs []net.Addr
			var part *groupListening
			s, err := makeGroupPart(t, l, func(rt *asyncio.T) (*Server, error) {
				s, err := create(rt, mk(l, nil), p, WithReusePort())
				if err == nil && pick {
					// Port 0 gives each address of the host a port of
					// its own; the loops must agree on one port per
					// address, so the first picks one for all.
					if one, same := listenersSamePort(s); !same {
						s.Close()
						s, err = create(rt, mk(l, nil), one, WithReusePort())
					}
				}
				if err == nil {
					part = gs.listen(s)
					addrs = s.Addrs()
					if testHookGroupPartMade != nil {
						testHookGroupPartMade(i, s)
					}
				}
				return s, err
			}, func(s *Server) { s.Close() })
			if err != nil {
				return fail(err, "the listener of loop %d", i)
			}
			gs.servers[i] = s
			parts[i] = part
			if k == 0 {
				// Every loop listens on these addresses (the same port).
				gs.addrs = addrs
				if len(addrs) > 0 {
					if a, ok := addrs[0].(*net.TCPAddr); ok {
						port = a.Port
					}
				}
			}
		}
		gs.listeners = parts
		gs.serving = !o.deferServing
		return gs, nil
	}
	// Main/sub: a worker server (no listener) on every loop, then the
	// acceptor on the calling loop.
	for i, l := range loops {
		w, err := makeGroupPart(t, l, func(rt *asyncio.T) (*groupWorker, error) {
			w := &groupWorker{loop: l, pending: map[int]bool{}, streams: streams}
			s := newServer(l, "", mk(l, w), o)
			s.listeners = []*listener{} // open, listening nowhere
			w.srv = s
			s.onActive = func(d int) {
				if d < 0 {
					w.active.Add(-1)
				}
			}
			w.stop = l.OnClose(w.closed)
			if testHookGroupPartMade != nil {
				testHookGroupPartMade(i, s)
			}
			return w, nil
		}, func(w *groupWorker) { w.srv.Close(); w.retire() })
		if err != nil {
			return fail(err, "the worker of loop %d", i)
		}
		gs.workers = append(gs.workers, w)
		gs.servers = append(gs.servers, w.srv)
	}
	acc, err := create(t, func() Protocol { return nil }, port, WithDeferredServing())
	if err != nil {
		return fail(err, "the acceptor")
	}
	for _, w := range gs.workers {
		w.srv.network = acc.network
	}
	acc.handoff = gs.handoff
	gs.listeners = []*groupListening{gs.listen(acc)}
	gs.acceptor = acc
	gs.addrs = acc.Addrs()
	if !o.deferServing {
		acc.StartServing()
		gs.serving = true
		if err := asyncio.Sleep(t, 0); err != nil {
			gs.closeAll(t)
			return nil, err
		}
	}
	return gs, nil
}

// listenersSamePort reports whether every listener of s has the same port, and
// the first one's.
func listenersSamePort(s *Server) (int, bool) {
	first := -1
	for _, a := range s.Addrs() {
		ta, ok := a.(*net.TCPAddr)
		if !ok {
			continue
		}
		if first < 0 {
			first = ta.Port
		} else if ta.Port != first {
			return first, false
		}
	}
	return first, true
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
// socket is closed, and the acceptor stops listening (soon: not from
// inside its accept callback), as a server does when its loop closes:
// nothing would ever serve a connection again.
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
	if !gs.stopping {
		gs.stopping = true
		gs.owner.CallSoon(gs.acceptor.Close)
	}
}

// pick chooses the first worker to try. Least-conns breaks ties in turn
// (nginx's least_conn does too): short connections, each gone before the
// next arrives, would otherwise all go to the first loop.
func (gs *GroupServer) pick() int {
	if gs.mode == GroupLeastConns {
		n := len(gs.workers)
		best := gs.next
		bestLoad := gs.workers[best].load()
		for k := 1; k < n; k++ {
			i := (gs.next + k) % n
			if load := gs.workers[i].load(); load < bestLoad {
				best, bestLoad = i, load
			}
		}
		gs.next = (best + 1) % n
		return best
	}
	i := gs.next
	gs.next = (gs.next + 1) % len(gs.workers)
	return i
}

// load is w's weight for least-conns: its connections, and the hand-offs
// it failed since it last took one.
func (w *groupWorker) load() int64 { return w.active.Load() + w.failed.Load() }

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
	// Counted as failed before the factory runs: a failure closes nfd,
	// and the peer may connect again before adopt returns.
	w.failed.Add(1)
	w.srv.acceptConnection(nfd)
	if w.srv.activeCount == before { // the factory failed: nfd is closed
		w.active.Add(-1)
		return
	}
	if w.streams {
		// The factory of a stream server cannot fail: whether the loop
		// took the connection is its handler's to say (handlerDone).
		w.failed.Add(-1)
		return
	}
	w.failed.Store(0)
}

// handlerDone hears how the handler of a connection of w's stream server
// ended (on w's loop): a failure counts as a failed hand-off, before the
// connection is closed and no longer counts itself (so w never looks
// less loaded meanwhile); a handler that returned nil means the loop
// serves again, and clears them.
func (w *groupWorker) handlerDone(failed bool) {
	if failed {
		w.failed.Add(1)
	} else {
		w.failed.Store(0)
	}
}

// retire ends w once its server is closed (on w's loop): its close hook
// is unregistered and w takes no more sockets.
func (w *groupWorker) retire() {
	if w.stop != nil {
		w.stop()
	}
	w.closed()
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

// Addr returns the server's first listening address, nil once Close was
// called. Every loop of a reuse-port server listens on the same addresses;
// a main/sub server's acceptor listens on them alone.
//
// Addr, Addrs and Sockets report what was made when the server was
// created, so they may be called from any goroutine and never race with a
// loop of the group that closes. A loop of the group that closed no
// longer listens, the others still do: the addresses stay those of the
// server until Close; Sockets leaves out the sockets that closed.
func (gs *GroupServer) Addr() net.Addr {
	if gs.shut.Load() || len(gs.addrs) == 0 {
		return nil
	}
	return gs.addrs[0]
}

// Addrs returns the server's listening addresses (asyncio's
// Server.sockets, as addresses), nil once Close was called.
func (gs *GroupServer) Addrs() []net.Addr {
	if gs.shut.Load() {
		return nil
	}
	return append([]net.Addr(nil), gs.addrs...)
}

// Sockets returns the listening file descriptors (asyncio's
// Server.sockets): every loop's listeners for a reuse-port server, by
// loop index, the acceptor's for a main/sub server; nil once Close was
// called. The sockets of a part that stopped listening because its loop
// closed are left out: their numbers may name other files by now. They
// belong to the server: do not close them.
func (gs *GroupServer) Sockets() []int {
	if gs.shut.Load() {
		return nil
	}
	var fds []int
	for _, p := range gs.listeners {
		if !p.gone.Load() {
			fds = append(fds, p.fds...)
		}
	}
	return fds
}

// Servers returns the per-loop servers, by loop index (for reuse port,
// each with its listener; for main/sub, the workers, which listen
// nowhere).
func (gs *GroupServer) Servers() []*Server { return append([]*Server(nil), gs.servers...) }

// check is the check of every method: t is the running task of the
// loop that created the server (the acceptor's, whose state only that
// loop touches), before anything changes.
func (gs *GroupServer) check(t *asyncio.T, op string) error {
	call := "GroupServer." + op
	if err := checkGroupTask(t, call); err != nil {
		return err
	}
	if gs.owner == nil { // before anything changes
		return &asyncio.ValueError{Msg: call + ": zero GroupServer (get one from CreateGroupServer, StartGroupServer or their Unix forms)"}
	}
	if l := t.Loop(); l != gs.owner {
		return &asyncio.RuntimeError{Msg: fmt.Sprintf("%s called on %s: a group server's methods must be called from a task on the loop that created it (%s)",
			call, groupLoopLabel(l), groupLoopLabel(gs.owner))}
	}
	return nil
}

// eachServer runs fn on every server's loop, in parallel, and joins the
// errors. A loop that is closed has nothing left to do: its error (one
// wrapping ErrLoopClosed) is left out. With shield, the work is done
// once asked for (Close, CloseClients): cancelling t does not cancel it
// on the other loops. Either way a cancelled t stops waiting at once and
// gets its cancellation (the other waits are cancelled).
func (gs *GroupServer) eachServer(t *asyncio.T, shield bool, fn func(rt *asyncio.T, i int, s *Server) error) error {
	var aws []asyncio.AwaitableOf[struct{}]
	var errs []error
	for i, s := range gs.servers {
		if s == nil {
			continue
		}
		call := func(rt *asyncio.T) (struct{}, error) { return struct{}{}, fn(rt, i, s) }
		if s.loop == t.Loop() {
			if shield {
				errs = append(errs, fn(t, i, s))
			} else {
				aws = append(aws, asyncio.CreateTask(t, call))
			}
			continue
		}
		f, err := asyncio.SubmitTo(t, s.loop, call)
		if err != nil {
			if !errors.Is(err, asyncio.ErrLoopClosed) {
				errs = append(errs, err)
			}
			continue
		}
		if shield {
			aws = append(aws, asyncio.Shield[struct{}](f))
		} else {
			aws = append(aws, f)
		}
	}
	for k, aw := range aws {
		_, err := aw.Await(t)
		if err != nil && asyncio.IsCancelled(err) && t.Cancelling() > 0 {
			for _, rest := range aws[k+1:] {
				rest.Cancel()
			}
			return err
		}
		if err != nil && !errors.Is(err, asyncio.ErrLoopClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeParts closes the acceptor and every loop's server; a worker is
// retired with its server.
func (gs *GroupServer) closeParts(t *asyncio.T) error {
	if gs.acceptor != nil {
		gs.acceptor.Close()
	}
	return gs.eachServer(t, true, func(_ *asyncio.T, i int, s *Server) error {
		s.Close()
		if gs.workers != nil {
			gs.workers[i].retire()
		}
		return nil
	})
}

// closeAll closes whatever was created, ignoring errors (a failed create).
func (gs *GroupServer) closeAll(t *asyncio.T) { _ = gs.closeParts(t) }

// Close stops listening on every loop (asyncio's Server.close, for the
// whole group): the acceptor, or every loop's listener, is closed;
// connections stay open (CloseClients). t must be a task on the loop
// that created the server (any other caller gets a *RuntimeError, and
// nothing changes); Close waits for every loop to have closed its part.
// A loop that is closed already has nothing to close. If t is cancelled
// meanwhile, every loop still closes its part, but Close returns the
// cancellation at once.
func (gs *GroupServer) Close(t *asyncio.T) error {
	if err := gs.check(t, "Close"); err != nil {
		return err
	}
	gs.serving, gs.closed = false, true
	gs.shut.Store(true)
	if f := gs.forever; f != nil {
		gs.forever = nil
		f.Cancel() // ServeForever ends, as asyncio's close cancels serve_forever
	}
	return gs.closeParts(t)
}

// IsServing reports whether the server accepts connections (asyncio's
// is_serving): from its creation (or StartServing, with
// WithDeferredServing) until Close, or until nothing listens any more
// (every loop that listened, or the acceptor, stopped because its loop
// closed: a single loop's server stops serving when its loop closes).
// Call it on the loop that created it.
func (gs *GroupServer) IsServing() bool { return gs.serving && gs.listening.Load() > 0 }

// ServeForever serves until t is cancelled or the server is closed
// (asyncio's serve_forever, for the whole group): it starts serving on
// every loop if it was deferred, waits, and then closes the server on
// every loop, waits for every connection to be gone (Close, WaitClosed)
// and returns the cancellation. t as for Close. A second ServeForever
// while one runs, or one on a closed server, is a *RuntimeError.
func (gs *GroupServer) ServeForever(t *asyncio.T) error {
	if err := gs.check(t, "ServeForever"); err != nil {
		return err
	}
	if gs.forever != nil {
		return &asyncio.RuntimeError{Msg: "GroupServer.ServeForever: the server is already being awaited on ServeForever"}
	}
	if gs.closed {
		return &asyncio.RuntimeError{Msg: "GroupServer.ServeForever: the server is closed"}
	}
	// Registered before StartServing, which suspends: a second call
	// meanwhile is refused, and a Close meanwhile ends this one.
	fut := asyncio.NewFuture[struct{}](t)
	gs.forever = fut
	var err error
	if !gs.serving {
		err = gs.StartServing(t)
	}
	if err == nil {
		_, err = fut.Await(t)
	}
	if gs.forever == fut {
		gs.forever = nil
	}
	if asyncio.IsCancelled(err) {
		// As asyncio's: close (unless Close ended the wait) and wait for
		// the connections, then the cancellation.
		if !gs.closed {
			if cerr := gs.Close(t); cerr != nil && !asyncio.IsCancelled(cerr) {
				return cerr
			}
		}
		if werr := gs.WaitClosed(t); werr != nil && !asyncio.IsCancelled(werr) {
			return werr
		}
	}
	return err
}

// StartServing starts accepting connections on every loop (asyncio's
// start_serving), for a server made with WithDeferredServing: it is a
// no-op on a server already serving, and does nothing once the server
// is closed. As asyncio's, it lets the loop run once so that the
// listeners are watched when it returns.
func (gs *GroupServer) StartServing(t *asyncio.T) error {
	if err := gs.check(t, "StartServing"); err != nil {
		return err
	}
	if gs.closed {
		return nil
	}
	if gs.acceptor != nil {
		gs.acceptor.StartServing()
	} else if err := gs.eachServer(t, true, func(_ *asyncio.T, _ int, s *Server) error { s.StartServing(); return nil }); err != nil {
		return err
	}
	gs.serving = true
	return asyncio.Sleep(t, 0)
}

// CloseClients closes every connection of the server on every loop
// (asyncio 3.13's close_clients); t as for Close.
func (gs *GroupServer) CloseClients(t *asyncio.T) error {
	if err := gs.check(t, "CloseClients"); err != nil {
		return err
	}
	return gs.eachServer(t, true, func(_ *asyncio.T, _ int, s *Server) error { s.CloseClients(); return nil })
}

// AbortClients aborts every connection of the server on every loop
// (asyncio 3.13's abort_clients: the buffers are dropped and the peers
// see a reset); t as for Close.
func (gs *GroupServer) AbortClients(t *asyncio.T) error {
	if err := gs.check(t, "AbortClients"); err != nil {
		return err
	}
	return gs.eachServer(t, true, func(_ *asyncio.T, _ int, s *Server) error { s.AbortClients(); return nil })
}

// WaitClosed waits until the server is closed on every loop and every
// connection is gone (asyncio's wait_closed, for the whole group); t as
// for Close. A loop that is closed (or closes meanwhile) has no
// connections left. Cancelling t ends the wait on every loop.
func (gs *GroupServer) WaitClosed(t *asyncio.T) error {
	if err := gs.check(t, "WaitClosed"); err != nil {
		return err
	}
	if gs.acceptor != nil {
		if err := gs.acceptor.WaitClosed(t); err != nil {
			return err
		}
	}
	return gs.eachServer(t, false, func(rt *asyncio.T, _ int, s *Server) error { return s.WaitClosed(rt) })
}

// ActiveConnections returns the number of open connections on each loop
// (by loop index), read on each loop (0 for a loop that is closed); t as
// for Close.
func (gs *GroupServer) ActiveConnections(t *asyncio.T) ([]int, error) {
	if err := gs.check(t, "ActiveConnections"); err != nil {
		return nil, err
	}
	counts := make([]int, len(gs.servers))
	var mu sync.Mutex
	err := gs.eachServer(t, false, func(_ *asyncio.T, i int, s *Server) error {
		mu.Lock()
		counts[i] = s.activeCount
		mu.Unlock()
		return nil
	})
	return counts, err
}
