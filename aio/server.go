//go:build unix

package aio

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// acceptRetryDelay is asyncio's ACCEPT_RETRY_DELAY: how long a listening
// socket stops accepting after accept() ran out of file descriptors.
const acceptRetryDelay = time.Second

// Server is asyncio.Server: listening sockets whose accepted connections
// get a transport and a protocol from the factory. Close stops listening;
// WaitClosed waits until the server is closed and every connection it
// accepted is gone (3.12+ semantics). Its methods must be called on the
// loop. The zero Server is not one: its WaitClosed and ServeForever panic
// with a *asyncio.ValueError that says so.
type Server struct {
	loop      *asyncio.Loop
	factory   func() Protocol
	network   string
	opts      *options
	listeners []*listener
	unixPath  string
	unixIno   fileID // of the socket file this server created
	disown    func() bool

	clients     map[*socketTransport]Transport // raw transport -> what the protocol sees
	nextClient  uint64                         // attach's count, for each transport's clientSeq
	activeCount int
	waiters     []*asyncio.Future[struct{}]
	woken       bool // asyncio's _waiters is None
	serving     bool
	foreverFut  *asyncio.Future[struct{}]

	collectPending bool // STREAM-11 (writer_cleanup.go)

	// handoff, when set, takes each accepted socket instead (a group
	// server's acceptor); onActive hears of attach/detach (a group
	// server's worker, for least-connections). group_server.go.
	handoff  func(nfd int)
	onActive func(delta int)
	// onUnlisten, when set, runs once the listening sockets are closed
	// (by Close, or because the loop closed): a group server counts the
	// loops still listening for IsServing. group_server.go.
	onUnlisten func()

	// accept and retryDelay are hooks for tests (EMFILE injection).
	accept     func(fd int) (int, unix.Sockaddr, error)
	retryDelay time.Duration
}

type listener struct {
	fd   int
	addr net.Addr
	// listening: listen(2) was called. With WithDeferredServing a socket
	// is only bound until StartServing, as asyncio's create_server(...,
	// start_serving=False) leaves it (Server._start_serving listens), so
	// a client is refused meanwhile.
	listening bool
	closed    bool
}

func newServer(l *asyncio.Loop, network string, factory func() Protocol, o *options) *Server {
	s := &Server{
		loop:       l,
		factory:    factory,
		network:    network,
		opts:       o,
		clients:    map[*socketTransport]Transport{},
		accept:     sysAccept,
		retryDelay: acceptRetryDelay,
	}
	// A server still listening when its loop closes stops listening then
	// (its connections are transports, which do the same).
	s.disown = l.OnClose(s.closeListeners)
	return s
}

// fileID identifies a file: device and inode.
type fileID struct{ dev, ino uint64 }

// statID returns path's fileID, if path is a socket.
func statID(path string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// String describes the server by its listening addresses.
func (s *Server) String() string {
	return fmt.Sprintf("<Server sockets=%v>", s.Addrs())
}

// Loop returns the server's loop (asyncio's get_loop).
func (s *Server) Loop() *asyncio.Loop { return s.loop }

// Sockets returns the listening file descriptors, nil once closed
// (asyncio's sockets).
func (s *Server) Sockets() []int {
	var fds []int
	for _, ln := range s.listeners {
		fds = append(fds, ln.fd)
	}
	return fds
}

// Addrs returns the listening addresses, nil once closed.
func (s *Server) Addrs() []net.Addr {
	var as []net.Addr
	for _, ln := range s.listeners {
		as = append(as, ln.addr)
	}
	return as
}

// Addr returns the first listening address, or nil.
func (s *Server) Addr() net.Addr {
	if len(s.listeners) == 0 {
		return nil
	}
	return s.listeners[0].addr
}

// IsServing reports whether the server accepts connections (asyncio's
// is_serving).
func (s *Server) IsServing() bool { return s.serving }

// StartServing starts accepting connections (asyncio's start_serving).
// CreateServer already starts serving unless given WithDeferredServing,
// so this is a no-op unless serving was deferred or stopped; it is
// idempotent and does nothing once the server is closed.
func (s *Server) StartServing() {
	if s.serving || s.listeners == nil {
		return
	}
	s.serving = true
	for _, ln := range s.listeners {
		if !ln.listening && !ln.closed {
			if err := unix.Listen(ln.fd, s.opts.backlog); err != nil {
				s.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "cannot listen on the server's socket", Err: os.NewSyscallError("listen", err)})
				continue
			}
			ln.listening = true
		}
		s.watch(ln)
	}
}

func (s *Server) watch(ln *listener) {
	if ln.closed {
		return
	}
	if err := s.loop.AddReader(ln.fd, func() { s.acceptReady(ln) }); err != nil {
		s.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "cannot watch the listening socket", Err: err})
	}
}

// acceptReady is asyncio's _accept_connection: accept up to backlog
// connections. When accept runs out of file descriptors (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) the listening socket is unwatched and re-watched after
// a delay, so the loop does not spin on a socket it cannot accept from.
func (s *Server) acceptReady(ln *listener) {
	for i := 0; i < s.opts.backlog; i++ {
		nfd, _, err := s.accept(ln.fd)
		switch err {
		case nil:
			s.acceptConnection(nfd)
			continue
		case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED:
			return // as asyncio: the accept queue is empty (or try later)
		case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			s.loop.CallExceptionHandler(asyncio.ExceptionContext{
				Message: "socket.accept() out of system resource",
				Err:     os.NewSyscallError("accept", err),
			})
			s.loop.RemoveReader(ln.fd)
			s.loop.CallLater(s.retryDelay, func() {
				if s.serving {
					s.watch(ln)
				}
			})
			return
		default:
			s.loop.CallExceptionHandler(asyncio.ExceptionContext{
				Message: "Error on accepting a connection",
				Err:     os.NewSyscallError("accept", err),
			})
			return
		}
	}
}

func (s *Server) acceptConnection(nfd int) {
	if s.handoff != nil {
		s.handoff(nfd)
		return
	}
	p, err := newProtocol("Server", s.factory)
	if err != nil {
		unix.Close(nfd)
		s.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "Error on transport creation for incoming connection", Err: err})
		return
	}
	if s.opts.tls != nil {
		newTLSTransportServer(s.loop, nfd, s.network, p, s)
		return
	}
	tr := newSocketTransport(s.loop, nfd, s.network, p, s, nil)
	tr.ownFD = true // accepted here
	tr.maxBuffer = s.opts.maxWriteBuffer
}

func (s *Server) attach(tr *socketTransport) {
	if s.onActive != nil {
		s.onActive(1)
	}
	s.activeCount++
	s.nextClient++
	tr.clientSeq = s.nextClient
	s.clients[tr] = tr
}

func (s *Server) detach(tr *socketTransport) {
	if _, ok := s.clients[tr]; !ok {
		return
	}
	delete(s.clients, tr)
	if s.onActive != nil {
		s.onActive(-1)
	}
	s.activeCount--
	if s.activeCount == 0 && s.listeners == nil {
		s.wakeup()
	}
}

func (s *Server) wakeup() {
	ws := s.waiters
	s.waiters = nil
	s.woken = true
	for _, w := range ws {
		if !w.Done() {
			w.SetResult(struct{}{})
		}
	}
}

// Close stops listening and closes the listening sockets (asyncio's
// Server.close). Connections already accepted stay open; see CloseClients.
// It is idempotent.
func (s *Server) Close() {
	if s.listeners == nil {
		return
	}
	s.disown()
	s.closeListeners()
	if s.foreverFut != nil && !s.foreverFut.Done() {
		s.foreverFut.Cancel()
		s.foreverFut = nil
	}
	if s.activeCount == 0 {
		s.wakeup()
	}
	s.scheduleCollect() // STREAM-11
}

// closeListeners closes the listening sockets, and removes the socket file
// of a Unix server if it is still the one this server bound: a newer
// server may have replaced it since (asyncio 3.13's cleanup_socket checks
// the inode; device and inode here).
func (s *Server) closeListeners() {
	lns := s.listeners
	s.listeners = nil
	for _, ln := range lns {
		s.loop.RemoveReader(ln.fd)
		ln.closed = true
		unix.Close(ln.fd)
	}
	if s.unixPath != "" {
		if id, ok := statID(s.unixPath); ok && id == s.unixIno {
			os.Remove(s.unixPath)
		}
		s.unixPath = ""
	}
	s.serving = false
	if f := s.onUnlisten; f != nil && lns != nil {
		s.onUnlisten = nil
		f()
	}
}

// CloseClients closes every connection the server accepted (asyncio 3.13's
// close_clients). As asyncio's, it closes the accepted sockets' own
// transports: a TLS connection's socket is closed once what is buffered
// is sent, without a TLS shutdown (no close_notify, no wait for the
// peer), and the application's ConnectionLost gets nil.
func (s *Server) CloseClients() {
	for _, tr := range s.acceptedSockets() {
		tr.Close()
	}
}

// AbortClients aborts every connection the server accepted (asyncio
// 3.13's abort_clients), at the socket, as CloseClients closes them.
func (s *Server) AbortClients() {
	for _, tr := range s.acceptedSockets() {
		tr.Abort()
	}
}

// acceptedSockets returns the socket transports of the server's
// connections in the order they were accepted (see snapshotClients):
// asyncio's Server._clients holds the socket transports, below a TLS
// layer if there is one.
func (s *Server) acceptedSockets() []*socketTransport {
	raw := make([]*socketTransport, 0, len(s.clients))
	for tr := range s.clients {
		raw = append(raw, tr)
	}
	slices.SortFunc(raw, func(a, b *socketTransport) int { return cmp.Compare(a.clientSeq, b.clientSeq) })
	return raw
}

// snapshotClients returns the server's connections in the order they
// were accepted, not a map's random one: what CloseClients and
// AbortClients do to them then happens in the same order in every run,
// which a simulated network's seed needs to repeat a run exactly.
func (s *Server) snapshotClients() []Transport {
	raw := make([]*socketTransport, 0, len(s.clients))
	for tr := range s.clients {
		raw = append(raw, tr)
	}
	slices.SortFunc(raw, func(a, b *socketTransport) int { return cmp.Compare(a.clientSeq, b.clientSeq) })
	trs := make([]Transport, len(raw))
	for i, tr := range raw {
		trs[i] = s.clients[tr]
	}
	return trs
}

// WaitClosed suspends t until the server is closed and all its
// connections are gone (asyncio's wait_closed). It returns at once if
// that already happened. A connection whose StartServer handler returned
// and whose writer nobody holds is closed (STREAM-11). In debug mode,
// still waiting after a second, it names the connections it waits for
// (through the exception handler).
func (s *Server) WaitClosed(t *asyncio.T) error {
	s.checkMade("Server.WaitClosed")
	if s.woken {
		return nil
	}
	w := asyncio.NewFuture[struct{}](s.loop)
	s.waiters = append(s.waiters, w)
	s.collectReleased() // STREAM-11: close connections whose writer was dropped
	defer s.reportWaiting()()
	_, err := w.Await(t)
	return err
}

// checkMade panics with a *asyncio.ValueError naming op when s was not
// made by this package (the zero Server has no loop).
func (s *Server) checkMade(op string) {
	if s.loop == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero Server (get one from CreateServer, StartServer or their Unix forms)"})
	}
}

// ServeForever accepts connections until t is cancelled or the server is
// closed (asyncio's serve_forever); then the server is closed and its
// connections awaited, and the cancellation is returned.
func (s *Server) ServeForever(t *asyncio.T) error {
	s.checkMade("Server.ServeForever")
	if s.foreverFut != nil {
		return runtimeErrorf("server %v is already being awaited on serve_forever()", s)
	}
	if s.listeners == nil {
		return runtimeErrorf("server %v is closed", s)
	}
	s.StartServing()
	fut := asyncio.NewFuture[struct{}](s.loop)
	s.foreverFut = fut
	_, err := fut.Await(t)
	if asyncio.IsCancelled(err) {
		s.Close()
		if werr := s.WaitClosed(t); werr != nil {
			err = werr
		}
	}
	s.foreverFut = nil
	return err
}

// listenOn creates, binds and listens on one socket (only binds it with
// WithDeferredServing: StartServing listens).
func listenOn(family int, sa unix.Sockaddr, o *options) (int, error) {
	fd, err := newSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	fail := func(err error) (int, error) {
		unix.Close(fd)
		return -1, err
	}
	if family != unix.AF_UNIX && o.reuseAddr {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return fail(os.NewSyscallError("setsockopt", err))
		}
	}
	if family != unix.AF_UNIX && o.reusePort {
		if err := setReusePort(fd); err != nil {
			return fail(err)
		}
	}
	if family != unix.AF_UNIX && o.keepAlive {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
			return fail(os.NewSyscallError("setsockopt", err))
		}
	}
	if family == unix.AF_INET6 {
		// As asyncio: an IPv6 listener does not take IPv4 connections,
		// which get their own listener when the host resolves to both.
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail(os.NewSyscallError("bind", err))
	}
	if !o.deferServing {
		if err := unix.Listen(fd, o.backlog); err != nil {
			return fail(os.NewSyscallError("listen", err))
		}
	}
	return fd, nil
}

// CreateServer listens on host:port and returns a serving Server
// (asyncio's loop.create_server). host "" listens on every interface,
// 0.0.0.0 and :: (IPv6 only, so each family has a listener of its own),
// as asyncio's host=None; a name is resolved and every address is
// listened on; an address whose family the system lacks is skipped. Port 0 picks a free port
// (read it with Addr). Options: WithTLS (serve TLS), WithBacklog,
// WithReusePort, WithResolver, WithDeferredServing, WithSocket. A nil
// factory or a port outside 0-65535 is a *ValueError; a factory that panics or returns nil for a
// connection is reported to the exception handler ("Error on transport
// creation for incoming connection") and that connection is closed.
func CreateServer(t *asyncio.T, factory func() Protocol, host string, port int, opts ...Option) (*Server, error) {
	if factory == nil {
		return nil, errNilFactory("CreateServer")
	}
	if err := checkPort(port); err != nil {
		return nil, err
	}
	o, err := buildOptions("CreateServer", opts)
	if err != nil {
		return nil, err
	}
	if o.sock >= 0 {
		if host != "" || port != 0 {
			return nil, errSockAndAddress("host/port")
		}
		return serveOnSocket(t, factory, o, false)
	}
	if o.simHost != nil {
		return o.simHost.listen(t, factory, host, port, o)
	}
	hosts := []string{host}
	if o.hostsGiven {
		if host != "" {
			return nil, &asyncio.ValueError{Msg: fmt.Sprintf("host %q given together with WithHosts: give the hosts one way", host)}
		}
		hosts = o.hosts
	}
	var ips []net.IP
	var zones []string // each address's IPv6 zone: a scoped literal host's
	for _, host := range hosts {
		var hips []net.IP
		if host == "" {
			// asyncio's host=None (or ""): getaddrinfo(None, port,
			// AI_PASSIVE), every interface of both families, each on
			// its own socket (so port 0 gives each a port of its own,
			// as there).
			hips = []net.IP{net.IPv4zero, net.IPv6unspecified}
		} else if hips, err = resolveHost(t, o.resolver, host); err != nil {
			return nil, err
		}
		if hips, err = byFamily(host, hips, o.family); err != nil {
			return nil, err
		}
		ips = append(ips, hips...)
		_, zone, _ := scopedLiteral(host)
		for range hips {
			zones = append(zones, zone)
		}
	}
	l := t.Loop() // a nil t panics here, before a socket is made
	// Every address is bound before the server exists: a failure closes
	// what was bound and leaves nothing behind (not even the server's
	// registration with the loop).
	var lns []*listener
	var tried []string
	var lastErr error
	seen := map[string]bool{}
	for i, ip := range ips {
		name := ip.String()
		if zones[i] != "" && ip.To4() == nil {
			name += "%" + zones[i]
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		sa, family := sockaddrForZone(ip, port, zones[i])
		tried = append(tried, addrString(name, port))
		fd, err := listenOn(family, sa, o)
		if errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT) {
			// As asyncio (bpo-30945): an address this host does not have
			// (its family not enabled, or no socket of that family at
			// all) is skipped, not fatal.
			lastErr = err
			continue
		}
		if err != nil {
			for _, ln := range lns {
				unix.Close(ln.fd)
			}
			return nil, fmt.Errorf("error while attempting to bind on address %s: %w", addrString(name, port), err)
		}
		lns = append(lns, &listener{fd: fd, addr: localAddr(fd, "tcp"), listening: !o.deferServing})
	}
	if len(lns) == 0 {
		return nil, fmt.Errorf("could not bind on any address out of [%s]: %w", strings.Join(tried, " "), lastErr)
	}
	s := newServer(l, "tcp", factory, o)
	s.listeners = lns
	return s.startAfterCreate(t)
}

func (s *Server) startAfterCreate(t *asyncio.T) (*Server, error) {
	if s.opts.deferServing {
		return s, nil // as asyncio: no iteration either
	}
	s.StartServing()
	// As asyncio does: one iteration so that the readers are in place.
	if err := asyncio.Sleep(t, 0); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// CreateUnixServer listens on the Unix stream socket path (asyncio's
// loop.create_unix_server). A stale socket file at path is removed first;
// Close removes the file. On Linux a path that begins with a NUL
// (asyncio's abstract socket name) or with "@" (Go's spelling of it) is an
// abstract socket, which has no file; its address is reported with "@"
// (Server.Addr, and the peername of its clients) where asyncio has bytes
// beginning with a NUL. Unlike asyncio, "@name" is never a file in the
// working directory. Options: WithTLS, WithBacklog,
// WithDeferredServing, WithKeepSocketFile, WithSocket.
func CreateUnixServer(t *asyncio.T, factory func() Protocol, path string, opts ...Option) (*Server, error) {
	l := t.Loop() // a nil t panics here, before a socket or a file is touched
	if factory == nil {
		return nil, errNilFactory("CreateUnixServer")
	}
	o, err := buildOptions("CreateUnixServer", opts)
	if err != nil {
		return nil, err
	}
	if o.sock >= 0 {
		if path != "" {
			return nil, errSockAndAddress("path")
		}
		return serveOnSocket(t, factory, o, true)
	}
	sa, err := unixSockaddr(path)
	if err != nil {
		return nil, err
	}
	// An abstract name (Linux: asyncio's leading NUL, or Go's "@") has
	// no file: a file of that name in the working directory is not
	// the socket's, and is left alone.
	abstract := path != "" && (path[0] == '@' || path[0] == 0)
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 && !abstract {
		os.Remove(path)
	}
	fd, err := listenOn(unix.AF_UNIX, sa, o)
	if err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			// As asyncio's create_unix_server: the message names the
			// path ("Address '/run/ctl.sock' is already in use"), the
			// errno stays EADDRINUSE.
			return nil, fmt.Errorf("address %q is already in use: %w", path, err)
		}
		return nil, err
	}
	s := newServer(l, "unix", factory, o)
	// The address as getsockname reports it, and so as the peername of
	// the server's clients: an abstract name with Go's "@".
	addr := localAddr(fd, "unix")
	if addr == nil {
		addr = &net.UnixAddr{Name: path, Net: "unix"}
	}
	s.listeners = []*listener{{fd: fd, addr: addr, listening: !o.deferServing}}
	if id, ok := statID(path); ok && !abstract && !o.keepSocketFile {
		// Not an abstract socket (Linux), which has no file to remove.
		s.unixPath, s.unixIno = path, id
	}
	return s.startAfterCreate(t)
}

// serveOnSocket is CreateServer and CreateUnixServer with WithSocket: it
// listens on the bound socket (at StartServing with WithDeferredServing)
// and serves it; a Unix server removes the
// socket file it is bound to when it closes (asyncio 3.13).
func serveOnSocket(t *asyncio.T, factory func() Protocol, o *options, unixOnly bool) (*Server, error) {
	if o.reusePort {
		// SO_REUSEPORT matters only before the bind, which the caller
		// has done: as for a datagram endpoint, refused, not ignored.
		return nil, &asyncio.ValueError{Msg: "socket modifier keyword arguments can not be used when sock is specified. (reuse_port=True)"}
	}
	if o.reuseAddrGiven {
		// The same for SO_REUSEADDR.
		v := "False"
		if o.reuseAddr {
			v = "True"
		}
		return nil, &asyncio.ValueError{Msg: "socket modifier keyword arguments can not be used when sock is specified. (reuse_address=" + v + ")"}
	}
	network, err := adoptStreamSocket(o.sock, unixOnly)
	if err != nil {
		return nil, err
	}
	if o.keepAlive { // (a TCP server's option only: see WithKeepAlive)
		if err := unix.SetsockoptInt(o.sock, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if !o.deferServing {
		if err := unix.Listen(o.sock, o.backlog); err != nil {
			return nil, os.NewSyscallError("listen", err)
		}
	}
	s := newServer(t.Loop(), network, factory, o)
	addr := localAddr(o.sock, network)
	s.listeners = []*listener{{fd: o.sock, addr: addr, listening: !o.deferServing}}
	if ua, ok := addr.(*net.UnixAddr); ok && ua.Name != "" && ua.Name[0] != '@' && ua.Name[0] != 0 && !o.keepSocketFile {
		if id, ok := statID(ua.Name); ok {
			s.unixPath, s.unixIno = ua.Name, id
		}
	}
	return s.startAfterCreate(t)
}
