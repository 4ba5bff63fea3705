//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// The simulated network against real sockets: each test here is a case
// where the network once behaved otherwise than loopback sockets do (or
// than its documentation says), checked on the virtual clock.

// Server.Close frees the port at once, as closing a real listening socket
// does: a new server binds it in the same instant and gets the next
// client, and a client of the closed one is refused.
func TestSimParityRebindAfterClose(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		old, err := StartServer(t, echoLines("old: "), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		old.Close()
		if _, _, err := OpenConnection(t, "server", 80, WithNetwork(c)); !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial after Close: %v, want ECONNREFUSED", err)
		}
		old2, err := StartServer(t, echoLines("old: "), "", 81, WithNetwork(s))
		if err != nil {
			return err
		}
		old2.Close()
		srv, err := StartServer(t, echoLines("new: "), "", 81, WithNetwork(s)) // no iteration in between
		if err != nil {
			return fmt.Errorf("rebind at once after Close: %v", err)
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "server", 81, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write([]byte("hi\n"))
		if line, err := r.ReadLine(t); err != nil || string(line) != "new: hi\n" {
			return fmt.Errorf("got %q, %v", line, err)
		}
		return nil
	})
}

// Linux's accept queue holds backlog+1 connections: with WithBacklog(1)
// two of a burst of dials connect at once, and the others' SYNs are
// dropped and sent again a second later.
func TestSimParityBacklogPlusOne(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{})
		srv, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(s), WithBacklog(1))
		if err != nil {
			return err
		}
		defer srv.Close()
		fast := 0
		err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for range 5 {
				asyncio.SpawnErr(g, func(t *asyncio.T) error {
					_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
					if err != nil {
						return err
					}
					w.Close()
					if t.Loop().Time() < time.Second {
						fast++
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if fast != 2 {
			return fmt.Errorf("%d of 5 dials connected at once, want 2 (backlog 1 + 1)", fast)
		}
		return nil
	})
}

// A host reaches itself by "localhost", a loopback or a wildcard
// address, as a real one does: streams and datagrams alike. Host refuses
// those names (and addresses no host has).
func TestSimParityLoopback(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("box")
		srv, err := StartServer(t, echoLines("box: "), "127.0.0.1", 80, WithNetwork(h))
		if err != nil {
			return err
		}
		defer srv.Close()
		for _, host := range []string{"127.0.0.1", "localhost", "::1", "0.0.0.0", "box"} {
			r, w, err := OpenConnection(t, host, 80, WithNetwork(h))
			if err != nil {
				return fmt.Errorf("dial %s from box: %v", host, err)
			}
			w.Write([]byte("hi\n"))
			line, err := r.ReadLine(t)
			w.Close()
			if err != nil || string(line) != "box: hi\n" {
				return fmt.Errorf("via %s: %q, %v", host, line, err)
			}
		}
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}, nil, WithNetwork(h))
		if err != nil {
			return err
		}
		defer rtr.Close()
		ctr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}, WithNetwork(h))
		if err != nil {
			return fmt.Errorf("datagram endpoint connected to 127.0.0.1: %v", err)
		}
		defer ctr.Close()
		ctr.SendTo([]byte("connected"), nil)
		utr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, &net.UDPAddr{}, nil, WithNetwork(h))
		if err != nil {
			return err
		}
		defer utr.Close()
		utr.SendTo([]byte("unconnected"), &net.UDPAddr{IP: net.ParseIP("::1"), Port: 53})
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
		if fmt.Sprint(recv.got) != "[connected unconnected]" {
			return fmt.Errorf("datagrams over loopback: %v", recv.got)
		}
		for _, name := range []string{"localhost", "127.0.0.1", "0.0.0.0", "::1", "10.0.0.7"} {
			if msg := valueErrorOf(func() { n.Host(name) }); msg == "" || !strings.Contains(msg, name) {
				tt.Errorf("Host(%q): %q, want a ValueError naming it", name, msg)
			}
		}
		if got := n.Host("10.0.0.1"); got != h {
			return fmt.Errorf("Host(10.0.0.1) = %v, want box", got)
		}
		return nil
	})
}

// valueErrorOf returns the message of the *ValueError f panics with, or
// "" (the error text for a panic of another kind).
func valueErrorOf(f func()) (msg string) {
	defer func() {
		p := recover()
		var ve *asyncio.ValueError
		if err, ok := p.(error); ok && errors.As(err, &ve) {
			msg = ve.Error()
		} else if p != nil {
			msg = fmt.Sprintf("not a ValueError: %v", p)
		}
	}()
	f()
	return ""
}

// halfClosedClient connects to a server that never reads, writes a
// request and half-closes (WriteEOF), and returns the reader and the
// server side's transport.
func halfClosedClient(t *asyncio.T, c, s *SimHost, port int) (*StreamReader, *StreamWriter, Transport, error) {
	accepted := asyncio.NewFuture[Transport](t)
	srv, err := CreateServer(t, func() Protocol {
		return &funcProtocol{made: func(tr Transport) {
			tr.PauseReading() // the request stays unread
			accepted.SetResult(tr)
		}}
	}, "", port, WithNetwork(s))
	if err != nil {
		return nil, nil, nil, err
	}
	defer srv.Close() // the connection stays
	r, w, err := OpenConnection(t, "server", port, WithNetwork(c))
	if err != nil {
		return nil, nil, nil, err
	}
	w.Write([]byte("request"))
	if err := w.WriteEOF(); err != nil {
		return nil, nil, nil, err
	}
	str, err := accepted.Await(t)
	if err != nil {
		return nil, nil, nil, err
	}
	// Let the relay carry the request and the EOF.
	if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
		return nil, nil, nil, err
	}
	return r, w, str, nil
}

// funcProtocol is a Protocol whose ConnectionMade calls made.
type funcProtocol struct {
	BaseProtocol
	made func(Transport)
}

func (p *funcProtocol) ConnectionMade(tr Transport) { p.made(tr) }
func (p *funcProtocol) EOFReceived() bool           { return true }

// A client that half-closed still sees a reset as one (ECONNRESET), as on
// TCP: the server aborting with the request unread, and SimConn.Reset.
// A socket pair cannot reset a socket whose sending side is shut down
// unless the relay kept a byte of what it sent; without it the client
// saw a clean EOF, a truncated answer looking complete.
func TestSimParityResetAfterHalfClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("socket pairs report resets on Linux only")
	}
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		r, w, str, err := halfClosedClient(t, c, s, 80)
		if err != nil {
			return err
		}
		defer w.Close()
		str.Abort() // closed with the request unread: TCP sends a RST
		if _, err := r.Read(t, -1); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("half-closed client, server aborted: read %v, want ECONNRESET", err)
		}
		if err := w.WaitClosed(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("WaitClosed: %v, want ECONNRESET", err)
		}

		r2, w2, str2, err := halfClosedClient(t, c, s, 81)
		if err != nil {
			return err
		}
		defer w2.Close()
		defer str2.Close()
		n.ConnOf(w2.ExtraInfo("sockname").(net.Addr)).Reset()
		if _, err := r2.Read(t, -1); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("half-closed client, SimConn.Reset: read %v, want ECONNRESET", err)
		}
		return nil
	})
}

// The byte the relay keeps must not keep the sender from writing: with a
// small SO_SNDBUF a kept byte's buffer is more than the quarter of it
// that a socket pair needs free to poll writable, so the relay lets it go
// and the transfer completes.
func TestSimParitySmallSendBuffer(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{})
		const size = 4 << 20
		got := asyncio.NewFuture[int](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			all, err := r.Read(t, -1)
			got.SetResult(len(all))
			return err
		}, "", 80, WithNetwork(s), WithStreamLimit(size*2))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		if err := unix.SetsockoptInt(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 8<<10); err != nil {
			return err
		}
		w.Write(make([]byte, size))
		w.WriteEOF()
		k, err := asyncio.WaitFor(t, time.Minute, got)
		if err != nil {
			return fmt.Errorf("transfer with a small SO_SNDBUF: %v (stuck with %d bytes buffered)", err, w.Transport().WriteBufferSize())
		}
		if k != size {
			return fmt.Errorf("received %d bytes, want %d", k, size)
		}
		return nil
	})
}

// Datagrams as on a real host: one larger than UDP over IPv4 carries is
// refused (EMSGSIZE through ErrorReceived, not delivered); a closed
// endpoint's address stays taken until its ConnectionLost has run; and a
// datagram sent over a zero-latency link is in the receiver's socket
// when the send returns, so the receiver closing next does not bounce it
// back as ECONNREFUSED.
func TestSimParityDatagrams(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		a, b := n.Host("a"), n.Host("b")
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 53}, nil, WithNetwork(b))
		if err != nil {
			return err
		}
		sender := &collector{}
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return sender }, nil, &net.UDPAddr{IP: b.IP(), Port: 53}, WithNetwork(a))
		if err != nil {
			return err
		}
		defer str.Close()
		str.SendTo(make([]byte, 65507), nil)
		str.SendTo(make([]byte, 65508), nil)
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
		if len(recv.got) != 1 || len(recv.got[0]) != 65507 {
			return fmt.Errorf("delivered %d datagrams, want the 65507-byte one only", len(recv.got))
		}
		if len(sender.errs) != 1 || !errors.Is(sender.errs[0], syscall.EMSGSIZE) {
			return fmt.Errorf("sender errors %v, want one EMSGSIZE", sender.errs)
		}

		str.SendTo([]byte("last words"), nil)
		rtr.Close()
		if _, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, &net.UDPAddr{Port: 53}, nil, WithNetwork(b)); !errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("rebind before ConnectionLost: %v, want EADDRINUSE", err)
		}
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
		if len(sender.errs) != 1 {
			return fmt.Errorf("sender errors %v: a datagram that reached the socket bounced", sender.errs)
		}
		again, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, &net.UDPAddr{Port: 53}, nil, WithNetwork(b))
		if err != nil {
			return fmt.Errorf("rebind after ConnectionLost: %v", err)
		}
		again.Close()
		return nil
	})
}

// Bad arguments to the network's methods are a *ValueError naming the
// mistake, and change nothing: the link keeps its latency.
func TestSimParityBadInput(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 7 * time.Millisecond})
		foreign := NewSimNetwork(t, 2).Host("client")
		nan := 0.0
		nan /= nan
		for _, tc := range []struct {
			name, want string
			f          func()
		}{
			{"negative latency", "Latency is negative", func() { n.SetLink(c, s, LinkConfig{Latency: -1}) }},
			{"loss above 1", "Loss must be a probability", func() { n.SetLink(c, s, LinkConfig{Loss: 1.5}) }},
			{"NaN loss", "Loss must be a probability", func() { n.SetLink(c, s, LinkConfig{Loss: nan}) }},
			{"negative duplicate", "Duplicate must be a probability", func() { n.SetLink(c, s, LinkConfig{Duplicate: -0.1}) }},
			{"negative default buffer", "SetDefaultLink: LinkConfig.Buffer is negative", func() { n.SetDefaultLink(LinkConfig{Buffer: -1}) }},
			{"nil host", "SetLink: nil host", func() { n.SetLink(nil, s, LinkConfig{}) }},
			{"foreign host", "belongs to another network", func() { n.SetLink(foreign, s, LinkConfig{}) }},
			{"nil partition", "Partition: nil host", func() { n.Partition(c, nil) }},
			{"foreign partition", "belongs to another network", func() { n.Partition(foreign, s) }},
			{"nil heal", "Heal: nil host", func() { n.Heal(nil, s) }},
		} {
			if msg := valueErrorOf(tc.f); !strings.Contains(msg, tc.want) {
				tt.Errorf("%s: %q, want a ValueError with %q", tc.name, msg, tc.want)
			}
		}
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		start := t.Loop().Time()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		if d := t.Loop().Time() - start; d != 14*time.Millisecond {
			return fmt.Errorf("dial took %v after the refused calls, want 14ms: the link changed", d)
		}
		if msg := valueErrorOf(func() { SearchSeeds(1, 5, nil) }); !strings.Contains(msg, "nil scenario") {
			tt.Errorf("SearchSeeds(nil): %q", msg)
		}
		ran := 0
		if msg := valueErrorOf(func() { SearchSeeds(1<<64-2, 5, func(uint64) error { ran++; return nil }) }); !strings.Contains(msg, "past the largest uint64") || ran != 0 {
			tt.Errorf("SearchSeeds past the largest seed: %q after %d runs (it used to run none and report success)", msg, ran)
		}
		conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
		if msg := valueErrorOf(func() { conn.StallFor(-time.Second) }); !strings.Contains(msg, "negative duration") {
			tt.Errorf("StallFor(-1s): %q", msg)
		}
		if strings.Contains(strings.Join(n.Trace(), "\n"), "stalled") {
			tt.Errorf("StallFor(-1s) stalled the connection")
		}
		return nil
	})
}

// HTTPTransport reports a connection closed before any byte of a
// response as http.Transport does: io.EOF.
func TestSimParityHTTPClosedWithoutResponse(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if _, err := r.ReadUntil(t, []byte("\r\n\r\n")); err != nil {
				return err
			}
			w.Close()
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		client := &http.Client{Transport: c.HTTPTransport()}
		_, err = asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://server/", nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return struct{}{}, err
		})
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("closed without a response: %v, want io.EOF", err)
		}
		return nil
	})
}

// The handshake as TCP's: the client is connected after one round trip
// and the server accepts when the client's ACK arrives, half a round trip
// later; a reset while the SYN-ACK is on its way refuses the client's
// connect (as a RST in SYN-SENT does), and the server never hears of the
// connection.
func TestSimParityHandshake(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		var accepts []time.Duration
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			accepts = append(accepts, t.Loop().Time())
			w.Close()
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
		w.Close()
		if now := t.Loop().Time(); now != 20*time.Millisecond {
			return fmt.Errorf("connected at %v, want 20ms", now)
		}
		if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil {
			return err
		}
		if fmt.Sprint(accepts) != "[30ms]" {
			return fmt.Errorf("accepted at %v, want [30ms] (when the client's ACK arrives)", accepts)
		}

		start := t.Loop().Time()
		n.At(start+15*time.Millisecond, func() { // the SYN has arrived, the SYN-ACK not
			for _, conn := range n.Conns() {
				conn.Reset()
			}
		})
		_, _, err = OpenConnection(t, "server", 80, WithNetwork(c))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial reset in its handshake: %v, want ECONNREFUSED", err)
		}
		if d := t.Loop().Time() - start; d != 15*time.Millisecond {
			return fmt.Errorf("refused after %v, want 15ms", d)
		}
		if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil {
			return err
		}
		if len(accepts) != 1 || len(n.Conns()) != 0 {
			return fmt.Errorf("accepts %v, conns %v: the server saw the reset handshake", accepts, n.Conns())
		}
		return nil
	})
}

// Ports as a kernel gives them out: a port-0 server or endpoint gets a
// free port, never one a server or endpoint bound explicitly, and the
// client ends of connections stay within 49152-65535, round and round
// (they once went on past 65535), skipping the ports in use.
func TestSimParityPorts(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{})
		fixed, err := StartServer(t, closeAtOnce, "", 49152, WithNetwork(s))
		if err != nil {
			return err
		}
		defer fixed.Close()
		ep, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, &net.UDPAddr{Port: 49153}, nil, WithNetwork(s))
		if err != nil {
			return err
		}
		defer ep.Close()
		srv, err := StartServer(t, closeAtOnce, "", 0, WithNetwork(s))
		if err != nil {
			return fmt.Errorf("port 0 with 49152 taken: %v", err)
		}
		defer srv.Close()
		if p := serverPort(srv); p != 49154 {
			return fmt.Errorf("port-0 server on %d, want 49154 (the first free one)", p)
		}
		// Client ports wrap at the range's end and skip those in use.
		c.nextPort = simLastPort
		var got []int
		for range 3 {
			_, w, err := OpenConnection(t, "server", 49152, WithNetwork(c))
			if err != nil {
				return err
			}
			defer w.Close()
			got = append(got, w.ExtraInfo("sockname").(*net.TCPAddr).Port)
		}
		c.nextPort = simLastPort // 65535 and 49152 are still in use
		_, w, err := OpenConnection(t, "server", 49152, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		got = append(got, w.ExtraInfo("sockname").(*net.TCPAddr).Port)
		if fmt.Sprint(got) != "[65535 49152 49153 49154]" {
			return fmt.Errorf("client ports %v, want [65535 49152 49153 49154]", got)
		}
		return nil
	})
}

// HTTPTransport takes the URL hosts http.Transport does: an IPv6 literal
// without a port ("http://[::1]/", which it once made "[[::1]]:80"),
// localhost, and a name with a port.
func TestSimParityHTTPHosts(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("box")
		for _, port := range []int{80, 8080} {
			srv, err := StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "port %d", port)
			}), "", port, WithNetwork(h))
			if err != nil {
				return err
			}
			defer func() { srv.Close(); srv.CloseClients() }()
		}
		client := &http.Client{Transport: h.HTTPTransport()}
		for url, want := range map[string]string{
			"http://[::1]/":          "port 80",
			"http://localhost/":      "port 80",
			"http://box:8080/":       "port 8080",
			"http://[::1]:8080/x":    "port 8080",
			"http://10.0.0.1:8080/y": "port 8080",
		} {
			got, err := asyncio.Go(t, func(ctx context.Context) (string, error) {
				req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
				if err != nil {
					return "", err
				}
				resp, err := client.Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			})
			if err != nil || got != want {
				return fmt.Errorf("GET %s: %q, %v; want %q", url, got, err, want)
			}
		}
		return nil
	})
}

// A host's connection to itself through a loopback or wildcard name has
// loopback addresses at both ends, as on a real host (tests/ports p58
// printed 10.0.0.1 where CPython prints 127.0.0.1): the source is
// 127.0.0.1 (::1 over IPv6), the destination the loopback address named
// (127.0.0.1 for a wildcard or "localhost"). Through its own name or
// address the host's address stays. ConnOf finds the connection by the
// client's sockname either way.
func TestSimParityLoopbackAddresses(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("box")
		var serverSaw []string
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			serverSaw = append(serverSaw, fmt.Sprintf("%v<-%v", w.ExtraInfo("sockname"), w.ExtraInfo("peername")))
			w.Close()
			return nil
		}, "", 80, WithNetwork(h))
		if err != nil {
			return err
		}
		defer srv.Close()
		var clientSaw []string
		for _, host := range []string{"127.0.0.1", "localhost", "0.0.0.0", "127.0.0.5", "::1", "::", "box", "10.0.0.1"} {
			r, w, err := OpenConnection(t, host, 80, WithNetwork(h))
			if err != nil {
				return fmt.Errorf("dial %s: %v", host, err)
			}
			local := w.ExtraInfo("sockname").(net.Addr)
			if c := n.ConnOf(local); c == nil || c.Client().String() != local.String() {
				return fmt.Errorf("via %s: ConnOf(%v) = %v", host, local, c)
			}
			clientSaw = append(clientSaw, fmt.Sprintf("%s: %v->%v", host, local, w.ExtraInfo("peername")))
			if _, err := r.Read(t, -1); err != nil {
				return err
			}
			w.Close()
		}
		want := []string{
			"127.0.0.1: 127.0.0.1:49152->127.0.0.1:80",
			"localhost: 127.0.0.1:49153->127.0.0.1:80",
			"0.0.0.0: 127.0.0.1:49154->127.0.0.1:80",
			"127.0.0.5: 127.0.0.1:49155->127.0.0.5:80",
			"::1: [::1]:49156->[::1]:80",
			"::: [::1]:49157->[::1]:80",
			"box: 10.0.0.1:49158->10.0.0.1:80",
			"10.0.0.1: 10.0.0.1:49159->10.0.0.1:80",
		}
		if got := strings.Join(clientSaw, "\n"); got != strings.Join(want, "\n") {
			return fmt.Errorf("client ends:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
		for i, s := range serverSaw {
			_, ends, _ := strings.Cut(want[i], ": ")
			from, to, _ := strings.Cut(ends, "->")
			if s != to+"<-"+from {
				return fmt.Errorf("server end of %s: %s, want %s<-%s", want[i], s, to, from)
			}
		}
		return nil
	})
}

// The same for datagrams (tests/ports p60 printed 10.0.0.1 where CPython
// prints 127.0.0.1): an endpoint connected through a loopback name has
// that loopback address as its peer, a datagram sent to a loopback
// address comes from the loopback address (so the answer passes the
// connected endpoint's filter), and one sent to the host's own address
// comes from that address.
func TestSimParityLoopbackDatagramAddresses(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("box")
		server := &collector{}
		st, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}, nil, WithNetwork(h))
		if err != nil {
			return err
		}
		defer st.Close()
		var peers []string
		var clients []*collector
		for _, remote := range []net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP("::1"), nil, net.IPv4(10, 0, 0, 1)} {
			c := &collector{}
			ct, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return c }, nil, &net.UDPAddr{IP: remote, Port: 53}, WithNetwork(h))
			if err != nil {
				return err
			}
			defer ct.Close()
			peers = append(peers, fmt.Sprint(ct.ExtraInfo("peername")))
			ct.SendTo([]byte("ping"), nil)
			clients = append(clients, c)
		}
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
		for i, from := range server.from { // the answers
			addr, err := net.ResolveUDPAddr("udp", from)
			if err != nil {
				return err
			}
			st.SendTo([]byte(fmt.Sprint("pong ", i)), addr)
		}
		if err := asyncio.Sleep(t, time.Millisecond); err != nil {
			return err
		}
		got := fmt.Sprintf("peers %v\nserver heard from %v", peers, server.from)
		for _, c := range clients {
			got += fmt.Sprintf("\nclient got %v from %v", c.got, c.from)
		}
		want := `peers [127.0.0.1:53 [::1]:53 127.0.0.1:53 10.0.0.1:53]
server heard from [127.0.0.1:49152 [::1]:49153 127.0.0.1:49154 10.0.0.1:49155]
client got [pong 0] from [127.0.0.1:53]
client got [pong 1] from [[::1]:53]
client got [pong 2] from [127.0.0.1:53]
client got [pong 3] from [10.0.0.1:53]`
		if got != want {
			return fmt.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
		return nil
	})
}
