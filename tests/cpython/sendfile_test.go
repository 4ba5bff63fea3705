//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_sendfile.py: loop.sock_sendfile
// (aio.SockSendfile) and loop.sendfile (aio.Sendfile). CPython runs
// SendfileTestsBase once per selector; here the loop's selector is the
// platform's, once. asyncio's count=None is count 0 in Go. CPython lowers
// SENDFILE_FALLBACK_READBUFFER_SIZE to 16 KiB for the sock_sendfile
// tests; the Go fallback keeps 256 KiB (nothing here depends on it).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

// sendfileDATA is SendfileBase.DATA: more than Linux buffers in the
// kernel (17 pages of 64 KiB).
var sendfileDATA = bytes.Repeat([]byte("x"), 1024*17*64+1)

// sendfileBufSize is SendfileBase.BUF_SIZE.
const sendfileBufSize = 4 * 1024

// sendfileFile is setUp's `open(TESTFN, 'rb')` of a file holding DATA.
func sendfileFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "sendfile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(sendfileDATA); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return f
}

// tell is file.tell().
func tell(t *testing.T, f *os.File) int64 {
	t.Helper()
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// mySendfileProto is MySendfileProto: it checks the order of the
// callbacks (INITIAL, CONNECTED, EOF, CLOSED) and keeps what it receives;
// with closeAfter it closes its transport once it has that many bytes.
type mySendfileProto struct {
	transport  aio.Transport
	state      string
	nbytes     int
	data       []byte
	closeAfter int
	connected  *asyncio.Future[struct{}]
	done       *asyncio.Future[struct{}]
	bad        []string
}

func newMySendfileProto(tk *asyncio.T, closeAfter int) *mySendfileProto {
	return &mySendfileProto{state: "INITIAL", closeAfter: closeAfter, connected: asyncio.NewFuture[struct{}](tk), done: asyncio.NewFuture[struct{}](tk)}
}

func (p *mySendfileProto) assertState(expected ...string) {
	for _, e := range expected {
		if p.state == e {
			return
		}
	}
	p.bad = append(p.bad, fmt.Sprintf("state: %q, expected: %q", p.state, expected))
}

func (p *mySendfileProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "CONNECTED"
	p.connected.SetResult(struct{}{})
}

func (p *mySendfileProto) EOFReceived() bool {
	p.assertState("CONNECTED")
	p.state = "EOF"
	return false
}

func (p *mySendfileProto) ConnectionLost(error) {
	p.assertState("CONNECTED", "EOF")
	p.state = "CLOSED"
	p.done.SetResult(struct{}{})
}

func (p *mySendfileProto) DataReceived(d []byte) {
	p.assertState("CONNECTED")
	p.nbytes += len(d)
	p.data = append(p.data, d...)
	if p.closeAfter > 0 && p.nbytes >= p.closeAfter {
		p.transport.Close()
	}
}

// sendfileMyProto is test_sendfile.py's MyProto.
type sendfileMyProto struct {
	aio.BaseProtocol
	transport aio.Transport
	data      []byte
	fut       *asyncio.Future[struct{}]
}

func (p *sendfileMyProto) ConnectionMade(tr aio.Transport) { p.transport = tr }
func (p *sendfileMyProto) DataReceived(d []byte)           { p.data = append(p.data, d...) }
func (p *sendfileMyProto) ConnectionLost(error)            { p.fut.SetResult(struct{}{}) }

// prepareSockSendfile is prepare_socksendfile: a server whose protocol
// is proto, and a non-blocking client socket connected to it with a
// small send buffer. cleanup closes the server side and the server.
func prepareSockSendfile(t *testing.T, tk *asyncio.T) (sock int, proto *sendfileMyProto, cleanup func() error) {
	proto = &sendfileMyProto{fut: asyncio.NewFuture[struct{}](tk)}
	srv, err := aio.CreateServer(tk, func() aio.Protocol { return proto }, "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, err = aio.NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	if err := aio.SockConnect(tk, sock, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_SNDBUF, sendfileBufSize)
	return sock, proto, func() error {
		if proto.transport != nil {
			proto.transport.Close()
			if _, err := proto.fut.Await(tk); err != nil {
				return err
			}
		}
		srv.Close()
		return srv.WaitClosed(tk)
	}
}

func TestSendfile_test_sock_sendfile_success(t *testing.T) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		sock, proto, cleanup := prepareSockSendfile(t, tk)
		ret, err := aio.SockSendfile(tk, sock, f, 0, 0, true)
		noErr(t, err)
		unix.Close(sock)
		if _, err := proto.fut.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(len(sendfileDATA)))
		check(t, bytes.Equal(proto.data, sendfileDATA), "proto.data == DATA")
		eq(t, tell(t, f), int64(len(sendfileDATA)))
		return cleanup()
	})
}

func TestSendfile_test_sock_sendfile_with_offset_and_count(t *testing.T) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		sock, proto, cleanup := prepareSockSendfile(t, tk)
		ret, err := aio.SockSendfile(tk, sock, f, 1000, 2000, true)
		noErr(t, err)
		unix.Close(sock)
		if _, err := proto.fut.Await(tk); err != nil {
			return err
		}
		check(t, bytes.Equal(proto.data, sendfileDATA[1000:3000]), "proto.data == DATA[1000:3000]")
		eq(t, tell(t, f), int64(3000))
		eq(t, ret, int64(2000))
		return cleanup()
	})
}

func TestSendfile_test_sock_sendfile_zero_size(t *testing.T) {
	f := sendfileFile(t)
	empty, err := os.CreateTemp(t.TempDir(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	run(t, func(tk *asyncio.T) error {
		sock, proto, cleanup := prepareSockSendfile(t, tk)
		ret, err := aio.SockSendfile(tk, sock, empty, 0, 0, true)
		noErr(t, err)
		unix.Close(sock)
		if _, err := proto.fut.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(0))
		eq(t, tell(t, f), int64(0))
		return cleanup()
	})
}

func TestSendfile_test_sock_sendfile_mix_with_regular_send(t *testing.T) {
	f := sendfileFile(t)
	buf := bytes.Repeat([]byte("mix_regular_send"), 4*1024) // 64 KiB
	run(t, func(tk *asyncio.T) error {
		sock, proto, cleanup := prepareSockSendfile(t, tk)
		noErr(t, aio.SockSendall(tk, sock, buf))
		ret, err := aio.SockSendfile(tk, sock, f, 0, 0, true)
		noErr(t, err)
		noErr(t, aio.SockSendall(tk, sock, buf))
		unix.Close(sock)
		if _, err := proto.fut.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(len(sendfileDATA)))
		expected := append(append(append([]byte(nil), buf...), sendfileDATA...), buf...)
		check(t, bytes.Equal(proto.data, expected), "proto.data == buf + DATA + buf")
		eq(t, tell(t, f), int64(len(sendfileDATA)))
		return cleanup()
	})
}

// sendfilePair is what prepare_sendfile returns, with its cleanup.
type sendfilePair struct {
	srv, cli *mySendfileProto
	server   *aio.Server
}

// listenSocket is prepare_sendfile's srv_sock, bound to a free port of
// 127.0.0.1, with reduce_receive_buffer_size applied: the accepted
// sockets inherit the small receive buffer.
func listenSocket(t *testing.T) int {
	fd, err := aio.NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, sendfileBufSize)
	return fd
}

// prepareSendfile is prepare_sendfile: a server whose protocol closes
// after closeAfter bytes (0: never), and a client transport (TLS with
// isSSL) with a small send buffer and write buffer limit.
func prepareSendfile(t *testing.T, tk *asyncio.T, isSSL bool, closeAfter int) *sendfilePair {
	p := &sendfilePair{srv: newMySendfileProto(tk, closeAfter), cli: newMySendfileProto(tk, 0)}
	var srvOpts, cliOpts []aio.Option
	if isSSL {
		srvCfg, cliCfg := testCerts(t)
		srvOpts, cliOpts = []aio.Option{aio.WithTLS(srvCfg)}, []aio.Option{aio.WithTLS(cliCfg)}
	}
	srvSock := listenSocket(t)
	srv, err := aio.CreateServer(tk, func() aio.Protocol { return p.srv }, "", 0, append(srvOpts, aio.WithSocket(srvSock))...)
	if err != nil {
		t.Fatal(err)
	}
	p.server = srv
	port := srv.Addr().(*net.TCPAddr).Port
	tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return p.cli }, "127.0.0.1", port, cliOpts...)
	if err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, sendfileBufSize)
	if err := tr.SetWriteBufferLimits(sendfileBufSize, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.connected.Await(tk); err != nil {
		t.Fatal(err)
	}
	return p
}

// cleanup is prepare_sendfile's cleanup, and checks the protocols saw
// their callbacks in order.
func (p *sendfilePair) cleanup(t *testing.T, tk *asyncio.T) error {
	p.srv.transport.Close()
	p.cli.transport.Close()
	if _, err := p.srv.done.Await(tk); err != nil {
		return err
	}
	if _, err := p.cli.done.Await(tk); err != nil {
		return err
	}
	p.server.Close()
	eq(t, append(p.srv.bad, p.cli.bad...), []string(nil), "protocol states")
	return p.server.WaitClosed(tk)
}

// The CPython test uses a datagram transport; Sendfile takes a Transport,
// which a DatagramTransport is not, so a write pipe's transport (which
// asyncio does not support either) stands in for it.
func TestSendfile_test_sendfile_not_supported(t *testing.T) {
	f := sendfileFile(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run(t, func(tk *asyncio.T) error {
		wt, _, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return &aio.BaseProtocol{} }, w)
		if err != nil {
			return err
		}
		defer wt.Close()
		_, err = aio.Sendfile(tk, wt.(aio.Transport), f, 0, 0, true)
		raisesRegex(t, err, "*asyncio.RuntimeError", "not supported")
		eq(t, tell(t, f), int64(0))
		return nil
	})
}

// sendfileAll is the common body of test_sendfile and test_sendfile_ssl.
func sendfileAll(t *testing.T, isSSL bool) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, isSSL, 0)
		ret, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		noErr(t, err)
		p.cli.transport.Close()
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(len(sendfileDATA)))
		eq(t, p.srv.nbytes, len(sendfileDATA))
		check(t, bytes.Equal(p.srv.data, sendfileDATA), "srv_proto.data == DATA")
		eq(t, tell(t, f), int64(len(sendfileDATA)))
		return p.cleanup(t, tk)
	})
}

func TestSendfile_test_sendfile(t *testing.T) { sendfileAll(t, false) }

func TestSendfile_test_sendfile_ssl(t *testing.T) { sendfileAll(t, true) }

func TestSendfile_test_sendfile_for_closing_transp(t *testing.T) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, false, 0)
		p.cli.transport.Close()
		_, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		raisesRegex(t, err, "*asyncio.RuntimeError", "is closing")
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		eq(t, p.srv.nbytes, 0)
		eq(t, tell(t, f), int64(0))
		return p.cleanup(t, tk)
	})
}

// sendfilePrePost is the body of test_sendfile_pre_and_post_data and its
// ssl variant.
func sendfilePrePost(t *testing.T, isSSL bool, prefix, suffix []byte) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, isSSL, 0)
		noErr(t, p.cli.transport.Write(prefix))
		ret, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		noErr(t, err)
		noErr(t, p.cli.transport.Write(suffix))
		p.cli.transport.Close()
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(len(sendfileDATA)))
		want := append(append(append([]byte(nil), prefix...), sendfileDATA...), suffix...)
		check(t, bytes.Equal(p.srv.data, want), "srv_proto.data == PREFIX + DATA + SUFFIX")
		eq(t, tell(t, f), int64(len(sendfileDATA)))
		return p.cleanup(t, tk)
	})
}

func TestSendfile_test_sendfile_pre_and_post_data(t *testing.T) {
	sendfilePrePost(t, false, bytes.Repeat([]byte("PREFIX__"), 1024), bytes.Repeat([]byte("--SUFFIX"), 1024))
}

func TestSendfile_test_sendfile_ssl_pre_and_post_data(t *testing.T) {
	sendfilePrePost(t, true, bytes.Repeat([]byte("zxcvbnm"), 1024), bytes.Repeat([]byte("0987654321"), 1024))
}

// sendfilePartial is the body of test_sendfile_partial and its ssl
// variant.
func sendfilePartial(t *testing.T, isSSL bool) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, isSSL, 0)
		ret, err := aio.Sendfile(tk, p.cli.transport, f, 1000, 100, true)
		noErr(t, err)
		p.cli.transport.Close()
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(100))
		eq(t, p.srv.nbytes, 100)
		check(t, bytes.Equal(p.srv.data, sendfileDATA[1000:1100]), "srv_proto.data == DATA[1000:1100]")
		eq(t, tell(t, f), int64(1100))
		return p.cleanup(t, tk)
	})
}

func TestSendfile_test_sendfile_partial(t *testing.T) { sendfilePartial(t, false) }

func TestSendfile_test_sendfile_ssl_partial(t *testing.T) { sendfilePartial(t, true) }

// sendfileClosePeerAfter is the body of
// test_sendfile_close_peer_after_receiving and its ssl variant (which
// does not close the client first).
func sendfileClosePeerAfter(t *testing.T, isSSL bool) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, isSSL, len(sendfileDATA))
		ret, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		noErr(t, err)
		if !isSSL {
			p.cli.transport.Close()
		}
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		eq(t, ret, int64(len(sendfileDATA)))
		eq(t, p.srv.nbytes, len(sendfileDATA))
		check(t, bytes.Equal(p.srv.data, sendfileDATA), "srv_proto.data == DATA")
		eq(t, tell(t, f), int64(len(sendfileDATA)))
		return p.cleanup(t, tk)
	})
}

func TestSendfile_test_sendfile_close_peer_after_receiving(t *testing.T) {
	sendfileClosePeerAfter(t, false)
}

func TestSendfile_test_sendfile_ssl_close_peer_after_receiving(t *testing.T) {
	sendfileClosePeerAfter(t, true)
}

// isConnectionError is assertRaises(ConnectionError): an errno of
// ConnectionError's subclasses (BrokenPipeError, ConnectionResetError,
// ConnectionAbortedError) or ENOTCONN (the ConnectionError asyncio makes
// of it).
func isConnectionError(err error) bool {
	for _, e := range []error{syscall.EPIPE, syscall.ESHUTDOWN, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.ENOTCONN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func TestSendfile_test_sendfile_close_peer_in_the_middle_of_receiving(t *testing.T) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, false, 1024)
		_, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		check(t, isConnectionError(err), "ConnectionError raised: ", err)
		if _, err := p.srv.done.Await(tk); err != nil {
			return err
		}
		// CPython's run_until_complete runs the loop one more iteration,
		// in which the client reads the peer's close; the Go loop takes
		// one or two, so the test waits for the client's ConnectionLost.
		if _, err := p.cli.done.Await(tk); err != nil {
			return err
		}
		check(t, 1024 <= p.srv.nbytes && p.srv.nbytes < len(sendfileDATA), p.srv.nbytes)
		pos := tell(t, f)
		check(t, 1024 <= pos && pos < int64(len(sendfileDATA)), pos)
		check(t, p.cli.transport.IsClosing(), "transport.is_closing()")
		return p.cleanup(t, tk)
	})
}

func TestSendfile_test_sendfile_prevents_bare_write(t *testing.T) {
	if runtime.GOOS != "linux" {
		// CPython's skipIf(not hasattr(os, 'sendfile')): aio uses
		// sendfile(2) on Linux only.
		t.Skip("Don't have native sendfile support")
	}
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, false, 0)
		fut := asyncio.NewFuture[struct{}](tk)
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (int64, error) {
			fut.SetResult(struct{}{})
			return aio.Sendfile(tk, p.cli.transport, f, 0, 0, true)
		})
		if _, err := fut.Await(tk); err != nil {
			return err
		}
		raisesRegex(t, p.cli.transport.Write([]byte("data")), "*asyncio.RuntimeError", "sendfile is in progress")
		ret, err := task.Await(tk)
		noErr(t, err)
		eq(t, ret, int64(len(sendfileDATA)))
		return p.cleanup(t, tk)
	})
}

// The CPython test uses a mock transport whose _sendfile_compatible is
// FALLBACK; the TLS transport is the Go one that only has the fallback.
func TestSendfile_test_sendfile_no_fallback_for_fallback_transport(t *testing.T) {
	f := sendfileFile(t)
	run(t, func(tk *asyncio.T) error {
		p := prepareSendfile(t, tk, true, 0)
		_, err := aio.Sendfile(tk, p.cli.transport, f, 0, 0, false)
		raisesRegex(t, err, "*asyncio.RuntimeError", "fallback is disabled")
		return p.cleanup(t, tk)
	})
}
