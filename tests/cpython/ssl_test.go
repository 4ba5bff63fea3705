//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_ssl.py (TestSSL). CPython's
// blocking peers (TestThreadedServer, TestThreadedClient: a thread with a
// blocking socket, wrapped in an SSLSocket by starttls) are goroutines
// with a net.Conn, wrapped in crypto/tls here (tcpServer, tcpClient).
// While such a peer runs the loop holds ExpectExternal, so the virtual
// clock does not run ahead of a reply; a peer whose point is to stay
// silent (the handshake timeouts) lets go of it first (release), or is a
// listening socket that nobody serves: then the virtual clock jumps to
// the timeout at once. CPython's real sleeps that "hopefully" fill a TCP
// buffer are explicit signals from the client. test_utils.ONLYCERT and
// simple_server_sslcontext are testCerts's server config; the client
// context that does not verify is its client config. Linux's
// BUF_MULTIPLIER (1024) is used.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

const (
	sslPayloadSize   = 1024 * 100       // TestSSL.PAYLOAD_SIZE
	sslBufMultiplier = 1024             // BUF_MULTIPLIER (Linux)
	sslShortTimeout  = 30 * time.Second // support.SHORT_TIMEOUT
	sslLongTimeout   = 5 * time.Minute  // support.LONG_TIMEOUT
	sslPeerDeadline  = 2 * time.Minute  // the peers' socket timeout: a hang fails instead of blocking for ever
	sslTotalCnt      = 25               // TOTAL_CNT
	sslChunk         = 1024 * 128       // CHUNK
	sslSize          = 32               // SIZE
	sslHello         = "1"              // HELLO_MSG's byte
	sslCorrupt       = "please corrupt the SSL connection"
)

// sslPeer is TestThreadedServer: a listening socket served by a goroutine,
// one client after the other, at most maxClients.
type sslPeer struct {
	ln   net.Listener
	done chan struct{}
	once sync.Once
}

// tcpServer is TestSSL.tcp_server: prog serves each accepted connection
// (closed after it); an error it returns fails the test (_abort_socket_test).
// The loop holds ExpectExternal until the goroutine ends or prog calls
// release. Call stop after the loop is done (the test's cleanup calls it
// too, for a test that ends early).
func tcpServer(t *testing.T, tk *asyncio.T, maxClients int, prog func(c net.Conn, release func()) error) *sslPeer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &sslPeer{ln: ln, done: make(chan struct{})}
	t.Cleanup(p.stop)
	release := tk.Loop().ExpectExternal()
	go func() {
		defer close(p.done)
		defer release()
		for i := 0; i < maxClients; i++ {
			c, err := ln.Accept()
			if err != nil {
				return // stop closed the listener
			}
			c.SetDeadline(time.Now().Add(sslPeerDeadline))
			err = prog(c, release)
			c.Close()
			if err != nil {
				t.Errorf("server: %v", err)
				return
			}
		}
	}()
	return p
}

func (p *sslPeer) host() string { return "127.0.0.1" }
func (p *sslPeer) port() int    { return p.ln.Addr().(*net.TCPAddr).Port }

// stop is SocketThread.stop: the listener closed, the goroutine joined.
func (p *sslPeer) stop() {
	p.once.Do(func() {
		p.ln.Close()
		<-p.done
	})
}

// clients is the list of TestThreadedClients of a test, joined at its end.
type clients struct{ wg sync.WaitGroup }

// tcpClient is TestSSL.tcp_client with the prog of the tests: prog runs
// on a goroutine and the future it returns gets prog's outcome (the
// prog's call_soon_threadsafe(fut.set_result / set_exception)).
func (cs *clients) tcpClient(tk *asyncio.T, prog func() error) *asyncio.Future[struct{}] {
	l := tk.Loop()
	fut := asyncio.NewFuture[struct{}](tk)
	release := l.ExpectExternal()
	cs.wg.Add(1)
	go func() {
		defer cs.wg.Done()
		defer release()
		err := prog()
		l.CallSoonThreadsafe(func() {
			if err != nil {
				fut.SetException(err)
			} else {
				fut.SetResult(struct{}{})
			}
		})
	}()
	return fut
}

// stop joins the clients (client.stop()).
func (cs *clients) stop() { cs.wg.Wait() }

// recvAll is TestSocketWrapper.recv_all: n bytes, or
// ConnectionAbortedError at EOF.
func recvAll(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, syscall.ECONNABORTED
		}
		return nil, err
	}
	return buf, nil
}

// serverTLS is sock.starttls(ctx, server_side=True): the handshake done.
func serverTLS(c net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	tc := tls.Server(c, cfg)
	return tc, tc.Handshake()
}

// unwrap is SSLSocket.unwrap on a blocking socket: close_notify sent, and
// the peer's awaited (a Read that ends with io.EOF, which crypto/tls
// returns only for a close_notify).
func unwrap(tc *tls.Conn) error {
	if err := tc.CloseWrite(); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, tc)
	return err
}

// expectRecv is assertEqual(sock.recv_all(len(want)), want).
func expectRecv(r io.Reader, want []byte) error {
	got, err := recvAll(r, len(want))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("received data differs from what was sent")
	}
	return nil
}

// isSSLError is assertRaises(ssl.SSLError): an error crypto/tls reports,
// a TLS alert received or sent, or a record that is not TLS.
func isSSLError(err error) bool {
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &alert), errors.As(err, &rh):
		return true
	case errors.As(err, &op) && op.Op == "local error":
		return true
	}
	return strings.Contains(err.Error(), "tls: ")
}

// isCertVerificationError is assertRaises(ssl.SSLCertVerificationError).
func isCertVerificationError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	return errors.As(err, &cv) || errors.As(err, &ua)
}

// wait is TestSSL.wait_closed: writer.wait_closed(), a connection error
// ignored.
func waitClosedIgnoringReset(tk *asyncio.T, w *aio.StreamWriter) error {
	err := w.WaitClosed(tk)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED)) {
		return nil
	}
	return err
}

// collected reports whether the value that w points to was collected:
// weakref.ref(x)() is None after support.gc_collect().
func collected[V any](w weak.Pointer[V]) bool {
	for range 3 {
		runtime.GC()
	}
	return w.Value() == nil
}

// sslBaseProto is MyBaseProto: it checks the order of the callbacks.
type sslBaseProto struct {
	transport aio.Transport
	state     string
	nbytes    int
	connected *asyncio.Future[struct{}]
	done      *asyncio.Future[struct{}]
	bad       []string
}

func newSSLBaseProto(tk *asyncio.T) *sslBaseProto {
	return &sslBaseProto{state: "INITIAL", connected: asyncio.NewFuture[struct{}](tk), done: asyncio.NewFuture[struct{}](tk)}
}

func (p *sslBaseProto) expect(states ...string) {
	for _, s := range states {
		if p.state == s {
			return
		}
	}
	p.bad = append(p.bad, "state "+p.state+", want one of "+strings.Join(states, " "))
}

func (p *sslBaseProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.expect("INITIAL")
	p.state = "CONNECTED"
	p.connected.SetResult(struct{}{})
}

func (p *sslBaseProto) DataReceived(d []byte) {
	p.expect("CONNECTED")
	p.nbytes += len(d)
}

func (p *sslBaseProto) EOFReceived() bool {
	p.expect("CONNECTED")
	p.state = "EOF"
	return false
}

func (p *sslBaseProto) ConnectionLost(error) {
	p.expect("CONNECTED", "EOF")
	p.state = "CLOSED"
	p.done.SetResult(struct{}{})
}

func TestSSL_test_create_server_ssl_1(t *testing.T) {
	aData := bytes.Repeat([]byte("A"), 1024*sslBufMultiplier)
	bData := bytes.Repeat([]byte("B"), 1024*sslBufMultiplier)
	sslctx, clientSSLCtx := testCerts(t)
	var cs clients
	cnt := 0
	run(t, func(tk *asyncio.T) error {
		handleClient := func(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			data, err := r.ReadExactly(tk, len(aData))
			if err != nil {
				return err
			}
			check(t, bytes.Equal(data, aData), "data == A_DATA")
			w.Write([]byte("OK"))
			data, err = r.ReadExactly(tk, len(bData))
			if err != nil {
				return err
			}
			check(t, bytes.Equal(data, bData), "data == B_DATA")
			w.WriteLines([]byte("SP"), []byte("A"), []byte("M"))
			if err := w.Drain(tk); err != nil {
				return err
			}
			w.Close()
			cnt++
			return nil
		}
		testClient := func(addr string) *asyncio.Future[struct{}] {
			return cs.tcpClient(tk, func() error {
				c, err := tls.Dial("tcp4", addr, clientSSLCtx)
				if err != nil {
					return err
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(sslPeerDeadline))
				if _, err := c.Write(aData); err != nil {
					return err
				}
				if err := expectRecv(c, []byte("OK")); err != nil {
					return err
				}
				if _, err := c.Write(bData); err != nil {
					return err
				}
				return expectRecv(c, []byte("SPAM"))
			})
		}
		srv, err := aio.StartServer(tk, handleClient, "127.0.0.1", 0,
			aio.WithTLS(sslctx), aio.WithTLSHandshakeTimeout(sslShortTimeout))
		if err != nil {
			return err
		}
		check(t, len(srv.Addrs()) > 0, "srv.sockets")
		var tasks []asyncio.AwaitableOf[struct{}]
		for range sslTotalCnt {
			tasks = append(tasks, testClient(srv.Addr().String()))
		}
		_, gerr := asyncio.WaitFor(tk, sslLongTimeout, asyncio.Gather(tk, tasks...))
		tk.Loop().CallSoon(func() { srv.Close() })
		noErr(t, srv.WaitClosed(tk))
		return gerr
	})
	cs.stop()
	eq(t, cnt, sslTotalCnt)
}

// sslClientServer is test_create_connection_ssl_1's server prog.
func sslEchoABServer(sslctx *tls.Config, aData, bData []byte) func(c net.Conn, _ func()) error {
	return func(c net.Conn, _ func()) error {
		tc, err := serverTLS(c, sslctx)
		if err != nil {
			return err
		}
		if err := expectRecv(tc, aData); err != nil {
			return err
		}
		tc.Write([]byte("OK"))
		if err := expectRecv(tc, bData); err != nil {
			return err
		}
		tc.Write([]byte("SPAM"))
		return tc.Close()
	}
}

func TestSSL_test_create_connection_ssl_1(t *testing.T) {
	aData := bytes.Repeat([]byte("A"), 1024*sslBufMultiplier)
	bData := bytes.Repeat([]byte("B"), 1024*sslBufMultiplier)
	sslctx, clientSSLCtx := testCerts(t)
	cnt := 0
	exchange := func(tk *asyncio.T, reader *aio.StreamReader, writer *aio.StreamWriter) error {
		writer.Write(aData)
		data, err := reader.ReadExactly(tk, 2)
		noErr(t, err)
		eq(t, string(data), "OK")
		writer.Write(bData)
		data, err = reader.ReadExactly(tk, 4)
		noErr(t, err)
		eq(t, string(data), "SPAM")
		cnt++
		writer.Close()
		return waitClosedIgnoringReset(tk, writer)
	}
	client := func(srv *sslPeer) func(tk *asyncio.T) (struct{}, error) {
		return fn0(func(tk *asyncio.T) error {
			reader, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(),
				aio.WithTLS(clientSSLCtx), aio.WithTLSHandshakeTimeout(sslShortTimeout))
			if err != nil {
				return err
			}
			return exchange(tk, reader, writer)
		})
	}
	clientSock := func(srv *sslPeer) func(tk *asyncio.T) (struct{}, error) {
		return fn0(func(tk *asyncio.T) error {
			sock, err := aio.NewSocket("tcp4")
			if err != nil {
				return err
			}
			if err := aio.SockConnect(tk, sock, srv.ln.Addr()); err != nil {
				syscall.Close(sock)
				return err
			}
			reader, writer, err := aio.OpenConnection(tk, "", 0, aio.WithSocket(sock), aio.WithTLS(clientSSLCtx))
			if err != nil {
				return err
			}
			return exchange(tk, reader, writer)
		})
	}
	for _, coro := range []func(*sslPeer) func(*asyncio.T) (struct{}, error){client, clientSock} {
		cnt = 0
		var srv *sslPeer
		run(t, func(tk *asyncio.T) error {
			tk.Loop().SetExceptionHandler(nil)
			srv = tcpServer(t, tk, sslTotalCnt, sslEchoABServer(sslctx, aData, bData))
			var fns []func(*asyncio.T) (struct{}, error)
			for range sslTotalCnt {
				fns = append(fns, coro(srv))
			}
			_, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
			return err
		})
		srv.stop()
		eq(t, cnt, sslTotalCnt)
	}
}

// silentServer is a listening socket that nobody serves: the kernel
// completes the connection and keeps what the client sends, and no reply
// ever comes (the server prog `sock.recv_all(1024 * 1024)`). serverAborted
// accepts the connection afterwards and reports whether it ended
// (recv_all's ConnectionAbortedError).
type silentServer struct{ ln net.Listener }

func newSilentServer(t *testing.T) *silentServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &silentServer{ln: ln}
}

func (s *silentServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *silentServer) serverAborted(t *testing.T) bool {
	t.Helper()
	s.ln.(*net.TCPListener).SetDeadline(time.Now().Add(sslPeerDeadline))
	c, err := s.ln.Accept()
	if err != nil {
		t.Errorf("accept: %v", err)
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(sslPeerDeadline))
	_, err = recvAll(c, 1024*1024)
	return errors.Is(err, syscall.ECONNABORTED)
}

func TestSSL_test_create_connection_ssl_slow_handshake(t *testing.T) {
	_, clientSSLCtx := testCerts(t)
	srv := newSilentServer(t)
	run(t, func(tk *asyncio.T) error {
		tk.Loop().SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
		_, writer, err := aio.OpenConnection(tk, "127.0.0.1", srv.port(),
			aio.WithTLS(clientSSLCtx), aio.WithTLSHandshakeTimeout(time.Second))
		if err == nil {
			writer.Close()
			waitClosedIgnoringReset(tk, writer)
		}
		check(t, errors.Is(err, syscall.ECONNABORTED), "ConnectionAbortedError: ", err)
		raisesRegexText(t, err, `SSL handshake.*is taking longer`)
		return nil
	})
	check(t, srv.serverAborted(t), "the server side saw the connection end")
}

// raisesRegexText is the regex half of assertRaisesRegex.
func raisesRegexText(t *testing.T, err error, pattern string) {
	t.Helper()
	if err == nil || !regexp.MustCompile(pattern).MatchString(err.Error()) {
		t.Errorf("error %v does not match %q", err, pattern)
	}
}

func TestSSL_test_create_connection_ssl_failed_certificate(t *testing.T) {
	sslctx, _ := testCerts(t)
	clientSSLCtx := &tls.Config{} // create_default_context(): verifies
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		tk.Loop().SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
		srv = tcpServer(t, tk, 1, func(c net.Conn, _ func()) error {
			serverTLS(c, sslctx) // ssl.SSLError or OSError: passed
			return nil
		})
		_, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(),
			aio.WithTLS(clientSSLCtx), aio.WithTLSHandshakeTimeout(sslShortTimeout))
		if err == nil {
			writer.Close()
			waitClosedIgnoringReset(tk, writer)
		}
		check(t, isCertVerificationError(err), "SSLCertVerificationError: ", err)
		return nil
	})
	srv.stop()
}

func TestSSL_test_ssl_handshake_timeout(t *testing.T) {
	_, clientSSLCtx := testCerts(t)
	srv := newSilentServer(t)
	var messages recorder
	run(t, func(tk *asyncio.T) error {
		messages.handle(tk.Loop())
		_, err := asyncio.WaitFor(tk, 500*ms, asyncio.CreateTask(tk, func(tk *asyncio.T) (aio.Transport, error) {
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return aio.BaseProtocol{} }, "127.0.0.1", srv.port(),
				aio.WithTLS(clientSSLCtx), aio.WithTLSHandshakeTimeout(10*time.Second))
			return tr, err
		}))
		raises(t, err, "TimeoutError")
		return nil
	})
	check(t, srv.serverAborted(t), "server_side_aborted")
	// Python issue #23197: cancelling a handshake must not raise an
	// exception or log an error, even if the handshake failed
	eq(t, messages.messages(), []string(nil))
}

func TestSSL_test_ssl_handshake_connection_lost(t *testing.T) {
	_, clientSSLCtx := testCerts(t)
	connectionMadeCalled, connectionLostCalled := false, false
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		tk.Loop().SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
		srv = tcpServer(t, tk, 1, func(c net.Conn, _ func()) error {
			c.Read(make([]byte, 1024))
			return nil // break the connection during handshake
		})
		_, _, err := aio.CreateConnection(tk, func() aio.Protocol {
			return &funcProto{
				made: func(aio.Transport) { connectionMadeCalled = true },
				lost: func(error) { connectionLostCalled = true },
			}
		}, srv.host(), srv.port(), aio.WithTLS(clientSSLCtx))
		check(t, errors.Is(err, syscall.ECONNRESET), "ConnectionResetError: ", err)
		return nil
	})
	srv.stop()
	check(t, !connectionLostCalled, "unexpected call to connection_lost()")
	check(t, !connectionMadeCalled, "unexpected call to connection_made()")
}

// funcProto is a Protocol of callbacks (nil: nothing).
type funcProto struct {
	made func(aio.Transport)
	data func([]byte)
	eof  func() bool
	lost func(error)
}

func (p *funcProto) ConnectionMade(tr aio.Transport) {
	if p.made != nil {
		p.made(tr)
	}
}

func (p *funcProto) DataReceived(d []byte) {
	if p.data != nil {
		p.data(d)
	}
}

func (p *funcProto) EOFReceived() bool {
	if p.eof != nil {
		return p.eof()
	}
	return false
}

func (p *funcProto) ConnectionLost(err error) {
	if p.lost != nil {
		p.lost(err)
	}
}

func TestSSL_test_connect_accepted_socket(t *testing.T) {
	// server_ssl=None, client_ssl=None: the method as CPython runs it.
	lsock, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lsock.Close()
	message, expectedResponse := []byte("test data"), []byte("roger")
	var response []byte
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		csock, err := net.Dial("tcp4", lsock.Addr().String())
		if err != nil {
			t.Errorf("Failure in client thread in test_connect_accepted_socket: %v", err)
			return
		}
		defer csock.Close()
		csock.SetDeadline(time.Now().Add(sslPeerDeadline))
		csock.Write(message)
		buf := make([]byte, 99)
		n, _ := csock.Read(buf)
		response = buf[:n]
	}()
	conn, err := lsock.Accept()
	if err != nil {
		t.Fatal(err)
	}
	fd := dupFD(t, conn)
	conn.Close()
	var proto *sslBaseProto
	run(t, func(tk *asyncio.T) error {
		proto = newSSLBaseProto(tk)
		p := &funcProtoOver{sslBaseProto: proto}
		f := asyncio.CreateTask(tk, func(tk *asyncio.T) (aio.Transport, error) {
			tr, _, err := aio.ConnectAcceptedSocket(tk, func() aio.Protocol { return p }, fd)
			return tr, err
		})
		// The client is on a goroutine: the loop waits for it.
		release := tk.Loop().ExpectExternal()
		_, err := proto.done.Await(tk) // connection_lost: loop.stop
		release()
		if err != nil {
			return err
		}
		<-clientDone
		eq(t, proto.state, "CLOSED")
		eq(t, proto.nbytes, len(message))
		eq(t, response, expectedResponse)
		eq(t, proto.bad, []string(nil))
		tr := result[aio.Transport](t, f)
		check(t, tr != nil && aio.TLSConn(tr) == nil, "a plain transport")
		tr.Close()
		return asyncio.Sleep(tk, 100*ms) // let it close
	})
}

// funcProtoOver is test_connect_accepted_socket's MyProto: MyBaseProto
// that answers every data with expected_response.
type funcProtoOver struct{ *sslBaseProto }

func (p *funcProtoOver) DataReceived(d []byte) {
	p.sslBaseProto.DataReceived(d)
	p.transport.Write([]byte("roger"))
}

// dupFD returns a duplicate of c's socket descriptor, which the caller
// owns (a socket accepted outside the loop, as lsock.accept()).
func dupFD(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) })
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// corruptingServer is test_start_tls_client_corrupted_ssl's server: a TLS
// line, one byte read, then bytes that are not TLS on the raw socket.
func corruptingServer(sslctx *tls.Config) func(c net.Conn, _ func()) error {
	return func(c net.Conn, _ func()) error {
		tc, err := serverTLS(c, sslctx)
		if err != nil {
			return nil // ssl.SSLError: passed
		}
		tc.Write([]byte("A\n"))
		if _, err := recvAll(tc, 1); err != nil {
			return nil
		}
		c.Write([]byte(sslCorrupt)) // orig_sock.send
		return nil
	}
}

func TestSSL_test_start_tls_client_corrupted_ssl(t *testing.T) {
	sslctx, clientSSLCtx := testCerts(t)
	var srv *sslPeer
	var res string
	run(t, func(tk *asyncio.T) error {
		tk.Loop().SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
		srv = tcpServer(t, tk, 1, corruptingServer(sslctx))
		reader, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(), aio.WithTLS(clientSSLCtx))
		if err != nil {
			return err
		}
		line, err := reader.ReadLine(tk)
		noErr(t, err)
		eq(t, string(line), "A\n")
		writer.Write([]byte("B"))
		_, err = reader.ReadLine(tk)
		check(t, isSSLError(err), "ssl.SSLError: ", err)
		writer.Close()
		if err := waitClosedIgnoringReset(tk, writer); err != nil && !isSSLError(err) {
			return err
		}
		res = "OK"
		return nil
	})
	srv.stop()
	eq(t, res, "OK")
}

// startTLSServer is test_start_tls_client_reg_proto_1's serve: HELLO in
// clear, then TLS: for each round its bytes sent and HELLO received,
// then end (unwrap, or shutdownRDWR).
func startTLSServer(sslctx *tls.Config, hello []byte, end func(tc *tls.Conn) error, rounds ...string) func(c net.Conn, _ func()) error {
	return func(c net.Conn, _ func()) error {
		if err := expectRecv(c, hello); err != nil {
			return err
		}
		tc, err := serverTLS(c, sslctx)
		if err != nil {
			return err
		}
		for _, r := range rounds {
			if _, err := tc.Write([]byte(r)); err != nil {
				return err
			}
			if err := expectRecv(tc, hello); err != nil {
				return err
			}
		}
		return end(tc)
	}
}

// shutdownRDWR is sock.shutdown(socket.SHUT_RDWR) of an SSLSocket: the
// TCP connection shut down under TLS, no close_notify.
func shutdownRDWR(tc *tls.Conn) error {
	c := tc.NetConn().(*net.TCPConn)
	c.CloseRead()
	return c.CloseWrite()
}

// regProto is the ClientProto of the start_tls tests: on_data, on_eof,
// and connection_made checked to come once.
type regProto struct {
	t       *testing.T
	onData  *asyncio.Future[[]byte]
	onEOF   *asyncio.Future[bool]
	conMade int
	tr      aio.Transport
}

func (p *regProto) ConnectionMade(tr aio.Transport) {
	p.tr = tr
	p.conMade++
	eq(p.t, p.conMade, 1, "connection_made gets called only once")
}
func (p *regProto) DataReceived(d []byte) { p.onData.SetResult(append([]byte(nil), d...)) }
func (p *regProto) EOFReceived() bool     { p.onEOF.SetResult(true); return false }
func (p *regProto) ConnectionLost(error)  {}

func newRegProto(t *testing.T, tk *asyncio.T) *regProto {
	return &regProto{t: t, onData: asyncio.NewFuture[[]byte](tk), onEOF: asyncio.NewFuture[bool](tk)}
}

func startTLSClientRegProto1(t *testing.T, end func(tc *tls.Conn) error, leakCheck bool) {
	hello := bytes.Repeat([]byte(sslHello), sslPayloadSize)
	serverContext, clientContext := testCerts(t)
	ref := weak.Make(clientContext)
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		srv = tcpServer(t, tk, 10, startTLSServer(serverContext, hello, end, "O"))
		_, err := asyncio.WaitFor(tk, sslShortTimeout, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			proto := newRegProto(t, tk)
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return proto }, srv.host(), srv.port())
			if err != nil {
				return err
			}
			tr.Write(hello)
			newTr, err := aio.StartTLS(tk, tr, proto, clientContext, false, "")
			if err != nil {
				return err
			}
			data, err := proto.onData.Await(tk)
			noErr(t, err)
			eq(t, string(data), "O")
			newTr.Write(hello)
			if _, err := proto.onEOF.Await(tk); err != nil {
				return err
			}
			newTr.Close()
			return nil
		})))
		return err
	})
	srv.stop()
	if leakCheck {
		clientContext = nil
		// No garbage is left if SSL is closed uncleanly
		check(t, collected(ref), "client_context collected")
	}
}

func TestSSL_test_start_tls_client_reg_proto_1(t *testing.T) {
	startTLSClientRegProto1(t, unwrap, false)
}

// memoryLeakServer is test_create_connection_memory_leak's serve.
func memoryLeakServer(sslctx *tls.Config, hello []byte, end func(tc *tls.Conn) error) func(c net.Conn, _ func()) error {
	return func(c net.Conn, _ func()) error {
		tc, err := serverTLS(c, sslctx)
		if err != nil {
			return err
		}
		tc.Write([]byte("O"))
		if err := expectRecv(tc, hello); err != nil {
			return err
		}
		return end(tc)
	}
}

func createConnectionMemoryLeak(t *testing.T, end func(tc *tls.Conn) error) {
	hello := bytes.Repeat([]byte(sslHello), sslPayloadSize)
	serverContext, clientContext := testCerts(t)
	var srv *sslPeer
	ref := weak.Make(clientContext)
	run(t, func(tk *asyncio.T) error {
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		srv = tcpServer(t, tk, 10, memoryLeakServer(serverContext, hello, end))
		_, err := asyncio.WaitFor(tk, sslShortTimeout, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			proto := newRegProto(t, tk) // XXX: We assume user stores the transport in protocol
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return proto }, srv.host(), srv.port(), aio.WithTLS(clientContext))
			if err != nil {
				return err
			}
			data, err := proto.onData.Await(tk)
			noErr(t, err)
			eq(t, string(data), "O")
			tr.Write(hello)
			if _, err := proto.onEOF.Await(tk); err != nil {
				return err
			}
			tr.Close()
			return nil
		})))
		return err
	})
	srv.stop()
	clientContext = nil
	// No garbage is left for SSL client from loop.create_connection, even
	// if user stores the SSLTransport in corresponding protocol instance
	check(t, collected(ref), "client_context collected")
}

func TestSSL_test_create_connection_memory_leak(t *testing.T) {
	createConnectionMemoryLeak(t, unwrap)
}

// bufProtoFirst is ClientProtoFirst: a BufferedProtocol of a one-byte
// buffer.
type bufProtoFirst struct {
	aio.BaseProtocol
	onData  *asyncio.Future[[]byte]
	buf     []byte
	conMade *int
	bad     []int
}

func (p *bufProtoFirst) ConnectionMade(aio.Transport) { *p.conMade++ }
func (p *bufProtoFirst) GetBuffer(int) []byte         { return p.buf }
func (p *bufProtoFirst) BufferUpdated(n int) {
	if n != 1 {
		p.bad = append(p.bad, n)
	}
	p.onData.SetResult(append([]byte(nil), p.buf[:n]...))
}

// regProtoCounting is ClientProtoSecond: regProto counting
// connection_made in the test's counter.
type regProtoCounting struct {
	*regProto
	conMade *int
}

func (p *regProtoCounting) ConnectionMade(aio.Transport) { *p.conMade++ }

func startTLSClientBufProto1(t *testing.T, unwrapAtEnd bool) {
	hello := bytes.Repeat([]byte(sslHello), sslPayloadSize)
	serverContext, clientContext := testCerts(t)
	clientConMadeCalls := 0
	var srv *sslPeer
	var first *bufProtoFirst
	run(t, func(tk *asyncio.T) error {
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		end := unwrap
		if !unwrapAtEnd {
			end = shutdownRDWR
		}
		serve := startTLSServer(serverContext, hello, end, "O", "2")
		srv = tcpServer(t, tk, 10, serve)
		_, err := asyncio.WaitFor(tk, sslLongTimeout, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			onData1 := asyncio.NewFuture[[]byte](tk)
			first = &bufProtoFirst{onData: onData1, buf: make([]byte, 1), conMade: &clientConMadeCalls}
			tr, proto, err := aio.CreateConnection(tk, func() aio.Protocol { return first }, srv.host(), srv.port())
			if err != nil {
				return err
			}
			tr.Write(hello)
			newTr, err := aio.StartTLS(tk, tr, proto, clientContext, false, "")
			if err != nil {
				return err
			}
			data, err := onData1.Await(tk)
			noErr(t, err)
			eq(t, string(data), "O")
			newTr.Write(hello)
			second := &regProtoCounting{regProto: newRegProto(t, tk), conMade: &clientConMadeCalls}
			newTr.SetProtocol(second)
			data, err = second.onData.Await(tk)
			noErr(t, err)
			eq(t, string(data), "2")
			newTr.Write(hello)
			if _, err := second.onEOF.Await(tk); err != nil {
				return err
			}
			newTr.Close()
			// connection_made() should be called only once -- when we
			// establish connection for the first time. Start TLS doesn't
			// call connection_made() on application protocols.
			eq(t, clientConMadeCalls, 1)
			return nil
		})))
		return err
	})
	srv.stop()
	eq(t, first.bad, []int(nil), "buffer_updated(1)")
}

func TestSSL_test_start_tls_client_buf_proto_1(t *testing.T) { startTLSClientBufProto1(t, true) }

func startTLSSlowClientCancel(t *testing.T) {
	hello := bytes.Repeat([]byte(sslHello), sslPayloadSize)
	_, clientContext := testCerts(t)
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		l := tk.Loop()
		serverWaitsOnHandshake := asyncio.NewFuture[struct{}](tk)
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		srv = tcpServer(t, tk, 10, func(c net.Conn, release func()) error {
			if err := expectRecv(c, hello); err != nil {
				return err
			}
			l.CallSoonThreadsafe(func() { serverWaitsOnHandshake.SetResult(struct{}{}) })
			// From here the server is silent: the virtual clock may
			// run to the client's timeout.
			release()
			_, err := recvAll(c, 1024*1024)
			if err != nil && !errors.Is(err, syscall.ECONNABORTED) {
				return err
			}
			return nil
		})
		_, err := asyncio.WaitFor(tk, sslShortTimeout, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			proto := newRegProto(t, tk)
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return proto }, srv.host(), srv.port())
			if err != nil {
				return err
			}
			tr.Write(hello)
			if _, err := serverWaitsOnHandshake.Await(tk); err != nil {
				return err
			}
			_, err = asyncio.WaitFor(tk, 500*ms, asyncio.CreateTask(tk, func(tk *asyncio.T) (aio.Transport, error) {
				return aio.StartTLS(tk, tr, proto, clientContext, false, "")
			}))
			raises(t, err, "TimeoutError")
			return nil
		})))
		return err
	})
	srv.stop()
}

func TestSSL_test_start_tls_slow_client_cancel(t *testing.T) { startTLSSlowClientCancel(t) }

// startTLSServerProto is test_start_tls_server_1's ServerProto.
type startTLSServerProto struct {
	onCon      *asyncio.Future[aio.Transport]
	onEOF      *asyncio.Future[int]
	onConLost  *asyncio.Future[struct{}]
	onGotHello *asyncio.Future[struct{}]
	helloLen   int
	data       []byte
	transport  aio.Transport
}

func (p *startTLSServerProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.onCon.SetResult(tr)
}

func (p *startTLSServerProto) DataReceived(d []byte) {
	p.data = append(p.data, d...)
	if p.onGotHello != nil && len(p.data) >= p.helloLen && !p.onGotHello.Done() {
		p.onGotHello.SetResult(struct{}{})
	}
}

func (p *startTLSServerProto) EOFReceived() bool {
	if p.onEOF != nil {
		p.onEOF.SetResult(1)
	}
	return false
}

func (p *startTLSServerProto) ConnectionLost(err error) {
	p.transport = nil
	if err == nil {
		p.onConLost.SetResult(struct{}{})
	} else {
		p.onConLost.SetException(err)
	}
}

func TestSSL_test_start_tls_server_1(t *testing.T) {
	hello := bytes.Repeat([]byte(sslHello), sslPayloadSize)
	serverContext, clientContext := testCerts(t)
	var cs clients
	run(t, func(tk *asyncio.T) error {
		proto := &startTLSServerProto{onCon: asyncio.NewFuture[aio.Transport](tk), onEOF: asyncio.NewFuture[int](tk), onConLost: asyncio.NewFuture[struct{}](tk)}
		server, err := aio.CreateServer(tk, func() aio.Protocol { return proto }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		addr := server.Addr().String()
		clientDone := cs.tcpClient(tk, func() error {
			c, err := net.Dial("tcp4", addr)
			if err != nil {
				return err
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(sslPeerDeadline))
			if err := expectRecv(c, hello); err != nil {
				return err
			}
			tc := tls.Client(c, clientContext)
			if _, err := tc.Write(hello); err != nil {
				return err
			}
			return unwrap(tc)
		})
		_, err = asyncio.WaitFor(tk, sslLongTimeout, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			tr, err := proto.onCon.Await(tk)
			if err != nil {
				return err
			}
			tr.Write(hello)
			eq(t, len(proto.data), 0)
			newTr, err := aio.StartTLS(tk, tr, proto, serverContext, true, "", aio.WithTLSHandshakeTimeout(sslLongTimeout))
			if err != nil {
				return err
			}
			if _, err := proto.onEOF.Await(tk); err != nil {
				return err
			}
			if _, err := proto.onConLost.Await(tk); err != nil {
				return err
			}
			check(t, bytes.Equal(proto.data, hello), "proto.data == HELLO_MSG")
			newTr.Close()
			return nil
		})))
		noErr(t, err)
		_, err = clientDone.Await(tk)
		noErr(t, err, "client")
		server.Close()
		return server.WaitClosed(tk)
	})
	cs.stop()
}

func TestSSL_test_shutdown_cleanly(t *testing.T) {
	aData := bytes.Repeat([]byte("A"), 1024*sslBufMultiplier)
	sslctx, clientSSLCtx := testCerts(t)
	cnt := 0
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		srv = tcpServer(t, tk, sslTotalCnt, func(c net.Conn, _ func()) error {
			tc, err := serverTLS(c, sslctx)
			if err != nil {
				return err
			}
			if err := expectRecv(tc, aData); err != nil {
				return err
			}
			tc.Write([]byte("OK"))
			return unwrap(tc)
		})
		client := fn0(func(tk *asyncio.T) error {
			reader, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(),
				aio.WithTLS(clientSSLCtx), aio.WithTLSHandshakeTimeout(sslShortTimeout))
			if err != nil {
				return err
			}
			writer.Write(aData)
			data, err := reader.ReadExactly(tk, 2)
			noErr(t, err)
			eq(t, string(data), "OK")
			data, err = reader.Read(tk, -1)
			noErr(t, err)
			eq(t, string(data), "")
			cnt++
			writer.Close()
			return waitClosedIgnoringReset(tk, writer)
		})
		var fns []func(*asyncio.T) (struct{}, error)
		for range sslTotalCnt {
			fns = append(fns, client)
		}
		_, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		return err
	})
	srv.stop()
	eq(t, cnt, sslTotalCnt)
}

func TestSSL_test_flush_before_shutdown(t *testing.T) {
	// CPython pauses the SSL protocol's writing (a private object) so
	// that what is written stays buffered in it when close() comes, and
	// the server sleeps so that the TCP buffers fill. Here the writes go
	// to the raw transport's buffer, and the server reads nothing more
	// until the client has closed: what Close finds buffered must all
	// reach the server before the connection ends.
	sslctx, clientSSLCtx := testCerts(t)
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		future := asyncio.NewFuture[struct{}](tk)
		closed := make(chan struct{})
		l := tk.Loop()
		srv = tcpServer(t, tk, 1, func(c net.Conn, _ func()) error {
			err := func() error {
				tc, err := serverTLS(c, sslctx)
				if err != nil {
					return err
				}
				if err := expectRecv(tc, []byte("ping")); err != nil {
					return err
				}
				tc.Write([]byte("pong"))
				<-closed // the client wrote everything and closed
				data, err := recvAll(tc, sslChunk*sslSize)
				if err != nil {
					return err
				}
				if len(data) != sslChunk*sslSize {
					return errors.New("short data")
				}
				return nil
			}()
			l.CallSoonThreadsafe(func() {
				if err != nil {
					future.SetException(err)
				} else {
					future.SetResult(struct{}{})
				}
			})
			return nil
		})
		reader, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(), aio.WithTLS(clientSSLCtx))
		if err != nil {
			close(closed)
			return err
		}
		writer.Write([]byte("ping"))
		data, err := reader.ReadExactly(tk, 4)
		noErr(t, err)
		eq(t, string(data), "pong")
		for range sslSize {
			writer.Write(bytes.Repeat([]byte("x"), sslChunk))
		}
		writer.Close()
		close(closed)
		noErr(t, waitClosedIgnoringReset(tk, writer))
		data, err = reader.Read(tk, -1)
		if !errors.Is(err, syscall.ECONNRESET) {
			noErr(t, err)
			eq(t, string(data), "")
		}
		_, err = future.Await(tk)
		return err
	})
	srv.stop()
}

func TestSSL_test_remote_shutdown_receives_trailing_data(t *testing.T) {
	// CPython fills the SSL protocol's write backlog through a private
	// hook (_test__append_write_backlog) and lets the server sleep until
	// it is full. Here the client writes the same data through the public
	// API while the server waits; it then signals the server, which
	// shuts down (close_notify, or a TCP EOF) and must still receive all
	// of it.
	sslctx, clientSSLCtx := testCerts(t)
	server := func(tc *tls.Conn, c net.Conn) error {
		// send close_notify but don't wait for response
		if err := tc.CloseWrite(); err != nil {
			return err
		}
		// should receive all data; verify that close_notify is received
		// (io.ReadAll ends without error only on a close_notify)
		data, err := io.ReadAll(tc)
		if err != nil {
			return err
		}
		if len(data) != sslChunk*sslSize {
			return errors.New("short data")
		}
		return nil
	}
	eofServer := func(tc *tls.Conn, c net.Conn) error {
		// send EOF
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			return err
		}
		// should receive all data
		_, err := recvAll(tc, sslChunk*sslSize)
		return err
	}
	for _, meth := range []func(*tls.Conn, net.Conn) error{server, eofServer} {
		var srv *sslPeer
		run(t, func(tk *asyncio.T) error {
			future := asyncio.NewFuture[struct{}](tk)
			filled := make(chan struct{})
			l := tk.Loop()
			srv = tcpServer(t, tk, 1, func(c net.Conn, _ func()) error {
				err := func() error {
					tc, err := serverTLS(c, sslctx)
					if err != nil {
						return err
					}
					if err := expectRecv(tc, []byte("ping")); err != nil {
						return err
					}
					tc.Write([]byte("pong"))
					<-filled // wait for the peer to fill its backlog
					return meth(tc, c)
				}()
				l.CallSoonThreadsafe(func() {
					if err != nil {
						future.SetException(err)
					} else {
						future.SetResult(struct{}{})
					}
				})
				return nil
			})
			reader, writer, err := aio.OpenConnection(tk, srv.host(), srv.port(), aio.WithTLS(clientSSLCtx))
			if err != nil {
				close(filled)
				return err
			}
			writer.Write([]byte("ping"))
			data, err := reader.ReadExactly(tk, 4)
			noErr(t, err)
			eq(t, string(data), "pong")
			for range sslSize {
				writer.Write(bytes.Repeat([]byte("x"), sslChunk))
			}
			close(filled)
			data, err = reader.Read(tk, -1)
			if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
				noErr(t, err)
				eq(t, string(data), "")
			}
			if _, err := future.Await(tk); err != nil {
				return err
			}
			writer.Close()
			return waitClosedIgnoringReset(tk, writer)
		})
		srv.stop()
	}
}

func TestSSL_test_handshake_timeout_handler_leak(t *testing.T) {
	// A listening socket that never accepts: the handshake never ends.
	srv := newSilentServer(t)
	ctx := &tls.Config{} // ssl.create_default_context()
	ref := weak.Make(ctx)
	run(t, func(tk *asyncio.T) error {
		_, err := asyncio.WaitFor(tk, 100*ms, asyncio.CreateTask(tk, func(tk *asyncio.T) (aio.Transport, error) {
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return aio.BaseProtocol{} }, "127.0.0.1", srv.port(), aio.WithTLS(ctx))
			return tr, err
		}))
		check(t, errors.Is(err, syscall.ECONNREFUSED) || isClass(err, "TimeoutError"), "TimeoutError is not raised: ", err)
		return nil
	})
	ctx = nil
	// SSLProtocol should be DECREF to 0
	check(t, collected(ref), "ctx collected")
}

func TestSSL_test_shutdown_timeout_handler_leak(t *testing.T) {
	sslctx, clientCtx := testCerts(t)
	ctx := clientCtx
	clientCtx = nil
	ref := weak.Make(ctx)
	var srv *sslPeer
	run(t, func(tk *asyncio.T) error {
		srv = tcpServer(t, tk, 10, func(c net.Conn, _ func()) error {
			tc, err := serverTLS(c, sslctx)
			if err != nil {
				return err
			}
			tc.Read(make([]byte, 32))
			return nil
		})
		fut := asyncio.NewFuture[struct{}](tk)
		tr, _, err := aio.CreateConnection(tk, func() aio.Protocol {
			return &funcProto{lost: func(error) { fut.SetResult(struct{}{}) }}
		}, srv.host(), srv.port(), aio.WithTLS(ctx))
		if err != nil {
			return err
		}
		tr.Close()
		_, err = fut.Await(tk)
		return err
	})
	srv.stop()
	ctx = nil
	// SSLProtocol should be DECREF to 0
	check(t, collected(ref), "ctx collected")
}

func TestSSL_test_shutdown_timeout_handler_not_set(t *testing.T) {
	sslctx, clientCtx := testCerts(t)
	var srv *sslPeer
	var extra []byte
	run(t, func(tk *asyncio.T) error {
		l := tk.Loop()
		eof := asyncio.NewEvent()
		srv = tcpServer(t, tk, 10, func(c net.Conn, _ func()) error {
			tc, err := serverTLS(c, sslctx)
			if err != nil {
				return err
			}
			tc.Write([]byte("hello"))
			buf := make([]byte, 1024)
			n, err := tc.Read(buf)
			if err != nil || string(buf[:n]) != "world" {
				return errors.New("want world, got " + string(buf[:n]))
			}
			tc.Write([]byte("extra bytes"))
			// sending EOF here
			c.(*net.TCPConn).CloseWrite()
			l.CallSoonThreadsafe(eof.Set)
			// make sure we have enough time to reproduce the issue
			n, err = tc.Read(buf)
			if n != 0 || (err != io.EOF && err != io.ErrUnexpectedEOF) {
				return errors.New("want b'', got " + string(buf[:n]))
			}
			return nil
		})
		fut := asyncio.NewFuture[struct{}](tk)
		var transport aio.Transport
		proto := &funcProto{
			made: func(tr aio.Transport) { transport = tr },
			data: func(d []byte) {
				if string(d) == "hello" {
					transport.Write([]byte("world"))
					// pause reading would make incoming data stay in the sslobj
					transport.PauseReading()
				} else {
					extra = append([]byte(nil), d...)
				}
			},
			lost: func(err error) {
				if err == nil {
					fut.SetResult(struct{}{})
				} else {
					fut.SetException(err)
				}
			},
		}
		tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return proto }, srv.host(), srv.port(), aio.WithTLS(clientCtx))
		if err != nil {
			return err
		}
		if err := eof.Wait(tk); err != nil {
			return err
		}
		tr.ResumeReading()
		if _, err := fut.Await(tk); err != nil {
			return err
		}
		tr.Close()
		eq(t, string(extra), "extra bytes")
		return nil
	})
	srv.stop()
}

func TestSSL_test_create_server_ssl_over_ssl(t *testing.T) {
	aData := bytes.Repeat([]byte("A"), 1024*sslBufMultiplier)
	bData := bytes.Repeat([]byte("B"), 1024*sslBufMultiplier)
	sslctx1, clientSSLCtx1 := testCerts(t)
	sslctx2, clientSSLCtx2 := testCerts(t)
	var cs clients
	cnt := 0
	run(t, func(tk *asyncio.T) error {
		handleClient := func(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			data, err := r.ReadExactly(tk, len(aData))
			if err != nil {
				return err
			}
			check(t, bytes.Equal(data, aData), "data == A_DATA")
			w.Write([]byte("OK"))
			data, err = r.ReadExactly(tk, len(bData))
			if err != nil {
				return err
			}
			check(t, bytes.Equal(data, bData), "data == B_DATA")
			w.WriteLines([]byte("SP"), []byte("A"), []byte("M"))
			if err := w.Drain(tk); err != nil {
				return err
			}
			w.Close()
			cnt++
			return nil
		}
		// ServerProtocol: a StreamReaderProtocol whose connection_made
		// pauses the outer TLS transport, upgrades it again with
		// start_tls(server_side=True), and only then is the stream
		// protocol's connection_made (with the new transport), which
		// starts handle_client.
		serverProtocolFactory := func() aio.Protocol {
			reader := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
			sp := aio.NewStreamReaderProtocol(reader)
			return &sslOverSSLServerProto{Protocol: sp, made: func(tr aio.Transport) {
				tr.PauseReading()
				asyncio.CreateTask(tk.Loop(), func(st *asyncio.T) (struct{}, error) {
					ntr, err := aio.StartTLS(st, tr, sp, sslctx2, true, "")
					if err != nil {
						sp.ConnectionLost(err)
						return struct{}{}, nil
					}
					sp.ConnectionMade(ntr)
					w := aio.NewStreamWriter(ntr, sp, reader)
					return struct{}{}, handleClient(st, reader, w)
				})
			}}
		}
		testClient := func(addr string) *asyncio.Future[struct{}] {
			return cs.tcpClient(tk, func() error {
				c, err := net.Dial("tcp4", addr)
				if err != nil {
					return err
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(sslPeerDeadline))
				outer := tls.Client(c, clientSSLCtx1) // sock.starttls(client_sslctx_1)
				if err := outer.Handshake(); err != nil {
					return err
				}
				// The second level over the first (CPython does it by
				// hand with MemoryBIOs; crypto/tls runs over any
				// net.Conn, a *tls.Conn included).
				inner := tls.Client(outer, clientSSLCtx2)
				if err := inner.Handshake(); err != nil {
					return err
				}
				if _, err := inner.Write(aData); err != nil {
					return err
				}
				if err := expectRecv(inner, []byte("OK")); err != nil {
					return err
				}
				if _, err := inner.Write(bData); err != nil {
					return err
				}
				data, err := io.ReadAll(inner) // read(4) until b''
				if err != nil {
					return err
				}
				if string(data) != "SPAM" {
					return errors.New("received " + string(data) + ", want SPAM")
				}
				inner.CloseWrite() // sslobj.unwrap(): our close_notify, the server's already received
				return nil
			})
		}
		srv, err := aio.CreateServer(tk, serverProtocolFactory, "127.0.0.1", 0, aio.WithTLS(sslctx1))
		if err != nil {
			return err
		}
		check(t, len(srv.Addrs()) > 0, "srv.sockets")
		var tasks []asyncio.AwaitableOf[struct{}]
		for range sslTotalCnt {
			tasks = append(tasks, testClient(srv.Addr().String()))
		}
		_, gerr := asyncio.WaitFor(tk, sslLongTimeout, asyncio.Gather(tk, tasks...))
		tk.Loop().CallSoon(func() { srv.Close() })
		noErr(t, srv.WaitClosed(tk))
		return gerr
	})
	cs.stop()
	eq(t, cnt, sslTotalCnt)
}

// sslOverSSLServerProto is test_create_server_ssl_over_ssl's
// ServerProtocol: the stream protocol, with connection_made replaced.
type sslOverSSLServerProto struct {
	aio.Protocol
	made func(tr aio.Transport)
}

func (p *sslOverSSLServerProto) ConnectionMade(tr aio.Transport) { p.made(tr) }
