//go:build unix

package aio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Hostile edge cases of the simulated network (sim.go, sim_conn.go):
// cancellation at every point, resets with partial data, backpressure,
// handshakes cut short, partitions, determinism, exact virtual times and
// closing the loop with everything open.

// pattern returns n bytes of a repeating, position-dependent pattern, so
// that a lost, duplicated or reordered chunk shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// edgeConnsGone reports an error if the network still has connections
// after the handshakes and relays have had time to end.
func edgeConnsGone(t *asyncio.T, n *SimNetwork) error {
	if err := asyncio.Sleep(t, 10*time.Second); err != nil {
		return err
	}
	if cs := n.Conns(); len(cs) != 0 {
		ids := []int{}
		for _, c := range cs {
			ids = append(ids, c.ID())
		}
		return fmt.Errorf("connections left on the network: %v\ntrace:\n%s", ids, strings.Join(n.Trace(), "\n"))
	}
	return nil
}

// Promise (sim.go, SimNetwork.dial / simDial.fail, and the project's
// rule): "a cancelled ... connect loses no data and leaves" nothing
// behind; a dial cancelled in its handshake "is never seen by the
// server" (TestSimDialConnHTTP's doc). A dial cancelled at every moment
// of its handshake (before the SYN arrives, between the SYN and the
// SYN-ACK, in the very instant the SYN-ACK arrives, after) leaves no
// connection on the network, no descriptor and no accepted connection.
func TestSimEdge_DialCancelledAtEveryPoint(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		served := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			served++
			w.Close()
			return nil
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		for _, after := range []time.Duration{0, 1, 5 * time.Millisecond, 10 * time.Millisecond, 10*time.Millisecond + 1, 19 * time.Millisecond, 20 * time.Millisecond} {
			_, err := asyncio.WaitForFunc(t, after, func(t *asyncio.T) (*Conn, error) {
				return DialConn(t, "tcp", "server:80", WithNetwork(c))
			})
			if !errors.Is(err, asyncio.ErrTimeout) {
				return fmt.Errorf("dial cancelled after %v: %v, want a timeout", after, err)
			}
			if err := edgeConnsGone(t, n); err != nil {
				return fmt.Errorf("dial cancelled after %v: %v", after, err)
			}
		}
		if served != 0 {
			return fmt.Errorf("the server served %d connections of cancelled dials", served)
		}
		return nil
	})
}

// Promise (the project's rule on cancellation, and simDial.fail's "the
// client's socket goes"): a connect cancelled leaves nothing behind. Here
// the cancellation comes in the same instant as the SYN-ACK, just after
// it: the dial's future has its descriptor when the task is cancelled.
// A real connect (dialOne, transports.go) closes its socket on every
// error; the simulated one must too, or the client's end of the socket
// pair leaks and the connection stays on the network forever.
func TestSimEdge_DialCancelledRightAfterSynAck(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		served := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			served++
			_, err := r.Read(t, -1)
			w.Close()
			return err
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		dial := asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) {
			return DialConn(t, "tcp", "server:80", WithNetwork(c))
		})
		if err := asyncio.Sleep(t, 0); err != nil { // the SYN is on its way
			return err
		}
		// At 10 ms the SYN arrives and the SYN-ACK is scheduled for 20 ms;
		// this callback runs after it and schedules the cancel for 20 ms
		// too, after the SYN-ACK.
		n.At(10*time.Millisecond, func() {
			n.At(20*time.Millisecond, func() { dial.Cancel() })
		})
		conn, err := dial.Await(t)
		if err == nil {
			// The dial won: fine, as long as it is a usable connection.
			conn.Close()
			tt.Logf("the dial completed before the cancel")
			return edgeConnsGone(t, n)
		}
		if !asyncio.IsCancelled(err) {
			return fmt.Errorf("dial: %v, want cancelled", err)
		}
		if err := edgeConnsGone(t, n); err != nil {
			return fmt.Errorf("dial cancelled just after its SYN-ACK (served %d): %v", served, err)
		}
		return nil
	})
}

// Promise (sim.go, SimNetwork doc): "Closing the loop closes the network
// and every descriptor it holds", and the project's rule that nothing
// outlives the loop's Close. Here the loop's main returns in the same
// instant a dial's SYN-ACK arrives: the dial's task is cancelled by Run
// with the descriptor already in its future. clean checks for leaked
// descriptors.
func TestSimEdge_LoopClosesAsDialCompletes(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		_ = srv
		//asynciovet:ignore unawaitedtask the dial is left in flight on purpose: the test checks what it leaves behind
		asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) {
			return DialConn(t, "tcp", "server:80", WithNetwork(c))
		})
		if err := asyncio.Sleep(t, 0); err != nil {
			return err
		}
		done := asyncio.NewFuture[struct{}](t)
		n.At(10*time.Millisecond, func() {
			n.At(20*time.Millisecond, func() { done.SetResult(struct{}{}) })
		})
		_, err = done.Await(t)
		return err // the loop closes now, the dial's task still to resume
	})
}

// Promise (ReadExactly's doc, streams.go: "If t is cancelled while
// waiting, nothing is consumed: the bytes already received stay in the
// buffer", and the project's rule that a cancelled read loses no data and
// leaves the connection usable). Over the simulated network, reads
// (ReadExactly, ReadUntil, ReadLine, Read) cancelled with part of the
// message received lose nothing: the next read gets it all, and the
// connection still echoes.
func TestSimEdge_CancelledReadsLoseNothing(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 5 * time.Millisecond, Jitter: 3 * time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for {
				cmd, err := r.ReadLine(t)
				if err != nil || len(cmd) == 0 {
					return err
				}
				// Each command is answered in two halves 100 ms apart.
				half := len(cmd) / 2
				w.Write(cmd[:half])
				if err := asyncio.Sleep(t, 100*time.Millisecond); err != nil {
					return err
				}
				w.Write(cmd[half:])
			}
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
		reads := []struct {
			name string
			read func(t *asyncio.T) ([]byte, error)
		}{
			{"ReadExactly", func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 11) }},
			{"ReadUntil", func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, []byte("\n")) }},
			{"ReadLine", func(t *asyncio.T) ([]byte, error) { return r.ReadLine(t) }},
		}
		for i, rd := range reads {
			msg := fmt.Sprintf("message %02d\n", i) // 11 bytes
			w.Write([]byte(msg))
			_, err := asyncio.WaitForFunc(t, 50*time.Millisecond, rd.read)
			if !errors.Is(err, asyncio.ErrTimeout) {
				return fmt.Errorf("%s: %v, want a timeout with half the message in", rd.name, err)
			}
			got, err := asyncio.WaitForFunc(t, 10*time.Second, rd.read)
			if errors.Is(err, asyncio.ErrTimeout) {
				return fmt.Errorf("%s after its cancelled twin: hangs with %q buffered\ntrace:\n%s", rd.name, r.buf, strings.Join(n.Trace(), "\n"))
			}
			if err != nil || string(got) != msg {
				return fmt.Errorf("%s after its cancelled twin: %q, %v; want %q", rd.name, got, err, msg)
			}
		}
		// Read(n) cancelled while nothing is buffered, then the data.
		w.Write([]byte("abcdefghij\n"))
		if err := asyncio.Sleep(t, 50*time.Millisecond); err != nil {
			return err
		}
		first, err := r.Read(t, 100) // the first half
		if err != nil {
			return err
		}
		if _, err := asyncio.WaitForFunc(t, 10*time.Millisecond, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 100) }); !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("Read with nothing in flight: %v, want a timeout", err)
		}
		rest, err := r.ReadLine(t)
		if err != nil || string(first)+string(rest) != "abcdefghij\n" {
			return fmt.Errorf("after a cancelled Read: %q + %q, %v", first, rest, err)
		}
		return nil
	})
}

// partialLineThenReset runs a server that writes a partial line ("abc",
// no newline) and then closes with the client's byte unread (a TCP
// reset), and a client whose ReadLine waits on the partial line. It
// returns what the client saw: ReadLine's result, whether its error is
// ECONNRESET, and what stays buffered.
func partialLineThenReset(t *asyncio.T, serve func(cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, error), dial func(port int) (*StreamReader, *StreamWriter, error)) (string, error) {
	clientWrote := asyncio.NewFuture[struct{}](t)
	srv, err := serve(func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		w.Transport().PauseReading()
		w.Write([]byte("abc"))
		if _, err := clientWrote.Await(t); err != nil {
			return err
		}
		// Let the client's byte reach the server's socket.
		if err := asyncio.Sleep(t, 20*time.Millisecond); err != nil {
			return err
		}
		w.Transport().Abort() // closed with the byte unread: a reset
		return nil
	})
	if err != nil {
		return "", err
	}
	defer srv.Close()
	r, w, err := dial(serverPort(srv))
	if err != nil {
		return "", err
	}
	defer w.Close()
	w.Write([]byte("x"))
	clientWrote.SetResult(struct{}{})
	line, err := r.ReadLine(t)
	_, again := r.Read(t, 10)
	return fmt.Sprintf("line %q, reset %v, buffered %q, then Read: reset %v", line, errors.Is(err, syscall.ECONNRESET), r.buf, errors.Is(again, syscall.ECONNRESET)), nil
}

// Promise (SimConn.Reset's doc and the package's parity rule: "a read
// fails with ECONNRESET after the data already received ... a stream
// reader's pending or next read fails with that error"): a ReadLine
// waiting on a partial line when the peer resets fails with ECONNRESET,
// as on a real loopback socket (compared on the spot), and the partial
// line stays as a real socket leaves it.
func TestSimEdge_PartialLineThenPeerReset(t *testing.T) {
	clean(t)
	var sim, real string
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond})
		var err error
		sim, err = partialLineThenReset(t, func(cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, error) {
			return StartServer(t, cb, "", 80, WithNetwork(s))
		}, func(port int) (*StreamReader, *StreamWriter, error) {
			return OpenConnection(t, "server", port, WithNetwork(c))
		})
		return err
	})
	runVirtual(t, func(t *asyncio.T) error {
		var err error
		real, err = partialLineThenReset(t, func(cb func(*asyncio.T, *StreamReader, *StreamWriter) error) (*Server, error) {
			return StartServer(t, cb, "127.0.0.1", 0)
		}, func(port int) (*StreamReader, *StreamWriter, error) {
			return OpenConnection(t, "127.0.0.1", port)
		})
		return err
	})
	t.Logf("sim:  %s\nreal: %s", sim, real)
	if sim != real {
		t.Fatalf("partial line then reset:\nsim:  %s\nreal: %s", sim, real)
	}
}

// Promise (SimConn.Reset's doc): "a read fails with ECONNRESET after the
// data already received ... What was in flight is lost." A ReadLine
// waiting on a partial line gets the reset; the bytes delivered before
// stay buffered (asyncio's readuntil leaves its buffer on an exception),
// the bytes still in flight never arrive, and WaitClosed and Drain report
// the reset.
func TestSimEdge_PartialLineThenSimReset(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Write([]byte("abc"))
			if err := asyncio.Sleep(t, 20*time.Millisecond); err != nil {
				return err
			}
			w.Write([]byte("def\n")) // in flight at the reset
			_, err := r.Read(t, -1)  // ends with the reset
			if asyncio.IsCancelled(err) {
				return err
			}
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
		conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
		// Connected at 20 ms; the server writes "abc" at 30 (accepted),
		// it arrives at 40; "def\n" leaves at 50 and is due at 60.
		n.At(55*time.Millisecond, conn.Reset)
		line, err := r.ReadLine(t)
		if !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("ReadLine across a reset: %q, %v; want ECONNRESET", line, err)
		}
		if string(r.buf) != "abc" {
			return fmt.Errorf("buffered after the reset: %q, want %q", r.buf, "abc")
		}
		if now := t.Loop().Time(); now != 55*time.Millisecond {
			return fmt.Errorf("reset seen at %v, want 55ms", now)
		}
		if err := w.WaitClosed(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("WaitClosed: %v", err)
		}
		if err := w.Drain(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("Drain: %v", err)
		}
		return nil
	})
}

// Promise (LinkConfig.Buffer's doc: the network "stops reading from the
// sender (whose own socket buffer then fills, and whose transport then
// buffers and pauses its protocol)"; Drain's doc, streams.go: "Drain
// waits until the transport's write buffer is at or below the low water
// mark"). A writer with water marks of 64/16 KiB, draining after every
// chunk, to a slow reader over a small-buffered link: every Drain returns
// with the buffer at or below the high mark (at or below the low one when
// it had to wait), the writer was paused, and every byte arrives in
// order.
func TestSimEdge_BackpressureSlowReader(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond, Buffer: 8 << 10})
		const size = 1 << 20
		got := asyncio.NewFuture[[]byte](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			var all []byte
			for {
				b, err := r.Read(t, 8<<10)
				if err != nil {
					got.SetException(err)
					return err
				}
				if len(b) == 0 {
					got.SetResult(all)
					return nil
				}
				all = append(all, b...)
				if err := asyncio.Sleep(t, time.Millisecond); err != nil { // a slow reader
					return err
				}
			}
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
		if err := w.Transport().SetWriteBufferLimits(64<<10, 16<<10); err != nil {
			return err
		}
		data := pattern(size)
		maxAfterDrain, maxAfterWait, paused := 0, 0, 0
		for off := 0; off < size; off += 32 << 10 {
			w.Write(data[off : off+32<<10])
			above := w.Transport().WriteBufferSize() > 64<<10
			if err := w.Drain(t); err != nil {
				return err
			}
			after := w.Transport().WriteBufferSize()
			maxAfterDrain = max(maxAfterDrain, after)
			if above {
				paused++
				maxAfterWait = max(maxAfterWait, after)
			}
		}
		if err := w.WriteEOF(); err != nil {
			return err
		}
		all, err := asyncio.WaitFor(t, time.Hour, got)
		if err != nil {
			return err
		}
		if !bytes.Equal(all, data) {
			return fmt.Errorf("received %d bytes, not the %d sent in order", len(all), size)
		}
		if paused == 0 {
			return fmt.Errorf("the writer never went past its high water mark: no backpressure")
		}
		if maxAfterDrain > 64<<10 {
			return fmt.Errorf("Drain returned with %d bytes buffered, above the high water mark", maxAfterDrain)
		}
		if maxAfterWait > 16<<10 {
			return fmt.Errorf("a Drain that waited returned with %d bytes buffered, above the low water mark", maxAfterWait)
		}
		return nil
	})
}

// Promise (the project's rule: "a cancelled read/drain/connect loses no
// data and leaves the connection usable where asyncio's would be"). A
// Drain cancelled while the peer does not read (the writer paused, 2 MiB
// buffered) loses nothing: the connection stays open, later writes queue
// behind, a second Drain completes once the peer reads, and the peer
// gets every byte in order.
func TestSimEdge_CancelledDrainLosesNothing(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 2 * time.Millisecond, Bandwidth: 10 << 20})
		start := asyncio.NewFuture[struct{}](t)
		got := asyncio.NewFuture[[]byte](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Transport().PauseReading()
			if _, err := start.Await(t); err != nil {
				return err
			}
			w.Transport().ResumeReading()
			all, err := r.Read(t, -1)
			got.SetResult(all)
			return err
		}, "", 80, WithNetwork(s), WithStreamLimit(8<<20))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		data := pattern(2<<20 + 17)
		w.Write(data[:2<<20])
		if _, err := asyncio.WaitForFunc(t, 50*time.Millisecond, func(t *asyncio.T) (struct{}, error) { return struct{}{}, w.Drain(t) }); !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("Drain to a peer that does not read: %v, want a timeout", err)
		}
		if w.IsClosing() {
			return fmt.Errorf("the cancelled Drain closed the connection")
		}
		w.Write(data[2<<20:])
		start.SetResult(struct{}{})
		if err := w.Drain(t); err != nil {
			return fmt.Errorf("Drain after the cancelled one: %v", err)
		}
		if err := w.WriteEOF(); err != nil {
			return err
		}
		all, err := asyncio.WaitFor(t, time.Hour, got)
		if err != nil {
			return err
		}
		if !bytes.Equal(all, data) {
			return fmt.Errorf("received %d bytes, not the %d sent in order", len(all), len(data))
		}
		return nil
	})
}

// Promise (sim.go's dial doc: "the server accepts when the client's ACK
// arrives"; acked's doc: "the listener gone meanwhile, is reset"; Linux
// drops a closing listener's half-open connections, and the client's
// ACK then gets a RST). A server closed while a handshake is in flight:
// a dial whose SYN is still on its way is refused; one whose SYN-ACK is
// on its way connects and then reads ECONNRESET; the server's WaitClosed
// returns; nothing stays on the network.
func TestSimEdge_ServerClosedMidHandshake(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		served := 0
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			served++
			return echoLines("")(t, r, w)
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		type result struct {
			r   *StreamReader
			w   *StreamWriter
			err error
			at  time.Duration
		}
		dial := func() *asyncio.Task[result] {
			return asyncio.CreateTask(t, func(t *asyncio.T) (result, error) {
				r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
				return result{r, w, err, t.Loop().Time()}, nil
			})
		}
		early := dial() // SYN at 0, arrives at 10, SYN-ACK at 20, ACK at 30
		if err := asyncio.Sleep(t, 8*time.Millisecond); err != nil {
			return err
		}
		late := dial() // SYN at 8, arrives at 18
		n.At(15*time.Millisecond, srv.Close)
		e, err := early.Await(t)
		if err != nil {
			return err
		}
		l, err := late.Await(t)
		if err != nil {
			return err
		}
		if !errors.Is(l.err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial whose SYN met a closed listener: %v, want ECONNREFUSED", l.err)
		}
		if e.err != nil {
			return fmt.Errorf("dial whose SYN-ACK was on its way: %v, want connected", e.err)
		}
		defer e.w.Close()
		if e.at != 20*time.Millisecond {
			return fmt.Errorf("connected at %v, want 20ms", e.at)
		}
		e.w.Write([]byte("hello\n"))
		if line, err := e.r.ReadLine(t); !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("read on a connection the listener dropped: %q, %v; want ECONNRESET", line, err)
		}
		if at := t.Loop().Time(); at != 40*time.Millisecond {
			return fmt.Errorf("reset seen at %v, want 40ms (the RST answering the ACK, which reaches the server at 30ms, takes the way back)", at)
		}
		if _, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.WaitClosed(t) }); err != nil {
			return fmt.Errorf("server WaitClosed: %v", err)
		}
		if served != 0 {
			return fmt.Errorf("the closed server served %d connections", served)
		}
		return edgeConnsGone(t, n)
	})
}

// Promise (SimNetwork.Partition's doc): "segments between them are held
// ..., and connection attempts are lost ..., until Heal". A partition
// that starts while the SYN-ACK is on its way must hold it: the client is
// not connected while the hosts are cut off (real TCP loses the SYN-ACK
// and connects after a retransmission once healed).
func TestSimEdge_PartitionCutsSynAck(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		n.At(15*time.Millisecond, func() { n.Partition(c, s) }) // the SYN arrived at 10
		n.At(5*time.Second, func() { n.Heal(c, s) })
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		at := t.Loop().Time()
		w.Write([]byte("ping\n"))
		line, err := r.ReadLine(t)
		if err != nil || string(line) != "ping\n" {
			return fmt.Errorf("echo after the heal: %q, %v", line, err)
		}
		if at < 5*time.Second {
			return fmt.Errorf("connected at %v through a partition (15ms to 5s): the SYN-ACK crossed it", at)
		}
		return nil
	})
}

// Promise (Partition's doc: "segments between them are held"; dial's
// doc: "the server accepts when the client's ACK arrives"). A partition
// that starts while the client's ACK is on its way holds it: the server
// does not accept the connection while the hosts are cut off.
func TestSimEdge_PartitionCutsAck(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		var accepted []time.Duration
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			accepted = append(accepted, t.Loop().Time())
			return echoLines("")(t, r, w)
		}, "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		_, w, err := OpenConnection(t, "server", 80, WithNetwork(c)) // connected at 20
		if err != nil {
			return err
		}
		defer w.Close()
		n.Partition(c, s) // the ACK is due at the server at 30
		n.At(5*time.Second, func() { n.Heal(c, s) })
		if err := asyncio.Sleep(t, 6*time.Second); err != nil {
			return err
		}
		if len(accepted) != 1 {
			return fmt.Errorf("accepted %v", accepted)
		}
		if accepted[0] < 5*time.Second {
			return fmt.Errorf("the server accepted at %v, during the partition (20ms to 5s): the ACK crossed it", accepted[0])
		}
		return nil
	})
}

// Promise (Heal's doc: "what was held is delivered after the link's
// latency"; LinkConfig.Jitter's doc: "Segments of one direction are
// never reordered"). Writes made during a partition, both ways, over a
// jittery link, arrive after the heal plus the latency, whole and in
// order; a second Partition and Heal do the same; other pairs of hosts
// are not cut.
func TestSimEdge_PartitionHealsInOrder(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 3)
		c, s, o := n.Host("client"), n.Host("server"), n.Host("other")
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond, Jitter: 5 * time.Millisecond})
		for _, h := range []*SimHost{s, o} {
			srv, err := StartServer(t, echoLines(h.Name()+":"), "", 80, WithNetwork(h))
			if err != nil {
				return err
			}
			defer srv.Close()
		}
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		ro, wo, err := OpenConnection(t, "other", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer wo.Close()
		for round := range 2 {
			n.Partition(c, s)
			n.Partition(c, s) // twice: no harm
			healAt := t.Loop().Time() + 2*time.Second
			n.At(healAt, func() { n.Heal(c, s) })
			for i := range 20 {
				w.Write([]byte(fmt.Sprintf("r%d line %d\n", round, i)))
				if err := asyncio.Sleep(t, time.Millisecond); err != nil {
					return err
				}
			}
			wo.Write([]byte("other\n"))
			if line, err := ro.ReadLine(t); err != nil || string(line) != "other:other\n" || t.Loop().Time() > healAt {
				return fmt.Errorf("another host's connection during the partition: %q, %v at %v", line, err, t.Loop().Time())
			}
			for i := range 20 {
				line, err := r.ReadLine(t)
				if want := fmt.Sprintf("server:r%d line %d\n", round, i); err != nil || string(line) != want {
					return fmt.Errorf("round %d: line %d: %q, %v; want %q", round, i, line, err, want)
				}
				if i == 0 && t.Loop().Time() < healAt+20*time.Millisecond {
					return fmt.Errorf("round %d: the first echo at %v, before the heal (%v) plus a round trip", round, t.Loop().Time(), healAt)
				}
			}
			n.Heal(c, s) // healed already: nothing
		}
		return nil
	})
}

// Promise (SimConn.StallFor's doc): "StallFor stalls the connection for
// d of loop time". A connection stalled for 10 s, resumed early at 1 s
// and stalled again at 2 s for 10 s must stay stalled until 12 s: the
// first StallFor's timer must not end the second stall at 10 s.
func TestSimEdge_StallForAfterEarlyResume(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, c, s := simPair(t, 1, LinkConfig{})
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
		conn.StallFor(10 * time.Second)
		n.At(time.Second, conn.Resume)
		n.At(2*time.Second, func() { conn.StallFor(10 * time.Second) })
		if err := asyncio.Sleep(t, 3*time.Second); err != nil {
			return err
		}
		w.Write([]byte("ping\n"))
		if _, err := r.ReadLine(t); err != nil {
			return err
		}
		if at := t.Loop().Time(); at != 12*time.Second {
			return fmt.Errorf("the echo sent during the second stall (2s to 12s) came back at %v, want 12s", at)
		}
		return nil
	})
}

// Promise (the virtual times of sim.go's enqueue: "size bytes take
// size/Bandwidth on the link after what it is already sending, then
// latency and jitter"; LinkConfig.Bandwidth: "bytes per second per
// direction"). Over a 1 ms link at 1,000,000 bytes/s: 1,000 bytes arrive
// exactly 2 ms after they are written (twice, 10 ms apart); and
// 1,000,000 bytes 1 s + 1 ms after they are
// written, with the default 64 KiB buffer (far more than the link's
// bandwidth-delay product of 2,000 bytes, so it must not slow the
// transfer down: real TCP with that window keeps the link busy) and with
// a 4 MiB one.
func TestSimEdge_BandwidthExactTimes(t *testing.T) {
	for _, buffer := range []int{0, 4 << 20} {
		t.Run(fmt.Sprintf("buffer=%d", buffer), func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond, Bandwidth: 1_000_000, Buffer: buffer})
				type arrival struct {
					at   time.Duration
					size int
				}
				arrivals := asyncio.NewFuture[[]arrival](t)
				srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
					defer w.Close()
					var got []arrival
					for _, size := range []int{1000, 1000, 1_000_000} {
						if _, err := r.ReadExactly(t, size); err != nil {
							arrivals.SetException(err)
							return err
						}
						got = append(got, arrival{t.Loop().Time(), size})
					}
					arrivals.SetResult(got)
					return nil
				}, "", 80, WithNetwork(s), WithStreamLimit(4<<20))
				if err != nil {
					return err
				}
				defer srv.Close()
				_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
				if err != nil {
					return err
				}
				defer w.Close()
				t0 := t.Loop().Time()
				if t0 != 2*time.Millisecond {
					return fmt.Errorf("connected at %v, want 2ms (the handshake does not use bandwidth)", t0)
				}
				w.Write(make([]byte, 1000))
				if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
					return err
				}
				w.Write(make([]byte, 1000))
				if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
					return err
				}
				t1 := t.Loop().Time()
				w.Write(make([]byte, 1_000_000))
				got, err := asyncio.WaitFor(t, time.Minute, arrivals)
				if err != nil {
					return err
				}
				want := []arrival{{t0 + 2*time.Millisecond, 1000}, {t0 + 12*time.Millisecond, 1000}, {t1 + time.Second + time.Millisecond, 1_000_000}}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					var sends []string
					for _, line := range n.Trace() {
						if strings.Contains(line, "sent, due") && len(sends) < 8 {
							sends = append(sends, line)
						}
					}
					return fmt.Errorf("arrivals %v, want %v; the relay's first segments:\n%s", got, want, strings.Join(sends, "\n"))
				}
				return nil
			})
		})
	}
}

// edgeScenario is a busy run on one seed: jittery, bandwidth-limited
// links, a stall, a partition that heals, a reset chosen by the seed,
// a dial lost to the partition, and lossy datagrams. It returns the
// network's trace and the applications' own log (with loop times).
func edgeScenario(seed uint64) ([]string, []string, error) {
	var trace, log []string
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := NewSimNetwork(t, seed)
		n.SetDefaultLink(LinkConfig{Latency: 3 * time.Millisecond, Jitter: 4 * time.Millisecond, Bandwidth: 200_000, Buffer: 4 << 10, Loss: 0.2, Duplicate: 0.2})
		client := n.Host("client")
		logf := func(format string, args ...any) {
			log = append(log, fmt.Sprintf("%-12v ", t.Loop().Time())+fmt.Sprintf(format, args...))
		}
		var servers []*Server
		defer func() {
			for _, s := range servers {
				s.Close()
				s.AbortClients()
			}
		}()
		for i := range 3 {
			h := n.Host(fmt.Sprintf("s%d", i))
			srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer w.Close()
				for {
					line, err := r.ReadLine(t)
					if err != nil || len(line) == 0 {
						return nil
					}
					w.Write(bytes.Repeat(line, 300)) // a bulky answer
				}
			}, "", 80, WithNetwork(h))
			if err != nil {
				return struct{}{}, err
			}
			servers = append(servers, srv)
		}
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 53}, nil, WithNetwork(n.Host("s0")))
		if err != nil {
			return struct{}{}, err
		}
		defer rtr.Close()
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: n.Host("s0").IP(), Port: 53}, WithNetwork(client))
		if err != nil {
			return struct{}{}, err
		}
		defer str.Close()
		err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i := range 3 {
				asyncio.SpawnErr(g, func(t *asyncio.T) error {
					r, w, err := OpenConnection(t, fmt.Sprintf("s%d", i), 80, WithNetwork(client))
					if err != nil {
						logf("conn %d: dial: %v", i, err)
						return nil
					}
					defer w.Close()
					for j := range 4 {
						w.Write([]byte(fmt.Sprintf("q%d.%d\n", i, j)))
						if err := w.Drain(t); err != nil {
							logf("conn %d: drain: %v", i, err)
							return nil
						}
						got, err := r.ReadExactly(t, 300*len(fmt.Sprintf("q%d.%d\n", i, j)))
						logf("conn %d: answer %d: %d bytes, %v", i, j, len(got), err)
						if err != nil {
							return nil
						}
					}
					return nil
				})
			}
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				for i := range 50 {
					str.SendTo([]byte(fmt.Sprint("d", i)), nil)
					if err := asyncio.Sleep(t, time.Duration(n.Rand().IntN(3)+1)*time.Millisecond); err != nil {
						return err
					}
				}
				return nil
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 20*time.Millisecond); err != nil {
					return err
				}
				cs := n.Conns()
				if len(cs) > 0 {
					cs[n.Rand().IntN(len(cs))].StallFor(30 * time.Millisecond)
				}
				n.Partition(client, n.Host("s1"))
				n.At(t.Loop().Time()+1500*time.Millisecond, func() { n.Heal(client, n.Host("s1")) })
				conn, err := asyncio.WaitForFunc(t, 4*time.Second, func(t *asyncio.T) (*Conn, error) {
					return DialConn(t, "tcp", "s1:80", WithNetwork(client))
				})
				logf("dial across the partition: %v", err)
				if err == nil {
					conn.Close()
				}
				if cs := n.Conns(); len(cs) > 0 {
					cs[n.Rand().IntN(len(cs))].Reset()
				}
				return nil
			})
			return nil
		})
		logf("datagrams %v", recv.got)
		trace = n.Trace()
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	return trace, log, err
}

// Promise (sim.go's package comment: "the same seed gives the same run,
// event for event"; Trace's doc: "the same seed and the same program give
// the same lines"). A busy scenario with every fault kind, run three
// times on one seed, gives the same trace and the same application log;
// another seed gives another trace.
func TestSimEdge_DeterministicBusyScenario(t *testing.T) {
	clean(t)
	t1, l1, err := edgeScenario(42)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		t2, l2, err := edgeScenario(42)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := strings.Join(t1, "\n"), strings.Join(t2, "\n"); a != b {
			t.Fatalf("seed 42 gave two traces; first difference:\n%s", firstDiff(t1, t2))
		}
		if a, b := strings.Join(l1, "\n"), strings.Join(l2, "\n"); a != b {
			t.Fatalf("seed 42 gave two application logs; first difference:\n%s", firstDiff(l1, l2))
		}
	}
	t3, _, err := edgeScenario(43)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(t1, "\n") == strings.Join(t3, "\n") {
		t.Fatalf("seeds 42 and 43 gave the same trace")
	}
	joined := strings.Join(t1, "\n")
	for _, want := range []string{"stalled", "partition", "heal", "reset", "lost", "duplicated", "SYN lost"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the scenario never did %q:\n%s", want, joined)
		}
	}
	t.Logf("%d trace lines; log:\n%s", len(t1), strings.Join(l1, "\n"))
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}

// Promise (SimNetwork's doc: "Closing the loop closes the network and
// every descriptor it holds"; the project's rule that nothing —
// goroutines, pending futures, sim connections — outlives the loop's
// Close). The loop closes with everything in flight: an idle connection,
// a read waiting on a stalled one with data held, a Drain waiting on a
// peer that does not read, a dial lost to a partition, a connection in
// its handshake, one in a server's backlog, datagrams in flight and an
// HTTP request waiting on a stalled server. clean checks descriptors and
// goroutines.
func TestSimEdge_LoopClosesWithEverythingOpen(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 9)
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond, Buffer: 4 << 10})
		c, s, p := n.Host("client"), n.Host("server"), n.Host("parted")
		if _, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Transport().PauseReading() // never reads
			_, err := r.Read(t, 1)
			return err
		}, "", 80, WithNetwork(s)); err != nil {
			return err
		}
		if _, err := StartServer(t, echoLines(""), "", 81, WithNetwork(s), WithBacklog(4)); err != nil {
			return err
		}
		// A server that never accepts: deferred, then serving but with
		// its reader never run (the loop closes first).
		if _, err := StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "hi")
		}), "", 8080, WithNetwork(s)); err != nil {
			return err
		}
		_, idle, err := OpenConnection(t, "server", 81, WithNetwork(c))
		if err != nil {
			return err
		}
		_ = idle
		stalledR, stalledW, err := OpenConnection(t, "server", 81, WithNetwork(c))
		if err != nil {
			return err
		}
		n.ConnOf(stalledW.ExtraInfo("sockname").(net.Addr)).Stall()
		stalledW.Write([]byte("held\n"))
		//asynciovet:ignore unawaitedtask left pending on purpose: the loop's Close must end it and leave nothing behind
		asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) { return stalledR.ReadLine(t) })
		_, busy, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		busy.Write(make([]byte, 4<<20))
		//asynciovet:ignore unawaitedtask left pending on purpose: the loop's Close must end it and leave nothing behind
		asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) { return struct{}{}, busy.Drain(t) })
		n.Partition(c, p)
		//asynciovet:ignore unawaitedtask left pending on purpose: the loop's Close must end it and leave nothing behind
		asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) { return DialConn(t, "tcp", "parted:80", WithNetwork(c)) })
		//asynciovet:ignore unawaitedtask left pending on purpose: the loop's Close must end it and leave nothing behind
		asyncio.CreateTask(t, func(t *asyncio.T) (*Conn, error) { return DialConn(t, "tcp", "server:81", WithNetwork(c)) })
		ep, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: s.IP(), Port: 53}, WithNetwork(c))
		if err != nil {
			return err
		}
		ep.SendTo([]byte("in flight"), nil)
		// An HTTP request to a connection that stalls.
		client := &http.Client{Transport: c.HTTPTransport()}
		//asynciovet:ignore unawaitedtask left pending on purpose: the loop's Close must end it and leave nothing behind
		asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return asyncio.Go(t, func(ctx context.Context) (string, error) {
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://server:8080/", nil)
				resp, err := client.Do(req)
				if err != nil {
					return "", err
				}
				resp.Body.Close()
				return resp.Status, nil
			})
		})
		// Let the request's connection open, then stall it, and let the
		// second dial's SYN arrive (its SYN-ACK is on the way when the
		// loop closes).
		if err := asyncio.Sleep(t, 25*time.Millisecond); err != nil {
			return err
		}
		for _, conn := range n.Conns() {
			if conn.Server().String() == "10.0.0.2:8080" {
				conn.Stall()
			}
		}
		if err := asyncio.Sleep(t, 12*time.Millisecond); err != nil {
			return err
		}
		return nil
	})
}

// Promise (LinkConfig.Bandwidth: "bytes per second per direction"; the
// relay's enqueue: "size bytes take size/Bandwidth on the link"). Two
// writes of 1,000 bytes in the same instant over a 1 ms, 1,000,000
// bytes/s link: on a real link the first thousand's last byte is through
// after 1 ms and arrives at 2 ms, the second at 3 ms. The network reads
// both as one segment and delivers it whole when its last byte is due,
// so the first thousand arrive 1 ms late; the bigger the segment (up to
// 64 KiB, 65 ms at this rate) the later its head. Logged, not failed:
// a granularity of the model, though undocumented.
func TestSimEdge_BandwidthSegmentHeadDelay(t *testing.T) {
	clean(t)
	tt := t
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond, Bandwidth: 1_000_000})
		var at []time.Duration
		done := asyncio.NewFuture[struct{}](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			for range 2 {
				if _, err := r.ReadExactly(t, 1000); err != nil {
					return err
				}
				at = append(at, t.Loop().Time())
			}
			done.SetResult(struct{}{})
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
		t0 := t.Loop().Time()
		w.Write(make([]byte, 1000))
		w.Write(make([]byte, 1000))
		if _, err := done.Await(t); err != nil {
			return err
		}
		if at[0]-t0 != 2*time.Millisecond || at[1]-t0 != 3*time.Millisecond {
			tt.Logf("questionable: 2 x 1000 bytes written at once arrive after %v and %v, a real 1 MB/s link gives 2ms and 3ms (the relay delivers a segment whole, at its last byte's time)", at[0]-t0, at[1]-t0)
		}
		return nil
	})
}
