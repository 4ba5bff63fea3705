//go:build unix

package aio

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Option configures the calls that open or serve connections or start
// child processes: CreateConnection, CreateUnixConnection, OpenConnection,
// OpenUnixConnection, DialConn, CreateServer, CreateUnixServer,
// StartServer, StartUnixServer, StartHTTPServer, CreateDatagramEndpoint,
// CreateUnixDatagramEndpoint, SubprocessExec,
// SubprocessShell, CreateSubprocessExec and CreateSubprocessShell, the
// group servers, and StartTLS (also StreamWriter.StartTLS). Each
// option says which calls it applies to; given to another call, it makes
// that call return a *asyncio.ValueError naming the option and the call
// before it does anything (asyncio raises TypeError for a keyword its
// function does not take), so that a misplaced option is never silently
// ignored. Make Options with the With functions; the zero Option is an
// error too.
type Option struct {
	name  string  // "WithStdin"
	calls callSet // the calls that accept it
	apply func(*options)
	// via marks the options a call passes on to the call it is built
	// on (OpenConnection to CreateConnection): they were checked against
	// via's list, and errors name via.
	via string
}

// callSet is a set of the calls that take Options, one bit each.
type callSet uint32

const (
	callCreateConnection callSet = 1 << iota
	callCreateUnixConnection
	callOpenConnection
	callOpenUnixConnection
	callDialConn
	callCreateServer
	callCreateUnixServer
	callStartServer
	callStartUnixServer
	callCreateDatagramEndpoint
	callSubprocessExec
	callSubprocessShell
	callCreateSubprocessExec
	callCreateSubprocessShell
	callCreateGroupServer
	callCreateUnixGroupServer
	callStartGroupServer
	callStartUnixGroupServer
	callStartHTTPServer
	callStartTLS
	callConnectAcceptedSocket
	callCreateUnixDatagramEndpoint
	numCalls = iota
)

// callNames are the calls' names, in the order of their bits.
var callNames = [numCalls]string{
	"CreateConnection", "CreateUnixConnection", "OpenConnection", "OpenUnixConnection", "DialConn",
	"CreateServer", "CreateUnixServer", "StartServer", "StartUnixServer", "CreateDatagramEndpoint",
	"SubprocessExec", "SubprocessShell", "CreateSubprocessExec", "CreateSubprocessShell",
	"CreateGroupServer", "CreateUnixGroupServer", "StartGroupServer", "StartUnixGroupServer",
	"StartHTTPServer", "StartTLS", "ConnectAcceptedSocket", "CreateUnixDatagramEndpoint",
}

// The sets the options share.
const (
	tcpConnect  = callCreateConnection | callOpenConnection
	unixConnect = callCreateUnixConnection | callOpenUnixConnection
	tcpServe    = callCreateServer | callStartServer | callCreateGroupServer | callStartGroupServer | callStartHTTPServer
	unixServe   = callCreateUnixServer | callStartUnixServer | callCreateUnixGroupServer | callStartUnixGroupServer
	streamCalls = tcpConnect | unixConnect | tcpServe | unixServe
	// tlsCalls take WithTLS and its timeouts, and WithMaxWriteBuffer.
	tlsCalls = streamCalls | callConnectAcceptedSocket
	// tlsServerCalls are the server's end of their TLS connections.
	tlsServerCalls = tcpServe | unixServe | callConnectAcceptedSocket
	processCalls   = callSubprocessExec | callSubprocessShell | callCreateSubprocessExec | callCreateSubprocessShell
	limitCalls     = callOpenConnection | callOpenUnixConnection | callStartServer | callStartUnixServer |
		callCreateSubprocessExec | callCreateSubprocessShell | callStartGroupServer | callStartUnixGroupServer |
		callStartHTTPServer
)

func (c callSet) String() string {
	var names []string
	for i, n := range callNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

func callBit(call string) callSet {
	for i, n := range callNames {
		if n == call {
			return 1 << i
		}
	}
	panic("aio: buildOptions for an unknown call " + call)
}

func option(name string, calls callSet, apply func(*options)) Option {
	return Option{name: name, calls: calls, apply: apply}
}

// via returns opts marked as passed on by call (see Option.via).
// Options already marked keep their mark: errors name the call the
// program made.
func via(call string, opts []Option) []Option {
	if len(opts) > 0 && opts[0].via != "" {
		return opts
	}
	return append([]Option{{via: call}}, opts...)
}

// options is what the Options set; buildOptions fills in asyncio's
// defaults first.
type options struct {
	// tlsServerSide: the call is the server's end of its TLS connections
	// (a server's, ConnectAcceptedSocket's).
	tlsServerSide      bool
	tls                *tlsConfig
	happyEyeballsDelay time.Duration // <= 0: sequential
	interleave         int           // -1: auto (1 with happy eyeballs, else 0); 0 off; n: first family count
	limit              int
	backlog            int
	reuseAddr          bool
	reuseAddrGiven     bool // WithReuseAddress
	reusePort          bool
	keepAlive          bool     // WithKeepAlive
	family             int      // WithFamily; 0: AF_UNSPEC
	hosts              []string // WithHosts
	hostsGiven         bool
	familyGiven        bool
	allowBroadcast     bool
	resolver           Resolver
	maxWriteBuffer     int // 0: no limit
	deferServing       bool
	keepSocketFile     bool
	sock               int // WithSocket's fd; -1: none
	sockGiven          bool
	localAddr          *localAddrOption
	allErrors          bool // WithAllErrors
	// tlsHandshakeTimeout is WithTLSHandshakeTimeout's value (nil: not
	// given; any given value is checked, 0 too), applied once all options
	// are known, so order does not matter; tlsShutdownTimeout is
	// WithTLSShutdownTimeout's, the same way.
	tlsHandshakeTimeout *time.Duration
	tlsShutdownTimeout  *time.Duration
	// sub shapes a child process (subprocess.go).
	sub *subprocessOptions // allocated by a subprocess call or option
	// simHost is WithNetwork's host (sim.go); nil: real sockets.
	simHost *SimHost
}

// Resolver looks up the addresses of a host name. *net.Resolver
// satisfies it; net.DefaultResolver is the default. See WithResolver.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// buildOptions checks that call accepts every option of opts and applies
// them over asyncio's defaults; then it checks the values that cannot be
// checked one option at a time. Every error is a *asyncio.ValueError,
// returned before the call changes anything.
func buildOptions(call string, opts []Option) (*options, error) {
	if len(opts) > 0 && opts[0].via != "" {
		call, opts = opts[0].via, opts[1:]
	}
	bit := callBit(call) // call "" only with a via mark (group_server.go)
	o := &options{
		happyEyeballsDelay: defaultHappyEyeballsDelay,
		interleave:         -1,
		limit:              DefaultStreamLimit,
		backlog:            100,
		reuseAddr:          true, // asyncio's reuse_address default on Unix
		resolver:           net.DefaultResolver,
		sock:               -1,
	}
	for _, opt := range opts {
		if opt.apply == nil {
			return nil, &asyncio.ValueError{Msg: call + ": an Option not made by a With function (the zero Option)"}
		}
		if opt.calls&bit == 0 {
			return nil, &asyncio.ValueError{Msg: fmt.Sprintf("%s does not take the option %s (it applies to %v)", call, opt.name, opt.calls)}
		}
	}
	if bit&processCalls != 0 {
		o.sub = &subprocessOptions{}
	}
	for _, opt := range opts {
		opt.apply(o)
	}
	if o.sockGiven && o.sock < 0 {
		// Not a descriptor; -1, the "none" inside, must not quietly
		// turn WithSocket off either.
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf("%s: WithSocket(%d): a file descriptor is >= 0", call, o.sock)}
	}
	if o.limit <= 0 {
		return nil, errBadLimit()
	}
	if o.maxWriteBuffer < 0 {
		return nil, &asyncio.ValueError{Msg: "WithMaxWriteBuffer: the limit must be > 0"}
	}
	if o.localAddr != nil {
		switch {
		case o.sock >= 0:
			return nil, &asyncio.ValueError{Msg: call + ": WithLocalAddr and WithSocket cannot be given together (the socket is already bound)"}
		case o.simHost != nil:
			return nil, &asyncio.ValueError{Msg: call + ": WithLocalAddr is not supported on a simulated network (WithNetwork)"}
		}
		if err := checkPort(o.localAddr.port); err != nil {
			return nil, err
		}
	}
	if o.familyGiven {
		switch {
		case o.family != unix.AF_UNSPEC && o.family != unix.AF_INET && o.family != unix.AF_INET6:
			return nil, &asyncio.ValueError{Msg: fmt.Sprintf("%s: WithFamily(%d): the family must be unix.AF_INET, unix.AF_INET6 or unix.AF_UNSPEC", call, o.family)}
		case o.sock >= 0:
			return nil, &asyncio.ValueError{Msg: call + ": WithFamily and WithSocket cannot be given together (the socket has its family)"}
		case o.simHost != nil:
			return nil, &asyncio.ValueError{Msg: call + ": WithFamily is not supported on a simulated network (WithNetwork)"}
		}
	}
	if o.hostsGiven {
		switch {
		case len(o.hosts) == 0:
			return nil, &asyncio.ValueError{Msg: call + ": WithHosts(): no host"}
		case o.sock >= 0:
			return nil, &asyncio.ValueError{Msg: call + ": WithHosts and WithSocket cannot be given together (the socket is already bound)"}
		case o.simHost != nil:
			return nil, &asyncio.ValueError{Msg: call + ": WithHosts is not supported on a simulated network (WithNetwork)"}
		}
	}
	if o.resolver == nil {
		return nil, &asyncio.ValueError{Msg: call + ": WithResolver(nil): the resolver must not be nil (leave the option out for net.DefaultResolver)"}
	}
	if o.tls != nil && o.tls.cfg == nil {
		return nil, &asyncio.ValueError{Msg: call + ": WithTLS(nil): the *tls.Config must not be nil"}
	}
	o.tlsServerSide = bit&tlsServerCalls != 0
	if o.tls != nil && o.tlsServerSide {
		c := o.tls.cfg
		if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
			// Every handshake would fail ("tls: no certificates
			// configured"), and only once a client came.
			return nil, &asyncio.ValueError{Msg: call + ": WithTLS: a server's *tls.Config needs a certificate (Certificates, GetCertificate or GetConfigForClient)"}
		}
	}
	if o.simHost != nil {
		// A simulated host has no real sockets and no socket options:
		// these would be ignored (WithSocket's server listened on the
		// real socket, off the network).
		switch {
		case o.sock >= 0:
			return nil, &asyncio.ValueError{Msg: call + ": WithNetwork and WithSocket cannot be given together (a simulated host has no real sockets)"}
		case o.reusePort:
			return nil, &asyncio.ValueError{Msg: call + ": WithReusePort is not supported on a simulated network (WithNetwork)"}
		case o.reuseAddrGiven && !o.reuseAddr:
			return nil, &asyncio.ValueError{Msg: call + ": WithReuseAddress(false) is not supported on a simulated network (WithNetwork), which has no TIME_WAIT"}
		case o.keepAlive:
			return nil, &asyncio.ValueError{Msg: call + ": WithKeepAlive is not supported on a simulated network (WithNetwork)"}
		case o.allowBroadcast:
			return nil, &asyncio.ValueError{Msg: call + ": WithAllowBroadcast is not supported on a simulated network (WithNetwork)"}
		}
	}
	// StartTLS takes its *tls.Config as an argument, not WithTLS.
	tlsGiven := o.tls != nil || bit == callStartTLS
	if d := o.tlsHandshakeTimeout; d != nil {
		if !tlsGiven {
			return nil, &asyncio.ValueError{Msg: "ssl_handshake_timeout is only meaningful with ssl"}
		}
		if *d <= 0 {
			return nil, &asyncio.ValueError{Msg: fmt.Sprintf("ssl_handshake_timeout should be a positive number, got %v", *d)}
		}
		if o.tls != nil {
			o.tls.handshakeTimeout = *d
		}
	}
	if d := o.tlsShutdownTimeout; d != nil {
		if !tlsGiven {
			return nil, &asyncio.ValueError{Msg: "ssl_shutdown_timeout is only meaningful with ssl"}
		}
		if *d <= 0 {
			return nil, &asyncio.ValueError{Msg: fmt.Sprintf("ssl_shutdown_timeout should be a positive number, got %v", *d)}
		}
		if o.tls != nil {
			o.tls.shutdownTimeout = *d
		}
	}
	return o, nil
}

// checkPort is the *ValueError for a port out of range, returned before a
// socket is made (CPython: OverflowError "port must be 0-65535").
func checkPort(port int) error {
	if port < 0 || port > 65535 {
		return &asyncio.ValueError{Msg: fmt.Sprintf("port must be 0-65535, got %d", port)}
	}
	return nil
}

// interleaves is asyncio's rule: interleave defaults to 1 when
// happy_eyeballs_delay is set.
func (o *options) interleaves() bool {
	if o.interleave < 0 {
		return o.happyEyeballsDelay > 0
	}
	return o.interleave > 0
}

// interleaveCount is asyncio's first_address_family_count.
func (o *options) interleaveCount() int {
	if o.interleave < 0 {
		return 1
	}
	return o.interleave
}

// WithTLS makes CreateConnection/OpenConnection (and their Unix variants)
// speak TLS as a client, or CreateServer/StartServer (and their Unix
// variants) and ConnectAcceptedSocket as a server, with cfg (asyncio's
// ssl=). For a client without
// cfg.ServerName, the host name is used. A nil cfg is a *ValueError, and
// so is, for a server, a cfg with no certificate (no Certificates,
// GetCertificate or GetConfigForClient), before anything is done.
func WithTLS(cfg *tls.Config) Option {
	return option("WithTLS", tlsCalls, func(o *options) {
		o.tls = &tlsConfig{cfg: cfg, handshakeTimeout: defaultTLSHandshakeTimeout, shutdownTimeout: defaultTLSShutdownTimeout}
	})
}

// WithTLSHandshakeTimeout bounds the TLS handshake (asyncio's
// ssl_handshake_timeout, default 60 s); StartTLS and
// StreamWriter.StartTLS take it too. Without WithTLS (except for
// StartTLS), or with d <= 0, the call fails with a *ValueError before it
// does anything, as asyncio does.
func WithTLSHandshakeTimeout(d time.Duration) Option {
	return option("WithTLSHandshakeTimeout", tlsCalls|callStartTLS, func(o *options) { o.tlsHandshakeTimeout = &d })
}

// WithTLSShutdownTimeout bounds the TLS shutdown that Close begins
// (asyncio's ssl_shutdown_timeout, default 30 s): the close_notify and
// whatever was still buffered must have been taken by the peer, and the
// peer must have ended its side (its close_notify or EOF), by then, or
// the connection is aborted and the protocol's ConnectionLost gets
// ErrTLSShutdownTimeout. The calls of WithTLS take it, and StartTLS and
// StreamWriter.StartTLS; without WithTLS (except for StartTLS), or with
// d <= 0, the call fails with a *ValueError before it does anything, as
// asyncio does.
func WithTLSShutdownTimeout(d time.Duration) Option {
	return option("WithTLSShutdownTimeout", tlsCalls|callStartTLS, func(o *options) { o.tlsShutdownTimeout = &d })
}

// WithStreamLimit sets the StreamReader limit of OpenConnection,
// OpenUnixConnection, StartServer, StartUnixServer, CreateSubprocessExec
// and CreateSubprocessShell (asyncio's limit=, default
// DefaultStreamLimit). n <= 0 makes the call fail with a
// *ValueError "Limit cannot be <= 0".
func WithStreamLimit(n int) Option {
	return option("WithStreamLimit", limitCalls, func(o *options) { o.limit = n })
}

// WithHappyEyeballsDelay sets how long a connection attempt may run before
// the next address is tried in parallel (asyncio's happy_eyeballs_delay;
// default 250 ms, the delay RFC 8305 and asyncio's docs recommend).
// d <= 0 tries the addresses one after the other. For CreateConnection,
// OpenConnection and DialConn.
func WithHappyEyeballsDelay(d time.Duration) Option {
	return option("WithHappyEyeballsDelay", tcpConnect|callDialConn, func(o *options) { o.happyEyeballsDelay = d })
}

// WithInterleave sets asyncio's interleave: with n > 0 the resolved
// addresses alternate between the address families, starting with the
// family of the first address, whose first n addresses come first (RFC
// 8305 section 4, "First Address Family Count"); n <= 0 keeps the
// resolver's order. By default it is 1 exactly when happy eyeballs is on.
// For CreateConnection, OpenConnection and DialConn.
func WithInterleave(n int) Option {
	return option("WithInterleave", tcpConnect|callDialConn, func(o *options) { o.interleave = max(n, 0) })
}

// WithBacklog sets the listen backlog of CreateServer/StartServer and
// their Unix variants (asyncio's backlog=, default 100); it also bounds
// how many connections one readiness event accepts, as in asyncio.
func WithBacklog(n int) Option {
	return option("WithBacklog", tcpServe|unixServe, func(o *options) { o.backlog = max(n, 1) })
}

// WithDeferredServing makes CreateServer, CreateUnixServer, StartServer
// and StartUnixServer return a server whose socket is bound but not yet
// listening (asyncio's start_serving=False): Addr is known, a client is
// refused, and StartServing or ServeForever listens and accepts.
func WithDeferredServing() Option {
	return option("WithDeferredServing", tcpServe|unixServe, func(o *options) { o.deferServing = true })
}

// WithSocket makes CreateConnection, CreateUnixConnection, OpenConnection
// and OpenUnixConnection use fd, a stream socket already connected, and
// CreateServer, CreateUnixServer, StartServer and StartUnixServer listen on
// fd, a stream socket already bound (asyncio's sock=). The host must then
// be "" and the port 0 (the path "" for the Unix calls), and fd must be a
// stream socket: anything else is a *ValueError. fd is made non-blocking
// and belongs to the transport or server from then on, which closes it.
// A Unix server removes the socket file fd is bound to when it closes, as
// for a path (unless WithKeepSocketFile). CreateDatagramEndpoint takes a
// datagram socket (UDP or Unix, bound or not, perhaps connected), with nil
// local and remote addresses and without WithReusePort or
// WithAllowBroadcast; CreateUnixDatagramEndpoint a Unix datagram socket,
// with the paths "". A negative fd is a *ValueError.
func WithSocket(fd int) Option {
	return option("WithSocket", tcpConnect|unixConnect|tcpServe|unixServe|callCreateDatagramEndpoint|callCreateUnixDatagramEndpoint, func(o *options) { o.sock, o.sockGiven = fd, true })
}

// WithKeepSocketFile makes CreateUnixServer and StartUnixServer leave the
// socket file in place when the server closes (asyncio 3.13's
// cleanup_socket=False); by default Close removes it if it is still the
// one the server bound.
func WithKeepSocketFile() Option {
	return option("WithKeepSocketFile", unixServe, func(o *options) { o.keepSocketFile = true })
}

// WithReusePort sets SO_REUSEPORT on the listening sockets of
// CreateServer/StartServer and on the socket of CreateDatagramEndpoint
// (asyncio's reuse_port=True), so that several sockets may bind the same
// address. Where the system has no SO_REUSEPORT (Solaris, illumos) the
// call fails with a *ValueError, as asyncio does; so does a call with
// WithSocket, whose socket is bound already.
func WithReusePort() Option {
	return option("WithReusePort", tcpServe|callCreateDatagramEndpoint, func(o *options) { o.reusePort = true })
}

// WithReuseAddress sets or clears SO_REUSEADDR on the listening sockets
// of CreateServer, StartServer and the group servers (asyncio's
// reuse_address=). It is set by default, as asyncio does on Unix, so that
// a server restarted on its port binds at once while connections of the
// previous one linger in TIME_WAIT; WithReuseAddress(false) leaves it
// clear, and such a bind then fails with EADDRINUSE. A *ValueError with
// WithSocket (the socket is bound already) and, for false, on a
// simulated network (which has no TIME_WAIT to reuse).
func WithReuseAddress(on bool) Option {
	return option("WithReuseAddress", tcpServe, func(o *options) { o.reuseAddr, o.reuseAddrGiven = on, true })
}

// WithKeepAlive sets SO_KEEPALIVE on the listening sockets of
// CreateServer, StartServer and the group servers (asyncio 3.13's
// keep_alive=True), and so on every connection they accept, which
// inherits it: the kernel probes an idle peer and a connection whose
// peer is gone ends with an error instead of staying open forever. With
// WithSocket it is set on that socket.
func WithKeepAlive() Option {
	return option("WithKeepAlive", tcpServe, func(o *options) { o.keepAlive = true })
}

// WithFamily restricts the addresses CreateConnection, OpenConnection,
// CreateServer, StartServer and the group servers use to one family
// (asyncio's family=): unix.AF_INET or unix.AF_INET6, or unix.AF_UNSPEC
// (0, the default) for both. It applies to the host's addresses, to the
// wildcard of host "" for a server and the loopback addresses for a
// client, and to WithLocalAddr's. A host with no address of the family
// fails as getaddrinfo does, with a *net.DNSError. Another family, or
// WithFamily with WithSocket or on a simulated network, is a
// *ValueError.
//
// For CreateDatagramEndpoint it is the socket's family: without local or
// remote address it makes an unbound endpoint of that family, which
// SendTo sends from (asyncio's create_datagram_endpoint(family=...) with
// neither address), and an address of the other family fails as
// getaddrinfo does.
func WithFamily(family int) Option {
	return option("WithFamily", tcpConnect|tcpServe|callCreateDatagramEndpoint, func(o *options) { o.family, o.familyGiven = family, true })
}

// WithHosts makes CreateServer, StartServer and the group servers listen
// on every address of every one of hosts (asyncio's host given as a
// sequence of strings), each looked up as the call's host would be; the
// call's own host must then be "". No hosts, or a host given both ways, is
// a *ValueError.
func WithHosts(hosts ...string) Option {
	hs := append([]string{}, hosts...)
	return option("WithHosts", tcpServe, func(o *options) { o.hosts = hs; o.hostsGiven = true })
}

// WithAllowBroadcast sets SO_BROADCAST on the socket of
// CreateDatagramEndpoint (asyncio's allow_broadcast=True), so that it may
// send to broadcast addresses.
func WithAllowBroadcast() Option {
	return option("WithAllowBroadcast", callCreateDatagramEndpoint, func(o *options) { o.allowBroadcast = true })
}

// WithMaxWriteBuffer bounds the write buffer of the transports that
// CreateConnection, CreateUnixConnection, OpenConnection,
// OpenUnixConnection, CreateServer, CreateUnixServer, StartServer and
// StartUnixServer create: a Write that would take the buffered bytes past
// n is refused whole, nothing of it sent or kept, with an error matching
// ErrWriteBufferFull. Off by default, as asyncio has no such limit (its
// write always buffers). Without it, what bounds the buffer is flow
// control: past the high water mark (SetWriteBufferLimits, 64 KiB by
// default) the protocol's PauseWriting is called and StreamWriter.Drain
// waits, so a writer that drains holds at most about high + one write.
// This option is the hard stop for a writer that does not wait: a peer
// that never reads cannot make it hold more than n bytes. An empty buffer
// always takes one write, even a larger one, once the socket has taken
// part of it (a stream cannot take back half a write); over TLS the limit
// counts the encrypted bytes, bounded before encrypting: about 69 bytes
// per 16 KiB record, and up to 1 KiB more while the connection's first
// 128 KiB go out in crypto/tls's smaller records, so a write that close
// to the limit may be refused although it would just have fit. n <= 0 is
// a *ValueError.
func WithMaxWriteBuffer(n int) Option {
	return option("WithMaxWriteBuffer", tlsCalls, func(o *options) {
		if n <= 0 {
			n = -1
		}
		o.maxWriteBuffer = n
	})
}

// localAddrOption is WithLocalAddr's address.
type localAddrOption struct {
	host string
	port int
}

// WithLocalAddr makes CreateConnection and OpenConnection bind
// the client socket to host:port before connecting (asyncio's
// local_addr=): host is looked up as the remote host is, and each attempt
// binds to the first of its addresses of the attempt's family that it
// can. An attempt with no address of its family fails ("no matching local
// address with family=AF_INET6 found"), a failed bind with the address
// and the errno ("error while attempting to bind on address
// 127.0.0.1:8080: address already in use", errors.Is EADDRINUSE). Port 0
// lets the system choose. A port outside 0-65535 is a *ValueError, and so
// is the option with WithSocket or WithNetwork.
func WithLocalAddr(host string, port int) Option {
	return option("WithLocalAddr", tcpConnect, func(o *options) { o.localAddr = &localAddrOption{host, port} })
}

// WithAllErrors makes CreateConnection and OpenConnection, when every
// attempt to connect fails, return an *asyncio.ExceptionGroup "create_connection
// failed" whose members are each attempt's error in the order the
// attempts started (every failed bind to a local address of WithLocalAddr
// counts), even when there is one, instead of that one error or the
// "Multiple exceptions: ..." error (asyncio 3.12's all_errors=True).
// errors.Is and errors.As reach each member, and ExceptStar takes them
// apart. A failed lookup of the host (or of WithLocalAddr's) is returned
// as it is, as asyncio raises getaddrinfo's error, and so is a
// cancellation.
func WithAllErrors() Option {
	return option("WithAllErrors", tcpConnect, func(o *options) { o.allErrors = true })
}

// WithResolver makes CreateConnection, OpenConnection, DialConn,
// CreateServer and StartServer look host names up with r instead of
// net.DefaultResolver (IP literals are never looked up). Tests pass a fake
// one; a *net.Resolver with PreferGo or its own Dial fits too. A nil r
// is a *ValueError.
func WithResolver(r Resolver) Option {
	return option("WithResolver", tcpConnect|callDialConn|tcpServe, func(o *options) { o.resolver = r })
}

// WithNetwork runs CreateConnection, OpenConnection, DialConn ("tcp"),
// CreateServer, StartServer, StartHTTPServer and CreateDatagramEndpoint
// on h's simulated network (NewSimNetwork), as host h: connections are
// dialled from h to a host name or address of the network (WithResolver
// is not used; host "", asyncio's None, is h's loopback, as on a real
// host), servers and endpoints bind on h (host "", a wildcard or
// loopback address, or h's name or address: a simulated host has one
// address, so code that listens on 127.0.0.1 runs unchanged; and a
// server's Addr is that address whatever it was bound to, the address
// other hosts reach it by, where a real server reports 0.0.0.0 for "" and
// 127.0.0.1 for "127.0.0.1"). The code
// that makes the calls is the same as on real sockets; only this option
// changes. Other calls refuse it, and so do the calls given it together
// with WithSocket, WithReusePort or WithAllowBroadcast, which a simulated
// host cannot honour (a *ValueError naming both). A nil h means real
// sockets, so a program can pass its network down as one value (nil in
// production).
func WithNetwork(h *SimHost) Option {
	return option("WithNetwork", tcpConnect|callDialConn|tcpServe|callCreateDatagramEndpoint, func(o *options) { o.simHost = h })
}

// WithStdin sets where a child's stdin comes from (asyncio's stdin=):
// Inherit, Pipe, DevNull or File(f). For SubprocessExec, SubprocessShell,
// CreateSubprocessExec and CreateSubprocessShell, as are the options
// below.
func WithStdin(r Redirect) Option {
	return option("WithStdin", processCalls, func(o *options) { o.sub.streams[0] = &r })
}

// WithStdout sets where a child's stdout goes (asyncio's stdout=).
func WithStdout(r Redirect) Option {
	return option("WithStdout", processCalls, func(o *options) { o.sub.streams[1] = &r })
}

// WithStderr sets where a child's stderr goes (asyncio's stderr=); Stdout
// sends it where stdout goes.
func WithStderr(r Redirect) Option {
	return option("WithStderr", processCalls, func(o *options) { o.sub.streams[2] = &r })
}

// WithDir sets a child's working directory (Popen's cwd=, exec.Cmd's
// Dir). An empty dir is a *ValueError: leave WithDir out for the
// parent's.
func WithDir(dir string) Option {
	return option("WithDir", processCalls, func(o *options) { o.sub.dir = &dir })
}

// WithEnv sets a child's environment, "KEY=value" strings (Popen's env=,
// exec.Cmd's Env); without it the child inherits the parent's. A nil or
// empty env is an empty environment (Popen's env={}), not the parent's;
// an entry without "=" is a *ValueError. The program is looked up in the
// child's PATH, whose relative entries are relative to WithDir's
// directory, as in Popen.
func WithEnv(env []string) Option {
	return option("WithEnv", processCalls, func(o *options) { o.sub.env, o.sub.envSet = env, true })
}

// WithCmd calls setup with the child's *exec.Cmd before it starts, for
// every other os/exec knob: SysProcAttr (Popen's start_new_session,
// process_group, user, group), ExtraFiles (pass_fds), and so on. setup
// must leave Stdin, Stdout and Stderr alone (the call fails with a
// *ValueError otherwise): they are WithStdin, WithStdout and WithStderr's.
func WithCmd(setup func(cmd *exec.Cmd)) Option {
	return option("WithCmd", processCalls, func(o *options) { o.sub.setup = setup })
}

// tlsNeedsServerName reports whether o's TLS config, as a client's, has
// no server name to verify and does not skip verification (see
// checkServerName): a connection with no host to take the name from
// cannot handshake with it.
func (o *options) tlsNeedsServerName() bool {
	return o.tls != nil && checkServerName("", o.tls.cfg, false, "") != nil
}
