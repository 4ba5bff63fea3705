//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Fault injection on sockets: testFaults is the package's sockFaults in
// tests (main_test.go installs it before any loop runs). A test gives a
// socket a plan; every read and write of the transports, streams, TLS and
// Conn on that socket asks the plan first, which can fail the call
// (EAGAIN, EINTR, ECONNRESET, EPIPE, without a system call) or make it
// move fewer bytes than asked.

// faultPlan decides the outcome of the n-th read or write (from 1) of
// size bytes on its socket: an error, or a byte limit (0: unchanged).
type faultPlan func(op faultOp, n, size int) (limit int, err error)

type faultTable struct {
	mu    sync.Mutex
	plans map[int]*plannedFD
}

type plannedFD struct {
	plan  faultPlan
	calls [2]int
	hits  int
}

var testFaults = &faultTable{plans: map[int]*plannedFD{}}

func (ft *faultTable) fault(op faultOp, fd, size int) (int, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	p := ft.plans[fd]
	if p == nil {
		return 0, nil
	}
	p.calls[op]++
	limit, err := p.plan(op, p.calls[op], size)
	if err != nil || limit > 0 && limit < size {
		p.hits++
	}
	return limit, err
}

// inject gives fd a plan until the test ends; it returns a function that
// reports how many calls the plan changed.
func inject(t *testing.T, fd int, plan faultPlan) (hits func() int) {
	t.Helper()
	testFaults.mu.Lock()
	testFaults.plans[fd] = &plannedFD{plan: plan}
	testFaults.mu.Unlock()
	t.Cleanup(func() { removeFaults(fd) })
	return func() int {
		testFaults.mu.Lock()
		defer testFaults.mu.Unlock()
		if p := testFaults.plans[fd]; p != nil {
			return p.hits
		}
		return 0
	}
}

func removeFaults(fd int) {
	testFaults.mu.Lock()
	delete(testFaults.plans, fd)
	testFaults.mu.Unlock()
}

// The transient faults: the socket is fine, the call just says "not now"
// or moves a few bytes.
var transientFaults = []struct {
	name string
	plan faultPlan
}{
	{"EAGAIN every other call", func(op faultOp, n, size int) (int, error) {
		if n%2 == 0 {
			return 0, unix.EAGAIN
		}
		return 0, nil
	}},
	{"EINTR every third call", func(op faultOp, n, size int) (int, error) {
		if n%3 == 1 {
			return 0, unix.EINTR
		}
		return 0, nil
	}},
	{"short counts", func(op faultOp, n, size int) (int, error) {
		return 1 + n%7*(size/50+1), nil // 1 byte now and then, a few KB at most
	}},
	{"all of them", func(op faultOp, n, size int) (int, error) {
		switch n % 5 {
		case 1:
			return 0, unix.EAGAIN
		case 2:
			return 0, unix.EINTR
		case 3:
			return 1 + size/3, nil
		}
		return 0, nil
	}},
}

// faultClient is one way of talking to an echo server: it sends data and
// reads it all back, and names the socket the faults go to.
type faultClient struct {
	name string
	// echo connects (opts are the TLS options), gives the client's socket
	// to plan, sends data and returns what came back.
	echo func(t *testing.T, at *asyncio.T, port int, tlsOpts []Option, plan func(fd int), data []byte) ([]byte, error)
}

var faultClients = []faultClient{
	{"protocol", echoWithProtocol},
	{"streams", echoWithStreams},
	{"conn", echoWithConn},
}

func echoWithStreams(t *testing.T, at *asyncio.T, port int, tlsOpts []Option, plan func(fd int), data []byte) ([]byte, error) {
	r, w, err := OpenConnection(at, "127.0.0.1", port, tlsOpts...)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	plan(w.ExtraInfo("socket").(int))
	for off := 0; off < len(data); off += 10000 {
		w.Write(data[off:min(off+10000, len(data))])
		if err := w.Drain(at); err != nil {
			return nil, err
		}
	}
	return r.ReadExactly(at, len(data))
}

// chunkProtocol collects what it receives and resolves done when want
// bytes came, or with the connection's error.
type chunkProtocol struct {
	tr   Transport
	got  []byte
	want int
	done *asyncio.Future[[]byte]
}

func (p *chunkProtocol) ConnectionMade(tr Transport) { p.tr = tr }
func (p *chunkProtocol) DataReceived(d []byte) {
	p.got = append(p.got, d...)
	if len(p.got) >= p.want && !p.done.Done() {
		p.done.SetResult(p.got)
	}
}
func (p *chunkProtocol) EOFReceived() bool { return false }
func (p *chunkProtocol) ConnectionLost(err error) {
	if !p.done.Done() {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		p.done.SetException(fmt.Errorf("after %d bytes: %w", len(p.got), err))
	}
}

func echoWithProtocol(t *testing.T, at *asyncio.T, port int, tlsOpts []Option, plan func(fd int), data []byte) ([]byte, error) {
	p := &chunkProtocol{want: len(data), done: asyncio.NewFuture[[]byte](at)}
	tr, _, err := CreateConnection(at, func() Protocol { return p }, "127.0.0.1", port, tlsOpts...)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	plan(tr.ExtraInfo("socket").(int))
	for off := 0; off < len(data); off += 10000 {
		tr.Write(data[off:min(off+10000, len(data))])
	}
	if _, err := p.done.Await(at); err != nil {
		return p.got, err
	}
	return p.got, nil
}

func echoWithConn(t *testing.T, at *asyncio.T, port int, tlsOpts []Option, plan func(fd int), data []byte) ([]byte, error) {
	if tlsOpts != nil {
		return nil, errors.New("no TLS option for Conn: wrap it with crypto/tls")
	}
	c, err := DialConn(at, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	plan(c.FD())
	// Write from another goroutine while this task reads, as a library
	// with a writer goroutine would; like one, either side closes the
	// connection when it fails.
	wrote := foreign(at, func() error {
		_, err := c.Write(data)
		if err != nil {
			c.Close()
		}
		return err
	})
	got := make([]byte, len(data))
	_, rerr := io.ReadFull(c, got)
	if rerr != nil {
		c.Close()
	}
	werr, err := wrote.Await(at)
	return got, errors.Join(rerr, werr, err)
}

// faultEchoServer serves an echo on 127.0.0.1 with the given options.
func faultEchoServer(at *asyncio.T, opts ...Option) (*Server, error) {
	return StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		for {
			b, err := r.Read(t, 64*1024)
			if err != nil || len(b) == 0 {
				return nil // a client's fault may reset the connection
			}
			w.Write(b)
			if err := w.Drain(t); err != nil {
				return nil
			}
		}
	}, "127.0.0.1", 0, opts...)
}

// Under EAGAIN, EINTR and short counts on its socket, at any call, every
// client (protocol, streams, Conn; plain and TLS) gets back exactly the
// bytes it sent, and finishes; the server's side of each connection is
// faulted too, by its own plan.
func TestFaultsTransientLoseNoByte(t *testing.T) {
	serverTLS, clientTLS := testTLSConfigs(t)
	data := make([]byte, 96*1024)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	for _, tlsOn := range []bool{false, true} {
		for _, cl := range faultClients {
			if tlsOn && cl.name == "conn" {
				continue // covered below: crypto/tls over a Conn
			}
			for _, f := range transientFaults {
				name := fmt.Sprintf("%s/tls=%v/%s", cl.name, tlsOn, f.name)
				t.Run(name, func(t *testing.T) {
					var hits []func() int
					plan := func(fd int) { hits = append(hits, inject(t, fd, f.plan)) }
					runNet(t, func(at *asyncio.T) error {
						var srvOpts, cliOpts []Option
						if tlsOn {
							srvOpts, cliOpts = []Option{WithTLS(serverTLS)}, []Option{WithTLS(clientTLS)}
						}
						srv, err := faultEchoServer(at, append(srvOpts, WithStreamLimit(1<<20))...)
						if err != nil {
							return err
						}
						defer srv.Close()
						got, err := cl.echo(t, at, serverPort(srv), cliOpts, plan, data)
						if err != nil {
							return err
						}
						if !bytes.Equal(got, data) {
							return fmt.Errorf("got %d bytes back, not the %d sent", len(got), len(data))
						}
						return nil
					})
					if hits[0]() == 0 {
						t.Error("no fault was injected")
					}
				})
			}
		}
	}
}

// The fatal faults: ECONNRESET on a read, EPIPE on a write, at a chosen
// call. Each client sees an error matching the errno, soon, and every byte
// it got before is a prefix of what it sent.
func TestFaultsFatalSurfaceWithoutHanging(t *testing.T) {
	serverTLS, clientTLS := testTLSConfigs(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	fatal := []struct {
		name  string
		errno syscall.Errno
		plan  faultPlan
	}{
		{"ECONNRESET on the 3rd read", unix.ECONNRESET, func(op faultOp, n, size int) (int, error) {
			if op == faultRead && n >= 3 {
				return 0, unix.ECONNRESET
			}
			return 100, nil
		}},
		{"EPIPE on the 2nd write", unix.EPIPE, func(op faultOp, n, size int) (int, error) {
			if op == faultWrite && n >= 2 {
				return 0, unix.EPIPE
			}
			return 1000, nil
		}},
	}
	for _, tlsOn := range []bool{false, true} {
		for _, cl := range faultClients {
			if tlsOn && cl.name == "conn" {
				continue
			}
			for _, f := range fatal {
				t.Run(fmt.Sprintf("%s/tls=%v/%s", cl.name, tlsOn, f.name), func(t *testing.T) {
					runNet(t, func(at *asyncio.T) error {
						var srvOpts, cliOpts []Option
						if tlsOn {
							srvOpts, cliOpts = []Option{WithTLS(serverTLS)}, []Option{WithTLS(clientTLS)}
						}
						srv, err := faultEchoServer(at, srvOpts...)
						if err != nil {
							return err
						}
						defer srv.Close()
						plan := func(fd int) { inject(t, fd, f.plan) }
						got, err := cl.echo(t, at, serverPort(srv), cliOpts, plan, data)
						if !errors.Is(err, f.errno) {
							return fmt.Errorf("error %v, want one matching %v", err, f.errno)
						}
						if got != nil && !bytes.HasPrefix(data, bytes.TrimRight(got, "\x00")) {
							return errors.New("the bytes received before the fault are not what was sent")
						}
						return nil
					})
				})
			}
		}
	}
}

// crypto/tls over Conn (tls.Client(conn)) under the transient faults:
// the handshake and an echo lose no byte.
func TestFaultsTLSOverConn(t *testing.T) {
	serverTLS, clientTLS := testTLSConfigs(t)
	data := bytes.Repeat([]byte("tls over conn "), 5000)
	for _, f := range transientFaults {
		t.Run(f.name, func(t *testing.T) {
			runNet(t, func(at *asyncio.T) error {
				srv, err := faultEchoServer(at, WithTLS(serverTLS), WithStreamLimit(1<<20))
				if err != nil {
					return err
				}
				defer srv.Close()
				c, err := DialConn(at, "tcp", srv.Addr().String())
				if err != nil {
					return err
				}
				defer c.Close()
				hits := inject(t, c.FD(), f.plan)
				cfg := clientTLS.Clone()
				cfg.ServerName = "localhost"
				tc := tlsClient(c, cfg)
				if err := tc.Handshake(); err != nil {
					return err
				}
				wrote := foreign(at, func() error { _, err := tc.Write(data); return err })
				got := make([]byte, len(data))
				if _, err := io.ReadFull(tc, got); err != nil {
					return err
				}
				if werr, err := wrote.Await(at); werr != nil || err != nil {
					return errors.Join(werr, err)
				}
				if !bytes.Equal(got, data) {
					return errors.New("the echo differs")
				}
				if hits() == 0 {
					return errors.New("no fault was injected")
				}
				return nil
			})
		})
	}
}

func tlsClient(c *Conn, cfg *tls.Config) *tls.Conn { return tls.Client(c, cfg) }
