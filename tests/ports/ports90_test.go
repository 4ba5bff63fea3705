//go:build unix

package ports_test

// Ports p90 onward: more network programs (streams, protocols, servers),
// run as p50-p62 are, on aio's simulated network and virtual time. Same
// conventions as ports_test.go and ports50_test.go.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p90_stream_relay.py

// The simulated links hold 16 KiB each way, so the bulk transfer fills
// them and every drain() on the way waits (CPython's loopback takes it
// all: the program prints only totals).

func TestPortStreamRelay(t *testing.T) {
	runPort(t, cpythonTrace("p90_stream_relay"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 16384)
		var quiet []string // during the bulk transfer the relay's lines are kept, not timed
		quietOn := false
		note := func(format string, args ...any) {
			if quietOn {
				quiet = append(quiet, fmt.Sprintf(format, args...))
			} else {
				p.log(format, args...)
			}
		}
		backend := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			total, lines := 0, 0
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				total += len(line)
				lines++
				w.Write(append([]byte("B:"), line...))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			note("backend: EOF after %d lines %d bytes, at_eof %s", lines, total, pb(r.AtEOF()))
			w.Write(fmt.Appendf(nil, "total %d\n", total))
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			note("backend: closed")
			return nil
		}
		back, err := aio.StartServer(tk, backend, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		bport := portOf(back)

		pipe := func(name string, r *aio.StreamReader, w *aio.StreamWriter) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				n := 0
				for {
					data, err := r.Read(t, 4096)
					if err != nil {
						return n, err
					}
					if len(data) == 0 {
						break
					}
					n += len(data)
					w.Write(data)
					if err := w.Drain(t); err != nil {
						return n, err
					}
				}
				note("relay %s: EOF after %d bytes, can_write_eof %s", name, n, pb(w.CanWriteEOF()))
				if w.CanWriteEOF() {
					if err := w.WriteEOF(); err != nil {
						return n, err
					}
				}
				return n, nil
			}
		}
		relay := func(t *asyncio.T, cr *aio.StreamReader, cw *aio.StreamWriter) error {
			br, bw, err := aio.OpenConnection(t, "127.0.0.1", bport, sim)
			if err != nil {
				note("relay: backend refused %s", nd(err))
				cw.Write([]byte("ERR backend down\n"))
				if err := cw.Drain(t); err != nil {
					return err
				}
				cw.Close()
				if err := cw.WaitClosed(t); err != nil {
					return err
				}
				note("relay: told the client")
				return nil
			}
			var up, down *asyncio.Task[int]
			err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				var err error
				if up, err = asyncio.Spawn(g, pipe("up", cr, bw)); err != nil {
					return err
				}
				down, err = asyncio.Spawn(g, pipe("down", br, cw))
				return err
			})
			if err != nil {
				return err
			}
			u, _ := up.Result()
			dn, _ := down.Result()
			note("relay: both ways done %d %d closing %s %s", u, dn, pb(cw.IsClosing()), pb(bw.IsClosing()))
			bw.Close()
			cw.Close()
			if _, err := asyncio.GatherFuncs(t,
				func(t *asyncio.T) (struct{}, error) { return noValue, bw.WaitClosed(t) },
				func(t *asyncio.T) (struct{}, error) { return noValue, cw.WaitClosed(t) },
			).Await(t); err != nil {
				return err
			}
			note("relay: closed both")
			return nil
		}
		front, err := aio.StartServer(tk, relay, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(front)
		p.restart()

		sleep := func() error { return asyncio.Sleep(tk, 100*ms) }
		closeClient := func(w *aio.StreamWriter) error {
			w.Close()
			return w.WaitClosed(tk)
		}
		readLine := func(r *aio.StreamReader) string {
			line, err := r.ReadLine(tk)
			if err != nil {
				return "error " + nd(err)
			}
			return pbytes(line)
		}
		readAll := func(r *aio.StreamReader) string {
			b, err := r.Read(tk, -1)
			if err != nil {
				return "error " + nd(err)
			}
			return pbytes(b)
		}

		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		for _, word := range []string{"one", "two"} {
			w.Write([]byte(word + "\n"))
			p.log("client got %s", readLine(r))
		}
		if err := sleep(); err != nil {
			return err
		}
		w.Write([]byte("three\nfour"))
		if err := w.WriteEOF(); err != nil {
			return err
		}
		p.log("client half-closed, is_closing %s", pb(w.IsClosing()))
		if err := sleep(); err != nil {
			return err
		}
		l1 := readLine(r)
		p.log("client reads %s %s", l1, readLine(r))
		rest := readAll(r)
		p.log("client reads rest %s at_eof %s", rest, pb(r.AtEOF()))
		if err := closeClient(w); err != nil {
			return err
		}
		if err := sleep(); err != nil {
			return err
		}

		p.restart()
		if r, w, err = aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			return err
		}
		line := []byte(strings.Repeat("z", 999) + "\n")
		const count = 300
		quietOn = true
		rt := asyncio.CreateTask(tk, func(t *asyncio.T) (int, error) {
			got := 0
			for {
				data, err := r.Read(t, 65536)
				if err != nil {
					return got, err
				}
				if len(data) == 0 {
					return got, nil
				}
				got += len(data)
			}
		})
		for range count {
			w.Write(line)
		}
		note("bulk client wrote %d bytes", count*len(line))
		if err := w.Drain(tk); err != nil {
			return err
		}
		if err := w.WriteEOF(); err != nil {
			return err
		}
		got, err := rt.Await(tk)
		if err != nil {
			return err
		}
		if err := sleep(); err != nil {
			return err
		}
		p.restart()
		p.log("bulk client read %d bytes, expected %d", got, count*(len(line)+2)+len(fmt.Sprintf("total %d\n", count*len(line))))
		for _, x := range quiet {
			p.log("  %s", x)
		}
		quietOn = false
		if err := closeClient(w); err != nil {
			return err
		}
		if err := sleep(); err != nil {
			return err
		}

		if r, w, err = aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			return err
		}
		w.Write([]byte("frame\n"))
		frame, err := r.ReadExactly(tk, 8)
		if err != nil {
			return err
		}
		p.log("framed client got %s", pbytes(frame))
		if err := w.WriteEOF(); err != nil {
			return err
		}
		if err := sleep(); err != nil {
			return err
		}
		_, err = r.ReadExactly(tk, 20)
		var ire *aio.IncompleteReadError
		if !errors.As(err, &ire) {
			return fmt.Errorf("readexactly(20): %v", err)
		}
		p.log("framed client: incomplete, partial %s expected %d at_eof %s", pbytes(ire.Partial), ire.Expected, pb(r.AtEOF()))
		if err := closeClient(w); err != nil {
			return err
		}
		if err := sleep(); err != nil {
			return err
		}

		back.Close()
		if err := back.WaitClosed(tk); err != nil {
			return err
		}
		p.log("backend closed, serving %s", pb(back.IsServing()))
		if r, w, err = aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			return err
		}
		rest = readAll(r)
		p.log("late client reads %s at_eof %s", rest, pb(r.AtEOF()))
		if err := closeClient(w); err != nil {
			return err
		}
		front.Close()
		if err := front.WaitClosed(tk); err != nil {
			return err
		}
		p.log("relay closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p91_protocol_half_open.py

const halfOpenBig = 384 * 1024

// setTrSockBuf is tr.get_extra_info("socket").setsockopt(SOL_SOCKET, opt, n).
func setTrSockBuf(tr aio.ExtraInfoer, opt, n int) error {
	fd, ok := aio.Socket(tr)
	if !ok {
		return errors.New("no socket")
	}
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, opt, n)
}

type halfOpenServer struct {
	p    *probe
	port int
	tr   aio.Transport
	buf  []byte
	n    int
	errs *[]error
}

func (s *halfOpenServer) ConnectionMade(tr aio.Transport) {
	s.tr = tr
	peer := tr.ExtraInfo("peername").(*net.TCPAddr)
	me := tr.ExtraInfo("sockname").(*net.TCPAddr)
	s.p.log("server: connection_made from %s on our port %s is_closing %s", peer.IP, pb(me.Port == s.port), pb(tr.IsClosing()))
}

func (s *halfOpenServer) DataReceived(data []byte) {
	s.buf = append(s.buf, data...)
	lines := bytes.Split(s.buf, []byte("\n"))
	s.buf = lines[len(lines)-1]
	for _, line := range lines[:len(lines)-1] {
		s.n++
		switch string(line) {
		case "pause":
			s.tr.PauseReading()
			s.p.log("server: paused, is_reading %s", pb(s.tr.IsReading()))
			s.p.l.CallLater(200*ms, s.resume)
		case "close", "abort":
			if err := setTrSockBuf(s.tr, syscall.SO_SNDBUF, 32768); err != nil {
				*s.errs = append(*s.errs, err)
			}
			s.write(bytes.Repeat([]byte("y"), halfOpenBig))
			s.p.log("server: %s with buffered data %s", pbytes(line), pb(s.tr.WriteBufferSize() > 0))
			if string(line) == "close" {
				s.tr.Close()
			} else {
				s.tr.Abort()
			}
			s.p.log("server: is_closing %s is_reading %s", pb(s.tr.IsClosing()), pb(s.tr.IsReading()))
		case "flood":
			s.write(bytes.Repeat([]byte("x"), 1000))
		default:
			s.write(fmt.Appendf(nil, "%d:%s\n", s.n, line))
		}
	}
}

func (s *halfOpenServer) write(b []byte) {
	if err := s.tr.Write(b); err != nil {
		*s.errs = append(*s.errs, err)
	}
}

func (s *halfOpenServer) resume() {
	s.p.log("server: resume_reading, partial %s", pbytes(s.buf))
	s.tr.ResumeReading()
}

func (s *halfOpenServer) EOFReceived() bool {
	s.p.log("server: eof_received, partial %s is_closing %s", pbytes(s.buf), pb(s.tr.IsClosing()))
	s.write(fmt.Appendf(nil, "bye after %d lines\n", s.n))
	s.p.l.CallLater(100*ms, s.tr.Close)
	return true
}

func (s *halfOpenServer) ConnectionLost(err error) {
	what := "None"
	if err != nil {
		what = nd(err)
	}
	s.p.log("server: connection_lost %s is_closing %s", what, pb(s.tr.IsClosing()))
}

type halfOpenClient struct {
	p    *probe
	name string
	got  []byte
	lost *asyncio.Future[struct{}]
}

func (c *halfOpenClient) ConnectionMade(aio.Transport) {}
func (c *halfOpenClient) DataReceived(data []byte)     { c.got = append(c.got, data...) }

func (c *halfOpenClient) EOFReceived() bool {
	if len(c.got) > 100 {
		c.p.log("%s eof_received, got all %s some %s", c.name, pb(len(c.got) == halfOpenBig), pb(len(c.got) > 0))
	} else {
		c.p.log("%s eof_received, got %s", c.name, pbytes(c.got))
	}
	return false
}

func (c *halfOpenClient) ConnectionLost(err error) {
	what := "None"
	if err != nil {
		what = nd(err)
	}
	c.p.log("%s connection_lost %s", c.name, what)
	_ = c.lost.SetResult(noValue)
}

// The simulated links hold 32 KiB each way, about what CPython's small
// socket buffers take.

func TestPortProtocolHalfOpen(t *testing.T) {
	runPort(t, cpythonTrace("p91_protocol_half_open"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		var errs []error
		var port int
		server, err := aio.CreateServer(tk, func() aio.Protocol {
			return &halfOpenServer{p: p, port: port, errs: &errs}
		}, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port = portOf(server)
		p.restart()

		connect := func(name string) (aio.Transport, *halfOpenClient, error) {
			c := &halfOpenClient{p: p, name: name, lost: asyncio.NewFuture[struct{}](tk)}
			tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return c }, "127.0.0.1", port, sim)
			return tr, c, err
		}
		sleep := func(d time.Duration) error { return asyncio.Sleep(tk, d) }

		tr, cp, err := connect("a")
		if err != nil {
			return err
		}
		if err := tr.Write([]byte("one\ntwo\npause\n")); err != nil {
			return err
		}
		if err := sleep(100 * ms); err != nil {
			return err
		}
		if err := tr.Write([]byte("three\nfour")); err != nil {
			return err
		}
		if err := tr.WriteEOF(); err != nil {
			return err
		}
		p.log("a: wrote EOF, is_closing %s can_write_eof %s", pb(tr.IsClosing()), pb(tr.CanWriteEOF()))
		if _, err := cp.lost.Await(tk); err != nil {
			return err
		}
		p.log("a: is_closing %s", pb(tr.IsClosing()))

		for _, how := range []string{"close", "abort"} {
			if err := sleep(100 * ms); err != nil {
				return err
			}
			p.restart()
			if tr, cp, err = connect(how); err != nil {
				return err
			}
			if err := setTrSockBuf(tr, syscall.SO_RCVBUF, 32768); err != nil {
				return err
			}
			tr.PauseReading()
			if err := tr.Write([]byte(how + "\n")); err != nil {
				return err
			}
			if err := sleep(200 * ms); err != nil {
				return err
			}
			p.log("%s : resumes reading", how)
			tr.ResumeReading()
			if _, err := cp.lost.Await(tk); err != nil {
				return err
			}
			p.restart()
		}

		if err := sleep(100 * ms); err != nil {
			return err
		}
		if tr, cp, err = connect("rude"); err != nil {
			return err
		}
		tr.PauseReading()
		if err := tr.Write([]byte("flood\n")); err != nil {
			return err
		}
		if err := sleep(100 * ms); err != nil {
			return err
		}
		p.log("rude: aborts with unread data")
		tr.Abort()
		if _, err := cp.lost.Await(tk); err != nil {
			return err
		}
		if err := sleep(100 * ms); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return errors.Join(errs...)
	})
}

// ---------------------------------------------------------------------------
// p92_serve_forever_shutdown.py

type shutdownEcho struct {
	p   *probe
	tag string
	tr  aio.Transport
	err *[]error
}

func (e *shutdownEcho) ConnectionMade(tr aio.Transport) {
	e.tr = tr
	e.p.log("%s server: connection_made", e.tag)
}

func (e *shutdownEcho) DataReceived(data []byte) {
	if bytes.HasPrefix(data, []byte("big")) {
		if err := setTrSockBuf(e.tr, syscall.SO_SNDBUF, 32768); err != nil {
			*e.err = append(*e.err, err)
		}
		if err := e.tr.Write(bytes.Repeat([]byte("y"), 393216)); err != nil {
			*e.err = append(*e.err, err)
		}
		e.p.log("%s server: wrote big, buffered %s", e.tag, pb(e.tr.WriteBufferSize() > 0))
		return
	}
	if err := e.tr.Write(bytesUpper(data)); err != nil {
		*e.err = append(*e.err, err)
	}
}

func (e *shutdownEcho) EOFReceived() bool {
	e.p.log("%s server: eof_received", e.tag)
	return false
}

func (e *shutdownEcho) ConnectionLost(err error) {
	what := "None"
	if err != nil {
		what = nd(err)
	}
	e.p.log("%s server: connection_lost %s buffered %d", e.tag, what, e.tr.WriteBufferSize())
}

func TestPortServeForeverShutdown(t *testing.T) {
	runPort(t, cpythonTrace("p92_serve_forever_shutdown"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		var errs []error
		server, err := aio.CreateServer(tk, func() aio.Protocol {
			return &shutdownEcho{p: p, tag: "s1", err: &errs}
		}, "127.0.0.1", 0, sim, aio.WithDeferredServing())
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		p.log("created: serving %s sockets %d", pb(server.IsServing()), len(server.Sockets()))

		waiter := func(name string) *asyncio.Task[struct{}] {
			return asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
				if err := server.WaitClosed(t); err != nil {
					return err
				}
				p.log("%s wait_closed returned", name)
				return nil
			})
		}
		early := waiter("early")
		srv := server
		forever := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error { return srv.ServeForever(t) })
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("serve_forever started: serving %s", pb(server.IsServing()))

		r1, w1, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		r2, w2, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		w1.Write([]byte("one"))
		w2.Write([]byte("two"))
		g1, err := r1.Read(tk, 10)
		if err != nil {
			return err
		}
		g2, err := r2.Read(tk, 10)
		if err != nil {
			return err
		}
		p.log("clients got %s %s", pbytes(g1), pbytes(g2))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}

		server.Close()
		socks := "()"
		if len(server.Sockets()) != 0 {
			socks = fmt.Sprint(server.Sockets())
		}
		p.log("closed: serving %s sockets %s", pb(server.IsServing()), socks)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("forever done %s early done %s", pb(forever.Done()), pb(early.Done()))
		var re *asyncio.RuntimeError
		if err := server.ServeForever(tk); errors.As(err, &re) {
			p.log("second serve_forever: %s", strings.Replace(pd(err), server.String(), "<Server>", 1))
		} else {
			return fmt.Errorf("second serve_forever: %v", err)
		}
		late := waiter("late")

		w1.Close()
		if err := w1.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("c1 gone: forever done %s early done %s", pb(forever.Done()), pb(early.Done()))

		w2.Write([]byte("last words"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		server.CloseClients()
		if data, err := r2.Read(tk, -1); isConnectionError(err) {
			p.log("c2 read: %s at_eof %s", nd(err), pb(r2.AtEOF()))
		} else if err != nil {
			return err
		} else {
			p.log("c2 reads %s at_eof %s", pbytes(data), pb(r2.AtEOF()))
		}
		if _, err := forever.Await(tk); asyncio.IsCancelled(err) {
			p.log("serve_forever ended cancelled %s", pb(forever.Cancelled()))
		} else {
			return fmt.Errorf("serve_forever: %v", err)
		}
		if _, err := asyncio.Gather(tk, early, late).Await(tk); err != nil {
			return err
		}
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("wait_closed again returns at once")
		w2.Close()
		if err := w2.WaitClosed(tk); isConnectionError(err) {
			p.log("c2 wait_closed: %s", nd(err))
		} else if err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.restart()
		s2, err := aio.CreateServer(tk, func() aio.Protocol {
			return &shutdownEcho{p: p, tag: "s2", err: &errs}
		}, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		forever = asyncio.CreateTaskErr(tk, func(t *asyncio.T) error { return s2.ServeForever(t) })
		r3, w3, err := aio.OpenConnection(tk, "127.0.0.1", portOf(s2), sim)
		if err != nil {
			return err
		}
		if err := setSockBuf(w3, syscall.SO_RCVBUF, 32768); err != nil {
			return err
		}
		w3.Transport().PauseReading()
		w3.Write([]byte("big"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		forever.Cancel()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("cancelled: forever done %s serving %s", pb(forever.Done()), pb(s2.IsServing()))
		forever.Cancel()
		if _, err := forever.Await(tk); asyncio.IsCancelled(err) {
			p.log("second cancel ends serve_forever, clients still open %s", pb(!w3.IsClosing()))
		} else {
			return fmt.Errorf("serve_forever: %v", err)
		}
		s2.AbortClients()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w3.Transport().ResumeReading()
		data, err := r3.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("c3 got all %s some %s at_eof %s", pb(len(data) == 393216), pb(len(data) > 0), pb(r3.AtEOF()))
		w3.Close()
		if err := w3.WaitClosed(tk); err != nil {
			return err
		}
		if err := s2.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return errors.Join(errs...)
	})
}

// ---------------------------------------------------------------------------
// p93_datagram_edges.py

type edgeUDPServer struct {
	p     *probe
	tr    aio.DatagramTransport
	cport *int
}

func (s *edgeUDPServer) ConnectionMade(tr aio.DatagramTransport) {
	s.tr = tr
	peer := "None"
	if a, ok := tr.ExtraInfo("peername").(net.Addr); ok && a != nil {
		peer = a.String()
	}
	s.p.log("server: connection_made, peername %s", peer)
}

func (s *edgeUDPServer) DatagramReceived(data []byte, addr net.Addr) {
	s.p.log("server: got %s from the client %s", pbytes(data), pb(addr.(*net.UDPAddr).Port == *s.cport))
	if string(data) == "crash" {
		panic(newValueError("cannot parse")) // raise in a callback
	}
	if err := s.tr.SendTo(append(append([]byte("<"), data...), '>'), addr); err != nil {
		s.p.log("server: sendto %s", nd(err))
	}
}

func (s *edgeUDPServer) ErrorReceived(err error) { s.p.log("server: error_received %s", nd(err)) }

func (s *edgeUDPServer) ConnectionLost(err error) { s.p.log("server: connection_lost %s", nd(err)) }

type edgeUDPClient struct {
	p     *probe
	q     *asyncio.Queue[[]byte]
	sport *int
}

func (c *edgeUDPClient) ConnectionMade(tr aio.DatagramTransport) {
	c.p.log("client: connection_made, peer is server %s", pb(tr.ExtraInfo("peername").(*net.UDPAddr).Port == *c.sport))
}

func (c *edgeUDPClient) DatagramReceived(data []byte, _ net.Addr) { c.q.PutNowait(data) }
func (c *edgeUDPClient) ErrorReceived(err error)                  { c.p.log("client: error_received %s", nd(err)) }
func (c *edgeUDPClient) ConnectionLost(err error)                 { c.p.log("client: connection_lost %s", nd(err)) }

func TestPortDatagramEdges(t *testing.T) {
	runPort(t, cpythonTrace("p93_datagram_edges"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		lo := net.IPv4(127, 0, 0, 1)
		p.l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if len(msg) > len("Exception in callback") {
				msg = msg[:len("Exception in callback")]
			}
			p.log("exception handler: %s %s", msg, nd(ctx.Err))
		})
		p.restart()
		var sport, cport int
		st, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return &edgeUDPServer{p: p, cport: &cport} }, &net.UDPAddr{IP: lo}, nil, sim)
		if err != nil {
			return err
		}
		sport = st.ExtraInfo("sockname").(*net.UDPAddr).Port
		cp := &edgeUDPClient{p: p, q: asyncio.NewQueue[[]byte](0), sport: &sport}
		ct, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return cp }, nil, &net.UDPAddr{IP: lo, Port: sport}, sim)
		if err != nil {
			return err
		}
		cport = ct.ExtraInfo("sockname").(*net.UDPAddr).Port

		ask := func(msg string) (string, error) {
			if err := ct.SendTo([]byte(msg), nil); err != nil {
				return "", err
			}
			var got []byte
			err := asyncio.Timeout(tk, 200*ms, func(*asyncio.TimeoutScope) error {
				var err error
				got, err = cp.q.Get(tk)
				return err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				return "timeout", nil
			}
			if err != nil {
				return "", err
			}
			return pbytes(got), nil
		}
		for _, msg := range []string{"hi", "", "crash", "again"} {
			got, err := ask(msg)
			if err != nil {
				return err
			}
			p.log("client asks %s -> %s", pbytes([]byte(msg)), got)
		}
		var ve *asyncio.ValueError
		if err := ct.SendTo([]byte("elsewhere"), &net.UDPAddr{IP: lo, Port: sport + 1}); errors.As(err, &ve) {
			p.log("sendto another address: ValueError")
		} else {
			return fmt.Errorf("sendto another address: %v", err)
		}
		p.log("buffer sizes %d %d", st.WriteBufferSize(), ct.WriteBufferSize())

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		ct.Close()
		p.log("client closing %s", pb(ct.IsClosing()))
		for range 2 {
			if err := ct.SendTo([]byte("after close"), nil); err != nil {
				p.log("sendto after close: %s", nd(err))
			}
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("client queue %d", cp.q.Len())

		st.Abort()
		p.log("server aborted, closing %s", pb(st.IsClosing()))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p94_concurrent_drains.py

func TestPortConcurrentDrains(t *testing.T) {
	runPort(t, cpythonTrace("p94_concurrent_drains"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		chunk := bytes.Repeat([]byte("p"), 65536)
		waiting := map[string]bool{}
		producer := func(name string, w *aio.StreamWriter) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				for {
					w.Write(chunk)
					waiting[name] = true
					err := w.Drain(t)
					waiting[name] = false
					if isConnectionError(err) {
						p.log("%s drain failed %s", name, nd(err))
						return "failed", nil
					}
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled", name)
					}
					if err != nil {
						return "", err
					}
				}
			}
		}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if err := setSockBuf(w, syscall.SO_SNDBUF, 32768); err != nil {
				return err
			}
			tr := w.Transport()
			if err := tr.SetWriteBufferLimits(1000, 2000); err != nil {
				p.log("server: bad limits %s", nd(err))
			}
			if err := tr.SetWriteBufferLimits(65536, -1); err != nil {
				return err
			}
			high, low := tr.WriteBufferLimits()
			p.log("server: limits (%d, %d)", low, high)
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			mode := strings.TrimSpace(string(line))
			var a, b *asyncio.Task[string]
			err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				var err error
				if a, err = asyncio.Spawn(g, producer(mode+"-a", w)); err != nil {
					return err
				}
				if b, err = asyncio.Spawn(g, producer(mode+"-b", w)); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 300*ms); err != nil {
					return err
				}
				p.log("server: both waiting in drain %s %s", pb(waiting[mode+"-a"]), pb(waiting[mode+"-b"]))
				if mode == "abort" {
					tr.Abort()
					p.log("server: aborted, closing %s", pb(w.IsClosing()))
				}
				return nil
			})
			if err != nil {
				return err
			}
			ra, _ := a.Result()
			rb, _ := b.Result()
			p.log("server: %s %s %s", mode, ra, rb)
			if err := w.Drain(t); isConnectionError(err) {
				p.log("server: drain after: %s", nd(err))
			} else if err != nil {
				return err
			} else {
				p.log("server: drain after returns")
			}
			if err := w.WaitClosed(t); isConnectionError(err) {
				p.log("server: wait_closed: %s", nd(err))
			} else if err != nil {
				return err
			} else {
				p.log("server: wait_closed returns")
			}
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()

		for _, mode := range []string{"abort", "reset"} {
			r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
			if err != nil {
				return err
			}
			if err := setSockBuf(w, syscall.SO_RCVBUF, 32768); err != nil {
				return err
			}
			w.Transport().PauseReading()
			w.Write([]byte(mode + "\n"))
			if err := asyncio.Sleep(tk, 500*ms); err != nil {
				return err
			}
			if mode == "abort" {
				w.Transport().ResumeReading()
				data, err := r.Read(tk, -1)
				if err != nil {
					return err
				}
				p.log("client read some %s then EOF %s", pb(len(data) > 0), pb(r.AtEOF()))
				w.Close()
				if err := w.WaitClosed(tk); err != nil {
					return err
				}
			} else {
				p.log("client aborts with unread data")
				w.Transport().Abort()
			}
			if err := asyncio.Sleep(tk, 200*ms); err != nil {
				return err
			}
			p.restart()
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p95_reader_limits_flow.py

func TestPortReaderLimitsFlow(t *testing.T) {
	runPort(t, cpythonTrace("p95_reader_limits_flow"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		done := asyncio.NewEvent()
		crlf, lf := []byte("\r\n"), []byte("\n")
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			tr := w.Transport()
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			p.log("server: 40 bytes waiting, is_reading %s", pb(tr.IsReading()))
			r0, err := r.Read(t, 0)
			if err != nil {
				return err
			}
			e0, err := r.ReadExactly(t, 0)
			if err != nil {
				return err
			}
			p.log("server: read(0) %s readexactly(0) %s", pbytes(r0), pbytes(e0))
			if _, err := r.ReadExactly(t, -1); err != nil {
				p.log("server: readexactly(-1) %s", nd(err))
			}
			rec, err := r.ReadUntil(t, crlf)
			if err != nil {
				return err
			}
			p.log("server: readuntil %s is_reading %s", pbytes(rec), pb(tr.IsReading()))
			var loe *aio.LimitOverrunError
			if _, err := r.ReadUntil(t, crlf, lf); errors.As(err, &loe) {
				p.log("server: tuple overrun %s consumed %d", loe.Msg, loe.Consumed)
			} else {
				return fmt.Errorf("tuple readuntil: %v", err)
			}
			if rec, err = r.ReadUntil(t, crlf); err != nil {
				return err
			}
			p.log("server: same record with one separator %s", pbytes(rec))
			got, err := r.Read(t, 5)
			if err != nil {
				return err
			}
			p.log("server: read(5) %s is_reading %s", pbytes(got), pb(tr.IsReading()))
			if got, err = r.ReadExactly(t, 13); err != nil {
				return err
			}
			p.log("server: readexactly(13) %s is_reading %s", pbytes(got), pb(tr.IsReading()))
			if rec, err := r.ReadUntil(t, crlf); errors.As(err, &loe) {
				p.log("server: overrun %s consumed %d is_reading %s", loe.Msg, loe.Consumed, pb(tr.IsReading()))
				skip, err := r.ReadExactly(t, loe.Consumed+2)
				if err != nil {
					return err
				}
				p.log("server: skip %s", pbytes(skip))
			} else if err != nil {
				return err
			} else {
				p.log("server: readuntil %s", pbytes(rec))
			}
			if line, err := r.ReadLine(t); err != nil {
				p.log("server: readline %s", nd(err))
			} else {
				p.log("server: readline %s", pbytes(line))
			}
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			p.log("server: after it %s", pbytes(line))
			var ire *aio.IncompleteReadError
			if _, err := r.ReadUntil(t, crlf); errors.As(err, &ire) {
				exp := fmt.Sprint(ire.Expected)
				if ire.Expected < 0 {
					exp = "None"
				}
				p.log("server: cut by EOF, partial %s expected %s", pbytes(ire.Partial), exp)
			} else {
				return fmt.Errorf("readuntil at EOF: %v", err)
			}
			rest, err := r.Read(t, -1)
			if err != nil {
				return err
			}
			p.log("server: read() at EOF %s at_eof %s", pbytes(rest), pb(r.AtEOF()))
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			done.Set()
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim, aio.WithStreamLimit(8))
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		_, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		w.Write([]byte("abc\r\nabcdefgh\r\n0123456789abcdefghijkl"))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		w.Write([]byte("mnopq\r\nlong-line-here\nok\ntail\r"))
		if err := w.WriteEOF(); err != nil {
			return err
		}
		if err := done.Wait(tk); err != nil {
			return err
		}
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p96_protocol_callback_failures.py

// touchy's callbacks "raise" as Go callbacks do: they panic.
type touchy struct {
	p    *probe
	side string
	tr   aio.Transport
}

func (c *touchy) ConnectionMade(tr aio.Transport) {
	c.tr = tr
	c.p.log("%s connection_made", c.side)
	if c.side == "server" {
		panic(newValueError("made"))
	}
}

func (c *touchy) DataReceived(data []byte) {
	c.p.log("%s data_received %s", c.side, pbytes(data))
	if c.side == "server" {
		if err := c.tr.Write(append([]byte("ack "), data...)); err != nil {
			c.p.log("%s write: %s", c.side, nd(err))
		}
	}
}

func (c *touchy) EOFReceived() bool {
	c.p.log("%s eof_received", c.side)
	if c.side == "server" {
		panic(newKeyError("eof"))
	}
	return true
}

func (c *touchy) ConnectionLost(err error) {
	what := "None"
	if err != nil {
		what = nd(err)
	}
	c.p.log("%s connection_lost %s", c.side, what)
	if c.side == "client" {
		panic(&runtimeError{pyExc{"RuntimeError", "lost"}})
	}
}

func TestPortProtocolCallbackFailures(t *testing.T) {
	runPort(t, cpythonTrace("p96_protocol_callback_failures"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		p.l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if strings.HasPrefix(msg, "Exception in callback") {
				msg = "Exception in callback"
			}
			tr, proto := "-", "-"
			if ctx.Transport != nil {
				tr = "transport"
			}
			if ctx.Protocol != nil {
				proto = "protocol"
			}
			p.log("handler: %s %s %s %s", msg, nd(ctx.Err), tr, proto)
		})
		server, err := aio.CreateServer(tk, func() aio.Protocol { return &touchy{p: p, side: "server"} }, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		tr, _, err := aio.CreateConnection(tk, func() aio.Protocol { return &touchy{p: p, side: "client"} }, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		p.log("client connected, closing %s", pb(tr.IsClosing()))
		if err := tr.Write([]byte("hello")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := tr.WriteEOF(); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("client transport closing %s", pb(tr.IsClosing()))
		if err := tr.Write([]byte("more")); err != nil {
			p.log("write after write_eof: %s", nd(err))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		tr.Close()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}
