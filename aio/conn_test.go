//go:build unix

package aio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// httpServer answers each request line block with a fixed response.
func httpServer(at *asyncio.T) (*Server, error) {
	return StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		for {
			head, err := r.ReadUntil(t, []byte("\r\n\r\n"))
			if err != nil {
				return nil
			}
			path := strings.Fields(string(head))[1]
			body := "hello from " + path
			fmt.Fprintf(writerFunc(w.Write), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(body), body)
		}
	}, "127.0.0.1", 0)
}

type writerFunc func([]byte) error

func (f writerFunc) Write(p []byte) (int, error) { return len(p), f(p) }

// net/http and bufio run unchanged over Conn inside a task.
func TestConnHTTPReadResponseInTask(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		br := bufio.NewReader(c)
		for _, p := range []string{"/a", "/b"} {
			req, _ := http.NewRequest("GET", "http://"+srv.Addr().String()+p, nil)
			if err := req.Write(c); err != nil {
				return err
			}
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			log = append(log, fmt.Sprintf("%d %s %v", resp.StatusCode, body, err))
		}
		log = append(log, fmt.Sprint(c.Close()), fmt.Sprint(errors.Is(c.Close(), net.ErrClosed)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"200 hello from /a <nil>", "200 hello from /b <nil>", "<nil>", "true"}
	expectLog(t, want, log)
}

// A read deadline is a loop timer: a Read with nothing to read returns
// os.ErrDeadlineExceeded, and the Conn stays usable.
func TestConnReadDeadline(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err = c.Read(make([]byte, 10))
		log = append(log, "read: "+describe(err))
		c.SetReadDeadline(time.Time{})
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		log = append(log, resp.Status)
		resp.Body.Close()
		c.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"read: op=read/tcp deadline timeout", "200 OK"}
	expectLog(t, want, log)
}

// A goroutine that is not a task of the loop uses the Conn through the
// thread-safe path while the loop keeps serving.
func TestConnFromForeignGoroutine(t *testing.T) {
	var status, body string
	runNet(t, func(at *asyncio.T) error {
		srv, err := httpServer(at)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		l := at.Loop()
		done := asyncio.NewFuture[error](at)
		go func() {
			err := func() error {
				if _, err := fmt.Fprintf(c, "GET /foreign HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					return err
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					return err
				}
				b, err := io.ReadAll(resp.Body)
				status, body = resp.Status, string(b)
				return errors.Join(err, c.Close())
			}()
			l.CallSoonThreadsafe(func() { done.SetResult(err) })
		}()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		err, _ = done.Await(at)
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	if status != "200 OK" || body != "hello from /foreign" {
		t.Fatalf("got %q %q", status, body)
	}
}

// Closing a Conn from another task wakes a Read suspended in the first
// task with net.ErrClosed (any task of the loop may use a Conn: no Use).
func TestConnCloseWakesPendingRead(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, -1)
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		reader := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			return c.Read(make([]byte, 10))
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprintf("close: %v", c.Close()))
		_, err = reader.Await(at)
		log = append(log, fmt.Sprintf("read: closed=%v", errors.Is(err, net.ErrClosed)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"close: <nil>", "read: closed=true"}
	expectLog(t, want, log)
}

// Conn deadlines, CloseWrite and addresses behave as net.TCPConn's: a
// deadline in the past fails Read and Write at once with
// os.ErrDeadlineExceeded (a net.Error whose Timeout is true), a zero
// deadline clears it, CloseWrite half-closes so the peer reads EOF while
// the reply still arrives, and the addresses are the socket's.
func TestConnSetDeadlineCloseWriteAndAddrs(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		peerName := asyncio.NewFuture[string](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			peerName.SetResult(w.ExtraInfo("peername").(net.Addr).String())
			data, err := r.Read(t, -1) // until EOF
			if err != nil {
				return err
			}
			w.Write([]byte("got " + string(data)))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		peer, err := peerName.Await(at)
		if err != nil {
			return err
		}
		var sa unix.Sockaddr
		sa, _ = unix.Getsockname(c.FD())
		log = append(log,
			fmt.Sprintf("local is the server's peer: %v", c.LocalAddr().String() == peer),
			fmt.Sprintf("local is the fd's name: %v", c.LocalAddr().String() == sockaddrToAddr(sa, "tcp").String()),
			fmt.Sprintf("remote is the server: %v", c.RemoteAddr().String() == srv.Addr().String()))

		if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
			return err
		}
		_, err = c.Read(make([]byte, 8))
		log = append(log, "read: "+describe(err))
		n, err := c.Write([]byte("x"))
		log = append(log, fmt.Sprintf("write n=%d: %s", n, describe(err)))
		if err := c.SetDeadline(time.Time{}); err != nil {
			return err
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		if err := c.CloseWrite(); err != nil {
			return err
		}
		reply, err := io.ReadAll(c)
		log = append(log, fmt.Sprintf("reply %q %v", reply, err))
		if err := c.Close(); err != nil {
			return err
		}
		log = append(log, "CloseWrite after Close: "+describe(c.CloseWrite()))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"local is the server's peer: true",
		"local is the fd's name: true",
		"remote is the server: true",
		"read: op=read/tcp deadline timeout",
		"write n=0: op=write/tcp deadline timeout",
		`reply "got ping" <nil>`,
		"CloseWrite after Close: op=close/tcp closed",
	}
	expectLog(t, want, log)
}

// A Write blocked on a full socket buffer is woken by its write deadline
// (a loop timer, so on the virtual clock it fires without real waiting)
// with os.ErrDeadlineExceeded and the count of bytes already written;
// SetWriteDeadline does not affect reads.
func TestConnSetWriteDeadlineWakesBlockedWrite(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		release := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
			release.Await(t) // never reads until released
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		// A small send buffer makes the write block after little data.
		unix.SetsockoptInt(c.FD(), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		start := at.Loop().Time()
		if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
			return err
		}
		big := make([]byte, 32<<20)
		n, err := c.Write(big)
		elapsed := at.Loop().Time() - start
		log = append(log, fmt.Sprintf("deadline=%v partial=%v waited about an hour=%v",
			errors.Is(err, os.ErrDeadlineExceeded), n > 0 && n < len(big), elapsed > 59*time.Minute && elapsed <= time.Hour))
		// The read side has no deadline: a read with nothing to read
		// still waits, here until the server closes (with our data unread,
		// so the kernel resets the connection).
		release.SetResult(struct{}{})
		_, err = io.ReadAll(c)
		log = append(log, fmt.Sprintf("read ends by the close, not a deadline: %v", err != nil && !errors.Is(err, os.ErrDeadlineExceeded)))
		c.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"deadline=true partial=true waited about an hour=true", "read ends by the close, not a deadline: true"}
	expectLog(t, want, log)
}

// A connection reset by the peer surfaces as net.Conn errors do: Read
// and then Write fail with a *net.OpError ("read"/"write") wrapping the
// errno, and the Conn stays usable for Close.
func TestConnResetByPeerErrors(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			// Linger 0: closing sends a reset instead of a FIN.
			unix.SetsockoptLinger(w.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		// Which of read and write sees ECONNRESET and which EPIPE is the
		// system's business (isReset).
		_, err = c.Read(make([]byte, 10))
		var oe *net.OpError
		log = append(log, fmt.Sprintf("read: OpError %v, reset %v", errors.As(err, &oe) && oe.Op == "read", isReset(err)))
		_, err = c.Write([]byte("x"))
		log = append(log, fmt.Sprintf("write: OpError %v, reset %v", errors.As(err, &oe) && oe.Op == "write", isReset(err)))
		log = append(log, fmt.Sprintf("close: %v", c.Close()))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"read: OpError true, reset true", "write: OpError true, reset true", "close: <nil>"}
	expectLog(t, want, log)
}

// connPair returns a Conn on at's loop and the raw peer socket of a
// connected Unix socket pair; the test closes the peer.
func connPair(t *testing.T, at *asyncio.T) (*Conn, int) {
	t.Helper()
	fds := socketpair(t, unix.SOCK_STREAM)
	return NewConn(at, fds[0], "unix"), fds[1]
}

// waitQueued yields until d has n calls queued (white box: a call from
// another goroutine reaches the queue through the loop).
func waitQueued(at *asyncio.T, d *connDir, n int) error {
	for len(d.queue) < n {
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
	}
	return nil
}

// foreign runs fn on a new goroutine and returns a future of its result
// on at's loop.
func foreign[V any](at *asyncio.T, fn func() V) *asyncio.Future[V] {
	f := asyncio.NewFuture[V](at)
	l := at.Loop()
	go func() {
		v := fn()
		l.CallSoonThreadsafe(func() { f.SetResult(v) })
	}()
	return f
}

// readString reads once and describes the outcome.
func readString(c *Conn, n int) string {
	buf := make([]byte, n)
	k, err := c.Read(buf)
	if err != nil {
		return fmt.Sprintf("%q %s", buf[:k], describe(err))
	}
	return fmt.Sprintf("%q", buf[:k])
}

// net.Conn's contract (issue 11, breakage 2): concurrent Reads from tasks
// and other goroutines are served in the order they were made, none is
// lost (the second wait used to replace the first, which then never
// returned), while a Write from yet another goroutine goes on beside them.
func TestConnConcurrentReadsServedInOrderBesideAWrite(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		first := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) { return readString(c, 1), nil })
		if err := waitQueued(at, &c.rd, 1); err != nil {
			return err
		}
		second := foreign(at, func() string { return readString(c, 1) })
		if err := waitQueued(at, &c.rd, 2); err != nil {
			return err
		}
		third := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) { return readString(c, 10), nil })
		if err := waitQueued(at, &c.rd, 3); err != nil {
			return err
		}
		wrote := foreign(at, func() string {
			n, err := c.Write([]byte("from another goroutine"))
			return fmt.Sprintf("wrote %d %s", n, describe(err))
		})
		got, err := wrote.Await(at)
		if err != nil {
			return err
		}
		log = append(log, got)
		buf := make([]byte, 64)
		n, _ := unix.Read(peer, buf) //asynciovet:ignore blockingcall the awaited Write has put its bytes in the socket: the read returns at once
		log = append(log, "peer got "+string(buf[:n]))
		unix.Write(peer, []byte("ABCD"))
		for _, f := range []asyncio.AwaitableOf[string]{first, second, third} {
			s, err := f.Await(at)
			if err != nil {
				return err
			}
			log = append(log, s)
		}
		return c.Close()
	})
	expectLog(t, []string{
		"wrote 22 <nil>",
		"peer got from another goroutine",
		`"A"`, `"B"`, `"CD"`,
	}, log)
}

// SetReadDeadline and Close wake every pending Read, of tasks and of
// other goroutines alike; a deadline set by another goroutine applies to
// the Reads already waiting.
func TestConnDeadlineAndCloseWakeEveryPendingRead(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		start := func() []asyncio.AwaitableOf[string] {
			task := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) { return "task: " + readString(c, 4), nil })
			other := foreign(at, func() string { return "goroutine: " + readString(c, 4) })
			return []asyncio.AwaitableOf[string]{task, other}
		}
		collect := func(fs []asyncio.AwaitableOf[string]) error {
			for _, f := range fs {
				s, err := f.Await(at)
				if err != nil {
					return err
				}
				log = append(log, s)
			}
			return nil
		}
		pending := start()
		if err := waitQueued(at, &c.rd, 2); err != nil {
			return err
		}
		set := foreign(at, func() error { return c.SetReadDeadline(time.Now().Add(-time.Second)) })
		if _, err := set.Await(at); err != nil {
			return err
		}
		if err := collect(pending); err != nil {
			return err
		}
		c.SetReadDeadline(time.Time{})
		pending = start()
		if err := waitQueued(at, &c.rd, 2); err != nil {
			return err
		}
		log = append(log, "close: "+describe(c.Close()))
		return collect(pending)
	})
	slices.Sort(log[:2]) // the two wake-ups come in either order
	expectLog(t, []string{
		`goroutine: "" op=read/unix deadline timeout`,
		`task: "" op=read/unix deadline timeout`,
		"close: <nil>",
		`task: "" op=read/unix closed`,
		`goroutine: "" op=read/unix closed`,
	}, log)
}

// A call from another goroutine never hangs silently (issue 10, point 5;
// issue 11, breakage 2): it works while the loop runs, also while the task
// that made the Conn is suspended; once the loop has stopped it fails at
// once with ErrLoopNotRunning; once the loop is closed, with
// net.ErrClosed, and a call waiting when the loop closes is woken with
// net.ErrClosed too.
func TestConnFromAnotherGoroutineWhenTheLoopStopsOrCloses(t *testing.T) {
	var log []string
	l := asyncio.NewLoop()
	l.SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
	var c *Conn
	var peer int
	main := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		c, peer = connPair(t, at)
		unix.Write(peer, []byte("hi"))
		// The task is suspended while another goroutine reads.
		got := foreign(at, func() string { return readString(c, 8) })
		s, err := got.Await(at)
		log = append(log, "while the task waits: "+s)
		return 0, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(peer)
	log = append(log, "loop stopped: "+readString(c, 8))
	// A Read waiting when the loop closes.
	blocked := make(chan string)
	reader := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		go func() { blocked <- "waiting at Close: " + readString(c, 8) }()
		return 0, waitQueued(at, &c.rd, 1)
	})
	if err := l.RunUntilComplete(reader); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	log = append(log, <-blocked)
	log = append(log, "loop closed: "+readString(c, 8))
	_, err := c.Write([]byte("x"))
	log = append(log, "write: "+describe(err))
	log = append(log, "close: "+describe(c.Close()))
	expectLog(t, []string{
		`while the task waits: "hi"`,
		`loop stopped: "" op=read/unix loop not running`,
		`waiting at Close: "" op=read/unix closed`,
		`loop closed: "" op=read/unix closed`,
		"write: op=write/unix closed",
		"close: op=close/unix closed",
	}, log)
}

// The not-running error says what is wrong.
func TestConnNotRunningErrorNamesTheMistake(t *testing.T) {
	l := asyncio.NewTestLoop()
	defer l.Close()
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	c := NewConn(l, fds[0], "unix")
	_, err := c.Read(make([]byte, 1))
	want := "read unix ->: the loop is not running: Conn.Read from a goroutine that is not the loop's needs the loop running (RunForever, RunUntilComplete)"
	if !errors.Is(err, ErrLoopNotRunning) || !strings.Contains(err.Error(), "the loop is not running: Conn.Read") {
		t.Errorf("got %v, want %q", err, want)
	}
}

// A plain loop callback cannot wait: Read and Write there fail at once
// with an error saying so; Close, CloseWrite and deadlines work.
func TestConnInLoopCallback(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		done := asyncio.NewFuture[struct{}](at)
		at.Loop().CallSoon(func() {
			_, err := c.Read(make([]byte, 1))
			log = append(log, "read: "+describe(err))
			_, err = c.Write([]byte("x"))
			log = append(log, "write: "+describe(err))
			log = append(log, "deadline: "+describe(c.SetDeadline(time.Now())))
			log = append(log, "close write: "+describe(c.CloseWrite()))
			log = append(log, "close: "+describe(c.Close()))
			done.SetResult(struct{}{})
		})
		_, err := done.Await(at)
		return err
	})
	expectLog(t, []string{
		"read: op=read/unix RuntimeError Conn.Read called from a loop callback, which cannot wait: call it from a task or another goroutine",
		"write: op=write/unix RuntimeError Conn.Write called from a loop callback, which cannot wait: call it from a task or another goroutine",
		"deadline: <nil>",
		"close write: <nil>",
		"close: <nil>",
	}, log)
}

// A task's Read cancelled while queued is withdrawn: the Reads behind it
// go on, and no byte goes to the cancelled one.
func TestConnCancelledReadIsWithdrawn(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		var tasks []*asyncio.Task[string]
		for i := range 3 {
			tasks = append(tasks, asyncio.CreateTask(at, func(t *asyncio.T) (string, error) {
				return fmt.Sprintf("read %d: %s", i, readString(c, 1)), nil
			}))
			if err := waitQueued(at, &c.rd, i+1); err != nil {
				return err
			}
		}
		tasks[0].Cancel()
		tasks[1].Cancel()
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		unix.Write(peer, []byte("Z"))
		for _, tk := range tasks {
			s, err := tk.Result()
			if !tk.Done() {
				s, err = tk.Await(at)
			}
			log = append(log, s+" "+describe(err))
		}
		return c.Close()
	})
	expectLog(t, []string{
		`read 0: "" op=read/unix cancelled <nil>`,
		`read 1: "" op=read/unix cancelled <nil>`,
		`read 2: "Z" <nil>`,
	}, log)
}

// Close from another goroutine returns once the socket is closed, and the
// other goroutine's pending Read returns net.ErrClosed.
func TestConnCloseFromAnotherGoroutine(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		read := foreign(at, func() string { return readString(c, 1) })
		if err := waitQueued(at, &c.rd, 1); err != nil {
			return err
		}
		closed := foreign(at, func() string {
			err := c.Close()
			var st unix.Stat_t
			return fmt.Sprintf("close: %s, fd closed: %v", describe(err), unix.Fstat(c.FD(), &st) == unix.EBADF)
		})
		s, err := closed.Await(at)
		log = append(log, s)
		r, err2 := read.Await(at)
		log = append(log, "read: "+r)
		return errors.Join(err, err2)
	})
	expectLog(t, []string{"close: <nil>, fd closed: true", `read: "" op=read/unix closed`}, log)
}

// A task cancelled after its Read was served (the data arrived, then the
// cancellation, before the task resumed) gets the bytes and the
// cancellation together, as io.Reader allows: n > 0 with err. The bytes
// are the caller's to use; the next Read gets what follows, so nothing is
// lost or read twice.
func TestConnReadCancelledAfterDataReturnsTheBytes(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		defer c.Close()
		reader := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) { return readString(c, 10), nil })
		if err := waitQueued(at, &c.rd, 1); err != nil {
			return err
		}
		unix.Write(peer, []byte("hello"))
		// A timer due now runs after the socket's callback of the same
		// iteration, which serves the Read: the cancellation comes between
		// the data and the task's resumption.
		at.Loop().CallLater(0, func() { reader.Cancel() })
		s, err := reader.Await(at)
		log = append(log, s)
		if err != nil {
			return err
		}
		unix.Write(peer, []byte("world"))
		log = append(log, readString(c, 10))
		return nil
	})
	expectLog(t, []string{`"hello" op=read/unix cancelled`, `"world"`}, log)
}

// Zero-length calls past a deadline behave as net's: a Read of no bytes
// returns (0, nil) without looking at the deadline (internal/poll returns
// before it waits), a Write of no bytes fails with the deadline. The
// oracle is a *net.UnixConn over the same kind of socket pair, in the
// same run. Conn's Read said os.ErrDeadlineExceeded.
func TestConnZeroLengthCallsPastADeadlineAsNet(t *testing.T) {
	describeZero := func(c net.Conn) string {
		if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
			return err.Error()
		}
		rn, rerr := c.Read(nil)
		wn, werr := c.Write(nil)
		return fmt.Sprintf("read %d %s; write %d %s", rn, describe(rerr), wn, describe(werr))
	}
	fds := socketpair(t, unix.SOCK_STREAM)
	f := os.NewFile(uintptr(fds[0]), "oracle")
	oracle, err := net.FileConn(f) // dups the descriptor
	f.Close()
	unix.Close(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	want := describeZero(oracle)
	oracle.Close()
	var got string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		got = describeZero(c)
		return c.Close()
	})
	if got != want {
		t.Fatalf("Conn: %s\nnet:  %s", got, want)
	}
	t.Log(got)
}

// A Read or Write from a task of another loop would block that loop's
// goroutine, and with it every task of that loop, until the Conn's loop
// serves it: it is a *RuntimeError naming the mistake, before anything is
// queued. (It was served as a call of a plain goroutine: the other loop
// stood still meanwhile.) A plain goroutine (asyncio.Go) still may.
func TestConnFromAnotherLoopsTaskIsRefused(t *testing.T) {
	var got []string
	runNet(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		defer c.Close()
		l := at.Loop()
		result := asyncio.NewFuture[[]string](at)
		go func() {
			log, _ := asyncio.Run(func(bt *asyncio.T) ([]string, error) {
				_, rerr := c.Read(make([]byte, 4))
				_, werr := c.Write([]byte("x"))
				goRead, err := asyncio.Go(bt, func(context.Context) (string, error) {
					b := make([]byte, 4)
					n, err := c.Read(b)
					return string(b[:n]), err
				})
				if err != nil {
					goRead = err.Error()
				}
				return []string{describeRuntime(rerr), describeRuntime(werr), "from Go: " + goRead}, nil
			})
			l.CallSoonThreadsafe(func() { result.SetResult(log) })
		}()
		// Without the refusal the other loop's Read waits in the queue:
		// data then ends it (the test fails on its result, not by hanging).
		feeder := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			for { // data for each Read that waits
				if err := waitQueued(t, &c.rd, 1); err != nil {
					return struct{}{}, err
				}
				if _, err := unix.Write(peer, []byte("data")); err != nil {
					return struct{}{}, err
				}
				for len(c.rd.queue) > 0 {
					if err := asyncio.Sleep(t, 0); err != nil {
						return struct{}{}, err
					}
				}
			}
		})
		defer feeder.Cancel("done")
		var err error
		got, err = result.Await(at)
		return err
	})
	want := []string{
		"RuntimeError: Conn.Read from a task or callback of another event loop",
		"RuntimeError: Conn.Write from a task or callback of another event loop",
		"from Go: data",
	}
	expectLog(t, want, got)
}

// describeRuntime is the type and the start of err's message, up to the
// first " would".
func describeRuntime(err error) string {
	var re *asyncio.RuntimeError
	if !errors.As(err, &re) {
		return fmt.Sprintf("not a RuntimeError: %v", err)
	}
	msg, _, _ := strings.Cut(re.Error(), " would")
	return "RuntimeError: " + msg
}

// On a virtual-time loop a deadline counts on the loop's clock from when
// it is set: real time racing ahead afterwards (a slow machine; here a
// wall clock that jumps an hour) does not make it pass early, and the Read
// times out exactly when the loop's clock reaches it. (The deadline was
// checked against the wall clock: the Read failed at once, at +0s.)
func TestConnDeadlineOnAVirtualLoopCountsOnTheLoopsClock(t *testing.T) {
	wall := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	wallNow = func() time.Time { return wall }
	defer func() { wallNow = time.Now }()
	var got []string
	runVirtual(t, func(at *asyncio.T) error {
		c, peer := connPair(t, at)
		defer unix.Close(peer)
		l := at.Loop()
		read := func() {
			start := l.Time()
			_, err := c.Read(make([]byte, 1))
			got = append(got, fmt.Sprintf("%s after %v", describe(err), l.Time()-start))
		}
		if err := c.SetReadDeadline(wall.Add(100 * time.Millisecond)); err != nil {
			return err
		}
		wall = wall.Add(time.Hour)
		read()
		// Set again (a new deadline, from the new wall time): 250 ms on.
		if err := c.SetReadDeadline(wall.Add(250 * time.Millisecond)); err != nil {
			return err
		}
		wall = wall.Add(time.Hour)
		read()
		return c.Close()
	})
	want := []string{"op=read/unix deadline timeout after 100ms", "op=read/unix deadline timeout after 250ms"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %q, want %q", got, want)
	}
}
