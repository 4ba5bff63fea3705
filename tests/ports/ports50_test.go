//go:build unix

package ports_test

// Ports p50 onward: network programs, asyncio streams, servers and
// protocols. The Python programs run on real loopback (127.0.0.1, port
// 0); the ports run the same program on aio's simulated network, one host
// with zero-latency links, so that on virtual time every delay is exact.
// Same conventions as ports_test.go.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// simLocal is the programs' 127.0.0.1: one host of a simulated network
// with zero-latency links, which reaches itself through "127.0.0.1".
func simLocal(tk *asyncio.T) aio.Option {
	return aio.WithNetwork(aio.NewSimNetwork(tk, 1).Host("local"))
}

// simLocalBuffered is simLocal with a link that holds at most buffer
// bytes in flight each way: the simulated network otherwise takes all a
// sender writes, where a kernel's socket buffers fill.
func simLocalBuffered(tk *asyncio.T, buffer int) aio.Option {
	n := aio.NewSimNetwork(tk, 1)
	n.SetDefaultLink(aio.LinkConfig{Buffer: buffer})
	return aio.WithNetwork(n.Host("local"))
}

// setSockBuf is sock.setsockopt(SOL_SOCKET, opt, n) on w's socket.
func setSockBuf(w *aio.StreamWriter, opt, n int) error {
	fd, ok := aio.Socket(w)
	if !ok {
		return errors.New("no socket")
	}
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, opt, n)
}

// portOf is server.sockets[0].getsockname()[1].
func portOf(srv *aio.Server) int { return srv.Addr().(*net.TCPAddr).Port }

// nd is the programs' d(e) for the errors the network calls return: the
// OSError subclasses by their errno (args[0] is the errno, or asyncio's
// message for the ConnectionResetError("Connection lost") of drain), and
// the stream errors by their message.
func nd(err error) string {
	if pe := (*asyncio.PanicError)(nil); errors.As(err, &pe) {
		if e, ok := pe.Value.(error); ok {
			return nd(e) // raise in a callback is a panic in Go
		}
	}
	var ire *aio.IncompleteReadError
	var loe *aio.LimitOverrunError
	var ve *asyncio.ValueError
	switch {
	case err == nil:
		return "None"
	case errors.As(err, &ve):
		return "ValueError(" + ve.Msg + ")"
	case errors.As(err, &ire):
		return "IncompleteReadError(" + ire.Error() + ")"
	case errors.As(err, &loe):
		return "LimitOverrunError(" + loe.Msg + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ConnectionRefusedError(111)"
	case errors.Is(err, syscall.ECONNRESET):
		if strings.HasPrefix(err.Error(), "Connection lost") {
			return "ConnectionResetError(Connection lost)"
		}
		return "ConnectionResetError(104)"
	case errors.Is(err, syscall.EPIPE):
		return "BrokenPipeError(32)"
	}
	return pd(err)
}

// pbytes is repr(b) of a bytes value, as the programs print it.
func pbytes(b []byte) string {
	var s strings.Builder
	s.WriteString("b'")
	for _, c := range b {
		switch {
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\r':
			s.WriteString(`\r`)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '\\' || c == '\'':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&s, `\x%02x`, c)
		default:
			s.WriteByte(c)
		}
	}
	s.WriteString("'")
	return s.String()
}

// ---------------------------------------------------------------------------
// p50_echo_server.py

func TestPortEchoServer(t *testing.T) {
	runPort(t, cpythonTrace("p50_echo_server"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		handled := 0
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			peer := handled
			handled++
			p.log("server: client %d connected", peer)
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("server: client %d EOF, at_eof %s", peer, pb(r.AtEOF()))
					break
				}
				w.Write(append([]byte("echo "), bytesUpper(line)...))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: client %d closed", peer)
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		p.log("serving %s", pb(server.IsServing()))

		client := func(name string, words []string, stay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return "", err
				}
				for _, word := range words {
					w.Write([]byte(word + "\n"))
					if err := w.Drain(t); err != nil {
						return "", err
					}
					reply, err := r.ReadLine(t)
					if err != nil {
						return "", err
					}
					p.log("%s got %s", name, pbytes(reply))
				}
				if err := asyncio.Sleep(t, stay); err != nil {
					return "", err
				}
				p.log("%s closes, is_closing %s", name, pb(w.IsClosing()))
				w.Close()
				p.log("%s is_closing %s", name, pb(w.IsClosing()))
				if err := w.WaitClosed(t); err != nil {
					return "", err
				}
				p.log("%s closed", name)
				return name, nil
			}
		}
		var tasks []*asyncio.Task[string]
		for i, c := range []struct {
			words []string
			stay  time.Duration
		}{{[]string{"a", "bc"}, 300 * ms}, {[]string{"hello"}, 700 * ms}, {[]string{"x", "y", "z"}, 700 * ms}} {
			tasks = append(tasks, asyncio.CreateTask(tk, client(fmt.Sprintf("c%d", i), c.words, c.stay)))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("main closes the server")
		server.Close()
		p.log("serving %s", pb(server.IsServing()))
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			p.log("late client: %s", nd(err))
		} else {
			return errors.New("late client connected")
		}
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("wait_closed returned")
		names, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("clients %s", pstrs(names))
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("again: returns at once")
		return nil
	})
}

func bytesUpper(b []byte) []byte { return []byte(strings.ToUpper(string(b))) }

// isConnectionError is `except ConnectionError`.
func isConnectionError(err error) bool {
	for _, e := range []error{syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNABORTED, syscall.ECONNREFUSED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// p51_chat_broadcast.py

func TestPortChatBroadcast(t *testing.T) {
	runPort(t, cpythonTrace("p51_chat_broadcast"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		members := map[string]*aio.StreamWriter{}
		sortedMembers := func() string {
			names := make([]string, 0, len(members))
			for n := range members {
				names = append(names, n)
			}
			slices.Sort(names)
			return pstrs(names)
		}
		broadcast := func(t *asyncio.T, sender, text string) error {
			names := make([]string, 0, len(members))
			for n := range members {
				names = append(names, n)
			}
			slices.Sort(names) // dict order: the order they joined, which is sorted here
			for _, name := range names {
				if w := members[name]; name != sender {
					w.Write([]byte(text + "\n"))
					if err := w.Drain(t); err != nil {
						return err
					}
				}
			}
			return nil
		}
		chat := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			members[name] = w
			p.log("server: %s joined, members %s", name, sortedMembers())
			if err := broadcast(t, name, "* "+name+" joined"); err != nil {
				return err
			}
			for {
				line, err := r.ReadLine(t)
				if isConnectionError(err) {
					p.log("server: %s read failed %s", name, nd(err))
					break
				} else if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("server: %s EOF, at_eof %s", name, pb(r.AtEOF()))
					break
				}
				if line[len(line)-1] != '\n' {
					p.log("server: %s partial line %s", name, pbytes(line))
					continue
				}
				if err := broadcast(t, name, name+": "+strings.TrimSpace(string(line))); err != nil {
					return err
				}
			}
			delete(members, name)
			if err := broadcast(t, name, "* "+name+" left"); err != nil {
				return err
			}
			w.Close()
			if err := w.WaitClosed(t); isConnectionError(err) {
				p.log("server: %s wait_closed %s", name, nd(err))
			} else if err != nil {
				return err
			}
			return nil
		}
		server, err := aio.StartServer(tk, chat, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()

		join := func(name string) (*aio.StreamReader, *aio.StreamWriter, error) {
			r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
			if err != nil {
				return nil, nil, err
			}
			w.Write([]byte(name + "\n"))
			return r, w, w.Drain(tk)
		}
		listen := func(name string, r *aio.StreamReader) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					line, err := r.ReadLine(t)
					if err != nil {
						return err
					}
					if len(line) == 0 {
						break
					}
					p.log("%s hears %s", name, pbytes(line))
				}
				p.log("%s hears EOF", name)
				return nil
			}
		}
		ar, aw, err := join("alice")
		if err != nil {
			return err
		}
		aliceEars := asyncio.CreateTaskErr(tk, listen("alice", ar))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		_, bw, err := join("bob")
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		cr, cw, err := join("carol")
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		bw.Transport().PauseReading()
		aw.Write([]byte("hi all\n"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("carol sends half a line and closes")
		cw.Write([]byte("hel"))
		cw.Close()
		if err := cw.WaitClosed(tk); err != nil {
			return err
		}
		atEOF := cr.AtEOF()
		rest, err := cr.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("carol at_eof %s still reads %s at_eof %s", pb(atEOF), pbytes(rest), pb(cr.AtEOF()))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("bob aborts with unread data")
		bw.Transport().Abort()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}

		framed := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			for {
				head, err := r.ReadExactly(t, 4)
				var body []byte
				if err == nil {
					n := binary.BigEndian.Uint32(head)
					body, err = r.ReadExactly(t, int(n))
				}
				var ire *aio.IncompleteReadError
				if errors.As(err, &ire) {
					p.log("framed: %s partial %s expected %d", nd(err), pbytes(ire.Partial), ire.Expected)
					if len(ire.Partial) > 0 {
						w.Write([]byte("short frame\n"))
					} else {
						w.Write([]byte("bye\n"))
					}
					break
				} else if err != nil {
					return err
				}
				p.log("framed: got %s", pbytes(body))
				w.Write([]byte(fmt.Sprintf("ok %d\n", len(body))))
			}
			w.Close()
			return nil
		}
		fserver, err := aio.StartServer(tk, framed, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		fr, fw, err := aio.OpenConnection(tk, "127.0.0.1", portOf(fserver), sim)
		if err != nil {
			return err
		}
		frame := func(n uint32, body string) []byte {
			return append(binary.BigEndian.AppendUint32(nil, n), body...)
		}
		fw.Write(frame(5, "hello"))
		line, err := fr.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("framed client reads %s", pbytes(line))
		fw.Write(frame(10, "abcd"))
		if err := fw.WriteEOF(); err != nil {
			return err
		}
		p.log("framed client wrote eof, can_write_eof %s", pb(fw.CanWriteEOF()))
		all, err := fr.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("framed client reads %s", pbytes(all))
		p.log("framed client at_eof %s", pb(fr.AtEOF()))
		fw.Close()
		if err := fw.WaitClosed(tk); err != nil {
			return err
		}
		fserver.Close()
		if err := fserver.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("alice leaves")
		aw.Close()
		if err := aw.WaitClosed(tk); err != nil {
			return err
		}
		if _, err := aliceEars.Await(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("servers closed, members %s", sortedMembers())
		return nil
	})
}

// pexpected is repr(e.expected) of an IncompleteReadError: None for
// readuntil's.
func pexpected(e *aio.IncompleteReadError) string {
	if e.Expected < 0 {
		return "None"
	}
	return fmt.Sprint(e.Expected)
}

// ---------------------------------------------------------------------------
// p52_readuntil_limits.py

func TestPortReadUntilLimits(t *testing.T) {
	runPort(t, cpythonTrace("p52_readuntil_limits"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		done := asyncio.NewEvent()
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			skip := 0
			for _, step := range []string{"rec", "rec", "rec", "skip", "rec", "line", "line", "multi", "multi", "multi",
				"line", "line", "line", "rec", "rec"} {
				var err error
				switch step {
				case "rec":
					var rec []byte
					if rec, err = r.ReadUntil(t, []byte("\r\n")); err == nil {
						p.log("server: record %s", pbytes(rec))
						w.Write([]byte(fmt.Sprintf("ack %d\n", len(rec))))
					}
				case "skip":
					var got, next []byte
					if got, err = r.ReadExactly(t, skip); err == nil {
						if next, err = r.ReadUntil(t, []byte("\r\n")); err == nil {
							p.log("server: skipped %d bytes, next %s", len(got), pbytes(next))
						}
					}
				case "line":
					var line []byte
					if line, err = r.ReadLine(t); err == nil {
						p.log("server: line %s", pbytes(line))
					}
				case "multi":
					var rec []byte
					if rec, err = r.ReadUntil(t, []byte("\n"), []byte(";"), []byte("\r\n")); err == nil {
						p.log("server: multi %s", pbytes(rec))
					}
				}
				var loe *aio.LimitOverrunError
				var ve *asyncio.ValueError
				var ire *aio.IncompleteReadError
				switch {
				case err == nil:
				case errors.As(err, &ve): // before LimitOverrunError: readline's ValueError wraps one
					p.log("server: %s", nd(err))
				case errors.As(err, &loe):
					p.log("server: %s consumed %d", nd(err), loe.Consumed)
					skip = loe.Consumed
					w.Write([]byte("too long\n"))
				case errors.As(err, &ire):
					p.log("server: %s partial %s expected %s", nd(err), pbytes(ire.Partial), pexpected(ire))
				default:
					return err
				}
			}
			p.log("server: at_eof %s", pb(r.AtEOF()))
			w.Close()
			done.Set()
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim, aio.WithStreamLimit(16))
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		for _, chunk := range []string{"short\r\n", "exactly-16-bytes\r\n", strings.Repeat("x", 20), "yz\r\n", "record-of-twenty-two\r\nok\r\n",
			"a line\n", "semi;colon\r\n", "a line much longer than sixteen\nnext\n", strings.Repeat("z", 40), "tail"} {
			p.log("client sends %d bytes", len(chunk))
			w.Write([]byte(chunk))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		if err := w.WriteEOF(); err != nil {
			return err
		}
		if err := done.Wait(tk); err != nil {
			return err
		}
		all, err := r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client reads %s", pbytes(all))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		return server.WaitClosed(tk)
	})
}

// ---------------------------------------------------------------------------
// p53_timeout_slow_server.py

func TestPortTimeoutSlowServer(t *testing.T) {
	runPort(t, cpythonTrace("p53_timeout_slow_server"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		conns := 0
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			conns++
			me := fmt.Sprintf("s%d", conns)
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				f := strings.Fields(string(line))
				if f[0] == "SLOW" {
					secs, err := time.ParseDuration(f[1] + "s")
					if err != nil {
						return err
					}
					if err := asyncio.Sleep(t, secs); err != nil {
						return err
					}
					p.log("%s answers %s", me, f[2])
				}
				w.Write([]byte(f[len(f)-1] + "\n"))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			p.log("%s sees EOF, transport closing %s", me, pb(w.IsClosing()))
			if me == "s1" {
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				w.Write([]byte("late\n"))
				p.log("%s wrote again, closing %s", me, pb(w.IsClosing()))
				if err := w.Drain(t); isConnectionError(err) {
					p.log("%s drain %s", me, nd(err))
				} else if err != nil {
					return err
				}
			}
			w.Close()
			if err := w.WaitClosed(t); isConnectionError(err) {
				p.log("%s wait_closed %s", me, nd(err))
			} else if err != nil {
				return err
			} else {
				p.log("%s closed", me)
			}
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()

		request := func(r *aio.StreamReader, w *aio.StreamWriter, text string) func(*asyncio.T) ([]byte, error) {
			return func(t *asyncio.T) ([]byte, error) {
				w.Write([]byte(text + "\n"))
				if err := w.Drain(t); err != nil {
					return nil, err
				}
				return r.ReadLine(t)
			}
		}
		r1, w1, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		if err := asyncio.Timeout(tk, 300*ms, func(*asyncio.TimeoutScope) error {
			got, err := request(r1, w1, "ECHO a")(tk)
			if err == nil {
				p.log("c1 got %s", pbytes(got))
			}
			return err
		}); err != nil {
			return err
		}
		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, 300*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			got, err := request(r1, w1, "SLOW 0.5 b")(tk)
			if err == nil {
				p.log("c1 got %s", pbytes(got))
			}
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("c1 %s expired %s when %s", pd(err), pb(cm.Expired()), p.rel(cm.When()))
		} else if err != nil {
			return err
		}
		w1.Close()
		if err := w1.WaitClosed(tk); err != nil {
			return err
		}
		p.log("c1 closed")
		if err := asyncio.Sleep(tk, 400*ms); err != nil {
			return err
		}

		r2, w2, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		got, err := asyncio.WaitForFunc(tk, 200*ms, request(r2, w2, "SLOW 0.3 c"))
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("c2 %s keeps the connection", pd(err))
		} else if err != nil {
			return err
		} else {
			p.log("c2 got %s", pbytes(got))
		}
		late, err := r2.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("c2 reads the late answer %s", pbytes(late))
		got, err = asyncio.WaitForFunc(tk, 200*ms, request(r2, w2, "ECHO d"))
		if err != nil {
			return err
		}
		p.log("c2 got %s", pbytes(got))
		w2.Close()
		if err := w2.WaitClosed(tk); err != nil {
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
// p54_cancel_pending_read.py

// A cancelled read until EOF puts the blocks it took back (README, "Where
// Go differs": StreamReader.read(-1) cancelled), so the next read gets
// them where asyncio's has lost them.
var wantCancelPendingReadGo = goism(cpythonTrace("p54_cancel_pending_read"),
	[2]string{"1.0 read() again b'' at_eof True", "1.0 read() again b'tail1tail2' at_eof True"})

func TestPortCancelPendingRead(t *testing.T) {
	runPort(t, wantCancelPendingReadGo, func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		serverDone := asyncio.NewEvent()
		connected := asyncio.NewEvent()
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			p.log("server: connected")
			connected.Set()
			for _, part := range []string{"part1\n", "part2\n", "tail1", "tail2"} {
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				w.Write([]byte(part))
				if err := w.Drain(t); err != nil {
					return err
				}
				p.log("server: sent %s", pbytes([]byte(part)))
			}
			if err := asyncio.Sleep(t, 200*ms); err != nil {
				return err
			}
			if err := w.WriteEOF(); err != nil {
				return err
			}
			p.log("server: wrote EOF")
			says, err := r.Read(t, -1)
			if err != nil {
				return err
			}
			p.log("server: client says %s at_eof %s", pbytes(says), pb(r.AtEOF()))
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			serverDone.Set()
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		if err := connected.Wait(tk); err != nil {
			return err
		}
		cancelAfter := func(delay time.Duration, name string, fn func(*asyncio.T) ([]byte, error)) error {
			task := asyncio.CreateTask(tk, fn)
			if err := asyncio.Sleep(tk, delay); err != nil {
				return err
			}
			p.log("cancel %s -> %s", name, pb(task.Cancel()))
			v, err := task.Await(tk)
			switch {
			case asyncio.IsCancelled(err):
				p.log("%s cancelled %s", name, pb(task.Cancelled()))
			case err != nil:
				return err
			default:
				p.log("%s returned %s", name, pbytes(v))
			}
			return nil
		}

		first := asyncio.CreateTask(tk, func(t *asyncio.T) ([]byte, error) { return reader.Read(t, 100) })
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		var re *asyncio.RuntimeError
		if _, err := reader.ReadLine(tk); errors.As(err, &re) {
			p.log("second reader: %s", pd(err))
		} else {
			return fmt.Errorf("second reader: %v", err)
		}
		first.Cancel()
		if _, err := first.Await(tk); asyncio.IsCancelled(err) {
			p.log("read(100) cancelled %s", pb(first.Cancelled()))
		} else {
			return fmt.Errorf("first read: %v", err)
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		line, err := reader.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("readline %s", pbytes(line))
		if err := cancelAfter(200*ms, "readexactly(10)", func(t *asyncio.T) ([]byte, error) { return reader.ReadExactly(t, 10) }); err != nil {
			return err
		}
		got, err := reader.Read(tk, 100)
		if err != nil {
			return err
		}
		p.log("read(100) %s", pbytes(got))
		if err := cancelAfter(400*ms, "read()", func(t *asyncio.T) ([]byte, error) { return reader.Read(t, -1) }); err != nil {
			return err
		}
		got, err = reader.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("read() again %s at_eof %s", pbytes(got), pb(reader.AtEOF()))
		writer.Write([]byte("bye"))
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		if err := serverDone.Wait(tk); err != nil {
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
// p55_close_abort_clients.py

func TestPortCloseAbortClients(t *testing.T) {
	const payload = 384 * 1024
	runPort(t, cpythonTrace("p55_close_abort_clients"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			if strings.HasPrefix(name, "big") {
				if err := setSockBuf(w, syscall.SO_SNDBUF, 32768); err != nil {
					return err
				}
				w.Write(make([]byte, payload))
				p.log("server %s wrote, buffered %s", name, pb(w.Transport().WriteBufferSize() > 0))
				if err := w.Drain(t); isConnectionError(err) {
					p.log("server %s drain %s", name, nd(err))
				} else if err != nil {
					return err
				} else {
					p.log("server %s drain returned, closing %s", name, pb(w.IsClosing()))
				}
			}
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			p.log("server %s readline %s at_eof %s", name, pbytes(line), pb(r.AtEOF()))
			return nil
		}
		type conn struct {
			r *aio.StreamReader
			w *aio.StreamWriter
		}
		client := func(port int, name string, pause bool) (conn, error) {
			r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
			if err != nil {
				return conn{}, err
			}
			if pause {
				if err := setSockBuf(w, syscall.SO_RCVBUF, 32768); err != nil {
					return conn{}, err
				}
				w.Transport().PauseReading()
			}
			w.Write([]byte(name + "\n"))
			return conn{r, w}, w.Drain(tk)
		}
		readAll := func(name string, c conn, resumeAfter time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if resumeAfter > 0 {
					if err := asyncio.Sleep(t, resumeAfter); err != nil {
						return err
					}
					p.log("%s resumes reading", name)
					c.w.Transport().ResumeReading()
				}
				data, err := c.r.Read(t, -1)
				if err != nil {
					return err
				}
				what := "nothing"
				if len(data) == payload {
					what = "all"
				} else if len(data) > 0 {
					what = "part"
				}
				p.log("%s read %s then EOF, at_eof %s", name, what, pb(c.r.AtEOF()))
				c.w.Close()
				return c.w.WaitClosed(t)
			}
		}

		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		a, err := client(port, "a", false)
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		server.Close()
		p.log("closed: serving %s sockets %d", pb(server.IsServing()), len(server.Sockets()))
		if _, err := asyncio.WaitForFunc(tk, 100*ms, func(t *asyncio.T) (struct{}, error) { return noValue, server.WaitClosed(t) }); errors.Is(err, asyncio.ErrTimeout) {
			p.log("wait_closed still waits for the client")
		} else {
			return fmt.Errorf("wait_closed: %v", err)
		}
		reading := asyncio.CreateTaskErr(tk, readAll("a", a, 0))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		server.CloseClients()
		p.log("close_clients")
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("wait_closed returned")
		if _, err := reading.Await(tk); err != nil {
			return err
		}

		for _, how := range []string{"close_clients", "abort_clients"} {
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			p.restart()
			p.log("%s", how)
			server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
			if err != nil {
				return err
			}
			big, err := client(portOf(server), "big-"+how, true)
			if err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			reading := asyncio.CreateTaskErr(tk, readAll(how, big, 200*ms))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			server.Close()
			if how == "close_clients" {
				server.CloseClients()
			} else {
				server.AbortClients()
			}
			p.log("server %s done", how)
			if err := server.WaitClosed(tk); err != nil {
				return err
			}
			p.log("wait_closed returned")
			if _, err := reading.Await(tk); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p56_protocol_flow_control.py

// upperProto is the program's Upper(asyncio.Protocol).
type upperProto struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
	buf       []byte
	lost      *asyncio.Event
	err       error // a setsockopt or SetWriteBufferLimits failure, for the test
}

func (u *upperProto) ConnectionMade(tr aio.Transport) {
	u.transport = tr
	u.buf = nil
	if fd, ok := aio.Socket(tr); !ok {
		u.err = errors.New("no socket")
	} else if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 32768); err != nil {
		u.err = err
	}
	if err := tr.SetWriteBufferLimits(16384, -1); err != nil {
		u.err = err
	}
	high, low := tr.WriteBufferLimits()
	u.p.log("proto: connection_made, limits (%d, %d)", low, high)
}

func (u *upperProto) DataReceived(data []byte) {
	u.buf = append(u.buf, data...)
	lines := strings.Split(string(u.buf), "\n")
	u.buf = []byte(lines[len(lines)-1])
	lines = lines[:len(lines)-1]
	u.p.log("proto: data_received %d lines", len(lines))
	for _, line := range lines {
		cmd, arg, _ := strings.Cut(line, " ")
		switch cmd {
		case "PAUSE":
			u.transport.PauseReading()
			u.p.log("proto: paused, is_reading %s", pb(u.transport.IsReading()))
			u.p.l.CallLater(300*ms, u.resume)
		case "BIG":
			var n int
			fmt.Sscan(arg, &n)
			u.transport.Write(make([]byte, n))
			u.p.log("proto: wrote %d bytes", n)
		default:
			u.transport.Write([]byte(strings.ToUpper(line) + "\n"))
		}
	}
}

func (u *upperProto) resume() {
	u.p.log("proto: resume_reading")
	u.transport.ResumeReading()
}

func (u *upperProto) PauseWriting() {
	u.p.log("proto: pause_writing, buffered > high %s", pb(u.transport.WriteBufferSize() > 16384))
}

func (u *upperProto) ResumeWriting() {
	u.p.log("proto: resume_writing, buffered <= low %s", pb(u.transport.WriteBufferSize() <= 4096))
}

func (u *upperProto) EOFReceived() bool {
	u.p.log("proto: eof_received, partial %s", pbytes(u.buf))
	return false
}

func (u *upperProto) ConnectionLost(err error) {
	if err != nil {
		u.p.log("proto: connection_lost %s", nd(err))
	} else {
		u.p.log("proto: connection_lost None")
	}
	u.lost.Set()
}

func TestPortProtocolFlowControl(t *testing.T) {
	runPort(t, cpythonTrace("p56_protocol_flow_control"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		lost := asyncio.NewEvent()
		var proto *upperProto
		server, err := aio.CreateServer(tk, func() aio.Protocol {
			proto = &upperProto{p: p, lost: lost}
			return proto
		}, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		readLine := func() (string, error) {
			line, err := reader.ReadLine(tk)
			return pbytes(line), err
		}
		writer.Write([]byte("hello\n"))
		got, err := readLine()
		if err != nil {
			return err
		}
		p.log("client got %s", got)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		writer.Write([]byte("PAUSE\n"))
		for _, word := range []string{"a", "b"} {
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			writer.Write([]byte(word + "\n"))
			p.log("client sent %s", pbytes([]byte(word)))
		}
		got1, err := readLine()
		if err != nil {
			return err
		}
		got2, err := readLine()
		if err != nil {
			return err
		}
		p.log("client got %s %s", got1, got2)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := setSockBuf(writer, syscall.SO_RCVBUF, 32768); err != nil {
			return err
		}
		writer.Transport().PauseReading()
		writer.Write([]byte("BIG 393216\n"))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.restart()
		p.log("client resumes reading")
		writer.Transport().ResumeReading()
		big, err := reader.ReadExactly(tk, 393216)
		if err != nil {
			return err
		}
		p.restart()
		p.log("client got %d bytes", len(big))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		writer.Write([]byte("unfinished"))
		if err := writer.WriteEOF(); err != nil {
			return err
		}
		rest, err := reader.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client got %s at_eof %s", pbytes(rest), pb(reader.AtEOF()))
		if err := lost.Wait(tk); err != nil {
			return err
		}
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		return proto.err
	})
}

// ---------------------------------------------------------------------------
// p57_fanout_semaphore.py

func TestPortFanoutSemaphore(t *testing.T) {
	delays := []string{"0.1", "0.7", "0.2", "0.2", "0.5", "0.1"}
	runPort(t, cpythonTrace("p57_fanout_semaphore"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			f := strings.Fields(string(line))
			delay, err := time.ParseDuration(f[2] + "s")
			if err != nil {
				return err
			}
			if err := asyncio.Sleep(t, delay); err != nil {
				return err
			}
			if r.AtEOF() {
				p.log("server: r%s client already gone", f[1])
			}
			w.Write([]byte("resp " + f[1] + "\n"))
			if err := w.Drain(t); err != nil {
				return err
			}
			if _, err := r.Read(t, -1); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		sem := asyncio.NewSemaphore(2)

		fetch := func(i int, delay string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := sem.Acquire(t); err != nil {
					return "", err
				}
				defer sem.Release()
				p.log("r%d start, semaphore %s", i, pstate(sem))
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return "", err
				}
				var resp []byte
				err = asyncio.Timeout(t, 400*ms, func(*asyncio.TimeoutScope) error {
					w.Write([]byte(fmt.Sprintf("GET %d %s\n", i, delay)))
					if err := w.Drain(t); err != nil {
						return err
					}
					resp, err = r.ReadLine(t)
					return err
				})
				if err == nil {
					p.log("r%d got %s", i, pbytes(resp))
				} else if errors.Is(err, asyncio.ErrTimeout) {
					p.log("r%d timed out", i)
				}
				w.Close()
				if werr := w.WaitClosed(t); werr != nil {
					return "", werr
				}
				return strings.TrimSpace(string(resp)), err
			}
		}
		var tasks []*asyncio.Task[string]
		for i, delay := range delays {
			tasks = append(tasks, asyncio.CreateTask(tk, fetch(i, delay)))
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		outs := make([]string, len(results)) // d(r) or r: strings, all of them
		for i, o := range results {
			if o.Err != nil {
				outs[i] = pd(o.Err)
			} else {
				outs[i] = o.Value
			}
		}
		p.log("results %s", pstrs(outs))
		p.log("semaphore %s", pstate(sem))
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p58_server_lifecycle_errors.py

// fragileProto is the program's Fragile(asyncio.Protocol): raising in
// data_received is a panic in Go.
type fragileProto struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
}

func (f *fragileProto) ConnectionMade(tr aio.Transport) { f.transport = tr }

func (f *fragileProto) DataReceived(data []byte) {
	f.p.log("fragile: data_received %s", pbytes(data))
	if strings.HasPrefix(string(data), "bad") {
		panic(newValueError("bad data"))
	}
	f.transport.Write([]byte("ok\n"))
}

func (f *fragileProto) ConnectionLost(err error) {
	if err != nil {
		f.p.log("fragile: connection_lost %s", nd(err))
	} else {
		f.p.log("fragile: connection_lost None")
	}
}

func TestPortServerLifecycleErrors(t *testing.T) {
	runPort(t, cpythonTrace("p58_server_lifecycle_errors"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		p.l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			tr, proto := "", ""
			if ctx.Transport != nil {
				tr = "transport"
			}
			if ctx.Protocol != nil {
				proto = "protocol"
			}
			p.log("exception handler: %s %s %s %s", ctx.Message, nd(ctx.Err), tr, proto)
		})
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			if strings.HasPrefix(string(line), "raise") {
				return newValueError("handler failed")
			}
			peer, me := w.ExtraInfo("peername").(*net.TCPAddr), w.ExtraInfo("sockname").(*net.TCPAddr)
			p.log("server: peer host %s own host %s ports differ %s", peer.IP, me.IP, pb(peer.Port != me.Port))
			w.Write(line)
			if err := w.Drain(t); err != nil {
				return err
			}
			rest, err := r.Read(t, -1)
			if err != nil {
				return err
			}
			p.log("server: client's EOF %s at_eof %s", pbytes(rest), pb(r.AtEOF()))
			w.Close()
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim, aio.WithDeferredServing())
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		p.log("not serving yet: %s", pb(server.IsServing()))
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			p.log("client refused: %s", nd(err))
		} else {
			return errors.New("connected to a server not serving")
		}
		server.StartServing()
		p.log("serving: %s", pb(server.IsServing()))

		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		w.Write([]byte("raise please\n"))
		got, err := r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client after a failed handler reads %s at_eof %s", pbytes(got), pb(r.AtEOF()))
		w.Close()
		if err := w.Write([]byte("after close")); err != nil {
			return err
		}
		p.log("write after close: no error, closing %s", pb(w.IsClosing()))
		if err := w.Drain(tk); isConnectionError(err) {
			p.log("drain after close: %s", nd(err))
		} else if err != nil {
			return err
		} else {
			p.log("drain after close: returned")
		}
		if err := w.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		r, w, err = aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		p.log("client: server host %s", w.ExtraInfo("peername").(*net.TCPAddr).IP)
		w.Write([]byte("echo me\n"))
		line, err := r.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("client got %s", pbytes(line))
		if err := w.WriteEOF(); err != nil {
			return err
		}
		var re *asyncio.RuntimeError
		if err := w.Write([]byte("more")); errors.As(err, &re) {
			p.log("write after write_eof: %s", pd(err))
		} else {
			return fmt.Errorf("write after write_eof: %v", err)
		}
		got, err = r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client reads %s at_eof %s", pbytes(got), pb(r.AtEOF()))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		fragile, err := aio.CreateServer(tk, func() aio.Protocol { return &fragileProto{p: p} }, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		r, w, err = aio.OpenConnection(tk, "127.0.0.1", portOf(fragile), sim)
		if err != nil {
			return err
		}
		w.Write([]byte("fine\n"))
		if line, err = r.ReadLine(tk); err != nil {
			return err
		}
		p.log("client got %s", pbytes(line))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w.Write([]byte("bad\n"))
		if got, err = r.Read(tk, -1); err != nil {
			return err
		}
		p.log("client reads %s at_eof %s", pbytes(got), pb(r.AtEOF()))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		fragile.Close()
		if err := fragile.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		forever := asyncio.CreateTaskErr(tk, server.ServeForever)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := server.ServeForever(tk); errors.As(err, &re) {
			p.log("second serve_forever: %s", strings.Replace(pd(err), server.String(), "<Server>", 1))
		} else {
			return fmt.Errorf("second serve_forever: %v", err)
		}
		forever.Cancel()
		if _, err := forever.Await(tk); asyncio.IsCancelled(err) {
			p.log("serve_forever cancelled, serving %s", pb(server.IsServing()))
		} else {
			return fmt.Errorf("serve_forever: %v", err)
		}
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", port, sim); err != nil {
			p.log("client after serve_forever: %s", nd(err))
		} else {
			return errors.New("connected after serve_forever")
		}

		s2, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		if err := aio.WithServer(tk, s2, func() error {
			p.log("in async with: serving %s", pb(s2.IsServing()))
			return nil
		}); err != nil {
			return err
		}
		p.log("after async with: serving %s", pb(s2.IsServing()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p59_taskgroup_requests.py

func TestPortTaskGroupRequests(t *testing.T) {
	runPort(t, cpythonTrace("p59_taskgroup_requests"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		handlers := map[string]*asyncio.T{}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			handlers[name] = t
			err = func() error {
				for {
					var ve *asyncio.ValueError
					var lerr error
					for line, err := range r.Lines(t) { // async for line in reader
						if err != nil {
							lerr = err
							break
						}
						if strings.HasPrefix(string(line), "SLOW") {
							if err := asyncio.Sleep(t, time.Second); err != nil {
								return err
							}
						}
						w.Write(append([]byte("got "), line...))
					}
					if errors.As(lerr, &ve) {
						p.log("server: %s async for ended %s", name, nd(lerr))
						continue
					} else if lerr != nil {
						return lerr
					}
					break
				}
				p.log("server: %s left, at_eof %s", name, pb(r.AtEOF()))
				return nil
			}()
			if asyncio.IsCancelled(err) {
				p.log("server: %s handler cancelled", name)
			}
			return err
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim, aio.WithStreamLimit(32))
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()

		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		readLine := func() string {
			line, err := r.ReadLine(tk)
			if err != nil {
				return "error " + nd(err)
			}
			return pbytes(line)
		}
		w.WriteLines([]byte("c1\n"), []byte("one\n"), []byte("two\n"))
		l1 := readLine()
		p.log("c1 reads %s %s", l1, readLine())
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w.Write([]byte(strings.Repeat("x", 40) + "\nthree\n"))
		p.log("c1 reads %s", readLine())
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		handlers["c1"].Cancel()
		rest, err := r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("c1 reads %s at_eof %s", pbytes(rest), pb(r.AtEOF()))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		closed, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		closedPort := portOf(closed)
		closed.Close()
		if err := closed.WaitClosed(tk); err != nil {
			return err
		}

		var cancelled []string
		request := func(name string, port int, delay time.Duration) func(*asyncio.T) ([]byte, error) {
			return func(t *asyncio.T) ([]byte, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return nil, err
				}
				reader, writer, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return nil, err
				}
				writer.Write([]byte(name + "\nSLOW\n"))
				line, err := reader.ReadLine(t)
				if asyncio.IsCancelled(err) {
					cancelled = append(cancelled, name)
				}
				writer.Close() // finally
				if werr := writer.WaitClosed(t); werr != nil && err == nil {
					err = werr
				}
				return line, err
			}
		}
		err = asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, r := range []struct {
				name  string
				port  int
				delay time.Duration
			}{{"t1", port, 0}, {"t2", closedPort, 200 * ms}, {"t3", port, 100 * ms}} {
				if _, err := asyncio.Spawn(g, request(r.name, r.port, r.delay)); err != nil {
					return err
				}
			}
			return nil
		})
		// except* OSError: the connection errors are *os.SyscallError.
		err = asyncio.ExceptStar(err, asyncio.Except[*os.SyscallError](func(eg *asyncio.ExceptionGroup) error {
			parts := make([]string, len(eg.Errs))
			for i, e := range eg.Errs {
				parts[i] = nd(e)
			}
			slices.Sort(cancelled)
			p.log("group: EG(%s)[%s] cancelled while waiting: %s", eg.Msg, strings.Join(parts, ", "), pstrs(cancelled))
			return nil
		}))
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p60_udp_echo.py

// udpEcho is the program's Echo(asyncio.DatagramProtocol).
type udpEcho struct {
	aio.BaseDatagramProtocol
	p         *probe
	transport aio.DatagramTransport
}

func (e *udpEcho) ConnectionMade(tr aio.DatagramTransport) { e.transport = tr }

func (e *udpEcho) DatagramReceived(data []byte, addr net.Addr) {
	e.p.log("server: got %s from %s", pbytes(data), addr.(*net.UDPAddr).IP)
	switch {
	case strings.HasPrefix(string(data), "drop"):
	case strings.HasPrefix(string(data), "slow"):
		e.p.l.CallLater(300*ms, func() { e.transport.SendTo(bytesUpper(data), addr) })
	default:
		e.transport.SendTo(bytesUpper(data), addr)
	}
}

func (e *udpEcho) ConnectionLost(err error) { e.p.log("server: connection_lost %s", pnone(err)) }

// udpClient is the program's Client(asyncio.DatagramProtocol).
type udpClient struct {
	aio.BaseDatagramProtocol
	p    *probe
	name string
	q    *asyncio.Queue[string]
}

func (c *udpClient) DatagramReceived(data []byte, addr net.Addr) {
	c.q.PutNowait(fmt.Sprintf("(%s, '%s')", pbytes(data), addr.(*net.UDPAddr).IP))
}

func (c *udpClient) ErrorReceived(err error) { c.p.log("%s error_received %s", c.name, nd(err)) }

func (c *udpClient) ConnectionLost(err error) { c.p.log("%s connection_lost %s", c.name, pnone(err)) }

// pnone is str(exc) for an exception that is None here.
func pnone(err error) string {
	if err == nil {
		return "None"
	}
	return nd(err)
}

func TestPortUDPEcho(t *testing.T) {
	runPort(t, cpythonTrace("p60_udp_echo"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		lo := net.IPv4(127, 0, 0, 1)
		st, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return &udpEcho{p: p} }, &net.UDPAddr{IP: lo}, nil, sim)
		if err != nil {
			return err
		}
		port := st.ExtraInfo("sockname").(*net.UDPAddr).Port
		p.restart()
		cp := &udpClient{p: p, name: "client", q: asyncio.NewQueue[string](0)}
		ct, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return cp }, nil, &net.UDPAddr{IP: lo, Port: port}, sim)
		if err != nil {
			return err
		}
		peer := ct.ExtraInfo("peername").(*net.UDPAddr)
		p.log("client peer %s same port %s", peer.IP, pb(peer.Port == port))
		ask := func(msg string) (string, error) {
			ct.SendTo([]byte(msg), nil)
			var got string
			err := asyncio.Timeout(tk, 200*ms, func(*asyncio.TimeoutScope) error {
				var err error
				got, err = cp.q.Get(tk)
				return err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				return "timeout", nil
			}
			return got, err
		}
		for _, msg := range []string{"hello", "drop me", "slow one", "bye"} {
			got, err := ask(msg)
			if err != nil {
				return err
			}
			p.log("client asks %s -> %s", pbytes([]byte(msg)), got)
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		late := "None"
		if cp.q.Len() > 0 {
			late, _ = cp.q.GetNowait()
		}
		p.log("client queue %d %s", cp.q.Len()+1, late)

		st.Close()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		got, err := ask("anyone?")
		if err != nil {
			return err
		}
		p.log("client asks %s -> %s", pbytes([]byte("anyone?")), got)
		p.log("client closing %s", pb(ct.IsClosing()))

		up := &udpClient{p: p, name: "unconnected", q: asyncio.NewQueue[string](0)}
		ut, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return up }, &net.UDPAddr{IP: lo}, nil, sim)
		if err != nil {
			return err
		}
		ut.SendTo([]byte("anyone?"), &net.UDPAddr{IP: lo, Port: port})
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("unconnected queue %d", up.q.Len())
		ut.Close()
		ct.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p61_reset_and_drain.py

// Drain returns once the buffer is at or below the low mark, as asyncio's;
// how much is left then depends on how much each send took (768 bytes
// here, 0 on CPython's loopback), so the program prints only the bound.

func TestPortResetAndDrain(t *testing.T) {
	const payload = 384 * 1024
	runPort(t, cpythonTrace("p61_reset_and_drain"), func(p *probe, tk *asyncio.T) error {
		sim := simLocalBuffered(tk, 32768)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			cmd, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			if string(cmd) == "reset\n" {
				w.Transport().PauseReading()
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				p.log("server: aborts with unread data")
				w.Transport().Abort()
				return nil
			}
			if err := setSockBuf(w, syscall.SO_RCVBUF, 32768); err != nil {
				return err
			}
			w.Transport().PauseReading()
			if err := asyncio.Sleep(t, 400*ms); err != nil {
				return err
			}
			p.restart()
			p.log("server: reads again")
			w.Transport().ResumeReading()
			got, err := r.ReadExactly(t, payload)
			if err != nil {
				return err
			}
			p.log("server: got %d bytes", len(got))
			w.Close()
			return nil
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()

		r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		w.Write([]byte("reset\n"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w.Write([]byte("data the server never reads\n"))
		if _, err := r.ReadLine(tk); errors.Is(err, syscall.ECONNRESET) {
			p.log("client readline: %s", nd(err))
		} else {
			return fmt.Errorf("readline: %v", err)
		}
		p.log("client exception(): %s at_eof %s closing %s", nd(r.Err()), pb(r.AtEOF()), pb(w.IsClosing()))
		for _, op := range []struct {
			name string
			fn   func(*asyncio.T) error
		}{
			{"read", func(t *asyncio.T) error { _, err := r.Read(t, -1); return err }},
			{"drain", w.Drain},
			{"wait_closed", w.WaitClosed},
		} {
			if err := op.fn(tk); isConnectionError(err) {
				p.log("client %s: %s", op.name, nd(err))
			} else if err != nil {
				return err
			} else {
				p.log("client %s returned", op.name)
			}
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.restart()
		r, w, err = aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		if err := setSockBuf(w, syscall.SO_SNDBUF, 32768); err != nil {
			return err
		}
		w.Write([]byte("slow reader\n"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w.Write(make([]byte, payload))
		high, low := w.Transport().WriteBufferLimits()
		p.log("client buffered %s limits (%d, %d)", pb(w.Transport().WriteBufferSize() > 0), low, high)
		if _, err := asyncio.WaitForFunc(tk, 200*ms, func(t *asyncio.T) (struct{}, error) { return noValue, w.Drain(t) }); errors.Is(err, asyncio.ErrTimeout) {
			p.log("client drain timed out, still buffered %s", pb(w.Transport().WriteBufferSize() > 0))
		} else {
			return fmt.Errorf("drain: %v", err)
		}
		if err := w.Drain(tk); err != nil {
			return err
		}
		p.log("client drain returned, buffered <= low %s", pb(w.Transport().WriteBufferSize() <= 16384))
		rest, err := r.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client reads %s", pbytes(rest))
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
// p62_half_close_buffered.py

// counterProto is the program's Counter(asyncio.Protocol).
type counterProto struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
	n         int
}

func (c *counterProto) ConnectionMade(tr aio.Transport) {
	c.transport = tr
	c.p.log("server: connection from %s", aio.PeerName(tr).(*net.TCPAddr).IP)
}

func (c *counterProto) DataReceived(data []byte) { c.n += len(data) }

func (c *counterProto) EOFReceived() bool {
	c.p.log("server: eof_received after %d bytes, can_write_eof %s", c.n, pb(c.transport.CanWriteEOF()))
	c.p.l.CallLater(100*ms, c.answer)
	return true
}

func (c *counterProto) answer() {
	c.p.log("server: answers, closing %s", pb(c.transport.IsClosing()))
	c.transport.Write([]byte(fmt.Sprintf("total %d bytes\n", c.n)))
	c.transport.Close()
	c.transport.Close()
	c.transport.Abort()
	c.p.log("server: closed, closing %s", pb(c.transport.IsClosing()))
}

func (c *counterProto) ConnectionLost(err error) { c.p.log("server: connection_lost %s", pnone(err)) }

// piecesProto is the program's Pieces(asyncio.BufferedProtocol).
type piecesProto struct {
	aio.BaseProtocol
	p         *probe
	done      *asyncio.Future[struct{}]
	transport aio.Transport
	buf       []byte
	pieces    []string
	hints     map[int]bool
}

func (c *piecesProto) ConnectionMade(tr aio.Transport) { c.transport = tr }

func (c *piecesProto) GetBuffer(sizeHint int) []byte {
	c.hints[sizeHint] = true
	return c.buf
}

func (c *piecesProto) BufferUpdated(n int) { c.pieces = append(c.pieces, pbytes(c.buf[:n])) }

func (c *piecesProto) EOFReceived() bool {
	var hints []string
	for h := range c.hints {
		hints = append(hints, fmt.Sprint(h))
	}
	slices.Sort(hints)
	c.p.log("client: eof_received, pieces [%s] hints [%s]", strings.Join(c.pieces, ", "), strings.Join(hints, ", "))
	return false
}

func (c *piecesProto) ConnectionLost(err error) {
	c.p.log("client: connection_lost %s closing %s", pnone(err), pb(c.transport.IsClosing()))
	c.done.SetResult(noValue)
}

func TestPortHalfCloseBuffered(t *testing.T) {
	runPort(t, cpythonTrace("p62_half_close_buffered"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		server, err := aio.CreateServer(tk, func() aio.Protocol { return &counterProto{p: p} }, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		done := asyncio.NewFuture[struct{}](tk)
		transport, _, err := aio.CreateConnection(tk, func() aio.Protocol {
			return &piecesProto{p: p, done: done, buf: make([]byte, 4), hints: map[int]bool{}}
		}, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		transport.Write([]byte("hello "))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		transport.WriteLines([]byte("wor"), []byte("ld"))
		if err := transport.WriteEOF(); err != nil {
			return err
		}
		p.log("client: wrote eof, closing %s", pb(transport.IsClosing()))
		var re *asyncio.RuntimeError
		if err := transport.Write([]byte("more")); errors.As(err, &re) {
			p.log("client: %s", pd(err))
		} else {
			return fmt.Errorf("write after write_eof: %v", err)
		}
		if _, err := done.Await(tk); err != nil {
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
