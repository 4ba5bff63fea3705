//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// TLS, servers and options edge cases of a hostile run (2026-12-05).
// Timeouts here only guard against hangs; ordering comes from explicit
// signals, loopback sockets and the virtual clock.

// guard bounds an await that must end by itself, on the loop's clock
// (virtual or real): a hang fails the test instead of stalling it.
func guard(at *asyncio.T, fn func() error) error {
	return asyncio.Timeout(at, time.Hour, func(*asyncio.TimeoutScope) error { return fn() })
}

// A peer that closes the connection in the middle of the TLS handshake
// is asyncio's ConnectionResetError (SSLProtocol.eof_received during
// DO_HANDSHAKE), on the client, which gets it from OpenConnection, as on
// the server, which drops the connection without making the protocol;
// crypto/tls's bare io.EOF used to come back. A handshake that times out
// is asyncio's ConnectionAbortedError: ErrTLSHandshakeTimeout matches
// syscall.ECONNABORTED.
func TestTLSEdges_PeerClosingMidHandshakeIsConnectionReset(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, "exception handler: "+ctx.Message)
		})
		// A plain server that reads the ClientHello's first bytes and closes.
		plain, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, 10)
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, _, err = OpenConnection(at, "127.0.0.1", serverPort(plain), WithTLS(clientCfg))
		log = append(log, fmt.Sprintf("client: reset=%v eof=%v", errors.Is(err, syscall.ECONNRESET), errors.Is(err, os.ErrClosed)))
		plain.Close()
		if err := guard(at, func() error { return plain.WaitClosed(at) }); err != nil {
			return err
		}

		// A TLS server whose client sends half a record header and closes.
		var serverLog []string
		srv, err := CreateServer(at, func() Protocol { return newStreamRecorder(at, "server", &serverLog) }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Write([]byte{0x16, 0x03, 0x01})
		w.Close()
		var rest []byte
		if err := guard(at, func() error { rest, err = r.Read(at, -1); return err }); err != nil {
			return err
		}
		srv.Close()
		err = guard(at, func() error { return srv.WaitClosed(at) })
		log = append(log, fmt.Sprintf("server: client read %q, WaitClosed %v, protocol %v", rest, err, serverLog))

		// The handshake timeout.
		silent, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, _, err = OpenConnection(at, "127.0.0.1", serverPort(silent), WithTLS(clientCfg), WithTLSHandshakeTimeout(time.Second))
		log = append(log, fmt.Sprintf("timeout: sentinel=%v aborted=%v", errors.Is(err, ErrTLSHandshakeTimeout), errors.Is(err, syscall.ECONNABORTED)))
		silent.Close()
		return guard(at, func() error { return silent.WaitClosed(at) })
	})
	expectLog(t, []string{
		"client: reset=true eof=false",
		`server: client read "", WaitClosed <nil>, protocol []`,
		"timeout: sentinel=true aborted=true",
	}, log)
}

// A StreamWriter.StartTLS whose handshake fails ends the stream: the
// application protocol was connected over the raw transport, and asyncio's
// SSLProtocol gives it connection_lost with the handshake's error, so
// wait_closed and read raise it. The stream protocol never heard of the
// loss, so WaitClosed and Read hung. After a cancelled StartTLS (asyncio
// closes the transport, and its wait_closed hangs) the stream ends
// cleanly: the close was ours. A nil config is a *ValueError before the
// transport is touched (asyncio: TypeError).
func TestTLSEdges_FailedStreamStartTLSEndsTheStream(t *testing.T) {
	clean(t)
	_, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := r.Read(t, 5); err != nil {
				return err
			}
			w.Write([]byte("this is not TLS at all\n"))
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		err = w.StartTLS(at, nil, "localhost")
		log = append(log, fmt.Sprintf("nil config: ValueError=%v closing=%v", errors.Is(err, asyncio.ErrValue), w.IsClosing()))
		err = w.StartTLS(at, clientCfg, "localhost")
		log = append(log, fmt.Sprintf("StartTLS: %v", err))
		werr := guard(at, func() error { return w.WaitClosed(at) })
		var rerr error
		guard(at, func() error { _, rerr = r.Read(at, -1); return nil }) //asynciovet:ignore droppedcancel the read's own error is what the test checks
		log = append(log, fmt.Sprintf("WaitClosed same error: %v, Read same error: %v", errors.Is(werr, err), errors.Is(rerr, err)))

		// Cancelled while the server says nothing.
		r, w, err = OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		started := asyncio.NewFuture[struct{}](at)
		tk := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			started.SetResult(struct{}{})
			return struct{}{}, w.StartTLS(t, clientCfg, "localhost")
		})
		if _, err := started.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		tk.Cancel()
		_, err = tk.Await(at)
		log = append(log, fmt.Sprintf("cancelled StartTLS: %v", asyncio.IsCancelled(err)))
		werr = guard(at, func() error { return w.WaitClosed(at) })
		var rest []byte
		rerr = guard(at, func() error { rest, err = r.Read(at, -1); return err })
		log = append(log, fmt.Sprintf("WaitClosed %v, Read %q %v", werr, rest, rerr))
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{
		"nil config: ValueError=true closing=false",
		"StartTLS: tls: first record does not look like a TLS handshake",
		"WaitClosed same error: true, Read same error: true",
		"cancelled StartTLS: true",
		`WaitClosed <nil>, Read "" <nil>`,
	}, log)
}

// PauseReading that comes while the TLS reader task is about to decrypt
// a record (its bytes arrived, the reader was woken, another task pauses
// first) holds that record back until ResumeReading, as asyncio's
// SSLProtocol delivers nothing while the application's reading is
// paused. It was delivered to a paused protocol.
func TestTLSEdges_NothingDeliveredWhilePausedEvenARecordInFlight(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		server := newStreamRecorder(at, "server", &log)
		made := asyncio.NewFuture[struct{}](at)
		server.onMade = func(*streamRecorder) { made.SetResult(struct{}{}) }
		srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		client := newStreamRecorder(at, "client", &[]string{})
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		if _, err := made.Await(at); err != nil {
			return err
		}
		// The bytes are in the server's socket when Write returns
		// (loopback); the next iteration reads them and wakes the reader
		// task, which runs one iteration later, after this task.
		tr.Write([]byte("hello"))
		if err := settle(at); err != nil {
			return err
		}
		server.tr.PauseReading()
		log = append(log, "paused")
		for range 5 {
			if err := settle(at); err != nil {
				return err
			}
		}
		log = append(log, "resuming")
		server.tr.ResumeReading()
		for range 5 {
			if err := settle(at); err != nil {
				return err
			}
		}
		tr.Close()
		if err := guard(at, func() error { _, err := server.lost.Await(at); return err }); err != nil {
			return err
		}
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{"server:made", "paused", "resuming", "server:data hello", "server:eof", "server:lost <nil>"}, log)
}

// Close on a TLS transport whose peer takes nothing (its reading paused)
// cannot flush, so the connection would stay open for ever; asyncio's
// ssl_shutdown_timeout (30 s by default) aborts it and connection_lost
// gets TimeoutError("SSL shutdown timed out"). WithTLSShutdownTimeout
// sets it and is checked as WithTLSHandshakeTimeout is. A peer that
// reads closes at once, as before.
func TestTLSEdges_ShutdownTimeoutAbortsAPeerThatDoesNotRead(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	for _, opts := range [][]Option{{WithTLSShutdownTimeout(0)}, {WithTLS(clientCfg), WithTLSShutdownTimeout(-time.Second)}} {
		_, err := buildOptions("CreateConnection", opts)
		log = append(log, describe(err))
	}
	runVirtual(t, func(at *asyncio.T) error {
		for _, opts := range [][]Option{{WithTLS(clientCfg)}, {WithTLSShutdownTimeout(5 * time.Second), WithTLS(clientCfg)}} {
			server := newStreamRecorder(at, "server", &[]string{})
			made := asyncio.NewFuture[struct{}](at)
			server.onMade = func(p *streamRecorder) { p.tr.PauseReading(); made.SetResult(struct{}{}) }
			srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
			if err != nil {
				return err
			}
			client := newStreamRecorder(at, "client", &[]string{})
			tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), opts...)
			if err != nil {
				return err
			}
			if _, err := made.Await(at); err != nil {
				return err
			}
			unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
			tr.Write(bytes.Repeat([]byte("x"), 8<<20))
			start := at.Loop().Time()
			tr.Close()
			var lostErr error
			if err := guard(at, func() (err error) { lostErr, err = client.lost.Await(at); return err }); err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("lost after %v: sentinel=%v timeout=%v", at.Loop().Time()-start,
				errors.Is(lostErr, ErrTLSShutdownTimeout), errors.Is(lostErr, asyncio.ErrTimeout)))
			srv.Close()
			srv.AbortClients()
			if err := guard(at, func() error { return srv.WaitClosed(at) }); err != nil {
				return err
			}
		}
		// A peer that reads: ConnectionLost(nil) with no time passing.
		echo, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		client := newStreamRecorder(at, "client", &[]string{})
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(echo), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		start := at.Loop().Time()
		tr.Write([]byte("bye\n"))
		tr.Close()
		lostErr, err := client.lost.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("reading peer: lost %v after %v", lostErr, at.Loop().Time()-start))
		echo.Close()
		return guard(at, func() error { return echo.WaitClosed(at) })
	})
	expectLog(t, []string{
		"ValueError ssl_shutdown_timeout is only meaningful with ssl",
		"ValueError ssl_shutdown_timeout should be a positive number, got -1s",
		"lost after 30s: sentinel=true timeout=true",
		"lost after 5s: sentinel=true timeout=true",
		"reading peer: lost <nil> after 0s",
	}, log)
}

// CloseClients and AbortClients reach connections still in their TLS
// handshake: the handshake ends, the protocol is never made, WaitClosed
// returns; a loop closed with a handshake in flight and a TLS server open
// leaves no descriptor or goroutine (clean).
func TestTLSEdges_ServerClientsInTheHandshake(t *testing.T) {
	clean(t)
	serverCfg, _ := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, abort := range []bool{false, true} {
			var serverLog []string
			srv, err := CreateServer(at, func() Protocol { return newStreamRecorder(at, "server", &serverLog) }, "127.0.0.1", 0, WithTLS(serverCfg))
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			for len(srv.clients) == 0 {
				if err := settle(at); err != nil {
					return err
				}
			}
			srv.Close()
			if abort {
				srv.AbortClients()
			} else {
				srv.CloseClients()
			}
			err = guard(at, func() error { return srv.WaitClosed(at) })
			var rerr error
			guard(at, func() error { _, rerr = r.Read(at, -1); return nil }) //asynciovet:ignore droppedcancel the read's own error is what the test checks
			log = append(log, fmt.Sprintf("abort=%v: WaitClosed %v, client read %v, protocol %v", abort, err, rerr, serverLog))
			w.Close()
		}
		srv, err := CreateServer(at, func() Protocol { return &BaseProtocol{} }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		_, _, err = OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		for len(srv.clients) == 0 {
			if err := settle(at); err != nil {
				return err
			}
		}
		return nil // the loop closes with all of it open
	})
	expectLog(t, []string{
		"abort=false: WaitClosed <nil>, client read <nil>, protocol []",
		"abort=true: WaitClosed <nil>, client read <nil>, protocol []",
	}, log)
}

// Over TLS, ExtraInfo has asyncio's keys after the handshake: ssl_object
// (the *tls.Conn, whose state says the handshake is done), peercert (the
// server's leaf on the client, nil on a server whose client sent none),
// sslcontext (the config given), and the socket's keys.
func TestTLSEdges_ExtraInfo(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		got := asyncio.NewFuture[string](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			got.SetResult(fmt.Sprintf("server: peercert=%v tls=%v", PeerCert(w) != nil, TLSConn(w) != nil))
			w.Close()
			return nil
		}, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		cs := TLSConn(w).ConnectionState()
		cfg, _ := w.ExtraInfo("sslcontext").(*tls.Config)
		_, sock := Socket(w)
		log = append(log, fmt.Sprintf("client: complete=%v peercert=%v sslcontext=%v socket=%v peername=%v",
			cs.HandshakeComplete, PeerCert(w).Subject.CommonName, cfg == clientCfg, sock, PeerName(w).String() == srv.Addr().String()))
		s, err := got.Await(at)
		if err != nil {
			return err
		}
		log = append(log, s)
		w.Close()
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{"client: complete=true peercert=localhost sslcontext=true socket=true peername=true", "server: peercert=false tls=true"}, log)
}

// CreateServer on a host of several addresses: an address this host does
// not have (EADDRNOTAVAIL) is skipped, as asyncio does (bpo-30945), and
// only when none can be bound does it fail, "could not bind on any
// address out of ..."; it failed the whole call. Any other bind failure,
// first or last, closes what was bound: no descriptor is left.
func TestServerEdges_HostOfSeveralAddresses(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		proto := func() Protocol { return &BaseProtocol{} }
		taken, err := CreateServer(at, proto, "127.0.0.2", 0)
		if err != nil {
			return err
		}
		port := serverPort(taken)
		for _, ips := range [][]string{{"127.0.0.1", "127.0.0.2"}, {"127.0.0.2", "127.0.0.1"}} {
			leaked, err := callCountingFDs(t, func() error {
				_, err := CreateServer(at, proto, "example", port, fakeResolver(ips...))
				return err
			})
			log = append(log, fmt.Sprintf("%v: in use=%v leaked=%v", ips, errors.Is(err, syscall.EADDRINUSE), leaked))
		}
		srv, err := CreateServer(at, proto, "example", 0, fakeResolver("192.0.2.7", "127.0.0.1"))
		if err != nil {
			return err
		}
		var addrs []string
		for _, a := range srv.Addrs() {
			addrs = append(addrs, a.(*net.TCPAddr).IP.String())
		}
		log = append(log, fmt.Sprintf("unavailable skipped: listening on %v", addrs))
		srv.Close()
		_, err = CreateServer(at, proto, "example", 0, fakeResolver("192.0.2.7"))
		log = append(log, fmt.Sprintf("none bound: %v (EADDRNOTAVAIL=%v)", err != nil && strings.HasPrefix(err.Error(), "could not bind on any address out of [192.0.2.7:0]"), errors.Is(err, syscall.EADDRNOTAVAIL)))
		taken.Close()
		return errors.Join(srv.WaitClosed(at), taken.WaitClosed(at))
	})
	expectLog(t, []string{
		"[127.0.0.1 127.0.0.2]: in use=true leaked=[]",
		"[127.0.0.2 127.0.0.1]: in use=true leaked=[]",
		"unavailable skipped: listening on [127.0.0.1]",
		"none bound: true (EADDRNOTAVAIL=true)",
	}, log)
}

// Server lifecycle as asyncio 3.13: WaitClosed waits for connections
// still open after Close; ServeForever ends with a cancellation when
// another task closes the server (serve_forever's future is cancelled);
// a factory that panics loses that connection only, the server keeps
// serving.
func TestServerEdges_Lifecycle(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, "exception handler: "+ctx.Message)
		})
		n := 0
		srv, err := CreateServer(at, func() Protocol {
			n++
			if n == 1 {
				panic("factory boom")
			}
			return &BaseProtocol{}
		}, "127.0.0.1", 0, WithDeferredServing())
		if err != nil {
			return err
		}
		forever := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.ServeForever(t) })
		if err := settle(at); err != nil { // ServeForever listens
			return err
		}
		r1, w1, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		rest, err := r1.Read(at, -1)
		log = append(log, fmt.Sprintf("first connection: %q %v", rest, err))
		w1.Close()
		r2, w2, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		for srv.activeCount == 0 {
			if err := settle(at); err != nil {
				return err
			}
		}
		srv.Close()
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("after Close: serving=%v forever done=%v", srv.IsServing(), forever.Done()))
		w2.Close() // the server's side sees EOF and closes: WaitClosed and ServeForever end
		_, err = forever.Await(at)
		log = append(log, fmt.Sprintf("ServeForever: cancelled=%v, connection gone=%v", asyncio.IsCancelled(err), srv.activeCount == 0))
		//asynciovet:ignore droppedcancel test teardown: the client's end of a closed connection
		r2.Read(at, -1)
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{
		"exception handler: Error on transport creation for incoming connection",
		`first connection: "" <nil>`,
		"after Close: serving=false forever done=false",
		"ServeForever: cancelled=true, connection gone=true",
	}, log)
}

// Every call that takes Options, given an option that does not apply to
// it, returns a *ValueError naming the option and the call before it
// does anything: no descriptor opened or adopted (WithSocket's stays the
// caller's), no task, no socket file, no child process. The table of
// which call takes which option is written out here from the options'
// documentation, independently of options.go's sets; every pair in it is
// accepted. StartHTTPServer used to name StartServer.
func TestOptionsEdges_EveryCallRefusesEveryOptionItDoesNotTake(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	newPath := filepath.Join(dir, "new.sock")
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)

	tcpConnects := []string{"CreateConnection", "OpenConnection"}
	unixConnects := []string{"CreateUnixConnection", "OpenUnixConnection"}
	tcpServers := []string{"CreateServer", "StartServer", "CreateGroupServer", "StartGroupServer", "StartHTTPServer"}
	unixServers := []string{"CreateUnixServer", "StartUnixServer", "CreateUnixGroupServer", "StartUnixGroupServer"}
	processes := []string{"SubprocessExec", "SubprocessShell", "CreateSubprocessExec", "CreateSubprocessShell"}
	cat := func(lists ...[]string) []string {
		var out []string
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	streams := cat(tcpConnects, unixConnects, tcpServers, unixServers)
	options := []struct {
		opt   Option
		takes []string
	}{
		{WithTLS(&tls.Config{}), append([]string{"ConnectAcceptedSocket"}, streams...)},
		{WithTLSHandshakeTimeout(time.Second), append([]string{"StartTLS", "ConnectAcceptedSocket"}, streams...)},
		{WithTLSShutdownTimeout(time.Second), append([]string{"StartTLS", "ConnectAcceptedSocket"}, streams...)},
		{WithStreamLimit(10), []string{"OpenConnection", "OpenUnixConnection", "StartServer", "StartUnixServer", "StartGroupServer", "StartUnixGroupServer", "StartHTTPServer", "CreateSubprocessExec", "CreateSubprocessShell"}},
		{WithHappyEyeballsDelay(time.Second), append([]string{"DialConn"}, tcpConnects...)},
		{WithInterleave(1), append([]string{"DialConn"}, tcpConnects...)},
		{WithBacklog(5), cat(tcpServers, unixServers)},
		{WithDeferredServing(), cat(tcpServers, unixServers)},
		{WithSocket(fd), append([]string{"CreateDatagramEndpoint", "CreateUnixDatagramEndpoint"}, streams...)},
		{WithLocalAddr("127.0.0.1", 0), tcpConnects},
		{WithKeepSocketFile(), unixServers},
		{WithReusePort(), append([]string{"CreateDatagramEndpoint"}, tcpServers...)},
		{WithAllowBroadcast(), []string{"CreateDatagramEndpoint"}},
		{WithAllErrors(), tcpConnects},
		{WithKeepAlive(), tcpServers},
		{WithFamily(unix.AF_INET), append([]string{"CreateDatagramEndpoint"}, cat(tcpConnects, tcpServers)...)},
		{WithHosts("127.0.0.1"), tcpServers},
		{WithMaxWriteBuffer(10), append([]string{"ConnectAcceptedSocket"}, streams...)},
		{WithResolver(net.DefaultResolver), cat([]string{"DialConn"}, tcpConnects, tcpServers)},
		{WithNetwork(nil), cat([]string{"DialConn", "CreateDatagramEndpoint"}, tcpConnects, tcpServers)},
		{WithStdin(Pipe), processes},
		{WithStdout(Pipe), processes},
		{WithStderr(Pipe), processes},
		{WithDir(dir), processes},
		{WithEnv(nil), processes},
		{WithCmd(func(*exec.Cmd) {}), processes},
	}

	var log []string
	onGroup(t, 1, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		proto := func() Protocol { return &BaseProtocol{} }
		cb := func(*asyncio.T, *StreamReader, *StreamWriter) error { return nil }
		sub := func() SubprocessProtocol { return nopSubprocess{} }
		// Live servers, so that a connect that ran would succeed.
		tcpSrv, err := CreateServer(at, proto, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		unixPath := filepath.Join(dir, "live.sock")
		unixSrv, err := CreateUnixServer(at, proto, unixPath)
		if err != nil {
			return err
		}
		port := serverPort(tcpSrv)
		// A plain connection for StartTLS, which a refused option must
		// leave plain.
		plainTr, plainP, err := CreateConnection(at, proto, "127.0.0.1", port)
		if err != nil {
			return err
		}
		// A connected socket for ConnectAcceptedSocket, which a refused
		// option must leave open and not adopted.
		acceptedFDs := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(acceptedFDs[0])
		defer unix.Close(acceptedFDs[1])
		calls := map[string]func(opts ...Option) error{
			"ConnectAcceptedSocket": func(o ...Option) error {
				_, _, err := ConnectAcceptedSocket(at, proto, acceptedFDs[0], o...)
				return err
			},
			"StartTLS": func(o ...Option) error {
				_, err := StartTLS(at, plainTr, plainP, &tls.Config{}, false, "", o...)
				return err
			},
			"CreateConnection": func(o ...Option) error { _, _, err := CreateConnection(at, proto, "127.0.0.1", port, o...); return err },
			"CreateUnixConnection": func(o ...Option) error {
				_, _, err := CreateUnixConnection(at, proto, unixPath, o...)
				return err
			},
			"OpenConnection":     func(o ...Option) error { _, _, err := OpenConnection(at, "127.0.0.1", port, o...); return err },
			"OpenUnixConnection": func(o ...Option) error { _, _, err := OpenUnixConnection(at, unixPath, o...); return err },
			"DialConn":           func(o ...Option) error { _, err := DialConn(at, "tcp", tcpSrv.Addr().String(), o...); return err },
			"CreateServer":       func(o ...Option) error { _, err := CreateServer(at, proto, "127.0.0.1", 0, o...); return err },
			"CreateUnixServer":   func(o ...Option) error { _, err := CreateUnixServer(at, proto, newPath, o...); return err },
			"StartServer":        func(o ...Option) error { _, err := StartServer(at, cb, "127.0.0.1", 0, o...); return err },
			"StartUnixServer":    func(o ...Option) error { _, err := StartUnixServer(at, cb, newPath, o...); return err },
			"StartHTTPServer": func(o ...Option) error {
				_, err := StartHTTPServer(at, http.NotFoundHandler(), "127.0.0.1", 0, o...)
				return err
			},
			"CreateDatagramEndpoint": func(o ...Option) error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil, o...)
				return err
			},
			"CreateUnixDatagramEndpoint": func(o ...Option) error {
				_, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, newPath, "", o...)
				return err
			},
			"SubprocessExec": func(o ...Option) error {
				_, _, err := SubprocessExec(at, sub, "touch", []string{marker}, o...)
				return err
			},
			"SubprocessShell": func(o ...Option) error { _, _, err := SubprocessShell(at, sub, "touch "+marker, o...); return err },
			"CreateSubprocessExec": func(o ...Option) error {
				_, err := CreateSubprocessExec(at, "touch", []string{marker}, o...)
				return err
			},
			"CreateSubprocessShell": func(o ...Option) error { _, err := CreateSubprocessShell(at, "touch "+marker, o...); return err },
			"CreateGroupServer": func(o ...Option) error {
				_, err := CreateGroupServer(at, g, GroupRoundRobin, proto, "127.0.0.1", 0, o...)
				return err
			},
			"CreateUnixGroupServer": func(o ...Option) error {
				_, err := CreateUnixGroupServer(at, g, GroupRoundRobin, proto, newPath, o...)
				return err
			},
			"StartGroupServer": func(o ...Option) error {
				_, err := StartGroupServer(at, g, GroupRoundRobin, cb, "127.0.0.1", 0, o...)
				return err
			},
			"StartUnixGroupServer": func(o ...Option) error {
				_, err := StartUnixGroupServer(at, g, GroupRoundRobin, cb, newPath, o...)
				return err
			},
		}
		if len(calls) != int(numCalls) {
			return fmt.Errorf("the table has %d calls, options.go %d", len(calls), numCalls)
		}
		names := make([]string, 0, len(calls))
		for name := range calls {
			names = append(names, name)
		}
		sort.Strings(names)
		refused, accepted := 0, 0
		for _, o := range options {
			takes := map[string]bool{}
			for _, c := range o.takes {
				if calls[c] == nil {
					return fmt.Errorf("%s: unknown call %q in the table", o.opt.name, c)
				}
				takes[c] = true
			}
			for _, name := range names {
				if takes[name] {
					// Accepted: options.go agrees (no call is made).
					if _, err := buildOptions(name, []Option{o.opt}); err != nil && strings.Contains(err.Error(), "does not take") {
						log = append(log, fmt.Sprintf("%s refuses %s, which its documentation says it takes: %v", name, o.opt.name, err))
					}
					accepted++
					continue
				}
				refused++
				tasks := len(asyncio.AllTasks(at))
				leaked, err := callCountingFDs(t, func() error { return calls[name](o.opt) })
				var ve *asyncio.ValueError
				if !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, name+" does not take the option "+o.opt.name+" (it applies to ") {
					log = append(log, fmt.Sprintf("%s with %s: %v", name, o.opt.name, err))
				}
				if len(leaked) > 0 {
					log = append(log, fmt.Sprintf("%s with %s: descriptors left %v", name, o.opt.name, leaked))
				}
				if n := len(asyncio.AllTasks(at)); n != tasks {
					log = append(log, fmt.Sprintf("%s with %s: %d tasks, %d before", name, o.opt.name, n, tasks))
				}
			}
		}
		log = append(log, fmt.Sprintf("refused %d, accepted %d", refused, accepted))
		_, stillPlain := plainTr.(*socketTransport)
		log = append(log, fmt.Sprintf("StartTLS's transport plain and open: %v", stillPlain && !plainTr.IsClosing()))
		plainTr.Close()
		tcpSrv.Close()
		unixSrv.Close()
		return errors.Join(tcpSrv.WaitClosed(at), unixSrv.WaitClosed(at))
	})
	for _, p := range []string{marker, newPath} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			log = append(log, fmt.Sprintf("%s exists (%v): a refused call did something", filepath.Base(p), err))
		}
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		log = append(log, fmt.Sprintf("WithSocket's descriptor was closed: %v", err))
	}
	expectLog(t, []string{"refused 392, accepted 180", "StartTLS's transport plain and open: true"}, log)
}

// CloseClients and AbortClients act on the accepted sockets' own
// transports, as asyncio 3.13's (Server._clients holds the socket
// transports, below the SSL protocol): a TLS connection is closed at the
// socket once its buffer is sent, with no TLS shutdown, so the server's
// application hears of it (its reader's EOF, ConnectionLost(nil)) before
// the client has read anything. CloseClients closed the TLS layer
// instead: close_notify, then a wait for the client's end, so the server's
// handler saw EOF only after the client had read its EOF and closed
// (found by porting a STARTTLS service, tests/ports p119, and probing
// close_clients against CPython 3.13.0).
func TestTLSEdges_CloseClientsClosesTheSockets(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	clientCfg.ServerName = "localhost"
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		for _, abort := range []bool{false, true} {
			var order []string
			handlerDone := asyncio.NewFuture[struct{}](at)
			handlerStarted := asyncio.NewFuture[struct{}](at)
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				handlerStarted.SetResult(struct{}{})
				line, err := r.ReadLine(t)
				order = append(order, fmt.Sprintf("server read %q %v", line, err))
				handlerDone.SetResult(struct{}{})
				return nil
			}, "127.0.0.1", 0, WithTLS(serverCfg))
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
			if err != nil {
				return err
			}
			client := asyncio.CreateTaskErr(at, func(t *asyncio.T) error {
				line, err := r.ReadLine(t)
				order = append(order, fmt.Sprintf("client read %q %v", line, err))
				w.Close()
				return w.WaitClosed(t)
			})
			if _, err := guardedAwait[struct{}](at, handlerStarted); err != nil {
				return err
			}
			if err := settle(at); err != nil {
				return err
			}
			srv.Close()
			if abort {
				srv.AbortClients()
			} else {
				srv.CloseClients()
			}
			if err := guard(at, func() error { return srv.WaitClosed(at) }); err != nil {
				return fmt.Errorf("abort=%v: WaitClosed: %w (%v)", abort, err, order)
			}
			if _, err := guardedAwait[struct{}](at, handlerDone); err != nil {
				return fmt.Errorf("abort=%v: handler: %w (%v)", abort, err, order)
			}
			if _, err := guardedAwait[struct{}](at, client); err != nil {
				return fmt.Errorf("abort=%v: client: %w (%v)", abort, err, order)
			}
			log = append(log, fmt.Sprintf("abort=%v: %s", abort, strings.Join(order, "; ")))
		}
		return nil
	})
	expectLog(t, []string{
		`abort=false: server read "" <nil>; client read "" <nil>`,
		`abort=true: server read "" <nil>; client read "" <nil>`,
	}, log)
}
