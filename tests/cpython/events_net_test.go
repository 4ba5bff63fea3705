//go:build unix

package cpython

// test_events.py's socket tests: create_connection, create_server,
// connect_accepted_socket and datagram endpoints on loopback sockets.
// CPython's blocking client sockets are blocking syscalls here too; a
// blocking connect to a listening socket completes without the loop.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// getsockname is sock.getsockname() as (host, port).
func getsockname(t *testing.T, fd int) (string, int) {
	t.Helper()
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return net.IP(a.Addr[:]).String(), a.Port
	case *syscall.SockaddrInet6:
		return net.IP(a.Addr[:]).String(), a.Port
	}
	t.Fatalf("getsockname: %T", sa)
	return "", 0
}

// clientSocket is socket.socket(family) connected to addr (blocking),
// closed at the end of the test unless closed before.
func clientSocket(t *testing.T, family int, addr syscall.Sockaddr) (fd int, close func(), err error) {
	fd, err = syscall.Socket(family, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	close = func() {
		if !closed {
			closed = true
			syscall.Close(fd)
		}
	}
	t.Cleanup(close)
	return fd, close, syscall.Connect(fd, addr)
}

func loopback4(port int) syscall.Sockaddr {
	return &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}
}

// basetestCreateConnection is _basetest_create_connection.
func basetestCreateConnection(t *testing.T, tk *asyncio.T, pr *myProto, tr aio.Transport, p aio.Protocol, err error, checkSockname bool) error {
	if err != nil {
		return err
	}
	check(t, tr != nil, "a Transport")
	check(t, p == aio.Protocol(pr), "our Protocol")
	check(t, pr.transport == tr, "pr.transport is tr")
	if checkSockname {
		check(t, aio.SockName(tr) != nil, "get_extra_info('sockname')")
	}
	if _, err := pr.done.Await(tk); err != nil {
		return err
	}
	check(t, pr.nbytes > 0, "pr.nbytes > 0")
	tr.Close()
	return nil
}

func TestEvents_test_create_connection(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, false, func(h *httpd) error {
			pr := newMyProto(t, tk)
			tr, p, err := aio.CreateConnection(tk, func() aio.Protocol { return pr }, h.host, h.port)
			return basetestCreateConnection(t, tk, pr, tr, p, err, true)
		})
	})
}

func TestEvents_test_create_unix_connection(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, true, func(h *httpd) error {
			pr := newMyProto(t, tk)
			tr, p, err := aio.CreateUnixConnection(tk, func() aio.Protocol { return pr }, h.path)
			return basetestCreateConnection(t, tk, pr, tr, p, err, true)
		})
	})
}

// serveOne is the common part of test_create_server and
// test_create_unix_server, from the client's connect on.
func serveOne(t *testing.T, tk *asyncio.T, proto *myProto) error {
	if _, err := proto.connected.Await(tk); err != nil {
		return err
	}
	eq(t, proto.state, "CONNECTED")
	for proto.nbytes == 0 { // test_utils.run_until(loop, lambda: proto.nbytes > 0)
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
	}
	eq(t, proto.nbytes, 3)
	return nil
}

func TestEvents_test_create_server(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		server, err := aio.CreateServer(tk, func() aio.Protocol { return proto }, "0.0.0.0", 0)
		if err != nil {
			return err
		}
		eq(t, len(server.Sockets()), 1)
		host, port := getsockname(t, server.Sockets()[0])
		eq(t, host, "0.0.0.0")
		client, closeClient, err := clientSocket(t, syscall.AF_INET, loopback4(port))
		if err != nil {
			return err
		}
		if _, err := syscall.Write(client, []byte("xxx")); err != nil {
			return err
		}
		if err := serveOne(t, tk, proto); err != nil {
			return err
		}
		// extra info is available
		check(t, aio.SockName(proto.transport) != nil, "get_extra_info('sockname')")
		if pn, ok := aio.PeerName(proto.transport).(*net.TCPAddr); check2(t, ok, "peername is a TCP address") {
			eq(t, pn.IP.String(), "127.0.0.1")
		}
		// close connection
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		// the client socket must be closed after to avoid ECONNRESET
		closeClient()
		// close server
		server.Close()
		return server.WaitClosed(tk)
	})
}

// check2 is check that also returns cond.
func check2(t *testing.T, cond bool, what ...any) bool {
	t.Helper()
	check(t, cond, what...)
	return cond
}

func TestEvents_test_create_server_reuse_port(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		for _, reuse := range []bool{false, true} {
			proto := newMyProto(t, tk)
			var opts []aio.Option
			if reuse {
				opts = append(opts, aio.WithReusePort())
			}
			server, err := aio.CreateServer(tk, func() aio.Protocol { return proto }, "0.0.0.0", 0, opts...)
			if reuse && soReusePort < 0 {
				// No SO_REUSEPORT (Solaris, illumos): refused, as asyncio
				// refuses reuse_port=True there.
				var ve *asyncio.ValueError
				check(t, errors.As(err, &ve), "reuse_port=True is a ValueError without SO_REUSEPORT:", err)
				continue
			}
			if err != nil {
				return err
			}
			eq(t, len(server.Sockets()), 1)
			if soReusePort >= 0 {
				v, err := syscall.GetsockoptInt(server.Sockets()[0], syscall.SOL_SOCKET, soReusePort)
				noErr(t, err)
				eq(t, v != 0, reuse, "SO_REUSEPORT with reuse_port=", reuse)
			}
			server.Close()
			if err := server.WaitClosed(tk); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestEvents_test_create_unix_server(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		path := filepath.Join(t.TempDir(), "sock")
		server, err := aio.CreateUnixServer(tk, func() aio.Protocol { return proto }, path)
		if err != nil {
			return err
		}
		eq(t, len(server.Sockets()), 1)
		client, closeClient, err := clientSocket(t, syscall.AF_UNIX, &syscall.SockaddrUnix{Name: path})
		if err != nil {
			return err
		}
		if _, err := syscall.Write(client, []byte("xxx")); err != nil {
			return err
		}
		if err := serveOne(t, tk, proto); err != nil {
			return err
		}
		// close connection
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		closeClient()
		server.Close()
		return server.WaitClosed(tk)
	})
}

func TestEvents_test_create_unix_server_path_socket_error(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		sock, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(sock)
		_, err = aio.CreateUnixServer(tk, func() aio.Protocol { return proto }, "/test", aio.WithSocket(sock))
		isValueError(t, err, "path and sock can not be specified at the same time")
		return nil
	})
}

// createServerSocket is socket.create_server(('0.0.0.0', 0)): a listening
// socket, closed at the end of the test unless a server took it.
func createServerSocket(t *testing.T) int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	noErr(t, syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1))
	noErr(t, syscall.Bind(fd, &syscall.SockaddrInet4{}))
	noErr(t, syscall.Listen(fd, 128))
	return fd
}

func TestEvents_test_create_server_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := asyncio.NewFuture[*myProto](tk)
		sockOb := createServerSocket(t)
		server, err := aio.CreateServer(tk, func() aio.Protocol {
			p := newMyProto(t, tk)
			return &connMadeHook{myProto: p, made: func() { proto.SetResult(p) }}
		}, "", 0, aio.WithSocket(sockOb))
		if err != nil {
			syscall.Close(sockOb)
			return err
		}
		sock := server.Sockets()[0]
		eq(t, sock, sockOb, "sock.fileno() == sock_ob.fileno()")
		host, port := getsockname(t, sock)
		eq(t, host, "0.0.0.0")
		client, closeClient, err := clientSocket(t, syscall.AF_INET, loopback4(port))
		if err != nil {
			return err
		}
		_, err = syscall.Write(client, []byte("xxx"))
		noErr(t, err)
		closeClient()
		server.Close()
		server.AbortClients()
		return server.WaitClosed(tk)
	})
}

// connMadeHook is TestMyProto: MyProto that also calls made when
// connected.
type connMadeHook struct {
	*myProto
	made func()
}

func (p *connMadeHook) ConnectionMade(tr aio.Transport) {
	p.myProto.ConnectionMade(tr)
	p.made()
}

func TestEvents_test_create_server_addr_in_use(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sockOb := createServerSocket(t)
		factory := func() aio.Protocol { return newMyProto(t, tk) }
		server, err := aio.CreateServer(tk, factory, "", 0, aio.WithSocket(sockOb))
		if err != nil {
			syscall.Close(sockOb)
			return err
		}
		host, port := getsockname(t, server.Sockets()[0])
		_, err = aio.CreateServer(tk, factory, host, port)
		check(t, errors.Is(err, syscall.EADDRINUSE), "errno EADDRINUSE: ", err)
		server.Close()
		return server.WaitClosed(tk)
	})
}

// hasIPv6Loopback reports whether this host can bind ::1.
func hasIPv6Loopback() bool {
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrInet6{Addr: [16]byte{15: 1}}) == nil
}

// unusedPort is socket_helper.find_unused_port: a port free a moment ago.
func unusedPort(t *testing.T) int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{}); err != nil {
		t.Fatal(err)
	}
	_, port := getsockname(t, fd)
	return port
}

func TestEvents_test_create_server_dual_stack(t *testing.T) {
	// host None ("" here) listens on every interface of both families:
	// a client reaches it on 127.0.0.1 and on ::1. (CPython skips the
	// test without IPv6; here such a host gets the IPv4 listener only.)
	ipv6 := hasIPv6Loopback()
	run(t, func(tk *asyncio.T) error {
		var protos []*myProto
		factory := func() aio.Protocol {
			p := newMyProto(t, tk)
			protos = append(protos, p)
			return p
		}
		var server *aio.Server
		var port int
		for try := 1; ; try++ {
			port = unusedPort(t)
			var err error
			server, err = aio.CreateServer(tk, factory, "", port)
			if errors.Is(err, syscall.EADDRINUSE) && try < 5 {
				continue
			}
			if err != nil {
				return err
			}
			break
		}
		want := []string{"0.0.0.0"}
		if ipv6 {
			want = append(want, "::")
		}
		var got []string
		for _, fd := range server.Sockets() {
			host, p := getsockname(t, fd)
			got = append(got, host)
			eq(t, p, port, "the port of every listener")
		}
		eq(t, got, want, "listeners")

		connect := func(family int, addr syscall.Sockaddr) error {
			n := len(protos)
			client, closeClient, err := clientSocket(t, family, addr)
			if err != nil {
				return err
			}
			_, err = syscall.Write(client, []byte("xxx"))
			noErr(t, err)
			for len(protos) == n { // the accept runs on the loop
				if err := asyncio.Sleep(tk, 0); err != nil {
					return err
				}
			}
			proto := protos[n]
			if _, err := proto.connected.Await(tk); err != nil {
				return err
			}
			proto.transport.Close()
			closeClient()
			return nil
		}
		if err := connect(syscall.AF_INET, loopback4(port)); err != nil {
			return err
		}
		if ipv6 {
			if err := connect(syscall.AF_INET6, &syscall.SockaddrInet6{Addr: [16]byte{15: 1}, Port: port}); err != nil {
				return err
			}
		}
		server.Close()
		return server.WaitClosed(tk)
	})
}

func TestEvents_test_server_close(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		server, err := aio.CreateServer(tk, func() aio.Protocol { return newMyProto(t, tk) }, "0.0.0.0", 0)
		if err != nil {
			return err
		}
		_, port := getsockname(t, server.Sockets()[0])

		client, closeClient, err := clientSocket(t, syscall.AF_INET, loopback4(port))
		if err != nil {
			return err
		}
		_, err = syscall.Write(client, []byte("xxx"))
		noErr(t, err)
		closeClient()

		server.Close()

		_, closeClient, err = clientSocket(t, syscall.AF_INET, loopback4(port))
		check(t, errors.Is(err, syscall.ECONNREFUSED), "ConnectionRefusedError: ", err)
		closeClient()
		server.AbortClients()
		return server.WaitClosed(tk)
	})
}

// connectAcceptedSocket is test_connect_accepted_socket(server_ssl,
// client_ssl): a client goroutine connects, sends, reads the answer; the
// loop gets the accepted socket.
func connectAcceptedSocket(t *testing.T, serverTLS *tls.Config, clientTLS *tls.Config) {
	l := newLoop(t)
	lsock := createLoopbackListener(t)
	_, port := getsockname(t, lsock)
	message := []byte("test data")
	expectedResponse := []byte("roger")
	var response []byte
	clientDone := make(chan struct{})
	release := l.ExpectExternal()
	go func() {
		defer close(clientDone)
		defer release()
		conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("client: %v", err)
			return
		}
		if clientTLS != nil {
			conn = tls.Client(conn, clientTLS)
		}
		defer conn.Close()
		if _, err := conn.Write(message); err != nil {
			t.Errorf("client: %v", err)
			return
		}
		buf := make([]byte, 99)
		n, err := conn.Read(buf)
		if err != nil {
			t.Errorf("client: %v", err)
			return
		}
		response = buf[:n]
	}()
	conn, _, err := syscall.Accept(lsock)
	if err != nil {
		t.Fatal(err)
	}
	proto := &acceptedProto{myProto: newMyProto(t, l), loop: l, response: expectedResponse}
	var opts []aio.Option
	if serverTLS != nil {
		opts = append(opts, aio.WithTLS(serverTLS))
	}
	noErr(t, l.RunUntilComplete(asyncio.CreateTaskErr(l, func(tk *asyncio.T) error {
		_, _, err := aio.ConnectAcceptedSocket(tk, func() aio.Protocol { return proto }, conn, opts...)
		return err
	})))
	noErr(t, l.RunForever())
	proto.transport.Close()
	<-clientDone
	eq(t, proto.state, "CLOSED")
	eq(t, proto.nbytes, len(message))
	eq(t, string(response), string(expectedResponse))
}

// acceptedProto is test_connect_accepted_socket's MyProto (MyBaseProto,
// which sends nothing when connected): it answers every data with
// "roger" and stops the loop when the connection is lost.
type acceptedProto struct {
	*myProto
	loop     *asyncio.Loop
	response []byte
}

func (p *acceptedProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "CONNECTED"
	p.connected.SetResult(struct{}{})
}

func (p *acceptedProto) DataReceived(data []byte) {
	p.myProto.DataReceived(data)
	p.transport.Write(p.response)
}

func (p *acceptedProto) ConnectionLost(err error) {
	p.myProto.ConnectionLost(err)
	p.loop.CallSoon(p.loop.Stop)
}

// createLoopbackListener is socket.create_server(('127.0.0.1', 0),
// backlog=1), closed at the end of the test.
func createLoopbackListener(t *testing.T) int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	noErr(t, syscall.Bind(fd, loopback4(0)))
	noErr(t, syscall.Listen(fd, 1))
	return fd
}

func TestEvents_test_connect_accepted_socket(t *testing.T) {
	connectAcceptedSocket(t, nil, nil)
}

func TestEvents_test_ssl_connect_accepted_socket(t *testing.T) {
	server, client := testCerts(t)
	connectAcceptedSocket(t, server, client)
}

func TestEvents_test_connect_accepted_socket_ssl_timeout_for_plain_socket(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sock, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(sock)
		_, _, err = aio.ConnectAcceptedSocket(tk, func() aio.Protocol { return newMyProto(t, tk) }, sock,
			aio.WithTLSHandshakeTimeout(supportLoopbackTimeout))
		isValueError(t, err, "ssl_handshake_timeout is only meaningful with ssl")
		return nil
	})
}

// supportLoopbackTimeout is test.support.LOOPBACK_TIMEOUT.
const supportLoopbackTimeout = 10 * time.Second

// findUnusedPort is socket_helper.find_unused_port(): a port that was
// free a moment ago.
func findUnusedPort(t *testing.T) int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	noErr(t, syscall.Bind(fd, loopback4(0)))
	_, port := getsockname(t, fd)
	return port
}

func TestEvents_test_create_connection_local_addr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, false, func(h *httpd) error {
			port := findUnusedPort(t)
			pr := newMyProto(t, tk)
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return pr }, h.host, h.port, aio.WithLocalAddr(h.host, port))
			if err != nil {
				return err
			}
			expected := aio.SockName(pr.transport).(*net.TCPAddr).Port
			eq(t, expected, port)
			tr.Close()
			return nil
		})
	})
}

// fakeLocalResolver is the tests' getaddrinfo replacement: the local
// host's addresses are given, every other name is looked up as usual.
type fakeLocalResolver struct {
	host string
	ips  []net.IP
}

func (r fakeLocalResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if host != r.host {
		return net.DefaultResolver.LookupIPAddr(ctx, host)
	}
	var out []net.IPAddr
	for _, ip := range r.ips {
		out = append(out, net.IPAddr{IP: ip})
	}
	return out, nil
}

func TestEvents_test_create_connection_local_addr_skip_different_family(t *testing.T) {
	// See https://github.com/python/cpython/issues/86508
	port1 := findUnusedPort(t)
	port2 := findUnusedPort(t)
	run(t, func(tk *asyncio.T) error {
		// getaddrinfo of the local address: ::1, then 127.0.0.1
		r := fakeLocalResolver{"local.test", []net.IP{net.IPv6loopback, net.IPv4(127, 0, 0, 1)}}
		_, _, err := aio.CreateConnection(tk, func() aio.Protocol { return newMyProto(t, tk) }, "localhost", port1,
			aio.WithLocalAddr("local.test", port2), aio.WithResolver(r))
		// OSError: each attempt binds to its family's address, and the
		// connect is refused
		check(t, errors.Is(err, syscall.ECONNREFUSED), "OSError: ", err)
		return nil
	})
}

func TestEvents_test_create_connection_local_addr_nomatch_family(t *testing.T) {
	// See https://github.com/python/cpython/issues/86508
	port1 := findUnusedPort(t)
	port2 := findUnusedPort(t)
	run(t, func(tk *asyncio.T) error {
		// getaddrinfo of the local address: ::1 only
		r := fakeLocalResolver{"local.test", []net.IP{net.IPv6loopback}}
		_, _, err := aio.CreateConnection(tk, func() aio.Protocol { return newMyProto(t, tk) }, "localhost", port1,
			aio.WithLocalAddr("local.test", port2), aio.WithResolver(r))
		// OSError: the IPv4 attempt has no local address to bind to (an
		// IPv6 one, if localhost has ::1, is refused)
		check(t, err != nil && strings.Contains(err.Error(), "no matching local address with family=AF_INET found"), "OSError: ", err)
		return nil
	})
}

func TestEvents_test_create_connection_local_addr_in_use(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return withServer(t, tk, false, func(h *httpd) error {
			_, _, err := aio.CreateConnection(tk, func() aio.Protocol { return newMyProto(t, tk) }, h.host, h.port,
				aio.WithLocalAddr(h.host, h.port))
			check(t, errors.Is(err, syscall.EADDRINUSE), "errno EADDRINUSE: ", err)
			check(t, err != nil && strings.Contains(err.Error(), net.JoinHostPort(h.host, strconv.Itoa(h.port))), "the address in the message: ", err)
			return nil
		})
	})
}
