//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_base_events.py, the socket part:
// BaseEventLoopWithSelectorTests' argument errors of create_connection,
// create_server and create_datagram_endpoint, BaseLoopSockSendfileTests'
// argument errors, TestSelectorUtils. Where CPython replaces
// loop.getaddrinfo by a coroutine, the Go test passes a fake resolver
// (aio.WithResolver); where it replaces sock_connect or bind by a mock
// that fails, the Go test makes the real call fail (a closed port, an
// address in use).

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"regexp"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

// fakeResolver is `loop.getaddrinfo = getaddrinfo_task`: it returns addrs
// for every host and counts its calls.
type fakeResolver struct {
	addrs []net.IPAddr
	calls int
}

func (r *fakeResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	r.calls++
	return r.addrs, nil
}

// closedPort returns a TCP port of 127.0.0.1 that nothing listens on (the
// port of a listener just closed): a connection to it is refused.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func baseMyProto() aio.Protocol { return aio.BaseProtocol{} }

// rawSocket is socket.socket(family, typ), closed by the test's cleanup
// unless the test hands it over (closeIt false then).
func rawSocket(t *testing.T, family, typ int) int {
	t.Helper()
	fd, err := unix.Socket(family, typ, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func TestBaseEvents_test_create_connection_multiple_errors(t *testing.T) {
	// Two addresses, both refused: one OSError "Multiple exceptions: err1,
	// err2" (the messages joined with ", ", as CPython joins them; each
	// error stays reachable with errors.Is).
	// all_errors=True (aio.WithAllErrors): an ExceptionGroup of both.
	run(t, func(tk *asyncio.T) error {
		// CPython's two mocked errors differ (err1, err2): here two
		// addresses, so that the errors' messages differ too.
		port := closedPort(t)
		r := &fakeResolver{addrs: []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}, {IP: net.IPv4(127, 0, 0, 2)}}}
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r), aio.WithHappyEyeballsDelay(0))
		check(t, err != nil && regexp.MustCompile(`^Multiple exceptions: .*127\.0\.0\.1.*, .*127\.0\.0\.2`).MatchString(err.Error()), "error ", err)
		check(t, errors.Is(err, syscall.ECONNREFUSED), "each attempt's error is kept: ", err)
		eq(t, r.calls, 1, "getaddrinfo calls")
		_, _, err = aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r), aio.WithHappyEyeballsDelay(0), aio.WithAllErrors())
		checkConnectGroup(t, err, 2)
		// Errors that read the same are one error, as in asyncio.
		r = &fakeResolver{addrs: []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}, {IP: net.IPv4(127, 0, 0, 1)}}}
		_, _, err = aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r), aio.WithHappyEyeballsDelay(0))
		check(t, err != nil && !regexp.MustCompile(`Multiple`).MatchString(err.Error()) && errors.Is(err, syscall.ECONNREFUSED), "one error: ", err)
		return nil
	})
}

func TestBaseEvents_test_create_connection_host_port_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_STREAM)
		defer unix.Close(fd)
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", 80, aio.WithSocket(fd))
		check(t, errors.Is(err, asyncio.ErrValue), "host, port and sock: ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_connection_wrong_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM)
		defer unix.Close(fd)
		_, _, err := aio.CreateConnection(tk, baseMyProto, "", 0, aio.WithSocket(fd))
		raisesRegex(t, err, "*asyncio.ValueError", "A Stream Socket was expected")
		return nil
	})
}

func TestBaseEvents_test_create_server_wrong_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM)
		defer unix.Close(fd)
		_, err := aio.CreateServer(tk, baseMyProto, "", 0, aio.WithSocket(fd))
		raisesRegex(t, err, "*asyncio.ValueError", "A Stream Socket was expected")
		return nil
	})
}

func TestBaseEvents_test_create_server_ssl_timeout_for_plain_socket(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, err := aio.CreateServer(tk, baseMyProto, "example.com", 80, aio.WithTLSHandshakeTimeout(1e9))
		raisesRegex(t, err, "*asyncio.ValueError", "ssl_handshake_timeout is only meaningful with ssl")
		return nil
	})
}

func TestBaseEvents_test_create_server_ipv6(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartServer(tk, serveNothing, "::1", 0)
		if errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT) {
			// CPython skips; here the host has no IPv6 loopback, and the
			// error must say so.
			return nil
		}
		if err != nil {
			return err
		}
		check(t, len(srv.Sockets()) > 0, "listening sockets")
		srv.Close()
		return srv.WaitClosed(tk)
	})
}

func TestBaseEvents_test_create_connection_no_host_port_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, _, err := aio.CreateConnection(tk, baseMyProto, "", 0)
		check(t, errors.Is(err, asyncio.ErrValue), "neither host/port nor sock: ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_connection_no_getaddrinfo(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := &fakeResolver{}
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", 80, aio.WithResolver(r))
		check(t, err != nil && !errors.Is(err, asyncio.ErrValue), "an OSError, got ", err)
		if err != nil {
			check(t, regexp.MustCompile(`getaddrinfo\(\) returned empty list`).MatchString(err.Error()), "message ", err)
		}
		return nil
	})
}

// checkConnectGroup checks that err is all_errors=True's
// ExceptionGroup("create_connection failed", ...) of n OSErrors.
func checkConnectGroup(t *testing.T, err error, n int) {
	t.Helper()
	eg, ok := err.(*asyncio.ExceptionGroup)
	if !ok {
		t.Errorf("want an *asyncio.ExceptionGroup, got %T %v", err, err)
		return
	}
	eq(t, eg.Msg, "create_connection failed", "group message")
	eq(t, len(eg.Errs), n, "members")
	for _, e := range eg.Errs {
		var errno syscall.Errno
		check(t, errors.As(e, &errno), "an OSError member, got ", e)
	}
}

func TestBaseEvents_test_create_connection_connect_err(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := &fakeResolver{addrs: []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}}
		port := closedPort(t)
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r))
		check(t, errors.Is(err, syscall.ECONNREFUSED), "the connect error, got ", err)
		_, _, err = aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r), aio.WithAllErrors())
		checkConnectGroup(t, err, 1)
		return nil
	})
}

func TestBaseEvents_test_create_connection_multiple(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := &fakeResolver{addrs: []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}, {IP: net.IPv4(127, 0, 0, 2)}}}
		port := closedPort(t)
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r))
		check(t, errors.Is(err, syscall.ECONNREFUSED), "an OSError, got ", err)
		_, _, err = aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r), aio.WithAllErrors())
		checkConnectGroup(t, err, 2)
		return nil
	})
}

func TestBaseEvents_test_create_connection_ip_addr(t *testing.T) {
	// An IP literal is not looked up (getaddrinfo is not called).
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.CreateServer(tk, baseMyProto, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r := &fakeResolver{}
		tr, _, err := aio.CreateConnection(tk, baseMyProto, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, aio.WithResolver(r))
		noErr(t, err, "connect")
		eq(t, r.calls, 0, "getaddrinfo calls")
		if tr != nil {
			tr.Close()
		}
		srv.Close()
		return srv.WaitClosed(tk)
	})
}

func TestBaseEvents_test_create_connection_ssl_server_hostname_errors(t *testing.T) {
	// When using ssl, server_hostname may be None if host is non-empty:
	// with a sock (or an empty host) and a tls.Config without ServerName,
	// the call is a ValueError.
	run(t, func(tk *asyncio.T) error {
		cfg := &tls.Config{}
		_, _, err := aio.CreateConnection(tk, baseMyProto, "", 80, aio.WithTLS(cfg))
		check(t, errors.Is(err, asyncio.ErrValue), "empty host with ssl: ValueError, got ", err)
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_STREAM)
		defer unix.Close(fd)
		_, _, err = aio.CreateConnection(tk, baseMyProto, "", 0, aio.WithTLS(cfg), aio.WithSocket(fd))
		check(t, errors.Is(err, asyncio.ErrValue), "sock with ssl and no server name: ValueError, got ", err)
		if err != nil {
			check(t, regexp.MustCompile(`server_hostname|ServerName`).MatchString(err.Error()), "the message names the server name: ", err)
		}
		return nil
	})
}

func TestBaseEvents_test_create_connection_ssl_timeout_for_plain_socket(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", 80, aio.WithTLSHandshakeTimeout(1e9))
		raisesRegex(t, err, "*asyncio.ValueError", "ssl_handshake_timeout is only meaningful with ssl")
		return nil
	})
}

func TestBaseEvents_test_create_server_host_port_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_STREAM)
		defer unix.Close(fd)
		_, err := aio.CreateServer(tk, baseMyProto, "0.0.0.0", 0, aio.WithSocket(fd))
		check(t, errors.Is(err, asyncio.ErrValue), "host and sock: ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_server_no_getaddrinfo(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, err := aio.CreateServer(tk, baseMyProto, "python.org", 0, aio.WithResolver(&fakeResolver{}))
		check(t, err != nil && !errors.Is(err, asyncio.ErrValue), "an OSError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_server_cant_bind(t *testing.T) {
	// bind fails (the address is in use): an OSError, and the socket is
	// closed (nothing listens on the port afterwards but the holder).
	run(t, func(tk *asyncio.T) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		_, err = aio.CreateServer(tk, baseMyProto, "127.0.0.1", port)
		check(t, errors.Is(err, syscall.EADDRINUSE), "bind error, got ", err)
		return nil
	})
}

// baseDatagramProto is test_base_events.py's MyDatagramProto: INITIAL, INITIALIZED, CLOSED, and
// done once the connection is lost.
type baseDatagramProto struct {
	aio.BaseDatagramProtocol
	state string
	done  *asyncio.Future[struct{}]
}

func newBaseDatagramProto(tk *asyncio.T) *baseDatagramProto {
	return &baseDatagramProto{state: "INITIAL", done: asyncio.NewFuture[struct{}](tk)}
}

func (p *baseDatagramProto) ConnectionMade(aio.DatagramTransport) { p.state = "INITIALIZED" }
func (p *baseDatagramProto) ConnectionLost(error) {
	p.state = "CLOSED"
	p.done.SetResult(struct{}{})
}

func TestBaseEvents_test_create_datagram_endpoint_allow_broadcast(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newBaseDatagramProto(tk)
		tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, nil,
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, aio.WithAllowBroadcast())
		if err != nil {
			return err
		}
		tr.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_no_matching_family(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return aio.BaseDatagramProtocol{} },
			&net.UDPAddr{IP: net.IPv6loopback}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
		check(t, errors.Is(err, asyncio.ErrValue), "local ::1 and remote 127.0.0.1: ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_noaddr_nofamily(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		_, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return aio.BaseDatagramProtocol{} }, nil, nil)
		check(t, errors.Is(err, asyncio.ErrValue), "no address: ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_cant_bind(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer pc.Close()
		_, _, err = aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return newBaseDatagramProto(tk) },
			pc.LocalAddr().(*net.UDPAddr), nil)
		check(t, errors.Is(err, syscall.EADDRINUSE), "bind error, got ", err)
		return nil
	})
}

// sockopt is sock.getsockopt(level, opt) != 0.
func sockopt(t *testing.T, tr aio.ExtraInfoer, level, opt int) bool {
	t.Helper()
	fd, ok := aio.Socket(tr)
	if !ok {
		t.Fatal("no socket")
	}
	v, err := unix.GetsockoptInt(fd, level, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v != 0
}

func TestBaseEvents_test_create_datagram_endpoint_sockopts(t *testing.T) {
	// Socket options are not applied unless asked for. (reuse_address,
	// removed from asyncio, has no counterpart.)
	run(t, func(tk *asyncio.T) error {
		local := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		proto := newBaseDatagramProto(tk)
		tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, local, nil)
		if err != nil {
			return err
		}
		check(t, soReusePort < 0 || !sockopt(t, tr, unix.SOL_SOCKET, soReusePort), "no SO_REUSEPORT")
		check(t, !sockopt(t, tr, unix.SOL_SOCKET, unix.SO_BROADCAST), "no SO_BROADCAST")
		tr.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")

		proto = newBaseDatagramProto(tk)
		tr, _, err = aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, local, nil,
			aio.WithReusePort(), aio.WithAllowBroadcast())
		if soReusePort < 0 {
			// No SO_REUSEPORT (Solaris, illumos): refused, as asyncio
			// refuses reuse_port=True there.
			var ve *asyncio.ValueError
			check(t, errors.As(err, &ve), "reuse_port=True is a ValueError without SO_REUSEPORT:", err)
			return nil
		}
		if err != nil {
			return err
		}
		check(t, !sockopt(t, tr, unix.SOL_SOCKET, unix.SO_REUSEADDR), "no SO_REUSEADDR")
		check(t, sockopt(t, tr, unix.SOL_SOCKET, soReusePort), "SO_REUSEPORT")
		check(t, sockopt(t, tr, unix.SOL_SOCKET, unix.SO_BROADCAST), "SO_BROADCAST")
		tr.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

// sendfileArgSocket is BaseLoopSockSendfileTests.make_socket for the
// argument checks, which come before the socket is used: a TCP socket,
// non-blocking unless blocking.
func sendfileArgSocket(t *testing.T, blocking bool) int {
	t.Helper()
	fd := rawSocket(t, unix.AF_INET, unix.SOCK_STREAM)
	t.Cleanup(func() { unix.Close(fd) })
	if !blocking {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	return fd
}

func TestBaseEvents_test_blocking_socket(t *testing.T) {
	fd := sendfileArgSocket(t, true)
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		tk.Loop().SetDebug(true)
		_, err := aio.SockSendfile(tk, fd, f, 0, 0, true)
		raisesRegex(t, err, "*asyncio.ValueError", "must be non-blocking")
		return nil
	})
}

func TestBaseEvents_test_nonstream_socket(t *testing.T) {
	fd := rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM)
	t.Cleanup(func() { unix.Close(fd) })
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		_, err := aio.SockSendfile(tk, fd, f, 0, 0, true)
		raisesRegex(t, err, "*asyncio.ValueError", "only SOCK_STREAM type")
		return nil
	})
}

func TestBaseEvents_test_negative_count(t *testing.T) {
	fd := sendfileArgSocket(t, false)
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		_, err := aio.SockSendfile(tk, fd, f, 0, -1, true)
		raisesRegex(t, err, "*asyncio.ValueError", "count must be a positive integer")
		return nil
	})
}

func TestBaseEvents_test_negative_offset(t *testing.T) {
	fd := sendfileArgSocket(t, false)
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		_, err := aio.SockSendfile(tk, fd, f, -1, 0, true)
		raisesRegex(t, err, "*asyncio.ValueError", "offset must be a non-negative integer")
		return nil
	})
}

func TestBaseEvents_test_set_nodelay(t *testing.T) {
	// base_events._set_nodelay is private; what it is for is that every
	// TCP transport has TCP_NODELAY set: checked on both ends of a
	// connection made by CreateConnection and CreateServer.
	run(t, func(tk *asyncio.T) error {
		accepted := asyncio.NewFuture[aio.Transport](tk)
		srv, err := aio.CreateServer(tk, func() aio.Protocol { return &nodelayProto{accepted: accepted} }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, _, err := aio.CreateConnection(tk, baseMyProto, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port)
		if err != nil {
			return err
		}
		check(t, sockopt(t, tr, unix.IPPROTO_TCP, unix.TCP_NODELAY), "client TCP_NODELAY")
		str, err := accepted.Await(tk)
		if err != nil {
			return err
		}
		check(t, sockopt(t, str, unix.IPPROTO_TCP, unix.TCP_NODELAY), "server TCP_NODELAY")
		tr.Close()
		str.Close()
		srv.Close()
		return srv.WaitClosed(tk)
	})
}

type nodelayProto struct {
	aio.BaseProtocol
	accepted *asyncio.Future[aio.Transport]
}

func (p *nodelayProto) ConnectionMade(tr aio.Transport) { p.accepted.SetResult(tr) }

func TestBaseEvents_test_create_server_empty_host(t *testing.T) {
	// CPython looks host '' up as None (getaddrinfo(None, AI_PASSIVE)):
	// every interface, IPv6 included. Here (README divergence) "" is
	// that list without asking the resolver (a Go resolver answers for
	// names only): 0.0.0.0, and :: where the host has IPv6.
	run(t, func(tk *asyncio.T) error {
		r := &fakeResolver{}
		srv, err := aio.CreateServer(tk, baseMyProto, "", 0, aio.WithResolver(r))
		if err != nil {
			return err
		}
		want := []string{"0.0.0.0"}
		if hasIPv6Loopback() {
			want = append(want, "::")
		}
		var got []string
		for _, a := range srv.Addrs() {
			got = append(got, a.(*net.TCPAddr).IP.String())
		}
		eq(t, got, want, "listeners")
		eq(t, r.calls, 0, "getaddrinfo calls")
		srv.Close()
		return srv.WaitClosed(tk)
	})
}

// hostResolver is a getaddrinfo coroutine that answers by host name (an
// unknown host gets an empty list).
type hostResolver map[string][]net.IPAddr

func (r hostResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return r[host], nil
}

func TestBaseEvents_test_create_connection_no_local_addr(t *testing.T) {
	// local_addr=(None, 8080) whose lookup gives nothing: an OSError. The
	// Go option's "" host is the wildcard without a lookup, so the local
	// host here is a name that resolves to nothing.
	run(t, func(tk *asyncio.T) error {
		r := hostResolver{"example.com": {{IP: net.IPv4(107, 6, 106, 82)}, {IP: net.IPv4(107, 6, 106, 82)}}}
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", 80, aio.WithResolver(r), aio.WithLocalAddr("local.example", 0))
		check(t, err != nil && !errors.Is(err, asyncio.ErrValue), "an OSError, got ", err)
		if err != nil {
			check(t, regexp.MustCompile(`getaddrinfo\(\) returned empty list`).MatchString(err.Error()), "message ", err)
		}
		return nil
	})
}

func TestBaseEvents_test_create_connection_multiple_errors_local_addr(t *testing.T) {
	// Two local addresses, the bind to the first fails (CPython's mocked
	// bind of 0.0.0.1; here an address that is not this host's), the
	// second binds; both connects fail (CPython's mocked sock_connect;
	// here a closed port): "Multiple exceptions: ...". all_errors=True
	// (aio.WithAllErrors): an ExceptionGroup of OSErrors.
	run(t, func(tk *asyncio.T) error {
		port := closedPort(t)
		r := hostResolver{
			"example.com":   {{IP: net.IPv4(127, 0, 0, 1)}, {IP: net.IPv4(127, 0, 0, 2)}},
			"local.example": {{IP: net.IPv4(192, 0, 2, 1)}, {IP: net.IPv4(127, 0, 0, 1)}},
		}
		_, _, err := aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r),
			aio.WithLocalAddr("local.example", 0), aio.WithHappyEyeballsDelay(0))
		check(t, err != nil && regexp.MustCompile(`^Multiple exceptions: `).MatchString(err.Error()), "error ", err)
		check(t, errors.Is(err, syscall.ECONNREFUSED), "the connects' errors are kept: ", err)
		_, _, err = aio.CreateConnection(tk, baseMyProto, "example.com", port, aio.WithResolver(r),
			aio.WithLocalAddr("local.example", 0), aio.WithHappyEyeballsDelay(0), aio.WithAllErrors())
		// Each attempt's failed bind and its refused connect, as
		// _connect_sock keeps both.
		checkConnectGroup(t, err, 4)
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_wrong_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_STREAM)
		defer unix.Close(fd)
		_, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return aio.BaseDatagramProtocol{} }, nil, nil, aio.WithSocket(fd))
		check(t, errors.Is(err, asyncio.ErrValue) && regexp.MustCompile(`A datagram socket was expected`).MatchString(err.Error()), "ValueError, got ", err)
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(fd)
			return err
		}
		proto := newBaseDatagramProto(tk)
		tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return proto }, nil, nil, aio.WithSocket(fd))
		if err != nil {
			unix.Close(fd)
			return err
		}
		tr.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestBaseEvents_test_create_datagram_endpoint_sock_sockopts(t *testing.T) {
	// sock= with local_addr, remote_addr, reuse_port or allow_broadcast:
	// a ValueError each (family=, proto= and flags= are Python arguments
	// aio does not have). The socket is a real datagram socket, left as it
	// was.
	run(t, func(tk *asyncio.T) error {
		fd := rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM)
		defer unix.Close(fd)
		factory := func() aio.DatagramProtocol { return aio.BaseDatagramProtocol{} }
		addr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		for _, c := range []struct {
			name          string
			local, remote *net.UDPAddr
			opts          []aio.Option
		}{
			{"local_addr", addr, nil, nil},
			{"remote_addr", nil, addr, nil},
			{"reuse_port", nil, nil, []aio.Option{aio.WithReusePort()}},
			{"allow_broadcast", nil, nil, []aio.Option{aio.WithAllowBroadcast()}},
		} {
			_, _, err := aio.CreateDatagramEndpoint(tk, factory, c.local, c.remote, append([]aio.Option{aio.WithSocket(fd)}, c.opts...)...)
			check(t, errors.Is(err, asyncio.ErrValue), c.name, " with sock: ValueError, got ", err)
		}
		if _, err := unix.Getsockname(fd); err != nil {
			t.Errorf("the socket was closed: %v", err)
		}
		return nil
	})
}
