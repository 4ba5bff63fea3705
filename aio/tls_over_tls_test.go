//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TLS inside TLS: StartTLS over a TLS transport (asyncio's start_tls over
// an SSL transport). The outer session comes from WithTLS, the inner one
// from StartTLS, each with its own certificate, so that the tests can
// tell which session ExtraInfo describes.

// tlsPair is the configurations of the two sessions.
type tlsPair struct {
	outerServer, outerClient, innerServer, innerClient *tls.Config
}

// newTLSPair makes two certificates, one for each session.
func newTLSPair(t *testing.T) tlsPair {
	t.Helper()
	var p tlsPair
	p.outerServer, p.outerClient = testTLSConfigs(t)
	p.innerServer, p.innerClient = testTLSConfigs(t)
	return p
}

// upgradeServer is a StartServer callback over the outer session: it
// answers "UPGRADE\n" with "GO\n", starts the inner session, then runs
// serve over it.
func upgradeServer(cfg *tls.Config, opts []Option, serve func(t *asyncio.T, r *StreamReader, w *StreamWriter) error) func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
	return func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		if line, err := r.ReadLine(t); err != nil || string(line) != "UPGRADE\n" {
			w.Close()
			return fmt.Errorf("server got %q %v", line, err)
		}
		w.Write([]byte("GO\n"))
		if err := w.StartTLS(t, cfg, "", opts...); err != nil {
			return nil // the connection is closed: the client's test checks
		}
		return serve(t, r, w)
	}
}

// dialOuter connects to srv over the outer session and asks for the
// upgrade; the inner handshake is the caller's.
func dialOuter(at *asyncio.T, srv *Server, cfg *tls.Config, opts ...Option) (*StreamReader, *StreamWriter, error) {
	r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), append([]Option{WithTLS(cfg)}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	w.Write([]byte("UPGRADE\n"))
	line, err := r.ReadLine(at)
	if err != nil || string(line) != "GO\n" {
		w.Close()
		return nil, nil, fmt.Errorf("client got %q %v", line, err)
	}
	return r, w, nil
}

// StreamWriter.StartTLS on a TLS stream, both ends: data both ways, 1 MiB
// each way (many records of both sessions, and more than the 64 KiB
// high-water mark set; the pausing itself is TestTLSOverTLSFlowControl's);
// ExtraInfo of the inner transport describes the inner session, and the
// socket below; Close ends both sessions.
func TestTLSOverTLSRoundTrip(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, upgradeServer(pair.innerServer, nil, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Transport().SetWriteBufferLimits(64<<10, 16<<10)
			got, err := r.ReadExactly(t, len(payload))
			if err != nil {
				return err
			}
			w.Write(got) // echo
			return w.Drain(t)
		}), "127.0.0.1", 0, WithTLS(pair.outerServer))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := dialOuter(at, srv, pair.outerClient)
		if err != nil {
			return err
		}
		outer := w.Transport()
		outerConn := w.ExtraInfo("ssl_object").(*tls.Conn)
		if err := w.StartTLS(at, pair.innerClient, "localhost"); err != nil {
			return err
		}
		inner := w.Transport()
		innerConn, _ := inner.ExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("new transport=%v new session=%v", inner != outer, innerConn != nil && innerConn != outerConn))
		cert := inner.ExtraInfo("peercert")
		innerCert := pair.innerServer.Certificates[0].Certificate[0]
		outerCert := pair.outerServer.Certificates[0].Certificate[0]
		log = append(log, fmt.Sprintf("peercert inner=%v outer peercert=%v",
			cert != nil && bytes.Equal(certRaw(cert), innerCert),
			bytes.Equal(certRaw(outer.ExtraInfo("peercert")), outerCert)))
		_, hasCipher := inner.ExtraInfo("cipher").(TLSCipher)
		log = append(log, fmt.Sprintf("cipher=%v sslcontext inner=%v", hasCipher, inner.ExtraInfo("sslcontext") == pair.innerClient))
		log = append(log, fmt.Sprintf("sockname=%v peername=%v socket=%v",
			addrEq(inner.ExtraInfo("sockname"), outer.ExtraInfo("sockname")),
			addrEq(inner.ExtraInfo("peername"), outer.ExtraInfo("peername")),
			inner.ExtraInfo("socket") == outer.ExtraInfo("socket") && inner.ExtraInfo("socket") != nil))
		inner.SetWriteBufferLimits(64<<10, 16<<10)
		w.Write(payload)
		if err := w.Drain(at); err != nil {
			return err
		}
		got, err := r.ReadExactly(at, len(payload))
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("echo equal=%v", bytes.Equal(got, payload)))
		rest, err := r.Read(at, -1)
		log = append(log, fmt.Sprintf("then eof %q %v", rest, err))
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("closing outer=%v inner=%v", outer.IsClosing(), inner.IsClosing()))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"new transport=true new session=true",
		"peercert inner=true outer peercert=true",
		"cipher=true sslcontext inner=true",
		"sockname=true peername=true socket=true",
		"echo equal=true",
		`then eof "" <nil>`,
		"closing outer=true inner=true",
	}, log)
}

// certRaw returns the DER of a "peercert" value (nil if there is none).
func certRaw(c any) []byte {
	if x, ok := c.(*x509.Certificate); ok && x != nil {
		return x.Raw
	}
	return nil
}

// addrEq reports whether a and b are the same address.
func addrEq(a, b any) bool {
	x, ok1 := a.(net.Addr)
	y, ok2 := b.(net.Addr)
	return ok1 && ok2 && x.String() == y.String()
}

// listenOverTLS listens over the outer session. The outer protocol of
// each connection pauses reading and upgrades it at once, as CPython's
// test_create_server_ssl_over_ssl does: StartTLS with the inner server
// configuration and opts, for app (its tr set); done resolves with
// StartTLS's error. A nil cfg leaves the connection on the outer session
// (a peer that never answers the inner handshake), and onData, if set, is
// the outer protocol's DataReceived.
func listenOverTLS(at *asyncio.T, pair tlsPair, cfg *tls.Config, app *streamRecorder, onData func(p *streamRecorder, d []byte), opts ...Option) (*Server, *asyncio.Future[error], error) {
	done := asyncio.NewFuture[error](at)
	var scratch []string
	srv, err := CreateServer(at, func() Protocol {
		outer := newStreamRecorder(at, "souter", &scratch)
		outer.onData = onData
		outer.onMade = func(p *streamRecorder) {
			if cfg == nil {
				return
			}
			p.tr.PauseReading()
			//asynciovet:ignore unawaitedtask the test awaits done, which the task resolves, instead
			asyncio.CreateTask(at.Loop(), func(t *asyncio.T) (struct{}, error) {
				tr, err := StartTLS(t, p.tr, app, cfg, true, "", opts...)
				app.tr = tr
				done.SetResult(err)
				return struct{}{}, nil
			})
		}
		return outer
	}, "127.0.0.1", 0, WithTLS(pair.outerServer))
	return srv, done, err
}

// dialOverTLS connects to srv over the outer session and returns its
// transport, for StartTLS.
func dialOverTLS(at *asyncio.T, srv *Server, pair tlsPair, opts ...Option) (Transport, error) {
	var scratch []string
	tr, _, err := CreateConnection(at, func() Protocol { return newStreamRecorder(at, "couter", &scratch) }, "127.0.0.1", serverPort(srv), append([]Option{WithTLS(pair.outerClient)}, opts...)...)
	return tr, err
}

// upgradedPair is a client and a server connection over TLS inside TLS,
// with their application protocols.
type upgradedPair struct {
	srv                  *Server
	c, s                 *streamRecorder
	outer                Transport // the client's outer transport
	clientLog, serverLog []string
}

// connectOverTLS sets up an upgradedPair.
func connectOverTLS(at *asyncio.T, pair tlsPair, opts ...Option) (*upgradedPair, error) {
	u := &upgradedPair{}
	u.c = newStreamRecorder(at, "c", &u.clientLog)
	u.s = newStreamRecorder(at, "s", &u.serverLog)
	srv, done, err := listenOverTLS(at, pair, pair.innerServer, u.s, nil, opts...)
	if err != nil {
		return nil, err
	}
	u.srv = srv
	if u.outer, err = dialOverTLS(at, srv, pair); err != nil {
		return nil, err
	}
	if u.c.tr, err = StartTLS(at, u.outer, u.c, pair.innerClient, false, "localhost", opts...); err != nil {
		return nil, err
	}
	serr, err := done.Await(at)
	if err != nil {
		return nil, err
	}
	return u, serr
}

// closeServer closes the server and waits for it.
func (u *upgradedPair) closeServer(at *asyncio.T) error {
	u.srv.Close()
	return u.srv.WaitClosed(at)
}

// Write flow control and PauseReading through both sessions: while the
// server's inner transport is paused it reads nothing from the outer one,
// so that the socket fills and the client's inner transport pauses its
// protocol past its high-water mark (the socket's buffer); resuming the
// server delivers everything and resumes the client's protocol.
func TestTLSOverTLSFlowControl(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		u, err := connectOverTLS(at, pair)
		if err != nil {
			return err
		}
		u.s.tr.PauseReading()
		got := 0
		all := asyncio.NewFuture[struct{}](at)
		var total int
		u.s.onData = func(p *streamRecorder, d []byte) {
			got += len(d)
			if got == total && total > 0 && !all.Done() {
				all.SetResult(struct{}{})
			}
		}
		if err := u.c.tr.SetWriteBufferLimits(64<<10, 16<<10); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		paused := func() bool { return len(u.clientLog) > 0 && u.clientLog[len(u.clientLog)-1] == "c:pause writing" }
		// Between writes the server runs (a virtual millisecond): were
		// its outer session still reading, the socket would never fill.
		for !paused() && total < 8<<20 {
			u.c.tr.Write(chunk)
			total += len(chunk)
			if err := asyncio.Sleep(at, time.Millisecond); err != nil {
				return err
			}
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("client paused=%v; server reading=%v got=%d", paused(), u.s.tr.IsReading(), got))
		if !paused() {
			return fmt.Errorf("%v", log) // no ResumeWriting to wait for
		}
		u.s.tr.ResumeReading()
		if _, err := u.c.resumed.Await(at); err != nil {
			return err
		}
		if _, err := all.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("client resumed; server got all=%v", got == total))
		log = append(log, u.clientLog...)
		u.c.tr.Close()
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		return u.closeServer(at)
	})
	expectLog(t, []string{
		"client paused=true; server reading=false got=0",
		"client resumed; server got all=true",
		"c:pause writing", "c:resume writing",
	}, log)
}

// Close of the inner transport, from either side: data written before it
// arrives, then the peer's EOF and ConnectionLost(nil); the closer's
// protocol gets ConnectionLost(nil) once, and its outer session and socket
// are closed as well (the socket's descriptor released: "socket" -1).
func TestTLSOverTLSClose(t *testing.T) {
	for _, serverCloses := range []bool{false, true} {
		t.Run(fmt.Sprintf("server=%v", serverCloses), func(t *testing.T) {
			clean(t)
			pair := newTLSPair(t)
			var log []string
			runVirtual(t, func(at *asyncio.T) error {
				u, err := connectOverTLS(at, pair)
				if err != nil {
					return err
				}
				closer, peer := u.c, u.s
				if serverCloses {
					closer, peer = u.s, u.c
				}
				closer.tr.Write([]byte("bye"))
				closer.tr.Close()
				log = append(log, fmt.Sprintf("closing=%v", closer.tr.IsClosing()))
				if _, err := closer.lost.Await(at); err != nil {
					return err
				}
				if _, err := peer.lost.Await(at); err != nil {
					return err
				}
				if err := settle(at); err != nil {
					return err
				}
				log = append(log, u.clientLog...)
				log = append(log, u.serverLog...)
				log = append(log, fmt.Sprintf("client outer closing=%v socket=%v", u.outer.IsClosing(), u.c.tr.ExtraInfo("socket")))
				return u.closeServer(at)
			})
			want := []string{"closing=true", "c:lost <nil>", "s:data bye", "s:eof", "s:lost <nil>", "client outer closing=true socket=-1"}
			if serverCloses {
				want = []string{"closing=true", "c:data bye", "c:eof", "c:lost <nil>", "s:lost <nil>", "client outer closing=true socket=-1"}
			}
			expectLog(t, want, log)
		})
	}
}

// Abort of the inner transport, from either side: the closer's protocol
// gets ConnectionLost(nil) once, data it buffered is dropped (the peer,
// paused until then, gets less than was written), the outer session and
// the socket are torn down too; the peer's protocol gets ConnectionLost
// once.
func TestTLSOverTLSAbort(t *testing.T) {
	for _, serverAborts := range []bool{false, true} {
		t.Run(fmt.Sprintf("server=%v", serverAborts), func(t *testing.T) {
			clean(t)
			pair := newTLSPair(t)
			var log []string
			runVirtual(t, func(at *asyncio.T) error {
				u, err := connectOverTLS(at, pair)
				if err != nil {
					return err
				}
				closer, peer := u.c, u.s
				if serverAborts {
					closer, peer = u.s, u.c
				}
				got := 0
				peer.onData = func(p *streamRecorder, d []byte) { got += len(d) }
				peer.tr.PauseReading()
				chunk := bytes.Repeat([]byte("x"), 64<<10)
				total := 0
				for closer.tr.WriteBufferSize() == 0 && total < 256<<20 {
					closer.tr.Write(chunk)
					total += len(chunk)
				}
				closer.tr.Abort()
				log = append(log, fmt.Sprintf("buffered before abort; closing=%v", closer.tr.IsClosing()))
				peer.tr.ResumeReading()
				if _, err := closer.lost.Await(at); err != nil {
					return err
				}
				if _, err := peer.lost.Await(at); err != nil {
					return err
				}
				if err := settle(at); err != nil {
					return err
				}
				log = append(log, fmt.Sprintf("peer got less=%v", got < total))
				log = append(log, fmt.Sprintf("client outer closing=%v socket=%v", u.outer.IsClosing(), u.c.tr.ExtraInfo("socket")))
				closerLog, peerLog := u.clientLog, u.serverLog
				if serverAborts {
					closerLog, peerLog = u.serverLog, u.clientLog
				}
				log = append(log, closerLog...)
				losts := 0
				for _, e := range peerLog {
					if strings.Contains(e, ":lost") {
						losts++
					}
				}
				log = append(log, fmt.Sprintf("peer lost %d", losts))
				return u.closeServer(at)
			})
			name := "c"
			if serverAborts {
				name = "s"
			}
			expectLog(t, []string{"buffered before abort; closing=true", "peer got less=true", "client outer closing=true socket=-1", name + ":lost <nil>", "peer lost 1"}, log)
		})
	}
}

// A failed inner handshake (the client does not trust the inner
// certificate): StartTLS returns the verification error with the whole
// connection aborted, its socket closed before StartTLS returns (as
// asyncio's start_tls closes the transport when the handshake fails); the
// protocol gets ConnectionLost with the error once, later. The server's
// StartTLS fails too and its protocol hears of it once.
func TestTLSOverTLSBadCertificate(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog, srvLog []string
	runVirtual(t, func(at *asyncio.T) error {
		s := newStreamRecorder(at, "s", &srvLog)
		srv, done, err := listenOverTLS(at, pair, pair.innerServer, s, nil)
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair)
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		// The outer session's client configuration trusts the outer
		// certificate only.
		tr, err := StartTLS(at, outer, c, pair.outerClient, false, "localhost")
		var uerr x509.UnknownAuthorityError
		log = append(log, fmt.Sprintf("tr=%v unknown authority=%v; outer closing=%v socket=%v; c told=%d",
			tr, errors.As(err, &uerr), outer.IsClosing(), outer.ExtraInfo("socket"), len(clog)))
		lost, aerr := c.lost.Await(at)
		if aerr != nil {
			return aerr
		}
		log = append(log, fmt.Sprintf("lost with the handshake error=%v", lost == err))
		serr, aerr := done.Await(at)
		if aerr != nil {
			return aerr
		}
		log = append(log, fmt.Sprintf("server StartTLS failed=%v", serr != nil))
		if _, err := s.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("c told %d, s told %d", len(clog), len(srvLog)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"tr=<nil> unknown authority=true; outer closing=true socket=-1; c told=0",
		"lost with the handshake error=true",
		"server StartTLS failed=true",
		"c told 1, s told 1",
	}, log)
}

// An inner handshake the peer never answers ends after
// WithTLSHandshakeTimeout (virtual time) with ErrTLSHandshakeTimeout, the
// connection aborted down to the socket.
func TestTLSOverTLSHandshakeTimeout(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, _, err := listenOverTLS(at, pair, nil, nil, nil)
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair)
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		t0 := at.Loop().Time()
		_, err = StartTLS(at, outer, c, pair.innerClient, false, "localhost", WithTLSHandshakeTimeout(5*time.Second))
		log = append(log, fmt.Sprintf("%s after %v; outer closing=%v socket=%v", describe(err), at.Loop().Time()-t0, outer.IsClosing(), outer.ExtraInfo("socket")))
		if _, err := c.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, clog...)
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"ECONNABORTED TLS handshake timeout after 5s; outer closing=true socket=-1",
		"c:lost ECONNABORTED TLS handshake timeout",
	}, log)
}

// The peer closing the outer session during the inner handshake fails
// StartTLS with asyncio's ConnectionResetError (ECONNRESET), not a bare
// EOF, and the connection is torn down.
func TestTLSOverTLSPeerClosesMidHandshake(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog []string
	runVirtual(t, func(at *asyncio.T) error {
		// The server's outer protocol closes on the ClientHello.
		srv, _, err := listenOverTLS(at, pair, nil, nil, func(p *streamRecorder, d []byte) { p.tr.Close() })
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair)
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		_, err = StartTLS(at, outer, c, pair.innerClient, false, "localhost")
		log = append(log, fmt.Sprintf("%s; outer closing=%v", describe(err), outer.IsClosing()))
		if _, err := c.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("%v socket=%v", clog, outer.ExtraInfo("socket")))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"ECONNRESET; outer closing=true",
		"[c:lost ECONNRESET] socket=-1",
	}, log)
}

// Cancelling the task in StartTLS during the inner handshake: it ends
// cancelled, the connection is aborted down to the socket (closed in the
// next iteration, as loop.start_tls's transport.close()), and the
// protocol gets ConnectionLost(nil) once.
func TestTLSOverTLSCancel(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, _, err := listenOverTLS(at, pair, nil, nil, nil)
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair)
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		task := asyncio.CreateTask(at, func(t *asyncio.T) (Transport, error) {
			return StartTLS(t, outer, c, pair.innerClient, false, "localhost")
		})
		if err := asyncio.Sleep(at, time.Second); err != nil {
			return err
		}
		task.Cancel()
		//asynciovet:ignore droppedcancel the test awaits the task it cancelled, for its error
		tr, err := task.Await(at)
		log = append(log, fmt.Sprintf("tr=%v %s; outer closing=%v", tr, describe(err), outer.IsClosing()))
		if _, err := c.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("%v socket=%v", clog, outer.ExtraInfo("socket")))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"tr=<nil> cancelled; outer closing=true",
		"[c:lost <nil>] socket=-1",
	}, log)
}

// StartTLS still refuses what is not one of the package's socket or TLS
// transports (here a Transport implemented outside it) with a
// *ValueError, and a closing TLS transport with an error, the transport
// untouched.
func TestTLSOverTLSRefusals(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, _, err := listenOverTLS(at, pair, nil, nil, nil)
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair)
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		_, err = StartTLS(at, foreignTransport{outer}, c, pair.innerClient, false, "localhost")
		log = append(log, describe(err))
		outer.Close()
		_, err = StartTLS(at, outer, c, pair.innerClient, false, "localhost")
		log = append(log, fmt.Sprintf("closing: %v", err))
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"ValueError StartTLS: transport aio.foreignTransport is not supported (neither a socket nor a TLS transport)",
		"closing: start_tls: transport is closing",
	}, log)
}

// foreignTransport is a Transport the package did not make.
type foreignTransport struct{ Transport }

// A Close whose shutdown cannot finish (the peer reads nothing, the
// socket is full) is aborted after the inner transport's
// WithTLSShutdownTimeout (virtual time), its protocol's ConnectionLost
// getting ErrTLSShutdownTimeout; the outer session's own timeout (the
// default, 30 s) is not what ends it.
func TestTLSOverTLSShutdownTimeout(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		u, err := connectOverTLS(at, pair, WithTLSShutdownTimeout(2*time.Second))
		if err != nil {
			return err
		}
		u.s.onData = func(*streamRecorder, []byte) {}
		u.s.tr.PauseReading()
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := 0; u.c.tr.WriteBufferSize() == 0 && n < 4096; n++ {
			u.c.tr.Write(chunk)
		}
		t0 := at.Loop().Time()
		u.c.tr.Close()
		lost, err := u.c.lost.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("shutdown timeout=%v after %v; socket=%v", errors.Is(lost, ErrTLSShutdownTimeout), at.Loop().Time()-t0, u.outer.ExtraInfo("socket")))
		u.s.tr.Abort()
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		return u.closeServer(at)
	})
	expectLog(t, []string{"shutdown timeout=true after 2s; socket=-1"}, log)
}

// The outer session's EOF reaches the inner session's transportConn,
// which always keeps the connection open (its own session ends on its own
// EOF): that is no application returning true from EOFReceived over TLS,
// so no "returning true from eof_received() has no effect" warning.
func TestTLSOverTLSNoEOFWarning(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	h := &h4Warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	defer slog.SetDefault(old)
	runVirtual(t, func(at *asyncio.T) error {
		u, err := connectOverTLS(at, pair)
		if err != nil {
			return err
		}
		u.s.tr.Close()
		if _, err := u.c.lost.Await(at); err != nil {
			return err
		}
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		return u.closeServer(at)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.msgs) > 0 {
		t.Fatalf("logged %q", h.msgs)
	}
}

// WithMaxWriteBuffer on the connection bounds the inner transport's
// writes too: a write that could take the socket's buffer past the limit
// once encrypted twice is refused whole with ErrWriteBufferFull, and what
// was accepted arrives intact (a record refused half way by the socket
// would break both sessions).
func TestTLSOverTLSMaxWriteBuffer(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log, clog, srvLog []string
	runVirtual(t, func(at *asyncio.T) error {
		s := newStreamRecorder(at, "s", &srvLog)
		srv, done, err := listenOverTLS(at, pair, pair.innerServer, s, nil)
		if err != nil {
			return err
		}
		outer, err := dialOverTLS(at, srv, pair, WithMaxWriteBuffer(256<<10))
		if err != nil {
			return err
		}
		c := newStreamRecorder(at, "c", &clog)
		tr, err := StartTLS(at, outer, c, pair.innerClient, false, "localhost")
		if err != nil {
			return err
		}
		if serr, err := done.Await(at); err != nil || serr != nil {
			return errors.Join(err, serr)
		}
		s.tr.PauseReading()
		var sent, got bytes.Buffer
		s.onData = func(p *streamRecorder, d []byte) { got.Write(d) }
		var werr error
		for i := 0; werr == nil && i < 4096; i++ {
			chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 48<<10+i)
			if werr = tr.Write(chunk); werr == nil {
				sent.Write(chunk)
			}
		}
		log = append(log, fmt.Sprintf("refused: %s; held within the limit=%v", describe(werr), tr.WriteBufferSize() <= 256<<10))
		s.tr.ResumeReading()
		tr.Close()
		if _, err := s.lost.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("server got what was accepted=%v", bytes.Equal(got.Bytes(), sent.Bytes())))
		log = append(log, srvLog...)
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"refused: write buffer full; held within the limit=true", "server got what was accepted=true", "s:eof", "s:lost <nil>"}, log)
}

// The size a write is checked against the limit with bounds what it
// becomes on the socket once encrypted by both sessions: measured with
// the socket full, where every byte the write makes stays in the
// transport's buffer.
func TestTLSOverTLSWriteCostBound(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		u, err := connectOverTLS(at, pair)
		if err != nil {
			return err
		}
		u.s.onData = func(*streamRecorder, []byte) {}
		u.s.tr.PauseReading()
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := 0; u.c.tr.WriteBufferSize() == 0 && n < 4096; n++ {
			u.c.tr.Write(chunk)
		}
		tr := u.c.tr.(*tlsTransport)
		for _, n := range []int{1, 1000, 16384, 16385, 100000, 1 << 20, 4 << 20} {
			before := tr.WriteBufferSize()
			tr.Write(bytes.Repeat([]byte("y"), n))
			if wire, cost := tr.WriteBufferSize()-before, tr.writeCost(n); wire > cost || wire <= n {
				log = append(log, fmt.Sprintf("%d bytes: %d on the wire, counted %d", n, wire, cost))
			}
		}
		u.c.tr.Abort()
		u.s.tr.Abort()
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		return u.closeServer(at)
	})
	expectLog(t, nil, log)
}

// Closing the outer session's transport while the inner session runs
// over it (gh-113214, CPython's test_close_during_ssl_over_ssl: the old
// transport closed under the new one) reports nothing to the exception
// handler; both ends' protocols get ConnectionLost once (the peer's after
// EOF, the local one's without: its session was cut below it, as a
// plain TLS transport's protocol when its socket is closed).
func TestTLSOverTLSCloseCarrier(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		var reported []string
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			reported = append(reported, ctx.Message+": "+describe(ctx.Err))
		})
		u, err := connectOverTLS(at, pair)
		if err != nil {
			return err
		}
		u.outer.Close()
		if _, err := u.c.lost.Await(at); err != nil {
			return err
		}
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("reported %q; socket=%v", reported, u.outer.ExtraInfo("socket")))
		log = append(log, u.clientLog...)
		log = append(log, u.serverLog...)
		return u.closeServer(at)
	})
	expectLog(t, []string{"reported []; socket=-1", "c:lost <nil>", "s:eof", "s:lost <nil>"}, log)
}

// A server's connection upgraded by StartTLS over its TLS transport is
// the new transport in the server's bookkeeping: CloseClients closes the
// inner session first (the client sees its EOF), and the server's
// protocol gets ConnectionLost once.
func TestTLSOverTLSServerClients(t *testing.T) {
	clean(t)
	pair := newTLSPair(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		u, err := connectOverTLS(at, pair)
		if err != nil {
			return err
		}
		for _, view := range u.srv.clients {
			log = append(log, fmt.Sprintf("client is the inner transport=%v", view == u.s.tr))
		}
		u.srv.CloseClients()
		if _, err := u.c.lost.Await(at); err != nil {
			return err
		}
		if _, err := u.s.lost.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, u.clientLog...)
		log = append(log, u.serverLog...)
		return u.closeServer(at)
	})
	expectLog(t, []string{"client is the inner transport=true", "c:eof", "c:lost <nil>", "s:lost <nil>"}, log)
}
