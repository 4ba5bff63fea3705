//go:build unix

package aio

// Probe h45: tokio-rs/turmoil's own TCP and UDP test scenarios
// (tests/tcp.rs, tests/udp.rs) ported to the simulated network, with the
// exact virtual times and error kinds Linux TCP/UDP would give. turmoil's
// hold/release is our Partition/Heal for streams (segments held, then
// delivered); its partition (segments dropped) has no stream counterpart
// here, since our streams are reliable as TCP's.

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// turmoil n_responses / server_concurrency: three client hosts, each on
// a link of its own latency, ask one server for n bytes at once; each
// dial takes exactly one round trip of its link, and each answer one
// more, whatever the others do meanwhile.
func TestH45_ServerConcurrencyExactTimes(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		s := n.Host("server")
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for {
				b, err := r.ReadExactly(t, 1)
				if err != nil {
					return nil
				}
				for i := range int(b[0]) {
					w.Write([]byte{byte(i)})
				}
			}
		}, "", 1738, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		type res struct {
			dial, answer time.Duration
			got          []byte
		}
		var futs []*asyncio.Task[res]
		for i, lat := range []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 7 * time.Millisecond} {
			c := n.Host(fmt.Sprintf("client-%d", i))
			n.SetLink(c, s, LinkConfig{Latency: lat})
			futs = append(futs, asyncio.CreateTask(t, func(t *asyncio.T) (res, error) {
				start := t.Loop().Time()
				r, w, err := OpenConnection(t, "server", 1738, WithNetwork(c))
				if err != nil {
					return res{}, err
				}
				defer w.Close()
				dial := t.Loop().Time() - start
				w.Write([]byte{3})
				got, err := r.ReadExactly(t, 3)
				return res{dial, t.Loop().Time() - start - dial, got}, err
			}))
		}
		for i, lat := range []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 7 * time.Millisecond} {
			r, err := futs[i].Await(t)
			if err != nil {
				return fmt.Errorf("client-%d: %w", i, err)
			}
			if r.dial != 2*lat || r.answer != 2*lat || string(r.got) != "\x00\x01\x02" {
				return fmt.Errorf("client-%d over %v: dial %v, answer %v (%q); want %v each", i, lat, r.dial, r.answer, r.got, 2*lat)
			}
		}
		return nil
	})
}

// turmoil accept_front_of_line_blocking: a partition of A from B loses
// A's SYNs, and nothing else: C connects to B in exactly one round trip
// meanwhile, and A's dial, given up after 1 s, leaves nothing behind in
// B's backlog; after the heal A connects in one round trip.
func TestH45_PartitionOfOnePairBlocksNoOther(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		n.SetDefaultLink(LinkConfig{Latency: 5 * time.Millisecond})
		a, b, c := n.Host("A"), n.Host("B"), n.Host("C")
		var accepted []string
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			accepted = append(accepted, fmt.Sprintf("%v@%v", w.ExtraInfo("peername"), t.Loop().Time()))
			w.Close()
			return nil
		}, "", 1738, WithNetwork(b))
		if err != nil {
			return err
		}
		defer srv.Close()
		n.Partition(a, b)
		fromA := asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) {
			return asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (*Conn, error) {
				return DialConn(t, "tcp", "B:1738", WithNetwork(a))
			})
		})
		cc, err := DialConn(t, "tcp", "B:1738", WithNetwork(c))
		if err != nil {
			return err
		}
		cc.Close()
		if at := t.Loop().Time(); at != 10*time.Millisecond {
			return fmt.Errorf("C connected at %v, want 10ms", at)
		}
		if _, err := fromA.Await(t); !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("A's dial across the partition: %v, want a timeout", err)
		}
		if at := t.Loop().Time(); at != time.Second {
			return fmt.Errorf("A gave up at %v, want 1s", at)
		}
		if len(n.Conns()) > 1 { // C's may still be closing
			return fmt.Errorf("connections left: %d", len(n.Conns()))
		}
		n.Heal(a, b)
		start := t.Loop().Time()
		ac, err := DialConn(t, "tcp", "B:1738", WithNetwork(a))
		if err != nil {
			return err
		}
		ac.Close()
		if d := t.Loop().Time() - start; d != 10*time.Millisecond {
			return fmt.Errorf("A connected %v after the heal, want 10ms", d)
		}
		if err := asyncio.Sleep(t, time.Second); err != nil {
			return err
		}
		want := "[10.0.0.3:49152@15ms 10.0.0.1:49152@1.015s]"
		if fmt.Sprint(accepted) != want {
			return fmt.Errorf("accepted %v, want %v", accepted, want)
		}
		return nil
	})
}

// A partition during the connect that heals before the dial gives up:
// the SYN sent again after Linux's retransmission timeouts (1 s, then
// 2 s more) crosses, and the dial completes one round trip after that
// retransmission, not at the heal.
func TestH45_PartitionDuringConnectHealsBeforeTimeout(tt *testing.T) {
	for _, tc := range []struct {
		heal, want time.Duration
	}{
		{500 * time.Millisecond, time.Second + 20*time.Millisecond},
		{2500 * time.Millisecond, 3*time.Second + 20*time.Millisecond},
		{100 * time.Second, 127 * time.Second}, // past the last SYN (63 s): ETIMEDOUT
	} {
		tt.Run(tc.heal.String(), func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
				srv, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(s))
				if err != nil {
					return err
				}
				defer srv.Close()
				n.Partition(c, s)
				n.At(tc.heal, func() { n.Heal(c, s) })
				conn, err := DialConn(t, "tcp", "server:80", WithNetwork(c))
				if at := t.Loop().Time(); at != tc.want {
					return fmt.Errorf("dial ended at %v (%v), want %v", at, err, tc.want)
				}
				if tc.want == 127*time.Second {
					if !errors.Is(err, syscall.ETIMEDOUT) {
						return fmt.Errorf("dial: %v, want ETIMEDOUT", err)
					}
					return nil
				}
				if err != nil {
					return err
				}
				return conn.Close()
			})
		})
	}
}

// turmoil network_partition_once_connected and
// hold_and_release_once_connected: both sides write one byte into a
// partition; neither arrives within a second; at the heal both arrive
// exactly one latency later, and the connection goes on.
func TestH45_PartitionOnceConnectedThenHeal(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 15 * time.Millisecond})
		serverGot := asyncio.NewFuture[time.Duration](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Write([]byte{1})
			if _, err := r.ReadExactly(t, 1); err != nil {
				serverGot.SetException(err)
				return nil
			}
			serverGot.SetResult(t.Loop().Time())
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		// The client is connected at 30ms; its ACK, due at the server at
		// 45ms, meets the partition made at 31ms.
		n.At(31*time.Millisecond, func() { n.Partition(c, s) })
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		// The server accepts only after the heal.
		w.Write([]byte{2})
		if _, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 1) }); !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("client's read in the partition: %v, want a timeout", err)
		}
		heal := t.Loop().Time()
		n.Heal(c, s)
		if _, err := r.ReadExactly(t, 1); err != nil {
			return err
		}
		// The server accepts at heal+15ms (the ACK), its byte then takes
		// 15 ms more; the client's byte reaches it with the ACK.
		if d := t.Loop().Time() - heal; d != 30*time.Millisecond {
			return fmt.Errorf("client got the server's byte %v after the heal, want 30ms", d)
		}
		at, err := asyncio.WaitFor(t, 10*time.Second, serverGot)
		if err != nil {
			return err
		}
		if d := at - heal; d != 15*time.Millisecond {
			return fmt.Errorf("server got the client's byte %v after the heal, want 15ms (with the ACK)", d)
		}
		return nil
	})
}

// The same once the server has accepted: a byte each way written into
// the partition arrives exactly one latency after the heal.
func TestH45_PartitionAfterAcceptThenHeal(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 15 * time.Millisecond})
		serverGot := asyncio.NewFuture[time.Duration](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil { // partitioned by then
				return err
			}
			w.Write([]byte{1})
			if _, err := r.ReadExactly(t, 1); err != nil {
				serverGot.SetException(err)
				return nil
			}
			serverGot.SetResult(t.Loop().Time())
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
		if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil { // accepted at 45ms
			return err
		}
		n.Partition(c, s)
		w.Write([]byte{2})
		if _, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 1) }); !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("client's read in the partition: %v, want a timeout", err)
		}
		heal := t.Loop().Time()
		n.Heal(c, s)
		if _, err := r.ReadExactly(t, 1); err != nil {
			return err
		}
		if d := t.Loop().Time() - heal; d != 15*time.Millisecond {
			return fmt.Errorf("client got the server's byte %v after the heal, want 15ms", d)
		}
		at, err := asyncio.WaitFor(t, 10*time.Second, serverGot)
		if err != nil {
			return err
		}
		if d := at - heal; d != 15*time.Millisecond {
			return fmt.Errorf("server got the client's byte %v after the heal, want 15ms", d)
		}
		return nil
	})
}

// turmoil drop_listener: a server that closes its listener keeps the
// connections it accepted (they still answer), and a new dial is refused
// after exactly one round trip.
func TestH45_DropListenerKeepsAcceptedConnections(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 4 * time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 1738, WithNetwork(s))
		if err != nil {
			return err
		}
		type pair struct {
			r *StreamReader
			w *StreamWriter
		}
		var conns []pair
		for range 3 {
			r, w, err := OpenConnection(t, "server", 1738, WithNetwork(c))
			if err != nil {
				return err
			}
			defer w.Close()
			conns = append(conns, pair{r, w})
		}
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil { // all accepted
			return err
		}
		srv.Close()
		for i, p := range conns {
			start := t.Loop().Time()
			p.w.Write([]byte(fmt.Sprintf("c%d\n", i)))
			line, err := p.r.ReadLine(t)
			if err != nil || string(line) != fmt.Sprintf("c%d\n", i) || t.Loop().Time()-start != 8*time.Millisecond {
				return fmt.Errorf("conn %d after the listener closed: %q, %v after %v", i, line, err, t.Loop().Time()-start)
			}
		}
		start := t.Loop().Time()
		_, _, err = OpenConnection(t, "server", 1738, WithNetwork(c))
		if !errors.Is(err, syscall.ECONNREFUSED) || t.Loop().Time()-start != 8*time.Millisecond {
			return fmt.Errorf("dial after the listener closed: %v after %v, want ECONNREFUSED after 8ms", err, t.Loop().Time()-start)
		}
		return nil
	})
}

// A RST takes the link's latency back too: a client writes to a server
// that has closed its connection (the FIN already read); the data reaches
// the server's host at +L, its RST the client at +2L, not at +L.
func TestH45_ResetForDataToAClosedSocketTakesTheWayBack(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 20 * time.Millisecond})
		srv, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		var log []string
		cp := newStreamRecorder(t, "client", &log)
		cp.keepOpen = true
		tr, _, err := CreateConnection(t, func() Protocol { return cp }, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer tr.Close()
		if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil { // the FIN has arrived
			return err
		}
		start := t.Loop().Time()
		var writes []string
		for _, at := range []time.Duration{0, 25 * time.Millisecond, 45 * time.Millisecond} {
			if err := asyncio.Sleep(t, start+at-t.Loop().Time()); err != nil {
				return err
			}
			writes = append(writes, fmt.Sprintf("write at +%v: %s", at, describe(tr.Write([]byte("x")))))
			if err := settle(t); err != nil {
				return err
			}
			writes = append(writes, fmt.Sprintf("lost %v", cp.lost.Done()))
		}
		want := "write at +0s: <nil>; lost false; write at +25ms: <nil>; lost false; write at +45ms: <nil>; lost true"
		if got := strings.Join(writes, "; "); got != want {
			return fmt.Errorf("got  %s\nwant %s\n(the RST answering the first write reaches the client at +40ms)", got, want)
		}
		return nil
	})
}

// turmoil's UDP ping_pong across many hosts at once: each of five hosts
// pings a server on its own latency and hears the pong after exactly two
// latencies, with the server's address as the sender.
func TestH45_UDPPingPongManyHosts(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 3)
		s := n.Host("server")
		echo := &echoDatagram{}
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return echo }, &net.UDPAddr{Port: 1738}, nil, WithNetwork(s))
		if err != nil {
			return err
		}
		defer str.Close()
		var got []string
		var cols []*collector
		for i := range 5 {
			h := n.Host(fmt.Sprintf("h%d", i))
			n.SetLink(h, s, LinkConfig{Latency: time.Duration(i+1) * time.Millisecond})
			col := &collector{}
			cols = append(cols, col)
			tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return col }, nil, &net.UDPAddr{IP: s.IP(), Port: 1738}, WithNetwork(h))
			if err != nil {
				return err
			}
			defer tr.Close()
			if err := tr.SendTo([]byte(fmt.Sprint("ping", i)), nil); err != nil {
				return err
			}
		}
		start := t.Loop().Time()
		for _, col := range cols {
			for len(col.got) == 0 {
				if err := asyncio.Sleep(t, time.Millisecond/2); err != nil {
					return err
				}
			}
			got = append(got, fmt.Sprintf("%s from %s at %v", col.got[0], col.from[0], t.Loop().Time()-start))
		}
		want := "[pong0 from 10.0.0.1:1738 at 2ms pong1 from 10.0.0.1:1738 at 4ms pong2 from 10.0.0.1:1738 at 6ms pong3 from 10.0.0.1:1738 at 8ms pong4 from 10.0.0.1:1738 at 10ms]"
		if fmt.Sprint(got) != want {
			return fmt.Errorf("got %v\nwant %s", got, want)
		}
		return nil
	})
}

// echoDatagram answers "pingX" with "pongX" to the sender.
type echoDatagram struct{ tr DatagramTransport }

func (e *echoDatagram) ConnectionMade(tr DatagramTransport) { e.tr = tr }
func (e *echoDatagram) ConnectionLost(error)                {}
func (e *echoDatagram) ErrorReceived(error)                 {}
func (e *echoDatagram) DatagramReceived(d []byte, from net.Addr) {
	if err := e.tr.SendTo([]byte(strings.Replace(string(d), "ping", "pong", 1)), from); err != nil {
		panic(err)
	}
}

// turmoil hangup, against real loopback sockets: the client closes its
// stream at once; the server reads EOF twice, then writes and drains a
// byte every 50 ms until a write fails; the log (with the error kinds)
// is the same on both.
func TestH45_HangupParity(tt *testing.T) {
	e2Parity(tt, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		result := asyncio.NewFuture[string](t)
		srv, port, err := e.serve(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			var log []string
			for range 2 {
				b, err := r.Read(t, 8)
				log = append(log, fmt.Sprintf("read %q %s", b, describe(err)))
			}
			for i := range 5 {
				if err := e2Wait(t); err != nil {
					return err
				}
				w.Write([]byte{1})
				if err := w.Drain(t); err != nil {
					log = append(log, fmt.Sprintf("drain %d: %s", i, describe(err)))
					break
				}
				log = append(log, fmt.Sprintf("drain %d ok", i))
			}
			log = append(log, "WaitClosed: "+describe(func() error { w.Close(); return w.WaitClosed(t) }()))
			result.SetResult(strings.Join(log, "; "))
			return nil
		})
		if err != nil {
			return "", err
		}
		defer srv.Close()
		_, w, err := e.open(t, port)
		if err != nil {
			return "", err
		}
		w.Close()
		return asyncio.WaitFor(t, 10*time.Second, result)
	})
}

// turmoil drop_listener_with_non_empty_queue, with TCP's times: a
// listener that closes with a connection in its backlog resets it (Linux's
// inet_csk_listen_stop), and one whose client's ACK arrives after the
// close is answered with a RST. Either RST leaves the server's host when
// the server's host acts and reaches the client one latency later: the
// client, connected at 2L, reads ECONNRESET at 4L, not at 3L.
func TestH45_ListenerClosedResetTakesTheWayBack(tt *testing.T) {
	for _, tc := range []string{"backlog", "ack"} {
		tt.Run(tc, func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				const L = 10 * time.Millisecond
				n, c, s := simPair(t, 1, LinkConfig{Latency: L})
				srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
				if err != nil {
					return err
				}
				if tc == "ack" {
					n.At(3*L, srv.Close) // made before the ACK's timer: runs first
				}
				r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
				if err != nil {
					return err
				}
				defer w.Close()
				if at := t.Loop().Time(); at != 2*L {
					return fmt.Errorf("connected at %v, want %v", at, 2*L)
				}
				if tc == "backlog" {
					n.At(3*L, srv.Close) // made after the ACK's timer: the connection is queued first
				}
				w.Write([]byte("hello\n"))
				if line, err := r.ReadLine(t); !errors.Is(err, syscall.ECONNRESET) {
					return fmt.Errorf("read: %q, %v; want ECONNRESET", line, err)
				}
				if at := t.Loop().Time(); at != 4*L {
					return fmt.Errorf("reset seen at %v, want %v (the RST leaves the server's host at %v)\n%s", at, 4*L, 3*L, strings.Join(n.Trace(), "\n"))
				}
				if !strings.Contains(strings.Join(n.Trace(), "\n"), map[string]string{"backlog": "backlog of a closed listener", "ack": "ACK to a closed listener"}[tc]) {
					return fmt.Errorf("trace:\n%s", strings.Join(n.Trace(), "\n"))
				}
				return srv.WaitClosed(t)
			})
		})
	}
}

// turmoil network_partition (udp) on a datagram already on its way: the
// link is cut while it travels (sent at 0, due at 10ms, cut from 5ms to
// 20ms), so it is lost, as a packet on a wire that breaks, and as a
// stream's segment due in a partition is held, not delivered. One sent
// after the heal arrives one latency later.
func TestH45_DatagramInFlightAcrossAPartitionIsLost(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		a, b := n.Host("a"), n.Host("b")
		n.SetLink(a, b, LinkConfig{Latency: 10 * time.Millisecond})
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 1738}, nil, WithNetwork(b))
		if err != nil {
			return err
		}
		defer rtr.Close()
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: b.IP(), Port: 1738}, WithNetwork(a))
		if err != nil {
			return err
		}
		defer str.Close()
		start := t.Loop().Time()
		n.At(start+5*time.Millisecond, func() { n.Partition(a, b) })
		n.At(start+20*time.Millisecond, func() { n.Heal(a, b) })
		if err := str.SendTo([]byte("on the wire"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(t, 30*time.Millisecond); err != nil {
			return err
		}
		if err := str.SendTo([]byte("after the heal"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(t, 30*time.Millisecond); err != nil {
			return err
		}
		if fmt.Sprint(recv.got) != "[after the heal]" {
			return fmt.Errorf("received %q, want only the one sent after the heal\n%s", recv.got, strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// Loss and Duplicate at their bounds, with exact times: Duplicate 1 gives
// every datagram twice, both one latency later (no jitter); Loss 1 loses
// all of them; and the trace says so.
func TestH45_DatagramLossAndDuplicateBounds(tt *testing.T) {
	for _, tc := range []struct {
		cfg  LinkConfig
		want string
	}{
		{LinkConfig{Latency: 3 * time.Millisecond, Duplicate: 1}, "[a@3ms a@3ms b@4ms b@4ms]"},
		{LinkConfig{Latency: 3 * time.Millisecond, Loss: 1, Duplicate: 1}, "[]"},
	} {
		tt.Run(tc.want, func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n := NewSimNetwork(t, 9)
				a, b := n.Host("a"), n.Host("b")
				n.SetLink(a, b, tc.cfg)
				var got []string
				recv := &timedCollector{t: t, got: &got}
				rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 7}, nil, WithNetwork(b))
				if err != nil {
					return err
				}
				defer rtr.Close()
				str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: b.IP(), Port: 7}, WithNetwork(a))
				if err != nil {
					return err
				}
				defer str.Close()
				start := t.Loop().Time()
				recv.start = start
				for _, m := range []string{"a", "b"} {
					if err := str.SendTo([]byte(m), nil); err != nil {
						return err
					}
					if err := asyncio.Sleep(t, time.Millisecond); err != nil {
						return err
					}
				}
				if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
					return err
				}
				if fmt.Sprint(got) != tc.want {
					return fmt.Errorf("got %v, want %s", got, tc.want)
				}
				trace := strings.Join(n.Trace(), "\n")
				if tc.cfg.Loss == 1 && strings.Count(trace, "bytes lost") != 2 || tc.cfg.Loss == 0 && strings.Count(trace, "bytes duplicated") != 2 {
					return fmt.Errorf("trace:\n%s", trace)
				}
				return nil
			})
		})
	}
}

// timedCollector logs each datagram with its arrival time from start.
type timedCollector struct {
	t     *asyncio.T
	start time.Duration
	got   *[]string
}

func (c *timedCollector) ConnectionMade(DatagramTransport) {}
func (c *timedCollector) ConnectionLost(error)             {}
func (c *timedCollector) ErrorReceived(error)              {}
func (c *timedCollector) DatagramReceived(d []byte, _ net.Addr) {
	*c.got = append(*c.got, fmt.Sprintf("%s@%v", d, c.t.Loop().Time()-c.start))
}

// A server that closes its connection with the client's bytes unread
// resets it (Linux sends a RST, not a FIN): the RST reaches the client
// one latency after the close, and the client's read fails with
// ECONNRESET then.
func TestH45_ServerClosingWithUnreadDataResetsAfterOneLatency(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 12 * time.Millisecond})
		closedAt := asyncio.NewFuture[time.Duration](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			// The transport would read them into the StreamReader (and its
			// close would then be a clean one): it stops reading first.
			w.Transport().PauseReading()
			if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil { // the client's bytes arrive meanwhile
				return err
			}
			w.Transport().Abort() // closes the socket with the bytes unread
			closedAt.SetResult(t.Loop().Time())
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
		if err := asyncio.Sleep(t, 30*time.Millisecond); err != nil { // accepted at 36ms
			return err
		}
		w.Write([]byte("unread"))
		got, err := r.Read(t, -1)
		if !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("read: %q, %v; want ECONNRESET", got, err)
		}
		at, err := closedAt.Await(t)
		if err != nil {
			return err
		}
		if d := t.Loop().Time() - at; d != 12*time.Millisecond {
			return fmt.Errorf("the client saw the reset %v after the server closed, want 12ms", d)
		}
		return nil
	})
}

// turmoil's determinism promise, over streams and datagrams at once on a
// jittery, lossy link: the same seed gives the same Trace twice, byte for
// byte; another seed another one.
func TestH45_SeedDecidesTheWholeTrace(tt *testing.T) {
	clean(tt)
	run := func(seed uint64) string {
		var trace []string
		runVirtual(tt, func(t *asyncio.T) error {
			n := NewSimNetwork(t, seed)
			n.SetDefaultLink(LinkConfig{Latency: 5 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.2, Duplicate: 0.2, Bandwidth: 100_000})
			s := n.Host("server")
			srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
			if err != nil {
				return err
			}
			defer srv.Close()
			echo := &echoDatagram{}
			utr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return echo }, &net.UDPAddr{Port: 53}, nil, WithNetwork(s))
			if err != nil {
				return err
			}
			defer utr.Close()
			var tasks []*asyncio.Task[struct{}]
			for i := range 4 {
				h := n.Host(fmt.Sprintf("c%d", i))
				tasks = append(tasks, asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
					tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: s.IP(), Port: 53}, WithNetwork(h))
					if err != nil {
						return struct{}{}, err
					}
					defer tr.Close()
					r, w, err := OpenConnection(t, "server", 80, WithNetwork(h))
					if err != nil {
						return struct{}{}, err
					}
					defer w.Close()
					for j := range 5 {
						if err := tr.SendTo([]byte(fmt.Sprintf("ping%d-%d", i, j)), nil); err != nil {
							return struct{}{}, err
						}
						w.Write([]byte(strings.Repeat("x", 100*(i+1)) + "\n"))
						if _, err := r.ReadLine(t); err != nil {
							return struct{}{}, err
						}
					}
					return struct{}{}, nil
				}))
			}
			for _, task := range tasks {
				if _, err := task.Await(t); err != nil {
					return err
				}
			}
			if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil {
				return err
			}
			trace = n.Trace()
			return nil
		})
		return strings.Join(trace, "\n")
	}
	a, b, c := run(11), run(11), run(12)
	if a != b {
		tt.Fatalf("seed 11 gave two traces:\n%s\n----\n%s", a, b)
	}
	if a == c {
		tt.Fatalf("seeds 11 and 12 gave the same trace")
	}
	for _, want := range []string{"bytes lost", "bytes duplicated", "established"} {
		if !strings.Contains(a, want) {
			tt.Fatalf("no %q in the trace:\n%s", want, a)
		}
	}
}

// pausedClient pauses reading as soon as it is connected.
type pausedClient struct {
	streamRecorder
}

func (p *pausedClient) ConnectionMade(tr Transport) {
	p.streamRecorder.ConnectionMade(tr)
	tr.(ReadTransport).PauseReading()
}

// A RST does not wait for the receiver's window: a server writes more
// than the client (which does not read) can take, and aborts; the client
// then writes, its data reaches the closed socket, and the RST answering
// it reaches the client a round trip after its write although the
// server's data still waits for room in the client's socket: the
// client's next write fails and the protocol sees the connection lost.
func TestH45_ResetDoesNotWaitBehindUnreadData(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Write(make([]byte, 8<<20))
			if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil {
				return err
			}
			w.Transport().Abort()
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		var log []string
		cp := &pausedClient{*newStreamRecorder(t, "client", &log)}
		tr, _, err := CreateConnection(t, func() Protocol { return cp }, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer tr.Close()
		if err := asyncio.Sleep(t, 200*time.Millisecond); err != nil { // the server has aborted
			return err
		}
		start := t.Loop().Time()
		var got []string
		for _, at := range []time.Duration{0, 25 * time.Millisecond} {
			if err := asyncio.Sleep(t, start+at-t.Loop().Time()); err != nil {
				return err
			}
			if err := tr.Write([]byte("x")); err != nil {
				return err
			}
			if err := settle(t); err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("lost %v", cp.lost.Done()))
		}
		if want := "[lost false lost true]"; fmt.Sprint(got) != want {
			return fmt.Errorf("after the writes at +0 and +25ms: %v, want %s\n%s", got, want, strings.Join(n.Trace()[len(n.Trace())-10:], "\n"))
		}
		return nil
	})
}

// The same for the RST of a server that closes with the client's bytes
// unread (Linux resets then): it reaches the client one latency after
// the close although the server's earlier data still waits for room in
// the client's socket; the client's next write fails.
func TestH45_PeerResetDoesNotWaitBehindUnreadData(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Transport().PauseReading()
			w.Write(make([]byte, 8<<20))
			if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil { // the client's byte arrives meanwhile
				return err
			}
			w.Transport().Abort() // at 130ms, with it unread: a RST
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		var log []string
		cp := &pausedClient{*newStreamRecorder(t, "client", &log)}
		tr, _, err := CreateConnection(t, func() Protocol { return cp }, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer tr.Close()
		if err := tr.Write([]byte("x")); err != nil {
			return err
		}
		var got []string
		for _, at := range []time.Duration{135 * time.Millisecond, 145 * time.Millisecond} {
			if err := asyncio.Sleep(t, at-t.Loop().Time()); err != nil {
				return err
			}
			if err := tr.Write([]byte("y")); err != nil {
				return err
			}
			if err := settle(t); err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("lost %v", cp.lost.Done()))
		}
		if want := "[lost false lost true]"; fmt.Sprint(got) != want {
			return fmt.Errorf("after the writes at 135ms and 145ms: %v, want %s (the RST reaches the client at 140ms)\n%s", got, want, strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// turmoil client_hangup_on_connect: a client whose SYNs a partition
// loses gives up after 1 s (its dial cancelled); the partition heals
// (named the other way round, as Heal(b, a)); the server accepts nothing
// in the next 2 s, and nothing is left on the network.
func TestH45_ClientHangupOnConnect(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		accepted := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			accepted++
			w.Close()
			return nil
		}, "", 1738, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		n.Partition(c, s)
		_, err = asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (*Conn, error) {
			return DialConn(t, "tcp", "server:1738", WithNetwork(c))
		})
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("dial: %v, want a timeout", err)
		}
		n.Heal(s, c)
		if err := asyncio.Sleep(t, 2*time.Second); err != nil {
			return err
		}
		if accepted != 0 || len(n.Conns()) != 0 {
			return fmt.Errorf("accepted %d, %d connections left", accepted, len(n.Conns()))
		}
		trace := strings.Join(n.Trace(), "\n")
		for _, want := range []string{"SYN lost (partition)", "cancelled", "heal server client"} {
			if !strings.Contains(trace, want) {
				return fmt.Errorf("no %q in the trace:\n%s", want, trace)
			}
		}
		// And the link works again: one round trip.
		start := t.Loop().Time()
		conn, err := DialConn(t, "tcp", "server:1738", WithNetwork(c))
		if err != nil {
			return err
		}
		conn.Close()
		if d := t.Loop().Time() - start; d != 20*time.Millisecond {
			return fmt.Errorf("dial after the heal took %v, want 20ms", d)
		}
		return nil
	})
}

// The ICMP port unreachable answering a connected endpoint's datagram is
// a packet too: the link cut while it comes back (the datagram reached
// the host at 10ms, its answer is due at 20ms, the cut lasts from 15ms to
// 30ms) loses it, and the sender hears nothing; without the cut it hears
// ECONNREFUSED at 20ms.
func TestH45_PortUnreachableLostInAPartition(tt *testing.T) {
	for _, cut := range []bool{false, true} {
		tt.Run(fmt.Sprint("cut=", cut), func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n := NewSimNetwork(t, 1)
				a, b := n.Host("a"), n.Host("b")
				n.SetLink(a, b, LinkConfig{Latency: 10 * time.Millisecond})
				var got []string
				sender := &timedErrors{t: t, got: &got}
				str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return sender }, nil, &net.UDPAddr{IP: b.IP(), Port: 9}, WithNetwork(a))
				if err != nil {
					return err
				}
				defer str.Close()
				start := t.Loop().Time()
				sender.start = start
				if cut {
					n.At(start+15*time.Millisecond, func() { n.Partition(a, b) })
					n.At(start+30*time.Millisecond, func() { n.Heal(a, b) })
				}
				if err := str.SendTo([]byte("anyone?"), nil); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil {
					return err
				}
				want := "[ECONNREFUSED@20ms]"
				if cut {
					want = "[]"
				}
				if fmt.Sprint(got) != want {
					return fmt.Errorf("errors %v, want %s", got, want)
				}
				return nil
			})
		})
	}
}

// timedErrors logs each error a datagram protocol receives with its time
// from start.
type timedErrors struct {
	t     *asyncio.T
	start time.Duration
	got   *[]string
}

func (c *timedErrors) ConnectionMade(DatagramTransport)      {}
func (c *timedErrors) ConnectionLost(error)                  {}
func (c *timedErrors) DatagramReceived(_ []byte, _ net.Addr) {}
func (c *timedErrors) ErrorReceived(err error) {
	name := err.Error()
	if errors.Is(err, syscall.ECONNREFUSED) {
		name = "ECONNREFUSED"
	}
	*c.got = append(*c.got, fmt.Sprintf("%s@%v", name, c.t.Loop().Time()-c.start))
}

// A SYN-ACK lost to a partition (the cut from 15ms to 5s, a 10 ms link):
// the client's SYN retransmission timer has run since its SYN left at 0,
// so it sends again at 1 s, 3 s and 7 s, as Linux does, and the last one,
// after the heal, connects at 7.02 s (not one round trip later, as when
// the timeout was counted from the SYN-ACK's loss).
func TestH45_SynAckLostRetransmitsOnTheSynsTimer(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		n.At(15*time.Millisecond, func() { n.Partition(c, s) }) // the SYN arrived at 10
		n.At(5*time.Second, func() { n.Heal(c, s) })
		conn, err := DialConn(t, "tcp", "server:80", WithNetwork(c))
		if err != nil {
			return err
		}
		conn.Close()
		if at := t.Loop().Time(); at != 7*time.Second+20*time.Millisecond {
			return fmt.Errorf("connected at %v, want 7.02s\n%s", at, strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}

// The RST refusing a connect is lost when the link is cut on its way back
// (the SYN reached a host with nobody listening at 10 ms, the partition
// starts at 15, before the RST arrives at 20): the client, told nothing,
// sends its SYN again on its timer (1 s after the first), and is refused
// then, once the link has healed: ECONNREFUSED at 1.02 s, not at 20 ms.
func TestSimRefusingResetLostInAPartition(tt *testing.T) {
	clean(tt)
	runVirtual(tt, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		n.At(15*time.Millisecond, func() { n.Partition(c, s) })
		n.At(500*time.Millisecond, func() { n.Heal(c, s) })
		_, err := DialConn(t, "tcp", "server:80", WithNetwork(c))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial: %v, want ECONNREFUSED", err)
		}
		if at := t.Loop().Time(); at != time.Second+20*time.Millisecond {
			return fmt.Errorf("refused at %v, want 1.02s\n%s", at, strings.Join(n.Trace(), "\n"))
		}
		return nil
	})
}
