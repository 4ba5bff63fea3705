//go:build unix

package aio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// simPair is a network with a client and a server host joined by link.
func simPair(t *asyncio.T, seed uint64, link LinkConfig) (*SimNetwork, *SimHost, *SimHost) {
	n := NewSimNetwork(t, seed)
	c, s := n.Host("client"), n.Host("server")
	n.SetLink(c, s, link)
	return n, c, s
}

// An echo over a 50 ms link: the dial takes one round trip, a line and
// its echo another; the addresses are the simulated ones; on virtual
// time all of it takes no real time.
func TestSimEchoLatency(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 50 * time.Millisecond})
		srv, err := StartServer(t, echoLines("echo: "), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		if got := srv.Addr().String(); got != "10.0.0.2:80" {
			return fmt.Errorf("server address %s", got)
		}
		start := t.Loop().Time()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		if d := t.Loop().Time() - start; d != 100*time.Millisecond {
			return fmt.Errorf("dial took %v, want 100ms", d)
		}
		if got := w.ExtraInfo("peername").(net.Addr).String(); got != "10.0.0.2:80" {
			return fmt.Errorf("peername %s", got)
		}
		if got := w.ExtraInfo("sockname").(net.Addr).String(); got != "10.0.0.1:49152" {
			return fmt.Errorf("sockname %s", got)
		}
		start = t.Loop().Time()
		w.Write([]byte("hello\n"))
		line, err := r.ReadLine(t)
		if err != nil {
			return err
		}
		if string(line) != "echo: hello\n" {
			return fmt.Errorf("got %q", line)
		}
		if d := t.Loop().Time() - start; d != 100*time.Millisecond {
			return fmt.Errorf("echo took %v, want 100ms", d)
		}
		return nil
	})
}

// No listener: ECONNREFUSED after one round trip; an unknown name: a
// *net.DNSError.
func TestSimRefused(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, _ := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		_, _, err := OpenConnection(t, "10.0.0.2", 81, WithNetwork(c))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial: %v, want ECONNREFUSED", err)
		}
		if d := t.Loop().Time(); d != 20*time.Millisecond {
			return fmt.Errorf("refused after %v, want 20ms", d)
		}
		_, err = DialConn(t, "tcp", "nowhere:80", WithNetwork(c))
		var dns *net.DNSError
		if !errors.As(err, &dns) || !dns.IsNotFound {
			return fmt.Errorf("dial nowhere: %v, want a not-found DNSError", err)
		}
		return nil
	})
}

// A reset in the middle of a response: the reader's read fails with the
// reset (ECONNRESET, asyncio's ConnectionResetError), the protocol's
// ConnectionLost gets it, Drain after it fails as on a real reset, and
// the server's side sees the reset too.
func TestSimResetMidStream(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		serverErr := asyncio.NewFuture[error](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Write([]byte("part one;"))
			_, err := r.ReadExactly(t, 1) // the client never sends: ends with the reset
			serverErr.SetResult(err)
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		n.At(t.Loop().Time()+50*time.Millisecond, func() { n.Conns()[0].Reset() })
		// As on a real socket: the reset is the reader's error (asyncio's
		// ConnectionResetError), whatever was buffered.
		_, err = r.ReadExactly(t, 100)
		if !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("ReadExactly: %v, want ECONNRESET", err)
		}
		if !errors.Is(w.WaitClosed(t), syscall.ECONNRESET) {
			return fmt.Errorf("WaitClosed: %v, want ECONNRESET", w.WaitClosed(t))
		}
		if !errors.Is(r.Err(), syscall.ECONNRESET) {
			return fmt.Errorf("reader exception %v, want ECONNRESET", r.Err())
		}
		w.Write([]byte("late"))
		if err := w.Drain(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("Drain after the reset: %v, want ECONNRESET", err)
		}
		serr, err := serverErr.Await(t)
		if err != nil {
			return err
		}
		if !errors.Is(serr, syscall.ECONNRESET) {
			return fmt.Errorf("server's read: %v, want ECONNRESET", serr)
		}
		if len(n.Conns()) != 0 {
			return fmt.Errorf("connections left: %v", n.Conns())
		}
		return nil
	})
}

// Half-close: the client's WriteEOF reaches the server as EOF after the
// latency; the server still answers, then closes.
func TestSimHalfClose(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			all, err := r.Read(t, -1) // until EOF
			if err != nil {
				return err
			}
			w.Write([]byte(fmt.Sprintf("got %q at %v", all, t.Loop().Time())))
			return w.Drain(t)
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("question"))
		if err := w.WriteEOF(); err != nil {
			return err
		}
		answer, err := r.Read(t, -1)
		if err != nil {
			return err
		}
		if want := `got "question" at 30ms`; string(answer) != want {
			return fmt.Errorf("answer %q, want %q", answer, want)
		}
		w.Close()
		if err := w.WaitClosed(t); err != nil {
			return err
		}
		for len(n.Conns()) > 0 { // the relay closes once both EOFs are through
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return err
			}
		}
		return nil
	})
}

// A stalled connection is silent: a read under a timeout times out; after
// Resume the held data arrives.
func TestSimStall(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 5 * time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		conn := n.Conns()[0]
		conn.StallFor(30 * time.Second)
		w.Write([]byte("ping\n"))
		_, err = asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) ([]byte, error) { return r.ReadLine(t) })
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("read during the stall: %v, want a timeout", err)
		}
		line, err := r.ReadLine(t)
		if err != nil {
			return err
		}
		// Resumed at 30.01 s; the ping then takes 5 ms each way.
		if string(line) != "ping\n" || t.Loop().Time() != 30*time.Second+10*time.Millisecond+10*time.Millisecond {
			return fmt.Errorf("got %q at %v", line, t.Loop().Time())
		}
		return nil
	})
}

// A partition holds segments and loses SYNs; after Heal both go through.
func TestSimPartitionHeals(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 5 * time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		n.Partition(c, s)
		n.At(10*time.Second, func() { n.Heal(c, s) })
		// SYNs at 0, 1, 3, 7 s are lost; the one at 15 s gets through.
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		if now := t.Loop().Time(); now != 15*time.Second+10*time.Millisecond {
			return fmt.Errorf("connected at %v, want 15.01s", now)
		}
		n.Partition(c, s)
		n.At(t.Loop().Time()+time.Minute, func() { n.Heal(c, s) })
		w.Write([]byte("ping\n"))
		line, err := r.ReadLine(t)
		if err != nil {
			return err
		}
		if want := 15*time.Second + 10*time.Millisecond + time.Minute + 10*time.Millisecond; string(line) != "ping\n" || t.Loop().Time() != want {
			return fmt.Errorf("got %q at %v, want at %v", line, t.Loop().Time(), want)
		}
		return nil
	})
}

// A partition that never heals: the dial fails with ETIMEDOUT after the
// SYN retries (1+2+...+64 s).
func TestSimPartitionTimesOut(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{})
		n.Partition(c, s)
		_, err := DialConn(t, "tcp", "server:80", WithNetwork(c))
		if !errors.Is(err, syscall.ETIMEDOUT) || t.Loop().Time() != 127*time.Second {
			return fmt.Errorf("dial: %v at %v, want ETIMEDOUT at 127s", err, t.Loop().Time())
		}
		return nil
	})
}

// Bandwidth: 1 MB at 1 MB/s over a 0-latency link takes 1 s; a small
// Buffer makes the sender's transport buffer and pause its protocol.
func TestSimBandwidthAndBuffer(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Bandwidth: 1 << 20, Buffer: 16 << 10})
		got := asyncio.NewFuture[time.Duration](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := r.ReadExactly(t, 1<<20); err != nil {
				return err
			}
			got.SetResult(t.Loop().Time())
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write(make([]byte, 1<<20))
		if w.Transport().WriteBufferSize() == 0 {
			return fmt.Errorf("the transport buffered nothing: the network took 1 MiB at once")
		}
		if err := w.Drain(t); err != nil {
			return err
		}
		at, err := got.Await(t)
		if err != nil {
			return err
		}
		if at != time.Second {
			return fmt.Errorf("1 MiB at 1 MiB/s arrived at %v, want 1s", at)
		}
		return nil
	})
}

// A peer that closes in the middle of a message: the reader gets an
// *IncompleteReadError with what came.
func TestSimEOFMidMessage(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Write([]byte("part one;"))
			w.Close()
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		_, err = r.ReadExactly(t, 100)
		var short *IncompleteReadError
		if !errors.As(err, &short) || string(short.Partial) != "part one;" {
			return fmt.Errorf("ReadExactly: %v, want an IncompleteReadError with part one", err)
		}
		return nil
	})
}

// jitteryScenario is a small fan-out over jittery links with a fault the
// seed chooses; it returns the network's trace.
func jitteryScenario(seed uint64) ([]string, error) {
	var trace []string
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := NewSimNetwork(t, seed)
		n.SetDefaultLink(LinkConfig{Latency: 5 * time.Millisecond, Jitter: 20 * time.Millisecond})
		client := n.Host("client")
		for i := range 3 {
			h := n.Host(fmt.Sprintf("server%d", i))
			echo := echoLines(h.Name() + ": ")
			srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				echo(t, r, w) // ends with the reset on one of them
				return nil
			}, "", 80, WithNetwork(h))
			if err != nil {
				return struct{}{}, err
			}
			defer srv.Close()
		}
		err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i := range 3 {
				asyncio.SpawnErr(g, func(t *asyncio.T) error {
					r, w, err := OpenConnection(t, fmt.Sprintf("server%d", i), 80, WithNetwork(client))
					if errors.Is(err, syscall.ECONNREFUSED) {
						return nil // the reset, in the handshake
					}
					if err != nil {
						return err
					}
					defer w.Close()
					for j := range 3 {
						w.Write([]byte(fmt.Sprintf("line %d\n", j)))
						if _, err := r.ReadLine(t); err != nil {
							return nil // the reset
						}
					}
					return nil
				})
			}
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 30*time.Millisecond); err != nil {
					return err
				}
				if cs := n.Conns(); len(cs) > 0 {
					cs[n.Rand().IntN(len(cs))].Reset()
				}
				return nil
			})
			return nil
		})
		trace = n.Trace()
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	return trace, err
}

// The same seed gives the same trace, byte for byte; another seed another
// one (jitter and the reset connection are the seed's choices).
func TestSimTraceDeterministic(t *testing.T) {
	clean(t)
	a, err := jitteryScenario(7)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := jitteryScenario(7)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("seed 7 gave two traces:\n%s\n----\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
	c, err := jitteryScenario(8)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a, "\n") == strings.Join(c, "\n") {
		t.Fatalf("seeds 7 and 8 gave the same trace")
	}
	t.Logf("seed 7:\n%s", strings.Join(a, "\n"))
	if !strings.Contains(strings.Join(a, "\n"), " reset") {
		t.Fatalf("no reset in the trace:\n%s", strings.Join(a, "\n"))
	}
}

// SearchSeeds reports the first seed whose run fails, and its error.
func TestSimSearchSeeds(t *testing.T) {
	var ran []uint64
	seed, err := SearchSeeds(10, 20, func(seed uint64) error {
		ran = append(ran, seed)
		if seed%7 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if seed != 14 || err == nil || err.Error() != "seed 14: boom" || len(ran) != 5 {
		t.Fatalf("SearchSeeds = %d, %v after %v", seed, err, ran)
	}
	if seed, err := SearchSeeds(1, 5, func(uint64) error { return nil }); seed != 0 || err != nil {
		t.Fatalf("all pass: %d, %v", seed, err)
	}
}

// A network used from another loop, or after Close, fails clearly;
// closing the network ends its connections and its dials; nothing is
// left open when the loop closes with connections open.
func TestSimMisuseAndClose(t *testing.T) {
	clean(t)
	var other *SimHost
	runVirtual(t, func(t *asyncio.T) error {
		other = NewSimNetwork(t, 1).Host("x")
		return nil
	})
	runVirtual(t, func(t *asyncio.T) error {
		if _, err := DialConn(t, "tcp", "x:80", WithNetwork(other)); !errors.Is(err, ErrSimNetworkLoop) {
			return fmt.Errorf("dial on another loop's network: %v", err)
		}
		if _, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(other)); !errors.Is(err, ErrSimNetworkLoop) {
			return fmt.Errorf("listen on another loop's network: %v", err)
		}
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		n.Partition(c, s)
		dial := asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) { return DialConn(t, "tcp", "server:80", WithNetwork(c)) })
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return err
		}
		n.Close()
		if _, err := dial.Await(t); !errors.Is(err, ErrSimNetworkClosed) {
			return fmt.Errorf("dial waiting at Close: %v", err)
		}
		if _, err := r.ReadLine(t); err != nil {
			return fmt.Errorf("read after the network closed: %v, want EOF", err)
		}
		if !r.AtEOF() {
			return fmt.Errorf("no EOF after the network closed")
		}
		if _, err := DialConn(t, "tcp", "server:80", WithNetwork(c)); !errors.Is(err, ErrSimNetworkClosed) {
			return fmt.Errorf("dial after Close: %v", err)
		}
		// A second network's connection stays open until the loop closes.
		n2, c2, s2 := simPair(t, 2, LinkConfig{})
		srv2, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s2))
		if err != nil {
			return err
		}
		_ = srv2
		if _, _, err := OpenConnection(t, "server", 80, WithNetwork(c2)); err != nil {
			return err
		}
		if len(n2.Conns()) != 1 {
			return fmt.Errorf("conns: %v", n2.Conns())
		}
		return nil
	})
}

// DialConn over the network: net/http's request and response over the
// loop's net.Conn, with the simulated addresses; a dial cancelled in its
// handshake (the SYN arrived, the SYN-ACK did not) is never seen by the
// server, as a TCP server drops a handshake the client answers with a
// RST.
func TestSimDialConnHTTP(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		served := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			served++
			head, err := r.ReadUntil(t, []byte("\r\n\r\n"))
			if err != nil {
				return nil
			}
			body := "you asked " + strings.Fields(string(head))[1]
			w.Write([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
			return w.Drain(t)
		}, "", 8080, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		conn, err := DialConn(t, "tcp", "server:8080", WithNetwork(c))
		if err != nil {
			return err
		}
		defer conn.Close()
		if conn.RemoteAddr().String() != "10.0.0.2:8080" || conn.LocalAddr().String() != "10.0.0.1:49152" {
			return fmt.Errorf("addresses %v -> %v", conn.LocalAddr(), conn.RemoteAddr())
		}
		req, _ := http.NewRequest("GET", "http://server:8080/x", nil)
		if err := req.Write(conn); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != "you asked /x" {
			return fmt.Errorf("body %q, %v", body, err)
		}
		// Cancelled between the SYN's arrival (at 10 ms) and the
		// SYN-ACK's (at 20): the client gives up, the server never
		// accepts.
		_, err = asyncio.WaitForFunc(t, 15*time.Millisecond, func(t *asyncio.T) (*Conn, error) {
			return DialConn(t, "tcp", "server:8080", WithNetwork(c))
		})
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("cancelled dial: %v", err)
		}
		if err := asyncio.Sleep(t, time.Second); err != nil {
			return err
		}
		if served != 1 || len(n.Conns()) != 1 {
			return fmt.Errorf("served %d connections, %d open: want the first one only", served, len(n.Conns()))
		}
		if !strings.Contains(strings.Join(n.Trace(), "\n"), "the server never sees it") {
			return fmt.Errorf("trace:\n%s", strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// TLS over the simulated network: the handshake takes its round trips of
// virtual time; the echo works.
func TestSimTLS(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	clientCfg.ServerName = "localhost"
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, echoLines("tls: "), "", 443, WithNetwork(s), WithTLS(serverCfg))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 443, WithNetwork(c), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		defer w.Close()
		if t.Loop().Time() < 40*time.Millisecond {
			return fmt.Errorf("connected with TLS at %v: less than two round trips", t.Loop().Time())
		}
		w.Write([]byte("secret\n"))
		line, err := r.ReadLine(t)
		if err != nil || string(line) != "tls: secret\n" {
			return fmt.Errorf("got %q, %v", line, err)
		}
		return nil
	})
}

// Deferred serving: as a real socket that is bound but not listening,
// the server refuses clients until StartServing, then serves them. A
// listener that closes resets what waits in its backlog: here a
// connection that reaches it in the same instant as the server's Close,
// before the server could accept it.
func TestSimBacklog(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s), WithDeferredServing())
		if err != nil {
			return err
		}
		if _, _, err := OpenConnection(t, "server", 80, WithNetwork(c)); !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial before StartServing: %v, want ECONNREFUSED", err)
		}
		srv.StartServing()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("served\n"))
		line, err := r.ReadLine(t)
		if err != nil || string(line) != "served\n" {
			return fmt.Errorf("after StartServing: %q, %v", line, err)
		}
		srv.Close()
		srv.CloseClients()
		if err := srv.WaitClosed(t); err != nil {
			return err
		}

		srv2, err := StartServer(t, echoLines(""), "", 81, WithNetwork(s))
		if err != nil {
			return err
		}
		dial := asyncio.CreateTask(t, func(t *asyncio.T) (*StreamReader, error) {
			r, _, err := OpenConnection(t, "server", 81, WithNetwork(c))
			return r, err
		})
		if err := asyncio.Sleep(t, 0); err != nil { // the SYN is sent
			return err
		}
		// Closed when the SYN arrives, after the network queued the
		// connection and before the server accepts it.
		n.At(t.Loop().Time()+time.Millisecond, srv2.Close)
		r2, err := dial.Await(t)
		if err != nil {
			return fmt.Errorf("dial: %v", err)
		}
		if _, err := r2.ReadLine(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("read from a connection of a closed backlog: %v, want ECONNRESET", err)
		}
		if _, _, err := OpenConnection(t, "server", 81, WithNetwork(c)); !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial after the listener closed: %v, want ECONNREFUSED", err)
		}
		if !strings.Contains(strings.Join(n.Trace(), "\n"), "listener 10.0.0.2:81 closed") {
			return fmt.Errorf("trace:\n%s", strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// A peer that closes with unread data resets the connection, as TCP
// does: the client sees ECONNRESET after the latency. Data sent to a
// peer that has closed its socket gets a reset back too.
func TestSimPeerResets(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		serverLost := asyncio.NewFuture[error](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Transport().PauseReading() // the client's data stays in the socket
			if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil {
				return err
			}
			w.Transport().Abort() // closed with unread data
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("abc"))
		if _, err := r.ReadLine(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("client read: %v, want ECONNRESET", err)
		}
		if !strings.Contains(strings.Join(n.Trace(), "\n"), "sender reset") {
			return fmt.Errorf("trace:\n%s", strings.Join(n.Trace(), "\n"))
		}

		srv2, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if _, err := r.Read(t, -1); err != nil { // the client's close
				return err
			}
			w.Write([]byte("too late"))
			if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil { // the reset comes back
				return err
			}
			w.Write([]byte("later still")) // and this write finds it
			serverLost.SetResult(w.WaitClosed(t))
			return nil
		}, "", 81, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv2.Close()
		_, w2, err := OpenConnection(t, "server", 81, WithNetwork(c))
		if err != nil {
			return err
		}
		w2.Close()
		lost, err := serverLost.Await(t)
		if err != nil {
			return err
		}
		// On a real TCP socket the write after the RST fails with
		// ECONNRESET; on the socket pair with EPIPE (see the README).
		if !errors.Is(lost, syscall.ECONNRESET) && !errors.Is(lost, syscall.EPIPE) {
			return fmt.Errorf("server's connection lost with %v, want ECONNRESET or EPIPE", lost)
		}
		if !strings.Contains(strings.Join(n.Trace(), "\n"), "receiver gone") {
			return fmt.Errorf("trace:\n%s", strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// WithNetwork(nil) is real sockets: the same call on a real server.
func TestSimNilNetworkIsReal(t *testing.T) {
	clean(t)
	runNet(t, func(t *asyncio.T) error {
		var host *SimHost // production: no simulated network
		srv, err := StartServer(t, echoLines("real: "), "127.0.0.1", 0, WithNetwork(host))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "127.0.0.1", serverPort(srv), WithNetwork(host))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("x\n"))
		line, err := r.ReadLine(t)
		if err != nil || string(line) != "real: x\n" {
			return fmt.Errorf("got %q, %v", line, err)
		}
		if _, ok := w.ExtraInfo("peername").(*net.TCPAddr); !ok {
			return fmt.Errorf("peername %v", w.ExtraInfo("peername"))
		}
		return nil
	})
}

// WithNetwork is refused by the calls it does not apply to, before they
// do anything.
func TestSimNetworkOptionRefused(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		h := NewSimNetwork(t, 1).Host("h")
		_, _, err := OpenUnixConnection(t, "/nonexistent", WithNetwork(h))
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "WithNetwork") {
			return fmt.Errorf("OpenUnixConnection with WithNetwork: %v, want a ValueError naming it", err)
		}
		return nil
	})
}

// WithNetwork together with an option a simulated host cannot honour is
// a *ValueError naming both, before anything is made: WithSocket (a
// server used to listen on the real socket, off the network), and
// WithReusePort and WithAllowBroadcast (accepted and ignored).
func TestSimNetworkRefusesOptionsItCannotHonour(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		h := NewSimNetwork(at, 1).Host("h")
		fd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		factory := func() Protocol { return &BaseProtocol{} }
		udp := &net.UDPAddr{Port: 53}
		for _, c := range []struct {
			call  func() error
			names []string
		}{
			{func() error { _, err := CreateServer(at, factory, "", 0, WithNetwork(h), WithSocket(fd)); return err }, []string{"CreateServer", "WithNetwork", "WithSocket"}},
			{func() error { _, _, err := OpenConnection(at, "", 0, WithSocket(fd), WithNetwork(h)); return err }, []string{"OpenConnection", "WithNetwork", "WithSocket"}},
			{func() error {
				_, err := StartServer(at, closeAtOnce, "", 80, WithNetwork(h), WithReusePort())
				return err
			}, []string{"StartServer", "WithNetwork", "WithReusePort"}},
			{func() error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, udp, nil, WithNetwork(h), WithReusePort())
				return err
			}, []string{"CreateDatagramEndpoint", "WithNetwork", "WithReusePort"}},
			{func() error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, udp, nil, WithNetwork(h), WithAllowBroadcast())
				return err
			}, []string{"CreateDatagramEndpoint", "WithNetwork", "WithAllowBroadcast"}},
		} {
			err := c.call()
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) {
				t.Errorf("%v: err = %v, want a ValueError", c.names, err)
				continue
			}
			for _, name := range c.names {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("%q does not name %s", err, name)
				}
			}
		}
		if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || typ != 0 {
			t.Errorf("the real socket listens (SO_ACCEPTCONN %d, %v)", typ, err)
		}
		// A port taken on the network stays free for a new server.
		srv, err := StartServer(at, closeAtOnce, "", 80, WithNetwork(h))
		if err != nil {
			return err
		}
		srv.Close()
		return nil
	})
}

// Host names are case-insensitive, as in DNS and /etc/hosts: Host("Server")
// is the host added as "server" (with the name it was given), a client
// reaches it as "SERVER", and "LocalHost" is the calling host itself. A
// second spelling made a second host with another address, and a dial to
// it failed with ENETUNREACH.
func TestSimHostNamesAreCaseInsensitive(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		if h := n.Host("Server"); h != s || h.Name() != "server" {
			return fmt.Errorf("Host(\"Server\") = %v %q, want the host added as server", h.IP(), h.Name())
		}
		srv, err := StartServer(t, echoLines("echo: "), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		for _, name := range []string{"SERVER", "LocalHost"} {
			on := c
			if name == "LocalHost" {
				on = s
			}
			r, w, err := OpenConnection(t, name, 80, WithNetwork(on))
			if err != nil {
				return fmt.Errorf("OpenConnection(%q): %w", name, err)
			}
			w.Write([]byte("hi\n"))
			line, err := r.ReadLine(t)
			w.Close()
			if err != nil || string(line) != "echo: hi\n" {
				return fmt.Errorf("%s: %q, %v", name, line, err)
			}
		}
		return nil
	})
}
