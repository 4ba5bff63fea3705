//go:build unix

package aio

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A second hostile run against the simulated network (sim*.go): the same
// programs on real loopback sockets and on the network, compared line for
// line, plus faults, exact virtual times and closes the first run
// (sim_edges_test.go) did not try.

// e2Env is where a parity scenario runs: real loopback sockets or a
// simulated network (a client and a server host over a 1 ms link).
type e2Env struct {
	name  string
	n     *SimNetwork // nil on real sockets
	serve func(t *asyncio.T, cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, int, error)
	// listen is CreateServer; dial CreateConnection; open OpenConnection.
	listen func(t *asyncio.T, factory func() Protocol) (*Server, int, error)
	dial   func(t *asyncio.T, port int, factory func() Protocol) (Transport, Protocol, error)
	open   func(t *asyncio.T, port int) (*StreamReader, *StreamWriter, error)
	// refusedPort is a port nobody listens on.
	refusedPort int
}

func e2Real(tt *testing.T) *e2Env {
	return &e2Env{
		name: "real",
		serve: func(t *asyncio.T, cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, int, error) {
			srv, err := StartServer(t, cb, "127.0.0.1", 0)
			if err != nil {
				return nil, 0, err
			}
			return srv, serverPort(srv), nil
		},
		listen: func(t *asyncio.T, factory func() Protocol) (*Server, int, error) {
			srv, err := CreateServer(t, factory, "127.0.0.1", 0)
			if err != nil {
				return nil, 0, err
			}
			return srv, serverPort(srv), nil
		},
		dial: func(t *asyncio.T, port int, factory func() Protocol) (Transport, Protocol, error) {
			return CreateConnection(t, factory, "127.0.0.1", port)
		},
		open: func(t *asyncio.T, port int) (*StreamReader, *StreamWriter, error) {
			return OpenConnection(t, "127.0.0.1", port)
		},
		refusedPort: closedPort(tt),
	}
}

func e2Sim(t *asyncio.T, link LinkConfig) *e2Env {
	n, c, s := simPair(t, 1, link)
	next := 80
	return &e2Env{
		name: "sim",
		n:    n,
		serve: func(t *asyncio.T, cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, int, error) {
			next++
			srv, err := StartServer(t, cb, "", next, WithNetwork(s))
			return srv, next, err
		},
		listen: func(t *asyncio.T, factory func() Protocol) (*Server, int, error) {
			next++
			srv, err := CreateServer(t, factory, "", next, WithNetwork(s))
			return srv, next, err
		},
		dial: func(t *asyncio.T, port int, factory func() Protocol) (Transport, Protocol, error) {
			return CreateConnection(t, factory, "server", port, WithNetwork(c))
		},
		open: func(t *asyncio.T, port int) (*StreamReader, *StreamWriter, error) {
			return OpenConnection(t, "server", port, WithNetwork(c))
		},
		refusedPort: 9,
	}
}

// e2Parity runs scenario on real loopback sockets and on the simulated
// network (both on a virtual-time loop) and fails the test if what they
// return differs.
func e2Parity(tt *testing.T, link LinkConfig, scenario func(t *asyncio.T, e *e2Env) (string, error)) {
	tt.Helper()
	clean(tt)
	var real, sim string
	runVirtual(tt, func(t *asyncio.T) error {
		var err error
		real, err = scenario(t, e2Real(tt))
		return err
	})
	runVirtual(tt, func(t *asyncio.T) error {
		e := e2Sim(t, link)
		var err error
		sim, err = scenario(t, e)
		if err == nil && tt.Failed() || real != sim {
			tt.Logf("trace:\n%s", strings.Join(e.n.Trace(), "\n"))
		}
		return err
	})
	if real != sim {
		tt.Fatalf("the simulated network differs from loopback sockets:\nreal: %s\nsim:  %s", real, sim)
	}
	tt.Logf("both: %s", real)
}

// e2Wait sleeps long enough for anything in flight over the 1 ms link (or
// loopback) to arrive.
func e2Wait(t *asyncio.T) error { return asyncio.Sleep(t, 50*time.Millisecond) }

// Promise (README, "As real sockets fail": "WriteEOF is a half-close the
// peer sees as EOF after the latency"; the parity promise). A client that
// half-closes still gets the whole answer; a server that half-closes
// still gets the client's last words; a protocol whose EOFReceived
// returns false closes its transport, and the peer that half-closed first
// sees a clean end. Real loopback and the network log the same.
func TestSimEdge2_HalfCloseBothWays(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		var log []string
		add := func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }

		// 1. The client half-closes: the server reads to EOF and answers.
		srvDone := asyncio.NewFuture[struct{}](t)
		srv, port, err := e.serve(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer srvDone.SetResult(struct{}{})
			defer w.Close()
			req, err := r.Read(t, -1)
			add("server read %q %s, at EOF %v", req, describe(err), r.AtEOF())
			w.Write([]byte(fmt.Sprintf("got %d bytes", len(req))))
			return nil
		})
		if err != nil {
			return "", err
		}
		r, w, err := e.open(t, port)
		if err != nil {
			return "", err
		}
		w.Write([]byte("hello"))
		w.WriteEOF()
		resp, err := r.Read(t, -1)
		add("client read %q %s", resp, describe(err))
		add("client write after WriteEOF: %s", describe(w.Write([]byte("x"))))
		w.Close()
		add("client WaitClosed %s", describe(w.WaitClosed(t)))
		if _, err := srvDone.Await(t); err != nil {
			return "", err
		}
		srv.Close()

		// 2. The server half-closes first: the client reads to EOF, then
		// answers and closes.
		srvDone = asyncio.NewFuture[struct{}](t)
		srv, port, err = e.serve(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer srvDone.SetResult(struct{}{})
			defer w.Close()
			w.Write([]byte("greeting"))
			w.WriteEOF()
			got, err := r.Read(t, -1)
			add("server read %q %s", got, describe(err))
			return nil
		})
		if err != nil {
			return "", err
		}
		r, w, err = e.open(t, port)
		if err != nil {
			return "", err
		}
		got, err := r.Read(t, -1)
		add("client read %q %s", got, describe(err))
		w.Write([]byte("thanks"))
		w.Close()
		add("client WaitClosed %s", describe(w.WaitClosed(t)))
		if _, err := srvDone.Await(t); err != nil {
			return "", err
		}
		srv.Close()

		// 3. Protocols: the server writes and half-closes; the client's
		// EOFReceived returns false, so its transport closes.
		var plog, slog []string
		sp := newStreamRecorder(t, "server", &slog)
		sp.onMade = func(p *streamRecorder) {
			p.tr.Write([]byte("bye"))
			p.tr.WriteEOF()
		}
		lsrv, port, err := e.listen(t, func() Protocol { return sp })
		if err != nil {
			return "", err
		}
		cp := newStreamRecorder(t, "client", &plog)
		if _, _, err := e.dial(t, port, func() Protocol { return cp }); err != nil {
			return "", err
		}
		if _, err := asyncio.WaitFor(t, time.Minute, cp.lost); err != nil {
			return "", fmt.Errorf("client lost: %w (%s)", err, plog)
		}
		if _, err := asyncio.WaitFor(t, time.Minute, sp.lost); err != nil {
			return "", fmt.Errorf("server lost: %w (%s)", err, plog)
		}
		lsrv.Close()
		add("protocols: %s; %s", strings.Join(plog, ", "), strings.Join(slog, ", "))
		return strings.Join(log, "; "), nil
	})
}

// Promise (parity with Linux TCP). A client that received the server's
// FIN (the server closed after reading everything) and keeps its side
// open, then writes: the first write is taken (the server's host answers
// with a RST), a later one fails. On Linux a RST that reaches a socket
// in CLOSE_WAIT sets EPIPE, not ECONNRESET (tcp_reset), so the
// transport's ConnectionLost gets EPIPE, asyncio's BrokenPipeError.
func TestSimEdge2_WriteAfterPeerClosed(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		var plog []string
		srv, port, err := e.serve(t, closeAtOnce)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		cp := newStreamRecorder(t, "client", &plog)
		cp.keepOpen = true
		tr, _, err := e.dial(t, port, func() Protocol { return cp })
		if err != nil {
			return "", err
		}
		if err := e2Wait(t); err != nil {
			return "", err
		}
		for _, b := range []string{"a", "b", "c"} {
			if err := tr.Write([]byte(b)); err != nil {
				cp.add("write " + b + ": " + describe(err))
			}
			if err := e2Wait(t); err != nil {
				return "", err
			}
		}
		if !cp.lost.Done() {
			tr.Close()
		}
		if _, err := asyncio.WaitFor(t, time.Minute, cp.lost); err != nil {
			return "", fmt.Errorf("client lost: %w (%s)", err, plog)
		}
		return strings.Join(plog, ", "), nil
	})
}

// The same with streams: a client that read the server's EOF writes
// twice, draining after each: the first Drain passes, the second fails as
// on Linux.
func TestSimEdge2_StreamWriteAfterPeerClosed(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		var log []string
		srv, port, err := e.serve(t, closeAtOnce)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		r, w, err := e.open(t, port)
		if err != nil {
			return "", err
		}
		defer w.Close()
		got, err := r.Read(t, -1)
		log = append(log, fmt.Sprintf("read %q %s", got, describe(err)))
		for _, b := range []string{"a", "b", "c"} {
			w.Write([]byte(b))
			log = append(log, "drain "+b+": "+describe(w.Drain(t)))
			if err := e2Wait(t); err != nil {
				return "", err
			}
		}
		w.Close()
		log = append(log, "WaitClosed: "+describe(w.WaitClosed(t)))
		return strings.Join(log, ", "), nil
	})
}

// Promise (parity). Connecting to a port nobody listens on fails with the
// same error, wrapped the same way, on the network as on loopback.
func TestSimEdge2_RefusedErrorShape(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		_, _, err := e.open(t, e.refusedPort)
		_, err2 := func() (Transport, error) {
			tr, _, err := e.dial(t, e.refusedPort, func() Protocol { return &BaseProtocol{} })
			return tr, err
		}()
		return fmt.Sprintf("open: %s (refused %v); create: %s", describe(err), errors.Is(err, syscall.ECONNREFUSED), describe(err2)), nil
	})
}

// Promise (SimNetwork.Close's doc: "every connection's relay is closed
// (the applications' sockets see EOF), listeners are forgotten, waiting
// dials fail with ErrSimNetworkClosed, and later calls fail with it
// too"; the project's rules: no spin, no leak). The network is closed
// (not the loop) with a server listening, a connection in its backlog, an
// established one with a read waiting, a stalled one with data held, a
// dial in its handshake, a dial lost to a partition and a datagram
// endpoint; then the loop goes on: virtual time moves without a busy loop,
// every waiter ends, the server closes, and nothing is left.
func TestSimEdge2_NetworkCloseWithEverythingOpen(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 3)
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond})
		c, s, p := n.Host("client"), n.Host("server"), n.Host("parted")
		handlerErr := asyncio.NewFuture[error](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := r.Read(t, -1)
			if !handlerErr.Done() {
				handlerErr.SetResult(err)
			}
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		// A second server that never accepts (paused), with a connection
		// in its backlog.
		lazy, err := CreateServer(t, func() Protocol { return &BaseProtocol{} }, "", 81, WithNetwork(s))
		if err != nil {
			return err
		}
		t.Loop().RemoveReader(lazy.listeners[0].fd)
		// A third server stays open until the loop closes.
		if _, err := StartServer(t, closeAtOnce, "", 82, WithNetwork(s)); err != nil {
			return err
		}
		r1, w1, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w1.Close()
		read1 := asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return r1.Read(t, -1) })
		r2, w2, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w2.Close()
		n.ConnOf(w2.ExtraInfo("sockname").(net.Addr)).Stall()
		w2.Write([]byte("held"))
		read2 := asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return r2.Read(t, -1) })
		_, wb, err := OpenConnection(t, "server", 81, WithNetwork(c)) // in the backlog
		if err != nil {
			return err
		}
		defer wb.Close()
		hand := asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) { return DialConn(t, "tcp", "server:80", WithNetwork(c)) })
		n.Partition(c, p)
		lost := asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) { return DialConn(t, "tcp", "parted:80", WithNetwork(c)) })
		dg := &collector{}
		ep, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return dg }, nil, &net.UDPAddr{IP: s.IP(), Port: 53}, WithNetwork(c))
		if err != nil {
			return err
		}
		defer ep.Close()
		if err := asyncio.Sleep(t, 15*time.Millisecond); err != nil { // the handshake dial's SYN arrived
			return err
		}

		n.Close()
		if err := e2SleepNoSpin(t, time.Hour, 100); err != nil {
			return fmt.Errorf("after the network closed: %w", err)
		}
		for name, task := range map[string]*asyncio.Task[*Conn]{"handshake": hand, "partitioned": lost} {
			if !task.Done() {
				return fmt.Errorf("the %s dial still waits after Close", name)
			}
			if _, err := task.Result(); !errors.Is(err, ErrSimNetworkClosed) {
				return fmt.Errorf("the %s dial: %v, want ErrSimNetworkClosed", name, err)
			}
		}
		for name, task := range map[string]*asyncio.Task[[]byte]{"idle": read1, "stalled": read2} {
			if !task.Done() {
				return fmt.Errorf("the %s connection's read still waits after Close", name)
			}
			if got, err := task.Result(); err != nil || len(got) != 0 {
				return fmt.Errorf("the %s connection's read: %q, %v, want EOF", name, got, err)
			}
		}
		if _, err := asyncio.WaitFor(t, time.Minute, handlerErr); err != nil {
			return fmt.Errorf("the server's handler still reads after Close: %v", err)
		}
		ep.SendTo([]byte("late"), nil)
		if len(dg.errs) != 1 || !errors.Is(dg.errs[0], ErrSimNetworkClosed) {
			return fmt.Errorf("datagram after Close: errors %v, want ErrSimNetworkClosed", dg.errs)
		}
		if _, err := DialConn(t, "tcp", "server:80", WithNetwork(c)); !errors.Is(err, ErrSimNetworkClosed) {
			return fmt.Errorf("dial after Close: %v", err)
		}
		if _, err := StartServer(t, closeAtOnce, "", 90, WithNetwork(s)); !errors.Is(err, ErrSimNetworkClosed) {
			return fmt.Errorf("listen after Close: %v", err)
		}
		srv.Close()
		lazy.Close()
		for _, sv := range []*Server{srv, lazy} {
			if _, err := asyncio.WaitFor(t, time.Minute, asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) { return struct{}{}, sv.WaitClosed(t) })); err != nil {
				return fmt.Errorf("WaitClosed after the network closed: %v", err)
			}
		}
		return nil
	})
}

// Promise (SimConn.StallFor: "a later StallFor replaces its end";
// Resume: "what was held is delivered after the link's latency";
// Partition: "held ... until Heal"). Overlapping faults: a shorter
// StallFor replaces a longer one; Stall then StallFor ends at the
// StallFor's end; a Resume while the hosts are partitioned delivers
// nothing until the Heal, and a Heal while the connection is stalled
// delivers nothing until the Resume. Each arrival is exact.
func TestSimEdge2_OverlappingFaults(t *testing.T) {
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
		conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
		echoAt := func(line string) (time.Duration, error) {
			start := t.Loop().Time()
			w.Write([]byte(line + "\n"))
			got, err := asyncio.WaitFor(t, time.Hour, asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return r.ReadLine(t) }))
			if err != nil {
				return 0, err
			}
			if string(got) != line+"\n" {
				return 0, fmt.Errorf("echo %q, want %q", got, line)
			}
			return t.Loop().Time() - start, nil
		}
		for _, tc := range []struct {
			name  string
			fault func(now time.Duration)
			want  time.Duration
		}{
			{"StallFor 10s, then StallFor 2s at 1s", func(now time.Duration) {
				conn.StallFor(10 * time.Second)
				n.At(now+time.Second, func() { conn.StallFor(2 * time.Second) })
			}, 3*time.Second + 5*time.Millisecond},
			{"Stall, then StallFor 1s at 500ms", func(now time.Duration) {
				conn.Stall()
				n.At(now+500*time.Millisecond, func() { conn.StallFor(time.Second) })
			}, 1500*time.Millisecond + 5*time.Millisecond},
			{"Stall, Partition at 1s, Resume at 2s, Heal at 3s", func(now time.Duration) {
				conn.Stall()
				n.At(now+time.Second, func() { n.Partition(c, s) })
				n.At(now+2*time.Second, conn.Resume)
				n.At(now+3*time.Second, func() { n.Heal(c, s) })
			}, 3*time.Second + 5*time.Millisecond},
			{"Partition, Stall at 1s, Heal at 2s, Resume at 3s", func(now time.Duration) {
				n.Partition(c, s)
				n.At(now+time.Second, conn.Stall)
				n.At(now+2*time.Second, func() { n.Heal(c, s) })
				n.At(now+3*time.Second, conn.Resume)
			}, 3*time.Second + 5*time.Millisecond},
			{"StallFor 0", func(time.Duration) { conn.StallFor(0) }, 10 * time.Millisecond},
		} {
			tc.fault(t.Loop().Time())
			d, err := echoAt(tc.name)
			if err != nil {
				return fmt.Errorf("%s: %v", tc.name, err)
			}
			// The echo's way back takes the latency once more.
			if want := tc.want + 5*time.Millisecond; tc.name != "StallFor 0" && d != want {
				return fmt.Errorf("%s: echoed after %v, want %v\n%s", tc.name, d, want, strings.Join(n.Trace(), "\n"))
			} else if tc.name == "StallFor 0" && d != tc.want {
				return fmt.Errorf("%s: echoed after %v, want %v", tc.name, d, tc.want)
			}
		}
		return nil
	})
}

// Promise (LinkConfig.Bandwidth, virtual time: "time jumps by d at once").
// 1 MiB over a 1 byte/s link arrives exactly 1,048,576 s (plus the
// latency) after it was written, in a few hundred loop iterations, not
// one per byte or per virtual second; and a zero-latency link answers in
// zero virtual time.
func TestSimEdge2_ExtremeLinks(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond, Bandwidth: 1})
		z := n.Host("zero")
		n.SetLink(c, z, LinkConfig{})
		const size = 1 << 20
		got := asyncio.NewFuture[[]byte](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			b, err := r.ReadExactly(t, size)
			got.SetResult(b)
			return err
		}, "", 80, WithNetwork(s), WithStreamLimit(2*size))
		if err != nil {
			return err
		}
		defer srv.Close()
		zsrv, err := StartServer(t, echoLines("z: "), "", 80, WithNetwork(z))
		if err != nil {
			return err
		}
		defer zsrv.Close()

		start := t.Loop().Time()
		zr, zw, err := OpenConnection(t, "zero", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer zw.Close()
		zw.Write([]byte("hi\n"))
		if line, err := zr.ReadLine(t); err != nil || string(line) != "z: hi\n" {
			return fmt.Errorf("zero-latency echo: %q, %v", line, err)
		}
		if d := t.Loop().Time() - start; d != 0 {
			return fmt.Errorf("a dial and an echo over a zero-latency link took %v of virtual time", d)
		}

		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		before := t.Loop().Stats().Iterations
		start = t.Loop().Time()
		want := pattern(size)
		w.Write(want)
		b, err := asyncio.WaitFor(t, 2*size*time.Second, got)
		if err != nil {
			return err
		}
		if !bytesEqual(b, want) {
			return fmt.Errorf("the 1 MiB arrived changed")
		}
		if d, want := t.Loop().Time()-start, size*time.Second+time.Millisecond; d != want {
			return fmt.Errorf("1 MiB at 1 byte/s arrived after %v, want %v", d, want)
		}
		if it := t.Loop().Stats().Iterations - before; it > 2000 {
			return fmt.Errorf("1 MiB at 1 byte/s took %d loop iterations", it)
		}
		return nil
	})
}

// e2SleepNoSpin sleeps for d of loop time and fails if that takes more
// than max loop iterations: a busy loop (on virtual time, one that keeps
// the clock from moving) is cut short and reported, not left to hang.
func e2SleepNoSpin(t *asyncio.T, d time.Duration, max uint64) error {
	l := t.Loop()
	start := l.Stats().Iterations
	sleep := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) { return struct{}{}, asyncio.Sleep(t, d) })
	spun := false
	l.SetAfterPoll(func() {
		if l.Stats().Iterations-start > max && !spun {
			spun = true
			sleep.Cancel()
		}
	})
	defer l.SetAfterPoll(nil)
	_, err := sleep.Await(t)
	if spun {
		return fmt.Errorf("%v of loop time took more than %d loop iterations: a busy loop", d, max)
	}
	return err
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// Promise (LinkConfig.Buffer: the network "stops reading from the sender
// (whose own socket buffer then fills, and whose transport then buffers
// and pauses its protocol)"; parity). A client that pauses reading while
// the server writes 8 MiB: the server's protocol is paused, nothing is
// lost or reordered after the client resumes, and the server's Drain
// returns. Real loopback and the network end the same.
func TestSimEdge2_PausedReaderBackpressure(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond, Buffer: 16 << 10}, func(t *asyncio.T, e *e2Env) (string, error) {
		const size = 8 << 20
		want := pattern(size)
		paused := false
		var sp *streamRecorder
		var slog []string
		srv, port, err := e.listen(t, func() Protocol {
			sp = newStreamRecorder(t, "server", &slog)
			sp.onMade = func(p *streamRecorder) { p.tr.Write(want) }
			return sp
		})
		if err != nil {
			return "", err
		}
		defer srv.Close()
		var clog []string
		var got []byte
		done := asyncio.NewFuture[struct{}](t)
		cp := newStreamRecorder(t, "client", &clog)
		cp.onMade = func(p *streamRecorder) { p.tr.PauseReading() }
		cp.onData = func(p *streamRecorder, d []byte) {
			got = append(got, d...)
			if len(got) == size && !done.Done() {
				done.SetResult(struct{}{})
			}
		}
		tr, _, err := e.dial(t, port, func() Protocol { return cp })
		if err != nil {
			return "", err
		}
		if err := asyncio.Sleep(t, 10*time.Second); err != nil {
			return "", err
		}
		if len(got) != 0 {
			return "", fmt.Errorf("%d bytes read while paused", len(got))
		}
		for _, l := range slog {
			if l == "server:pause writing" {
				paused = true
			}
		}
		tr.ResumeReading()
		if _, err := asyncio.WaitFor(t, time.Hour, done); err != nil {
			return "", fmt.Errorf("after resuming: %v, %d of %d bytes", err, len(got), size)
		}
		if !bytesEqual(got, want) {
			return "", fmt.Errorf("the bytes arrived changed")
		}
		tr.Close()
		if _, err := asyncio.WaitFor(t, time.Minute, sp.lost); err != nil {
			return "", err
		}
		return fmt.Sprintf("server paused while the client did not read: %v; server log %v", paused, slog), nil
	})
}

// abortOrClose: the server writes 2 MiB to a client that does not read,
// then (after 1 s) closes or aborts its transport, with or without bytes
// of the client's left unread; the client then reads everything it can.
// It returns what the client saw: whether what arrived is a prefix of
// what was sent (and, for a close, all of it), and how it ended.
func abortOrClose(t *asyncio.T, e *e2Env, abort, unread bool) (string, error) {
	const size = 2 << 20
	want := pattern(size)
	var slog []string
	var sp *streamRecorder
	srv, port, err := e.listen(t, func() Protocol {
		sp = newStreamRecorder(t, "server", &slog)
		sp.onMade = func(p *streamRecorder) {
			p.tr.PauseReading()
			p.tr.Write(want)
		}
		return sp
	})
	if err != nil {
		return "", err
	}
	defer srv.Close()
	var clog []string
	var got []byte
	ended := asyncio.NewFuture[string](t)
	cp := newStreamRecorder(t, "client", &clog)
	cp.keepOpen = true
	cp.onMade = func(p *streamRecorder) { p.tr.PauseReading() }
	cp.onData = func(p *streamRecorder, d []byte) { got = append(got, d...) }
	tr, _, err := e.dial(t, port, func() Protocol { return &e2Ender{cp, ended} })
	if err != nil {
		return "", err
	}
	defer tr.Close()
	if unread {
		tr.Write([]byte("never read"))
	}
	if err := asyncio.Sleep(t, time.Second); err != nil {
		return "", err
	}
	if abort {
		sp.tr.Abort()
	} else {
		sp.tr.Close()
	}
	if err := asyncio.Sleep(t, time.Second); err != nil {
		return "", err
	}
	tr.ResumeReading()
	how, err := asyncio.WaitFor(t, time.Hour, ended)
	if err != nil {
		return "", fmt.Errorf("the client saw no end: %v (%d bytes)", err, len(got))
	}
	// How much arrives depends on the buffers on the way (a loopback
	// socket's are megabytes, the link's 64 KiB): only close shows it.
	if !abort && !unread {
		how = fmt.Sprintf("whole %v, %s", len(got) == size, how)
	}
	return fmt.Sprintf("prefix %v, %s", bytesEqual(got, want[:min(len(got), size)]), how), nil
}

// e2Ender ends its future with how the connection ended: EOF or the
// error ConnectionLost got.
type e2Ender struct {
	*streamRecorder
	ended *asyncio.Future[string]
}

func (p *e2Ender) EOFReceived() bool {
	if !p.ended.Done() {
		p.ended.SetResult("EOF")
	}
	return p.streamRecorder.EOFReceived()
}

func (p *e2Ender) ConnectionLost(err error) {
	if !p.ended.Done() {
		p.ended.SetResult("lost " + describe(err))
	}
	p.streamRecorder.ConnectionLost(err)
}

// Promise (parity; SimConn's resets: "a socket pair closed with unread
// data resets its peer"). A server with 2 MiB buffered for a client that
// does not read: Close delivers all of it, then EOF; Abort with nothing
// of the client's unread ends with EOF after a prefix (a FIN: the buffer
// is dropped); Abort or Close with the client's bytes unread is a RST:
// a prefix, then ECONNRESET.
func TestSimEdge2_AbortVersusCloseWithDataBuffered(t *testing.T) {
	for _, tc := range []struct {
		name          string
		abort, unread bool
	}{
		{"close", false, false},
		{"abort", true, false},
		{"abort with unread", true, true},
		{"close with unread", false, true},
	} {
		t.Run(tc.name, func(tt *testing.T) {
			e2Parity(tt, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
				return abortOrClose(t, e, tc.abort, tc.unread)
			})
		})
	}
}

// Promise (dial's doc: "a full backlog (counting the handshakes in
// progress)" loses the SYN, sent again after 1, 2, 4 ... s). 400 clients
// dial one server (backlog 100) in the same instant, each exchanging a
// line: every one connects and is answered (those whose SYN was dropped a
// second or more later), the server saw 400 connections, and nothing is
// left on the network.
func TestSimEdge2_ManyConnectionsAtOnce(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		served := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			served++
			return echoLines("")(t, r, w)
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		const clients = 400
		late := 0
		err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i := range clients {
				asyncio.SpawnErr(g, func(t *asyncio.T) error {
					r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
					if err != nil {
						return fmt.Errorf("client %d: %w", i, err)
					}
					defer w.Close()
					if t.Loop().Time() >= time.Second {
						late++
					}
					line := fmt.Sprintf("client %d\n", i)
					w.Write([]byte(line))
					got, err := r.ReadLine(t)
					if err != nil || string(got) != line {
						return fmt.Errorf("client %d: %q, %v", i, got, err)
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if served != clients {
			return fmt.Errorf("the server saw %d connections, want %d", served, clients)
		}
		if late == 0 {
			return fmt.Errorf("no dial waited: the backlog of 100 was not enforced")
		}
		return edgeConnsGone(t, n)
	})
}

// Promise (sim_datagram.go: datagrams "as on a real host"; parity). Over
// loopback and over the network alike: an empty datagram arrives as one;
// a datagram to a port nobody has bound is dropped silently for an
// unconnected endpoint, and reported as ECONNREFUSED to a connected one;
// a connected endpoint refuses SendTo another address.
func TestSimEdge2_DatagramParity(t *testing.T) {
	clean(t)
	scenario := func(t *asyncio.T, bind func(*net.UDPAddr, *net.UDPAddr, DatagramProtocol) (DatagramTransport, error), here net.IP, closed int) (string, error) {
		var log []string
		recv := &collector{}
		rtr, err := bind(&net.UDPAddr{IP: here}, nil, recv)
		if err != nil {
			return "", err
		}
		defer rtr.Close()
		raddr := rtr.ExtraInfo("sockname").(*net.UDPAddr)
		un := &collector{}
		utr, err := bind(&net.UDPAddr{IP: here}, nil, un)
		if err != nil {
			return "", err
		}
		defer utr.Close()
		utr.SendTo(nil, raddr)
		utr.SendTo([]byte("x"), &net.UDPAddr{IP: raddr.IP, Port: closed})
		if err := e2Wait(t); err != nil {
			return "", err
		}
		log = append(log, fmt.Sprintf("empty: got %q; unconnected to nobody: errors %d", recv.got, len(un.errs)))
		con := &collector{}
		ctr, err := bind(nil, &net.UDPAddr{IP: raddr.IP, Port: closed}, con)
		if err != nil {
			return "", err
		}
		defer ctr.Close()
		ctr.SendTo([]byte("x"), nil)
		if err := e2Wait(t); err != nil {
			return "", err
		}
		errs := []string{}
		for _, e := range con.errs {
			errs = append(errs, describe(e))
		}
		log = append(log, fmt.Sprintf("connected to nobody: %v", errs))
		err = ctr.SendTo([]byte("x"), raddr)
		var ve *asyncio.ValueError
		log = append(log, fmt.Sprintf("SendTo another address: ValueError %v", errors.As(err, &ve)))
		return strings.Join(log, "; "), nil
	}
	var real, sim string
	closed := closedUDPPort(t)
	runVirtual(t, func(t *asyncio.T) error {
		var err error
		real, err = scenario(t, func(local, remote *net.UDPAddr, p DatagramProtocol) (DatagramTransport, error) {
			tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return p }, local, remote)
			return tr, err
		}, net.IPv4(127, 0, 0, 1), closed)
		return err
	})
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("box")
		var err error
		sim, err = scenario(t, func(local, remote *net.UDPAddr, p DatagramProtocol) (DatagramTransport, error) {
			tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return p }, local, remote, WithNetwork(h))
			return tr, err
		}, h.IP(), 9)
		return err
	})
	if real != sim {
		t.Fatalf("datagrams differ:\nreal: %s\nsim:  %s", real, sim)
	}
	t.Logf("both: %s", real)
}

// Promise (LinkConfig.Latency: "the one-way delay of every segment";
// SetLink accepts any latency that is not negative). A link whose latency
// is as long as a time.Duration goes (a link that never delivers, within
// any test) must not wrap round to a time in the past. Before the fix, a
// segment written over it at any time but 0 arrived at once, and so did
// a datagram over a link whose latency plus jitter went past the largest
// duration.
func TestSimEdge2_HugeLatencyNeverWrapsRound(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 53}, nil, WithNetwork(s))
		if err != nil {
			return err
		}
		defer rtr.Close()
		ctr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: s.IP(), Port: 53}, WithNetwork(c))
		if err != nil {
			return err
		}
		defer ctr.Close()
		for _, link := range []LinkConfig{
			{Latency: math.MaxInt64},
			{Latency: math.MaxInt64 - time.Second, Jitter: time.Hour},
			{Latency: math.MaxInt64 - time.Millisecond, Bandwidth: 1},
		} {
			n.SetLink(c, s, LinkConfig{})
			r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
			if err != nil {
				return err
			}
			defer w.Close()
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return err
			}
			n.SetLink(c, s, link)
			w.Write([]byte("never\n"))
			ctr.SendTo([]byte("never"), nil)
			start := t.Loop().Time()
			got, err := asyncio.WaitFor(t, 24*time.Hour, asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return r.ReadLine(t) }))
			if !errors.Is(err, asyncio.ErrTimeout) {
				return fmt.Errorf("over a link of latency %v (jitter %v): %q, %v after %v, want nothing within a day", link.Latency, link.Jitter, got, err, t.Loop().Time()-start)
			}
			if len(recv.got) != 0 {
				return fmt.Errorf("over a link of latency %v (jitter %v): datagrams %q arrived", link.Latency, link.Jitter, recv.got)
			}
		}
		return nil
	})
}

// Promise (SetLink/SetDefaultLink: "A negative duration, bandwidth or
// buffer, a Loss or Duplicate outside [0, 1] ... are a *ValueError naming
// the mistake, and change nothing"; LinkConfig.Buffer: "0 means 64
// KiB"). Every bad field of either call is refused by name, and the links
// keep what they had: the default link's latency and a pair's own.
func TestSimEdge2_BadLinkConfigChangesNothing(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		a, b, d := n.Host("a"), n.Host("b"), n.Host("d")
		n.SetDefaultLink(LinkConfig{Latency: 3 * time.Millisecond})
		n.SetLink(a, b, LinkConfig{Latency: 7 * time.Millisecond})
		inf := math.Inf(1)
		for _, tc := range []struct {
			field string
			cfg   LinkConfig
		}{
			{"Latency", LinkConfig{Latency: -time.Nanosecond}},
			{"Jitter", LinkConfig{Jitter: -time.Second}},
			{"Bandwidth", LinkConfig{Bandwidth: -1}},
			{"Buffer", LinkConfig{Buffer: -1}},
			{"Loss", LinkConfig{Loss: 1.0000001}},
			{"Loss", LinkConfig{Loss: -inf}},
			{"Duplicate", LinkConfig{Duplicate: inf}},
		} {
			for call, f := range map[string]func(){
				"SetLink":        func() { n.SetLink(a, b, tc.cfg) },
				"SetDefaultLink": func() { n.SetDefaultLink(tc.cfg) },
			} {
				if msg := valueErrorOf(f); !strings.Contains(msg, call+": LinkConfig."+tc.field) {
					tt.Errorf("%s(%+v): %q, want a ValueError naming LinkConfig.%s", call, tc.cfg, msg, tc.field)
				}
			}
		}
		for _, tc := range []struct {
			to   *SimHost
			want time.Duration
		}{{b, 14 * time.Millisecond}, {d, 6 * time.Millisecond}} {
			srv, err := StartServer(t, closeAtOnce, "", 80, WithNetwork(tc.to))
			if err != nil {
				return err
			}
			start := t.Loop().Time()
			_, w, err := OpenConnection(t, tc.to.Name(), 80, WithNetwork(a))
			if err != nil {
				return err
			}
			if dt := t.Loop().Time() - start; dt != tc.want {
				tt.Errorf("dial to %s took %v after the refused calls, want %v", tc.to.Name(), dt, tc.want)
			}
			w.Close()
			srv.Close()
		}
		// Buffer 0 is the default, 64 KiB, not a link that carries nothing.
		n.SetLink(a, b, LinkConfig{Buffer: 0})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := r.ReadExactly(t, 1<<20)
			w.Write([]byte("ok"))
			return err
		}, "", 81, WithNetwork(b), WithStreamLimit(2<<20))
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(t, "b", 81, WithNetwork(a))
		if err != nil {
			return err
		}
		defer w.Close()
		w.Write(make([]byte, 1<<20))
		got, err := asyncio.WaitFor(t, time.Minute, asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 2) }))
		if err != nil || string(got) != "ok" {
			return fmt.Errorf("1 MiB over a link of Buffer 0: %q, %v", got, err)
		}
		return nil
	})
}

// Promise (parity with Linux TCP). A client closes its writer while the
// transport still flushes a large write, and the server, which read
// nothing, aborts: its RST reaches a client socket in ESTABLISHED, so the
// client's next send fails with ECONNRESET (the reset's error, reported
// once), and the writer's WaitClosed returns asyncio's
// ConnectionResetError. The simulated socket pair said EPIPE (a
// BrokenPipeError), the error of a send to a socket pair whose other end
// is closed. (After the peer's FIN it is EPIPE on both:
// TestSimEdge2_WriteAfterPeerClosed.)
func TestSimEdge2_ResetWhileClosingWriterFlushes(t *testing.T) {
	e2Parity(t, LinkConfig{Latency: time.Millisecond}, func(t *asyncio.T, e *e2Env) (string, error) {
		abort := asyncio.NewFuture[struct{}](t)
		srv, port, err := e.serve(t, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if _, err := abort.Await(st); err != nil {
				return err
			}
			w.Transport().Abort()
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
		w.Write(make([]byte, 8<<20)) // far more than the sockets hold: most stays in the transport
		flushing := w.Transport().WriteBufferSize() > 0
		w.Close()
		if err := e2Wait(t); err != nil {
			return "", err
		}
		abort.SetResult(struct{}{})
		werr := w.WaitClosed(t)
		return fmt.Sprintf("flushing at close %v; WaitClosed: %s", flushing, describe(werr)), nil
	})
}
