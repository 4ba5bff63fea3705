//go:build unix

package ports_test

// Ports p153 onward (h36): a length-prefixed RPC with futures resolved by
// a reader task, a relay with half-close and small write-buffer limits, a
// Protocol server pausing its reading, UDP requests with retries, a
// server refusing connections past a semaphore, a shutdown path with
// shielded waits and shutdown_default_executor, Server.close with
// close_clients (3.13), a TaskGroup of stream readers where one fails,
// eager tasks doing network I/O, a child's output streamed with a
// per-line timeout then killed, readuntil on a tuple of separators
// (3.13), as_completed's async iterator over health probes (3.13), an
// idle timeout pushed back with reschedule under a timeout_at cap, and a
// job server shut down with Queue.shutdown and abort_clients (3.13).
// Same conventions as ports_test.go, ports50_test.go (network, on the
// simulated network) and ports70_test.go (subprocesses). p154 found the
// simulated network delivering two iterations later than a loopback
// (TestSimParityLoopbackDeliveryIteration in aio).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p153_framed_rpc.py

func TestPortFramedRPC(t *testing.T) {
	runPort(t, cpythonTrace("p153_framed_rpc"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		delays := map[string]time.Duration{"fast": 40 * ms, "slow": 300 * ms, "mid": 120 * ms, "late": 600 * ms}
		frame := func(body string) []byte {
			return binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		}
		serve := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			p.log("server: connected")
			answer := func(rid int, op, arg string) func(*asyncio.T) error {
				return func(t *asyncio.T) error {
					if err := asyncio.Sleep(t, delays[op]); err != nil {
						return err
					}
					if op == "late" && arg == "die" {
						body := fmt.Sprintf("%d:ok:%s", rid, arg)
						if err := w.Write(append(frame(body), body[:3]...)); err != nil {
							return err
						}
						if err := w.Drain(t); err != nil {
							return err
						}
						p.log("server: dies mid-frame for %d", rid)
						w.Transport().Abort()
						return nil
					}
					body := fmt.Sprintf("%d:ok:%s", rid, strings.ToUpper(arg))
					if err := w.Write(append(frame(body), body...)); err != nil {
						return err
					}
					return w.Drain(t)
				}
			}
			// tasks = set(); t.add_done_callback(tasks.discard)
			tasks := map[*asyncio.Task[struct{}]]bool{}
			for {
				head, err := r.ReadExactly(t, 4)
				var ire *aio.IncompleteReadError
				if errors.As(err, &ire) {
					p.log("server: client gone, partial %s", pbytes(ire.Partial))
					return nil
				} else if isConnectionError(err) {
					p.log("server: reading ended %s", nd(err))
					return nil
				} else if err != nil {
					return err
				}
				body, err := r.ReadExactly(t, int(binary.BigEndian.Uint32(head)))
				if err != nil {
					return err
				}
				f := strings.Split(string(body), ":")
				rid, _ := strconv.Atoi(f[0])
				p.log("server: request %s %s %s", f[0], f[1], f[2])
				task := asyncio.CreateTaskErr(t, answer(rid, f[1], f[2]))
				tasks[task] = true
				task.AddDoneCallback(func() { delete(tasks, task) })
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, serve, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(srv), sim)
		if err != nil {
			return err
		}
		pending := map[int]*asyncio.Future[string]{}
		nextID := 1
		readReplies := func(t *asyncio.T) error {
			for {
				head, err := reader.ReadExactly(t, 4)
				var body []byte
				if err == nil {
					body, err = reader.ReadExactly(t, int(binary.BigEndian.Uint32(head)))
				}
				var ire *aio.IncompleteReadError
				if errors.As(err, &ire) {
					p.log("reader: %s partial %s expected %s", nd(err), pbytes(ire.Partial), pexpected(ire))
					cerr := newConnectionError(fmt.Sprintf("connection lost with %d pending", len(pending)))
					for _, rid := range slices.Sorted(maps.Keys(pending)) {
						if fut := pending[rid]; !fut.Done() {
							_ = fut.SetException(cerr)
						}
					}
					clear(pending)
					return nil
				} else if err != nil {
					return err
				}
				f := strings.Split(string(body), ":")
				rid, _ := strconv.Atoi(f[0])
				fut, ok := pending[rid]
				delete(pending, rid)
				switch {
				case !ok:
					p.log("reader: reply for %s nobody waits for, dropped", f[0])
				case fut.Done():
					state := "done"
					if fut.Cancelled() {
						state = "cancelled"
					}
					p.log("reader: reply for %s but its future is %s", f[0], state)
				default:
					_ = fut.SetResult(f[2])
				}
			}
		}
		readerTask := asyncio.CreateTaskErr(tk, readReplies, asyncio.WithName("rpc-reader"))
		call := func(t *asyncio.T, op, arg string, timeout time.Duration) (string, error) {
			rid := nextID
			nextID++
			fut := asyncio.NewFuture[string](t.Loop())
			pending[rid] = fut
			body := fmt.Sprintf("%d:%s:%s", rid, op, arg)
			if err := writer.Write(append(frame(body), body...)); err != nil {
				return "", err
			}
			if err := writer.Drain(t); err != nil {
				return "", err
			}
			v, err := asyncio.WaitFor(t, timeout, fut)
			if errors.Is(err, asyncio.ErrTimeout) {
				_, held := pending[rid]
				p.log("call %d %s timed out; pending still holds it: %s", rid, op, pb(held))
			}
			return v, err
		}
		one := func(op, arg string, timeout time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				v, err := call(t, op, arg, timeout)
				if err != nil {
					if asyncio.IsCancelled(err) {
						return noValue, err
					}
					p.log("failed %s %s %s", op, arg, pd(err))
					return noValue, nil
				}
				p.log("got %s %s -> %s", op, arg, v)
				return noValue, nil
			}
		}
		never := asyncio.Never
		if _, err := asyncio.GatherFuncs(tk, one("slow", "a", never), one("fast", "b", never), one("mid", "c", never),
			one("slow", "d", 200*ms)).Await(tk); err != nil {
			return err
		}
		p.log("pending after round 1 %s", pyInts(slices.Sorted(maps.Keys(pending))))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("pending after the late reply %s", pyInts(slices.Sorted(maps.Keys(pending))))
		if _, err := asyncio.GatherFuncs(tk, one("late", "die", never), one("slow", "e", never),
			one("fast", "f", never)).Await(tk); err != nil {
			return err
		}
		if _, err := readerTask.Await(tk); err != nil {
			return err
		}
		if len(pending) != 0 {
			return fmt.Errorf("pending after the reader: %v", pending)
		}
		p.log("reader done None pending {}")
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(tk); err != nil {
			return err
		}
		p.log("closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p154_relay_half_close.py

func TestPortRelayHalfClose(t *testing.T) {
	runPort(t, cpythonTrace("p154_relay_half_close"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		backend := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			p.log("backend: connected")
			total := 0
			for chunk, err := range r.Chunks(t, 1000) {
				if err != nil {
					return err
				}
				total += len(chunk)
			}
			p.log("backend: EOF after %d bytes", total)
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			for i := range 3 {
				if err := w.Write([]byte(fmt.Sprintf("summary %d of %d\n", i, total))); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 50*ms); err != nil {
					return err
				}
			}
			p.log("backend: closing")
			w.Close()
			return w.WaitClosed(t)
		}
		pump := func(name string, r *aio.StreamReader, w *aio.StreamWriter, stats map[string]int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				n := 0
				for chunk, err := range r.Chunks(t, 4096) {
					if err != nil {
						return err
					}
					if err := w.Write(chunk); err != nil {
						return err
					}
					if err := w.Drain(t); err != nil {
						return err
					}
					n += len(chunk)
				}
				stats[name] = n
				if w.CanWriteEOF() {
					if err := w.WriteEOF(); err != nil {
						return err
					}
					p.log("relay: %s EOF passed on after %d bytes", name, n)
				}
				return nil
			}
		}
		relay := func(bport int, done *asyncio.Event) func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
			return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) (err error) {
				p.log("relay: client connected")
				upR, upW, err := aio.OpenConnection(t, "127.0.0.1", bport, sim)
				if err != nil {
					return err
				}
				for _, x := range []*aio.StreamWriter{w, upW} {
					if err := x.Transport().SetWriteBufferLimits(64, 16); err != nil {
						return err
					}
				}
				high, low := upW.Transport().WriteBufferLimits()
				p.log("relay: limits (%d, %d)", low, high)
				stats := map[string]int{}
				defer func() {
					upW.Close()
					w.Close()
					if werr := upW.WaitClosed(t); err == nil {
						err = werr
					}
					if werr := w.WaitClosed(t); err == nil {
						err = werr
					}
					p.log("relay: done [('down', %d), ('up', %d)]", stats["down"], stats["up"])
					done.Set()
				}()
				return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
					if _, err := asyncio.SpawnErr(g, pump("up", r, upW, stats)); err != nil {
						return err
					}
					_, err := asyncio.SpawnErr(g, pump("down", upR, w, stats))
					return err
				})
			}
		}

		p.restart()
		back, err := aio.StartServer(tk, backend, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		done := asyncio.NewEvent()
		front, err := aio.StartServer(tk, relay(portOf(back), done), "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(front), sim)
		if err != nil {
			return err
		}
		for range 4 {
			if err := writer.Write([]byte(strings.Repeat("x", 250))); err != nil {
				return err
			}
			if err := writer.Drain(tk); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 20*ms); err != nil {
				return err
			}
		}
		if err := writer.WriteEOF(); err != nil {
			return err
		}
		p.log("client: sent 1000 bytes and EOF")
		var lines []string
		for line, err := range reader.Lines(tk) {
			if err != nil {
				return err
			}
			lines = append(lines, strings.TrimSpace(string(line)))
			p.log("client: got '%s'", lines[len(lines)-1])
		}
		p.log("client: EOF, at_eof %s lines %d", pb(reader.AtEOF()), len(lines))
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		if err := done.Wait(tk); err != nil {
			return err
		}
		for _, s := range []*aio.Server{front, back} {
			s.Close()
			if err := s.WaitClosed(tk); err != nil {
				return err
			}
		}
		p.log("servers closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p155_protocol_pause_reading.py

// jobServer is the program's JobServer: a nil job is None (EOF).
type jobServer struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
	buf       []byte
	jobs      *asyncio.Queue[*string]
	chunks    int
	eof       bool
	worker    *asyncio.Task[struct{}]
}

const jobServerMax = 2

func (s *jobServer) ConnectionMade(tr aio.Transport) {
	s.transport = tr
	s.buf = nil
	s.jobs = asyncio.NewQueue[*string](0)
	s.worker = asyncio.CreateTaskErr(s.p.l, s.work)
	s.p.log("server: connection_made, reading %s", pb(tr.IsReading()))
}

func (s *jobServer) DataReceived(data []byte) {
	s.chunks++
	s.buf = append(s.buf, data...)
	lines := strings.Split(string(s.buf), "\n")
	s.buf = []byte(lines[len(lines)-1])
	lines = lines[:len(lines)-1]
	s.p.log("server: chunk %d with %d lines", s.chunks, len(lines))
	for _, line := range lines {
		_ = s.jobs.PutNowait(&line)
	}
	if s.jobs.Len() >= jobServerMax && s.transport.IsReading() {
		s.transport.PauseReading()
		s.p.log("server: paused at %d jobs, reading %s", s.jobs.Len(), pb(s.transport.IsReading()))
	}
}

func (s *jobServer) EOFReceived() bool {
	s.p.log("server: eof_received with %d queued", s.jobs.Len())
	s.eof = true
	_ = s.jobs.PutNowait(nil)
	return true
}

func (s *jobServer) ConnectionLost(err error) {
	s.p.log("server: connection_lost %s", pnone(err))
	s.worker.Cancel()
}

func (s *jobServer) work(t *asyncio.T) error {
	done := 0
	for {
		job, err := s.jobs.Get(t)
		if err != nil {
			return err
		}
		if job == nil {
			s.transport.Write([]byte(fmt.Sprintf("done %d\n", done)))
			s.transport.Close()
			s.p.log("server: answered EOF after %d jobs", done)
			return nil
		}
		if err := asyncio.Sleep(t, 100*ms); err != nil {
			return err
		}
		done++
		s.transport.Write([]byte(fmt.Sprintf("ok %s\n", *job)))
		if !s.transport.IsReading() && s.jobs.Len() <= 1 {
			s.transport.ResumeReading()
			s.p.log("server: resumed at %d jobs", s.jobs.Len())
		}
	}
}

func TestPortProtocolPauseReading(t *testing.T) {
	runPort(t, cpythonTrace("p155_protocol_pause_reading"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		p.restart()
		srv, err := aio.CreateServer(tk, func() aio.Protocol { return &jobServer{p: p} }, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(srv), sim)
		if err != nil {
			return err
		}
		rd := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for line, err := range reader.Lines(t) {
				if err != nil {
					return err
				}
				p.log("client: got %s", strings.TrimSpace(string(line)))
			}
			return nil
		})
		for i, gap := range []time.Duration{10 * ms, 30 * ms, 20 * ms, 50 * ms, 30 * ms, 20 * ms} {
			if err := writer.Write([]byte(fmt.Sprintf("job%d\n", i))); err != nil {
				return err
			}
			if err := writer.Drain(tk); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, gap); err != nil {
				return err
			}
		}
		if err := writer.Write([]byte("job6\njob7")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 30*ms); err != nil {
			return err
		}
		if err := writer.Write([]byte("\n")); err != nil {
			return err
		}
		if err := writer.WriteEOF(); err != nil {
			return err
		}
		p.log("client: all sent")
		if _, err := rd.Await(tk); err != nil {
			return err
		}
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p156_udp_retries.py

// retryServer is the program's Server(asyncio.DatagramProtocol).
type retryServer struct {
	aio.BaseDatagramProtocol
	p         *probe
	transport aio.DatagramTransport
	seen      map[string]int
}

func (s *retryServer) ConnectionMade(tr aio.DatagramTransport) { s.transport = tr }

func (s *retryServer) DatagramReceived(data []byte, addr net.Addr) {
	rid, cmd, _ := strings.Cut(string(data), " ")
	s.seen[rid]++
	n := s.seen[rid]
	if cmd == "drop-once" && n == 1 {
		s.p.log("server: drops %s", rid)
		return
	}
	if cmd == "never" {
		s.p.log("server: ignores %s attempt %d", rid, n)
		return
	}
	delay := 20 * ms
	if cmd == "slow" && n == 1 {
		delay = 250 * ms
	}
	reply := []byte(fmt.Sprintf("%s %s #%d", rid, strings.ToUpper(cmd), n))
	s.p.l.CallLater(delay, func() { _ = s.transport.SendTo(reply, addr) })
}

// retryClient is the program's Client(asyncio.DatagramProtocol).
type retryClient struct {
	aio.BaseDatagramProtocol
	p         *probe
	transport aio.DatagramTransport
	waiting   map[string]*asyncio.Future[string]
	dups      int
}

func (c *retryClient) ConnectionMade(tr aio.DatagramTransport) { c.transport = tr }

func (c *retryClient) DatagramReceived(data []byte, _ net.Addr) {
	rid, reply, _ := strings.Cut(string(data), " ")
	fut := c.waiting[rid]
	if fut == nil || fut.Done() {
		c.dups++
		c.p.log("client: duplicate or late reply %s %s", rid, reply)
		return
	}
	_ = fut.SetResult(reply)
}

func (c *retryClient) ErrorReceived(err error) { c.p.log("client: error_received %s", nd(err)) }

func (c *retryClient) request(t *asyncio.T, rid, cmd string, timeout time.Duration, attempts int) (string, error) {
	fut := asyncio.NewFuture[string](t.Loop())
	c.waiting[rid] = fut
	for attempt := 1; attempt <= attempts; attempt++ {
		if err := c.transport.SendTo([]byte(rid+" "+cmd), nil); err != nil {
			return "", err
		}
		v, err := asyncio.WaitFor(t, timeout, asyncio.Shield[string](fut))
		if !errors.Is(err, asyncio.ErrTimeout) {
			return v, err
		}
		c.p.log("client: %s attempt %d timed out", rid, attempt)
	}
	fut.Cancel()
	return "", &asyncio.TimeoutError{}
}

func TestPortUDPRetries(t *testing.T) {
	runPort(t, cpythonTrace("p156_udp_retries"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		p.restart()
		server := &retryServer{p: p, seen: map[string]int{}}
		st, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return server },
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil, sim)
		if err != nil {
			return err
		}
		addr := st.ExtraInfo("sockname").(*net.UDPAddr)
		client := &retryClient{p: p, waiting: map[string]*asyncio.Future[string]{}}
		ct, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return client }, nil, addr, sim)
		if err != nil {
			return err
		}
		call := func(rid, cmd string, gap time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, gap); err != nil {
					return err
				}
				v, err := client.request(t, rid, cmd, 100*ms, 3)
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("failed %s %s", rid, pd(err))
				case err != nil:
					return err
				default:
					p.log("result %s %s", rid, v)
				}
				return nil
			}
		}
		if err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, c := range []struct {
				rid, cmd string
				gap      time.Duration
			}{{"r1", "ping", 0}, {"r2", "drop-once", 10 * ms}, {"r3", "slow", 20 * ms}, {"r4", "never", 30 * ms}} {
				if _, err := asyncio.SpawnErr(g, call(c.rid, c.cmd, c.gap)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		var seen []string
		for _, k := range slices.Sorted(maps.Keys(server.seen)) {
			seen = append(seen, fmt.Sprintf("('%s', %d)", k, server.seen[k]))
		}
		p.log("duplicates %d seen [%s]", client.dups, strings.Join(seen, ", "))
		ct.Close()
		st.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("closed %s %s", pb(ct.IsClosing()), pb(st.IsClosing()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p157_max_connections.py

func TestPortMaxConnections(t *testing.T) {
	runPort(t, cpythonTrace("p157_max_connections"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		served, refused, failed := 0, 0, 0
		sem := asyncio.NewSemaphore(2)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if sem.Locked() {
				refused++
				if err := w.Write([]byte("BUSY\n")); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
				w.Close()
				return w.WaitClosed(t)
			}
			return asyncio.WithLock(t, sem, func() (err error) {
				if err := w.Write([]byte("WELCOME\n")); err != nil {
					return err
				}
				defer func() {
					w.Close()
					if werr := w.WaitClosed(t); err == nil {
						err = werr
					}
				}()
				body := func() error {
					for line, err := range r.Lines(t) {
						if err != nil {
							return err
						}
						cmd := strings.TrimSpace(string(line))
						if cmd == "boom" {
							return newValueError("bad command")
						}
						if err := asyncio.Sleep(t, 60*ms); err != nil {
							return err
						}
						if err := w.Write([]byte("done " + cmd + "\n")); err != nil {
							return err
						}
						if err := w.Drain(t); err != nil {
							return err
						}
					}
					served++
					return nil
				}
				var ve *valueError
				if err := body(); errors.As(err, &ve) {
					failed++
					if err := w.Write([]byte("ERR " + ve.msg + "\n")); err != nil {
						return err
					}
					return w.Drain(t)
				} else {
					return err
				}
			})
		}
		client := func(name string, port int, cmds []string, start time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, start); err != nil {
					return noValue, err
				}
				for attempt := 1; attempt < 4; attempt++ {
					r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
					if err != nil {
						return noValue, err
					}
					hello, err := r.ReadLine(t)
					if err != nil {
						return noValue, err
					}
					if strings.TrimSpace(string(hello)) == "BUSY" {
						p.log("%s refused on attempt %d", name, attempt)
						w.Close()
						if err := w.WaitClosed(t); err != nil {
							return noValue, err
						}
						if err := asyncio.Sleep(t, 130*ms); err != nil {
							return noValue, err
						}
						continue
					}
					p.log("%s admitted on attempt %d", name, attempt)
					var got []string
					for _, cmd := range cmds {
						if err := w.Write([]byte(cmd + "\n")); err != nil {
							return noValue, err
						}
						line, err := r.ReadLine(t)
						if err != nil {
							return noValue, err
						}
						got = append(got, strings.TrimSpace(string(line)))
						if strings.HasPrefix(got[len(got)-1], "ERR") {
							break
						}
					}
					if err := w.WriteEOF(); err != nil {
						return noValue, err
					}
					rest, err := r.Read(t, -1)
					if err != nil {
						return noValue, err
					}
					p.log("%s got %s then %s", name, pstrs(got), pbytes(rest))
					w.Close()
					return noValue, w.WaitClosed(t)
				}
				p.log("%s gave up", name)
				return noValue, nil
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		if err := aio.WithServer(tk, srv, func() error {
			if _, err := asyncio.GatherFuncs(tk,
				client("a", port, []string{"x", "y", "z"}, 0),
				client("b", port, []string{"boom", "never"}, 10*ms),
				client("c", port, []string{"p"}, 20*ms),
				client("d", port, []string{"q", "r"}, 30*ms),
				client("e", port, []string{"s"}, 40*ms),
			).Await(tk); err != nil {
				return err
			}
			p.log("stats {'served': %d, 'refused': %d, 'failed': %d} locked %s", served, refused, failed, pb(sem.Locked()))
			return nil
		}); err != nil {
			return err
		}
		p.log("server closed, serving %s", pb(srv.IsServing()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p158_shutdown_shielded.py

func TestPortShutdownShielded(t *testing.T) {
	runPort(t, cpythonTrace("p158_shutdown_shielded"), func(p *probe, tk *asyncio.T) error {
		var journal []string
		commit := func(name string, dur time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, dur); err != nil {
					return "", err
				}
				journal = append(journal, name)
				p.log("commit %s written", name)
				return name + "-ok", nil
			}
		}
		handler := func(name string, dur time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				c := asyncio.CreateTask(t, commit(name, dur), asyncio.WithName("commit-"+name))
				r, err := asyncio.WaitFor(t, asyncio.Never, asyncio.Shield[string](c))
				if asyncio.IsCancelled(err) {
					p.log("handler %s cancelled, commit done: %s", name, pb(c.Done()))
					return err
				} else if err != nil {
					return err
				}
				p.log("handler %s got %s", name, r)
				return nil
			}
		}
		flush := func(t *asyncio.T) (int, error) {
			if err := asyncio.Sleep(t, 370*ms); err != nil {
				return 0, err
			}
			p.log("flush wrote %d entries", len(journal))
			return len(journal), nil
		}
		checksum := func(entries []string) func(context.Context) (int, error) {
			return func(context.Context) (int, error) {
				n := 0
				for _, e := range entries {
					n += len(e)
				}
				return n, nil
			}
		}

		p.restart()
		var handlers []*asyncio.Task[struct{}]
		for _, h := range []struct {
			n string
			d time.Duration
		}{{"a", 100 * ms}, {"b", 300 * ms}, {"c", 430 * ms}} {
			handlers = append(handlers, asyncio.CreateTaskErr(tk, handler(h.n, h.d)))
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		pending := 0
		for _, h := range handlers {
			if !h.Done() {
				pending++
			}
		}
		p.log("shutdown: cancelling %d handlers", pending)
		for _, h := range handlers {
			h.Cancel()
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(handlers)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range res {
			if o.Err != nil {
				outs = append(outs, "'"+pd(o.Err)+"'")
			} else {
				outs = append(outs, "None")
			}
		}
		p.log("handlers [%s]", strings.Join(outs, ", "))
		f := asyncio.CreateTask(tk, flush, asyncio.WithName("flush"))
		n, err := asyncio.WaitFor(tk, 200*ms, asyncio.Shield[int](f))
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("flush slow, still running: %s", pb(!f.Done()))
			n, err = asyncio.WaitFor(tk, asyncio.Never, f)
		}
		if err != nil {
			return err
		}
		p.log("flushed %d journal %s", n, pstrs(journal))
		total, err := asyncio.RunInExecutor(tk, checksum(journal)).Await(tk)
		if err != nil {
			return err
		}
		p.log("checksum %d", total)
		// shutdown_default_executor(timeout=1.0): its wait is
		// `async with timeouts.timeout(timeout): await future`.
		if err := asyncio.Timeout(tk, time.Second, func(*asyncio.TimeoutScope) error {
			return asyncio.ShutdownDefaultExecutor(tk)
		}); err != nil {
			return err
		}
		p.log("executor shut down")
		if _, err := asyncio.RunInExecutor(tk, checksum(journal)).Await(tk); errors.Is(err, asyncio.ErrRuntime) {
			p.log("after shutdown: %s", pd(err))
		} else {
			return fmt.Errorf("run_in_executor after the shutdown: %v", err)
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("journal %s", pstrs(journal))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p159_server_close_clients.py

func TestPortServerCloseClients(t *testing.T) {
	runPort(t, cpythonTrace("p159_server_close_clients"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		active := map[string]*aio.StreamWriter{}
		activeNames := func() string { return pstrs(slices.Sorted(maps.Keys(active))) }
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			active[name] = w
			p.log("server: %s connected", name)
			defer func() {
				delete(active, name)
				p.log("server: %s handler ends, closing: %s", name, pb(w.Transport().IsClosing()))
			}()
			for line, err := range r.Lines(t) {
				if isConnectionError(err) {
					p.log("server: %s error %s", name, nd(err))
					return nil
				} else if err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 10*ms); err != nil {
					return err
				}
				if err := w.Write(append([]byte("echo "), line...)); err != nil {
					return err
				}
				if err := w.Drain(t); isConnectionError(err) {
					p.log("server: %s error %s", name, nd(err))
					return nil
				} else if err != nil {
					return err
				}
			}
			p.log("server: %s saw EOF", name)
			return nil
		}
		client := func(port int, name string, lines int, gap time.Duration, waitForBye bool) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return noValue, err
				}
				if err := w.Write([]byte(name + "\n")); err != nil {
					return noValue, err
				}
				body := func() error {
					for i := range lines {
						if err := w.Write([]byte(fmt.Sprintf("%s%d\n", name, i))); err != nil {
							return err
						}
						if err := w.Drain(t); err != nil {
							return err
						}
						if _, err := r.ReadLine(t); err != nil {
							return err
						}
						if err := asyncio.Sleep(t, gap); err != nil {
							return err
						}
					}
					if waitForBye {
						p.log("%s waits for the server's goodbye", name)
						rest, err := r.ReadLine(t)
						if err != nil {
							return err
						}
						p.log("%s read: %s eof %s", name, pbytes(rest), pb(r.AtEOF()))
					}
					p.log("%s finished its %d lines", name, lines)
					return nil
				}
				err = body()
				if isConnectionError(err) {
					p.log("%s lost: %s", name, nd(err))
					err = nil
				}
				w.Close()
				if werr := w.WaitClosed(t); err == nil {
					err = werr
				}
				return noValue, err
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		clients := []*asyncio.Task[struct{}]{
			asyncio.CreateTask(tk, client(port, "quick", 2, 20*ms, false)),
			asyncio.CreateTask(tk, client(port, "steady", 3, 30*ms, false)),
			asyncio.CreateTask(tk, client(port, "idle", 1, 0, true)),
		}
		if err := asyncio.Sleep(tk, 45*ms); err != nil {
			return err
		}
		srv.Close()
		p.log("closed; serving %s active %s", pb(srv.IsServing()), activeNames())
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			p.log("new client refused: %s", strings.TrimSuffix(nd(err), "(111)"))
		} else {
			return errors.New("a new client was accepted after close")
		}
		waiter := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		if _, err := asyncio.WaitFor(tk, 200*ms, asyncio.Shield[struct{}](waiter)); err == nil {
			p.log("all connections ended by themselves")
		} else if errors.Is(err, asyncio.ErrTimeout) {
			p.log("grace period over, still active %s", activeNames())
			srv.CloseClients()
			if err := asyncio.Sleep(tk, 30*ms); err != nil {
				return err
			}
			p.log("after close_clients, active %s waiter done %s", activeNames(), pb(waiter.Done()))
		} else {
			return err
		}
		if _, err := waiter.Await(tk); err != nil {
			return err
		}
		p.log("wait_closed returned")
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(clients)...).Await(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p160_tg_handlers_fail.py

func TestPortTaskGroupHandlersFail(t *testing.T) {
	runPort(t, cpythonTrace("p160_tg_handlers_fail"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		type feedLine struct {
			delay time.Duration
			line  string
		}
		feeds := map[string][]feedLine{
			"alpha": {{30 * ms, "a=1"}, {50 * ms, "b=2"}, {100 * ms, "c=3"}},
			"beta":  {{40 * ms, "x=9"}, {60 * ms, "oops"}, {200 * ms, "y=8"}},
			"gamma": {{20 * ms, "p=5"}, {300 * ms, "q=6"}},
		}
		names := []string{"alpha", "beta", "gamma"}
		feedServer := func(name string) (*aio.Server, error) {
			handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) (err error) {
				defer func() {
					if err != nil {
						return
					}
					rest, rerr := r.Read(t, -1)
					if rerr != nil {
						err = rerr
						return
					}
					p.log("%s: client closed, read %s", name, pbytes(rest))
					w.Close()
					err = w.WaitClosed(t)
				}()
				for _, f := range feeds[name] {
					if err := asyncio.Sleep(t, f.delay); err != nil {
						return err
					}
					if err := w.Write([]byte(f.line + "\n")); err != nil {
						return err
					}
					if err := w.Drain(t); isConnectionError(err) {
						p.log("%s: client gone while sending, %s", name, nd(err))
						return nil
					} else if err != nil {
						return err
					}
				}
				p.log("%s: sent all", name)
				return nil
			}
			return aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		}
		type kv struct {
			k string
			v int
		}
		seen := map[string][]kv{}
		collect := func(name string, port int) func(*asyncio.T) error {
			return func(t *asyncio.T) (err error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return err
				}
				defer func() {
					w.Close()
					if werr := w.WaitClosed(t); err == nil {
						err = werr
					}
				}()
				for line, err := range r.Lines(t) {
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled mid-read with %d values", name, len(seen[name]))
						return err
					} else if err != nil {
						return err
					}
					key, value, ok := strings.Cut(strings.TrimSpace(string(line)), "=")
					if !ok {
						return newValueError(fmt.Sprintf("%s: bad line %s", name, pbytes(line)))
					}
					v, err := strconv.Atoi(value)
					if err != nil {
						return err
					}
					seen[name] = append(seen[name], kv{key, v})
					p.log("%s read %s %s", name, key, value)
				}
				return nil
			}
		}

		p.restart()
		servers := map[string]*aio.Server{}
		for _, n := range names {
			s, err := feedServer(n)
			if err != nil {
				return err
			}
			servers[n] = s
		}
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, n := range names {
				if _, err := asyncio.SpawnErr(g, collect(n, portOf(servers[n])), asyncio.WithName("collect-"+n)); err != nil {
					return err
				}
			}
			return nil
		})
		if err = asyncio.ExceptStar(err, asyncio.Except[*valueError](func(eg *asyncio.ExceptionGroup) error {
			p.log("collector failed: %s", pd(eg))
			return nil
		})); err != nil {
			return err
		}
		var parts []string
		for _, n := range names {
			var vals []string
			for _, x := range seen[n] {
				vals = append(vals, fmt.Sprintf("('%s', %d)", x.k, x.v))
			}
			parts = append(parts, fmt.Sprintf("('%s', [%s])", n, strings.Join(vals, ", ")))
		}
		p.log("seen [%s]", strings.Join(parts, ", "))
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return err
		}
		for _, n := range names {
			servers[n].Close()
			if err := servers[n].WaitClosed(tk); err != nil {
				return err
			}
		}
		p.log("servers closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p161_eager_fetch_cache.py

// The program sets eager_task_factory as main begins; the port's loop is
// made WithEagerTasks (as TestPortEagerFactoryMix's): only main's own
// task differs, which prints nothing about it.
func TestPortEagerFetchCache(t *testing.T) {
	runPortOn(t, cpythonTrace("p161_eager_fetch_cache"), []asyncio.LoopOption{asyncio.WithEagerTasks()}, func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		cache := map[string]string{}
		inflight := map[string]*asyncio.Future[string]{}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			key := strings.TrimSpace(string(line))
			d := 100 * ms
			if key == "slow" {
				d = 270 * ms
			}
			if err := asyncio.Sleep(t, d); err != nil {
				return err
			}
			if key == "missing" {
				err = w.Write([]byte("ERR\n"))
			} else {
				err = w.Write([]byte("value-of-" + key + "\n"))
			}
			if err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		fetch := func(port int, key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (_ string, err error) {
				p.log("fetch %s starts", key)
				if v, ok := cache[key]; ok {
					p.log("fetch %s hit", key)
					return v, nil
				}
				if f, ok := inflight[key]; ok {
					p.log("fetch %s joins in-flight", key)
					return f.Await(t)
				}
				fut := asyncio.NewFuture[string](t.Loop())
				inflight[key] = fut
				defer func() {
					if err != nil {
						_ = fut.SetException(err)
						_ = fut.Err()
					}
					delete(inflight, key)
				}()
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return "", err
				}
				p.log("fetch %s connected", key)
				if err := w.Write([]byte(key + "\n")); err != nil {
					return "", err
				}
				raw, err := r.ReadLine(t)
				if err != nil {
					return "", err
				}
				line := strings.TrimSpace(string(raw))
				w.Close()
				if err := w.WaitClosed(t); err != nil {
					return "", err
				}
				if line == "ERR" {
					return "", newKeyError(key)
				}
				cache[key] = line
				_ = fut.SetResult(line)
				return line, nil
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		cache["warm"] = "value-of-warm"
		for _, roundKeys := range [][]string{{"warm", "a", "a", "slow"}, {"a", "missing", "slow", "b"}} {
			var tasks []*asyncio.Task[string]
			for _, k := range roundKeys {
				task := asyncio.CreateTask(tk, fetch(port, k))
				p.log("created %s done: %s", k, pb(task.Done()))
				tasks = append(tasks, task)
			}
			res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
			if err != nil {
				return err
			}
			var outs []string
			for _, o := range res {
				if o.Err != nil {
					outs = append(outs, pd(o.Err))
				} else {
					outs = append(outs, o.Value)
				}
			}
			p.log("round %s", pstrs(outs))
		}
		p.log("cache %s", pstrs(slices.Sorted(maps.Keys(cache))))
		srv.Close()
		return srv.WaitClosed(tk)
	})
}

// ---------------------------------------------------------------------------
// p162_subprocess_tail_kill.py

// Wait returns as soon as the child has exited (README, "Where Go
// differs": Process.wait() in 3.13 returns once the pipes are closed
// too), so a Kill soon after it is a no-op until the transport has
// finished, where 3.13 raises ProcessLookupError: the pipes have given
// their EOF here, but the transport finishes in a later iteration.
var wantSubprocessTailKillGo = goism(cpythonTrace("p162_subprocess_tail_kill"),
	[2]string{"0.2 second kill: ProcessLookupError", "0.2 second kill: no error"})

func TestPortSubprocessTailKill(t *testing.T) {
	runPort(t, wantSubprocessTailKillGo, func(p *probe, tk *asyncio.T) error {
		const script = "echo header; echo rec1; echo rec2 >&2; echo rec3; echo rec4; exec sleep 30"
		stream := func(proc *aio.Process, name string, announced int, perLine time.Duration) ([]string, bool, error) {
			var lines []string
			for {
				var line []byte
				var err error
				if len(lines) < announced {
					line, err = proc.Stdout.ReadLine(tk)
				} else {
					line, err = asyncio.WaitForFunc(tk, perLine, proc.Stdout.ReadLine)
				}
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("%s quiet for %.1f s after %d lines", name, perLine.Seconds(), len(lines))
					return lines, false, nil
				} else if err != nil {
					return nil, false, err
				}
				if len(line) == 0 {
					p.log("%s EOF after %d lines", name, len(lines))
					return lines, true, nil
				}
				lines = append(lines, strings.TrimSpace(string(line)))
			}
		}

		p.restart()
		proc, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", script}, aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
		if err != nil {
			return err
		}
		lines, eof, err := stream(proc, "hanger", 4, 200*ms)
		if err != nil {
			return err
		}
		p.log("lines %s eof %s returncode %s", pstrs(lines), pb(eof), prc(proc))
		if err := proc.Kill(); err != nil {
			return err
		}
		rc, err := proc.Wait(tk)
		if err != nil {
			return err
		}
		p.log("killed: wait %d is -SIGKILL %s", rc, pb(rc == -int(syscall.SIGKILL)))
		rest, err := proc.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		errOut, err := proc.Stderr.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("rest %s stderr %s", pbytes(rest), pbytes(errOut))
		if err := proc.Kill(); err == nil {
			p.log("second kill: no error")
		} else if errors.Is(err, syscall.ESRCH) {
			p.log("second kill: ProcessLookupError")
		} else {
			return err
		}

		proc2, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", "echo one; echo two; exit 3"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		lines, eof, err = stream(proc2, "quitter", 3, 200*ms)
		if err != nil {
			return err
		}
		rc, err = proc2.Wait(tk)
		if err != nil {
			return err
		}
		p.log("lines %s eof %s wait %d", pstrs(lines), pb(eof), rc)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p163_line_protocol_tuple.py

func TestPortLineProtocolTuple(t *testing.T) {
	runPort(t, cpythonTrace("p163_line_protocol_tuple"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		seps := [][]byte{[]byte("\r\n"), []byte("\n")}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			n := 0
		lines:
			for {
				raw, err := r.ReadUntil(t, seps...)
				var loe *aio.LimitOverrunError
				var ire *aio.IncompleteReadError
				switch {
				case errors.As(err, &loe):
					p.log("server: too long, consumed %d %s", loe.Consumed, nd(err))
					dropped, err := r.Read(t, loe.Consumed)
					if err != nil {
						return err
					}
					var tail []byte
					for {
						tail, err = r.ReadUntil(t, seps...)
						var loe2 *aio.LimitOverrunError
						if errors.As(err, &loe2) {
							more, err := r.Read(t, loe2.Consumed)
							if err != nil {
								return err
							}
							dropped = append(dropped, more...)
							continue
						} else if err != nil {
							return err
						}
						break
					}
					p.log("server: dropped %d bytes", len(dropped)+len(tail))
					if err := w.Write([]byte("ERR line too long\r\n")); err != nil {
						return err
					}
					continue
				case errors.As(err, &ire):
					p.log("server: EOF mid-line, partial %s", pbytes(ire.Partial))
					break lines
				case err != nil:
					return err
				}
				n++
				ending := "lf"
				if strings.HasSuffix(string(raw), "\r\n") {
					ending = "crlf"
				}
				cmd := strings.TrimRight(string(raw), "\r\n")
				p.log("server: line %d '%s' %s", n, cmd, ending)
				if cmd == "quit" {
					if err := w.Write([]byte("BYE\n")); err != nil {
						return err
					}
					break
				}
				if err := w.Write([]byte("OK " + strings.ToUpper(cmd) + "\r\n")); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: connection done after %d lines", n)
			return nil
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim, aio.WithStreamLimit(16))
		if err != nil {
			return err
		}
		port := portOf(srv)
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		sends := []string{"hello\r\n", "unix\n", "mixed\nboth\r\n", "split\r", "\nx",
			strings.Repeat("a", 40) + "\n", "after\n", "quit\r\n"}
		for _, chunk := range sends {
			if err := writer.Write([]byte(chunk)); err != nil {
				return err
			}
			if err := writer.Drain(tk); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 20*ms); err != nil {
				return err
			}
		}
		for !reader.AtEOF() {
			line, err := reader.ReadUntil(tk, seps...)
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			p.log("client: reply %s", pbytes(line))
			if string(line) == "BYE\n" {
				break
			}
		}
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}

		reader, writer, err = aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		if err := writer.Write([]byte("no end here")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return err
		}
		if err := writer.WriteEOF(); err != nil {
			return err
		}
		rest, err := reader.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client 2: at_eof %s %s", pbytes(rest), pb(reader.AtEOF()))
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p164_health_as_completed.py

func TestPortHealthAsCompleted(t *testing.T) {
	runPort(t, cpythonTrace("p164_health_as_completed"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		names := []string{"api", "db", "cache", "search"}
		delays := map[string]time.Duration{"api": 50 * ms, "db": 120 * ms, "cache": 20 * ms, "search": 600 * ms}
		backend := func(name string) func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
			return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				if _, err := r.ReadLine(t); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, delays[name]); err != nil {
					return err
				}
				status := "UP\n"
				if name == "db" {
					status = "DOWN\n"
				}
				if err := w.Write([]byte(status)); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
				w.Close()
				return w.WaitClosed(t)
			}
		}
		probeOne := func(name string, port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return "", err
				}
				defer w.Close()
				if err := w.Write([]byte("HEALTH\n")); err != nil {
					return "", err
				}
				if err := w.Drain(t); err != nil {
					return "", err
				}
				line, err := r.ReadLine(t)
				if asyncio.IsCancelled(err) {
					p.log("%s probe cancelled while reading", name)
					return "", err
				} else if err != nil {
					return "", err
				}
				status := strings.TrimSpace(string(line))
				if status != "UP" {
					return "", newRuntimeError(fmt.Sprintf("%s says %s", name, status))
				}
				return status, nil
			}
		}

		p.restart()
		var servers []*aio.Server
		ports := map[string]int{}
		for _, n := range names {
			s, err := aio.StartServer(tk, backend(n), "127.0.0.1", 0, sim)
			if err != nil {
				return err
			}
			servers = append(servers, s)
			ports[n] = portOf(s)
		}
		dead, err := aio.StartServer(tk, func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error { return nil }, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		ports["legacy"] = portOf(dead)
		dead.Close()
		if err := dead.WaitClosed(tk); err != nil {
			return err
		}

		var tasks []*asyncio.Task[string]
		for _, n := range append(slices.Clone(names), "legacy") {
			tasks = append(tasks, asyncio.CreateTask(tk, probeOne(n, ports[n]), asyncio.WithName(n)))
		}
		report := map[string]string{}
		for task, err := range asyncio.AsCompleted(tk, tasks, 300*ms) {
			if errors.Is(err, asyncio.ErrTimeout) {
				var late []string
				for _, x := range tasks {
					if !x.Done() {
						late = append(late, x.Name())
					}
				}
				p.log("timed out waiting for %s", pstrs(late))
				for _, x := range tasks {
					x.Cancel()
				}
				if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk); err != nil {
					return err
				}
				break
			} else if err != nil {
				return err
			}
			if !slices.Contains(tasks, task) {
				return errors.New("as_completed yielded a task it was not given")
			}
			v, err := task.Result()
			var rt *runtimeError
			switch {
			case err == nil:
				report[task.Name()] = v
			case errors.As(err, &rt):
				report[task.Name()] = pd(err)
			case errors.Is(err, syscall.ECONNREFUSED):
				report[task.Name()] = "ConnectionRefusedError"
			default:
				return err
			}
			p.log("answered: %s %s", task.Name(), report[task.Name()])
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(report)) {
			parts = append(parts, fmt.Sprintf("('%s', '%s')", k, report[k]))
		}
		p.log("report [%s]", strings.Join(parts, ", "))
		for _, s := range servers {
			s.Close()
			s.CloseClients()
			if err := s.WaitClosed(tk); err != nil {
				return err
			}
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p165_idle_reschedule.py

func TestPortIdleReschedule(t *testing.T) {
	runPort(t, cpythonTrace("p165_idle_reschedule"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		const idleFor, capFor = 150 * ms, 500 * ms
		session := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			loop := t.Loop()
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			start := loop.Time()
			n := 0
			why := "eof"
			var capScope, idle *asyncio.TimeoutScope
			err = asyncio.TimeoutAt(t, start+capFor, func(c *asyncio.TimeoutScope) error {
				capScope = c
				return asyncio.Timeout(t, idleFor, func(s *asyncio.TimeoutScope) error {
					idle = s
					for line, err := range r.Lines(t) {
						if err != nil {
							return err
						}
						n++
						if strings.TrimSpace(string(line)) == "bye" {
							why = "bye"
							break
						}
						if err := idle.Reschedule(loop.Time() + idleFor); err != nil {
							return err
						}
						if err := w.Write(append([]byte("ack "), line...)); err != nil {
							return err
						}
					}
					return nil
				})
			})
			switch {
			case err == nil:
				if idle.Expired() {
					why = "idle"
				}
			case errors.Is(err, asyncio.ErrTimeout):
				switch {
				case idle.Expired():
					why = "idle"
				case capScope.Expired():
					why = "cap"
				default:
					why = "?"
				}
			default:
				return err
			}
			p.log("server: %s ends: %s after %d lines", name, why, n)
			if err := w.Write([]byte("closing: " + why + "\n")); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		client := func(port int, name string, gaps []time.Duration, bye bool) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return noValue, err
				}
				if err := w.Write([]byte(name + "\n")); err != nil {
					return noValue, err
				}
				talker := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
					for _, gap := range gaps {
						if err := asyncio.Sleep(t, gap); err != nil {
							return err
						}
						if w.IsClosing() {
							return nil
						}
						if err := w.Write([]byte("tick\n")); err != nil {
							return err
						}
					}
					if bye {
						return w.Write([]byte("bye\n"))
					}
					return nil
				})
				acks := 0
				for line, err := range r.Lines(t) {
					if err != nil {
						return noValue, err
					}
					if strings.HasPrefix(string(line), "ack") {
						acks++
					} else {
						p.log("%s got %s after %d acks", name, pbytes(line), acks)
					}
				}
				talker.Cancel()
				w.Close()
				return noValue, w.WaitClosed(t)
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, session, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		if err := aio.WithServer(tk, srv, func() error {
			_, err := asyncio.GatherFuncs(tk,
				client(port, "chatty", slices.Repeat([]time.Duration{90 * ms}, 8), false),
				client(port, "slow", []time.Duration{80 * ms, 140 * ms, 250 * ms}, false),
				client(port, "polite", []time.Duration{50 * ms, 50 * ms}, true),
			).Await(tk)
			return err
		}); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p166_job_server_shutdown.py

// queuedJob is the program's (name, jid, dur, writer) tuple.
type queuedJob struct {
	name, jid string
	dur       time.Duration
	w         *aio.StreamWriter
}

type jobPlan struct {
	at       time.Duration
	jid, dur string
}

func TestPortJobServerShutdown(t *testing.T) {
	runPort(t, cpythonTrace("p166_job_server_shutdown"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		jobs := asyncio.NewQueue[queuedJob](0)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			defer w.Close()
			for line, err := range r.Lines(t) {
				if isConnectionError(err) {
					p.log("server: %s connection error %s", name, nd(err))
					return nil
				} else if err != nil {
					return err
				}
				f := strings.Fields(string(line))
				jid := f[1]
				secs, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					return err
				}
				dur := time.Duration(secs * float64(time.Second))
				if err := jobs.PutNowait(queuedJob{name, jid, dur, w}); errors.Is(err, asyncio.ErrQueueShutDown) {
					p.log("server: rejects %s from %s", jid, name)
					err = w.Write([]byte("REJECTED " + jid + "\n"))
					if err != nil {
						return err
					}
				} else if err != nil {
					return err
				} else if err := w.Write([]byte("QUEUED " + jid + "\n")); err != nil {
					return err
				}
				if err := w.Drain(t); isConnectionError(err) {
					p.log("server: %s connection error %s", name, nd(err))
					return nil
				} else if err != nil {
					return err
				}
			}
			p.log("server: %s hung up", name)
			return nil
		}
		worker := func(wid int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				done := 0
				for {
					j, err := jobs.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("worker %d: queue shut down after %d jobs", wid, done)
						return done, nil
					} else if err != nil {
						return 0, err
					}
					if err := asyncio.Sleep(t, j.dur); err != nil {
						return 0, err
					}
					done++
					if j.w.IsClosing() {
						p.log("worker %d: %s gone, result of %s dropped", wid, j.name, j.jid)
					} else if err := j.w.Write([]byte("DONE " + j.jid + "\n")); err != nil {
						return 0, err
					}
					if err := jobs.TaskDone(); err != nil {
						return 0, err
					}
				}
			}
		}
		client := func(port int, name string, plan []jobPlan, expect int) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return noValue, err
				}
				defer w.Close()
				if err := w.Write([]byte(name + "\n")); err != nil {
					return noValue, err
				}
				if expect == 0 {
					expect = 2 * len(plan)
				}
				var got []string
				body := func() error {
					for _, x := range plan {
						if err := asyncio.Sleep(t, x.at); err != nil {
							return err
						}
						if err := w.Write([]byte("JOB " + x.jid + " " + x.dur + "\n")); err != nil {
							return err
						}
					}
					for len(got) < expect {
						line, err := r.ReadLine(t)
						if err != nil {
							return err
						}
						if len(line) == 0 {
							p.log("%s EOF after %s", name, pstrs(got))
							return nil
						}
						got = append(got, strings.TrimSpace(string(line)))
						if strings.HasPrefix(got[len(got)-1], "REJECTED") {
							got = append(got, "-")
						}
					}
					p.log("%s all answered: %s", name, pstrs(got))
					return nil
				}
				if err := body(); isConnectionError(err) {
					p.log("%s read failed: %s after %s", name, nd(err), pstrs(got))
				} else if err != nil {
					return noValue, err
				}
				return noValue, nil
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		workers := []*asyncio.Task[int]{asyncio.CreateTask(tk, worker(1)), asyncio.CreateTask(tk, worker(2))}
		clients := []*asyncio.Task[struct{}]{
			asyncio.CreateTask(tk, client(port, "alice", []jobPlan{{10 * ms, "a1", "0.1"}, {20 * ms, "a2", "0.12"}}, 0)),
			asyncio.CreateTask(tk, client(port, "bob", []jobPlan{{20 * ms, "b1", "0.06"}, {200 * ms, "b2", "0.05"}}, 0)),
			asyncio.CreateTask(tk, client(port, "carol", []jobPlan{{40 * ms, "c1", "0.3"}, {200 * ms, "c2", "0.1"}}, 0)),
			asyncio.CreateTask(tk, client(port, "dave", nil, 1)),
		}
		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		p.log("shutdown: queue has %d jobs", jobs.Len())
		jobs.Shutdown(false)
		done, err := asyncio.Gather(tk, asyncio.Awaitables(workers)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("workers done %s", pyInts(done))
		srv.Close()
		if _, err := asyncio.WaitForFunc(tk, 100*ms, func(t *asyncio.T) (struct{}, error) {
			return noValue, srv.WaitClosed(t)
		}); errors.Is(err, asyncio.ErrTimeout) {
			p.log("grace over; aborting clients")
			srv.AbortClients()
			if err := srv.WaitClosed(tk); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(clients)...).Await(tk); err != nil {
			return err
		}
		p.log("closed")
		return nil
	})
}
