package aio

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestUnixStreamEcho(t *testing.T) {
	path := filepath.Join(t.TempDir(), "echo.sock")
	var got string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartUnixServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			w.Write(append([]byte("unix:"), line...))
			w.Close()
			return nil
		}, path)
		if err != nil {
			return err
		}
		r, w, err := OpenUnixConnection(at, path)
		if err != nil {
			return err
		}
		w.Write([]byte("hi\n"))
		b, err := r.Read(at, -1)
		got = string(b)
		w.Close()
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	if got != "unix:hi\n" {
		t.Fatalf("got %q", got)
	}
}

type udpLog struct {
	name string
	log  *[]string
	tr   DatagramTransport
	echo bool
	got  *asyncio.Future[struct{}]
	lost *asyncio.Future[struct{}]
}

func (p *udpLog) ConnectionMade(tr DatagramTransport) { p.tr = tr }
func (p *udpLog) DatagramReceived(d []byte, addr net.Addr) {
	*p.log = append(*p.log, p.name+" got "+string(d))
	if p.echo {
		p.tr.SendTo(append([]byte("echo "), d...), addr)
	} else if !p.got.Done() {
		p.got.SetResult(struct{}{})
	}
}
func (p *udpLog) ErrorReceived(err error) { *p.log = append(*p.log, p.name+" error "+err.Error()) }
func (p *udpLog) ConnectionLost(err error) {
	*p.log = append(*p.log, fmt.Sprintf("%s lost %v", p.name, err))
	p.lost.SetResult(struct{}{})
}

func TestDatagramEcho(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		server := &udpLog{name: "server", log: &log, echo: true, lost: asyncio.NewFuture[struct{}](l)}
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		addr := str.GetExtraInfo("sockname").(*net.UDPAddr)
		client := &udpLog{name: "client", log: &log, got: asyncio.NewFuture[struct{}](l), lost: asyncio.NewFuture[struct{}](l)}
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return client }, nil, addr)
		if err != nil {
			return err
		}
		if err := ctr.SendTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}); !errors.Is(err, asyncio.ErrValue) {
			return fmt.Errorf("wrong address accepted: %v", err)
		}
		ctr.SendTo([]byte("ping"), nil)
		if _, err := client.got.Await(at); err != nil {
			return err
		}
		ctr.Close()
		client.lost.Await(at)
		str.Close()
		server.lost.Await(at)
		return nil
	})
	want := []string{"server got ping", "client got echo ping", "client lost <nil>", "server lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// testTLSConfigs returns a server config with a fresh self-signed
// certificate for 127.0.0.1/localhost and a client config trusting it.
func testTLSConfigs(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return server, &tls.Config{RootCAs: pool}
}

func TestTLSStreamsEcho(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			for {
				line, err := r.ReadLine(t)
				if err != nil || len(line) == 0 {
					w.Close()
					return err
				}
				w.Write([]byte(strings.ToUpper(string(line))))
			}
		}, "127.0.0.1", 0, WithTLS(serverCfg), WithStreamLimit(1<<20))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg), WithStreamLimit(1<<20))
		if err != nil {
			return err
		}
		_, isTLS := w.GetExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("tls=%v can_write_eof=%v", isTLS, w.CanWriteEOF()))
		big := strings.Repeat("y", 200000) + "\n"
		for _, s := range []string{"hello\n", big, "bye\n"} {
			w.Write([]byte(s))
			if err := w.Drain(at); err != nil {
				return err
			}
			line, err := r.ReadUntil(at, []byte("\n"))
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%d %q", len(line), line[:min(len(line), 5)]))
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"tls=true can_write_eof=false", `6 "HELLO"`, `200001 "YYYYY"`, `4 "BYE\n"`}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func TestTLSBadCertificateFailsConnect(t *testing.T) {
	serverCfg, _ := testTLSConfigs(t)
	var got error
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { return nil }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		_, _, got = OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(&tls.Config{}))
		srv.Close()
		return srv.WaitClosed(at)
	})
	var uerr x509.UnknownAuthorityError
	if !errors.As(got, &uerr) {
		t.Fatalf("got %v, want an unknown-authority error", got)
	}
}

// StartTLS upgrades a plain connection after a plaintext exchange
// (STARTTLS style) on both sides.
func TestStreamWriterStartTLS(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if line, err := r.ReadLine(t); err != nil || string(line) != "STARTTLS\n" {
				return fmt.Errorf("server got %q %v", line, err)
			}
			w.Write([]byte("GO\n"))
			if err := w.StartTLS(t, serverCfg, ""); err != nil {
				return err
			}
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			w.Write([]byte("secret " + string(line)))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Write([]byte("STARTTLS\n"))
		line, _ := r.ReadLine(at)
		log = append(log, string(line))
		if err := w.StartTLS(at, clientCfg, "localhost"); err != nil {
			return err
		}
		_, isTLS := w.GetExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("tls=%v", isTLS))
		w.Write([]byte("ping\n"))
		rest, err := r.Read(at, -1)
		log = append(log, string(rest))
		w.Close()
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	want := []string{"GO\n", "tls=true", "secret ping\n"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// httpServer answers each request line block with a fixed response.
func httpServer(at *asyncio.T) (*Server, error) {
	return StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		for {
			head, err := r.ReadUntil(t, []byte("\r\n\r\n"))
			if err != nil {
				return nil
			}
			path := strings.Fields(string(head))[1]
			body := "hello from " + path
			fmt.Fprintf(writerFunc(w.Write), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(body), body)
		}
	}, "127.0.0.1", 0)
}

type writerFunc func([]byte) error

func (f writerFunc) Write(p []byte) (int, error) { return len(p), f(p) }

// net/http and bufio run unchanged over Conn inside a task.
func TestConnHTTPReadResponseInTask(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		br := bufio.NewReader(c)
		for _, p := range []string{"/a", "/b"} {
			req, _ := http.NewRequest("GET", "http://"+srv.Addr().String()+p, nil)
			if err := req.Write(c); err != nil {
				return err
			}
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			log = append(log, fmt.Sprintf("%d %s %v", resp.StatusCode, body, err))
		}
		log = append(log, fmt.Sprint(c.Close()), fmt.Sprint(errors.Is(c.Close(), net.ErrClosed)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"200 hello from /a <nil>", "200 hello from /b <nil>", "<nil>", "true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// A read deadline is a loop timer: a Read with nothing to read returns
// os.ErrDeadlineExceeded, and the Conn stays usable.
func TestConnReadDeadline(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err = c.Read(make([]byte, 10))
		var ne net.Error
		log = append(log, fmt.Sprintf("timeout=%v", errors.As(err, &ne) && ne.Timeout()))
		c.SetReadDeadline(time.Time{})
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		log = append(log, resp.Status)
		resp.Body.Close()
		c.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"timeout=true", "200 OK"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// A goroutine that is not a task of the loop uses the Conn through the
// thread-safe path while the loop keeps serving.
func TestConnFromForeignGoroutine(t *testing.T) {
	var status, body string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		l := at.Loop()
		done := asyncio.NewFuture[error](at)
		go func() {
			err := func() error {
				if _, err := fmt.Fprintf(c, "GET /foreign HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					return err
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					return err
				}
				b, err := io.ReadAll(resp.Body)
				status, body = resp.Status, string(b)
				return errors.Join(err, c.Close())
			}()
			l.CallSoonThreadsafe(func() { done.SetResult(err) })
		}()
		err, _ = done.Await(at)
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	if status != "200 OK" || body != "hello from /foreign" {
		t.Fatalf("got %q %q", status, body)
	}
}

// A failing client_connected_cb is reported and its connection closed
// (STREAM-11).
func TestSTREAM11_ClientConnectedCallbackFailure(t *testing.T) {
	var msgs []string
	var eof bool
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msgs = append(msgs, ctx.Message+": "+ctx.Err.Error())
		})
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			return errors.New("handler failed")
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		b, err := r.Read(at, -1)
		eof = len(b) == 0 && err == nil && r.AtEOF()
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if !eof {
		t.Fatal("connection not closed by the server")
	}
	if d := cmp.Diff([]string{"Unhandled exception in client_connected_cb: handler failed"}, msgs); d != "" {
		t.Fatal(d)
	}
}

// ServeForever returns the cancellation after closing the server and
// waiting for its connections (asyncio's serve_forever).
func TestServerServeForeverCancel(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { w.Close(); return nil }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		serve := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.ServeForever(t) })
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprint(srv.ServeForever(at)))
		serve.Cancel()
		_, err = serve.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v serving=%v sockets=%d", asyncio.IsCancelled(err), srv.IsServing(), len(srv.Sockets())))
		log = append(log, fmt.Sprint(srv.ServeForever(at) != nil))
		return srv.WaitClosed(at)
	})
	if len(log) != 3 || !strings.Contains(log[0], "is already being awaited on serve_forever()") ||
		log[1] != "cancelled=true serving=false sockets=0" || log[2] != "true" {
		t.Fatalf("log %q", log)
	}
}

// Name resolution runs on a goroutine that the virtual-time loop counts as
// external work: the loop waits for it instead of reporting a deadlock.
func TestResolveOnGoroutineVirtualTime(t *testing.T) {
	release := make(chan struct{})
	old := lookupIPAddr
	lookupIPAddr = func(ctx context.Context, host string) ([]net.IPAddr, error) {
		<-release
		if host == "two.test" {
			return []net.IPAddr{{IP: net.ParseIP("::1")}, {IP: net.ParseIP("127.0.0.1")}}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	defer func() { lookupIPAddr = old }()
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		go close(release)
		ips, err := resolveHost(at, "two.test")
		log = append(log, fmt.Sprint(ips, err))
		_, err = resolveHost(at, "missing.test")
		var de *net.DNSError
		log = append(log, fmt.Sprint(errors.As(err, &de)))
		ips, err = resolveHost(at, "10.0.0.1")
		log = append(log, fmt.Sprint(ips, err))
		return nil
	})
	want := []string{"[::1 127.0.0.1] <nil>", "true", "[10.0.0.1] <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func TestInterleaveFamilies(t *testing.T) {
	var in []net.IP
	for _, s := range []string{"::1", "::2", "::3", "1.1.1.1", "2.2.2.2"} {
		in = append(in, net.ParseIP(s))
	}
	got := fmt.Sprint(interleaveFamilies(in))
	if got != "[::1 1.1.1.1 ::2 2.2.2.2 ::3]" {
		t.Fatal(got)
	}
}

// Happy eyeballs (RFC 8305): attempt i+1 starts delay after attempt i, or
// at once when attempt i fails; the first success wins and the others are
// cancelled; a loser that connects anyway is discarded.
func TestHappyEyeballsStaggeredRace(t *testing.T) {
	var log []string
	var winner, value int
	runVirtual(t, func(at *asyncio.T) error {
		l := at.Loop()
		attempt := func(t *asyncio.T, i int) (int, error) {
			log = append(log, fmt.Sprintf("%v start %d", l.Time(), i))
			var d time.Duration
			var fail bool
			switch i {
			case 0:
				d = time.Hour // a black hole
			case 1:
				d, fail = 100*time.Millisecond, true // refused quickly
			case 2:
				d = 300 * time.Millisecond
			case 3:
				d = 250 * time.Millisecond
			}
			if err := asyncio.Sleep(t, d); err != nil {
				log = append(log, fmt.Sprintf("%v cancel %d", l.Time(), i))
				return 0, err
			}
			if fail {
				log = append(log, fmt.Sprintf("%v fail %d", l.Time(), i))
				return 0, errors.New("refused")
			}
			log = append(log, fmt.Sprintf("%v ok %d", l.Time(), i))
			return 100 + i, nil
		}
		var err error
		value, winner, _, err = staggeredRace(at, 5, 250*time.Millisecond, attempt, func(v int) {
			log = append(log, fmt.Sprintf("discard %d", v))
		})
		return err
	})
	want := []string{
		"0s start 0",
		"250ms start 1",
		"350ms fail 1",
		"350ms start 2",
		"600ms start 3",
		"650ms ok 2",
		"650ms cancel 0",
		"650ms cancel 3",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
	if winner != 2 || value != 102 {
		t.Fatalf("winner %d value %d", winner, value)
	}
}

func TestHappyEyeballsAllFail(t *testing.T) {
	var errs []error
	var winner int
	runVirtual(t, func(at *asyncio.T) error {
		var err error
		_, winner, errs, err = staggeredRace(at, 3, time.Second, func(t *asyncio.T, i int) (int, error) {
			asyncio.Sleep(t, time.Duration(i+1)*time.Millisecond)
			return 0, fmt.Errorf("e%d", i)
		}, func(int) {})
		return err
	})
	if winner != -1 || fmt.Sprint(errs) != "[e0 e1 e2]" || joinConnectErrors(errs).Error() != "Multiple exceptions: e0\ne1\ne2" {
		t.Fatalf("winner %d errs %v", winner, errs)
	}
}

// CreateConnection with a name that resolves to several addresses races
// them; here ::1 has no listener (refused) and 127.0.0.1 accepts.
func TestCreateConnectionHappyEyeballsRealSockets(t *testing.T) {
	old := lookupIPAddr
	lookupIPAddr = func(ctx context.Context, host string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("::1")}, {IP: net.ParseIP("127.0.0.1")}}, nil
	}
	defer func() { lookupIPAddr = old }()
	var peer string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { w.Close(); return nil }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "dual.test", serverPort(srv))
		if err != nil {
			return err
		}
		peer = w.GetExtraInfo("peername").(net.Addr).String()
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if !strings.HasPrefix(peer, "127.0.0.1:") {
		t.Fatalf("peer %q", peer)
	}
}
