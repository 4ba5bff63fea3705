//go:build unix

package aio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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
		err, _ = done.Await(at)
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	if status != "200 OK" || body != "hello from /foreign" {
		t.Fatalf("got %q %q", status, body)
	}
}

// Closing a Conn from another task (declared with Use) wakes a Read
// suspended in the first task with net.ErrClosed.
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
			c.Use(t)
			return c.Read(make([]byte, 10))
		})
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
