//go:build unix

package aio

// A simulated network for tests (issue 22): hosts with addresses,
// listeners, and stream connections with latency, jitter, bandwidth and
// buffer limits, refusals, resets, half-closes, stalls and partitions, all
// driven by the loop's clock and one seeded random source.
//
// How it sits under the transports: every simulated connection is two
// AF_UNIX socket pairs. The application gets one end of each (the client
// the end of the first pair, the server the end of the second), an
// ordinary connected non-blocking stream socket, so every API of the
// package (transports, streams, servers, TLS, Conn and what runs over it,
// net/http included) runs over it unchanged. The network holds the two
// middle ends and relays between them on the loop: what it reads from one
// it writes to the other at the time the link says (latency, jitter,
// bandwidth), holds it while the link is partitioned or the connection
// stalled, and stops reading while a direction has its buffer's worth in
// flight, so the sender's flow control sees a slow network. A socket pair
// moves bytes synchronously (a write makes the other end readable before
// it returns), so on a virtual-time loop nothing happens between the
// loop's timers that the network did not schedule: the same seed gives
// the same run, event for event.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/hooks"
	"golang.org/x/sys/unix"
)

// LinkConfig describes one link between two simulated hosts, the same in
// both directions (each direction has its own bandwidth and buffer).
type LinkConfig struct {
	// Latency is the one-way delay of every segment and of each half of
	// the connection handshake.
	Latency time.Duration
	// Jitter adds a delay drawn uniformly from [0, Jitter) to each
	// segment (from the network's seeded source). Segments of one
	// direction are never reordered: a stream stays a stream.
	Jitter time.Duration
	// Bandwidth is in bytes per second per direction; 0 is unlimited.
	Bandwidth int
	// Loss is the probability that a datagram is lost (streams are
	// reliable and ignore it); Duplicate the probability that it arrives
	// twice. Datagrams are each delayed by their own jitter, so Jitter
	// reorders them.
	Loss, Duplicate float64
	// Buffer is how many bytes a direction holds in flight before it
	// stops reading from the sender (whose own socket buffer then fills,
	// and whose transport then buffers and pauses its protocol); 0 means
	// 64 KiB. Bytes travel in segments of at most a quarter of it, each
	// delivered whole, so a Buffer above the link's bandwidth times its
	// latency keeps the link busy. Unlike a TCP window, bytes count until
	// they are delivered, not until their acknowledgement is back: a
	// direction carries up to Buffer per one-way latency, where the same
	// window would carry it per round trip.
	Buffer int
}

const (
	defaultSimBuffer = 64 * 1024
	// simSynRetries and simSynRTO are Linux's tcp_syn_retries (6) and
	// initial SYN retransmission timeout (1 s, doubling): a SYN lost to a
	// partition is sent again after 1, 2, 4, ... s, and the dial fails
	// with ETIMEDOUT after the last one.
	simSynRetries = 6
	simSynRTO     = time.Second
	// simFirstPort and simLastPort bound the ports a host gives out
	// (IANA's dynamic range), to port-0 servers and endpoints and to the
	// client ends of connections.
	simFirstPort = 49152
	simLastPort  = 65535
)

// SimNetwork is a simulated network on one loop. Make it with
// NewSimNetwork, add hosts with Host, and pass WithNetwork(host) to
// CreateConnection, OpenConnection, DialConn, CreateServer and
// StartServer (the TCP calls) to run them on it, from that host. A host
// reaches another by its name or address, and itself by those or by
// "localhost", a loopback or a wildcard address, as on a real host (whose
// connections, and datagrams, then have loopback addresses). Every
// method must be called on the loop (from a task or a callback): while
// the loop runs, the methods that change or walk the network (and
// SimConn's faults) panic with a *RuntimeError when called from another
// goroutine, another loop's task included. Closing the loop closes the
// network and every descriptor it holds. Make it with NewSimNetwork: the
// zero SimNetwork's methods (but Rand and Trace) panic with a
// *asyncio.ValueError.
type SimNetwork struct {
	loop      *asyncio.Loop
	rng       *rand.Rand
	hosts     []*SimHost
	byName    map[string]*SimHost
	links     map[[2]*SimHost]LinkConfig
	deflt     LinkConfig
	cut       map[[2]*SimHost]bool
	listeners map[string]*simListener
	conns     map[*SimConn]struct{}
	nextConn  int
	dials     map[*simDial]struct{}
	nextDial  int
	endpoints map[string]*simEndpoint // datagram endpoints by address
	peers     []int                   // the other ends of the endpoints' descriptors
	trace     []string
	closed    bool
	disown    func() bool
	// ep and epPipes: the relay's own poller and what it watches
	// (sim_relay_linux.go); ep is -1 until the first connection.
	ep      int
	epPipes map[int]*simPipe
	// relaying is true while the relay runs before the loop's poll
	// (prePoll, sim_relay_linux.go): a segment due now is delivered at
	// once, as loopback data is inside send().
	relaying      bool
	removePrePoll func()
	scratch       []byte // the relay's read buffer (relayBuf)
}

// NewSimNetwork returns an empty simulated network on owner's loop whose
// every random choice (jitter, and whatever a test draws with Rand) comes
// from seed. Links default to zero latency and no limits (SetDefaultLink).
func NewSimNetwork(owner asyncio.LoopOwner, seed uint64) *SimNetwork {
	l := asyncio.LoopOf(owner)
	n := &SimNetwork{
		loop:      l,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		byName:    map[string]*SimHost{},
		links:     map[[2]*SimHost]LinkConfig{},
		cut:       map[[2]*SimHost]bool{},
		listeners: map[string]*simListener{},
		conns:     map[*SimConn]struct{}{},
		dials:     map[*simDial]struct{}{},
		endpoints: map[string]*simEndpoint{},
		ep:        -1,
	}
	n.disown = l.OnClose(n.release)
	// Its descriptors become ready only through the loop's callbacks and
	// timers: a virtual-time loop waiting on them alone is deadlocked.
	hooks.SetClosedWorld(l, isSimWorldFD)
	n.tracef("network seed %d", seed)
	return n
}

// checkMade panics with a *asyncio.ValueError naming op when n was not made
// by NewSimNetwork (the zero SimNetwork has no loop).
func (n *SimNetwork) checkMade(op string) {
	if n.loop == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero SimNetwork (make it with NewSimNetwork)"})
	}
}

// Rand returns the network's seeded source, for a test's own random
// choices (which connection to reset, when to partition), so that the
// seed decides them too.
func (n *SimNetwork) Rand() *rand.Rand { return n.rng }

// Trace returns the events so far, one line each, stamped with the
// loop's time: the same seed and the same program give the same lines.
func (n *SimNetwork) Trace() []string { return append([]string(nil), n.trace...) }

func (n *SimNetwork) tracef(format string, args ...any) {
	n.trace = append(n.trace, fmt.Sprintf("%-12v ", n.loop.Time())+fmt.Sprintf(format, args...))
}

// check returns the error for a call made from the wrong loop or after
// Close.
func (n *SimNetwork) check(l *asyncio.Loop) error {
	if l != n.loop {
		return ErrSimNetworkLoop
	}
	if n.closed {
		return ErrSimNetworkClosed
	}
	return nil
}

// checkCaller panics with a *RuntimeError naming call, before anything
// changes, when call is made while the network's loop runs but not on
// it (from another loop's task, or another goroutine): the network's
// state is the loop's and unguarded, and a map changed under the loop
// kills the process ("concurrent map writes"). Before and after the loop
// runs any goroutine may set up or inspect the network. The zero
// SimNetwork is refused first (checkMade).
func (n *SimNetwork) checkCaller(call string) {
	n.checkMade(call)
	if n.loop.IsRunning() && !n.loop.OnLoopGoroutine() {
		panic(&asyncio.RuntimeError{Msg: fmt.Sprintf("%s called from a goroutine that is not running the network's loop "+
			"(call it from a task or callback of that loop, or through CallSoonThreadsafe or RunCoroutineThreadsafe)", call)})
	}
}

// Host returns the host called name, adding it if it is new; hosts get
// the addresses 10.0.0.1, 10.0.0.2, ... in the order they are added, and
// Host(ip) returns the host that has address ip. Names are
// case-insensitive, as in DNS: Host("Server") is the host added as
// "server", and keeps that name. An empty name, a
// loopback or wildcard name ("localhost", "127.0.0.1", "0.0.0.0", ...,
// which mean the calling host itself), and an IP address no host has are
// a *ValueError.
func (n *SimNetwork) Host(name string) *SimHost {
	n.checkCaller("SimNetwork.Host")
	if name == "" {
		panic(&asyncio.ValueError{Msg: "SimNetwork.Host: empty host name"})
	}
	if h := n.lookup(name); h != nil {
		return h
	}
	if isSelfName(name) {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("SimNetwork.Host(%q): a loopback or wildcard name means the calling host itself; give the host a name of its own", name)})
	}
	if net.ParseIP(name) != nil {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("SimNetwork.Host(%q): no host has that address (hosts get 10.0.0.1, 10.0.0.2, ...; name them by a name, not an address)", name)})
	}
	i := len(n.hosts) + 1
	h := &SimHost{n: n, name: name, ip: net.IPv4(10, 0, byte(i>>8), byte(i)).To4(), nextPort: simFirstPort}
	n.hosts = append(n.hosts, h)
	n.byName[strings.ToLower(name)] = h
	n.byName[h.ip.String()] = h
	n.tracef("host %s %s", name, h.ip)
	return h
}

// lookup finds a host by name or address. Names are case-insensitive, as
// in DNS and /etc/hosts (RFC 4343): "Server" and "server" are one host.
func (n *SimNetwork) lookup(host string) *SimHost { return n.byName[strings.ToLower(host)] }

// isSelfName reports whether host names the host it is used on, as on a
// real one: "localhost", a loopback address (127.0.0.0/8, ::1) or a
// wildcard one (connecting to 0.0.0.0 or :: reaches the local host).
func isSelfName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// selfAddrs returns the addresses of a connection a host makes to itself
// through host, a loopback or wildcard name, as on a real host: the
// destination is the loopback address named (a wildcard or "localhost":
// 127.0.0.1, or ::1 for "::"), the source the first loopback address of
// its family (a dial to 127.0.0.5 comes from 127.0.0.1). Nil for any
// other name: the hosts' own addresses.
func selfAddrs(host string) (local, remote net.IP) {
	if !isSelfName(host) {
		return nil, nil
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil || ip.To4() != nil && ip.IsUnspecified(): // localhost, 0.0.0.0
		return net.IPv4(127, 0, 0, 1).To4(), net.IPv4(127, 0, 0, 1).To4()
	case ip.To4() != nil:
		return net.IPv4(127, 0, 0, 1).To4(), ip.To4()
	default: // ::1, ::
		return net.IPv6loopback, net.IPv6loopback
	}
}

// resolve finds the host that host means when used on h: h itself for a
// loopback or wildcard name, else the host of that name or address.
func (h *SimHost) resolve(host string) *SimHost {
	if isSelfName(host) {
		return h
	}
	return h.n.lookup(host)
}

// checkHost panics with a *ValueError naming call if h is nil or a host
// of another network.
func (n *SimNetwork) checkHost(call string, h *SimHost) {
	switch {
	case h == nil:
		panic(&asyncio.ValueError{Msg: call + ": nil host"})
	case h.n != n:
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("%s: host %s belongs to another network", call, h)})
	}
}

func linkKey(a, b *SimHost) [2]*SimHost {
	if b.name < a.name {
		a, b = b, a
	}
	return [2]*SimHost{a, b}
}

// SetDefaultLink sets the link of every pair of hosts without one of
// their own (SetLink). A bad cfg is a *ValueError (see SetLink), and
// changes nothing.
func (n *SimNetwork) SetDefaultLink(cfg LinkConfig) {
	n.checkCaller("SimNetwork.SetDefaultLink")
	n.deflt = checkLink("SetDefaultLink", cfg)
}

// SetLink sets the link between a and b (both directions; a == b is the
// host's loopback). A negative duration, bandwidth or buffer, a Loss or
// Duplicate outside [0, 1], and a nil host or one of another network are
// a *ValueError naming the mistake, and change nothing.
func (n *SimNetwork) SetLink(a, b *SimHost, cfg LinkConfig) {
	n.checkCaller("SimNetwork.SetLink")
	n.checkHost("SetLink", a)
	n.checkHost("SetLink", b)
	n.links[linkKey(a, b)] = checkLink("SetLink", cfg)
}

func checkLink(call string, cfg LinkConfig) LinkConfig {
	bad := func(format string, args ...any) {
		panic(&asyncio.ValueError{Msg: call + ": LinkConfig." + fmt.Sprintf(format, args...)})
	}
	switch {
	case cfg.Latency < 0:
		bad("Latency is negative (%v)", cfg.Latency)
	case cfg.Jitter < 0:
		bad("Jitter is negative (%v)", cfg.Jitter)
	case cfg.Bandwidth < 0:
		bad("Bandwidth is negative (%d)", cfg.Bandwidth)
	case cfg.Buffer < 0:
		bad("Buffer is negative (%d)", cfg.Buffer)
	case !(cfg.Loss >= 0 && cfg.Loss <= 1): // NaN too
		bad("Loss must be a probability in [0, 1], not %v", cfg.Loss)
	case !(cfg.Duplicate >= 0 && cfg.Duplicate <= 1):
		bad("Duplicate must be a probability in [0, 1], not %v", cfg.Duplicate)
	}
	if cfg.Buffer == 0 {
		cfg.Buffer = defaultSimBuffer
	}
	return cfg
}

func (n *SimNetwork) link(a, b *SimHost) LinkConfig {
	if cfg, ok := n.links[linkKey(a, b)]; ok {
		return cfg
	}
	if n.deflt.Buffer == 0 {
		n.deflt.Buffer = defaultSimBuffer
	}
	return n.deflt
}

// delay is one segment's latency plus jitter on the link from a to b.
func (n *SimNetwork) delay(a, b *SimHost) time.Duration {
	cfg := n.link(a, b)
	d := cfg.Latency
	if cfg.Jitter > 0 {
		d = simAddTime(d, time.Duration(n.rng.Int64N(int64(cfg.Jitter))))
	}
	return d
}

// simAddTime is a + b for times and durations that are not negative,
// saturating at asyncio.Never: a latency of many years (a link that
// never delivers) must not wrap round to a time in the past, which would
// deliver at once.
func simAddTime(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return asyncio.Never
}

// Partition cuts a from b: segments between them are held (as TCP would
// retransmit them), and connection attempts are lost (their SYN, or the
// server's SYN-ACK, is sent again later, and the dial fails with
// ETIMEDOUT after about two minutes), until Heal; a client's ACK already
// on its way is held too, so the server accepts that connection only
// after Heal. Datagrams between them are lost: those sent while it lasts
// and those on their way when it starts and still when they would
// arrive. A nil host or one of another network is a *ValueError.
func (n *SimNetwork) Partition(a, b *SimHost) {
	n.checkCaller("SimNetwork.Partition")
	n.checkHost("Partition", a)
	n.checkHost("Partition", b)
	n.cut[linkKey(a, b)] = true
	n.tracef("partition %s %s", a.name, b.name)
}

// Heal undoes Partition: what was held is delivered after the link's
// latency.
func (n *SimNetwork) Heal(a, b *SimHost) {
	n.checkCaller("SimNetwork.Heal")
	n.checkHost("Heal", a)
	n.checkHost("Heal", b)
	if !n.cut[linkKey(a, b)] {
		return
	}
	delete(n.cut, linkKey(a, b))
	n.tracef("heal %s %s", a.name, b.name)
	for _, c := range n.Conns() {
		if (c.client == a && c.server == b) || (c.client == b && c.server == a) {
			if c.ackHeld && c.ack == nil && !c.done {
				c.ack = n.loop.CallLater(n.link(c.client, c.server).Latency, c.acked)
			}
			c.up.release()
			c.down.release()
		}
	}
}

func (n *SimNetwork) partitioned(a, b *SimHost) bool { return n.cut[linkKey(a, b)] }

// At schedules fault (any of the network's or a connection's methods, or
// anything else) at loop time when, as CallAt does; the returned handle
// cancels it.
func (n *SimNetwork) At(when time.Duration, fault func()) *asyncio.TimerHandle {
	n.checkMade("SimNetwork.At")
	return n.loop.CallAt(when, fault)
}

// Conns returns the open connections, oldest first.
func (n *SimNetwork) Conns() []*SimConn {
	n.checkCaller("SimNetwork.Conns")
	cs := make([]*SimConn, 0, len(n.conns))
	for c := range n.conns {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].id < cs[j].id })
	return cs
}

// ConnOf returns the open connection whose client end has the address
// client (the client's "sockname", the server's "peername"), or nil:
// how a test finds the connection of a transport, stream or Conn. Two
// hosts' connections to themselves through a loopback name can share a
// client address (127.0.0.1 and the same port, as on two real hosts):
// ConnOf returns the oldest, every time, so the same seed picks the same
// one.
func (n *SimNetwork) ConnOf(client net.Addr) *SimConn {
	n.checkCaller("SimNetwork.ConnOf")
	if client == nil {
		return nil
	}
	for _, c := range n.Conns() { // oldest first, not a map's random order
		if c.caddr.String() == client.String() {
			return c
		}
	}
	return nil
}

// Close closes the network: every connection's relay is closed (the
// applications' sockets see EOF), listeners are forgotten (a server still
// listening stays open and quiet, as a real one whose network is gone,
// until it or the loop closes), waiting dials fail with
// ErrSimNetworkClosed, and later calls fail with it too.
// Calling it again does nothing.
func (n *SimNetwork) Close() {
	n.checkCaller("SimNetwork.Close")
	if n.closed {
		return
	}
	n.disown()
	n.tracef("network closed")
	dials := make([]*simDial, 0, len(n.dials))
	for d := range n.dials {
		dials = append(dials, d)
	}
	sort.Slice(dials, func(i, j int) bool { return dials[i].seq < dials[j].seq })
	for _, d := range dials { // in order: failing one may trace
		d.fail(fmt.Errorf("connect to %s: %w", d.addr, ErrSimNetworkClosed))
	}
	for _, c := range n.Conns() {
		c.finish(true)
	}
	for _, sl := range n.sortedListeners() {
		sl.close(true)
	}
	n.closed = true
	n.closeRelayPoller(true)
	n.closePeers()
	n.forgetFDs()
}

// closePeers closes the far ends of the datagram endpoints' descriptors.
func (n *SimNetwork) closePeers() {
	for _, fd := range n.peers {
		unix.Close(fd)
	}
	n.peers = nil
}

func (n *SimNetwork) sortedListeners() []*simListener {
	keys := make([]string, 0, len(n.listeners))
	for k := range n.listeners {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sls := make([]*simListener, len(keys))
	for i, k := range keys {
		sls[i] = n.listeners[k]
	}
	return sls
}

// release closes every descriptor the network holds when its loop
// closes; the loop can no longer run anything, so nothing is unwatched
// or traced.
func (n *SimNetwork) release() {
	n.closed = true
	for c := range n.conns {
		c.closeFDs()
	}
	for c := range n.conns {
		if !c.accepted && !c.sfdGone {
			unix.Close(c.sfd) // in the handshake or the backlog: the network's
			c.sfdGone = true
		}
	}
	for _, sl := range n.listeners {
		unix.Close(sl.l2)
		for _, c := range sl.backlog { // reset there, and over (keepQueued)
			if !c.accepted && !c.sfdGone {
				unix.Close(c.sfd)
				c.sfdGone = true
			}
		}
	}
	for d := range n.dials {
		if d.conn != nil && !d.handed {
			unix.Close(d.conn.cfd)
		}
	}
	n.closeRelayPoller(false)
	n.closePeers()
	n.forgetFDs()
}

// SimHost is a host of a SimNetwork: an address, its listeners and the
// connections it opens. Pass it to WithNetwork.
type SimHost struct {
	n        *SimNetwork
	name     string
	ip       net.IP
	nextPort int
	// clientPorts are the ports of the client ends of h's open
	// connections.
	clientPorts map[int]bool
}

// Name returns the host's name.
func (h *SimHost) Name() string { return h.name }

// IP returns the host's address.
func (h *SimHost) IP() net.IP { return h.ip }

// Network returns the host's network.
func (h *SimHost) Network() *SimNetwork { return h.n }

func (h *SimHost) String() string { return h.name + "(" + h.ip.String() + ")" }

// port returns a free port of h, or 0 if none is: as a kernel's
// ephemeral ports, the next one of simFirstPort..simLastPort, round and
// round, that no listener, datagram endpoint or connection of h holds.
func (h *SimHost) port() int {
	for range simLastPort - simFirstPort + 1 {
		p := h.nextPort
		if h.nextPort++; h.nextPort > simLastPort {
			h.nextPort = simFirstPort
		}
		key := addrString(h.ip.String(), p)
		if e := h.n.endpoints[key]; h.clientPorts[p] || h.n.listener(key) != nil || (e != nil && !e.gone()) {
			continue
		}
		return p
	}
	return 0
}

// simListener is a server listening on the simulated network. Its
// listening "socket" is one end of a socket pair (l1, owned by the
// Server); the network keeps l2, writes one byte to it while connections
// wait in the backlog (so the server's reader fires and calls accept),
// and sees the server close l1 as EOF on l2.
type simListener struct {
	n       *SimNetwork
	host    *SimHost
	addr    *net.TCPAddr
	srv     *Server
	l1, l2  int
	backlog []*SimConn
	pending int // connections in their handshake (SYN received, no ACK yet)
	max     int
	flagged bool
	closed  bool
	// linger, while the network is closed and the server still listens,
	// removes the loop's close hook that closes l2 (close).
	linger func() bool
}

// owns reports whether a server on h may listen on host: "", the
// wildcard and loopback addresses (a simulated host has one address, and
// they all mean it), h's name and h's address.
func (h *SimHost) owns(host string) bool {
	return host == "" || isSelfName(host) || h.n.lookup(host) == h
}

// listen is CreateServer on the network.
func (h *SimHost) listen(t *asyncio.T, factory func() Protocol, host string, port int, o *options) (*Server, error) {
	n := h.n
	if err := n.check(t.Loop()); err != nil {
		return nil, err
	}
	if !h.owns(host) {
		return nil, fmt.Errorf("error while attempting to bind on address %s: %w", addrString(host, port), os.NewSyscallError("bind", unix.EADDRNOTAVAIL))
	}
	if port == 0 {
		port = h.port()
	}
	key := addrString(h.ip.String(), port)
	// A port one of h's connections has as its local port is taken too:
	// a connected socket has no SO_REUSEADDR, so a real bind conflicts.
	if port == 0 || n.listener(key) != nil || h.clientPorts[port] {
		return nil, fmt.Errorf("error while attempting to bind on address %s: %w", key, os.NewSyscallError("bind", unix.EADDRINUSE))
	}
	fds, err := simSocketpair()
	if err != nil {
		return nil, err
	}
	sl := &simListener{n: n, host: h, addr: &net.TCPAddr{IP: h.ip, Port: port}, l1: fds[0], l2: fds[1], max: o.backlog}
	s := newServer(t.Loop(), "tcp", factory, o)
	s.accept = func(int) (int, unix.Sockaddr, error) { return sl.accept() }
	s.listeners = append(s.listeners, &listener{fd: sl.l1, addr: sl.addr, listening: true})
	sl.srv = s
	n.listeners[key] = sl
	if err := n.loop.AddReader(sl.l2, sl.onClosedByServer); err != nil {
		sl.close(true)
		s.Close()
		return nil, err
	}
	n.tracef("listen %s", key)
	return s.startAfterCreate(t)
}

// listener returns the listener bound at key, or nil. A listener whose
// server has closed is forgotten here, at once: Server.Close closes a
// real listening socket synchronously (the port is free for a new server,
// a client is refused), while the network would only hear of it when the
// loop next polls l2.
func (n *SimNetwork) listener(key string) *simListener {
	sl := n.listeners[key]
	if sl != nil && sl.srv.listeners == nil {
		sl.close(false)
		return nil
	}
	return sl
}

// accept is the Server's accept on the simulated listener.
func (sl *simListener) accept() (int, unix.Sockaddr, error) {
	if len(sl.backlog) == 0 {
		return -1, nil, unix.EAGAIN
	}
	c := sl.backlog[0]
	sl.backlog = sl.backlog[1:]
	if len(sl.backlog) == 0 && sl.flagged {
		var b [1]byte
		unix.Read(sl.l1, b[:])
		sl.flagged = false
	}
	c.accepted = true
	sl.n.tracef("conn %d accepted by %s", c.id, sl.addr)
	return c.sfd, nil, nil
}

func (sl *simListener) push(c *SimConn) {
	sl.backlog = append(sl.backlog, c)
	if !sl.flagged {
		unix.Write(sl.l2, []byte{1})
		sl.flagged = true
	}
}

// onClosedByServer runs when the server closed its end (l2 reads EOF).
func (sl *simListener) onClosedByServer() {
	var b [1]byte
	if n, err := unix.Read(sl.l2, b[:]); n == 0 && err == nil {
		if sl.linger != nil { // forgotten by a closed network: l2 goes now
			sl.linger()
			sl.linger = nil
			sl.n.loop.RemoveReader(sl.l2)
			unix.Close(sl.l2)
			return
		}
		sl.close(false)
	}
}

// close forgets the listener; connections still in its backlog are
// reset, as a closing listening socket resets them.
func (sl *simListener) close(network bool) {
	if sl.closed {
		return
	}
	sl.closed = true
	n := sl.n
	delete(n.listeners, sl.addr.String())
	if network && sl.srv.listeners != nil {
		// The network closes under a server that still listens. Closing
		// l2 would make the server's listening end read EOF for ever, so
		// its accept reader would run in every iteration, finding
		// nothing: a busy loop, which on virtual time also keeps the
		// clock from moving. As a real listening socket on a network that
		// is gone, it stays quiet: l2 stays open and watched until the
		// server closes (onClosedByServer), or the loop does.
		sl.linger = n.loop.OnClose(func() { unix.Close(sl.l2) })
	} else {
		n.loop.RemoveReader(sl.l2)
		unix.Close(sl.l2)
	}
	if network {
		n.tracef("listener %s closed by the network", sl.addr)
	} else {
		n.tracef("listener %s closed", sl.addr)
	}
	backlog := sl.backlog
	sl.backlog = nil
	for _, c := range backlog {
		c.dropServerEnd() // never accepted: the network still owns it
		if network {
			c.abort("client", "backlog of a closed listener")
		} else {
			c.resetToClient("backlog of a closed listener")
		}
	}
}

// simDial is a connection attempt in progress.
type simDial struct {
	n      *SimNetwork
	seq    int // the order of the dials, for Close
	from   *SimHost
	to     *SimHost
	addr   string
	port   int
	fut    *asyncio.Future[int]
	timer  *asyncio.TimerHandle
	conn   *SimConn
	handed bool
	// sent is when the current attempt's SYN left: its retransmission
	// timer runs from then, whether the SYN or the SYN-ACK is lost.
	sent time.Duration
	// signalling: on a zero-latency link, connected (the server has the
	// connection) and waiting for the client's socket to turn writable to
	// tell the dialer.
	signalling bool
	// self: a host's dial to itself through a loopback or wildcard
	// name, whose ends have loopback addresses (selfAddrs).
	selfLocal, selfRemote net.IP
}

func (d *simDial) fail(err error) {
	delete(d.n.dials, d)
	if d.timer != nil {
		d.timer.Cancel()
	}
	if d.conn != nil && !d.handed {
		// In the handshake: the client's socket goes, and the server
		// never hears of the connection.
		d.handed = true
		d.conn.abandon(err)
	}
	if !d.fut.Done() {
		d.fut.SetException(err)
	}
}

// dial is dialHost on the network: the three-way handshake as TCP's. The
// SYN and the SYN-ACK take the link's latency (and jitter) each, so the
// client is connected after one round trip; the server accepts when the
// client's ACK arrives, the link's latency later (no jitter draw). On a
// zero-latency link, a loopback, the connection is in the listener's
// queue first and the client hears of it as its socket turns writable,
// as the kernel does the whole loopback handshake inside connect(): the
// server accepts in the same poll, ahead of the client. No
// listener (or one not serving yet) gives ECONNREFUSED, a partition
// loses the SYN, and so does a full backlog (counting the handshakes in
// progress). The host has one address, so one attempt: with allErrors
// (WithAllErrors) its error is a group of one, as asyncio's all_errors
// makes it; a name not on the network is the lookup's error either way,
// and an address no host has is ENETUNREACH, as connect says it.
func (h *SimHost) dial(t *asyncio.T, host string, port int, allErrors bool) (int, error) {
	n := h.n
	if err := n.check(t.Loop()); err != nil {
		return -1, err
	}
	to := h.resolve(host)
	if to == nil {
		if net.ParseIP(host) != nil {
			// An address literal is never looked up: no host has it, so
			// no route leads there (as a datagram endpoint connected
			// there is told).
			err := fmt.Errorf("connect to %s: %w", addrString(host, port), os.NewSyscallError("connect", unix.ENETUNREACH))
			return -1, joinConnectErrors([]error{err}, allErrors)
		}
		return -1, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n.nextDial++
	d := &simDial{n: n, seq: n.nextDial, from: h, to: to, addr: addrString(to.ip.String(), port), port: port, fut: asyncio.NewFuture[int](t)}
	d.selfLocal, d.selfRemote = selfAddrs(host)
	n.dials[d] = struct{}{}
	n.tracef("dial %s -> %s", h.name, d.addr)
	d.syn(0)
	fd, err := d.fut.Await(t)
	if err != nil {
		if asyncio.IsCancelled(err) {
			n.tracef("dial %s -> %s cancelled", h.name, d.addr)
			if fd, ferr := d.fut.Result(); d.fut.Done() && !d.fut.Cancelled() && ferr == nil {
				// Connected, and cancelled before the dialer resumed: its
				// socket is closed, as create_connection closes it (the
				// server sees EOF).
				unix.Close(fd)
			} else if d.signalling {
				// Connected on a zero-latency link, cancelled before the
				// socket turned writable: the same.
				d.signalling = false
				n.loop.RemoveWriter(d.conn.cfd)
				unix.Close(d.conn.cfd)
			}
			d.fail(err)
			return -1, err
		}
		return -1, joinConnectErrors([]error{err}, allErrors)
	}
	return fd, nil
}

// syn sends the SYN (attempt try).
func (d *simDial) syn(try int) {
	n := d.n
	d.sent = n.loop.Time()
	if n.partitioned(d.from, d.to) {
		n.tracef("dial %s -> %s: SYN lost (partition)", d.from.name, d.addr)
		d.resend(try)
		return
	}
	d.timer = n.loop.CallLater(n.delay(d.from, d.to), func() { d.arrive(try) })
}

// resend sends the SYN again after attempt try was lost, the
// retransmission timeout after that attempt's SYN left (a SYN-ACK lost,
// or a SYN dropped by a full backlog, is found out later, but the
// client's timer has run since it sent); past the last attempt the dial
// times out.
func (d *simDial) resend(try int) {
	n := d.n
	at := simAddTime(d.sent, simSynRTO<<try)
	if try == simSynRetries {
		d.timer = n.loop.CallAt(at, func() {
			n.tracef("dial %s -> %s timed out", d.from.name, d.addr)
			d.fail(fmt.Errorf("connect to %s: %w", d.addr, os.NewSyscallError("connect", unix.ETIMEDOUT)))
		})
		return
	}
	d.timer = n.loop.CallAt(at, func() { d.syn(try + 1) })
}

// arrive is the SYN reaching the server's host.
func (d *simDial) arrive(try int) {
	n := d.n
	back := n.delay(d.to, d.from)
	sl := n.listener(d.addr)
	// A server made WithDeferredServing is bound but not listening until
	// StartServing, as on a real socket: a client is refused meanwhile.
	if sl == nil || !sl.srv.serving {
		n.tracef("dial %s -> %s refused", d.from.name, d.addr)
		d.timer = n.loop.CallLater(back, func() {
			if n.partitioned(d.from, d.to) {
				// The RST is lost on its way back, as the SYN-ACK would
				// be: the client knows nothing and sends its SYN again.
				n.tracef("dial %s -> %s: RST lost (partition)", d.from.name, d.addr)
				d.resend(try)
				return
			}
			d.fail(fmt.Errorf("connect to %s: %w", d.addr, os.NewSyscallError("connect", unix.ECONNREFUSED)))
		})
		return
	}
	// Linux's accept queue holds backlog+1 connections
	// (sk_acceptq_is_full); the SYN of one more is dropped.
	if len(sl.backlog)+sl.pending > sl.max {
		n.tracef("dial %s -> %s: SYN dropped (backlog full)", d.from.name, d.addr)
		d.resend(try)
		return
	}
	c, err := n.newConn(d.from, sl, d.selfLocal, d.selfRemote)
	if err != nil {
		d.fail(fmt.Errorf("connect to %s: %w", d.addr, err))
		return
	}
	d.conn = c
	c.dial, c.sl, c.handshake = d, sl, true
	sl.pending++
	d.timer = n.loop.CallLater(back, func() { d.synAck(c, try) })
}

// synAck is the server's SYN-ACK for c (attempt try) reaching the client.
func (d *simDial) synAck(c *SimConn, try int) {
	n := d.n
	delete(n.dials, d)
	d.timer = nil
	if d.fut.Done() { // the dial ended meanwhile
		d.handed = true
		_, err := d.fut.Result()
		c.abandon(err)
		return
	}
	if c.stalled {
		// Held with the rest of what the connection carries: it goes
		// on at Resume, the link's latency later.
		n.tracef("dial %s -> %s: SYN-ACK held (stall)", d.from.name, d.addr)
		n.dials[d] = struct{}{}
		c.synAckHeld = func(after time.Duration) {
			d.timer = n.loop.CallLater(after, func() { d.synAck(c, try) })
		}
		return
	}
	if n.partitioned(d.from, d.to) {
		// The SYN-ACK is lost: the server's half-open connection
		// goes, and the client sends its SYN again, as for a lost
		// SYN.
		n.tracef("dial %s -> %s: SYN-ACK lost (partition)", d.from.name, d.addr)
		d.conn = nil
		c.abandon(errors.New("SYN-ACK lost in a partition"))
		n.dials[d] = struct{}{}
		d.resend(try)
		return
	}
	d.handed = true
	c.dial = nil
	n.tracef("conn %d established %s -> %s", c.id, c.caddr, c.saddr)
	if lat := n.link(d.from, d.to).Latency; lat > 0 {
		d.fut.SetResult(c.cfd)
		c.ack = n.loop.CallLater(lat, c.acked)
		return
	}
	// A zero-latency link is a loopback: the kernel runs the whole
	// handshake inside connect(), so the connection is in the listener's
	// queue before the client hears it is connected, and the client hears
	// it as its socket turning writable, in the same poll as the
	// listener's readiness and after it (asyncio's server accepts, then
	// sock_connect completes).
	c.acked()
	d.signalling = true
	if err := n.loop.AddWriter(c.cfd, func() {
		n.loop.RemoveWriter(c.cfd)
		if d.fut.Done() {
			return // cancelled: the dialer closes c.cfd as it resumes
		}
		d.signalling = false
		d.fut.SetResult(c.cfd)
	}); err != nil {
		d.signalling = false
		d.fut.SetResult(c.cfd)
	}
}

// SearchSeeds runs scenario with the seeds first, first+1, ...,
// first+count-1, in order, and returns the first seed whose run fails and
// its error, or (0, nil) when every run passes. A test prints the seed;
// running scenario(seed) again reproduces the failure exactly. A nil
// scenario, and seeds past the largest uint64, are a *ValueError.
func SearchSeeds(first, count uint64, scenario func(seed uint64) error) (uint64, error) {
	if scenario == nil {
		panic(&asyncio.ValueError{Msg: "SearchSeeds: nil scenario"})
	}
	// The last seed, first+count-1, may be the largest uint64 itself:
	// only one past it is a mistake.
	if count > 0 && first+(count-1) < first {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("SearchSeeds: %d seeds from %d go past the largest uint64", count, first)})
	}
	for i := range count {
		s := first + i
		if err := scenario(s); err != nil {
			return s, fmt.Errorf("seed %d: %w", s, err)
		}
	}
	return 0, nil
}

// The simulated addresses of the applications' sockets, which are
// AF_UNIX socket pairs underneath: localAddr and peerAddr ask here first.
// An entry holds the socket's device and inode, so a descriptor number
// reused for another socket is not mistaken for a simulated one.
var simFDs sync.Map // int -> simFDInfo

type simFDInfo struct {
	dev, ino      uint64
	local, remote net.Addr
	n             *SimNetwork
	// toApp is the direction of the connection that delivers to this
	// socket (simSendError).
	toApp *simPipe
}

func fdID(fd int) (uint64, uint64, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}

func registerSimFD(n *SimNetwork, fd int, local, remote net.Addr, toApp *simPipe) {
	if dev, ino, ok := fdID(fd); ok {
		simFDs.Store(fd, simFDInfo{dev: dev, ino: ino, local: local, remote: remote, n: n, toApp: toApp})
	}
}

// simShutWrite is the application on loop shutting down the sending
// side of fd (WriteEOF): on a simulated connection, the direction fd
// sends on notes it, so that a reset following before the relay read the
// EOF (an Abort in the same iteration) delivers the EOF first, as TCP's
// FIN leaves before its RST. Any other descriptor is left alone.
func simShutWrite(loop *asyncio.Loop, fd int) {
	v, ok := simFDs.Load(fd)
	if !ok {
		return
	}
	info := v.(simFDInfo)
	if info.toApp == nil || info.n.loop != loop {
		return
	}
	if dev, ino, ok := fdID(fd); !ok || dev != info.dev || ino != info.ino {
		return
	}
	c := info.toApp.c
	if info.toApp == c.up {
		c.down.appShut = true
	} else {
		c.up.appShut = true
	}
}

// simSendError is the error of a send to fd that failed with EPIPE. A
// simulated connection's socket is one end of a socket pair, whose sends
// fail with EPIPE once the network closed the other end, also when it
// closed it to reset the connection (resetPeer); the reset's ECONNRESET
// then waits on the socket (SO_ERROR) for a read. TCP reports a reset to
// the first send after it (once: later sends get EPIPE), so that send
// takes the pending error here, unless the peer's FIN reached the socket
// before the reset: Linux reports a reset in CLOSE_WAIT as EPIPE. Any
// other socket's EPIPE is returned as it is.
func simSendError(fd int, epipe error) error {
	v, ok := simFDs.Load(fd)
	if !ok {
		return epipe
	}
	info := v.(simFDInfo)
	if dev, ino, ok := fdID(fd); !ok || dev != info.dev || ino != info.ino {
		return epipe // the number names another file now
	}
	if info.toApp == nil || info.toApp.eofDone {
		return epipe
	}
	if e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && unix.Errno(e) == unix.ECONNRESET {
		return unix.ECONNRESET
	}
	return epipe
}

// simAddrs returns the simulated addresses of fd, if it is a simulated
// connection's socket.
func simAddrs(fd int) (local, remote net.Addr, ok bool) {
	v, found := simFDs.Load(fd)
	if !found {
		return nil, nil, false
	}
	info := v.(simFDInfo)
	dev, ino, ok := fdID(fd)
	if !ok || dev != info.dev || ino != info.ino {
		return nil, nil, false
	}
	return info.local, info.remote, true
}

// simWorldFDs are the descriptors simulated networks made (both ends of
// their socket pairs, the relay's epoll descriptor), by number, with the
// descriptor's device and inode: a number reused for another file is not
// taken for one of them. A number's entry is replaced when the network
// makes another descriptor with it, so the map stays as small as the
// process's descriptor table.
var simWorldFDs sync.Map // int -> [2]uint64

// markSimWorldFD records fd as a simulated network's.
func markSimWorldFD(fd int) {
	if dev, ino, ok := fdID(fd); ok {
		simWorldFDs.Store(fd, [2]uint64{dev, ino})
	}
}

// isSimWorldFD reports whether fd is a descriptor a simulated network made
// and still open: one that becomes ready only through a loop's own
// callbacks and timers (hooks.SetClosedWorld).
func isSimWorldFD(fd int) bool {
	v, ok := simWorldFDs.Load(fd)
	if !ok {
		return false
	}
	dev, ino, ok := fdID(fd)
	return ok && v.([2]uint64) == [2]uint64{dev, ino}
}

// forgetFDs drops the network's entries.
func (n *SimNetwork) forgetFDs() {
	simFDs.Range(func(k, v any) bool {
		if v.(simFDInfo).n == n {
			simFDs.Delete(k)
		}
		return true
	})
}
