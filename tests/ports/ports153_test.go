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
// (3.13), and as_completed's async iterator over health probes (3.13).
// Same conventions as ports_test.go, ports50_test.go (network, on the
// simulated network) and ports70_test.go (subprocesses).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
				asyncio.CreateTaskErr(t, answer(rid, f[1], f[2]))
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
